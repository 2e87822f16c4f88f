"""Portable pickles: what the bridge writes for Stable-Baselines to read.

:func:`dumps` pickles Python values (protocol 4, read by every Python 3.8+)
so that the result loads the same under NumPy 1.x and 2.x and names classes
without importing them:

- NumPy arrays, dtypes and scalars are written through the names both NumPy
  majors read (``numpy.core.multiarray._reconstruct`` and ``scalar``,
  ``numpy.dtype``), never ``numpy._core`` (which NumPy 1.x lacks) nor the
  protocol 5 ``_frombuffer`` form;
- a :class:`Name` is written as a bare global (``STACK_GLOBAL``): the module is
  not imported while writing, and a reader that records globals by name
  (:mod:`rlarchive.unpickle`) records it as a class reference again;
- a :class:`Call` is written as a call of a :class:`Name` (``REDUCE`` or
  ``NEWOBJ``) with an optional ``BUILD`` state: how an object the bridge could
  not convert is written back exactly as its pickle described it, without the
  object ever existing here.

Everything else follows the standard pickle rules (classes and functions by
reference; ``__reduce_ex__``). Nothing is ever unpickled here.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

__all__ = ["Name", "Call", "dumps", "PROTOCOL"]

#: Protocol 4: every Python 3.8+ reads it (Stable-Baselines3 2.0 needs 3.8).
PROTOCOL = 4


@dataclass(frozen=True)
class Name:
    """A global (a class or a function) named by module and qualified name, never imported here."""

    module: str
    qualname: str


@dataclass(frozen=True, eq=False)
class Call:
    """``func(*args, **kwargs)`` (or ``func.__new__`` with ``new=True``), then ``__setstate__(state)`` if ``state`` is given."""

    func: Name
    args: tuple[object, ...] = ()
    kwargs: dict[object, object] | None = None
    state: object = None
    has_state: bool = False
    new: bool = False


_RECONSTRUCT = Name("numpy.core.multiarray", "_reconstruct")
_SCALAR = Name("numpy.core.multiarray", "scalar")
_NDARRAY = Name("numpy", "ndarray")
_DTYPE = Name("numpy", "dtype")


# the Python implementation: its save() can be extended per object
class _Pickler(pickle._Pickler):
    # what pickle._Pickler gives its subclasses (its type stub does not declare them)
    memo: dict[int, tuple[int, object]]
    write: Callable[[bytes], None]
    get: Callable[[int], bytes]
    memoize: Callable[[object], None]

    def __init__(self, file: IO[bytes], protocol: int) -> None:
        super().__init__(file, protocol=protocol)
        # id of an array or dtype -> (its memo index, the object, kept alive while writing)
        self._written: dict[int, tuple[int, object]] = {}

    def save(self, obj: object, save_persistent_id: bool = True) -> None:  # noqa: D401 - pickle API
        if isinstance(obj, (Name, Call, np.ndarray, np.dtype)):
            hit = self.memo.get(id(obj)) or self._written.get(id(obj))
            if hit is not None:
                self.write(self.get(hit[0]))
                return
        if type(obj) is Name:
            self._save_name(obj)
        elif type(obj) is Call:
            self._save_call(obj)
        elif type(obj) is np.ndarray:
            self._save_array(obj)
        elif isinstance(obj, np.dtype):
            self._save_dtype(obj)
        elif isinstance(obj, np.generic):
            self._save_call(Call(_SCALAR, (obj.dtype, obj.tobytes())))
        else:
            super().save(obj, save_persistent_id)  # type: ignore[misc]  # (the stub does not declare save)

    def _save_name(self, name: Name) -> None:
        self.save(name.module)
        self.save(name.qualname)
        self.write(pickle.STACK_GLOBAL)
        self.memoize(name)

    def _save_call(self, call: Call, same: object = None) -> None:
        """Write ``call``; ``same`` is the object it stands for (referenced again through the memo)."""
        if call.new:
            self.save(call.func)
            self.save(tuple(call.args))
            if call.kwargs:
                self.save(dict(call.kwargs))
                self.write(pickle.NEWOBJ_EX)
            else:
                self.write(pickle.NEWOBJ)
        else:
            if call.kwargs:
                raise pickle.PicklingError(f"a call of {call.func.module}.{call.func.qualname} with keyword arguments")
            self.save(call.func)
            self.save(tuple(call.args))
            self.write(pickle.REDUCE)
        self.memoize(call)
        if same is not None:
            self._written[id(same)] = (self.memo[id(call)][0], same)
        if call.has_state:
            self.save(call.state)
            self.write(pickle.BUILD)

    def _save_dtype(self, dtype: np.dtype) -> None:
        if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
            raise pickle.PicklingError(f"numpy dtype {dtype} has no portable pickle")
        reduced: Any = dtype.__reduce__()
        _, args, state = reduced
        self._save_call(Call(_DTYPE, tuple(args), state=state, has_state=True), dtype)

    def _save_array(self, arr: np.ndarray) -> None:
        if arr.dtype.hasobject:
            raise pickle.PicklingError("numpy arrays of Python objects have no portable pickle")
        fortran = bool(arr.flags.f_contiguous and not arr.flags.c_contiguous)
        raw = arr.tobytes(order="F" if fortran else "C")
        state = (1, tuple(int(n) for n in arr.shape), arr.dtype, fortran, raw)
        self._save_call(Call(_RECONSTRUCT, (_NDARRAY, (0,), b"b"), state=state, has_state=True), arr)


def dumps(obj: object) -> bytes:
    """``obj`` as a protocol 4 pickle that NumPy 1.x and 2.x read alike (see the module docstring).

    Raises:
        pickle.PicklingError: for a value that has no portable pickle (object arrays, structured dtypes, ...).
    """
    buf = io.BytesIO()
    _Pickler(buf, protocol=PROTOCOL).dump(obj)
    return buf.getvalue()
