"""The allow-list of the restricted unpickler (Annex B.5): the only globals a pickle may call.

:data:`CONSTRUCTORS` maps a (module, name) a pickle asks for to its
stand-in: a stand-in class, a :class:`~rlarchive.unpickle.standins.GlobalName`
that may only be referred to, or an unbound
:class:`~rlarchive.unpickle.standins.Ctor` that the unpickler binds
to its own budget. The Python builtins a pickle may call are defined here,
each refusing anything but the plain forms pickles use.
"""

from __future__ import annotations

import collections
import types
from collections.abc import Mapping
from typing import TypeVar

from .functions import CLOUDPICKLE_CONSTRUCTORS, EMPTY_CELL_VALUE
from .numpy_values import NDARRAY, dtype_ctor, frombuffer, reconstruct, rng_ctor, scalar
from .standins import (
    NODE_COST,
    SPACE_KINDS,
    BuiltinName,
    Context,
    Ctor,
    FrozenMeta,
    GlobalName,
    NotNeutral,
    Schedule,
    Space,
    StandInFunction,
    StandInType,
    TrainFreq,
    TrainFrequencyUnit,
    check_key,
    standin_type,
)

__all__ = ["CONSTRUCTORS", "Allowed", "PY2_MODULES"]


# ---- python builtins ---------------------------------------------------------


def _codecs_encode(ctx: Context, obj: object, encoding: object = "utf-8", errors: object = "strict") -> bytes:
    """Stand-in for ``_codecs.encode``, used by protocol 2 for bytes."""
    if not isinstance(obj, str) or type(encoding) is not str or encoding not in ("latin1", "latin-1", "iso-8859-1"):
        raise NotNeutral("unsupported _codecs.encode call")
    ctx.charge(len(obj), "a byte string")
    return obj.encode("latin-1")


def _safe_getattr(ctx: Context, obj: object, name: object, *default: object) -> TrainFrequencyUnit:
    """Stand-in for ``builtins.getattr``: only the members of ``TrainFrequencyUnit``."""
    if obj is TrainFrequencyUnit and type(name) is str and name in ("STEP", "EPISODE"):
        return TrainFrequencyUnit(name.lower())
    raise NotNeutral("the pickle calls getattr, which is only allowed for known enums")


_BUILTIN_TYPE_NAMES = ("bool", "bytes", "complex", "dict", "float", "int", "list", "object", "str", "tuple", "type")

# Python 2 module names that protocol 0-2 pickles use (pickle's fix_imports)
PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}


def _bytearray(ctx: Context, *args: object) -> bytearray:
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


_SetT = TypeVar("_SetT", set[object], frozenset[object])


def _set_of(ctx: Context, kind: type[_SetT], items: object) -> _SetT:
    if not isinstance(items, (list, tuple)):
        raise NotNeutral(f"unsupported {kind.__name__} call")
    ctx.charge(NODE_COST * (1 + len(items)), f"a {kind.__name__}")
    for x in items:
        check_key(x)
    return kind(items)


def _set_ctor(ctx: Context, items: object = ()) -> set[object]:
    """Stand-in for ``builtins.set`` (from a list or a tuple; gymnasium's Text keeps its charset in one)."""
    return _set_of(ctx, set, items)


def _frozenset_ctor(ctx: Context, items: object = ()) -> frozenset[object]:
    """Stand-in for ``builtins.frozenset`` (from a list or a tuple)."""
    return _set_of(ctx, frozenset, items)


def _ordered_dict(ctx: Context, items: object = ()) -> dict[object, object]:
    """Stand-in for ``collections.OrderedDict``: a plain dict (dicts keep their order)."""
    if not isinstance(items, (list, tuple)):
        raise NotNeutral("unsupported OrderedDict call")
    ctx.charge(NODE_COST * len(items), "an OrderedDict")
    out: dict[object, object] = {}
    for pair in items:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise NotNeutral("unsupported OrderedDict call")
        check_key(pair[0])
        out[pair[0]] = pair[1]
    return out


def _deque(ctx: Context, iterable: object = (), maxlen: object = None) -> collections.deque[object]:
    """Stand-in for ``collections.deque`` (from a list or a tuple only)."""
    if not isinstance(iterable, (list, tuple)) or not (maxlen is None or (type(maxlen) is int and 0 <= maxlen < 2**62)):
        raise NotNeutral("unsupported deque call")
    ctx.charge(NODE_COST + 8 * len(iterable), "a deque")
    return collections.deque(iterable, maxlen)


