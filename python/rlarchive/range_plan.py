"""Planning range requests (spec §11.4): which byte ranges of a file to ask for, so that reading many
small pieces takes few requests and reads a bounded amount that was not asked for.

Two plans share one rule, :func:`plan_ranges`: the pieces wanted are joined into one request across the
gaps between them, the smallest gap first, never across a gap of more than ``SLICE_REQUEST_BYTES`` (a
request costs less than reading that much for nothing).

- A partial read of a tensor (:mod:`rlarchive.tensor_slice`) first joins as many gaps as it takes to stay
  within :func:`request_budget` requests, then more while they total at most
  ``max(selected, SLICE_OVERREAD_BYTES)`` bytes.
- The read-ahead of a remote source (:func:`read_ahead_plan`, what opening an archive needs before it
  reads it) joins gaps only while they total at most ``max(wanted, SLICE_OVERREAD_BYTES)`` bytes: it makes
  at most one request per range wanted, and reads beyond them at most that many bytes.
"""

from __future__ import annotations

import numpy as np

from .limits import SLICE_MAX_REQUESTS, SLICE_OVERREAD_BYTES, SLICE_REQUEST_BYTES

__all__ = ["request_budget", "plan_ranges", "read_ahead_plan"]


def request_budget(selected: int) -> int:
    """The requests a partial read of ``selected`` bytes may make (spec §11.4)."""
    return max(SLICE_MAX_REQUESTS, -(-selected // SLICE_REQUEST_BYTES))


def plan_ranges(
    lo: np.ndarray, hi: np.ndarray, max_requests: int | None, overread: int, max_gap: int = SLICE_REQUEST_BYTES
) -> tuple[np.ndarray, np.ndarray]:
    """The byte ranges that read the runs ``[lo[i], hi[i])`` (sorted, disjoint, not touching): runs joined
    across gaps of at most ``max_gap`` bytes, smallest gap first (the earlier of equal ones first): as many as
    it takes for at most ``max_requests`` ranges (None: no bound) or until no such gap is left, then more
    while the gaps joined beyond those total at most ``overread`` bytes (spec §11.4)."""
    gaps = lo[1:] - hi[:-1]
    order = np.argsort(gaps, kind="stable")
    total = np.cumsum(gaps[order])
    joinable = int(np.searchsorted(gaps[order], max_gap, side="right"))
    needed = 0 if max_requests is None else min(max(0, len(lo) - max_requests), joinable)
    forced = int(total[needed - 1]) if needed else 0  # the least a plan within the bounds reads beyond the runs
    joined = max(needed, min(joinable, int(np.searchsorted(total, forced + overread, side="right"))))
    join = np.zeros(len(gaps), dtype=bool)
    join[order[:joined]] = True
    first = np.flatnonzero(np.concatenate([[True], ~join]))
    last = np.append(first[1:], len(lo)) - 1
    return lo[first], hi[last]


def read_ahead_plan(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The requests ``(offset, length)`` that fetch the ranges ``runs`` (``(offset, length)``, sorted, disjoint,
    not touching) ahead of their reads: joined across gaps of at most ``SLICE_REQUEST_BYTES``, smallest first,
    while the gaps joined total at most ``max(wanted, SLICE_OVERREAD_BYTES)`` bytes, ``wanted`` being the
    bytes of ``runs`` (spec §11.4)."""
    if not runs:
        return []
    lo = np.array([a for a, _ in runs], dtype=np.int64)
    hi = lo + np.array([n for _, n in runs], dtype=np.int64)
    wanted = int((hi - lo).sum())
    starts, ends = plan_ranges(lo, hi, None, max(wanted, SLICE_OVERREAD_BYTES))
    return [(int(a), int(b - a)) for a, b in zip(starts, ends)]
