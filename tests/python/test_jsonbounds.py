"""JSON a caller (or a file's free text) gives is parsed within bounds (rlarchive.jsonbounds, spec §15): its depth
and an upper bound of its memory are known before parsing, the bound is measured against the peak of texts built to
take the most, and every place that parses such JSON answers a deep or heavy text with a clear error, never a crash."""

import io
import json
import os
import shutil
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from suite import ROOT

import rlarchive
from rlarchive import jsonbounds
from rlarchive.cli import main
from rlarchive.conformance import protocol
from rlarchive.jsonbounds import JSONBoundsError, json_cost, nesting_depth

N = 60_000


def heavy_texts(n: int = N) -> dict[str, str]:
    """Texts of about ``n`` values built to take the most memory to parse, for each kind of value."""
    return {
        "floats": "[" + ",".join("1.5" for _ in range(n)) + "]",
        "cached small ints": "[" + ",".join("1" for _ in range(n)) + "]",
        "large ints": "[" + ",".join(str(10**15 + i) for i in range(n)) + "]",
        "empty arrays": "[" + ",".join("[]" for _ in range(n)) + "]",
        "empty objects": "[" + ",".join("{}" for _ in range(n)) + "]",
        "one-key objects, keys all different": "[" + ",".join(f'{{"{i}":1}}' for i in range(n)) + "]",
        "keys beyond the BMP": "[" + ",".join(f'{{"\U0001f600{i}":1}}' for i in range(n)) + "]",
        "one object of many keys": "{" + ",".join(f'"{i}":0' for i in range(n)) + "}",
        "arrays nested 63 deep": "[" + ",".join("[" * 63 + "1" + "]" * 63 for _ in range(n // 63)) + "]",
        "objects nested 63 deep": "[" + ",".join('{"a":' * 63 + "1" + "}" * 63 for _ in range(n // 63)) + "]",
        "short strings": "[" + ",".join(f'"s{i}"' for i in range(n)) + "]",
        "strings widened by one character": "[" + ",".join('"ab\U0001f600"' for _ in range(n)) + "]",
        "strings widened by an escape": "[" + ",".join('"' + "a" * 20 + '\\n\\ud83d\\ude00"' for _ in range(n)) + "]",
        "one long string": '"' + "a" * (8 * n) + '"',
        "one long string, escaped then widened": '"' + "a" * (8 * n) + '\\n\\u0100\U0001f600"',
        "white space": "[" + " " * (8 * n) + "1]",
    }


def _peak(fn):
    """(what ``fn()`` returns, the peak of memory it allocated, by tracemalloc)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(heavy_texts()))
def test_the_cost_counted_before_parsing_bounds_the_measured_peak(name):
    text = heavy_texts()[name]
    # the bytes are read from a stream, as a command reads standard input, inside the measurement
    stream = io.BytesIO(text.encode("utf-8"))
    from rlarchive.cli.common import parse_input, read_input

    value, peak = _peak(lambda: parse_input(read_input(stream, "input"), "input"))
    raw = text.encode("utf-8")
    assert value == json.loads(raw)
    assert peak <= json_cost(raw), (name, peak, json_cost(raw), peak / len(raw))


def test_a_text_beyond_a_bound_is_refused_unparsed():
    raw = ("[" + ",".join("[]" for _ in range(N)) + "]").encode()
    cost = json_cost(raw)
    _, peak = _peak(lambda: pytest.raises(JSONBoundsError, jsonbounds.loads, raw, max_depth=64, max_memory=cost - 1))
    assert peak < len(raw)  # nothing was decoded or parsed
    assert jsonbounds.loads(raw, max_depth=64, max_memory=cost) == [[]] * N
    deep = b"[" * 65 + b"]" * 65
    with pytest.raises(JSONBoundsError, match="nested 65 levels deep, above the limit of 64"):
        jsonbounds.loads(deep, max_depth=64, max_memory=1 << 30)
    assert jsonbounds.loads(deep[1:-1], max_depth=64, max_memory=1 << 30) is not None
    assert nesting_depth('["[[[", {"a": "\\"[["}]') == 2
    for bad in (b"\xff", b"[1,", b"NaN!"):
        with pytest.raises(ValueError):
            jsonbounds.loads(bad, max_depth=64, max_memory=1 << 30)


# -- every place that parses JSON it is given: a deep text is a clear error, never INTERNAL_ERROR

DEEP = "[" * 100_000 + "]" * 100_000
POLICY = os.path.join(ROOT, "test-vectors", "valid", "policy-ppo-mlp-discrete.rlarchive")


def _one_line_error(capsys, argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    try:
        status = main(argv)
    except SystemExit as e:  # an option's value refused while the command line is parsed (exit status 2)
        status = e.code
    out, err = capsys.readouterr()
    assert status in (1, 2) and err.count("\n") == 1 and "INTERNAL_ERROR" not in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("how", ["stdin", "inline", "file"])
def test_predict_refuses_deep_observations(how, tmp_path, capsys, monkeypatch):
    given, stdin = {"stdin": ("-", DEEP.encode()), "inline": (DEEP, None), "file": (str(tmp_path / "o.json"), None)}[
        how
    ]
    (tmp_path / "o.json").write_text(DEEP)
    err = _one_line_error(capsys, ["predict", POLICY, "--obs", given], stdin, monkeypatch)
    assert "INPUT_INVALID" in err and "nested 100000 levels deep, above the limit of 64" in err


def test_metadata_set_refuses_a_deep_value(tmp_path, capsys):
    path = tmp_path / "a.rlarchive"
    rlarchive.save(path, {"gamma": 0.99})
    err = _one_line_error(capsys, ["metadata", str(path), "--set", f"evaluations={DEEP}"])
    assert "JSON_DEPTH" in err


def test_export_sb3_refuses_a_deep_torch_values_list(tmp_path, capsys):
    path = tmp_path / "a.rlarchive"
    rlarchive.save(
        path,
        {"gamma": 0.99},
        tensors={"policy": {"w": np.ones(2, np.float32)}},
        metadata={"sb3.torch_values": DEEP, "sb3.algorithm": "PPO", "source": "stable-baselines3"},
    )
    err = _one_line_error(capsys, ["export-sb3", str(path), str(tmp_path / "a.zip")])
    assert "VALUE_UNSUPPORTED" in err and "sb3.torch_values" in err


@pytest.mark.parametrize(
    "testee",
    [
        [sys.executable, os.path.join(ROOT, "tests", "conformance", "testee_python.py")],
        ["node", os.path.join(ROOT, "reader-js", "bin", "conformance.mjs")],
    ],
)
def test_a_testee_answers_a_deep_request_and_reads_on(testee):
    if testee[0] == "node" and not shutil.which("node"):
        pytest.skip("node is not installed")
    lines = [DEEP, "[" * 65 + "]" * 65, "not json", json.dumps({"cmd": "start", "protocol": 1}), '{"cmd": "stop"}']
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")}
    done = subprocess.run(testee, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120, env=env)
    answers = [json.loads(x) for x in done.stdout.splitlines()]
    assert done.returncode == 0, done.stderr[-2000:]
    # Annex A.5: each malformed line is answered INPUT_INVALID (its seq unreadable), then the handshake is answered
    assert [a.get("code") for a in answers[:3]] == ["INPUT_INVALID"] * 3, answers
    assert all(a["seq"] is None and a["result"] == "error" for a in answers[:3]), answers
    assert "JSON_DEPTH" in answers[0]["message"] and "JSON_DEPTH" in answers[1]["message"]
    assert "JSON_SYNTAX" in answers[2]["message"]
    assert answers[3]["ok"] is True and len(answers) == 4


HEAVY = "[" + ",".join(["[]"] * 1000) + "]"


@pytest.mark.parametrize(("line", "memory"), [(DEEP, None), (HEAVY, json_cost(HEAVY.encode()) - 1)])
def test_the_harness_fails_an_answer_beyond_its_bounds(line, memory, tmp_path, monkeypatch):
    """A testee whose answer (here, to the handshake) nests too deep or could take too much memory to parse is a
    testee that failed (TesteeDied, with why), not a harness that crashed; the memory bound is made small to meet."""
    if memory is not None:
        monkeypatch.setattr(protocol, "MAX_ANSWER_MEMORY", memory)
    script = tmp_path / "liar.py"
    script.write_text(f"import sys\nsys.stdin.readline()\nprint({line!r}, flush=True)\nsys.stdin.readline()\n")
    testee = protocol.Testee("liar", [sys.executable, str(script)], timeout=30, cwd=str(tmp_path))
    try:
        with pytest.raises(protocol.TesteeDied, match="not a JSON line within the bounds of Annex A.1"):
            testee.start()
    finally:
        testee.stop(kill=True)


def test_the_harness_refuses_a_deep_xfail_list_with_one_line(tmp_path):
    from rlarchive.conformance import main as harness

    xfail = tmp_path / "xfail.json"
    xfail.write_text(DEEP)
    testee = f"{sys.executable} {os.path.join(ROOT, 'tests', 'conformance', 'testee_python.py')}"
    with pytest.raises(SystemExit) as ei:
        harness(["--reader-cmd", testee, "--xfail", str(xfail)])
    assert str(ei.value) == (
        f"rlarchive conformance: {xfail}: not a JSON file the harness can read "
        "(JSON nested 100000 levels deep, above the limit of 64)"
    )
