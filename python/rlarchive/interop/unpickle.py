"""A restricted unpickler for the pickles found in Stable-Baselines archives.

Stable-Baselines3 (and Stable-Baselines 2) store every value of a model's
``data`` member that JSON cannot carry as a base64 cloudpickle stream: the
observation and action spaces, schedules, NumPy arrays, class references and
so on. Loading those streams with :mod:`pickle` runs whatever code they name.

This module reads them without running any of it, in two steps:

1. :class:`RestrictedUnpickler` reads the opcodes into a graph of *stand-ins*.
   Its :meth:`~RestrictedUnpickler.find_class` never imports anything: a
   global is either on the allow-list (:data:`CONSTRUCTORS`, Annex B.5),
   which gives a local stand-in class or an immutable callable
   (:class:`GlobalName` for names that may only be referred to), or, when
   module and name are plain identifier paths, a mere name
   (:class:`GlobalName`). Calling or instantiating such a name makes nothing:
   it records the call as an :class:`Unknown`. A malformed name aborts the load.
2. :func:`to_neutral` turns the stand-in graph into neutral rlarchive values.
   An :class:`Unknown` inside a value becomes the smallest opaque leaf: a
   pickle of exactly that recorded call, written again by
   :mod:`rlarchive.interop.pickler` (Annex B.4); a whole value that is one
   keeps its original bytes.

A recorded name is never resolved here. A caller that wants the object later
goes through :meth:`rlarchive.values.ClassRef.resolve`, which imports only an
exact (module, class) pair the caller allows and looks each part of the
qualname up in the ``__dict__`` of the class before it: no attribute of a
module is traversed, so ``stable_baselines3.common.utils`` / ``os.system``
never reaches ``os``.

Safety properties, each tested:

- Nothing a stream does outlives the load or reaches another load: stand-in
  classes have a metaclass that refuses to set or delete attributes,
  :class:`GlobalName` and every other stand-in instance refuse them too, the
  allow-list is a read-only mapping, and the callables it holds are immutable
  objects bound to one unpickler (the functions behind them are never handed
  to the stream). ``BUILD`` reaches only the stand-ins designed for it
  (spaces, schedules, dtypes, arrays, random generators, and once the record
  of an :class:`Unknown` call); on any other object it aborts the load.
  ``REDUCE``, ``NEWOBJ``, ``INST`` and ``OBJ`` call only allow-listed
  stand-ins, or record the call of a mere name; ``APPEND(S)``, ``SETITEM(S)`` and ``ADDITEMS``
  reach only lists, deques, dicts and sets, whose keys must hash cheaply (no
  deep or widely shared tuple); extension codes, persistent ids and
  out-of-band buffers are refused.
- Memory is bounded by the caller's :class:`~rlarchive.interop.budget.ImportBudget`:
  the unpickler is built on the pure-Python :class:`pickle._Unpickler`
  (memo indices are dictionary keys, declared sizes never allocate more than
  the stream holds), every opcode is charged a fixed cost, every array,
  copy and broadcast is charged before it is made, and the conversion charges
  every reference to a value in its output (an array referenced a thousand
  times is written a thousand times) plus a fixed cost per part. An exhausted
  budget raises ``RlarchiveError("LIMIT_EXCEEDED")``, which fails the whole
  import; every other problem raises :class:`NotNeutral`, and the caller
  keeps the original bytes as an opaque value.
- The same stand-in converts once (conversions are memoised by identity):
  a big-endian array is byte-swapped once however often it is referenced.
- The values produced are ones the writer takes: integers of at most
  ``MAX_INT_DIGITS`` decimal digits (checked on the bit length, never by
  converting), spaces that follow spec §8, nesting within ``MAX_JSON_DEPTH``
  once written as a data member.

In particular this module never imports gymnasium, gym, stable_baselines3,
cloudpickle, torch or any module a pickle names; it needs only NumPy (to hold
array data, which it builds from raw bytes with :func:`numpy.frombuffer`).
"""
from __future__ import annotations

import collections
import io
import math
import pickle
import re
import struct
import types
from typing import Any, Callable, Mapping, Optional

import numpy as np

from ..errors import RlarchiveError
from ..limits import MAX_INLINE_ARRAY_BYTES, MAX_INT_DIGITS, MAX_JSON_DEPTH, MAX_NDIM
from .budget import DEFAULT_IMPORT_BUDGET, ImportBudget

__all__ = [
    "NotNeutral",
    "RestrictedUnpickler",
    "GlobalName",
    "restricted_loads",
    "to_neutral",
    "decode",
    "CONSTRUCTORS",
    "Unknown",
    "describe_globals",
    "pickled_type_name",
]


class NotNeutral(Exception):
    """The pickle cannot be rebuilt as a neutral value; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")

#: Bytes charged for each opcode read and each part of a converted value.
_NODE_COST = 64
#: Integers of more bits than this have more than MAX_INT_DIGITS decimal digits.
_MAX_INT_BITS = (10**MAX_INT_DIGITS - 1).bit_length()
_INT_LIMIT = 10**MAX_INT_DIGITS


def _describe(x: Any) -> str:
    """A short description of a value from the stream, never its full repr (which may be huge)."""
    if isinstance(x, str):
        return repr(x[:60]) + ("..." if len(x) > 60 else "")
    if x is None or type(x) in (bool, float):
        return repr(x)
    if type(x) is int:
        return repr(x) if x.bit_length() <= 64 else "a large integer"
    if isinstance(x, _FrozenMeta):
        return f"the stand-in class {x.__name__}"
    return f"a {type(x).__name__}"


def _check_int(n: int) -> int:
    """``n`` if its decimal form has at most MAX_INT_DIGITS digits (decided without converting it)."""
    if n.bit_length() > _MAX_INT_BITS or (n.bit_length() == _MAX_INT_BITS and abs(n) >= _INT_LIMIT):
        raise NotNeutral(f"an integer has more than {MAX_INT_DIGITS} decimal digits")
    return n


class _Context:
    """What one unpickler's stand-ins share: the import budget."""

    __slots__ = ("budget",)
    budget: Any

    def __init__(self, budget: ImportBudget):
        self.budget = budget

    def charge(self, nbytes: int, what: str) -> None:
        self.budget.charge(nbytes, what)


# ---------------------------------------------------------------------------
# Immutable stand-ins
# ---------------------------------------------------------------------------


class _FrozenMeta(type):
    """Metaclass of every stand-in class: once created, a class cannot be changed."""

    def __setattr__(cls, name, value):
        raise AttributeError(f"stand-in class {cls.__name__} is immutable")

    def __delattr__(cls, name):
        raise AttributeError(f"stand-in class {cls.__name__} is immutable")


def _set(obj: Any, name: str, value: Any) -> None:
    """Set a slot of a stand-in (only this module's own code does that)."""
    object.__setattr__(obj, name, value)


class _Frozen(metaclass=_FrozenMeta):
    """Base of every stand-in: no ``__dict__``, attributes cannot be set from outside, BUILD refused."""

    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"stand-in {type(self).__name__} is immutable")

    def __delattr__(self, name):
        raise AttributeError(f"stand-in {type(self).__name__} is immutable")

    def __setstate__(self, state):
        raise NotNeutral(f"the pickle sets the state of {self._label()}, which takes none")

    def __reduce_ex__(self, protocol):  # never pickled back: a stand-in is not the real object
        raise TypeError("stand-ins cannot be pickled")

    def _label(self) -> str:
        return f"a {type(self).__name__} stand-in"


class GlobalName(_Frozen):
    """A reference to a global (a class or a function) by name; never resolved here.

    Returned by :meth:`RestrictedUnpickler.find_class` for every plain
    identifier path off the allow-list (and for the few allow-listed names of
    Annex B.5). It cannot be changed; calling or instantiating it only
    records the call (:class:`Unknown`).
    """

    __slots__ = ("module", "qualname")
    module: Any
    qualname: Any

    def __init__(self, module: str, qualname: str):
        _set(self, "module", module)
        _set(self, "qualname", qualname)

    def __call__(self, *args, **kwargs):
        return Unknown(self, args, kwargs or None)

    def _label(self) -> str:
        return f"{self.module}.{self.qualname}"

    def __repr__(self):
        return f"GlobalName({self.module!r}, {self.qualname!r})"

    def __eq__(self, other):
        return isinstance(other, GlobalName) and (self.module, self.qualname) == (other.module, other.qualname)

    def __hash__(self):
        return hash((self.module, self.qualname))


