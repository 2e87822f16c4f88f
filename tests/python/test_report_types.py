"""The report's types (rlarchive.report) are the report schema's shape, and the JavaScript reader's are the same."""

import json
import os
import re

import pytest
from suite import ROOT

import rlarchive
from rlarchive import report

with open(os.path.join(ROOT, "schemas", "report-1.0.schema.json"), encoding="utf-8") as _f:
    SCHEMA = json.load(_f)
with open(os.path.join(ROOT, "reader-js", "index.d.ts"), encoding="utf-8") as _f:
    DECLARATIONS = _f.read()

REPORT = SCHEMA["$defs"]["report"]
# each type, the schema object it stands for, and the TypeScript interface (or inline type) of index.d.ts
CASES = [
    (report.Report, REPORT, "Report"),
    (report.Issue, REPORT["properties"]["issues"]["items"], "Issue"),
    (report.Summary, REPORT["properties"]["summary"], None),
    (report.ValidatorInfo, REPORT["properties"]["validator"], None),
]


def _keys(obj: dict) -> tuple[set, set]:
    required = set(obj.get("required", []))
    return required, set(obj["properties"]) - required


def _interface(name: str) -> tuple[set, set]:
    body = re.search(r"export interface " + name + r" \{(.*?)\n\}", DECLARATIONS, re.S)
    assert body, name
    members = re.findall(r"^  (\w+)(\??):", body.group(1), re.M)
    return {m for m, q in members if not q}, {m for m, q in members if q}


@pytest.mark.parametrize("typed, schema, interface", CASES, ids=[c[0].__name__ for c in CASES])
def test_each_type_has_the_schemas_keys(typed, schema, interface):
    assert (set(typed.__required_keys__), set(typed.__optional_keys__)) == _keys(schema)
    if interface is not None:
        assert _interface(interface) == _keys(schema)


def test_validate_returns_that_shape(tmp_path):
    bad = tmp_path / "bad.rlarchive"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    for path in (os.path.join(ROOT, "test-vectors", "valid", "minimal.rlarchive"), str(bad)):
        got = rlarchive.validate(path)
        assert set(report.Report.__required_keys__) <= set(got) <= set(report.Report.__annotations__)
        for issue in got["issues"]:
            assert set(report.Issue.__required_keys__) <= set(issue) <= set(report.Issue.__annotations__)
            assert issue["severity"] in ("error", "warning", "info")
