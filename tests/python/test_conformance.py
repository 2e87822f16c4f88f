"""The conformance harness judges strictly: wrong readers, crashing readers and stale xfail lists fail it."""
import json
import os
import subprocess
import sys
import textwrap

from suite import ROOT

RUN = os.path.join(ROOT, "tests", "conformance", "run")
TESTEE = os.path.join(ROOT, "tests", "conformance", "testee_python.py")


def _harness(*args, timeout=300):
    return subprocess.run([sys.executable, RUN, "--quiet", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def _liar(tmp_path, body: str, extensions: tuple = (), setup: str = "", requests: tuple = ()) -> str:
    """A testee that wraps the reference reader and then misbehaves as ``body`` says (``setup`` runs first)."""
    p = tmp_path / "liar.py"
    p.write_text(
        textwrap.dedent(
            f"""
            import json, sys, runpy
            sys.path.insert(0, {os.path.dirname(TESTEE)!r})
            import rlarchive
            {setup}
            for line in sys.stdin:
                req = json.loads(line)
                if req["cmd"] == "start":
                    print(json.dumps({{"ok": True, "protocol": 1, "reader": {{"name": "liar", "version": "0", "language": "python"}}, "extensions": {list(extensions)!r}, "requests": {list(requests)!r}}}), flush=True)
                    continue
                if req["cmd"] == "stop":
                    break
                if req["cmd"] == "validate":
                    reply = {{"seq": req["seq"], "result": "report", "report": rlarchive.validate(req["file"])}}
                else:
                    try:
                        with rlarchive.open(req["file"], spaces="neutral") as ar:
                            reply = {{"seq": req["seq"], "result": "dump", "dump": ar.dump().decode()}}
                    except rlarchive.RlarchiveError as e:
                        reply = {{"seq": req["seq"], "result": "error", "code": e.code}}
            {textwrap.indent(textwrap.dedent(body), " " * 16)}
                print(json.dumps(reply), flush=True)
            """
        )
    )
    return f"{sys.executable} {p}"


def test_reference_reader_passes_everything():
    r = _harness("--readers", "python")
    assert r.returncode == 0, r.stdout[-3000:]
    assert "0 failed" in r.stdout


def test_wrong_error_code_fails_the_run(tmp_path):
    cmd = _liar(tmp_path, """
        if reply.get("code") == "ZIP_GAP":
            reply["code"] = "ZIP_OVERLAP"
    """)
    r = _harness("--reader-cmd", cmd, "--reader-name", "liar")
    assert r.returncode == 1
    assert "zip-gap-before-member" in r.stdout and "expected ZIP_GAP, got ZIP_OVERLAP" in r.stdout


def test_one_byte_off_dump_fails_the_run(tmp_path):
    cmd = _liar(tmp_path, """
        if reply.get("result") == "dump":
            reply["dump"] = reply["dump"].replace("0.99", "0.98", 1)
    """)
    r = _harness("--reader-cmd", cmd, "--reader-name", "liar")
    assert r.returncode == 1 and "dump differs" in r.stdout


def test_crashing_reader_fails_but_the_run_goes_on(tmp_path):
    cmd = _liar(tmp_path, """
        if "json-bom" in req["file"]:
            sys.exit(3)
    """)
    r = _harness("--reader-cmd", cmd, "--reader-name", "liar")
    assert r.returncode == 1
    assert "CRASH" in r.stdout and "1 failed" in r.stdout  # only that case; the reader was restarted


def test_hanging_reader_times_out(tmp_path):
    cmd = _liar(tmp_path, """
        if "json-bom" in req["file"]:
            import time; time.sleep(60)
    """)
    r = _harness("--reader-cmd", cmd, "--reader-name", "liar", "--timeout", "2")
    assert r.returncode == 1 and "TIMEOUT" in r.stdout


def test_xfail_list_never_goes_stale(tmp_path):
    xf = tmp_path / "xfail.json"
    xf.write_text(json.dumps({"json-bom": "pretend we cannot read BOMs"}))
    r = _harness("--reader-cmd", f"{sys.executable} {TESTEE}", "--xfail", str(xf))
    assert r.returncode == 1 and "XPASS" in r.stdout
    cmd = _liar(tmp_path, """
        if "json-bom" in req["file"]:
            reply = {"seq": req["seq"], "result": "error", "code": "JSON_SYNTAX"}
    """)
    r = _harness("--reader-cmd", cmd, "--xfail", str(xf))
    assert r.returncode == 0, r.stdout[-2000:]


def test_outside_vector_folder(tmp_path):
    import shutil

    src = os.path.join(ROOT, "test-vectors")
    dst = tmp_path / "vectors"
    shutil.copytree(src, dst)
    index = json.loads((dst / "index.json").read_text())
    index["cases"] = index["cases"][:5]
    (dst / "index.json").write_text(json.dumps(index))
    r = _harness("--reader-cmd", f"{sys.executable} {TESTEE}", "--vectors", str(dst))
    assert r.returncode == 0 and "5 passed, 0 failed" in r.stdout


def _extension_cases() -> list:
    with open(os.path.join(ROOT, "test-vectors", "index.json"), encoding="utf-8") as f:
        return [c for c in json.load(f)["cases"] if c.get("extensions")]


def test_extension_cases_run_only_for_readers_that_declare_the_extension(tmp_path):
    n = len(_extension_cases())
    with open(os.path.join(ROOT, "test-vectors", "index.json"), encoding="utf-8") as f:
        total = len(json.load(f)["cases"])
    assert n > 0
    r = _harness("--reader-cmd", _liar(tmp_path, ""), "--reader-name", "plain")
    assert r.returncode == 0, r.stdout[-2000:]
    assert f"coverage {total - n} of {total} cases ({n} need extensions the reader does not declare)" in r.stdout


def test_a_reader_that_declares_an_extension_but_does_not_check_it_fails(tmp_path):
    ignore = "import rlarchive.extensions as _x; _x.check_used = lambda ar: None"
    cmd = _liar(tmp_path, "", extensions=("RLA_vec_normalize",), setup=ignore)
    r = _harness("--reader-cmd", cmd, "--reader-name", "lax")
    assert r.returncode == 1
    failed = {line.split()[0] for line in r.stdout.splitlines() if "FAIL" in line.split()[1:]}
    assert failed and all(c.startswith("vec-normalize-") for c in failed)


def test_a_reader_that_skips_everything_fails(tmp_path):
    cmd = _liar(tmp_path, """
        reply = {"seq": req["seq"], "result": "skipped", "reason": "not implemented"}
    """)
    r = _harness("--reader-cmd", cmd, "--reader-name", "lazy")
    assert r.returncode == 1 and "SKIPPED" in r.stdout and "0 passed" in r.stdout


def test_the_testees_stderr_is_shown_beside_a_failure(tmp_path):
    cmd = _liar(tmp_path, """
        if "json-bom" in req["file"]:
            print("my reader is confused about BOMs", file=sys.stderr, flush=True)
            reply["code"] = "JSON_SYNTAX"
    """)
    r = _harness("--reader-cmd", cmd, "--reader-name", "liar")
    assert r.returncode == 1 and "stderr: my reader is confused about BOMs" in r.stdout


def test_a_refused_handshake_says_why(tmp_path):
    p = tmp_path / "old.py"
    p.write_text("import sys, json\nfor line in sys.stdin:\n    print(json.dumps({'ok': False}), flush=True)\n    print('I speak protocol 0 only', file=sys.stderr, flush=True)\n    break\n")
    r = _harness("--reader-cmd", f"{sys.executable} {p}", "--reader-name", "old")
    assert r.returncode == 1 and "handshake refused" in r.stdout and "protocol 0 only" in r.stdout


def test_relative_paths_resolve_from_the_callers_folder_and_junit_is_written(tmp_path):
    import shutil
    import xml.etree.ElementTree as ET

    shutil.copy(TESTEE, tmp_path / "my_reader.py")
    (tmp_path / "xfail.json").write_text("{}")
    r = subprocess.run(
        [sys.executable, RUN, "--quiet", "--reader-cmd", f"{sys.executable} ./my_reader.py", "--xfail", "xfail.json", "--junit", "out.xml"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout[-2000:]
    suite = ET.parse(tmp_path / "out.xml").getroot().find("testsuite")
    assert suite.get("failures") == "0" and int(suite.get("tests")) > 200


def test_validate_reports_are_judged_issue_by_issue(tmp_path):
    honest = _harness("--reader-cmd", _liar(tmp_path, "", requests=("validate",)), "--reader-name", "validator")
    assert honest.returncode == 0, honest.stdout[-2000:]
    cmd = _liar(tmp_path, """
        if req["cmd"] == "validate":
            reply["report"]["issues"] = [i for i in reply["report"]["issues"] if i["severity"] == "error"]
    """, requests=("validate",))
    r = _harness("--reader-cmd", cmd, "--reader-name", "quiet-validator")
    assert r.returncode == 1 and "validate: issues" in r.stdout
