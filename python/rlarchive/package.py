"""A folder ready to upload to a model hub (``rlarchive package FILE OUTDIR``), spec/metadata.md §6.

The folder holds:

- the archive, copied byte for byte under its own file name;
- ``README.md``: the model card (:func:`rlarchive.card.card`), which model
  hubs show as the model's page;
- ``model.onnx``: the portable policy as an ONNX model
  (:func:`rlarchive.onnx_export.export_onnx`), when the package ``onnx`` is
  installed and the archive has a portable policy (otherwise left out, with
  a note);
- ``results.json``: the latest recorded evaluation (metadata ``evaluations``)
  in the form the RL Zoo and ``huggingface_sb3`` upload: ``mean_reward``,
  ``std_reward``, ``is_deterministic``, ``n_eval_episodes``,
  ``eval_datetime``, and ``env_id``. Written only when an evaluation is
  recorded (otherwise left out, with a note): a result is never made up here.

The folder is built in a temporary sibling and renamed into place, so
``OUTDIR`` is either absent, the old folder, or the whole new one. An
existing non-empty ``OUTDIR`` is refused unless ``force`` is given. Every
file's bytes depend on the archive and its file name only (no clock), so two
runs give identical files.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Any

from .errors import RlarchiveError

__all__ = ["PackageResult", "package", "results_json", "ONNX_NAME", "CARD_NAME", "RESULTS_NAME"]

#: The file names of the package, beside the archive's own.
CARD_NAME = "README.md"
ONNX_NAME = "model.onnx"
RESULTS_NAME = "results.json"

_COPY_CHUNK = 1 << 20
_BINARY = getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass
class PackageResult:
    """What :func:`package` wrote: ``folder`` (the package), ``files`` (names in it, sorted) and ``notes`` (what was left out, and why)."""

    folder: str
    files: list[Any] = field(default_factory=list)
    notes: list[Any] = field(default_factory=list)


def results_json(evaluation: dict[str, Any]) -> str:
    """An evaluation of spec/metadata.md §3 as the RL Zoo's ``results.json`` (text, ending in a newline).

    The members, in this order: ``mean_reward`` and ``std_reward`` (numbers),
    ``is_deterministic`` (boolean), ``n_eval_episodes`` (integer),
    ``eval_datetime`` (the evaluation's ``date``, ISO 8601 in UTC), and
    ``env_id``.
    """
    data = {
        "mean_reward": float(evaluation["mean"]),
        "std_reward": float(evaluation["std"]),
        "is_deterministic": bool(evaluation["deterministic"]),
        "n_eval_episodes": int(evaluation["episodes"]),
        "eval_datetime": str(evaluation["date"]),
        "env_id": str(evaluation["env_id"]),
    }
    return json.dumps(data, indent=2, ensure_ascii=True, allow_nan=False) + "\n"


def _write(folder: str, name: str, data: bytes) -> None:
    with open(os.path.join(folder, name), "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _copy(src: str, folder: str, name: str) -> None:
    """Copy the archive into the package with its own permissions less the umask, as ``cp`` does (and readable
    and writable by its new owner): a private archive's copy stays private."""
    try:
        with open(src, "rb") as fin:
            mode = (stat.S_IMODE(os.fstat(fin.fileno()).st_mode) & 0o777) | 0o600
            fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, mode)
            with os.fdopen(fd, "wb") as fout:
                _copy_bytes(fin, fout)
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot copy {src}: {e.strerror or e}") from None


def _copy_bytes(fin: Any, fout: Any) -> None:
    while chunk := fin.read(_COPY_CHUNK):
        fout.write(chunk)
    fout.flush()
    os.fsync(fout.fileno())


def _sync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _nonempty_dir(path: str) -> bool:
    with os.scandir(path) as it:
        return any(True for _ in it)


def _check_destination(out: str, force: bool) -> None:
    if os.path.islink(out) or (os.path.lexists(out) and not os.path.isdir(out)):
        raise RlarchiveError("IO_ERROR", f"cannot write the package to {out}: it exists and is not a folder")
    if os.path.isdir(out) and not force and _nonempty_dir(out):
        raise RlarchiveError(
            "IO_ERROR", f"cannot write the package to {out}: the folder exists and is not empty (--force replaces it)"
        )


def _has_policy(path: str) -> bool:
    from . import extensions, policy_description
    from .reader import Archive

    with Archive(path, spaces="neutral") as ar:
        return extensions.read_document(ar, policy_description.EXTENSION) is not None


