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
"""
from __future__ import annotations

import json
import math
import mmap
import os
import pickle
import struct
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from ..errors import RlarchiveError
from ..replay_buffer import EXTENSION, STRATEGIES
from .budget import ImportBudget, budget_for

__all__ = [
    "SB3_CLASSES",
    "capture",
    "describe",
    "read_value",
    "restore",
    "build_buffer",
    "write_pickle",
    "read_pickle",
    "check_spaces",
    "check_value",
    "copy_on_write_resolver",
    "infos_value",
    "transitions",
]

#: The buffer classes carried: value ``class`` -> (module, class name) in Stable-Baselines3.
SB3_CLASSES: Mapping[str, tuple[str, str]] = {
    "ReplayBuffer": ("stable_baselines3.common.buffers", "ReplayBuffer"),
    "DictReplayBuffer": ("stable_baselines3.common.buffers", "DictReplayBuffer"),
    "HerReplayBuffer": ("stable_baselines3.her.her_replay_buffer", "HerReplayBuffer"),
    "NStepReplayBuffer": ("stable_baselines3.common.buffers", "NStepReplayBuffer"),
}
_ROW_KEYS = ("rewards", "dones", "timeouts")


def _unsupported(msg: str) -> RlarchiveError:
    return RlarchiveError("VALUE_UNSUPPORTED", msg)


def _class_name(buffer: Any) -> str:
    """The value ``class`` of a live buffer: its exact class must be one of :data:`SB3_CLASSES`."""
    cls = type(buffer)
    for name, (module, qualname) in SB3_CLASSES.items():
        if cls.__module__ == module and cls.__qualname__ == qualname:
            return name
    raise _unsupported(f"the replay buffer is a {cls.__module__}.{cls.__qualname__}; only {', '.join(SB3_CLASSES)} can be stored")


# ---------------------------------------------------------------- live buffer -> value


def capture(buffer: Any) -> dict:
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
    name = _class_name(buffer)
    omu = bool(buffer.optimize_memory_usage)
    value: dict = {
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
                raise _unsupported(f"the HerReplayBuffer's infos are not an array of [buffer_size, n_envs] = [{value['buffer_size']}, {value['n_envs']}]")
            value["her"]["infos"] = infos_value((list(row) for row in infos), value)
    if name == "NStepReplayBuffer":
        value["n_step"] = {"n_steps": int(buffer.n_steps), "gamma": float(buffer.gamma)}
    return value


# ---------------------------------------------------------------- HER's info dicts

#: JSON levels of the extension member around one info: ``{"replay_buffer": {"her": {"infos": [[ info ]]}}}``.
_INFO_LEVELS = 5


def _info_error(row: int, env: int, info: Any, reason: str, code: str = "VALUE_UNSUPPORTED", key: Any = None) -> RlarchiveError:
    where = f"the info dict of row {row}, environment {env}" + (f", key {key!r}" if key is not None else "")
    return RlarchiveError(code, f"{where} cannot be stored: {reason}")


def _info_json_size(info: Any, row: int, env: int, levels: int) -> int:
    """Bytes of ``info``'s JSON text in the member, once checked to be a value the archive holds (spec §7) within ``levels`` JSON levels."""
    if type(info) is dict and not info:  # a row SB3 has not written yet
        return 2
    if _plain_depth(info, levels) is not None:  # plain JSON (flags, numbers, Monitor's record): its own text
        return len(_PLAIN.encode(info).encode("utf-8"))
    from .. import jsonstrict
    from ..limits import INLINE_ARRAY_BYTES
    from ..replay_buffer import GROUP, KEY
    from ..values import Encoder

    ptr = f"/{KEY}/her/infos/{row}/{env}"

    def text(x: Any, at: str) -> bytes:
        return jsonstrict.dumps(Encoder(GROUP, {}, INLINE_ARRAY_BYTES).encode(x, at))

    try:
        raw = text(info, ptr)
    except (RlarchiveError, ValueError, RecursionError) as e:
        key = None
        if isinstance(info, dict):  # name the first key whose value cannot be stored
            for k, v in info.items():
                try:
                    text(v, f"{ptr}/{k}")
                except (RlarchiveError, ValueError, RecursionError):
                    key = k
                    break
        if isinstance(e, RecursionError) or isinstance(e, RlarchiveError) and ("MAX_JSON_DEPTH" in e.message or "MAX_INT_DIGITS" in e.message):
            reason = e.message if isinstance(e, RlarchiveError) else "it nests too deeply"  # a limit of spec §15
            raise _info_error(row, env, info, reason, "LIMIT_EXCEEDED", key) from None
        if isinstance(e, RlarchiveError):  # VALUE_UNSUPPORTED, or a key that cannot name an array's tensor (WRITE_INVALID)
            reason = e.message.split("; pass opaque_fallback")[0]
        else:
            reason = f"it is not JSON text ({e})"  # a string that is not Unicode text
        raise _info_error(row, env, info, reason, key=key) from None
    depth = jsonstrict.nesting_depth(raw.decode("utf-8"))
    if depth > levels:
        raise _info_error(row, env, info, f"it nests {depth} levels deep, and the member allows {levels} there (MAX_JSON_DEPTH)", "LIMIT_EXCEEDED")
    return len(raw)


