"""Writing archives: checked as a reader checks them, deterministic (spec §12) and atomic (temporary file, then rename).

:func:`prepare` encodes the values and runs over them, before a byte is
written, the rules a reader runs over the archive (spec §11.1): step 7's
value rules (:func:`rlarchive.checks.check_values`), step 9's references
(:func:`rlarchive.checks.reference_issues`) and, for each extension value,
step 11's rules, those that read element bytes included
(:func:`rlarchive.extensions.check_document`, over the member's JSON and the
tensors about to be written). A broken rule is ``WRITE_INVALID``, whose
``__cause__`` is the reader's error (its code and location), for a caller
that reports it in its own terms (:func:`refusal`). :meth:`Prepared.write`
writes the checked archive; :func:`save` does both.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from . import checks, jsonstrict
from . import manifest as manifest_mod
from .atomic import STALE_TEMP_SECONDS, TEMP_SUFFIX, atomic_file, take_over
from .checks import member_of
from .errors import RlarchiveError, esc
from .extensions import SUPPORTED, Content, check_document
from .limits import INLINE_ARRAY_BYTES, MAX_JSON_BYTES, MAX_MEMBERS
from .tensors import (
    TensorData,
    TensorInfo,
    as_tensor,
    check_tensor_name,
    group_chunks,
    group_layout,
    group_progress,
    view_numpy,
)
from .values import Encoder, Ref
from .version import NAME, VERSION
from .zipprofile import MEDIA_TYPE, check_name
from .zipwrite import ZipWriter

__all__ = [
    "ARRAYS_GROUP",
    "OPTIMIZER_PREFIX",
    "TEMP_SUFFIX",
    "STALE_TEMP_SECONDS",
    "Prepared",
    "atomic_file",
    "check_metadata",
    "json_member",
    "prepare",
    "refusal",
    "save",
    "take_over",
]

ARRAYS_GROUP = "arrays"
OPTIMIZER_PREFIX = "optimizer."


def _producer() -> tuple[str, str]:
    return (NAME, VERSION)


Groups = dict[str, dict[str, TensorData]]


def _encode_document(
    data: Mapping[str, Any], optimizers: Mapping[str, Any], groups: Groups, opaque_fallback: bool
) -> tuple[dict[str, Any], Mapping[str, Any], tuple[Ref, ...]]:
    """(``data.json``'s document, as checked by step 7's value rules; its references), its arrays put in ``groups``."""
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
    with _refused("the data"):
        document, references = checks.check_values(doc)
    return doc, document, references


@contextmanager
def _refused(what: str) -> Iterator[None]:
    """A reader's error raised in the block as WRITE_INVALID, the reader's error as its ``__cause__``."""
    try:
        yield
    except RlarchiveError as e:
        raise RlarchiveError("WRITE_INVALID", f"{what} would break the spec: {e}") from e


def refusal(e: RlarchiveError) -> RlarchiveError:
    """The reader's error behind a ``WRITE_INVALID`` of :func:`prepare` (the rule the values would break, with
    its code and location), or ``e`` itself for any other error."""
    cause = e.__cause__
    return cause if e.code == "WRITE_INVALID" and isinstance(cause, RlarchiveError) else e


def _headers(groups: Groups) -> dict[str, dict[str, TensorInfo]]:
    """The tensor headers a reader will find (step 8) for the groups about to be written."""
    return {
        g: {n: TensorInfo(n, t.dtype, tuple(t.shape), 0, t.nbytes) for n, t in ts.items()} for g, ts in groups.items()
    }


def _content(data: Mapping[str, Any], groups: Groups) -> Content:
    """What the extensions' rules that read element bytes read: ``data.json``'s parsed ``data`` and the tensors
    about to be written, as a reader will see them (their little-endian element bytes)."""

    def tensor_bytes(group: str, name: str) -> bytes:
        return groups[group][name].data.tobytes()

    def tensor_array(group: str, name: str) -> Any:  # read-only, over the caller's memory when it is laid out so
        t = groups[group][name]
        elements = memoryview(t.data).toreadonly()  # type: ignore[arg-type]  # NumPy arrays are buffers
        return view_numpy(elements, TensorInfo(name, t.dtype, tuple(t.shape), 0, t.nbytes))

    return Content(data, tensor_bytes, tensor_array)


def _extension_member(name: str, value: Any, groups: Groups) -> tuple[str, bytes, Any]:
    """(member name, JSON text, parsed value) of a supported extension's member for ``value``; its arrays above
    ``INLINE_ARRAY_BYTES`` put in the extension's tensor group."""
    ext = SUPPORTED.get(name)
    if ext is None:
        raise RlarchiveError(
            "WRITE_INVALID", f"{name!r} is not an extension this package writes; pass its members as extension_members"
        )
    arrays: dict[str, TensorData] = {}
    encoded = Encoder(ext.group, arrays, INLINE_ARRAY_BYTES).encode(value, "/" + ext.key)
    if arrays:
        _add_group(groups, ext.group, arrays)
    raw, parsed = _json_text({ext.key: encoded}, ext.member)
    return ext.member, raw, parsed


