"""The checks of spec §11.1, one public function per step, in order, grouped in named phases.

Every step takes the :class:`CheckState` the earlier steps produced and
returns a new one (the state is immutable; all it holds is in its fields).
Steps 1-7 raise :class:`~rlarchive.errors.RlarchiveError` at their first
broken rule; steps 8-11 never raise for a broken rule: they return the state
with the issue(s) appended to ``issues`` (step 8 also records the failed
group). What the later steps find is in the state too: step 10 the
``ST_BOOL_VALUE`` warnings and (asked by ``digest_tensors``) each tensor's
SHA-256, which the dump prints; step 11 each extension's checked document.

:data:`PHASES` names the steps by what they check, and the callers choose
phases by name (:func:`run`):

- ``structure`` (steps 1-6: the ZIP container, the layout, the manifest): a
  validator stops at their first error (spec §14);
- ``data`` (step 7, ``data.json``), ``tensors`` (steps 8-9: the tensor
  members and the references); :func:`rlarchive.open` runs these three
  phases and raises the first of ``issues`` (:class:`rlarchive.Archive` is
  built from the state);
- ``integrity`` (step 10, the deferred checks) and ``extensions`` (step 11):
  the dump and the validator run them after the others.

:func:`rlarchive.validate` runs every phase, turning an error raised in
``structure`` into the report's single issue and one raised by step 7 into
an issue (``document`` then stays None, and steps 9 and 11 skip what depends
on it), and collects everything else (spec §14). The writer runs the rules of
steps 7, 9 and 11 over the values it is about to write (:func:`check_values`,
:func:`reference_issues`, :func:`rlarchive.extensions.check_document`).

:data:`STEPS` lists the steps in order; the JavaScript reader's ``checks.js``
has the same steps and phases under the same names (camelCase). The ZIP
records are read by :mod:`rlarchive.zipread`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from . import manifest as manifest_mod
from . import param_tensors
from .checksums import digests
from .errors import RlarchiveError, esc
from .extensions import SUPPORTED, read_document
from .limits import MAX_JSON_BYTES
from .manifest import Manifest
from .read_plan import prefetch_opening
from .sources import Source
from .tensors import TensorInfo, TensorPass, check_reference, entry_pointer, read_group, view_numpy
from .values import Checker, Ref
from .zipprofile import IDENT_END, IDENTIFICATION, MEDIA_TYPE, SIG_LOCAL, Member
from .zipread import (
    EndRecords,
    check_end_records,
    check_member_layout,
    check_member_names,
    find_end_record,
    read_central_record,
    read_chunks,
    read_json_member,
    read_local_header,
    read_zip64_end_records,
)

__all__ = [
    "CheckState",
    "STEPS",
    "PHASES",
    "OPEN",
    "DEFERRED",
    "run",
    "TENSOR_PREFIX",
    "TENSOR_SUFFIX",
    "EXTENSION_PREFIX",
    "group_of",
    "member_of",
    "identify",
    "read_end_records",
    "read_central_directory",
    "read_local_headers",
    "check_layout",
    "check_manifest",
    "check_data",
    "check_tensor_members",
    "check_references",
    "check_digests",
    "check_extensions",
    "check_extension",
    "check_values",
    "reference_issues",
    "start",
    "data_warnings",
]

TENSOR_PREFIX = "tensors/"
TENSOR_SUFFIX = ".safetensors"
EXTENSION_PREFIX = "extensions/"
#: the members every archive has, and the two that step 10 does not check (steps 6 and 7 did)
FIXED_MEMBERS = ("mimetype", "manifest.json", "data.json")
_CHECKED_EARLY = ("manifest.json", "data.json")
_NOTHING: Mapping[str, Any] = MappingProxyType({})


def group_of(name: str) -> str | None:
    """The group name of a tensor member name, or None if it is not one."""
    if name.startswith(TENSOR_PREFIX) and name.endswith(TENSOR_SUFFIX) and name.count("/") == 1:
        g = name[len(TENSOR_PREFIX) : -len(TENSOR_SUFFIX)]
        return g if g not in ("", ".", "..") else None  # a group name is a name segment (spec §2.4)
    return None


def member_of(group: str) -> str:
    """The member name of a tensor group."""
    return f"{TENSOR_PREFIX}{group}{TENSOR_SUFFIX}"


@dataclass(frozen=True)
class CheckState:
    """What the steps of spec §11.1 have found so far; each step returns a new copy.

    Attributes:
        source: the byte source the archive is read from.
        end: after step 2, what the end records say (:class:`rlarchive.zipread.EndRecords`).
        members: after step 4, the members in ZIP order (name -> :class:`~rlarchive.zipprofile.Member`;
            after step 3 they are there without their data offset, -1).
        manifest: after step 6, the checked manifest.
        document: after step 7, ``{"data": ..., "optimizers": ...}``; None when step 7 failed or did not run.
        references: after step 7, the references of ``data.json`` met, in document order.
        tensor_headers: after step 8, group -> {tensor name -> :class:`~rlarchive.tensors.TensorInfo`}.
        failed_groups: after step 8, the groups whose member failed.
        failed_members: after step 10, the members whose deferred checks failed.
        warnings: the warnings (and infos) so far, in the order found (step 10 adds ``ST_BOOL_VALUE``).
        issues: the errors steps 8-11 collected, in the order found.
        data_json: between steps 6 and 7, the bytes of ``data.json`` when within MAX_JSON_BYTES: read
            once for the digest of step 6 and the parse of step 7 (step 7 sets it back to None).
        digest_tensors: asks step 10 for ``tensor_digests`` (the dump's; a validator does not need them).
        tensor_digests: after step 10 with ``digest_tensors``, group -> {tensor name -> SHA-256 (hex) of its
            element bytes}, for the members that passed, read in the same pass as the member's digests.
        extension_documents: after step 11, extension name -> its checked raw value, for each used, supported
            extension whose checks passed (:func:`check_extension`).
    """

    source: Source
    end: EndRecords | None = None
    members: Mapping[str, Member] = field(default_factory=lambda: _NOTHING)
    manifest: Manifest | None = None
    document: Mapping[str, Any] | None = None
    references: tuple[Ref, ...] = ()
    tensor_headers: Mapping[str, Mapping[str, TensorInfo]] = field(default_factory=lambda: _NOTHING)
    failed_groups: frozenset[str] = frozenset()
    failed_members: frozenset[str] = frozenset()
    warnings: tuple[RlarchiveError, ...] = ()
    issues: tuple[RlarchiveError, ...] = ()
    data_json: bytes | None = field(default=None, repr=False)
    digest_tensors: bool = False
    tensor_digests: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: _NOTHING)
    extension_documents: Mapping[str, Any] = field(default_factory=lambda: _NOTHING)

    @property
    def checked_manifest(self) -> Manifest:
        """The manifest of step 6 (RuntimeError before it ran)."""
        if self.manifest is None:
            raise RuntimeError("step 6 (check_manifest) has not run")
        return self.manifest

    def tensor_bytes(self, group: str, name: str) -> bytes:
        """The element bytes of a tensor step 8 listed, read from the source."""
        info = self.tensor_headers[group][name]
        return self.source.read(info.offset, info.nbytes)

    def tensor_array(self, group: str, name: str) -> Any:
        """A tensor step 8 listed, as a NumPy array over its element bytes (read from the source)."""
        return view_numpy(self.tensor_bytes(group, name), replace(self.tensor_headers[group][name], offset=0))


def start(source: Source) -> CheckState:
    """The state before step 1: the source alone."""
    return CheckState(source)


def _frozen(mapping: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(mapping)


def identify(state: CheckState) -> CheckState:
    """Step 1, identification (spec §3): the 45 bytes at offset 26, in a file of at least 67 bytes.
    A remote source is first told what steps 1-8 will read (:func:`rlarchive.read_plan.prefetch_opening`)."""
    src = state.source
    prefetch_opening(src)
    head = src.read(0, min(src.size, IDENT_END))
    if len(head) < IDENT_END or head[:4] != SIG_LOCAL or head[26:IDENT_END] != IDENTIFICATION:
        raise RlarchiveError(
            "ARCHIVE_NOT_RLARCHIVE", "the file does not begin with the rlarchive identification bytes", offset=0
        )
    return state


def read_end_records(state: CheckState) -> CheckState:
    """Step 2, the end records: the EOCD, the ZIP64 locator and record, disks, ``MAX_MEMBERS``,
    then the directory's size and position (spec §2.1, §2.2, §2.6)."""
    eocd = find_end_record(state.source)
    return replace(state, end=check_end_records(eocd, read_zip64_end_records(state.source, eocd)))


def _end(state: CheckState) -> EndRecords:
    if state.end is None:
        raise RuntimeError("step 2 (read_end_records) has not run")
    return state.end


def read_central_directory(state: CheckState) -> CheckState:
    """Step 3, the central directory: its records in order, then the bytes after the last, then
    the names across records (spec §2.2)."""
    end = _end(state)
    cd = state.source.read(end.cd_offset, end.cd_size)
    records = []
    pos = 0
    for index in range(end.count):
        member, pos = read_central_record(cd, pos, end.cd_offset, index)
        records.append(member)
    if pos != len(cd):
        raise RlarchiveError(
            "ZIP_CD_INVALID", "central directory has bytes after its last record", offset=end.cd_offset + pos
        )
    check_member_names(records)
    return replace(state, members=_frozen({m.name: m for m in records}))


def read_local_headers(state: CheckState) -> CheckState:
    """Step 4, the local headers in central directory order (spec §2.1, §2.3), then the members'
    layout: overlaps and gaps, the gap before the directory, the end gap."""
    members = [read_local_header(state.source, m) for m in state.members.values()]
    check_member_layout(state.source, members, _end(state))
    return replace(state, members=_frozen({m.name: m for m in members}))


def check_layout(state: CheckState) -> CheckState:
    """Step 5, the archive layout: ``mimetype`` first with size 29 (spec §3), then the required
    members, then unexpected names (spec §4)."""
    members = list(state.members.values())
    if not members or members[0].name != "mimetype":
        raise RlarchiveError("ARCHIVE_NOT_RLARCHIVE", "the first member is not 'mimetype'", offset=0)
    if members[0].size != len(MEDIA_TYPE):
        raise RlarchiveError(
            "ARCHIVE_NOT_RLARCHIVE", "the 'mimetype' member has the wrong size", member="mimetype", offset=0
        )
    for req in ("manifest.json", "data.json"):
        if req not in state.members:
            raise RlarchiveError("MEMBER_REQUIRED_MISSING", f"required member {req} is absent", member=req)
    for m in members:
        if (
            m.name not in FIXED_MEMBERS
            and group_of(m.name) is None
            and not (m.name.startswith(EXTENSION_PREFIX) and m.name.count("/") >= 2)
        ):
            raise RlarchiveError(
                "MEMBER_UNEXPECTED", f"member {m.name} is not part of the archive layout", member=m.name
            )
    return state


def check_manifest(state: CheckState) -> CheckState:
    """Step 6, ``manifest.json``: the JSON rules, version, schema, extensions, then the member
    entries (unlisted, size; listed but missing), then the digest of ``data.json`` (spec §5, §6)."""
    src, members = state.source, state.members
    manifest = manifest_mod.check(read_json_member(src, members["manifest.json"]))
    used = set(manifest.extensions_used)
    for m in members.values():
        if m.name.startswith(EXTENSION_PREFIX) and m.name.split("/")[1] not in used:
            raise RlarchiveError(
                "MEMBER_UNEXPECTED", f"member {m.name} belongs to an extension not in extensions_used", member=m.name
            )
    listed = manifest.members
    for m in members.values():
        if m.name in ("mimetype", "manifest.json"):
            continue
        if m.name not in listed:
            raise RlarchiveError("MEMBER_UNLISTED", f"member {m.name} is not listed in the manifest", member=m.name)
        if listed[m.name]["size"] != m.size:
            raise RlarchiveError(
                "MEMBER_SIZE_MISMATCH",
                f"member {m.name} has {m.size} bytes, the manifest says {listed[m.name]['size']}",
                member=m.name,
            )
    for i, name in enumerate(listed):
        if name not in members:
            raise RlarchiveError(
                "MEMBER_MISSING", f"listed member {name} is absent", member="manifest.json", pointer=f"/members/{i}"
            )
    data = members["data.json"]
    raw = src.read(data.data_offset, data.size) if data.size <= MAX_JSON_BYTES else None  # read once (step 7)
    if digests([raw] if raw is not None else read_chunks(src, data))[1] != listed["data.json"]["sha256"]:
        raise RlarchiveError("MEMBER_DIGEST_MISMATCH", "data.json does not match its SHA-256", member="data.json")
    return replace(state, manifest=manifest, warnings=state.warnings + tuple(manifest.warnings), data_json=raw)


def _data_object(state: CheckState) -> dict[str, Any]:
    """``data.json`` read, parsed and its structure checked (spec §7.1)."""
    doc = read_json_member(state.source, state.members["data.json"], state.data_json)
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("data"), dict)
        or not isinstance(doc.get("optimizers", {}), dict)
    ):
        where = (
            ""
            if not isinstance(doc, dict) or "data" not in doc
            else "/data"
            if not isinstance(doc["data"], dict)
            else "/optimizers"
        )
        raise RlarchiveError(
            "DATA_INVALID",
            "data.json must be an object with a 'data' object and an optional 'optimizers' object",
            member="data.json",
            pointer=where,
        )
    return doc