class _BuiltinName(GlobalName):
    """A builtin type used as a name (e.g. in a function's annotations).

    ``bytes()`` with no argument is the only call allowed: protocol 2 pickles
    ``b""`` that way.
    """

    __slots__ = ()

    def __call__(self, *args, **kwargs):
        if self.qualname == "bytes" and not args and not kwargs:
            return b""
        return super().__call__(*args, **kwargs)


class _Ctor(_Frozen):
    """An allow-listed global a pickle may call: an immutable callable.

    The entry in :data:`CONSTRUCTORS` is unbound; :meth:`RestrictedUnpickler.find_class`
    hands the stream a copy bound to that unpickler's context (its budget).
    The function behind it is never reachable from the stream.
    """

    __slots__ = ("module", "name", "_fn", "_ctx")
    module: Any
    name: Any
    _fn: Any
    _ctx: Any

    def __init__(self, module: str, name: str, fn: Callable[..., Any], ctx: Optional[_Context] = None):
        _set(self, "module", module)
        _set(self, "name", name)
        _set(self, "_fn", fn)
        _set(self, "_ctx", ctx)

    def bind(self, ctx: _Context) -> "_Ctor":
        """This constructor, bound to one unpickler's context."""
        return _Ctor(self.module, self.name, self._fn, ctx)

    def __call__(self, *args, **kwargs):
        if self._ctx is None:
            raise NotNeutral(f"{self._label()} is called outside RestrictedUnpickler")
        return self._fn(self._ctx, *args, **kwargs)

    def _label(self) -> str:
        return f"{self.module}.{self.name}"

    def __repr__(self):
        return f"<allowed constructor {self._label()}>"


class _Buildable(_Frozen):
    """Base of the stand-ins that accept BUILD (their ``__setstate__`` is designed for it)."""

    __slots__ = ()


class Unknown(_Buildable):
    """What a call of a global off the allow-list would have made: the call, recorded and never made.

    ``func`` is the :class:`GlobalName` the stream called (or instantiated,
    ``new``), ``args``/``kwargs`` its arguments (stand-ins), ``state`` what
    ``BUILD`` gave it (set at most once). The conversion recognises a few
    (Stable-Baselines3 enums, torch tensors, ``pickle.loads`` of bytes) and
    turns any other into an opaque leaf: a pickle of exactly this call,
    written again with :mod:`rlarchive.interop.pickler`.
    """

    __slots__ = ("func", "args", "kwargs", "new", "state", "has_state")
    func: Any
    args: Any
    kwargs: Any
    new: Any
    state: Any
    has_state: Any

    def __init__(self, func: GlobalName, args: tuple, kwargs: Optional[dict], new: bool = False):
        _set(self, "func", func)
        _set(self, "args", args)
        _set(self, "kwargs", kwargs)
        _set(self, "new", new)
        _set(self, "state", None)
        _set(self, "has_state", False)

    def __setstate__(self, state):
        if self.has_state:
            raise NotNeutral(f"the pickle sets the state of {self._label()} twice")
        _set(self, "state", state)
        _set(self, "has_state", True)

    def _label(self) -> str:
        return f"an object made by {self.func._label()}"


# ---- numpy -----------------------------------------------------------------

# dtype strings a pickle may name; anything else (structured dtypes, ...) is refused.
_DTYPE_STR = re.compile(r"(b1|[iu][1248]|f[248]|c(8|16)|U[0-9]{0,9}|S[0-9]{0,9}|O[48]?|M8|m8|V[0-9]{1,9})")


class _DType(_Buildable):
    """Stand-in for ``numpy.dtype(obj, align, copy)`` (+ BUILD with its state tuple)."""

    __slots__ = ("code", "dtype")
    code: Any
    dtype: Any

    def __init__(self, obj: Any):
        if not isinstance(obj, str) or not _DTYPE_STR.fullmatch(obj):
            raise NotNeutral(f"unsupported numpy dtype {_describe(obj)}")
        _set(self, "code", obj)
        _set(self, "dtype", np.dtype(obj))

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) < 2:
            raise NotNeutral("malformed numpy dtype state")
        order = state[1]
        # fields/names (state[3], state[4] in version 3/4 states) must be empty
        if len(state) >= 5 and (state[3] is not None or state[4] is not None):
            raise NotNeutral("structured numpy dtypes are not supported")
        if type(order) is str and order in ("<", ">"):
            _set(self, "dtype", self.dtype.newbyteorder(order))
        elif not (order is None or (type(order) is str and order in ("|", "="))):
            raise NotNeutral(f"unsupported numpy byte order {_describe(order)}")


def _dtype_ctor(ctx: _Context, obj, align=False, copy=False) -> _DType:
    return _DType(obj)


def _np_dtype(x) -> np.dtype:
    if isinstance(x, _DType):
        return x.dtype
    raise NotNeutral("expected a numpy dtype")


def _check_shape(shape) -> tuple:
    if not isinstance(shape, tuple) or not all(type(d) is int and d >= 0 for d in shape):
        raise NotNeutral("malformed array shape")
    if len(shape) > MAX_NDIM:
        raise NotNeutral("array has too many dimensions")
    return shape


def _array_from_bytes(ctx: _Context, buf, dtype: np.dtype, shape: tuple, fortran: bool) -> np.ndarray:
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
    return arr.reshape(shape, order="F" if fortran else "C").copy(order="C")


class _Array(_Frozen):
    """A NumPy array rebuilt from the stream (the array itself never sits on the unpickler's stack)."""

    __slots__ = ("array",)
    array: Any

    def __init__(self, array: Optional[np.ndarray]):
        _set(self, "array", array)


class _Reconstructed(_Array, _Buildable):
    """Stand-in for ``numpy.core.multiarray._reconstruct(ndarray, shape, b'b')`` + BUILD."""

    __slots__ = ("_ctx",)
    _ctx: Any

    def __init__(self, ctx: _Context):
        super().__init__(None)
        _set(self, "_ctx", ctx)

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise NotNeutral("malformed numpy array state")
        if len(state) == 5:
            _version, shape, dtype, fortran, raw = state
        else:
            shape, dtype, fortran, raw = state
        if not isinstance(shape, (tuple, list)) or len(shape) > MAX_NDIM:
            raise NotNeutral("malformed array shape")
        arr = _array_from_bytes(self._ctx, raw, _np_dtype(dtype), _check_shape(tuple(shape)), fortran is True or fortran == 1)
        _set(self, "array", arr)


def _reconstruct(ctx: _Context, subtype, shape, typecode) -> _Reconstructed:
    if not (isinstance(subtype, GlobalName) and subtype == _NDARRAY):
        raise NotNeutral("only plain numpy.ndarray objects are supported")
    return _Reconstructed(ctx)


def _frombuffer(ctx: _Context, buf, dtype, shape, order="C", axis_order=None) -> _Array:
    """Stand-in for ``numpy._core.numeric._frombuffer`` (protocol 5 arrays).

    NumPy 2 writes an array that is neither C- nor Fortran-contiguous (a
    transposed image batch) as its bytes in memory order, with ``order="K"``
    and ``axis_order``: the array is those bytes in C order, transposed by
    ``axis_order``.
    """
    if not isinstance(shape, (tuple, list)) or len(shape) > MAX_NDIM:
        raise NotNeutral("malformed array shape")
    shape = _check_shape(tuple(shape))
    if type(order) is str and order == "K" and axis_order is not None:
        if not (isinstance(axis_order, (tuple, list)) and sorted(a if type(a) is int else -1 for a in axis_order) == list(range(len(shape)))):
            raise NotNeutral("malformed axis order")
        arr = _array_from_bytes(ctx, buf, _np_dtype(dtype), shape, False)
        ctx.charge(arr.nbytes, "a transposed numpy array")
        return _Array(np.ascontiguousarray(arr.transpose(tuple(axis_order))))
    if axis_order is not None:
        raise NotNeutral("an axis order without order 'K'")
    fortran = type(order) is str and order == "F"
    return _Array(_array_from_bytes(ctx, buf, _np_dtype(dtype), shape, fortran))


class _Scalar(_Frozen):
    """A NumPy scalar rebuilt from the stream."""

    __slots__ = ("value",)
    value: Any

    def __init__(self, value: np.generic):
        _set(self, "value", value)


def _scalar(ctx: _Context, dtype, data=None) -> _Scalar:
    """Stand-in for ``numpy.core.multiarray.scalar(dtype, bytes)``."""
    dt = _np_dtype(dtype)
    if dt.hasobject:
        raise NotNeutral("numpy object scalars are not supported")
    if isinstance(data, str):
        data = data.encode("latin-1")
    if not isinstance(data, (bytes, bytearray)) or len(data) != dt.itemsize:
        raise NotNeutral("malformed numpy scalar")
    ctx.charge(dt.itemsize, "a numpy scalar")
    return _Scalar(np.frombuffer(bytes(data), dtype=dt, count=1)[0])


