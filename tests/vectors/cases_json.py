"""The invalid golden cases of the JSON dialect (spec §6)."""

from __future__ import annotations

from cases import _data_raw, case
from rawzip import assemble, standard_entries

from rlarchive import jsonstrict


@case("json-bom", "data.json beginning with a UTF-8 byte order mark.", "§6", "JSON_BOM")
def _():
    return _data_raw(b'\xef\xbb\xbf{"data":{}}')


@case("json-invalid-utf8", "data.json holding the byte 0xFF.", "§6", "JSON_UTF8")
def _():
    return _data_raw(b'{"data":{"x":"\xff"}}')


@case("json-overlong-utf8", "data.json holding an overlong UTF-8 encoding of '/'.", "§6", "JSON_UTF8")
def _():
    return _data_raw(b'{"data":{"x":"\xc0\xaf"}}')


@case("json-encoded-surrogate", "data.json holding a UTF-8-encoded surrogate (CESU-style).", "§6", "JSON_UTF8")
def _():
    return _data_raw(b'{"data":{"x":"\xed\xa0\x80"}}')


@case("json-lone-surrogate-escape", "data.json whose string escapes a lone high surrogate.", "§6", "JSON_UTF8")
def _():
    return _data_raw(b'{"data":{"x":"\\ud800"}}')


@case("json-too-deep", "data.json nested 65 levels deep.", "§6", "JSON_DEPTH")
def _():
    return _data_raw(b'{"data":{"x":' + b"[" * 63 + b"]" * 63 + b"}}")


@case("json-syntax-trailing-comma", "data.json with a trailing comma.", "§6", "JSON_SYNTAX")
def _():
    return _data_raw(b'{"data":{"x":[1,2,]}}')


@case("json-syntax-single-quotes", "data.json with single-quoted strings.", "§6", "JSON_SYNTAX")
def _():
    return _data_raw(b"{'data':{}}")


@case(
    "json-nan-literal", "data.json holding the literal NaN (as Python's json.dumps writes).", "§6", "JSON_NAN_LITERAL"
)
def _():
    return _data_raw(b'{"data":{"x":NaN}}')


@case("json-infinity-literal", "data.json holding the literal -Infinity.", "§6", "JSON_NAN_LITERAL")
def _():
    return _data_raw(b'{"data":{"x":-Infinity}}')


@case("json-duplicate-key", "data.json with a key twice in one object.", "§6", "JSON_DUPLICATE_KEY")
def _():
    return _data_raw(b'{"data":{"gamma":0.9,"gamma":0.99}}')


@case(
    "json-duplicate-key-escaped",
    "Duplicate keys that differ only in escaping ('a' and '\\u0061').",
    "§6",
    "JSON_DUPLICATE_KEY",
)
def _():
    return _data_raw(b'{"data":{"a":1,"\\u0061":2}}')


@case(
    "json-integer-beyond-2-53",
    "A plain integer literal 2^53, which JavaScript would round.",
    "§6",
    "JSON_INTEGER_RANGE",
)
def _():
    return _data_raw(b'{"data":{"start_time":9007199254740993}}')


@case("json-float-overflow", "A float literal that overflows binary64 (1e400).", "§6", "JSON_NUMBER_RANGE")
def _():
    return _data_raw(b'{"data":{"x":1e400}}')


@case(
    "json-too-large",
    "A data.json of 64 MiB plus one byte (stored gzipped in this folder; the harness expands it).",
    ["§6", "§15"],
    "JSON_TOO_LARGE",
    gzip=True,
)
def _():
    body = b'{"data":{}}'
    return _data_raw(body + b" " * (64 * 1024 * 1024 + 1 - len(body)))


@case(
    "manifest-json-duplicate-key",
    "A manifest with a duplicate key: the JSON rules apply to every member.",
    ["§6", "§5"],
    "JSON_DUPLICATE_KEY",
)
def _():
    es = standard_entries(jsonstrict.dumps({"data": {}}))
    m = es[-1]
    m.data = m.data[:-1] + b',"format":"rlarchive"}'
    return assemble(es)