def _unknown_properties(doc: dict[str, Any]) -> tuple[RlarchiveError, ...]:
    return tuple(
        RlarchiveError(
            "DATA_UNKNOWN_PROPERTY",
            f"unknown data.json property {k!r} ignored",
            member="data.json",
            pointer="/" + esc(k),
        )
        for k in doc
        if k not in ("data", "optimizers")
    )


def check_data(state: CheckState) -> CheckState:
    """Step 7, ``data.json``: its size, CRC-32, the JSON rules, its structure, then its values in
    document order, ``data`` before ``optimizers``, collecting the references (spec §6-§9)."""
    doc = _data_object(state)
    document, references = check_values(doc)
    return replace(
        state,
        document=document,
        references=references,
        warnings=state.warnings + _unknown_properties(doc),
        data_json=None,
    )


def check_values(doc: Mapping[str, Any]) -> tuple[Mapping[str, Any], tuple[Ref, ...]]:
    """Step 7's value rules over a data document whose structure passed (spec §7.2-§9): ``data`` then
    ``optimizers``, each in document order; (the document ``{"data": ..., "optimizers": ...}``, the references
    met, in that order). The writer runs them over the document it is about to write."""
    checker = Checker()
    checker.check_map(doc["data"], "/data")
    checker.check_map(doc.get("optimizers", {}), "/optimizers")
    return _frozen({"data": doc["data"], "optimizers": doc.get("optimizers", {})}), tuple(checker.refs)


