"""A real RL Zoo run through the switch: ``python -m rlarchive.sb3.run_with_archives -m rl_zoo3.train ...``.

The RL Zoo's own ``train.py``, unchanged, trains with tiny settings: PPO on CartPole-v1 (two environments, checkpoints,
evaluations) and SAC on Pendulum-v1 with VecNormalize and its replay buffer saved, then SAC again, resumed with ``-i``
from the first run. Every file the runs write is listed: each model, checkpoint, best model, statistics and replay
buffer file is an archive that ``rlarchive validate`` finds valid, and every other file is one of the Zoo's logs,
none of them a pickle. The resumed run goes on from the first one's model, statistics and buffer.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("rl_zoo3")
pytest.importorskip("optuna")
pytest.importorskip("huggingface_sb3")

import rlarchive  # noqa: E402
from rlarchive import metadata as keys  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.sb3 import files as sb3_files  # noqa: E402

pytestmark = pytest.mark.slow

PYTHON = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([PYTHON, os.environ.get("PYTHONPATH", "")]),
    "CUDA_VISIBLE_DEVICES": "",
}
COMMON = ["--seed", "0", "--vec-env", "dummy", "--device", "cpu", "--eval-episodes", "1", "--n-eval-envs", "1"]
PPO_RUN = ["--algo", "ppo", "--env", "CartPole-v1", "-n", "256", "--save-freq", "128", "--eval-freq", "128"]
PPO_RUN += ["-params", "n_envs:2", "n_steps:32", "batch_size:64", "n_epochs:1", "policy_kwargs:dict(net_arch=[16])"]
SAC_RUN = ["--algo", "sac", "--env", "Pendulum-v1", "-n", "300", "--save-freq", "100", "--eval-freq", "150"]
SAC_RUN += ["--save-replay-buffer", "-params", "normalize:True", "learning_starts:50", "buffer_size:1000"]
SAC_RESUMED = ["--algo", "sac", "--env", "Pendulum-v1", "-n", "100", "--eval-freq", "100", "--save-replay-buffer"]
SAC_RESUMED += ["-params", "normalize:True", "learning_starts:50", "buffer_size:1000"]
#: The Zoo's files that are logs, not saved objects (each checked not to be a pickle).
LOGS = ("monitor.csv", "args.yml", "config.yml", "command.txt", "evaluations.npz")


def _zoo(folder, args):
    """Run the Zoo's train.py through the launcher in ``folder`` (logs under ``folder/logs``); its output."""
    cmd = [sys.executable, "-m", "rlarchive.sb3.run_with_archives", "-m", "rl_zoo3.train", *args, *COMMON]
    r = subprocess.run([*cmd, "-f", "logs"], cwd=folder, capture_output=True, text=True, env=ENV, timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    return r.stdout


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    """The three runs, in one folder: name -> (run folder, the run's output)."""
    folder = tmp_path_factory.mktemp("zoo")
    runs = {}
    runs["ppo"] = (folder / "logs" / "ppo" / "CartPole-v1_1", _zoo(folder, [*PPO_RUN]))
    runs["sac"] = (
        folder / "logs" / "sac" / "Pendulum-v1_1",
        _zoo(folder, [*SAC_RUN, "policy_kwargs:dict(net_arch=[16])"]),
    )
    first = os.path.join("logs", "sac", "Pendulum-v1_1", "Pendulum-v1.zip")
    runs["resumed"] = (folder / "logs" / "sac" / "Pendulum-v1_2", _zoo(folder, [*SAC_RESUMED, "-i", first]))
    return runs


def _files(run):
    """Every file under ``run``: (archives: relative path -> part, the Zoo's log files' relative paths)."""
    archives, logs = {}, []
    for root, _, names in os.walk(run):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, run)
            if name.endswith(LOGS):
                logs.append(rel)
                continue
            assert sb3_files.is_archive(path), f"{rel} is not an archive"
            with rlarchive.open(path) as ar:
                archives[rel] = keys.part_of(ar.metadata)
    return archives, sorted(logs)