def package(
    path: str | os.PathLike[str],
    outdir: str | os.PathLike[str],
    *,
    force: bool = False,
    onnx: bool = True,
) -> PackageResult:
    """Write the hub package of the archive at ``path`` into the folder ``outdir`` (spec/metadata.md §6).

    ``force`` replaces an existing non-empty ``outdir`` (as a whole, by a
    rename); ``onnx=False`` leaves the ONNX model out.

    Raises:
        RlarchiveError: the archive's first error when it is invalid (no
            package is written); ``METADATA_INVALID`` when a defined metadata
            key the card or ``results.json`` needs is malformed;
            ``IO_ERROR`` when ``outdir`` exists and is not empty (without
            ``force``), is not a folder, holds the archive (even with
            ``force``), or cannot be written.
    """
    from . import metadata as keys
    from .card import card
    from .reader import Archive

    src = os.fspath(path)
    out = os.path.abspath(os.fspath(outdir))
    name = os.path.basename(src)
    if not name or name in (".", ".."):
        raise RlarchiveError("IO_ERROR", f"cannot package {src}: not a file name")
    if not os.path.isfile(src):
        raise RlarchiveError("IO_ERROR", f"cannot package {src}: not a file")
    if name in (CARD_NAME, ONNX_NAME, RESULTS_NAME):
        raise RlarchiveError(
            "IO_ERROR",
            f"cannot package {src}: its name is one of the package's own files ({CARD_NAME}, {ONNX_NAME}, {RESULTS_NAME})",
        )
    _check_destination(out, force)
    real_out, real_src = os.path.realpath(out), os.path.realpath(src)
    if os.path.commonpath([real_out, real_src]) == real_out:
        raise RlarchiveError(
            "IO_ERROR", f"cannot write the package to {out}: the folder holds {src} (choose another folder)"
        )
    parent = os.path.dirname(out)
    try:
        tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out)[:100]}.", suffix=".package-tmp", dir=parent)
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot write the package in {parent}: {e.strerror or e}") from None
    notes: list[Any] = []
    try:
        _folder_mode(tmp, out)
        _copy(src, tmp, name)
        copy = os.path.join(tmp, name)  # everything below reads the copy: the package describes what it holds
        text = card(copy)  # validates the archive: an invalid one has no package
        _write(tmp, CARD_NAME, text.encode("utf-8"))
        with Archive(copy, spaces="neutral") as ar:
            evaluations: list[Any] = keys.parsed(ar.metadata, keys.EVALUATIONS) or []
        if evaluations:
            _write(tmp, RESULTS_NAME, results_json(evaluations[-1]).encode("ascii"))
        else:
            notes.append(
                f"no evaluation recorded: no {RESULTS_NAME} (run: rlarchive evaluate FILE --env ENV_ID --episodes 10 --seed 0 --record)"
            )
        if onnx:
            _add_onnx(copy, tmp, notes)
        _sync_folder(tmp)
        _put_in_place(tmp, out, force)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _sync_folder(parent)
    return PackageResult(out, sorted(os.listdir(out)), notes)


def _folder_mode(tmp: str, out: str) -> None:
    """The new folder's permissions: those of the folder it replaces (with its owner and group where this process
    may, spec §12), else what ``mkdir`` gives (0777 less the umask)."""
    try:
        old = os.stat(out)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        return
    from .writer import take_over

    fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        take_over(fd, tmp, old)
    finally:
        os.close(fd)


def _add_onnx(copy: str, folder: str, notes: list[Any]) -> None:
    try:
        import onnx  # noqa: F401
    except ImportError:
        notes.append(f"the package onnx is not installed: no {ONNX_NAME} (pip install 'rlarchive[onnx]')")
        return
    if not _has_policy(copy):
        notes.append(f"the archive has no portable policy (RLA_policy): no {ONNX_NAME}")
        return
    from .onnx_export import export_onnx

    export_onnx(copy, os.path.join(folder, ONNX_NAME))


def _put_in_place(tmp: str, out: str, force: bool) -> None:
    """Rename the finished folder ``tmp`` to ``out``; with ``force``, an existing ``out`` is moved aside first and removed after."""
    _check_destination(out, force)  # again: the folder may have appeared while the package was built
    old: str | None = None
    if os.path.isdir(out) and _nonempty_dir(out):
        old = tempfile.mkdtemp(
            prefix=f".{os.path.basename(out)[:100]}.", suffix=".package-old", dir=os.path.dirname(out)
        )
        os.rmdir(old)
        try:
            os.rename(out, old)
        except OSError as e:
            raise RlarchiveError("IO_ERROR", f"cannot replace {out}: {e.strerror or e}") from None
    try:
        os.rename(tmp, out)  # over an empty folder, or where nothing is
    except OSError as e:
        if old is not None:
            os.rename(old, out)
        raise RlarchiveError("IO_ERROR", f"cannot write the package to {out}: {e.strerror or e}") from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