def data_warnings(state: CheckState) -> tuple[RlarchiveError, ...]:
    """The warnings step 7 finds before the values (unknown top-level properties), for a validator
    whose step 7 raised at a value: () when ``data.json`` cannot be read or its structure is wrong."""
    try:
        return _unknown_properties(_data_object(state))
    except RlarchiveError:
        return ()


def check_tensor_members(state: CheckState) -> CheckState:
    """Step 8, the tensor members in ZIP order: the safetensors structure of each (spec §10.2);
    a member that fails adds its issue and its group to ``failed_groups``."""
    headers: dict[str, Mapping[str, TensorInfo]] = {}
    failed: set[str] = set()
    issues: list[RlarchiveError] = []
    for m in state.members.values():
        group = group_of(m.name)
        if group is None:
            continue
        try:
            headers[group] = _frozen(read_group(state.source, m))
        except RlarchiveError as e:
            issues.append(e)
            failed.add(group)
    return replace(
        state, tensor_headers=_frozen(headers), failed_groups=frozenset(failed), issues=state.issues + tuple(issues)
    )


def check_references(state: CheckState) -> CheckState:
    """Step 9, the references of ``data.json`` in the order step 7 met them (spec §7.6), then the optimizer
    states' ``param_tensors`` (spec §7.9): the first broken reference is an issue, and so is the first broken
    rule of the names; no reference is checked into a failed group, nor a name against a failed ``policy``
    member, nor anything when step 7 failed."""
    if state.document is None:
        return state
    found = reference_issues(state.document, state.references, state.tensor_headers, state.failed_groups)
    return replace(state, issues=state.issues + found)


