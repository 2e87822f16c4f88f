"""The invalid golden cases of the layout and the manifest (spec §4 and §5)."""

from __future__ import annotations

from cases import POLICY, archive, by_name, case, entries_edit, st_group
from rawzip import sha

from rlarchive import jsonstrict
from rlarchive.zipprofile import MEDIA_TYPE


@case("member-missing-data-json", "An archive without data.json.", "§4", "MEMBER_REQUIRED_MISSING")
def _():
    def edit(es):
        es.remove(by_name(es, "data.json"))

    return entries_edit(edit)


@case("member-missing-manifest", "An archive without manifest.json.", "§4", "MEMBER_REQUIRED_MISSING")
def _():
    return entries_edit(lambda es: es.pop())


@case("member-unexpected-name", "A member outside the archive layout (notes.txt).", "§4", "MEMBER_UNEXPECTED")
def _():
    return archive({"data": {}}, extra_members={"notes.txt": b"hi"})


@case("member-unexpected-nested-tensor", "A safetensors member in a sub-folder of tensors/.", "§4", "MEMBER_UNEXPECTED")
def _():
    return archive({"data": {}}, extra_members={"tensors/a/b.safetensors": st_group({})})


@case(
    "member-unexpected-dot-group",
    "A tensor member named tensors/..safetensors: its group '.' is not a name segment.",
    ["§4", "§2.4"],
    "MEMBER_UNEXPECTED",
)
def _():
    return archive({"data": {}}, extra_members={"tensors/..safetensors": st_group({})})


@case(
    "member-undeclared-extension",
    "A member under extensions/ for an extension not in extensions_used.",
    ["§4", "§5.4"],
    "MEMBER_UNEXPECTED",
)
def _():
    return archive({"data": {}}, extra_members={"extensions/ACME_x/a.bin": b"x"})


@case("manifest-not-object", "A manifest whose value is an array.", "§5.1", "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_raw=b"[]")


@case("manifest-missing-producer", "A manifest without producer.", "§5.1", "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.pop("producer") and None)


@case("manifest-wrong-format", "A manifest whose format is not 'rlarchive'.", "§5.1", "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.update(format="sb3"))


@case("manifest-bad-version-string", "A format_version that is not MAJOR.MINOR.", "§5.2", "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.update(format_version="1.0.0"))


@case("manifest-member-listed-twice", "A manifest listing data.json twice.", "§5.3", "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m["members"].append(dict(m["members"][0])))


@case("manifest-lists-mimetype", "A manifest listing the mimetype member.", "§5.3", "MANIFEST_INVALID")
def _():
    return archive(
        {"data": {}},
        manifest_patch=lambda m: m["members"].append({"name": "mimetype", "size": 29, "sha256": sha(MEDIA_TYPE)}),
    )


@case("manifest-digest-uppercase", "A digest written in upper-case hex.", "§5.3", "MANIFEST_INVALID")
def _():
    def patch(m):
        m["members"][0]["sha256"] = m["members"][0]["sha256"].upper()

    return archive({"data": {}}, manifest_patch=patch)


@case(
    "manifest-digest-trailing-newline",
    "A digest followed by a newline (JSON Schema patterns follow ECMA-262: '$' is the very end).",
    "§5.3",
    "MANIFEST_INVALID",
)
def _():
    def patch(m):
        m["members"][0]["sha256"] += "\n"

    return archive({"data": {}}, manifest_patch=patch)


@case(
    "version-from-the-future",
    "Format version 2.0 with a manifest structure 1.0 does not know: rejected by major version before anything else.",
    "§5.2",
    "VERSION_UNSUPPORTED",
)
def _():
    return archive(
        {"data": {}},
        manifest_raw=jsonstrict.dumps({"format": "rlarchive", "format_version": "2.0", "parts": {"anything": True}}),
    )


@case(
    "extension-required-not-used",
    "extensions_required names an extension missing from extensions_used.",
    "§5.4",
    "EXTENSION_UNDECLARED",
)
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.update(extensions_required=["ACME_x"]))


@case(
    "extension-data-not-used",
    "extensions holds data for an extension missing from extensions_used.",
    "§5.4",
    "EXTENSION_UNDECLARED",
)
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.update(extensions={"ACME_x": {}}))


@case(
    "extension-required-unsupported",
    "A required extension this reader does not support.",
    "§5.4",
    "EXTENSION_UNSUPPORTED",
)
def _():
    return archive(
        {"data": {}},
        manifest_patch=lambda m: m.update(extensions_used=["ACME_magic"], extensions_required=["ACME_magic"]),
    )


@case("member-unlisted", "A tensor member missing from the manifest.", "§5.3", "MEMBER_UNLISTED")
def _():
    return archive({"data": {}}, {"policy": st_group(POLICY)}, unlisted=("tensors/policy.safetensors",))


@case("member-listed-missing", "A manifest listing a tensor member the archive lacks.", "§5.3", "MEMBER_MISSING")
def _():
    return archive(
        {"data": {}},
        manifest_patch=lambda m: m["members"].append(
            {"name": "tensors/ghost.safetensors", "size": 8, "sha256": "0" * 64}
        ),
    )


@case("member-size-mismatch", "A manifest giving data.json the wrong size.", "§5.3", "MEMBER_SIZE_MISMATCH")
def _():
    def patch(m):
        m["members"][0]["size"] += 1

    return archive({"data": {}}, manifest_patch=patch)


@case("member-digest-mismatch-data", "A manifest giving data.json the wrong SHA-256.", "§5.3", "MEMBER_DIGEST_MISMATCH")
def _():
    def patch(m):
        m["members"][0]["sha256"] = "0" * 64

    return archive({"data": {}}, manifest_patch=patch)


@case(
    "member-digest-mismatch-tensor",
    "A tensor member changed after the manifest was written (CRC-32 recomputed): digest mismatch, a deferred check.",
    ["§5.3", "§11.1"],
    "MEMBER_DIGEST_MISMATCH",
)
def _():
    good = st_group(POLICY)
    bad = bytearray(good)
    bad[-1] ^= 0x01

    def patch(m):
        for e in m["members"]:
            if e["name"] == "tensors/policy.safetensors":
                e["sha256"] = sha(good)

    return archive({"data": {}}, {"policy": bytes(bad)}, manifest_patch=patch)
