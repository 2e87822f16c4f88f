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

stable-baselines before 2.7 wrote one cloudpickle stream instead (usually a
``.pkl``): the tuple ``(data, params)``, ``data`` the same attributes as a
dict, ``params`` the variables' arrays as a list in graph order (no names) or
an ``OrderedDict`` name -> array. :func:`import_archive` reads it whole with
the restricted unpickler and maps it as above (unnamed variables become
``param_0000``, ``param_0001``, ...).
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import RlarchiveError
from ..limits import MAX_JSON_BYTES
from ..sb3.model_zip import (
    ImportReport,
    decode_data,
    decode_pickle,
    escape_pointer,
    json_cost,
    note_leaves,
    open_zip,
    parse_data_json,
    read_member,
)
from ..unpickle.budget import ImportBudget, budget_for
from ..unpickle.npz import read_npz
from ..values import ClassRef

__all__ = ["import_archive", "infer_algorithm"]

META_ALGORITHM = "sb2.algorithm"
META_PARAMETER_LIST = "sb2.parameter_list"
META_SOURCE = "source"

_PARAMS_LIMIT = 1 << 34

# SB2 policy modules that name their algorithm
_POLICY_MODULES = {
    "stable_baselines.deepq.policies": "DQN",
    "stable_baselines.sac.policies": "SAC",
    "stable_baselines.td3.policies": "TD3",
    "stable_baselines.ddpg.policies": "DDPG",
}


def infer_algorithm(data: Mapping[str, Any]) -> str | None:
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
    in_zip: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    *,
    algorithm: str | None = None,
    budget: int | ImportBudget | None = None,
) -> ImportReport:
    """Convert a Stable-Baselines (SB2) model ``.zip`` into an rlarchive, running no code from it.

    Args:
        in_zip: the file written by SB2's ``model.save(...)``: a ``.zip`` (2.8 and
            later), or the single cloudpickle stream of earlier versions (``.pkl``).
        out_path: the rlarchive to write (replaced atomically).
        algorithm: the SB2 algorithm name (``"PPO2"``, ``"DQN"``, ...) to record;
            guessed with :func:`infer_algorithm` when omitted.
        budget: bytes the import may allocate (an int, or an
            :class:`~rlarchive.unpickle.budget.ImportBudget` several imports may
            share); by default ``max(256 MiB, 4 × the input's size)``
            (:func:`~rlarchive.unpickle.budget.budget_for`). Every member's
            uncompressed size, what parsing its JSON can build, every array
            (from its ``.npy`` header, before it is read) and everything the
            unpickler builds is charged before it is allocated (Annex B.7).
    Returns:
        An :class:`rlarchive.sb3.ImportReport` (``source="stable-baselines"``).
    Raises:
        RlarchiveError: IMPORT_INVALID for an input that is not a readable SB2 model (an SB3 model, a pickle
            that is not the tuple ``(data, params)``, ...), VALUE_UNSUPPORTED for parameters that are not numeric arrays,
            LIMIT_EXCEEDED when the budget would be exceeded (checked before allocating).
    """
    from ..writer import save

    budget = budget_for(in_zip, budget)
    report = ImportReport(source="stable-baselines", output=os.fspath(out_path))
    metadata: dict[str, str] = {META_SOURCE: "stable-baselines"}
    tensors: dict[str, dict[str, np.ndarray]] = {}
    try:
        is_zip = zipfile.is_zipfile(os.fspath(in_zip))
    except (zipfile.BadZipFile, ValueError):  # a ZIP whose end records name other disks, ...
        is_zip = False
    if not is_zip:
        data, params, plist = _read_pickle_model(in_zip, report, budget)
        if params:
            tensors["policy"] = params
        if plist is not None:
            metadata[META_PARAMETER_LIST] = json.dumps(plist)
    else:
        data = _read_zip_model(in_zip, report, budget, tensors, metadata)

    algo = algorithm or infer_algorithm(data)
    if algo:
        metadata[META_ALGORITHM] = algo
        report.algorithm = algo
        if not algorithm:
            report.notes.append(f"algorithm inferred from the data: {algo}")
    report.tensor_groups = {g: len(t) for g, t in tensors.items()}
    save(out_path, data, tensors, metadata=metadata)
    return report


