"""Stable-Baselines (SB2, the TensorFlow 1 library) model import.

An SB2 model ``.zip`` (stable-baselines 2.8 to 2.10) holds:

- ``data``: the algorithm's parameters as JSON, values JSON cannot carry being
  ``{":type:": ..., ":serialized:": BASE64-CLOUDPICKLE}`` objects (spaces from
  the old ``gym`` package, the policy class, ``policy_kwargs`` with TensorFlow
  functions, callables);
- ``parameters``: the TensorFlow variables as a NumPy ``.npz`` archive;
- ``parameter_list``: a JSON list of the variable names, in graph order.

:func:`import_archive` converts it to an rlarchive without running code from
the file: pickles go through :mod:`rlarchive.unpickle` (old gym spaces become
neutral spaces, class and function names become class references, anything
else stays opaque and is listed in the report), and the ``.npz`` is read with
``allow_pickle=False``. Variables keep their TensorFlow names
(``model/pi_fc0/w:0``) in the tensor group ``policy``; their order is kept in
the metadata ``sb2.parameter_list`` (a JSON list).

The legacy cloudpickle ``.pkl`` format (stable-baselines <= 2.7) is refused:
it is a single pickle of everything.
"""
from __future__ import annotations

import io
import json
import math
import os
import struct
import zipfile
from typing import Any, Mapping, Optional, Union

import numpy as np

from ..errors import RlarchiveError
from ..limits import MAX_JSON_BYTES
from .budget import ImportBudget, budget_for
from .sb3 import ImportReport, _decode_data, _json_cost, _open_zip, _parse_data_json, _read_member
from ..values import ClassRef

__all__ = ["import_archive", "infer_algorithm"]

META_ALGORITHM = "sb2.algorithm"
META_PARAMETER_LIST = "sb2.parameter_list"
META_SOURCE = "source"

_PARAMS_LIMIT = 1 << 34
_MAX_NPY_HEADER = 65535  # bytes: a version 1 header's largest; NumPy itself refuses more than 10,000

# SB2 policy modules that name their algorithm
_POLICY_MODULES = {
    "stable_baselines.deepq.policies": "DQN",
    "stable_baselines.sac.policies": "SAC",
    "stable_baselines.td3.policies": "TD3",
    "stable_baselines.ddpg.policies": "DDPG",
}


def infer_algorithm(data: Mapping[str, Any]) -> Optional[str]:
    """Guess the SB2 algorithm from its data keys (SB2 does not record it); None when unsure."""
    pc = data.get("policy")
    if isinstance(pc, ClassRef) and pc.module in _POLICY_MODULES:
        return _POLICY_MODULES[pc.module]
    keys = set(data)
    if {"cliprange", "noptepochs", "nminibatches"} <= keys:
        return "PPO2"
    if {"clip_param", "optim_epochs"} <= keys:
        return "PPO1"
    if {"max_kl", "cg_iters"} <= keys:
        return "TRPO"
    if {"kfac_clip", "vf_fisher_coef"} <= keys:
        return "ACKTR"
    if {"replay_ratio", "correction_term"} <= keys:
        return "ACER"
    if {"alpha", "epsilon", "lr_schedule", "n_steps"} <= keys:
        return "A2C"
    if "expert_dataset" in keys or {"hidden_size_adversary", "adversary_entcoeff"} <= keys:
        return "GAIL"
    return None


def import_archive(
    in_zip: Union[str, os.PathLike],
    out_path: Union[str, os.PathLike],
    *,
    algorithm: Optional[str] = None,
    budget: Union[int, ImportBudget, None] = None,
) -> ImportReport:
    """Convert a Stable-Baselines (SB2) model ``.zip`` into an rlarchive, running no code from it.

    Args:
        in_zip: the file written by SB2's ``model.save(...)``.
        out_path: the rlarchive to write (replaced atomically).
        algorithm: the SB2 algorithm name (``"PPO2"``, ``"DQN"``, ...) to record;
            guessed with :func:`infer_algorithm` when omitted.
        budget: bytes the import may allocate (an int, or an
            :class:`~rlarchive.interop.budget.ImportBudget` several imports may
            share); by default ``max(256 MiB, 4 × the input's size)``
            (:func:`~rlarchive.interop.budget.budget_for`). Every member's
            uncompressed size, what parsing its JSON can build, every array
            (from its ``.npy`` header, before it is read) and everything the
            unpickler builds is charged before it is allocated (Annex B.7).
    Returns:
        An :class:`rlarchive.sb3.ImportReport` (``source="stable-baselines"``).
    Raises:
        RlarchiveError: IMPORT_INVALID for an input that is not a readable SB3 or SB2 model or an SB2 ``.pkl``
            file, VALUE_UNSUPPORTED for parameters that are not numeric arrays,
            LIMIT_EXCEEDED when the budget would be exceeded (checked before allocating).
    """
    from ..writer import save

    budget = budget_for(in_zip, budget)
    report = ImportReport(source="stable-baselines", output=os.fspath(out_path))
    metadata: dict[str, str] = {META_SOURCE: "stable-baselines"}
    tensors: dict[str, dict] = {}
    try:
        is_zip = zipfile.is_zipfile(os.fspath(in_zip))
    except (zipfile.BadZipFile, ValueError):  # a ZIP whose end records name other disks, ...
        is_zip = False
    if not is_zip:
        raise RlarchiveError(
            "IMPORT_INVALID",
            f"{os.fspath(in_zip)} is not a ZIP file (stable-baselines <= 2.7 '.pkl' models are one pickle and are not supported)",
        )
    with _open_zip(in_zip) as zf:
        names = zf.namelist()
        if "data" not in names:
            raise RlarchiveError("IMPORT_INVALID", "not a Stable-Baselines model: no 'data' member")
        if "parameters" not in names and ("_stable_baselines3_version" in names or any(n.endswith(".pth") for n in names)):
            raise RlarchiveError(
                "IMPORT_INVALID",
                "this is a Stable-Baselines3 model (it has .pth members and no 'parameters'); use 'rlarchive import-sb3'",
            )
        data = _decode_data(_parse_data_json(_read_member(zf, "data", MAX_JSON_BYTES, budget), budget=budget), report, budget)
        if ("parameters" in names) != ("parameter_list" in names):
            raise RlarchiveError("IMPORT_INVALID", "'parameters' and 'parameter_list' must both be present")
        if "parameters" in names:
            plist = _parse_json_list(_read_member(zf, "parameter_list", MAX_JSON_BYTES, budget), budget)
            raw = _read_member(zf, "parameters", _PARAMS_LIMIT, budget)
            params, extra = _read_npz(raw, plist, budget)
            del raw
            if extra:
                report.notes.append(f"arrays in 'parameters' not named in 'parameter_list' were dropped: {extra}")
            if params:
                tensors["policy"] = params
            metadata[META_PARAMETER_LIST] = json.dumps(plist)
        for name in names:
            if name not in ("data", "parameters", "parameter_list"):
                report.skipped_members.append((name, "not part of the SB2 format"))

    algo = algorithm or infer_algorithm(data)
    if algo:
        metadata[META_ALGORITHM] = algo
        report.algorithm = algo
        if not algorithm:
            report.notes.append(f"algorithm inferred from the data: {algo}")
    report.tensor_groups = {g: len(t) for g, t in tensors.items()}
    save(out_path, data, tensors, metadata=metadata)
    return report


