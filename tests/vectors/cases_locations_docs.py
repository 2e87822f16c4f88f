"""Cases that pin the location of an issue (spec §11.2) in the manifest, values, spaces and schedules.

Each case breaks the rules of one document at a place where two readers could
name different locations, or breaks two rules at once where two readers could
report either; its description says where the issue is and which rule of
§11.2 (the value at fault, not allowed, missing, the later of two, elements,
members in table order, checking order, limits) decides it.
"""

from __future__ import annotations

from cases import archive, case, nd, with_value  # noqa: F401

F32_0 = b"\0" * 4
I64_1 = (1).to_bytes(8, "little")
I64_2 = (2).to_bytes(8, "little")


def box(**kw) -> dict:
    """A valid box of shape [1] over F32, with members replaced by ``kw``."""
    return {
        "$type": "space",
        "kind": "box",
        "dtype": "F32",
        "shape": [1],
        "low": nd("F32", [1], F32_0),
        "high": nd("F32", [1], F32_0),
        **kw,
    }


def multi_discrete(**kw) -> dict:
    """A valid multi_discrete space of shape [1] over I64, with members replaced by ``kw``."""
    return {
        "$type": "space",
        "kind": "multi_discrete",
        "dtype": "I64",
        "nvec": nd("I64", [1], I64_2),
        "start": nd("I64", [1], b"\0" * 8),
        **kw,
    }


def discrete(**kw) -> dict:
    return {"$type": "space", "kind": "discrete", "n": 2, "start": 0, "dtype": "I64", **kw}


# ------------------------------------------------------------------ values (§7)


@case(
    "loc-docs-type-unknown-at-tag",
    "A tagged value whose $type 'zzz' is unknown (it also has a member no tag defines): VALUE_UNKNOWN_TYPE at /data/x/$type, the discriminator being the value at fault (G1), not at the tagged value.",
    ["§7.2", "§11.2"],
    "VALUE_UNKNOWN_TYPE",
)
def _():
    return with_value({"$type": "zzz", "other": 1})


@case(
    "loc-docs-type-not-string-nested",
    "A tagged value nested in a list whose $type is the number 3: VALUE_UNKNOWN_TYPE at /data/x/1/$type (G1).",
    ["§7.2", "§11.2"],
    "VALUE_UNKNOWN_TYPE",
)
def _():
    return with_value([1, {"$type": 3}])


@case(
    "loc-docs-dict-entry-not-pair",
    "A dict tag whose first entry is an array of three values: VALUE_INVALID at that entry /data/x/entries/0 (a malformed pair is at the pair, G5), not at its key or at 'entries'.",
    ["§7.5", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "dict", "entries": [[1, 2, 3]]})


@case(
    "loc-docs-dict-entry-not-array",
    "A dict tag whose second entry is a number, after a valid entry: VALUE_INVALID at /data/x/entries/1 (G5).",
    ["§7.5", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "dict", "entries": [[1, "a"], 5]})


