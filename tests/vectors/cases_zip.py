"""The invalid golden cases of identification and the ZIP profile (spec §1 and §2)."""

from __future__ import annotations

import struct
import zlib

from cases import POLICY, by_name, case, entries_edit, ext_archive, ext_member, policy_archive, st_group
from rawzip import Entry, Layout, assemble, standard_entries

from rlarchive import jsonstrict
from rlarchive.zipprofile import MEDIA_TYPE


def _plain_zip(names=("data.json",)) -> bytes:
    es = [Entry(n, b"{}") for n in names]
    return assemble(es)


@case("not-rlarchive-plain-zip", "A ZIP without the mimetype member first.", "§3", "ARCHIVE_NOT_RLARCHIVE")
def _():
    return _plain_zip()


@case("not-rlarchive-empty-file", "An empty file.", "§3", "ARCHIVE_NOT_RLARCHIVE")
def _():
    return b""


@case("not-rlarchive-wrong-media-type", "A mimetype member naming another media type.", "§3", "ARCHIVE_NOT_RLARCHIVE")
def _():
    return entries_edit(lambda es: setattr(es[0], "data", b"application/vnd.other-format+zip"))


@case(
    "not-rlarchive-prepended-bytes",
    "Bytes prepended before the first local header (a self-extractor stub).",
    ["§2.1", "§3"],
    "ARCHIVE_NOT_RLARCHIVE",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(prefix=b"#!/bin/sh\nexit 0\n"))


@case(
    "not-rlarchive-mimetype-too-long",
    "A mimetype member that begins with the media type but is 30 bytes long.",
    "§3",
    "ARCHIVE_NOT_RLARCHIVE",
)
def _():
    return entries_edit(lambda es: setattr(es[0], "data", MEDIA_TYPE + b"\n"))


@case(
    "zip-eocd-missing-truncated",
    "An archive cut short: no end of central directory record.",
    "§2.1",
    "ZIP_EOCD_NOT_FOUND",
)
def _():
    full = policy_archive()
    return full[: len(full) // 2]


@case("zip-trailing-bytes", "Bytes after the end of central directory record.", "§2.1", "ZIP_TRAILING_DATA")
def _():
    return entries_edit(lambda es: None, layout=Layout(suffix=b"trailing"))


@case("zip-eocd-comment", "An end record with a comment.", "§2.1", "ZIP_TRAILING_DATA")
def _():
    return entries_edit(lambda es: None, layout=Layout(comment=b"hello"))


@case("zip-two-end-records", "Two end of central directory records in a row.", "§2.1", "ZIP_MULTIPLE_EOCD")
def _():
    return entries_edit(lambda es: None, layout=Layout(duplicate_eocd=True))


@case("zip-multi-disk", "An end record naming disk 1.", "§2.1", "ZIP_MULTI_DISK")
def _():
    return entries_edit(lambda es: None, layout=Layout(eocd_disk=1))


@case("zip-member-on-other-disk", "A central record whose disk number start is 1.", "§2.2", "ZIP_MULTI_DISK")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "disk_start", 1))


@case("zip64-bad-record-size", "A ZIP64 end record whose size field is not 44.", "§2.6", "ZIP_ZIP64_INVALID")
def _():
    return entries_edit(lambda es: None, layout=Layout(zip64_eocd=True, z64_record_size=52))


@case(
    "zip64-max-count-without-locator",
    "An end record with the entry count 0xFFFF and no ZIP64 records.",
    "§2.6",
    "ZIP_ZIP64_INVALID",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(eocd_count=0xFFFF, eocd_count_disk=0xFFFF))


@case(
    "zip64-max-disk-without-locator",
    "An end record whose disk numbers hold 0xFFFF without ZIP64 records.",
    "§2.6",
    "ZIP_ZIP64_INVALID",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(eocd_disk=0xFFFF))


@case(
    "zip64-locator-other-disk",
    "A ZIP64 locator placing the ZIP64 end record on disk 1.",
    ["§2.1", "§2.6"],
    "ZIP_MULTI_DISK",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(zip64_eocd=True, z64_locator_disk=1))


@case(
    "zip64-extra-without-max-field",
    "A central record with a ZIP64 extra record although no field holds 0xFFFFFFFF.",
    "§2.6",
    "ZIP_ZIP64_INVALID",
)
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "extra_central", struct.pack("<HHQ", 1, 8, 5)))


