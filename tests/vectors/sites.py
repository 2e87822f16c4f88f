"""Where an invalid vector breaks its check: the site a case names, and the issue the table derives from it.

Every invalid case names the check it breaks (an ``id`` of spec/checks.json)
and its site, built with the functions below. The generator derives the
expected issue from the two: the code and severity from the check, and the
location fields the check's anchors call for, resolved on the case's own
bytes by this module (which reads ZIP structures by their signatures and
names, independently of any reader). A site whose kind is not one of the
check's anchors is an error of the case, and so is a reader that reports
anything else: the generator stops.
"""

from __future__ import annotations

import functools
import json
import os
import re
import struct
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SIGNATURES = {
    "local-header": b"PK\x03\x04",
    "central-record": b"PK\x01\x02",
    "eocd": b"PK\x05\x06",
    "zip64-record": b"PK\x06\x06",
    "zip64-locator": b"PK\x06\x07",
}


@functools.cache
def load_checks() -> dict:
    """The checks of spec/checks.json by id."""
    with open(os.path.join(ROOT, "spec", "checks.json"), encoding="utf-8") as f:
        doc = json.load(f)
    return {c["id"]: c for c in doc["checks"]}


@functools.cache
def _severities() -> dict:
    with open(os.path.join(ROOT, "spec", "tables.json"), encoding="utf-8") as f:
        return {e["code"]: e["severity"] for e in json.load(f)["errors"]}


# -- offsets, resolved on the case's bytes --------------------------------------------------


@dataclass(frozen=True)
class Offset:
    """A byte of the file: ``kind`` is an offset anchor of spec/checks.json."""

    kind: str
    how: tuple

    def resolve(self, raw: bytes) -> int:
        op, *args = self.how
        if op == "abs":
            return args[0]
        if op == "sig":
            sig, n = args
            hits = [m.start() for m in re.finditer(re.escape(sig), raw)]
            if not hits or not -len(hits) <= n < len(hits):
                raise ValueError(f"no occurrence {n} of {sig!r}")
            return hits[n]
        if op == "data":
            member, skip, marker, nth = args
            start, size = _member_data(raw, member)
            if marker is None:
                return start + skip
            if isinstance(marker, int):
                return start + marker
            at = start - 1
            for _ in range(nth + 1):
                at = raw.find(marker, at + 1)
                if at < 0:
                    raise ValueError(f"marker {marker!r} not in {member}")
            return at
        if op == "central":
            return _central_records(raw)[args[0]]
        if op == "local":
            at = _central_records(raw)[args[0]]
            return struct.unpack_from("<I", raw, at + 42)[0]
        if op == "cd-end":
            cd_size, cd_start = struct.unpack_from("<II", raw, _eocd(raw) + 12)
            return cd_start + cd_size
        if op == "st":
            member, k = args
            start, _ = _member_data(raw, member)
            (n,) = struct.unpack_from("<Q", raw, start)
            return start + 8 + n + k
        if op == "end":
            start, size = _member_data(raw, args[0])
            return start + size
        raise ValueError(op)


def _eocd(raw: bytes) -> int:
    at = raw.rfind(SIGNATURES["eocd"])
    if at < 0:
        raise ValueError("no end of central directory record")
    return at


def _central_records(raw: bytes) -> dict:
    """member name -> offset of its central record, walking the directory the end record gives by the records' lengths (whatever their signatures)."""
    cd_size, at = struct.unpack_from("<II", raw, _eocd(raw) + 12)
    end, out = at + cd_size, {}
    while at + 46 <= end:
        n, m, k = struct.unpack_from("<HHH", raw, at + 28)
        out.setdefault(raw[at + 46 : at + 46 + n].decode("utf-8", "surrogateescape"), at)
        at += 46 + n + m + k
    return out


def _member_data(raw: bytes, member: str) -> tuple[int, int]:
    """(first data byte, size) of the first local header named ``member``."""
    name = member.encode("utf-8")
    at = 0
    while True:
        at = raw.find(SIGNATURES["local-header"], at)
        if at < 0 or at + 30 > len(raw):
            raise ValueError(f"no local header named {member!r}")
        (size,) = struct.unpack_from("<I", raw, at + 18)
        n, e = struct.unpack_from("<HH", raw, at + 26)
        if raw[at + 30 : at + 30 + n] == name:
            if size == 0xFFFFFFFF and raw[at + 30 + n : at + 32 + n] == b"\x01\x00":
                (size,) = struct.unpack_from("<Q", raw, at + 30 + n + 4)
            return at + 30 + n + e, size
        at += 1