def json_member(doc: Any, name: str) -> bytes:
    """The JSON text of a member, checked against the JSON rules readers apply (spec §6).

    Raises WRITE_INVALID for what the value checks do not see: nesting deeper than
    MAX_JSON_DEPTH, integers outside ±(2^53-1) where the value model has no tag
    (space and schedule parameters), non-finite numbers, lone surrogates.
    """
    return _json_text(doc, name)[0]


def _json_text(doc: Any, name: str) -> tuple[bytes, Any]:
    """(the JSON text of a member, the value a reader parses from it), as :func:`json_member` checks it."""
    try:
        raw = jsonstrict.dumps(doc)
    except RecursionError:  # caller-given JSON (manifest extensions) nested far beyond the limit
        raise RlarchiveError("WRITE_INVALID", f"{name} would nest deeper than MAX_JSON_DEPTH") from None
    except ValueError as e:  # a non-finite float, or a string that is not Unicode text (UnicodeEncodeError)
        raise RlarchiveError("WRITE_INVALID", f"{name} would not be valid JSON text: {e}") from None
    try:
        parsed = jsonstrict.parse(raw, member=name)
    except RlarchiveError as e:
        raise RlarchiveError("WRITE_INVALID", f"{name} would break the spec: {e}") from None
    return raw, parsed


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
    """Write an archive, atomically and deterministically: :func:`prepare` (every check, nothing written; its
    arguments), then :meth:`Prepared.write` to ``path``.

    ``path`` is replaced only once the new archive is complete (see
    :func:`atomic_file`: a symbolic link keeps pointing to the new file).

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED or WRITE_INVALID for the content,
            IO_ERROR when the destination cannot be written; either way the
            destination is untouched and no temporary file is left.
    """
    prepare(
        data,
        tensors,
        optimizers,
        metadata=metadata,
        producer=producer,
        extensions_used=extensions_used,
        extensions_required=extensions_required,
        extensions=extensions,
        extension_members=extension_members,
        extension_values=extension_values,
        opaque_fallback=opaque_fallback,
        force_zip64=force_zip64,
    ).write(path)


@dataclass(frozen=True)
class Prepared:
    """An archive checked and ready to write (:func:`prepare`): its members' bytes, the manifest's fields."""

    data_json: bytes
    layouts: Mapping[str, tuple[bytes, list[TensorData]]]  # tensor member name -> (safetensors header, tensors)
    ext_members: Mapping[str, bytes]
    producer: tuple[str, str]
    metadata: Mapping[str, str] | None
    extensions_used: list[Any]
    extensions_required: list[Any] | None
    extensions: Mapping[str, Any] | None
    force_zip64: bool

    def write(self, path: os.PathLike[str] | str) -> None:
        """Write the archive to ``path``, atomically (:func:`atomic_file`).

        Raises:
            RlarchiveError: WRITE_INVALID for a manifest that would break the
                spec, IO_ERROR when the destination cannot be written; either
                way the destination is untouched and no temporary file is left.
        """
        layouts = self.layouts
        with atomic_file(path) as f:
            zw = ZipWriter(f, force_zip64=self.force_zip64)
            entries = []

            def put(name: str, chunks: Any, size: int, align: int = 0, progress: Any = None) -> None:
                _, digest = zw.add(name, chunks, size, align=align, progress=progress)
                entries.append({"name": name, "size": size, "sha256": digest})

            zw.add("mimetype", [MEDIA_TYPE], len(MEDIA_TYPE))
            put("data.json", [self.data_json], len(self.data_json))
            for name in sorted(layouts, key=lambda n: n.encode("ascii")):
                prefix, order = layouts[name]
                size = len(prefix) + sum(t.nbytes for t in order)
                put(name, group_chunks(prefix, order), size, align=64, progress=group_progress(prefix, order))
            for name in sorted(self.ext_members, key=lambda n: n.encode("ascii")):
                content = bytes(self.ext_members[name])
                put(name, [content], len(content))
            man = manifest_mod.build(
                entries,
                self.producer,
                metadata=self.metadata,
                extensions_used=self.extensions_used,
                extensions_required=self.extensions_required,
                extensions=self.extensions,
            )
            try:
                manifest_mod.check(man, frozenset(self.extensions_required or []))
            except RlarchiveError as e:
                raise RlarchiveError("WRITE_INVALID", f"the manifest would break the spec: {e}") from None
            raw = json_member(man, "manifest.json")
            zw.add("manifest.json", [raw], len(raw))
            zw.finish()


