"""The invalid golden cases of the data document and its values (spec §7)."""

from __future__ import annotations

import numpy as np
from cases import _data_raw, b64, case, nd, st_group, with_value


@case("data-not-object", "data.json whose value is an array.", "§7.1", "DATA_INVALID")
def _():
    return _data_raw(b"[]")


@case("data-missing-data", "data.json without the data member.", "§7.1", "DATA_INVALID")
def _():
    return _data_raw(b'{"optimizers":{}}')


@case("data-optimizers-not-object", "data.json whose optimizers member is an array.", "§7.1", "DATA_INVALID")
def _():
    return _data_raw(b'{"data":{},"optimizers":[]}')


@case("value-unknown-type", "A tagged value with an unknown $type.", "§7.2", "VALUE_UNKNOWN_TYPE")
def _():
    return with_value({"$type": "complex", "re": 1, "im": 2})


@case("value-type-not-string", "A $type member that is not a string.", "§7.2", "VALUE_UNKNOWN_TYPE")
def _():
    return with_value({"$type": 1})


@case("value-float-finite-tagged", "A float tag holding a finite number.", "§7.3", "VALUE_INVALID")
def _():
    return with_value({"$type": "float", "value": "1.5"})


@case(
    "value-int-tag-in-safe-range", "An int tag for an integer that fits a plain JSON number.", "§7.3", "VALUE_INVALID"
)
def _():
    return with_value({"$type": "int", "value": "42"})


@case("value-int-tag-leading-zero", "An int tag with a leading zero.", "§7.3", "VALUE_INVALID")
def _():
    return with_value({"$type": "int", "value": "09007199254740993"})


@case("value-int-too-many-digits", "An int tag of 4097 digits.", ["§7.3", "§15"], "LIMIT_EXCEEDED")
def _():
    return with_value({"$type": "int", "value": "9" * 4097})


@case(
    "value-bytes-noncanonical-base64",
    "Base64 with non-zero pad bits ('QR==' instead of 'QQ==').",
    "§7.4",
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "bytes", "base64": "QR=="})


@case("value-bytes-base64-whitespace", "Base64 with a line break.", "§7.4", "VALUE_INVALID")
def _():
    return with_value({"$type": "bytes", "base64": "QUJD\nREVG"})


@case("value-tuple-extra-member", "A tuple tag with a member it does not define.", "§7.4", "VALUE_INVALID")
def _():
    return with_value({"$type": "tuple", "items": [], "len": 0})


@case("value-dict-tag-string-keys", "A dict tag used for a map that plain JSON can carry.", "§7.5", "VALUE_INVALID")
def _():
    return with_value({"$type": "dict", "entries": [["a", 1], ["b", 2]]})


@case("value-dict-key-unhashable", "A dict key that is a list.", "§7.5", "VALUE_INVALID")
def _():
    return with_value({"$type": "dict", "entries": [[[1], "a"]]})


@case("value-dict-key-nan", "A dict key that is NaN.", "§7.5", "VALUE_INVALID")
def _():
    return with_value({"$type": "dict", "entries": [[{"$type": "float", "value": "nan"}, "a"]]})


@case("value-dict-duplicate-int-float", "dict keys 1 and 1.0, equal by numeric value.", "§7.5", "VALUE_DUPLICATE_KEY")
def _():
    return with_value({"$type": "dict", "entries": [[1, "a"], [1.0, "b"]]})


@case("value-dict-duplicate-bool-int", "dict keys true and 1, equal by numeric value.", "§7.5", "VALUE_DUPLICATE_KEY")
def _():
    return with_value({"$type": "dict", "entries": [[True, "a"], [1, "b"]]})


@case("value-ndarray-both-forms", "An ndarray with both base64 and ref.", "§7.6", "VALUE_INVALID")
def _():
    return with_value(
        {"$type": "ndarray", "dtype": "U8", "shape": [1], "base64": "AA==", "ref": {"group": "g", "name": "n"}}
    )


@case("value-ndarray-bad-dtype", "An ndarray with dtype 'float32' (not a dtype code).", "§7.6", "VALUE_INVALID")
def _():
    return with_value({"$type": "ndarray", "dtype": "float32", "shape": [1], "base64": "AAAAAA=="})


@case("value-ndarray-too-many-dims", "An ndarray of 33 dimensions.", ["§7.6", "§15"], "LIMIT_EXCEEDED")
def _():
    return with_value({"$type": "ndarray", "dtype": "U8", "shape": [1] * 33, "base64": "AA=="})


@case("value-ndarray-inline-too-large", "An inline array of 65,537 bytes.", ["§7.6", "§15"], "LIMIT_EXCEEDED")
def _():
    return with_value(nd("U8", [65537], b"\0" * 65537))


