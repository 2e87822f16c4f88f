"""Atomic file replacement (spec §12): a temporary file beside the destination, synced, then renamed over it.

:func:`atomic_file` is what every writer of this package writes through (the
archive writer, the SB3 and ONNX exports, the hub folder); :func:`take_over`
gives a new file the owner, group and permissions of the one it replaces.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # Windows: no advisory locks (and an open file cannot be removed there)
    fcntl = None  # type: ignore[assignment]

from .errors import RlarchiveError

__all__ = ["TEMP_SUFFIX", "STALE_TEMP_SECONDS", "atomic_file", "take_over"]

#: Suffix of the temporary files the writer creates beside a destination (spec §12).
TEMP_SUFFIX = ".rlarchive-tmp"
#: Bytes of the destination's name kept in a temporary file's name (NAME_MAX is 255).
_TEMP_STEM_BYTES = 200
#: Where advisory locks are unavailable, a temporary file this old (seconds) counts as stale.
STALE_TEMP_SECONDS = 3600
#: Windows can neither open a folder (to sync it) nor rename or remove a file that is open.
_WINDOWS = os.name == "nt"


def _io_error(doing: str, path: str, e: OSError) -> RlarchiveError:
    return RlarchiveError("IO_ERROR", f"cannot {doing} {path}: {e.strerror or e}")


def _destination(path: os.PathLike[str] | str) -> tuple[str, os.stat_result | None]:
    """The file a save replaces: ``path`` with every symbolic link resolved (spec §12), and its status if it exists."""
    given = os.fspath(path)
    dest = os.path.realpath(given)
    if os.path.islink(dest):
        raise RlarchiveError("IO_ERROR", f"cannot write {given}: symbolic links loop")
    try:
        st = os.stat(dest)
    except FileNotFoundError:
        return dest, None
    except OSError as e:
        raise _io_error("write", given, e) from None
    if stat.S_ISDIR(st.st_mode):
        raise RlarchiveError("IO_ERROR", f"cannot write {given}: it is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise RlarchiveError("IO_ERROR", f"cannot write {given}: it is not a regular file")
    return dest, st


def _temp_stem(dest: str) -> str:
    return os.fsdecode(os.fsencode(os.path.basename(dest))[:_TEMP_STEM_BYTES])


def _temp_name_pattern(stem: str) -> re.Pattern[str]:
    return re.compile(re.escape("." + stem + ".") + "[0-9a-f]{16}" + re.escape(TEMP_SUFFIX))


def _lock(fd: int) -> bool:
    """Take the exclusive advisory lock of a temporary file without waiting; False if another holds it."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # locks unsupported on this file system: the file stays unprotected
        return True
    return True


def _same_file(fd: int, path: str) -> bool:
    try:
        a, b = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _remove_if_stale(path: str) -> None:
    """Remove a temporary file no save holds any more (a save killed before its rename)."""
    if fcntl is None:
        st = os.stat(path, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode) and time.time() - st.st_mtime > STALE_TEMP_SECONDS:
            os.unlink(path)  # fails while the writing process still has it open
        return
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held by a save in progress (or locks unsupported: never guess)
            return
        if _same_file(fd, path):
            os.unlink(path)
    finally:
        os.close(fd)


def _remove_stale_temps(folder: str, stem: str) -> None:
    pattern = _temp_name_pattern(stem)
    try:
        names = [e.name for e in os.scandir(folder) if pattern.fullmatch(e.name)]
    except OSError:
        return  # creating the temporary file reports the problem
    for name in names:
        try:
            _remove_if_stale(os.path.join(folder, name))
        except OSError:
            pass  # removed meanwhile, or not ours to remove


def _create_temp(folder: str, stem: str, mode: int = 0o666) -> tuple[int, str]:
    """Create and lock a fresh temporary file in ``folder`` with ``mode`` less the umask."""
    flags = (
        os.O_RDWR
        | os.O_CREAT
        | os.O_EXCL
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_CLOEXEC", 0)
        | getattr(os, "O_BINARY", 0)
    )
    for _ in range(16):
        tmp = os.path.join(folder, f".{stem}.{secrets.token_hex(8)}{TEMP_SUFFIX}")
        try:
            fd = os.open(tmp, flags, mode)
        except FileExistsError:
            continue
        except OSError as e:
            raise _io_error("create a file in", folder, e) from None
        # A concurrent sweep may have locked (and removed) the file between its creation and the lock.
        if _lock(fd) and _same_file(fd, tmp):
            return fd, tmp
        os.close(fd)
    raise RlarchiveError("IO_ERROR", f"cannot create a temporary file in {folder}")


