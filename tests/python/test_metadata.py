"""Metadata keys (spec/metadata.md), the bridge's provenance, and rewriting an archive's metadata."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import rlarchive
from rlarchive import metadata as keys
from rlarchive.edit import set_metadata, update_metadata
from rlarchive.errors import RlarchiveError
from rlarchive.validate import validate

ENV = {**os.environ, "PYTHONPATH": os.path.join(os.path.dirname(__file__), "..", "..", "python")}


def _cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "rlarchive", *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=300
    )


def _evaluation(**over):
    e = {
        "env_id": "CartPole-v1",
        "episodes": 2,
        "seeds": [1, 2],
        "deterministic": True,
        "mean": 1.5,
        "std": 0.5,
        "returns": [1.0, 2.0],
        "lengths": [1, 2],
        "evaluator": {"name": "t", "version": "1"},
        "date": "2026-01-02T03:04:05Z",
    }
    e.update(over)
    return json.dumps([e])


_WELL_FORMED = [
    ("env_id", "CartPole-v1"),
    ("env_id", "ALE/Pong-v5"),
    ("n_envs", "1"),
    ("num_timesteps", "0"),
    ("seed", "-7"),
    ("seed", "0"),
    ("versions.torch", "2.13.0+cpu"),
    ("versions.sb3_contrib", "2.4.0a1"),
    ("wrappers", '[{"name":"VecFrameStack","n_stack":4,"channels_order":{"img":"first","vec":"last"}},{"name":"X"}]'),
    ("evaluations", _evaluation()),
    ("evaluations", _evaluation(seeds=None, extra={"any": 1})),
    ("free.key", "\x00 anything"),
]


@pytest.mark.parametrize("key,value", _WELL_FORMED)
def test_well_formed_values_give_no_warning(key, value):
    assert keys.check({key: value}) == []


_MALFORMED = [
    ("env_id", ""),
    ("env_id", "a\nb"),
    ("env_id", "x" * 257),
    ("n_envs", "0"),
    ("n_envs", "+1"),
    ("n_envs", "1.0"),
    ("num_timesteps", "-1"),
    ("num_timesteps", str(1 << 63)),
    ("seed", "-0"),
    ("seed", "007"),
    ("versions.Torch", "1"),
    ("versions.torch", "2 .1"),
    ("versions.torch", ""),
    ("wrappers", "{}"),
    ("wrappers", '[{"name":"VecFrameStack","n_stack":0,"channels_order":"last"}]'),
    ("wrappers", '[{"name":"VecFrameStack","n_stack":2,"channels_order":"middle"}]'),
    ("wrappers", '[{"name":"VecNormalize","norm_obs":1}]'),
    ("wrappers", '[{"name":"a","name":"b"}]'),
    ("wrappers", "[NaN]"),
    ("evaluations", _evaluation(episodes=3)),
    ("evaluations", _evaluation(std=-1)),
    ("evaluations", _evaluation(lengths=[1.0, 2])),
    ("evaluations", _evaluation(date="2026-01-02 03:04:05")),
    ("evaluations", _evaluation(deterministic=1)),
    ("evaluations", _evaluation(evaluator={"name": "t"})),
    ("evaluations", json.dumps([{}])),
]


@pytest.mark.parametrize("key,value", _MALFORMED)
def test_malformed_values_warn_at_their_key_and_writers_refuse_them(tmp_path, key, value):
    (w,) = keys.check({"before": "x", key: value})
    assert (w.code, w.severity, w.member, w.pointer) == (
        "METADATA_INVALID",
        "warning",
        "manifest.json",
        "/metadata/" + key,
    )
    with pytest.raises(RlarchiveError) as e:
        rlarchive.save(tmp_path / "a.rlarchive", {"gamma": 0.9}, metadata={key: value})
    assert e.value.code == "WRITE_INVALID"
    assert not os.listdir(tmp_path)
    with pytest.raises(RlarchiveError) as e:
        keys.parsed({key: value}, key)
    assert e.value.code == "METADATA_INVALID"


def _archive(path, metadata=None, n=1000):
    rng = np.random.default_rng(0)
    rlarchive.save(
        path,
        {"gamma": 0.99, "big": rng.random(300)},
        {"policy": {"w": rng.random(n).astype(np.float32), "b": np.arange(3, dtype=np.int64)}},
        metadata=metadata,
        extension_members={"extensions/ACME_x/n.txt": b"note"},
        extensions_used=["ACME_x"],
    )


def test_rewrite_gives_the_writers_bytes_and_back(tmp_path):
    a, b = tmp_path / "a.rlarchive", tmp_path / "b.rlarchive"
    _archive(a, {"k": "v"})
    original = a.read_bytes()
    _archive(b, {"k": "v", "env_id": "CartPole-v1", "n_envs": "4"})
    new = update_metadata(a, {"env_id": "CartPole-v1", "n_envs": "4"})
    assert new == {"k": "v", "env_id": "CartPole-v1", "n_envs": "4"}
    assert a.read_bytes() == b.read_bytes()
    report = validate(a)
    assert report["valid"] and report["issues"][0]["code"] == "EXTENSION_UNKNOWN"
    with rlarchive.open(a) as ar:
        ar.verify()
        assert ar.metadata == new
    update_metadata(a, unset=["env_id", "n_envs"])
    assert a.read_bytes() == original
    set_metadata(a, {})
    with rlarchive.open(a) as ar:
        assert ar.metadata == {} and "metadata" not in ar.manifest.raw


def test_rewrite_refuses_a_damaged_member_and_leaves_the_file(tmp_path):
    a = tmp_path / "a.rlarchive"
    _archive(a)
    raw = bytearray(a.read_bytes())
    with rlarchive.open(a) as ar:
        at = ar.members["tensors/policy.safetensors"].data_offset + ar.members["tensors/policy.safetensors"].size - 1
    raw[at] ^= 0xFF
    a.write_bytes(bytes(raw))
    with pytest.raises(RlarchiveError) as e:
        update_metadata(a, {"seed": "1"})
    assert e.value.code == "ZIP_CRC_MISMATCH" and e.value.member == "tensors/policy.safetensors"
    assert a.read_bytes() == bytes(raw) and os.listdir(tmp_path) == ["a.rlarchive"]


@pytest.mark.slow
def test_cli_metadata(tmp_path):
    a = tmp_path / "a.rlarchive"
    _archive(a, {"k": "v"})
    r = _cli("metadata", str(a), "--set", "env_id=CartPole-v1", "--set", "note=a=b", "--unset", "k", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"env_id": "CartPole-v1", "note": "a=b"}
    r = _cli("metadata", str(a))
    assert r.stdout.splitlines() == ["env_id: CartPole-v1", "note: a=b"]
    before = a.read_bytes()
    r = _cli("metadata", str(a), "--set", "n_envs=two")  # the option's value: a usage error, found before any work
    assert (
        r.returncode == 2 and r.stderr.count("\n") == 1 and "INPUT_INVALID" in r.stderr and "Traceback" not in r.stderr
    )
    assert a.read_bytes() == before
    r = _cli("metadata", str(a), "--set", "novalue")
    assert r.returncode == 2 and "KEY=VALUE" in r.stderr


# -- the Stable-Baselines3 bridge records provenance


def _ppo(vec_wrap=None, n_envs=2, seed=3):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("CartPole-v1", n_envs=n_envs, seed=seed)
    if vec_wrap is not None:
        venv = vec_wrap(venv)
    model = PPO(
        "MlpPolicy",
        venv,
        n_steps=16,
        batch_size=16,
        n_epochs=1,
        policy_kwargs={"net_arch": [8]},
        seed=seed,
        device="cpu",
    )
    model.learn(32)
    return model


def test_sb3_save_records_provenance_and_the_callers_metadata(tmp_path):
    import gymnasium
    import stable_baselines3
    import torch
    from stable_baselines3.common.vec_env import VecFrameStack, VecNormalize

    from rlarchive import sb3 as rsb3

    model = _ppo(lambda v: VecNormalize(VecFrameStack(v, n_stack=2)))
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p, vec_normalize=model.get_env(), metadata={"note": "mine", "seed": "99"})
    with rlarchive.open(p) as ar:
        m = ar.metadata
    assert m["env_id"] == model.get_env().venv.venv.envs[0].spec.id
    assert m["n_envs"] == str(model.n_envs) and m["num_timesteps"] == str(model.num_timesteps)
    assert m["seed"] == "99" and m["note"] == "mine"  # the caller's metadata wins
    assert m["versions.torch"] == torch.__version__ and m["versions.gymnasium"] == gymnasium.__version__
    assert m["versions.stable_baselines3"] == stable_baselines3.__version__ and "versions.sb3_contrib" not in m
    stacked = model.get_env().venv.stacked_obs
    assert json.loads(m["wrappers"]) == [
        {
            "name": "VecFrameStack",
            "n_stack": stacked.n_stack,
            "channels_order": "first" if stacked.channels_first else "last",
        },
        {"name": "VecNormalize", "norm_obs": model.get_env().norm_obs, "norm_reward": model.get_env().norm_reward},
    ]
    assert validate(p)["issues"] == []
    rsb3.save(model, p, metadata={"note": "mine"}, provenance=False)
    with rlarchive.open(p) as ar:
        assert not any(keys.is_defined(k) for k in ar.metadata) and ar.metadata["note"] == "mine"
    with pytest.raises(RlarchiveError) as e:
        rsb3.save(model, tmp_path / "x.rlarchive", metadata={"n_envs": "zero"})
    assert e.value.code == "WRITE_INVALID" and not (tmp_path / "x.rlarchive").exists()


@pytest.mark.slow
def test_import_sb3_records_provenance_from_the_zip(tmp_path):
    model = _ppo(n_envs=1, seed=5)
    z = tmp_path / "m.zip"
    model.save(z)
    out = tmp_path / "m.rlarchive"
    r = _cli("import-sb3", str(z), str(out), "--metadata", "env_id=CartPole-v1", "--metadata", "task=balance")
    assert r.returncode == 0, r.stderr
    import zipfile

    info = zipfile.ZipFile(z).read("system_info.txt").decode()
    python_line = next(line for line in info.splitlines() if "Python:" in line)
    with rlarchive.open(out) as ar:
        m = ar.metadata
    assert m["env_id"] == "CartPole-v1" and m["task"] == "balance"
    assert m["n_envs"] == "1" and m["num_timesteps"] == str(model.num_timesteps) and m["seed"] == "5"
    assert m["versions.python"] == python_line.split(":", 1)[1].strip()
    assert "wrappers" not in m
    r = _cli("import-sb3", str(z), str(tmp_path / "y.rlarchive"), "--metadata", "seed=x")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "INPUT_INVALID" in r.stderr


def test_the_javascript_reader_warns_exactly_where_python_does(tmp_path):
    import shutil as sh

    node = sh.which("node")
    if node is None:
        pytest.skip("node is not installed")
    cases = [(k, v) for k, v in _WELL_FORMED + _MALFORMED]
    cases += [
        ("evaluations", _evaluation(mean=True)),
        ("evaluations", _evaluation(returns=[1, 2.5])),
        ("env_id", "é" * 256),
        ("env_id", "😀" * 257),
        ("seed", "-9223372036854775807"),
        ("seed", "9223372036854775808"),
        ("versions.x", "+"),
        ("wrappers", '[{"name":"VecFrameStack","n_stack":2}]'),
        (
            "evaluations",
            '[{"env_id":"a","episodes":1,"seeds":[1],"deterministic":false,"mean":0,"std":0,"returns":[0],"lengths":[0],'
            '"evaluator":{"name":"n","version":"v"},"date":"2026-02-30T23:59:59Z"}]',
        ),
        ("wrappers", "[" * 70 + "]" * 70),
    ]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    script = tmp_path / "check.mjs"
    module = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "reader-js", "src", "metadata.js"))
    script.write_text(
        f"import {{ checkMetadataValue }} from {json.dumps('file://' + module)};\n"
        "import { readFileSync } from 'node:fs';\n"
        "const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));\n"
        "console.log(JSON.stringify(cases.map(([k, v]) => { const w = checkMetadataValue(k, v); return w && [w.code, w.pointer]; })));\n"
    )
    r = subprocess.run([node, str(script), str(tmp_path / "cases.json")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    js = json.loads(r.stdout)
    py = [(lambda w: w and [w.code, w.pointer])(keys.check_value(k, v)) for k, v in cases]
    assert js == py
    assert any(x is None for x in py) and any(x is not None for x in py)
