"""A real RL Zoo run for the tests: ``python -m rl_zoo3.train`` run for a few hundred steps.

The run folder is the RL Zoo's own (``logs/ALGO/ENV_1/``: the final model, ``best_model.zip``, the Monitor
CSVs, ``evaluations.npz``, ``replay_buffer.pkl`` and the parameter folder with ``config.yml``, ``args.yml``,
``command.txt``), so the tests see exactly what a Zoo user has, not an imitation. Without rl_zoo3 the tests that
need it are skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: The run: DQN on CartPole-v1, evaluated every 200 steps, its replay buffer saved (small settings: seconds).
ARGS = [
    "--algo",
    "dqn",
    "--env",
    "CartPole-v1",
    "-n",
    "600",
    "--eval-freq",
    "200",
    "--eval-episodes",
    "2",
    "--n-eval-envs",
    "1",
    "--seed",
    "3",
    "--vec-env",
    "dummy",
    "--device",
    "cpu",
    "--save-replay-buffer",
    "-params",
    "buffer_size:2000",
    "learning_starts:100",
    "train_freq:50",
    "gradient_steps:2",
    "policy_kwargs:dict(net_arch=[16])",
]


def train(folder: str | os.PathLike) -> str:
    """Train the run under ``folder``/logs with the RL Zoo and return its run folder (``logs/dqn/CartPole-v1_1``)."""
    pytest.importorskip("rl_zoo3")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    r = subprocess.run(
        [sys.executable, "-m", "rl_zoo3.train", *ARGS, "-f", "logs"],
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return os.path.join(os.fspath(folder), "logs", "dqn", "CartPole-v1_1")