def _read_npz(raw: bytes, plist: list, budget: ImportBudget) -> tuple[dict, list]:
    """The arrays ``plist`` names from an ``.npz``, each header checked and its size charged before reading.

    Returns the arrays by name and the sorted names of arrays not in ``plist``.
    """
    from ..dtypes import code_of_numpy

    try:
        inner = zipfile.ZipFile(io.BytesIO(raw))
        members = {i.filename[: -len(".npy")]: i for i in inner.infolist() if i.filename.endswith(".npy")}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise RlarchiveError("IMPORT_INVALID", f"'parameters' is not a NumPy .npz archive: {e}", member="parameters") from None
    params: dict = {}
    with inner:
        for name in plist:
            info = members.get(name)
            if info is None:
                raise RlarchiveError("IMPORT_INVALID", f"parameter {name!r} is listed but missing", member="parameters")
            try:
                with inner.open(info) as f:
                    version = np.lib.format.read_magic(f)
                    if version == (1, 0):
                        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
                    elif version == (2, 0):
                        # NumPy reads a version 2 header of any declared length before it checks the length
                        prefix = f.read(4)
                        if len(prefix) == 4 and struct.unpack("<I", prefix)[0] > _MAX_NPY_HEADER:
                            raise ValueError(f"its header declares {struct.unpack('<I', prefix)[0]} bytes")
                        header = io.BytesIO(prefix + f.read(struct.unpack("<I", prefix)[0] if len(prefix) == 4 else 0))
                        shape, fortran, dtype = np.lib.format.read_array_header_2_0(header)
                    else:
                        raise ValueError(f"unsupported .npy format version {version}")
                    if dtype.hasobject or code_of_numpy(dtype) is None:
                        raise RlarchiveError("VALUE_UNSUPPORTED", f"parameter {name!r} has dtype {dtype}", member="parameters")
                    nbytes = math.prod(shape) * dtype.itemsize
                    budget.charge(nbytes, f"parameter {name!r} (shape {shape})", member="parameters")
                    buf = f.read(nbytes)
            except RlarchiveError:
                raise
            except (ValueError, OSError, EOFError, zipfile.BadZipFile, RuntimeError, NotImplementedError) as e:
                raise RlarchiveError("IMPORT_INVALID", f"parameter {name!r} is not a readable .npy array: {e}", member="parameters") from None
            if len(buf) != nbytes:
                raise RlarchiveError("IMPORT_INVALID", f"parameter {name!r} is shorter than its header says", member="parameters")
            arr = np.frombuffer(buf, dtype=dtype).reshape(shape, order="F" if fortran else "C")
            little = dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype
            if little != dtype or not arr.flags.c_contiguous:  # one copy, little-endian and in C order
                budget.charge(nbytes, f"a little-endian C-order copy of parameter {name!r}", member="parameters")
            params[name] = np.ascontiguousarray(arr, dtype=little)
    return params, sorted(set(members) - set(plist))


def _parse_json_list(raw: bytes, budget: ImportBudget) -> list:
    budget.charge(_json_cost(raw), "the objects parsed from the parameter_list member", member="parameter_list")
    try:
        v = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise RlarchiveError("IMPORT_INVALID", f"'parameter_list' is not valid JSON: {e}", member="parameter_list") from None
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v) or len(set(v)) != len(v):
        raise RlarchiveError("IMPORT_INVALID", "'parameter_list' must be a list of distinct strings", member="parameter_list")
    return v
