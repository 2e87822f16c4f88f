"""rlarchive card: a Markdown model card whose YAML front matter follows the Hugging Face model card format."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

yaml = pytest.importorskip("yaml")
pytest.importorskip("stable_baselines3")

import rlarchive  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.edit import update_metadata  # noqa: E402
from rlarchive.evaluate import evaluate, record  # noqa: E402
from rlarchive.hub.card import card  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))}


def _front_matter(text):
    """The YAML between the leading '---' lines, parsed, and the Markdown after it."""
    assert text.startswith("---\n")
    head, sep, body = text[4:].partition("\n---\n")
    assert sep
    return yaml.safe_load(head), body


def _check_model_index(fm):
    """The model card format's rules for model-index (hub-docs modelcard.md): required members and their types."""
    index = fm["model-index"]
    assert isinstance(index, list) and index
    for model in index:
        assert isinstance(model["name"], str) and model["name"]
        assert isinstance(model["results"], list) and model["results"]
        for r in model["results"]:
            assert isinstance(r["task"]["type"], str) and r["task"]["type"]
            assert isinstance(r["dataset"]["type"], str) and isinstance(r["dataset"]["name"], str)
            assert isinstance(r["metrics"], list) and r["metrics"]
            for m in r["metrics"]:
                assert isinstance(m["type"], str) and "value" in m and m["value"] is not None
                assert m.get("verified", False) in (True, False)
    return index


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    from stable_baselines3 import PPO

    model = PPO(
        "MlpPolicy",
        "CartPole-v1",
        n_steps=32,
        batch_size=32,
        n_epochs=1,
        seed=1,
        device="cpu",
        policy_kwargs={"net_arch": [8]},
    )
    model.learn(64)
    p = tmp_path_factory.mktemp("card") / "cartpole.rlarchive"
    rsb3.save(model, p)
    return p


def test_card_without_evaluation(agent, tmp_path):
    p = tmp_path / "a.rlarchive"
    shutil.copy(agent, p)
    text = card(p)
    fm, body = _front_matter(text)
    assert fm["library_name"] == "stable-baselines3"  # a library the hub knows, not "rlarchive"
    assert isinstance(fm["tags"], list) and all(isinstance(t, str) for t in fm["tags"])
    assert "reinforcement-learning" in fm["tags"] and "CartPole-v1" in fm["tags"] and "stable-baselines3" in fm["tags"]
    assert "model-index" not in fm
    with rlarchive.open(p) as ar:
        m = ar.metadata
    for section in (
        "## Provenance",
        "## Algorithm",
        "## Spaces",
        "## Hyperparameters",
        "## Network",
        "## Evaluation",
        "## How to load",
        "## Validation",
    ):
        assert section in body
    assert f"| timesteps trained | {m['num_timesteps']} |" in body
    assert "None recorded" in body and "```js" in body and "export-onnx" in body


def test_card_with_evaluations_is_a_valid_model_index_and_deterministic(agent, tmp_path):
    p = tmp_path / "a.rlarchive"
    shutil.copy(agent, p)
    first = evaluate(p, "CartPole-v1", 3, 0)
    record(p, first)
    second = evaluate(p, "CartPole-v1", 2, 7)
    record(p, second)
    text = card(p)
    assert card(p) == text  # deterministic
    fm, body = _front_matter(text)
    (model,) = _check_model_index(fm)
    (result,) = model["results"]  # one result per environment: the latest evaluation
    assert result["task"]["type"] == "reinforcement-learning"
    assert result["dataset"] == {"type": "CartPole-v1", "name": "CartPole-v1"}
    (metric,) = result["metrics"]
    assert metric["type"] == "mean_reward"
    assert metric["value"] == f"{np.mean(second.returns):.2f} +/- {np.std(second.returns):.2f}"
    assert body.count("| CartPole-v1 | 3 | 0..2 |") == 1 and body.count("| CartPole-v1 | 2 | 7..8 |") == 1
    other = tmp_path / "b"
    other.mkdir()
    shutil.copy(p, other / "a.rlarchive")
    assert card(other / "a.rlarchive") == text  # the card depends on the file's content and name only


def test_text_from_the_archive_cannot_change_the_front_matter(agent, tmp_path):
    p = tmp_path / "a.rlarchive"
    shutil.copy(agent, p)
    hostile = 'x": 1 # ---\\ [y]: {z}'
    update_metadata(p, {"env_id": hostile})
    with rlarchive.open(p) as ar:
        evaluations = [
            {
                "env_id": hostile,
                "episodes": 1,
                "seeds": None,
                "deterministic": True,
                "mean": 2.0,
                "std": 0.0,
                "returns": [2.0],
                "lengths": [2],
                "evaluator": {"name": "t", "version": "1"},
                "date": "2026-01-01T00:00:00Z",
            }
        ]
        assert ar.metadata["env_id"] == hostile
    update_metadata(p, {"evaluations": json.dumps(evaluations)})
    fm, body = _front_matter(card(p))
    assert set(fm) == {"library_name", "tags", "model-index"}
    assert hostile in fm["tags"]
    (model,) = _check_model_index(fm)
    assert model["results"][0]["dataset"]["type"] == hostile


