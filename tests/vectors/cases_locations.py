"""Cases that pin where an error is located (spec §11.2), beyond its code.

Each case breaks one rule at a place where two readers could plausibly name
different locations (where a JSON parser stops, which of two equal keys,
which member of an object); its expected validation report in index.json
carries the location, which the validate request of Annex A judges.
"""

from __future__ import annotations

from cases import archive, case, st_raw, with_value


@case(
    "location-json-literal-cut",
    "data.json holding the literal 'tru}': JSON_SYNTAX at the '}', the first byte no JSON text can have there, not at the literal's start.",
    ["§6", "§11.2"],
    "JSON_SYNTAX",
)
def _():
    return archive(b'{"data":{"x":tru}}')


@case(
    "location-json-unterminated-string",
    "data.json ending inside a string: JSON_SYNTAX at the text's end, not at the string's opening quote.",
    ["§6", "§11.2"],
    "JSON_SYNTAX",
)
def _():
    return archive(b'{"data":{"x":"abc')


@case(
    "location-json-number-cut",
    "data.json with the number '1.' followed by '}': JSON_SYNTAX at the '}', since '1.' begins a number.",
    ["§6", "§11.2"],
    "JSON_SYNTAX",
)
def _():
    return archive(b'{"data":{"x":1.}}')


@case(
    "location-json-bad-escape",
    "data.json with the escape '\\q': JSON_SYNTAX at the 'q', not at the backslash.",
    ["§6", "§11.2"],
    "JSON_SYNTAX",
)
def _():
    return archive(b'{"data":{"x":"a\\qb"}}')


@case(
    "location-json-bad-unicode-escape",
    "data.json with the escape '\\u12G4': JSON_SYNTAX at the 'G', the first byte that is not a hexadecimal digit.",
    ["§6", "§11.2"],
    "JSON_SYNTAX",
)
def _():
    return archive(b'{"data":{"x":"\\u12G4"}}')


@case(
    "location-json-duplicate-document-order",
    "data.json whose key 'a' repeats after an object that itself repeats 'b': JSON_DUPLICATE_KEY at the second 'b', the first repeated key in document order, not at the second 'a' (whose object closes last).",
    ["§6", "§11.2"],
    "JSON_DUPLICATE_KEY",
)
def _():
    return archive(b'{"data":{"a":{"b":1,"b":2},"a":3}}')


@case(
    "location-json-surrogate-string",
    "data.json with a string 'ab\\ud800cd': JSON_UTF8 at the string's opening quote.",
    ["§6", "§11.2"],
    "JSON_UTF8",
)
def _():
    return archive(b'{"data":{"x":"ab\\ud800cd"}}')


@case(
    "location-json-invalid-utf8-after-ascii",
    "data.json with the byte 0xFF after ASCII text: JSON_UTF8 at that byte, not at the text's first byte.",
    ["§6", "§11.2"],
    "JSON_UTF8",
)
def _():
    return archive(b'{"data":{"x":"abc\xffd"}}')


@case(
    "location-value-extra-member",
    "A tagged float with an extra member 'note': VALUE_INVALID at that member, not at the tagged value.",
    ["§7.3", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "float", "value": "nan", "note": "x"})


@case(
    "location-value-missing-member",
    "A tagged tuple without 'items': VALUE_INVALID at the tagged value itself.",
    ["§7.4", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "tuple"})


@case(
    "location-value-missing-and-extra-member",
    "A tagged float without 'value' but with an extra member 'note': VALUE_INVALID at the tagged value (the missing member is its fault, which comes before its members in document order), not at 'note'.",
    ["§7.3", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "float", "note": "x"})


@case(
    "location-ref-group-not-string",
    "An ndarray reference whose group is a number: VALUE_INVALID at ref/group, not at the reference.",
    ["§7.6", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "ndarray", "dtype": "F32", "shape": [1], "ref": {"group": 1, "name": "w"}})


@case(
    "location-ref-extra-member",
    "An ndarray reference with a third member: VALUE_INVALID at that member.",
    ["§7.6", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "ndarray", "dtype": "F32", "shape": [1], "ref": {"group": "g", "name": "w", "at": 0}})


@case(
    "location-space-extra-member",
    "A discrete space with an extra member 'seed': VALUE_INVALID at that member.",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "discrete", "n": 2, "start": 0, "dtype": "I64", "seed": 1})


@case(
    "location-manifest-two-problems",
    "A manifest whose producer has an extra property and whose metadata holds a number: MANIFEST_INVALID at the problem that comes first in the document (the producer's extra property), whatever order a schema validator finds them in.",
    ["§5.1", "§11.2"],
    "MANIFEST_INVALID",
)
def _():
    return archive(
        {"data": {}}, manifest_patch=lambda m: {**m, "producer": {**m["producer"], "url": "x"}, "metadata": {"n": 5}}
    )


@case(
    "location-st-entry-missing-member",
    "A safetensors entry without data_offsets: ST_HEADER_INVALID at the member's first byte with the entry's pointer.",
    ["§10.2", "§11.2"],
    "ST_HEADER_INVALID",
)
def _():
    return archive({"data": {}}, groups={"g": st_raw({"a/b": {"dtype": "F32", "shape": [1]}}, b"\0" * 4)})
