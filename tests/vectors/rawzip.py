"""A deliberately permissive ZIP assembler for building invalid test archives.

The reference writer (rlarchive.zipwrite.ZipWriter) only writes valid
archives; this module can break any rule on purpose. With default settings it
produces the same layout as the reference writer.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass

from rlarchive import jsonstrict
from rlarchive.manifest import build as build_manifest
from rlarchive.zipprofile import MEDIA_TYPE

U32 = 0xFFFFFFFF


@dataclass
class Entry:
    name: str
    data: bytes
    align: int = 0
    local_name: str | None = None
    flags: int = 0
    local_flags: int | None = None
    method: int = 0
    crc: int | None = None
    local_crc: int | None = None
    local_size: int | None = None  # both local size fields
    central_csize: int | None = None
    central_usize: int | None = None
    offset: int | None = None  # central local-header offset override
    extra_local: bytes = b""
    extra_central: bytes = b""
    comment: bytes = b""
    disk_start: int = 0
    version: int = 20
    local_version: int | None = None
    gap_before: bytes = b""
    local_sig: bytes = b"PK\x03\x04"
    central_sig: bytes = b"PK\x01\x02"
    zip64: bool = False
    mtime: int = 0
    mdate: int = 0x21
    made_by: int = 45
    int_attr: int = 0
    ext_attr: int = 0
    in_central: bool = True
    in_local: bool = True


@dataclass
class Layout:
    prefix: bytes = b""
    suffix: bytes = b""
    comment: bytes = b""
    cd_gap: bytes = b""  # bytes between central directory and end records
    zip64_eocd: bool = False
    eocd_disk: int = 0
    eocd_count_disk: int | None = None
    eocd_count: int | None = None
    eocd_cd_size: int | None = None
    eocd_cd_offset: int | None = None
    duplicate_eocd: bool = False
    z64_record_size: int = 44
    z64_locator_disks: int = 1
    z64_locator_disk: int = 0


def assemble(entries: list[Entry], layout: Layout = Layout()) -> bytes:
    out = bytearray(layout.prefix)
    central = []
    for e in entries:
        out += e.gap_before
        offset = len(out) - len(layout.prefix)
        name = e.name.encode("utf-8")
        lname = (e.local_name if e.local_name is not None else e.name).encode("utf-8")
        crc = zlib.crc32(e.data) if e.crc is None else e.crc
        lcrc = crc if e.local_crc is None else e.local_crc
        size = len(e.data)
        extra = e.extra_local
        if e.zip64:
            extra = struct.pack("<HHQQ", 1, 16, size, size) + extra
        if e.align:
            base = len(out) + 30 + len(lname) + len(extra) + 6 - len(layout.prefix)
            pad = (-base) % e.align
            extra += struct.pack("<HHH", 0xD935, 2 + pad, e.align) + b"\0" * pad
        lsize = U32 if e.zip64 else (size if e.local_size is None else e.local_size)
        version = 45 if e.zip64 else e.version
        lver = version if e.local_version is None else e.local_version
        lflags = e.flags if e.local_flags is None else e.local_flags
        if e.in_local:
            out += (
                e.local_sig
                + struct.pack(
                    "<HHHHHIIIHH", lver, lflags, e.method, e.mtime, e.mdate, lcrc, lsize, lsize, len(lname), len(extra)
                )
                + lname
                + extra
            )
            out += e.data
        if not e.in_central:
            continue
        cextra = e.extra_central
        usize = size if e.central_usize is None else e.central_usize
        csize = size if e.central_csize is None else e.central_csize
        off = offset if e.offset is None else e.offset
        if e.zip64:
            cextra = struct.pack("<HHQQQ", 1, 24, usize, csize, off) + cextra
            usize32 = csize32 = off32 = U32
        else:
            usize32, csize32, off32 = usize, csize, off
        central.append(
            e.central_sig
            + struct.pack(
                "<HHHHHHIIIHHHHHII",
                e.made_by,
                version,
                e.flags,
                e.method,
                e.mtime,
                e.mdate,
                crc,
                csize32,
                usize32,
                len(name),
                len(cextra),
                len(e.comment),
                e.disk_start,
                e.int_attr,
                e.ext_attr,
                off32,
            )
            + name
            + cextra
            + e.comment
        )
    cd_offset = len(out) - len(layout.prefix)
    cd = b"".join(central)
    out += cd
    out += layout.cd_gap
    n = len(central)
    count_disk = n if layout.eocd_count_disk is None else layout.eocd_count_disk
    count = n if layout.eocd_count is None else layout.eocd_count
    cd_size = len(cd) if layout.eocd_cd_size is None else layout.eocd_cd_size
    cd_off = cd_offset if layout.eocd_cd_offset is None else layout.eocd_cd_offset
    if layout.zip64_eocd:
        z_off = len(out) - len(layout.prefix)
        out += struct.pack(
            "<4sQHHIIQQQQ",
            b"PK\x06\x06",
            layout.z64_record_size,
            45,
            45,
            layout.eocd_disk,
            0,
            count_disk,
            count,
            cd_size,
            cd_off,
        )
        out += struct.pack("<4sIQI", b"PK\x06\x07", layout.z64_locator_disk, z_off, layout.z64_locator_disks)
        eocd = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, U32, U32, len(layout.comment))
    else:
        eocd = struct.pack(
            "<4sHHHHIIH", b"PK\x05\x06", layout.eocd_disk, 0, count_disk, count, cd_size, cd_off, len(layout.comment)
        )
    if layout.duplicate_eocd:
        out += eocd
    out += eocd + layout.comment + layout.suffix
    return bytes(out)


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def standard_entries(
    data_json: bytes,
    groups: dict[str, bytes] | None = None,
    *,
    manifest: dict | None = None,
    manifest_raw: bytes | None = None,
    manifest_patch=None,
    extra_members: dict[str, bytes] | None = None,
    unlisted: tuple = (),
) -> list[Entry]:
    """Entries of a well-formed archive (mimetype, data.json, groups, extras, manifest).

    ``manifest_patch(dict)`` edits the computed manifest; ``unlisted`` names
    members left out of it; ``manifest_raw`` replaces its bytes outright.
    """
    entries = [Entry("mimetype", MEDIA_TYPE), Entry("data.json", data_json)]
    for g in sorted(groups or {}):
        entries.append(Entry(f"tensors/{g}.safetensors", groups[g], align=64))
    for name in sorted(extra_members or {}):
        entries.append(Entry(name, extra_members[name]))
    if manifest_raw is None:
        if manifest is None:
            listed = [
                {"name": e.name, "size": len(e.data), "sha256": sha(e.data)}
                for e in entries[1:]
                if e.name not in unlisted
            ]
            manifest = build_manifest(listed, ("rlarchive-test-vectors", "1"))
        if manifest_patch is not None:
            manifest = manifest_patch(manifest) or manifest
        manifest_raw = jsonstrict.dumps(manifest)
    entries.append(Entry("manifest.json", manifest_raw))
    return entries
