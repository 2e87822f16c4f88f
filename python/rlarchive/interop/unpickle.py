"""A restricted unpickler for the pickles found in Stable-Baselines archives.

Stable-Baselines3 (and Stable-Baselines 2) store every value of a model's
``data`` member that JSON cannot carry as a base64 cloudpickle stream: the
observation and action spaces, schedules, NumPy arrays, class references and
so on. Loading those streams with :mod:`pickle` runs whatever code they name.

This module reads them without running any of it.
:class:`RestrictedUnpickler` is a :class:`pickle.Unpickler` whose
:meth:`~RestrictedUnpickler.find_class` never imports anything: it looks the
requested global up in an explicit allow-list (:data:`CONSTRUCTORS`) and returns
a *stand-in*, a small local class or function that records what the pickle
asks for, or, for names under :data:`CLASS_REF_PREFIXES`, a mere name
(:class:`GlobalName`) that refuses to be called. The stand-in graph is then
turned into neutral rlarchive values by :func:`to_neutral`.

In particular this module never imports gymnasium, gym, stable_baselines3,
cloudpickle, torch or any module a pickle names; it needs only NumPy (to hold
array data, which it builds from raw bytes with :func:`numpy.frombuffer`).

Any global that is not on the allow-list, any attempt to call a class name,
any persistent id, out-of-band buffer or malformed stream makes
:func:`decode` raise :class:`NotNeutral`; callers then keep the original bytes
as an opaque value. A stream that unpickles fine but holds something the value
model cannot express (a lambda, a set, a custom class) raises
:class:`NotNeutral` too.
"""
from __future__ import annotations

import collections
import io
import math
import pickle
import re
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .budget import ImportBudget

__all__ = [
    "NotNeutral",
    "RestrictedUnpickler",
    "GlobalName",
    "restricted_loads",
    "to_neutral",
    "decode",
    "CONSTRUCTORS",
    "CLASS_REF_PREFIXES",
    "describe_globals",
]


