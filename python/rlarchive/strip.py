"""An inference-only archive from an existing one (``rlarchive strip``), spec/metadata.md §7.

A training run's archive holds what acting never reads: the replay buffer
(extension ``RLA_replay_buffer``, gigabytes for a million transitions), the
run and random state (``RLA_training``), the optimizer states (the per-parameter
``state`` of each optimizer in ``data.json`` and its tensor group
``optimizer.NAME``: the moments and step counts, twice the policy's size
for Adam). :func:`strip`
writes the archive again without the parts it is asked to drop, by default
every training-only part (:data:`TRAINING_ONLY`):

- the rewrite is that of :func:`rlarchive.edit.rewrite`: members in the order
  of spec §12, every kept member copied byte for byte with its CRC-32 and
  SHA-256 checked while copying, ``data.json`` written again only when a part
  of it is dropped, a new manifest, the file replaced atomically (keeping its
  permissions);
- the result is checked as ``rlarchive validate`` checks a file before it
  takes the destination's place: a result that would not be valid is never
  written;
- the metadata key ``dropped`` (spec/metadata.md §1) lists the parts removed,
  with those an earlier rewrite removed, so that a card can say what the
  archive lacks.

The same archive and parts always give the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import checks, jsonstrict
from . import manifest as manifest_mod
from . import metadata as keys
from .checks import group_of, member_of
from .errors import RlarchiveError
from .extensions import SUPPORTED
from .reader import Archive
from .value_check import Checker
from .writer import OPTIMIZER_PREFIX, atomic_file, json_member
from .zipprofile import MEDIA_TYPE
from .zipwrite import ZipWriter

__all__ = ["PARTS", "TRAINING_ONLY", "StripResult", "strip", "parts_of"]

#: The extension of each part that is an extension.
_EXTENSIONS = {"training": "RLA_training", "replay_buffer": "RLA_replay_buffer"}
#: The parts a rewrite can drop, in the order the metadata key ``dropped`` lists them (spec/metadata.md §7).
PARTS = keys.DROPPABLE_PARTS
#: The parts only training reads: what :func:`strip` drops by default.
TRAINING_ONLY = keys.TRAINING_ONLY_PARTS


@dataclass
class StripResult:
    """What :func:`strip` did: the parts it ``dropped`` (present and removed, in the order of :data:`PARTS`), the
    members removed, the file's size before and after, and ``notes`` (parts asked for and absent, parts kept)."""

    path: str
    dropped: list[str] = field(default_factory=list)
    members_removed: list[str] = field(default_factory=list)
    bytes_before: int = 0
    bytes_after: int = 0
    notes: list[str] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)


def _parts(drop: Iterable[str] | None) -> list[str]:
    asked = list(TRAINING_ONLY if drop is None else drop)
    for p in asked:
        if p not in PARTS:
            raise RlarchiveError("INPUT_INVALID", f"{p!r} is not a part a rewrite can drop ({', '.join(PARTS)})")
    return [p for p in PARTS if p in asked]


def _opaque_keys(data: Mapping[str, Any]) -> list[str]:
    """The top-level ``data`` entries whose whole value is an opaque value (spec §7.8)."""
    return [k for k, v in data.items() if isinstance(v, dict) and v.get("$type") == "opaque"]


def _empty(state: Any) -> bool:
    return state == {} or (isinstance(state, dict) and state.get("$type") == "dict" and state.get("entries") == [])


def _stateful_optimizers(optimizers: Mapping[str, Any]) -> list[str]:
    """The optimizers whose per-parameter ``state`` (spec §7.9) is not empty."""
    return [n for n, v in optimizers.items() if isinstance(v, dict) and "state" in v and not _empty(v["state"])]


def parts_of(ar: Archive) -> dict[str, list[str]]:
    """The droppable parts the open archive holds: part name -> what it is made of (extension, optimizer or data
    entry names); a part the archive lacks is absent."""
    out: dict[str, list[str]] = {}
    used = ar.manifest.extensions_used
    for part, ext in _EXTENSIONS.items():
        if ext in used:
            out[part] = [ext]
    stateful = _stateful_optimizers(ar.raw_data.get("optimizers", {}))
    if stateful:
        out["optimizers"] = stateful
    opaque = _opaque_keys(ar.raw_data["data"])
    if opaque:
        out["opaque"] = opaque
    return {p: out[p] for p in PARTS if p in out}