@case(
    "loc-docs-class-module-and-qualname",
    "A class reference whose module '1x' and qualname 'a..b' are both malformed: VALUE_INVALID at /data/x/module, the first member of §7.8's list (members in table order, G6), whatever the document order ('qualname' is written first).",
    ["§7.8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "class", "qualname": "a..b", "module": "1x"})


@case(
    "loc-docs-class-qualname",
    "A class reference whose module is valid and whose qualname 'A.' ends with a dot: VALUE_INVALID at /data/x/qualname (the value at fault, G1).",
    ["§7.8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "class", "module": "m", "qualname": "A."})


@case(
    "loc-docs-ndarray-shape-element",
    "An ndarray whose shape [2, -1] has a negative element: VALUE_INVALID at that element /data/x/shape/1 (G5), not at the shape.",
    ["§7.6", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "ndarray", "dtype": "F32", "shape": [2, -1], "base64": ""})


@case(
    "loc-docs-ndarray-ndim-before-elements",
    "An ndarray whose shape has 33 elements, the first of them -1: LIMIT_EXCEEDED at /data/x/shape (the array's own size before its elements, G7 and G9), not VALUE_INVALID at /shape/0.",
    ["§7.6", "§15", "§11.2"],
    "LIMIT_EXCEEDED",
)
def _():
    return with_value({"$type": "ndarray", "dtype": "F32", "shape": [-1] + [1] * 32, "base64": ""})


@case(
    "loc-docs-ndarray-dtype-before-shape",
    "An ndarray whose dtype 'float32' is not a code and whose shape is a string: VALUE_INVALID at /data/x/dtype (dtype is checked before shape, §7.6's order).",
    ["§7.6", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "ndarray", "shape": "x", "dtype": "float32", "base64": ""})


@case(
    "loc-docs-scalar-dtype-and-base64",
    "A scalar whose dtype is not a code and whose base64 is not canonical: VALUE_INVALID at /data/x/dtype (members in table order, G6).",
    ["§7.6", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "scalar", "base64": "AB=", "dtype": "X"})


@case(
    "loc-docs-opaque-format-and-note",
    "An opaque value with format 'json' and a numeric note: VALUE_INVALID at /data/x/format (format, base64, type, note: §7.8's order, G6).",
    ["§7.8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "opaque", "note": 1, "format": "json", "base64": ""})


# ------------------------------------------------------------------ spaces (§8)


@case(
    "loc-docs-space-kind-unknown",
    "A space of kind 'graph': VALUE_INVALID at /data/x/kind, the discriminator (G1), not at the space.",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "graph", "nodes": 3})


@case(
    "loc-docs-space-kind-not-string",
    "A space whose kind is the number 1: VALUE_INVALID at /data/x/kind (G1).",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": 1, "n": 2})


@case(
    "loc-docs-space-kind-missing",
    "A space without kind (and an extra member 'seed'): VALUE_INVALID at the space /data/x (a missing member is at the object, even if another member is not allowed, G3).",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "n": 2, "seed": 1})


@case(
    "loc-docs-space-missing-before-extra",
    "A discrete space without dtype but with an extra member 'seed' written first: VALUE_INVALID at the space /data/x (missing before not allowed, G3, G7).",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "discrete", "seed": 1, "n": 2, "start": 0})


@case(
    "loc-docs-discrete-n-before-dtype",
    "A discrete space with n 0 and dtype 'F32', dtype written first: SPACE_INVALID at /data/x/n (members in the order of §8's table, n, start, dtype, G6).",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "discrete", "dtype": "F32", "start": 0, "n": 0})


@case(
    "loc-docs-box-dtype-before-low",
    "A box of dtype C64 whose low has dtype F32: SPACE_INVALID at /data/x/dtype (dtype's own rule, checked first in table order, G6), not at /low.",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value(box(dtype="C64"))


@case(
    "loc-docs-box-shape-element",
    "A box whose shape [-1] has a negative element: VALUE_INVALID at /data/x/shape/0 (G5), not at the shape.",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value(box(shape=[-1]))


@case(
    "loc-docs-box-shape-ndim",
    "A box whose shape has 33 dimensions while its arrays have shape [1]: LIMIT_EXCEEDED at /data/x/shape, the value whose size breaks MAX_NDIM (G9), checked in shape's turn before low and high.",
    ["§8", "§15", "§11.2"],
    "LIMIT_EXCEEDED",
)
def _():
    return with_value(box(shape=[1] * 33))


@case(
    "loc-docs-box-low-before-high",
    "A box whose low has dtype F64 and whose high has shape [2]: SPACE_INVALID at /data/x/low (low comes before high in the table; each contradicts the earlier dtype or shape, G6).",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value(box(low=nd("F64", [1], b"\0" * 8), high=nd("F32", [2], F32_0 * 2)))


@case(
    "loc-docs-box-high-not-ndarray",
    "A box whose high is a bytes value: VALUE_INVALID at /data/x/high ('not an ndarray').",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value(box(high={"$type": "bytes", "base64": ""}))


@case(
    "loc-docs-box-low-value-before-agreement",
    "A box whose low has shape [2] but 4 bytes of data: ARRAY_SIZE_MISMATCH at /data/x/low/base64 (a member's own value is checked completely before its agreement with earlier members, G6), not SPACE_INVALID at /low.",
    ["§8", "§7.6", "§11.2"],
    "ARRAY_SIZE_MISMATCH",
)
def _():
    return with_value(box(low={"$type": "ndarray", "dtype": "F32", "shape": [2], "base64": "AAAAAA=="}))


@case(
    "loc-docs-multi-discrete-nvec-dtype",
    "A multi_discrete space of dtype I64 whose nvec has dtype I32: SPACE_INVALID at /data/x/nvec (the table lists dtype first; the later member contradicting it is at fault, G6), not at /dtype.",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value(multi_discrete(nvec=nd("I32", [1], (2).to_bytes(4, "little"))))


@case(
    "loc-docs-multi-discrete-dtype-float",
    "A multi_discrete space of dtype F32 (with I64 arrays): SPACE_INVALID at /data/x/dtype (dtype's own rule, before nvec and start).",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value(multi_discrete(dtype="F32"))


@case(
    "loc-docs-multi-discrete-nvec-before-start",
    "A multi_discrete space whose nvec holds 0 and whose start has shape [2]: SPACE_INVALID at /data/x/nvec (nvec comes before start, G6).",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value(multi_discrete(nvec=nd("I64", [1], b"\0" * 8), start=nd("I64", [2], b"\0" * 16)))


@case(
    "loc-docs-multi-discrete-start-dtype",
    "A multi_discrete space whose start has dtype I32 and shape [2]: SPACE_INVALID at /data/x/start (the later member, G6).",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value(multi_discrete(start=nd("I32", [2], b"\0" * 8)))


@case(
    "loc-docs-multi-binary-element-zero",
    "A multi_binary space with n [2, 0]: SPACE_INVALID at the element /data/x/n/1 (G5).",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "multi_binary", "n": [2, 0]})


@case(
    "loc-docs-multi-binary-element-type",
    "A multi_binary space with n [0, 'x']: SPACE_INVALID at /data/x/n/0 (elements in order, each checked completely, G5, G7), not VALUE_INVALID for the later element.",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "multi_binary", "n": [0, "x"]})


@case(
    "loc-docs-multi-binary-element-string",
    "A multi_binary space with n [2, 'x']: VALUE_INVALID at /data/x/n/1 (G5).",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "multi_binary", "n": [2, "x"]})


@case(
    "loc-docs-dict-space-duplicate-key",
    "A Dict space repeating the key 'a': SPACE_INVALID at the later key /data/x/spaces/1/0 (G4), not at 'spaces'.",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "dict", "spaces": [["a", discrete()], ["a", discrete()]]})


@case(
    "loc-docs-dict-space-key-before-value",
    "A Dict space repeating the key 'a' whose second space is also invalid (n 0): SPACE_INVALID at the key /data/x/spaces/1/0 (an entry's key before its value).",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "dict", "spaces": [["a", discrete()], ["a", discrete(n=0)]]})


@case(
    "loc-docs-dict-space-pair",
    "A Dict space whose first entry is the string 'a': VALUE_INVALID at that entry /data/x/spaces/0 (a malformed pair is at the pair, G5).",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "dict", "spaces": ["a"]})


@case(
    "loc-docs-dict-space-key-not-string",
    "A Dict space whose key is the number 1: VALUE_INVALID at the key /data/x/spaces/0/0.",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "dict", "spaces": [[1, discrete()]]})


@case(
    "loc-docs-tuple-space-element",
    "A Tuple space whose second element is the number 3: VALUE_INVALID at /data/x/spaces/1 ('not a space').",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "tuple", "spaces": [discrete(), 3]})


@case(
    "loc-docs-tuple-space-unknown-tag",
    "A Tuple space whose element has an unknown tag: VALUE_INVALID at /data/x/spaces/0 ('not a space', checked as an element of spaces first), not VALUE_UNKNOWN_TYPE.",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "tuple", "spaces": [{"$type": "zzz"}]})


@case(
    "loc-docs-tuple-space-nested-kind",
    "A Tuple space whose element is a space of unknown kind: VALUE_INVALID at that space's kind /data/x/spaces/0/kind (a nested space is checked completely, G1).",
    ["§8", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "tuple", "spaces": [{"$type": "space", "kind": "zzz"}]})


@case(
    "loc-docs-text-lengths-reversed",
    "A text space with min_length 5 and max_length 2: SPACE_INVALID at /data/x/max_length, the member listed later in §8's table (G6).",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "text", "min_length": 5, "max_length": 2, "charset": "ab"})


@case(
    "loc-docs-text-min-negative",
    "A text space with min_length -1 and max_length -2: SPACE_INVALID at /data/x/min_length (its own rule, >= 0, before the later member's agreement, G6).",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "text", "min_length": -1, "max_length": -2, "charset": "ab"})


