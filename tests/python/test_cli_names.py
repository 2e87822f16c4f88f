"""File names and archive strings in the command's output (spec §14).

A POSIX file name is bytes: it may be invalid UTF-8 or hold line breaks,
escape sequences, bidirectional controls. Text output shows each name in its
escaped form (one file, one line, nothing that breaks or disguises a line);
JSON output is valid UTF-8 and gives back every name's bytes exactly.
"""

import base64
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from suite import ROOT, schema_validator

import rlarchive
from rlarchive.filenames import escape_name, is_utf8_text, printable, report_fields

pytestmark = pytest.mark.skipif(
    os.name != "posix" or sys.getfilesystemencoding() != "utf-8", reason="byte file names as POSIX has them"
)

CLI = [sys.executable, "-m", "rlarchive.cli"]
VALID = os.path.join(ROOT, "test-vectors", "valid", "minimal.rlarchive")
INVALID = os.path.join(ROOT, "test-vectors", "invalid", "json-bom.rlarchive")

#: Names (bytes, without "/") that break lines, are not UTF-8 or disguise themselves.
ODD = [
    b"new\nforged.rlarchive: valid (0 errors, 0 warnings, 0 infos)\nx.rlarchive",
    b"\xff\xfe not utf8.rlarchive",
    b"cut \xe2\x82.rlarchive",  # a truncated sequence
    b"surrogate \xed\xa0\x80.rlarchive",  # an encoded surrogate is not UTF-8 either
    b"esc \x1b[2J\x1b]0;title\x07.rlarchive",
    b"  error   ZIP_GAP: looks like an issue line.rlarchive",
    b"back\\nslash.rlarchive",
    b"cr\r.rlarchive",
    b"bidi \xe2\x80\xaelevihcra.rlarchive",  # U+202E RIGHT-TO-LEFT OVERRIDE
    b"line sep \xe2\x80\xa8 nel \xc2\x85 nbsp \xc2\xa0.rlarchive",
    b"plain \xc3\xa9t\xc3\xa9.rlarchive",  # valid UTF-8, printed as it is
]


def unescape(text: str) -> bytes:
    """The inverse of the escaped form (spec §14), written from the spec's rules."""
    out, i = bytearray(), 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        kind = text[i + 1]
        if kind == "\\":
            out += b"\\"
            i += 2
        elif kind == "x":
            out.append(int(text[i + 2 : i + 4], 16))
            i += 4
        elif kind == "u":
            out += chr(int(text[i + 2 : i + 6], 16)).encode("utf-8")
            i += 6
        elif kind == "U":
            out += chr(int(text[i + 2 : i + 10], 16)).encode("utf-8")
            i += 10
        else:
            raise AssertionError(f"no escape \\{kind} in the spec")
    return bytes(out)


def one_clean_line(text: str) -> bool:
    """Printable text on one line: no control, format or separator character but the space."""
    return not re.search(r"[\x00-\x1f\x7f-\x9f\u00a0\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]", text)


def test_the_escaped_form_of_each_kind_of_character():
    assert escape_name(b"a.rlarchive") == "a.rlarchive"
    assert escape_name("été.rlarchive") == "été.rlarchive"
    assert escape_name(b"a\nb") == "a\\u000ab"
    assert escape_name(b"\xff") == "\\xff"
    assert escape_name(b"\xed\xa0\x80") == "\\xed\\xa0\\x80"
    assert escape_name(b"a\\b") == "a\\\\b"
    assert escape_name(b" a b ") == "\\u0020a b "
    assert escape_name(b"\xe2\x80\xae") == "\\u202e"
    assert escape_name(b"\xc2\x85") == "\\u0085"
    assert escape_name("\U000e0041") == "\\U000e0041"  # a tag character (category Cf)
    assert escape_name(os.fsdecode(b"x\xff")) == "x\\xff", "a str from the OS stands for the same bytes"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40), st.binary(max_size=40))
def test_the_escaped_form_is_one_line_and_tells_names_apart(a, b):
    ea, eb = escape_name(a), escape_name(b)
    assert one_clean_line(ea) and not ea.startswith(" ")
    assert unescape(ea) == a
    assert (ea == eb) == (a == b)
    fields = report_fields(a)
    assert json.dumps(fields, ensure_ascii=False).encode("utf-8")
    assert (base64.b64decode(fields["file_base64"]) if "file_base64" in fields else fields["file"].encode("utf-8")) == a
    assert ("file_base64" in fields) == (not is_utf8_text(a))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_printable_text_is_one_line(text):
    shown = printable(text)
    assert one_clean_line(shown) and len(shown.splitlines()) <= 1


@pytest.fixture(scope="module")
def odd_tree(tmp_path_factory):
    """A folder with a valid and an invalid archive under every odd name (as bytes)."""
    root = os.fsencode(tmp_path_factory.mktemp("names"))
    names = []
    for i, raw in enumerate(ODD):
        src = INVALID if i % 2 else VALID
        path = os.path.join(root, raw)
        shutil.copy(src, path)
        names.append(path)
    return root, names