def _kept_mode(old: os.stat_result, group_kept: bool) -> int:
    """The permissions a file replacing ``old`` gets (spec §12): the old file's read, write and execute bits (never
    set-user-ID, set-group-ID or sticky); when its group could not be kept, the group's bits are the others' (the
    members of the new group were others for the old file)."""
    mode = stat.S_IMODE(old.st_mode) & 0o777
    return mode if group_kept else (mode & 0o707) | ((mode & 0o007) << 3)


def take_over(fd: int, tmp: str, old: os.stat_result) -> None:
    """Give the file (or folder) open as ``fd`` at ``tmp``, still empty, the owner, group and permissions of the one
    it replaces, whose status is ``old``, as far as this process may: its own user unless privileged, a group it
    belongs to (spec §12)."""
    group_kept = True
    if hasattr(os, "fchown"):
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except OSError:
            try:
                os.fchown(fd, -1, old.st_gid)
            except OSError:
                pass
        group_kept = os.fstat(fd).st_gid == old.st_gid
    mode = _kept_mode(old, group_kept)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        else:  # Windows: only the read-only flag exists
            os.chmod(tmp, mode)
    except OSError as e:
        raise _io_error("set the permissions of", tmp, e) from None


def _sync_folder(folder: str) -> None:
    """Make a rename in ``folder`` durable (not possible on Windows, where directories cannot be opened)."""
    if _WINDOWS:
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return  # a folder one may write but not read: nothing to sync with
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):  # file systems that cannot sync folders
            raise RlarchiveError(
                "IO_ERROR", f"the file is in place but {folder} could not be synced: {e.strerror}"
            ) from None
    finally:
        os.close(fd)


@contextmanager
def atomic_file(path: os.PathLike[str] | str) -> Iterator[BinaryIO]:
    """A temporary file beside ``path``, renamed over it only if the block succeeds (spec §12).

    - The destination is ``path`` with symbolic links resolved: saving to a link
      replaces the file it points to and keeps the link. A link loop, a directory
      or anything but a regular file is refused.
    - The temporary file is ``.<name>.<16 hex digits>.rlarchive-tmp`` in the
      destination's folder (``<name>`` cut to 200 bytes), exclusively
      ``flock``-ed while the save runs. For a new destination its mode is
      0666 less the umask, as ``open()`` would give. An existing destination
      keeps its permissions, owner and group, as an editor's safe save does:
      the temporary file is created readable by its owner only and, before a
      byte is written, given the old file's owner and group where this
      process may (:func:`take_over`) and the permissions of
      :func:`_kept_mode`. It is flushed and fsynced, renamed over the
      destination, and the folder is fsynced (except on Windows).
    - Before writing, temporary files of the same destination that no save
      holds locked (left by a killed save) are removed. Without advisory
      locks (Windows) only those older than :data:`STALE_TEMP_SECONDS` are.
    - On any exception the temporary file is removed and the destination is
      untouched. The whole file is replaced, so hard links to the old file keep
      the old content.

    Raises:
        RlarchiveError: IO_ERROR when the destination cannot be written (a
            directory, a missing or read-only folder, a full disk, the file-size
            limit: ignore ``SIGXFSZ`` to get the error rather than the signal).
    """
    dest, old = _destination(path)
    folder, stem = os.path.dirname(dest), _temp_stem(dest)
    _remove_stale_temps(folder, stem)
    fd, tmp = _create_temp(folder, stem, 0o666 if old is None else 0o600)
    f = os.fdopen(fd, "w+b")
    renamed = False
    try:
        if old is not None:
            take_over(fd, tmp, old)
        yield f
        f.flush()
        os.fsync(f.fileno())
        if _WINDOWS:  # an open file cannot be renamed there
            f.close()
        os.replace(tmp, dest)  # while still locked, so that no sweep takes the file
        renamed = True
        f.close()
        _sync_folder(folder)
    except BaseException as e:
        if not renamed:
            if _WINDOWS:  # an open file cannot be removed there
                _close_quietly(f)
            _unlink_quietly(tmp)
        _close_quietly(f)
        if isinstance(e, OSError):
            raise _io_error("write", os.fspath(path), e) from None
        raise


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _close_quietly(f: BinaryIO) -> None:
    try:
        f.close()
    except OSError:  # the flush of a failed write fails again; the descriptor is closed anyway
        pass