#: The text :func:`rlarchive.jsonstrict.dumps` writes, for plain JSON values (compact, literal non-ASCII).
_PLAIN = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _plain_depth(x: Any, room: int) -> Optional[int]:
    """JSON levels of ``x`` when it is plain JSON the value model writes as it is (maps of string keys other than
    ``$type``, lists, strings, booleans, null, safe integers, finite floats) within ``room`` levels; else None."""
    t = type(x)
    if x is None or t is bool or t is str or (t is int and abs(x) <= 2**53 - 1) or (t is float and math.isfinite(x)):
        return 0
    if room <= 0 or not (t is dict or t is list):
        return None
    inner = 0
    for k, v in x.items() if t is dict else enumerate(x):
        if t is dict and (type(k) is not str or k == "$type"):
            return None
        d = _plain_depth(v, room - 1)
        if d is None:
            return None
        inner = max(inner, d)
    return inner + 1


def _json_room(value: Mapping[str, Any]) -> int:
    """Bytes the JSON text of HER's ``infos`` may take in the member of ``value`` (whose ``infos`` is still null)."""
    from .. import jsonstrict
    from ..limits import INLINE_ARRAY_BYTES, MAX_JSON_BYTES
    from ..replay_buffer import GROUP, KEY
    from ..values import Encoder

    rest = jsonstrict.dumps({KEY: Encoder(GROUP, {}, INLINE_ARRAY_BYTES).encode(value, "/" + KEY)})
    return MAX_JSON_BYTES - len(rest) + len(b"null")


def infos_value(rows: Iterable[Sequence[Any]], value: Mapping[str, Any], convert: Optional[Callable[[Any, int, int], Any]] = None) -> list:
    """HER's info dicts as the value's ``infos``: ``buffer_size`` lists of ``n_envs`` values (spec RLA_replay_buffer §3).

    ``rows`` gives each row's infos, ``value`` is the buffer's value (its
    ``infos`` still null), and ``convert(item, row, env)``, when given, turns
    an item into the value it stands for (the pickle reader's stand-ins).
    Each info must be a value of spec §7 (maps, lists, numbers, strings,
    arrays, NumPy scalars ...); the items are kept as they are, not copied.
    The JSON text they make is counted as they come, and refused once the
    extension's member would exceed ``MAX_JSON_BYTES`` (spec §15), before
    anything more is converted.

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for an info the value model cannot
            hold, LIMIT_EXCEEDED past ``MAX_JSON_BYTES`` or ``MAX_JSON_DEPTH``;
            the message names the row, the environment and the key.
    """
    from ..limits import MAX_JSON_BYTES, MAX_JSON_DEPTH

    levels = MAX_JSON_DEPTH - _INFO_LEVELS
    size, n_envs = int(value["buffer_size"]), int(value["n_envs"])
    room = _json_room(value)
    used = 1 + size * (n_envs + 2)  # the brackets and commas of B lists of N items: [[a,b],[c,d]]
    if used > room:
        raise RlarchiveError(
            "LIMIT_EXCEEDED", f"the info dicts of {size} rows of {n_envs} environments need at least {used} bytes of JSON, beyond what the member holds ({MAX_JSON_BYTES} bytes, MAX_JSON_BYTES)"
        )
    out: list = []
    for i, row in enumerate(rows):
        items = list(row)
        if i >= size or len(items) != n_envs:
            raise _unsupported(f"the infos are not [buffer_size, n_envs] = [{size}, {n_envs}] (row {i} of {len(items)})")
        for j, item in enumerate(items):
            if convert is not None:
                items[j] = item = convert(item, i, j)
            used += _info_json_size(item, i, j, levels)
            if used > room:
                raise _info_error(i, j, item, f"the info dicts' JSON reaches {used} bytes there, beyond what the member holds ({MAX_JSON_BYTES} bytes, MAX_JSON_BYTES)", "LIMIT_EXCEEDED")
        out.append(items)
    if len(out) != size:
        raise _unsupported(f"the infos have {len(out)} rows, not buffer_size {size}")
    return out