def run(*argv, env=None):
    return subprocess.run([*CLI, *argv], capture_output=True, env={**os.environ, **(env or {})})


def test_validate_text_output_gives_each_file_one_line(odd_tree):
    root, names = odd_tree
    r = run("validate", os.fsdecode(root))
    assert r.returncode == 1
    out = r.stdout.decode("utf-8")  # strict: valid UTF-8
    lines = out.splitlines()  # str.splitlines breaks at U+2028, U+0085... too
    heads = [line for line in lines if not line.startswith("  ")]
    assert sorted(h.rsplit(": ", 1)[0] for h in heads) == sorted(escape_name(p) for p in names)
    assert all(one_clean_line(line) for line in lines)
    for h in heads:
        assert unescape(h.rsplit(": ", 1)[0]) in names
    err = r.stderr.decode("utf-8").splitlines()
    assert len(err) == sum(1 for i in range(len(ODD)) if i % 2), r.stderr
    assert all(one_clean_line(line) and line.startswith("rlarchive: JSON_BOM: ") for line in err)


def test_validate_json_output_is_utf8_and_gives_back_every_name(odd_tree):
    root, names = odd_tree
    r = run("validate", "--json", os.fsdecode(root))
    doc = json.loads(r.stdout.decode("utf-8"))  # strict: valid UTF-8
    schema_validator("report-1.0.schema.json").validate(doc)
    got = []
    for rep in doc["reports"]:
        if "file_base64" in rep:
            raw = base64.b64decode(rep["file_base64"], validate=True)
            assert rep["file"] == escape_name(raw)
            assert not is_utf8_text(raw)
        else:
            raw = rep["file"].encode("utf-8")
        got.append(raw)
    assert sorted(got) == sorted(names)
    plain = next(rep for rep in doc["reports"] if rep["file"].endswith("plain été.rlarchive"))
    assert "file_base64" not in plain


def test_one_named_file_and_the_api_report(odd_tree):
    _, names = odd_tree
    name = next(n for n in names if b"\xff" in n)
    r = run("validate", "--json", os.fsdecode(name))
    rep = json.loads(r.stdout.decode("utf-8"))
    assert base64.b64decode(rep["file_base64"]) == name
    api = rlarchive.validate(os.fsdecode(name))
    assert api["file"] == rep["file"] and api["file_base64"] == rep["file_base64"]
    json.dumps(api, ensure_ascii=False).encode("utf-8")  # no lone surrogate left


def test_an_unreadable_odd_name_in_a_report_message(tmp_path):
    """A FIFO with an odd name: the message naming it is one line, valid UTF-8, with the escaped name."""
    root = os.fsencode(tmp_path)
    fifo = os.path.join(root, b"fifo\n\xff.rlarchive")
    os.mkfifo(fifo)
    r = run("validate", os.fsdecode(root))
    assert r.returncode == 2
    err = r.stderr.decode("utf-8").splitlines()
    assert len(err) == 1 and escape_name(fifo) in err[0], err


@pytest.mark.slow
def test_other_commands_escape_names(odd_tree, tmp_path):
    _, names = odd_tree
    for i, name in enumerate(names):
        shown = escape_name(name)
        if i % 2 == 0:  # valid: inspect prints the name first
            r = run("inspect", os.fsdecode(name))
            assert r.returncode == 0, r.stderr
            assert r.stdout.decode("utf-8").splitlines()[0] == shown
        for argv in ([["dump", os.fsdecode(name)]] if i % 2 else []) + [
            ["import-sb3", os.fsdecode(name), str(tmp_path / "o.rlarchive")]
        ]:
            r = run(*argv)
            assert r.returncode != 0
            err = r.stderr.decode("utf-8").splitlines()
            assert len(err) == 1 and one_clean_line(err[0]), (argv, err)
    missing = os.path.join(os.fsencode(tmp_path), b"gone\n\xfe.rlarchive")
    r = run("inspect", os.fsdecode(missing))
    err = r.stderr.decode("utf-8").splitlines()
    assert r.returncode == 2 and len(err) == 1 and escape_name(missing) in err[0]


def test_inspect_escapes_the_archive_strings_it_prints(tmp_path):
    p = tmp_path / "strings.rlarchive"
    rlarchive.save(
        p,
        {"key\x1b]0;title\x07\nforged": 1},
        {"policy": {"w\n  error   ZIP_GAP: forged\u202e": np.ones(2)}},
        metadata={"note\x1b[2J": "first\x1b[31m line\nsecond"},
    )
    r = run("inspect", "--all", str(p))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode("utf-8").splitlines()
    assert all(one_clean_line(line) for line in lines)
    assert not any("ZIP_GAP" in line and line.startswith("  error") for line in lines)
    assert any("key\\u001b]0;title\\u0007\\u000aforged" in line for line in lines)