def _kept_refs(ar: Archive, doc: Mapping[str, Any], extensions: Iterable[str]) -> set[str]:
    """The tensor groups that what stays references (``data.json`` as it will be, the kept supported extensions)."""
    checker = Checker()
    checker.check_map(doc["data"], "/data")
    checker.check_map(doc.get("optimizers", {}), "/optimizers")
    groups = {r.group for r in checker.refs}
    for name in extensions:
        ext = SUPPORTED.get(name)
        if ext is None:
            continue
        value = ar.extension_document(name)
        c = Checker()
        c.check(value, "/" + ext.key)
        groups |= {r.group for r in c.refs}
    return groups


def _new_document(ar: Archive, dropping: list[str]) -> dict[str, Any] | None:
    """The data document without the dropped parts, or None when it stays as it is."""
    raw = ar.raw_data
    if "optimizers" not in dropping and "opaque" not in dropping:
        return None
    gone = set(_opaque_keys(raw["data"])) if "opaque" in dropping else set()
    doc: dict[str, Any] = dict(raw)
    doc["data"] = {k: v for k, v in raw["data"].items() if k not in gone}
    if "optimizers" in dropping:  # the moments and step counts go; the parameter groups (settings) stay
        stateful = set(_stateful_optimizers(raw["optimizers"]))
        doc["optimizers"] = {n: ({**v, "state": {}} if n in stateful else v) for n, v in raw["optimizers"].items()}
    return doc


def _dropped_groups(ar: Archive, dropping: list[str], kept_refs: set[str], notes: list[str]) -> set[str]:
    candidates: set[str] = set()
    for part, ext in _EXTENSIONS.items():
        if part in dropping and ext in ar.groups:
            candidates.add(SUPPORTED[ext].group)
    if "optimizers" in dropping:
        candidates |= {OPTIMIZER_PREFIX + n for n in _stateful_optimizers(ar.raw_data["optimizers"])}
    present = candidates & set(ar.groups)
    for g in sorted(present & kept_refs):
        notes.append(f"tensor group {g!r} kept: a part that stays references it")
    return present - kept_refs


def _check_result(f: Any) -> None:
    """Validate the finished temporary file (a second descriptor on it: the writer's own stays open)."""
    from .validate import validate

    f.flush()
    with os.fdopen(os.dup(f.fileno()), "rb") as again:
        again.seek(0)
        report = validate(again)
    errors = [i for i in report["issues"] if i["severity"] == "error"]
    if errors:
        raise RlarchiveError("WRITE_INVALID", f"the rewritten archive would be invalid: {errors[0]['message']}")


def strip(
    path: str | os.PathLike[str], out: str | os.PathLike[str] | None = None, drop: Iterable[str] | None = None
) -> StripResult:
    """Rewrite the archive at ``path`` (or write it to ``out``) without the parts ``drop`` names (:data:`PARTS`;
    by default :data:`TRAINING_ONLY`), spec/metadata.md §7.

    Raises:
        RlarchiveError: INPUT_INVALID for a part that is not one of :data:`PARTS`; the archive's first broken rule
            (the parts that stay are checked, the deferred checks included, while they are copied);
            WRITE_INVALID when the result would not be valid; IO_ERROR when the destination cannot be written.
            The destination is then untouched.
    """
    asked = _parts(drop)
    src = os.fspath(path)
    with Archive(src, spaces="neutral") as ar:
        present = parts_of(ar)
        dropping = [p for p in asked if p in present]
        result = StripResult(os.fspath(out) if out is not None else src, dropping, bytes_before=ar.source.size)
        result.notes += [f"no {p} to drop" for p in asked if p not in present]
        result.notes += [f"kept {p} ({', '.join(present[p])})" for p in PARTS if p in present and p not in asked]
        gone_ext = {_EXTENSIONS[p] for p in dropping if p in _EXTENSIONS}
        kept_ext = [e for e in ar.manifest.extensions_used if e not in gone_ext]
        for name in kept_ext:
            state = checks.check_extension(ar.state, name)
            if state.issues:
                raise state.issues[0]
        doc = _new_document(ar, dropping)
        refs = _kept_refs(ar, doc if doc is not None else ar.raw_data, kept_ext)
        gone_groups = _dropped_groups(ar, dropping, refs, result.notes)
        gone = {member_of(g) for g in gone_groups}
        gone |= {n for n in ar.members if any(n.startswith(f"extensions/{e}/") for e in gone_ext)}
        result.members_removed = sorted(gone, key=lambda n: n.encode("ascii"))
        result.manifest = _write(ar, result, doc, gone, gone_ext)
    result.bytes_after = os.path.getsize(result.path)
    return result