_NDARRAY = GlobalName("numpy", "ndarray")


class _RNG(_Buildable):
    """Stand-in for NumPy random generators, bit generators and seed sequences.

    Sample generators are not part of a space (spec §8): whatever state they
    carry is accepted and dropped.
    """

    __slots__ = ()

    def __setstate__(self, state):
        pass


def _rng_ctor(ctx: _Context, *args, **kwargs) -> _RNG:
    return _RNG()


# ---- python builtins ---------------------------------------------------------

def _codecs_encode(ctx: _Context, obj, encoding="utf-8", errors="strict") -> bytes:
    """Stand-in for ``_codecs.encode``, used by protocol 2 for bytes."""
    if not isinstance(obj, str) or type(encoding) is not str or encoding not in ("latin1", "latin-1", "iso-8859-1"):
        raise NotNeutral("unsupported _codecs.encode call")
    ctx.charge(len(obj), "a byte string")
    return obj.encode("latin-1")


def _safe_getattr(ctx: _Context, obj, name, *default):
    """Stand-in for ``builtins.getattr``: only the members of ``TrainFrequencyUnit``."""
    if obj is _TrainFrequencyUnit and type(name) is str and name in ("STEP", "EPISODE"):
        return _TrainFrequencyUnit(name.lower())
    raise NotNeutral("the pickle calls getattr, which is only allowed for known enums")


_BUILTIN_TYPE_NAMES = ("bool", "bytes", "complex", "dict", "float", "int", "list", "object", "str", "tuple", "type")

# Python 2 module names that protocol 0-2 pickles use (pickle's fix_imports)
_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}


def _bytearray(ctx: _Context, *args) -> bytearray:
    """Stand-in for ``builtins.bytearray``: only from bytes (or a latin-1 string), never ``bytearray(n)``."""
    if not args:
        return bytearray()
    if len(args) == 1 and isinstance(args[0], (bytes, bytearray)):
        ctx.charge(len(args[0]), "a bytearray")
        return bytearray(args[0])
    if len(args) == 2 and isinstance(args[0], str) and type(args[1]) is str and args[1] in ("latin-1", "latin1"):
        ctx.charge(len(args[0]), "a bytearray")
        return bytearray(args[0].encode("latin-1"))
    raise NotNeutral("unsupported bytearray call")


def _set_of(ctx: _Context, kind: type, items: Any) -> Any:
    if not isinstance(items, (list, tuple)):
        raise NotNeutral(f"unsupported {kind.__name__} call")
    ctx.charge(_NODE_COST * (1 + len(items)), f"a {kind.__name__}")
    for x in items:
        _check_key(x)
    return kind(items)


def _set_ctor(ctx: _Context, items=()) -> set:
    """Stand-in for ``builtins.set`` (from a list or a tuple; gymnasium's Text keeps its charset in one)."""
    return _set_of(ctx, set, items)


def _frozenset_ctor(ctx: _Context, items=()) -> frozenset:
    """Stand-in for ``builtins.frozenset`` (from a list or a tuple)."""
    return _set_of(ctx, frozenset, items)


def _ordered_dict(ctx: _Context, items=()) -> dict:
    """Stand-in for ``collections.OrderedDict``: a plain dict (dicts keep their order)."""
    if not isinstance(items, (list, tuple)):
        raise NotNeutral("unsupported OrderedDict call")
    ctx.charge(_NODE_COST * len(items), "an OrderedDict")
    out: dict = {}
    for pair in items:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise NotNeutral("unsupported OrderedDict call")
        _check_key(pair[0])
        out[pair[0]] = pair[1]
    return out


def _deque(ctx: _Context, iterable=(), maxlen=None) -> collections.deque:
    """Stand-in for ``collections.deque`` (from a list or a tuple only)."""
    if not isinstance(iterable, (list, tuple)) or not (maxlen is None or (type(maxlen) is int and 0 <= maxlen < 2**62)):
        raise NotNeutral("unsupported deque call")
    ctx.charge(_NODE_COST + 8 * len(iterable), "a deque")
    return collections.deque(iterable, maxlen)


# ---- spaces and SB3 classes ----------------------------------------------------

class _StandInType(_Buildable):
    """Base of stand-in classes that pickles instantiate with NEWOBJ + BUILD.

    The state (a dict, and the optional slot-state dict) is kept as given: no
    copy is made; :meth:`get` looks a key up in both.
    """

    __slots__ = ("_dict_state", "_slot_state")
    _dict_state: Any
    _slot_state: Any
    _pickle_module: str = ""
    _pickle_name: str = ""

    def __setstate__(self, state):
        slotstate = None
        if isinstance(state, tuple) and len(state) == 2 and (state[1] is None or type(state[1]) is dict):
            state, slotstate = state
        if state is not None and type(state) is not dict:
            raise NotNeutral(f"unexpected state for {self._label()}")
        _set(self, "_dict_state", state)
        _set(self, "_slot_state", slotstate)

    def _label(self) -> str:
        return f"{self._pickle_module}.{self._pickle_name}"

    def get(self, key: str, default: Any = None) -> Any:
        """The state value named ``key`` (slot state first, as pickle's BUILD applies it last)."""
        for d in (getattr(self, "_slot_state", None), getattr(self, "_dict_state", None)):
            if d and key in d:
                return d[key]
        return default


def _standin_type(base: type, module: str, name: str, **attrs: Any) -> type:
    """One stand-in subclass of ``base`` per pickled (module, name), immutable once made."""
    ns = {"__slots__": (), "_pickle_module": module, "_pickle_name": name, "__module__": __name__, **attrs}
    return _FrozenMeta(name, (base,), ns)


class _Space(_StandInType):
    """Stand-in for gymnasium / gym space classes (NEWOBJ, then BUILD with __dict__)."""

    __slots__ = ()
    kind = ""


_SPACE_KINDS = {
    "box": "Box",
    "discrete": "Discrete",
    "multi_discrete": "MultiDiscrete",
    "multi_binary": "MultiBinary",
    "dict": "Dict",
    "tuple": "Tuple",
    "text": "Text",
}


class _Schedule(_StandInType):
    """Stand-in for SB3 schedule classes (FloatSchedule, LinearSchedule, ConstantSchedule)."""

    __slots__ = ()


class _TrainFreq(_Frozen, tuple):
    """Stand-in for SB3's ``TrainFreq`` namedtuple (frequency, unit)."""

    __slots__ = ()
    _pickle_module = "stable_baselines3.common.type_aliases"
    _pickle_name = "TrainFreq"

    def __new__(cls, *args):
        if len(args) != 2:
            raise NotNeutral("malformed TrainFreq")
        return tuple.__new__(cls, args)


class _TrainFrequencyUnit(_Frozen):
    """Stand-in for SB3's ``TrainFrequencyUnit`` enum (values "step", "episode")."""

    __slots__ = ("value",)
    value: Any
    _pickle_module = "stable_baselines3.common.type_aliases"
    _pickle_name = "TrainFrequencyUnit"

    def __init__(self, value):
        if type(value) is not str or value not in ("step", "episode"):
            raise NotNeutral(f"unknown TrainFrequencyUnit {_describe(value)}")
        _set(self, "value", value)


# ---- cloudpickle (functions pickled by value) ------------------------------------

class _Code(_Frozen):
    """Stand-in for ``types.CodeType(...)``: records the names it needs, builds nothing."""

    __slots__ = ("freevars", "name")
    freevars: Any
    name: Any

    def __init__(self, args: tuple):
        if not 14 <= len(args) <= 24:
            raise NotNeutral("malformed code object")
        # In every CPython layout cloudpickle writes (3.8 to 3.13), the last two
        # arguments are co_freevars and co_cellvars.
        freevars = args[-2]
        if not isinstance(freevars, tuple) or not all(type(v) is str for v in freevars):
            raise NotNeutral("malformed code object")
        names = [a for a in args if type(a) is str]
        # co_filename, co_name (and co_qualname on 3.11+) are the string arguments
        _set(self, "freevars", freevars)
        _set(self, "name", names[1] if len(names) >= 2 else None)


def _code(ctx: _Context, *args) -> _Code:
    return _Code(args)


_EMPTY = object()  # the content of an empty cell


class _Cell(_Frozen):
    """Stand-in for a closure cell."""

    __slots__ = ("value",)
    value: Any

    def __init__(self, value: Any = _EMPTY):
        _set(self, "value", value)


_EMPTY_CELL_VALUE = GlobalName("cloudpickle.cloudpickle", "_empty_cell_value")


