"""What the conformance harness reports (spec Annex A): the reader x case matrix, the summary, JUnit XML.

Results are ``case id -> (status, detail)`` per reader, a status being one of
:data:`SYMBOL`'s keys. Standard library only: this module also ships beside
``run.py`` in the standalone conformance kit (with ``filenames.py``).

A reader's answers are text from a program under test: every string printed
or written to JUnit is shown text (:func:`printable`: no control,
bidirectional or other format character raw), and the XML holds only XML
1.0 characters, so the report stays well-formed whatever a reader answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from ..filenames import printable
else:  # the standalone kit
    from filenames import printable

SYMBOL = {
    "pass": "ok",
    "fail": "FAIL",
    "skip": "SKIPPED",
    "n/a": "n/a",
    "xfail": "xfail",
    "xpass": "XPASS",
    "crash": "CRASH",
    "timeout": "TIMEOUT",
}
# A case the testee answers "skipped" counts against it: it was sent only because the testee
# declared every extension the case needs ("n/a" marks the cases not sent, Annex A.3).
UNEXPECTED = {"fail", "skip", "xpass", "crash", "timeout"}
#: The kinds of request the harness counts per reader (Annex A.3): a case's dump or predict request, the
#: validate request that follows it, and a request line given as bytes by a case's request file (Annex A.5).
REQUEST_KINDS = ("dump", "predict", "validate", "line")
#: The matrix's sections: the golden vectors, then the cases generated for the run (Annex A.6).
SECTIONS = {"golden": "golden vectors", "generated": "generated cases"}


def section(case: dict[str, Any]) -> str:
    """The section of the matrix a case belongs to."""
    return str(case.get("section", "golden"))


def xml_text(text: str) -> str:
    """``text`` as an XML 1.0 attribute value that shows what it holds: :func:`printable`'s escapes, and the two
    non-characters U+FFFE and U+FFFF (not XML characters) written ``\\ufffe``, ``\\uffff``."""
    return printable(text).replace("\ufffe", "\\ufffe").replace("\uffff", "\\uffff")


def junit_xml(title: str, suites: list[Any]) -> bytes:
    """A JUnit XML document (as CI systems read it): ``suites`` is a list of ``(name, seconds, cases)``, each case
    ``(classname, name, outcome, message)`` with outcome ``"pass"``, ``"failure"`` or ``"skipped"``. Every string
    goes through :func:`xml_text`."""
    from xml.etree import ElementTree as ET

    root = ET.Element("testsuites", name=xml_text(title))
    for suite_name, seconds, cases in suites:
        suite = ET.SubElement(
            root, "testsuite", name=xml_text(suite_name), tests=str(len(cases)), time=f"{seconds:.3f}"
        )
        bad = skipped = 0
        for classname, name, outcome, message in cases:
            tc = ET.SubElement(suite, "testcase", classname=xml_text(classname), name=xml_text(name))
            if outcome == "failure":
                bad += 1
                ET.SubElement(tc, "failure", message=xml_text(message[:2000]))
            elif outcome == "skipped":
                skipped += 1
                ET.SubElement(tc, "skipped", message=xml_text(message))
        suite.set("failures", str(bad))
        suite.set("skipped", str(skipped))
    out: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return out


def write_junit(path: str, names: list[Any], cases: list[Any], results: dict[str, Any]) -> None:
    """The results as JUnit XML: one test suite per reader, one test case per vector."""
    suites = []
    for n in names:
        rows = []
        for c in cases:
            status, detail = results[n][c["id"]]
            if status in UNEXPECTED:
                rows.append((n, c["id"], "failure", f"{status}: {detail}"))
            else:
                rows.append((n, c["id"], "skipped" if status == "n/a" else "pass", detail))
        suites.append((n, results[n]["__seconds__"], rows))
    with open(path, "wb") as f:
        f.write(junit_xml("rlarchive conformance", suites))


def print_matrix(
    cases: list[Any],
    names: list[Any],
    results: dict[str, Any],
    quiet: bool = False,
    titles: dict[str, str] | None = None,
) -> None:
    """The reader x case matrix on stdout, a section at a time (each under its title: ``titles``, else
    :data:`SECTIONS`), with the detail of each unexpected result under its row (``quiet``: only the rows
    with an unexpected result)."""
    width = max(len(c["id"]) for c in cases) + 2
    print("case".ljust(width) + "".join(printable(n).ljust(12) for n in names))
    current = None
    for c in cases:
        if section(c) != current:
            current = section(c)
            print(f"-- {(titles or {}).get(current) or SECTIONS.get(current, current)}")
        row = [results[n][c["id"]] for n in names]
        unexpected = any(s in UNEXPECTED for s, _ in row)
        if quiet and not unexpected:
            continue
        print(printable(c["id"]).ljust(width) + "".join(SYMBOL[s].ljust(12) for s, _ in row))
        for n, (s, d) in zip(names, row):
            if s in UNEXPECTED:
                print(printable(f"    {n}: {d}"))
    print()


def requests_line(judged: dict[str, int], declared: Any) -> str:
    """How many requests of each kind a reader's answers were judged on, and which kind it was never sent
    because its handshake does not declare it (Annex A.3)."""
    names = {"dump": "dump", "predict": "predict", "validate": "validate", "line": "request lines"}
    text = ", ".join(f"{judged.get(k, 0)} {names[k]}" for k in REQUEST_KINDS)
    if "validate" not in (declared or ()):
        text += "; validate never sent: the handshake's requests do not list it"
    return "  requests judged: " + text


def print_summary(cases: list[Any], names: list[Any], results: dict[str, Any]) -> tuple[int, int]:
    """Per reader on stdout: a line per section (passed, failed, expected failures, coverage) and the
    requests judged by kind; returns the (passed, failed) counts over every reader, expected failures
    counted as passed."""
    total_pass = total_fail = 0
    for n in names:
        info = results[n].get("__info__", {})
        who = f"{info.get('name', '?')} {info.get('version', '')}".strip()
        sections = list(dict.fromkeys(section(c) for c in cases))
        for part in sections:
            ids = [c["id"] for c in cases if section(c) == part]
            res = [results[n][i] for i in ids]
            count = {s: sum(1 for st, _ in res if st == s) for s in SYMBOL}
            failed = sum(count[s] for s in UNEXPECTED)
            total_pass += count["pass"] + count["xfail"]
            total_fail += failed
            sent = len(ids) - count["n/a"]
            where = f" [{SECTIONS.get(part, part)}]" if len(sections) > 1 else ""
            print(
                f"{printable(n)} ({printable(who)}){where}: {count['pass']} passed, {failed} failed ({count['skip']} of them answered skipped), "
                f"{count['xfail']} expected failure{'s' * (count['xfail'] != 1)} of {sent} case{'s' * (sent != 1)} sent; "
                f"coverage {sent} of {len(ids)} case{'s' * (len(ids) != 1)}"
                + (f" ({count['n/a']} need extensions the reader does not declare)" if count["n/a"] else "")
            )
        print(
            requests_line(results[n].get("__requests__", {}), results[n].get("__declared__"))
            + f"; {results[n]['__seconds__']:.1f} s"
        )
    return total_pass, total_fail
