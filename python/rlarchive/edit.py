"""Changing an archive's metadata by rewriting it (spec/metadata.md §5, spec §12).

:func:`set_metadata` writes the archive again with new manifest metadata: the
members in the order of spec §12, each member's bytes copied as they are
(tensors are never decoded or re-encoded), their CRC-32 and SHA-256 computed
while copying and compared with the manifest (so a damaged member is refused,
never carried over), a new manifest, and the file replaced atomically (spec
§12: temporary file, fsync, rename). The result is the archive the reference
writer produces for the same content and the new metadata: rewriting an
archive it wrote and setting the metadata back gives the original bytes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Union

from . import manifest as manifest_mod
from .checks import group_of
from .errors import RlarchiveError
from .reader import Archive
from .writer import atomic_file, check_metadata, json_member
from .zipprofile import MEDIA_TYPE
from .zipwrite import ZipWriter

__all__ = ["set_metadata", "update_metadata", "rewrite", "edited"]

PathLike = Union[str, "os.PathLike[str]"]


def member_order(names: Iterable[str]) -> list[str]:
    """The members after ``mimetype`` in the order of spec §12 (the manifest last)."""
    names = [n for n in names if n not in ("mimetype", "manifest.json", "data.json")]
    tensors = sorted((n for n in names if group_of(n) is not None), key=lambda n: n.encode("ascii"))
    others = sorted((n for n in names if group_of(n) is None), key=lambda n: n.encode("ascii"))
    return ["data.json", *tensors, *others]


def edited(
    metadata: Mapping[str, str], set: Mapping[str, str] | None = None, unset: Sequence[str] = ()
) -> dict[str, str]:
    """``metadata`` with the keys of ``unset`` removed, then ``set``'s entries put (an existing key keeps its place)."""
    gone = frozenset(unset)
    out = {k: v for k, v in metadata.items() if k not in gone}
    for k, v in (set or {}).items():
        out[k] = v
    return out


def set_metadata(path: PathLike, metadata: Mapping[str, str], out: PathLike | None = None) -> dict[str, Any]:
    """Rewrite the archive at ``path`` (or write it to ``out``) with ``metadata`` as its whole manifest metadata (:func:`rewrite`)."""
    given = dict(metadata)
    return rewrite(path, lambda current: given, out)


def rewrite(
    path: PathLike, change: Callable[[dict[str, str]], Mapping[str, str]], out: PathLike | None = None
) -> dict[str, Any]:
    """Rewrite the archive at ``path`` (or write it to ``out``) with the metadata ``change(current metadata)``.

    The archive must pass every check of spec §11.1, the deferred ones
    included (they run while the members are copied) and those of the
    extensions this package supports. Everything else in the manifest
    (producer, extensions, properties of later minor versions) is kept.

    Args:
        path: the archive.
        change: gives the whole new metadata (string to string) from the
            current one; an empty mapping removes the property. Keys defined
            in spec/metadata.md must have their format.
        out: where to write the result; by default ``path`` itself, replaced
            atomically once the new file is complete.
    Returns:
        The new manifest.
    Raises:
        RlarchiveError: the archive's first broken rule (its code), WRITE_INVALID
            for metadata that breaks spec/metadata.md or the manifest's rules (spec §5.1),
            IO_ERROR when the destination cannot be written. The destination is
            then untouched.
    """
    with Archive(path, spaces="neutral") as ar:
        new_meta = dict(change(ar.metadata))
        for k, v in new_meta.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise RlarchiveError(
                    "WRITE_INVALID", f"metadata maps strings to strings, not {type(k).__name__} to {type(v).__name__}"
                )
        check_metadata(new_meta)
        ar.check_extensions()
        raw = dict(ar.manifest.raw)
        listed = ar.manifest.members
        names = member_order(ar.members)
        with atomic_file(out if out is not None else path) as f:
            zw = ZipWriter(f)
            zw.add("mimetype", [MEDIA_TYPE], len(MEDIA_TYPE))
            entries = []
            for name in names:
                m = ar.members[name]
                crc, digest = zw.add(
                    name, ar.member_chunks(name), m.size, align=64 if group_of(name) is not None else 0
                )
                if crc != m.crc32:
                    raise RlarchiveError(
                        "ZIP_CRC_MISMATCH", "CRC-32 does not match the member's data", member=name, offset=m.data_offset
                    )
                if digest != listed[name]["sha256"]:
                    raise RlarchiveError("MEMBER_DIGEST_MISMATCH", f"{name} does not match its SHA-256", member=name)
                entries.append({"name": name, "size": m.size, "sha256": digest})
            raw["members"] = sorted(entries, key=lambda e: e["name"].encode("ascii"))
            raw.pop("metadata", None)
            if new_meta:
                raw["metadata"] = new_meta
            try:
                manifest_mod.check(raw, manifest_mod.SUPPORTED_EXTENSIONS)
            except RlarchiveError as e:
                raise RlarchiveError("WRITE_INVALID", f"the manifest would break the spec: {e}") from None
            text = json_member(raw, "manifest.json")
            zw.add("manifest.json", [text], len(text))
            zw.finish()
    return raw


def update_metadata(
    path: PathLike, set: Mapping[str, str] | None = None, unset: Sequence[str] = (), out: PathLike | None = None
) -> dict[str, str]:
    """Remove the keys ``unset``, put the entries of ``set``, and rewrite (:func:`set_metadata`); returns the new metadata."""
    metadata: dict[str, str] = rewrite(path, lambda current: edited(current, set, unset), out).get("metadata", {})
    return metadata
