"""Reading the ZIP directory of spec §2-§3, record by record, in the order of spec §11.1 steps 2-4.

Split along the records it reads, as CPython's ``zipfile`` is: the end of
central directory record (:func:`find_end_record`), the ZIP64 locator and end
record (:func:`read_zip64_end_records`), what the end records say together
(:func:`check_end_records`), one central record (:func:`read_central_record`),
the names across records (:func:`check_member_names`), one local header
(:func:`read_local_header`) and the members' layout
(:func:`check_member_layout`). Every function reads through a
:class:`rlarchive.sources.Source` (positional reads), so that opening an
archive touches only the records it needs, and raises
:class:`~rlarchive.errors.RlarchiveError` at the first broken rule, located as
spec §11.2 says. :mod:`rlarchive.checks` runs them in order.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from . import jsonstrict
from .errors import RlarchiveError
from .limits import MAX_JSON_BYTES, MAX_MEMBERS
from .sources import Source
from .zipprofile import (
    CENTRAL_RECORD,
    EOCD_RECORD,
    EOCD_SEARCH,
    EOCD_SIZE,
    HOST_MSDOS,
    HOST_UNIX,
    ID_ALIGN,
    ID_ZIP64,
    LOCAL_HEADER,
    MAX_CD_RECORD,
    MAX_VERSION_NEEDED,
    SIG_CENTRAL,
    SIG_EOCD,
    SIG_LOCAL,
    SIG_Z64_EOCD,
    SIG_Z64_LOCATOR,
    U16_MAX,
    U32_MAX,
    ZIP64_EOCD_RECORD,
    ZIP64_LOCATOR,
    Member,
    check_attributes,
    check_name,
    directory_clash,
    parse_extra,
    zip_error,
)

__all__ = [
    "EndRecord",
    "Zip64EndRecords",
    "EndRecords",
    "find_end_record",
    "read_zip64_end_records",
    "check_end_records",
    "read_central_record",
    "check_member_names",
    "read_local_header",
    "check_member_layout",
    "member_chunks",
    "read_chunks",
    "read_json_member",
]

_LOCATOR_SIZE = ZIP64_LOCATOR.size
_Z64_RECORD_SIZE = ZIP64_EOCD_RECORD.size


@dataclass(frozen=True)
class EndRecord:
    """The end of central directory record's fields, as written (spec §2.1)."""

    offset: int
    disk: int
    cd_disk: int
    n_disk: int
    n_total: int
    cd_size: int
    cd_offset: int


@dataclass(frozen=True)
class Zip64EndRecords:
    """The ZIP64 end records (spec §2.6): the locator's offset and disk, and the ZIP64 end record's
    offset and fields (the EOCD's, 64 bits wide)."""

    locator_offset: int
    locator_disk: int
    record: EndRecord


@dataclass(frozen=True)
class EndRecords:
    """What the checked end records say (spec §11.1 step 2): where the central directory is, its
    size and count, whether ZIP64 records give them, and where the region before the end records ends."""

    cd_offset: int
    cd_size: int
    count: int
    zip64: bool
    region_end: int
    eocd_offset: int


def find_end_record(src: Source) -> EndRecord:
    """The EOCD at the end of the file: its signature, the search for trailing data, its comment length (spec §2.1)."""
    size = src.size
    eocd_pos = size - EOCD_SIZE  # a file shorter than the EOCD failed step 1: identification needs 67 bytes
    eocd = src.read(eocd_pos, EOCD_SIZE)
    if eocd[:4] != SIG_EOCD:
        # only a broken file pays for the search (a valid one reads just 22 bytes here)
        tail_start = size - min(size, EOCD_SEARCH)
        found = src.read(tail_start, size - tail_start).rfind(SIG_EOCD)
        if found >= 0:
            raise zip_error(
                "ZIP_TRAILING_DATA", "bytes follow the end of central directory record", offset=tail_start + found
            )
        raise zip_error("ZIP_EOCD_NOT_FOUND", "no end of central directory record")
    _, disk, cd_disk, n_disk, n_total, cd_size, cd_offset, comment_len = EOCD_RECORD.unpack(eocd)
    if comment_len != 0:
        raise zip_error("ZIP_TRAILING_DATA", "the end record has a comment", offset=eocd_pos)
    return EndRecord(eocd_pos, disk, cd_disk, n_disk, n_total, cd_size, cd_offset)


