"""Every report format stays well-formed and safe to show whatever the file names and messages hold.

``validate --format text|json|junit|sarif`` and the conformance harness's
JUnit are given hostile file names (control characters, escape sequences,
bidirectional controls, XML's forbidden characters, bytes that are not
UTF-8) and hostile messages. Each output is parsed with a strict parser and
checked: nothing raw that breaks or disguises a line (SECURITY.md), only XML
1.0 characters in XML, and every name still identifies its file.
"""

import base64
import json
import os
import shutil
import subprocess
import sys
import unicodedata
import urllib.parse
from xml.etree import ElementTree as ET

import pytest
from suite import ROOT
from test_cli_names import unescape

from rlarchive.cli import reports
from rlarchive.conformance.reports import junit_xml, print_matrix, print_summary, write_junit

pytestmark = pytest.mark.skipif(
    os.name != "posix" or sys.getfilesystemencoding() != "utf-8", reason="byte file names as POSIX has them"
)

VALID = os.path.join(ROOT, "test-vectors", "valid", "minimal.rlarchive")
INVALID = os.path.join(ROOT, "test-vectors", "invalid", "json-bom.rlarchive")

#: Hostile text, as UTF-8 (or not) bytes: every C0 control but NUL (which no name holds), DEL and C1 controls,
#: escape sequences, bidirectional and zero-width controls, XML's non-characters and markup, line separators,
#: a tag character, bytes that are not UTF-8, and printable text that must come back as it is.
HOSTILE = [
    bytes(range(1, 32)).replace(b"/", b""),
    b"del \x7f c1 \xc2\x80\xc2\x85\xc2\x9b[2J",
    b"esc \x1b[31mred\x1b]0;title\x07",
    b"bidi \xe2\x80\xae\xe2\x81\xa6\xe2\x80\x8f\xe2\x81\xa9 end",
    b"zero width \xe2\x80\x8b bom \xef\xbb\xbf",
    b"xml non-characters \xef\xbf\xbe \xef\xbf\xbf",
    b'markup ]]> <a href="x"> & \' "',
    b"separators \xe2\x80\xa8 \xe2\x80\xa9 nbsp \xc2\xa0",
    b"tag \xf3\xa0\x81\x81",
    b"not utf8 \xff\xfe \xed\xa0\x80",
    b"plain \xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80",
]


def forbidden(text: str, xml: bool = False) -> list:
    """The characters of ``text`` that must not stand raw in a report: controls but the line break, format
    characters (bidirectional, zero-width), separators other than the space, surrogates; in XML also the two
    non-characters XML 1.0 excludes."""
    return [
        c
        for c in text
        if c != "\n"
        and (
            unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")
            or (unicodedata.category(c) == "Zs" and c != " ")
            or (xml and c in "\ufffe\uffff")
        )
    ]


@pytest.fixture(scope="module")
def hostile_tree(tmp_path_factory):
    """A folder with a valid and an invalid archive under every hostile name; returns (folder, {name bytes: valid})."""
    root = os.fsencode(tmp_path_factory.mktemp("hostile"))
    names = {}
    for text in HOSTILE:
        for valid, src in ((True, VALID), (False, INVALID)):
            path = os.path.join(root, text + (b".ok" if valid else b".bad") + b".rlarchive")
            shutil.copy(src, path)
            names[path] = valid
    return root, names


def validate_cli(fmt: str, root: bytes) -> bytes:
    r = subprocess.run([sys.executable, "-m", "rlarchive", "validate", "--format", fmt, root], capture_output=True)
    assert r.returncode == 1, r.stderr
    err = r.stderr.decode("utf-8")
    assert not forbidden(err)
    return r.stdout


def test_junit_is_well_formed_xml_and_names_each_file_by_its_escaped_form(hostile_tree):
    root, names = hostile_tree
    raw = validate_cli("junit", root)
    doc = ET.fromstring(raw)  # a strict XML 1.0 parser: a raw ESC or U+FFFE would fail here
    text = raw.decode("utf-8")
    assert not forbidden(text, xml=True)
    cases = doc.findall("./testsuite/testcase")
    assert sorted(unescape(c.get("name")) for c in cases) == sorted(names)
    for c in cases:
        assert not forbidden(c.get("name"), xml=True)
        failure = c.find("failure")
        assert (failure is None) == names[unescape(c.get("name"))]
        if failure is not None:
            assert failure.get("message").startswith("JSON_BOM: ") and not forbidden(failure.get("message"), xml=True)


def test_json_holds_no_raw_control_and_gives_back_every_name(hostile_tree):
    root, names = hostile_tree
    raw = validate_cli("json", root)
    text = raw.decode("utf-8")  # strict UTF-8
    assert not forbidden(text)
    doc = json.loads(text)
    got = {}
    for rep in doc["reports"]:
        name = base64.b64decode(rep["file_base64"]) if "file_base64" in rep else rep["file"].encode("utf-8")
        got[name] = rep["valid"]
    assert got == names  # the escapes are JSON's: the parsed report is the report


