"""The limits of spec §15, as named constants."""

MAX_MEMBERS = 4096
MAX_NAME_BYTES = 255
MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_JSON_DEPTH = 64
MAX_SAFETENSORS_HEADER_BYTES = 16 * 1024 * 1024
MAX_NDIM = 32
MAX_INT_DIGITS = 4096
MAX_INLINE_ARRAY_BYTES = 65536
MAX_ELEMENT_BYTES = 2**53 - 1
#: Largest array (in bytes) the writer keeps inline in data.json (spec §12).
INLINE_ARRAY_BYTES = 1024
#: Largest integer a plain JSON number may hold (spec §6).
MAX_SAFE_INTEGER = 2**53 - 1
