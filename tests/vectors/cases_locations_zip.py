"""Cases that pin the location of an issue (spec §11.2) in ZIP records, JSON texts and safetensors headers.

Each case breaks one rule (or two, to fix their order) at a place where a
reader written from the text alone could name another record, byte or entry;
its description says which rule of the spec decides.
"""

from __future__ import annotations

import struct

from cases import _group, archive, by_name, case, entries_edit, st_raw
from rawzip import Layout
from sites import in_member, local_header, record, site, start, tensor_byte

from rlarchive.limits import MAX_JSON_DEPTH

DATA = "data.json"
GROUP = "tensors/policy.safetensors"

# offsets inside the end records (APPNOTE 4.3.14-4.3.16)
EOCD_DISK, EOCD_COUNT_DISK, EOCD_COUNT = 4, 8, 10
Z64_DISK, Z64_COUNT_DISK = 16, 24
Z64_SIG = 0


def _patch(raw: bytes, at: int, fmt: str, *values) -> bytes:
    """``raw`` with ``values`` packed (little-endian ``fmt``) at ``at`` (negative: from the end)."""
    b = bytearray(raw)
    struct.pack_into("<" + fmt, b, at % len(b), *values)
    return bytes(b)


def _z64(**kw) -> bytes:
    """A valid archive with ZIP64 end records (the EOCD's fields at their maximum), ``kw`` changing its Layout."""
    return entries_edit(lambda es: None, layout=Layout(zip64_eocd=True, **kw))


Z64_RECORD = -22 - 20 - 56  # where the ZIP64 end record begins, from the end of a file with ZIP64 end records


# ---------------------------------------------------------------- files too short for any record


@case(
    "location-zip-empty-file",
    "An empty file: identification (§3, step 1) needs 67 bytes, so ARCHIVE_NOT_RLARCHIVE at offset 0; no reader reaches the end-record search (ZIP_EOCD_NOT_FOUND).",
    ["§3", "§2.1", "§11.1"],
    "ARCHIVE_NOT_RLARCHIVE",
    check="identification",
    at=site(offset=start()),
)
def _():
    return b""


@case(
    "location-zip-21-bytes",
    "A file of 21 bytes (the start of an end record): shorter than the 67 identification bytes, so ARCHIVE_NOT_RLARCHIVE at offset 0 (§3 comes first), not ZIP_EOCD_NOT_FOUND.",
    ["§3", "§2.1", "§11.1"],
    "ARCHIVE_NOT_RLARCHIVE",
    check="identification",
    at=site(offset=start()),
)
def _():
    return b"PK\x05\x06" + bytes(17)


@case(
    "location-zip-empty-zip",
    "An empty ZIP file (one 22-byte end record, a valid ZIP): shorter than the 67 identification bytes, so ARCHIVE_NOT_RLARCHIVE at offset 0.",
    ["§3", "§11.1"],
    "ARCHIVE_NOT_RLARCHIVE",
    check="identification",
    at=site(offset=start()),
)
def _():
    return b"PK\x05\x06" + bytes(18)


# ---------------------------------------------------------------- end records: disk numbers (§2.1, Z1)


@case(
    "location-zip64-record-disk",
    "ZIP64 end records whose ZIP64 end record gives 'number of this disk' 1, the EOCD's field holding 0xFFFF: ZIP_MULTI_DISK at the ZIP64 end record, the record that holds the value.",
    ["§2.1", "§2.6", "§11.2"],
    "ZIP_MULTI_DISK",
    check="disk-numbers",
    at=site(offset=record("zip64-record")),
)
def _():
    return _patch(_z64(eocd_disk=1), -22 + EOCD_DISK, "H", 0xFFFF)


@case(
    "location-zip64-eocd-and-record-disk",
    "ZIP64 end records where the EOCD and the ZIP64 end record both give 'number of this disk' 1 (so they agree): ZIP_MULTI_DISK at the EOCD, the first record checked (EOCD, then locator, then ZIP64 end record).",
    ["§2.1", "§2.6", "§11.2"],
    "ZIP_MULTI_DISK",
    check="disk-numbers",
    at=site(offset=record("eocd")),
)
def _():
    return _patch(_z64(eocd_disk=1), -22 + EOCD_DISK, "H", 1)