def read_zip64_end_records(src: Source, eocd: EndRecord) -> Zip64EndRecords | None:
    """The ZIP64 locator and end record when present (spec §2.6, in its order: the locator, the record,
    then the EOCD's agreement with it), else None after checking the EOCD has no field at its maximum."""
    loc_pos = eocd.offset - _LOCATOR_SIZE
    classic = (eocd.disk, eocd.cd_disk, eocd.n_disk, eocd.n_total, eocd.cd_size, eocd.cd_offset)
    if loc_pos < 0 or src.read(loc_pos, 4) != SIG_Z64_LOCATOR:
        if U16_MAX in classic[:4] or U32_MAX in classic[4:]:
            raise zip_error(
                "ZIP_ZIP64_INVALID", "end record field at its maximum without ZIP64 records", offset=eocd.offset
            )
        return None
    _, loc_disk, z_offset, z_disks = ZIP64_LOCATOR.unpack(src.read(loc_pos, _LOCATOR_SIZE))
    if z_offset + _Z64_RECORD_SIZE != loc_pos:
        raise zip_error("ZIP_ZIP64_INVALID", "ZIP64 end record does not end at the locator", offset=loc_pos)
    if z_disks != 1:
        raise zip_error("ZIP_ZIP64_INVALID", "ZIP64 locator counts other than one disk", offset=loc_pos)
    sig, rec_size, _, _, *wide = ZIP64_EOCD_RECORD.unpack(src.read(z_offset, _Z64_RECORD_SIZE))
    if sig != SIG_Z64_EOCD:
        raise zip_error("ZIP_ZIP64_INVALID", "bad ZIP64 end record signature", offset=z_offset)
    if rec_size != 44:
        raise zip_error("ZIP_ZIP64_INVALID", "the ZIP64 end record's size is not 44 (extensible data)", offset=z_offset)
    maxima = (U16_MAX,) * 4 + (U32_MAX,) * 2
    if any(c != mx and c != w for c, w, mx in zip(classic, wide, maxima)):
        raise zip_error("ZIP_ZIP64_INVALID", "end record disagrees with the ZIP64 end record", offset=eocd.offset)
    return Zip64EndRecords(loc_pos, loc_disk, EndRecord(z_offset, *wide))


def check_end_records(eocd: EndRecord, z64: Zip64EndRecords | None) -> EndRecords:
    """Disk numbers (spec §2.1: the EOCD, the locator, the ZIP64 end record), ``MAX_MEMBERS`` (§2.2),
    then the directory's size and position (§2.2, last paragraph); what the end records say together."""
    # each disk number at the record that holds it: the EOCD (without the fields at their
    # maximum, which the ZIP64 record gives), then the locator, then the ZIP64 record
    given = (lambda v: v != U16_MAX) if z64 is not None else (lambda v: True)
    if any(given(v) and v != 0 for v in (eocd.disk, eocd.cd_disk)) or (
        given(eocd.n_disk) and given(eocd.n_total) and eocd.n_disk != eocd.n_total
    ):
        raise zip_error("ZIP_MULTI_DISK", "multi-disk archives are not permitted", offset=eocd.offset)
    n_total, cd_size, cd_offset = eocd.n_total, eocd.cd_size, eocd.cd_offset
    count_at = size_at = region_end = eocd.offset
    if z64 is not None:
        if z64.locator_disk != 0:
            raise zip_error(
                "ZIP_MULTI_DISK",
                "the ZIP64 locator puts the ZIP64 end record on another disk",
                offset=z64.locator_offset,
            )
        wide = z64.record
        if wide.disk != 0 or wide.cd_disk != 0 or wide.n_disk != wide.n_total:
            raise zip_error("ZIP_MULTI_DISK", "the ZIP64 end record describes a multi-disk archive", offset=wide.offset)
        # an error about a value is at the record that gives it: the ZIP64 record for an EOCD field at its maximum
        count_at = wide.offset if n_total == U16_MAX else eocd.offset
        size_at = wide.offset if cd_size == U32_MAX else eocd.offset
        n_total, cd_size, cd_offset, region_end = wide.n_total, wide.cd_size, wide.cd_offset, wide.offset
    if n_total > MAX_MEMBERS:
        raise zip_error("LIMIT_EXCEEDED", f"{n_total} members exceed MAX_MEMBERS ({MAX_MEMBERS})", offset=count_at)
    if cd_size > n_total * MAX_CD_RECORD:
        raise zip_error("ZIP_CD_INVALID", "central directory larger than its entries can be", offset=size_at)
    if cd_offset + cd_size > region_end:
        raise zip_error("ZIP_TRUNCATED", "central directory runs past its region", offset=cd_offset)
    return EndRecords(cd_offset, cd_size, n_total, z64 is not None, region_end, eocd.offset)