def _infos_array(rows: Sequence[Sequence[Any]]) -> np.ndarray:
    """The object array SB3 keeps HER's infos in, holding the given items (not copies)."""
    out = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=object)
    for i, row in enumerate(rows):
        for j, info in enumerate(row):
            out[i, j] = info
    return out


# ---------------------------------------------------------------- what a writer checks


def check_value(value: Mapping[str, Any], data: Mapping[str, Any]) -> None:
    """Check ``value`` as its reader will: every rule of spec RLA_replay_buffer §4, before anything is written.

    ``value`` is a buffer value (:func:`capture`, :func:`read_pickle`) and
    ``data`` the model's data as the archive will hold it (its spaces are
    compared, rule 8). The value is encoded as the writer encodes it (arrays
    referenced, not copied), then checked by the reader's own functions:
    :func:`rlarchive.replay_buffer.check` (rules 1-7) and
    :func:`rlarchive.replay_buffer.check_content_of` (rules 8-9, reading
    only the spaces' arrays and HER's indices), so that no writer produces a
    buffer its reader refuses. HER's info dicts count here by their rows'
    lengths only: :func:`infos_value` has checked each of them, and the
    writer checks the values it writes again.

    Raises:
        RlarchiveError: EXTENSION_INVALID with the JSON Pointer of the first
            broken rule (as a reader reports it); a value code (spec §7) for
            a value the archive cannot hold.
    """
    from .. import replay_buffer as ext
    from ..limits import INLINE_ARRAY_BYTES
    from ..values import Checker, Encoder
    from ..writer import ARRAYS_GROUP

    her = value.get("her")
    if isinstance(her, Mapping) and isinstance(her.get("infos"), list):  # each info is checked by infos_value; the rules see only their rows' lengths
        value = dict(value, her=dict(her, infos=[[None] * len(row) if isinstance(row, (list, tuple)) else row for row in her["infos"]]))
    tensors: dict = {ext.GROUP: {}, ARRAYS_GROUP: {}}
    encoded = Encoder(ext.GROUP, tensors[ext.GROUP], INLINE_ARRAY_BYTES).encode(value, "/" + ext.KEY)
    Checker().check(encoded, "/" + ext.KEY)
    raw_data: dict = {}
    for key in ("observation_space", "action_space"):  # as the writer encodes data.json
        if key in data:
            try:
                raw_data[key] = Encoder(ARRAYS_GROUP, tensors[ARRAYS_GROUP], INLINE_ARRAY_BYTES).encode(data[key], f"/data/{key}")
            except RlarchiveError:  # not a value the writer takes: it refuses the data itself
                continue

    def tensor(group: str, name: str) -> Any:
        t = tensors.get(group, {}).get(name)
        if t is None:
            raise RlarchiveError("REF_NOT_FOUND", f"no tensor {name!r} in group {group!r}")
        return t

    def array_of(group: str, name: str) -> np.ndarray:
        return tensor(group, name).array

    def raw_of(group: str, name: str) -> bytes:
        return tensor(group, name).data.tobytes()  # the element bytes as written (little-endian, C order)

    ext.check(encoded, raw_data)
    ext.check_content_of(encoded, raw_data, raw_of, array_of)


def transitions(value: Mapping[str, Any]) -> int:
    """Transitions the buffer holds: rows in use (``buffer_size`` when full, else ``pos``) times ``n_envs``."""
    return (int(value["buffer_size"]) if value["full"] else int(value["pos"])) * int(value["n_envs"])


# ---------------------------------------------------------------- archive -> model