def reference_issues(
    document: Mapping[str, Any],
    references: Iterable[Ref],
    headers: Mapping[str, Mapping[str, TensorInfo]],
    failed_groups: frozenset[str] = frozenset(),
) -> tuple[RlarchiveError, ...]:
    """Step 9's rules: the first broken reference (none into a group of ``failed_groups``), then the first broken
    rule of the optimizer states' ``param_tensors`` (spec §7.6, §7.9). The writer runs them over the document
    and the tensors it is about to write."""
    issues: list[RlarchiveError] = []
    for ref in references:
        if ref.group in failed_groups:
            continue
        try:
            check_reference(headers, ref)
        except RlarchiveError as e:
            issues.append(e)
            break
    policy = headers.get(param_tensors.POLICY_GROUP, _NOTHING)
    shapes = None if param_tensors.POLICY_GROUP in failed_groups else {n: i.shape for n, i in policy.items()}
    broken = param_tensors.check(document["optimizers"], shapes)
    return tuple(issues) + ((broken,) if broken is not None else ())


def check_digests(
    state: CheckState, skip: Iterable[str] = (), chunks: Callable[[Member], Iterable[Any]] | None = None
) -> CheckState:
    """Step 10, the deferred checks: for every member but ``manifest.json`` and ``data.json``, in ZIP
    order, its CRC-32, then (for a listed member) its digest; one issue per member at the most.

    The same pass over a tensor member that passes gives the ``ST_BOOL_VALUE`` warnings of its tensors
    (appended to ``warnings``, spec §10.1) and, when the state asks (``digest_tensors``), each tensor's
    SHA-256 (``tensor_digests``, the dump's, spec §13.1): each member's bytes are read once.

    ``skip`` names members left unchecked (for a caller that checks them when their bytes are used,
    spec §1.2); ``chunks(member)`` gives a member's bytes (default: read from the source).
    """
    listed = state.checked_manifest.members
    skipped = set(skip)
    read: Callable[[Member], Iterable[Any]] = chunks or (lambda m: read_chunks(state.source, m))
    issues: list[RlarchiveError] = []
    failed: set[str] = set()
    warnings: list[RlarchiveError] = []
    tensor_digests: dict[str, Mapping[str, str]] = {}
    for m in state.members.values():
        if m.name in _CHECKED_EARLY or m.name in skipped:
            continue
        before = len(issues)
        group = group_of(m.name)
        infos = state.tensor_headers.get(group) if group is not None else None
        tensors = TensorPass(m.data_offset, infos.values(), state.digest_tensors) if infos is not None else None
        try:
            crc, sha = digests(read(m) if tensors is None else tensors.feed(read(m)))
        except RlarchiveError as e:  # the bytes cannot be had (IO_ERROR, IO_TIMEOUT): that member's issue
            issues.append(e)
            failed.add(m.name)
            continue
        entry = listed.get(m.name)
        if crc != m.crc32:
            issues.append(
                RlarchiveError(
                    "ZIP_CRC_MISMATCH", "CRC-32 does not match the member's data", member=m.name, offset=m.data_offset
                )
            )
        elif entry is not None and sha != entry["sha256"]:
            issues.append(
                RlarchiveError("MEMBER_DIGEST_MISMATCH", f"{m.name} does not match its SHA-256", member=m.name)
            )
        if len(issues) > before:
            failed.add(m.name)
        elif tensors is not None and group is not None:
            warnings.extend(_bool_warning(m, info) for info in tensors.bad_bools())
            if state.digest_tensors:
                tensor_digests[group] = _frozen(dict(tensors.digests()))
    return replace(
        state,
        issues=state.issues + tuple(issues),
        failed_members=frozenset(failed),
        warnings=state.warnings + tuple(warnings),
        tensor_digests=_frozen(tensor_digests),
    )


