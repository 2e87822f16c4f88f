"""Where the strict JSON dialect (spec §6) locates each issue: the offset a rule gives, computed here from the rule."""

import pytest

from rlarchive import jsonstrict
from rlarchive.errors import RlarchiveError
from rlarchive.limits import MAX_JSON_DEPTH


def where(raw: bytes):
    """(code, offset) of the issue jsonstrict.parse raises for ``raw`` placed at file offset 0."""
    with pytest.raises(RlarchiveError) as e:
        jsonstrict.parse(raw, member="data.json", offset=0)
    return e.value.code, e.value.offset


def longest_utf8(raw: bytes) -> int:
    """The length of the longest prefix of ``raw`` that decodes as well-formed UTF-8 (complete characters)."""
    for k in range(len(raw), -1, -1):
        try:
            raw[:k].decode("utf-8", "strict")
            return k
        except UnicodeDecodeError:
            continue
    return 0


@pytest.mark.parametrize(
    "raw",
    [
        b'"a\xed\xa0\x80"',  # an encoded surrogate: at ED
        b'"a\xe2\x82',  # cut off by the end of the text: at E2
        b'"\xc0\xaf"',  # overlong: at C0
        b'"\xff"',
        b'"\xe2\x28\xa1"',
        b'"\xf4\x90\x80\x80"',  # above U+10FFFF
        b'"\xf0\x9f\x98\x80\xf0\x9f"',  # a complete 4-byte character, then a cut one
    ],
)
def test_utf8_at_longest_well_formed_prefix(raw):
    assert where(raw) == ("JSON_UTF8", longest_utf8(raw))


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("after", ["", "x", "]", "1", " "])
def test_nan_literal_at_its_first_byte_whatever_follows(literal, after):
    assert where(f"[1,{literal}{after}".encode()) == ("JSON_NAN_LITERAL", 3)


@pytest.mark.parametrize(
    "text, code, token, shift",
    [
        ('{"a":[1e999,NaN]}', "JSON_NAN_LITERAL", "NaN", 0),  # rule 5 before rule 9
        ("[1 NaN]", "JSON_SYNTAX", "NaN", 0),  # not a value position
        ("{NaN:1}", "JSON_SYNTAX", "NaN", 0),
        ("[Nax]", "JSON_SYNTAX", "Nax", 0),
        ("[-Inf]", "JSON_SYNTAX", "Inf", 0),
        ('{"a":1,"a":2,}', "JSON_SYNTAX", ",}", 1),  # rule 5 before rule 7
        ('{"a":1,"a":"\\ud800"}', "JSON_UTF8", '"\\ud800"', 0),  # rule 6 before rule 7
        ("[1e400,-9007199254740992]", "JSON_INTEGER_RANGE", "-9007", 0),  # rule 8 before rule 9, at the sign
        ('{"a":{"b":1,"b":2},"a":3}', "JSON_DUPLICATE_KEY", '"b":2', 0),  # first in document order
    ],
)
def test_rule_order_and_place(text, code, token, shift):
    assert where(text.encode()) == (code, text.index(token) + shift)


def test_depth_at_text_start():
    assert where(b"[" + b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH + b"]") == ("JSON_DEPTH", 0)
