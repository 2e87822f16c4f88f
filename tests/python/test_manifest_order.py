"""The manifest's structure is checked in the order of spec §11.2 (§5.1, §5.3), whatever the document order
or the order a JSON Schema validator finds its errors in."""

import itertools

import pytest

from rlarchive import RlarchiveError, manifest

SHA = "0" * 64


def issue(obj):
    try:
        manifest.check(obj)
    except RlarchiveError as e:
        return e.code, e.pointer
    return None


def test_two_broken_properties_give_the_one_earlier_in_the_table_in_every_document_order():
    parts = {
        "format": "rlarchive",
        "format_version": "1.0",
        "producer": {"name": "", "version": "1"},
        "members": [{"name": "data.json", "size": 2, "sha256": SHA}],
        "metadata": {"n": 5},
    }
    seen = {issue({k: parts[k] for k in order}) for order in itertools.permutations(parts)}
    assert seen == {("MANIFEST_INVALID", "/producer/name")}


@pytest.mark.parametrize(
    "entry, where",
    [
        ({"sha256": "X", "size": -1, "name": "data.json"}, "/members/0/size"),
        ({"sha256": "X", "size": -1, "name": "data.json", "crc": 1}, "/members/0/crc"),
        ({"size": -1, "crc": 1}, "/members/0"),
    ],
)
def test_inside_an_entry_missing_then_not_allowed_then_name_size_sha256(entry, where):
    m = {"format": "rlarchive", "format_version": "1.0", "producer": {"name": "p", "version": "1"}, "members": [entry]}
    assert issue(m) == ("MANIFEST_INVALID", where)


def test_a_repeated_name_is_at_the_later_entry_and_the_count_limit_at_the_first_entry_beyond():
    def e(name, size=0):
        return {"name": name, "size": size, "sha256": SHA}

    def m(members):
        return {
            "format": "rlarchive",
            "format_version": "1.0",
            "producer": {"name": "p", "version": "1"},
            "members": members,
        }

    assert issue(m([e("a"), e("a"), e("b", -1)])) == ("MANIFEST_INVALID", "/members/1/name")
    many = [e(f"z/{i}") for i in range(4097)]
    assert issue(m(many)) == ("LIMIT_EXCEEDED", "/members/4096")
    many[7] = e("z/7", -1)
    assert issue(m(many)) == ("MANIFEST_INVALID", "/members/7/size")
    assert issue(m(many[:7])) is None


def test_a_bad_extension_key_is_at_the_key():
    m = {
        "format": "rlarchive",
        "format_version": "1.0",
        "producer": {"name": "p", "version": "1"},
        "members": [],
        "extensions": {"ok": 1, "b-c": 2},
    }
    assert issue(m) == ("MANIFEST_INVALID", "/extensions/b-c")


@pytest.mark.parametrize(
    "obj, where",
    [
        ({"format_version": "1.0"}, ""),
        ({"format": "x"}, "/format"),
        ({"format": "rlarchive"}, ""),
        ({"format": "rlarchive", "format_version": "1"}, "/format_version"),
    ],
)
def test_format_and_version_absent_at_the_manifest_wrong_at_the_property(obj, where):
    assert issue(obj) == ("MANIFEST_INVALID", where)
