"""Cases that decide readings the specification once left open: each tells two plausible readers apart.

Every case here pins a sentence of the specification where a reader written
from the text alone could have chosen otherwise (a check's place in the
order, which of two codes applies, whether a form is allowed). The
description names the other reading, which the case refuses.
"""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np
from cases import archive, case, nd, st_group, st_raw, with_value
from rawzip import U32, Layout, assemble, standard_entries
from sites import doc, in_member, record, site

from rlarchive import jsonstrict


def _last_local_field(field_offset: int, into_cd: int = 5) -> bytes:
    """The manifest's local header with its name (26) or extra (28) length grown to run ``into_cd`` bytes into the central directory."""
    b = bytearray(archive({"data": {}}))
    cd = b.find(b"PK\x01\x02")
    last = b.rfind(b"PK\x03\x04", 0, cd)
    n, e = struct.unpack_from("<HH", b, last + 26)
    grow = cd - (last + 30 + n + e) + into_cd
    struct.pack_into("<H", b, last + field_offset, (n if field_offset == 26 else e) + grow)
    return bytes(b)


@case(
    "decide-local-name-into-directory",
    "A local header whose name runs into the central directory (not past the end of the file) is read as it stands: its name disagrees with the central record (ZIP_HEADER_MISMATCH), not ZIP_TRUNCATED.",
    ["§2.1", "§2.3"],
    "ZIP_HEADER_MISMATCH",
)
def _():
    return _last_local_field(26)


@case(
    "decide-local-extra-into-directory",
    "A local header whose extra field runs into the central directory is read as it stands: its records are malformed (ZIP_EXTRA_FIELD), not ZIP_TRUNCATED.",
    ["§2.1", "§2.5"],
    "ZIP_EXTRA_FIELD",
)
def _():
    return _last_local_field(28)


@case(
    "decide-mimetype-central-zip64",
    "The central record of mimetype may carry a ZIP64 extra record (sizes 0xFFFFFFFF in the record, 29 in the extra); only its local header must have an empty extra field.",
    ["§3", "§2.6"],
)
def _():
    es = standard_entries(jsonstrict.dumps({"data": {}}))
    es[0].central_usize = es[0].central_csize = U32
    es[0].extra_central = struct.pack("<HHQQ", 1, 16, 29, 29)
    es[0].version = 45
    return assemble(es)


@case(
    "decide-mimetype-local-extra",
    "A non-empty local extra field on mimetype breaks the identification bytes: ARCHIVE_NOT_RLARCHIVE, not ZIP_EXTRA_FIELD.",
    ["§3"],
    "ARCHIVE_NOT_RLARCHIVE",
)
def _():
    es = standard_entries(jsonstrict.dumps({"data": {}}))
    es[0].extra_local = struct.pack("<HH", 0xCAFE, 0)
    return assemble(es)


@case(
    "decide-extension-name-invalid-at-step-6",
    "A member extensions/bad-name/... (not an extension name) and a manifest that is not JSON: the manifest's JSON error comes first, because the member is judged at step 6, not step 5.",
    ["§4", "§11.1"],
    "JSON_SYNTAX",
)
def _():
    return archive({"data": {}}, extra_members={"extensions/bad-name/x.bin": b"x"}, manifest_raw=b'{"format": ')


@case(
    "decide-extension-name-invalid",
    "A member extensions/bad-name/... whose extension segment is not an extension name: MEMBER_UNEXPECTED at step 6.",
    ["§4", "§5.4"],
    "MEMBER_UNEXPECTED",
)
def _():
    return archive({"data": {}}, extra_members={"extensions/bad-name/x.bin": b"x"})


@case(
    "decide-manifest-size-integral-float",
    "A member size written 29.0-style (an integral number with a fraction part) is that integer, as JSON Schema 2020-12 counts integers.",
    ["§5.3"],
)
def _():
    def patch(m):
        for e in m["members"]:
            if e["name"] == "data.json":
                e["size"] = float(e["size"])

    return archive({"data": {"gamma": 0.99}}, manifest_patch=patch)