def start() -> Offset:
    """Offset 0."""
    return Offset("start", ("abs", 0))


def record(kind: str, n: int = 0, anchor: str | None = None) -> Offset:
    """The ``n``-th record (from 0; negative from the end) with the signature of ``kind``, as the offset anchor ``anchor`` (default ``kind``)."""
    return Offset(anchor or kind, ("sig", SIGNATURES[kind], n))


def at_byte(kind: str, offset: int) -> Offset:
    """A byte given by its offset, for a structure that has no signature to find it by (say why in the case)."""
    return Offset(kind, ("abs", offset))


def in_member(kind: str, member: str, marker: bytes | int | None = None, nth: int = 0) -> Offset:
    """A byte of a member's data: its first byte, ``marker`` bytes into it (an int), or the ``nth`` occurrence of ``marker`` (bytes)."""
    return Offset(kind, ("data", member, 0, marker, nth))


def central_record(member: str, kind: str = "central-record") -> Offset:
    """The central record of ``member``, found by walking the directory (for a record whose signature is broken)."""
    return Offset(kind, ("central", member))


def local_header(member: str, kind: str = "local-header") -> Offset:
    """The local header of ``member`` where its central record says it is (for a header whose signature is broken)."""
    return Offset(kind, ("local", member))


def directory_end(kind: str) -> Offset:
    """The first byte after the central directory, as the end record gives its start and size."""
    return Offset(kind, ("cd-end",))


def tensor_byte(member: str, k: int) -> Offset:
    """Byte ``k`` of a safetensors member's data buffer (after its header), as the anchor ``tensor-data``."""
    return Offset("tensor-data", ("st", member, k))


def after_member(kind: str, member: str) -> Offset:
    """The byte after a member's data (as its local header gives the size)."""
    return Offset(kind, ("end", member))


# -- sites ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    """Where a case breaks its check: a member, a pointer with the principle that puts it there, an offset."""

    member: str | None = None
    pointer: str | None = None
    by: str | None = None
    offset: Offset | None = None


def site(
    member: str | None = None, pointer: str | None = None, by: str | None = None, offset: Offset | None = None
) -> Site:
    """A site: ``pointer`` needs ``by``, the pointer anchor (document principle) that decides it."""
    if (pointer is None) != (by is None):
        raise ValueError("a pointer needs the principle that puts it there, and only a pointer has one")
    return Site(member, pointer, by, offset)


def doc(pointer: str, by: str, member: str = "data.json") -> Site:
    """A site in a JSON document (``data.json`` unless ``member``)."""
    return Site(member, pointer, by, None)


def issue(check: str, **where: object) -> list:
    """The issues of a case whose report holds one: ``[(check, site(**where))]``."""
    return [(check, site(**where))]


def in_doc(check: str, member: str, pointer: str, by: str) -> list:
    """The issues of a case whose report holds one, at ``pointer`` of the JSON document ``member``."""
    return issue(check, member=member, pointer=pointer, by=by)


# the members most sites name
POLICY = "extensions/RLA_policy/policy.json"
REPLAY_BUFFER = "extensions/RLA_replay_buffer/replay_buffer.json"
TRAINING = "extensions/RLA_training/training.json"
VEC_NORMALIZE = "extensions/RLA_vec_normalize/vec_normalize.json"
POLICY_TENSORS = "tensors/policy.safetensors"


def _printable(name: str) -> bool:
    return all(" " <= ch <= "~" for ch in name)


# -- pointers, checked against the case's document ------------------------------------------

_MISSING = object()


def _document(raw: bytes, member: str) -> object:
    """The parsed JSON of a stored member (a safetensors member: its header), or _MISSING when it cannot be read so."""
    try:
        start, size = _member_data(raw, member)
    except (ValueError, struct.error):
        return _MISSING
    data = raw[start : start + size]
    if member.endswith(".safetensors"):
        if len(data) < 8:
            return _MISSING
        (n,) = struct.unpack_from("<Q", data)
        data = data[8 : 8 + n]
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _MISSING