@case(
    "loc-docs-text-max-before-charset",
    "A text space with max_length below min_length and a repeated charset: SPACE_INVALID at /data/x/max_length (before charset, G6).",
    ["§8", "§11.2"],
    "SPACE_INVALID",
)
def _():
    return with_value({"$type": "space", "kind": "text", "charset": "aa", "min_length": 3, "max_length": 1})


# ------------------------------------------------------------------ schedules (§9)


@case(
    "loc-docs-schedule-kind-unknown",
    "A schedule of kind 'cosine': VALUE_INVALID at /data/x/kind (G1).",
    ["§9", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "schedule", "kind": "cosine", "value": 1.0})


@case(
    "loc-docs-schedule-kind-missing",
    "A schedule without kind: VALUE_INVALID at the schedule /data/x (G3).",
    ["§9", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "schedule", "value": 1.0})


@case(
    "loc-docs-linear-start-before-end",
    "A linear schedule whose start and end are both strings, end written first: VALUE_INVALID at /data/x/start (members in the order of §9's table, start, end, end_fraction, G6).",
    ["§9", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "schedule", "kind": "linear", "end": "b", "start": "a", "end_fraction": 1.0})


@case(
    "loc-docs-piecewise-point-outside",
    "A piecewise schedule whose second point has e = 1.5: SCHEDULE_INVALID at that coordinate /data/x/points/1/0 (G5).",
    ["§9", "§11.2"],
    "SCHEDULE_INVALID",
)
def _():
    return with_value(
        {"$type": "schedule", "kind": "piecewise", "points": [[0.0, 1.0], [1.5, 2.0]], "interpolation": "linear"}
    )


