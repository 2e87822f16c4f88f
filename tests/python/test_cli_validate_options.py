"""validate's options: --quiet, --max-issues, --only/--ignore, --severity, and the formats json, junit (the conformance
command's writer) and sarif (SARIF 2.1.0); an invalid file's error is printed once."""

import json
import os
from xml.etree import ElementTree as ET

import pytest
from suite import ROOT, schema_validator

import rlarchive
from rlarchive.cli import main
from rlarchive.errors import CATALOGUE

VECTORS = os.path.join(ROOT, "test-vectors")
MINIMAL = os.path.join(VECTORS, "valid", "minimal.rlarchive")
WARNINGS = os.path.join(
    VECTORS, "valid", "location-st-bool-warnings-in-header-order.rlarchive"
)  # two ST_BOOL_VALUE warnings
UNLISTED = os.path.join(VECTORS, "invalid", "member-unlisted.rlarchive")  # MEMBER_UNLISTED, with a member
GAP = os.path.join(VECTORS, "invalid", "zip-gap-before-member.rlarchive")  # ZIP_GAP, with a byte offset
POINTER = os.path.join(
    VECTORS, "valid", "metadata-invalid-count.rlarchive"
)  # METADATA_INVALID warning: member and pointer


def _run(capsys, *argv):
    status = main(["validate", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_files_hold_what_these_tests_rely_on():
    assert [i["code"] for i in rlarchive.validate(WARNINGS)["issues"]] == ["ST_BOOL_VALUE", "ST_BOOL_VALUE"]
    assert [i["code"] for i in rlarchive.validate(UNLISTED)["issues"]] == ["MEMBER_UNLISTED"]
    (gap,) = rlarchive.validate(GAP)["issues"]
    assert "offset" in gap
    (meta,) = rlarchive.validate(POINTER)["issues"]
    assert "member" in meta and "pointer" in meta and meta["severity"] == "warning"


def test_an_invalid_file_error_is_printed_once(capsys):
    """The text report lists the error; the line on standard error names its code and the file, without repeating it
    (pre-commit shows both streams together)."""
    status, out, err = _run(capsys, UNLISTED)
    (message,) = [i["message"] for i in rlarchive.validate(UNLISTED)["issues"]]
    assert status == 1 and (out + err).count(message) == 1
    assert err.startswith("rlarchive: MEMBER_UNLISTED: ") and err.count("\n") == 1 and "listed above" in err
    status, out, err = _run(capsys, "--json", UNLISTED)  # standard output is for tools: the line says it in full
    assert status == 1 and message in err


def test_quiet_prints_only_the_errors_of_invalid_files(capsys):
    assert _run(capsys, "--quiet", MINIMAL, WARNINGS, POINTER) == (0, "", "")
    status, out, err = _run(capsys, "-q", MINIMAL, UNLISTED, WARNINGS)
    lines = out.splitlines()
    assert (
        status == 1
        and len(lines) == 2
        and lines[0].startswith(UNLISTED + ": INVALID")
        and "MEMBER_UNLISTED" in lines[1]
    )


def test_max_issues_lists_the_first_n_and_counts_them_all(capsys):
    status, out, _ = _run(capsys, "--max-issues", "1", WARNINGS)
    lines = out.splitlines()
    assert (
        status == 0
        and "2 warnings" in lines[0]
        and len(lines) == 3
        and "ST_BOOL_VALUE" in lines[1]
        and "1 more" in lines[2]
    )
    status, out, _ = _run(capsys, "--max-issues", "1", "--json", WARNINGS)
    doc = json.loads(out)
    schema_validator("report-1.0.schema.json").validate(doc)
    assert len(doc["issues"]) == 1 and doc["summary"]["warnings"] == 2
    status, out, err = _run(capsys, "--max-issues", "0", UNLISTED)
    assert status == 1 and "MEMBER_UNLISTED" not in out and "is not listed" in err  # not listed above: said in full


def test_only_and_ignore_select_codes(capsys):
    status, out, _ = _run(capsys, "--json", "--ignore", "MEMBER_UNLISTED", UNLISTED)
    doc = json.loads(out)
    assert status == 0 and doc["valid"] and doc["issues"] == [] and doc["summary"]["errors"] == 0
    status, out, _ = _run(capsys, "--json", "--only", "ZIP_GAP", "--only", "ST_BOOL_VALUE", UNLISTED, WARNINGS)
    reports = json.loads(out)["reports"]
    assert status == 0 and [len(r["issues"]) for r in reports] == [0, 2]
    status, out, _ = _run(capsys, "--json", "--only", "ST_BOOL_VALUE", "--ignore", "ST_BOOL_VALUE", WARNINGS)
    assert json.loads(out)["issues"] == []


@pytest.mark.parametrize(
    "argv",
    [
        ["--ignore", "NOT_A_CODE"],
        ["--only", "member_unlisted"],
        ["--severity", "MEMBER_UNLISTED=fatal"],
        ["--severity", "NOPE=error"],
        ["--severity", "MEMBER_UNLISTED"],
        ["--max-issues", "-1"],
        ["--format", "xml"],
    ],
)
def test_an_unknown_code_or_level_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(["validate", *argv, MINIMAL])
    assert e.value.code == 2 and "Traceback" not in capsys.readouterr().err


def test_severity_overrides_decide_the_exit_status(capsys):
    status, out, err = _run(capsys, "--severity", "MEMBER_UNLISTED=warning", UNLISTED)
    assert status == 0 and err == "" and "valid (0 errors, 1 warning," in out and "warning MEMBER_UNLISTED" in out
    status, out, err = _run(capsys, "--severity", "ST_BOOL_VALUE=error", WARNINGS)
    assert status == 1 and "INVALID (2 errors, 0 warnings" in out and err.startswith("rlarchive: ST_BOOL_VALUE: ")
    status, out, _ = _run(capsys, "--json", "--severity", "ST_BOOL_VALUE=info", WARNINGS)
    doc = json.loads(out)
    schema_validator("report-1.0.schema.json").validate(doc)
    assert doc["summary"] == {"errors": 0, "warnings": 0, "infos": 2} and {i["severity"] for i in doc["issues"]} == {
        "info"
    }


def test_junit_is_the_conformance_command_s_writer(capsys, monkeypatch):
    status, out, _ = _run(capsys, "--format", "junit", MINIMAL, UNLISTED, WARNINGS)
    assert status == 1
    root = ET.fromstring(out.encode("utf-8"))
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert root.tag == "testsuites" and suite.get("tests") == "3" and suite.get("failures") == "1"
    assert [c.get("name") for c in cases] == [MINIMAL, UNLISTED, WARNINGS]
    (failure,) = [f for c in cases for f in c.findall("failure")]
    assert failure.get("message").startswith("MEMBER_UNLISTED: ") and cases[1].find("failure") is failure
    from rlarchive import conformance

    monkeypatch.setattr(conformance, "junit_xml", lambda title, suites: b"<written-by-conformance/>")
    assert _run(capsys, "--format", "junit", MINIMAL)[1] == "<written-by-conformance/>\n"


#: What SARIF consumers require of a log (SARIF 2.1.0 §3.13-§3.33, and code-scanning services' own checks) that this
#: output relies on: the version, one run with its tool's driver and rules, each result with a rule id, a level, a
#: message text and a location in an artifact; a region's byte offset is an integer >= 0.
SARIF_REQUIRED = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "$schema": {"type": "string", "format": "uri"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name", "rules"],
                                "properties": {
                                    "name": {"type": "string", "minLength": 1},
                                    "version": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id"],
                                            "properties": {
                                                "id": {"type": "string"},
                                                "shortDescription": {"type": "object", "required": ["text"]},
                                                "defaultConfiguration": {
                                                    "type": "object",
                                                    "properties": {
                                                        "level": {"enum": ["none", "note", "warning", "error"]}
                                                    },
                                                },
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "artifacts": {"type": "array", "items": {"type": "object", "required": ["location"]}},
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["ruleId", "level", "message", "locations"],
                            "properties": {
                                "ruleId": {"type": "string"},
                                "ruleIndex": {"type": "integer", "minimum": 0},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {
                                    "type": "object",
                                    "required": ["text"],
                                    "properties": {"text": {"type": "string"}},
                                },
                                "locations": {
                                    "type": "array",
                                    "minItems": 1,
                                    "items": {
                                        "type": "object",
                                        "required": ["physicalLocation"],
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "required": ["artifactLocation"],
                                                "properties": {
                                                    "artifactLocation": {
                                                        "type": "object",
                                                        "required": ["uri"],
                                                        "properties": {
                                                            "uri": {"type": "string", "format": "uri-reference"},
                                                            "index": {"type": "integer", "minimum": 0},
                                                        },
                                                    },
                                                    "region": {
                                                        "type": "object",
                                                        "minProperties": 1,
                                                        "properties": {"byteOffset": {"type": "integer", "minimum": 0}},
                                                    },
                                                },
                                            },
                                            "logicalLocations": {
                                                "type": "array",
                                                "items": {"type": "object", "required": ["fullyQualifiedName"]},
                                            },
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def test_sarif_has_what_consumers_require(capsys, monkeypatch):
    import jsonschema

    monkeypatch.chdir(ROOT)  # relative names: relative references
    files = [os.path.relpath(f, ROOT) for f in (MINIMAL, UNLISTED, GAP, POINTER)]
    status, out, _ = _run(capsys, "--format", "sarif", *files)
    log = json.loads(out)
    jsonschema.Draft202012Validator(SARIF_REQUIRED, format_checker=jsonschema.FormatChecker()).validate(log)
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert status == 1 and [r["id"] for r in rules] == list(CATALOGUE)  # the rule table is the error catalogue
    want = [(f, i) for f in files for i in rlarchive.validate(f)["issues"]]
    assert len(run["results"]) == len(want) and [a["location"]["uri"] for a in run["artifacts"]] == [
        f.replace(os.sep, "/") for f in files
    ]
    for result, (f, issue) in zip(run["results"], want):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == issue["code"]
        assert result["message"]["text"] == issue["message"]
        assert result["level"] == {"error": "error", "warning": "warning", "info": "note"}[issue["severity"]]
        (loc,) = result["locations"]
        artifact = loc["physicalLocation"]["artifactLocation"]
        assert artifact["uri"] == f.replace(os.sep, "/") and run["artifacts"][artifact["index"]]["location"]["uri"] == f
        assert loc["physicalLocation"].get("region", {}).get("byteOffset") == issue.get("offset")
        names = [x["fullyQualifiedName"] for x in loc.get("logicalLocations", [])]
        member = issue.get("member", "") + ("#" + issue["pointer"] if "pointer" in issue else "")
        assert names == ([member] if member else [])


def test_sarif_uri_of_an_absolute_name_with_odd_bytes(tmp_path, capsys):
    import shutil
    import urllib.parse

    odd = os.path.join(os.fsencode(tmp_path), b"a b\xff%.rlarchive")
    shutil.copy(MINIMAL, odd)
    status, out, _ = _run(capsys, "--format", "sarif", os.fsdecode(odd))
    (artifact,) = json.loads(out)["runs"][0]["artifacts"]
    uri = artifact["location"]["uri"]
    assert status == 0 and uri.startswith("file:///") and " " not in uri
    assert urllib.parse.unquote_to_bytes(uri.removeprefix("file://")) == odd


def test_a_call_that_changes_its_options_lists_changes_no_later_call(capsys, monkeypatch):
    """main's parser is built once per process: each call gets its own lists (a repeatable option's default)."""
    import rlarchive.cli as cli

    seen = []
    parse = cli._parse

    def parse_and_spoil(argv):
        args = parse(argv)
        seen.append(args)
        args.only.append("ZIP_GAP")  # what a command changing its argument would do
        return args

    monkeypatch.setattr(cli, "_parse", parse_and_spoil)
    _run(capsys, MINIMAL)
    _run(capsys, MINIMAL)
    assert [a.only for a in seen] == [["ZIP_GAP"], ["ZIP_GAP"]]  # the second started empty again
    assert cli._parser() is cli._parser()