def _cell(ctx: _Context, *args) -> _Cell:
    """``types.CellType()`` or ``types.CellType(value)``."""
    if len(args) > 1:
        raise NotNeutral("malformed cell")
    return _Cell(*args)


def _make_empty_cell(ctx: _Context) -> _Cell:
    return _Cell()


def _make_cell(ctx: _Context, value=_EMPTY_CELL_VALUE) -> _Cell:
    return _Cell() if isinstance(value, GlobalName) and value == _EMPTY_CELL_VALUE else _Cell(value)


def _cell_set(ctx: _Context, cell, value) -> None:
    if not isinstance(cell, _Cell):
        raise NotNeutral("cell_set on something that is not a cell")
    _set(cell, "value", value)


class _ModuleRef(_Frozen):
    """Stand-in for ``cloudpickle.subimport(name)``: the name only, nothing is imported."""

    __slots__ = ("name",)
    name: Any

    def __init__(self, name):
        _set(self, "name", name)


def _subimport(ctx: _Context, name) -> _ModuleRef:
    return _ModuleRef(name)


class _Function(_Frozen):
    """Stand-in for a function pickled by value; its code is never built or run."""

    __slots__ = ("code", "closure", "attrs")
    code: Any
    closure: Any
    attrs: Any

    def __init__(self, code: _Code, closure: Optional[list]):
        _set(self, "code", code)
        _set(self, "closure", closure)
        _set(self, "attrs", {})

    def closure_values(self) -> dict:
        """Free variable name -> cell content (never runs anything)."""
        if self.closure is None:
            return {}
        if len(self.closure) != len(self.code.freevars):
            raise NotNeutral("closure does not match the code's free variables")
        out = {}
        for name, cell in zip(self.code.freevars, self.closure):
            if not isinstance(cell, _Cell) or cell.value is _EMPTY:
                raise NotNeutral("empty closure cell")
            out[name] = cell.value
        return out

    @property
    def module(self):
        return self.attrs.get("__module__")

    @property
    def qualname(self):
        return self.attrs.get("__qualname__") or self.attrs.get("qualname")


def _make_function(ctx: _Context, code, globals_=None, name=None, argdefs=None, closure=None) -> _Function:
    """Stand-in for ``types.FunctionType(code, globals, name, argdefs, closure)``."""
    if not isinstance(code, _Code):
        raise NotNeutral("function without a code object")
    if closure is not None:
        if not isinstance(closure, (tuple, list)) or len(closure) != len(code.freevars):
            raise NotNeutral("malformed function closure")
        ctx.charge(8 * len(closure), "a function's closure")
        closure = list(closure)
    return _Function(code, closure)


def _function_setstate(ctx: _Context, obj, state) -> None:
    """Stand-in for cloudpickle's ``_function_setstate``: records __module__, __qualname__, closure."""
    if not isinstance(obj, _Function) or not isinstance(state, tuple) or len(state) != 2:
        raise NotNeutral("malformed function state")
    state, slotstate = state
    if type(slotstate) is not dict:
        raise NotNeutral("malformed function state")
    closure = slotstate.get("__closure__")
    if closure is not None:
        if obj.closure is None or not isinstance(closure, (tuple, list)) or len(closure) != len(obj.closure):
            raise NotNeutral("malformed function closure")
        for mine, given in zip(obj.closure, closure):
            if isinstance(mine, _Cell) and isinstance(given, _Cell) and given.value is not _EMPTY:
                _set(mine, "value", given.value)
    for k in ("__module__", "__qualname__", "__name__"):
        if k in slotstate:
            obj.attrs[k] = slotstate[k]


def _make_skel_func(ctx: _Context, code, cell_count, base_globals=None) -> _Function:
    """Stand-in for cloudpickle < 1.5 ``_make_skel_func``."""
    if not isinstance(code, _Code) or type(cell_count) is not int or cell_count > 4096:
        raise NotNeutral("malformed function skeleton")
    if cell_count < 0:
        return _Function(code, None)
    ctx.charge(_NODE_COST * cell_count, "a function's closure")
    return _Function(code, [_Cell() for _ in range(cell_count)])


def _fill_function(ctx: _Context, *args) -> _Function:
    """Stand-in for cloudpickle < 1.5 ``_fill_function`` (both argument layouts)."""
    if not args or not isinstance(args[0], _Function):
        raise NotNeutral("malformed function")
    func = args[0]
    if len(args) == 2 and type(args[1]) is dict:
        state = args[1]
        values = state.get("closure_values")
        for k in ("module", "qualname", "name"):
            if k in state:
                func.attrs["__" + k + "__"] = state[k]
    elif len(args) == 6:
        values = args[5]
        func.attrs["__module__"] = args[4]
    else:
        raise NotNeutral("malformed function")
    if values is not None:
        if func.closure is None or not isinstance(values, (tuple, list)) or len(values) != len(func.closure):
            raise NotNeutral("malformed function closure")
        for cell, v in zip(func.closure, values):
            _set(cell, "value", v)
    return func


_BUILTIN_TYPES = {
    "CodeType": _code,
    "FunctionType": _make_function,  # cloudpickle 1.x builds functions with types.FunctionType
    "LambdaType": _make_function,
    "CellType": _cell,
}


def _builtin_type(ctx: _Context, name) -> _Ctor:
    """Stand-in for cloudpickle's ``_builtin_type``: code, function and cell types, as recorders."""
    fn = _BUILTIN_TYPES.get(name) if type(name) is str else None
    if fn is None:
        raise NotNeutral(f"the pickle asks for types.{_describe(name)}, which is not allowed")
    return _Ctor("types", name, fn, ctx)  # type: ignore[arg-type]


def _copyreg_reconstructor(ctx: _Context, cls, base, state):
    """Stand-in for ``copyreg._reconstructor`` (protocol 0/1 objects) on stand-in types only."""
    if not (isinstance(base, GlobalName) and base == GlobalName("builtins", "object")):
        raise NotNeutral("copyreg._reconstructor with a base that is not object")
    if not (isinstance(cls, _FrozenMeta) and issubclass(cls, _StandInType) and cls is not _StandInType) or state is not None:
        raise NotNeutral("copyreg._reconstructor on a type that is not allowed")
    return cls.__new__(cls)


# ---------------------------------------------------------------------------
# The allow-list
# ---------------------------------------------------------------------------

def _build_constructors() -> dict:
    c: dict = {}

    def ctor(module: str, name: str, fn: Callable[..., Any]) -> None:
        c[(module, name)] = _Ctor(module, name, fn)

    # numpy, both the 1.x (numpy.core) and 2.x (numpy._core) module names
    ctor("numpy", "dtype", _dtype_ctor)
    c[("numpy", "ndarray")] = _NDARRAY
    for core in ("numpy.core", "numpy._core"):
        ctor(core + ".multiarray", "_reconstruct", _reconstruct)
        ctor(core + ".multiarray", "scalar", _scalar)
        ctor(core + ".numeric", "_frombuffer", _frombuffer)
    for name in ("__generator_ctor", "__bit_generator_ctor", "__randomstate_ctor"):
        ctor("numpy.random._pickle", name, _rng_ctor)
    ctor("numpy.random", "__RandomState_ctor", _rng_ctor)
    for mod, name in (
        ("numpy.random._pcg64", "PCG64"),
        ("numpy.random._pcg64", "PCG64DXSM"),
        ("numpy.random._mt19937", "MT19937"),
        ("numpy.random._philox", "Philox"),
        ("numpy.random._sfc64", "SFC64"),
        ("numpy.random.bit_generator", "SeedSequence"),
        ("numpy.random._bit_generator", "SeedSequence"),
        ("numpy.random.mtrand", "RandomState"),
        ("numpy.random._generator", "Generator"),
    ):
        c[(mod, name)] = GlobalName(mod, name)
    for mod in ("numpy.random.bit_generator", "numpy.random._bit_generator"):
        ctor(mod, "__pyx_unpickle_SeedSequence", _rng_ctor)
    # python
    ctor("collections", "OrderedDict", _ordered_dict)
    ctor("collections", "deque", _deque)
    ctor("builtins", "set", _set_ctor)
    ctor("builtins", "frozenset", _frozenset_ctor)
    ctor("builtins", "bytearray", _bytearray)
    ctor("builtins", "getattr", _safe_getattr)
    for name in _BUILTIN_TYPE_NAMES:
        c.setdefault(("builtins", name), _BuiltinName("builtins", name))
    ctor("_codecs", "encode", _codecs_encode)
    ctor("copyreg", "_reconstructor", _copyreg_reconstructor)
    # spaces: gymnasium and the old gym
    for pkg in ("gymnasium", "gym"):
        for kind, cls in _SPACE_KINDS.items():
            module = f"{pkg}.spaces.{kind}"
            c[(module, cls)] = _standin_type(_Space, module, cls, kind=kind)
    # stable-baselines3
    for name in ("FloatSchedule", "LinearSchedule", "ConstantSchedule"):
        c[("stable_baselines3.common.utils", name)] = _standin_type(_Schedule, "stable_baselines3.common.utils", name)
    c[("stable_baselines3.common.type_aliases", "TrainFreq")] = _TrainFreq
    c[("stable_baselines3.common.type_aliases", "TrainFrequencyUnit")] = _TrainFrequencyUnit
    # cloudpickle: functions pickled by value, only so that their closure can be read
    for mod in ("cloudpickle.cloudpickle", "cloudpickle.cloudpickle_fast"):
        ctor(mod, "_builtin_type", _builtin_type)
        ctor(mod, "_make_function", _make_function)
        ctor(mod, "_function_setstate", _function_setstate)
        ctor(mod, "_make_empty_cell", _make_empty_cell)
        ctor(mod, "_make_cell", _make_cell)
        c[(mod, "_empty_cell_value")] = _EMPTY_CELL_VALUE
        ctor(mod, "subimport", _subimport)
        ctor(mod, "_make_skel_func", _make_skel_func)
        ctor(mod, "_fill_function", _fill_function)
        ctor(mod, "cell_set", _cell_set)
    return c