@case(
    "loc-docs-piecewise-not-after",
    "A piecewise schedule whose points have e 0.5, 0.5: SCHEDULE_INVALID at the later coordinate /data/x/points/1/0 (G5).",
    ["§9", "§11.2"],
    "SCHEDULE_INVALID",
)
def _():
    return with_value(
        {"$type": "schedule", "kind": "piecewise", "points": [[0.5, 1.0], [0.5, 2.0]], "interpolation": "step"}
    )


@case(
    "loc-docs-piecewise-point-malformed",
    "A piecewise schedule whose second point is [0.5, 'x']: VALUE_INVALID at that point /data/x/points/1 (a point that is not a pair of numbers is at the point, G5).",
    ["§9", "§11.2"],
    "VALUE_INVALID",
)
def _():
    return with_value(
        {"$type": "schedule", "kind": "piecewise", "points": [[0.0, 1.0], [0.5, "x"]], "interpolation": "step"}
    )


@case(
    "loc-docs-piecewise-points-before-interpolation",
    "A piecewise schedule with no points and the interpolation 'cubic': SCHEDULE_INVALID at /data/x/points (points, completely, before interpolation: table order, G6).",
    ["§9", "§11.2"],
    "SCHEDULE_INVALID",
)
def _():
    return with_value({"$type": "schedule", "kind": "piecewise", "interpolation": "cubic", "points": []})


@case(
    "loc-docs-piecewise-order-before-later-point",
    "A piecewise schedule whose points are [0.5, 1], [0.2, 1], [2, 'x']: SCHEDULE_INVALID at /data/x/points/1/0 (each point checked completely in turn, G7), not at the malformed third point.",
    ["§9", "§11.2"],
    "SCHEDULE_INVALID",
)
def _():
    return with_value(
        {
            "$type": "schedule",
            "kind": "piecewise",
            "points": [[0.5, 1.0], [0.2, 1.0], [2, "x"]],
            "interpolation": "step",
        }
    )


# ------------------------------------------------------------------ manifest (§5)


