"""A Stable-Baselines3 replay buffer in an archive, without pickle (extension ``RLA_replay_buffer``).

Three conversions meet the value of the extension (``spec/extensions/RLA_replay_buffer.md``):

- :func:`capture` takes a live buffer (``ReplayBuffer``, ``DictReplayBuffer``,
  ``HerReplayBuffer``, ``NStepReplayBuffer``) as the value, its arrays handed
  to the writer as they are (views, no copy): the archive streams them from
  the buffer's own memory.
- :func:`restore` puts an archive's buffer into a model. Its arrays become
  copy-on-write views of the archive file (a private memory map): nothing of
  the buffer is copied when the model is loaded, and a page is copied only
  when training writes to it. The archive file must not be changed in place
  while the model lives (the atomic writer replaces files, it never
  rewrites them).
- :func:`read_pickle` reads the file SB3's ``save_replay_buffer`` writes with
  the restricted unpickler (nothing in it runs), and :func:`write_pickle`
  writes one that ``load_replay_buffer`` accepts.

The value's classes, HER's info dicts and the writer's checks are in
:mod:`~rlarchive.sb3.replay_buffer_value`, the reading of SB3's pickle in
:mod:`~rlarchive.sb3.replay_buffer_import`; their public names are
re-exported here.
"""

from __future__ import annotations

import mmap
import os
import pickle
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import RlarchiveError
from ..extensions.replay_buffer import EXTENSION, STRATEGIES
from ..limits import MAX_REPLAY_N_STEPS
from .replay_buffer_import import read_pickle

if TYPE_CHECKING:
    from ..reader import Archive
from .replay_buffer_value import (
    ROW_KEYS,
    SB3_CLASSES,
    check_spaces,
    check_value,
    class_name,
    describe,
    infos_array,
    infos_value,
    transitions,
    unsupported,
)

__all__ = [
    "SB3_CLASSES",
    "capture",
    "describe",
    "read_value",
    "restore",
    "build_buffer",
    "check_model_buffer",
    "write_pickle",
    "read_pickle",
    "check_spaces",
    "check_value",
    "copy_on_write_resolver",
    "infos_value",
    "transitions",
]


# ---------------------------------------------------------------- live buffer -> value


def capture(buffer: Any) -> dict[str, Any]:
    """The extension's value for a live SB3 buffer; its arrays are the buffer's own (no copy).

    A ``HerReplayBuffer`` with ``copy_info_dict=True`` gives its info dicts as
    ``infos`` (the buffer's own objects), each checked to be a value the
    archive can hold (:func:`infos_value`).

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for another buffer class or an info
            the value model cannot hold (naming its row, environment and key),
            LIMIT_EXCEEDED when the info dicts' JSON would not fit in the
            member (``MAX_JSON_BYTES``).
    """
    name = class_name(buffer)
    omu = bool(buffer.optimize_memory_usage)
    value: dict[str, Any] = {
        "class": name,
        "buffer_size": int(buffer.buffer_size),
        "n_envs": int(buffer.n_envs),
        "pos": int(buffer.pos),
        "full": bool(buffer.full),
        "optimize_memory_usage": omu,
        "handle_timeout_termination": bool(buffer.handle_timeout_termination),
        "observation_space": buffer.observation_space,
        "action_space": buffer.action_space,
        "observations": buffer.observations,
        "next_observations": None if omu else buffer.next_observations,
        "actions": buffer.actions,
        "rewards": buffer.rewards,
        "dones": buffer.dones,
        "timeouts": buffer.timeouts,
        "her": None,
        "n_step": None,
    }
    if name == "HerReplayBuffer":
        copy_info = bool(buffer.copy_info_dict)
        value["her"] = {
            "n_sampled_goal": int(buffer.n_sampled_goal),
            "goal_selection_strategy": STRATEGIES[int(buffer.goal_selection_strategy.value)],
            "copy_info_dict": copy_info,
            "ep_start": buffer.ep_start,
            "ep_length": buffer.ep_length,
            "current_ep_start": buffer._current_ep_start,
            "infos": None,
        }
        if copy_info:
            infos = buffer.infos
            if not (isinstance(infos, np.ndarray) and infos.shape == (value["buffer_size"], value["n_envs"])):
                raise unsupported(
                    f"the HerReplayBuffer's infos are not an array of [buffer_size, n_envs] = [{value['buffer_size']}, {value['n_envs']}]"
                )
            value["her"]["infos"] = infos_value((list(row) for row in infos), value)
    if name == "NStepReplayBuffer":
        value["n_step"] = {"n_steps": int(buffer.n_steps), "gamma": float(buffer.gamma)}
    return value


