"""The restricted unpickler's machine: the opcode loop over stand-ins, metered and refusing.

:class:`RestrictedUnpickler` is the pure-Python :class:`pickle._Unpickler`
with its dispatch table replaced: ``find_class`` resolves a global only
through :data:`~rlarchive.unpickle.allowlist.CONSTRUCTORS` (or
records a plain name), the opcodes that call, build or fill objects reach
only stand-ins and plain containers, extension codes, persistent ids and
out-of-band buffers are refused, and every opcode is charged to the import
budget before it runs (:func:`metered`). :func:`contain` turns whatever a
stream raises into :class:`~rlarchive.unpickle.standins.NotNeutral`
or ``LIMIT_EXCEEDED``.
"""

from __future__ import annotations

import collections
import io
import pickle
import struct
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeGuard, TypeVar

from ..errors import RlarchiveError
from .allowlist import CONSTRUCTORS, PY2_MODULES
from .budget import DEFAULT_IMPORT_BUDGET, ImportBudget
from .standins import (
    IDENT,
    NODE_COST,
    Buildable,
    Context,
    Ctor,
    Frozen,
    FrozenMeta,
    GlobalName,
    NotNeutral,
    StandInType,
    TrainFreq,
    TrainFrequencyUnit,
    Unknown,
    check_key,
    describe,
)

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "RestrictedUnpickler",
    "Readable",
    "metered",
    "contain",
    "restricted_loads",
    "describe_globals",
    "pickled_type_name",
]


_INSTANTIABLE = (StandInType, TrainFreq, TrainFrequencyUnit)


def _instantiable(x: object) -> TypeGuard[type[Frozen]]:
    return isinstance(x, FrozenMeta) and issubclass(x, _INSTANTIABLE)


#: An opcode handler of the dispatch table.
Handler = Callable[["RestrictedUnpickler"], None]
_U = TypeVar("_U", bound="RestrictedUnpickler")


class Readable(Protocol):
    """What the unpickler reads a stream from: a binary file's ``read(n)`` and ``readline()``."""

    def read(self, n: int, /) -> bytes: ...

    def readline(self) -> bytes: ...


def _refuse(reason: str) -> Handler:
    def load_refused(self: RestrictedUnpickler) -> None:
        raise NotNeutral(reason)

    return load_refused


# the pure-Python implementation: its memo is a dict, its reads never pre-allocate
class RestrictedUnpickler(pickle._Unpickler):
    """An unpickler that resolves globals only through :data:`CONSTRUCTORS`.

    ``find_class`` never imports a module. A global that is neither a
    constructor on the allow-list nor a plain identifier path (recorded as a
    :class:`GlobalName`) raises :class:`NotNeutral`, which aborts the
    whole load; so do the opcodes listed in :mod:`rlarchive.unpickle` when they
    reach anything but the stand-ins designed for them. Every opcode and every
    allocation is charged to ``budget`` (a fresh default
    :class:`~rlarchive.unpickle.budget.ImportBudget` when not given).
    """

    #: opcode -> handler, read-only (the stub's type, a dict of handlers of the C Unpickler, is not this one's)
    dispatch: ClassVar[Mapping[int, Callable[[Self], None]]]  # type: ignore[assignment]
    # what pickle._Unpickler's opcode loop gives the handlers (its type stub does not declare them)
    stack: list[object]
    memo: dict[int, object]
    append: Callable[[object], None]
    read: Callable[[int], bytes]
    pop_mark: Callable[[], list[object]]

    def __init__(self, file: Readable, *, budget: ImportBudget | None = None):
        super().__init__(file, fix_imports=False, encoding="latin-1", errors="strict")
        self.budget = budget if budget is not None else ImportBudget(DEFAULT_IMPORT_BUDGET)
        self._ctx = Context(self.budget)
        self.globals_seen: list[tuple[str, str]] = []

    def find_class(self, module: str, name: str) -> object:  # noqa: D401 - pickle API
        if type(module) is not str or type(name) is not str:
            raise NotNeutral("malformed global")
        self.globals_seen.append((module, name))
        module = PY2_MODULES.get(module, module)
        found = CONSTRUCTORS.get((module, name))
        if isinstance(found, Ctor):
            return found.bind(self._ctx)
        if found is not None:
            return found
        if IDENT.fullmatch(module) and IDENT.fullmatch(name):
            return GlobalName(module, name)
        raise NotNeutral(f"the pickle needs the global {module[:100]}.{name[:100]}, which is not on the allow-list")

    def persistent_load(self, pid: object) -> object:
        raise NotNeutral("persistent ids are not allowed")

    # -- opcodes that call, build or fill objects: stand-ins and plain containers only

    def _call(self, func: object, args: object, kwargs: object = None) -> object:
        if not (isinstance(func, (Ctor, GlobalName)) or _instantiable(func)):
            raise NotNeutral(f"the pickle calls {describe(func)}, which is not an allowed constructor")
        if type(args) is not tuple or not (kwargs is None or type(kwargs) is dict):
            raise NotNeutral("malformed call arguments")
        self.budget.charge(NODE_COST, "an object of the pickle")
        return func(*args, **(kwargs or {}))

    def _new(self, cls: object, args: object, kwargs: object) -> object:
        if type(cls) is GlobalName and type(args) is tuple and type(kwargs) is dict:
            self.budget.charge(NODE_COST, "an object of the pickle")
            return Unknown(cls, args, kwargs or None, new=True)
        if not _instantiable(cls):
            raise NotNeutral(f"the pickle instantiates {describe(cls)}, which is not an allowed class")
        if type(args) is not tuple or type(kwargs) is not dict:
            raise NotNeutral("malformed NEWOBJ arguments")
        self.budget.charge(NODE_COST, "an object of the pickle")
        return cls.__new__(cls, *args, **kwargs)

    def _instantiate(self, klass: object, args: list[object]) -> None:
        if _instantiable(klass) and not args:
            self.append(self._new(klass, (), {}))
        else:
            self.append(self._call(klass, tuple(args)))

    def _load_reduce(self) -> None:
        args = self.stack.pop()
        self.stack[-1] = self._call(self.stack[-1], args)

    def _load_newobj(self) -> None:
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, {}))

    def _load_newobj_ex(self) -> None:
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        self.append(self._new(cls, args, kwargs))

    def _load_build(self) -> None:
        state = self.stack.pop()
        inst = self.stack[-1]
        if not isinstance(inst, Buildable):
            label = inst.label() if isinstance(inst, Frozen) else describe(inst)
            raise NotNeutral(f"the pickle sets the state of {label}, which takes none")
        inst.__setstate__(state)

    def _sequence(self) -> list[object] | collections.deque[object]:
        target = self.stack[-1]
        if type(target) is list or type(target) is collections.deque:
            return target
        raise NotNeutral(f"the pickle appends to {describe(target)}")

    def _load_append(self) -> None:
        value = self.stack.pop()
        self._sequence().append(value)

    def _load_appends(self) -> None:
        items = self.pop_mark()
        self._sequence().extend(items)

    def _mapping(self) -> dict[object, object]:
        target = self.stack[-1]
        if type(target) is not dict:
            raise NotNeutral(f"the pickle sets items of {describe(target)}")
        return target

    def _load_setitem(self) -> None:
        value = self.stack.pop()
        key = self.stack.pop()
        check_key(key)
        self._mapping()[key] = value

    def _load_setitems(self) -> None:
        items = self.pop_mark()
        target = self._mapping()
        for i in range(0, len(items) - 1, 2):
            check_key(items[i])
            target[items[i]] = items[i + 1]

    def _load_dict(self) -> None:
        items = self.pop_mark()
        out: dict[object, object] = {}
        for i in range(0, len(items) - 1, 2):
            check_key(items[i])
            out[items[i]] = items[i + 1]
        self.append(out)

    def _load_empty_set(self) -> None:
        self.append(set())

    def _load_additems(self) -> None:
        items = self.pop_mark()
        target = self.stack[-1]
        if type(target) is not set:
            raise NotNeutral(f"the pickle adds items to {describe(target)}")
        for x in items:
            check_key(x)
        target.update(items)

    def _load_frozenset(self) -> None:
        items = self.pop_mark()
        for x in items:
            check_key(x)
        self.append(frozenset(items))

    def _load_bytearray8(self) -> None:
        size: int
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


