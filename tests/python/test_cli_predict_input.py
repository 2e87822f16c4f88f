"""predict --obs: standard input, inline JSON, a file; one action per observation of a bare batch (Box and Dict spaces)."""

import io
import json
import os

import numpy as np
import pytest
from suite import ROOT

import rlarchive
from rlarchive.cli import main
from rlarchive.cli.policy import is_inline
from rlarchive.values import load_value

VALID = os.path.join(ROOT, "test-vectors", "valid")
BOX = os.path.join(VALID, "policy-ppo-mlp-discrete.rlarchive")
DICT = os.path.join(VALID, "policy-numerics-dict-discrete-box-multidiscrete-multibinary.rlarchive")


def _observations(archive: str) -> list:
    with open(archive.replace(".rlarchive", "-predict.predict.json"), encoding="utf-8") as f:
        return [load_value(v) for v in json.load(f)["observations"]]


def _plain(obs):
    """An observation as plain JSON numbers (a dict of them for a Dict space)."""
    return {k: np.asarray(v).tolist() for k, v in obs.items()} if isinstance(obs, dict) else np.asarray(obs).tolist()


def _policy_action(archive: str, obs) -> list:
    with rlarchive.open(archive, spaces="neutral") as ar:
        return np.asarray(ar.policy().predict(obs)[0]).tolist()


def _predict(capsys, archive: str, given: str, stdin: bytes = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    status = main(["predict", archive, "--obs", given])
    out, err = capsys.readouterr()
    return status, (json.loads(out)["actions"] if status == 0 else None), err


def test_the_rule_that_tells_inline_json_from_a_path():
    for text in ("[1, 2]", ' {"a": 1}', "5", "-1.5", "0.25", "  [0]"):
        assert is_inline(text), text
    for text in ("obs.json", "-", "./5", "-x.json", "", "data/[1].json"):
        assert not is_inline(text), text


@pytest.mark.parametrize("archive", [BOX, DICT])
def test_one_observation_inline_from_stdin_and_from_a_file(archive, tmp_path, capsys, monkeypatch):
    obs = _observations(archive)[0]
    want = [_policy_action(archive, obs)]
    text = json.dumps(_plain(obs))
    status, got, err = _predict(capsys, archive, text)
    assert status == 0 and got == want, err
    status, got, err = _predict(capsys, archive, "-", stdin=text.encode(), monkeypatch=monkeypatch)
    assert status == 0 and got == want, err
    path = tmp_path / "obs.json"
    path.write_text(text)
    status, got, err = _predict(capsys, archive, str(path))
    assert status == 0 and got == want, err


@pytest.mark.parametrize("archive", [BOX, DICT])
def test_a_bare_batch_gives_one_action_per_observation(archive, capsys, monkeypatch):
    observations = _observations(archive)[:3]
    want = [_policy_action(archive, o) for o in observations]
    assert len(want) == 3
    batch = [_plain(o) for o in observations]  # a JSON array of observations (of objects for a Dict space)
    status, got, err = _predict(capsys, archive, json.dumps(batch))
    assert status == 0 and got == want, err
    if archive == DICT:  # a dict whose every key is a batch is a batch too
        columns = {k: [b[k] for b in batch] for k in batch[0]}
        status, got, err = _predict(capsys, archive, "-", stdin=json.dumps(columns).encode(), monkeypatch=monkeypatch)
        assert status == 0 and got == want, err


def test_a_file_whose_name_looks_like_json_is_read_with_a_path(tmp_path, capsys, monkeypatch):
    obs = _observations(BOX)[0]
    (tmp_path / "5").write_text(json.dumps(_plain(obs)))
    monkeypatch.chdir(tmp_path)
    status, got, err = _predict(capsys, BOX, "./5")
    assert status == 0 and got == [_policy_action(BOX, obs)], err
    status, _, err = _predict(capsys, BOX, "5")  # inline JSON: the number 5, not an observation of shape (4,)
    assert status == 2 and err.startswith("rlarchive: INPUT_INVALID: --obs: ") and err.count("\n") == 1


@pytest.mark.parametrize("given", ["[1, 2", '{"observations": 3}', "[[1, 2, 3, 4], [1, 2]]", "[]"])
def test_bad_inline_input_is_one_line_with_a_code(given, capsys):
    status, _, err = _predict(capsys, BOX, given)
    assert status == 2 and err.startswith("rlarchive: INPUT_INVALID: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_bad_stdin_is_one_line_with_a_code(capsys, monkeypatch):
    status, _, err = _predict(capsys, BOX, "-", stdin=b"\xff not json", monkeypatch=monkeypatch)
    assert status == 2 and err.startswith("rlarchive: INPUT_INVALID: standard input: not JSON") and err.count("\n") == 1


def test_deeply_nested_observations_are_input_invalid(capsys, monkeypatch):
    """A nesting far past Python's recursion limit is refused before parsing, with the limit (spec §15)."""
    deep = "[" * 100_000 + "]" * 100_000
    for given, stdin in ((deep, None), ("-", deep.encode())):
        status, _, err = _predict(capsys, BOX, given, stdin=stdin, monkeypatch=monkeypatch)
        assert status == 2 and err.count("\n") == 1, err
        assert "INPUT_INVALID" in err and "nested 100000 levels deep, above the limit of 64" in err, err


def _read_obs_peak(raw: bytes, monkeypatch):
    """(the parsed observations or the error, the peak of memory read_obs allocated) for ``raw`` on standard input."""
    import tracemalloc

    from rlarchive.cli.policy import read_obs
    from rlarchive.errors import RlarchiveError

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw)))
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        try:
            out = read_obs("-")[0]
        except RlarchiveError as e:
            out = e
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_the_memory_limit_bounds_memory_not_bytes(monkeypatch):
    """MAX_INPUT_JSON_MEMORY (made 4 MiB here) bounds the memory of reading and parsing, measured: 600 KB of empty
    arrays, which would take about 13 MB once parsed, is refused unparsed; 100 KB of floats is parsed within it."""
    from rlarchive.cli import common

    cap = 4 << 20
    monkeypatch.setattr(common, "MAX_INPUT_JSON_MEMORY", cap, raising=False)
    heavy = ("[" + ",".join(["[]"] * 200_000) + "]").encode()
    got, peak = _read_obs_peak(heavy, monkeypatch)
    assert getattr(got, "code", None) == "INPUT_INVALID" and "bytes of memory to parse, above the limit" in str(got)
    assert peak <= cap
    light = ("[" + ",".join(["1.5"] * 25_000) + "]").encode()
    got, peak = _read_obs_peak(light, monkeypatch)
    assert got == [1.5] * 25_000 and peak <= cap