class NotNeutral(Exception):
    """The pickle cannot be rebuilt as a neutral value; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# ---------------------------------------------------------------------------
# Stand-ins
# ---------------------------------------------------------------------------

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class GlobalName:
    """A reference to a global (a class or a function) by name; never resolved.

    Returned by :meth:`RestrictedUnpickler.find_class` for names under
    :data:`CLASS_REF_PREFIXES`. It cannot be called or instantiated: a pickle
    that tries to build an object from it is refused (the value goes opaque).
    """

    __slots__ = ("module", "qualname")

    def __init__(self, module: str, qualname: str):
        self.module = module
        self.qualname = qualname

    def __call__(self, *args, **kwargs):
        raise NotNeutral(f"the pickle calls {self.module}.{self.qualname}, which is not allowed")

    def __reduce__(self):  # never pickled back: a stand-in is not the real object
        raise TypeError("GlobalName stand-ins cannot be pickled")

    def __repr__(self):
        return f"GlobalName({self.module!r}, {self.qualname!r})"

    def __eq__(self, other):
        return isinstance(other, GlobalName) and (self.module, self.qualname) == (other.module, other.qualname)

    def __hash__(self):
        return hash((self.module, self.qualname))


class _StandInType:
    """Base of stand-in classes that pickles instantiate with NEWOBJ + BUILD."""

    _pickle_module: str = ""
    _pickle_name: str = ""

    def __setstate__(self, state):
        if isinstance(state, tuple) and len(state) == 2 and (state[1] is None or isinstance(state[1], dict)):
            state, slotstate = state
        else:
            slotstate = None
        if state is not None and not isinstance(state, dict):
            raise NotNeutral(f"unexpected state for {self._pickle_module}.{self._pickle_name}")
        self.__dict__["_state"] = dict(state or {})
        if slotstate:
            self.__dict__["_state"].update(slotstate)

    @property
    def state(self) -> dict:
        return self.__dict__.get("_state", {})


_STANDIN_TYPES: dict[tuple[str, str], type] = {}


def _standin_type(base: type, module: str, name: str) -> type:
    """One stand-in subclass of ``base`` per pickled (module, name)."""
    key = (module, name)
    t = _STANDIN_TYPES.get(key)
    if t is None:
        t = type(name, (base,), {"_pickle_module": module, "_pickle_name": name, "__module__": __name__})
        _STANDIN_TYPES[key] = t
    return t


# ---- numpy -----------------------------------------------------------------

# dtype strings a pickle may name; anything else (structured dtypes, ...) is refused.
_DTYPE_STR = re.compile(r"^(b1|[iu][1248]|f[248]|c(8|16)|U[0-9]*|S[0-9]*|O[48]?|M8|m8|V[0-9]+)$")


class _DType:
    """Stand-in for ``numpy.dtype(obj, align, copy)`` (+ BUILD with its state tuple)."""

    def __init__(self, obj, align=False, copy=False):
        if not isinstance(obj, str) or not _DTYPE_STR.match(obj):
            raise NotNeutral(f"unsupported numpy dtype {obj!r}")
        self.code = obj
        self.dtype = np.dtype(obj)

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) < 2:
            raise NotNeutral("malformed numpy dtype state")
        order = state[1]
        # fields/names (state[3], state[4] in version 3/4 states) must be empty
        if len(state) >= 5 and (state[3] is not None or state[4] is not None):
            raise NotNeutral("structured numpy dtypes are not supported")
        if order in ("<", ">"):
            self.dtype = self.dtype.newbyteorder(order)
        elif order not in ("|", "=", None):
            raise NotNeutral(f"unsupported numpy byte order {order!r}")


def _np_dtype(x) -> np.dtype:
    if isinstance(x, _DType):
        return x.dtype
    raise NotNeutral("expected a numpy dtype")


def _check_shape(shape) -> tuple:
    if not isinstance(shape, tuple) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise NotNeutral("malformed array shape")
    if len(shape) > 32:
        raise NotNeutral("array has too many dimensions")
    return shape


def _array_from_bytes(buf, dtype: np.dtype, shape: tuple, fortran: bool) -> np.ndarray:
    if dtype.hasobject or dtype.itemsize == 0:
        raise NotNeutral(f"numpy arrays of dtype {dtype} are not supported")
    if isinstance(buf, str):  # protocol 2 from Python 2 / latin-1 strings
        buf = buf.encode("latin-1")
    if not isinstance(buf, (bytes, bytearray)):
        raise NotNeutral("numpy array data is not a byte string")
    count = math.prod(shape)
    if count * dtype.itemsize != len(buf):
        raise NotNeutral("numpy array data does not match its shape")
    arr = np.frombuffer(bytes(buf), dtype=dtype, count=count)
    return arr.reshape(shape, order="F" if fortran else "C").copy(order="C")


def _frombuffer(buf, dtype, shape, order="C"):
    """Stand-in for ``numpy._core.numeric._frombuffer`` (protocol 5 arrays)."""
    if isinstance(buf, pickle.PickleBuffer):
        buf = bytes(buf.raw())
    return _array_from_bytes(buf, _np_dtype(dtype), _check_shape(tuple(shape)), order == "F")


_NDARRAY = GlobalName("numpy", "ndarray")


class _Reconstructed:
    """Stand-in for ``numpy.core.multiarray._reconstruct(ndarray, shape, b'b')`` + BUILD."""

    def __init__(self, subtype, shape, typecode):
        if subtype != _NDARRAY:
            raise NotNeutral("only plain numpy.ndarray objects are supported")
        self.array: Optional[np.ndarray] = None

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise NotNeutral("malformed numpy array state")
        if len(state) == 5:
            _version, shape, dtype, fortran, raw = state
        else:
            shape, dtype, fortran, raw = state
        self.array = _array_from_bytes(raw, _np_dtype(dtype), _check_shape(tuple(shape)), bool(fortran))


def _scalar(dtype, data=None):
    """Stand-in for ``numpy.core.multiarray.scalar(dtype, bytes)``."""
    dt = _np_dtype(dtype)
    if dt.hasobject:
        raise NotNeutral("numpy object scalars are not supported")
    if isinstance(data, str):
        data = data.encode("latin-1")
    if not isinstance(data, (bytes, bytearray)) or len(data) != dt.itemsize:
        raise NotNeutral("malformed numpy scalar")
    return np.frombuffer(bytes(data), dtype=dt, count=1)[0]


class _RNG:
    """Stand-in for NumPy random generators, bit generators and seed sequences.

    Sample generators are not part of a space (spec §8): whatever state they
    carry is accepted and dropped.
    """

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass


def _rng_ctor(*args, **kwargs):
    return _RNG()


# ---- python builtins ---------------------------------------------------------

def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    """Stand-in for ``_codecs.encode``, used by protocol 2 for bytes."""
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1", "iso-8859-1"):
        raise NotNeutral("unsupported _codecs.encode call")
    return obj.encode("latin-1")


def _safe_getattr(obj, name, *default):
    """Stand-in for ``builtins.getattr``: only enum members of known stand-ins."""
    if isinstance(obj, type) and issubclass(obj, _TrainFrequencyUnitBase) and name in ("STEP", "EPISODE"):
        return obj(name.lower())
    raise NotNeutral("the pickle calls getattr, which is only allowed for known enums")


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


_BUILTIN_TYPE_NAMES = ("bool", "bytes", "complex", "dict", "float", "int", "list", "object", "str", "tuple", "type")

# Python 2 module names that protocol 0-2 pickles use (pickle's fix_imports)
_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}


def _bytearray(*args):
    """Stand-in for ``builtins.bytearray``: only from bytes (or a latin-1 string), never ``bytearray(n)``."""
    if not args:
        return bytearray()
    if len(args) == 1 and isinstance(args[0], (bytes, bytearray)):
        return bytearray(args[0])
    if len(args) == 2 and isinstance(args[0], str) and args[1] in ("latin-1", "latin1"):
        return bytearray(args[0].encode("latin-1"))
    raise NotNeutral("unsupported bytearray call")


def _copyreg_reconstructor(cls, base, state):
    """Stand-in for ``copyreg._reconstructor`` (protocol 0/1 objects) on stand-in types only."""
    if base != _BuiltinName("builtins", "object"):
        raise NotNeutral("copyreg._reconstructor with a base that is not object")
    if not (isinstance(cls, type) and issubclass(cls, _StandInType)) or state is not None:
        raise NotNeutral("copyreg._reconstructor on a type that is not allowed")
    return cls.__new__(cls)


# ---- spaces -----------------------------------------------------------------

class _Space(_StandInType):
    """Stand-in for gymnasium / gym space classes (NEWOBJ, then BUILD with __dict__)."""

    kind = ""


_SPACE_KINDS = {
    "box": ("Box", "box"),
    "discrete": ("Discrete", "discrete"),
    "multi_discrete": ("MultiDiscrete", "multi_discrete"),
    "multi_binary": ("MultiBinary", "multi_binary"),
    "dict": ("Dict", "dict"),
    "tuple": ("Tuple", "tuple"),
    "text": ("Text", "text"),
}


# ---- stable-baselines3 ---------------------------------------------------------

class _Schedule(_StandInType):
    """Stand-in for SB3 schedule classes (FloatSchedule, LinearSchedule, ConstantSchedule)."""


class _TrainFreq(tuple):
    """Stand-in for SB3's ``TrainFreq`` namedtuple (frequency, unit)."""

    _pickle_module = "stable_baselines3.common.type_aliases"
    _pickle_name = "TrainFreq"

    def __new__(cls, *args):
        if len(args) != 2:
            raise NotNeutral("malformed TrainFreq")
        return tuple.__new__(cls, args)


