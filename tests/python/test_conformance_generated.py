"""The generated conformance cases (spec Annex A.6): a testee has to read the archive to pass the run.

A testee that recognises the golden vectors by their bytes passes every
golden file case and fails the run on the generated ones; the generated set
is reproducible from its printed seed; the one-byte changes give the codes the
specification says; and the harness says how many answers of each kind of
request it judged (Annex A.3).
"""

import collections
import filecmp
import json
import os
import re
import subprocess
import sys

import pytest
from suite import ROOT
from test_conformance import _harness, _liar, _small_vectors

import rlarchive
from rlarchive.conformance.generated import generated_cases

TESTEE = os.path.join(ROOT, "tests", "conformance", "testee_python.py")

# Looks each file up by its SHA-256 among the golden vectors and answers what index.json expects; handles
# the protocol (the malformed requests of Annex A.5) with the reference testee's form check, which reads
# no archive. For a file it does not know it guesses the commonest error code of the vectors.
HASH_LOOKUP = r"""
import gzip, hashlib, json, os, sys
VECTORS, TESTEES = sys.argv[1], sys.argv[2]
sys.path.insert(0, TESTEES)
from testee_python import Malformed, parse_request

with open(os.path.join(VECTORS, "index.json"), encoding="utf-8") as f:
    CASES = [c for c in json.load(f)["cases"] if "request_file" not in c]
BY_HASH = {}
for c in CASES:
    with (gzip.open if c["file"].endswith(".gz") else open)(os.path.join(VECTORS, c["file"]), "rb") as f:
        BY_HASH.setdefault(hashlib.sha256(f.read()).hexdigest(), []).append(c)
codes = [c["expect"]["code"] for c in CASES if c["expect"]["result"] == "error"]
GUESS = max(set(codes), key=codes.count)


def predict_file(c):
    with open(os.path.join(VECTORS, c["expect"]["predict_file"]), encoding="utf-8") as f:
        return json.load(f)


def looked_up(req):
    with open(req["file"], "rb") as f:
        found = BY_HASH.get(hashlib.sha256(f.read()).hexdigest(), [])
    found = [c for c in found if (c["expect"]["result"] == "actions") == (req["cmd"] == "predict")]
    if req["cmd"] == "predict":  # cases of one archive told apart by their observations
        found = [c for c in found if predict_file(c)["observations"] == req["observations"]]
    if not found:
        return {"result": "error", "code": GUESS, "message": "a guess"}
    c, e = found[0], found[0]["expect"]
    if req["cmd"] == "validate":
        return {"result": "report", "report": {"issues": c.get("issues", [])}}
    if e["result"] == "error":
        return {"result": "error", "code": e["code"], "message": "looked up"}
    if e["result"] == "dump":
        with open(os.path.join(VECTORS, e["dump_file"]), encoding="utf-8") as f:
            return {"result": "dump", "dump": f.read()}
    return {"result": "actions", "actions": predict_file(c)["actions"]}


for line in sys.stdin.buffer:
    try:
        req = parse_request(line.rstrip(b"\n"))
    except Malformed as e:
        print(json.dumps({"seq": e.seq, "result": "error", "code": "INPUT_INVALID", "message": str(e)}), flush=True)
        continue
    if req["cmd"] == "stop":
        break
    if req["cmd"] == "start":
        exts = ["RLA_policy", "RLA_vec_normalize", "RLA_training", "RLA_replay_buffer"]
        hello = {"ok": True, "protocol": 1, "reader": {"name": "lookup", "version": "0", "language": "python"}}
        print(json.dumps({**hello, "extensions": exts, "requests": ["predict", "validate"]}), flush=True)
        continue
    print(json.dumps({"seq": req["seq"], **looked_up(req)}), flush=True)
"""


@pytest.mark.slow
def test_a_testee_that_looks_up_the_golden_vectors_by_hash_fails_the_run(tmp_path):
    script = tmp_path / "lookup.py"
    script.write_text(HASH_LOOKUP)
    vectors = os.path.join(ROOT, "test-vectors")
    report = tmp_path / "report.json"
    cmd = f"{sys.executable} {script} {vectors} {os.path.dirname(TESTEE)}"
    r = _harness("--reader-cmd", cmd, "--reader-name", "lookup", "--report", str(report))
    assert r.returncode == 1, r.stdout[-2000:]
    results = json.loads(report.read_text())["lookup"]
    with open(os.path.join(vectors, "index.json"), encoding="utf-8") as f:
        golden = json.load(f)["cases"]
    # it passes every golden case that is about a file, with its validation report: it is a good look-up
    files = [c["id"] for c in golden if "request_file" not in c]
    assert {results[i][0] for i in files} == {"pass"}, [i for i in files if results[i][0] != "pass"][:5]
    # and it fails the generated cases that need an archive read: every dump and every predict
    generated = {k: v for k, v in results.items() if k.startswith("generated-")}
    reads = [k for k in generated if k.endswith("-predict") or re.fullmatch(r"generated-\d+", k)]
    assert len(reads) >= 8 and {generated[k][0] for k in reads} == {"fail"}, {k: generated[k] for k in reads}
    assert re.search(r"lookup \(lookup 0\) \[generated cases\]: \d+ passed, [1-9]\d* failed", r.stdout), r.stdout[
        -1500:
    ]