def _copyreg_reconstructor(ctx: Context, cls: object, base: object, state: object) -> StandInType:
    """Stand-in for ``copyreg._reconstructor`` (protocol 0/1 objects) on stand-in types only."""
    if not (isinstance(base, GlobalName) and base == GlobalName("builtins", "object")):
        raise NotNeutral("copyreg._reconstructor with a base that is not object")
    if (
        not (isinstance(cls, FrozenMeta) and issubclass(cls, StandInType) and cls is not StandInType)
        or state is not None
    ):
        raise NotNeutral("copyreg._reconstructor on a type that is not allowed")
    return cls.__new__(cls)


# ---------------------------------------------------------------------------
# The allow-list
# ---------------------------------------------------------------------------


#: What the allow-list gives for a global: a stand-in class (instantiated or called by the pickle), a
#: :class:`GlobalName` that may only be referred to, or an unbound :class:`Ctor`.
Allowed = FrozenMeta | GlobalName | Ctor


def _build_constructors() -> dict[tuple[str, str], Allowed]:
    c: dict[tuple[str, str], Allowed] = {}

    def ctor(module: str, name: str, fn: StandInFunction) -> None:
        c[(module, name)] = Ctor(module, name, fn)

    # numpy, both the 1.x (numpy.core) and 2.x (numpy._core) module names
    ctor("numpy", "dtype", dtype_ctor)
    c[("numpy", "ndarray")] = NDARRAY
    for core in ("numpy.core", "numpy._core"):
        ctor(core + ".multiarray", "_reconstruct", reconstruct)
        ctor(core + ".multiarray", "scalar", scalar)
        ctor(core + ".numeric", "_frombuffer", frombuffer)
    for name in ("__generator_ctor", "__bit_generator_ctor", "__randomstate_ctor"):
        ctor("numpy.random._pickle", name, rng_ctor)
    ctor("numpy.random", "__RandomState_ctor", rng_ctor)
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
        ctor(mod, "__pyx_unpickle_SeedSequence", rng_ctor)
    # python
    ctor("collections", "OrderedDict", _ordered_dict)
    ctor("collections", "deque", _deque)
    ctor("builtins", "set", _set_ctor)
    ctor("builtins", "frozenset", _frozenset_ctor)
    ctor("builtins", "bytearray", _bytearray)
    ctor("builtins", "getattr", _safe_getattr)
    for name in _BUILTIN_TYPE_NAMES:
        c.setdefault(("builtins", name), BuiltinName("builtins", name))
    ctor("_codecs", "encode", _codecs_encode)
    ctor("copyreg", "_reconstructor", _copyreg_reconstructor)
    # spaces: gymnasium and the old gym
    for pkg in ("gymnasium", "gym"):
        for kind, cls in SPACE_KINDS.items():
            module = f"{pkg}.spaces.{kind}"
            c[(module, cls)] = standin_type(Space, module, cls, kind=kind)
    # stable-baselines3
    for name in ("FloatSchedule", "LinearSchedule", "ConstantSchedule"):
        c[("stable_baselines3.common.utils", name)] = standin_type(Schedule, "stable_baselines3.common.utils", name)
    c[("stable_baselines3.common.type_aliases", "TrainFreq")] = TrainFreq
    c[("stable_baselines3.common.type_aliases", "TrainFrequencyUnit")] = TrainFrequencyUnit
    # cloudpickle: functions pickled by value, only so that their closure can be read
    for mod in ("cloudpickle.cloudpickle", "cloudpickle.cloudpickle_fast"):
        for name, fn in CLOUDPICKLE_CONSTRUCTORS.items():
            ctor(mod, name, fn)
        c[(mod, "_empty_cell_value")] = EMPTY_CELL_VALUE
    return c


#: (module, name) -> stand-in: the only globals a pickle may use as constructors
#: (Annex B.5). Read-only; every value is immutable: a stand-in class, a
#: :class:`GlobalName`, or an unbound callable that ``find_class`` binds to
#: the unpickler asking for it.
CONSTRUCTORS: Mapping[tuple[str, str], Allowed] = types.MappingProxyType(_build_constructors())