class _TrainFrequencyUnitBase:
    """Stand-in for SB3's ``TrainFrequencyUnit`` enum (values "step", "episode")."""

    _pickle_module = "stable_baselines3.common.type_aliases"
    _pickle_name = "TrainFrequencyUnit"

    def __init__(self, value):
        if value not in ("step", "episode"):
            raise NotNeutral(f"unknown TrainFrequencyUnit {value!r}")
        self.value = value


# ---- cloudpickle (functions pickled by value) ------------------------------------

class _Code:
    """Stand-in for ``types.CodeType(...)``: records the arguments, builds nothing."""

    def __init__(self, *args):
        if len(args) < 14:
            raise NotNeutral("malformed code object")
        self.args = args
        # In every CPython layout cloudpickle writes (3.8 to 3.13), the last two
        # arguments are co_freevars and co_cellvars.
        self.freevars = args[-2]
        names = [a for a in args if isinstance(a, str)]
        # co_filename, co_name (and co_qualname on 3.11+) are the string arguments
        self.name = names[1] if len(names) >= 2 else None
        if not isinstance(self.freevars, tuple) or not all(isinstance(v, str) for v in self.freevars):
            raise NotNeutral("malformed code object")


class _Cell:
    """Stand-in for a closure cell."""

    _EMPTY = object()

    def __init__(self, value=_EMPTY):
        self.value = value


