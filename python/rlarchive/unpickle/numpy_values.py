"""Stand-ins for the NumPy values a pickle may build: dtypes, arrays, scalars, random generators.

An array is rebuilt from its raw bytes with :func:`numpy.frombuffer` (each
byte charged to the import budget before it is copied); a dtype is one of a
fixed set of simple codes (no structured or object dtypes); a random
generator's state is accepted and dropped.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..limits import MAX_NDIM
from .standins import Buildable, Context, Frozen, GlobalName, NotNeutral, describe, set_slot

__all__ = [
    "DType",
    "dtype_ctor",
    "np_dtype",
    "check_shape",
    "Array",
    "Reconstructed",
    "reconstruct",
    "frombuffer",
    "Scalar",
    "scalar",
    "NDARRAY",
    "RNG",
    "rng_ctor",
]


# ---- numpy -----------------------------------------------------------------

# dtype strings a pickle may name; anything else (structured dtypes, ...) is refused.
_DTYPE_STR = re.compile(r"(b1|[iu][1248]|f[248]|c(8|16)|U[0-9]{0,9}|S[0-9]{0,9}|O[48]?|M8|m8|V[0-9]{1,9})")


class DType(Buildable):
    """Stand-in for ``numpy.dtype(obj, align, copy)`` (+ BUILD with its state tuple)."""

    __slots__ = ("code", "dtype")
    code: str
    dtype: np.dtype

    def __init__(self, obj: object):
        if not isinstance(obj, str) or not _DTYPE_STR.fullmatch(obj):
            raise NotNeutral(f"unsupported numpy dtype {describe(obj)}")
        set_slot(self, "code", obj)
        set_slot(self, "dtype", np.dtype(obj))

    def __setstate__(self, state: object) -> None:
        if not isinstance(state, tuple) or len(state) < 2:
            raise NotNeutral("malformed numpy dtype state")
        order = state[1]
        # fields/names (state[3], state[4] in version 3/4 states) must be empty
        if len(state) >= 5 and (state[3] is not None or state[4] is not None):
            raise NotNeutral("structured numpy dtypes are not supported")
        if type(order) is str and order in ("<", ">"):
            set_slot(self, "dtype", self.dtype.newbyteorder("<" if order == "<" else ">"))
        elif not (order is None or (type(order) is str and order in ("|", "="))):
            raise NotNeutral(f"unsupported numpy byte order {describe(order)}")


def dtype_ctor(ctx: Context, obj: object, align: object = False, copy: object = False) -> DType:
    """Stand-in for ``numpy.dtype(obj, align, copy)``."""
    return DType(obj)


def np_dtype(x: object) -> np.dtype:
    """The NumPy dtype a :class:`DType` stand-in holds (anything else is refused)."""
    if isinstance(x, DType):
        return x.dtype
    raise NotNeutral("expected a numpy dtype")


def check_shape(shape: object) -> tuple[int, ...]:
    """``shape`` if it is a tuple of at most MAX_NDIM non-negative ints (else NotNeutral)."""
    if not isinstance(shape, tuple) or not all(type(d) is int and d >= 0 for d in shape):
        raise NotNeutral("malformed array shape")
    if len(shape) > MAX_NDIM:
        raise NotNeutral("array has too many dimensions")
    return shape


def _array_from_bytes(ctx: Context, buf: object, dtype: np.dtype, shape: tuple[int, ...], fortran: bool) -> np.ndarray:
    if dtype.hasobject or dtype.itemsize == 0:
        raise NotNeutral(f"numpy arrays of dtype {dtype} are not supported")
    if isinstance(buf, str):  # protocol 2 from Python 2 / latin-1 strings
        ctx.charge(len(buf), "a numpy array's data")
        buf = buf.encode("latin-1")
    if not isinstance(buf, (bytes, bytearray)):
        raise NotNeutral("numpy array data is not a byte string")
    count = math.prod(shape)
    if count * dtype.itemsize != len(buf):
        raise NotNeutral("numpy array data does not match its shape")
    ctx.charge(len(buf), "a numpy array")
    arr = np.frombuffer(buf, dtype=dtype, count=count)
    out: np.ndarray = arr.reshape(shape, order="F" if fortran else "C").copy(order="C")
    return out


class Array(Frozen):
    """A NumPy array rebuilt from the stream (the array itself never sits on the unpickler's stack)."""

    __slots__ = ("array",)
    array: np.ndarray | None

    def __init__(self, array: np.ndarray | None):
        set_slot(self, "array", array)


class Reconstructed(Array, Buildable):
    """Stand-in for ``numpy.core.multiarray._reconstruct(ndarray, shape, b'b')`` + BUILD."""

    __slots__ = ("_ctx",)
    _ctx: Context

    def __init__(self, ctx: Context):
        super().__init__(None)
        set_slot(self, "_ctx", ctx)

    def __setstate__(self, state: object) -> None:
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise NotNeutral("malformed numpy array state")
        if len(state) == 5:
            _version, shape, dtype, fortran, raw = state
        else:
            shape, dtype, fortran, raw = state
        if not isinstance(shape, (tuple, list)) or len(shape) > MAX_NDIM:
            raise NotNeutral("malformed array shape")
        arr = _array_from_bytes(
            self._ctx, raw, np_dtype(dtype), check_shape(tuple(shape)), fortran is True or fortran == 1
        )
        set_slot(self, "array", arr)


def reconstruct(ctx: Context, subtype: object, shape: object, typecode: object) -> Reconstructed:
    """Stand-in for ``numpy.core.multiarray._reconstruct``: an empty array that BUILD fills."""
    if not (isinstance(subtype, GlobalName) and subtype == NDARRAY):
        raise NotNeutral("only plain numpy.ndarray objects are supported")
    return Reconstructed(ctx)


def frombuffer(
    ctx: Context, buf: object, dtype: object, shape: object, order: object = "C", axis_order: object = None
) -> Array:
    """Stand-in for ``numpy._core.numeric._frombuffer`` (protocol 5 arrays).

    NumPy 2 writes an array that is neither C- nor Fortran-contiguous (a
    transposed image batch) as its bytes in memory order, with ``order="K"``
    and ``axis_order``: the array is those bytes in C order, transposed by
    ``axis_order``.
    """
    if not isinstance(shape, (tuple, list)) or len(shape) > MAX_NDIM:
        raise NotNeutral("malformed array shape")
    shape = check_shape(tuple(shape))
    if type(order) is str and order == "K" and axis_order is not None:
        if not (
            isinstance(axis_order, (tuple, list))
            and sorted(a if type(a) is int else -1 for a in axis_order) == list(range(len(shape)))
        ):
            raise NotNeutral("malformed axis order")
        arr = _array_from_bytes(ctx, buf, np_dtype(dtype), shape, False)
        ctx.charge(arr.nbytes, "a transposed numpy array")
        return Array(np.ascontiguousarray(arr.transpose(tuple(axis_order))))
    if axis_order is not None:
        raise NotNeutral("an axis order without order 'K'")
    fortran = type(order) is str and order == "F"
    return Array(_array_from_bytes(ctx, buf, np_dtype(dtype), shape, fortran))


class Scalar(Frozen):
    """A NumPy scalar rebuilt from the stream."""

    __slots__ = ("value",)
    value: np.generic

    def __init__(self, value: np.generic):
        set_slot(self, "value", value)


def scalar(ctx: Context, dtype: object, data: object = None) -> Scalar:
    """Stand-in for ``numpy.core.multiarray.scalar(dtype, bytes)``."""
    dt = np_dtype(dtype)
    if dt.hasobject:
        raise NotNeutral("numpy object scalars are not supported")
    if isinstance(data, str):
        data = data.encode("latin-1")
    if not isinstance(data, (bytes, bytearray)) or len(data) != dt.itemsize:
        raise NotNeutral("malformed numpy scalar")
    ctx.charge(dt.itemsize, "a numpy scalar")
    return Scalar(np.frombuffer(bytes(data), dtype=dt, count=1)[0])


NDARRAY = GlobalName("numpy", "ndarray")


class RNG(Buildable):
    """Stand-in for NumPy random generators, bit generators and seed sequences.

    Sample generators are not part of a space (spec §8): whatever state they
    carry is accepted and dropped.
    """

    __slots__ = ()

    def __setstate__(self, state: object) -> None:
        pass


def rng_ctor(ctx: Context, *args: object, **kwargs: object) -> RNG:
    """Stand-in for the NumPy random generators' pickle constructors (their state is dropped)."""
    return RNG()
