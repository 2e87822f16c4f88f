"""The stand-ins of the restricted unpickler: what a pickle may build, and nothing more.

:class:`~rlarchive.unpickle.machine.RestrictedUnpickler` never builds
a real object of a class a pickle names. It builds a *stand-in*: an
immutable object of this package that holds what the pickle gave it. This
module holds the base of every stand-in (:class:`Frozen`, whose metaclass
refuses any change to a class once made), the reference to a global by name
(:class:`GlobalName`), the record of a call never made (:class:`Unknown`),
the allow-listed callables (:class:`Ctor`) and the stand-ins of gymnasium
spaces and Stable-Baselines3 classes. NumPy values are in
:mod:`~rlarchive.unpickle.numpy_values`, functions pickled by value in
:mod:`~rlarchive.unpickle.functions`.

Only this package's own code sets a stand-in's slots (:func:`set_slot`);
``BUILD`` reaches only the :class:`Buildable` ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import ClassVar, Concatenate, NoReturn, TypeAlias

from ..limits import MAX_INT_DIGITS
from .budget import ImportBudget

__all__ = [
    "NotNeutral",
    "IDENT",
    "NODE_COST",
    "describe",
    "check_int",
    "check_key",
    "Context",
    "FrozenMeta",
    "set_slot",
    "Frozen",
    "GlobalName",
    "BuiltinName",
    "Ctor",
    "StandInFunction",
    "Buildable",
    "Unknown",
    "StandInType",
    "standin_type",
    "Space",
    "SPACE_KINDS",
    "Schedule",
    "TrainFreq",
    "TrainFrequencyUnit",
]


class NotNeutral(Exception):
    """The pickle cannot be rebuilt as a neutral value; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")

#: Bytes charged for each opcode read and each part of a converted value.
NODE_COST = 64
#: Integers of more bits than this have more than MAX_INT_DIGITS decimal digits.
_MAX_INT_BITS = (10**MAX_INT_DIGITS - 1).bit_length()
_INT_LIMIT = 10**MAX_INT_DIGITS


def describe(x: object) -> str:
    """A short description of a value from the stream, never its full repr (which may be huge)."""
    if isinstance(x, str):
        return repr(x[:60]) + ("..." if len(x) > 60 else "")
    if x is None or type(x) in (bool, float):
        return repr(x)
    if type(x) is int:
        return repr(x) if x.bit_length() <= 64 else "a large integer"
    if isinstance(x, FrozenMeta):
        return f"the stand-in class {x.__name__}"
    return f"a {type(x).__name__}"


def check_int(n: int) -> int:
    """``n`` if its decimal form has at most MAX_INT_DIGITS digits (decided without converting it)."""
    if n.bit_length() > _MAX_INT_BITS or (n.bit_length() == _MAX_INT_BITS and abs(n) >= _INT_LIMIT):
        raise NotNeutral(f"an integer has more than {MAX_INT_DIGITS} decimal digits")
    return n


class Context:
    """What one unpickler's stand-ins share: the import budget."""

    __slots__ = ("budget",)
    budget: ImportBudget

    def __init__(self, budget: ImportBudget):
        self.budget = budget

    def charge(self, nbytes: int, what: str) -> None:
        """Charge ``nbytes`` to the budget before they are allocated (LIMIT_EXCEEDED past it)."""
        self.budget.charge(nbytes, what)


#: An allow-listed function behind a :class:`Ctor`: called with the unpickler's context, then the pickle's arguments.
#: (A string: ``Concatenate`` ending in ``...`` is valid at run time from Python 3.11 only.)
StandInFunction: TypeAlias = "Callable[Concatenate[Context, ...], object]"


class FrozenMeta(type):
    """Metaclass of every stand-in class: once created, a class cannot be changed."""

    def __setattr__(cls, name: str, value: object) -> NoReturn:
        raise AttributeError(f"stand-in class {cls.__name__} is immutable")

    def __delattr__(cls, name: str) -> NoReturn:
        raise AttributeError(f"stand-in class {cls.__name__} is immutable")


def set_slot(obj: Frozen, name: str, value: object) -> None:
    """Set a slot of a stand-in (only the unpickler's own modules do that; a pickle never can)."""
    object.__setattr__(obj, name, value)


