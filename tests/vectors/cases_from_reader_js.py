"""Rule-breaking cases that only the JavaScript reader's own tests used to build, now golden vectors every reader sees.

Each is a reading the other vectors did not pin: a check's order inside one
kind of value, a member kind, a space or schedule rule of its own. Cases that
merely repeated a vector under another key name were dropped.
"""

from __future__ import annotations

import numpy as np
from cases import archive, b64, by_name, case, st_group, st_raw
from rawzip import assemble, standard_entries

from rlarchive import jsonstrict


def _v(value_json: str) -> bytes:
    """An archive whose data holds one value, written exactly as ``value_json``, under the key ``v``."""
    return archive(('{"data":{"v":' + value_json + "}}").encode())


def _i64(*x: int) -> str:
    return b64(np.array(x, "<i8").tobytes())


ZIP = [
    (
        "zip-name-with-space",
        "A member name with a space: outside the name alphabet.",
        "§2.4",
        "ZIP_NAME_INVALID",
        lambda: archive(
            {"data": {}},
            extra_members={"extensions/ACME_x/a b": b"x"},
            manifest_patch=lambda m: m.update(extensions_used=["ACME_x"]),
        ),
    ),
    (
        "member-unexpected-tensor-suffix",
        "A member under tensors/ that is not a .safetensors group.",
        "§4",
        "MEMBER_UNEXPECTED",
        lambda: archive({"data": {}}, extra_members={"tensors/a.bin": b"x"}),
    ),
    (
        "member-unexpected-empty-group-name",
        "A member tensors/.safetensors: an empty group name.",
        "§4",
        "MEMBER_UNEXPECTED",
        lambda: archive({"data": {}}, extra_members={"tensors/.safetensors": b"x"}),
    ),
    (
        "member-unexpected-bare-extension",
        "A member extensions/x with no name inside the extension's folder.",
        "§4",
        "MEMBER_UNEXPECTED",
        lambda: archive({"data": {}}, extra_members={"extensions/x": b"x"}),
    ),
    (
        "manifest-entry-extra-property",
        "A member entry of the manifest with a property besides name, size and sha256.",
        "§5.3",
        "MANIFEST_INVALID",
        lambda: archive({"data": {}}, manifest_patch=lambda m: m["members"][0].update(crc=1)),
    ),
]


def _crc(name: str):
    def build() -> bytes:
        es = standard_entries(jsonstrict.dumps({"data": {}}))
        e = by_name(es, name)
        e.crc = e.local_crc = 0x12345678  # both headers agree; the data does not
        return assemble(es)

    return build


ZIP += [
    (
        "zip-crc-wrong-manifest",
        "manifest.json whose CRC-32 (in both headers) does not match its data: checked when the manifest is read (step 6).",
        "§2.3",
        "ZIP_CRC_MISMATCH",
        _crc("manifest.json"),
    ),
    (
        "zip-crc-wrong-mimetype",
        "mimetype whose CRC-32 (in both headers) does not match its data: a deferred check.",
        "§2.3",
        "ZIP_CRC_MISMATCH",
        _crc("mimetype"),
    ),
]

