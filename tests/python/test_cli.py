"""The rlarchive command: validate, inspect and dump on a PPO-like archive and on broken files."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from cases import CASES
from suite import ROOT, schema_validator

import rlarchive
import rlarchive.values

RLARCHIVE = [sys.executable, "-m", "rlarchive.cli"]


def _run(*args):
    return subprocess.run([*RLARCHIVE, *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def ppo(tmp_path_factory):
    p = tmp_path_factory.mktemp("cli") / "ppo.rlarchive"
    p.write_bytes(next(c for c in CASES if c.id == "ppo-like-agent").build())
    return str(p)


def test_validate_valid_archive(ppo):
    r = _run("validate", ppo)
    assert r.returncode == 0 and "valid (0 errors" in r.stdout


def test_validate_json_report_matches_schema(ppo):
    r = _run("validate", "--json", ppo)
    report = json.loads(r.stdout)
    schema_validator("report-1.0.schema.json").validate(report)
    assert report["valid"] is True


def test_validate_invalid_archives_exit_1_with_codes(tmp_path):
    paths = []
    for cid in ("zip-gap-before-member", "json-nan-literal", "member-digest-mismatch-tensor"):
        p = tmp_path / f"{cid}.rlarchive"
        p.write_bytes(next(c for c in CASES if c.id == cid).build())
        paths.append(str(p))
    r = _run("validate", "--json", *paths)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    schema_validator("report-1.0.schema.json").validate(doc)
    reports = doc["reports"]
    assert [rep["issues"][0]["code"] for rep in reports] == ["ZIP_GAP", "JSON_NAN_LITERAL", "MEMBER_DIGEST_MISMATCH"]
    assert [line.split(":")[1].strip() for line in r.stderr.splitlines()] == [
        "ZIP_GAP",
        "JSON_NAN_LITERAL",
        "MEMBER_DIGEST_MISMATCH",
    ]
    human = _run("validate", *paths)
    assert human.returncode == 1 and "ZIP_GAP" in human.stdout and "INVALID" in human.stdout


def test_validate_reports_several_independent_problems(tmp_path):
    import numpy as np

    import rlarchive

    p = tmp_path / "two.rlarchive"
    rlarchive.save(p, {"x": 1}, {"a": {"w": np.ones(4)}, "b": {"w": np.ones(4)}})
    raw = bytearray(p.read_bytes())
    # flip the last element byte of both tensor members
    with rlarchive.open(p) as ar:
        offs = [ar.tensor_info(g)["w"].offset + 31 for g in ("a", "b")]
    for o in offs:
        raw[o] ^= 1
    p.write_bytes(bytes(raw))
    rep = rlarchive.validate(p)
    assert [i["code"] for i in rep["issues"]] == ["ZIP_CRC_MISMATCH", "ZIP_CRC_MISMATCH"]


def test_inspect_shows_the_agent(ppo):
    r = _run("inspect", "--all", ppo)
    assert r.returncode == 0
    out = r.stdout
    for needle in (
        "format version  1.0",
        "observation_space",
        "Box(F32, shape=(8,), bounds [-inf, inf])",
        "Discrete(n=4",
        "linear schedule",
        "1732246000123456789",
        "policy: 6 tensors",
        "optimizer.policy.optimizer",
        "ActorCriticPolicy",
    ):
        assert needle in out, needle


def test_dump_is_the_canonical_dump_byte_for_byte(ppo):
    """The command writes the dump exactly, without a trailing newline (spec §13.3): redirected, it is the golden file."""
    r = subprocess.run([*RLARCHIVE, "dump", ppo], capture_output=True)
    with open(os.path.join(ROOT, "test-vectors", "valid", "ppo-like-agent.dump.json"), "rb") as f:
        want = f.read()
    assert r.returncode == 0 and r.stdout == want and not r.stdout.endswith(b"\n")


def test_errors_are_one_line_with_code(tmp_path):
    p = tmp_path / "junk"
    p.write_bytes(b"not an archive")
    r = _run("dump", str(p))
    assert r.returncode == 1 and r.stderr.startswith("rlarchive: ARCHIVE_NOT_RLARCHIVE")


# ---------------------------------------------------------------- command-line conventions


def _main(capsys, *argv):
    """Run the command in this process: (exit status, stdout, stderr)."""
    from rlarchive.cli import main

    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_version_and_python_dash_m(ppo):
    import rlarchive

    script = os.path.join(os.path.dirname(sys.executable), "rlarchive")
    runs = [[sys.executable, "-m", "rlarchive", "--version"], [*RLARCHIVE, "--version"]]
    if os.path.exists(script):
        runs.append([script, "--version"])
    runs.append([sys.executable, "-m", "rlarchive", "validate", ppo])
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for cmd in runs]
    results = [(p.wait(), p.stdout.read(), p.stderr.read()) for p in procs]
    for status, out, err in results[:-1]:
        assert status == 0 and out.split()[:2] == ["rlarchive", rlarchive.__version__], (out, err)
    status, out, err = results[-1]
    assert status == 0 and out.startswith(f"{ppo}: valid") and err == ""


def test_exit_status_of_validate(ppo, tmp_path, capsys):
    bad = tmp_path / "bad.rlarchive"
    bad.write_bytes(b"junk")
    missing = str(tmp_path / "missing.rlarchive")
    assert _main(capsys, "validate", ppo)[0] == 0
    assert _main(capsys, "validate", ppo, str(bad))[0] == 1
    status, out, err = _main(capsys, "validate", missing)
    # a file that cannot be read is not said to be invalid, nor its one error counted as "errors"
    assert status == 2 and out.startswith(f"{missing}: not checked (it cannot be read)\n") and "INVALID" not in out
    assert err == f"rlarchive: IO_ERROR: cannot open {missing}: No such file or directory\n"
    assert _main(capsys, "validate", str(bad), missing)[0] == 2  # an I/O error outranks an invalid file


def test_validate_folders_recursively_into_one_json_document(ppo, tmp_path, capsys):
    import shutil

    tree = tmp_path / "runs"
    (tree / "b" / "deep").mkdir(parents=True)
    (tree / "a").mkdir()
    shutil.copy(ppo, tree / "b" / "deep" / "z.rlarchive")
    shutil.copy(ppo, tree / "a" / "y.rlarchive")
    (tree / "b" / "x.rlarchive").write_bytes(b"junk")
    (tree / "b" / "notes.txt").write_bytes(b"not an archive, not looked at")
    (tree / "a" / "model.zip").write_bytes(b"not looked at either")
    status, out, err = _main(capsys, "validate", "--json", str(tree), ppo)
    doc = json.loads(out)
    schema_validator("report-1.0.schema.json").validate(doc)
    files = [os.path.relpath(r["file"], tmp_path) for r in doc["reports"]]
    expected = [
        os.path.join("runs", "a", "y.rlarchive"),
        os.path.join("runs", "b", "x.rlarchive"),
        os.path.join("runs", "b", "deep", "z.rlarchive"),
    ]
    assert files[:3] == expected and doc["reports"][3]["file"] == ppo
    assert [r["valid"] for r in doc["reports"]] == [True, False, True, True]
    assert status == 1 and err.count("\n") == 1 and "x.rlarchive" in err
    # one folder alone is still the several-files form; one file alone is the report itself
    assert set(json.loads(_main(capsys, "validate", "--json", str(tree / "a"))[1])) == {"reports"}
    single = json.loads(_main(capsys, "validate", "--json", ppo)[1])
    assert single["file"] == ppo and "reports" not in single
    # a folder without archives is an error, not a silent success
    (tmp_path / "empty").mkdir()
    status, out, err = _main(capsys, "validate", str(tmp_path / "empty"))
    assert status == 2 and err.startswith("rlarchive: IO_ERROR: no *.rlarchive file")


def test_report_schema_admits_one_report_or_reports_and_nothing_else(ppo):
    import jsonschema

    import rlarchive

    report = rlarchive.validate(ppo)
    v = schema_validator("report-1.0.schema.json")
    v.validate(report)
    v.validate({"reports": [report, report]})
    v.validate({"reports": []})
    for wrong in ([report], {"reports": [report], "extra": 1}, {"reports": [{"file": "x"}]}, {**report, "reports": []}):
        with pytest.raises(jsonschema.ValidationError):
            v.validate(wrong)


def _zip(path, names):
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        for n in names:
            z.writestr(n, b"{}" if n == "data" else b"x")
    return str(path)


def test_a_stable_baselines_zip_gets_a_conversion_hint(tmp_path, capsys):
    sb3 = _zip(tmp_path / "ppo.zip", ["data", "policy.pth", "policy.optimizer.pth", "pytorch_variables.pth"])
    sb2 = _zip(tmp_path / "ppo2.zip", ["data", "parameters", "parameter_list"])
    other = _zip(tmp_path / "other.zip", ["data", "readme.txt"])
    for command in ("validate", "inspect"):
        status, _, err = _main(capsys, command, sb3)
        assert status == 1 and err.count("\n") == 1 and f"rlarchive import-sb3 {sb3} OUT.rlarchive" in err, err
        assert err.startswith("rlarchive: ARCHIVE_NOT_RLARCHIVE: ")
        status, _, err = _main(capsys, command, sb2)
        assert status == 1 and f"rlarchive import-sb2 {sb2} OUT.rlarchive" in err, err
        status, _, err = _main(capsys, command, other)
        assert status == 1 and "import-sb" not in err, err


def test_inspect_says_whether_digests_were_checked(ppo, tmp_path, capsys):
    unchecked = (
        "  digests         NOT checked for the tensor and extension members (only for manifest.json and data.json): "
        "check them with --verify, or rlarchive validate"
    )
    status, out, _ = _main(capsys, "inspect", ppo)
    assert status == 0 and unchecked in out.splitlines()
    assert "  validation      no error found in the structure; digests not checked (above)" in out.splitlines()
    status, out, _ = _main(capsys, "inspect", "--verify", ppo)
    assert status == 0 and "every member checked" in out and "--verify" not in out and "NOT" not in out
    assert "  validation      no error found" in out.splitlines()
    bad = tmp_path / "bad.rlarchive"
    bad.write_bytes(next(c for c in CASES if c.id == "member-digest-mismatch-tensor").build())
    status, out, err = _main(capsys, "inspect", str(bad))  # a damaged tensor: not seen, and the page says so plainly
    assert status == 0 and unchecked in out.splitlines() and "in what was checked" not in out and err == ""
    status, out, err = _main(capsys, "inspect", "--verify", str(bad))
    assert status == 1 and err.startswith("rlarchive: MEMBER_DIGEST_MISMATCH: ")


WITHOUT_TORCH = """
import sys
sys.modules["torch"] = None  # as if torch were not installed: importing it fails
from rlarchive.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_commands_that_need_torch_say_what_to_install(ppo, tmp_path):
    import zipfile

    sb3 = tmp_path / "ppo.zip"
    with zipfile.ZipFile(sb3, "w") as z:
        z.writestr("data", json.dumps({"gamma": 0.99}))
        z.writestr("policy.pth", b"torch.save output would be here")
    runs = [["import-sb3", str(sb3), str(tmp_path / "out.rlarchive")], ["export-sb3", ppo, str(tmp_path / "out.zip")]]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WITHOUT_TORCH, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for argv in runs
    ]
    for p in procs:
        out, err = p.communicate()
        assert p.returncode == 2 and "Traceback" not in err
        assert err.startswith("rlarchive: FRAMEWORK_UNAVAILABLE: ") and err.count("\n") == 1
        assert "torch" in err and "pip install 'rlarchive[sb3]'" in err
    assert os.listdir(tmp_path) == ["ppo.zip"]