def _validate(run, archives):
    """``rlarchive validate --json`` over every archive of the run: all valid."""
    paths = [os.path.join(run, rel) for rel in sorted(archives)]
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive.cli", "validate", "--json", *paths], capture_output=True, text=True, env=ENV
    )
    reports = json.loads(r.stdout)["reports"]
    assert r.returncode == 0 and len(reports) == len(paths) and all(rep["valid"] for rep in reports), r.stdout[-2000:]


def _no_pickle_in_logs(run, logs):
    for rel in logs:
        path = os.path.join(run, rel)
        if rel.endswith(".npz"):
            with np.load(path, allow_pickle=False) as npz:  # object arrays (pickles) would raise here
                assert [npz[k].dtype.kind for k in npz.files] and all(npz[k].dtype != object for k in npz.files)
        else:
            with open(path, "rb") as f:
                assert not f.read(2).startswith(b"\x80"), f"{rel} is a pickle"


def test_a_zoo_ppo_run_writes_its_model_checkpoints_and_best_model_as_archives(zoo):
    run, out = zoo["ppo"]
    archives, logs = _files(run)
    assert archives == {
        "CartPole-v1.zip": "model",
        "best_model.zip": "model",
        "rl_model_128_steps.zip": "model",
        "rl_model_256_steps.zip": "model",
    }
    assert logs == sorted(
        ["0.monitor.csv", "1.monitor.csv", "evaluations.npz"]
        + [os.path.join("CartPole-v1", n) for n in ("args.yml", "command.txt", "config.yml")]
    )
    _validate(run, archives)
    _no_pickle_in_logs(run, logs)
    model = rsb3.load(os.path.join(run, "rl_model_128_steps.zip"))
    assert model.num_timesteps == 128 and model.n_envs == 2


def test_a_zoo_sac_run_with_normalize_writes_statistics_and_buffer_as_archives(zoo):
    run, _ = zoo["sac"]
    archives, logs = _files(run)
    assert archives == {
        "Pendulum-v1.zip": "model",
        "best_model.zip": "model",
        "rl_model_100_steps.zip": "model",
        "rl_model_200_steps.zip": "model",
        "rl_model_300_steps.zip": "model",
        "replay_buffer.pkl": "replay_buffer",
        os.path.join("Pendulum-v1", "vecnormalize.pkl"): "vec_normalize",
    }
    _validate(run, archives)
    _no_pickle_in_logs(run, logs)
    with rlarchive.open(os.path.join(run, "replay_buffer.pkl")) as ar:
        assert ar.replay_buffer().pos == 300


def test_a_zoo_run_resumed_with_i_goes_on_from_the_archives(zoo):
    """-i loads the model, the statistics (from the run's ENV/vecnormalize.pkl) and replay_buffer.pkl through the
    switch: the new run's buffer begins with the first run's transitions, its statistics count on, its model's
    update count goes on from the first model's."""
    first, _ = zoo["sac"]
    run, out = zoo["resumed"]
    assert "Loading saved VecNormalize stats" in out and "Loading pretrained agent" in out
    assert "Loading replay buffer" in out
    archives, logs = _files(run)
    assert archives["replay_buffer.pkl"] == "replay_buffer" and archives["Pendulum-v1.zip"] == "model"
    _validate(run, archives)
    _no_pickle_in_logs(run, logs)
    buffers = []
    for r in (first, run):
        with rlarchive.open(os.path.join(r, "replay_buffer.pkl")) as ar:
            b = ar.replay_buffer()
            buffers.append((b.pos, np.array(b.observations[:300]), np.array(b.actions[:300])))
    assert buffers[1][0] == buffers[0][0] + 100
    assert np.array_equal(buffers[0][1], buffers[1][1]) and np.array_equal(buffers[0][2], buffers[1][2])
    counts = []
    for r in (first, run):
        with rlarchive.open(os.path.join(r, "Pendulum-v1", "vecnormalize.pkl")) as ar:
            counts.append(ar.vec_normalize().obs.count)
    assert counts[1] > counts[0] + 100  # the 100 new steps (and a reset) on top of the first run's
    updates = [rsb3.load(os.path.join(r, "Pendulum-v1.zip"))._n_updates for r in (first, run)]
    assert updates[0] > 100 and updates[1] > updates[0]  # 100 steps alone would make at most 100