def _metadata(current: Mapping[str, str], dropping: list[str]) -> dict[str, str]:
    before = keys.parsed(current, keys.DROPPED) or []
    merged = [p for p in PARTS if p in before or p in dropping]
    out = dict(current)
    if merged:
        out[keys.DROPPED] = jsonstrict.dumps(merged).decode("ascii")
    return out


def _manifest(ar: Archive, gone_ext: set[str], metadata: dict[str, str]) -> dict[str, Any]:
    raw = dict(ar.manifest.raw)
    for prop in ("extensions_used", "extensions_required"):
        if prop in raw:
            kept = [e for e in raw[prop] if e not in gone_ext]
            if kept:
                raw[prop] = kept
            else:
                del raw[prop]
    if "extensions" in raw:
        kept_data = {k: v for k, v in raw["extensions"].items() if k not in gone_ext}
        if kept_data:
            raw["extensions"] = kept_data
        else:
            del raw["extensions"]
    raw.pop("metadata", None)
    raw.pop("members", None)
    if metadata:
        raw["metadata"] = metadata
    return raw


def _write(
    ar: Archive, result: StripResult, doc: dict[str, Any] | None, gone: set[str], gone_ext: set[str]
) -> dict[str, Any]:
    """Write the archive without the members ``gone`` (and with ``doc`` as ``data.json`` when given)."""
    from .edit import member_order

    raw = _manifest(ar, gone_ext, _metadata(ar.metadata, result.dropped))
    data_json = json_member(doc, "data.json") if doc is not None else None
    listed = ar.manifest.members
    with atomic_file(result.path) as f:
        zw = ZipWriter(f)
        zw.add("mimetype", [MEDIA_TYPE], len(MEDIA_TYPE))
        entries = []
        for name in member_order(n for n in ar.members if n not in gone):
            if name == "data.json" and data_json is not None:
                _, digest = zw.add(name, [data_json], len(data_json))
                entries.append({"name": name, "size": len(data_json), "sha256": digest})
                continue
            m = ar.members[name]
            crc, digest = zw.add(name, ar.member_chunks(name), m.size, align=64 if group_of(name) is not None else 0)
            if crc != m.crc32:
                raise RlarchiveError(
                    "ZIP_CRC_MISMATCH", "CRC-32 does not match the member's data", member=name, offset=m.data_offset
                )
            if digest != listed[name]["sha256"]:
                raise RlarchiveError("MEMBER_DIGEST_MISMATCH", f"{name} does not match its SHA-256", member=name)
            entries.append({"name": name, "size": m.size, "sha256": digest})
        raw = {**raw, "members": sorted(entries, key=lambda e: e["name"].encode("ascii"))}
        raw = _in_manifest_order(raw)
        try:
            manifest_mod.check(raw, manifest_mod.SUPPORTED_EXTENSIONS)
        except RlarchiveError as e:
            raise RlarchiveError("WRITE_INVALID", f"the manifest would break the spec: {e}") from None
        text = json_member(raw, "manifest.json")
        zw.add("manifest.json", [text], len(text))
        zw.finish()
        _check_result(f)
    return raw


def _in_manifest_order(raw: dict[str, Any]) -> dict[str, Any]:
    """The manifest's properties in the order the reference writer gives them (spec §5.1), others after."""
    order = ("format", "format_version", "producer", "members", "extensions_used", "extensions_required")
    first = {k: raw[k] for k in (*order, "extensions", "metadata") if k in raw}
    return {**first, **{k: v for k, v in raw.items() if k not in first}}
