"""The single exception type of rlarchive and the stable error-code catalogue.

The catalogue mirrors ``spec/errors.md``; a test keeps the two identical.
"""
from __future__ import annotations

from typing import Optional

#: File error codes (spec/errors.md) mapped to their severity.
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
    "DATA_UNKNOWN_PROPERTY": "warning",
    "ST_BOOL_VALUE": "warning",
    "EXTENSION_UNKNOWN": "info",
}

#: Codes raised for a caller's request rather than for a file.
API_CODES: frozenset[str] = frozenset(
    {
        "PICKLE_NOT_ALLOWED",
        "IMPORT_NOT_ALLOWED",
        "VALUE_UNSUPPORTED",
        "WRITE_INVALID",
        "TENSOR_NOT_FOUND",
        "FRAMEWORK_UNAVAILABLE",
        "IMPORT_INVALID",
        "INTERNAL_ERROR",
        "INPUT_INVALID",
    }
)


class RlarchiveError(Exception):
    """Any problem rlarchive reports: a file breaking the spec, or a bad request.

    Attributes:
        code: the stable code from the spec's catalogue.
        member: the archive member concerned, if known.
        pointer: a JSON Pointer into that member's JSON, if relevant.
        offset: a byte offset from the start of the file, if relevant.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        member: Optional[str] = None,
        pointer: Optional[str] = None,
        offset: Optional[int] = None,
    ) -> None:
        if code not in CATALOGUE and code not in API_CODES:
            raise ValueError(f"unknown rlarchive error code {code!r}")
        self.code = code
        self.message = message
        self.member = member
        self.pointer = pointer
        self.offset = offset
        super().__init__(self._render())

    @property
    def severity(self) -> str:
        """``error``, ``warning`` or ``info`` (API errors are ``error``)."""
        return CATALOGUE.get(self.code, "error")

    def location(self) -> str:
        """The location as readable text, e.g. ``data.json#/data/gamma @ 120``."""
        parts = []
        if self.member is not None:
            parts.append(self.member + (f"#{self.pointer}" if self.pointer is not None else ""))
        elif self.pointer is not None:
            parts.append(f"#{self.pointer}")
        if self.offset is not None:
            parts.append(f"@{self.offset}")
        return " ".join(parts)

    def _render(self) -> str:
        loc = self.location()
        return f"{self.code}: {self.message}" + (f" [{loc}]" if loc else "")

    def as_issue(self) -> dict:
        """This error as a validation-report issue (spec §14)."""
        issue: dict = {"code": self.code, "severity": self.severity, "message": self.message}
        if self.member is not None:
            issue["member"] = self.member
        if self.pointer is not None:
            issue["pointer"] = self.pointer
        if self.offset is not None:
            issue["offset"] = self.offset
        return issue