@case(
    "loc-docs-manifest-format-missing",
    "A manifest without 'format': MANIFEST_INVALID at the manifest '' (a missing member is at the object, G3), not at /format.",
    ["§5.2", "§11.2"],
    "MANIFEST_INVALID",
)
def _():
    return archive(b'{"data":{}}', manifest_patch=lambda m: {k: v for k, v in m.items() if k != "format"})


@case(
    "loc-docs-manifest-producer-table-order",
    "A manifest whose producer is {version: 1, name: ''}: MANIFEST_INVALID at /producer/name (members in the order of §5.1's table, name then version, G6), not at /producer/version written first.",
    ["§5.1", "§11.2"],
    "MANIFEST_INVALID",
)
def _():
    return archive(b'{"data":{}}', manifest_patch=lambda m: {**m, "producer": {"version": 1, "name": ""}})


@case(
    "loc-docs-manifest-producer-extra-first",
    "A manifest whose producer has an empty name and, written after it, an extra member 'url': MANIFEST_INVALID at /producer/url (a member not allowed before the table's members, G7).",
    ["§5.1", "§11.2"],
    "MANIFEST_INVALID",
)
def _():
    return archive(b'{"data":{}}', manifest_patch=lambda m: {**m, "producer": {"name": "", "version": "1", "url": "x"}})


@case(
    "loc-docs-manifest-table-order",
    "A manifest that writes a bad 'metadata' (a number value) before a bad 'producer' (no version): MANIFEST_INVALID at /producer (the manifest's members in §5.1's table order, G6), not at /metadata/n.",
    ["§5.1", "§11.2"],
    "MANIFEST_INVALID",
)
def _():
    def patch(m):
        out = {"metadata": {"n": 5}}
        out.update(m)
        out["producer"] = {"name": "x"}
        return out

    return archive(b'{"data":{}}', manifest_patch=patch)


@case(
    "loc-docs-manifest-entry-table-order",
    "A member entry written {sha256, size, name} whose size is -1 and sha256 upper-case: MANIFEST_INVALID at /members/0/size (name, size, sha256: §5.3's order, G6).",
    ["§5.3", "§11.2"],
    "MANIFEST_INVALID",
)
def _():
    def patch(m):
        e = m["members"][0]
        m["members"][0] = {"sha256": e["sha256"].upper(), "size": -1, "name": e["name"]}

    return archive(b'{"data":{}}', manifest_patch=patch)


@case(
    "loc-docs-manifest-duplicate-before-later-entry",
    "A manifest listing data.json twice, then an entry with size -1: MANIFEST_INVALID at /members/1/name, the later of the two names (G4), met before the third entry (entries in document order, G7).",
    ["§5.3", "§11.2"],
    "MANIFEST_INVALID",
)
def _():
    def patch(m):
        m["members"] += [dict(m["members"][0]), {"name": "tensors/x.safetensors", "size": -1, "sha256": "0" * 64}]

    return archive(b'{"data":{}}', manifest_patch=patch)


@case(
    "loc-docs-manifest-duplicate-name-before-digest",
    "A manifest listing data.json twice, the second time with an upper-case digest: MANIFEST_INVALID at /members/1/name (an entry's name and its distinctness before its size and digest, G6).",
    ["§5.3", "§11.2"],
    "MANIFEST_INVALID",
)
def _():
    def patch(m):
        e = dict(m["members"][0])
        m["members"].append({**e, "sha256": e["sha256"].upper()})

    return archive(b'{"data":{}}', manifest_patch=patch)


@case(
    "loc-docs-manifest-extension-key",
    "A manifest whose 'extensions' has the key 'bad-name': MANIFEST_INVALID at /extensions/bad-name (the name at fault, G1), not at /extensions.",
    ["§5.4", "§11.2"],
    "MANIFEST_INVALID",
)
def _():
    return archive(b'{"data":{}}', manifest_patch=lambda m: {**m, "extensions": {"bad-name": 1}})


@case(
    "loc-docs-manifest-extension-used-twice-later",
    "A manifest whose extensions_used is ['A', 'A', 'b-c']: MANIFEST_INVALID at /extensions_used/1 (the later of two equal names, G4, before the malformed third).",
    ["§5.4", "§11.2"],
    "MANIFEST_INVALID",
)
def _():
    return archive(b'{"data":{}}', manifest_patch=lambda m: {**m, "extensions_used": ["A", "A", "b-c"]})