@case(
    "zip-directory-past-region", "An end record whose directory size runs into the end record.", "§2.2", "ZIP_TRUNCATED"
)
def _():
    base = standard_entries(jsonstrict.dumps({"data": {}}))
    cd_len = sum(46 + len(e.name) for e in base)
    return assemble(base, Layout(eocd_cd_size=cd_len + 10))


@case("zip-bad-central-signature", "A central directory record with a corrupt signature.", "§2.2", "ZIP_CD_INVALID")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "central_sig", b"PK\x01\x09"))


@case("zip-member-comment", "A member with a file comment.", "§2.2", "ZIP_CD_INVALID")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "comment", b"note"))


@case(
    "zip-entry-count-wrong",
    "An end record counting one entry fewer than the directory holds.",
    "§2.2",
    "ZIP_CD_INVALID",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(eocd_count=2, eocd_count_disk=2))


@case("zip-sizes-differ", "A STORED member whose compressed and uncompressed sizes differ.", "§2.2", "ZIP_CD_INVALID")
def _():
    def edit(es):
        e = by_name(es, "data.json")
        e.central_csize = len(e.data) + 1

    return entries_edit(edit)


@case("zip-encrypted", "A member flagged as encrypted.", "§2.2", "ZIP_ENCRYPTED")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "flags", 1))


@case("zip-data-descriptor", "A member flagged as using a data descriptor.", "§2.2", "ZIP_DATA_DESCRIPTOR")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "flags", 8))


@case("zip-utf8-flag", "A member with general purpose flag bit 11 (UTF-8 names) set.", "§2.2", "ZIP_FLAGS")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "flags", 0x800))


@case("zip-deflated", "A member whose compression method is 8 (deflate).", "§2.2", "ZIP_COMPRESSED")
def _():
    def edit(es):
        e = by_name(es, "data.json")
        e.method = 8

    return entries_edit(edit)


def _extra_member(name: str) -> bytes:
    return entries_edit(lambda es: es.insert(2, Entry(name, b"x")))


@case("zip-name-dotdot", "A member name with a '..' segment.", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("extensions/../../evil")


@case("zip-name-absolute", "An absolute member name.", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("/etc/passwd")


@case("zip-name-backslash", "A member name with a backslash.", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("tensors\\policy.safetensors")


@case("zip-name-directory", "A directory entry (name ending in '/').", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("tensors/")


@case("zip-name-non-ascii", "A member name with a non-ASCII byte.", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("données.json")


@case("zip-name-too-long", "A member name of 256 bytes.", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("a" * 256)


@case(
    "zip-extra-unknown-id",
    "A central record carrying an extended-timestamp extra record (0x5455).",
    "§2.5",
    "ZIP_EXTRA_FIELD",
)
def _():
    return entries_edit(
        lambda es: setattr(by_name(es, "data.json"), "extra_central", struct.pack("<HHB", 0x5455, 1, 0))
    )


@case("zip-extra-truncated", "A local extra field that ends inside a record header.", "§2.5", "ZIP_EXTRA_FIELD")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "extra_local", b"\x35\xd9"))


@case(
    "zip-extra-padding-nonzero", "An alignment padding record with a non-zero padding byte.", "§2.5", "ZIP_EXTRA_FIELD"
)
def _():
    return entries_edit(
        lambda es: setattr(by_name(es, "data.json"), "extra_local", struct.pack("<HHHB", 0xD935, 3, 64, 7))
    )


@case("zip-name-duplicate", "Two members named data.json.", "§2.2", "ZIP_NAME_DUPLICATE")
def _():
    return entries_edit(lambda es: es.insert(2, Entry("data.json", b'{"data":{}}')))


@case("zip-name-case-collision", "Members data.json and DATA.json.", "§2.2", "ZIP_NAME_CASE_COLLISION")
def _():
    return entries_edit(lambda es: es.insert(2, Entry("DATA.json", b'{"data":{}}')))


@case("zip-local-signature", "A local header with a corrupt signature.", "§2.3", "ZIP_LOCAL_HEADER_INVALID")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "local_sig", b"PK\x03\x05"))


@case(
    "zip-local-name-differs",
    "A local header naming data.jsoN while the central directory says data.json.",
    "§2.3",
    "ZIP_HEADER_MISMATCH",
)
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "local_name", "data.jsoN"))