def metered(step: Callable[[_U], None]) -> Callable[[_U], None]:
    """An opcode handler that charges the budget before the opcode runs."""

    def metered(self: _U) -> None:
        self.budget.charge(NODE_COST, "an opcode of the pickle")
        step(self)

    return metered


def _dispatch_table() -> Mapping[int, Handler]:
    # the stub types the pure-Python handlers as taking the C Unpickler; they take the pure-Python one
    table: dict[int, Handler] = dict(pickle._Unpickler.dispatch)  # type: ignore[arg-type]
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
    return types.MappingProxyType({k: metered(v) for k, v in table.items()})


RestrictedUnpickler.dispatch = _dispatch_table()


def _reason(e: BaseException) -> str:
    """A bounded description of an exception raised while reading a stream."""
    if isinstance(e, (KeyError, IndexError)):  # their message may repr a value from the stream
        return type(e).__name__
    try:
        return f"{type(e).__name__}: {str(e)[:200]}"
    except Exception:
        return type(e).__name__


def contain(e: Exception, doing: str) -> BaseException:
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


def restricted_loads(data: bytes, *, budget: ImportBudget | None = None) -> object:
    """Unpickle ``data`` into a stand-in graph, running no code from it.

    Raises :class:`NotNeutral` for any disallowed global or malformed stream,
    and ``RlarchiveError`` (``LIMIT_EXCEEDED``) when ``budget`` runs out.
    """
    try:
        return RestrictedUnpickler(io.BytesIO(data), budget=budget).load()
    except Exception as e:  # malformed stream, a refused opcode, ...
        raise contain(e, "the pickle cannot be read safely") from None


def describe_globals(data: bytes) -> list[tuple[str, str]]:
    """The globals a pickle stream names, read from its opcodes without loading it.

    Follows string literals through the memo so that protocol 4/5
    ``STACK_GLOBAL`` names are found; best effort, for display only.
    """
    import pickletools

    out: list[tuple[str, str]] = []
    memo: dict[object, str | None] = {}
    last: list[str | None] = []  # the last two values pushed, when they are strings (else None)
    try:
        for op, arg, _pos in pickletools.genops(data):
            name = op.name
            if name in ("GLOBAL", "INST"):
                mod, _, attr = str(arg).partition(" ")
                out.append((mod, attr))
                last.append(None)
            elif name in (
                "SHORT_BINUNICODE",
                "BINUNICODE",
                "BINUNICODE8",
                "UNICODE",
                "STRING",
                "BINSTRING",
                "SHORT_BINSTRING",
            ):
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


def pickled_type_name(data: bytes) -> str | None:
    """A display name for the type a pickle rebuilds, read from its first global, or None."""
    g = describe_globals(data)
    if not g:
        return None
    mod, name = g[0]
    return f"{mod}.{name}"
