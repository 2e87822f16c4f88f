"""What the conversion makes of a recorded call (:class:`~rlarchive.unpickle.standins.Unknown`).

The restricted unpickler never calls a global off its allow-list: it records
the call. :func:`convert` then turns the record into a neutral value when it
is one of the few calls whose meaning is known without running anything
(Annex B.4):

- a Stable-Baselines3 enum member (``GoalSelectionStrategy(0)``) becomes the
  string Stable-Baselines3 itself accepts for it (``"future"``);
- a torch tensor (``torch._utils._rebuild_tensor_v2`` over a storage saved by
  ``torch.storage._load_from_bytes``) becomes a :class:`TorchArray`, a NumPy
  array that remembers it was a tensor; the storage bytes are parsed here
  (the legacy ``torch.save`` layout), torch is not needed;
- ``pickle.loads(b)`` of a byte string (how an opaque leaf is written back to
  Stable-Baselines3) becomes the opaque leaf ``b`` again.

Any other record becomes an opaque leaf: a pickle of exactly that call,
written again by :mod:`rlarchive.unpickle.pickler`, with the record's global as
its type. A record that holds something the pickler cannot write (a function
pickled by value, a space) makes the whole value opaque instead.
"""

from __future__ import annotations

import io
import math
import pickle
import struct
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import numpy as np

from ..values import Opaque
from . import pickler
from .budget import ImportBudget
from .machine import RestrictedUnpickler, contain, metered, pickled_type_name
from .numpy_values import Array, DType, Scalar, check_shape
from .standins import GlobalName, NotNeutral, Unknown

__all__ = ["TorchArray", "ENUMS", "convert", "emit"]


class TorchArray(np.ndarray):
    """A NumPy array that was a torch tensor in the pickle (the bridge gives a tensor back)."""


#: (module, class) of a Stable-Baselines3 enum -> {member value: the string SB3 accepts for it}.
ENUMS: dict[tuple[str, str], dict[int, str]] = {
    ("stable_baselines3.her.goal_selection_strategy", "GoalSelectionStrategy"): {0: "future", 1: "final", 2: "episode"},
}

_PICKLE_LOADS = {("pickle", "loads"), ("_pickle", "loads")}
_REBUILD_TENSOR = ("torch._utils", "_rebuild_tensor_v2")
_LOAD_FROM_BYTES = ("torch.storage", "_load_from_bytes")
_TORCH_MAGIC = 0x1950A86A20F9469CFC6C
_STORAGE_DTYPES = {
    "DoubleStorage": "<f8",
    "FloatStorage": "<f4",
    "HalfStorage": "<f2",
    "LongStorage": "<i8",
    "IntStorage": "<i4",
    "ShortStorage": "<i2",
    "CharStorage": "i1",
    "ByteStorage": "u1",
    "BoolStorage": "?",
}
_MAX_NESTED_PICKLES = 4
_MAX_EMIT_DEPTH = 200


def _name(u: Unknown) -> tuple[str, str]:
    return (u.func.module, u.func.qualname)


def convert(u: Unknown, charge: Callable[[int, str], None], nested: int, decode: Callable[[bytes], object]) -> object:
    """The neutral value for the record ``u``: a known call's value, else an opaque leaf.

    ``charge(nbytes, what)`` is called before anything is allocated;
    ``decode(data)`` converts a nested pickle with the same budget; ``nested``
    counts the nested pickles already open.
    """
    name = _name(u)
    plain = not u.new and not u.kwargs and not u.has_state
    if name in ENUMS and plain and len(u.args) == 1 and type(u.args[0]) is int and u.args[0] in ENUMS[name]:
        return ENUMS[name][u.args[0]]
    if name in _PICKLE_LOADS and plain and len(u.args) == 1 and type(u.args[0]) is bytes:
        return _nested(u.args[0], nested, decode)
    if name == _REBUILD_TENSOR and plain:
        try:
            return _tensor(u, charge)
        except NotNeutral:
            pass  # kept as an opaque leaf below
    return opaque_leaf(u, charge, f"no neutral form for an object made by {u.func.label()}")


def opaque_leaf(u: Unknown, charge: Callable[[int, str], None], reason: str) -> Opaque:
    """The record ``u`` as an opaque value: a pickle of exactly that call."""
    data = emit(u, charge)
    charge(len(data), "an opaque value")
    return Opaque(data, f"{u.func.module}.{u.func.qualname}", reason)


def _nested(data: bytes, nested: int, decode: Callable[[bytes], object]) -> object:
    if nested >= _MAX_NESTED_PICKLES:
        raise NotNeutral("pickles nest too deeply")
    try:
        return decode(data)
    except NotNeutral as e:
        return Opaque(data, pickled_type_name(data), e.reason)


# -- writing a record again -------------------------------------------------------