@case(
    "decide-member-entries-one-by-one",
    "A listed member of the wrong size before an unlisted member in ZIP order: both checks run member by member, so MEMBER_SIZE_MISMATCH, not MEMBER_UNLISTED.",
    ["§5.3", "§11.1"],
    "MEMBER_SIZE_MISMATCH",
)
def _():
    es = standard_entries(
        jsonstrict.dumps({"data": {}}),
        extra_members={"extensions/ACME_x/a.bin": b"aaaa", "extensions/ACME_x/b.bin": b"bbbb"},
        manifest_patch=lambda m: m.update(extensions_used=["ACME_x"]),
        unlisted=("extensions/ACME_x/b.bin",),
    )
    man = json.loads(es[-1].data)
    for e in man["members"]:
        if e["name"] == "extensions/ACME_x/a.bin":
            e["size"] = 5
    es[-1].data = jsonstrict.dumps(man)
    return assemble(es)


@case(
    "decide-int-leading-zero-and-too-long",
    "An int string with a leading zero and more than MAX_INT_DIGITS digits: its form is checked first (VALUE_INVALID), not the limit.",
    ["§7.3", "§15"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "int", "value": "0" + "1" * 4100})


@case(
    "decide-key-int-equals-float",
    "dict keys 100000000000000000000 (int) and 1e20 (float) are equal by exact value: VALUE_DUPLICATE_KEY.",
    ["§7.5"],
    "VALUE_DUPLICATE_KEY",
)
def _():
    return with_value(
        {"$type": "dict", "entries": [[{"$type": "int", "value": "100000000000000000000"}, 1], [1e20, 2]]}
    )


@case(
    "decide-key-int-differs-from-float",
    "dict keys 100000000000000000001 (int) and 1e20 (float) differ by exact value, though equal once rounded to binary64.",
    ["§7.5"],
    warnings=[],
)
def _():
    return with_value(
        {"$type": "dict", "entries": [[{"$type": "int", "value": "100000000000000000001"}, 1], [1e20, 2]]}
    )


@case(
    "decide-empty-dict-tag",
    "An empty dict-tagged map: plain JSON ({}) carries it, so the tag is VALUE_INVALID.",
    ["§7.5"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "dict", "entries": []})


@case(
    "decide-discrete-dtype-not-a-code",
    "A discrete space whose dtype is not a dtype code at all ('float32'): VALUE_INVALID (a member type), not SPACE_INVALID.",
    ["§8"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "discrete", "n": 3, "start": 0, "dtype": "float32"})


@case(
    "decide-discrete-dtype-float-code",
    "A discrete space whose dtype is a float code (F32): SPACE_INVALID.",
    ["§8"],
    "SPACE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "discrete", "n": 3, "start": 0, "dtype": "F32"})


@case(
    "decide-box-shape-33-dimensions",
    "A box whose shape and arrays have 33 dimensions: LIMIT_EXCEEDED, not SPACE_INVALID.",
    ["§8", "§15"],
    "LIMIT_EXCEEDED",
)
def _():
    one = [1] * 33
    return with_value(
        {
            "$type": "space",
            "kind": "box",
            "dtype": "F32",
            "shape": one,
            "low": nd("F32", one, b"\0" * 4),
            "high": nd("F32", one, b"\0" * 4),
        }
    )


@case("decide-box-fp8", "Boxes of the FP8 dtypes F8_E4M3 and F8_E8M0 are float boxes, allowed.", ["§8", "§10.1"])
def _():
    return archive(
        {
            "data": {
                "e4m3": {
                    "$type": "space",
                    "kind": "box",
                    "dtype": "F8_E4M3",
                    "shape": [2],
                    "low": nd("F8_E4M3", [2], b"\0\0"),
                    "high": nd("F8_E4M3", [2], b"\x38\x38"),
                },
                "e8m0": {
                    "$type": "space",
                    "kind": "box",
                    "dtype": "F8_E8M0",
                    "shape": [2],
                    "low": nd("F8_E8M0", [2], b"\0\0"),
                    "high": nd("F8_E8M0", [2], b"\x7f\x7f"),
                },
            }
        }
    )


@case(
    "decide-box-low-bytes",
    "A box low holding a bytes value: VALUE_INVALID as 'not an ndarray'.",
    ["§8"],
    "VALUE_INVALID",
)
def _():
    return with_value(
        {
            "$type": "space",
            "kind": "box",
            "dtype": "F32",
            "shape": [1],
            "low": {"$type": "bytes", "base64": ""},
            "high": nd("F32", [1], b"\0" * 4),
        }
    )


@case(
    "decide-box-low-unknown-tag",
    "A box low holding an unknown tag: VALUE_INVALID ('not an ndarray', checked as a space member first), not VALUE_UNKNOWN_TYPE.",
    ["§8"],
    "VALUE_INVALID",
)
def _():
    return with_value(
        {
            "$type": "space",
            "kind": "box",
            "dtype": "F32",
            "shape": [1],
            "low": {"$type": "zzz"},
            "high": nd("F32", [1], b"\0" * 4),
        }
    )


@case(
    "decide-tensor-huge-shape",
    "A tensor of shape [2^40, 2^40] over 4 bytes: ST_SHAPE_MISMATCH (the product is computed exactly), not LIMIT_EXCEEDED.",
    ["§10.2", "§15"],
    "ST_SHAPE_MISMATCH",
)
def _():
    return archive(
        {"data": {}}, {"g": st_raw({"t": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 4]}}, b"\0" * 4)}
    )


