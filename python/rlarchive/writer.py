"""Writing archives: deterministic (spec §12) and atomic (temporary file, then rename)."""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, BinaryIO

try:
    import fcntl
except ImportError:  # Windows: no advisory locks (and an open file cannot be removed there)
    fcntl = None  # type: ignore[assignment]

from . import jsonstrict, param_tensors
from . import manifest as manifest_mod
from .checks import member_of
from .errors import RlarchiveError, esc
from .limits import INLINE_ARRAY_BYTES, MAX_JSON_BYTES, MAX_MEMBERS
from .tensors import TensorData, as_tensor, check_tensor_name, group_chunks, group_layout, group_progress
from .values import Checker, Encoder
from .version import NAME, VERSION
from .zipprofile import MEDIA_TYPE, check_name
from .zipwrite import ZipWriter

ARRAYS_GROUP = "arrays"
OPTIMIZER_PREFIX = "optimizer."


def _producer() -> tuple[str, str]:
    return (NAME, VERSION)


def _encode_document(
    data: Mapping[str, Any],
    optimizers: Mapping[str, Any],
    groups: dict[str, dict[str, TensorData]],
    opaque_fallback: bool,
) -> bytes:
    arrays: dict[str, TensorData] = {}
    enc = Encoder(ARRAYS_GROUP, arrays, INLINE_ARRAY_BYTES, opaque_fallback)
    doc: dict[str, Any] = {"data": {}}
    for k, v in data.items():
        if not isinstance(k, str):
            raise RlarchiveError("WRITE_INVALID", f"data keys must be strings, not {type(k).__name__}")
        doc["data"][k] = enc.encode(v, "/data/" + esc(k))
    if arrays:
        _add_group(groups, ARRAYS_GROUP, arrays)
    if optimizers:
        doc["optimizers"] = {}
        for name, state in optimizers.items():
            tensors: dict[str, TensorData] = {}
            doc["optimizers"][name] = Encoder(OPTIMIZER_PREFIX + name, tensors, -1, opaque_fallback).encode(state, "")
            _add_group(groups, OPTIMIZER_PREFIX + name, tensors)
    try:
        Checker().check_map(doc["data"], "/data")
        Checker().check_map(doc.get("optimizers", {}), "/optimizers")
        policy = {n: t.shape for n, t in groups.get(param_tensors.POLICY_GROUP, {}).items()}
        broken = param_tensors.check(doc.get("optimizers", {}), policy)
        if broken is not None:
            raise broken
    except RlarchiveError as e:
        raise RlarchiveError("WRITE_INVALID", f"the data would break the spec: {e}") from None
    raw = json_member(doc, "data.json")
    if len(raw) > MAX_JSON_BYTES:
        raise RlarchiveError("WRITE_INVALID", f"data.json would be {len(raw)} bytes, above MAX_JSON_BYTES")
    return raw


def _extension_member(
    name: str, value: Any, groups: dict[str, dict[str, TensorData]], data: Mapping[str, Any], extensions_used: list[Any]
) -> dict[str, bytes]:
    """The member of a supported extension for ``value``, checked as a reader checks it (spec §11.1 step 11)."""
    from .extensions import SUPPORTED

    ext = SUPPORTED.get(name)
    if ext is None:
        raise RlarchiveError(
            "WRITE_INVALID", f"{name!r} is not an extension this package writes; pass its members as extension_members"
        )
    arrays: dict[str, TensorData] = {}
    encoded = Encoder(ext.group, arrays, INLINE_ARRAY_BYTES).encode(value, "/" + ext.key)
    if arrays:
        _add_group(groups, ext.group, arrays)
    checker = Checker()
    try:
        checker.check(encoded, "/" + ext.key)
        for ref in checker.refs:
            t = groups.get(ref.group, {}).get(ref.name)
            if t is None or t.dtype != ref.dtype or list(t.shape) != list(ref.shape):
                raise RlarchiveError(
                    "REF_MISMATCH",
                    f"{ref.group}/{ref.name} is not a tensor of dtype {ref.dtype} and shape {ref.shape}",
                    pointer=ref.pointer,
                )
        ext.check(encoded, data, extensions_used)
    except RlarchiveError as e:
        raise RlarchiveError("WRITE_INVALID", f"the {name} member would break the spec: {e}") from None
    return {ext.member: json_member({ext.key: encoded}, ext.member)}