_EMPTY_CELL_VALUE = GlobalName("cloudpickle.cloudpickle", "_empty_cell_value")


def _make_empty_cell():
    return _Cell()


def _make_cell(value=_EMPTY_CELL_VALUE):
    return _Cell() if value == _EMPTY_CELL_VALUE else _Cell(value)


def _cell_set(cell, value):
    if not isinstance(cell, _Cell):
        raise NotNeutral("cell_set on something that is not a cell")
    cell.value = value


class _ModuleRef:
    """Stand-in for ``cloudpickle.subimport(name)``: the name only, nothing is imported."""

    def __init__(self, name):
        self.name = name


class _Function:
    """Stand-in for a function pickled by value; its code is never built or run."""

    def __init__(self, code, globals_=None, name=None, argdefs=None, closure=None):
        if not isinstance(code, _Code):
            raise NotNeutral("function without a code object")
        self.code = code
        self.globals = globals_
        self.closure = list(closure) if closure is not None else None
        self.attrs: dict = {}

    def closure_values(self) -> dict:
        """Free variable name -> cell content (never runs anything)."""
        if self.closure is None:
            return {}
        if len(self.closure) != len(self.code.freevars):
            raise NotNeutral("closure does not match the code's free variables")
        out = {}
        for name, cell in zip(self.code.freevars, self.closure):
            if not isinstance(cell, _Cell) or cell.value is _Cell._EMPTY:
                raise NotNeutral("empty closure cell")
            out[name] = cell.value
        return out

    @property
    def module(self):
        return self.attrs.get("__module__")

    @property
    def qualname(self):
        return self.attrs.get("__qualname__") or self.attrs.get("qualname")


def _function_setstate(obj, state):
    """Stand-in for cloudpickle's ``_function_setstate``: records __module__, __qualname__, closure."""
    if not isinstance(obj, _Function) or not isinstance(state, tuple) or len(state) != 2:
        raise NotNeutral("malformed function state")
    state, slotstate = state
    if not isinstance(slotstate, dict):
        raise NotNeutral("malformed function state")
    closure = slotstate.get("__closure__")
    if closure is not None:
        if obj.closure is None or len(closure) != len(obj.closure):
            raise NotNeutral("malformed function closure")
        for mine, given in zip(obj.closure, closure):
            if isinstance(given, _Cell) and given.value is not _Cell._EMPTY:
                mine.value = given.value
    for k in ("__module__", "__qualname__", "__name__"):
        if k in slotstate:
            obj.attrs[k] = slotstate[k]


def _make_skel_func(code, cell_count, base_globals=None):
    """Stand-in for cloudpickle < 1.5 ``_make_skel_func``."""
    if not isinstance(cell_count, int) or cell_count > 4096:
        raise NotNeutral("malformed function skeleton")
    closure = None if cell_count < 0 else [_Cell() for _ in range(cell_count)]
    return _Function(code, base_globals, None, None, closure)


def _fill_function(*args):
    """Stand-in for cloudpickle < 1.5 ``_fill_function`` (both argument layouts)."""
    if not args or not isinstance(args[0], _Function):
        raise NotNeutral("malformed function")
    func = args[0]
    if len(args) == 2 and isinstance(args[1], dict):
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
        if func.closure is None or len(values) != len(func.closure):
            raise NotNeutral("malformed function closure")
        for cell, v in zip(func.closure, values):
            cell.value = v
    return func


def _builtin_type(name):
    """Stand-in for cloudpickle's ``_builtin_type``: code, function and cell types, as recorders."""
    if name == "CodeType":
        return _Code
    if name in ("FunctionType", "LambdaType"):  # cloudpickle 1.x builds functions with types.FunctionType
        return _Function
    if name == "CellType":
        return _Cell
    raise NotNeutral(f"the pickle asks for types.{name}, which is not allowed")


# ---------------------------------------------------------------------------
# The allow-list
# ---------------------------------------------------------------------------

