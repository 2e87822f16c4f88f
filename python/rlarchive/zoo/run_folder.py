"""A downloaded folder read without leaving it (Annex B.12): its entries, and its files opened without following links.

An RL Zoo run folder, or a model hub repository, is downloaded material: its
entries are named and made by whoever published it. Here:

- :func:`entries` lists a folder of the run with each entry's status taken
  without following links (``lstat``). A symbolic link is followed only when
  the path it resolves to lies inside the run folder (the folder the caller
  named, with its own links resolved); a link that leaves it, points to
  nothing or loops is skipped, and so is anything that is neither a regular
  file nor a folder (a FIFO, which would block a reader, a device, a socket).
  Each skipped entry gets a note that names it in its escaped form (spec §14).
- :func:`open_file` opens a listed file by the path it resolved to, relative
  to the run folder, one component at a time from a descriptor of the folder,
  each with ``O_NOFOLLOW`` (and the file with ``O_NONBLOCK``), then checks
  that it is a regular file: a link or a FIFO put in an entry's place after
  the listing is refused (``IO_ERROR``), never followed. Where the platform
  cannot open relative to a folder descriptor (Windows), the file's path is
  opened with what the platform has.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import BinaryIO

from ..errors import RlarchiveError
from ..filenames import escape_name

__all__ = ["Entry", "entries", "open_file", "MAX_RUN_ENTRIES"]

#: Most entries listed in a run folder or its parameter folder.
MAX_RUN_ENTRIES = 10_000

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_AT_DIR_FD = os.open in os.supports_dir_fd and bool(_NOFOLLOW and _DIRECTORY)


@dataclass(frozen=True)
class Entry:
    """A usable entry of a run folder: ``kind`` ``"file"`` or ``"folder"``, and ``rel``, the path it resolves to
    relative to the run folder (components joined with ``os.sep``; a link's target, else the entry itself)."""

    kind: str
    rel: str


def _inside(real_top: str, target: str) -> bool:
    return target != real_top and os.path.commonpath([real_top, target]) == real_top


def _resolve(top: str, real_top: str, rel: str) -> tuple[os.stat_result | None, str, str]:
    """(status without following links, the path relative to the run folder, why it is skipped or "")."""
    path = os.path.join(top, rel)
    st = os.lstat(path)
    if not stat.S_ISLNK(st.st_mode):
        return st, rel, ""
    target = os.path.realpath(path)
    if not _inside(real_top, target):
        return None, rel, "a symbolic link that leads out of the run folder (not followed)"
    try:
        st = os.lstat(target)
    except OSError:
        return None, rel, "a symbolic link to nothing"
    if stat.S_ISLNK(st.st_mode):
        return None, rel, "a symbolic link loop"
    return st, os.path.relpath(target, real_top), ""


def entries(top: str, sub: str = "") -> tuple[dict[str, Entry], list[str]]:
    """The usable entries of the folder ``sub`` (relative to the run folder ``top``; "" for the run folder itself)
    by name, and one note per entry skipped.

    Raises:
        RlarchiveError: IO_ERROR when the folder cannot be listed, LIMIT_EXCEEDED beyond MAX_RUN_ENTRIES entries.
    """
    real_top = os.path.realpath(top)
    folder = os.path.join(top, sub) if sub else top
    out: dict[str, Entry] = {}
    notes: list[str] = []
    try:
        with os.scandir(folder) as it:
            names = []
            for i, e in enumerate(it):
                if i >= MAX_RUN_ENTRIES:
                    raise RlarchiveError(
                        "LIMIT_EXCEEDED",
                        f"{escape_name(folder)}: more than {MAX_RUN_ENTRIES} entries (MAX_RUN_ENTRIES)",
                    )
                names.append(e.name)
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot list {escape_name(folder)}: {e.strerror or e}") from None
    for name in sorted(names):
        rel = os.path.join(sub, name) if sub else name
        try:
            st, resolved, why = _resolve(top, real_top, rel)
        except OSError:  # removed while listed
            continue
        if st is not None and stat.S_ISREG(st.st_mode):
            out[name] = Entry("file", resolved)
        elif st is not None and stat.S_ISDIR(st.st_mode):
            out[name] = Entry("folder", resolved)
        else:
            notes.append(f"skipped {escape_name(rel)}: {why or 'neither a regular file nor a folder'}")
    return out, notes


def _open_at(top: str, rel: str) -> int:
    parts = rel.split(os.sep)
    if any(p in ("", ".", "..") for p in parts):
        raise OSError(0, "not a path inside the run folder")
    fd = os.open(top, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=fd)
    finally:
        os.close(fd)


def open_file(top: str, rel: str) -> BinaryIO:
    """The regular file at ``rel`` (an :attr:`Entry.rel`) in the run folder ``top``, open for reading; its ``name``
    is its path in escaped form (spec §14), for messages.

    Raises:
        RlarchiveError: IO_ERROR when it cannot be opened without following a link, or is not a regular file.
    """
    shown = escape_name(os.path.join(top, rel))
    try:
        if _AT_DIR_FD:
            fd = _open_at(top, rel)
        else:
            fd = os.open(os.path.join(top, rel), os.O_RDONLY | _NOFOLLOW | _NONBLOCK | getattr(os, "O_BINARY", 0))
    except OSError as e:
        raise RlarchiveError(
            "IO_ERROR", f"cannot read {shown}: {e.strerror or e} (a link, or changed since the folder was listed)"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RlarchiveError("IO_ERROR", f"cannot read {shown}: not a regular file")
    return open(shown, "rb", opener=lambda _path, _flags: fd)