def copy_on_write_resolver(ar: Any) -> Callable[[str, str], np.ndarray]:
    """``(group, name) -> array``: writable copy-on-write views of the tensors of the open archive ``ar`` (a local file).

    The file the archive verified (its open descriptor) is mapped privately
    (``mmap.ACCESS_COPY``): reading a page reads the file, writing one copies
    that page into the process's memory, and the file never changes. The map
    outlives the archive as long as an array views it.
    """
    from ..dtypes import DTYPES
    from ..tensors import numpy_view_dtype

    cache: dict = {}

    def resolve(group: str, name: str) -> np.ndarray:
        info = ar.tensor_info(group).get(name)
        if info is None:
            raise RlarchiveError("TENSOR_NOT_FOUND", f"no tensor {name!r} in group {group!r}")
        if DTYPES[info.dtype].numpy is None:
            raise _unsupported(f"{group}/{name} is {info.dtype}, which NumPy cannot hold")
        count = info.nbytes // DTYPES[info.dtype].size
        if count == 0:
            return np.zeros(info.shape, dtype=numpy_view_dtype(info.dtype))
        if "map" not in cache:
            cache["map"] = mmap.mmap(ar._src.fileno(), 0, access=mmap.ACCESS_COPY)
        return np.frombuffer(cache["map"], dtype=numpy_view_dtype(info.dtype), count=count, offset=info.offset).reshape(info.shape)

    return resolve


def read_value(ar: Any) -> Optional[dict]:
    """The open archive's buffer value decoded, or None without one.

    Referenced arrays are writable copy-on-write views of the file
    (:func:`copy_on_write_resolver`) when the archive is a local file, else copies.
    """
    from .. import extensions
    from ..values import Decoder

    raw = extensions.read_document(ar, EXTENSION)
    if raw is None:
        return None
    resolve = copy_on_write_resolver(ar) if ar._src.mappable else (lambda g, n: np.array(ar.tensor(g, n)))
    return Decoder(resolve, "neutral").decode(raw)


def _array_attrs(value: Mapping[str, Any]) -> dict:
    """Buffer attribute -> array of the value (Dict observations as their maps)."""
    out = {k: value[k] for k in ("observations", "actions") + _ROW_KEYS}
    if value["next_observations"] is not None:
        out["next_observations"] = value["next_observations"]
    her = value.get("her")
    if her is not None:
        out["ep_start"], out["ep_length"], out["_current_ep_start"] = her["ep_start"], her["ep_length"], her["current_ep_start"]
    return out


def _same_layout(mine: Any, theirs: Any) -> bool:
    if isinstance(mine, dict) or isinstance(theirs, dict):
        return isinstance(mine, dict) and isinstance(theirs, dict) and set(mine) == set(theirs) and all(_same_layout(mine[k], theirs[k]) for k in mine)
    return isinstance(theirs, np.ndarray) and isinstance(mine, np.ndarray) and mine.shape == theirs.shape and mine.dtype == theirs.dtype