def _build_constructors() -> dict[tuple[str, str], Any]:
    c: dict[tuple[str, str], Any] = {}
    # numpy, both the 1.x (numpy.core) and 2.x (numpy._core) module names
    c[("numpy", "dtype")] = _DType
    c[("numpy", "ndarray")] = _NDARRAY
    for core in ("numpy.core", "numpy._core"):
        c[(core + ".multiarray", "_reconstruct")] = _Reconstructed
        c[(core + ".multiarray", "scalar")] = _scalar
        c[(core + ".numeric", "_frombuffer")] = _frombuffer
    for name in ("__generator_ctor", "__bit_generator_ctor", "__randomstate_ctor"):
        c[("numpy.random._pickle", name)] = _rng_ctor
    c[("numpy.random", "__RandomState_ctor")] = _rng_ctor
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
        c[(mod, "__pyx_unpickle_SeedSequence")] = _rng_ctor
    # python
    c[("collections", "OrderedDict")] = collections.OrderedDict
    c[("collections", "deque")] = collections.deque
    c[("builtins", "set")] = set
    c[("builtins", "frozenset")] = frozenset
    c[("builtins", "bytearray")] = _bytearray
    c[("builtins", "getattr")] = _safe_getattr
    for name in _BUILTIN_TYPE_NAMES:
        c.setdefault(("builtins", name), _BuiltinName("builtins", name))
    c[("_codecs", "encode")] = _codecs_encode
    c[("copyreg", "_reconstructor")] = _copyreg_reconstructor
    # spaces: gymnasium and the old gym
    for pkg in ("gymnasium", "gym"):
        for kind, (cls, _) in _SPACE_KINDS.items():
            t = _standin_type(_Space, f"{pkg}.spaces.{kind}", cls)
            t.kind = kind
            c[(f"{pkg}.spaces.{kind}", cls)] = t
    # stable-baselines3
    for name in ("FloatSchedule", "LinearSchedule", "ConstantSchedule"):
        c[("stable_baselines3.common.utils", name)] = _standin_type(_Schedule, "stable_baselines3.common.utils", name)
    c[("stable_baselines3.common.type_aliases", "TrainFreq")] = _TrainFreq
    c[("stable_baselines3.common.type_aliases", "TrainFrequencyUnit")] = _TrainFrequencyUnitBase
    # cloudpickle: functions pickled by value, only so that their closure can be read
    for mod in ("cloudpickle.cloudpickle", "cloudpickle.cloudpickle_fast"):
        c[(mod, "_builtin_type")] = _builtin_type
        c[(mod, "_make_function")] = _Function
        c[(mod, "_function_setstate")] = _function_setstate
        c[(mod, "_make_empty_cell")] = _make_empty_cell
        c[(mod, "_make_cell")] = _make_cell
        c[(mod, "_empty_cell_value")] = _EMPTY_CELL_VALUE
        c[(mod, "subimport")] = _ModuleRef
        c[(mod, "_make_skel_func")] = _make_skel_func
        c[(mod, "_fill_function")] = _fill_function
        c[(mod, "cell_set")] = _cell_set
    return c


#: (module, name) -> stand-in. The only globals a pickle may use as constructors.
CONSTRUCTORS: dict[tuple[str, str], Any] = _build_constructors()

