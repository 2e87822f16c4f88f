"""Every command line of the README's command-line examples runs: its exit status is what the README says, and the
actions it shows for predict have the form the command prints (the README's Python examples: test_readme.py)."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import numpy as np
import pytest
from suite import ROOT

import rlarchive
from rlarchive.edit import update_metadata

with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as _f:
    _README = _f.read()
#: The shell lines of the README that run the command (``rlarchive ...`` or ``echo ... | rlarchive ...``).
LINES = [
    line
    for block in re.findall(r"```sh\n(.*?)```", _README, re.S)
    for line in block.splitlines()
    if re.match(r"(echo .*\| )?rlarchive ", line)
    and not line.startswith("rlarchive conformance")
    and not re.match(
        r"rlarchive (import|export|evaluate|package|card|metadata|strip)", line
    )  # shown with their models elsewhere (the sharing commands: below)
]
VALID = os.path.join(ROOT, "test-vectors", "valid")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The files the examples name: agent.rlarchive (the README's first example: no policy), cartpole.rlarchive
    (a CartPole policy), retrained.rlarchive (the same with other metadata) and a folder runs/."""
    d = tmp_path_factory.mktemp("readme")
    shutil.copy(os.path.join(VALID, "ppo-like-agent.rlarchive"), d / "agent.rlarchive")
    shutil.copy(os.path.join(VALID, "policy-ppo-mlp-discrete.rlarchive"), d / "cartpole.rlarchive")
    shutil.copy(d / "cartpole.rlarchive", d / "retrained.rlarchive")
    update_metadata(str(d / "retrained.rlarchive"), {"num_timesteps": "64"}, [])
    (d / "runs").mkdir()
    for name in ("agent.rlarchive", "cartpole.rlarchive", "retrained.rlarchive"):
        shutil.copy(d / name, d / "runs" / name)
    return d


def test_the_readme_shows_every_command_of_this_brief():
    text = "\n".join(LINES)
    for needle in (
        "--quiet",
        "--max-issues",
        "--ignore",
        "--severity",
        "--format sarif",
        "inspect agent.rlarchive --all",
        "--indent",
        "rlarchive diff",
        "--obs '[",
        "--obs -",
    ):
        assert needle in text, needle


def _expected_status(line: str, folder) -> int:
    """What the line should exit with: diff says 1 when its archives differ (computed), every other example 0."""
    words = shlex.split(line.split("#")[0])
    if "diff" in words:
        a, b = words[words.index("diff") + 1 : words.index("diff") + 3]
        only, ignore = ([words[i + 1] for i, w in enumerate(words) if w == option] for option in ("--only", "--ignore"))
        return 0 if rlarchive.diff.diff(str(folder / a), str(folder / b), only, ignore)["equal"] else 1
    return 0


@pytest.mark.slow
@pytest.mark.parametrize("line", LINES)
def test_the_readme_command_line_runs(line, folder):
    import rlarchive.diff  # noqa: F401

    command = line.split("   #")[0].split("  #")[0]
    script = f'rlarchive() {{ "{sys.executable}" -m rlarchive "$@"; }}\n{command}'
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run(["bash", "-c", script], cwd=folder, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == _expected_status(line, folder), (line, r.stdout[-2000:], r.stderr)
    assert "Traceback" not in r.stderr
    shown = re.search(r"# -> (\{.*?\})", line)
    if shown:  # predict: as many actions as the README shows, and the policy's own
        got, claimed = json.loads(r.stdout)["actions"], json.loads(shown.group(1))["actions"]
        given = re.search(r"'(\[.*?\])'", line).group(1)
        obs = np.asarray(json.loads(given), np.float32)
        with rlarchive.open(folder / "cartpole.rlarchive") as ar:
            want = np.asarray(ar.policy().predict(obs)[0]).reshape(-1).tolist()
        assert len(got) == len(claimed) == len(want) and got == want


def _section(title: str) -> str:
    start = _README.index(title)
    return _README[start : _README.index("\n### ", start + 1)]


#: The shell lines of the README's "Sharing an agent": run in order, in one folder, on a real RL Zoo run and a trained
#: CartPole agent.
SHARING = [
    line
    for block in re.findall(r"```sh\n(.*?)```", _section("### Sharing an agent"), re.S)
    for line in block.splitlines()
    if line.startswith("rlarchive ")
]


def test_the_readme_shows_the_sharing_commands():
    text = "\n".join(SHARING)
    for needle in ("rlarchive package logs/", "rlarchive strip ", "--video ", "--set license=", "rlarchive card "):
        assert needle in text, needle


@pytest.mark.slow
def test_the_readme_sharing_lines_run_in_order(tmp_path):
    """From a Zoo run to a hub folder in one command, then an archive made inference-only, evaluated in the
    environment it records, recorded on video, licensed, packaged and shown as a card: every line exits 0."""
    pytest.importorskip("stable_baselines3")
    import zoo_run
    from stable_baselines3 import PPO

    from rlarchive import sb3 as rsb3

    zoo_run.train(tmp_path)
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1, device="cpu", seed=0).learn(32)
    rsb3.save(model, tmp_path / "cartpole.rlarchive", training=True)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    for line in SHARING:
        command = line.split("  #")[0]
        script = f'rlarchive() {{ "{sys.executable}" -m rlarchive "$@"; }}\n{command}'
        r = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, (line, r.stdout[-2000:], r.stderr)
        assert "Traceback" not in r.stderr
    assert (tmp_path / "hub" / "results.json").exists() and (tmp_path / "hub2" / "README.md").exists()
    with rlarchive.open(tmp_path / "cartpole-small.rlarchive") as ar:
        assert ar.metadata["license"] == "apache-2.0" and "RLA_training" not in ar.manifest.extensions_used
