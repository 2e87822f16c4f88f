"""The file SB3's ``save_replay_buffer`` writes, read as the value of ``RLA_replay_buffer`` without running it.

:func:`read_pickle` reads the pickle with the restricted unpickler
(:mod:`rlarchive.unpickle`) and two additions a buffer needs: HER's
info dicts arrive as an object array (:class:`ObjectArray`, its items kept
as stand-ins and converted one by one), and the large byte arrays of
protocol 5 are read straight into their memory and viewed (each array held
once). Nothing in the file is imported or called: the buffer is a recorded
object whose state must be one of
:data:`~rlarchive.sb3.replay_buffer_value.SB3_CLASSES` holding what SB3
keeps.
"""

from __future__ import annotations

import math
import os
import pickle
import struct
from collections.abc import Mapping
from contextlib import nullcontext
from typing import Any, Protocol

import numpy as np

from ..errors import RlarchiveError
from ..extensions.replay_buffer import STRATEGIES
from ..unpickle.budget import ImportBudget, Source, budget_for, source_name
from ..unpickle.machine import RestrictedUnpickler, contain, metered
from ..unpickle.neutral import to_neutral
from ..unpickle.numpy_values import NDARRAY, Array, DType, Reconstructed, Scalar, check_shape, frombuffer, np_dtype
from ..unpickle.standins import Buildable, Context, Ctor, GlobalName, NotNeutral, Unknown, describe, set_slot
from .replay_buffer_value import ROW_KEYS, SB3_CLASSES, info_error, infos_value, unsupported

__all__ = ["read_pickle", "ObjectArray", "BufferUnpickler"]

_STRATEGY = GlobalName("stable_baselines3.her.goal_selection_strategy", "GoalSelectionStrategy")


class _File(Protocol):
    """The buffer file, open for reading in binary."""

    def read(self, n: int, /) -> bytes: ...

    def readinto(self, b: bytearray, /) -> int: ...

    def readline(self, limit: int, /) -> bytes: ...


class _BoundedFile:
    """A file read by the unpickler: no read may ask for more than the bytes left (so a declared size allocates nothing)."""

    def __init__(self, f: _File, size: int):
        self._f = f
        self.left = size

    def _take(self, n: int) -> None:
        if n < 0 or n > self.left:
            raise NotNeutral("the pickle is truncated (it declares more bytes than the file holds)")
        self.left -= n

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self.left
        self._take(n)
        return self._f.read(n)

    def readinto(self, b: bytearray) -> int:
        self._take(len(b))
        return self._f.readinto(b)

    def readline(self) -> bytes:
        line = self._f.readline(min(self.left, 1 << 20))
        self.left -= len(line)
        return line


# ---------------------------------------------------------------- the unpickler of a buffer file


class ObjectArray(Array, Buildable):
    """Stand-in for an object array (``_reconstruct`` + BUILD with a list): the shape and the items, as stand-ins."""

    __slots__ = ("_ctx", "shape", "items")
    _ctx: Context
    shape: tuple[object, ...] | None
    items: list[object] | None

    def __init__(self, ctx: Context):
        super().__init__(None)
        set_slot(self, "_ctx", ctx)
        set_slot(self, "shape", None)
        set_slot(self, "items", None)

    def __setstate__(self, state: object) -> None:
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise NotNeutral("malformed numpy array state")
        shape, dtype, raw = state[-4], state[-3], state[-1]
        if isinstance(dtype, DType) and dtype.dtype.hasobject:
            if (
                not isinstance(raw, list)
                or not isinstance(shape, (tuple, list))
                or math.prod(check_shape(tuple(shape))) != len(raw)
            ):
                raise NotNeutral("malformed object array")
            set_slot(self, "shape", tuple(shape))
            set_slot(self, "items", raw)
            return
        inner = Reconstructed(self._ctx)
        inner.__setstate__(state)
        set_slot(self, "array", inner.array)


def _reconstruct(ctx: Context, subtype: object, shape: object, typecode: object) -> ObjectArray:
    if not (isinstance(subtype, GlobalName) and subtype == NDARRAY):
        raise NotNeutral("only plain numpy.ndarray objects are supported")
    return ObjectArray(ctx)