def _bool_warning(m: Member, info: TensorInfo) -> RlarchiveError:
    """``ST_BOOL_VALUE`` (spec §10.1) for a BOOL tensor of member ``m`` holding a byte other than 0 and 1."""
    return RlarchiveError(
        "ST_BOOL_VALUE",
        f"BOOL tensor {info.name!r} holds bytes other than 0 and 1",
        member=m.name,
        pointer=entry_pointer(info.name),
        offset=info.offset,
    )


def check_extension(state: CheckState, name: str) -> CheckState:
    """Step 11 for one extension: the checks of its member (spec §5.4,
    :func:`rlarchive.extensions.read_document`), its first broken rule appended to ``issues``, or its
    checked raw value kept in ``extension_documents``; nothing for an extension the archive does not
    use or this package does not support, nor, after step 7 failed, for one whose checks read
    ``data.json``."""
    ext = SUPPORTED.get(name)
    if ext is None or (state.document is None and ext.reads_data):
        return state
    try:
        value = read_document(state, name)
    except RlarchiveError as e:
        return replace(state, issues=state.issues + (e,))
    if value is None:
        return state
    return replace(state, extension_documents=_frozen({**state.extension_documents, name: value}))


def check_extensions(state: CheckState) -> CheckState:
    """Step 11, the supported extensions in the order of ``extensions_used``: each one's checks (:func:`check_extension`)."""
    for name in state.checked_manifest.extensions_used:
        state = check_extension(state, name)
    return state


