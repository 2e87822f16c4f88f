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
    from .tensors import check_shape

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

    def need(cond: bool, member: str, what: str) -> None:
        if not cond:
            raise fail("VALUE_INVALID", f"space member {member} must be {what}", f"{ptr}/{member}")

    def rule(cond: bool, msg: str, member: str) -> None:
        if not cond:
            raise fail("SPACE_INVALID", msg, f"{ptr}/{member}")

    def dtype_member(kinds: tuple[Any, ...], what: str) -> str:
        need(_code(node["dtype"]), "dtype", "a dtype code")
        rule(DTYPES[node["dtype"]].kind in kinds, f"{kind} dtype must be {what}", "dtype")
        return str(node["dtype"])

    def ndarray_member(m: str) -> dict[str, Any]:
        need(_is_ndarray(node[m]), m, "an ndarray")  # before the value itself is checked
        check_value(node[m], f"{ptr}/{m}")
        member: dict[str, Any] = node[m]
        return member

    def integer(m: str, least: int) -> None:
        need(_int(node[m]), m, "an integer")
        rule(node[m] >= least, f"{m} must be >= {least}", m)

    if kind == "box":
        dt = dtype_member(("int", "uint", "float", "bool"), "an integer, float or BOOL dtype")
        check_shape(node["shape"], ptr + "/shape", fail)
        for m in ("low", "high"):
            nd = ndarray_member(m)
            rule(nd["dtype"] == dt and nd["shape"] == node["shape"], f"{m} must have the box's dtype and shape", m)
    elif kind == "discrete":
        integer("n", 1)
        need(_int(node["start"]), "start", "an integer")
        dtype_member(("int", "uint"), "an integer dtype")
    elif kind == "multi_discrete":
        dt = dtype_member(("int", "uint"), "an integer dtype")
        for m in ("nvec", "start"):
            nd = ndarray_member(m)
            rule("base64" in nd, f"{m} must be inline", m)
            rule(nd["dtype"] == dt, f"{m} must have the space's dtype", m)
            if m == "nvec":
                rule(bool(np.all(_inline(nd) >= 1)), "every element of nvec must be >= 1", m)
            else:
                rule(nd["shape"] == node["nvec"]["shape"], "nvec and start must have equal shapes", m)
    elif kind == "multi_binary":
        n = node["n"]
        if isinstance(n, list):  # the array's own structure, then each element in turn (spec §11.2)
            rule(len(n) > 0, "n must not be an empty array", "n")
            for i, d in enumerate(n):
                need(_int(d), f"n/{i}", "an integer")
                rule(d >= 1, "every element of n must be >= 1", f"n/{i}")
        else:
            need(_int(n), "n", "an integer or an array of integers")
            rule(n >= 1, "n must be >= 1", "n")
    elif kind == "dict":
        sp = node["spaces"]
        need(isinstance(sp, list), "spaces", "an array of [key, space] pairs")
        seen: set[Any] = set()
        for i, pair in enumerate(sp):
            need(isinstance(pair, list) and len(pair) == 2, f"spaces/{i}", "a [key, space] pair")
            need(isinstance(pair[0], str), f"spaces/{i}/0", "a string")
            rule(pair[0] not in seen, "dict space keys must be unique", f"spaces/{i}/0")
            seen.add(pair[0])
            need(isinstance(pair[1], dict) and pair[1].get("$type") == "space", f"spaces/{i}/1", "a space")
            check_value(pair[1], f"{ptr}/spaces/{i}/1")
    elif kind == "tuple":
        sp = node["spaces"]
        need(isinstance(sp, list), "spaces", "an array of spaces")
        for i, s in enumerate(sp):
            need(isinstance(s, dict) and s.get("$type") == "space", f"spaces/{i}", "a space")
            check_value(s, f"{ptr}/spaces/{i}")
    elif kind == "text":
        integer("min_length", 0)
        need(_int(node["max_length"]), "max_length", "an integer")
        rule(node["max_length"] >= node["min_length"], "need min_length <= max_length", "max_length")
        need(isinstance(node["charset"], str), "charset", "a string")
        cs = node["charset"]
        rule(
            len(cs) > 0 and all(a < b for a, b in zip(cs, cs[1:])),
            "charset must be non-empty, ascending, without repeats",
            "charset",
        )


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
