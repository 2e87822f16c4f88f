"""rlarchive package: a folder ready for a model hub (spec/metadata.md §6), and hf:// URLs through fsspec."""

import json
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("stable_baselines3")

import rlarchive  # noqa: E402
from rlarchive import metadata as keys  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.card import card  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.evaluate import evaluate, record  # noqa: E402
from rlarchive.package import CARD_NAME, ONNX_NAME, RESULTS_NAME, package, results_json  # noqa: E402

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
    rsb3.save(model, plain)
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
    result = package(src, tmp_path / "hub")
    files = _files(tmp_path / "hub")
    expected = sorted(["cartpole.rlarchive", CARD_NAME, RESULTS_NAME] + ([ONNX_NAME] if HAVE_ONNX else []))
    assert sorted(files) == expected == result.files
    assert result.folder == str(tmp_path / "hub")
    assert files["cartpole.rlarchive"] == src.read_bytes()
    assert files[CARD_NAME].decode("utf-8") == card(src)
    with rlarchive.open(src) as ar:
        latest = keys.parsed(ar.metadata, keys.EVALUATIONS)[-1]
    results = json.loads(files[RESULTS_NAME])
    assert list(results)[: len(RL_ZOO_KEYS)] == RL_ZOO_KEYS
    assert results["mean_reward"] == latest["mean"] and results["std_reward"] == latest["std"]
    assert results["n_eval_episodes"] == latest["episodes"] == 3  # the latest of the two recorded
    assert results["is_deterministic"] is latest["deterministic"]
    assert results["eval_datetime"] == latest["date"] and results["env_id"] == "CartPole-v1"
    assert files[RESULTS_NAME].decode("ascii") == results_json(latest)
    assert not [n for n in os.listdir(tmp_path) if n != "hub"], "a temporary folder was left behind"


@pytest.mark.skipif(not HAVE_ONNX, reason="onnx is not installed")
def test_the_packaged_onnx_model_is_the_export_of_the_archive(agents, tmp_path):
    from rlarchive.onnx_export import export_onnx

    _, src = agents
    package(src, tmp_path / "hub")
    export_onnx(src, tmp_path / "alone.onnx")
    assert (tmp_path / "hub" / ONNX_NAME).read_bytes() == (tmp_path / "alone.onnx").read_bytes()


def test_two_runs_give_identical_files(agents, tmp_path):
    _, src = agents
    package(src, tmp_path / "one")
    os.utime(src)  # a later modification time changes nothing
    package(src, tmp_path / "two")
    assert _files(tmp_path / "one") == _files(tmp_path / "two")


def test_without_evaluation_there_is_no_results_json(agents, tmp_path):
    plain, _ = agents
    result = package(plain, tmp_path / "hub")
    assert RESULTS_NAME not in os.listdir(tmp_path / "hub")
    assert any(RESULTS_NAME in n and "no evaluation" in n for n in result.notes)
    assert "None recorded" in (tmp_path / "hub" / CARD_NAME).read_text()


def test_onnx_left_out_when_asked_or_when_onnx_is_missing(agents, tmp_path, monkeypatch):
    _, src = agents
    result = package(src, tmp_path / "a", onnx=False)
    assert ONNX_NAME not in result.files and not result.notes
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now fails
    result = package(src, tmp_path / "b")
    assert ONNX_NAME not in result.files
    assert any("onnx is not installed" in n for n in result.notes)
    assert RESULTS_NAME in result.files


def test_an_existing_folder(agents, tmp_path):
    _, src = agents
    out = tmp_path / "hub"
    out.mkdir()
    package(src, out)  # an empty folder is filled
    (out / "mine.txt").write_text("keep")
    with pytest.raises(RlarchiveError) as e:
        package(src, out)
    assert e.value.code == "IO_ERROR" and "--force" in str(e.value)
    assert (out / "mine.txt").read_text() == "keep"
    result = package(src, out, force=True, onnx=False)
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
        [sys.executable, "-m", "rlarchive", "package", str(plain), str(tmp_path / "p"), "--no-onnx"],
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
    assert result.files == sorted([CARD_NAME, "weights.rlarchive"])
    assert any("no portable policy" in n and ONNX_NAME in n for n in result.notes)
