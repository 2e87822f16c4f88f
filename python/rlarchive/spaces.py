"""Spaces (spec §8): neutral dataclasses, their checks, and the gymnasium bridge."""

from __future__ import annotations

import base64
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dtypes import DTYPES, code_of_numpy, numpy_view_dtype
from .errors import RlarchiveError, members_pointer


def _arrays_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _array_key(a: np.ndarray) -> tuple[Any, ...]:
    """A hashable key that two arrays equal by ``_arrays_equal`` share (a space's hash agrees with its ``==``;
    a space's arrays are not to be changed while it is a key of a dict or in a set)."""
    return (a.shape, a.tobytes())


@dataclass(eq=False)
class Box:
    """A box in R^n (or Z^n): elementwise ``low`` and ``high`` bounds, which may be infinite."""

    low: np.ndarray
    high: np.ndarray
    shape: tuple[Any, ...]
    dtype: str  # dtype code, e.g. "F32"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Box)
            and (self.shape, self.dtype) == (other.shape, other.dtype)
            and _arrays_equal(self.low, other.low)
            and _arrays_equal(self.high, other.high)
        )

    def __hash__(self) -> int:
        return hash((Box, self.shape, self.dtype, _array_key(self.low), _array_key(self.high)))


@dataclass(frozen=True)
class Discrete:
    """The integers ``start .. start + n - 1``."""

    n: int
    start: int = 0
    dtype: str = "I64"


@dataclass(eq=False)
class MultiDiscrete:
    """A vector of discrete choices, element i in ``start[i] .. start[i] + nvec[i] - 1``."""

    nvec: np.ndarray
    start: np.ndarray
    dtype: str = "I64"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MultiDiscrete)
            and self.dtype == other.dtype
            and _arrays_equal(self.nvec, other.nvec)
            and _arrays_equal(self.start, other.start)
        )

    def __hash__(self) -> int:
        return hash((MultiDiscrete, self.dtype, _array_key(self.nvec), _array_key(self.start)))


@dataclass(frozen=True)
class MultiBinary:
    """Binary vectors (or arrays) of shape ``n``."""

    n: int | tuple[Any, ...]


@dataclass(frozen=True)
class Dict:
    """An ordered mapping from string keys to spaces."""

    spaces: tuple[Any, ...] = field(default_factory=tuple)  # ((key, space), ...)


