"""Writing archives: deterministic (spec §12) and atomic (temporary file, then rename)."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from typing import Any, BinaryIO, Iterator, Mapping, Optional

from . import jsonstrict, manifest as manifest_mod
from .errors import RlarchiveError
from .limits import INLINE_ARRAY_BYTES, MAX_JSON_BYTES, MAX_MEMBERS
from .reader import member_of
from .tensors import TensorData, as_tensor, check_tensor_name, group_chunks, group_layout
from .values import Checker, Encoder, esc
from .zipprofile import MEDIA_TYPE, ZipWriter, check_name

ARRAYS_GROUP = "arrays"
OPTIMIZER_PREFIX = "optimizer."


def _producer() -> tuple[str, str]:
    from . import __version__

    return ("rlarchive-python", __version__)


def _encode_document(
    data: Mapping[str, Any],
    optimizers: Mapping[str, Any],
    groups: dict[str, dict[str, TensorData]],
    opaque_fallback: bool,
) -> bytes:
    arrays: dict[str, TensorData] = {}
    enc = Encoder(ARRAYS_GROUP, arrays, INLINE_ARRAY_BYTES, opaque_fallback)
    doc: dict = {"data": {}}
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
    except RlarchiveError as e:
        raise RlarchiveError("WRITE_INVALID", f"the data would break the spec: {e}") from None
    raw = _json_member(doc, "data.json")
    if len(raw) > MAX_JSON_BYTES:
        raise RlarchiveError("WRITE_INVALID", f"data.json would be {len(raw)} bytes, above MAX_JSON_BYTES")
    return raw


def _json_member(doc: Any, name: str) -> bytes:
    """The JSON text of a member, checked against the JSON rules readers apply (spec §6).

    Raises WRITE_INVALID for what the value checks do not see: nesting deeper than
    MAX_JSON_DEPTH, integers outside ±(2^53-1) where the value model has no tag
    (space and schedule parameters), non-finite numbers, lone surrogates.
    """
    try:
        raw = jsonstrict.dumps(doc)
    except ValueError as e:  # a non-finite float, or a string that is not Unicode text (UnicodeEncodeError)
        raise RlarchiveError("WRITE_INVALID", f"{name} would not be valid JSON text: {e}") from None
    try:
        jsonstrict.parse(raw, member=name)
    except RlarchiveError as e:
        raise RlarchiveError("WRITE_INVALID", f"{name} would break the spec: {e}") from None
    return raw


def _add_group(groups: dict, name: str, tensors: dict) -> None:
    if not isinstance(name, str) or check_name(member_of(name).encode("ascii", "replace")) is not None or "/" in name:
        raise RlarchiveError("WRITE_INVALID", f"invalid tensor group name {name!r}")
    if any(g.lower() == name.lower() for g in groups):
        raise RlarchiveError("WRITE_INVALID", f"tensor group {name!r} is given twice (names are case-insensitive)")
    groups[name] = tensors


@contextmanager
def atomic_file(path: "os.PathLike[str] | str") -> Iterator[BinaryIO]:
    """A temporary file beside ``path``, renamed over it only if the block succeeds.

    On any exception the temporary file is removed and ``path`` is untouched.
    """
    dest = os.fspath(path)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(dest) + ".", suffix=".tmp", dir=os.path.dirname(os.path.abspath(dest)))
    try:
        with os.fdopen(fd, "w+b") as f:
            yield f
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save(
    path: "os.PathLike[str] | str",
    data: Mapping[str, Any],
    tensors: Optional[Mapping[str, Mapping[str, Any]]] = None,
    optimizers: Optional[Mapping[str, Any]] = None,
    *,
    metadata: Optional[Mapping[str, str]] = None,
    producer: Optional[tuple[str, str]] = None,
    extensions_used: Optional[list] = None,
    extensions_required: Optional[list] = None,
    extensions: Optional[Mapping[str, Any]] = None,
    extension_members: Optional[Mapping[str, bytes]] = None,
    opaque_fallback: bool = False,
    force_zip64: bool = False,
) -> None:
    """Write an archive, atomically and deterministically.

    Args:
        path: destination; replaced only once the new archive is complete.
        data: the algorithm's parameters (string keys; values per :mod:`rlarchive.values`).
            Arrays above 1 KiB go to the ``arrays`` tensor group.
        tensors: group name -> {tensor name -> NumPy array or torch tensor},
            e.g. ``{"policy": model.policy.state_dict()}``.
        optimizers: name -> optimizer state dict (torch ``optimizer.state_dict()``);
            its tensors go to the group ``optimizer.NAME``, the rest to data.json.
        metadata: free text for the manifest (string to string).
        producer: ``(name, version)``; defaults to this package.
        extensions_used, extensions_required, extensions: manifest extension fields (spec §5.4).
        extension_members: ``{"extensions/EXT/...": bytes}`` for used extensions.
        opaque_fallback: keep values the model cannot hold as opaque pickles instead of failing.
        force_zip64: use ZIP64 records even where sizes do not need them.
    Raises:
        RlarchiveError: VALUE_UNSUPPORTED or WRITE_INVALID; the destination is untouched.
    """
    groups: dict[str, dict[str, TensorData]] = {}
    for g, ts in (tensors or {}).items():
        converted = {}
        for name, t in ts.items():
            check_tensor_name(name)
            converted[name] = as_tensor(t)
        _add_group(groups, g, converted)
    data_json = _encode_document(data, optimizers or {}, groups, opaque_fallback)
    ext_members = dict(extension_members or {})
    used = set(extensions_used or [])
    for name, content in ext_members.items():
        parts = name.split("/")
        if len(parts) < 3 or parts[0] != "extensions" or parts[1] not in used or check_name(name.encode("ascii", "replace")):
            raise RlarchiveError("WRITE_INVALID", f"extension member {name!r} must be extensions/EXT/... for a used EXT")
    layouts = {member_of(g): group_layout(ts) for g, ts in groups.items()}
    names = [n.lower() for n in list(layouts) + list(ext_members)]
    if len(set(names)) != len(names) or len(names) + 3 > MAX_MEMBERS:
        raise RlarchiveError("WRITE_INVALID", "member names collide or exceed MAX_MEMBERS")

    with atomic_file(path) as f:
        zw = ZipWriter(f, force_zip64=force_zip64)
        entries = []

        def put(name: str, chunks, size: int, align: int = 0) -> None:
            _, digest = zw.add(name, chunks, size, align=align)
            entries.append({"name": name, "size": size, "sha256": digest})

        zw.add("mimetype", [MEDIA_TYPE], len(MEDIA_TYPE))
        put("data.json", [data_json], len(data_json))
        for name in sorted(layouts, key=lambda n: n.encode("ascii")):
            prefix, order = layouts[name]
            put(name, group_chunks(prefix, order), len(prefix) + sum(t.nbytes for t in order), align=64)
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
        raw = _json_member(man, "manifest.json")
        zw.add("manifest.json", [raw], len(raw))
        zw.finish()