def test_sarif_holds_no_raw_control_and_its_uris_give_back_every_name(hostile_tree):
    root, names = hostile_tree
    raw = validate_cli("sarif", root)
    text = raw.decode("utf-8")
    assert not forbidden(text)
    (run,) = json.loads(text)["runs"]
    uris = [a["location"]["uri"] for a in run["artifacts"]]
    assert sorted(urllib.parse.unquote_to_bytes(u.removeprefix("file://")) for u in uris) == sorted(names)
    assert all(u.isascii() and not forbidden(u) for u in uris)
    for result in run["results"]:
        assert not forbidden(result["message"]["text"])


def test_text_gives_each_file_one_clean_line(hostile_tree):
    root, names = hostile_tree
    text = validate_cli("text", root).decode("utf-8")
    assert not forbidden(text)
    heads = [line for line in text.split("\n") if line and not line.startswith("  ")]
    assert sorted(unescape(h.rsplit(": ", 1)[0]) for h in heads) == sorted(names)


def _hostile_strings():
    return [os.fsdecode(t) for t in HOSTILE] + ["\x00nul", "\ud800 lone"]


def _report_quoting(s: str) -> dict:
    """A report whose one issue's message and JSON Pointer quote ``s`` (as messages quote keys and values)."""
    return {
        "file": "a.rlarchive",
        "valid": False,
        "summary": {"errors": 1, "warnings": 0, "infos": 0},
        "issues": [
            {"code": "JSON_BOM", "severity": "error", "message": s, "member": "data.json", "pointer": "/data/" + s}
        ],
    }


@pytest.mark.parametrize("s", _hostile_strings())
def test_junit_of_hostile_messages(s):
    xml = reports.junit([_report_quoting(s)], 0.5)
    (failure,) = ET.fromstring(xml).iter("failure")
    assert not forbidden(xml.decode("utf-8"), xml=True) and not forbidden(failure.get("message"), xml=True)


@pytest.mark.parametrize("s", _hostile_strings())
def test_sarif_of_hostile_messages_and_pointers(s):
    """A SARIF viewer shows message texts and logical locations: they are shown text, not raw."""
    log = json.loads(json.dumps(reports.sarif([_report_quoting(s)])))
    (result,) = log["runs"][0]["results"]
    assert not forbidden(result["message"]["text"])
    (logical,) = result["locations"][0]["logicalLocations"]
    assert not forbidden(logical["fullyQualifiedName"]) and not forbidden(logical["name"])


def test_the_conformance_harness_junit_and_matrix_of_a_hostile_reader(tmp_path, capsys):
    """A reader under test answers anything: its name, its version and its messages reach the report escaped."""
    strings = _hostile_strings()
    cases = [{"id": f"case-{i}"} for i in range(len(strings))]
    name = "reader \x1b[2J\u202e\ufffe"
    results = {
        name: {
            **{c["id"]: ("fail", s) for c, s in zip(cases, strings)},
            "__seconds__": 1.0,
            "__info__": {"name": "\x1b]0;x\x07", "version": "\u2066"},
        }
    }
    path = str(tmp_path / "junit.xml")
    write_junit(path, [name], cases, results)
    with open(path, "rb") as f:
        raw = f.read()
    doc = ET.fromstring(raw)
    assert not forbidden(raw.decode("utf-8"), xml=True)
    for element in doc.iter():
        for value in element.attrib.values():
            assert not forbidden(value, xml=True)
    assert len(doc.findall("./testsuite/testcase/failure")) == len(strings)
    assert ET.fromstring(junit_xml("\x1b\ufffe", [("\x0c", 0.0, [("\x01", "\x02", "skipped", "\x03")])])) is not None
    print_matrix(cases, [name], results)
    print_summary(cases, [name], results)
    out = capsys.readouterr().out
    assert not forbidden(out)


def test_json_printed_by_other_commands_holds_no_raw_control(tmp_path):
    """metadata --json, inspect --json and dump --indent print text from the archive: JSON escapes, same values."""
    import numpy as np

    import rlarchive

    text = "x\x1b[2J\u202e\u2066\x85\x7f\u200b\U000e0041 \u00e9\U0001f600"
    p = tmp_path / "strings.rlarchive"
    rlarchive.save(p, {"key " + text: text}, {"policy": {"w": np.ones(2)}}, metadata={"note " + text: text})
    for argv, check in (
        (["metadata", "--json"], lambda doc: doc["note " + text] == text),
        (["inspect", "--json"], lambda doc: doc["metadata"]["note " + text] == text),
        (["dump", "--indent", "2"], lambda doc: doc["data"]["data"]["key " + text] == text),
    ):
        r = subprocess.run([sys.executable, "-m", "rlarchive", *argv, str(p)], capture_output=True)
        assert r.returncode == 0, r.stderr
        out = r.stdout.decode("utf-8")
        assert not forbidden(out), argv
        assert check(json.loads(out)), argv