VALUES = [
    (
        "value-data-checked-before-optimizers",
        "optimizers written before data with an unknown tag, data with an int tag in the safe range: data is checked first (VALUE_INVALID), whatever the text's order.",
        ["§7.1", "§11.1"],
        "VALUE_INVALID",
        lambda: archive(b'{"optimizers":{"a":{"$type":"x"}},"data":{"b":{"$type":"int","value":"1"}}}'),
    ),
    (
        "value-unknown-tag-nested",
        "An unknown tag inside a map inside a list.",
        "§7.2",
        "VALUE_UNKNOWN_TYPE",
        lambda: _v('[{"x":{"$type":"nope"}}]'),
    ),
    (
        "value-dict-duplicate-negative-zero",
        "dict keys 0.0 and -0.0 are equal.",
        "§7.5",
        "VALUE_DUPLICATE_KEY",
        lambda: _v('{"$type":"dict","entries":[[0.0,"a"],[-0.0,"b"]]}'),
    ),
    (
        "value-dict-duplicate-tuple",
        "dict keys (1, 'x') and (1.0, 'x') are equal tuples.",
        "§7.5",
        "VALUE_DUPLICATE_KEY",
        lambda: _v(
            '{"$type":"dict","entries":[[{"$type":"tuple","items":[1,"x"]},1],[{"$type":"tuple","items":[1.0,"x"]},2]]}'
        ),
    ),
    (
        "value-opaque-note-not-string",
        "An opaque value whose note is a number.",
        "§7.8",
        "VALUE_INVALID",
        lambda: _v('{"$type":"opaque","format":"pickle","base64":"gAROLg==","note":1}'),
    ),
    (
        "value-ndarray-shape-negative",
        "An ndarray shape with a negative dimension.",
        "§7.6",
        "VALUE_INVALID",
        lambda: _v('{"$type":"ndarray","dtype":"U8","shape":[-1],"base64":""}'),
    ),
    (
        "value-ndarray-shape-float",
        "An ndarray shape with a float literal 1.0.",
        "§7.6",
        "VALUE_INVALID",
        lambda: _v('{"$type":"ndarray","dtype":"U8","shape":[1.0],"base64":"AA=="}'),
    ),
    (
        "value-ndarray-element-bytes",
        "An ndarray of shape [2^52, 4] of U8: more than MAX_ELEMENT_BYTES, refused before its data.",
        ["§7.6", "§15"],
        "LIMIT_EXCEEDED",
        lambda: _v('{"$type":"ndarray","dtype":"U8","shape":[4503599627370496,4],"base64":""}'),
    ),
    (
        "value-ndarray-ref-extra-member",
        "An ndarray reference with a member besides group and name.",
        "§7.6",
        "VALUE_INVALID",
        lambda: _v('{"$type":"ndarray","dtype":"U8","shape":[0],"ref":{"group":"a","name":"b","x":1}}'),
    ),
    (
        "value-error-before-references",
        "A reference to a missing group, then an unknown tag: values are checked before references (step 7 before step 9).",
        "§11.1",
        "VALUE_UNKNOWN_TYPE",
        lambda: archive(
            b'{"data":{"a":{"$type":"ndarray","dtype":"F32","shape":[2],"ref":{"group":"nope","name":"x"}},"b":{"$type":"nope"}}}'
        ),
    ),
]

_BOX = '{"$type":"space","kind":"box","dtype":"%s","shape":[2],"low":%s,"high":{"$type":"ndarray","dtype":"F32","shape":[2],"base64":"%s"}}'
_F32_2 = '{"$type":"ndarray","dtype":"F32","shape":[2],"base64":"%s"}' % b64(np.zeros(2, "<f4").tobytes())

SPACES = [
    (
        "space-discrete-n-float",
        "A discrete space whose n is 2.5.",
        "§8",
        "VALUE_INVALID",
        lambda: _v('{"$type":"space","kind":"discrete","n":2.5,"start":0,"dtype":"I64"}'),
    ),
    (
        "space-box-complex-dtype",
        "A box of dtype C64: not an integer, float or BOOL dtype.",
        "§8",
        "SPACE_INVALID",
        lambda: _v(
            '{"$type":"space","kind":"box","dtype":"C64","shape":[2],"low":{"$type":"ndarray","dtype":"C64","shape":[2],"base64":"%s"},"high":{"$type":"ndarray","dtype":"C64","shape":[2],"base64":"%s"}}'
            % (b64(bytes(16)), b64(bytes(16)))
        ),
    ),
    (
        "space-box-low-dtype-differs",
        "A box of dtype F32 whose low is F64.",
        "§8",
        "SPACE_INVALID",
        lambda: _v(
            _BOX
            % (
                "F32",
                '{"$type":"ndarray","dtype":"F64","shape":[2],"base64":"%s"}' % b64(bytes(16)),
                b64(np.ones(2, "<f4").tobytes()),
            )
        ),
    ),
    (
        "space-multi-discrete-shapes-differ",
        "A multi_discrete space whose nvec and start differ in shape.",
        "§8",
        "SPACE_INVALID",
        lambda: _v(
            '{"$type":"space","kind":"multi_discrete","dtype":"I64","nvec":{"$type":"ndarray","dtype":"I64","shape":[2],"base64":"%s"},"start":{"$type":"ndarray","dtype":"I64","shape":[1],"base64":"%s"}}'
            % (_i64(2, 3), _i64(0))
        ),
    ),
    (
        "space-multi-discrete-nvec-referenced",
        "A multi_discrete space whose nvec is a reference: nvec and start are inline.",
        "§8",
        "SPACE_INVALID",
        lambda: archive(
            (
                '{"data":{"v":{"$type":"space","kind":"multi_discrete","dtype":"I64","nvec":{"$type":"ndarray","dtype":"I64","shape":[2],"ref":{"group":"arrays","name":"n"}},"start":{"$type":"ndarray","dtype":"I64","shape":[2],"base64":"%s"}}}}'
                % _i64(0, 0)
            ).encode(),
            {"arrays": st_group({"n": np.array([1, 1], np.int64)})},
        ),
    ),
    (
        "space-multi-binary-empty-shape",
        "A multi_binary space whose n is the empty list.",
        "§8",
        "SPACE_INVALID",
        lambda: _v('{"$type":"space","kind":"multi_binary","n":[]}'),
    ),
    (
        "space-multi-binary-zero",
        "A multi_binary space whose n is 0.",
        "§8",
        "SPACE_INVALID",
        lambda: _v('{"$type":"space","kind":"multi_binary","n":0}'),
    ),
    (
        "space-dict-member-not-a-space",
        "A dict space whose member is the number 1.",
        "§8",
        "VALUE_INVALID",
        lambda: _v('{"$type":"space","kind":"dict","spaces":[["a",1]]}'),
    ),
    (
        "space-text-charset-repeated",
        "A text space whose charset repeats a character.",
        "§8",
        "SPACE_INVALID",
        lambda: _v('{"$type":"space","kind":"text","min_length":0,"max_length":3,"charset":"aa"}'),
    ),
    (
        "space-text-lengths-reversed",
        "A text space whose min_length exceeds max_length.",
        "§8",
        "SPACE_INVALID",
        lambda: _v('{"$type":"space","kind":"text","min_length":4,"max_length":3,"charset":"a"}'),
    ),
]

