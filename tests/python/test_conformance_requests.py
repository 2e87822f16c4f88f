"""Both conformance testees answer every request line with exactly one well-formed line (spec Annex A.5).

Random malformed requests (missing members, members of the wrong type,
unknown kinds, bytes that are not JSON, lines nested too deep or too long,
predict requests whose observations the policy does not take) go to the
Python and the JavaScript testee in one stream each: every line gets one
answer, a JSON object whose ``seq`` is the request's when the line is a JSON
object with an integer ``seq`` (else null), whose code is a code of the
catalogue (never INTERNAL_ERROR), and the two testees give the same answer.
"""

import base64
import json
import os
import random
import subprocess
import sys

import pytest
from suite import ROOT

from rlarchive import jsonstrict
from rlarchive.errors import RlarchiveError
from rlarchive.limits import MAX_JSON_BYTES

TESTEES = {
    "python": [sys.executable, os.path.join(ROOT, "tests", "conformance", "testee_python.py")],
    "javascript": ["node", os.path.join(ROOT, "reader-js", "bin", "conformance.mjs")],
}
VECTORS = os.path.join(ROOT, "test-vectors")
MINIMAL = os.path.join(VECTORS, "valid", "minimal.rlarchive")
DICT_POLICY = os.path.join(VECTORS, "valid", "policy-ppo-dict-observation.rlarchive")
NOT_RLARCHIVE = os.path.join(VECTORS, "invalid", "not-rlarchive-plain-zip.rlarchive")
REQUESTS = 400


def _nd(dtype: str, shape: list, raw: bytes) -> dict:
    return {"$type": "ndarray", "dtype": dtype, "shape": shape, "base64": base64.b64encode(raw).decode()}


def _dict_observation() -> dict:
    return {"pos": _nd("F32", [3], b"\0" * 12), "mode": _nd("I64", [], (1).to_bytes(8, "little"))}


def _near_observation(rng: random.Random) -> dict:
    """A Dict observation for the policy (pos: Box [3], mode: Discrete(3)), sometimes one it does not take."""
    n = rng.choice([None, None, 1, 2])  # one observation, or a batch of n
    pos_shape = ([] if n is None else [n]) + [rng.choice([3, 3, 3, 2])]
    mode_n = rng.choice([n, n, n, None, 2])
    mode_shape = [] if mode_n is None else [mode_n]
    count = 1 if not mode_shape else mode_shape[0]
    pos_dtype, size = rng.choice([("F32", 4), ("F32", 4), ("F64", 8), ("I64", 8), ("U8", 1)])
    modes = b"".join(rng.choice([0, 1, 2, 2, 3, -1]).to_bytes(8, "little", signed=True) for _ in range(count))
    obs = {
        "pos": _nd(pos_dtype, pos_shape, rng.randbytes(size * (pos_shape[0] * (pos_shape[-1] if n else 1)))),
        "mode": _nd("I64", mode_shape, modes),
    }
    if rng.random() < 0.1:
        obs.pop(rng.choice(["pos", "mode"]))
    return obs


