"""Where the ZIP profile (spec §2, §3) locates each issue: the record a rule names, found here by its signature."""

import struct

import pytest
from rawzip import Layout, assemble, standard_entries

import rlarchive
from rlarchive import jsonstrict

EOCD, LOCATOR, Z64 = b"PK\x05\x06", b"PK\x06\x07", b"PK\x06\x06"


def _entries():
    return standard_entries(jsonstrict.dumps({"data": {"gamma": 0.99}}))


def first_issue(raw: bytes) -> dict:
    issues = rlarchive.validate(raw)["issues"]
    assert issues, "the file is valid"
    return issues[0]


def patch(raw: bytes, at: int, fmt: str, *values) -> bytes:
    b = bytearray(raw)
    struct.pack_into("<" + fmt, b, at % len(b), *values)
    return bytes(b)


@pytest.mark.parametrize("size", [0, 5, 21, 22, 66])
def test_short_files_fail_identification(size):
    raw = (b"PK\x05\x06" + bytes(18)).ljust(size, b"\0")[:size]
    issue = first_issue(raw)
    assert (issue["code"], issue["offset"], "member" in issue) == ("ARCHIVE_NOT_RLARCHIVE", 0, False)


@pytest.mark.parametrize(
    "layout, patches, record",
    [
        # the ZIP64 end record's disk, the EOCD's at its maximum: at the ZIP64 end record
        (dict(eocd_disk=1), [(-22 + 4, "H", 0xFFFF)], Z64),
        # both records give disk 1 (they agree): at the EOCD, checked first
        (dict(eocd_disk=1), [(-22 + 4, "H", 1)], EOCD),
        # the locator's disk and the ZIP64 end record's: at the locator, checked before the record
        (dict(eocd_disk=1, z64_locator_disk=1), [(-22 + 4, "H", 0xFFFF)], LOCATOR),
        # counts that differ in the EOCD (and alike in the ZIP64 end record): at the EOCD
        (dict(eocd_count_disk=2), [(-22 + 8, "HH", 2, 3)], EOCD),
        # counts that differ in the ZIP64 end record only: there
        (dict(eocd_count_disk=2), [], Z64),
    ],
)
def test_multi_disk_at_the_record_holding_the_field(layout, patches, record):
    raw = assemble(_entries(), Layout(zip64_eocd=True, **layout))
    for at, fmt, *values in patches:
        raw = patch(raw, at, fmt, *values)
    issue = first_issue(raw)
    assert (issue["code"], issue["offset"], "member" in issue) == ("ZIP_MULTI_DISK", raw.rindex(record), False)


def test_locator_checked_before_the_record_it_points_to():
    raw = assemble(_entries(), Layout(zip64_eocd=True, z64_locator_disks=2))
    raw = raw.replace(Z64, b"PK\x06\x05")
    issue = first_issue(raw)
    assert (issue["code"], issue["offset"]) == ("ZIP_ZIP64_INVALID", raw.rindex(LOCATOR))


@pytest.mark.parametrize(
    "layout, code",
    [(dict(eocd_count_disk=5000, eocd_count=5000), "LIMIT_EXCEEDED"), (dict(eocd_cd_size=10**6), "ZIP_CD_INVALID")],
)
def test_values_given_by_the_zip64_record_are_located_there(layout, code):
    raw = assemble(_entries(), Layout(zip64_eocd=True, **layout))
    issue = first_issue(raw)
    assert (issue["code"], issue["offset"]) == (code, raw.rindex(Z64))


def test_gap_has_no_member():
    es = _entries()
    es[1].gap_before = b"xyz"
    raw = assemble(es)
    issue = first_issue(raw)
    gap = raw.index(b"xyz", 67)
    assert (issue["code"], issue["offset"], "member" in issue) == ("ZIP_GAP", gap, False)