SCHEDULES = [
    (
        "schedule-parameter-nan",
        "A constant schedule whose value is NaN.",
        "§9",
        "VALUE_INVALID",
        lambda: _v('{"$type":"schedule","kind":"constant","value":{"$type":"float","value":"nan"}}'),
    ),
    (
        "schedule-linear-end-fraction-above-one",
        "A linear schedule whose end_fraction is 1.5.",
        "§9",
        "SCHEDULE_INVALID",
        lambda: _v('{"$type":"schedule","kind":"linear","start":1,"end":0,"end_fraction":1.5}'),
    ),
    (
        "schedule-piecewise-empty",
        "A piecewise schedule without points.",
        "§9",
        "SCHEDULE_INVALID",
        lambda: _v('{"$type":"schedule","kind":"piecewise","points":[],"interpolation":"linear"}'),
    ),
    (
        "schedule-piecewise-point-outside",
        "A piecewise schedule with a point at progress 2, outside [0, 1].",
        "§9",
        "SCHEDULE_INVALID",
        lambda: _v('{"$type":"schedule","kind":"piecewise","points":[[0,1],[2,2]],"interpolation":"step"}'),
    ),
    (
        "schedule-piecewise-point-triple",
        "A piecewise schedule whose point has three numbers.",
        "§9",
        "VALUE_INVALID",
        lambda: _v('{"$type":"schedule","kind":"piecewise","points":[[0,1,2]],"interpolation":"step"}'),
    ),
]

SAFETENSORS = [
    (
        "st-header-not-json",
        "A safetensors header that is not JSON: the JSON rules apply, with their codes.",
        "§10.2",
        "JSON_SYNTAX",
        lambda: archive({"data": {}}, {"g": st_raw(b'{"a":', b"")}),
    ),
    (
        "st-header-bom",
        "A safetensors header that begins with a byte order mark.",
        "§10.2",
        "JSON_BOM",
        lambda: archive({"data": {}}, {"g": st_raw("\ufeff{}".encode(), b"")}),
    ),
    (
        "st-dtype-before-offsets",
        "An unknown dtype in a later tensor and reversed offsets in an earlier one: dtypes are checked before offsets.",
        "§10.2",
        "ST_DTYPE_UNKNOWN",
        lambda: archive(
            {"data": {}},
            {
                "g": st_raw(
                    b'{"a":{"dtype":"U8","shape":[0],"data_offsets":[9,0]},"b":{"dtype":"X","shape":[0],"data_offsets":[0,0]}}',
                    b"",
                )
            },
        ),
    ),
    (
        "st-empty-group-trailing-byte",
        "A tensor group without tensors whose buffer holds one byte.",
        "§10.2",
        "ST_TRAILING_BYTES",
        lambda: archive({"data": {}}, {"g": st_raw(b"{}", b"\0")}),
    ),
]

for _id, _desc, _spec, _code, _build in ZIP + VALUES + SPACES + SCHEDULES + SAFETENSORS:
    case(_id, _desc, _spec, _code)(_build)
