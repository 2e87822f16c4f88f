"""The restricted unpickler's conversions: a stand-in graph to neutral rlarchive values.

:func:`to_neutral` walks the graph :func:`~rlarchive.unpickle.machine.restricted_loads`
built and returns the values the writer takes: numbers, strings, arrays,
spaces (spec §8), schedules, class references; a recorded call
(:class:`~rlarchive.unpickle.standins.Unknown`) goes to
:func:`rlarchive.unpickle.recorded.convert`. Every part of the output, every
reference to a value and every copy is charged to the import budget before
it is made; a stand-in converts once (memoised by identity).
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable
from typing import cast

import numpy as np

from .. import schedules, spaces, values
from ..errors import RlarchiveError
from ..limits import MAX_INLINE_ARRAY_BYTES, MAX_JSON_DEPTH, MAX_NDIM
from . import recorded
from .budget import DEFAULT_IMPORT_BUDGET, ImportBudget
from .functions import Function
from .machine import contain, restricted_loads
from .numpy_values import RNG, Array, DType, Scalar, check_shape
from .standins import (
    IDENT,
    NODE_COST,
    Ctor,
    Frozen,
    FrozenMeta,
    GlobalName,
    NotNeutral,
    Schedule,
    Space,
    StandInType,
    TrainFreq,
    TrainFrequencyUnit,
    Unknown,
    check_int,
    check_key,
    describe,
)

__all__ = ["to_neutral", "decode"]


_MAX_NODES = 1_000_000  # parts of one value, counting every reference
_MAX_BROADCAST_BYTES = 1 << 28  # a Box bound given as a scalar is expanded up to this size
# A data member's value starts at JSON depth 3 (the document, then "data").
_MAX_LEVELS = MAX_JSON_DEPTH - 2

# closures of the old SB3 schedule helpers, readable from their cells
_SB_UTIL_MODULES = ("stable_baselines3.common.utils",)
# the RL Zoo's linear schedule (initial value x, value p * x): a class since May 2025, a closure before
# (module utils.utils before the zoo became the rl_zoo3 package)
_ZOO_SCHEDULE_CLASS = GlobalName("rl_zoo3.utils", "SimpleLinearSchedule")
_ZOO_MODULES = ("rl_zoo3.utils", "utils.utils")
_ZOO_CLOSURE = "linear_schedule.<locals>.func"
_ZOO_FREE = (("initial_value",), ("initial_value_",))

# JSON nesting levels a space takes in the value model (its sub-spaces add theirs)
_SPACE_LEVELS = {"box": 3, "multi_discrete": 3, "multi_binary": 2, "dict": 3, "tuple": 2, "discrete": 1, "text": 1}


def _number(x: object, what: str) -> int | float:
    if isinstance(x, bool):
        raise NotNeutral(f"{what} is not a number")
    if isinstance(x, Scalar):
        x = x.value
    if (
        isinstance(x, np.generic)
        and np.issubdtype(type(x), np.number)
        and not np.issubdtype(type(x), np.complexfloating)
    ):
        x = x.item()
    if type(x) is int:
        return check_int(x)
    if type(x) is not float or not math.isfinite(x):
        raise NotNeutral(f"{what} is not a finite number")
    return x


def _integer(x: object, what: str) -> int:
    """``x`` as an int (a NumPy integer taken as one); a float, even a whole one, is refused."""
    n = _number(x, what)
    if type(n) is not int:
        raise NotNeutral(f"{what} is not an integer")
    return n


def _levels(obj: object) -> int:
    """JSON nesting levels the value of ``obj`` takes when written (an upper bound)."""
    if obj is None or isinstance(obj, (bool, str, TrainFrequencyUnit)):
        return 0
    if isinstance(obj, (int, float)):
        return 0 if isinstance(obj, float) and math.isfinite(obj) or isinstance(obj, int) and abs(obj) < 2**53 else 1
    if isinstance(obj, tuple):
        return 2
    if isinstance(obj, (list, collections.deque)):
        return 1
    if isinstance(obj, dict):
        return 1 if all(type(k) is str for k in obj) and "$type" not in obj else 3
    if isinstance(obj, Space):
        return _SPACE_LEVELS.get(type(obj).kind, 3)
    if isinstance(obj, Array):
        return 2
    if isinstance(obj, (Schedule, Function, Unknown)):
        return 2
    return 1


def _space_dtype(sp: Space, default: str | None = None) -> np.dtype:
    """The space's dtype, little-endian (``default`` when it has none)."""
    d = sp.get("dtype")
    if isinstance(d, DType):
        return d.dtype.newbyteorder("<") if d.dtype.byteorder == ">" else d.dtype
    if d is None and default is not None:
        return np.dtype(default)
    raise NotNeutral("space without a dtype")