#: Globals under these module prefixes may appear as *names* (class references:
#: policy classes, buffer classes, activation functions, optimizer classes).
#: They are recorded, never imported, and cannot be called.
CLASS_REF_PREFIXES: tuple[str, ...] = (
    "stable_baselines3.",
    "sb3_contrib.",
    "stable_baselines.",
    "torch.nn.modules.",
    "torch.optim.",
    "tensorflow.python.ops.",
)


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that resolves globals only through :data:`CONSTRUCTORS`.

    ``find_class`` never imports a module. A global that is neither a
    constructor on the allow-list nor a name under :data:`CLASS_REF_PREFIXES`
    raises :class:`NotNeutral`, which aborts the whole load.
    """

    def __init__(self, file):
        super().__init__(file, fix_imports=False, encoding="latin-1", errors="strict", buffers=())
        self.globals_seen: list[tuple[str, str]] = []

    def find_class(self, module: str, name: str):  # noqa: D401 - pickle API
        self.globals_seen.append((module, name))
        if not isinstance(module, str) or not isinstance(name, str):
            raise NotNeutral("malformed global")
        module = _PY2_MODULES.get(module, module)
        found = CONSTRUCTORS.get((module, name))
        if found is not None:
            return found
        if module.startswith(CLASS_REF_PREFIXES) and _IDENT.match(module) and _IDENT.match(name):
            return GlobalName(module, name)
        raise NotNeutral(f"the pickle needs the global {module}.{name}, which is not on the allow-list")

    def persistent_load(self, pid):
        raise NotNeutral("persistent ids are not allowed")


def restricted_loads(data: bytes) -> Any:
    """Unpickle ``data`` into a stand-in graph, running no code from it.

    Raises :class:`NotNeutral` for any disallowed global or malformed stream.
    """
    try:
        up = RestrictedUnpickler(io.BytesIO(data))
        obj = up.load()
    except NotNeutral:
        raise
    except RecursionError:
        raise NotNeutral("the pickle nests too deeply") from None
    except Exception as e:  # malformed stream, NEWOBJ on a name, ...
        raise NotNeutral(f"the pickle cannot be read safely: {type(e).__name__}: {e}") from None
    return obj


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

_MAX_NODES = 1_000_000  # parts of one value
_MAX_BROADCAST_BYTES = 1 << 28  # a Box bound given as a scalar is expanded up to this size

# closures of the old SB3 schedule helpers, readable from their cells
_SB_UTIL_MODULES = ("stable_baselines3.common.utils",)


def _number(x, what: str):
    if isinstance(x, bool):
        raise NotNeutral(f"{what} is not a number")
    if isinstance(x, np.generic) and np.issubdtype(type(x), np.number) and not np.issubdtype(type(x), np.complexfloating):
        x = x.item()
    if not isinstance(x, (int, float)) or (isinstance(x, float) and not math.isfinite(x)):
        raise NotNeutral(f"{what} is not a finite number")
    return x


class _Neutralizer:
    def __init__(self):
        from .. import schedules as _schedules
        from .. import spaces as _spaces
        from .. import values as _values

        self.spaces = _spaces
        self.schedules = _schedules
        self.values = _values
        self.depth = 0
        self.nodes = 0

    # -- generic ----------------------------------------------------------
    def convert(self, obj):
        self.depth += 1
        self.nodes += 1
        if self.depth > 60:
            raise NotNeutral("value nests too deeply")
        if self.nodes > _MAX_NODES:  # shared references could otherwise blow up exponentially
            raise NotNeutral(f"value has more than {_MAX_NODES} parts")
        try:
            return self._convert(obj)
        finally:
            self.depth -= 1

    def _convert(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            return float(obj)
        if isinstance(obj, bytes):
            return bytes(obj)
        if isinstance(obj, bytearray):
            return bytes(obj)
        if isinstance(obj, np.ndarray):
            return self._array(obj)
        if isinstance(obj, np.generic):
            self._dtype_code(obj.dtype)
            return obj
        if isinstance(obj, _Reconstructed):
            if obj.array is None:
                raise NotNeutral("numpy array without data")
            return self._array(obj.array)
        if isinstance(obj, _TrainFreq):
            freq, unit = obj
            return (self.convert(freq), self.convert(unit))
        if isinstance(obj, _TrainFrequencyUnitBase):
            return obj.value
        if isinstance(obj, collections.deque):
            return [self.convert(v) for v in obj]
        if isinstance(obj, list):
            return [self.convert(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.convert(v) for v in obj)
        if isinstance(obj, dict):  # dict and OrderedDict
            out = {}
            for k, v in obj.items():
                nk = self.convert(k)
                if isinstance(nk, np.generic):
                    raise NotNeutral("numpy scalar as a map key")
                out[nk] = self.convert(v)
            return out
        if isinstance(obj, _Space):
            return self._space(obj)
        if isinstance(obj, (_Schedule, _Function)):
            return self._schedule(obj)
        if isinstance(obj, GlobalName):
            return self._classref(obj.module, obj.qualname)
        if isinstance(obj, type) and issubclass(obj, (_StandInType, _TrainFrequencyUnitBase, _TrainFreq)):
            return self._classref(obj._pickle_module, obj._pickle_name)
        if isinstance(obj, (set, frozenset)):
            raise NotNeutral("sets have no neutral form")
        if isinstance(obj, _RNG):
            raise NotNeutral("random generators have no neutral form")
        if isinstance(obj, _DType):
            raise NotNeutral("a bare numpy dtype has no neutral form")
        raise NotNeutral(f"no neutral form for {type(obj).__name__}")

    def _classref(self, module, qualname):
        if not (_IDENT.match(module) and _IDENT.match(qualname)):
            raise NotNeutral(f"{module}.{qualname} is not a plain class name")
        return self.values.ClassRef(module, qualname)

    # -- arrays -----------------------------------------------------------
    def _dtype_code(self, dtype) -> str:
        from ..dtypes import code_of_numpy

        code = code_of_numpy(dtype)
        if code is None:
            raise NotNeutral(f"numpy dtype {dtype} has no rlarchive dtype code")
        return code

    def _array(self, arr: np.ndarray) -> np.ndarray:
        self._dtype_code(arr.dtype)
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        return arr

    def _as_dtype(self, arr, dtype: np.dtype, what: str) -> np.ndarray:
        a = arr.array if isinstance(arr, _Reconstructed) else arr
        if isinstance(a, np.generic) or isinstance(a, (int, float)):
            a = np.asarray(a)
        if not isinstance(a, np.ndarray):
            raise NotNeutral(f"{what} is not an array")
        if a.dtype != dtype:
            b = a.astype(dtype)
            with np.errstate(invalid="ignore"):
                same = np.array_equal(b.astype(a.dtype), a, equal_nan=a.dtype.kind == "f")
            if not same:
                raise NotNeutral(f"{what} does not fit the space's dtype")
            a = b
        return self._array(np.ascontiguousarray(a))

    # -- spaces -----------------------------------------------------------
    def _space(self, sp: _Space):
        st = sp.state
        S = self.spaces
        kind = type(sp).kind

        def dtype(default=None) -> np.dtype:
            d = st.get("dtype", default)
            if isinstance(d, _DType):
                return d.dtype.newbyteorder("<") if d.dtype.byteorder == ">" else d.dtype
            if d is None and default is not None:
                return np.dtype(default)
            raise NotNeutral("space without a dtype")

        def shape():
            s = st.get("_shape", st.get("shape"))
            if not isinstance(s, tuple):
                raise NotNeutral("space without a shape")
            return _check_shape(tuple(int(x) if isinstance(x, np.integer) else x for x in s))

        if kind == "box":
            dt = dtype()
            shp = shape()
            low = st.get("low")
            high = st.get("high")
            if low is None or high is None:
                raise NotNeutral("Box without bounds")
            low = self._as_dtype(low, dt, "Box.low")
            high = self._as_dtype(high, dt, "Box.high")
            if (low.shape != shp or high.shape != shp) and math.prod(shp) * dt.itemsize > _MAX_BROADCAST_BYTES:
                raise NotNeutral("Box bounds would expand beyond the size limit")
            if low.shape != shp:
                low = np.ascontiguousarray(np.broadcast_to(low, shp))
            if high.shape != shp:
                high = np.ascontiguousarray(np.broadcast_to(high, shp))
            return S.Box(low, high, shp, self._dtype_code(dt))
        if kind == "discrete":
            dt = dtype("int64")
            n = _number(st.get("n"), "Discrete.n")
            start = _number(st.get("start", 0), "Discrete.start")
            if not isinstance(n, int) or not isinstance(start, int):
                raise NotNeutral("Discrete with non-integer bounds")
            return S.Discrete(n, start, self._dtype_code(dt))
        if kind == "multi_discrete":
            dt = dtype("int64")
            nvec = self._as_dtype(st.get("nvec"), dt, "MultiDiscrete.nvec")
            start = st.get("start")
            start = np.zeros_like(nvec) if start is None else self._as_dtype(start, dt, "MultiDiscrete.start")
            return S.MultiDiscrete(nvec, start, self._dtype_code(dt))
        if kind == "multi_binary":
            n = st.get("n")
            if isinstance(n, (np.ndarray, _Reconstructed)):
                a = n.array if isinstance(n, _Reconstructed) else n
                n = tuple(int(x) for x in a.reshape(-1)) if a.ndim else int(a)
            elif isinstance(n, (tuple, list)):
                n = tuple(_number(x, "MultiBinary.n") for x in n)
            else:
                n = _number(n, "MultiBinary.n")
            return S.MultiBinary(n)
        if kind == "dict":
            spaces = st.get("spaces")
            if not isinstance(spaces, dict):
                raise NotNeutral("Dict space without sub-spaces")
            pairs = []
            for k, v in spaces.items():
                if not isinstance(k, str):
                    raise NotNeutral("Dict space with a key that is not a string")
                if not isinstance(v, _Space):
                    raise NotNeutral("Dict space holds something that is not a space")
                pairs.append((k, self.convert(v)))
            return S.Dict(tuple(pairs))
        if kind == "tuple":
            spaces = st.get("spaces")
            if not isinstance(spaces, (tuple, list)) or not all(isinstance(v, _Space) for v in spaces):
                raise NotNeutral("Tuple space without sub-spaces")
            return S.Tuple(tuple(self.convert(v) for v in spaces))
        if kind == "text":
            chars = st.get("_char_str")
            if chars is None:
                cl = st.get("_char_list") or st.get("_char_set")
                if cl is None:
                    raise NotNeutral("Text space without a charset")
                chars = "".join(cl)
            if not isinstance(chars, str):
                raise NotNeutral("Text space with a malformed charset")
            charset = "".join(sorted(set(chars)))
            return S.Text(
                _number(st.get("max_length"), "Text.max_length"),
                _number(st.get("min_length", 1), "Text.min_length"),
                charset,
            )
        raise NotNeutral(f"unsupported space {type(sp).__name__}")

    # -- schedules ---------------------------------------------------------
    def _schedule(self, obj):
        Sch = self.schedules
        if isinstance(obj, _Schedule):
            st = obj.state
            name = type(obj)._pickle_name
            if name == "FloatSchedule":
                inner = st.get("value_schedule")
                if isinstance(inner, (int, float)) and not isinstance(inner, bool):
                    return Sch.Constant(float(inner))
                if not isinstance(inner, (_Schedule, _Function)):
                    raise NotNeutral("FloatSchedule wraps something that is not a known schedule")
                return self._schedule(inner)
            if name == "ConstantSchedule":
                return Sch.Constant(_number(st.get("val"), "ConstantSchedule.val"))
            if name == "LinearSchedule":
                return self._linear(st.get("start"), st.get("end"), st.get("end_fraction"))
            raise NotNeutral(f"unknown schedule {name}")
        # a function pickled by value: recognised only for SB3's own closures
        mod, qual = obj.module, obj.qualname
        cells = obj.closure_values()
        free = tuple(sorted(cells))
        if mod in _SB_UTIL_MODULES:
            if qual == "constant_fn.<locals>.func" and free == ("val",):
                return Sch.Constant(_number(cells["val"], "constant_fn value"))
            if qual == "get_linear_fn.<locals>.func" and free == ("end", "end_fraction", "start"):
                return self._linear(cells["start"], cells["end"], cells["end_fraction"])
            if qual == "get_schedule_fn.<locals>.<lambda>" and free == ("value_schedule",):
                inner = cells["value_schedule"]
                if isinstance(inner, (int, float)) and not isinstance(inner, bool):
                    return Sch.Constant(float(inner))
                if isinstance(inner, (_Schedule, _Function)):
                    return self._schedule(inner)
        raise NotNeutral(f"the function {mod}.{qual} is not a known schedule (its code is never run)")

    def _linear(self, start, end, end_fraction):
        start = _number(start, "LinearSchedule.start")
        end = _number(end, "LinearSchedule.end")
        ef = _number(end_fraction, "LinearSchedule.end_fraction")
        if not (0 < ef <= 1):
            raise NotNeutral("LinearSchedule.end_fraction is outside (0, 1]")
        return self.schedules.Linear(start, end, ef)


def to_neutral(obj: Any, *, budget: Optional["ImportBudget"] = None) -> Any:
    """Convert a stand-in graph from :func:`restricted_loads` to neutral rlarchive values.

    ``budget``, when given, is charged for what the conversion allocates
    (:mod:`rlarchive.interop.budget`). Raises :class:`NotNeutral` if any part
    has no neutral form.
    """
    try:
        return _Neutralizer().convert(obj)
    except NotNeutral:
        raise
    except RecursionError:
        raise NotNeutral("value nests too deeply") from None
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError) as e:
        raise NotNeutral(f"{type(e).__name__}: {e}") from None


def decode(data: bytes, *, budget: Optional["ImportBudget"] = None) -> Any:
    """Unpickle ``data`` with :class:`RestrictedUnpickler` and return its neutral value.

    ``budget``, when given, is charged for every array, expansion and copy the
    stream asks for; an exhausted budget raises ``RlarchiveError``
    (``LIMIT_EXCEEDED``), not :class:`NotNeutral`.

    Raises :class:`NotNeutral` (with a reason) when the stream needs a global
    outside the allow-list or holds something without a neutral form. Never
    executes code from the stream.
    """
    return to_neutral(restricted_loads(data), budget=budget)


def pickled_type_name(data: bytes) -> Optional[str]:
    """A display name for the type a pickle rebuilds, read from its first global, or None."""
    g = describe_globals(data)
    if not g:
        return None
    mod, name = g[0]
    return f"{mod}.{name}"