def _read_zip_model(
    in_zip: str | os.PathLike[str],
    report: ImportReport,
    budget: ImportBudget,
    tensors: dict[str, dict[str, np.ndarray]],
    metadata: dict[str, str],
) -> dict[str, Any]:
    """The decoded data of an SB2 ``.zip``; its variables are added to ``tensors`` and their order to ``metadata``."""
    with open_zip(in_zip) as zf:
        names = zf.namelist()
        if "data" not in names:
            raise RlarchiveError("IMPORT_INVALID", "not a Stable-Baselines model: no 'data' member")
        if "parameters" not in names and (
            "_stable_baselines3_version" in names or any(n.endswith(".pth") for n in names)
        ):
            raise RlarchiveError(
                "IMPORT_INVALID",
                "this is a Stable-Baselines3 model (it has .pth members and no 'parameters'); use 'rlarchive import-sb3'",
            )
        data = decode_data(
            parse_data_json(read_member(zf, "data", MAX_JSON_BYTES, budget), budget=budget), report, budget
        )
        if ("parameters" in names) != ("parameter_list" in names):
            raise RlarchiveError("IMPORT_INVALID", "'parameters' and 'parameter_list' must both be present")
        if "parameters" in names:
            plist = _parse_json_list(read_member(zf, "parameter_list", MAX_JSON_BYTES, budget), budget)
            raw = read_member(zf, "parameters", _PARAMS_LIMIT, budget)
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
    return data


def _read_pickle_model(
    path: str | os.PathLike[str], report: ImportReport, budget: ImportBudget
) -> tuple[dict[str, Any], dict[str, np.ndarray], list[str] | None]:
    """The decoded data, the variables by name and their order, from the single pickle of stable-baselines < 2.7.

    The whole stream is read once by the restricted unpickler (the file's size
    and everything it builds charged to ``budget`` first); nothing it names is
    imported or called.
    """
    from .. import unpickle

    raw = _read_file(path, budget)
    try:
        top = unpickle.restricted_loads(raw, budget=budget)
    except unpickle.NotNeutral as e:
        raise RlarchiveError(
            "IMPORT_INVALID", f"{os.fspath(path)} is neither a ZIP file nor a readable pickle: {e.reason}"
        ) from None
    if not (type(top) is tuple and len(top) == 2 and type(top[0]) is dict):
        raise RlarchiveError(
            "IMPORT_INVALID",
            f"{os.fspath(path)} is a pickle but not a stable-baselines model: expected the tuple (data dict, parameters), "
            f"found {_describe(top)}",
        )
    doc, stored = top
    if not all(type(k) is str for k in doc):
        raise RlarchiveError("IMPORT_INVALID", "the model's data dict has keys that are not strings")
    data: dict[str, Any] = {}
    value_pickles: dict[str, tuple[int, int]] | None = None
    for key, item in doc.items():
        try:
            data[key] = note_leaves(unpickle.to_neutral(item, budget=budget), "/" + escape_pointer(key), report)
            report.converted.append(key)
        except unpickle.NotNeutral:
            if value_pickles is None:  # located once, for the values that stay opaque
                budget.charge(2 * len(raw), "locating the values in the pickle")
                value_pickles = _value_pickles(raw)
            if key not in value_pickles:
                raise RlarchiveError(
                    "IMPORT_INVALID", f"data key {key!r}: its value cannot be located in the pickle"
                ) from None
            budget.charge(value_pickles[key][1], f"the opaque value of data key {key!r}")
            data[key] = decode_pickle(key, _value_pickle(raw, *value_pickles[key]), _standin_type(item), report, budget)
    params, plist = _pickled_params(stored, budget)
    return data, params, plist


