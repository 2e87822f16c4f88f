"""The golden vectors: every case gives its expected outcome; coverage of codes and sections."""

import json
import os
import re
import subprocess
import sys

import pytest
from cases import CASES, build_bytes
from suite import ROOT, schema_validator

import rlarchive
from rlarchive.errors import CATALOGUE

VECTORS = os.path.join(ROOT, "test-vectors")
#: error codes no file can trigger, with the reason
NOT_FROM_A_FILE = {"IO_ERROR": "raised when the file cannot be read at all"}


def _index():
    with open(os.path.join(VECTORS, "index.json"), encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reference_reader_outcome(case, tmp_path):
    import gzip

    raw = build_bytes(case)
    if case.gzip:
        raw = gzip.decompress(raw)
    p = tmp_path / "case.rlarchive"
    p.write_bytes(raw)
    if case.request is not None:  # a request case (Annex A.5): the reference testee's answer to its line
        from testee_python import reply_to

        answer = reply_to(case.request().replace(b"$SEQ", b"3").replace(b"$FILE", json.dumps(str(p)).encode()))
        assert answer["seq"] == (None if case.seq_unreadable else 3)
        assert answer.get("code", answer["result"]) == case.expect, answer
    elif case.expect == "actions":  # the reference reader acts as the expected actions say
        from generate import check_predict

        check_predict(case, raw)
    elif case.expect == "dump":
        with rlarchive.open(p, spaces="neutral") as ar:
            ar.dump()
        report = rlarchive.validate(p)
        assert report["valid"]
        assert sorted(i["code"] for i in report["issues"]) == sorted(case.warnings)
    else:
        with pytest.raises(rlarchive.RlarchiveError) as e:
            with rlarchive.open(p, spaces="neutral") as ar:
                ar.dump()
        assert e.value.code == case.expect
        report = rlarchive.validate(p)
        assert not report["valid"]
        assert case.expect in [i["code"] for i in report["issues"] if i["severity"] == "error"]


def test_index_validates_against_its_schema():
    schema_validator("test-vectors-index-1.schema.json").validate(_index())


def _with_case(index, **changes):
    """The index with its first case changed (a value None: the member removed)."""
    case = {k: v for k, v in {**index["cases"][0], **changes}.items() if v is not None}
    return {**index, "cases": [case, *index["cases"][1:]]}


def test_the_harness_exits_clearly_on_an_index_it_cannot_run_which_the_schema_refuses_too(tmp_path):
    """The harness checks what it runs of index.json itself (no schema at run time): each index it refuses
    breaks the index schema as well, and load_cases says why instead of a traceback."""
    from rlarchive.conformance import _index_issue, load_cases

    index = _index()
    assert _index_issue(index) is None
    validator = schema_validator("test-vectors-index-1.schema.json")
    broken = [
        [],
        {**index, "format": "rlarchive"},
        {**index, "version": 2},
        {**index, "cases": []},
        {**index, "cases": [1]},
        _with_case(index, id=None),
        _with_case(index, file=None),
        _with_case(index, file="../../outside.rlarchive"),
        _with_case(index, file="valid/x.zip"),
        _with_case(index, request_file="/tmp/x.request"),
        _with_case(index, expect=None),
        _with_case(index, expect={"result": "dump"}),
        _with_case(index, expect={"result": "maybe", "code": "X"}),
        _with_case(index, expect={"result": ["dump"], "dump_file": "x"}),
        _with_case(index, expect={"result": "error", "code": 1}),
    ]
    for b in broken:
        assert _index_issue(b) is not None, b if not isinstance(b, dict) else b["cases"][:1]
        assert not validator.is_valid(b)
    (tmp_path / "index.json").write_text(json.dumps(_with_case(index, file="../../outside.rlarchive")))
    with pytest.raises(SystemExit, match=r"index.json: case .*: file must match"):
        load_cases(str(tmp_path))


def test_every_error_code_has_an_invalid_vector():
    codes = {
        c["expect"]["code"] for c in _index()["cases"] if c["expect"]["result"] == "error" and "request_file" not in c
    }
    errors = {c for c, sev in CATALOGUE.items() if sev == "error"} - set(NOT_FROM_A_FILE)
    assert errors - codes == set()
    assert codes - set(CATALOGUE) == set()


def test_every_warning_code_is_exercised():
    warned = {w for c in _index()["cases"] for w in c.get("warnings", [])}
    assert {c for c, sev in CATALOGUE.items() if sev != "error"} - warned == set()


def test_every_normative_section_is_cited():
    with open(os.path.join(ROOT, "spec", "rlarchive.md"), encoding="utf-8") as f:
        text = f.read()
    sections = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?) ", text, re.M))
    # sections that only point elsewhere or describe the document itself; §11.4 (remote sources) is about
    # requests, not file contents: its rules are tested against local servers (test_remote_deadlines.py, deadlines.test.mjs)
    informative = {"1", "1.1", "1.2", "1.3", "16", "11", "11.2", "11.3", "11.4", "14"}
    cited = set()
    for c in _index()["cases"]:
        for s in c["spec"]:
            cited.add(s.lstrip("§"))
            cited.add(s.lstrip("§").split(".")[0])
    missing = sorted(s for s in sections - informative if s not in cited)
    assert missing == []


@pytest.mark.slow
@pytest.mark.stage("generate-check")
def test_vectors_are_reproducible_byte_for_byte():
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tests", "vectors", "generate.py"), "--check", VECTORS],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_vector_folder_is_small():
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(VECTORS) for f in fs)
    assert total < 10 * 1024 * 1024


@pytest.mark.parametrize("case", [c for c in CASES if c.expect == "dump"], ids=lambda c: c.id)
def test_valid_vectors_match_the_schemas(case):
    import zipfile

    with zipfile.ZipFile(os.path.join(VECTORS, case.file)) as z:
        schema_validator("manifest-1.0.schema.json").validate(json.loads(z.read("manifest.json")))
        schema_validator("data-1.0.schema.json").validate(json.loads(z.read("data.json")))
    with open(os.path.join(VECTORS, "valid", f"{case.id}.dump.json"), encoding="utf-8") as f:
        schema_validator("dump-1.0.schema.json").validate(json.load(f))


def test_every_normative_section_of_each_extension_is_cited():
    cited = {s for c in _index()["cases"] for s in c["spec"]}
    folder = os.path.join(ROOT, "spec", "extensions")
    for name in sorted(os.listdir(folder)):
        ext = name[: -len(".md")]
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            sections = re.findall(r"^## (\d+)\. ", f.read(), re.M)
        informative = {"1", "2"}  # purpose, and why it is an extension
        missing = [s for s in sections if s not in informative and f"{ext} §{s}" not in cited]
        assert missing == [], f"{ext}: sections {missing} have no vector"