@case(
    "loc-docs-manifest-too-many-entries",
    "A manifest listing 4,097 member entries (data.json and 4,096 absent ones): LIMIT_EXCEEDED at /members/4096, the first entry beyond MAX_MEMBERS (G8), found with the manifest's structure, before MEMBER_MISSING.",
    ["§5.3", "§15", "§11.2"],
    "LIMIT_EXCEEDED",
    gzip=True,
)
def _():
    def patch(m):
        m["members"] += [{"name": f"z/{i:04d}", "size": 0, "sha256": "0" * 64} for i in range(4096)]

    return archive(b'{"data":{}}', manifest_patch=patch)


@case(
    "loc-docs-manifest-too-many-entries-after-error",
    "A manifest listing 4,097 entries whose fourth has size -1: MANIFEST_INVALID at /members/3/size (entries in document order; the limit is at the 4,097th, G7, G8).",
    ["§5.3", "§15", "§11.2"],
    "MANIFEST_INVALID",
    gzip=True,
)
def _():
    def patch(m):
        m["members"] += [{"name": f"z/{i:04d}", "size": -1 if i == 2 else 0, "sha256": "0" * 64} for i in range(4096)]

    return archive(b'{"data":{}}', manifest_patch=patch)


# ------------------------------------------------------------------ the check each case breaks, and where (spec/checks.json)

