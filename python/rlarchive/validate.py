"""The validator (spec §14): every problem it can find, as a report."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from . import checks
from .errors import RlarchiveError
from .filenames import report_fields, without_surrogates
from .report import FileName, Report
from .sources import open_source
from .version import NAME, VERSION

VALIDATOR_NAME = NAME


def _issues(path: Any, timeout: float | None, min_rate: float | None) -> list[RlarchiveError]:
    """Every phase of spec §11.1 over the file, its issues in the order of spec §14."""
    try:
        src = open_source(path, timeout=timeout, min_rate=min_rate)
    except RlarchiveError as e:
        return [e]
    try:
        try:  # nothing after the first error of the structure can be trusted: that error is the only issue
            state = checks.run(checks.start(src), "structure")
        except RlarchiveError as e:
            return [e]
        try:
            state = checks.run(state, "data")  # its error is an issue; document stays None
            early: tuple[RlarchiveError, ...] = ()
        except RlarchiveError as e:
            early = (e,)
            state = replace(state, warnings=state.warnings + checks.data_warnings(state))
        opened = checks.run(state, "tensors")
        done = checks.run(opened, *checks.DEFERRED)
        return [
            *early,
            *opened.issues,
            *opened.warnings,
            *done.issues[len(opened.issues) :],
            *done.warnings[len(opened.warnings) :],  # step 10's ST_BOOL_VALUE
        ]
    except RlarchiveError as e:  # reading failed past what a step reports (e.g. IO_ERROR)
        return [e]
    finally:
        src.close()


def validate(path: Any, *, timeout: float | None = None, min_rate: float | None = None) -> Report:
    """Check a file against every rule of the spec and return the report (spec §14).

    ``path`` is anything :func:`rlarchive.open` takes: a path, bytes, a
    seekable binary file object, a URL, a :class:`rlarchive.sources.Source`;
    ``timeout`` and ``min_rate`` bound the requests for an http(s) URL as for
    :func:`rlarchive.open`. Never raises for a bad file: problems are issues in
    the report (``IO_TIMEOUT`` among them).
    """
    issues = _issues(path, timeout, min_rate)
    counts = {s: sum(1 for i in issues if i.severity == s) for s in ("error", "warning", "info")}
    names: FileName = (
        report_fields(path) if isinstance(path, (str, os.PathLike)) else {"file": f"<{type(path).__name__}>"}
    )
    return {
        "validator": {"name": VALIDATOR_NAME, "version": VERSION},
        **names,
        "valid": counts["error"] == 0,
        "summary": {"errors": counts["error"], "warnings": counts["warning"], "infos": counts["info"]},
        "issues": [{**i.as_issue(), "message": without_surrogates(i.message)} for i in issues],
    }
