"""rlarchive conformance names an outside reader after its handshake unless --reader-name says otherwise."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

from suite import ROOT

from rlarchive.conformance import handshake_name

VECTORS = os.path.join(ROOT, "test-vectors")


def _two_cases(tmp_path) -> str:
    """A vectors folder with two cases of the real index (the harness's --vectors)."""
    with open(os.path.join(VECTORS, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    wanted = [c for c in index["cases"] if c["id"] in ("minimal", "member-unlisted")]
    assert len(wanted) == 2
    for c in wanted:
        os.makedirs(tmp_path / "v" / os.path.dirname(c["file"]), exist_ok=True)
        shutil.copy(os.path.join(VECTORS, c["file"]), tmp_path / "v" / c["file"])
        for key in ("dump_file",):
            if key in c["expect"]:
                shutil.copy(os.path.join(VECTORS, c["expect"][key]), tmp_path / "v" / c["expect"][key])
    (tmp_path / "v" / "index.json").write_text(json.dumps(dict(index, cases=wanted)))
    return str(tmp_path / "v")


def _reader(tmp_path, name) -> str:
    """An outside reader whose handshake gives ``name`` and that answers every request with an error."""
    p = tmp_path / "reader.py"
    p.write_text(
        textwrap.dedent(f"""
        import json, sys
        for line in sys.stdin:
            req = json.loads(line)
            if req["cmd"] == "start":
                print(json.dumps({{"ok": True, "protocol": 1, "reader": {{"name": {name!r}, "version": "9.9"}}}}), flush=True)
            elif req["cmd"] == "stop":
                break
            else:
                print(json.dumps({{"seq": req["seq"], "result": "error", "code": "IO_ERROR"}}), flush=True)
    """)
    )
    return f"{sys.executable} {p}"


def _summary(tmp_path, *argv) -> list:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlarchive",
            "conformance",
            "--vectors",
            _two_cases(tmp_path),
            "--generated",
            "0",
            *argv,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr  # the reader answers wrongly
    lines = r.stdout.splitlines()
    return [lines[0]] + [
        line for line in lines if "passed," in line and "failed" in line and not line.startswith("conformance:")
    ]


def test_the_handshake_names_the_reader(tmp_path):
    header, summary = _summary(tmp_path, "--reader-cmd", _reader(tmp_path, "my-reader"))
    assert header.split()[1:] == ["my-reader"] and summary.startswith("my-reader (my-reader 9.9): ")


def test_reader_name_wins_and_an_odd_name_is_one_word(tmp_path):
    header, summary = _summary(tmp_path, "--reader-cmd", _reader(tmp_path, "my-reader"), "--reader-name", "mine")
    assert header.split()[1:] == ["mine"] and summary.startswith("mine (my-reader 9.9): ")
    assert (
        handshake_name({"name": "a b\n\x1b[31m\u202e"}) == "a_b__[31m_"
    )  # space, line break, ESC and U+202E each become _
    assert handshake_name({"name": 3}) == handshake_name({}) == handshake_name(None) == ""
