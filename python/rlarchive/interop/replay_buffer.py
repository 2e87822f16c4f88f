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

import math
import mmap
import os
import pickle
import struct
from typing import Any, Callable, Mapping, Optional, Union

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
    "copy_on_write_resolver",
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

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for another buffer class, or a
            ``HerReplayBuffer`` that copies info dicts (``copy_info_dict=True``).
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
        if buffer.copy_info_dict:
            raise _unsupported("a HerReplayBuffer with copy_info_dict=True keeps arbitrary info dicts, which are not stored")
        value["her"] = {
            "n_sampled_goal": int(buffer.n_sampled_goal),
            "goal_selection_strategy": STRATEGIES[int(buffer.goal_selection_strategy.value)],
            "copy_info_dict": False,
            "ep_start": buffer.ep_start,
            "ep_length": buffer.ep_length,
            "current_ep_start": buffer._current_ep_start,
            "infos": None,
        }
    if name == "NStepReplayBuffer":
        value["n_step"] = {"n_steps": int(buffer.n_steps), "gamma": float(buffer.gamma)}
    return value


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
    ``HerReplayBuffer`` the last episode is closed when
    ``truncate_last_trajectory`` (as SB3's ``load_replay_buffer`` does).
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
    for attr, arr in arrays.items():
        setattr(buf, attr, arr)
    buf.pos, buf.full = int(value["pos"]), bool(value["full"])
    buf.handle_timeout_termination = bool(value["handle_timeout_termination"])
    her = value.get("her")
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
        infos = np.empty((state["buffer_size"], state["n_envs"]), dtype=object)
        for idx in np.ndindex(infos.shape):
            infos[idx] = {}
        state.update(
            copy_info_dict=False,
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
            LIMIT_EXCEEDED past the budget, VALUE_UNSUPPORTED for
            ``copy_info_dict=True``, IO_ERROR when it cannot be read.
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
        if flag("copy_info_dict"):
            raise RlarchiveError("VALUE_UNSUPPORTED", "a HerReplayBuffer with copy_info_dict=True keeps arbitrary info dicts, which are not stored")
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
            "copy_info_dict": False,
            "ep_start": array(get("ep_start"), "ep_start", "int64", (size, n_envs)),
            "ep_length": array(get("ep_length"), "ep_length", "int64", (size, n_envs)),
            "current_ep_start": current.array,
            "infos": None,
        }
    if name == "NStepReplayBuffer":
        gamma = get("gamma")
        if isinstance(gamma, up._Scalar):
            gamma = gamma.value.item()
        if type(gamma) not in (int, float) or not math.isfinite(gamma):
            raise _fail("gamma is not a number")
        value["n_step"] = {"n_steps": integer("n_steps", 1), "gamma": float(gamma)}
    return value


def describe(value: Mapping[str, Any]) -> str:
    """What a buffer value holds, in a few words (for reports)."""
    rows = value["buffer_size"] if value["full"] else value["pos"]
    return f"{value['class']}, {rows} of {value['buffer_size']} rows filled in each of {value['n_envs']} environments"