@case("array-size-mismatch", "An inline F32 array of shape [3] holding 8 bytes.", "§7.6", "ARRAY_SIZE_MISMATCH")
def _():
    return with_value(nd("F32", [3], b"\0" * 8))


@case("scalar-size-mismatch", "An F64 scalar holding 4 bytes.", "§7.6", "ARRAY_SIZE_MISMATCH")
def _():
    return with_value({"$type": "scalar", "dtype": "F64", "base64": b64(b"\0" * 4)})


@case("value-class-bad-module", "A class reference whose module is not dotted identifiers.", "§7.8", "VALUE_INVALID")
def _():
    return with_value({"$type": "class", "module": "os; import sys", "qualname": "system"})


@case("value-opaque-wrong-format", "An opaque value whose format is not 'pickle'.", "§7.8", "VALUE_INVALID")
def _():
    return with_value({"$type": "opaque", "format": "cloudpickle", "base64": "gARO"})


def _space(**kw) -> dict:
    return {"$type": "space", **kw}


@case("space-missing-member", "A discrete space without start.", "§8", "VALUE_INVALID")
def _():
    return with_value(_space(kind="discrete", n=3, dtype="I64"))


@case("space-unknown-kind", "A space of kind 'graph'.", "§8", "VALUE_INVALID")
def _():
    return with_value(_space(kind="graph", nodes=3))


@case("space-discrete-n-zero", "A discrete space with n = 0.", "§8", "SPACE_INVALID")
def _():
    return with_value(_space(kind="discrete", n=0, start=0, dtype="I64"))


@case("space-box-shape-mismatch", "A box whose low bound has another shape.", "§8", "SPACE_INVALID")
def _():
    return with_value(
        _space(kind="box", dtype="F32", shape=[2], low=nd("F32", [1], b"\0" * 4), high=nd("F32", [2], b"\0" * 8))
    )


@case("space-multi-discrete-nvec-zero", "A multi_discrete space with a zero in nvec.", "§8", "SPACE_INVALID")
def _():
    return with_value(
        _space(
            kind="multi_discrete",
            dtype="I64",
            nvec=nd("I64", [2], np.array([3, 0], "<i8").tobytes()),
            start=nd("I64", [2], b"\0" * 16),
        )
    )


@case("space-text-charset-unsorted", "A text space whose charset is not in ascending order.", "§8", "SPACE_INVALID")
def _():
    return with_value(_space(kind="text", min_length=0, max_length=4, charset="ba"))


@case("space-dict-duplicate-key", "A dict space with a key twice.", "§8", "SPACE_INVALID")
def _():
    d = _space(kind="discrete", n=2, start=0, dtype="I64")
    return with_value(_space(kind="dict", spaces=[["a", d], ["a", d]]))


@case("schedule-linear-end-fraction-zero", "A linear schedule with end_fraction 0.", "§9", "SCHEDULE_INVALID")
def _():
    return with_value({"$type": "schedule", "kind": "linear", "start": 1.0, "end": 0.0, "end_fraction": 0.0})


@case("schedule-piecewise-not-increasing", "A piecewise schedule whose points go backwards.", "§9", "SCHEDULE_INVALID")
def _():
    return with_value(
        {"$type": "schedule", "kind": "piecewise", "points": [[0.5, 1.0], [0.2, 0.0]], "interpolation": "linear"}
    )


@case("schedule-value-tagged", "A constant schedule whose value is a tagged float.", "§9", "VALUE_INVALID")
def _():
    return with_value({"$type": "schedule", "kind": "constant", "value": {"$type": "float", "value": "nan"}})


def _ref(group="arrays", name="a", dtype="F32", shape=(4,)) -> dict:
    return {"$type": "ndarray", "dtype": dtype, "shape": list(shape), "ref": {"group": group, "name": name}}


@case("ref-missing-group", "A reference to a tensor group that does not exist.", "§7.6", "REF_NOT_FOUND")
def _():
    return with_value(_ref(group="nowhere"))


@case("ref-missing-tensor", "A reference to a tensor missing from an existing group.", "§7.6", "REF_NOT_FOUND")
def _():
    return with_value(_ref(name="b"), {"arrays": st_group({"a": np.zeros(4, np.float32)})})


@case("ref-dtype-mismatch", "A reference whose dtype differs from the tensor's.", "§7.6", "REF_MISMATCH")
def _():
    return with_value(_ref(dtype="F64"), {"arrays": st_group({"a": np.zeros(4, np.float32)})})


@case("ref-shape-mismatch", "A reference whose shape differs from the tensor's.", "§7.6", "REF_MISMATCH")
def _():
    return with_value(_ref(shape=(2, 2)), {"arrays": st_group({"a": np.zeros(4, np.float32)})})
