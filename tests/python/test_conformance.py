"""The conformance harness judges strictly (wrong readers, crashing readers and stale xfail lists fail it) and shows a testee nothing but the archive."""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from suite import ROOT

RUN = os.path.join(ROOT, "tests", "conformance", "run")
TESTEE = os.path.join(ROOT, "tests", "conformance", "testee_python.py")
# a vector folder of a few cases (_small_vectors) where a test is about how the harness judges one case:
# a dump, an error that a liar can break (json-bom), an optimizer state, an optional extension
SOME = ["minimal", "json-bom", "optimizer-adam", "extension-optional"]


def _harness(*args, timeout=300):
    return subprocess.run(
        [sys.executable, RUN, "--quiet", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def _liar(tmp_path, body: str, extensions: tuple = (), setup: str = "", requests: tuple = ()) -> str:
    """A testee that wraps the reference testee and then misbehaves as ``body`` says (``setup`` runs first).

    ``body`` sees ``req`` (the request as JSON, ``{}`` for a line that is not an object) and may change
    ``reply``. The harness names the files it sends meaninglessly, so ``body`` tells the cases apart by their
    bytes: ``is_case(req, "json-bom")`` is true when the request's file holds that vector."""
    p = tmp_path / "liar.py"
    p.write_text(
        textwrap.dedent(
            f"""
            import hashlib, json, os, sys
            sys.path.insert(0, {os.path.dirname(TESTEE)!r})
            import rlarchive
            from testee_python import reply_to
            _VECTORS = {os.path.join(ROOT, "test-vectors")!r}
            _HASHES = {{}}
            def _sha(path):
                with open(path, "rb") as f:
                    return hashlib.sha256(f.read()).hexdigest()
            def is_case(req, case_id):
                if not _HASHES:
                    with open(os.path.join(_VECTORS, "index.json"), encoding="utf-8") as f:
                        for c in json.load(f)["cases"]:
                            if not c["file"].endswith(".gz"):
                                _HASHES.setdefault(_sha(os.path.join(_VECTORS, c["file"])), set()).add(c["id"])
                path = req.get("file")
                return isinstance(path, str) and os.path.isfile(path) and case_id in _HASHES.get(_sha(path), ())
            {textwrap.indent(textwrap.dedent(chr(10) + setup), " " * 12)}
            for line in sys.stdin.buffer:
                line = line.rstrip(b"\\n")
                try:
                    req = json.loads(line)
                except (ValueError, RecursionError):
                    req = None
                req = req if isinstance(req, dict) else {{}}
                if req.get("cmd") == "start":
                    print(json.dumps({{"ok": True, "protocol": 1, "reader": {{"name": "liar", "version": "0", "language": "python"}}, "extensions": {list(extensions)!r}, "requests": {list(requests)!r}}}), flush=True)
                    continue
                reply = reply_to(line)
                if reply is None:
                    break
            {textwrap.indent(textwrap.dedent(body), " " * 16)}
                print(json.dumps(reply), flush=True)
            """
        )
    )
    return f"{sys.executable} {p}"


@pytest.mark.slow
@pytest.mark.stage("conformance")
def test_both_readers_pass_the_golden_and_the_generated_cases():
    r = _harness()
    assert r.returncode == 0, r.stdout[-3000:]
    assert "-- generated cases (seed " in r.stdout
    for reader in ("python", "javascript"):
        for section in ("golden vectors", "generated cases"):
            line = next(x for x in r.stdout.splitlines() if x.startswith(f"{reader} (") and f"[{section}]" in x)
            passed = re.search(r": (\d+) passed, 0 failed", line)
            assert passed and int(passed.group(1)) > 0, line


@pytest.mark.slow
def test_wrong_error_code_fails_the_run(tmp_path):
    cmd = _liar(
        tmp_path,
        """
        if reply.get("code") == "ZIP_GAP":
            reply["code"] = "ZIP_OVERLAP"
    """,
    )
    vectors = _small_vectors(tmp_path, ["minimal", "zip-gap-before-member", "json-bom"])
    r = _harness("--reader-cmd", cmd, "--reader-name", "liar", "--vectors", vectors)
    assert r.returncode == 1
    assert "zip-gap-before-member" in r.stdout and "expected ZIP_GAP, got ZIP_OVERLAP" in r.stdout


@pytest.mark.slow
def test_one_byte_off_dump_fails_the_run(tmp_path):
    cmd = _liar(
        tmp_path,
        """
        if reply.get("result") == "dump":
            reply["dump"] = reply["dump"].replace("0.99", "0.98", 1)
    """,
    )
    vectors = _small_vectors(tmp_path, ["minimal", "data-unknown-property", "json-bom"])  # the second holds 0.99
    r = _harness("--reader-cmd", cmd, "--reader-name", "liar", "--vectors", vectors)
    assert r.returncode == 1 and "dump differs" in r.stdout


@pytest.mark.slow
def test_crashing_reader_fails_but_the_run_goes_on(tmp_path):
    cmd = _liar(
        tmp_path,
        """
        if is_case(req, "json-bom"):
            sys.exit(3)
    """,
    )
    r = _harness("--reader-cmd", cmd, "--reader-name", "liar", "--vectors", _small_vectors(tmp_path, SOME))
    assert r.returncode == 1
    assert "CRASH" in r.stdout and "1 failed" in r.stdout  # only that case; the reader was restarted


@pytest.mark.slow
def test_hanging_reader_times_out(tmp_path):
    cmd = _liar(
        tmp_path,
        """
        if is_case(req, "json-bom"):
            import time; time.sleep(60)
    """,
    )
    vectors = _small_vectors(tmp_path, SOME)
    r = _harness("--reader-cmd", cmd, "--reader-name", "liar", "--timeout", "2", "--vectors", vectors)
    assert r.returncode == 1 and "TIMEOUT" in r.stdout


@pytest.mark.slow
def test_xfail_list_never_goes_stale(tmp_path):
    xf = tmp_path / "xfail.json"
    xf.write_text(json.dumps({"json-bom": "pretend we cannot read BOMs"}))
    vectors = _small_vectors(tmp_path, SOME)
    r = _harness("--reader-cmd", f"{sys.executable} {TESTEE}", "--xfail", str(xf), "--vectors", vectors)
    assert r.returncode == 1 and "XPASS" in r.stdout
    cmd = _liar(
        tmp_path,
        """
        if is_case(req, "json-bom"):
            reply = {"seq": req["seq"], "result": "error", "code": "JSON_SYNTAX"}
    """,
    )
    r = _harness("--reader-cmd", cmd, "--xfail", str(xf), "--vectors", vectors)
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


def _one_case_per_extension() -> list:
    """The first case of index.json that needs each extension (a case may stand for several)."""
    picks: list = []
    for e in sorted({e for c in _extension_cases() for e in c["extensions"]}):
        first = next(c["id"] for c in _extension_cases() if e in c["extensions"])
        if first not in picks:
            picks.append(first)
    return picks


@pytest.mark.slow
def test_extension_cases_run_only_for_readers_that_declare_the_extension(tmp_path):
    picks = _one_case_per_extension()
    ids = SOME + picks
    n, total = len(picks), len(ids)
    assert n > 0 and not {c["id"] for c in _extension_cases()} & set(SOME)
    vectors = _small_vectors(tmp_path, ids)
    r = _harness("--reader-cmd", _liar(tmp_path, ""), "--reader-name", "plain", "--vectors", vectors)
    assert r.returncode == 0, r.stdout[-2000:]
    assert f"coverage {total - n} of {total} cases ({n} need extensions the reader does not declare)" in r.stdout


@pytest.mark.slow
def test_a_reader_that_declares_an_extension_but_does_not_check_it_fails(tmp_path):
    ignore = "import rlarchive.checks as _c; _c.check_extension = lambda state, name: state"
    cmd = _liar(tmp_path, "", extensions=("RLA_vec_normalize",), setup=ignore)
    needs = [c["id"] for c in _extension_cases() if "RLA_vec_normalize" in c["extensions"]]
    ids = SOME + needs + [i for i in _one_case_per_extension() if i not in needs]
    r = _harness("--reader-cmd", cmd, "--reader-name", "lax", "--vectors", _small_vectors(tmp_path, ids))
    assert r.returncode == 1
    failed = {line.split()[0] for line in r.stdout.splitlines() if "FAIL" in line.split()[1:]}
    assert failed and failed <= set(needs)


@pytest.mark.slow
def test_a_reader_that_skips_everything_fails(tmp_path):
    cmd = _liar(
        tmp_path,
        """
        reply = {"seq": req["seq"], "result": "skipped", "reason": "not implemented"}
    """,
    )
    r = _harness("--reader-cmd", cmd, "--reader-name", "lazy", "--vectors", _small_vectors(tmp_path, SOME))
    assert r.returncode == 1 and "SKIPPED" in r.stdout and "0 passed" in r.stdout


@pytest.mark.slow
def test_the_testees_stderr_is_shown_beside_a_failure(tmp_path):
    cmd = _liar(
        tmp_path,
        """
        if is_case(req, "json-bom"):
            print("my reader is confused about BOMs", file=sys.stderr, flush=True)
            reply["code"] = "JSON_SYNTAX"
    """,
    )
    r = _harness("--reader-cmd", cmd, "--reader-name", "liar", "--vectors", _small_vectors(tmp_path, SOME))
    assert r.returncode == 1 and "stderr: my reader is confused about BOMs" in r.stdout


def test_a_failure_waits_for_standard_error_only_while_the_testee_has_written_some(monkeypatch):
    """The tail of standard error beside a failure: a testee that wrote nothing there costs no wait (a run of
    hundreds of failing cases is not hundreds of waits), one that wrote is read before its tail is shown."""
    from rlarchive.conformance import protocol

    waits = []
    real_sleep = protocol.time.sleep
    monkeypatch.setattr(protocol.time, "sleep", lambda s: (waits.append(s), real_sleep(s)))
    hello = 'import sys\nsys.stdin.readline()\nprint(\'{"ok": true, "protocol": 1}\', flush=True)\n'
    quiet = hello + "for line in sys.stdin: pass"
    talker = hello + "sys.stderr.write('first\\n'); sys.stderr.flush()\nfor line in sys.stdin: pass"
    for code, expected in ((quiet, ""), (talker, "stderr: first")):
        t = protocol.Testee("t", [sys.executable, "-c", code], 10, ROOT)
        t.start()
        try:
            if expected:
                real_sleep(0.5)  # the line is written; the pump may or may not have read it yet
            waits.clear()
            tail = t.stderr_tail()
            assert expected in tail and (expected or tail == "")
            assert sum(waits) < protocol.Testee.STDERR_SETTLE_SECONDS / 2, waits
        finally:
            t.stop(kill=True)


def test_a_refused_handshake_says_why(tmp_path):
    p = tmp_path / "old.py"
    p.write_text(
        "import sys, json\nfor line in sys.stdin:\n    print(json.dumps({'ok': False}), flush=True)\n    print('I speak protocol 0 only', file=sys.stderr, flush=True)\n    break\n"
    )
    r = _harness("--reader-cmd", f"{sys.executable} {p}", "--reader-name", "old")
    assert r.returncode == 1 and "handshake refused" in r.stdout and "protocol 0 only" in r.stdout


@pytest.mark.slow
def test_relative_paths_resolve_from_the_callers_folder_and_junit_is_written(tmp_path):
    import shutil
    import xml.etree.ElementTree as ET

    shutil.copy(TESTEE, tmp_path / "my_reader.py")
    (tmp_path / "xfail.json").write_text("{}")
    r = subprocess.run(
        [
            sys.executable,
            RUN,
            "--quiet",
            "--reader-cmd",
            f"{sys.executable} ./my_reader.py",
            "--xfail",
            "xfail.json",
            "--junit",
            "out.xml",
            "--generated",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout[-2000:]
    suite = ET.parse(tmp_path / "out.xml").getroot().find("testsuite")
    assert suite.get("failures") == "0" and int(suite.get("tests")) > 200


@pytest.mark.slow
def test_validate_reports_are_judged_issue_by_issue(tmp_path):
    # the golden vectors suffice: their reports hold the warnings this liar drops
    golden = ("--generated", "0")
    honest = _harness(
        "--reader-cmd", _liar(tmp_path, "", requests=("validate",)), "--reader-name", "validator", *golden
    )
    assert honest.returncode == 0, honest.stdout[-2000:]
    cmd = _liar(
        tmp_path,
        """
        if req["cmd"] == "validate":
            reply["report"]["issues"] = [i for i in reply["report"]["issues"] if i["severity"] == "error"]
    """,
        requests=("validate",),
    )
    r = _harness("--reader-cmd", cmd, "--reader-name", "quiet-validator", *golden)
    assert r.returncode == 1 and "validate: issues" in r.stdout


def _small_vectors(tmp_path, ids: list) -> str:
    """A vector folder holding only the cases ``ids`` of test-vectors/ (in that order)."""
    import shutil

    src = os.path.join(ROOT, "test-vectors")
    with open(os.path.join(src, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    by_id = {c["id"]: c for c in index["cases"]}
    index["cases"] = [by_id[i] for i in ids]
    dst = tmp_path / "vectors"
    for c in index["cases"]:
        for rel in (c["file"], c["expect"].get("dump_file"), c["expect"].get("predict_file"), c.get("request_file")):
            if rel:
                (dst / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(os.path.join(src, rel), dst / rel)
    (dst / "index.json").write_text(json.dumps(index))
    return str(dst)


# Answers from whatever lies beside the file it is given, or from an index.json in a folder above it:
# what a testee could do if the harness handed it the vectors themselves. It declares every
# extension, so every case is sent to it, and it answers nothing of its own (an error code that no
# case expects), so it can pass only a case it answered by looking around. It also records what it saw.
CHEAT = r"""
import glob, json, os, sys
LOG = sys.argv[1]

def look(path, cmd):
    folder = os.path.dirname(path)
    stem = os.path.basename(path)
    stem = stem[:-3] if stem.endswith(".gz") else stem
    stem = stem[: -len(".rlarchive")] if stem.endswith(".rlarchive") else stem
    if cmd == "predict":
        for name in glob.glob(os.path.join(glob.escape(folder), glob.escape(stem) + "*.predict.json")):
            with open(name, encoding="utf-8") as f:
                return {"result": "actions", "actions": json.load(f)["actions"]}
    for name in glob.glob(os.path.join(glob.escape(folder), glob.escape(stem) + ".dump.json")):
        with open(name, encoding="utf-8") as f:
            return {"result": "dump", "dump": f.read()}
    d = folder
    while True:
        index = os.path.join(d, "index.json")
        if os.path.isfile(index):
            with open(index, encoding="utf-8") as f:
                cases = json.load(f)["cases"]
            for c in cases:
                if os.path.basename(c["file"]) == os.path.basename(path) and (c["expect"]["result"] == "actions") == (cmd == "predict"):
                    e = c["expect"]
                    if e["result"] == "error":
                        return {"result": "error", "code": e["code"]}
                    if e["result"] == "dump":
                        with open(os.path.join(d, e["dump_file"]), encoding="utf-8") as f:
                            return {"result": "dump", "dump": f.read()}
                    with open(os.path.join(d, e["predict_file"]), encoding="utf-8") as f:
                        return {"result": "actions", "actions": json.load(f)["actions"]}
        if os.path.dirname(d) == d:
            return {"result": "error", "code": "NOTHING_TO_COPY"}
        d = os.path.dirname(d)

for line in sys.stdin:
    try:
        req = json.loads(line)
    except (ValueError, RecursionError):
        req = None
    if not isinstance(req, dict) or req.get("cmd") not in ("start", "stop") and not os.path.isfile(str(req.get("file"))):
        print(json.dumps({"seq": None, "result": "error", "code": "NOTHING_TO_COPY"}), flush=True)
        continue
    if req["cmd"] == "start":
        exts = ["RLA_policy", "RLA_vec_normalize", "RLA_sb3", "RLA_onnx"]
        print(json.dumps({"ok": True, "protocol": 1, "reader": {"name": "cheat", "version": "0", "language": "python"}, "extensions": exts}), flush=True)
        continue
    if req["cmd"] == "stop":
        break
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps({"file": req["file"], "beside": sorted(os.listdir(os.path.dirname(req["file"])))}) + "\n")
    print(json.dumps({"seq": req["seq"], **look(req["file"], req["cmd"])}), flush=True)
"""


@pytest.mark.slow
def test_a_testee_that_looks_beside_its_file_passes_nothing(tmp_path):
    from rlarchive.manifest import SUPPORTED_EXTENSIONS

    cheat = tmp_path / "cheat.py"
    cheat.write_text(
        CHEAT.replace('["RLA_policy", "RLA_vec_normalize", "RLA_sb3", "RLA_onnx"]', repr(sorted(SUPPORTED_EXTENSIONS)))
    )
    log = tmp_path / "seen.jsonl"
    # the cheat works when it is given a vector where it lies: a dump, an error and actions, all right
    with open(os.path.join(ROOT, "test-vectors", "index.json"), encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    picks = [
        next(c for c in cases if c["expect"]["result"] == kind and not c["file"].endswith(".gz"))
        for kind in ("dump", "error", "actions")
    ]
    reqs = [{"cmd": "start", "protocol": 1}] + [
        {
            "cmd": "predict" if c["expect"]["result"] == "actions" else "dump",
            "seq": k,
            "file": os.path.join(ROOT, "test-vectors", c["file"]),
        }
        for k, c in enumerate(picks, 1)
    ]
    direct = subprocess.run(
        [sys.executable, str(cheat), str(tmp_path / "direct.jsonl")],
        input="".join(json.dumps(r) + "\n" for r in reqs),
        capture_output=True,
        text=True,
        timeout=60,
    )
    answers = [json.loads(x) for x in direct.stdout.splitlines()[1:]]
    assert [a["result"] for a in answers] == ["dump", "error", "actions"], direct.stdout[-500:]
    assert answers[1]["code"] == picks[1]["expect"]["code"]
    # through the harness it sees one meaninglessly named file alone in its folder, and passes nothing
    r = _harness("--reader-cmd", f"{sys.executable} {cheat} {log}", "--reader-name", "cheat", "--generated", "0")
    assert r.returncode == 1
    assert (
        f"0 passed, {len(cases)} failed" in r.stdout and f"coverage {len(cases)} of {len(cases)} cases" in r.stdout
    ), r.stdout[-2000:]
    seen = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(seen) >= len([c for c in cases if "request_file" not in c])  # every request with a file

    for s in seen:
        name = os.path.basename(s["file"])
        assert re.fullmatch(r"[0-9a-f]{16}\.rlarchive", name) and s["beside"] == [name], s
        assert not os.path.exists(os.path.dirname(s["file"])), "the case's folder outlived the run"
    assert len({s["file"] for s in seen}) == len(seen) and len({os.path.dirname(s["file"]) for s in seen}) == len(seen)


def test_the_file_sent_holds_the_vectors_bytes(tmp_path):
    import gzip
    import hashlib

    ids = ["minimal", "value-ndarray-base64-astral-characters"]  # a plain vector and a gzip-stored one
    vectors = _small_vectors(tmp_path, ids)
    want = []
    for c in json.loads(open(os.path.join(vectors, "index.json"), encoding="utf-8").read())["cases"]:
        raw = open(os.path.join(vectors, c["file"]), "rb").read()
        want.append(hashlib.sha256(gzip.decompress(raw) if c["file"].endswith(".gz") else raw).hexdigest())
    log = tmp_path / "hashes"
    cmd = _liar(
        tmp_path,
        f"""
        with open({str(log)!r}, "a") as f:
            f.write(hashlib.sha256(open(req["file"], "rb").read()).hexdigest() + "\\n")
    """,
    )
    r = _harness("--reader-cmd", cmd, "--vectors", vectors, "--generated", "0")
    assert r.returncode == 0, r.stdout[-2000:]
    assert log.read_text().split() == want


def test_the_line_limit_fits_every_expected_answer_with_room():
    from rlarchive.conformance import MAX_LINE_BYTES

    with open(os.path.join(ROOT, "test-vectors", "index.json"), encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    longest = 0
    for c in cases:
        e = c["expect"]
        if e["result"] == "dump":
            with open(os.path.join(ROOT, "test-vectors", e["dump_file"]), encoding="utf-8") as f:
                answer = {"seq": 10**9, "result": "dump", "dump": f.read()}
        elif e["result"] == "actions":
            with open(os.path.join(ROOT, "test-vectors", e["predict_file"]), encoding="utf-8") as f:
                answer = {"seq": 10**9, "result": "actions", "actions": json.load(f)["actions"]}
        else:
            continue
        longest = max(longest, len(json.dumps(answer, ensure_ascii=True).encode()))
    # a dump's characters escaped as \uXXXX take at most 6 bytes each: still 16 times within the limit
    assert 6 * longest * 16 <= MAX_LINE_BYTES, longest


def test_bounded_lines_never_holds_a_long_line():
    import io

    from rlarchive.conformance import bounded_lines

    data = b"short\n" + b"x" * 5000 + b"\nnext\n" + b"y" * 10 + b"\nlast"
    got = list(bounded_lines(io.BufferedReader(io.BytesIO(data), 64), 100, preview=8))
    assert got == [(b"short", True), (b"xxxxxxxx", False), (b"next", True), (b"yyyyyyyyyy", True), (b"last", True)]
    exactly = list(bounded_lines(io.BufferedReader(io.BytesIO(b"z" * 100 + b"\n" + b"w" * 101)), 100, preview=3))
    assert exactly == [(b"z" * 100, True), (b"www", False)]


HARNESS_MEMORY = r"""
import sys
sys.path.insert(0, {python!r})
from rlarchive.conformance import main
rc = main(sys.argv[1:])
with open("/proc/self/status", encoding="ascii") as f:
    peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
print(f"harness peak KiB {{peak}}")
sys.exit(rc)
"""


def test_an_endless_answer_line_fails_the_case_in_bounded_memory(tmp_path):
    from rlarchive.conformance import MAX_LINE_BYTES

    vectors = _small_vectors(tmp_path, ["minimal", "json-bom", "optimizer-adam"])
    gib = 1 << 30
    cmd = _liar(
        tmp_path,
        f"""
        if is_case(req, "json-bom"):  # an answer line of 1 GiB (for the harness: without end)
            out = sys.stdout.buffer
            out.write(b'{{"seq": %d, "result": "dump", "dump": "' % req["seq"])
            chunk = b"x" * (1 << 20)
            for _ in range({gib} >> 20):
                out.write(chunk)
            out.write(b'"}}\\n')
            out.flush()
            continue
    """,
    )
    script = tmp_path / "harness.py"
    script.write_text(HARNESS_MEMORY.format(python=os.path.join(ROOT, "python")))
    r = subprocess.run(
        [
            sys.executable,
            str(script),
            "--quiet",
            "--vectors",
            vectors,
            "--reader-cmd",
            cmd,
            "--reader-name",
            "long",
            "--timeout",
            "60",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"answer line longer than {MAX_LINE_BYTES} bytes" in r.stdout
    assert "2 passed, 1 failed" in r.stdout  # only that case: the testee was restarted for the next
    peak_kib = int(r.stdout.split("harness peak KiB ")[1].split()[0])
    # the limit's worth of line, once, and the interpreter: far below the line's size
    assert peak_kib * 1024 < MAX_LINE_BYTES + 128 * 1024 * 1024 < gib // 4, peak_kib


def _running(pid: int, start: str) -> bool:
    """Whether the process ``pid`` that started at ``start`` (/proc stat field 22) is still running."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] not in ("Z", "X") and fields[19] == start


@pytest.mark.slow
def test_no_process_a_testee_started_outlives_it(tmp_path):
    if not os.path.isdir("/proc"):
        import pytest

        pytest.skip("needs /proc to tell running processes")
    vectors = _small_vectors(tmp_path, SOME)
    pids = tmp_path / "pids"
    # every start of the testee starts two long sleeps in its group, one of which ignores SIGTERM;
    # it dies on one case (restart) and hangs on another (timeout, restart), and stops at the end
    setup = f"""
        import subprocess, time
        for argv in (["sleep", "300"], ["sh", "-c", "trap '' TERM; exec sleep 301"]):
            child = subprocess.Popen(argv)
            time.sleep(0.1)
            with open(f"/proc/{{child.pid}}/stat", encoding="ascii") as f:
                start = f.read().rsplit(")", 1)[1].split()[19]
            with open({str(pids)!r}, "a") as f:
                f.write(f"{{child.pid}} {{start}}\\n")
    """
    cmd = _liar(
        tmp_path,
        """
        if is_case(req, "json-bom"):
            sys.exit(3)
        if is_case(req, "optimizer-adam"):
            time.sleep(60)
    """,
        setup=setup,
    )
    r = _harness("--reader-cmd", cmd, "--reader-name", "parent", "--vectors", vectors, "--timeout", "3")
    assert r.returncode == 1 and "CRASH" in r.stdout and "TIMEOUT" in r.stdout, r.stdout[-2000:]
    assert "2 passed, 2 failed" in r.stdout
    started = [line.split() for line in pids.read_text().splitlines()]
    assert len(started) == 6  # three starts of the testee, two children each
    left = [pid for pid, start in started if _running(int(pid), start)]
    assert not left, f"still running: {left}"