def _junk(rng: random.Random, depth: int = 0):
    """A random JSON value (of any type, sometimes shaped like a value of §7)."""
    kind = rng.randrange(9 if depth < 3 else 5)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -1, 7, 2**53 - 1, 2**60, 1.5, -0.0, 1e308])
    if kind == 2:
        return rng.choice(["", "dump", "predict", "\u00e9\U0001f600", "/abs/path", "http://127.0.0.1:9/x"])
    if kind == 3:
        return _nd(
            rng.choice(["F32", "I64", "U8", "BOOL", "F16", "X9"]),
            [rng.randint(0, 3)],
            rng.randbytes(rng.randint(0, 16)),
        )
    if kind == 4:
        return _dict_observation()
    if kind in (5, 6):
        return [_junk(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["pos", "mode", "$type", "x"]): _junk(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def _request(rng: random.Random, seq: int) -> dict:
    """A request of A.2 with random members broken, dropped, added or replaced."""
    cmd = rng.choice(["dump", "validate", "predict", "predict"])
    req = {"cmd": cmd, "seq": seq, "file": rng.choice([MINIMAL, DICT_POLICY, NOT_RLARCHIVE])}
    if cmd == "predict":
        req["file"] = DICT_POLICY if rng.random() < 0.8 else req["file"]
        n = rng.randint(0, 3)
        req["observations"] = [_near_observation(rng) if rng.random() < 0.7 else _junk(rng) for _ in range(n)]
        if rng.random() < 0.4:
            req["episode_starts"] = [rng.random() < 0.5 for _ in range(n + rng.choice([0, 0, 1]))]
        if rng.random() < 0.3:
            req["action_masks"] = [_junk(rng) for _ in range(n)]
    for _ in range(rng.choice([0, 0, 1, 2, 3])):
        key = rng.choice([*req, "extra", "observations", "episode_starts"])
        action = rng.randrange(3)
        if action == 0:
            req.pop(key, None)
        else:
            req[key] = _junk(rng) if key != "cmd" else rng.choice(["inspect", "", 7, None, "DUMP", "validate"])
    return req


def _line(rng: random.Random, seq: int) -> bytes:
    """A request line: a broken request, or bytes broken after it was written."""
    text = json.dumps(_request(rng, seq), ensure_ascii=rng.random() < 0.5).encode("utf-8")
    kind = rng.randrange(16)
    if kind == 0:
        text = text[: rng.randrange(len(text) + 1)]
    elif kind == 1:
        at = rng.randrange(len(text) + 1)
        text = text[:at] + bytes(b for b in rng.randbytes(rng.randint(1, 4)) if b != 0x0A) + text[at:]
    elif kind == 2:
        text = rng.choice([b"", b" ", b"\r", b"\xef\xbb\xbf" + text, b"[" * 5000 + b"]" * 5000, b"NaN", b"{}"])
    elif kind == 3:
        text = text[:-1] + b', "seq": ' + str(seq).encode() + b"}"  # seq twice
    return text


def _expected_seq(line: bytes):
    """The seq an answer must carry: the request's when the line is a JSON object (spec §6) with an integer seq."""
    try:
        req = jsonstrict.parse(line)
    except RlarchiveError:
        return None
    seq = req.get("seq") if isinstance(req, dict) else None
    return seq if type(seq) is int else None


def _answers(cmd: list, lines: list) -> list:
    r = subprocess.run(
        cmd,
        input=b"".join(x + b"\n" for x in [b'{"cmd": "start", "protocol": 1}', *lines, b'{"cmd": "stop"}']),
        capture_output=True,
        timeout=600,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout.split(b"\n")
    assert out[-1] == b"", "the last answer ends with a line break"
    return [json.loads(x) for x in out[1:-1]]  # after the handshake


@pytest.fixture(scope="module")
def fuzzed():
    rng = random.Random(20261128)
    lines = [_line(rng, seq) for seq in range(1, REQUESTS + 1)]
    return lines, {name: _answers(cmd, lines) for name, cmd in TESTEES.items()}


@pytest.mark.parametrize("testee", sorted(TESTEES))
def test_every_random_request_gets_one_well_formed_answer(fuzzed, testee):
    from rlarchive.errors import API_CODES, CATALOGUE

    lines, answers = fuzzed
    got = answers[testee]
    assert len(got) == len(lines), f"{len(got)} answers to {len(lines)} requests"
    malformed = 0
    for line, a in zip(lines, got):
        assert isinstance(a, dict) and set(a) >= {"seq", "result"}, (line[:200], a)
        assert a["seq"] == _expected_seq(line), (line[:200], a)
        assert a["result"] in ("dump", "error", "actions", "report"), (line[:200], a)
        if a["result"] == "error":
            assert a["code"] in {*CATALOGUE, *API_CODES} - {"INTERNAL_ERROR"}, (line[:200], a)
            assert isinstance(a["message"], str)
            malformed += a["code"] == "INPUT_INVALID"
    assert malformed > len(lines) // 2, "the requests are mostly malformed"


def test_both_testees_give_the_same_answers(fuzzed):
    lines, answers = fuzzed

    def gist(a: dict):
        return (a["seq"], a["result"], a.get("code"), a.get("dump"), a.get("actions"))

    for line, a, b in zip(lines, answers["python"], answers["javascript"]):
        assert gist(a) == gist(b), (line[:300], a, b)


@pytest.mark.parametrize("testee", sorted(TESTEES))
def test_a_dict_observation_mixing_a_batch_and_one_observation_is_input_invalid(testee):
    """The reported failure: the Python testee died with a traceback, the JavaScript one answered INTERNAL_ERROR."""
    mixed = {"pos": _nd("F32", [2, 3], b"\0" * 24), "mode": _nd("I64", [], b"\0" * 8)}
    lines = [
        json.dumps({"cmd": "predict", "seq": 1, "file": DICT_POLICY, "observations": [mixed]}).encode(),
        json.dumps({"cmd": "predict", "seq": 2, "file": DICT_POLICY, "observations": [_dict_observation()]}).encode(),
    ]
    first, second = _answers(TESTEES[testee], lines)
    assert (first["seq"], first["result"], first["code"]) == (1, "error", "INPUT_INVALID"), first
    assert (second["seq"], second["result"]) == (2, "actions"), second  # the same process goes on


def _peak_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc to read a process's peak memory")
@pytest.mark.parametrize("testee", sorted(TESTEES))
def test_a_line_longer_than_the_limit_is_answered_in_bounded_memory(testee):
    """A request line of 6 x MAX_JSON_BYTES: answered INPUT_INVALID (seq null) without holding it, then the next request as usual."""
    p = subprocess.Popen(TESTEES[testee], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    try:
        p.stdin.write(b'{"cmd": "start", "protocol": 1}\n')
        p.stdin.flush()
        assert json.loads(p.stdout.readline())["ok"] is True
        head = b'{"cmd": "dump", "seq": 1, "file": ' + json.dumps(MINIMAL).encode() + b', "pad": "'
        p.stdin.write(head)
        chunk = b"x" * (1 << 20)
        for _ in range(6 * MAX_JSON_BYTES >> 20):
            p.stdin.write(chunk)
        p.stdin.write(b'"}\n' + json.dumps({"cmd": "dump", "seq": 2, "file": MINIMAL}).encode() + b"\n")
        p.stdin.flush()
        first, second = json.loads(p.stdout.readline()), json.loads(p.stdout.readline())
        peak = _peak_kib(p.pid) * 1024
        p.stdin.write(b'{"cmd": "stop"}\n')
        p.stdin.close()
        assert p.wait(timeout=60) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert (first["seq"], first["code"]) == (None, "INPUT_INVALID"), first
    assert (second["seq"], second["result"]) == (2, "dump"), second
    assert peak < 3 * MAX_JSON_BYTES, f"peak {peak >> 20} MiB for a line of {6 * MAX_JSON_BYTES >> 20} MiB"