def _frombuffer(
    ctx: Context, buf: object, dtype: object, shape: object, order: object = "C", axis_order: object = None
) -> Array:
    """Protocol-5 arrays: a C-ordered array of native byte order views its byte array (no second copy)."""
    dt = np_dtype(dtype)
    if (
        isinstance(buf, bytearray)
        and axis_order is None
        and order == "C"
        and dt.isnative
        and not dt.hasobject
        and dt.itemsize
    ):
        shp = check_shape(tuple(shape)) if isinstance(shape, (tuple, list)) else None
        if shp is None or math.prod(shp) * dt.itemsize != len(buf):
            raise NotNeutral("numpy array data does not match its shape")
        return Array(np.frombuffer(buf, dtype=dt).reshape(shp))
    return frombuffer(ctx, buf, dtype, shape, order, axis_order)


_EXTRA: Mapping[tuple[str, str], Ctor] = {
    key: value
    for core in ("numpy.core", "numpy._core")
    for key, value in (
        ((core + ".multiarray", "_reconstruct"), Ctor(core + ".multiarray", "_reconstruct", _reconstruct)),
        ((core + ".numeric", "_frombuffer"), Ctor(core + ".numeric", "_frombuffer", _frombuffer)),
    )
}


class BufferUnpickler(RestrictedUnpickler):
    """The restricted unpickler, plus what a buffer file needs: object arrays (HER's infos) and byte arrays read in place.

    ``bounded`` is the file being read (its bytes left bound every read).
    """

    _unframer: Any  # pickle._Unpickler's reader of frames (private, not in its type stub)

    def __init__(self, bounded: _BoundedFile, *, budget: ImportBudget | None = None):
        super().__init__(bounded, budget=budget)
        self._bounded = bounded

    def find_class(self, module: str, name: str) -> Any:
        found = _EXTRA.get((module, name)) if type(module) is str and type(name) is str else None
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
            raise NotNeutral("the pickle is truncated (it declares more bytes than it holds)")
        data = bytearray(size)
        if in_frame:
            frame.readinto(data)
        else:  # a large array, outside any frame: read straight into its memory
            self._unframer.current_frame = None
            if self._bounded.readinto(data) != size:
                raise NotNeutral("the pickle is truncated")
        self.append(data)

    def _load_binbytes8(self) -> None:
        (size,) = struct.unpack("<Q", self.read(8))
        self.budget.charge(size, "a byte string of the pickle")
        data = self.read(size)
        if len(data) != size:
            raise NotNeutral("the pickle is truncated")
        self.append(data)


BufferUnpickler.dispatch = {
    **RestrictedUnpickler.dispatch,
    pickle.BYTEARRAY8[0]: metered(BufferUnpickler._load_bytearray8),
    pickle.BINBYTES8[0]: metered(BufferUnpickler._load_binbytes8),
}


# ---------------------------------------------------------------- the file -> the value


def _fail(msg: str) -> RlarchiveError:
    return RlarchiveError("IMPORT_INVALID", f"not a Stable-Baselines3 replay buffer file: {msg}")


