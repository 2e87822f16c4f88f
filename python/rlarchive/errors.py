"""The single exception type of rlarchive and the stable error-code catalogue.

The catalogue comes from spec/tables.json (via the generated :mod:`rlarchive.tables`), as spec/errors.md does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .report import Issue, Severity
from .tables import API_CODES as _API_CODES
from .tables import CATALOGUE

#: Codes raised for a caller's request rather than for a file.
API_CODES: frozenset[str] = frozenset(_API_CODES)

__all__ = ["CATALOGUE", "API_CODES", "RlarchiveError"]


def esc(key: str) -> str:
    """Escape a key for a JSON Pointer (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


def members_pointer(node: Any, ptr: str, allowed: Iterable[Any], required: Iterable[Any] | None = None) -> str:
    """Where an object whose members are not the allowed ones is at fault (spec §11.2): the object
    itself when it is not one or lacks a ``required`` member (by default every allowed one), else its
    first member (in document order) that is not allowed, else the object (a rule on it as a whole)."""
    if not isinstance(node, dict):
        return ptr
    allowed = set(allowed)
    if not (allowed if required is None else set(required)) <= set(node):
        return ptr
    extra = next((k for k in node if k not in allowed), None)
    return ptr if extra is None else f"{ptr}/{esc(extra)}"


class RlarchiveError(Exception):
    """Any problem rlarchive reports: a file breaking the spec, or a bad request.

    Attributes:
        code: the stable code from the spec's catalogue.
        message: what is wrong, without the code and the location (also :attr:`detail`).
        member: the archive member concerned, if known.
        pointer: a JSON Pointer into that member's JSON, if relevant.
        offset: a byte offset from the start of the file, if relevant.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        member: str | None = None,
        pointer: str | None = None,
        offset: int | None = None,
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
    def detail(self) -> str:
        """The message without the code and the location (the JavaScript reader's name for it;
        ``str(error)`` gives all three)."""
        return self.message

    @property
    def severity(self) -> Severity:
        """``error``, ``warning`` or ``info`` (API errors are ``error``)."""
        severity = CATALOGUE.get(self.code)
        return "warning" if severity == "warning" else "info" if severity == "info" else "error"

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

    def as_issue(self) -> Issue:
        """This error as a validation-report issue (spec §14)."""
        issue: Issue = {"code": self.code, "severity": self.severity, "message": self.message}
        if self.member is not None:
            issue["member"] = self.member
        if self.pointer is not None:
            issue["pointer"] = self.pointer
        if self.offset is not None:
            issue["offset"] = self.offset
        return issue