@case(
    "location-zip64-locator-and-record-disk",
    "A ZIP64 locator placing the ZIP64 end record on disk 1 and a ZIP64 end record giving 'number of this disk' 1: ZIP_MULTI_DISK at the locator, checked before the ZIP64 end record.",
    ["§2.1", "§2.6", "§11.2"],
    "ZIP_MULTI_DISK",
    check="disk-numbers",
    at=site(offset=record("zip64-locator")),
)
def _():
    return _patch(_z64(eocd_disk=1, z64_locator_disk=1), -22 + EOCD_DISK, "H", 0xFFFF)


@case(
    "location-zip64-counts-differ-in-eocd",
    "ZIP64 end records whose entry counts on this disk and in total are 2 and 3 in both the EOCD and the ZIP64 end record: ZIP_MULTI_DISK at the EOCD, whose own counts differ.",
    ["§2.1", "§2.6", "§11.2"],
    "ZIP_MULTI_DISK",
    check="disk-numbers",
    at=site(offset=record("eocd")),
)
def _():
    return _patch(_z64(eocd_count_disk=2), -22 + EOCD_COUNT_DISK, "HH", 2, 3)


@case(
    "location-zip64-counts-differ-in-record",
    "ZIP64 end records whose ZIP64 end record gives 2 entries on this disk and 3 in total, the EOCD's counts holding 0xFFFF: ZIP_MULTI_DISK at the ZIP64 end record.",
    ["§2.1", "§2.6", "§11.2"],
    "ZIP_MULTI_DISK",
    check="disk-numbers",
    at=site(offset=record("zip64-record")),
)
def _():
    return _z64(eocd_count_disk=2)


@case(
    "location-zip64-locator-before-record",
    "A ZIP64 locator counting 2 disks in front of a ZIP64 end record with a bad signature: ZIP_ZIP64_INVALID at the locator, whose fields are checked before the record it points to (§2.6).",
    ["§2.6", "§11.1", "§11.2"],
    "ZIP_ZIP64_INVALID",
    check="zip64-end-records",
    at=site(offset=record("zip64-locator")),
)
def _():
    return _patch(_z64(z64_locator_disks=2), Z64_RECORD + Z64_SIG, "4s", b"PK\x06\x05")


@case(
    "location-zip64-member-count-limit",
    "ZIP64 end records giving 5,000 entries in the ZIP64 end record (the EOCD's counts hold 0xFFFF): LIMIT_EXCEEDED at the ZIP64 end record, the record that gives the count.",
    ["§2.2", "§2.6", "§11.2", "§15"],
    "LIMIT_EXCEEDED",
    check="member-count-limit",
    at=site(offset=record("zip64-record")),
)
def _():
    return _z64(eocd_count_disk=5000, eocd_count=5000)


@case(
    "location-zip64-directory-size",
    "ZIP64 end records giving a central directory size of 10^6 bytes for 3 entries in the ZIP64 end record (the EOCD's size holds 0xFFFFFFFF): ZIP_CD_INVALID at the ZIP64 end record, the record that gives the size.",
    ["§2.2", "§2.6", "§11.2"],
    "ZIP_CD_INVALID",
    check="directory-size",
    at=site(offset=record("zip64-record")),
)
def _():
    return _z64(eocd_cd_size=10**6)


# ---------------------------------------------------------------- records and layout


@case(
    "location-zip-gap-no-member",
    "Three unaccounted bytes between mimetype and data.json: ZIP_GAP at the first of them, with no member (a gap belongs to no record).",
    ["§2.1", "§11.2"],
    "ZIP_GAP",
    check="layout-gap",
    at=site(offset=in_member("gap", "mimetype", 29)),
)
def _():
    return entries_edit(lambda es: setattr(by_name(es, DATA), "gap_before", b"xyz"))


@case(
    "location-zip-central-two-rules",
    "A central record with compression method 8 and a file comment: ZIP_COMPRESSED at that record, since the method comes before the comment in §2.2's list.",
    ["§2.2", "§11.1", "§11.2"],
    "ZIP_COMPRESSED",
    check="central-method",
    at=site(member=DATA, offset=record("central-record", 1)),
)
def _():
    def edit(es):
        e = by_name(es, DATA)
        e.method, e.comment = 8, b"note"

    return entries_edit(edit)


@case(
    "location-zip-local-extra-before-agreement",
    "A local header with an extra record 0x9999 and a CRC-32 that disagrees with its central record: ZIP_EXTRA_FIELD at the local header, since the extra field is checked before the agreement (§2.3).",
    ["§2.3", "§2.5", "§11.1"],
    "ZIP_EXTRA_FIELD",
    check="local-extra",
    at=site(member=DATA, offset=record("local-header", 1)),
)
def _():
    def edit(es):
        e = by_name(es, DATA)
        e.extra_local, e.local_crc = struct.pack("<HH", 0x9999, 0), 1

    return entries_edit(edit)