@dataclass(frozen=True)
class Tuple:
    """A fixed sequence of spaces."""

    spaces: tuple[Any, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Text:
    """Strings of ``min_length`` to ``max_length`` characters from ``charset``."""

    max_length: int
    min_length: int = 1
    charset: str = ""


Space = Box | Discrete | MultiDiscrete | MultiBinary | Dict | Tuple | Text
#: The members of each kind, in the order of spec §8's member column (the order they are checked in).
_MEMBERS = {
    "box": ("dtype", "shape", "low", "high"),
    "discrete": ("n", "start", "dtype"),
    "multi_discrete": ("dtype", "nvec", "start"),
    "multi_binary": ("n",),
    "dict": ("spaces",),
    "tuple": ("spaces",),
    "text": ("min_length", "max_length", "charset"),
}


def _int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _code(x: Any) -> bool:
    return isinstance(x, str) and x in DTYPES


def _is_ndarray(x: Any) -> bool:
    return isinstance(x, dict) and x.get("$type") == "ndarray"


def check(
    node: dict[str, Any], ptr: str, check_value: Callable[[Any, str], None], fail: Callable[..., RlarchiveError]
) -> None:
    """Check a space value (spec §8) in the order of §8 and §11.2.

    ``kind`` (missing: at the space; unknown: at ``kind``), the set of members
    (missing: at the space; not allowed: at the first such member), then each
    member in the order of §8's member column: its type (VALUE_INVALID), its
    own (S) rules, then its agreement with the members before it (SPACE_INVALID
    at this, the later, member). A nested value is checked completely in its turn.
    """
    if "kind" not in node:
        raise fail("VALUE_INVALID", "a space needs the member 'kind'", ptr)
    kind = node["kind"]
    if not isinstance(kind, str) or kind not in _MEMBERS:
        raise fail("VALUE_INVALID", f"unknown space kind {str(kind)[:60]!r}", ptr + "/kind")
    want = set(_MEMBERS[kind]) | {"$type", "kind"}
    if set(node) != want:
        raise fail(
            "VALUE_INVALID", f"space {kind} needs exactly the members {sorted(want)}", members_pointer(node, ptr, want)
        )
    _CHECK_KIND[kind](_SpaceCheck(node, ptr, kind, check_value, fail))


class _SpaceCheck:
    """One space value under check: its members, and the two kinds of failure of §8 (type, rule)."""

    def __init__(
        self,
        node: dict[str, Any],
        ptr: str,
        kind: str,
        check_value: Callable[[Any, str], None],
        fail: Callable[..., RlarchiveError],
    ) -> None:
        self.node = node
        self.ptr = ptr
        self.kind = kind
        self.check_value = check_value
        self.fail = fail

    def need(self, cond: bool, member: str, what: str) -> None:
        """VALUE_INVALID at ``member`` unless ``cond``: the member is not of its type."""
        if not cond:
            raise self.fail("VALUE_INVALID", f"space member {member} must be {what}", f"{self.ptr}/{member}")

    def rule(self, cond: bool, msg: str, member: str) -> None:
        """SPACE_INVALID at ``member`` unless ``cond``: a rule of §8 fails."""
        if not cond:
            raise self.fail("SPACE_INVALID", msg, f"{self.ptr}/{member}")

    def dtype_member(self, kinds: tuple[Any, ...], what: str) -> str:
        node = self.node
        self.need(_code(node["dtype"]), "dtype", "a dtype code")
        self.rule(DTYPES[node["dtype"]].kind in kinds, f"{self.kind} dtype must be {what}", "dtype")
        return str(node["dtype"])

    def ndarray_member(self, m: str) -> dict[str, Any]:
        self.need(_is_ndarray(self.node[m]), m, "an ndarray")  # before the value itself is checked
        self.check_value(self.node[m], f"{self.ptr}/{m}")
        member: dict[str, Any] = self.node[m]
        return member

    def integer(self, m: str, least: int) -> None:
        self.need(_int(self.node[m]), m, "an integer")
        self.rule(self.node[m] >= least, f"{m} must be >= {least}", m)


def _check_box(c: _SpaceCheck) -> None:
    from .tensors import check_shape

    node = c.node
    dt = c.dtype_member(("int", "uint", "float", "bool"), "an integer, float or BOOL dtype")
    check_shape(node["shape"], c.ptr + "/shape", c.fail)
    for m in ("low", "high"):
        nd = c.ndarray_member(m)
        c.rule(nd["dtype"] == dt and nd["shape"] == node["shape"], f"{m} must have the box's dtype and shape", m)


def _check_discrete(c: _SpaceCheck) -> None:
    c.integer("n", 1)
    c.need(_int(c.node["start"]), "start", "an integer")
    c.dtype_member(("int", "uint"), "an integer dtype")


def _check_multi_discrete(c: _SpaceCheck) -> None:
    dt = c.dtype_member(("int", "uint"), "an integer dtype")
    for m in ("nvec", "start"):
        nd = c.ndarray_member(m)
        c.rule("base64" in nd, f"{m} must be inline", m)
        c.rule(nd["dtype"] == dt, f"{m} must have the space's dtype", m)
        if m == "nvec":
            c.rule(bool(np.all(_inline(nd) >= 1)), "every element of nvec must be >= 1", m)
        else:
            c.rule(nd["shape"] == c.node["nvec"]["shape"], "nvec and start must have equal shapes", m)


def _check_multi_binary(c: _SpaceCheck) -> None:
    n = c.node["n"]
    if isinstance(n, list):  # the array's own structure, then each element in turn (spec §11.2)
        c.rule(len(n) > 0, "n must not be an empty array", "n")
        for i, d in enumerate(n):
            c.need(_int(d), f"n/{i}", "an integer")
            c.rule(d >= 1, "every element of n must be >= 1", f"n/{i}")
    else:
        c.need(_int(n), "n", "an integer or an array of integers")
        c.rule(n >= 1, "n must be >= 1", "n")


def _check_dict(c: _SpaceCheck) -> None:
    sp = c.node["spaces"]
    c.need(isinstance(sp, list), "spaces", "an array of [key, space] pairs")
    seen: set[Any] = set()
    for i, pair in enumerate(sp):
        c.need(isinstance(pair, list) and len(pair) == 2, f"spaces/{i}", "a [key, space] pair")
        c.need(isinstance(pair[0], str), f"spaces/{i}/0", "a string")
        c.rule(pair[0] not in seen, "dict space keys must be unique", f"spaces/{i}/0")
        seen.add(pair[0])
        c.need(isinstance(pair[1], dict) and pair[1].get("$type") == "space", f"spaces/{i}/1", "a space")
        c.check_value(pair[1], f"{c.ptr}/spaces/{i}/1")


def _check_tuple(c: _SpaceCheck) -> None:
    sp = c.node["spaces"]
    c.need(isinstance(sp, list), "spaces", "an array of spaces")
    for i, s in enumerate(sp):
        c.need(isinstance(s, dict) and s.get("$type") == "space", f"spaces/{i}", "a space")
        c.check_value(s, f"{c.ptr}/spaces/{i}")


def _check_text(c: _SpaceCheck) -> None:
    node = c.node
    c.integer("min_length", 0)
    c.need(_int(node["max_length"]), "max_length", "an integer")
    c.rule(node["max_length"] >= node["min_length"], "need min_length <= max_length", "max_length")
    c.need(isinstance(node["charset"], str), "charset", "a string")
    cs = node["charset"]
    c.rule(
        len(cs) > 0 and all(a < b for a, b in zip(cs, cs[1:])),
        "charset must be non-empty, ascending, without repeats",
        "charset",
    )


#: The checks of each kind's members, in the order of §8's member column (the kinds of _MEMBERS).
_CHECK_KIND: dict[str, Callable[[_SpaceCheck], None]] = {
    "box": _check_box,
    "discrete": _check_discrete,
    "multi_discrete": _check_multi_discrete,
    "multi_binary": _check_multi_binary,
    "dict": _check_dict,
    "tuple": _check_tuple,
    "text": _check_text,
}


def _inline(nd: dict[str, Any]) -> np.ndarray:
    raw = base64.b64decode(nd["base64"])
    out: np.ndarray = np.frombuffer(raw, dtype=numpy_view_dtype(nd["dtype"])).reshape(nd["shape"])
    return out


def from_json(node: dict[str, Any], decode: Callable[[Any], Any]) -> Space:
    """A neutral space object from a checked space value; ``decode`` decodes nested values."""
    kind = node["kind"]
    if kind == "box":
        return Box(decode(node["low"]), decode(node["high"]), tuple(node["shape"]), node["dtype"])
    if kind == "discrete":
        return Discrete(node["n"], node["start"], node["dtype"])
    if kind == "multi_discrete":
        return MultiDiscrete(decode(node["nvec"]), decode(node["start"]), node["dtype"])
    if kind == "multi_binary":
        n = node["n"]
        return MultiBinary(tuple(n) if isinstance(n, list) else n)
    if kind == "dict":
        return Dict(tuple((k, from_json(s, decode)) for k, s in node["spaces"]))
    if kind == "tuple":
        return Tuple(tuple(from_json(s, decode) for s in node["spaces"]))
    return Text(node["max_length"], node["min_length"], node["charset"])


def to_json(space: Space, encode: Callable[..., Any], ptr: str) -> dict[str, Any]:
    """The value-model form of a neutral space; ``encode(value, ptr)`` encodes nested values."""
    out: dict[str, Any] = {"$type": "space"}
    if isinstance(space, Box):
        out.update(kind="box", dtype=space.dtype, shape=list(space.shape))
        out["low"] = encode(space.low, ptr + "/low")
        out["high"] = encode(space.high, ptr + "/high")
    elif isinstance(space, Discrete):
        out.update(kind="discrete", n=int(space.n), start=int(space.start), dtype=space.dtype)
    elif isinstance(space, MultiDiscrete):
        out.update(kind="multi_discrete", dtype=space.dtype)
        out["nvec"] = encode(space.nvec, ptr + "/nvec", inline=True)
        out["start"] = encode(space.start, ptr + "/start", inline=True)
    elif isinstance(space, MultiBinary):
        out.update(kind="multi_binary", n=list(space.n) if isinstance(space.n, tuple) else int(space.n))
    elif isinstance(space, Dict):
        out.update(
            kind="dict",
            spaces=[[k, to_json(s, encode, f"{ptr}/spaces/{i}/1")] for i, (k, s) in enumerate(space.spaces)],
        )
    elif isinstance(space, Tuple):
        out.update(kind="tuple", spaces=[to_json(s, encode, f"{ptr}/spaces/{i}") for i, s in enumerate(space.spaces)])
    else:
        out.update(kind="text", min_length=space.min_length, max_length=space.max_length, charset=space.charset)
    return out


# ---------------------------------------------------------------- gymnasium bridge


def from_gymnasium(space: Any) -> Space:
    """A neutral space equal to a gymnasium (or gym) space; TypeError if it has no equivalent."""
    name = type(space).__name__
    if name == "Box":
        dt = code_of_numpy(space.dtype)
        if dt is None:
            raise TypeError(f"a Box of dtype {space.dtype} has no neutral space")
        return Box(np.asarray(space.low), np.asarray(space.high), tuple(space.shape), dt)
    if name == "Discrete":
        return Discrete(
            int(space.n),
            int(getattr(space, "start", 0)),
            code_of_numpy(np.dtype(getattr(space, "dtype", None) or np.int64)) or "I64",
        )
    if name == "MultiDiscrete":
        nvec = np.asarray(space.nvec)
        start = np.asarray(getattr(space, "start", np.zeros_like(nvec)), dtype=nvec.dtype)
        code = code_of_numpy(nvec.dtype)
        if code is None:
            raise TypeError(f"a MultiDiscrete of dtype {nvec.dtype} has no neutral space")
        return MultiDiscrete(nvec, start, code)
    if name == "MultiBinary":
        n = space.n
        return MultiBinary(tuple(int(d) for d in n) if not isinstance(n, (int, np.integer)) else int(n))
    if name == "Dict":
        return Dict(tuple((k, from_gymnasium(s)) for k, s in space.spaces.items()))
    if name == "Tuple":
        return Tuple(tuple(from_gymnasium(s) for s in space.spaces))
    if name == "Text":
        chars = "".join(sorted(set(space.character_set)))
        return Text(int(space.max_length), int(space.min_length), chars)
    raise TypeError(f"no neutral space for {type(space).__module__}.{type(space).__qualname__}")


def is_gymnasium_space(obj: Any) -> bool:
    """True for an instance of gymnasium.spaces.Space (without importing gymnasium)."""
    return any(
        c.__module__.startswith(("gymnasium.spaces", "gym.spaces")) and c.__name__ == "Space" for c in type(obj).__mro__
    )


def to_gymnasium(space: Space) -> Any:
    """The gymnasium space equal to a neutral space (needs gymnasium installed)."""
    import gymnasium.spaces as gs

    if isinstance(space, Box):
        if DTYPES[space.dtype].numpy is None:
            raise TypeError(f"gymnasium has no Box of dtype {space.dtype} (NumPy has no such dtype)")
        dt = numpy_view_dtype(space.dtype)
        return gs.Box(low=np.array(space.low), high=np.array(space.high), shape=space.shape, dtype=dt)
    if isinstance(space, Discrete):
        if "dtype" in inspect.signature(gs.Discrete.__init__).parameters:  # gymnasium >= 1.0
            return gs.Discrete(space.n, start=space.start, dtype=numpy_view_dtype(space.dtype))
        if space.dtype != "I64":
            raise TypeError(f"gymnasium {getattr(gs, '__version__', '< 1.0')} has no Discrete of dtype {space.dtype}")
        return gs.Discrete(space.n, start=space.start)
    if isinstance(space, MultiDiscrete):
        if "start" in inspect.signature(gs.MultiDiscrete.__init__).parameters:
            return gs.MultiDiscrete(
                np.array(space.nvec), dtype=numpy_view_dtype(space.dtype), start=np.array(space.start)
            )
        if np.any(np.asarray(space.start) != 0):
            raise TypeError(f"gymnasium {getattr(gs, '__version__', '')} has no MultiDiscrete with a start")
        return gs.MultiDiscrete(np.array(space.nvec), dtype=numpy_view_dtype(space.dtype))
    if isinstance(space, MultiBinary):
        return gs.MultiBinary(list(space.n) if isinstance(space.n, tuple) else space.n)
    if isinstance(space, Dict):
        from collections import OrderedDict

        return gs.Dict(OrderedDict((k, to_gymnasium(s)) for k, s in space.spaces))  # a plain dict would be sorted
    if isinstance(space, Tuple):
        return gs.Tuple(tuple(to_gymnasium(s) for s in space.spaces))
    return gs.Text(space.max_length, min_length=space.min_length, charset=space.charset)