# ---------------------------------------------------------------- archive -> model


def copy_on_write_resolver(ar: Archive) -> Callable[[str, str], np.ndarray]:
    """``(group, name) -> array``: writable copy-on-write views of the tensors of the open archive ``ar`` (a local file).

    The file the archive verified (its open descriptor) is mapped privately
    (``mmap.ACCESS_COPY``): reading a page reads the file, writing one copies
    that page into the process's memory, and the file never changes. The map
    outlives the archive as long as an array views it.
    """
    from ..dtypes import DTYPES, numpy_view_dtype

    cache: dict[str, mmap.mmap] = {}

    def resolve(group: str, name: str) -> np.ndarray:
        info = ar.tensor_info(group).get(name)
        if info is None:
            raise RlarchiveError("TENSOR_NOT_FOUND", f"no tensor {name!r} in group {group!r}")
        if DTYPES[info.dtype].numpy is None:
            raise unsupported(f"{group}/{name} is {info.dtype}, which NumPy cannot hold")
        count = info.nbytes // DTYPES[info.dtype].size
        if count == 0:
            return np.zeros(info.shape, dtype=numpy_view_dtype(info.dtype))
        if "map" not in cache:
            cache["map"] = mmap.mmap(ar.source.fileno(), 0, access=mmap.ACCESS_COPY)
        view: np.ndarray = np.frombuffer(
            cache["map"], dtype=numpy_view_dtype(info.dtype), count=count, offset=info.offset
        ).reshape(info.shape)
        return view

    return resolve


def read_value(ar: Archive) -> dict[str, Any] | None:
    """The open archive's buffer value decoded, or None without one.

    Referenced arrays are writable copy-on-write views of the file
    (:func:`copy_on_write_resolver`) when the archive is a local file, else copies.
    """
    from .. import extensions
    from ..values import Decoder

    raw = extensions.read_document(ar, EXTENSION)
    if raw is None:
        return None
    resolve = copy_on_write_resolver(ar) if ar.source.mappable else (lambda g, n: np.array(ar.tensor(g, n)))
    value: dict[str, Any] = Decoder(resolve, "neutral").decode(raw)  # a map: the extension's rules checked it
    return value


def _array_attrs(value: Mapping[str, Any]) -> dict[str, Any]:
    """Buffer attribute -> array of the value (Dict observations as their maps)."""
    out = {k: value[k] for k in ("observations", "actions") + ROW_KEYS}
    if value["next_observations"] is not None:
        out["next_observations"] = value["next_observations"]
    her = value.get("her")
    if her is not None:
        out["ep_start"], out["ep_length"], out["_current_ep_start"] = (
            her["ep_start"],
            her["ep_length"],
            her["current_ep_start"],
        )
    return out


def _same_layout(mine: Any, theirs: Any) -> bool:
    if isinstance(mine, dict) or isinstance(theirs, dict):
        return (
            isinstance(mine, dict)
            and isinstance(theirs, dict)
            and set(mine) == set(theirs)
            and all(_same_layout(mine[k], theirs[k]) for k in mine)
        )
    return (
        isinstance(theirs, np.ndarray)
        and isinstance(mine, np.ndarray)
        and mine.shape == theirs.shape
        and mine.dtype == theirs.dtype
    )