def prepare(
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
) -> Prepared:
    """Encode an archive's values and check them as a reader checks the archive, writing nothing.

    Args:
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
        extension_members: ``{"extensions/EXT/...": bytes}`` for used extensions (written as they are).
        extension_values: ``{EXT: value}`` for extensions this package supports
            (:data:`rlarchive.extensions.SUPPORTED`): each value is written as the
            extension's member, its large arrays to the extension's tensor group,
            :class:`rlarchive.values.TensorRef` as references to tensors given
            above, and EXT added to ``extensions_used``; checked as a reader
            checks it (spec §11.1 step 11, the rules that read element bytes
            included), else WRITE_INVALID.
        opaque_fallback: keep values the model cannot hold as opaque pickles instead of failing.
        force_zip64: use ZIP64 records even where sizes do not need them.
    Returns:
        The :class:`Prepared` archive; :meth:`Prepared.write` writes it.
    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for a value the model cannot hold;
            WRITE_INVALID for content that would break the spec: a rule a
            reader checks has the reader's error as its ``__cause__``
            (:func:`refusal`): the data's value rules and references (steps 7
            and 9), each extension value's checks (step 11) in order.
    """
    check_metadata(metadata)
    groups: Groups = {}
    for g, ts in (tensors or {}).items():
        converted = {}
        for name, t in ts.items():
            check_tensor_name(name)
            converted[name] = as_tensor(t)
        _add_group(groups, g, converted)
    doc, document, references = _encode_document(data, optimizers or {}, groups, opaque_fallback)
    data_json, parsed_doc = _json_text(doc, "data.json")
    if len(data_json) > MAX_JSON_BYTES:
        raise RlarchiveError("WRITE_INVALID", f"data.json would be {len(data_json)} bytes, above MAX_JSON_BYTES")
    ext_members = dict(extension_members or {})
    extensions_used = list(extensions_used or [])
    for ext_name in extension_values or {}:
        if ext_name not in extensions_used:
            extensions_used.append(ext_name)
    parsed: dict[str, Any] = {}
    for ext_name, value in (extension_values or {}).items():
        member, raw, parsed[ext_name] = _extension_member(ext_name, value, groups)
        ext_members[member] = raw
    headers = _headers(groups)
    with _refused("the data"):
        for issue in checks.reference_issues(document, references, headers)[:1]:
            raise issue
    content = _content(parsed_doc["data"], groups)
    for ext_name, member_doc in parsed.items():
        with _refused(f"the {ext_name} member"):
            check_document(ext_name, member_doc, headers, content, extensions_used)
    layouts = {member_of(g): group_layout(ts) for g, ts in groups.items()}
    _check_member_names(layouts, ext_members, extensions_used)
    return Prepared(
        data_json,
        layouts,
        ext_members,
        producer or _producer(),
        metadata,
        extensions_used,
        extensions_required,
        extensions,
        force_zip64,
    )


def _check_member_names(
    layouts: Mapping[str, Any], ext_members: Mapping[str, bytes], extensions_used: list[Any]
) -> None:
    """Refuse extension members outside ``extensions/EXT/`` of a used EXT, and names that collide or are too many."""
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
    names = [n.lower() for n in list(layouts) + list(ext_members)]
    if len(set(names)) != len(names) or len(names) + 3 > MAX_MEMBERS:
        raise RlarchiveError("WRITE_INVALID", "member names collide or exceed MAX_MEMBERS")
