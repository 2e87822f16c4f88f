"""A Stable-Baselines3 model ``.zip`` into an rlarchive, running no code from it (:func:`import_archive`).

The ``data`` member is decoded by :mod:`rlarchive.sb3.model_zip`; ``.pth``
members are read with ``torch.load(weights_only=True)`` after what it may
allocate is charged to the budget. :func:`finish_import`, the writing step
(the algorithm, the portable policy, the extensions), is shared with the
live-model save (:mod:`rlarchive.sb3.saving`).
"""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
import typing
import warnings
import zipfile
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import RlarchiveError
from ..extensions import replay_buffer as replay_buffer_ext
from ..extensions import vec_normalize as vec_normalize_ext
from ..extensions.policy import description as policy_description
from ..extensions.vec_normalize import Statistics
from ..limits import MAX_JSON_BYTES, MAX_MEMBERS
from ..unpickle.budget import ImportBudget, Source, budget_for
from ..values import TensorRef
from . import files as sb3_files
from . import optimizer_names
from .keys import (
    META_ALGORITHM,
    META_ALGORITHM_CLASS,
    META_SOURCE,
    META_SYSTEM_INFO,
    META_TORCH_VALUES,
    META_VERSION,
    optimizer_left_out,
)
from .loading import load
from .model_zip import (
    OBJECT_BYTES_PER_BYTE,
    ImportReport,
    decode_data,
    open_zip,
    parse_data_json,
    read_member,
    unsupported,
)

__all__ = [
    "import_archive",
    "infer_algorithm",
    "charge_tensors",
    "add_state",
    "add_variables",
    "read_vec_normalize",
    "finish_import",
    "prepare_import",
]


_PTH_LIMIT = 1 << 34  # 16 GiB: larger members are refused before reading
_VARIABLES_MEMBERS = ("pytorch_variables.pth", "tensors.pth")  # "tensors.pth" before SB3 0.9
_GROUP_NAME = re.compile(r"^[A-Za-z0-9._-]+$")


def infer_algorithm(data: Mapping[str, Any]) -> str | None:
    """The SB3 or sb3-contrib algorithm that saved a model, told from its decoded data, or None when unsure.

    See :func:`rlarchive.sb3.algorithms.identify`.
    """
    from . import algorithms

    return algorithms.identify(data)


def _torch_load(raw: bytes, member: str) -> Any:
    import torch

    try:
        return torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as e:  # weights_only refuses anything but tensors and plain containers
        raise RlarchiveError(
            "VALUE_UNSUPPORTED", f"{member} cannot be read with torch.load(weights_only=True): {e}", member=member
        ) from None


def _is_optimizer_state(obj: Any) -> bool:
    return isinstance(obj, Mapping) and set(obj.keys()) == {"state", "param_groups"}


def _tensor_dict(obj: Any, member: str) -> dict[str, Any]:
    import torch

    if not isinstance(obj, Mapping):
        raise unsupported(f"{member} is not a state dict", member)
    out = {}
    for k, v in obj.items():
        if not isinstance(k, str) or not isinstance(v, torch.Tensor):
            raise unsupported(f"{member}: entry {k!r} is not a named tensor", member)
        out[k] = v.detach().cpu().contiguous()
    return out


def _pth_cost(raw: bytes, member: str) -> int:
    """What ``torch.load`` may allocate for the ``.pth`` bytes ``raw``, known before it runs.

    The ``.pth`` of torch >= 1.6 is itself a ZIP whose records may be deflated:
    each storage is read into a buffer of its record's uncompressed size, and
    the pickle ``data.pkl`` may build :data:`OBJECT_BYTES_PER_BYTE` bytes of
    objects per byte. The legacy format (one stream) reads its storages from
    the stream itself.
    """
    if not zipfile.is_zipfile(io.BytesIO(raw)):
        return 2 * len(raw)
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as inner:
            infos = inner.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise unsupported(f"{member} is not a readable torch file: {e}", member) from None
    if len(infos) > MAX_MEMBERS:
        raise RlarchiveError("LIMIT_EXCEEDED", f"{member} has more than {MAX_MEMBERS} records", member=member)
    return sum(i.file_size * (OBJECT_BYTES_PER_BYTE if i.filename.endswith(".pkl") else 1) for i in infos)