@case(
    "location-zip-empty-name",
    'A member whose central record and local header have an empty name: ZIP_NAME_INVALID at the central record, with the member "" (an empty name is printable ASCII, so the issue names it).',
    ["§2.2", "§2.4", "§11.2"],
    "ZIP_NAME_INVALID",
    check="central-name",
    at=site(member="", offset=record("central-record", 1)),
)
def _():
    def edit(es):
        e = by_name(es, DATA)
        e.name = e.local_name = ""

    return entries_edit(edit)


@case(
    "location-zip-name-not-printable",
    "A member whose name holds the byte 0x01: ZIP_NAME_INVALID at its central record, with no member (its name is not printable ASCII).",
    ["§2.2", "§2.4", "§11.2"],
    "ZIP_NAME_INVALID",
    check="central-name",
    at=site(member="data\x01.json", offset=record("central-record", 1)),
)
def _():
    def edit(es):
        e = by_name(es, DATA)
        e.name = e.local_name = "data\x01.json"

    return entries_edit(edit)


# ---------------------------------------------------------------- JSON texts (§6)


def _text(raw: bytes) -> bytes:
    return archive(raw)


@case(
    "location-json-encoded-surrogate",
    "data.json holding the bytes ED A0 80 (an encoded surrogate): JSON_UTF8 at ED, the length of the longest well-formed prefix, not at A0.",
    ["§6", "§11.2"],
    "JSON_UTF8",
    check="json-utf8",
    at=site(member=DATA, offset=in_member("json-utf8", DATA, b"\xed")),
)
def _():
    return _text(b'{"data":{"x":"a\xed\xa0\x80b"}}')


@case(
    "location-json-utf8-cut-at-end",
    "data.json ending with E2 82, a 3-byte sequence cut off by the end of the text: JSON_UTF8 at E2, its first byte (JSON_UTF8 comes before JSON_SYNTAX).",
    ["§6", "§11.2"],
    "JSON_UTF8",
    check="json-utf8",
    at=site(member=DATA, offset=in_member("json-utf8", DATA, b"\xe2")),
)
def _():
    return _text(b'{"data":{"x":"a\xe2\x82')


@case(
    "location-json-utf8-overlong",
    "data.json holding C0 AF (an overlong '/'): JSON_UTF8 at C0.",
    ["§6", "§11.2"],
    "JSON_UTF8",
    check="json-utf8",
    at=site(member=DATA, offset=in_member("json-utf8", DATA, b"\xc0")),
)
def _():
    return _text(b'{"data":{"x":"\xc0\xaf"}}')


@case(
    "location-json-nan-then-letter",
    "data.json with 'NaNx' at a value position: JSON_NAN_LITERAL at the 'N', whatever follows the literal.",
    ["§6", "§11.2"],
    "JSON_NAN_LITERAL",
    check="json-nan-literal",
    at=site(member=DATA, offset=in_member("json-literal", DATA, b"NaNx")),
)
def _():
    return _text(b'{"data":{"x":NaNx}}')


@case(
    "location-json-nan-misspelt",
    "data.json with 'Nax' at a value position: no JSON text has an 'N' there, so JSON_SYNTAX at the 'N'.",
    ["§6", "§11.2"],
    "JSON_SYNTAX",
    check="json-syntax",
    at=site(member=DATA, offset=in_member("json-prefix", DATA, b"Nax")),
)
def _():
    return _text(b'{"data":{"x":Nax}}')


@case(
    "location-json-nan-after-float-overflow",
    "data.json with [1e999,NaN]: JSON_NAN_LITERAL at the 'N' (a grammar rule, §6 rule 5), not JSON_NUMBER_RANGE at the earlier 1e999 (rule 9).",
    ["§6", "§11.2"],
    "JSON_NAN_LITERAL",
    check="json-nan-literal",
    at=site(member=DATA, offset=in_member("json-literal", DATA, b"NaN")),
)
def _():
    return _text(b'{"data":{"x":[1e999,NaN]}}')


