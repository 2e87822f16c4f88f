"""The ``validate`` command: check files against the spec and report in text, JSON (spec §14), JUnit XML or SARIF."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

from ..describe import counted
from ..errors import CATALOGUE, RlarchiveError
from ..filenames import escape_name, json_text
from .common import EXIT_ERROR, EXIT_OK, error_line, exit_status, natural, one_line, say, shown, special
from .reports import Selection, junit, sarif

FORMATS = ("text", "json", "junit", "sarif")
LEVELS = ("error", "warning", "info")


def catalogue_code(text: str) -> str:
    """A code of the error catalogue (spec/errors.md); any other is a usage error."""
    if text not in CATALOGUE:
        raise argparse.ArgumentTypeError(f"not a code of the error catalogue (spec/errors.md): {text!r}")
    return text


def severity_override(text: str) -> tuple[str, str]:
    """``CODE=LEVEL``: a catalogue code and ``error``, ``warning`` or ``info``."""
    code, sep, level = text.partition("=")
    if not sep or level not in LEVELS:
        raise argparse.ArgumentTypeError(f"not CODE=error|warning|info: {text!r}")
    return catalogue_code(code), level


def _archives_under(folder: str, problems: list[Any]) -> Iterator[str]:
    """Every ``*.rlarchive`` file under ``folder``, recursively, in sorted order (links to folders not followed)."""
    for top, dirs, files in os.walk(folder, onerror=problems.append):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".rlarchive"):
                yield os.path.join(top, name)


def _targets(paths: Sequence[str], problems: list[Any]) -> list[Any]:
    out: list[Any] = []
    for p in paths:
        if os.path.isdir(p):
            out.extend(_archives_under(p, problems))
        else:
            out.append(p)  # a missing or unreadable file gets its IO_ERROR report
    return out


def _issue_line(i: dict[str, Any], name: str) -> str:
    loc = " ".join(
        x
        for x in (
            (i.get("member", "") + ("#" + i["pointer"] if "pointer" in i else "")) or None,
            f"@{i['offset']}" if "offset" in i else None,
        )
        if x
    )
    return f"  {i['severity']:7} {i['code']}: " + one_line(shown(i["message"], (name,)) + (f" [{loc}]" if loc else ""))


def print_report(name: str, r: dict[str, Any], quiet: bool = False, limit: Any = None) -> None:
    """One line for the file (its name in the escaped form of spec §14), then one indented line per issue (at most
    ``limit``); ``quiet``: nothing for a valid file, and errors only."""
    if quiet and r["valid"]:
        return
    s = r["summary"]
    if unread(r):  # the file could not be read: nothing is known about it, valid or not
        print(f"{escape_name(name)}: not checked (it cannot be read)")
    else:
        counts = ", ".join(counted(s[k + "s"], k) for k in ("error", "warning", "info"))
        print(f"{escape_name(name)}: {'valid' if r['valid'] else 'INVALID'} ({counts})")
    issues = [i for i in r["issues"] if i["severity"] == "error"] if quiet else r["issues"]
    shown_issues = issues if limit is None else issues[:limit]
    for i in shown_issues:
        print(_issue_line(i, name))
    if len(shown_issues) < len(issues):
        print(f"  ... {len(issues) - len(shown_issues)} more (--max-issues {limit})")


def _print(
    args: argparse.Namespace, files: list[Any], reports: list[Any], seconds: float, selection: Selection
) -> None:
    """The reports on standard output in the format asked for."""
    clipped = [selection.clip(r) for r in reports]
    if args.format == "json":
        single = len(args.paths) == 1 and len(reports) == 1 and not os.path.isdir(args.paths[0])
        out: Any = clipped[0] if single else {"reports": clipped}
        print(json_text(out))
    elif args.format == "sarif":
        print(json_text(sarif(clipped)))
    elif args.format == "junit":
        sys.stdout.flush()
        sys.stdout.buffer.write(junit(clipped, seconds) + b"\n")
    else:
        for f, r in zip(files, reports):
            print_report(f, r, args.quiet, selection.max_issues)


def unread(r: dict[str, Any]) -> bool:
    """Whether a report is of a file that could not be read (an I/O error, not a broken rule)."""
    return any(exit_status(i["code"]) == EXIT_ERROR for i in r["issues"] if i["severity"] == "error")


def _invalid_line(f: str, r: dict[str, Any], listed: bool) -> RlarchiveError:
    """The one line of standard error for an invalid file: its first error, quoted unless the text report just listed
    it; for a file that could not be read, why."""
    errors = [i for i in r["issues"] if i["severity"] == "error"]
    n = len(errors)
    if unread(r):
        first = next(i for i in errors if exit_status(i["code"]) == EXIT_ERROR)
        return RlarchiveError(first["code"], first["message"])
    if listed:
        return RlarchiveError(errors[0]["code"], f"{f} is invalid ({counted(n, 'error')}, listed above)")
    what = errors[0]["message"] if n == 1 else f"{counted(n, 'error')}; the first: {errors[0]['message']}"
    return RlarchiveError(errors[0]["code"], f"{f} is invalid ({what})")


def cmd_validate(args: argparse.Namespace) -> int:
    """``validate``: exit 0 when every file is valid (as the options select), 1 when one is not, 2 on an I/O error."""
    from ..validate import validate

    if args.json:
        args.format = "json"
    selection = Selection(frozenset(args.only), frozenset(args.ignore), dict(args.severity), args.max_issues)
    problems: list[Any] = []
    files = _targets(args.paths, problems)
    if not files and not problems:
        raise RlarchiveError("IO_ERROR", "no *.rlarchive file in " + ", ".join(args.paths))
    refused = [f for f in files if special(f)]  # reading a FIFO could block: reported, not validated
    checked = [f for f in files if f not in refused]
    t0 = time.monotonic()
    reports = [selection.apply(validate(f)) for f in checked]
    _print(args, checked, reports, time.monotonic() - t0, selection)
    status = EXIT_OK
    for e in problems:
        say(f"IO_ERROR: cannot list {e.filename}: {e.strerror}", (e.filename,))
        status = EXIT_ERROR
    for f in refused:
        say(f"IO_ERROR: cannot read {f}: it is not a regular file", (f,))
        status = EXIT_ERROR
    for f, r in zip(checked, reports):
        if not r["valid"]:
            # the text report just listed the error: named, not repeated (but an I/O error is said in full)
            listed = args.format == "text" and selection.max_issues != 0
            first = _invalid_line(f, r, listed)
            say(error_line(first, f), (f,))
            status = max(status, exit_status(first.code))
    return status


def add_commands(sub: Any) -> None:
    """Register ``validate`` on the ``rlarchive`` parser's sub-parsers ``sub``."""
    p = sub.add_parser(
        "validate",
        help="check files against the spec; exit 1 if any has errors",
        description="Check files against the spec. Exit status: 0 every file valid, 1 a file has an error (after --only, --ignore "
        "and --severity: so --severity CODE=warning lets CODE pass and --severity CODE=error makes it fail), 2 usage or I/O error.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="an archive, or a folder: every *.rlarchive file under it")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default), json (spec §14), junit (JUnit XML) or sarif (SARIF 2.1.0)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='the same as --format json: a report (one file), or {"reports": [...]} (spec §14)',
    )
    p.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="text: print nothing for a valid file, and only the errors of an invalid one",
    )
    p.add_argument(
        "--max-issues", type=natural, metavar="N", help="list at most N issues per file (the summary counts them all)"
    )
    p.add_argument(
        "--only",
        action="append",
        default=[],
        type=catalogue_code,
        metavar="CODE",
        help="report only the issues of CODE (repeatable)",
    )
    p.add_argument(
        "--ignore",
        action="append",
        default=[],
        type=catalogue_code,
        metavar="CODE",
        help="leave out the issues of CODE (repeatable)",
    )
    p.add_argument(
        "--severity",
        action="append",
        default=[],
        type=severity_override,
        metavar="CODE=LEVEL",
        help="report CODE with the severity LEVEL (error, warning or info; repeatable); the exit status follows",
    )
    p.set_defaults(fn=cmd_validate)