def charge_tensors(obj: Any, budget: ImportBudget, member: str) -> None:
    """Charge every tensor in ``obj`` (a state dict, an optimizer state) at its full size, before it is copied.

    A tensor may view a storage many times, or with a stride of 0: making it
    contiguous and writing it materialises every element, so each is charged.
    """
    import torch

    stack, seen = [obj], 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > 1_000_000:
            raise RlarchiveError("LIMIT_EXCEEDED", f"{member} holds more than 1,000,000 values", member=member)
        if isinstance(v, torch.Tensor):
            if v.layout is not torch.strided or v.is_nested or v.device.type != "cpu":
                raise unsupported(
                    f"{member} holds a {v.layout} tensor on {v.device.type} (only dense CPU tensors can be stored)",
                    member,
                )
            budget.charge(
                v.numel() * v.element_size(), f"a tensor of shape {tuple(v.shape)} in {member}", member=member
            )
        elif isinstance(v, Mapping):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)


def import_archive(
    in_zip: Source,
    out_path: str | os.PathLike[str],
    *,
    algorithm: str | None = None,
    budget: int | ImportBudget | None = None,
    vec_normalize: str | os.PathLike[str] | bytes | Statistics | None = None,
    replay_buffer: Source | None = None,
    metadata: Mapping[str, str] | None = None,
) -> ImportReport:
    """Convert a Stable-Baselines3 model ``.zip`` into an rlarchive, running no code from it.

    Args:
        in_zip: the file written by ``model.save(...)`` (its path, or the file open for reading).
        out_path: the rlarchive to write (replaced atomically).
        algorithm: the SB3 algorithm name (``"PPO"``, ``"SAC"``, ...) to record in
            the metadata; guessed with :func:`infer_algorithm` when omitted.
        budget: bytes the import may allocate (an int, or an
            :class:`~rlarchive.unpickle.budget.ImportBudget` several imports may
            share); by default ``max(256 MiB, 4 × the input's size)``
            (:func:`~rlarchive.unpickle.budget.budget_for`). Every member's
            uncompressed size, what parsing the ``data`` JSON and ``torch.load``
            of each ``.pth`` can build, every tensor written and everything the
            unpickler builds is charged before it is allocated (Annex B.7).
        vec_normalize: the ``vecnormalize.pkl`` saved beside the model (path or
            bytes, or statistics already read): its statistics are read with the restricted unpickler
            (:func:`rlarchive.sb3.vec_normalize.read`) and stored as the
            extension ``RLA_vec_normalize`` (Annex B.6).
        replay_buffer: the file ``model.save_replay_buffer(path)`` wrote (path or open file): read
            with the restricted unpickler
            (:func:`rlarchive.sb3.replay_buffer.read_pickle`, under its own
            budget, by default ``budget_for`` that file, so it grows with the
            file's size) and stored as the extension ``RLA_replay_buffer``.
        metadata: the caller's manifest metadata (string to string), over what
            the import records itself (spec/metadata.md §5: ``n_envs``,
            ``num_timesteps`` and ``seed`` from the data, ``versions.*`` from
            ``system_info.txt``, ``wrappers`` when ``vec_normalize`` is given;
            the zip does not name its environment, give ``env_id`` here). The
            bridge's own keys (``source``, ``sb3.*``) are always the import's.
    Returns:
        An :class:`~rlarchive.sb3.ImportReport`; ``report.opaque`` lists every value kept as an
        opaque pickle (with its data key, pickled type and the reason).
    Raises:
        RlarchiveError: IMPORT_INVALID for an input that is not a readable SB3 or SB2 model, VALUE_UNSUPPORTED for
            a ``.pth`` member that is not a state dict, WRITE_INVALID if the
            result would break the spec, LIMIT_EXCEEDED when the budget would be
            exceeded.
    """
    from . import provenance

    given_metadata = provenance.merged({}, metadata)  # checked before any work
    buffer_value = None
    if replay_buffer is not None:
        from . import replay_buffer as buffers

        buffer_value = buffers.read_pickle(
            replay_buffer, budget=budget.limit if isinstance(budget, ImportBudget) else budget
        )
    budget = budget_for(in_zip, budget)
    stats = read_vec_normalize(vec_normalize, budget)
    report = ImportReport(source="stable-baselines3", output=os.fspath(out_path))
    extension_values: dict[str, Any] = {}
    if buffer_value is not None:
        extension_values[replay_buffer_ext.EXTENSION] = buffer_value
        report.notes.append(
            f"replay buffer stored as the extension {replay_buffer_ext.EXTENSION}: {buffers.describe(buffer_value)}"
        )
    data, tensors, optimizers, metadata = _read_zip(in_zip, budget, report)
    _ars_linear_names(data, tensors, report)
    if buffer_value is not None:
        _buffer_without_timeouts(data, buffer_value, report)
    if stats is not None:
        from . import vec_normalize as vecnormalize

        stats, note = vecnormalize.for_legacy_her(stats, data)
        if note:
            report.notes.append(note)
    found = provenance.from_data(data)
    found.update(provenance.from_system_info(metadata.get(META_SYSTEM_INFO, "")))
    if stats is not None:
        found.update(provenance.vec_normalize_wrappers(stats))
    metadata = {**provenance.merged(found, given_metadata), **metadata}
    try:
        return finish_import(
            out_path, data, tensors, optimizers, metadata, report, algorithm, stats, extension_values=extension_values
        )
    except RlarchiveError as e:
        raise _buffer_refused(e) from None