def _predict_case(model_id: str) -> tuple:
    base = os.path.join(ROOT, "test-vectors", "valid")
    return os.path.join(base, f"policy-{model_id}.rlarchive"), os.path.join(
        base, f"policy-{model_id}-predict.predict.json"
    )


@pytest.mark.slow
def test_predict_prints_the_actions_sb3_computes(tmp_path):
    from generate import judge_actions

    judge = judge_actions()
    for model_id in ("recurrent-ppo-two-layer-lstm", "maskable-ppo-masks", "ppo-dict-observation", "sac-silu"):
        archive, request = _predict_case(model_id)
        with open(request, encoding="utf-8") as f:
            want = json.load(f)["actions"]
        r = subprocess.run(
            [sys.executable, "-m", "rlarchive", "predict", archive, "--obs", request, "--values"],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr
        assert judge(json.loads(r.stdout)["actions"], want) == ""
        # plain JSON numbers in and out
        r = subprocess.run(
            [sys.executable, "-m", "rlarchive", "predict", archive, "--obs", request], capture_output=True, text=True
        )
        plain = json.loads(r.stdout)["actions"]
        for got, w in zip(plain, want):
            expected = rlarchive.values.load_value(w)
            assert (
                np.allclose(np.asarray(got), expected, rtol=1e-4, atol=1e-4) and np.asarray(got).shape == expected.shape
            )


def test_predict_takes_one_plain_observation(tmp_path):
    archive, request = _predict_case("ppo-mlp-discrete")
    with open(request, encoding="utf-8") as f:
        spec = json.load(f)
    first = rlarchive.values.load_value(spec["observations"][0]).tolist()
    obs = tmp_path / "obs.json"
    obs.write_text(json.dumps(first))
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "predict", archive, "--obs", str(obs)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["actions"] == [int(rlarchive.values.load_value(spec["actions"][0]))]


def test_predict_refuses_bad_input_with_a_code(tmp_path):
    archive, _ = _predict_case("ppo-mlp-discrete")
    cases = {
        "wrong shape": [1.0, 2.0],
        "not json": "{",
        "bad value": {"$type": "ndarray", "dtype": "F32", "shape": [4], "base64": "AAAA"},
    }
    for what, content in cases.items():
        obs = tmp_path / "obs.json"
        obs.write_text(content if isinstance(content, str) else json.dumps(content))
        r = subprocess.run(
            [sys.executable, "-m", "rlarchive", "predict", archive, "--obs", str(obs)], capture_output=True, text=True
        )
        assert r.returncode == 2 and r.stderr.startswith("rlarchive: INPUT_INVALID"), (what, r.stderr)
        assert "Traceback" not in r.stderr
    plain = os.path.join(ROOT, "test-vectors", "valid", "vec-normalize-box.rlarchive")
    obs.write_text("[0, 0, 0]")
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "predict", plain, "--obs", str(obs)], capture_output=True, text=True
    )
    assert r.returncode == 2 and "no portable policy" in r.stderr