Step = Callable[[CheckState], CheckState]

#: The phases of spec §11.1 by name, each with its steps in order (the JavaScript reader's ``PHASES`` has the
#: same names and steps): ``structure`` (1-6, a validator stops at their first error), ``data`` (7),
#: ``tensors`` (8-9), ``integrity`` (10, the deferred checks), ``extensions`` (11).
PHASES: Mapping[str, tuple[Step, ...]] = MappingProxyType(
    {
        "structure": (
            identify,
            read_end_records,
            read_central_directory,
            read_local_headers,
            check_layout,
            check_manifest,
        ),
        "data": (check_data,),
        "tensors": (check_tensor_members, check_references),
        "integrity": (check_digests,),
        "extensions": (check_extensions,),
    }
)
#: The phases :func:`rlarchive.open` runs; the ones the dump and the validator run after them.
OPEN: tuple[str, ...] = ("structure", "data", "tensors")
DEFERRED: tuple[str, ...] = ("integrity", "extensions")
#: The steps of spec §11.1, in order: the phases' steps one after the other.
STEPS: tuple[Step, ...] = tuple(step for steps in PHASES.values() for step in steps)


def run(state: CheckState, *phases: str) -> CheckState:
    """The steps of the named phases, in order, from ``state`` (KeyError for a name not in :data:`PHASES`)."""
    for name in phases:
        for step in PHASES[name]:
            state = step(state)
    return state