# id: (check, pointer, principle of §11.2 that puts it there); the member is data.json unless the pointer's check is a manifest one.
_SITES = {
    "loc-docs-type-unknown-at-tag": ("value-unknown-type", "/data/x/$type", "value"),
    "loc-docs-type-not-string-nested": ("value-unknown-type", "/data/x/1/$type", "value"),
    "loc-docs-dict-entry-not-pair": ("value-invalid", "/data/x/entries/0", "element"),
    "loc-docs-dict-entry-not-array": ("value-invalid", "/data/x/entries/1", "element"),
    "loc-docs-class-module-and-qualname": ("value-invalid", "/data/x/module", "value"),
    "loc-docs-class-qualname": ("value-invalid", "/data/x/qualname", "value"),
    "loc-docs-ndarray-shape-element": ("value-invalid", "/data/x/shape/1", "element"),
    "loc-docs-ndarray-ndim-before-elements": ("value-limit", "/data/x/shape", "limit"),
    "loc-docs-ndarray-dtype-before-shape": ("value-invalid", "/data/x/dtype", "value"),
    "loc-docs-scalar-dtype-and-base64": ("value-invalid", "/data/x/dtype", "value"),
    "loc-docs-opaque-format-and-note": ("value-invalid", "/data/x/format", "value"),
    "loc-docs-space-kind-unknown": ("value-invalid", "/data/x/kind", "value"),
    "loc-docs-space-kind-not-string": ("value-invalid", "/data/x/kind", "value"),
    "loc-docs-space-kind-missing": ("value-invalid", "/data/x", "missing"),
    "loc-docs-space-missing-before-extra": ("value-invalid", "/data/x", "missing"),
    "loc-docs-discrete-n-before-dtype": ("space-invalid", "/data/x/n", "value"),
    "loc-docs-box-dtype-before-low": ("space-invalid", "/data/x/dtype", "value"),
    "loc-docs-box-shape-element": ("value-invalid", "/data/x/shape/0", "element"),
    "loc-docs-box-shape-ndim": ("value-limit", "/data/x/shape", "limit"),
    "loc-docs-box-low-before-high": ("space-invalid", "/data/x/low", "contradiction"),
    "loc-docs-box-high-not-ndarray": ("value-invalid", "/data/x/high", "value"),
    "loc-docs-box-low-value-before-agreement": ("value-array-size", "/data/x/low/base64", "value"),
    "loc-docs-multi-discrete-nvec-dtype": ("space-invalid", "/data/x/nvec", "contradiction"),
    "loc-docs-multi-discrete-dtype-float": ("space-invalid", "/data/x/dtype", "value"),
    "loc-docs-multi-discrete-nvec-before-start": ("space-invalid", "/data/x/nvec", "value"),
    "loc-docs-multi-discrete-start-dtype": ("space-invalid", "/data/x/start", "contradiction"),
    "loc-docs-multi-binary-element-zero": ("space-invalid", "/data/x/n/1", "element"),
    "loc-docs-multi-binary-element-type": ("space-invalid", "/data/x/n/0", "element"),
    "loc-docs-multi-binary-element-string": ("value-invalid", "/data/x/n/1", "element"),
    "loc-docs-dict-space-duplicate-key": ("space-invalid", "/data/x/spaces/1/0", "later"),
    "loc-docs-dict-space-key-before-value": ("space-invalid", "/data/x/spaces/1/0", "later"),
    "loc-docs-dict-space-pair": ("value-invalid", "/data/x/spaces/0", "element"),
    "loc-docs-dict-space-key-not-string": ("value-invalid", "/data/x/spaces/0/0", "value"),
    "loc-docs-tuple-space-element": ("value-invalid", "/data/x/spaces/1", "element"),
    "loc-docs-tuple-space-unknown-tag": ("value-invalid", "/data/x/spaces/0", "element"),
    "loc-docs-tuple-space-nested-kind": ("value-invalid", "/data/x/spaces/0/kind", "value"),
    "loc-docs-text-lengths-reversed": ("space-invalid", "/data/x/max_length", "contradiction"),
    "loc-docs-text-min-negative": ("space-invalid", "/data/x/min_length", "value"),
    "loc-docs-text-max-before-charset": ("space-invalid", "/data/x/max_length", "contradiction"),
    "loc-docs-schedule-kind-unknown": ("value-invalid", "/data/x/kind", "value"),
    "loc-docs-schedule-kind-missing": ("value-invalid", "/data/x", "missing"),
    "loc-docs-linear-start-before-end": ("value-invalid", "/data/x/start", "value"),
    "loc-docs-piecewise-point-outside": ("schedule-invalid", "/data/x/points/1/0", "element"),
    "loc-docs-piecewise-not-after": ("schedule-invalid", "/data/x/points/1/0", "element"),
    "loc-docs-piecewise-point-malformed": ("value-invalid", "/data/x/points/1", "element"),
    "loc-docs-piecewise-points-before-interpolation": ("schedule-invalid", "/data/x/points", "value"),
    "loc-docs-piecewise-order-before-later-point": ("schedule-invalid", "/data/x/points/1/0", "element"),
    "loc-docs-manifest-format-missing": ("manifest-schema", "", "missing"),
    "loc-docs-manifest-producer-table-order": ("manifest-schema", "/producer/name", "value"),
    "loc-docs-manifest-producer-extra-first": ("manifest-schema", "/producer/url", "not-allowed"),
    "loc-docs-manifest-table-order": ("manifest-schema", "/producer", "missing"),
    "loc-docs-manifest-entry-table-order": ("manifest-schema", "/members/0/size", "value"),
    "loc-docs-manifest-duplicate-before-later-entry": ("manifest-schema", "/members/1/name", "later"),
    "loc-docs-manifest-duplicate-name-before-digest": ("manifest-schema", "/members/1/name", "later"),
    "loc-docs-manifest-extension-key": ("manifest-schema", "/extensions/bad-name", "value"),
    "loc-docs-manifest-extension-used-twice-later": ("manifest-schema", "/extensions_used/1", "later"),
    "loc-docs-manifest-too-many-entries": ("manifest-member-limit", "/members/4096", "limit"),
    "loc-docs-manifest-too-many-entries-after-error": ("manifest-schema", "/members/3/size", "value"),
}


def _name_sites() -> None:
    """Give each case above its check and site (tests/vectors/sites.py), when that table is present."""
    try:
        from sites import doc
    except ImportError:  # the table of checks is not there: the cases still register
        return
    from cases import CASES

    for c in CASES:
        if c.id in _SITES and not getattr(c, "sites", None):
            check, pointer, by = _SITES[c.id]
            c.sites = [(check, doc(pointer, by, "manifest.json" if check.startswith("manifest-") else "data.json"))]


_name_sites()
