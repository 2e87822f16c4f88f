"""The error catalogue: spec/errors.md, the Python catalogue and the spec text agree."""

import os
import re

from suite import ROOT

from rlarchive.errors import API_CODES, CATALOGUE, RlarchiveError


def _table(text: str, heading: str) -> list:
    part = text.split(heading, 1)[1]
    rows = []
    for line in part.splitlines()[2:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0].startswith("---") or cells[0] == "code":
            continue
        rows.append(cells)
    return rows


def test_errors_md_matches_the_python_catalogue():
    with open(os.path.join(ROOT, "spec", "errors.md"), encoding="utf-8") as f:
        text = f.read()
    file_rows = _table(text, "| code | severity | section | when |")
    assert {r[0].strip("`"): r[1] for r in file_rows} == CATALOGUE
    api_rows = _table(text, "## API errors")
    assert {r[0].strip("`") for r in api_rows} == set(API_CODES)


def test_every_file_error_is_named_in_the_spec_text():
    with open(os.path.join(ROOT, "spec", "rlarchive.md"), encoding="utf-8") as f:
        text = f.read()
    named = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", text))
    missing = {c for c in CATALOGUE if c not in named and c != "IO_ERROR"}
    assert missing == set()


def test_unknown_codes_are_refused():
    try:
        RlarchiveError("NOT_A_CODE", "x")
    except ValueError:
        return
    raise AssertionError("an unknown code was accepted")