@pytest.mark.slow
def test_the_generated_cases_come_from_the_printed_seed(tmp_path):
    a, b, c = (tmp_path / x for x in "abc")
    for folder, seed in ((a, 41), (b, 41), (c, 42)):
        folder.mkdir()
        generated_cases(seed, str(folder), 2)
    same = filecmp.dircmp(a, b)
    assert sorted(os.listdir(a)) == sorted(os.listdir(b)) and not same.diff_files and not same.funny_files
    assert filecmp.dircmp(a, c).diff_files, "another seed, other archives"
    vectors = _small_vectors(tmp_path, ["minimal"])
    r = _harness("--readers", "python", "--vectors", vectors, "--seed", "41", "--generated", "2")
    assert r.returncode == 0, r.stdout[-2000:]
    assert "generated cases: 14 from seed 41 (the same cases again: --seed 41)" in r.stdout
    assert "-- generated cases (seed 41)" in r.stdout and r.stdout.rstrip().endswith("(generated cases: seed 41)")
    assert "[generated cases]: 14 passed, 0 failed" in r.stdout
    r = _harness("--readers", "python", "--vectors", vectors)
    assert re.search(r"generated cases: \d+ from seed \d+ \(the same cases again: --seed \d+\)", r.stdout)


def test_the_one_byte_changes_give_the_codes_the_specification_says(tmp_path):
    """The codes of the generated one-byte changes follow from §3 and §11.1 alone; the reference reader agrees."""
    kinds = collections.Counter()
    for seed in range(6):
        folder = tmp_path / str(seed)
        folder.mkdir()
        for case in generated_cases(seed, str(folder), 3):
            if case["id"].endswith("-predict"):
                continue
            path = os.path.join(folder, case["file"])
            try:
                with rlarchive.open(path, spaces="neutral") as ar:
                    ar.dump()
                got = "dump"
            except rlarchive.RlarchiveError as e:
                got = e.code
            want = case["expect"].get("code", "dump")
            assert got == want, (seed, case["id"], case["description"])
            kind = re.sub(r"^generated-\d+-?", "", case["id"]) or "archive"
            kinds[kind] += 1
            if kind == "archive":
                assert rlarchive.validate(path)["issues"] == [], "a generated archive is valid, without warnings"
    assert set(kinds) == {"archive", "mimetype-byte", "manifest-byte", "data-byte", "tensor-byte", "edit"}


def _requests_line(stdout: str, reader: str) -> str:
    lines = stdout.splitlines()
    at = max(i for i, x in enumerate(lines) if x.startswith(f"{reader} ("))
    return lines[at + 1]


@pytest.mark.slow
def test_the_harness_counts_the_answers_it_judged_per_kind_of_request(tmp_path):
    vectors = _small_vectors(tmp_path, ["minimal", "json-bom", "request-cmd-unknown"])
    plain = _harness(
        "--reader-cmd", _liar(tmp_path, ""), "--reader-name", "plain", "--vectors", vectors, "--generated", "0"
    )
    assert plain.returncode == 0, plain.stdout[-2000:]
    line = _requests_line(plain.stdout, "plain")
    assert "requests judged: 2 dump, 0 predict, 0 validate, 1 request lines" in line, line
    assert "validate never sent: the handshake's requests do not list it" in line
    cmd = _liar(tmp_path, "", requests=("validate",))
    checked = _harness("--reader-cmd", cmd, "--reader-name", "checked", "--vectors", vectors, "--generated", "0")
    line = _requests_line(checked.stdout, "checked")
    assert checked.returncode == 0 and "2 dump, 0 predict, 2 validate, 1 request lines" in line, line
    assert "never sent" not in line


def test_annex_a_shows_the_requests_of_the_handshake_as_the_testees_send_them():
    with open(os.path.join(ROOT, "spec", "annex-a-conformance.md"), encoding="utf-8") as f:
        annex = " ".join(f.read().split())
    template = re.search(r'answers `(\{"ok": true, "protocol": 1, "reader": [^`]*\})`', annex).group(1)
    keys = re.findall(r'"([a-z]+)": ', template)
    for cmd in ([sys.executable, TESTEE], ["node", os.path.join(ROOT, "reader-js", "bin", "conformance.mjs")]):
        r = subprocess.run(
            cmd, input='{"cmd": "start", "protocol": 1}\n{"cmd": "stop"}\n', capture_output=True, text=True
        )
        hello = json.loads(r.stdout.splitlines()[0])
        assert set(keys) == {*hello, *hello["reader"]} and "requests" in keys, (keys, hello)