def test_import_and_export_sb3_say_what_carries_training_on(tmp_path, capsys):
    """import-sb3 says what it converted for training to go on (replay buffer, run state, random state), export-sb3 what it wrote."""
    import warnings

    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import SAC

    from rlarchive import sb3 as rsb3
    from rlarchive.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SAC(
            "MlpPolicy",
            "Pendulum-v1",
            buffer_size=100,
            learning_starts=1000,
            device="cpu",
            policy_kwargs={"net_arch": [8]},
        )
        model.learn(12)
    model.save(tmp_path / "model.zip")
    model.save_replay_buffer(tmp_path / "rb.pkl")
    out = str(tmp_path / "m.rlarchive")
    assert main(["import-sb3", str(tmp_path / "model.zip"), out]) == 0
    printed = capsys.readouterr().out
    assert (
        "    replay buffer: no\n" in printed and "    run state: no (Stable-Baselines3's files keep none" in printed
    ), printed
    assert (
        main(["import-sb3", str(tmp_path / "model.zip"), out, "--replay-buffer", str(tmp_path / "rb.pkl"), "--json"])
        == 0
    )
    training = json.loads(capsys.readouterr().out)["training"]
    assert training == {
        "replay_buffer": {
            "class": "ReplayBuffer",
            "transitions": 12,
            "description": "ReplayBuffer, 12 of 100 rows filled in the environment (12 transitions)",
        },
        "run_state": False,
        "random_state": False,
    }
    saved = str(tmp_path / "saved.rlarchive")
    rsb3.save(model, saved, replay_buffer=True)
    assert main(["export-sb3", saved, str(tmp_path / "back.zip")]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"wrote {tmp_path / 'back.zip'}"
    assert (
        printed[1] == "  replay buffer: not written (12 transitions in the archive; --replay-buffer-out PKL writes it)"
    )
    assert printed[2].startswith(
        "  run state and random state: not written (a Stable-Baselines3 .zip has no place for them"
    )
    assert main(["export-sb3", out, str(tmp_path / "back.zip"), "--replay-buffer-out", str(tmp_path / "back.pkl")]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert (
        printed[1]
        == f"  replay buffer: ReplayBuffer, 12 of 100 rows filled in the environment (12 transitions) -> {tmp_path / 'back.pkl'}"
    )
    assert len(printed) == 2  # an import holds no run state: nothing to say about it


# ---------------------------------------------------------------- inspect: provenance and evaluations first


def _agent_block(out):
    """The lines inspect prints between the file name and ``format version``."""
    lines = out.splitlines()
    return lines[1 : next(i for i, line in enumerate(lines) if line.startswith("  format version"))]


def test_inspect_shows_provenance_and_evaluation_first(tmp_path):
    """A live SB3 model saved with its provenance, evaluated with --record: inspect's first lines say
    what the agent is (environment, algorithm, timesteps) and how good it is (mean reward +/- std)."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO

    from rlarchive import sb3 as rsb3

    model = PPO(
        "MlpPolicy",
        "CartPole-v1",
        n_steps=32,
        batch_size=32,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [8]},
    )
    model.learn(32)
    p = tmp_path / "ppo.rlarchive"
    rsb3.save(model, p)
    r = _run("evaluate", str(p), "--env", "CartPole-v1", "--episodes", "2", "--seed", "3", "--record")
    assert r.returncode == 0, r.stderr
    r = _run("inspect", str(p))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    block = _agent_block(r.stdout)
    with rlarchive.open(p) as ar:
        (e,) = ar.evaluations
        prov = ar.provenance
        algorithm = ar.metadata["sb3.algorithm"]
    assert prov.env_id == "CartPole-v1" and prov.num_timesteps == model.num_timesteps
    assert block[0] == "  environment     CartPole-v1 (as recorded: a hint)"
    assert block[1].startswith(f"  algorithm       {algorithm}") and algorithm == type(model).__name__
    reward = next(line for line in block if line.startswith("  mean reward"))
    assert f"{np.mean(e['returns']):.6g} +/- {np.std(e['returns']):.6g} over 2 episodes of CartPole-v1" in reward
    assert "seeds 3..4" in reward and "deterministic" in reward
    assert any(
        line.startswith(f"  timesteps       {model.num_timesteps} (1 environment in parallel, seed 0)")
        and model.n_envs == 1
        for line in block
    )
    versions = next(line for line in block if line.startswith("  versions"))
    assert all(f"{k} {v}" in versions for k, v in prov.versions.items()) and "stable_baselines3" in versions


def test_inspect_leaves_out_malformed_keys_with_their_warning(tmp_path):
    """Malformed defined keys (another writer's) are not shown as provenance: their METADATA_INVALID is;
    the well-formed ones beside them are; text from the file cannot break the output's lines."""
    from cases import archive

    good = {"num_timesteps": "1000", "seed": "7", "versions.torch": "2.13.0+cpu"}
    evals = [
        {
            "env_id": env,
            "episodes": 1,
            "seeds": seeds,
            "deterministic": det,
            "mean": mean,
            "std": 0.0,
            "returns": [mean],
            "lengths": [9],
            "evaluator": {"name": "e", "version": "1"},
            "date": "2026-01-02T03:04:05Z",
        }
        for env, seeds, det, mean in (("A-v0", None, False, 2.5), ("B-v0", [5], True, -1.0), ("A-v0", [1], True, 4.25))
    ]
    bad = {"env_id": "Bad\x1b[31m-v0\nfake line", "n_envs": "08"}

    def patch(m):
        m["metadata"] = {**good, **bad, "evaluations": json.dumps(evals)}

    p = tmp_path / "m.rlarchive"
    p.write_bytes(archive({"data": {"gamma": 0.99}}, manifest_patch=patch))
    r = _run("inspect", str(p))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "\x1b" not in r.stdout and "\nfake line" not in r.stdout
    block = _agent_block(r.stdout)
    assert not any(line.startswith("  environment") for line in block)
    warned = [line for line in block if line.startswith("  warning         METADATA_INVALID at ")]
    assert [line.split(" at ")[1].split(":")[0] for line in warned] == ["/metadata/" + k for k in bad]
    assert "  timesteps       1000 (seed 7)" in block  # n_envs, malformed, left out
    assert "  versions        torch 2.13.0+cpu" in block
    rewards = [line for line in block if line.startswith("  mean reward")]
    # the latest evaluation of each environment, in the order the environments first appear
    latest = {e["env_id"]: e for e in evals}
    assert len(rewards) == len(latest)
    for line, e in zip(rewards, latest.values()):
        assert f"{e['mean']:.6g} +/- 0 over 1 episode of {e['env_id']}" in line
    assert f"  evaluations     {len(evals)} recorded (the latest of each environment above)" in block
