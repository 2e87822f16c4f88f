"""The golden cases found by the property tests and the fuzzing campaign (tests/fuzz)."""

from __future__ import annotations

from cases import _data_raw, archive, by_name, case, entries_edit, with_value
from rawzip import Layout


@case(
    "data-property-named-type",
    "data and optimizers are maps of names to values, not values: properties named '$type', 'kind' or 'value' are plain names there (the Python reader used to check the data map itself as a tagged value).",
    ["§7.1", "§7.2"],
)
def _():
    return archive(
        {
            "data": {"$type": "space", "kind": "graph", "value": {"$type": "float", "value": "nan"}},
            "optimizers": {"$type": "opaque"},
        }
    )


@case(
    "json-lone-surrogate-in-dropped-duplicate",
    "A lone surrogate escaped in the first of two duplicate keys' values: rule 6 (JSON_UTF8) comes before rule 7 (JSON_DUPLICATE_KEY) even though a parser keeping the last duplicate drops that value.",
    "§6",
    "JSON_UTF8",
)
def _():
    return _data_raw(b'{"data":{"a":"\\ud800","a":1}}')


def _past_end(edit_more=None) -> bytes:
    def edit(es):
        m = by_name(es, "data.json")
        m.central_csize = m.central_usize = m.local_size = (
            len(m.data) + 4096
        )  # both headers agree; the data would end past the file
        if edit_more:
            edit_more(es)

    return entries_edit(edit)


@case(
    "zip-member-data-past-end-of-file",
    "A member whose size (in both headers) runs past the end of the file: the layout check reports it as ZIP_OVERLAP (it runs into the central directory), not ZIP_TRUNCATED.",
    ["§2.1", "§11.1"],
    "ZIP_OVERLAP",
)
def _():
    return _past_end()


@case(
    "zip-member-past-end-then-bad-local-header",
    "A member running past the end of the file, and a later member's local header with a bad signature: every local header is checked before the layout.",
    ["§2.3", "§11.1"],
    "ZIP_LOCAL_HEADER_INVALID",
)
def _():
    return _past_end(lambda es: setattr(es[-1], "local_sig", b"PK\x03\x05"))


@case(
    "zip64-entry-counts-differ-above-2-53",
    "A ZIP64 end record whose per-disk and total entry counts are 2^60 and 2^60 + 1: they differ (ZIP_MULTI_DISK, checked before MAX_MEMBERS) although they are equal once rounded to binary64.",
    ["§2.1", "§2.6", "§11.1"],
    "ZIP_MULTI_DISK",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(zip64_eocd=True, eocd_count_disk=2**60, eocd_count=2**60 + 1))


@case(
    "zip64-sizes-differ-above-2-53",
    "A central record whose ZIP64 uncompressed and compressed sizes are 2^60 and 2^60 + 1: they differ (ZIP_CD_INVALID) although they are equal once rounded to binary64.",
    ["§2.2", "§2.6"],
    "ZIP_CD_INVALID",
)
def _():
    def edit(es):
        m = by_name(es, "data.json")
        m.zip64 = True
        m.central_usize, m.central_csize = 2**60, 2**60 + 1

    return entries_edit(edit)


@case(
    "value-ndarray-base64-astral-characters",
    "An inline base64 string of 43,693 astral characters: 43,693 code points (87,386 UTF-16 units, 174,772 UTF-8 bytes), within the 87,384 the length check allows, so the error is the base64 form (VALUE_INVALID), not LIMIT_EXCEEDED (stored gzipped in this folder).",
    ["§7.6", "§15"],
    "VALUE_INVALID",
    gzip=True,
)
def _():
    return with_value({"$type": "ndarray", "dtype": "U8", "shape": [1], "base64": "\U0001f600" * 43693})
