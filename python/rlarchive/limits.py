"""The limits of spec §15, as named constants (from spec/tables.json, via :mod:`rlarchive.tables`)."""

__all__ = [
    "INLINE_ARRAY_BYTES",
    "MAX_ELEMENT_BYTES",
    "MAX_INLINE_ARRAY_BYTES",
    "MAX_INT_DIGITS",
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_MEMBERS",
    "MAX_NAME_BYTES",
    "MAX_NDIM",
    "MAX_REPLAY_N_STEPS",
    "MAX_SAFETENSORS_HEADER_BYTES",
    "MAX_SAFE_INTEGER",
    "MAX_INPUT_JSON_MEMORY",
    "SLICE_MAX_REQUESTS",
    "SLICE_REQUEST_BYTES",
    "SLICE_OVERREAD_BYTES",
    "OPEN_READAHEAD_BYTES",
]

from .tables import (  # noqa: F401  (re-exported)
    INLINE_ARRAY_BYTES,
    MAX_ELEMENT_BYTES,
    MAX_INLINE_ARRAY_BYTES,
    MAX_INPUT_JSON_MEMORY,
    MAX_INT_DIGITS,
    MAX_JSON_BYTES,
    MAX_JSON_DEPTH,
    MAX_MEMBERS,
    MAX_NAME_BYTES,
    MAX_NDIM,
    MAX_REPLAY_N_STEPS,
    MAX_SAFETENSORS_HEADER_BYTES,
    OPEN_READAHEAD_BYTES,
    SLICE_MAX_REQUESTS,
    SLICE_OVERREAD_BYTES,
    SLICE_REQUEST_BYTES,
)

#: Largest integer a plain JSON number may hold (spec §6).
MAX_SAFE_INTEGER = 2**53 - 1