def restore(model: Any, value: Mapping[str, Any], *, truncate_last_trajectory: bool = True) -> str:
    """Put the buffer ``value`` (from :func:`read_value`) into ``model``; returns what was done, in one sentence.

    The model's own buffer (built by the model from the archive's data) is
    kept and its arrays replaced by those of the value, which must have the
    same class, the same number of environments, rows, flags, shapes and
    dtypes, and HER's or the n-step return's parameters (:func:`_differs`);
    otherwise nothing is changed and the sentence says why. For a
    ``HerReplayBuffer`` the info dicts come back when it keeps them
    (``copy_info_dict``, which must be the model's too), and the last episode
    is closed when ``truncate_last_trajectory`` (as SB3's
    ``load_replay_buffer`` does).
    """
    buf = getattr(model, "replay_buffer", None)
    if buf is None:
        return "replay buffer not restored: the model has no replay buffer (an on-policy algorithm, or one not set up)"
    try:
        mine = class_name(buf)
    except RlarchiveError as e:
        return f"replay buffer not restored: {e.message}"
    if mine != value["class"]:
        return f"replay buffer not restored: the archive holds a {value['class']}, the model uses a {mine}"
    differs = _differs(buf, value)
    if differs is not None:
        return f"replay buffer not restored: {differs}"
    arrays = _array_attrs(value)
    for attr, arr in arrays.items():
        if not _same_layout(getattr(buf, attr, None), arr):
            return (
                f"replay buffer not restored: its {attr.lstrip('_')} differ in shape or dtype from the model's buffer"
            )
    her = value.get("her")
    for attr, arr in arrays.items():
        setattr(buf, attr, arr)
    if her is not None and her["copy_info_dict"]:
        buf.infos = infos_array(her["infos"])
    buf.pos, buf.full = int(value["pos"]), bool(value["full"])
    if her is not None and truncate_last_trajectory and buf.env is not None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            buf.truncate_last_trajectory()
    return f"replay buffer restored: {describe(value)}"


def check_model_buffer(model: Any) -> None:
    """Refuse a model whose own n-step replay buffer (as its data builds it) would allocate past ``MAX_REPLAY_N_STEPS``.

    Raises:
        RlarchiveError: LIMIT_EXCEEDED.
    """
    n = getattr(getattr(model, "replay_buffer", None), "n_steps", None)
    if isinstance(n, (int, float)) and n > MAX_REPLAY_N_STEPS:
        raise RlarchiveError(
            "LIMIT_EXCEEDED",
            f"the model's replay buffer has n_steps {n}, above MAX_REPLAY_N_STEPS ({MAX_REPLAY_N_STEPS}): "
            "every training step would allocate arrays of that length per sampled transition",
        )


def _differs(buf: Any, value: Mapping[str, Any]) -> str | None:
    """What of the value's parameters differs from the buffer the model built (its construction decides them), or None.

    The value gives the buffer's contents, ``pos`` and ``full``; every other
    parameter must be the model's: the sizes, the flags, HER's and the n-step
    return's parameters (a value's ``n_steps`` sizes every training step's arrays).
    """
    from stable_baselines3.her.goal_selection_strategy import KEY_TO_GOAL_STRATEGY

    mine: dict[str, Any] = {
        k: getattr(buf, k) for k in ("n_envs", "buffer_size", "optimize_memory_usage", "handle_timeout_termination")
    }
    theirs: dict[str, Any] = {k: value[k] for k in mine}
    her, n_step = value.get("her"), value.get("n_step")
    if her is not None:
        mine.update(n_sampled_goal=buf.n_sampled_goal, goal_selection_strategy=buf.goal_selection_strategy,
                    copy_info_dict=bool(buf.copy_info_dict))  # fmt: skip
        theirs.update(n_sampled_goal=her["n_sampled_goal"], copy_info_dict=bool(her["copy_info_dict"]),
                      goal_selection_strategy=KEY_TO_GOAL_STRATEGY.get(her["goal_selection_strategy"]))  # fmt: skip
    if n_step is not None:
        mine.update(n_steps=buf.n_steps, gamma=float(buf.gamma))
        theirs.update(n_steps=n_step["n_steps"], gamma=float(n_step["gamma"]))
    for k, v in theirs.items():
        if v != mine[k]:
            shown = v.name.lower() if hasattr(v, "name") else v
            model = mine[k].name.lower() if hasattr(mine[k], "name") else mine[k]
            return f"its {k} is {shown}, the model's is {model}"
    return None