def read_pickle(path: Source, *, budget: int | ImportBudget | None = None) -> dict[str, Any]:
    """The extension's value for the file ``save_replay_buffer`` wrote, read with the restricted unpickler.

    Nothing in the file is imported or called: the buffer arrives as a
    recorded object with its state, which must be one of :data:`SB3_CLASSES`
    holding what SB3 keeps. Every byte the unpickler builds is charged to
    ``budget`` first (default: :func:`~rlarchive.unpickle.budget.budget_for`
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
    budget = budget_for(path, budget)
    try:
        opened: Any = open(os.fspath(path), "rb") if isinstance(path, (str, os.PathLike)) else nullcontext(path)
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot read {source_name(path)}: {e.strerror or e}") from None
    with opened as f:
        bounded = _BoundedFile(f, os.fstat(f.fileno()).st_size)
        unpickler = BufferUnpickler(bounded, budget=budget)
        try:
            root = unpickler.load()
        except RlarchiveError:
            raise
        except Exception as e:
            err = contain(e, "the pickle cannot be read safely")
            if isinstance(err, RlarchiveError):
                raise err from None
            raise _fail(getattr(err, "reason", str(err))) from None
        if bounded.left:
            raise _fail(f"{bounded.left} bytes follow the pickle")
    value = _value_of(root, budget)
    _check(value)
    return value


def _check(value: Mapping[str, Any]) -> None:
    """Refuse a value the extension's rules refuse (a dtype the space does not store, indices out of range, ...):
    the writer checks it as a reader would (:func:`rlarchive.writer.prepare`, nothing written; arrays referenced,
    not copied)."""
    from ..extensions.replay_buffer import EXTENSION
    from ..writer import prepare, refusal

    spaces = {k: value[k] for k in ("observation_space", "action_space")}
    try:
        prepare(spaces, extension_values={EXTENSION: value})
    except RlarchiveError as e:
        found = refusal(e)
        raise _fail(found.message + (f" (at {found.pointer})" if found is not e and found.pointer else "")) from None


class _State:
    """The recorded state of the buffer object: its members read as the value's fields, each checked."""

    def __init__(self, name: str, state: dict[object, object], budget: ImportBudget):
        self.name, self.st, self.budget = name, state, budget
        self.size = self.n_envs = 0

    def get(self, key: str) -> object:
        if key not in self.st:
            raise _fail(f"the {self.name} has no {key}")
        return self.st[key]

    def integer(self, key: str, minimum: int = 0) -> int:
        v = self.get(key)
        if isinstance(v, Scalar):
            v = v.value.item()
        if type(v) is not int or v < minimum:
            raise _fail(f"{key} is not an integer >= {minimum}")
        return v

    def flag(self, key: str) -> bool:
        v = self.get(key)
        if type(v) is not bool:
            raise _fail(f"{key} is not a boolean")
        return v

    def number(self, key: str) -> float:
        v = self.get(key)
        if isinstance(v, Scalar):
            v = v.value.item()
        if type(v) is not int and type(v) is not float or not math.isfinite(v):
            raise _fail(f"{key} is not a number")
        return float(v)

    def space(self, key: str) -> Any:
        try:
            return to_neutral(self.get(key), budget=self.budget)
        except Exception as e:
            err = contain(e, "the space cannot be read")
            if isinstance(err, RlarchiveError):
                raise err from None
            raise _fail(f"{key}: {getattr(err, 'reason', err)}") from None

    def array(self, x: object, key: str, dtype: str | None = None, shape: tuple[int, ...] | None = None) -> np.ndarray:
        if not (isinstance(x, Array) and isinstance(x.array, np.ndarray)):
            raise _fail(f"{key} is not an array")
        a = x.array
        if a.shape[:2] != (self.size, self.n_envs) or (shape is not None and a.shape != shape):
            raise _fail(
                f"{key} has shape {list(a.shape)}, not [{self.size}, {self.n_envs}, ...] as buffer_size and n_envs say"
            )
        if dtype is not None and a.dtype != np.dtype(dtype):
            raise _fail(f"{key} is {a.dtype}, not {dtype}")
        return a

    def rows(self, key: str, dtype: str) -> np.ndarray:
        """The member ``key``: an array of [buffer_size, n_envs] of ``dtype``."""
        return self.array(self.get(key), key, dtype, (self.size, self.n_envs))

    def observations(self, key: str) -> Any:
        x = self.get(key)
        if isinstance(x, dict):
            if not all(type(k) is str for k in x):
                raise _fail(f"{key} has a key that is not a string")
            return {k: self.array(v, f"{key}/{k}") for k, v in x.items()}
        return self.array(x, key)


#: The flag SB3 1.1 added to its replay buffers with their ``timeouts``; ``load_replay_buffer`` gives a buffer
#: without it the flag False and timeouts of zeros (the old behaviour: a timeout ended an episode as a failure).
_HANDLES_TIMEOUTS = "handle_timeout_termination"


def _state_of(root: object, budget: ImportBudget) -> _State:
    """The recorded buffer object's state, once its class is one of :data:`SB3_CLASSES`."""
    name = None
    if isinstance(root, Unknown) and isinstance(root.func, GlobalName) and root.new:
        name = next((n for n, ref in SB3_CLASSES.items() if ref == (root.func.module, root.func.qualname)), None)
    if name is None or not isinstance(root, Unknown):
        what = root.func.label() if isinstance(root, Unknown) else describe(root)
        raise _fail(f"it holds {what}, not one of {', '.join(SB3_CLASSES)}")
    if not (root.has_state and type(root.state) is dict):
        raise _fail(f"the {name} has no state")
    return _State(name, root.state, budget)


