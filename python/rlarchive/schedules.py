"""Schedules (spec §9): small callables of progress remaining, with their parameters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import RlarchiveError, members_pointer

Number = int | float


def _clamp(p: float) -> float:
    p = float(p)
    return 0.0 if p < 0.0 else 1.0 if p > 1.0 else p


@dataclass(frozen=True)
class Constant:
    """The same value at every progress."""

    value: Number

    def __call__(self, progress_remaining: float) -> Number:
        return self.value


@dataclass(frozen=True)
class Linear:
    """From ``start`` to ``end`` over the first ``end_fraction`` of training (SB3's LinearSchedule)."""

    start: Number
    end: Number
    end_fraction: Number = 1.0

    def __call__(self, progress_remaining: float) -> float:
        e = 1.0 - _clamp(progress_remaining)
        start, end, frac = float(self.start), float(self.end), float(self.end_fraction)
        if e > frac:
            return end
        return start + e * (end - start) / frac


@dataclass(frozen=True)
class Piecewise:
    """Values at points of progress elapsed, joined linearly or held as steps."""

    points: tuple[Any, ...]  # ((elapsed, value), ...)
    interpolation: str = "linear"

    def __call__(self, progress_remaining: float) -> float:
        e = 1.0 - _clamp(progress_remaining)
        pts = [(float(t), float(v)) for t, v in self.points]
        if e <= pts[0][0]:
            return pts[0][1]
        if e >= pts[-1][0]:
            return pts[-1][1]
        for (t0, v0), (t1, v1) in zip(pts, pts[1:]):
            if t0 <= e < t1:
                if self.interpolation == "step":
                    return v0
                return v0 + (e - t0) * (v1 - v0) / (t1 - t0)
        return pts[-1][1]  # unreachable for valid points


Schedule = Constant | Linear | Piecewise
#: The members of each kind, in the order of spec §9's table (the order they are checked in).
_FIELDS = {
    "constant": (("value",), Constant),
    "linear": (("start", "end", "end_fraction"), Linear),
    "piecewise": (("points", "interpolation"), Piecewise),
}


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check(node: dict[str, Any], ptr: str, fail: Callable[..., RlarchiveError]) -> None:
    """Check a schedule value (spec §9) in the order of §9 and §11.2; ``fail(code, msg, ptr)`` builds the error.

    ``kind`` (missing: at the schedule; unknown: at ``kind``), the set of members, then each
    member in the order of §9's table, its type before its (S) rules. ``points``: the array,
    at least one point, then each point in turn: a pair of numbers (else at the point), its
    ``e_i`` within [0, 1] and after its predecessor (else at ``points/i/0``).
    """
    if "kind" not in node:
        raise fail("VALUE_INVALID", "a schedule needs the member 'kind'", ptr)
    kind = node["kind"]
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise fail("VALUE_INVALID", f"unknown schedule kind {str(kind)[:60]!r}", ptr + "/kind")
    want = set(_FIELDS[kind][0]) | {"$type", "kind"}
    if set(node) != want:
        raise fail(
            "VALUE_INVALID",
            f"schedule {kind} needs exactly the members {sorted(want)}",
            members_pointer(node, ptr, want),
        )
    if kind == "piecewise":
        pts = node["points"]
        if not isinstance(pts, list):
            raise fail("VALUE_INVALID", "points must be an array of [elapsed, value] number pairs", ptr + "/points")
        if not pts:
            raise fail("SCHEDULE_INVALID", "a piecewise schedule needs at least one point", ptr + "/points")
        for i, p in enumerate(pts):
            if not (isinstance(p, list) and len(p) == 2 and all(_is_number(x) for x in p)):
                raise fail("VALUE_INVALID", "a point must be an [elapsed, value] pair of numbers", f"{ptr}/points/{i}")
            if not 0 <= p[0] <= 1 or (i > 0 and not p[0] > pts[i - 1][0]):
                raise fail(
                    "SCHEDULE_INVALID", "points must be strictly increasing within [0, 1]", f"{ptr}/points/{i}/0"
                )
        if node["interpolation"] not in ("linear", "step"):
            raise fail("VALUE_INVALID", "interpolation must be 'linear' or 'step'", ptr + "/interpolation")
        return
    for k in _FIELDS[kind][0]:
        if not _is_number(node[k]):
            raise fail("VALUE_INVALID", f"schedule member {k} must be a number", f"{ptr}/{k}")
    if kind == "linear" and not 0 < node["end_fraction"] <= 1:
        raise fail("SCHEDULE_INVALID", "end_fraction must be in (0, 1]", ptr + "/end_fraction")


def from_json(node: dict[str, Any]) -> Schedule:
    """Build a schedule object from a checked schedule value."""
    kind = node["kind"]
    if kind == "constant":
        return Constant(node["value"])
    if kind == "linear":
        return Linear(node["start"], node["end"], node["end_fraction"])
    return Piecewise(tuple((t, v) for t, v in node["points"]), node["interpolation"])


def to_json(s: Schedule) -> dict[str, Any]:
    """The value-model form of a schedule object."""
    if isinstance(s, Constant):
        return {"$type": "schedule", "kind": "constant", "value": s.value}
    if isinstance(s, Linear):
        return {"$type": "schedule", "kind": "linear", "start": s.start, "end": s.end, "end_fraction": s.end_fraction}
    return {
        "$type": "schedule",
        "kind": "piecewise",
        "points": [[t, v] for t, v in s.points],
        "interpolation": s.interpolation,
    }