def _space_shape(sp: Space) -> tuple[int, ...]:
    """The space's shape (NumPy integers in it taken as ints)."""
    s = sp.get("_shape", sp.get("shape"))
    if not isinstance(s, tuple):
        raise NotNeutral("space without a shape")
    return check_shape(
        tuple(int(x.value) if isinstance(x, Scalar) and isinstance(x.value, np.integer) else x for x in s)
    )


class _Neutralizer:
    """Converts one stand-in graph, charging ``budget`` for what the output holds and what it copies."""

    def __init__(self, budget: ImportBudget, nested: int = 0):
        self.budget = budget
        self.nested = nested  # pickles this one is nested in (pickle.loads of bytes)
        self.level = 0  # JSON levels of the value being converted
        self.peak = 0
        self.nodes = 0
        self.referenced = 0  # bytes charged for the output so far
        # id -> (the object, kept alive; its value; bytes and parts per reference; JSON levels)
        self.memo: dict[int, tuple[object, object, int, int, int]] = {}
        self.arrays: dict[tuple[object, ...], np.ndarray] = {}  # copies made from a source array, by (id, ...)

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
    def convert(self, obj: object) -> object:
        key = id(obj) if isinstance(obj, (tuple, Frozen)) else None
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
        self.refer(NODE_COST, "a value")
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

    def _convert(self, obj: object) -> object:
        if obj is None or isinstance(obj, bool):
            return obj
        if isinstance(obj, str):
            self.refer(len(obj) if obj.isascii() else 4 * len(obj), "a string")
            return str(obj)
        if isinstance(obj, int):
            return check_int(int(obj))
        if isinstance(obj, float):
            return float(obj)
        if isinstance(obj, (bytes, bytearray)):
            self.refer(len(obj), "a byte string")
            return bytes(obj)
        if isinstance(obj, Array):
            arr = self._source(obj, "numpy array")
            self.refer(arr.nbytes, "an array")
            return arr
        if isinstance(obj, Scalar):
            self._dtype_code(obj.value.dtype)
            return obj.value
        if isinstance(obj, TrainFreq):
            freq, unit = obj
            return (self.convert(freq), self.convert(unit))
        if isinstance(obj, TrainFrequencyUnit):
            return obj.value
        if isinstance(obj, (list, collections.deque)):
            return [self.convert(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.convert(v) for v in obj)
        if isinstance(obj, dict):
            out: dict[object, object] = {}
            for k, v in obj.items():
                nk = self.convert(k)
                if isinstance(nk, (np.generic, np.ndarray)):
                    raise NotNeutral("numpy value as a map key")
                check_key(nk)
                out[nk] = self.convert(v)
            return out
        if isinstance(obj, Space):
            return self._space(obj)
        if isinstance(obj, (Schedule, Function)):
            return self._schedule(obj)
        if isinstance(obj, GlobalName):
            return self._classref(obj.module, obj.qualname)
        if isinstance(obj, FrozenMeta) and issubclass(obj, (StandInType, TrainFrequencyUnit, TrainFreq)):
            return self._classref(obj._pickle_module, obj._pickle_name)
        if isinstance(obj, (set, frozenset)):
            raise NotNeutral("sets have no neutral form")
        if isinstance(obj, RNG):
            raise NotNeutral("random generators have no neutral form")
        if isinstance(obj, DType):
            raise NotNeutral("a bare numpy dtype has no neutral form")
        if isinstance(obj, Ctor):
            raise NotNeutral(f"the function {obj.label()} has no neutral form")
        if isinstance(obj, Unknown):
            if obj.func == _ZOO_SCHEDULE_CLASS:
                return self._schedule(obj)
            return recorded.convert(obj, self.budget.charge, self.nested, self._decode_nested)
        raise NotNeutral(f"no neutral form for {describe(obj)}")

    def _decode_nested(self, data: bytes) -> object:
        """A pickle inside this value (``pickle.loads(data)``), converted with the same budget."""
        inner = _Neutralizer(self.budget, self.nested + 1)
        return inner.top(restricted_loads(data, budget=self.budget))

    def top(self, obj: object) -> object:
        """The neutral value of a whole pickle; one that is only an opaque leaf raises NotNeutral (the original bytes are kept)."""
        value = self.convert(obj)
        if isinstance(value, values.Opaque):
            raise NotNeutral(value.note or "no neutral form")
        return value

    def _classref(self, module: object, qualname: object) -> values.ClassRef:
        if not (
            type(module) is str and type(qualname) is str and IDENT.fullmatch(module) and IDENT.fullmatch(qualname)
        ):
            raise NotNeutral("a class name that is not a plain identifier path")
        return values.ClassRef(module, qualname)

    # -- arrays -----------------------------------------------------------
    def _dtype_code(self, dtype: np.dtype) -> str:
        from ..dtypes import code_of_numpy

        code = code_of_numpy(dtype)
        if code is None:
            raise NotNeutral(f"numpy dtype {dtype} has no rlarchive dtype code")
        return code

    def _once(self, key: tuple[object, ...], make: Callable[[], np.ndarray]) -> np.ndarray:
        """The array made by ``make`` for ``key``, made only the first time."""
        arr = self.arrays.get(key)
        if arr is None:
            arr = self.arrays[key] = make()
        return arr

    def _source(self, x: object, what: str) -> np.ndarray:
        """A little-endian array for an array stand-in or a number (byte-swapped once per stand-in)."""
        if isinstance(x, Array):
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
        if isinstance(x, Scalar):
            x = x.value
        if isinstance(x, np.generic):
            self._dtype_code(x.dtype)
            return np.asarray(x).astype(x.dtype.newbyteorder("<"))
        if type(x) is bool or type(x) is float or (type(x) is int and -(2**63) <= x < 2**64):
            a = np.asarray(x)
            if a.dtype.kind in "biuf":
                return a
        raise NotNeutral(f"{what} is not an array")

    def _cast(self, x: object, dtype: np.dtype, what: str) -> np.ndarray:
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

        return self._once((id(x), dtype.str), cast) if isinstance(x, Array) else cast()

    def _bound(self, x: object, dtype: np.dtype, shape: tuple[int, ...], what: str) -> np.ndarray:
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

        return self._once((id(x), dtype.str, shape), broadcast) if isinstance(x, Array) else broadcast()

    # -- spaces -----------------------------------------------------------
    def _space(self, sp: Space) -> spaces.Space:
        space = self._build_space(sp)
        self._check_space(space)
        return space

    def _check_space(self, space: spaces.Space) -> None:
        """Refuse a space that breaks a rule of spec §8 (the writer would refuse it)."""
        if isinstance(space, spaces.MultiDiscrete) and space.nvec.nbytes > MAX_INLINE_ARRAY_BYTES:
            raise NotNeutral("MultiDiscrete.nvec is too large to be written inline")
        try:
            node = spaces.to_json(space, values.Encoder("arrays", {}, -1).encode, "")
            values.Checker().check(node, "")
        except RlarchiveError as e:
            raise NotNeutral(f"the space breaks a rule of spec §8: {e}") from None

    def _build_space(self, sp: Space) -> spaces.Space:
        builders: dict[str, Callable[[Space], spaces.Space]] = {
            "box": self._box,
            "discrete": self._discrete,
            "multi_discrete": self._multi_discrete,
            "multi_binary": self._multi_binary,
            "dict": self._dict_space,
            "tuple": self._tuple_space,
            "text": self._text,
        }
        build = builders.get(type(sp).kind)
        if build is None:
            raise NotNeutral(f"unsupported space {type(sp).__name__}")
        return build(sp)

    def _box(self, sp: Space) -> spaces.Box:
        dt = _space_dtype(sp)
        code = self._dtype_code(dt)
        shp = _space_shape(sp)
        low, high = sp.get("low"), sp.get("high")
        if low is None or high is None:
            raise NotNeutral("Box without bounds")
        low = self._bound(low, dt, shp, "Box.low")
        high = self._bound(high, dt, shp, "Box.high")
        self.refer(low.nbytes + high.nbytes, "Box bounds")
        return spaces.Box(low, high, shp, code)

    def _discrete(self, sp: Space) -> spaces.Discrete:
        dt = _space_dtype(sp, "int64")
        n = _number(sp.get("n"), "Discrete.n")
        start = _number(sp.get("start", 0), "Discrete.start")
        if type(n) is not int or type(start) is not int:
            raise NotNeutral("Discrete with non-integer bounds")
        return spaces.Discrete(n, start, self._dtype_code(dt))

    def _multi_discrete(self, sp: Space) -> spaces.MultiDiscrete:
        dt = _space_dtype(sp, "int64")
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
        return spaces.MultiDiscrete(nvec, start, code)

    def _multi_binary(self, sp: Space) -> spaces.MultiBinary:
        n = sp.get("n")
        if isinstance(n, Array):
            a = self._source(n, "MultiBinary.n")
            if a.dtype.kind not in "iu" or a.ndim > 1 or a.size > MAX_NDIM:
                raise NotNeutral("malformed MultiBinary.n")
            n = tuple(check_int(int(x)) for x in a.reshape(-1)) if a.ndim else check_int(int(a))
        elif isinstance(n, (tuple, list)):
            if len(n) > MAX_NDIM:
                raise NotNeutral("MultiBinary has too many dimensions")
            n = tuple(_integer(x, "MultiBinary.n") for x in n)
        else:
            n = _integer(n, "MultiBinary.n")
        return spaces.MultiBinary(n)

    def _dict_space(self, sp: Space) -> spaces.Dict:
        subspaces = sp.get("spaces")
        if type(subspaces) is not dict:
            raise NotNeutral("Dict space without sub-spaces")
        pairs: list[tuple[str, spaces.Space]] = []
        for k, v in subspaces.items():
            if type(k) is not str:
                raise NotNeutral("Dict space with a key that is not a string")
            if not isinstance(v, Space):
                raise NotNeutral("Dict space holds something that is not a space")
            self.refer(len(k), "a Dict space key")
            pairs.append((k, self._subspace(v)))
        return spaces.Dict(tuple(pairs))

    def _tuple_space(self, sp: Space) -> spaces.Tuple:
        subspaces = sp.get("spaces")
        if not isinstance(subspaces, (tuple, list)) or not all(isinstance(v, Space) for v in subspaces):
            raise NotNeutral("Tuple space without sub-spaces")
        return spaces.Tuple(tuple(self._subspace(v) for v in subspaces))

    def _subspace(self, v: Space) -> spaces.Space:
        """A sub-space, converted (memoised) like any value: what :meth:`_space` built for it."""
        return cast("spaces.Space", self.convert(v))

    def _text(self, sp: Space) -> spaces.Text:
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
        return spaces.Text(
            _integer(sp.get("max_length"), "Text.max_length"),
            _integer(sp.get("min_length", 1), "Text.min_length"),
            charset,
        )

    # -- schedules ---------------------------------------------------------
    def _schedule(self, obj: Schedule | Function | Unknown, depth: int = 0) -> schedules.Schedule:
        if depth > 8:
            raise NotNeutral("schedules nest too deeply")
        if isinstance(obj, Schedule):
            name = type(obj)._pickle_name
            if name == "FloatSchedule":
                inner = obj.get("value_schedule")
                if type(inner) in (int, float):
                    return schedules.Constant(float(_number(inner, "FloatSchedule.value_schedule")))
                if not isinstance(inner, (Schedule, Function, Unknown)):
                    raise NotNeutral("FloatSchedule wraps something that is not a known schedule")
                return self._schedule(inner, depth + 1)
            if name == "ConstantSchedule":
                return schedules.Constant(_number(obj.get("val"), "ConstantSchedule.val"))
            if name == "LinearSchedule":
                return self._linear(obj.get("start"), obj.get("end"), obj.get("end_fraction"))
            raise NotNeutral(f"unknown schedule {name}")
        if isinstance(obj, Unknown):
            return self._zoo_class(obj)
        # a function pickled by value: recognised only for SB3's own closures and the RL Zoo's
        mod, qual = obj.module, obj.qualname
        if type(mod) is str and type(qual) is str and mod in _SB_UTIL_MODULES:
            cells = obj.closure_values()
            free = tuple(sorted(cells))
            if qual == "constant_fn.<locals>.func" and free == ("val",):
                return schedules.Constant(_number(cells["val"], "constant_fn value"))
            if qual == "get_linear_fn.<locals>.func" and free == ("end", "end_fraction", "start"):
                return self._linear(cells["start"], cells["end"], cells["end_fraction"])
            if qual == "get_schedule_fn.<locals>.<lambda>" and free == ("value_schedule",):
                inner = cells["value_schedule"]
                if type(inner) in (int, float):
                    return schedules.Constant(float(_number(inner, "get_schedule_fn value")))
                if isinstance(inner, (Schedule, Function, Unknown)):
                    return self._schedule(inner, depth + 1)
        if type(mod) is str and type(qual) is str and mod in _ZOO_MODULES and qual == _ZOO_CLOSURE:
            cells = obj.closure_values()
            free = tuple(sorted(cells))
            if free in _ZOO_FREE:
                return self._linear(cells[free[0]], 0.0, 1.0)
        raise NotNeutral(
            f"the function {describe(mod)} {describe(qual)} is not a known schedule (its code is never run)"
        )

    def _zoo_class(self, obj: Unknown) -> schedules.Linear:
        """The RL Zoo's ``SimpleLinearSchedule(x)`` (value ``p * x``) as ``linear`` from x to 0 over the whole run."""
        if obj.func != _ZOO_SCHEDULE_CLASS or obj.args or obj.kwargs or not obj.has_state:
            raise NotNeutral(f"{obj.label()} is not a known schedule (nothing of it is run)")
        state = obj.state
        if type(state) is not dict or set(state) != {"initial_value"}:
            raise NotNeutral("SimpleLinearSchedule without exactly its initial_value")
        return self._linear(state["initial_value"], 0.0, 1.0)

    def _linear(self, start: object, end: object, end_fraction: object) -> schedules.Linear:
        start = _number(start, "LinearSchedule.start")
        end = _number(end, "LinearSchedule.end")
        ef = _number(end_fraction, "LinearSchedule.end_fraction")
        if not (0 < ef <= 1):
            raise NotNeutral("LinearSchedule.end_fraction is outside (0, 1]")
        return schedules.Linear(start, end, ef)


def to_neutral(obj: object, *, budget: ImportBudget | None = None) -> object:
    """Convert a stand-in graph from :func:`restricted_loads` to neutral rlarchive values.

    ``budget`` (a fresh default :class:`~rlarchive.unpickle.budget.ImportBudget`
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
        raise contain(e, "the value cannot be converted") from None


def decode(data: bytes, *, budget: ImportBudget | None = None) -> object:
    """Unpickle ``data`` with :class:`RestrictedUnpickler` and return its neutral value.

    ``budget`` (a fresh default :class:`~rlarchive.unpickle.budget.ImportBudget`
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
