"""A live replay buffer's value held as it is now while training goes on adding to it (background saves).

:func:`take` turns the value :func:`rlarchive.sb3.replay_buffer.capture`
gives (the buffer's own arrays) into one that stays as it was when it was
taken, without copying the buffer:

- the arrays that only the buffer's ``add`` changes, one row at a time
  (``observations``, ``next_observations``, ``actions``; each array of a
  Dict observation), become :class:`rlarchive.row_snapshot.RowSnapshot`
  views when they are large: a row is copied only if ``add`` is about to
  overwrite it before the writer has read it;
- every other array is copied at once: the per-row ``rewards``, ``dones``
  and ``timeouts`` (``NStepReplayBuffer`` changes a row of ``timeouts`` for
  a moment while it samples) and HER's episode indices (``ep_length`` of a
  whole episode changes when it ends); they are small (one number per row
  and environment);
- the buffer's ``add`` is wrapped, on the instance, so that the rows it
  writes are kept first (``pos``, and ``pos + 1`` of the observations with
  ``optimize_memory_usage``, where SB3 writes the next observation).

The value holds until :meth:`BufferSnapshot.close`, which frees the copies
and puts ``add`` back. Training must change the buffer only through ``add``
meanwhile (as Stable-Baselines3's training loop does); pickling the buffer
(``save_replay_buffer``) waits until the save is done.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..row_snapshot import RowGuard, RowSnapshot

__all__ = ["BufferSnapshot", "take", "GUARD_BYTES", "COPY_LIMIT"]

#: Arrays of at least this many bytes are guarded row by row; smaller ones are copied when the snapshot is taken.
GUARD_BYTES = 1 << 20
#: Bytes of overwritten rows a snapshot keeps at most; beyond them ``add`` waits for the writer to pass its row.
COPY_LIMIT = 256 << 20
#: The value's arrays that the buffer's ``add`` alone writes, row ``pos`` at a time.
ROW_ARRAYS = ("observations", "next_observations", "actions")
#: The value's other arrays: copied.
COPIED_ARRAYS = ("rewards", "dones", "timeouts")
#: HER's arrays (in the value's ``her``): copied.
HER_ARRAYS = ("ep_start", "ep_length", "current_ep_start")


class BufferSnapshot:
    """The row guard of one snapshot and the wrapped ``add`` of its buffer, until :meth:`close`."""

    def __init__(
        self, buffer: Any, guard: RowGuard, rows: list[tuple[RowSnapshot, bool]], value: Mapping[str, Any]
    ) -> None:
        self.buffer = buffer
        self.guard = guard
        self.rows = rows  # (snapshot, whether add also writes its row pos + 1)
        self.size = int(value["buffer_size"])
        self.original = buffer.add
        self.hook = self._add
        buffer.add = self.hook

    def _add(self, *args: Any, **kwargs: Any) -> Any:
        """The buffer's ``add``, once the rows it writes are kept."""
        if not self.guard.closed:
            pos = int(self.buffer.pos)
            writes = [(snap, pos) for snap, _ in self.rows]
            writes += [(snap, (pos + 1) % self.size) for snap, ahead in self.rows if ahead]
            self.guard.before_write(writes)
        return self.original(*args, **kwargs)

    def close(self) -> None:
        """Free the copies, release any waiting ``add`` and put the buffer's own ``add`` back (idempotent)."""
        self.guard.close()
        if self.buffer.__dict__.get("add") is self.hook:
            del self.buffer.__dict__["add"]


def take(buffer: Any, value: Mapping[str, Any], copy_limit: int | None = None) -> tuple[dict[str, Any], BufferSnapshot]:
    """The buffer ``value`` (:func:`~rlarchive.sb3.replay_buffer.capture` of ``buffer``) held as it is now.

    Returns the value to write (its large row arrays as row snapshots, its
    other arrays copied) and the snapshot to close once the value is written
    (or given up). ``copy_limit`` defaults to :data:`COPY_LIMIT`.
    """
    guard = RowGuard(COPY_LIMIT if copy_limit is None else copy_limit)
    rows: list[tuple[RowSnapshot, bool]] = []
    omu = bool(value["optimize_memory_usage"])

    def hold(array: Any, ahead: bool) -> Any:
        if isinstance(array, dict):
            return {k: hold(a, ahead) for k, a in array.items()}
        if (
            isinstance(array, np.ndarray)
            and array.nbytes >= GUARD_BYTES
            and array.ndim >= 1
            and array.flags.c_contiguous
            and array.dtype.byteorder != ">"
        ):
            snap = guard.snapshot(array)
            rows.append((snap, ahead))
            return snap
        return np.array(array, copy=True)

    out = dict(value)
    for key in ROW_ARRAYS:
        if out.get(key) is not None:
            out[key] = hold(out[key], ahead=omu and key == "observations")
    for key in COPIED_ARRAYS:
        out[key] = np.array(out[key], copy=True)
    her = out.get("her")
    if her is not None:
        out["her"] = dict(her, **{k: np.array(her[k], copy=True) for k in HER_ARRAYS})
        if her.get("infos") is not None:  # the info dicts SB3 stored: a row gets new ones, old ones are not changed
            out["her"]["infos"] = [list(row) for row in her["infos"]]
    return out, BufferSnapshot(buffer, guard, rows, value)