#: ARS's policies (sb3-contrib): before sb3-contrib 1.7.0 the linear policy's ``action_net`` was one ``Linear``,
#: since then a ``Sequential`` holding it: the old name of each weight -> today's (ARS's own ``set_parameters``
#: renames them when it loads an old file).
_ARS_POLICIES = "sb3_contrib.ars.policies"
_ARS_LINEAR_NAMES = {"action_net.weight": "action_net.0.weight", "action_net.bias": "action_net.0.bias"}


def _ars_linear_names(data: Mapping[str, Any], tensors: dict[str, dict[str, Any]], report: ImportReport) -> None:
    """The weights of an ARS linear policy saved by sb3-contrib < 1.7.0 under the names a model built now has
    (:data:`_ARS_LINEAR_NAMES`), as ARS's own load renames them (Annex B.2); nothing else changes."""
    from ..values import ClassRef

    policy_class, group = data.get("policy_class"), tensors.get("policy", {})
    if not (isinstance(policy_class, ClassRef) and policy_class.module == _ARS_POLICIES):
        return
    renamed = {k: new for k, new in _ARS_LINEAR_NAMES.items() if k in group and new not in group}
    if not renamed:
        return
    tensors["policy"] = {renamed.get(k, k): v for k, v in group.items()}
    report.notes.append(
        f"ARS linear policy of sb3-contrib < 1.7.0: {', '.join(renamed)} stored as the names sb3-contrib gives them "
        f"now ({', '.join(renamed.values())}), as its load renames them"
    )


def _buffer_without_timeouts(data: dict[str, Any], buffer_value: Mapping[str, Any], report: ImportReport) -> None:
    """A replay buffer of SB3 < 1.1 (no ``handle_timeout_termination``, read as False, Annex B.11) beside a model of
    SB3 < 1.1, whose data has no ``replay_buffer_kwargs`` (SB3 1.1 added both): the model gets
    ``replay_buffer_kwargs`` saying False, so that ``load`` builds the buffer the archive holds (SB3's
    ``load_replay_buffer`` puts the old buffer, flag and all, in the model). A model that has them decides."""
    if "replay_buffer_kwargs" in data or buffer_value.get("handle_timeout_termination") is not False:
        return
    data["replay_buffer_kwargs"] = {"handle_timeout_termination": False}
    report.notes.append(
        "a model and replay buffer of Stable-Baselines3 < 1.1, which handled no timeouts: replay_buffer_kwargs "
        "handle_timeout_termination = False, so that the model is built for its buffer"
    )


