"""Where Stable-Baselines3's persistence calls put their files, for archives: SB3's path rules and file objects.

SB3 takes ``str | pathlib.Path | io.BufferedIOBase`` wherever it saves or
loads (``save``, ``load``, ``save_replay_buffer``, ``load_replay_buffer``,
``set_parameters``), and for paths it follows ``save_util.open_path``:
writing adds the suffix (``.zip``, ``.pkl``) to a path without one, makes the
missing parent folders and writes ``PATH_2`` when ``PATH`` is a folder;
reading tries ``PATH``, then ``PATH.SUFFIX``. The archives follow the same
rules, so a script finds its files where SB3 would have put them.

:func:`write` writes an archive to a path (through the writer's atomic
replace) or into a file object (built in a temporary file, then copied at the
object's position; the object stays open, as with SB3). :func:`source` gives
what :func:`rlarchive.open` reads. :func:`is_archive` tells an rlarchive
from another file by its 67 leading bytes (spec §3).
"""

from __future__ import annotations

import io
import os
import pathlib
import shutil
import tempfile
import warnings
from collections.abc import Callable
from typing import Any

from ..errors import RlarchiveError
from ..zipprofile import IDENT_END, IDENTIFICATION, SIG_LOCAL

__all__ = ["is_file_object", "write_path", "read_path", "write", "sb3_target", "source", "is_archive", "describe"]


def is_file_object(obj: Any) -> bool:
    """Whether ``obj`` is a binary file object (what SB3 accepts as ``io.BufferedIOBase``), not a path."""
    return not isinstance(obj, (str, bytes, os.PathLike)) and (
        callable(getattr(obj, "read", None)) or callable(getattr(obj, "write", None))
    )


def describe(path: Any) -> str:
    """``path`` as a message names it."""
    return os.fspath(path) if isinstance(path, (str, os.PathLike)) else f"the file object {type(path).__name__}"


def write_path(path: str | os.PathLike[str], suffix: str) -> str:
    """Where SB3's ``open_path(path, "w", suffix=suffix)`` writes: the suffix added to a path without one,
    missing parent folders made (with SB3's warning), ``PATH_2`` for a folder (with SB3's warning)."""
    p = pathlib.Path(path)
    if p.suffix == "" and suffix:
        p = pathlib.Path(f"{p}.{suffix}")
    if p.is_dir():
        warnings.warn(f"Path '{p}' is a folder. Will save instead to {p}_2", stacklevel=4)
        p = pathlib.Path(f"{p}_2")
    if not p.parent.exists():
        warnings.warn(f"Path '{p.parent}' does not exist. Will create it.", stacklevel=4)
        p.parent.mkdir(parents=True, exist_ok=True)
    return os.fspath(p)


def read_path(path: str | os.PathLike[str], suffix: str) -> str:
    """Where SB3's ``open_path(path, "r", suffix=suffix)`` reads: ``path`` when it exists, else ``path.suffix``
    when that exists, else ``path`` (whose opening then fails with IO_ERROR)."""
    p = os.fspath(path)
    if not os.path.exists(p) and suffix and os.path.exists(f"{p}.{suffix}"):
        return f"{p}.{suffix}"
    return p


def write(target: Any, save: Callable[[str], Any]) -> Any:
    """Run ``save(destination)`` for ``target``: a path, written as it is, or a writable binary file object.

    For a file object the archive is written into a temporary file first and
    then copied to the object at its position: the object receives a whole
    archive or, if the copy fails, an error. The object is left open, as SB3
    leaves it.

    Returns:
        What ``save`` returns.
    """
    if not is_file_object(target):
        return save(os.fspath(target))
    if not callable(getattr(target, "write", None)) or (
        callable(getattr(target, "writable", None)) and not target.writable()
    ):
        raise ValueError("Expected a writable file.")
    with tempfile.TemporaryDirectory(prefix="rlarchive-") as tmp:
        temp = os.path.join(tmp, "archive.rlarchive")
        result = save(temp)
        with open(temp, "rb") as f:
            try:
                shutil.copyfileobj(f, target)
                if callable(getattr(target, "flush", None)):
                    target.flush()
            except (OSError, ValueError, io.UnsupportedOperation) as e:
                raise RlarchiveError("IO_ERROR", f"cannot write the archive into {describe(target)}: {e}") from None
    return result


def sb3_target(path: Any, suffix: str) -> Any:
    """Where an SB3 persistence call writes ``path``: a file object as it is, a path by SB3's rules (:func:`write_path`)."""
    return path if is_file_object(path) else write_path(path, suffix)


def source(path: Any, suffix: str) -> Any:
    """What :func:`rlarchive.open` reads for ``path``: a file object as it is, a path by SB3's rules (:func:`read_path`)."""
    if is_file_object(path):
        if callable(getattr(path, "readable", None)) and not path.readable():
            raise ValueError("Expected a readable file.")
        return path
    return read_path(path, suffix)


def is_archive(src: Any) -> bool:
    """Whether ``src`` (a path or a seekable binary file object) begins as every rlarchive does (spec §3).

    A file object's position is put back. A path that cannot be read is not
    an archive (its opening then says why).
    """
    try:
        if is_file_object(src):
            where = src.tell()
            try:
                src.seek(0)
                head = src.read(IDENT_END)
            finally:
                src.seek(where)
        else:
            with open(os.fspath(src), "rb") as f:
                head = f.read(IDENT_END)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False
    return isinstance(head, bytes) and head[:4] == SIG_LOCAL and head[26:IDENT_END] == IDENTIFICATION
