"""Large arrays written as they were at one moment while another thread goes on writing rows of them.

A background save of a replay buffer must hold the buffer as it was when the
save began, while training goes on adding transitions: row ``pos`` is
overwritten, then ``pos + 1``, and so on, wrapping around. Copying the whole
buffer first would double its memory and stall training for the copy; a
:class:`RowSnapshot` copies only the rows that are overwritten before the
writer has read them (copy-on-write, one row at a time):

- the thread that changes the array calls :meth:`RowGuard.before_write` with
  the rows it is about to overwrite, before it writes them;
- a row the writer has not reached yet is copied, and the writer later reads
  the copy instead of the array;
- a row the writer is reading right now (handed to the digests and not yet
  done with) makes that call wait until the writer is past it, a few
  milliseconds at most (one piece of the digest pipeline);
- a row the writer is done with is free to change: no copy, no wait.

The writer reads a snapshot once, in order (:meth:`RowSnapshot.chunks`), and
reports how far it has got (:meth:`RowSnapshot.progress`), which frees the
copies behind it. Memory is bounded: the copies held at any time are at most
``copy_limit`` bytes (the rows overwritten before the writer reached them, at
most one row beyond the limit); past that, :meth:`RowGuard.before_write`
waits until the writer has passed the row instead of copying it. Closing the
guard (:meth:`RowGuard.close`, always, whether the save succeeded or not)
frees every copy and releases every waiting thread.

Only rows are guarded: an array whose other elements change in place (or
whose rows are changed without :meth:`RowGuard.before_write`) must be copied
as a whole by the caller instead.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable, Iterator

import numpy as np

__all__ = ["RowGuard", "RowSnapshot"]


class RowGuard:
    """The lock, the copy budget and the state shared by the snapshots of one save.

    Attributes:
        copy_limit: bytes of row copies held at once, at most (one row beyond it at most).
        copied: bytes of row copies held now.
        peak: the most ``copied`` has been.
        copies: rows copied so far.
        waits: times :meth:`before_write` waited for the writer.
    """

    def __init__(self, copy_limit: int) -> None:
        self.cond = threading.Condition()
        self.copy_limit = copy_limit
        self.copied = 0
        self.peak = 0
        self.copies = 0
        self.waits = 0
        self.closed = False
        self._snapshots: list[RowSnapshot] = []

    def snapshot(self, array: np.ndarray) -> RowSnapshot:
        """A snapshot of ``array`` (C-contiguous, at least one dimension: rows along the first) under this guard."""
        snap = RowSnapshot(self, array)
        self._snapshots.append(snap)
        return snap

    def before_write(self, rows: Iterable[tuple[RowSnapshot, int]]) -> None:
        """Before row ``row`` of each ``(snapshot, row)`` is overwritten: keep what the writer still needs.

        Copies a row the writer has not read yet (within the budget), or waits
        until the writer is done with it; returns at once once the guard is closed.
        """
        with self.cond:
            for snap, row in rows:
                snap.keep(row)

    def close(self) -> None:
        """End the snapshots: free every copy and release every waiting thread (idempotent)."""
        with self.cond:
            self.closed = True
            for snap in self._snapshots:
                snap.drop_copies()
            self.copied = 0
            self.cond.notify_all()


class RowSnapshot:
    """One array as it was when its guard was made, readable once, in order, by the writer.

    ``dtype``, ``shape`` and ``nbytes`` are the array's; :func:`rlarchive.tensors.as_tensor`
    takes a snapshot as a tensor whose bytes are :meth:`chunks`.
    """

    def __init__(self, guard: RowGuard, array: np.ndarray) -> None:
        if array.ndim == 0 or not array.flags.c_contiguous or array.dtype.byteorder == ">":
            raise ValueError("a row snapshot needs a C-contiguous array of native or little-endian elements, with rows")
        self.guard = guard
        self.array = array
        self.row_bytes = array.nbytes // array.shape[0] if array.shape[0] else 0
        self.read = 0  # bytes handed to the writer
        self.done = 0  # bytes the writer is done with
        self.started = False
        self._saved: dict[int, np.ndarray] = {}  # row -> its bytes as they were
        self._order: list[int] = []  # the saved rows, sorted

    @property
    def dtype(self) -> np.dtype:
        return self.array.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(n) for n in self.array.shape)

    @property
    def nbytes(self) -> int:
        return int(self.array.nbytes)

    def keep(self, row: int) -> None:
        """Under the guard's lock: copy ``row`` or wait for the writer to pass it (see :meth:`RowGuard.before_write`)."""
        guard, size = self.guard, self.row_bytes
        if not 0 <= row < self.array.shape[0]:
            return
        while not guard.closed and (row + 1) * size > self.done:
            if row * size >= self.read:  # not read yet
                if row in self._saved:
                    return
                if guard.copied == 0 or guard.copied + size <= guard.copy_limit:
                    self._saved[row] = self.array[row].copy()
                    bisect.insort(self._order, row)
                    guard.copied += size
                    guard.copies += 1
                    guard.peak = max(guard.peak, guard.copied)
                    return
            guard.waits += 1
            guard.cond.wait()  # being read, or over the budget: until the writer is past the row

    def chunks(self, size: int) -> Iterator[memoryview]:
        """The bytes as they were, in pieces of at most about ``size`` bytes; one pass only.

        Raises:
            RuntimeError: when read a second time, or after the guard was closed.
        """
        guard = self.guard
        with guard.cond:
            if self.started:
                raise RuntimeError("a row snapshot is read once")
            self.started = True
        flat = memoryview(self.array.reshape(-1).view(np.uint8))  # type: ignore[arg-type]  # arrays are buffers
        total, pos = self.nbytes, 0
        while pos < total:
            with guard.cond:
                if guard.closed:
                    raise RuntimeError("the row snapshot was closed while it was read")
                end = min(total, pos + size)
                self.read = end  # from here, these rows are waited for, not copied
                parts = self._parts(flat, pos, end)
            yield from parts
            pos = end

    def _parts(self, flat: memoryview, start: int, end: int) -> list[memoryview]:
        """Under the lock: bytes [start, end) as views of the array, with the saved rows' copies in place."""
        size, parts, pos = self.row_bytes, [], start
        i = bisect.bisect_left(self._order, start // size)
        while i < len(self._order) and self._order[i] * size < end:
            row = self._order[i]
            lo, hi = max(row * size, start), min((row + 1) * size, end)
            if pos < lo:
                parts.append(flat[pos:lo])
            parts.append(memoryview(self._saved[row].reshape(-1).view(np.uint8))[lo - row * size : hi - row * size])  # type: ignore[arg-type]
            pos = hi
            i += 1
        if pos < end:
            parts.append(flat[pos:end])
        return parts

    def progress(self, done: int) -> None:
        """The writer is done with the first ``done`` bytes: free the copies behind them, wake waiting threads."""
        guard = self.guard
        with guard.cond:
            if done <= self.done:
                return
            self.done = done
            passed = bisect.bisect_left(self._order, done // self.row_bytes) if self.row_bytes else 0
            for row in self._order[:passed]:
                del self._saved[row]
                guard.copied -= self.row_bytes
            del self._order[:passed]
            guard.cond.notify_all()

    def drop_copies(self) -> None:
        """Under the lock: forget every copy (the guard is closing)."""
        self._saved.clear()
        self._order.clear()
