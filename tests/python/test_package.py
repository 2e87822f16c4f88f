"""rlarchive package: a folder ready for a model hub (spec/metadata.md §6), and hf:// URLs through fsspec."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import rlarchive  # noqa: E402
from rlarchive import metadata as keys  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.evaluate import evaluate, record  # noqa: E402
from rlarchive.hub.card import card  # noqa: E402
from rlarchive.hub.package import CARD_NAME, ONNX_NAME, RESULTS_NAME, package, results_json  # noqa: E402
from rlarchive.strip import TRAINING_ONLY, strip  # noqa: E402

GITATTRIBUTES = ".gitattributes"

ENV = {**os.environ, "PYTHONPATH": os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))}
RL_ZOO_KEYS = ["mean_reward", "std_reward", "is_deterministic", "n_eval_episodes", "eval_datetime"]

try:
    import onnx  # noqa: F401

    HAVE_ONNX = True
except ImportError:
    HAVE_ONNX = False


@pytest.fixture(scope="module")
def agents(tmp_path_factory):
    """(an archive without evaluation, one with two recorded evaluations)."""
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
    model.learn(32)
    folder = tmp_path_factory.mktemp("pkg")
    plain = folder / "plain" / "cartpole.rlarchive"
    plain.parent.mkdir()
    rsb3.save(model, plain, training=True)  # the run state and the optimizer moments: what a package leaves out
    evaluated = folder / "evaluated" / "cartpole.rlarchive"
    evaluated.parent.mkdir()
    shutil.copyfile(plain, evaluated)
    record(evaluated, evaluate(evaluated, "CartPole-v1", episodes=2, seed=0))
    record(evaluated, evaluate(evaluated, "CartPole-v1", episodes=3, seed=5))
    return plain, evaluated


def _files(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            out[name] = f.read()
    return out


def test_package_holds_the_archive_card_onnx_and_results(agents, tmp_path):
    _, src = agents
    result = package(src, tmp_path / "hub", episodes=0, video=False)
    files = _files(tmp_path / "hub")
    expected = sorted(
        ["cartpole.rlarchive", CARD_NAME, RESULTS_NAME, GITATTRIBUTES] + ([ONNX_NAME] if HAVE_ONNX else [])
    )
    assert sorted(files) == expected == result.files
    assert result.folder == str(tmp_path / "hub")
    strip(src, tmp_path / "alone.rlarchive")
    assert files["cartpole.rlarchive"] == (tmp_path / "alone.rlarchive").read_bytes()  # inference-only
    packaged = tmp_path / "hub" / "cartpole.rlarchive"
    readme = files[CARD_NAME].decode("utf-8")
    assert readme.partition("\n## Files\n")[0] == card(packaged).partition("\n## How to load\n")[0]
    with rlarchive.open(src) as ar:
        latest = keys.parsed(ar.metadata, keys.EVALUATIONS)[-1]
    results = json.loads(files[RESULTS_NAME])
    assert list(results)[: len(RL_ZOO_KEYS)] == RL_ZOO_KEYS
    assert results["mean_reward"] == latest["mean"] and results["std_reward"] == latest["std"]
    assert results["n_eval_episodes"] == latest["episodes"] == 3  # the latest of the two recorded
    assert results["is_deterministic"] is latest["deterministic"]
    assert results["eval_datetime"] == latest["date"] and results["env_id"] == "CartPole-v1"
    assert files[RESULTS_NAME].decode("ascii") == results_json(latest)
    assert b"*.rlarchive filter=lfs diff=lfs merge=lfs -text\n" in files[GITATTRIBUTES]
    assert not [n for n in os.listdir(tmp_path) if n not in ("hub", "alone.rlarchive")], "a temporary folder was left"


@pytest.mark.skipif(not HAVE_ONNX, reason="onnx is not installed")
def test_the_packaged_onnx_model_is_the_export_of_the_archive(agents, tmp_path):
    from rlarchive.extensions.policy.onnx_export import export_onnx

    _, src = agents
    package(src, tmp_path / "hub", episodes=0, video=False)
    export_onnx(src, tmp_path / "alone.onnx")
    assert (tmp_path / "hub" / ONNX_NAME).read_bytes() == (tmp_path / "alone.onnx").read_bytes()


def test_two_runs_give_identical_files(agents, tmp_path, monkeypatch):
    _, src = agents
    package(src, tmp_path / "one", episodes=0, video=False)
    os.utime(src)  # a later modification time changes nothing
    package(src, tmp_path / "two", episodes=0, video=False)
    assert _files(tmp_path / "one") == _files(tmp_path / "two")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # with an evaluation: the same bytes once the date is fixed
    package(src, tmp_path / "three", env_id="CartPole-v1", episodes=2, video=False)
    package(src, tmp_path / "four", env_id="CartPole-v1", episodes=2, video=False)
    assert _files(tmp_path / "three") == _files(tmp_path / "four")
    assert json.loads(_files(tmp_path / "three")[RESULTS_NAME])["eval_datetime"] == "2023-11-14T22:13:20Z"


def test_without_evaluation_there_is_no_results_json(agents, tmp_path):
    plain, _ = agents
    result = package(plain, tmp_path / "hub", episodes=0, video=False)
    assert RESULTS_NAME not in os.listdir(tmp_path / "hub")
    assert any(RESULTS_NAME in n and "no evaluation" in n for n in result.notes)
    assert "None recorded" in (tmp_path / "hub" / CARD_NAME).read_text()


def test_onnx_left_out_when_asked_or_when_onnx_is_missing(agents, tmp_path, monkeypatch):
    _, src = agents
    result = package(src, tmp_path / "a", onnx=False, episodes=0, video=False)
    assert ONNX_NAME not in result.files and not any(ONNX_NAME in n for n in result.notes)
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now fails
    result = package(src, tmp_path / "b", episodes=0, video=False)
    assert ONNX_NAME not in result.files
    assert any("onnx is not installed" in n for n in result.notes)
    assert RESULTS_NAME in result.files


def test_an_existing_folder(agents, tmp_path):
    _, src = agents
    out = tmp_path / "hub"
    out.mkdir()
    package(src, out, episodes=0, video=False)  # an empty folder is filled
    (out / "mine.txt").write_text("keep")
    with pytest.raises(RlarchiveError) as e:
        package(src, out, episodes=0, video=False)
    assert e.value.code == "IO_ERROR" and "--force" in str(e.value)
    assert (out / "mine.txt").read_text() == "keep"
    result = package(src, out, force=True, onnx=False, episodes=0, video=False)
    assert sorted(os.listdir(out)) == result.files and "mine.txt" not in result.files
    assert sorted(os.listdir(tmp_path)) == ["hub"], "a temporary folder was left behind"
    shutil.copyfile(src, out / "inside.rlarchive")
    with pytest.raises(RlarchiveError) as e:  # --force never removes the archive it packages
        package(out / "inside.rlarchive", out, force=True)
    assert e.value.code == "IO_ERROR" and (out / "inside.rlarchive").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(RlarchiveError) as e:
        package(src, tmp_path / "file", force=True)
    assert e.value.code == "IO_ERROR" and (tmp_path / "file").read_text() == "x"


def test_an_invalid_archive_writes_nothing(agents, tmp_path):
    _, src = agents
    data = bytearray(src.read_bytes())
    data[-30] ^= 0xFF  # inside the end of central directory record's neighbourhood: the file breaks a rule
    bad = tmp_path / "bad.rlarchive"
    bad.write_bytes(bytes(data))
    report = rlarchive.validate(bad)
    first = next(i["code"] for i in report["issues"] if i["severity"] == "error")
    with pytest.raises(RlarchiveError) as e:
        package(bad, tmp_path / "hub")
    assert e.value.code == first
    assert sorted(os.listdir(tmp_path)) == ["bad.rlarchive"]


@pytest.mark.slow
def test_cli(agents, tmp_path):
    _, src = agents
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "package", str(src), str(tmp_path / "hub"), "--no-onnx"],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:2] == ["package", str(tmp_path / "hub")]
    assert sorted(r.stdout.split()[2:]) == sorted(os.listdir(tmp_path / "hub"))
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "package", str(src), str(tmp_path / "hub")],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and "IO_ERROR" in r.stderr and "Traceback" not in r.stderr
    plain, _ = agents
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "package", str(plain), str(tmp_path / "p"), "--no-onnx", "--episodes", "0"],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert r.returncode == 0 and "note: no evaluation recorded" in r.stderr


# ------------------------------------------------------------------ hf:// URLs


@pytest.fixture
def fake_hub():
    """A fake file system registered with fsspec under the protocol ``hf`` (no network, no huggingface_hub)."""
    fsspec = pytest.importorskip("fsspec")
    from fsspec.implementations.memory import MemoryFileSystem
    from fsspec.registry import _registry

    class FakeHub(MemoryFileSystem):
        protocol = "hf"
        store: dict = {}
        pseudo_dirs = [""]
        opened: list = []

        @classmethod
        def _strip_protocol(cls, path):
            return super()._strip_protocol(path[len("hf://") :] if path.startswith("hf://") else path)

        def _open(self, path, *args, **kwargs):
            FakeHub.opened.append(path)
            return super()._open(path, *args, **kwargs)

    before = _registry.get("hf")
    fsspec.register_implementation("hf", FakeHub, clobber=True)
    try:
        yield FakeHub
    finally:
        if before is None:
            _registry.pop("hf", None)
        else:
            _registry["hf"] = before


def test_hf_urls_go_through_fsspecs_registry(agents, fake_hub):
    _, src = agents
    fs = fake_hub()
    fs.pipe("/someone/cartpole-agent/cartpole.rlarchive", src.read_bytes())
    with rlarchive.open("hf://someone/cartpole-agent/cartpole.rlarchive") as remote, rlarchive.open(src) as local:
        assert remote.metadata == local.metadata
        assert remote.manifest == local.manifest
    assert fake_hub.opened, "the URL was not read through the file system registered for hf"
    with pytest.raises(RlarchiveError) as e:
        rlarchive.open("hf://someone/cartpole-agent/missing.rlarchive")
    assert e.value.code == "IO_ERROR"


def test_hf_urls_without_huggingface_hub_name_the_extra():
    pytest.importorskip("fsspec")
    try:
        import huggingface_hub  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("huggingface_hub is installed")
    with pytest.raises(RlarchiveError) as e:
        rlarchive.open("hf://someone/agent/cartpole.rlarchive")
    assert e.value.code == "IO_ERROR" and "rlarchive[hf]" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.skipif(not HAVE_ONNX, reason="onnx is not installed")
def test_an_archive_without_portable_policy_has_no_onnx_model(tmp_path):
    import numpy as np

    src = tmp_path / "weights.rlarchive"
    rlarchive.save(src, data={"gamma": 0.99}, tensors={"policy": {"w": np.zeros(2, np.float32)}})
    result = package(src, tmp_path / "hub")
    assert result.files == sorted([CARD_NAME, GITATTRIBUTES, "weights.rlarchive"])
    assert any("no portable policy" in n and ONNX_NAME in n for n in result.notes)


# ------------------------------------------------------------------ what the RL Zoo's package has


def test_the_package_is_inference_only_unless_asked(agents, tmp_path):
    plain, _ = agents
    with rlarchive.open(plain) as ar:
        assert "RLA_training" in ar.manifest.extensions_used and any(g.startswith("optimizer.") for g in ar.groups)
    result = package(plain, tmp_path / "hub", episodes=0, video=False)
    assert result.dropped == ["training", "optimizers"]
    packaged = tmp_path / "hub" / "cartpole.rlarchive"
    assert rlarchive.validate(packaged)["valid"] and packaged.stat().st_size < plain.stat().st_size
    with rlarchive.open(packaged) as ar:
        assert "RLA_training" not in ar.manifest.extensions_used
        assert not any(g.startswith("optimizer.") for g in ar.groups)
        assert keys.parsed(ar.metadata, keys.DROPPED) == ["training", "optimizers"]
    readme = (tmp_path / "hub" / CARD_NAME).read_text()
    assert "Inference-only" in readme and "RLA_training" in readme and "inference-only |" in readme
    kept = package(plain, tmp_path / "full", episodes=0, video=False, keep_training=True)
    assert kept.dropped == [] and (tmp_path / "full" / "cartpole.rlarchive").read_bytes() == plain.read_bytes()
    assert "Inference-only" not in (tmp_path / "full" / CARD_NAME).read_text()
    assert set(TRAINING_ONLY) >= set(result.dropped)


def test_the_package_evaluates_in_the_same_command_and_never_changes_the_source(agents, tmp_path):
    plain, _ = agents
    before = plain.read_bytes()
    result = package(plain, tmp_path / "hub", video=False)  # no --env: the recorded id, registered in gymnasium
    assert plain.read_bytes() == before
    assert result.evaluated == "CartPole-v1"
    assert any("'CartPole-v1', as the archive records it" in n for n in result.notes)
    results = json.loads((tmp_path / "hub" / RESULTS_NAME).read_text())
    assert results["n_eval_episodes"] == 10 and results["env_id"] == "CartPole-v1"
    with rlarchive.open(tmp_path / "hub" / "cartpole.rlarchive") as ar:
        (evaluation,) = keys.parsed(ar.metadata, keys.EVALUATIONS)
    assert evaluation["seeds"] == list(range(10)) and results["mean_reward"] == evaluation["mean"]
    again = package(plain, tmp_path / "five", env_id="CartPole-v1", episodes=5, seed=7, video=False)
    assert again.evaluated == "CartPole-v1" and not any("as the archive records it" in n for n in again.notes)
    assert json.loads((tmp_path / "five" / RESULTS_NAME).read_text())["n_eval_episodes"] == 5


@pytest.mark.parametrize(
    "recorded",
    ["os:system", "gymnasium.envs.classic_control.cartpole:CartPoleEnv", "NoSuchEnv-v0", "CartPole", " CartPole-v1"],
)
def test_a_recorded_id_that_is_not_registered_is_never_made(agents, tmp_path, monkeypatch, recorded):
    import gymnasium

    from rlarchive.edit import update_metadata

    plain, _ = agents
    src = tmp_path / "src" / "cartpole.rlarchive"
    src.parent.mkdir()
    shutil.copyfile(plain, src)
    update_metadata(src, {"env_id": recorded})
    made = []
    monkeypatch.setattr(gymnasium, "make", lambda *a, **k: made.append(a) or pytest.fail("gymnasium.make was called"))
    modules = set(sys.modules)
    result = package(src, tmp_path / "hub", video=True, onnx=False)
    assert made == [] and result.evaluated is None and RESULTS_NAME not in result.files
    assert set(sys.modules) - modules <= {"onnx"}  # nothing named by the file was imported
    assert any(f"records the environment {recorded!r}, not used" in n for n in result.notes)


def _painted_env():
    """A gymnasium environment that renders rgb_array frames with NumPy alone and fits the policy of the vector
    policy-ppo-mlp-discrete (4 observations, 3 actions), registered in this process."""
    import gymnasium as gym
    from gymnasium import spaces

    class Painted(gym.Env):
        metadata = {"render_modes": ["rgb_array"], "render_fps": 30}

        def __init__(self, render_mode=None):
            self.observation_space = spaces.Box(-1, 1, (4,), np.float32)
            self.action_space = spaces.Discrete(3)
            self.render_mode, self.t = render_mode, 0

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.t = 0
            return np.zeros(4, np.float32), {}

        def step(self, action):
            self.t += 1
            return np.full(4, 0.1 * int(action), np.float32), 1.0, self.t >= 12, False, {}

        def render(self):
            frame = np.zeros((32, 48, 3), np.uint8)
            frame[:, : 4 * self.t] = 255
            return frame

    if "RlaPainted-v0" not in gym.envs.registry:
        gym.register("RlaPainted-v0", entry_point=Painted)
    return "RlaPainted-v0"


def test_the_package_records_a_replay_video_or_says_why_not(tmp_path):
    pytest.importorskip("moviepy")
    from rlarchive.conformance import vectors_dir

    env = _painted_env()
    src = tmp_path / "agent.rlarchive"
    shutil.copyfile(os.path.join(vectors_dir(), "valid", "policy-ppo-mlp-discrete.rlarchive"), src)
    result = package(src, tmp_path / "hub", env_id=env, episodes=2, onnx=False)
    video = (tmp_path / "hub" / "replay.mp4").read_bytes()
    assert video[4:8] == b"ftyp" and len(video) > 100  # an MP4 file
    assert (
        "| replay\\.mp4 | a replay of one episode (seed 0) |".replace("(", "\\(").replace(")", "\\)")
        in (tmp_path / "hub" / CARD_NAME).read_text()
    )
    assert not [n for n in result.notes if "video" in n]
    assert sorted(os.listdir(tmp_path)) == ["agent.rlarchive", "hub"]
    try:
        import pygame  # noqa: F401
    except ImportError:  # CartPole cannot render without pygame: no video, and a note says why
        plain = tmp_path / "cartpole.rlarchive"
        from stable_baselines3 import PPO

        rsb3.save(PPO("MlpPolicy", "CartPole-v1", n_steps=32, batch_size=32, device="cpu"), plain)
        result = package(plain, tmp_path / "cart", episodes=1, onnx=False)
        assert "replay.mp4" not in result.files
        assert any("no replay video" in n and "pygame" in n for n in result.notes)


# ------------------------------------------------------------------ a real RL Zoo run, in one command


@pytest.fixture(scope="module")
def zoo_run(tmp_path_factory):
    import zoo_run

    return zoo_run.train(tmp_path_factory.mktemp("zoo"))


@pytest.mark.slow
def test_a_real_rl_zoo_run_to_a_hub_folder_in_one_command(zoo_run, tmp_path):
    yaml = pytest.importorskip("yaml")
    hub = tmp_path / "hub"
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "package", zoo_run, str(hub), "--metadata", "license=MIT"],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert r.returncode == 0, r.stderr
    files = sorted(os.listdir(hub))
    assert {
        "dqn-CartPole-v1.rlarchive",
        CARD_NAME,
        RESULTS_NAME,
        GITATTRIBUTES,
        "config.yml",
        "env_kwargs.yml",
        "training_episodes.csv",
        "training_evaluations.csv",
        "training_curves.svg",
    } <= set(files)
    archive = hub / "dqn-CartPole-v1.rlarchive"
    assert rlarchive.validate(archive)["valid"]
    with rlarchive.open(archive) as ar:  # the run saved its replay buffer: the package leaves it out
        assert os.path.exists(os.path.join(zoo_run, "replay_buffer.pkl"))
        assert "RLA_replay_buffer" not in ar.manifest.extensions_used and ar.metadata["license"] == "MIT"
    assert "replay_buffer.pkl left out" in r.stderr
    # the configuration as the Zoo keeps it: the same values, read back with a YAML reader
    with open(os.path.join(zoo_run, "CartPole-v1", "config.yml")) as f:
        config = dict(yaml.unsafe_load(f))
    assert yaml.safe_load((hub / "config.yml").read_text()) == {
        k: (int(v) if isinstance(v, float) and v.is_integer() else v) for k, v in config.items()
    }
    assert yaml.safe_load((hub / "env_kwargs.yml").read_text()) == {}
    # the training curves: every Monitor episode and every evaluation of evaluations.npz
    with open(os.path.join(zoo_run, "0.monitor.csv")) as f:
        monitor = [line.split(",") for line in f.read().splitlines()[2:]]
    episodes = [line.split(",") for line in (hub / "training_episodes.csv").read_text().splitlines()[1:]]
    assert [(float(r), int(n)) for r, n, _ in monitor] == [(float(e[1]), int(e[2])) for e in episodes]
    assert [int(e[0]) for e in episodes] == list(np.cumsum([int(n) for _, n, _ in monitor]))
    npz = np.load(os.path.join(zoo_run, "evaluations.npz"))
    rows = [line.split(",") for line in (hub / "training_evaluations.csv").read_text().splitlines()[1:]]
    assert [int(x[0]) for x in rows] == npz["timesteps"].tolist()
    np.testing.assert_allclose([float(x[1]) for x in rows], npz["results"].mean(axis=1))
    import xml.etree.ElementTree as ET

    svg = ET.fromstring((hub / "training_curves.svg").read_text())
    assert svg.tag == "{http://www.w3.org/2000/svg}svg" and len(
        svg.findall(".//{http://www.w3.org/2000/svg}circle")
    ) == len(rows)
    # the card the hub reads: licence, library, the evaluation the command ran
    hf = pytest.importorskip("huggingface_hub")
    data = hf.ModelCard((hub / CARD_NAME).read_text()).data
    assert data.license == "mit" and data.library_name == "stable-baselines3"
    assert data.eval_results[0].metric_value == "{:.2f} +/- {:.2f}".format(
        *(json.loads((hub / RESULTS_NAME).read_text())[k] for k in ("mean_reward", "std_reward"))
    )
    assert "![Training curves](training_curves.svg)" in (hub / CARD_NAME).read_text()


def test_training_curves_from_hostile_files_are_skipped_with_a_note(tmp_path):
    from rlarchive.zoo.curves import read_curves

    run = tmp_path / "run"
    run.mkdir()
    (run / "0.monitor.csv").write_text('#{"t_start": 1}\nr,l,t\n1.5,3,0.2\n2.5,4,0.1\n')
    (run / "1.monitor.csv").write_text("r,l,t\nnan,3,0.3\n")  # not a finite return
    (run / "2.monitor.csv").write_bytes(b"r,l,t\n\xff\xfe,1,1\n")  # not UTF-8
    (tmp_path / "outside.csv").write_text("r,l,t\n100,1,0.05\n")
    os.symlink(tmp_path / "outside.csv", run / "3.monitor.csv")  # leads out of the folder: never read
    os.mkfifo(run / "4.monitor.csv")  # would block a reader
    buf = __import__("io").BytesIO()
    np.savez(buf, timesteps=np.array([10]), results=np.array([[object()]], dtype=object), ep_lengths=np.array([[1]]))
    (run / "evaluations.npz").write_bytes(buf.getvalue())  # an object array: a pickle inside
    curves = read_curves(str(run))
    assert curves.episodes == [(4, 2.5, 4, 0.1), (7, 1.5, 3, 0.2)]  # ended first, counted first
    assert curves.evaluations == [] and curves.read == ["0.monitor.csv"]
    notes = " ".join(curves.notes)
    assert "1.monitor.csv" in notes and "2.monitor.csv" in notes and "evaluations.npz" in notes
    assert "3.monitor.csv" not in curves.read and "4.monitor.csv" not in curves.read


def test_the_zoo_yaml_files_read_back_as_the_recorded_values():
    yaml = pytest.importorskip("yaml")
    from rlarchive.hub.package_files import yaml_text

    doc = {
        "learning_rate": 1e-05,
        "n_timesteps": 1e20,
        "gamma": 0.99,
        "yes": "no",
        "null": None,
        "policy_kwargs": "dict(net_arch=[64, 64], activation_fn=nn.ReLU)",
        "env_wrapper": [{"gymnasium.wrappers.TimeLimit": {"max_episode_steps": 100}}],
        "frame_stack": 4,
        "normalize": True,
        "odd key: [x]": "!!python/object/apply:os.system ['touch PWNED']",
        "unicode": "\u00e9\U0001f600\u202e",
        "neg": -0.5,
    }
    text = yaml_text(doc)
    assert text.isascii() and not __import__("re").search(r"(^|[\s\[{,])[!&*]", text)  # no tag, anchor or alias
    assert yaml.safe_load(text) == doc
    assert yaml.unsafe_load(text) == doc  # the RL Zoo's own loader reads the same values, and builds nothing
    assert yaml_text({}) == "{}\n" and yaml.safe_load(yaml_text({})) == {}