@case(
    "decide-safetensors-shape-float-literal",
    "A safetensors shape written [2.0]: not an integer literal, ST_HEADER_INVALID.",
    ["§10.2"],
    "ST_HEADER_INVALID",
)
def _():
    return archive({"data": {}}, {"g": st_raw(b'{"t":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}', b"\0" * 8)})


@case(
    "decide-safetensors-offset-float-literal",
    "A safetensors data_offsets written [0, 8.0]: not integer literals, ST_HEADER_INVALID.",
    ["§10.2"],
    "ST_HEADER_INVALID",
)
def _():
    return archive({"data": {}}, {"g": st_raw(b'{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8.0]}}', b"\0" * 8)})


@case(
    "decide-references-data-first",
    "optimizers written before data in the text, a missing tensor referenced from optimizers and a mismatched one from data: references are checked data first (REF_MISMATCH), not in text order (REF_NOT_FOUND).",
    ["§11.1", "§7.6"],
    "REF_MISMATCH",
)
def _():
    g = st_group({"t": np.zeros(2, np.float32)})
    doc = (
        b'{"optimizers":{"o":{"x":{"$type":"ndarray","dtype":"F32","shape":[2],"ref":{"group":"g","name":"missing"}}}},'
        b'"data":{"y":{"$type":"ndarray","dtype":"F32","shape":[3],"ref":{"group":"g","name":"t"}}}}'
    )
    return archive(doc, {"g": g})


@case(
    "decide-piecewise-interpolation",
    "A piecewise schedule with interpolation 'cubic': VALUE_INVALID (a member's value), not SCHEDULE_INVALID.",
    ["§9"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "schedule", "kind": "piecewise", "points": [[0.0, 1.0]], "interpolation": "cubic"})


@case(
    "decide-second-end-record-after-local-headers",
    "Two end records and a bad local header signature: the end-record gap is checked after every local header, so ZIP_LOCAL_HEADER_INVALID, not ZIP_MULTIPLE_EOCD.",
    ["§2.1", "§11.1"],
    "ZIP_LOCAL_HEADER_INVALID",
)
def _():
    es = standard_entries(jsonstrict.dumps({"data": {}}))
    es[-1].local_sig = b"PK\x03\x05"
    b = assemble(es)
    i = b.rfind(b"PK\x05\x06")
    return b + b[i:]


# ----------------------------------------------------------------------- the manifest schema, constraint by constraint (§5.1)


def _producer(**over):
    return lambda m: m.update(producer=dict(m["producer"], **over))


@case("manifest-producer-longest", "A producer name and version of 256 characters each: the longest allowed.", ["§5.1"])
def _():
    return archive({"data": {}}, manifest_patch=_producer(name="n" * 256, version="v" * 256))