def _check_record_fields(
    made: int,
    needed: int,
    flags: int,
    method: int,
    disk_start: int,
    ext_attr: int,
    clen: int,
    label: str | None,
    at: int,
) -> None:
    """A central record's fields, in the order of spec §2.2's list up to the comment."""
    host = made >> 8
    if host not in (HOST_MSDOS, HOST_UNIX):
        raise zip_error(
            "ZIP_VERSION_MADE_BY",
            f"host system {host} in 'version made by'; only 0 (MS-DOS) and 3 (Unix) are permitted",
            label,
            at,
        )
    if needed > MAX_VERSION_NEEDED:
        raise zip_error(
            "ZIP_VERSION_NEEDED", f"version needed to extract {needed} is above {MAX_VERSION_NEEDED}", label, at
        )
    if flags & 0x41:
        raise zip_error("ZIP_ENCRYPTED", "member is encrypted", label, at)
    if flags & 0x08:
        raise zip_error("ZIP_DATA_DESCRIPTOR", "member uses a data descriptor", label, at)
    if flags:
        raise zip_error("ZIP_FLAGS", f"general purpose flags 0x{flags:04X} are not permitted", label, at)
    if method != 0:
        raise zip_error("ZIP_COMPRESSED", f"compression method {method}; only STORED (0) is permitted", label, at)
    if disk_start != 0:
        raise zip_error("ZIP_MULTI_DISK", "member starts on another disk", label, at)
    why = check_attributes(host, ext_attr)
    if why:
        raise zip_error(
            "ZIP_ATTRIBUTES", f"external attributes 0x{ext_attr:08X} are not those of a regular file: {why}", label, at
        )
    if clen != 0:
        raise zip_error("ZIP_CD_INVALID", "member has a file comment", label, at)


def _zip64_values(
    extra: bytes, usize: int, csize: int, lh_offset: int, label: str | None, at: int
) -> tuple[int, int, int]:
    """A central record's extra field, and the sizes and offset its ZIP64 record replaces (spec §2.5, §2.6)."""
    z64 = parse_extra(extra, (ID_ZIP64,), label, at).get(ID_ZIP64)
    wanted = [v == U32_MAX for v in (usize, csize, lh_offset)]
    if z64 is None and any(wanted):
        raise zip_error("ZIP_ZIP64_INVALID", "field at its maximum without a ZIP64 extra record", label, at)
    if z64 is None:
        return usize, csize, lh_offset
    if len(z64) != 8 * sum(wanted) or not any(wanted):
        raise zip_error("ZIP_ZIP64_INVALID", "ZIP64 extra record does not match the fields it replaces", label, at)
    vals = iter(struct.unpack(f"<{sum(wanted)}Q", z64))
    usize, csize, lh_offset = (next(vals) if w else v for w, v in zip(wanted, (usize, csize, lh_offset)))
    return usize, csize, lh_offset


