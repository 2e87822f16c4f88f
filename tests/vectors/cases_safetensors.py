"""The invalid golden cases of the safetensors members (spec §8)."""

from __future__ import annotations

import json
import struct

from cases import _group, case, st_raw


def _entry(dtype, shape, begin, end) -> dict:
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


@case("st-shorter-than-8-bytes", "A safetensors member of 4 bytes.", "§10.2", "ST_TRUNCATED")
def _():
    return _group(b"\x10\0\0\0")


@case("st-header-past-member", "A header length larger than the member.", "§10.2", "ST_TRUNCATED")
def _():
    return _group(struct.pack("<Q", 1000) + b"{}")


@case("st-header-too-large", "A header length of 2^40 bytes.", ["§10.2", "§15"], "ST_HEADER_TOO_LARGE")
def _():
    return _group(struct.pack("<Q", 1 << 40) + b"{}")


@case("st-metadata", "A header with __metadata__, which this profile forbids.", "§10.2", "ST_HEADER_INVALID")
def _():
    return _group(st_raw({"__metadata__": {"format": "pt"}}, b""))


@case("st-header-leading-space", "A header that begins with a space.", "§10.2", "ST_HEADER_INVALID")
def _():
    return _group(st_raw(b" {}", b""))


@case("st-header-newline-padding", "A header padded with newlines instead of spaces.", "§10.2", "ST_HEADER_INVALID")
def _():
    h = b"{}" + b"\n" * 54
    return _group(struct.pack("<Q", len(h)) + h)


@case("st-entry-missing-offsets", "A tensor entry without data_offsets.", "§10.2", "ST_HEADER_INVALID")
def _():
    return _group(st_raw({"w": {"dtype": "F32", "shape": [1]}}, b"\0" * 4))


@case("st-name-reserved", "A tensor named '__x'.", "§10.2", "ST_HEADER_INVALID")
def _():
    return _group(st_raw({"__x": _entry("U8", [1], 0, 1)}, b"\0"))


@case("st-header-duplicate-key", "A header naming the same tensor twice.", ["§10.2", "§6"], "JSON_DUPLICATE_KEY")
def _():
    e = json.dumps(_entry("U8", [1], 0, 1))
    return _group(st_raw(f'{{"w":{e},"w":{e}}}'.encode(), b"\0"))


@case("st-dtype-unknown", "A tensor of dtype F4 (sub-byte, not in this profile).", "§10.1", "ST_DTYPE_UNKNOWN")
def _():
    return _group(st_raw({"w": _entry("F4", [2], 0, 1)}, b"\0"))


@case("st-too-many-dims", "A tensor of 33 dimensions.", ["§10.2", "§15"], "LIMIT_EXCEEDED")
def _():
    return _group(st_raw({"w": _entry("U8", [1] * 33, 0, 1)}, b"\0"))


@case("st-offsets-reversed", "A tensor whose end offset precedes its begin.", "§10.2", "ST_OFFSETS_INVALID")
def _():
    return _group(st_raw({"w": _entry("U8", [0], 4, 0)}, b"\0" * 4))


@case("st-offsets-past-buffer", "A tensor ending beyond the data buffer.", "§10.2", "ST_OFFSETS_INVALID")
def _():
    return _group(st_raw({"w": _entry("U8", [8], 0, 8)}, b"\0" * 4))


@case("st-shape-mismatch", "A tensor whose byte range does not hold its shape.", "§10.2", "ST_SHAPE_MISMATCH")
def _():
    return _group(st_raw({"w": _entry("F32", [3], 0, 8)}, b"\0" * 8))


@case("st-hole", "Unused bytes between two tensors.", "§10.2", "ST_HOLE")
def _():
    return _group(st_raw({"a": _entry("F32", [1], 0, 4), "b": _entry("F32", [1], 8, 12)}, b"\0" * 12))


@case("st-hole-at-start", "A first tensor that does not begin at 0.", "§10.2", "ST_HOLE")
def _():
    return _group(st_raw({"a": _entry("F32", [1], 4, 8)}, b"\0" * 8))


@case("st-overlap", "Two tensors sharing bytes.", "§10.2", "ST_OVERLAP")
def _():
    return _group(st_raw({"a": _entry("F32", [2], 0, 8), "b": _entry("F32", [1], 4, 8)}, b"\0" * 8))


@case("st-trailing-bytes", "Bytes after the last tensor.", "§10.2", "ST_TRAILING_BYTES")
def _():
    return _group(st_raw({"a": _entry("F32", [1], 0, 4)}, b"\0" * 8))


@case(
    "st-misaligned",
    "An F64 tensor starting 4 bytes into the buffer (after a U8 tensor): not a multiple of 8 in the file.",
    "§10.2",
    "ST_MISALIGNED",
)
def _():
    return _group(st_raw({"a": _entry("U8", [4], 0, 4), "b": _entry("F64", [1], 4, 12)}, b"\0" * 12))


@case(
    "st-misaligned-header",
    "A header not padded to the alignment, so an F32 tensor starts at an odd offset.",
    "§10.2",
    "ST_MISALIGNED",
)
def _():
    h = json.dumps({"a": _entry("F32", [1], 0, 4)}, separators=(",", ":")).encode()
    h += b" " * ((1 - (8 + len(h))) % 4)  # 8 + N = 1 (mod 4): the tensor starts at an odd offset
    return _group(st_raw(h, b"\0" * 4, pad=False))