def restore(model: Any, value: Mapping[str, Any], *, truncate_last_trajectory: bool = True) -> str:
    """Put the buffer ``value`` (from :func:`read_value`) into ``model``; returns what was done, in one sentence.

    The model's own buffer (built by the model from the archive's data) is
    kept and its arrays replaced by those of the value, which must have the
    same class, the same number of environments, rows, shapes and dtypes;
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
        mine = _class_name(buf)
    except RlarchiveError as e:
        return f"replay buffer not restored: {e.message}"
    if mine != value["class"]:
        return f"replay buffer not restored: the archive holds a {value['class']}, the model uses a {mine}"
    for k in ("n_envs", "buffer_size", "optimize_memory_usage"):
        if getattr(buf, k) != value[k]:
            return f"replay buffer not restored: its {k} is {value[k]}, the model's is {getattr(buf, k)}"
    arrays = _array_attrs(value)
    for attr, arr in arrays.items():
        if not _same_layout(getattr(buf, attr, None), arr):
            return f"replay buffer not restored: its {attr.lstrip('_')} differ in shape or dtype from the model's buffer"
    her = value.get("her")
    if her is not None and bool(buf.copy_info_dict) != bool(her["copy_info_dict"]):
        return f"replay buffer not restored: its copy_info_dict is {bool(her['copy_info_dict'])}, the model's is {bool(buf.copy_info_dict)}"
    for attr, arr in arrays.items():
        setattr(buf, attr, arr)
    if her is not None and her["copy_info_dict"]:
        buf.infos = _infos_array(her["infos"])
    buf.pos, buf.full = int(value["pos"]), bool(value["full"])
    buf.handle_timeout_termination = bool(value["handle_timeout_termination"])
    if her is not None:
        from stable_baselines3.her.goal_selection_strategy import KEY_TO_GOAL_STRATEGY

        buf.n_sampled_goal = int(her["n_sampled_goal"])
        buf.her_ratio = 1 - (1.0 / (buf.n_sampled_goal + 1))
        buf.goal_selection_strategy = KEY_TO_GOAL_STRATEGY[her["goal_selection_strategy"]]
        if truncate_last_trajectory and buf.env is not None:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                buf.truncate_last_trajectory()
    if value.get("n_step") is not None:
        buf.n_steps, buf.gamma = int(value["n_step"]["n_steps"]), float(value["n_step"]["gamma"])
    return f"replay buffer restored: {describe(value)}"


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
    obs_space, act_space = (spaces.to_gymnasium(value[k]) if not spaces.is_gymnasium_space(value[k]) else value[k] for k in ("observation_space", "action_space"))
    state: dict = {
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
            infos = _infos_array(her["infos"])
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


def write_pickle(value: Mapping[str, Any], path: Union[str, "os.PathLike[str]"]) -> None:
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
    for attr in ("observations", "next_observations", "actions", "rewards", "dones", "timeouts", "ep_start", "ep_length", "_current_ep_start"):
        if getattr(buf, attr, None) is not None:
            setattr(buf, attr, writable(getattr(buf, attr)))
    with atomic_file(path) as f:
        pickle.dump(buf, f, protocol=pickle.HIGHEST_PROTOCOL)


# ---------------------------------------------------------------- SB3 pickle -> value (no code runs)


class _BoundedFile:
    """A file read by the unpickler: no read may ask for more than the bytes left (so a declared size allocates nothing)."""

    def __init__(self, f: Any, size: int):
        self._f = f
        self.left = size

    def _take(self, n: int) -> None:
        from .unpickle import NotNeutral

        if n < 0 or n > self.left:
            raise NotNeutral("the pickle is truncated (it declares more bytes than the file holds)")
        self.left -= n

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self.left
        self._take(n)
        return self._f.read(n)

    def readinto(self, b: Any) -> int:
        self._take(len(b))
        return self._f.readinto(b)

    def readline(self) -> bytes:
        line = self._f.readline(min(self.left, 1 << 20))
        self.left -= len(line)
        return line


def _unpickler_class() -> type:
    """The restricted unpickler, plus what a buffer pickle needs: object arrays (HER's infos) and byte arrays read in place."""
    from . import unpickle as up

    class _ObjectArray(up._Array, up._Buildable):
        """Stand-in for an object array (``_reconstruct`` + BUILD with a list): the shape and the items, as stand-ins."""

        __slots__ = ("_ctx", "shape", "items")
        _ctx: Any
        shape: Any
        items: Any

        def __init__(self, ctx: Any):
            super().__init__(None)
            up._set(self, "_ctx", ctx)
            up._set(self, "shape", None)
            up._set(self, "items", None)

        def __setstate__(self, state: Any) -> None:
            if not isinstance(state, tuple) or len(state) not in (4, 5):
                raise up.NotNeutral("malformed numpy array state")
            shape, dtype, raw = state[-4], state[-3], state[-1]
            if isinstance(dtype, up._DType) and dtype.dtype.hasobject:
                if not isinstance(raw, list) or not isinstance(shape, (tuple, list)) or math.prod(up._check_shape(tuple(shape))) != len(raw):
                    raise up.NotNeutral("malformed object array")
                up._set(self, "shape", tuple(shape))
                up._set(self, "items", raw)
                return
            inner = up._Reconstructed(self._ctx)
            inner.__setstate__(state)
            up._set(self, "array", inner.array)

    def reconstruct(ctx: Any, subtype: Any, shape: Any, typecode: Any) -> Any:
        if not (isinstance(subtype, up.GlobalName) and subtype == up._NDARRAY):
            raise up.NotNeutral("only plain numpy.ndarray objects are supported")
        return _ObjectArray(ctx)

    def frombuffer(ctx: Any, buf: Any, dtype: Any, shape: Any, order: Any = "C", axis_order: Any = None) -> Any:
        """Protocol-5 arrays: a C-ordered array of native byte order views its byte array (no second copy)."""
        dt = up._np_dtype(dtype)
        if isinstance(buf, bytearray) and axis_order is None and order == "C" and dt.isnative and not dt.hasobject and dt.itemsize:
            shp = up._check_shape(tuple(shape)) if isinstance(shape, (tuple, list)) else None
            if shp is None or math.prod(shp) * dt.itemsize != len(buf):
                raise up.NotNeutral("numpy array data does not match its shape")
            return up._Array(np.frombuffer(buf, dtype=dt).reshape(shp))
        return up._frombuffer(ctx, buf, dtype, shape, order, axis_order)

    extra = {}
    for core in ("numpy.core", "numpy._core"):
        extra[(core + ".multiarray", "_reconstruct")] = up._Ctor(core + ".multiarray", "_reconstruct", reconstruct)
        extra[(core + ".numeric", "_frombuffer")] = up._Ctor(core + ".numeric", "_frombuffer", frombuffer)

    class BufferUnpickler(up.RestrictedUnpickler):
        def find_class(self, module: str, name: str) -> Any:
            found = extra.get((module, name)) if type(module) is str and type(name) is str else None
            if found is not None:
                self.globals_seen.append((module, name))
                return found.bind(self._ctx)
            return super().find_class(module, name)

        def _load_bytearray8(self) -> None:
            (size,) = struct.unpack("<Q", self.read(8))
            self.budget.charge(size, "a byte array of the pickle")
            frame = self._unframer.current_frame
            in_frame = frame is not None and frame.tell() < len(frame.getbuffer())
            if size > (len(frame.getbuffer()) - frame.tell() if in_frame else self._bounded.left):
                raise up.NotNeutral("the pickle is truncated (it declares more bytes than it holds)")
            data = bytearray(size)
            if in_frame:
                frame.readinto(data)
            else:  # a large array, outside any frame: read straight into its memory
                self._unframer.current_frame = None
                if self._bounded.readinto(data) != size:
                    raise up.NotNeutral("the pickle is truncated")
            self.append(data)

        def _load_binbytes8(self) -> None:
            (size,) = struct.unpack("<Q", self.read(8))
            self.budget.charge(size, "a byte string of the pickle")
            data = self.read(size)
            if len(data) != size:
                raise up.NotNeutral("the pickle is truncated")
            self.append(data)

    BufferUnpickler.ObjectArray = _ObjectArray  # type: ignore[attr-defined]  # what HER's infos arrive as
    table = dict(up.RestrictedUnpickler.dispatch)
    table[pickle.BYTEARRAY8[0]] = up._metered(BufferUnpickler._load_bytearray8)
    table[pickle.BINBYTES8[0]] = up._metered(BufferUnpickler._load_binbytes8)
    BufferUnpickler.dispatch = table
    return BufferUnpickler


_UNPICKLER: Optional[type] = None


def _fail(msg: str) -> RlarchiveError:
    return RlarchiveError("IMPORT_INVALID", f"not a Stable-Baselines3 replay buffer file: {msg}")


def read_pickle(path: Union[str, "os.PathLike[str]"], *, budget: Union[int, ImportBudget, None] = None) -> dict:
    """The extension's value for the file ``save_replay_buffer`` wrote, read with the restricted unpickler.

    Nothing in the file is imported or called: the buffer arrives as a
    recorded object with its state, which must be one of :data:`SB3_CLASSES`
    holding what SB3 keeps. Every byte the unpickler builds is charged to
    ``budget`` first (default: :func:`~rlarchive.interop.budget.budget_for`
    the file, which grows with its size); each array is held once (a byte
    array read in place and viewed).

    Raises:
        RlarchiveError: IMPORT_INVALID for a file that is not such a buffer
            (truncated, inconsistent, a class or a global off the list),
            LIMIT_EXCEEDED past the budget or when HER's info dicts would
            not fit in the member (``MAX_JSON_BYTES``), VALUE_UNSUPPORTED
            for an info dict the value model cannot hold (naming its row,
            environment and key), IO_ERROR when it cannot be read.
    """
    global _UNPICKLER
    from . import unpickle as up

    budget = budget_for(path, budget)
    if _UNPICKLER is None:
        _UNPICKLER = _unpickler_class()
    try:
        f = open(os.fspath(path), "rb")
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot read {os.fspath(path)}: {e.strerror or e}") from None
    with f:
        bounded = _BoundedFile(f, os.fstat(f.fileno()).st_size)
        unpickler = _UNPICKLER(bounded, budget=budget)
        unpickler._bounded = bounded
        try:
            root = unpickler.load()
        except RlarchiveError:
            raise
        except Exception as e:
            err = up._contain(e, "the pickle cannot be read safely")
            if isinstance(err, RlarchiveError):
                raise err from None
            raise _fail(getattr(err, "reason", str(err))) from None
        if bounded.left:
            raise _fail(f"{bounded.left} bytes follow the pickle")
    value = _value_of(root, budget)
    try:
        _encoded(value, {})
    except RlarchiveError as e:  # what the extension's rules refuse (a dtype the space does not store, ...)
        raise _fail(e.message) from None
    return value


def _encoded(value: Mapping[str, Any], tensors: dict) -> Any:
    """``value`` as the archive's JSON would hold it, checked by the extension's rules (arrays referenced, not copied)."""
    from .. import replay_buffer as ext
    from ..limits import INLINE_ARRAY_BYTES
    from ..values import Checker, Encoder

    encoded = Encoder(ext.GROUP, tensors, INLINE_ARRAY_BYTES).encode(value, "/" + ext.KEY)
    Checker().check(encoded, "/" + ext.KEY)
    ext.check(encoded)
    return encoded


def check_spaces(value: Mapping[str, Any], data: Mapping[str, Any]) -> None:
    """Refuse a buffer whose spaces differ from the model's ``data`` (spec RLA_replay_buffer §4 rule 8), with IMPORT_INVALID."""
    from ..values import Encoder

    for key in ("observation_space", "action_space"):
        if key not in data:
            continue
        mine, theirs = (Encoder("", {}, 1 << 62).encode(v, "/" + key) for v in (value[key], data[key]))
        if mine != theirs:
            raise RlarchiveError("IMPORT_INVALID", f"the replay buffer's {key} differs from the model's")


def _value_of(root: Any, budget: ImportBudget) -> dict:
    from . import unpickle as up

    name = None
    if isinstance(root, up.Unknown) and isinstance(root.func, up.GlobalName) and root.new:
        name = next((n for n, ref in SB3_CLASSES.items() if ref == (root.func.module, root.func.qualname)), None)
    if name is None:
        what = root.func._label() if isinstance(root, up.Unknown) else up._describe(root)
        raise _fail(f"it holds {what}, not one of {', '.join(SB3_CLASSES)}")
    if not (root.has_state and type(root.state) is dict):
        raise _fail(f"the {name} has no state")
    st = root.state

    def get(key: str) -> Any:
        if key not in st:
            raise _fail(f"the {name} has no {key}")
        return st[key]

    def integer(key: str, minimum: int = 0) -> int:
        v = get(key)
        if isinstance(v, up._Scalar):
            v = v.value.item()
        if type(v) is not int or v < minimum:
            raise _fail(f"{key} is not an integer >= {minimum}")
        return v

    def flag(key: str) -> bool:
        v = get(key)
        if type(v) is not bool:
            raise _fail(f"{key} is not a boolean")
        return v

    def space(key: str) -> Any:
        try:
            return up.to_neutral(get(key), budget=budget)
        except Exception as e:
            err = up._contain(e, "the space cannot be read")
            if isinstance(err, RlarchiveError):
                raise err from None
            raise _fail(f"{key}: {getattr(err, 'reason', err)}") from None

    n_envs, size = integer("n_envs", 1), integer("buffer_size", 1)
    value: dict = {
        "class": name,
        "buffer_size": size,
        "n_envs": n_envs,
        "pos": integer("pos"),
        "full": flag("full"),
        "optimize_memory_usage": flag("optimize_memory_usage"),
        "handle_timeout_termination": flag("handle_timeout_termination"),
        "observation_space": space("observation_space"),
        "action_space": space("action_space"),
    }
    if value["pos"] >= size:
        raise _fail(f"pos {value['pos']} is not below buffer_size {size}")

    def array(x: Any, key: str, dtype: Optional[str] = None, shape: Optional[tuple] = None) -> np.ndarray:
        if not (isinstance(x, up._Array) and isinstance(x.array, np.ndarray)):
            raise _fail(f"{key} is not an array")
        a = x.array
        if a.shape[:2] != (size, n_envs) or (shape is not None and a.shape != shape):
            raise _fail(f"{key} has shape {list(a.shape)}, not [{size}, {n_envs}, ...] as buffer_size and n_envs say")
        if dtype is not None and a.dtype != np.dtype(dtype):
            raise _fail(f"{key} is {a.dtype}, not {dtype}")
        return a

    def observations(key: str) -> Any:
        x = get(key)
        if isinstance(x, dict):
            if not all(type(k) is str for k in x):
                raise _fail(f"{key} has a key that is not a string")
            return {k: array(v, f"{key}/{k}") for k, v in x.items()}
        return array(x, key)

    value["observations"] = observations("observations")
    omu = value["optimize_memory_usage"]
    value["next_observations"] = None if omu and "next_observations" not in st else observations("next_observations")
    if omu and value["next_observations"] is not None:
        raise _fail("next_observations is present though optimize_memory_usage is set")
    value["actions"] = array(get("actions"), "actions")
    if value["actions"].ndim != 3:
        raise _fail("actions is not [buffer_size, n_envs, action_dim]")
    for key in _ROW_KEYS:
        value[key] = array(get(key), key, "float32", (size, n_envs))
    value["her"] = value["n_step"] = None
    if name == "HerReplayBuffer":
        copy_info = flag("copy_info_dict")
        strategy = get("goal_selection_strategy")
        code = strategy.args[0] if isinstance(strategy, up.Unknown) and len(strategy.args) == 1 and strategy.func == up.GlobalName(
            "stable_baselines3.her.goal_selection_strategy", "GoalSelectionStrategy"
        ) else None
        if type(code) is not int or not 0 <= code < len(STRATEGIES):
            raise _fail("goal_selection_strategy is not a GoalSelectionStrategy")
        current = get("_current_ep_start")
        if not (isinstance(current, up._Array) and isinstance(current.array, np.ndarray) and current.array.shape == (n_envs,) and current.array.dtype == np.int64):
            raise _fail("_current_ep_start is not an int64 array of n_envs")
        value["her"] = {
            "n_sampled_goal": integer("n_sampled_goal"),
            "goal_selection_strategy": STRATEGIES[code],
            "copy_info_dict": copy_info,
            "ep_start": array(get("ep_start"), "ep_start", "int64", (size, n_envs)),
            "ep_length": array(get("ep_length"), "ep_length", "int64", (size, n_envs)),
            "current_ep_start": current.array,
            "infos": None,
        }
        if copy_info:
            value["her"]["infos"] = _pickled_infos(get("infos"), value, budget)
    if name == "NStepReplayBuffer":
        gamma = get("gamma")
        if isinstance(gamma, up._Scalar):
            gamma = gamma.value.item()
        if type(gamma) not in (int, float) or not math.isfinite(gamma):
            raise _fail("gamma is not a number")
        value["n_step"] = {"n_steps": integer("n_steps", 1), "gamma": float(gamma)}
    return value


def _pickled_infos(x: Any, value: Mapping[str, Any], budget: ImportBudget) -> list:
    """HER's info dicts from the pickle's object array (stand-ins), converted to values one by one (:func:`infos_value`)."""
    from . import unpickle as up

    size, n_envs = int(value["buffer_size"]), int(value["n_envs"])
    stand_in = getattr(_UNPICKLER, "ObjectArray", None)  # set by read_pickle
    if not (stand_in is not None and isinstance(x, stand_in) and x.items is not None and x.shape == (size, n_envs)):
        raise _fail(f"infos is not an object array of [buffer_size, n_envs] = [{size}, {n_envs}]")
    items = x.items

    def neutral(item: Any) -> Any:
        try:
            return up.to_neutral(item, budget=budget)
        except up.NotNeutral as e:
            raise _unsupported(e.reason) from None

    def convert(item: Any, row: int, env: int) -> Any:
        try:
            return neutral(item)
        except RlarchiveError as e:
            if e.code != "VALUE_UNSUPPORTED":
                raise
            key = None
            if isinstance(item, dict):  # name the first key whose value has no neutral form
                for k, v in item.items():
                    try:
                        neutral(v)
                    except RlarchiveError:
                        key = k
                        break
            raise _info_error(row, env, item, e.message, key=key) from None

    return infos_value((items[i * n_envs : (i + 1) * n_envs] for i in range(size)), value, convert)


def describe(value: Mapping[str, Any]) -> str:
    """What a buffer value holds, in a few words (for reports)."""
    rows = value["buffer_size"] if value["full"] else value["pos"]
    her = value.get("her")
    infos = ", with the info dicts" if her is not None and her["copy_info_dict"] else ""
    return f"{value['class']}, {rows} of {value['buffer_size']} rows filled in each of {value['n_envs']} environments ({transitions(value)} transitions{infos})"