def _buffer_refused(e: RlarchiveError) -> RlarchiveError:
    """IMPORT_INVALID for a replay buffer the writer refuses (a rule a reader checks: spaces that differ from the
    model's, indices out of range), naming the rule's pointer; any other error as it is."""
    from ..writer import refusal

    found = refusal(e)
    if found is e or found.member != replay_buffer_ext.MEMBER:
        return e
    return RlarchiveError(
        "IMPORT_INVALID", f"not a Stable-Baselines3 replay buffer file: {found.message} (at {found.pointer})"
    )


def _read_zip(
    in_zip: Source, budget: ImportBudget, report: ImportReport
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, Any], dict[str, str]]:
    """(decoded data, tensor groups, optimizer states, the bridge's metadata) of an SB3 zip, every member charged to ``budget``."""
    tensors: dict[str, dict[str, Any]] = {}
    optimizers: dict[str, Any] = {}
    metadata = {META_SOURCE: "stable-baselines3"}
    with open_zip(in_zip) as zf:
        names = zf.namelist()
        if "data" not in names:
            if "data.json" in names and "mimetype" in names and sb3_files.is_archive(in_zip):
                raise RlarchiveError(
                    "IMPORT_INVALID",
                    "not a Stable-Baselines3 model: the file is already an rlarchive (written through "
                    "rlarchive.sb3.use_archives() or its twins); use it as it is",
                )
            raise RlarchiveError("IMPORT_INVALID", "not a Stable-Baselines3 model: no 'data' member")
        if "parameters" in names or "parameter_list" in names:
            raise RlarchiveError(
                "IMPORT_INVALID",
                "this is a Stable-Baselines (SB2) model (it has 'parameters' or 'parameter_list'); use 'rlarchive import-sb2'",
            )
        data = decode_data(
            parse_data_json(read_member(zf, "data", MAX_JSON_BYTES, budget), budget=budget), report, budget
        )
        for name in names:
            if name == "data":
                continue
            if name == "_stable_baselines3_version":
                metadata[META_VERSION] = read_member(zf, name, 1 << 16, budget).decode("utf-8", "replace").strip()
                report.library_version = metadata[META_VERSION]
            elif name == "system_info.txt":
                metadata[META_SYSTEM_INFO] = read_member(zf, name, 1 << 20, budget).decode("utf-8", "replace")
            elif name.endswith(".pth"):
                raw = read_member(zf, name, _PTH_LIMIT, budget)
                budget.charge(_pth_cost(raw, name), f"what torch.load builds from {name}", member=name)
                obj = _torch_load(raw, name)
                del raw
                charge_tensors(obj, budget, name)
                if name in _VARIABLES_MEMBERS:
                    add_variables(obj, name, tensors, report)
                else:
                    add_state(name[: -len(".pth")], obj, name, tensors, optimizers)
            else:
                report.skipped_members.append((name, "not part of the SB3 format"))
    return data, tensors, optimizers, metadata


def read_vec_normalize(source: Any, budget: ImportBudget) -> Statistics | None:
    """The statistics of a ``vecnormalize.pkl`` (path or bytes), of a live ``VecNormalize``, or given as they are."""
    from . import vec_normalize as vecnormalize

    if source is None or isinstance(source, Statistics):
        return source
    if isinstance(source, (bytes, bytearray)):
        return vecnormalize.read(bytes(source), budget=budget)
    if isinstance(source, (str, os.PathLike)):
        return vecnormalize.read(source, budget=budget)
    return vecnormalize.from_wrapper(source)