@case(
    "location-json-duplicate-then-syntax",
    "data.json repeating the key 'a' and then ending an object with ',}': JSON_SYNTAX at the '}' (rule 5), not JSON_DUPLICATE_KEY (rule 7, checked only on a text that passed the grammar).",
    ["§6", "§11.2"],
    "JSON_SYNTAX",
    check="json-syntax",
    at=site(member=DATA, offset=in_member("json-prefix", DATA, len(b'{"data":{"a":1,"a":2,'))),
)
def _():
    return _text(b'{"data":{"a":1,"a":2,}}')


@case(
    "location-json-surrogate-after-duplicate",
    "data.json repeating the key 'a' whose second value is the string '\\ud800': JSON_UTF8 at that string's opening quote (rule 6 comes before rule 7, whatever their places in the text).",
    ["§6", "§11.2"],
    "JSON_UTF8",
    check="json-utf8",
    at=site(member=DATA, offset=in_member("json-utf8", DATA, b'"\\ud800"')),
)
def _():
    return _text(b'{"data":{"a":1,"a":"\\ud800"}}')


@case(
    "location-json-integer-range-sign",
    "data.json with [1e400,-9007199254740992]: JSON_INTEGER_RANGE (rule 8, before rule 9 wherever the float is) at the literal's first byte, its minus sign.",
    ["§6", "§11.2"],
    "JSON_INTEGER_RANGE",
    check="json-integer-range",
    at=site(member=DATA, offset=in_member("json-literal", DATA, b"-9007")),
)
def _():
    return _text(b'{"data":{"x":[1e400,-9007199254740992]}}')


@case(
    "location-json-depth-text-start",
    f"data.json nesting {MAX_JSON_DEPTH + 1} arrays deep inside 'data': JSON_DEPTH at the text's first byte (depth is a property of the whole text, measured before parsing), not at the bracket that passes the limit.",
    ["§6", "§11.2", "§15"],
    "JSON_DEPTH",
    check="json-depth",
    at=site(member=DATA, offset=in_member("json-start", DATA)),
)
def _():
    return _text(b'{"data":{"x":' + b"[" * (MAX_JSON_DEPTH - 1) + b"]" * (MAX_JSON_DEPTH - 1) + b"}}")


# ---------------------------------------------------------------- safetensors headers (§10.2)


def _entry(dtype: str, shape: list, begin: int, end: int) -> dict:
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


@case(
    "location-st-header-leading-space",
    "A safetensors header ' {}' (a space before the object, a valid JSON text): ST_HEADER_INVALID at the member's first byte without a pointer, since the rule is about the header, not a tensor.",
    ["§10.2", "§11.2"],
    "ST_HEADER_INVALID",
    check="st-header",
    at=site(member=GROUP, offset=in_member("data", GROUP)),
)
def _():
    return _group(st_raw(b" {}", b""))


@case(
    "location-st-metadata",
    "A safetensors header holding '__metadata__': ST_HEADER_INVALID at the member's first byte with the pointer '/__metadata__' (the entry of that name).",
    ["§10.2", "§11.2"],
    "ST_HEADER_INVALID",
    check="st-header",
    at=site(member=GROUP, pointer="/__metadata__", by="entry", offset=in_member("data", GROUP)),
)
def _():
    return _group(st_raw({"__metadata__": {"a": "b"}}, b""))


@case(
    "location-st-empty-name",
    "A safetensors tensor named '' (empty): ST_HEADER_INVALID with the pointer '/', the entry of the empty name.",
    ["§10.2", "§11.2"],
    "ST_HEADER_INVALID",
    check="st-header",
    at=site(member=GROUP, pointer="/", by="entry", offset=in_member("data", GROUP)),
)
def _():
    return _group(st_raw({"": _entry("F32", [1], 0, 4)}, bytes(4)))


@case(
    "location-st-escaped-name",
    "A safetensors tensor named 'a/b~c' with the unknown dtype 'X': ST_DTYPE_UNKNOWN with the pointer '/a~1b~0c' (RFC 6901 escapes).",
    ["§10.2", "§11.2"],
    "ST_DTYPE_UNKNOWN",
    check="st-dtype",
    at=site(member=GROUP, pointer="/a~1b~0c", by="entry", offset=in_member("data", GROUP)),
)
def _():
    return _group(st_raw({"a/b~c": _entry("X", [1], 0, 4)}, bytes(4)))