# ---------------------------------------------------------------- value -> SB3 pickle


def build_buffer(value: Mapping[str, Any], device: str = "cpu") -> Any:
    """An SB3 buffer object holding ``value`` (arrays shared, not copied), as ``load_replay_buffer`` unpickles one.

    The spaces are rebuilt as gymnasium spaces; a ``HerReplayBuffer`` has no
    environment (``load_replay_buffer`` sets it).
    """
    import importlib

    import torch
    from stable_baselines3.common.preprocessing import get_action_dim, get_obs_shape

    from .. import spaces

    module, qualname = SB3_CLASSES[value["class"]]  # a fixed table: no name from the file is imported
    cls = getattr(importlib.import_module(module), qualname)
    buf = cls.__new__(cls)
    obs_space, act_space = (
        spaces.to_gymnasium(value[k]) if not spaces.is_gymnasium_space(value[k]) else value[k]
        for k in ("observation_space", "action_space")
    )
    state: dict[str, Any] = {
        "buffer_size": int(value["buffer_size"]),
        "observation_space": obs_space,
        "action_space": act_space,
        "obs_shape": get_obs_shape(obs_space),
        "action_dim": get_action_dim(act_space),
        "pos": int(value["pos"]),
        "full": bool(value["full"]),
        "device": torch.device(device),
        "n_envs": int(value["n_envs"]),
        "optimize_memory_usage": bool(value["optimize_memory_usage"]),
        "handle_timeout_termination": bool(value["handle_timeout_termination"]),
    }
    arrays = _array_attrs(value)
    state.update({k: v for k, v in arrays.items() if not k.startswith("_") and k not in ("ep_start", "ep_length")})
    her = value.get("her")
    if her is not None:
        from stable_baselines3.her.goal_selection_strategy import KEY_TO_GOAL_STRATEGY

        n = int(her["n_sampled_goal"])
        if her["copy_info_dict"]:
            infos = infos_array(her["infos"])
        else:  # as SB3 makes them: an empty dict per transition
            infos = np.empty((state["buffer_size"], state["n_envs"]), dtype=object)
            for idx in np.ndindex(infos.shape):
                infos[idx] = {}
        state.update(
            copy_info_dict=bool(her["copy_info_dict"]),
            goal_selection_strategy=KEY_TO_GOAL_STRATEGY[her["goal_selection_strategy"]],
            n_sampled_goal=n,
            her_ratio=1 - (1.0 / (n + 1)),
            infos=infos,
            ep_start=her["ep_start"],
            ep_length=her["ep_length"],
            _current_ep_start=her["current_ep_start"],
            env=None,
        )
    if value.get("n_step") is not None:
        state.update(n_steps=int(value["n_step"]["n_steps"]), gamma=float(value["n_step"]["gamma"]))
    buf.__dict__.update(state)
    return buf


def write_pickle(value: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Write ``value`` as the pickle SB3's ``save_replay_buffer`` writes (``load_replay_buffer`` reads it), atomically.

    The arrays must be writable (the copy-on-write views of
    :func:`copy_on_write_resolver` are): protocol 5 writes them from their
    own memory as byte arrays, which unpickle as writable arrays.
    """
    from ..writer import atomic_file

    def writable(a: Any) -> Any:
        if isinstance(a, dict):
            return {k: writable(x) for k, x in a.items()}
        return a if a.flags.writeable else np.array(a)  # a read-only array would unpickle read-only

    buf = build_buffer(value)
    for attr in (
        "observations",
        "next_observations",
        "actions",
        "rewards",
        "dones",
        "timeouts",
        "ep_start",
        "ep_length",
        "_current_ep_start",
    ):
        if getattr(buf, attr, None) is not None:
            setattr(buf, attr, writable(getattr(buf, attr)))
    with atomic_file(path) as f:
        pickle.dump(buf, f, protocol=pickle.HIGHEST_PROTOCOL)