def add_variables(obj: Any, member: str, tensors: dict[str, dict[str, Any]], report: ImportReport) -> None:
    """SB3's pytorch variables (``log_ent_coef``, ...) as the tensor group ``variables``; None entries dropped."""
    if not isinstance(obj, Mapping):
        raise unsupported(f"{member} is not a dict of tensors", member)
    none_names = [k for k, v in obj.items() if v is None]
    if none_names:
        report.notes.append(f"pytorch variables set to None were dropped: {none_names}")
    variables = _tensor_dict({k: v for k, v in obj.items() if v is not None}, member)
    if variables:
        tensors["variables"] = variables


def add_state(stem: str, obj: Any, member: str, tensors: dict[str, dict[str, Any]], optimizers: dict[str, Any]) -> None:
    """One state dict SB3 saves (``policy``, ``policy.optimizer``, ...): an optimizer state, or a tensor group."""
    if _is_optimizer_state(obj):
        optimizers[stem] = obj
        return
    if not _GROUP_NAME.match(stem) or stem in ("variables", "arrays") or stem.startswith("optimizer."):
        raise unsupported(f"cannot store {member} as a tensor group", member)
    tensors[stem] = _tensor_dict(obj, member)


def finish_import(
    out_path: str | os.PathLike[str],
    data: dict[str, Any],
    tensors: dict[str, dict[str, Any]],
    optimizers: dict[str, Any],
    metadata: dict[str, str],
    report: ImportReport,
    algorithm: str | None,
    vec_normalize: Statistics | None = None,
    model: Any = None,
    extension_values: Mapping[str, Any] | None = None,
) -> ImportReport:
    """Record the algorithm (given, or told from ``data``) and write the archive (with the VecNormalize statistics, if any)."""
    return prepare_import(
        out_path, data, tensors, optimizers, metadata, report, algorithm, vec_normalize, model, extension_values
    )()


def prepare_import(
    out_path: str | os.PathLike[str],
    data: dict[str, Any],
    tensors: dict[str, dict[str, Any]],
    optimizers: dict[str, Any],
    metadata: dict[str, str],
    report: ImportReport,
    algorithm: str | None,
    vec_normalize: Statistics | None = None,
    model: Any = None,
    extension_values: Mapping[str, Any] | None = None,
) -> Callable[[], ImportReport]:
    """:func:`finish_import` in two steps: now, all that reads ``model`` (the policy's description) and every
    check of the archive (:func:`rlarchive.writer.prepare`: nothing is written); the writing of the checked
    archive when the returned function is called."""
    from ..writer import Prepared, prepare, save
    from . import algorithms

    if algorithm is not None and algorithm not in algorithms.ALGORITHMS:
        raise RlarchiveError(
            "VALUE_UNSUPPORTED", f"unknown algorithm {algorithm!r}; give one of {', '.join(algorithms.ALGORITHMS)}"
        )
    algo = algorithm or algorithms.identify(data)
    if not algo:
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            "cannot tell which Stable-Baselines3 or sb3-contrib algorithm saved this model from its data; "
            f"give it with --algorithm NAME (algorithm=NAME), one of {', '.join(algorithms.ALGORITHMS)}",
        )
    metadata[META_ALGORITHM] = algo
    metadata[META_ALGORITHM_CLASS] = algorithms.ALGORITHMS[algo].ref.name
    report.algorithm = algo
    if not algorithm:
        report.notes.append(f"algorithm identified from the data: {algo}")
    if report.torch_values:
        metadata[META_TORCH_VALUES] = json.dumps(report.torch_values)
    report.tensor_groups = {g: len(t) for g, t in tensors.items()}
    report.optimizers = list(optimizers)
    left = optimizer_left_out(data)
    if left is not None:
        report.notes.append(
            f"optimizer class {left}: not on the allow-list, so rlarchive.sb3.load cannot restore it (the archive keeps "
            "its name and the optimizer states); load builds the model with SB3's default optimizer, freshly initialised, "
            "unless allow_classes names it; prediction and the portable policy do not depend on it"
        )
    values = dict(extension_values or {})
    if vec_normalize is not None:
        values[vec_normalize_ext.EXTENSION] = vec_normalize_ext.to_value(vec_normalize)
        report.notes.append(f"VecNormalize statistics stored as the extension {vec_normalize_ext.EXTENSION}")
    if model is None:  # build the model from a first archive, to describe its policy
        with tempfile.TemporaryDirectory(prefix="rlarchive-import-") as tmp:
            first = os.path.join(tmp, "model.rlarchive")
            first_values = {
                k: v for k, v in values.items() if k != replay_buffer_ext.EXTENSION
            }  # not needed to describe the policy
            save(first, data, tensors, optimizers, metadata=metadata, extension_values=first_values)
            policy, report.policy, model = _policy_value(
                lambda env: load(first, env=env, device="cpu"), vec_normalize, data
            )
    else:
        policy, report.policy, _ = _policy_value(lambda env: model, vec_normalize, data)
    if model is not None:  # each optimizer parameter named by its policy tensor (spec §7.9), from the model itself
        optimizers = optimizer_names.with_param_tensors(optimizers, model, tensors.get("policy", {}))

    def checked() -> Prepared:
        if policy is not None:
            try:
                return prepare(
                    data,
                    tensors,
                    optimizers,
                    metadata=metadata,
                    extension_values={**values, policy_description.EXTENSION: policy},
                )
            except RlarchiveError as e:  # a description the checks refuse: the archive goes without it, and says why
                if e.code != "WRITE_INVALID" or policy_description.EXTENSION not in e.message:
                    raise
                report.policy = f"not written: {e.message}"
        return prepare(data, tensors, optimizers, metadata=metadata, extension_values=values)

    prepared = checked()

    def write() -> ImportReport:
        prepared.write(out_path)
        return report

    return write