def _read_file(path: str | os.PathLike[str], budget: ImportBudget) -> bytes:
    try:
        with open(os.fspath(path), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > _PARAMS_LIMIT:
                raise RlarchiveError("LIMIT_EXCEEDED", f"{os.fspath(path)} is {size} bytes, above {_PARAMS_LIMIT}")
            budget.charge(size, "the model file")
            return f.read(size)
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot read {os.fspath(path)}: {e.strerror or e}") from None


def _pickled_params(stored: Any, budget: ImportBudget) -> tuple[dict[str, np.ndarray], list[str] | None]:
    """The variables of a pickled model (a list of arrays, or an ``OrderedDict`` name -> array) and their names in order."""
    from .. import unpickle
    from ..dtypes import code_of_numpy

    if stored is None:
        return {}, None
    if type(stored) in (list, tuple):
        items = [(f"param_{i:04d}", a) for i, a in enumerate(stored)]
    elif type(stored) is dict and all(type(k) is str for k in stored):
        items = list(stored.items())
    else:
        raise RlarchiveError(
            "IMPORT_INVALID",
            f"the model's parameters are {_describe(stored)}, not a list of arrays or a dict of named arrays",
        )
    params: dict[str, np.ndarray] = {}
    for name, item in items:
        if not isinstance(item, (unpickle.Array, unpickle.Scalar)):  # TensorFlow gives a 0-d variable as a NumPy scalar
            raise RlarchiveError("VALUE_UNSUPPORTED", f"parameter {name!r} is {_describe(item)}, not a numeric array")
        try:
            arr = unpickle.to_neutral(item, budget=budget)
        except unpickle.NotNeutral as e:
            raise RlarchiveError(
                "VALUE_UNSUPPORTED", f"parameter {name!r} is not a numeric array: {e.reason}"
            ) from None
        if isinstance(arr, np.generic):
            arr = np.asarray(arr).astype(arr.dtype.newbyteorder("<"))
        if not isinstance(arr, np.ndarray) or code_of_numpy(arr.dtype) is None:
            raise RlarchiveError("VALUE_UNSUPPORTED", f"parameter {name!r} has an unsupported type")
        if not arr.flags.c_contiguous:
            budget.charge(arr.nbytes, f"a C-order copy of parameter {name!r}")
        params[name] = np.require(arr, requirements="C")  # np.ascontiguousarray would make a 0-d array 1-d
    return params, [name for name, _ in items]


def _describe(x: Any) -> str:
    """A short description of a stand-in for a message (never its content)."""
    if type(x) in (tuple, list, dict):
        return f"a {type(x).__name__} of {len(x)} items"
    return f"a {_standin_type(x)}"


def _standin_type(x: Any) -> str:
    """The type name a pickled value had, told from its stand-in (as SB's ``:type:`` would give it)."""
    from .. import unpickle

    if isinstance(x, unpickle.Unknown):
        return f"{x.func.module}.{x.func.qualname}"
    if isinstance(x, unpickle.Function):
        return "function"
    kind = type(x)
    module, name = getattr(kind, "_pickle_module", None), getattr(kind, "_pickle_name", None)
    if type(module) is str and type(name) is str:
        return f"{module}.{name}"
    if kind.__module__ == "builtins":
        return kind.__name__
    return kind.__name__.lstrip("_").lower()


# -- one value of the pickle as a pickle of its own ---------------------------------------


_KEEPS_TARGET = {"APPEND", "APPENDS", "SETITEM", "SETITEMS", "ADDITEMS", "BUILD"}
_STRINGS = {"UNICODE", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8", "STRING", "BINSTRING", "SHORT_BINSTRING"}


def _value_pickles(raw: bytes) -> dict[str, tuple[int, int]]:
    """For each key of the data dict of ``raw`` (the pickle of ``(data, params)``): where its value ends.

    Returns ``{key: (end offset, size of the pickle that makes the value)}``
    (empty when the stream cannot be followed).
    The opcodes are read with :func:`pickletools.genops` (nothing is built)
    while a model of the unpickler's stack tracks which object each entry is,
    so that the entries a ``SETITEM(S)`` adds to the data dict are known.
    """
    import itertools
    import pickletools

    ids = itertools.count()
    stack: list[tuple[int, int]] = []  # (object id, offset of its first opcode)
    marks: list[tuple[int, int]] = []  # (stack length, offset of the MARK)
    memo: dict[object, tuple[int, int]] = {}
    strings: dict[int, str] = {}  # object id -> the str it is
    items: dict[int, list[tuple[int, int]]] = {}  # dict id -> [(key id, end offset of the value)]
    parts: dict[int, list[int]] = {}  # tuple id -> its item ids
    frames: list[int] = []  # offsets of the FRAME opcodes
    try:
        for op, arg, pos in pickletools.genops(raw):
            if pos is None:  # (never: genops gives the offset of every opcode of a byte string)
                return {}
            name = op.name
            if name == "FRAME":
                frames.append(pos)
                continue
            if name == "PROTO":
                continue
            if name == "STOP":
                top = stack.pop()[0]
                break
            if name == "MARK":
                marks.append((len(stack), pos))
                continue
            if name in ("PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"):
                memo[arg if name != "MEMOIZE" else len(memo)] = stack[-1]
                continue
            if name in ("GET", "BINGET", "LONG_BINGET"):
                stack.append((memo[arg][0], pos))
                continue
            if name == "DUP":
                stack.append((stack[-1][0], pos))
                continue
            before = op.stack_before
            sliced: list[tuple[int, int]] = []
            start = pos
            if pickletools.markobject in before:
                n = before.index(pickletools.markobject)
                depth, start = marks.pop()
                sliced = stack[depth:]
                del stack[depth:]
            else:
                n = len(before)
            popped = stack[len(stack) - n :] if n else []
            del stack[len(stack) - n :]
            if name in ("SETITEM", "SETITEMS", "DICT"):
                pairs = popped[1:] if name == "SETITEM" else sliced
                target = popped[0][0] if name != "DICT" else next(ids)
                entries = items.setdefault(target, [])
                for j in range(0, len(pairs) - 1, 2):
                    entries.append((pairs[j][0], pairs[j + 2][1] if j + 2 < len(pairs) else pos))
            if name in _KEEPS_TARGET:
                stack.append(popped[0])
                continue
            start = min([start, pos] + [e[1] for e in popped + sliced])
            for _ in op.stack_after:
                new = target if name == "DICT" else next(ids)
                if name in _STRINGS and isinstance(arg, str):
                    strings[new] = arg
                elif name.startswith("TUPLE") or name == "EMPTY_TUPLE":
                    parts[new] = [e[0] for e in popped + sliced]
                stack.append((new, start))
        else:
            return {}
    except (ValueError, IndexError, KeyError):  # a stream the model cannot follow: no value is located
        return {}
    data = parts.get(top, [None])[0]
    ends: dict[str, int] = {}
    for key_id, end in items.get(data, []) if data is not None else []:
        if key_id in strings:
            ends[strings[key_id]] = end
    return {k: (end, end + 1 - 9 * sum(1 for f in frames if f < end)) for k, end in ends.items()}


def _value_pickle(raw: bytes, end: int, size: int) -> bytes:
    """A pickle that makes one value of ``raw``: its opcodes up to ``end``, frames dropped, then ``STOP``.

    ``STOP`` returns the top of the unpickler's stack, which at ``end`` is the
    value (the values and keys before it stay below it, unused).
    """
    import pickletools

    out = bytearray()
    last = 0
    for op, _, pos in pickletools.genops(raw[:end] + b"."):
        if op.name == "FRAME" and pos is not None:
            out += raw[last:pos]
            last = pos + 9
    out += raw[last:end] + b"."
    return bytes(out)


def _read_npz(raw: bytes, plist: list[str], budget: ImportBudget) -> tuple[dict[str, np.ndarray], list[str]]:
    """The arrays ``plist`` names from an ``.npz``, each header checked and its size charged before reading.

    Returns the arrays by name and the sorted names of arrays not in ``plist``.
    """
    return read_npz(raw, plist, budget, container="'parameters'", item="parameter", member="parameters")


def _parse_json_list(raw: bytes, budget: ImportBudget) -> list[str]:
    budget.charge(json_cost(raw), "the objects parsed from the parameter_list member", member="parameter_list")
    try:
        v = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise RlarchiveError(
            "IMPORT_INVALID", f"'parameter_list' is not valid JSON: {e}", member="parameter_list"
        ) from None
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v) or len(set(v)) != len(v):
        raise RlarchiveError(
            "IMPORT_INVALID", "'parameter_list' must be a list of distinct strings", member="parameter_list"
        )
    return v