#: (module, name) -> stand-in: the only globals a pickle may use as constructors
#: (Annex B.5). Read-only; every value is immutable: a stand-in class, a
#: :class:`GlobalName`, or an unbound callable that ``find_class`` binds to
#: the unpickler asking for it.
CONSTRUCTORS: Mapping[tuple[str, str], Any] = types.MappingProxyType(_build_constructors())

# ---------------------------------------------------------------------------
# The unpickler
# ---------------------------------------------------------------------------

_KEY_LEAVES = (type(None), bool, int, float, str, bytes)
_MAX_KEY_PARTS = 1024
_MAX_KEY_DEPTH = 16


def _check_key(key: Any) -> None:
    """Refuse a map key whose hash would be costly or recursive (a deep or widely shared tuple)."""
    todo = [(key, 0)]
    parts = 0
    while todo:
        k, depth = todo.pop()
        parts += 1
        if type(k) in _KEY_LEAVES or isinstance(k, GlobalName):
            continue
        if isinstance(k, (tuple, frozenset)):
            if depth >= _MAX_KEY_DEPTH or parts + len(todo) + len(k) > _MAX_KEY_PARTS:
                raise NotNeutral("a map key nests too deeply or has too many parts")
            todo.extend((x, depth + 1) for x in k)
            continue
        if isinstance(k, _Frozen) and type(k).__hash__ is object.__hash__ and type(k).__eq__ is object.__eq__:
            continue  # stand-ins compare by identity
        raise NotNeutral(f"{_describe(k)} cannot be a map key")


#: The stand-in classes a stream may instantiate (NEWOBJ, INST, OBJ, REDUCE): those handed out by CONSTRUCTORS.
_INSTANTIABLE = (_StandInType, _TrainFreq, _TrainFrequencyUnit)


def _instantiable(x: Any) -> bool:
    return isinstance(x, _FrozenMeta) and issubclass(x, _INSTANTIABLE)


_Base: Any = pickle._Unpickler  # type: ignore[attr-defined]  # the pure-Python implementation: its memo is a dict, its reads never pre-allocate


def _refuse(reason: str) -> Callable[[Any], None]:
    def load_refused(self):
        raise NotNeutral(reason)

    return load_refused


class RestrictedUnpickler(_Base):
    """An unpickler that resolves globals only through :data:`CONSTRUCTORS`.

    ``find_class`` never imports a module. A global that is neither a
    constructor on the allow-list nor a plain identifier path (recorded as a
    :class:`GlobalName`) raises :class:`NotNeutral`, which aborts the
    whole load; so do the opcodes listed in the module docstring when they
    reach anything but the stand-ins designed for them. Every opcode and every
    allocation is charged to ``budget`` (a fresh default
    :class:`~rlarchive.interop.budget.ImportBudget` when not given).
    """

    def __init__(self, file, *, budget: Optional[ImportBudget] = None):
        super().__init__(file, fix_imports=False, encoding="latin-1", errors="strict")
        self.budget = budget if budget is not None else ImportBudget(DEFAULT_IMPORT_BUDGET)
        self._ctx = _Context(self.budget)
        self.globals_seen: list[tuple[str, str]] = []

    def find_class(self, module: str, name: str):  # noqa: D401 - pickle API
        if type(module) is not str or type(name) is not str:
            raise NotNeutral("malformed global")
        self.globals_seen.append((module, name))
        module = _PY2_MODULES.get(module, module)
        found = CONSTRUCTORS.get((module, name))
        if isinstance(found, _Ctor):
            return found.bind(self._ctx)
        if found is not None:
            return found
        if _IDENT.fullmatch(module) and _IDENT.fullmatch(name):
            return GlobalName(module, name)
        raise NotNeutral(f"the pickle needs the global {module[:100]}.{name[:100]}, which is not on the allow-list")

    def persistent_load(self, pid):
        raise NotNeutral("persistent ids are not allowed")

    # -- opcodes that call, build or fill objects: stand-ins and plain containers only

    def _call(self, func: Any, args: Any, kwargs: Optional[dict] = None) -> Any:
        if not (isinstance(func, (_Ctor, GlobalName)) or _instantiable(func)):
            raise NotNeutral(f"the pickle calls {_describe(func)}, which is not an allowed constructor")
        if type(args) is not tuple or not (kwargs is None or type(kwargs) is dict):
            raise NotNeutral("malformed call arguments")
        self.budget.charge(_NODE_COST, "an object of the pickle")
        return func(*args, **(kwargs or {}))

    def _new(self, cls: Any, args: Any, kwargs: Any) -> Any:
        if type(cls) is GlobalName and type(args) is tuple and type(kwargs) is dict:
            self.budget.charge(_NODE_COST, "an object of the pickle")
            return Unknown(cls, args, kwargs or None, new=True)
        if not _instantiable(cls):
            raise NotNeutral(f"the pickle instantiates {_describe(cls)}, which is not an allowed class")
        if type(args) is not tuple or type(kwargs) is not dict:
            raise NotNeutral("malformed NEWOBJ arguments")
        self.budget.charge(_NODE_COST, "an object of the pickle")
        return cls.__new__(cls, *args, **kwargs)

    def _instantiate(self, klass, args):
        if _instantiable(klass) and not args:
            self.append(self._new(klass, (), {}))
        else:
            self.append(self._call(klass, tuple(args)))

    def _load_reduce(self):
        args = self.stack.pop()
        self.stack[-1] = self._call(self.stack[-1], args)

    def _load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, {}))

    def _load_newobj_ex(self):
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, kwargs))

    def _load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if not isinstance(inst, _Buildable):
            label = inst._label() if isinstance(inst, _Frozen) else _describe(inst)
            raise NotNeutral(f"the pickle sets the state of {label}, which takes none")
        inst.__setstate__(state)

    def _sequence(self) -> Any:
        target = self.stack[-1]
        if type(target) not in (list, collections.deque):
            raise NotNeutral(f"the pickle appends to {_describe(target)}")
        return target

    def _load_append(self):
        value = self.stack.pop()
        self._sequence().append(value)

    def _load_appends(self):
        items = self.pop_mark()
        self._sequence().extend(items)

    def _mapping(self) -> dict:
        target = self.stack[-1]
        if type(target) is not dict:
            raise NotNeutral(f"the pickle sets items of {_describe(target)}")
        return target

    def _load_setitem(self):
        value = self.stack.pop()
        key = self.stack.pop()
        _check_key(key)
        self._mapping()[key] = value

    def _load_setitems(self):
        items = self.pop_mark()
        target = self._mapping()
        for i in range(0, len(items) - 1, 2):
            _check_key(items[i])
            target[items[i]] = items[i + 1]

    def _load_dict(self):
        items = self.pop_mark()
        out: dict = {}
        for i in range(0, len(items) - 1, 2):
            _check_key(items[i])
            out[items[i]] = items[i + 1]
        self.append(out)

    def _load_empty_set(self):
        self.append(set())

    def _load_additems(self):
        items = self.pop_mark()
        target = self.stack[-1]
        if type(target) is not set:
            raise NotNeutral(f"the pickle adds items to {_describe(target)}")
        for x in items:
            _check_key(x)
        target.update(items)

    def _load_frozenset(self):
        items = self.pop_mark()
        for x in items:
            _check_key(x)
        self.append(frozenset(items))

    def _load_bytearray8(self):
        (size,) = struct.unpack("<Q", self.read(8))
        data = self.read(size)  # at most what the stream holds: nothing is allocated from the declared size
        if len(data) != size:
            raise NotNeutral("the pickle is truncated")
        self.budget.charge(size, "a bytearray")
        self.append(bytearray(data))

    _OVERRIDES = {
        pickle.REDUCE: "_load_reduce",
        pickle.NEWOBJ: "_load_newobj",
        pickle.NEWOBJ_EX: "_load_newobj_ex",
        pickle.BUILD: "_load_build",
        pickle.APPEND: "_load_append",
        pickle.APPENDS: "_load_appends",
        pickle.SETITEM: "_load_setitem",
        pickle.SETITEMS: "_load_setitems",
        pickle.DICT: "_load_dict",
        pickle.BYTEARRAY8: "_load_bytearray8",
        pickle.EMPTY_SET: "_load_empty_set",
        pickle.ADDITEMS: "_load_additems",
        pickle.FROZENSET: "_load_frozenset",
    }