@case(
    "zip-local-crc-differs",
    "A local header whose CRC-32 differs from the central directory's.",
    "§2.3",
    "ZIP_HEADER_MISMATCH",
)
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "local_crc", 0x12345678))


@case(
    "zip-hidden-member-overlap",
    "A member whose local header lies inside another member's data (a hidden member).",
    "§2.1",
    "ZIP_OVERLAP",
)
def _():
    hidden = b"{}"
    lh = (
        b"PK\x03\x04"
        + struct.pack("<HHHHHIIIHH", 20, 0, 0, 0, 0x21, zlib.crc32(hidden), 2, 2, 6, 0)
        + b"hidden"
        + hidden
    )

    def edit(es):
        d = by_name(es, "data.json")
        d.data = lh
        # offset of data.json's data: mimetype member (30+8+29) + data.json header (30+9)
        es.insert(2, Entry("hidden", hidden, in_local=False, offset=30 + 8 + 29 + 30 + 9, crc=zlib.crc32(hidden)))

    return entries_edit(edit)


@case(
    "zip-member-runs-into-directory",
    "A last member whose size (in both headers) runs into the central directory.",
    "§2.1",
    "ZIP_OVERLAP",
)
def _():
    def edit(es):
        m = es[-1]
        m.central_csize = m.central_usize = m.local_size = len(m.data) + 10

    return entries_edit(edit)


@case("zip-gap-before-member", "Unaccounted bytes between two members.", "§2.1", "ZIP_GAP")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "gap_before", b"\0" * 16))


@case(
    "zip-gap-before-directory",
    "Unaccounted bytes between the last member and the central directory.",
    "§2.1",
    "ZIP_GAP",
)
def _():
    def edit(es):
        es.append(Entry("junk", b"ghost", in_central=False))

    return entries_edit(edit)


@case("zip-gap-before-end-record", "Bytes between the central directory and the end record.", "§2.1", "ZIP_GAP")
def _():
    return entries_edit(lambda es: None, layout=Layout(cd_gap=b"\0" * 12))


@case(
    "zip-crc-wrong-data",
    "data.json whose CRC-32 (in both headers) does not match its bytes.",
    "§2.3",
    "ZIP_CRC_MISMATCH",
)
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "crc", 0xDEADBEEF))


@case(
    "zip-crc-wrong-tensor",
    "A tensor member with one flipped byte: its CRC-32 no longer matches (a deferred check).",
    ["§2.3", "§11.1"],
    "ZIP_CRC_MISMATCH",
)
def _():
    groups = {"policy": st_group(POLICY)}

    def edit(es):
        e = by_name(es, "tensors/policy.safetensors")
        e.crc = zlib.crc32(e.data)
        b = bytearray(e.data)
        b[-1] ^= 0x40
        e.data = bytes(b)

    return entries_edit(edit, groups)


def _set(e: Entry, **fields) -> None:
    for k, v in fields.items():
        setattr(e, k, v)


S_IFLNK, S_IFDIR, S_IFCHR = 0o120000, 0o040000, 0o020000
LINK_TARGET = b"/etc/passwd"


@case(
    "zip-made-by-host-atari-symlink",
    "A member whose 'version made by' names host 5 (Atari ST) with a symbolic-link mode and an absolute path as its data: Info-ZIP unzip extracts it as a link to that path.",
    "§2.7",
    "ZIP_VERSION_MADE_BY",
)
def _():
    return ext_archive(
        {"link": LINK_TARGET}, lambda es: _set(ext_member(es, "link"), made_by=0x051E, ext_attr=(S_IFLNK | 0o777) << 16)
    )


@case(
    "zip-made-by-host-ntfs-directory",
    "data.json in a record naming host 11 (NTFS to 7-Zip) with the MS-DOS directory bit: 7-Zip extracts it as a directory.",
    "§2.7",
    "ZIP_VERSION_MADE_BY",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), made_by=0x0B3F, ext_attr=0x10))


@case(
    "zip-version-needed-63",
    "data.json needing ZIP version 6.3 to extract (in both headers): Info-ZIP unzip refuses it.",
    "§2.7",
    "ZIP_VERSION_NEEDED",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), version=63))