@case(
    "location-st-check-before-tensor",
    "A safetensors header whose first tensor 'a' has offsets past the buffer and whose second 'b' has the unknown dtype 'X': ST_DTYPE_UNKNOWN at '/b', since each check runs over all tensors before the next check (dtypes before offsets).",
    ["§10.2", "§11.2"],
    "ST_DTYPE_UNKNOWN",
    check="st-dtype",
    at=site(member=GROUP, pointer="/b", by="entry", offset=in_member("data", GROUP)),
)
def _():
    return _group(st_raw({"a": _entry("F32", [1], 0, 400), "b": _entry("X", [1], 4, 8)}, bytes(8)))


@case(
    "location-st-first-tensor-hole",
    "A safetensors header whose only tensor begins at 4 of an 8-byte buffer: ST_HOLE at that tensor's entry (a first tensor not at 0).",
    ["§10.2", "§11.2"],
    "ST_HOLE",
    check="st-hole",
    at=site(member=GROUP, pointer="/w", by="entry", offset=in_member("data", GROUP)),
)
def _():
    return _group(st_raw({"w": _entry("F32", [1], 4, 8)}, bytes(8)))


@case(
    "location-st-overlap-tie",
    "A safetensors header with tensors 'b' then 'a', both at [0, 4]: in order of BEGIN, then END, then header order, 'a' comes second and begins before the previous end, so ST_OVERLAP at '/a'.",
    ["§10.2", "§11.2"],
    "ST_OVERLAP",
    check="st-overlap",
    at=site(member=GROUP, pointer="/a", by="entry", offset=in_member("data", GROUP)),
)
def _():
    return _group(st_raw({"b": _entry("F32", [1], 0, 4), "a": _entry("F32", [1], 0, 4)}, bytes(4)))


@case(
    "location-st-header-duplicate-key",
    "A safetensors header repeating the tensor 'w': JSON_DUPLICATE_KEY at the second key's opening quote (a file offset inside the header), member the safetensors member, no pointer.",
    ["§6", "§10.2", "§11.2"],
    "JSON_DUPLICATE_KEY",
    check="json-duplicate-key",
    at=site(member=GROUP, offset=in_member("json-key", GROUP, b'"w"', nth=1)),
)
def _():
    e = b'{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'
    return _group(st_raw(b'{"w":' + e + b',"w":' + e + b"}", bytes(4)))


@case(
    "location-st-bool-warnings-in-header-order",
    "Two BOOL tensors holding the byte 2, the header listing 'z' (the later bytes) before 'a': two ST_BOOL_VALUE warnings, in the order of the header's entries (§14), each at its entry and its tensor's first byte.",
    ["§10.1", "§11.2", "§14"],
    warnings=["ST_BOOL_VALUE", "ST_BOOL_VALUE"],
    check=["st-bool-value", "st-bool-value"],
    at=[
        site(
            member="tensors/flags.safetensors",
            pointer="/z",
            by="entry",
            offset=tensor_byte("tensors/flags.safetensors", 1),
        ),
        site(
            member="tensors/flags.safetensors",
            pointer="/a",
            by="entry",
            offset=tensor_byte("tensors/flags.safetensors", 0),
        ),
    ],
)
def _():
    header = {
        "z": {"dtype": "BOOL", "shape": [1], "data_offsets": [1, 2]},
        "a": {"dtype": "BOOL", "shape": [1], "data_offsets": [0, 1]},
    }
    return archive({"data": {}}, {"flags": st_raw(header, bytes([2, 2]))})


@case(
    "location-zip-local-header-past-end",
    "A central record placing data.json's local header 1 MiB past the end of the file: ZIP_TRUNCATED at that offset, where the central record says the local header is (§2.3), with the member data.json.",
    ["§2.3", "§11.2"],
    "ZIP_TRUNCATED",
    check="local-truncated",
    at=site(member=DATA, offset=local_header(DATA)),
)
def _():
    return entries_edit(lambda es: setattr(by_name(es, DATA), "offset", 1 << 20))


@case(
    "location-zip-local-zip64-extra",
    "data.json's local header carries a ZIP64 extra record although its size fields are not at their maximum: ZIP_ZIP64_INVALID at that local header (§2.6), with the member data.json.",
    ["§2.3", "§2.6", "§11.2"],
    "ZIP_ZIP64_INVALID",
    check="local-zip64-extra",
    at=site(member=DATA, offset=record("local-header", 1)),
)
def _():
    def edit(es):
        e = by_name(es, DATA)
        e.extra_local = struct.pack("<HHQQ", 1, 16, len(e.data), len(e.data))

    return entries_edit(edit)
