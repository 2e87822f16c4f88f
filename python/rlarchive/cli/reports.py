"""What ``rlarchive validate`` does with reports (spec §14) before printing them: the filters and severity
overrides of its options, and the formats for continuous integration: JUnit XML and SARIF 2.1.0.

Every format is well-formed and safe to show for any file name and any text
from a file: JUnit names each file by its escaped form (spec §14) and its XML
holds only XML 1.0 characters; SARIF's message texts and logical locations
are shown text (:func:`rlarchive.filenames.printable`) and its URIs
percent-encoded; JSON is printed with :func:`rlarchive.filenames.json_text`.

Filters and overrides apply in this order: ``--only`` keeps the issues of the
codes it names, ``--ignore`` drops the codes it names, ``--severity
CODE=LEVEL`` gives the issues of CODE the severity LEVEL; then the summary is
counted again and ``valid`` means: no issue of severity ``error`` is left.
``--max-issues N`` keeps the first N issues of each report (the summary still
counts them all). The exit status follows the reports as printed: 1 when a
report has an error left, so ``--severity CODE=warning`` lets a file with only
CODE errors pass and ``--severity CODE=error`` makes a warning fail.
"""

from __future__ import annotations

import base64
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..describe import counted
from ..errors import CATALOGUE
from ..filenames import escape_name, printable

#: SARIF's level of each severity of the catalogue.
SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
#: Where the catalogue that explains every code is.
CATALOGUE_URI = "https://github.com/rlarchive/rlarchive/blob/main/spec/errors.md"


@dataclass
class Selection:
    """The issues a ``validate`` run reports: the options ``--only``, ``--ignore``, ``--severity`` and ``--max-issues``."""

    only: frozenset[Any] = frozenset()
    ignore: frozenset[Any] = frozenset()
    severity: dict[str, Any] = field(default_factory=dict)
    max_issues: int | None = None

    def apply(self, report: Mapping[str, Any]) -> dict[str, Any]:
        """``report`` with its issues selected and their severities overridden, its summary and ``valid`` recounted
        (every selected issue kept: :meth:`clip` keeps the first ``max_issues``)."""
        issues = [
            i for i in report["issues"] if (not self.only or i["code"] in self.only) and i["code"] not in self.ignore
        ]
        issues = [dict(i, severity=self.severity.get(i["code"], i["severity"])) for i in issues]
        counts = {s: sum(1 for i in issues if i["severity"] == s) for s in ("error", "warning", "info")}
        summary = {"errors": counts["error"], "warnings": counts["warning"], "infos": counts["info"]}
        return dict(report, valid=counts["error"] == 0, summary=summary, issues=issues)

    def clip(self, report: dict[str, Any]) -> dict[str, Any]:
        """``report`` with its first ``max_issues`` issues only (its summary unchanged)."""
        return report if self.max_issues is None else dict(report, issues=report["issues"][: self.max_issues])


def file_name(report: Mapping[str, Any]) -> bytes:
    """The bytes of a report's file name (spec §14: ``file_base64`` when it is not UTF-8)."""
    if "file_base64" in report:
        return base64.b64decode(report["file_base64"])
    name: bytes = report["file"].encode("utf-8", "surrogatepass")
    return name


def junit(reports: list[Any], seconds: float) -> bytes:
    """The reports as JUnit XML, as ``rlarchive conformance --junit`` writes it: one test case per file, named by its
    escaped form (spec §14), failed when the file has errors (the message: the first error and how many there are)."""
    from ..conformance import junit_xml

    cases = []
    for r in reports:
        name = escape_name(file_name(r))
        errors = [i for i in r["issues"] if i["severity"] == "error"]
        if r["valid"]:
            cases.append(("rlarchive validate", name, "pass", ""))
            continue
        first = errors[0] if errors else {"code": "?", "message": "errors beyond --max-issues"}
        more = f" (and {counted(r['summary']['errors'] - 1, 'more error')})" if r["summary"]["errors"] > 1 else ""
        cases.append(("rlarchive validate", name, "failure", f"{first['code']}: {first['message']}{more}"))
    return junit_xml("rlarchive validate", [("rlarchive validate", seconds, cases)])


def artifact_uri(report: dict[str, Any]) -> str:
    """The SARIF ``uri`` of a report's file: a relative reference for a relative path, a ``file:`` URI for an absolute
    one; the name's bytes percent-encoded (RFC 3986), so that a name that is not UTF-8 keeps them."""
    raw = file_name(report)
    path = raw.replace(os.sep.encode(), b"/")
    if not os.path.isabs(raw):
        return urllib.parse.quote(path, safe=b"/")
    return "file://" + ("" if path.startswith(b"/") else "/") + urllib.parse.quote(path, safe=b"/:")


def _rules() -> list[Any]:
    """The rule table: one rule per code of the catalogue, in its order."""
    return [
        {
            "id": code,
            "name": "".join(part.capitalize() for part in code.split("_")),
            "shortDescription": {"text": f"rlarchive {code} ({severity}; spec/errors.md)"},
            "helpUri": CATALOGUE_URI,
            "defaultConfiguration": {"level": SARIF_LEVELS[severity]},
        }
        for code, severity in CATALOGUE.items()
    ]


def _location(issue: dict[str, Any], index: int, uri: str) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri, "index": index}}
    if "offset" in issue:
        physical["region"] = {"byteOffset": issue["offset"]}
    location: dict[str, Any] = {"physicalLocation": physical}
    if "member" in issue or "pointer" in issue:
        member = issue.get("member", "")
        name = printable(member + ("#" + issue["pointer"] if "pointer" in issue else ""))
        location["logicalLocations"] = [{"fullyQualifiedName": name, "name": member or name, "kind": "member"}]
    return location


def sarif(reports: list[Any]) -> dict[str, Any]:
    """The reports as one SARIF 2.1.0 log: one run of this validator whose rules are the error catalogue; each issue a
    result whose location is the file (artifact), the member and JSON Pointer (logical location) and the byte offset
    (``region.byteOffset``)."""
    from .. import __version__

    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    artifacts, results = [], []
    for k, report in enumerate(reports):
        uri = artifact_uri(report)
        artifacts.append({"location": {"uri": uri}})
        for issue in report["issues"]:
            result: dict[str, Any] = {
                "ruleId": issue["code"],
                "level": SARIF_LEVELS[issue["severity"]],
                "message": {"text": printable(issue["message"])},
                "locations": [_location(issue, k, uri)],
            }
            if issue["code"] in index:
                result["ruleIndex"] = index[issue["code"]]
            results.append(result)
    driver = {
        "name": "rlarchive validate",
        "version": __version__,
        "informationUri": "https://github.com/rlarchive/rlarchive",
        "rules": rules,
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "artifacts": artifacts, "results": results}],
    }
