"""The exit status of every command, by the class of what went wrong (README, "Exit status"): 0 success, 1 a file
that is invalid (diff: the archives differ), 2 a request that cannot be carried out (a usage error, an option's
value, a part of a file the request names that the file does not hold, a file that cannot be read or written)."""

import json
import os
import shutil

import pytest
from suite import ROOT

from rlarchive.cli import main

VALID = os.path.join(ROOT, "test-vectors", "valid")
PPO = os.path.join(VALID, "ppo-like-agent.rlarchive")
MINIMAL = os.path.join(VALID, "minimal.rlarchive")
POLICY = os.path.join(VALID, "policy-ppo-mlp-discrete.rlarchive")
INVALID = os.path.join(ROOT, "test-vectors", "invalid", "member-digest-mismatch-tensor.rlarchive")
JUNK = os.path.join(ROOT, "test-vectors", "invalid", "data-not-object.rlarchive")


def _run(capsys, *argv):
    """(exit status, standard output, standard error) of ``rlarchive ARGV``, a usage error included."""
    try:
        status = main(list(argv))
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def _check(capsys, argv, status, code=None):
    got, out, err = _run(capsys, *argv)
    assert got == status, (argv, got, err)
    if code is not None:
        assert err.startswith(f"rlarchive: {code}: ") and err.count("\n") == 1 and "Traceback" not in err, (argv, err)
    return out, err


@pytest.fixture
def copy(tmp_path):
    def make(src):
        dest = tmp_path / os.path.basename(src)
        shutil.copyfile(src, dest)
        return str(dest)

    return make


def test_reading_commands(capsys, tmp_path):
    missing = str(tmp_path / "missing.rlarchive")
    for command in (["validate"], ["inspect"], ["inspect", "--verify"], ["dump"], ["card"]):
        _check(capsys, [*command, PPO], 0)
        _check(capsys, [*command, missing], 2, "IO_ERROR")
        _check(capsys, [*command, str(tmp_path)], 2)  # a folder: validate finds no archive in it, the others refuse
    for command in (["validate"], ["inspect", "--verify"], ["dump"], ["card"]):
        _check(capsys, [*command, JUNK], 1, None if command == ["validate"] else "DATA_INVALID")
    _check(capsys, ["validate", INVALID], 1, "MEMBER_DIGEST_MISMATCH")
    _check(capsys, ["validate", "--only", "NOT_A_CODE", PPO], 2, "INPUT_INVALID")
    _check(capsys, ["inspect", "--no-such-option", PPO], 2, "INPUT_INVALID")
    _check(capsys, [], 2, "INPUT_INVALID")


def test_a_file_that_cannot_be_read_is_not_called_invalid(capsys, tmp_path):
    missing = str(tmp_path / "missing.rlarchive")
    out, err = _check(capsys, ["validate", missing, PPO], 2, "IO_ERROR")
    assert out.splitlines() == [
        f"{missing}: not checked (it cannot be read)",
        f"  error   IO_ERROR: cannot open {missing}: No such file or directory",
        f"{PPO}: valid (0 errors, 0 warnings, 0 infos)",
    ]
    assert "invalid" not in err.lower()
    out, _ = _check(capsys, ["validate", INVALID], 1)
    assert out.splitlines()[0] == f"{INVALID}: INVALID (1 error, 0 warnings, 0 infos)"  # one error, not "1 errors"


def test_diff(capsys, tmp_path):
    _check(capsys, ["diff", PPO, PPO], 0)
    _check(capsys, ["diff", PPO, MINIMAL], 1)
    _check(capsys, ["diff", PPO, JUNK], 2, "DATA_INVALID")  # 1 means "they differ": an invalid file is 2
    _check(capsys, ["diff", PPO, str(tmp_path / "missing")], 2, "IO_ERROR")
    _check(capsys, ["diff", PPO, MINIMAL, "--ignore", "tensor"], 2, "INPUT_INVALID")


def test_metadata(capsys, copy):
    path = copy(PPO)
    before = open(path, "rb").read()
    _check(capsys, ["metadata", path], 0)
    for bad in ("evaluations=oops", "n_envs=x", "env_id=", "no-equals-sign"):  # the option's value: a usage error
        _, err = _check(capsys, ["metadata", path, "--set", bad], 2, "INPUT_INVALID")
        assert "--set" in err
    assert open(path, "rb").read() == before  # refused before any work
    _check(capsys, ["metadata", path, "--set", "n_envs=4"], 0)
    _check(capsys, ["metadata", copy(JUNK), "--set", "n_envs=4"], 1, "DATA_INVALID")
    _check(capsys, ["metadata", path + ".missing", "--set", "n_envs=4"], 2, "IO_ERROR")


