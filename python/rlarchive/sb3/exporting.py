"""An rlarchive back into a Stable-Baselines3 model ``.zip`` that SB3's own ``load`` accepts (:func:`export_archive`).

Values are rebuilt by :class:`rlarchive.sb3.values.Rebuilder` and
pickled as SB3's ``save`` would, in pickles NumPy 1.x and 2.x both read
(:mod:`rlarchive.unpickle.pickler`); the file is written for a chosen SB3
version (schedules as classes from 2.7 on, as closures before; a DQN
optimizer over the target network too before 2.4; layers shared by actor and
critic, which SB3 >= 1.8 cannot hold, as copies).
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import re
import warnings
import zipfile
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import RlarchiveError
from ..extensions import replay_buffer as replay_buffer_ext
from ..unpickle import pickler
from ..values import Opaque
from . import shared_layers
from .keys import ALLOWED_CLASSES, META_ALGORITHM, META_SYSTEM_INFO, META_VERSION
from .loading import load
from .model_zip import unsupported
from .parts import vec_normalize_of
from .values import Rebuilder, archive_parts, is_json_serializable

__all__ = ["export_archive", "ExportWarning", "check_version"]


# the oldest SB3 an export can be written for
_OLDEST_SB3 = (2, 0)


#: Algorithms whose optimizer held the target network too before SB3 / sb3-contrib 2.4, by the prefix of the
#: network it should hold (SB3 pull request 1963, sb3-contrib pull request 252).
_TARGET_IN_OPTIMIZER = {"DQN": "q_net.", "QRDQN": "quantile_net."}


def _dqn_optimizer_for_old_sb3(params: dict[str, Any], prefix: str = "q_net.") -> dict[str, Any]:
    """For an export to SB3 < 2.4: a DQN or QR-DQN optimizer state over the network and its target, as those versions hold it."""
    opt = params.get("policy.optimizer")
    policy = params.get("policy", {})
    if not (isinstance(opt, dict) and len(opt.get("param_groups", ())) == 1):
        return params
    saved = list(opt["param_groups"][0].get("params", []))
    n_q = sum(1 for k in policy if k.startswith(prefix))
    if len(saved) == n_q:
        group = dict(opt["param_groups"][0], params=saved + [max(saved, default=-1) + 1 + i for i in range(n_q)])
        params = dict(params, **{"policy.optimizer": dict(opt, param_groups=[group])})
    return params


def _has_function(obj: Any, depth: int = 0) -> bool:
    """Whether ``obj`` holds a function that must be pickled by value (a schedule closure)."""
    import types

    if isinstance(obj, types.FunctionType):
        return "<locals>" in obj.__qualname__ or "<lambda>" in obj.__qualname__
    if depth < 8 and isinstance(obj, (list, tuple)):
        return any(_has_function(x, depth + 1) for x in obj)
    if depth < 8 and isinstance(obj, dict):
        return any(_has_function(x, depth + 1) for x in obj.values())
    return False


def _pickle_value(obj: Any) -> bytes:
    """A value as SB3 finds it in ``data``: portable pickles (:mod:`rlarchive.unpickle.pickler`), closures by value with cloudpickle."""
    if _has_function(obj):
        import cloudpickle

        data: bytes = cloudpickle.dumps(obj)
        return data
    try:
        return pickler.dumps(obj)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        raise unsupported(f"cannot write a {type(obj).__name__} for Stable-Baselines3: {e}") from None


def _sb3_data_json(items: Mapping[str, Any]) -> str:
    """SB3's ``data_to_json`` with opaque values passed through as their original bytes.

    ``items`` maps keys to rebuilt Python objects or to :class:`Opaque` values.
    """
    out: dict[str, Any] = {}
    for key, obj in items.items():
        if isinstance(obj, Opaque):
            entry = {
                ":type:": f"<class '{obj.type}'>" if obj.type else "<class 'object'>",
                ":serialized:": base64.b64encode(obj.data).decode(),
            }
            out[key] = entry
            continue
        if is_json_serializable(obj):
            out[key] = obj
            continue
        entry = {":type:": str(type(obj)), ":serialized:": base64.b64encode(_pickle_value(obj)).decode()}
        if hasattr(obj, "__dict__") or isinstance(obj, dict):
            gen = obj.items if isinstance(obj, dict) else obj.__dict__.items
            for name, item in gen():
                if isinstance(name, str):  # the readable copies SB3 adds; a key JSON cannot hold is left out
                    entry[name] = item if is_json_serializable(item) else str(item)
        out[key] = entry
    return json.dumps(out, indent=4)


def _target_version(requested: str | None, metadata: Mapping[str, str]) -> tuple[str, tuple[int, int]]:
    """(the version string to write, (major, minor)) of the SB3 an export is for.

    ``requested`` (``"2.4"``) wins; else the version recorded at import; else the installed SB3's.
    """
    recorded = metadata.get(META_VERSION)
    text = requested or recorded
    if text is None:
        try:
            import stable_baselines3

            text = stable_baselines3.__version__
        except ImportError:  # pragma: no cover - export needs SB3 anyway
            text = "2.7.0"
    m = re.match(r"^\s*(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?", str(text))
    if requested is None and (not m or (int(m.group(1)), int(m.group(2))) < _OLDEST_SB3):
        # recorded by SB3 1.x (or unreadable): written for the installed SB3
        import stable_baselines3

        return _target_version(stable_baselines3.__version__, {})
    if not m:
        raise unsupported(f"not a Stable-Baselines3 version: {str(text)[:40]!r} (give X.Y, e.g. 2.4)")
    target = (int(m.group(1)), int(m.group(2)))
    if target < _OLDEST_SB3:
        raise unsupported(f"exports are written for Stable-Baselines3 2.0 or later, not {m.group(0).strip()}")
    if requested is None:
        return str(text).strip(), target
    if recorded is not None and re.match(rf"^{target[0]}\.{target[1]}(\.|$)", recorded.strip()):
        return recorded.strip(), target
    return f"{target[0]}.{target[1]}.{int(m.group(3) or 0)}", target


def check_version(text: str) -> tuple[int, int]:
    """(major, minor) of a Stable-Baselines3 version (``X.Y`` or ``X.Y.Z``) an export can be written for (2.0 or later).

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for another form or an older version.
    """
    target: tuple[int, int] = _target_version(text, {})[1]
    return target


def _write_sb3_zip(
    dest: Any,
    data_json: str,
    params: Mapping[str, Any],
    variables: Mapping[str, Any],
    metadata: Mapping[str, str],
    version: str | None = None,
) -> None:
    """Write the SB3 zip layout (as ``save_to_zip_file`` does) to a path or binary file."""
    import torch

    with zipfile.ZipFile(dest, mode="w") as archive:
        archive.writestr("data", data_json)
        with archive.open("pytorch_variables.pth", mode="w", force_zip64=True) as f:
            torch.save(dict(variables), f)
        for name, sd in params.items():
            with archive.open(name + ".pth", mode="w", force_zip64=True) as f:
                torch.save(sd, f)
        version = version or metadata.get(META_VERSION)
        if version is None:
            try:
                import stable_baselines3

                version = stable_baselines3.__version__
            except ImportError:  # pragma: no cover - export needs SB3 anyway
                version = "unknown"
        archive.writestr("_stable_baselines3_version", version)
        if META_SYSTEM_INFO in metadata:
            archive.writestr("system_info.txt", metadata[META_SYSTEM_INFO])


def export_archive(
    in_path: str | os.PathLike[str],
    out_zip: str | os.PathLike[str],
    *,
    allow_classes: Iterable[str] = (),
    sb3_version: str | None = None,
    vec_normalize_out: str | os.PathLike[str] | None = None,
    replay_buffer_out: str | os.PathLike[str] | None = None,
) -> list[str]:
    """Write a Stable-Baselines3 model ``.zip`` from an rlarchive.

    Spaces become gymnasium spaces, schedules SB3 schedule objects (the
    classes of SB3 2.7 and later, or the closures earlier versions pickle),
    arrays and scalars NumPy objects, and every value JSON cannot hold is
    pickled as SB3's own ``save`` would, in pickles that NumPy 1.x and 2.x
    both read (:mod:`rlarchive.unpickle.pickler`; closures with cloudpickle).
    Opaque values go back as their original bytes (they are never unpickled
    here; one nested in a structure as ``pickle.loads(bytes)``). Class references under
    :data:`~rlarchive.sb3.ALLOWED_CLASSES` (or ``allow_classes``) are resolved through
    :meth:`ClassRef.resolve` and pickled as SB3 would (IMPORT_NOT_ALLOWED when
    such a name is no class defined there); any other class reference is
    written by name, so only ``stable_baselines3.load`` will import it: the
    exported file runs what the archive names when SB3 loads it, like the
    opaque values. The file is written atomically.

    Args:
        in_path: the rlarchive to read (fully verified first).
        out_zip: the SB3 ``.zip`` to write.
        allow_classes: further dotted names or ``prefix.*`` patterns to resolve.
        sb3_version: ``"X.Y"``, the Stable-Baselines3 version (2.0 or later)
            that must load the file; by default the version recorded at
            import, or the installed one when the recorded version is older
            than 2.0 (a model SB3 1.x wrote; the returned notes say so).
        vec_normalize_out: also write the archive's VecNormalize statistics
            (extension ``RLA_vec_normalize``) to this path, as a file
            ``VecNormalize.load(path, venv)`` accepts; VALUE_UNSUPPORTED when
            the archive holds none.
        replay_buffer_out: also write the archive's replay buffer (extension
            ``RLA_replay_buffer``) to this path, as the pickle
            ``model.load_replay_buffer(path)`` accepts (written atomically,
            straight from the archive's mapped arrays); VALUE_UNSUPPORTED when
            the archive holds none.
    Returns:
        Notes on what the export did differently from the archive's record
        (another SB3 version than recorded; layers shared by actor and
        critic, which SB3 >= 1.8 cannot hold, written as copies), each also
        issued as an :class:`ExportWarning`.
    Raises:
        RlarchiveError: for an invalid archive or a value SB3 cannot hold.
    """
    from ..reader import open_archive
    from ..writer import atomic_file

    if isinstance(allow_classes, str):
        raise TypeError("allow_classes must be a list of names, not a string")
    with open_archive(os.fspath(in_path), spaces="neutral") as ar:
        data, metadata, params, variables = archive_parts(ar, copy=True)
        stats = vec_normalize_of(ar, in_path) if vec_normalize_out is not None else None
        buffer_value = None
        if replay_buffer_out is not None:
            from . import replay_buffer as buffers

            buffer_value = buffers.read_value(ar)
            if buffer_value is None:
                raise RlarchiveError(
                    "VALUE_UNSUPPORTED",
                    f"{os.fspath(in_path)} holds no replay buffer (extension {replay_buffer_ext.EXTENSION})",
                )
    version, target = _target_version(sb3_version, metadata)
    notes: list[str] = []
    recorded = metadata.get(META_VERSION)
    if sb3_version is None and recorded is not None and version != recorded.strip():
        notes.append(
            f"the archive records Stable-Baselines3 {recorded.strip()[:40]!r}, for which exports cannot be written; "
            f"the export is for Stable-Baselines3 {version} (give --sb3-version / sb3_version= for another, 2.0 or later)"
        )
    data, params, note = _separate_shared_layers(data, params, in_path)
    if note:
        notes.append(note)
    params, note = _shared_extractor_names(data, params)
    if note:
        notes.append(note)
    if target < (2, 4) and metadata.get(META_ALGORITHM) in _TARGET_IN_OPTIMIZER:
        params = _dqn_optimizer_for_old_sb3(params, _TARGET_IN_OPTIMIZER[metadata[META_ALGORITHM]])
    rb = Rebuilder("export", ALLOWED_CLASSES + tuple(allow_classes), data, target)
    items = {k: (v if isinstance(v, Opaque) else rb.top(k, v)) for k, v in data.items()}
    data_json = _sb3_data_json(items)
    with atomic_file(out_zip) as f:
        _write_sb3_zip(f, data_json, params, variables, metadata, version)
    if stats is not None and vec_normalize_out is not None:
        from . import vec_normalize as vecnormalize

        obs_space, act_space = (
            rb.top(k, data[k]) if k in data else None for k in ("observation_space", "action_space")
        )
        vecnormalize.write(stats, vec_normalize_out, observation_space=obs_space, action_space=act_space)
    if buffer_value is not None and replay_buffer_out is not None:
        buffers.write_pickle(buffer_value, replay_buffer_out)
    for n in notes:
        warnings.warn(n, ExportWarning, stacklevel=2)
    return notes


class ExportWarning(UserWarning):
    """:func:`export_archive` wrote the file differently from how the archive records the model (the message says how)."""


def _shared_extractor_names(data: Mapping[str, Any], params: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """For SB3 >= 1.7: an actor-critic policy state holding one shared features extractor (SB3 < 1.7) with the
    extractor's weights under its other names too (:mod:`rlarchive.sb3.shared_extractor`), so that SB3 loads
    it with its exact match. A policy that does not share its extractor is left as it is."""
    from . import shared_extractor

    pk = data.get("policy_kwargs")
    state = params.get("policy")
    if not isinstance(state, Mapping) or (isinstance(pk, Mapping) and pk.get("share_features_extractor") is False):
        return params, None
    if any(k.startswith(("actor.", "q_net.", "quantile_net.")) for k in state):  # not an actor-critic policy
        return params, None
    completed, note = shared_extractor.complete(state)
    if note is None:
        return params, None
    return dict(params, policy=completed), note.replace("built as", "exported as")


def _separate_shared_layers(
    data: dict[str, Any], params: dict[str, Any], in_path: str | os.PathLike[str]
) -> tuple[dict[str, Any], dict[str, Any], str | None]:
    """For SB3 >= 1.8: a policy with layers shared by actor and critic (SB3 < 1.8) as the equivalent separate networks.

    The shared layers are copied at the head of both networks
    (:meth:`shared_layers.Layout.net_arch`), which computes the same actions
    and values; the policy optimizer's state follows its parameters (a
    shared parameter's state goes to both copies). Returns (data, params, the note to report, or None).
    """
    shape = shared_layers.layout(data.get("policy_kwargs"), params.get("policy"))
    if shape is None:
        return data, params, None
    old_state = params["policy"]
    mapping = shared_layers.to_separate(old_state, shape)
    params = dict(params, policy={new: old_state[old].clone() for new, old in mapping.items()})
    data = dict(data, policy_kwargs={**data["policy_kwargs"], "net_arch": shape.net_arch()})
    order = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = load(in_path, device="cpu")
        order = shared_layers.separate_order([n for n, _ in model.policy.named_parameters()], shape)
    except RlarchiveError:
        pass
    kept = "kept" if order is not None else "reset (the model cannot be built here to order it)"
    for name in [k for k in params if k.endswith(".optimizer")]:
        params[name] = _remap_optimizer(params[name], order, len(params["policy"]) if order is None else len(order))
    note = (
        f"the policy's layers shared by actor and critic (sizes {list(shape.shared)}, Stable-Baselines3 before 1.8) are written "
        f"as copies at the head of each network, net_arch {shape.net_arch()}: the same actions and values; the optimizer state is {kept}"
    )
    return data, params, note


def _remap_optimizer(opt: Any, order: list[tuple[str, str]] | None, n_params: int) -> Any:
    """An optimizer state over the parameters ``order`` lists (new name, old name), from the state over the old ones."""
    import torch

    groups = opt.get("param_groups") if isinstance(opt, dict) else None
    if not (isinstance(groups, list) and len(groups) == 1 and isinstance(groups[0], dict)):
        return opt
    old_ids = list(groups[0].get("params", []))
    if order is None or len(old_ids) != len({old for _, old in order}):
        return {"state": {}, "param_groups": [dict(groups[0], params=list(range(n_params)))]}
    old_names = list(dict.fromkeys(old for _, old in order))  # registration order of the old parameters
    by_name = dict(zip(old_names, old_ids))
    state = opt.get("state", {})
    new_state = {}
    for i, (_, old) in enumerate(order):
        s = state.get(by_name[old])
        if isinstance(s, dict):
            new_state[i] = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in s.items()}
    return {"state": new_state, "param_groups": [dict(groups[0], params=list(range(len(order))))]}
