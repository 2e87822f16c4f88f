"""Saves that finish in the background while training goes on: the handle, and one save in flight at a time.

``rlarchive.sb3.save(model, path, background=True)`` takes all it needs from
the model on the calling thread (the parameters and optimizer states copied,
the replay buffer held by :mod:`rlarchive.sb3.buffer_snapshot`), then
writes the archive on a thread of its own and returns a
:class:`BackgroundSave` at once. The archive appears at ``path`` atomically,
only when it is complete, and holds the state at the moment ``save`` was
called.

The policy, for the whole process:

- one save in flight at a time: every ``rlarchive.sb3.save`` first waits for
  the one in flight (so that archives appear in the order they were asked
  for, and memory holds one snapshot);
- a background save that failed, and whose error nobody took from its handle
  (:meth:`BackgroundSave.result`, :meth:`BackgroundSave.exception`), raises
  that error from the next ``rlarchive.sb3.save`` (the next checkpoint),
  which then does not start;
- at exit, the interpreter waits for the save in flight (its thread is not a
  daemon), and an error nobody took is written to standard error.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..errors import RlarchiveError

__all__ = ["BackgroundSave", "settle", "start"]


class BackgroundSave:
    """A save running on its own thread: :meth:`done`, :meth:`wait`, :meth:`result`, :meth:`exception`."""

    def __init__(self, path: str | os.PathLike[str], work: Callable[[], Any], cleanup: Callable[[], None]) -> None:
        self.path = os.fspath(path)
        self._work = work
        self._cleanup = cleanup
        self._value: Any = None
        self._error: BaseException | None = None
        self._seen = False  # whether the error (if any) was taken from this handle
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rlarchive-background-save")

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as e:  # kept for result(), the next save, or the exit
            self._error = e
        finally:
            try:
                self._cleanup()
            finally:
                self._work = _nothing  # drop the snapshot's values
                self._finished.set()

    def done(self) -> bool:
        """Whether the save has finished (written, or failed)."""
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the save has finished, at most ``timeout`` seconds; whether it has."""
        return self._finished.wait(timeout)

    def result(self, timeout: float | None = None) -> Any:
        """What the save returns (the :class:`~rlarchive.sb3.model_zip.ImportReport`), once finished.

        Raises:
            TimeoutError: not finished within ``timeout`` seconds.
            RlarchiveError: the save's error (or whatever else it raised); the archive was then not written.
        """
        error = self.exception(timeout)
        if error is not None:
            raise error
        return self._value

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """The save's error, or None when it succeeded, once finished (TimeoutError if not within ``timeout``)."""
        if not self.wait(timeout):
            raise TimeoutError(f"the background save to {self.path} has not finished")
        self._seen = True
        return self._error

    def __repr__(self) -> str:
        state = "running" if not self.done() else ("failed" if self._error is not None else "written")
        return f"<BackgroundSave {self.path!r} {state}>"


def _nothing() -> None:
    return None


_lock = threading.Lock()
_in_flight: BackgroundSave | None = None


def _unseen_error(save: BackgroundSave) -> BaseException | None:
    """The error of a finished save that nobody took, marked as taken; wrapped to name the save."""
    error = save._error
    if error is None or save._seen:
        return None
    save._seen = True
    if isinstance(error, RlarchiveError):
        wrapped = RlarchiveError(
            error.code,
            f"the background save to {save.path} failed: {error.message}",
            member=error.member,
            pointer=error.pointer,
            offset=error.offset,
        )
        wrapped.__cause__ = error
        return wrapped
    return error


def settle() -> None:
    """Wait for the save in flight, if any; raise its error if nobody took it from its handle."""
    global _in_flight
    with _lock:
        previous = _in_flight
    if previous is None:
        return
    previous.wait()
    with _lock:
        if _in_flight is previous:
            _in_flight = None
    error = _unseen_error(previous)
    if error is not None:
        raise error


def start(path: str | os.PathLike[str], work: Callable[[], Any], cleanup: Callable[[], None]) -> BackgroundSave:
    """Run ``work`` (then ``cleanup``, always) on a thread of its own, as the save in flight.

    The caller has settled the previous one (:func:`settle`).
    """
    global _in_flight
    save = BackgroundSave(path, work, cleanup)
    with _lock:
        if _in_flight is not None and not _in_flight.done():
            raise RuntimeError("a background save is already in flight; settle() it first")
        _in_flight = save
    save._thread.start()
    return save


@atexit.register
def _report_at_exit() -> None:
    """At exit: the save in flight has finished (non-daemon thread); an error nobody took goes to standard error."""
    try:
        settle()
    except BaseException as e:  # an exit cannot raise: say it
        sys.stderr.write(f"rlarchive: {e}\n")