def emit(u: Unknown, charge: Callable[[int, str], None]) -> bytes:
    """A pickle that makes what the record ``u`` describes (its arguments written as recorded)."""
    memo: dict[int, Any] = {}
    count = [0]

    def walk(x: object, depth: int) -> Any:  # what the pickler writes: a graph of Names, Calls, arrays, ...
        if depth > _MAX_EMIT_DEPTH:
            raise NotNeutral("the value nests too deeply")
        count[0] += 1
        if count[0] % 1024 == 0:
            charge(64 * 1024, "an opaque value's parts")
        if x is None or type(x) in (bool, int, float, str, bytes):
            return x
        key = id(x)
        if key in memo:
            return memo[key]
        if type(x) is GlobalName:
            out: Any = pickler.Name(x.module, x.qualname)
        elif isinstance(x, Unknown):
            out = pickler.Call(
                walk(x.func, depth + 1),
                tuple(walk(a, depth + 1) for a in x.args),
                {k: walk(v, depth + 1) for k, v in x.kwargs.items()} if x.kwargs else None,
                walk(x.state, depth + 1) if x.has_state else None,
                x.has_state,
                x.new,
            )
        elif isinstance(x, Array):
            if x.array is None:
                raise NotNeutral("an array without data")
            out = x.array
        elif isinstance(x, Scalar):
            out = x.value
        elif isinstance(x, DType):
            out = x.dtype
        elif type(x) is list:
            out = memo[key] = []
            out.extend(walk(v, depth + 1) for v in x)
        elif type(x) is dict:
            out = memo[key] = {}
            for k, v in x.items():
                out[walk(k, depth + 1)] = walk(v, depth + 1)
        elif type(x) is tuple:
            out = tuple(walk(v, depth + 1) for v in x)
        else:
            label = x.label() if hasattr(x, "label") else type(x).__name__
            raise NotNeutral(f"{label} inside an object made by {u.func.label()} cannot be written again")
        memo[key] = out
        return out

    graph = walk(u, 0)
    try:
        return pickler.dumps(graph)
    except (pickle.PicklingError, RecursionError, ValueError, TypeError) as e:
        raise NotNeutral(f"the object made by {u.func.label()} cannot be written again: {e}") from None


# -- torch tensors ------------------------------------------------------------------


def _tensor(u: Unknown, charge: Callable[[int, str], None]) -> TorchArray:
    """``_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata])`` as an array."""
    if not 6 <= len(u.args) <= 7:
        raise NotNeutral("malformed tensor")
    storage, offset, size, stride = u.args[:4]
    if not (
        isinstance(storage, Unknown)
        and _name(storage) == _LOAD_FROM_BYTES
        and len(storage.args) == 1
        and type(storage.args[0]) is bytes
    ):
        raise NotNeutral("a tensor whose storage is not saved as bytes")
    if u.args[5] not in ({}, None) or (len(u.args) == 7 and u.args[6] not in ({}, None)):
        raise NotNeutral("a tensor with hooks or metadata")
    data = _storage(storage.args[0], charge)
    if (
        type(offset) is not int
        or not isinstance(size, tuple)
        or not isinstance(stride, tuple)
        or len(size) != len(stride)
    ):
        raise NotNeutral("malformed tensor")
    shape = check_shape(size)
    if offset < 0 or not all(type(s) is int and s >= 0 for s in stride):
        raise NotNeutral("malformed tensor strides")
    if math.prod(shape) and offset + sum((n - 1) * s for n, s in zip(shape, stride)) >= data.size:
        raise NotNeutral("a tensor reaches beyond its storage")
    if not math.prod(shape) and offset > data.size:
        raise NotNeutral("a tensor reaches beyond its storage")
    charge(math.prod(shape) * data.itemsize, "a tensor")
    view = np.lib.stride_tricks.as_strided(
        data[offset:], shape=shape, strides=tuple(s * data.itemsize for s in stride), writeable=False
    )
    return np.ascontiguousarray(view).view(TorchArray)


class _StorageUnpickler(RestrictedUnpickler):
    """Reads the pickles of a legacy ``torch.save`` file: a storage is a persistent id naming its type and size."""

    def persistent_load(self, pid: object) -> tuple[str, np.dtype, str, int]:
        # ("storage", type, key, location, numel[, view metadata: None])
        if not (
            type(pid) is tuple
            and len(pid) in (5, 6)
            and pid[0] == "storage"
            and type(pid[1]) is GlobalName
            and pid[5:] in ((), (None,))
        ):
            raise NotNeutral("malformed storage reference")
        kind, key, numel = pid[1], pid[2], pid[4]
        if (
            kind.module != "torch"
            or kind.qualname not in _STORAGE_DTYPES
            or type(key) is not str
            or type(numel) is not int
            or numel < 0
        ):
            raise NotNeutral("malformed storage reference")
        return ("storage", np.dtype(_STORAGE_DTYPES[kind.qualname]), key, numel)


# the storage reference is the one persistent id allowed, and only here
_StorageUnpickler.dispatch = MappingProxyType(
    {**RestrictedUnpickler.dispatch, pickle.BINPERSID[0]: metered(pickle._Unpickler.load_binpersid)}  # type: ignore[attr-defined]
)


def _storage(raw: bytes, charge: Callable[[int, str], None]) -> np.ndarray:
    """The one storage a ``torch.storage._load_from_bytes`` argument holds, as a 1-d array (a copy of its bytes)."""
    f = io.BytesIO(raw)
    headers = ImportBudget(1 << 20)  # the five small pickles before the data
    try:
        magic, protocol, _sys_info, ref, keys = (_StorageUnpickler(f, budget=headers).load() for _ in range(5))
        if magic != _TORCH_MAGIC or protocol != 1001:
            raise NotNeutral("not a torch storage")
        if not (type(ref) is tuple and len(ref) == 4 and ref[0] == "storage") or keys != [ref[2]]:
            raise NotNeutral("not a single torch storage")
        _, dtype, _key, numel = ref
        head = f.read(8)
        if len(head) != 8 or struct.unpack("<q", head)[0] != numel:
            raise NotNeutral("malformed torch storage")
        nbytes = numel * dtype.itemsize
        if len(raw) - f.tell() != nbytes:
            raise NotNeutral("torch storage size does not match its data")
        charge(nbytes, "a tensor's storage")
        data: np.ndarray = np.frombuffer(raw, dtype=dtype, count=numel, offset=f.tell()).copy()
        return data
    except Exception as e:
        raise contain(e, "the tensor's storage cannot be read") from None