def json_member(doc: Any, name: str) -> bytes:
    """The JSON text of a member, checked against the JSON rules readers apply (spec §6).

    Raises WRITE_INVALID for what the value checks do not see: nesting deeper than
    MAX_JSON_DEPTH, integers outside ±(2^53-1) where the value model has no tag
    (space and schedule parameters), non-finite numbers, lone surrogates.
    """
    try:
        raw = jsonstrict.dumps(doc)
    except RecursionError:  # caller-given JSON (manifest extensions) nested far beyond the limit
        raise RlarchiveError("WRITE_INVALID", f"{name} would nest deeper than MAX_JSON_DEPTH") from None
    except ValueError as e:  # a non-finite float, or a string that is not Unicode text (UnicodeEncodeError)
        raise RlarchiveError("WRITE_INVALID", f"{name} would not be valid JSON text: {e}") from None
    try:
        jsonstrict.parse(raw, member=name)
    except RlarchiveError as e:
        raise RlarchiveError("WRITE_INVALID", f"{name} would break the spec: {e}") from None
    return raw


def check_metadata(metadata: Mapping[str, str] | None) -> None:
    """Refuse metadata a validator would warn about: a defined key with a malformed value (spec/metadata.md)."""
    from . import metadata as metadata_keys

    for k, v in (metadata or {}).items():
        problem = metadata_keys.check_value(str(k), str(v))  # written as str(key): str(value)
        if problem is not None:
            raise RlarchiveError("WRITE_INVALID", f"the metadata would break spec/metadata.md: {problem.message}")


def _add_group(groups: dict[str, Any], name: str, tensors: dict[str, Any]) -> None:
    if not isinstance(name, str) or check_name(member_of(name).encode("ascii", "replace")) is not None or "/" in name:
        raise RlarchiveError("WRITE_INVALID", f"invalid tensor group name {name!r}")
    if any(g.lower() == name.lower() for g in groups):
        raise RlarchiveError("WRITE_INVALID", f"tensor group {name!r} is given twice (names are case-insensitive)")
    groups[name] = tensors


# ---------------------------------------------------------------- atomic files (spec §12)

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