@case("manifest-producer-name-empty", "An empty producer name.", ["§5.1"], "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=_producer(name=""))


@case("manifest-producer-name-too-long", "A producer name of 257 characters.", ["§5.1"], "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=_producer(name="n" * 257))


@case("manifest-producer-version-too-long", "A producer version of 257 characters.", ["§5.1"], "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=_producer(version="v" * 257))


@case(
    "manifest-producer-extra-property",
    "A producer with a property besides name and version.",
    ["§5.1"],
    "MANIFEST_INVALID",
)
def _():
    return archive({"data": {}}, manifest_patch=_producer(url="https://example.org"))


@case("manifest-member-sha256-upper-case", "A member digest in upper-case hexadecimal.", ["§5.3"], "MANIFEST_INVALID")
def _():
    def patch(m):
        m["members"][0]["sha256"] = m["members"][0]["sha256"].upper()

    return archive({"data": {}}, manifest_patch=patch)


@case("manifest-member-size-negative", "A member size below zero.", ["§5.3"], "MANIFEST_INVALID")
def _():
    def patch(m):
        m["members"][0]["size"] = -1

    return archive({"data": {}}, manifest_patch=patch)


@case("manifest-metadata-not-string", "A metadata value that is not a string.", ["§5.1"], "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.update(metadata={"steps": 5}))


@case(
    "manifest-extension-name-invalid",
    "An extensions_used entry that is not an extension name.",
    ["§5.4"],
    "MANIFEST_INVALID",
)
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.update(extensions_used=["bad-name"]))


@case("manifest-extensions-used-twice", "An extension listed twice in extensions_used.", ["§5.1"], "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.update(extensions_used=["ACME_x", "ACME_x"]))


# -- the corners an implementer met: each decided in the specification -----------------------------


@case(
    "decide-metadata-versions-name-breaks-pattern",
    "A metadata key versions.stable-baselines3 (its NAME holds '-', outside a-z, 0-9, _) with a well-formed version: the versions. prefix is the defined key's, so the key is malformed (the warning METADATA_INVALID), not a free key read without a warning (metadata.md §1).",
    ["§5.1"],
    warnings=["METADATA_INVALID"],
    check="metadata-value",
    at=doc("/metadata/versions.stable-baselines3", "value", member="manifest.json"),
)
def _():
    def patch(m):
        m["metadata"] = {"versions.stable-baselines3": "2.0.0", "versions.numpy": "2.1.0"}

    return archive({"data": {"gamma": 0.99}}, manifest_patch=patch)


@case(
    "decide-data-unknown-property-not-with-data-invalid",
    "A data document without data and with a property 1.0 does not define: DATA_INVALID alone; the unknown-property check follows the structure check, which failed (§7.1, §14), so no DATA_UNKNOWN_PROPERTY.",
    ["§7.1", "§11.1"],
    "DATA_INVALID",
    check="data-structure",
    at=doc("", "top"),
)
def _():
    return archive(jsonstrict.dumps({"parameters": {"gamma": 0.99}, "comment": "from a later minor version"}))


@case(
    "decide-data-unknown-property-with-value-error",
    "A data document with a property 1.0 does not define and a value of unknown type: the structure passed, so the validator reports VALUE_UNKNOWN_TYPE and then the warning DATA_UNKNOWN_PROPERTY (§7.1, §14), not the error alone.",
    ["§7.1", "§11.1"],
    "VALUE_UNKNOWN_TYPE",
    check=["value-unknown-type", "data-unknown-property"],
    at=[doc("/data/x/$type", "value"), doc("/comment", "not-allowed")],
)
def _():
    return archive({"data": {"x": {"$type": "zzz"}}, "comment": "from a later minor version"})


@case(
    "decide-bool-value-not-after-crc-mismatch",
    "A BOOL tensor holding the byte 2 in a member whose CRC-32 does not match: ZIP_CRC_MISMATCH alone; a member whose deferred checks failed has no ST_BOOL_VALUE warning (its bytes are not the ones written, §14).",
    ["§10.1", "§14"],
    "ZIP_CRC_MISMATCH",
    check="member-crc",
    at=site(member="tensors/flags.safetensors", offset=in_member("data", "tensors/flags.safetensors")),
)
def _():
    member = st_raw({"m": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}}, bytes([0, 1, 2]))

    def edit(es):
        e = next(x for x in es if x.name == "tensors/flags.safetensors")
        e.crc = zlib.crc32(e.data) ^ 1

    es = standard_entries(jsonstrict.dumps({"data": {}}), {"flags": member})
    edit(es)
    return assemble(es)


@case(
    "decide-directory-size-before-bounds",
    "An end record giving a central directory size of 10^6 bytes for 3 entries, which also runs past the end of the file: the size is checked first (ZIP_CD_INVALID at the EOCD, §2.2's last paragraph, §11.1 step 2), not ZIP_TRUNCATED.",
    ["§2.2", "§11.1"],
    "ZIP_CD_INVALID",
    check="directory-size",
    at=site(offset=record("eocd")),
)
def _():
    return assemble(standard_entries(jsonstrict.dumps({"data": {}})), Layout(eocd_cd_size=10**6))
