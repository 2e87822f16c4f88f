"""The bytes a remote source has fetched ahead of its reads, by position (spec §11.4).

A :class:`RangeCache` holds disjoint segments of a file, sorted, none touching
another (a segment added next to or over others is merged with them). It holds
only what its source fetched ahead: the end of the file, fetched when the
source is opened, and the ranges a reader announced (``Source.prefetch``),
fetched by the plan of :func:`rlarchive.range_plan.read_ahead_plan`. Other
reads are not kept, so what it holds is bounded by those plans.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

__all__ = ["RangeCache"]


class RangeCache:
    """Segments of a file of ``size`` bytes. ``held``: the bytes held."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.held = 0
        self._starts: list[int] = []
        self._chunks: list[bytes] = []

    def get(self, offset: int, length: int) -> bytes | None:
        """The ``length`` bytes at ``offset`` when one segment holds them all, else None."""
        i = bisect_right(self._starts, offset) - 1
        if i < 0:
            return None
        at = offset - self._starts[i]
        chunk = self._chunks[i]
        return chunk[at : at + length] if at + length <= len(chunk) else None

    def add(self, offset: int, data: bytes) -> None:
        """Holds ``data`` at ``offset``, merged with the segments it overlaps or touches."""
        if not data:
            return
        end = offset + len(data)
        b = bisect_right(self._starts, end)  # segments from b on start after the new one ends
        a = b
        while a > 0 and self._starts[a - 1] + len(self._chunks[a - 1]) >= offset:
            a -= 1
        if a < b:
            start = min(offset, self._starts[a])
            stop = max(end, self._starts[b - 1] + len(self._chunks[b - 1]))
            merged = bytearray(stop - start)
            for s, c in zip(self._starts[a:b], self._chunks[a:b]):
                merged[s - start : s - start + len(c)] = c
                self.held -= len(c)
            merged[offset - start : end - start] = data
            offset, data = start, bytes(merged)
        self._starts[a:b] = [offset]
        self._chunks[a:b] = [data]
        self.held += len(data)

    def missing(self, ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
        """The parts ``(offset, length)`` of ``ranges`` (each clipped to the file) that no segment holds:
        sorted, disjoint and not touching."""
        wanted = sorted((max(0, a), min(self.size, a + n)) for a, n in ranges if n > 0 and a < self.size)
        out: list[tuple[int, int]] = []
        for a, b in wanted:
            i = max(0, bisect_right(self._starts, a) - 1)
            while a < b and i < len(self._starts) and self._starts[i] < b:
                s, e = self._starts[i], self._starts[i] + len(self._chunks[i])
                if e > a:
                    if s > a:
                        out.append((a, s))
                    a = max(a, e)
                i += 1
            if a < b:
                out.append((a, b))
        joined: list[tuple[int, int]] = []
        for a, b in sorted(out):
            if joined and a <= joined[-1][1]:
                joined[-1] = (joined[-1][0], max(joined[-1][1], b))
            else:
                joined.append((a, b))
        return [(a, b - a) for a, b in joined]