def _metered(step: Callable[[Any], None]) -> Callable[[Any], None]:
    """An opcode handler that charges the budget before the opcode runs."""

    def metered(self):
        self.budget.charge(_NODE_COST, "an opcode of the pickle")
        step(self)

    return metered


def _dispatch_table() -> Mapping[int, Callable[[Any], None]]:
    table = dict(_Base.dispatch)
    for opcode, method in RestrictedUnpickler._OVERRIDES.items():
        table[opcode[0]] = getattr(RestrictedUnpickler, method)
    refused = {
        pickle.EXT1: "extension codes are not allowed",
        pickle.EXT2: "extension codes are not allowed",
        pickle.EXT4: "extension codes are not allowed",
        pickle.NEXT_BUFFER: "out-of-band buffers are not allowed",
        pickle.READONLY_BUFFER: "out-of-band buffers are not allowed",
        pickle.PERSID: "persistent ids are not allowed",
        pickle.BINPERSID: "persistent ids are not allowed",
    }
    for opcode, reason in refused.items():
        table[opcode[0]] = _refuse(reason)
    return types.MappingProxyType({k: _metered(v) for k, v in table.items()})


RestrictedUnpickler.dispatch = _dispatch_table()


def _reason(e: BaseException) -> str:
    """A bounded description of an exception raised while reading a stream."""
    if isinstance(e, (KeyError, IndexError)):  # their message may repr a value from the stream
        return type(e).__name__
    try:
        return f"{type(e).__name__}: {str(e)[:200]}"
    except Exception:
        return type(e).__name__


def _contain(e: Exception, doing: str) -> BaseException:
    """The exception :func:`decode` raises for ``e``: LIMIT_EXCEEDED as is, everything else NotNeutral."""
    if isinstance(e, RlarchiveError) and e.code == "LIMIT_EXCEEDED":
        return e
    if isinstance(e, MemoryError):
        return RlarchiveError("LIMIT_EXCEEDED", f"out of memory while {doing}")
    if isinstance(e, NotNeutral):
        return e
    if isinstance(e, RecursionError):
        return NotNeutral("the value nests too deeply")
    return NotNeutral(f"{doing}: {_reason(e)}")


def restricted_loads(data: bytes, *, budget: Optional[ImportBudget] = None) -> Any:
    """Unpickle ``data`` into a stand-in graph, running no code from it.

    Raises :class:`NotNeutral` for any disallowed global or malformed stream,
    and ``RlarchiveError`` (``LIMIT_EXCEEDED``) when ``budget`` runs out.
    """
    try:
        return RestrictedUnpickler(io.BytesIO(data), budget=budget).load()
    except Exception as e:  # malformed stream, a refused opcode, ...
        raise _contain(e, "the pickle cannot be read safely") from None


def describe_globals(data: bytes) -> list[tuple[str, str]]:
    """The globals a pickle stream names, read from its opcodes without loading it.

    Follows string literals through the memo so that protocol 4/5
    ``STACK_GLOBAL`` names are found; best effort, for display only.
    """
    import pickletools

    out: list[tuple[str, str]] = []
    memo: dict = {}
    last: list = []  # the last two values pushed, when they are strings (else None)
    try:
        for op, arg, _pos in pickletools.genops(data):
            name = op.name
            if name in ("GLOBAL", "INST"):
                mod, _, attr = str(arg).partition(" ")
                out.append((mod, attr))
                last.append(None)
            elif name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "STRING", "BINSTRING", "SHORT_BINSTRING"):
                last.append(arg)
            elif name == "MEMOIZE":
                memo[len(memo)] = last[-1] if last else None
            elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[arg] = last[-1] if last else None
            elif name in ("GET", "BINGET", "LONG_BINGET"):
                last.append(memo.get(arg))
            elif name == "STACK_GLOBAL":
                if len(last) >= 2 and isinstance(last[-2], str) and isinstance(last[-1], str):
                    out.append((last[-2], last[-1]))
                last.append(None)
            elif name in ("FRAME", "PROTO"):
                continue
            else:
                last.append(None)
            del last[:-2]
    except Exception:
        pass
    return out


# ---------------------------------------------------------------------------
# Stand-in graph -> neutral rlarchive values
# ---------------------------------------------------------------------------

_MAX_NODES = 1_000_000  # parts of one value, counting every reference
_MAX_BROADCAST_BYTES = 1 << 28  # a Box bound given as a scalar is expanded up to this size
# A data member's value starts at JSON depth 3 (the document, then "data").
_MAX_LEVELS = MAX_JSON_DEPTH - 2

# closures of the old SB3 schedule helpers, readable from their cells
_SB_UTIL_MODULES = ("stable_baselines3.common.utils",)

# JSON nesting levels a space takes in the value model (its sub-spaces add theirs)
_SPACE_LEVELS = {"box": 3, "multi_discrete": 3, "multi_binary": 2, "dict": 3, "tuple": 2, "discrete": 1, "text": 1}


def _number(x, what: str):
    if isinstance(x, bool):
        raise NotNeutral(f"{what} is not a number")
    if isinstance(x, _Scalar):
        x = x.value
    if isinstance(x, np.generic) and np.issubdtype(type(x), np.number) and not np.issubdtype(type(x), np.complexfloating):
        x = x.item()
    if type(x) is int:
        return _check_int(x)
    if type(x) is not float or not math.isfinite(x):
        raise NotNeutral(f"{what} is not a finite number")
    return x


def _levels(obj: Any) -> int:
    """JSON nesting levels the value of ``obj`` takes when written (an upper bound)."""
    if obj is None or isinstance(obj, (bool, str, _TrainFrequencyUnit)):
        return 0
    if isinstance(obj, (int, float)):
        return 0 if isinstance(obj, float) and math.isfinite(obj) or isinstance(obj, int) and abs(obj) < 2**53 else 1
    if isinstance(obj, tuple):
        return 2
    if isinstance(obj, (list, collections.deque)):
        return 1
    if isinstance(obj, dict):
        return 1 if all(type(k) is str for k in obj) and "$type" not in obj else 3
    if isinstance(obj, _Space):
        return _SPACE_LEVELS.get(type(obj).kind, 3)
    if isinstance(obj, _Array):
        return 2
    if isinstance(obj, (_Schedule, _Function, Unknown)):
        return 2
    return 1