def save(
    path: os.PathLike[str] | str,
    data: Mapping[str, Any],
    tensors: Mapping[str, Mapping[str, Any]] | None = None,
    optimizers: Mapping[str, Any] | None = None,
    *,
    metadata: Mapping[str, str] | None = None,
    producer: tuple[str, str] | None = None,
    extensions_used: list[Any] | None = None,
    extensions_required: list[Any] | None = None,
    extensions: Mapping[str, Any] | None = None,
    extension_members: Mapping[str, bytes] | None = None,
    extension_values: Mapping[str, Any] | None = None,
    opaque_fallback: bool = False,
    force_zip64: bool = False,
) -> None:
    """Write an archive, atomically and deterministically.

    Args:
        path: destination; replaced only once the new archive is complete (see
            :func:`atomic_file`: a symbolic link keeps pointing to the new file).
        data: the algorithm's parameters (string keys; values per :mod:`rlarchive.values`).
            Arrays above 1 KiB go to the ``arrays`` tensor group.
        tensors: group name -> {tensor name -> NumPy array or torch tensor},
            e.g. ``{"policy": model.policy.state_dict()}``.
        optimizers: name -> optimizer state dict (torch ``optimizer.state_dict()``);
            its tensors go to the group ``optimizer.NAME``, the rest to data.json.
        metadata: text for the manifest (string to string); the keys spec/metadata.md
            defines (``env_id``, ``n_envs``, ``versions.NAME``, ``evaluations``, ...)
            must have their defined format (else WRITE_INVALID), other keys are free.
        producer: ``(name, version)``; defaults to this package.
        extensions_used, extensions_required, extensions: manifest extension fields (spec §5.4).
        extension_members: ``{"extensions/EXT/...": bytes}`` for used extensions.
        extension_values: ``{EXT: value}`` for extensions this package supports
            (:data:`rlarchive.extensions.SUPPORTED`): each value is written as the
            extension's member, its large arrays to the extension's tensor group,
            :class:`rlarchive.values.TensorRef` as references to tensors given
            above, and EXT added to ``extensions_used``; checked as a reader
            would check it (else WRITE_INVALID).
        opaque_fallback: keep values the model cannot hold as opaque pickles instead of failing.
        force_zip64: use ZIP64 records even where sizes do not need them.
    Raises:
        RlarchiveError: VALUE_UNSUPPORTED or WRITE_INVALID for the content,
            IO_ERROR when the destination cannot be written; either way the
            destination is untouched and no temporary file is left.
    """
    check_metadata(metadata)
    groups: dict[str, dict[str, TensorData]] = {}
    for g, ts in (tensors or {}).items():
        converted = {}
        for name, t in ts.items():
            check_tensor_name(name)
            converted[name] = as_tensor(t)
        _add_group(groups, g, converted)
    data_json = _encode_document(data, optimizers or {}, groups, opaque_fallback)
    ext_members = dict(extension_members or {})
    extensions_used = list(extensions_used or [])
    for ext_name in extension_values or {}:
        if ext_name not in extensions_used:
            extensions_used.append(ext_name)
    if extension_values:
        raw_data = jsonstrict.parse(data_json, member="data.json")["data"]  # what readers check the members against
        for ext_name, value in extension_values.items():
            ext_members.update(_extension_member(ext_name, value, groups, raw_data, extensions_used))
    used = set(extensions_used)
    for name in ext_members:
        parts = name.split("/")
        if (
            len(parts) < 3
            or parts[0] != "extensions"
            or parts[1] not in used
            or check_name(name.encode("ascii", "replace"))
        ):
            raise RlarchiveError(
                "WRITE_INVALID", f"extension member {name!r} must be extensions/EXT/... for a used EXT"
            )
    layouts = {member_of(g): group_layout(ts) for g, ts in groups.items()}
    names = [n.lower() for n in list(layouts) + list(ext_members)]
    if len(set(names)) != len(names) or len(names) + 3 > MAX_MEMBERS:
        raise RlarchiveError("WRITE_INVALID", "member names collide or exceed MAX_MEMBERS")

    with atomic_file(path) as f:
        zw = ZipWriter(f, force_zip64=force_zip64)
        entries = []

        def put(name: str, chunks: Any, size: int, align: int = 0, progress: Any = None) -> None:
            _, digest = zw.add(name, chunks, size, align=align, progress=progress)
            entries.append({"name": name, "size": size, "sha256": digest})

        zw.add("mimetype", [MEDIA_TYPE], len(MEDIA_TYPE))
        put("data.json", [data_json], len(data_json))
        for name in sorted(layouts, key=lambda n: n.encode("ascii")):
            prefix, order = layouts[name]
            size = len(prefix) + sum(t.nbytes for t in order)
            put(name, group_chunks(prefix, order), size, align=64, progress=group_progress(prefix, order))
        for name in sorted(ext_members, key=lambda n: n.encode("ascii")):
            content = bytes(ext_members[name])
            put(name, [content], len(content))
        man = manifest_mod.build(
            entries,
            producer or _producer(),
            metadata=metadata,
            extensions_used=extensions_used,
            extensions_required=extensions_required,
            extensions=extensions,
        )
        try:
            manifest_mod.check(man, frozenset(extensions_required or []))
        except RlarchiveError as e:
            raise RlarchiveError("WRITE_INVALID", f"the manifest would break the spec: {e}") from None
        raw = json_member(man, "manifest.json")
        zw.add("manifest.json", [raw], len(raw))
        zw.finish()
