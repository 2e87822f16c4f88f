"""The validation report's shape (spec §14, schemas/report-1.0.schema.json) as types.

:func:`rlarchive.validate` returns a :class:`Report`; the JavaScript reader's
``validate()`` returns the same shape (its ``Report`` in ``index.d.ts``). A test
holds the keys of each type, required and optional, against the schema.
"""

from __future__ import annotations

from typing import Literal, TypedDict

__all__ = ["FileName", "Issue", "Report", "Severity", "Summary", "ValidatorInfo"]

#: How bad an issue is.
Severity = Literal["error", "warning", "info"]


class _IssueRequired(TypedDict):
    code: str
    severity: Severity
    message: str


class Issue(_IssueRequired, total=False):
    """One problem: its stable code, severity and message, and where it is when known."""

    member: str
    pointer: str
    offset: int


class ValidatorInfo(TypedDict):
    """The validator that wrote the report."""

    name: str
    version: str


class Summary(TypedDict):
    """How many issues of each severity the report holds."""

    errors: int
    warnings: int
    infos: int


class _FileNameRequired(TypedDict):
    file: str


class FileName(_FileNameRequired, total=False):
    """The file's name as a report gives it: ``file_base64`` is present only when the name is not UTF-8."""

    file_base64: str


class Report(FileName):
    """The report of one file."""

    validator: ValidatorInfo
    valid: bool
    summary: Summary
    issues: list[Issue]