def read_central_record(cd: bytes, pos: int, cd_offset: int, index: int) -> tuple[Member, int]:
    """The central record at ``pos`` of the directory's bytes ``cd`` (which start at file offset
    ``cd_offset``), checked (spec §2.2 list, in its order), as the ``index``-th member whose data
    offset is not known yet (-1); and the position of the next record."""
    at = cd_offset + pos
    if pos + CENTRAL_RECORD.size > len(cd):
        raise zip_error("ZIP_CD_INVALID", "central directory ends inside a record", offset=at)
    (
        sig,
        made,
        needed,
        flags,
        method,
        mtime,
        mdate,
        crc,
        csize,
        usize,
        nlen,
        xlen,
        clen,
        disk_start,
        _ia,
        ext_attr,
        lh_offset,
    ) = CENTRAL_RECORD.unpack_from(cd, pos)
    if sig != SIG_CENTRAL:
        raise zip_error("ZIP_CD_INVALID", "bad central directory record signature", offset=at)
    start = pos + CENTRAL_RECORD.size
    if start + nlen + xlen + clen > len(cd):
        raise zip_error("ZIP_CD_INVALID", "central directory record runs past the directory", offset=at)
    raw_name = cd[start : start + nlen]
    text = raw_name.decode("ascii", "replace")
    # an issue names its member only when the name is printable ASCII (as every reader can then give it alike)
    label = text if all(0x20 <= b <= 0x7E for b in raw_name) else None
    _check_record_fields(made, needed, flags, method, disk_start, ext_attr, clen, label, at)
    why = check_name(raw_name)
    if why:
        raise zip_error("ZIP_NAME_INVALID", f"invalid member name {text!r}: {why}", label, at)
    usize, csize, lh_offset = _zip64_values(cd[start + nlen : start + nlen + xlen], usize, csize, lh_offset, label, at)
    if csize != usize:
        raise zip_error("ZIP_CD_INVALID", "compressed and uncompressed sizes differ", label, at)
    member = Member(raw_name.decode("ascii"), lh_offset, -1, usize, crc, index, at, needed, mtime, mdate)
    return member, start + nlen + xlen + clen


def check_member_names(members: Sequence[Member]) -> None:
    """The names across records (spec §2.2): duplicates, then case collisions, then file/directory clashes."""
    seen: set[str] = set()
    for m in members:
        if m.name in seen:
            raise zip_error("ZIP_NAME_DUPLICATE", f"member name {m.name!r} appears twice", m.name, m.record_offset)
        seen.add(m.name)
    lower: set[str] = set()
    for m in members:
        low = m.name.lower()
        if low in lower:
            raise zip_error(
                "ZIP_NAME_CASE_COLLISION",
                f"member name {m.name!r} collides with another ignoring case",
                m.name,
                m.record_offset,
            )
        lower.add(low)
    clash = directory_clash([m.name for m in members])
    if clash is not None:
        at = next(m.record_offset for m in members if m.name == clash)
        raise zip_error(
            "ZIP_NAME_DIRECTORY_CLASH", f"member name {clash!r} is also the directory of another member", clash, at
        )


def read_local_header(src: Source, m: Member) -> Member:
    """The member's local header, checked (spec §2.1 bounds, §2.3 in its order: signature, bounds of
    its name and extra field, extra field, its ZIP64 record, then agreement with the central record);
    the member with its data offset."""
    name, lh, size = m.name, m.header_offset, src.size
    if lh + LOCAL_HEADER.size > size:
        raise zip_error("ZIP_TRUNCATED", "local header beyond the end of the file", name, lh)
    (sig, l_needed, l_flags, l_method, l_time, l_date, l_crc, l_csize, l_usize, l_nlen, l_xlen) = LOCAL_HEADER.unpack(
        src.read(lh, LOCAL_HEADER.size)
    )
    if sig != SIG_LOCAL:
        raise zip_error("ZIP_LOCAL_HEADER_INVALID", "bad local header signature", name, lh)
    data_offset = lh + LOCAL_HEADER.size + l_nlen + l_xlen
    if data_offset > size:
        raise zip_error("ZIP_TRUNCATED", "local header runs past the end of the file", name, lh)
    var = src.read(lh + LOCAL_HEADER.size, l_nlen + l_xlen)
    z64 = parse_extra(var[l_nlen:], (ID_ZIP64, ID_ALIGN), name, lh).get(ID_ZIP64)
    if U32_MAX in (l_csize, l_usize):
        if l_csize != U32_MAX or l_usize != U32_MAX or z64 is None or len(z64) != 16:
            raise zip_error("ZIP_ZIP64_INVALID", "local header ZIP64 sizes are malformed", name, lh)
        l_usize, l_csize = struct.unpack("<QQ", z64)
    elif z64 is not None:
        raise zip_error("ZIP_ZIP64_INVALID", "local ZIP64 record without sizes at their maximum", name, lh)
    # the central record's flags and method are 0 (step 3), its two sizes equal
    if (l_needed, l_flags, l_method, l_time, l_date, l_crc, l_csize, l_usize, var[:l_nlen]) != (
        m.version_needed,
        0,
        0,
        m.dos_time,
        m.dos_date,
        m.crc32,
        m.size,
        m.size,
        name.encode("ascii"),
    ):
        raise zip_error("ZIP_HEADER_MISMATCH", "local header disagrees with the central directory", name, lh)
    return replace(m, data_offset=data_offset)