def _tokens(pointer: str) -> list:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"{pointer!r} is not a JSON Pointer")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _at(doc: object, tokens: list) -> object:
    for t in tokens:
        if isinstance(doc, dict):
            doc = doc.get(t, _MISSING)
        elif isinstance(doc, list) and re.fullmatch(r"0|[1-9][0-9]*", t) and int(t) < len(doc):
            doc = doc[int(t)]
        else:
            return _MISSING
        if doc is _MISSING:
            return _MISSING
    return doc


def _pointer(tokens: list) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


def _check_pointer(cid: str, site: Site, raw: bytes) -> None:
    """The pointer must point where its principle (anchor) says, in the case's own document.

    Checked when the document parses as JSON (a broken text cannot hold the place): the
    pointer resolves (``missing``: to the object that lacks the member), a ``not-allowed`` or
    ``contradiction`` member is a member of an object, an ``element`` is an array element (or
    a coordinate of one), the ``later`` value has a counterpart at the same place of an
    earlier element (equal to it, when it is a string), and ``top`` is the root.
    """
    doc = _document(raw, site.member) if site.member else _MISSING
    if doc is _MISSING:
        return
    tokens = _tokens(site.pointer)
    value = _at(doc, tokens)
    if value is _MISSING:
        raise ValueError(f"{cid}: the pointer {site.pointer!r} does not resolve in {site.member}")
    parent = _at(doc, tokens[:-1]) if tokens else None
    by = site.by
    if by == "top" and tokens:
        raise ValueError(f"{cid}: 'top' is the root, not {site.pointer!r}")
    if by in ("missing", "exclusive") and not isinstance(value, dict):
        raise ValueError(f"{cid}: {by!r} points at an object, {site.pointer!r} is not one")
    if by in ("not-allowed", "contradiction") and not isinstance(parent, dict):
        raise ValueError(f"{cid}: {by!r} points at a member of an object, {site.pointer!r} is not one")
    if by == "element" and not (
        isinstance(parent, list) or (len(tokens) > 1 and isinstance(_at(doc, tokens[:-2]), list))
    ):
        raise ValueError(f"{cid}: 'element' points at an array element or its coordinate, {site.pointer!r} is neither")
    if by == "later":
        for k in range(len(tokens) - 1, -1, -1):
            holder = _at(doc, tokens[:k])
            if isinstance(holder, list) and re.fullmatch(r"0|[1-9][0-9]*", tokens[k]):
                i = int(tokens[k])
                earlier = [_at(doc, tokens[:k] + [str(j)] + tokens[k + 1 :]) for j in range(i)]
                # a name or key in its JSON form equals an earlier one; a tagged value (a dict key) is equal by value (§7.5)
                if any(e == value if isinstance(value, str) else e is not _MISSING for e in earlier):
                    return
        raise ValueError(f"{cid}: 'later' points at a value equal to one before it, {site.pointer!r} is not")


def derive(check: dict, site: Site, raw: bytes) -> dict:
    """The issue a reader reports for ``site`` under ``check``; ValueError when the site does not fit the check."""
    issue = {"code": check["code"], "severity": _severities()[check["code"]]}
    cid = check["id"]
    if check["member"] == "none":
        if site.member is not None:
            raise ValueError(f"{cid}: the check has no member, the site names {site.member!r}")
    elif check["member"] != "optional" and site.member is None:
        raise ValueError(f"{cid}: the check needs the member")
    if site.member is not None and _printable(site.member):
        issue["member"] = site.member
    allowed = check["pointer"] or []
    if site.pointer is None:
        if allowed and None not in allowed:
            raise ValueError(f"{cid}: the check needs a pointer ({', '.join(a for a in allowed if a)})")
    else:
        if site.by not in allowed:
            raise ValueError(f"{cid}: a pointer put by {site.by!r} does not fit the check ({allowed})")
        _check_pointer(cid, site, raw)
        issue["pointer"] = site.pointer
    kinds = check["offset"] or []
    if site.offset is None:
        if kinds:
            raise ValueError(f"{cid}: the check needs an offset ({', '.join(kinds)})")
    else:
        if site.offset.kind not in kinds:
            raise ValueError(f"{cid}: an offset at {site.offset.kind!r} does not fit the check ({kinds})")
        issue["offset"] = site.offset.resolve(raw)
    return issue