@case(
    "zip-host-checked-before-version-needed",
    "data.json naming host 11 and needing version 6.3: the host system is checked first.",
    ["§2.2", "§2.7", "§11.1"],
    "ZIP_VERSION_MADE_BY",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), made_by=0x0B3F, version=63))


@case(
    "zip-attributes-unix-symlink",
    "A member with host 3 and a symbolic-link mode whose data is an absolute path: unzip, bsdtar and 7-Zip extract a link to that path.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return ext_archive(
        {"link": LINK_TARGET}, lambda es: _set(ext_member(es, "link"), made_by=0x031E, ext_attr=(S_IFLNK | 0o777) << 16)
    )


@case(
    "zip-attributes-unix-directory",
    "data.json with host 3 and a directory mode: bsdtar and 7-Zip extract a directory.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), made_by=0x031E, ext_attr=(S_IFDIR | 0o755) << 16))


@case(
    "zip-attributes-unix-setuid",
    "A tensor member with host 3 and the mode 0o104755 (set-user-ID): bsdtar run as root keeps the bit.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(
        lambda es: _set(by_name(es, "tensors/policy.safetensors"), made_by=0x031E, ext_attr=0o104755 << 16),
        {"policy": st_group(POLICY)},
    )


@case(
    "zip-attributes-unix-device",
    "An empty member with host 3 and a character-device mode: bsdtar run as root makes a device node.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return ext_archive(
        {"dev": b""}, lambda es: _set(ext_member(es, "dev"), made_by=0x031E, ext_attr=(S_IFCHR | 0o644) << 16)
    )


@case(
    "zip-attributes-unix-not-owner-readable",
    "data.json with host 3 and the mode 0o100044: every tool extracts a file its owner cannot read.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), made_by=0x031E, ext_attr=0o100044 << 16))


@case(
    "zip-attributes-dos-directory",
    "data.json with host 0 and the MS-DOS directory bit 0x10: bsdtar and 7-Zip extract a directory.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), ext_attr=0x10))


@case(
    "zip-attributes-dos-volume-label",
    "data.json with host 0 and the MS-DOS volume-label bit 0x08: Info-ZIP unzip does not extract it.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), ext_attr=0x08))


@case(
    "zip-attributes-dos-reparse-point",
    "data.json with host 0 and the Windows reparse-point bit 0x400: 7-Zip reports an error.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), ext_attr=0x400))


@case(
    "zip-attributes-dos-with-unix-symlink-mode",
    "A member with host 0, the read-only bit and a symbolic-link Unix mode (0o120444) in the upper half, its data an absolute path: Info-ZIP unzip and 7-Zip extract a link to that path.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return ext_archive(
        {"link": LINK_TARGET}, lambda es: _set(ext_member(es, "link"), ext_attr=((S_IFLNK | 0o444) << 16) | 0x01)
    )


@case(
    "zip-name-file-and-directory",
    "Members extensions/ACME_files/d and extensions/ACME_files/d/f: extracted, d would be a file and a directory at once.",
    "§2.2",
    "ZIP_NAME_DIRECTORY_CLASH",
)
def _():
    return ext_archive({"d": b"file\n", "d/f": b"inner\n"})


@case(
    "zip-name-file-and-directory-ignoring-case",
    "Members extensions/ACME_files/D and extensions/ACME_files/d/f: on a file system that ignores case, D would be a file and a directory at once.",
    "§2.2",
    "ZIP_NAME_DIRECTORY_CLASH",
)
def _():
    return ext_archive({"D": b"file\n", "d/f": b"inner\n"})


@case(
    "zip-case-collision-before-directory-clash",
    "Members data.json and DATA.json, and extensions/ACME_files/d beside extensions/ACME_files/d/f: case collisions are checked before file/directory clashes.",
    ["§2.2", "§11.1"],
    "ZIP_NAME_CASE_COLLISION",
)
def _():
    return ext_archive({"d": b"file\n", "d/f": b"inner\n"}, lambda es: es.insert(2, Entry("DATA.json", b'{"data":{}}')))


@case("too-many-members", "An end record announcing 5000 members.", ["§2.2", "§15"], "LIMIT_EXCEEDED")
def _():
    return entries_edit(lambda es: None, layout=Layout(eocd_count=5000, eocd_count_disk=5000))
