"""rlarchive strip: an inference-only archive (spec/metadata.md §7): deterministic, validated, atomic, and exactly
the parts it says dropped."""

import json
import os
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import rlarchive  # noqa: E402
from rlarchive import metadata as keys  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.strip import PARTS, TRAINING_ONLY, strip  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))}
OBS = np.array([[0.1, -0.4, 0.7], [0.9, 0.2, -0.3]], np.float32)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A SAC run saved with everything training reads: replay buffer, run state, optimizer moments, action noise."""
    from stable_baselines3 import SAC
    from stable_baselines3.common.noise import NormalActionNoise

    model = SAC(
        "MlpPolicy",
        "Pendulum-v1",
        buffer_size=2000,
        learning_starts=32,
        batch_size=16,
        seed=1,
        device="cpu",
        policy_kwargs={"net_arch": [8]},
        action_noise=NormalActionNoise(np.zeros(1), np.ones(1)),
    )
    model.learn(96)
    path = tmp_path_factory.mktemp("strip") / "sac.rlarchive"
    rsb3.save(model, path, training=True, replay_buffer=True)
    return path, model


def _copy(src, folder, name="a.rlarchive"):
    dst = folder / name
    shutil.copyfile(src, dst)
    return dst


def test_strip_drops_every_training_only_part_and_nothing_else(trained, tmp_path):
    src, model = trained
    with rlarchive.open(src) as ar:
        before = (ar.groups, ar.manifest.extensions_used, dict(ar.raw_data["optimizers"]), dict(ar.raw_data["data"]))
        weights = {(g, n): ar.tensor_sha256(g, n) for g in ("policy", "variables") for n in ar.tensor_info(g)}
    assert {"RLA_training", "RLA_replay_buffer"} <= set(before[1]) and before[2]
    out = tmp_path / "small.rlarchive"
    result = strip(src, out)
    assert result.dropped == list(TRAINING_ONLY)
    assert result.bytes_after < result.bytes_before / 4  # the buffer and the moments were most of the file
    assert rlarchive.validate(out)["valid"]
    with rlarchive.open(out) as ar:
        assert set(ar.groups) == {"policy", "variables"}  # the groups of the dropped parts are gone
        assert ar.manifest.extensions_used == ["RLA_policy"]
        assert set(ar.raw_data["optimizers"]) == set(before[2])  # every optimizer keeps its settings ...
        for name, opt in ar.raw_data["optimizers"].items():
            assert opt["state"] == {} and opt["param_groups"] == before[2][name]["param_groups"]  # ... not its state
        assert ar.raw_data["data"] == before[3]  # the data is untouched (its opaque action noise stays)
        assert {(g, n): ar.tensor_sha256(g, n) for g in ("policy", "variables") for n in ar.tensor_info(g)} == weights
        assert keys.parsed(ar.metadata, keys.DROPPED) == list(TRAINING_ONLY)
        assert ar.policy() is not None
    assert sorted(result.members_removed) == sorted(
        [
            "extensions/RLA_replay_buffer/replay_buffer.json",
            "extensions/RLA_training/training.json",
            "tensors/RLA_replay_buffer.safetensors",
            "tensors/RLA_training.safetensors",
        ]
        + [f"tensors/optimizer.{n}.safetensors" for n in before[2]]
    )
    assert any("kept opaque" in n for n in result.notes)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:left out action_noise")
def test_the_inference_only_archive_acts_and_loads_into_sb3_as_the_trained_model(trained, tmp_path):
    src, model = trained
    out = tmp_path / "small.rlarchive"
    strip(src, out)
    want, _ = model.predict(OBS, deterministic=True)
    with rlarchive.open(out) as ar:
        got, _ = ar.policy().predict(OBS)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    loaded = rsb3.load(out, device="cpu")
    np.testing.assert_array_equal(loaded.predict(OBS, deterministic=True)[0], want)
    assert loaded.actor.optimizer.state_dict()["state"] == {}  # fresh optimizers
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "export-sb3", str(out), str(tmp_path / "agent.zip")],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert r.returncode == 0, r.stderr
    from stable_baselines3 import SAC

    np.testing.assert_array_equal(
        SAC.load(tmp_path / "agent.zip", device="cpu").predict(OBS, deterministic=True)[0], want
    )


def test_strip_is_deterministic_and_a_second_strip_changes_nothing(trained, tmp_path):
    src, _ = trained
    strip(src, tmp_path / "one.rlarchive")
    os.utime(src)
    strip(src, tmp_path / "two.rlarchive")
    one = (tmp_path / "one.rlarchive").read_bytes()
    assert one == (tmp_path / "two.rlarchive").read_bytes()
    again = strip(tmp_path / "one.rlarchive")
    assert again.dropped == [] and (tmp_path / "one.rlarchive").read_bytes() == one
    assert any("no replay_buffer to drop" in n for n in again.notes)


def test_one_part_at_a_time_and_the_record_of_what_was_dropped_grows(trained, tmp_path):
    src, _ = trained
    a = _copy(src, tmp_path)
    result = strip(a, drop=["replay_buffer"])
    assert result.dropped == ["replay_buffer"]
    with rlarchive.open(a) as ar:
        assert ar.manifest.extensions_used == ["RLA_training", "RLA_policy"] and "RLA_replay_buffer" not in ar.groups
        assert any(g.startswith("optimizer.") for g in ar.groups)
    assert any(n.startswith("kept optimizers") for n in result.notes)
    strip(a, drop=["opaque"])
    with rlarchive.open(a) as ar:
        assert "action_noise" not in ar.raw_data["data"] and "gamma" in ar.raw_data["data"]
        assert keys.parsed(ar.metadata, keys.DROPPED) == ["replay_buffer", "opaque"]  # the spec's order
        assert rlarchive.validate(a)["valid"]
    with pytest.raises(RlarchiveError) as e:
        strip(a, drop=["policy"])
    assert e.value.code == "INPUT_INVALID" and "policy" in str(e.value)
    assert set(PARTS) == set(keys.DROPPABLE_PARTS)


def test_in_place_the_file_keeps_its_mode_and_a_failure_leaves_it_whole(trained, tmp_path):
    src, _ = trained
    a = _copy(src, tmp_path)
    os.chmod(a, 0o640)
    strip(a)
    assert stat.S_IMODE(os.stat(a).st_mode) == 0o640
    # a damaged member that stays: refused, the file untouched, no temporary file left
    b = _copy(src, tmp_path, "b.rlarchive")
    with rlarchive.open(b) as ar:
        m = ar.members["tensors/policy.safetensors"]
        offset = m.data_offset + m.size - 1
    data = bytearray(b.read_bytes())
    data[offset] ^= 0x01
    b.write_bytes(bytes(data))
    with pytest.raises(RlarchiveError) as e:
        strip(b)
    assert e.value.code in ("ZIP_CRC_MISMATCH", "MEMBER_DIGEST_MISMATCH")
    assert b.read_bytes() == bytes(data)
    assert sorted(os.listdir(tmp_path)) == ["a.rlarchive", "b.rlarchive"]


def test_a_damaged_part_that_is_dropped_is_not_read(trained, tmp_path):
    src, _ = trained
    a = _copy(src, tmp_path)
    with rlarchive.open(a) as ar:
        m = ar.members["tensors/RLA_replay_buffer.safetensors"]
        offset = m.data_offset + m.size - 1
    data = bytearray(a.read_bytes())
    data[offset] ^= 0x01  # a tensor byte of the buffer: its digest no longer matches
    a.write_bytes(bytes(data))
    assert not rlarchive.validate(a)["valid"]
    strip(a)
    assert rlarchive.validate(a)["valid"]


@pytest.mark.slow
def test_cli(trained, tmp_path):
    src, _ = trained
    a = _copy(src, tmp_path)
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "strip", str(a), "-o", str(tmp_path / "out.rlarchive")],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert r.returncode == 0, r.stderr
    assert "dropped         training, replay_buffer, optimizers" in r.stdout
    assert a.read_bytes() == src.read_bytes()  # -o leaves the input alone
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "strip", str(a), "--drop", "everything"],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert r.returncode == 2 and "invalid choice" in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "metadata", str(tmp_path / "out.rlarchive"), "--json"],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert json.loads(json.loads(r.stdout)["dropped"]) == list(TRAINING_ONLY)