def _value_of(root: object, budget: ImportBudget) -> dict[str, Any]:
    """The extension's value for the recorded buffer object ``root``."""
    s = _state_of(root, budget)
    s.n_envs, s.size = s.integer("n_envs", 1), s.integer("buffer_size", 1)
    value: dict[str, Any] = {
        "class": s.name,
        "buffer_size": s.size,
        "n_envs": s.n_envs,
        "pos": s.integer("pos"),
        "full": s.flag("full"),
        "optimize_memory_usage": s.flag("optimize_memory_usage"),
        # a buffer of SB3 < 1.1 has neither the flag nor timeouts: as SB3's load_replay_buffer, False and zeros
        "handle_timeout_termination": s.flag("handle_timeout_termination") if _HANDLES_TIMEOUTS in s.st else False,
        "observation_space": s.space("observation_space"),
        "action_space": s.space("action_space"),
    }
    if value["pos"] >= s.size:
        raise _fail(f"pos {value['pos']} is not below buffer_size {s.size}")
    value["observations"] = s.observations("observations")
    omu = value["optimize_memory_usage"]
    value["next_observations"] = (
        None if omu and "next_observations" not in s.st else s.observations("next_observations")
    )
    if omu and value["next_observations"] is not None:
        raise _fail("next_observations is present though optimize_memory_usage is set")
    value["actions"] = s.array(s.get("actions"), "actions")
    if value["actions"].ndim != 3:
        raise _fail("actions is not [buffer_size, n_envs, action_dim]")
    for key in ROW_KEYS:
        if key == "timeouts" and _HANDLES_TIMEOUTS not in s.st:
            s.budget.charge(value["dones"].nbytes, "the timeouts of a buffer that has none (SB3 < 1.1)")
            value[key] = np.zeros_like(value["dones"])
            continue
        value[key] = s.rows(key, "float32")
    value["her"] = value["n_step"] = None
    if s.name == "HerReplayBuffer":
        value["her"] = her = _her_value(s)
        if her["copy_info_dict"]:  # counted against the member with the rest of the value in place
            her["infos"] = _pickled_infos(s.get("infos"), value, s.budget)
    if s.name == "NStepReplayBuffer":
        gamma = s.number("gamma")
        value["n_step"] = {"n_steps": s.integer("n_steps", 1), "gamma": gamma}
    return value


def _her_value(s: _State) -> dict[str, Any]:
    """The value's ``her`` member for a ``HerReplayBuffer``'s state, its ``infos`` still null."""
    copy_info = s.flag("copy_info_dict")
    strategy = s.get("goal_selection_strategy")
    code = (
        strategy.args[0]
        if isinstance(strategy, Unknown) and len(strategy.args) == 1 and strategy.func == _STRATEGY
        else None
    )
    if type(code) is not int or not 0 <= code < len(STRATEGIES):
        raise _fail("goal_selection_strategy is not a GoalSelectionStrategy")
    current = s.get("_current_ep_start")
    if not (
        isinstance(current, Array)
        and isinstance(current.array, np.ndarray)
        and current.array.shape == (s.n_envs,)
        and current.array.dtype == np.int64
    ):
        raise _fail("_current_ep_start is not an int64 array of n_envs")
    return {
        "n_sampled_goal": s.integer("n_sampled_goal"),
        "goal_selection_strategy": STRATEGIES[code],
        "copy_info_dict": copy_info,
        "ep_start": s.rows("ep_start", "int64"),
        "ep_length": s.rows("ep_length", "int64"),
        "current_ep_start": current.array,
        "infos": None,
    }


def _pickled_infos(x: object, value: Mapping[str, Any], budget: ImportBudget) -> list[list[Any]]:
    """HER's info dicts from the pickle's object array (stand-ins), converted to values one by one (:func:`infos_value`)."""
    size, n_envs = int(value["buffer_size"]), int(value["n_envs"])
    if not (isinstance(x, ObjectArray) and x.items is not None and x.shape == (size, n_envs)):
        raise _fail(f"infos is not an object array of [buffer_size, n_envs] = [{size}, {n_envs}]")
    items = x.items

    def neutral(item: Any) -> Any:
        try:
            return to_neutral(item, budget=budget)
        except NotNeutral as e:
            raise unsupported(e.reason) from None

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
            raise info_error(row, env, item, e.message, key=key) from None

    return infos_value((items[i * n_envs : (i + 1) * n_envs] for i in range(size)), value, convert)