def test_predict_and_export_onnx(capsys, tmp_path):
    with open(os.path.join(VALID, "policy-ppo-mlp-discrete-predict.predict.json"), encoding="utf-8") as f:
        obs = json.dumps(json.load(f)["observations"][0])
    _check(capsys, ["predict", POLICY, "--obs", obs], 0)
    _check(capsys, ["predict", POLICY, "--obs", "[1, 2"], 2, "INPUT_INVALID")
    _check(capsys, ["predict", PPO, "--obs", "[1]"], 2, "INPUT_INVALID")  # no portable policy to run: the request
    _check(capsys, ["predict", JUNK, "--obs", "[1]"], 1, "DATA_INVALID")
    _check(capsys, ["export-onnx", POLICY, str(tmp_path / "m.onnx"), "--opset", "5"], 2, "INPUT_INVALID")
    _check(capsys, ["export-onnx", JUNK, str(tmp_path / "m.onnx")], 1, "DATA_INVALID")


def test_evaluate_and_package(capsys, tmp_path):
    _check(capsys, ["evaluate", POLICY, "--env", "NoSuchEnvironment-v0", "--episodes", "1"], 2, "ENV_NOT_FOUND")
    _check(capsys, ["evaluate", POLICY, "--env", "CartPole-v1", "--episodes", "0"], 2, "INPUT_INVALID")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    _check(capsys, ["package", PPO, str(tmp_path / "full")], 2, "IO_ERROR")


@pytest.fixture(scope="module")
def sb3_zip(tmp_path_factory):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO as SB3PPO

    folder = tmp_path_factory.mktemp("run")
    model = SB3PPO("MlpPolicy", "CartPole-v1", n_steps=8, batch_size=8, device="cpu", policy_kwargs={"net_arch": [4]})
    model.save(folder / "CartPole-v1.zip")
    return str(folder / "CartPole-v1.zip")


def test_imports(capsys, tmp_path, sb3_zip):
    out = str(tmp_path / "out.rlarchive")
    _check(capsys, ["import-sb3", sb3_zip, out], 0)
    _check(capsys, ["import-sb3", PPO, out], 1, "IMPORT_INVALID")  # not a Stable-Baselines3 model
    _check(capsys, ["import-sb3", str(tmp_path / "missing.zip"), out], 2, "IO_ERROR")
    for bad in (["--algorithm", "FOO"], ["--metadata", "evaluations=oops"], ["--budget", "lots"]):
        _, err = _check(capsys, ["import-sb3", sb3_zip, str(tmp_path / "o2.rlarchive"), *bad], 2, "INPUT_INVALID")
        assert bad[0] in err
    assert not os.path.exists(tmp_path / "o2.rlarchive")
    _check(capsys, ["import-sb2", sb3_zip, out], 1, "IMPORT_INVALID")  # a Stable-Baselines3 file, not SB2
    run = os.path.dirname(sb3_zip)
    _check(capsys, ["import-zoo", run, str(tmp_path / "zoo.rlarchive")], 0)
    _, err = _check(capsys, ["import-zoo", run, str(tmp_path / "best.rlarchive"), "--best"], 2, "INPUT_INVALID")
    assert "best_model.zip" in err and not os.path.exists(tmp_path / "best.rlarchive")
    (tmp_path / "empty").mkdir()
    _check(capsys, ["import-zoo", str(tmp_path / "empty"), out, "--best"], 1, "IMPORT_INVALID")  # no run at all
    _check(capsys, ["import-zoo", str(tmp_path / "missing"), out], 2, "IO_ERROR")


def test_export_sb3(capsys, tmp_path, sb3_zip):
    archive = str(tmp_path / "a.rlarchive")
    _check(capsys, ["import-sb3", sb3_zip, archive], 0)
    _check(capsys, ["export-sb3", archive, str(tmp_path / "back.zip")], 0)
    for bad in (["--sb3-version", "1.5"], ["--sb3-version", "abc"]):
        _check(capsys, ["export-sb3", archive, str(tmp_path / "x.zip"), *bad], 2, "INPUT_INVALID")
    for option in ("--vecnormalize-out", "--replay-buffer-out"):  # a part the archive does not hold
        _, err = _check(
            capsys,
            ["export-sb3", archive, str(tmp_path / "x.zip"), option, str(tmp_path / "p.pkl")],
            2,
            "INPUT_INVALID",
        )
        assert option in err
    assert not os.path.exists(tmp_path / "x.zip")
    _check(capsys, ["export-sb3", JUNK, str(tmp_path / "x.zip")], 1, "DATA_INVALID")
    _check(capsys, ["export-sb3", archive, str(tmp_path)], 2, "IO_ERROR")
