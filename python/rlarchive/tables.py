"""The shared tables of the specification (generated from spec/tables.json by spec/tables.py (make tables): do not edit)."""

#: File error codes (spec/errors.md) and their severity, in the catalogue's order.
CATALOGUE: dict[str, str] = {
    "IO_ERROR": "error",
    "ARCHIVE_NOT_RLARCHIVE": "error",
    "ZIP_EOCD_NOT_FOUND": "error",
    "ZIP_TRAILING_DATA": "error",
    "ZIP_MULTIPLE_EOCD": "error",
    "ZIP_MULTI_DISK": "error",
    "ZIP_ZIP64_INVALID": "error",
    "ZIP_TRUNCATED": "error",
    "ZIP_CD_INVALID": "error",
    "ZIP_VERSION_MADE_BY": "error",
    "ZIP_VERSION_NEEDED": "error",
    "ZIP_ENCRYPTED": "error",
    "ZIP_DATA_DESCRIPTOR": "error",
    "ZIP_FLAGS": "error",
    "ZIP_COMPRESSED": "error",
    "ZIP_ATTRIBUTES": "error",
    "ZIP_NAME_INVALID": "error",
    "ZIP_EXTRA_FIELD": "error",
    "ZIP_NAME_DUPLICATE": "error",
    "ZIP_NAME_CASE_COLLISION": "error",
    "ZIP_NAME_DIRECTORY_CLASH": "error",
    "ZIP_LOCAL_HEADER_INVALID": "error",
    "ZIP_HEADER_MISMATCH": "error",
    "ZIP_OVERLAP": "error",
    "ZIP_GAP": "error",
    "ZIP_CRC_MISMATCH": "error",
    "MEMBER_REQUIRED_MISSING": "error",
    "MEMBER_UNEXPECTED": "error",
    "MANIFEST_INVALID": "error",
    "VERSION_UNSUPPORTED": "error",
    "EXTENSION_UNDECLARED": "error",
    "EXTENSION_UNSUPPORTED": "error",
    "EXTENSION_INVALID": "error",
    "MEMBER_UNLISTED": "error",
    "MEMBER_MISSING": "error",
    "MEMBER_SIZE_MISMATCH": "error",
    "MEMBER_DIGEST_MISMATCH": "error",
    "JSON_TOO_LARGE": "error",
    "JSON_BOM": "error",
    "JSON_UTF8": "error",
    "JSON_DEPTH": "error",
    "JSON_SYNTAX": "error",
    "JSON_NAN_LITERAL": "error",
    "JSON_DUPLICATE_KEY": "error",
    "JSON_INTEGER_RANGE": "error",
    "JSON_NUMBER_RANGE": "error",
    "DATA_INVALID": "error",
    "VALUE_UNKNOWN_TYPE": "error",
    "VALUE_INVALID": "error",
    "VALUE_DUPLICATE_KEY": "error",
    "ARRAY_SIZE_MISMATCH": "error",
    "SPACE_INVALID": "error",
    "SCHEDULE_INVALID": "error",
    "REF_NOT_FOUND": "error",
    "REF_MISMATCH": "error",
    "ST_TRUNCATED": "error",
    "ST_HEADER_TOO_LARGE": "error",
    "ST_HEADER_INVALID": "error",
    "ST_DTYPE_UNKNOWN": "error",
    "ST_OFFSETS_INVALID": "error",
    "ST_SHAPE_MISMATCH": "error",
    "ST_HOLE": "error",
    "ST_OVERLAP": "error",
    "ST_TRAILING_BYTES": "error",
    "ST_MISALIGNED": "error",
    "LIMIT_EXCEEDED": "error",
    "MANIFEST_UNKNOWN_PROPERTY": "warning",
    "METADATA_INVALID": "warning",
    "DATA_UNKNOWN_PROPERTY": "warning",
    "ST_BOOL_VALUE": "warning",
    "EXTENSION_UNKNOWN": "info",
}

#: Codes raised for a caller's request rather than for a file.
API_CODES: tuple[str, ...] = (
    "PICKLE_NOT_ALLOWED",
    "IMPORT_NOT_ALLOWED",
    "VALUE_UNSUPPORTED",
    "WRITE_INVALID",
    "TENSOR_NOT_FOUND",
    "FRAMEWORK_UNAVAILABLE",
    "IMPORT_INVALID",
    "INTERNAL_ERROR",
    "IO_TIMEOUT",
    "INPUT_INVALID",
    "ENV_NOT_FOUND",
    "ENV_MISMATCH",
)

#: dtype code -> (size, alignment, kind), in the order of spec §10.1.
DTYPE_TABLE: dict[str, tuple[int, int, str]] = {
    "BOOL": (1, 1, "bool"),
    "U8": (1, 1, "uint"),
    "I8": (1, 1, "int"),
    "U16": (2, 2, "uint"),
    "I16": (2, 2, "int"),
    "U32": (4, 4, "uint"),
    "I32": (4, 4, "int"),
    "U64": (8, 8, "uint"),
    "I64": (8, 8, "int"),
    "F16": (2, 2, "float"),
    "BF16": (2, 2, "float"),
    "F32": (4, 4, "float"),
    "F64": (8, 8, "float"),
    "F8_E4M3": (1, 1, "float"),
    "F8_E5M2": (1, 1, "float"),
    "F8_E4M3FNUZ": (1, 1, "float"),
    "F8_E5M2FNUZ": (1, 1, "float"),
    "F8_E8M0": (1, 1, "float"),
    "C64": (8, 4, "complex"),
}

# The limits of spec §15.
MAX_MEMBERS = 4096
MAX_NAME_BYTES = 255
MAX_JSON_BYTES = 67108864
MAX_JSON_DEPTH = 64
MAX_SAFETENSORS_HEADER_BYTES = 16777216
MAX_NDIM = 32
MAX_INT_DIGITS = 4096
MAX_INLINE_ARRAY_BYTES = 65536
MAX_ELEMENT_BYTES = 9007199254740991
MAX_REPLAY_N_STEPS = 1024
INLINE_ARRAY_BYTES = 1024
MAX_INPUT_JSON_MEMORY = 268435456
SLICE_MAX_REQUESTS = 16
SLICE_REQUEST_BYTES = 1048576
SLICE_OVERREAD_BYTES = 65536
OPEN_READAHEAD_BYTES = 8192
OPEN_READAHEAD_TOTAL_BYTES = 4194304