class Frozen(metaclass=FrozenMeta):
    """Base of every stand-in: no ``__dict__``, attributes cannot be set from outside, BUILD refused."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"stand-in {type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"stand-in {type(self).__name__} is immutable")

    def __setstate__(self, state: object) -> None:
        raise NotNeutral(f"the pickle sets the state of {self.label()}, which takes none")

    def __reduce_ex__(self, protocol: object) -> NoReturn:  # never pickled back: a stand-in is not the real object
        raise TypeError("stand-ins cannot be pickled")

    def label(self) -> str:
        return f"a {type(self).__name__} stand-in"


class GlobalName(Frozen):
    """A reference to a global (a class or a function) by name; never resolved here.

    Returned by :meth:`RestrictedUnpickler.find_class` for every plain
    identifier path off the allow-list (and for the few allow-listed names of
    Annex B.5). It cannot be changed; calling or instantiating it only
    records the call (:class:`Unknown`).
    """

    __slots__ = ("module", "qualname")
    module: str
    qualname: str

    def __init__(self, module: str, qualname: str):
        set_slot(self, "module", module)
        set_slot(self, "qualname", qualname)

    def __call__(self, *args: object, **kwargs: object) -> object:
        """The record of the call (an :class:`Unknown`), never the call."""
        recorded: dict[object, object] = {k: v for k, v in kwargs.items()}  # a record's keys may be of any type
        return Unknown(self, args, recorded or None)

    def label(self) -> str:
        return f"{self.module}.{self.qualname}"

    def __repr__(self) -> str:
        return f"GlobalName({self.module!r}, {self.qualname!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GlobalName) and (self.module, self.qualname) == (other.module, other.qualname)

    def __hash__(self) -> int:
        return hash((self.module, self.qualname))


class BuiltinName(GlobalName):
    """A builtin type used as a name (e.g. in a function's annotations).

    ``bytes()`` with no argument is the only call allowed: protocol 2 pickles
    ``b""`` that way.
    """

    __slots__ = ()

    def __call__(self, *args: object, **kwargs: object) -> object:
        if self.qualname == "bytes" and not args and not kwargs:
            return b""
        return super().__call__(*args, **kwargs)


class Ctor(Frozen):
    """An allow-listed global a pickle may call: an immutable callable.

    The entry in :data:`CONSTRUCTORS` is unbound; :meth:`RestrictedUnpickler.find_class`
    hands the stream a copy bound to that unpickler's context (its budget).
    The function behind it is never reachable from the stream.
    """

    __slots__ = ("module", "name", "_fn", "_ctx")
    module: str
    name: str
    _fn: StandInFunction
    _ctx: Context | None

    def __init__(self, module: str, name: str, fn: StandInFunction, ctx: Context | None = None):
        set_slot(self, "module", module)
        set_slot(self, "name", name)
        set_slot(self, "_fn", fn)
        set_slot(self, "_ctx", ctx)

    def bind(self, ctx: Context) -> Ctor:
        """This constructor, bound to one unpickler's context."""
        return Ctor(self.module, self.name, self._fn, ctx)

    def __call__(self, *args: object, **kwargs: object) -> object:
        if self._ctx is None:
            raise NotNeutral(f"{self.label()} is called outside RestrictedUnpickler")
        return self._fn(self._ctx, *args, **kwargs)

    def label(self) -> str:
        return f"{self.module}.{self.name}"

    def __repr__(self) -> str:
        return f"<allowed constructor {self.label()}>"


class Buildable(Frozen):
    """Base of the stand-ins that accept BUILD (their ``__setstate__`` is designed for it)."""

    __slots__ = ()


class Unknown(Buildable):
    """What a call of a global off the allow-list would have made: the call, recorded and never made.

    ``func`` is the :class:`GlobalName` the stream called (or instantiated,
    ``new``), ``args``/``kwargs`` its arguments (stand-ins), ``state`` what
    ``BUILD`` gave it (set at most once). The conversion recognises a few
    (Stable-Baselines3 enums, torch tensors, ``pickle.loads`` of bytes) and
    turns any other into an opaque leaf: a pickle of exactly this call,
    written again with :mod:`rlarchive.unpickle.pickler`.
    """

    __slots__ = ("func", "args", "kwargs", "new", "state", "has_state")
    func: GlobalName
    args: tuple[object, ...]
    kwargs: dict[object, object] | None
    new: bool
    state: object
    has_state: bool

    def __init__(
        self, func: GlobalName, args: tuple[object, ...], kwargs: dict[object, object] | None, new: bool = False
    ):
        set_slot(self, "func", func)
        set_slot(self, "args", args)
        set_slot(self, "kwargs", kwargs)
        set_slot(self, "new", new)
        set_slot(self, "state", None)
        set_slot(self, "has_state", False)

    def __setstate__(self, state: object) -> None:
        if self.has_state:
            raise NotNeutral(f"the pickle sets the state of {self.label()} twice")
        set_slot(self, "state", state)
        set_slot(self, "has_state", True)

    def label(self) -> str:
        return f"an object made by {self.func.label()}"


_KEY_LEAVES = (type(None), bool, int, float, str, bytes)
_MAX_KEY_PARTS = 1024
_MAX_KEY_DEPTH = 16


def check_key(key: object) -> None:
    """Refuse a map key whose hash would be costly or recursive (a deep or widely shared tuple)."""
    todo: list[tuple[object, int]] = [(key, 0)]
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
        if isinstance(k, Frozen) and type(k).__hash__ is object.__hash__ and type(k).__eq__ is object.__eq__:
            continue  # stand-ins compare by identity
        raise NotNeutral(f"{describe(k)} cannot be a map key")


# ---- spaces and SB3 classes ----------------------------------------------------


class StandInType(Buildable):
    """Base of stand-in classes that pickles instantiate with NEWOBJ + BUILD.

    The state (a dict, and the optional slot-state dict) is kept as given: no
    copy is made; :meth:`get` looks a key up in both.
    """

    __slots__ = ("_dict_state", "_slot_state")
    _dict_state: dict[object, object] | None
    _slot_state: dict[object, object] | None
    _pickle_module: ClassVar[str] = ""
    _pickle_name: ClassVar[str] = ""

    def __setstate__(self, state: object) -> None:
        slotstate = None
        if isinstance(state, tuple) and len(state) == 2 and (state[1] is None or type(state[1]) is dict):
            state, slotstate = state
        if state is not None and type(state) is not dict:
            raise NotNeutral(f"unexpected state for {self.label()}")
        set_slot(self, "_dict_state", state)
        set_slot(self, "_slot_state", slotstate)

    def label(self) -> str:
        return f"{self._pickle_module}.{self._pickle_name}"

    def get(self, key: str, default: object = None) -> object:
        """The state value named ``key`` (slot state first, as pickle's BUILD applies it last)."""
        for d in (getattr(self, "_slot_state", None), getattr(self, "_dict_state", None)):
            if d and key in d:
                return d[key]
        return default


def standin_type(base: type[StandInType], module: str, name: str, **attrs: object) -> FrozenMeta:
    """One stand-in subclass of ``base`` per pickled (module, name), immutable once made."""
    ns = {"__slots__": (), "_pickle_module": module, "_pickle_name": name, "__module__": __name__, **attrs}
    return FrozenMeta(name, (base,), ns)


class Space(StandInType):
    """Stand-in for gymnasium / gym space classes (NEWOBJ, then BUILD with __dict__)."""

    __slots__ = ()
    kind: ClassVar[str] = ""


SPACE_KINDS = {
    "box": "Box",
    "discrete": "Discrete",
    "multi_discrete": "MultiDiscrete",
    "multi_binary": "MultiBinary",
    "dict": "Dict",
    "tuple": "Tuple",
    "text": "Text",
}


class Schedule(StandInType):
    """Stand-in for SB3 schedule classes (FloatSchedule, LinearSchedule, ConstantSchedule)."""

    __slots__ = ()


class TrainFreq(Frozen, tuple[object, ...]):
    """Stand-in for SB3's ``TrainFreq`` namedtuple (frequency, unit)."""

    __slots__ = ()
    _pickle_module: ClassVar[str] = "stable_baselines3.common.type_aliases"
    _pickle_name: ClassVar[str] = "TrainFreq"

    def __new__(cls, *args: object) -> TrainFreq:
        if len(args) != 2:
            raise NotNeutral("malformed TrainFreq")
        return tuple.__new__(cls, args)


class TrainFrequencyUnit(Frozen):
    """Stand-in for SB3's ``TrainFrequencyUnit`` enum (values "step", "episode")."""

    __slots__ = ("value",)
    value: str
    _pickle_module: ClassVar[str] = "stable_baselines3.common.type_aliases"
    _pickle_name: ClassVar[str] = "TrainFrequencyUnit"

    def __init__(self, value: object):
        if type(value) is not str or value not in ("step", "episode"):
            raise NotNeutral(f"unknown TrainFrequencyUnit {describe(value)}")
        set_slot(self, "value", value)