def _check_end_gap(src: Source, start: int, end: int) -> None:
    """Bytes between the central directory and the end records (spec §2.1)."""
    if start == end:
        return
    pos = start
    tail = b""
    while pos < end:
        n = min(1 << 20, end - pos)
        chunk = tail + src.read(pos, n)
        if SIG_EOCD in chunk:
            raise zip_error("ZIP_MULTIPLE_EOCD", "a second end record lies before the end record", offset=start)
        tail = chunk[-3:]
        pos += n
    raise zip_error("ZIP_GAP", f"{end - start} bytes between the central directory and the end record", offset=start)


def check_member_layout(src: Source, members: Sequence[Member], end: EndRecords) -> None:
    """The layout (spec §2.1): overlaps and gaps member by member, then the gap before the
    central directory, then the gap between the directory and the end records."""
    expected = 0
    for m in members:
        if m.header_offset < expected:
            raise zip_error("ZIP_OVERLAP", "member overlaps the previous member", m.name, m.header_offset)
        if m.header_offset > expected:
            raise zip_error(
                "ZIP_GAP", f"{m.header_offset - expected} unaccounted bytes before member {m.name!r}", offset=expected
            )  # a gap belongs to no member
        expected = m.data_offset + m.size
        if expected > end.cd_offset:
            raise zip_error("ZIP_OVERLAP", "member data runs into the central directory", m.name, m.header_offset)
    if expected < end.cd_offset:
        raise zip_error(
            "ZIP_GAP", f"{end.cd_offset - expected} unaccounted bytes before the central directory", offset=expected
        )
    _check_end_gap(src, end.cd_offset + end.cd_size, end.region_end)


def member_chunks(buf: Any, m: Member, chunk: int = 1 << 24) -> Iterator[memoryview]:
    """A member's data as bounded slices of a buffer covering the file (e.g. a memory map)."""
    view = memoryview(buf)
    for pos in range(m.data_offset, m.data_offset + m.size, chunk):
        yield view[pos : min(pos + chunk, m.data_offset + m.size)]


def read_chunks(src: Source, m: Member, chunk: int = 1 << 24) -> Iterator[bytes]:
    """A member's data read from the source in bounded pieces."""
    for pos in range(m.data_offset, m.data_offset + m.size, chunk):
        yield src.read(pos, min(chunk, m.data_offset + m.size - pos))


def read_json_member(src: Source, m: Member, raw: bytes | None = None) -> Any:
    """A JSON member read (or its bytes ``raw``, read before), its CRC-32 checked, and parsed by the
    strict rules of spec §6 (its size first)."""
    if m.size > MAX_JSON_BYTES:
        raise RlarchiveError(
            "JSON_TOO_LARGE", f"{m.size} bytes exceed MAX_JSON_BYTES", member=m.name, offset=m.data_offset
        )
    if raw is None:
        raw = src.read(m.data_offset, m.size)
    if zlib.crc32(raw) != m.crc32:
        raise zip_error("ZIP_CRC_MISMATCH", "CRC-32 does not match the member's data", m.name, m.data_offset)
    return jsonstrict.parse(raw, member=m.name, offset=m.data_offset)