class _Neutralizer:
    """Converts one stand-in graph, charging ``budget`` for what the output holds and what it copies."""

    def __init__(self, budget: ImportBudget, nested: int = 0):
        from .. import schedules as _schedules
        from .. import spaces as _spaces
        from .. import values as _values

        self.spaces = _spaces
        self.schedules = _schedules
        self.values = _values
        self.budget = budget
        self.nested = nested  # pickles this one is nested in (pickle.loads of bytes)
        self.level = 0  # JSON levels of the value being converted
        self.peak = 0
        self.nodes = 0
        self.referenced = 0  # bytes charged for the output so far
        # id -> (the object, kept alive; its value; bytes and parts per reference; JSON levels)
        self.memo: dict[int, tuple[Any, Any, int, int, int]] = {}
        self.arrays: dict[tuple, np.ndarray] = {}  # copies made from a source array, by (id, ...)

    # -- accounting ---------------------------------------------------------
    def refer(self, nbytes: int, what: str) -> None:
        """Charge bytes the output holds, for this reference (a value referenced twice is written twice)."""
        self.budget.charge(nbytes, what)
        self.referenced += nbytes

    def allocate(self, nbytes: int, what: str) -> None:
        """Charge a copy made once, before it is made."""
        self.budget.charge(nbytes, what)

    def _count(self, n: int) -> None:
        self.nodes += n
        if self.nodes > _MAX_NODES:  # shared references could otherwise blow up exponentially
            raise NotNeutral(f"value has more than {_MAX_NODES} parts")

    # -- generic ----------------------------------------------------------
    def convert(self, obj):
        key = id(obj) if isinstance(obj, (tuple, _Frozen)) else None
        if key is not None:
            hit = self.memo.get(key)
            if hit is not None:
                _, value, nbytes, nodes, height = hit
                if self.level + height > _MAX_LEVELS:
                    raise NotNeutral("value nests too deeply")
                self.peak = max(self.peak, self.level + height)
                self._count(nodes)
                self.refer(nbytes, "a value referenced again")
                return value
        level0, peak0, nodes0, ref0 = self.level, self.peak, self.nodes, self.referenced
        self._count(1)
        self.refer(_NODE_COST, "a value")
        self.level += _levels(obj)
        self.peak = self.level
        if self.level > _MAX_LEVELS:
            raise NotNeutral("value nests too deeply")
        try:
            value = self._convert(obj)
        finally:
            self.level = level0
        height = self.peak - level0
        self.peak = max(peak0, self.peak)
        if key is not None:
            self.memo[key] = (obj, value, self.referenced - ref0, self.nodes - nodes0, height)
        return value

    def _convert(self, obj):
        if obj is None or isinstance(obj, bool):
            return obj
        if isinstance(obj, str):
            self.refer(len(obj) if obj.isascii() else 4 * len(obj), "a string")
            return str(obj)
        if isinstance(obj, int):
            return _check_int(int(obj))
        if isinstance(obj, float):
            return float(obj)
        if isinstance(obj, (bytes, bytearray)):
            self.refer(len(obj), "a byte string")
            return bytes(obj)
        if isinstance(obj, _Array):
            arr = self._source(obj, "numpy array")
            self.refer(arr.nbytes, "an array")
            return arr
        if isinstance(obj, _Scalar):
            self._dtype_code(obj.value.dtype)
            return obj.value
        if isinstance(obj, _TrainFreq):
            freq, unit = obj
            return (self.convert(freq), self.convert(unit))
        if isinstance(obj, _TrainFrequencyUnit):
            return obj.value
        if isinstance(obj, (list, collections.deque)):
            return [self.convert(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.convert(v) for v in obj)
        if isinstance(obj, dict):
            out = {}
            for k, v in obj.items():
                nk = self.convert(k)
                if isinstance(nk, (np.generic, np.ndarray)):
                    raise NotNeutral("numpy value as a map key")
                _check_key(nk)
                out[nk] = self.convert(v)
            return out
        if isinstance(obj, _Space):
            return self._space(obj)
        if isinstance(obj, (_Schedule, _Function)):
            return self._schedule(obj)
        if isinstance(obj, GlobalName):
            return self._classref(obj.module, obj.qualname)
        if isinstance(obj, _FrozenMeta) and issubclass(obj, (_StandInType, _TrainFrequencyUnit, _TrainFreq)):
            return self._classref(obj._pickle_module, obj._pickle_name)
        if isinstance(obj, (set, frozenset)):
            raise NotNeutral("sets have no neutral form")
        if isinstance(obj, _RNG):
            raise NotNeutral("random generators have no neutral form")
        if isinstance(obj, _DType):
            raise NotNeutral("a bare numpy dtype has no neutral form")
        if isinstance(obj, _Ctor):
            raise NotNeutral(f"the function {obj._label()} has no neutral form")
        if isinstance(obj, Unknown):
            return _recorded.convert(obj, self.budget.charge, self.nested, self._decode_nested)
        raise NotNeutral(f"no neutral form for {_describe(obj)}")

    def _decode_nested(self, data: bytes) -> Any:
        """A pickle inside this value (``pickle.loads(data)``), converted with the same budget."""
        inner = _Neutralizer(self.budget, self.nested + 1)
        return inner.top(restricted_loads(data, budget=self.budget))

    def top(self, obj: Any) -> Any:
        """The neutral value of a whole pickle; one that is only an opaque leaf raises NotNeutral (the original bytes are kept)."""
        value = self.convert(obj)
        if isinstance(value, self.values.Opaque):
            raise NotNeutral(value.note or "no neutral form")
        return value

    def _classref(self, module, qualname):
        if not (type(module) is str and type(qualname) is str and _IDENT.fullmatch(module) and _IDENT.fullmatch(qualname)):
            raise NotNeutral("a class name that is not a plain identifier path")
        return self.values.ClassRef(module, qualname)

    # -- arrays -----------------------------------------------------------
    def _dtype_code(self, dtype) -> str:
        from ..dtypes import code_of_numpy

        code = code_of_numpy(dtype)
        if code is None:
            raise NotNeutral(f"numpy dtype {dtype} has no rlarchive dtype code")
        return code

    def _once(self, key: tuple, make: Callable[[], np.ndarray]) -> np.ndarray:
        """The array made by ``make`` for ``key``, made only the first time."""
        arr = self.arrays.get(key)
        if arr is None:
            arr = self.arrays[key] = make()
        return arr

    def _source(self, x: Any, what: str) -> np.ndarray:
        """A little-endian array for an array stand-in or a number (byte-swapped once per stand-in)."""
        if isinstance(x, _Array):
            arr = x.array
            if arr is None:
                raise NotNeutral(f"{what} without data")
            self._dtype_code(arr.dtype)
            if arr.dtype.byteorder != ">":
                return arr

            def swap() -> np.ndarray:
                self.allocate(arr.nbytes, f"byte-swapping {what}")
                return arr.astype(arr.dtype.newbyteorder("<"))

            return self._once((id(x), "<"), swap)
        if isinstance(x, _Scalar):
            x = x.value
        if isinstance(x, np.generic):
            self._dtype_code(x.dtype)
            return np.asarray(x).astype(x.dtype.newbyteorder("<"))
        if type(x) is bool or type(x) is float or (type(x) is int and -(2**63) <= x < 2**64):
            a = np.asarray(x)
            if a.dtype.kind in "biuf":
                return a
        raise NotNeutral(f"{what} is not an array")

    def _cast(self, x: Any, dtype: np.dtype, what: str) -> np.ndarray:
        """``x`` as an array of ``dtype``, refused if a value would change (cast once per stand-in)."""
        a = self._source(x, what)
        if a.dtype == dtype:
            return a

        def cast() -> np.ndarray:
            self.allocate(a.size * dtype.itemsize, f"converting {what}")
            with np.errstate(all="ignore"):
                b = a.astype(dtype)
                same = np.array_equal(b.astype(a.dtype), a, equal_nan=a.dtype.kind == "f")
            if not same:
                raise NotNeutral(f"{what} does not fit the space's dtype")
            return b

        return self._once((id(x), dtype.str), cast) if isinstance(x, _Array) else cast()

    def _bound(self, x: Any, dtype: np.dtype, shape: tuple, what: str) -> np.ndarray:
        """A Box bound of ``shape``, broadcast from a smaller one if need be (once per stand-in)."""
        a = self._cast(x, dtype, what)
        if a.shape == shape:
            return a

        def broadcast() -> np.ndarray:
            nbytes = math.prod(shape) * dtype.itemsize
            if nbytes > _MAX_BROADCAST_BYTES:
                raise NotNeutral("Box bounds would expand beyond the size limit")
            self.allocate(nbytes, f"broadcasting {what}")
            return np.ascontiguousarray(np.broadcast_to(a, shape))

        return self._once((id(x), dtype.str, shape), broadcast) if isinstance(x, _Array) else broadcast()

    # -- spaces -----------------------------------------------------------
    def _space(self, sp: _Space):
        space = self._build_space(sp)
        self._check_space(space)
        return space

    def _check_space(self, space: Any) -> None:
        """Refuse a space that breaks a rule of spec §8 (the writer would refuse it)."""
        if isinstance(space, self.spaces.MultiDiscrete) and space.nvec.nbytes > MAX_INLINE_ARRAY_BYTES:
            raise NotNeutral("MultiDiscrete.nvec is too large to be written inline")
        try:
            node = self.spaces.to_json(space, self.values.Encoder("arrays", {}, -1).encode, "")
            self.values.Checker().check(node, "")
        except RlarchiveError as e:
            raise NotNeutral(f"the space breaks a rule of spec §8: {e}") from None

    def _build_space(self, sp: _Space):
        S = self.spaces
        kind = type(sp).kind

        def dtype(default=None) -> np.dtype:
            d = sp.get("dtype")
            if isinstance(d, _DType):
                return d.dtype.newbyteorder("<") if d.dtype.byteorder == ">" else d.dtype
            if d is None and default is not None:
                return np.dtype(default)
            raise NotNeutral("space without a dtype")

        def shape():
            s = sp.get("_shape", sp.get("shape"))
            if not isinstance(s, tuple):
                raise NotNeutral("space without a shape")
            return _check_shape(tuple(int(x.value) if isinstance(x, _Scalar) and isinstance(x.value, np.integer) else x for x in s))

        if kind == "box":
            dt = dtype()
            code = self._dtype_code(dt)
            shp = shape()
            low, high = sp.get("low"), sp.get("high")
            if low is None or high is None:
                raise NotNeutral("Box without bounds")
            low = self._bound(low, dt, shp, "Box.low")
            high = self._bound(high, dt, shp, "Box.high")
            self.refer(low.nbytes + high.nbytes, "Box bounds")
            return S.Box(low, high, shp, code)
        if kind == "discrete":
            dt = dtype("int64")
            n = _number(sp.get("n"), "Discrete.n")
            start = _number(sp.get("start", 0), "Discrete.start")
            if type(n) is not int or type(start) is not int:
                raise NotNeutral("Discrete with non-integer bounds")
            return S.Discrete(n, start, self._dtype_code(dt))
        if kind == "multi_discrete":
            dt = dtype("int64")
            code = self._dtype_code(dt)
            nvec = self._cast(sp.get("nvec"), dt, "MultiDiscrete.nvec")
            start = sp.get("start")
            if start is None:
                self.allocate(nvec.nbytes, "MultiDiscrete.start")
                start = np.zeros_like(nvec)
            else:
                start = self._cast(start, dt, "MultiDiscrete.start")
            if start.shape != nvec.shape:
                raise NotNeutral("MultiDiscrete.start and nvec differ in shape")
            self.refer(nvec.nbytes + start.nbytes, "MultiDiscrete")
            return S.MultiDiscrete(nvec, start, code)
        if kind == "multi_binary":
            n = sp.get("n")
            if isinstance(n, _Array):
                a = self._source(n, "MultiBinary.n")
                if a.dtype.kind not in "iu" or a.ndim > 1 or a.size > MAX_NDIM:
                    raise NotNeutral("malformed MultiBinary.n")
                n = tuple(_check_int(int(x)) for x in a.reshape(-1)) if a.ndim else _check_int(int(a))
            elif isinstance(n, (tuple, list)):
                if len(n) > MAX_NDIM:
                    raise NotNeutral("MultiBinary has too many dimensions")
                n = tuple(_number(x, "MultiBinary.n") for x in n)
            else:
                n = _number(n, "MultiBinary.n")
            return S.MultiBinary(n)
        if kind == "dict":
            spaces = sp.get("spaces")
            if type(spaces) is not dict:
                raise NotNeutral("Dict space without sub-spaces")
            pairs = []
            for k, v in spaces.items():
                if type(k) is not str:
                    raise NotNeutral("Dict space with a key that is not a string")
                if not isinstance(v, _Space):
                    raise NotNeutral("Dict space holds something that is not a space")
                self.refer(len(k), "a Dict space key")
                pairs.append((k, self.convert(v)))
            return S.Dict(tuple(pairs))
        if kind == "tuple":
            spaces = sp.get("spaces")
            if not isinstance(spaces, (tuple, list)) or not all(isinstance(v, _Space) for v in spaces):
                raise NotNeutral("Tuple space without sub-spaces")
            return S.Tuple(tuple(self.convert(v) for v in spaces))
        if kind == "text":
            chars = sp.get("_char_str")
            if chars is None:
                cl = sp.get("_char_list") or sp.get("_char_set")
                if not isinstance(cl, (list, tuple, set, frozenset)) or not all(type(c) is str for c in cl):
                    raise NotNeutral("Text space without a charset")
                self.allocate(sum(len(c) for c in cl), "a Text charset")
                chars = "".join(cl)
            if type(chars) is not str:
                raise NotNeutral("Text space with a malformed charset")
            charset = "".join(sorted(set(chars)))
            self.refer(4 * len(charset), "a Text charset")
            return S.Text(
                _number(sp.get("max_length"), "Text.max_length"),
                _number(sp.get("min_length", 1), "Text.min_length"),
                charset,
            )
        raise NotNeutral(f"unsupported space {type(sp).__name__}")

    # -- schedules ---------------------------------------------------------
    def _schedule(self, obj, depth: int = 0):
        if depth > 8:
            raise NotNeutral("schedules nest too deeply")
        Sch = self.schedules
        if isinstance(obj, _Schedule):
            name = type(obj)._pickle_name
            if name == "FloatSchedule":
                inner = obj.get("value_schedule")
                if type(inner) in (int, float):
                    return Sch.Constant(float(_number(inner, "FloatSchedule.value_schedule")))
                if not isinstance(inner, (_Schedule, _Function)):
                    raise NotNeutral("FloatSchedule wraps something that is not a known schedule")
                return self._schedule(inner, depth + 1)
            if name == "ConstantSchedule":
                return Sch.Constant(_number(obj.get("val"), "ConstantSchedule.val"))
            if name == "LinearSchedule":
                return self._linear(obj.get("start"), obj.get("end"), obj.get("end_fraction"))
            raise NotNeutral(f"unknown schedule {name}")
        # a function pickled by value: recognised only for SB3's own closures
        mod, qual = obj.module, obj.qualname
        if type(mod) is str and type(qual) is str and mod in _SB_UTIL_MODULES:
            cells = obj.closure_values()
            free = tuple(sorted(cells))
            if qual == "constant_fn.<locals>.func" and free == ("val",):
                return Sch.Constant(_number(cells["val"], "constant_fn value"))
            if qual == "get_linear_fn.<locals>.func" and free == ("end", "end_fraction", "start"):
                return self._linear(cells["start"], cells["end"], cells["end_fraction"])
            if qual == "get_schedule_fn.<locals>.<lambda>" and free == ("value_schedule",):
                inner = cells["value_schedule"]
                if type(inner) in (int, float):
                    return Sch.Constant(float(_number(inner, "get_schedule_fn value")))
                if isinstance(inner, (_Schedule, _Function)):
                    return self._schedule(inner, depth + 1)
        raise NotNeutral(f"the function {_describe(mod)} {_describe(qual)} is not a known schedule (its code is never run)")

    def _linear(self, start, end, end_fraction):
        start = _number(start, "LinearSchedule.start")
        end = _number(end, "LinearSchedule.end")
        ef = _number(end_fraction, "LinearSchedule.end_fraction")
        if not (0 < ef <= 1):
            raise NotNeutral("LinearSchedule.end_fraction is outside (0, 1]")
        return self.schedules.Linear(start, end, ef)


def to_neutral(obj: Any, *, budget: Optional[ImportBudget] = None) -> Any:
    """Convert a stand-in graph from :func:`restricted_loads` to neutral rlarchive values.

    ``budget`` (a fresh default :class:`~rlarchive.interop.budget.ImportBudget`
    when not given) is charged for every part of the output, every reference
    to an array or a byte string in it, and every copy the conversion makes,
    before it is made.

    Raises:
        NotNeutral: some part has no neutral form.
        RlarchiveError: LIMIT_EXCEEDED when the budget runs out.
    """
    if budget is None:
        budget = ImportBudget(DEFAULT_IMPORT_BUDGET)
    try:
        return _Neutralizer(budget).top(obj)
    except Exception as e:
        raise _contain(e, "the value cannot be converted") from None


def decode(data: bytes, *, budget: Optional[ImportBudget] = None) -> Any:
    """Unpickle ``data`` with :class:`RestrictedUnpickler` and return its neutral value.

    ``budget`` (a fresh default :class:`~rlarchive.interop.budget.ImportBudget`
    when not given) is charged for every opcode, array, expansion, copy and
    reference the stream asks for.

    Raises:
        NotNeutral: the stream needs a global outside the allow-list, is
            malformed, or holds something without a neutral form. Never
            executes code from the stream.
        RlarchiveError: LIMIT_EXCEEDED when the budget runs out (the whole
            import fails; the value is not kept as an opaque pickle).
    """
    if budget is None:
        budget = ImportBudget(DEFAULT_IMPORT_BUDGET)
    return to_neutral(restricted_loads(data, budget=budget), budget=budget)


def pickled_type_name(data: bytes) -> Optional[str]:
    """A display name for the type a pickle rebuilds, read from its first global, or None."""
    g = describe_globals(data)
    if not g:
        return None
    mod, name = g[0]
    return f"{mod}.{name}"


# What a recorded call converts to; imported last, as it builds on the names above.
from . import recorded as _recorded  # noqa: E402
