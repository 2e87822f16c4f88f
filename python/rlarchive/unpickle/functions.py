"""Stand-ins for functions pickled by value (cloudpickle): their closures are read, their code never built.

Stable-Baselines3 once stored schedules as closures (``constant_fn``,
``get_linear_fn``); cloudpickle writes such a function as a code object, a
closure of cells and a state. These stand-ins record the code's free
variables and the cells' contents so that the conversion can recognise a
known schedule; no code object or function is ever made.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .standins import NODE_COST, Context, Ctor, Frozen, GlobalName, NotNeutral, StandInFunction, describe, set_slot

__all__ = ["Function", "EMPTY_CELL_VALUE", "CLOUDPICKLE_CONSTRUCTORS"]


# ---- cloudpickle (functions pickled by value) ------------------------------------


class _Code(Frozen):
    """Stand-in for ``types.CodeType(...)``: records the names it needs, builds nothing."""

    __slots__ = ("freevars", "name")
    freevars: tuple[str, ...]
    name: str | None

    def __init__(self, args: tuple[object, ...]):
        if not 14 <= len(args) <= 24:
            raise NotNeutral("malformed code object")
        # In every CPython layout cloudpickle writes (3.8 to 3.13), the last two
        # arguments are co_freevars and co_cellvars.
        freevars = args[-2]
        if not isinstance(freevars, tuple) or not all(type(v) is str for v in freevars):
            raise NotNeutral("malformed code object")
        names = [a for a in args if type(a) is str]
        # co_filename, co_name (and co_qualname on 3.11+) are the string arguments
        set_slot(self, "freevars", freevars)
        set_slot(self, "name", names[1] if len(names) >= 2 else None)


def _code(ctx: Context, *args: object) -> _Code:
    return _Code(args)


_EMPTY = object()  # the content of an empty cell


class _Cell(Frozen):
    """Stand-in for a closure cell."""

    __slots__ = ("value",)
    value: object

    def __init__(self, value: object = _EMPTY):
        set_slot(self, "value", value)


EMPTY_CELL_VALUE = GlobalName("cloudpickle.cloudpickle", "_empty_cell_value")


def _cell(ctx: Context, *args: object) -> _Cell:
    """``types.CellType()`` or ``types.CellType(value)``."""
    if len(args) > 1:
        raise NotNeutral("malformed cell")
    return _Cell(*args)


def _make_empty_cell(ctx: Context) -> _Cell:
    return _Cell()


def _make_cell(ctx: Context, value: object = EMPTY_CELL_VALUE) -> _Cell:
    return _Cell() if isinstance(value, GlobalName) and value == EMPTY_CELL_VALUE else _Cell(value)


def _cell_set(ctx: Context, cell: object, value: object) -> None:
    if not isinstance(cell, _Cell):
        raise NotNeutral("cell_set on something that is not a cell")
    set_slot(cell, "value", value)


class _ModuleRef(Frozen):
    """Stand-in for ``cloudpickle.subimport(name)``: the name only, nothing is imported."""

    __slots__ = ("name",)
    name: object

    def __init__(self, name: object):
        set_slot(self, "name", name)


def _subimport(ctx: Context, name: object) -> _ModuleRef:
    return _ModuleRef(name)


class Function(Frozen):
    """Stand-in for a function pickled by value; its code is never built or run."""

    __slots__ = ("code", "closure", "attrs")
    code: _Code
    closure: list[object] | None
    attrs: dict[str, object]

    def __init__(self, code: _Code, closure: list[object] | None):
        set_slot(self, "code", code)
        set_slot(self, "closure", closure)
        set_slot(self, "attrs", {})

    def closure_values(self) -> dict[str, object]:
        """Free variable name -> cell content (never runs anything)."""
        if self.closure is None:
            return {}
        if len(self.closure) != len(self.code.freevars):
            raise NotNeutral("closure does not match the code's free variables")
        out: dict[str, object] = {}
        for name, cell in zip(self.code.freevars, self.closure):
            if not isinstance(cell, _Cell) or cell.value is _EMPTY:
                raise NotNeutral("empty closure cell")
            out[name] = cell.value
        return out

    @property
    def module(self) -> object:
        return self.attrs.get("__module__")

    @property
    def qualname(self) -> object:
        return self.attrs.get("__qualname__") or self.attrs.get("qualname")


def _make_function(
    ctx: Context,
    code: object,
    globals_: object = None,
    name: object = None,
    argdefs: object = None,
    closure: object = None,
) -> Function:
    """Stand-in for ``types.FunctionType(code, globals, name, argdefs, closure)``."""
    if not isinstance(code, _Code):
        raise NotNeutral("function without a code object")
    if closure is not None:
        if not isinstance(closure, (tuple, list)) or len(closure) != len(code.freevars):
            raise NotNeutral("malformed function closure")
        ctx.charge(8 * len(closure), "a function's closure")
        closure = list(closure)
    return Function(code, closure)


def _function_setstate(ctx: Context, obj: object, state: object) -> None:
    """Stand-in for cloudpickle's ``_function_setstate``: records __module__, __qualname__, closure."""
    if not isinstance(obj, Function) or not isinstance(state, tuple) or len(state) != 2:
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
                set_slot(mine, "value", given.value)
    for k in ("__module__", "__qualname__", "__name__"):
        if k in slotstate:
            obj.attrs[k] = slotstate[k]


def _make_skel_func(ctx: Context, code: object, cell_count: object, base_globals: object = None) -> Function:
    """Stand-in for cloudpickle < 1.5 ``_make_skel_func``."""
    if not isinstance(code, _Code) or type(cell_count) is not int or cell_count > 4096:
        raise NotNeutral("malformed function skeleton")
    if cell_count < 0:
        return Function(code, None)
    ctx.charge(NODE_COST * cell_count, "a function's closure")
    return Function(code, [_Cell() for _ in range(cell_count)])


def _fill_function(ctx: Context, *args: object) -> Function:
    """Stand-in for cloudpickle < 1.5 ``_fill_function`` (both argument layouts)."""
    if not args or not isinstance(args[0], Function):
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
            if not isinstance(cell, _Cell):  # a closure of _make_function holds what the stream gave
                raise NotNeutral("malformed function closure")
            set_slot(cell, "value", v)
    return func


_BUILTIN_TYPES: Mapping[str, StandInFunction] = {
    "CodeType": _code,
    "FunctionType": _make_function,  # cloudpickle 1.x builds functions with types.FunctionType
    "LambdaType": _make_function,
    "CellType": _cell,
}


def _builtin_type(ctx: Context, name: object) -> Ctor:
    """Stand-in for cloudpickle's ``_builtin_type``: code, function and cell types, as recorders."""
    if type(name) is not str or name not in _BUILTIN_TYPES:
        raise NotNeutral(f"the pickle asks for types.{describe(name)}, which is not allowed")
    return Ctor("types", name, _BUILTIN_TYPES[name], ctx)


#: cloudpickle's helper name -> the stand-in called in its place (in both
#: ``cloudpickle.cloudpickle`` and ``cloudpickle.cloudpickle_fast``).
CLOUDPICKLE_CONSTRUCTORS: Mapping[str, StandInFunction] = MappingProxyType(
    {
        "_builtin_type": _builtin_type,
        "_make_function": _make_function,
        "_function_setstate": _function_setstate,
        "_make_empty_cell": _make_empty_cell,
        "_make_cell": _make_cell,
        "subimport": _subimport,
        "_make_skel_func": _make_skel_func,
        "_fill_function": _fill_function,
        "cell_set": _cell_set,
    }
)