def test_cli_card_and_bad_input(agent, tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "card", str(agent)], capture_output=True, text=True, env=ENV, timeout=300
    )
    assert r.returncode == 0 and r.stdout == card(agent)
    bad = tmp_path / "bad.rlarchive"
    raw = bytearray(agent.read_bytes())
    with rlarchive.open(agent) as ar:
        m = ar.members["tensors/policy.safetensors"]
    raw[m.data_offset + m.size - 1] ^= 1
    bad.write_bytes(bytes(raw))
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "card", str(bad)], capture_output=True, text=True, env=ENV, timeout=300
    )
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "ZIP_CRC_MISMATCH" in r.stderr and r.stdout == ""


# ------------------------------------------------------------------ the card as the Hugging Face Hub reads it


def test_the_hubs_model_card_tools_read_the_card_and_its_model_index_round_trips(agent, tmp_path):
    hf = pytest.importorskip("huggingface_hub")
    from huggingface_hub.repocard_data import eval_results_to_model_index, model_index_to_eval_results

    p = tmp_path / "a.rlarchive"
    shutil.copy(agent, p)
    record(p, evaluate(p, "CartPole-v1", 2, 0))
    update_metadata(p, {"license": "Apache-2.0"})
    text = card(p)
    parsed = hf.ModelCard(text)  # raises on front matter the hub's tools cannot read
    assert parsed.data.license == "apache-2.0" and parsed.data.library_name == "stable-baselines3"
    assert "CartPole-v1" in parsed.data.tags and "rlarchive" in parsed.data.tags
    fm, _ = _front_matter(text)
    name, results = model_index_to_eval_results(fm["model-index"])
    assert name == "ppo-CartPole-v1" and [r.dataset_type for r in results] == ["CartPole-v1"]
    assert results[0].task_type == "reinforcement-learning" and results[0].metric_type == "mean_reward"
    assert eval_results_to_model_index(name, results) == fm["model-index"]
    assert parsed.data.eval_results == results and parsed.data.model_name == name


def test_the_card_shows_the_licence_and_the_users_own_metadata(agent, tmp_path):
    p = tmp_path / "a.rlarchive"
    shutil.copy(agent, p)
    fm, body = _front_matter(card(p))
    assert "license" not in fm and "Licence: not recorded" in body and "--set license=" in body
    update_metadata(p, {"license": "MIT", "task": "balance the pole", "trainer": "me <me@example.org>"})
    fm, body = _front_matter(card(p))
    assert fm["license"] == "mit" and "Licence: MIT." in body
    metadata = body[body.index("## Metadata") :]
    assert "| task | balance the pole |" in metadata and "| trainer | me \\<me\\@example\\.org\\> |" in metadata
    assert "| license |" not in metadata and "| env\\_id |" not in metadata  # shown elsewhere, not twice
    update_metadata(p, {"long": "x" * 400})
    assert f"| long | {'x' * 300} ... (400 characters) |" in card(p)


@pytest.mark.slow
def test_the_card_says_how_a_stable_baselines3_user_loads_the_agent(agent, tmp_path):
    from rlarchive.strip import strip

    p = tmp_path / "a.rlarchive"
    strip(agent, p)
    _, body = _front_matter(card(p))
    how = body[body.index("## How to load") :]
    assert "rlarchive export-sb3 a.rlarchive agent.zip" in how
    assert "from stable_baselines3 import PPO" in how and 'model = PPO.load("agent.zip")' in how
    assert "rsb3.load('a.rlarchive')" in how
    assert "Inference-only" in body and "optimizers' per-parameter state" in body
    # the command and the code run: the zip loads in Stable-Baselines3
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "export-sb3", str(p), str(tmp_path / "agent.zip")],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert r.returncode == 0, r.stderr
    from stable_baselines3 import PPO

    assert PPO.load(tmp_path / "agent.zip", device="cpu").policy is not None
    update_metadata(p, {"sb3.algorithm": "import os; os.system('x')"})  # not an algorithm: a placeholder
    how = card(p)[card(p).index("## How to load") :]
    assert "import os" not in how and "ALGORITHM.load" in how and "from stable_baselines3 import ALGORITHM" in how