def _policy_value(
    build: Callable[[Any], Any], stats: Statistics | None, data: Mapping[str, Any]
) -> tuple[dict[str, Any] | None, str, Any]:
    """(the RLA_policy value of the model ``build(env)`` gives, or None; what the report says about it; the model,
    or None when it cannot be built).

    The model is built without an environment, or, when SB3 needs one (HER),
    around a stand-in environment with the model's spaces that never steps.
    """
    import importlib.util

    from .. import spaces
    from . import portable_policy as sb3_policy
    from . import vec_normalize as vecnormalize

    if importlib.util.find_spec("stable_baselines3") is None:
        return (
            None,
            "not written: stable-baselines3 is not installed, and describing the policy needs the built model",
            None,
        )
    model = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                model = build(None)
            except AssertionError:  # SB3 asserts an environment for HER
                obs, act = (data.get(k) for k in ("observation_space", "action_space"))
                kinds = typing.get_args(spaces.Space)
                if not (isinstance(obs, kinds) and isinstance(act, kinds)):
                    raise
                model = build(vecnormalize.stand_in_env(spaces.to_gymnasium(obs), spaces.to_gymnasium(act)))
            desc = sb3_policy.describe(model)
    except sb3_policy.Unsupported as e:
        return None, f"not written: {e}", model
    except RlarchiveError as e:
        return None, f"not written: the model cannot be built from the archive ({e.code}: {e.message})", None
    except (TypeError, ValueError, AssertionError, KeyError, IndexError, AttributeError, RuntimeError) as e:
        # SB3 refused the values while building the policy: the archive is written without the description
        return (
            None,
            f"not written: Stable-Baselines3 cannot build the policy from the archive ({type(e).__name__}: {str(e)[:300]})",
            None,
        )

    def ref(w: Any) -> Any:
        if w.array.dtype != np.float32:
            raise sb3_policy.Unsupported(f"{w.name} is {w.array.dtype}, the portable policy computes in float32")
        return TensorRef(w.group, w.name, "F32", tuple(w.array.shape))

    try:
        value = sb3_policy.resolve(desc, ref)
    except sb3_policy.Unsupported as e:
        return None, f"not written: {e}", model
    value["vec_normalize"] = bool(stats is not None and stats.norm_obs)
    return value, "written", model
