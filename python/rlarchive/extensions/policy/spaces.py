"""The spaces of a portable policy description (extension ``RLA_policy`` §4, §6), for :mod:`rlarchive.extensions.policy.description`.

The shapes of the preprocessed observations a description takes, the width
of the vector each head reads from its action space, and the outline of a
space that VecNormalize statistics depend on; with the errors of the member
(``EXTENSION_INVALID``, ``LIMIT_EXCEEDED``) located by JSON Pointer. Which
heads exist comes from the registry (:mod:`rlarchive.extensions.policy.ops`).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...dtypes import INTEGER_CODES, numpy_view_dtype
from ...errors import RlarchiveError
from .ops import HEADS, MAX_POLICY_VALUE_ELEMENTS, implementations

__all__ = [
    "MEMBER",
    "MAX_SAFE",
    "OBSERVATION_DTYPES",
    "ACTION_DTYPES",
    "fail",
    "limit",
    "is_int",
    "is_map",
    "is_name",
    "inline_ints",
    "space_shape",
    "bounded",
    "observation_shapes",
    "HEAD_WIDTHS",
    "outline",
]

#: The extension's one member.
MEMBER = "extensions/RLA_policy/policy.json"
#: Integers beyond are refused alike by both readers.
MAX_SAFE = (1 << 53) - 1
_OBS_KINDS = ("box", "discrete", "multi_discrete", "multi_binary")


def fail(msg: str, ptr: str) -> RlarchiveError:
    return RlarchiveError("EXTENSION_INVALID", msg, member=MEMBER, pointer=ptr)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_map(v: Any) -> bool:
    return isinstance(v, dict) and "$type" not in v


def is_name(v: Any) -> bool:
    return isinstance(v, str) and v != ""


def inline_ints(nd: Mapping[str, Any]) -> list[Any]:
    """The integers of an inline ndarray (multi_discrete ``nvec`` is always inline, spec §8)."""
    raw = base64.b64decode(nd["base64"])
    return [int(x) for x in np.frombuffer(raw, dtype=numpy_view_dtype(nd["dtype"])).reshape(-1)]


#: Box dtypes the portable policy takes observations of, and acts in (float actions only).
OBSERVATION_DTYPES = frozenset({"BOOL", "F32", "F64"}) | INTEGER_CODES
ACTION_DTYPES = frozenset({"F32", "F64"})


#: The member of a space that gives the size of its preprocessed observation (RLA_policy §4), where a limit on it is located.
_SIZE_MEMBER = {"box": "shape", "discrete": "n", "multi_discrete": "nvec", "multi_binary": "n"}


def space_shape(sp: Mapping[str, Any], ptr: str) -> list[Any]:
    """The shape a space's observations have once preprocessed (spec §4), without the batch dimension.

    A space the portable policy does not take is refused at the member that makes it so (RLA_policy §8): its
    ``kind``, a box's ``dtype``, a Discrete ``n`` beyond 2^53; a preprocessed observation above
    MAX_POLICY_VALUE_ELEMENTS at the member that gives its size.
    """
    kind = sp.get("kind")
    if kind not in _OBS_KINDS:
        raise fail(f"the portable policy takes no {kind} observations", f"{ptr}/kind")
    if kind == "box":
        if sp["dtype"] not in OBSERVATION_DTYPES:
            raise fail(f"the portable policy takes no Box observations of dtype {sp['dtype']}", f"{ptr}/dtype")
        shape = list(sp["shape"])
    elif kind == "discrete":
        if not is_int(sp["n"]):
            raise fail("a Discrete observation space of more than 2^53 values", f"{ptr}/n")
        shape = [sp["n"]]
    elif kind == "multi_discrete":
        shape = [sum(inline_ints(sp["nvec"]))]
    else:
        n = sp["n"]
        shape = [n] if is_int(n) else list(n)
    bounded(shape, f"{ptr}/{_SIZE_MEMBER[kind]}")
    return shape


def bounded(shape: Any, ptr: str) -> None:
    if not isinstance(shape, tuple) and math.prod(shape) > MAX_POLICY_VALUE_ELEMENTS:
        raise limit(f"a value of shape {shape} has more than MAX_POLICY_VALUE_ELEMENTS elements", ptr)


def limit(msg: str, ptr: str) -> RlarchiveError:
    return RlarchiveError("LIMIT_EXCEEDED", msg, member=MEMBER, pointer=ptr)


def observation_shapes(space: Any, ptr: str) -> dict[str, Any]:
    """Name -> shape of the preprocessed observation(s)."""
    if not (isinstance(space, dict) and space.get("$type") == "space"):
        raise fail("observation_space must be a space", ptr)
    if space.get("kind") == "dict":
        return {f"obs.{key}": space_shape(sub, f"{ptr}/spaces/{i}/1") for i, (key, sub) in enumerate(space["spaces"])}
    return {"obs": space_shape(space, ptr)}


def _n(sp: Mapping[str, Any]) -> int:
    """The number of values of a Discrete space, or of binary values of a MultiBinary (the product, when n is an array)."""
    n = sp["n"]
    return n if is_int(n) else math.prod(n)


def _multi_argmax_width(head: Mapping[str, Any], sp: Mapping[str, Any], ptr: str) -> int:
    if sp["kind"] == "multi_binary":  # MaskablePPO: a categorical over {0, 1} per binary action
        nvec = [2] * _n(sp)
    else:
        nvec = inline_ints(sp["nvec"])  # in C order
    if head["sizes"] != nvec:
        raise fail(f"sizes must be the action space's nvec {nvec}", f"{ptr}/sizes")
    return sum(nvec)


def _box_width(head: Mapping[str, Any], sp: Mapping[str, Any], ptr: str) -> int:
    if sp["dtype"] not in ACTION_DTYPES:
        raise fail(f"a box head acts in an F32 or F64 action space, not {sp['dtype']}", ptr)
    return math.prod(sp["shape"])


#: Head -> the width of the vector it reads, for its action space (checking what the head's parameters say of the space).
HEAD_WIDTHS = implementations(
    HEADS,
    {
        "argmax": lambda head, sp, ptr: sp["n"],
        "quantile_argmax": lambda head, sp, ptr: head["n_quantiles"] * sp["n"],
        "multi_argmax": _multi_argmax_width,
        "bernoulli": lambda head, sp, ptr: _n(sp),
        "box": _box_width,
    },
    "heads of the description checker",
)


def outline(space: Any) -> Any:
    """What the VecNormalize statistics depend on in a space value: its kind, a box's shape, a dict's keys and their outlines."""
    if not (isinstance(space, dict) and space.get("$type") == "space"):
        return None
    kind = space.get("kind")
    if kind == "box":
        return ("box", list(space.get("shape", [])))
    if kind == "dict":
        return ("dict", [(k, outline(s)) for k, s in space.get("spaces", [])])
    return (kind,)
