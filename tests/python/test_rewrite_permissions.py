"""Every command and function that replaces an existing file keeps its permissions, owner and group (spec §12).

A private archive (mode 0600) rewritten by ``metadata --set`` or ``evaluate
--record``, or overwritten by an import or an export, must not come back with
the umask's mode (0644): each goes through the one atomic writer, and each is
run here against a destination with an unusual mode and owner.
"""

import json
import os
import stat

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="permissions and owners as POSIX has them")
pytest.importorskip("stable_baselines3")
pytest.importorskip("yaml")

import rlarchive  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.cli import main  # noqa: E402
from rlarchive.edit import update_metadata  # noqa: E402

#: The destination's mode before each command: group read, nothing for others, which no umask gives a new file.
MODE = 0o640
#: Its owner and group (set only when the tests run as root).
OWNER = (4321, 8765)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A Stable-Baselines3 zip, an archive of it (with its portable policy), an SB2 zip and an RL Zoo run folder."""
    from sb_fixtures import write_sb2_ppo2
    from stable_baselines3 import PPO

    d = tmp_path_factory.mktemp("inputs")
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1, seed=0, device="cpu")
    model.save(d / "ppo.zip")
    rsb3.save(model, d / "ppo.rlarchive")
    write_sb2_ppo2(str(d / "sb2.zip"))
    run = d / "ppo" / "CartPole-v1_1"
    (run / "CartPole-v1").mkdir(parents=True)
    (run / "CartPole-v1.zip").write_bytes((d / "ppo.zip").read_bytes())
    (run / "CartPole-v1" / "args.yml").write_text("env: CartPole-v1\nseed: 0\n")
    return {"zip": str(d / "ppo.zip"), "archive": str(d / "ppo.rlarchive"), "sb2": str(d / "sb2.zip"), "run": str(run)}


def _private(path) -> None:
    """Give ``path`` the test's mode (and, as root, its owner and group)."""
    if os.geteuid() == 0:
        os.chown(path, *OWNER)
    os.chmod(path, MODE)


def _assert_kept(path) -> None:
    st = os.stat(path)
    assert stat.S_IMODE(st.st_mode) == MODE, oct(st.st_mode)
    if os.geteuid() == 0:
        assert (st.st_uid, st.st_gid) == OWNER


def _copy(src, dst) -> str:
    with open(src, "rb") as f, open(dst, "wb") as g:
        g.write(f.read())
    return str(dst)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


IN_PLACE = {
    "metadata --set": lambda a: ["metadata", a, "--set", "note=private"],
    "evaluate --record": lambda a: [
        "evaluate",
        a,
        "--env",
        "CartPole-v1",
        "--episodes",
        "1",
        "--seed",
        "0",
        "--record",
    ],
}


@pytest.mark.parametrize("command", list(IN_PLACE))
def test_commands_that_rewrite_an_archive_keep_its_mode_and_owner(command, inputs, tmp_path, umask_022, capsys):
    archive = _copy(inputs["archive"], tmp_path / "private.rlarchive")
    _private(archive)
    assert main(IN_PLACE[command](archive)) == 0, capsys.readouterr().err
    _assert_kept(archive)
    assert rlarchive.validate(archive)["valid"]


OVERWRITE = {
    "import-sb3": lambda i, out: ["import-sb3", i["zip"], out],
    "import-sb2": lambda i, out: ["import-sb2", i["sb2"], out],
    "import-zoo": lambda i, out: ["import-zoo", i["run"], out],
    "export-onnx": lambda i, out: ["export-onnx", i["archive"], out],
    "export-sb3": lambda i, out: ["export-sb3", i["archive"], out],
}


@pytest.mark.parametrize("command", list(OVERWRITE))
def test_commands_that_overwrite_a_file_keep_its_mode_and_owner(command, inputs, tmp_path, umask_022, capsys):
    if command == "export-onnx":
        pytest.importorskip("onnx")
    out = tmp_path / "existing.out"
    out.write_bytes(b"an older file")
    _private(out)
    assert main(OVERWRITE[command](inputs, str(out))) == 0, capsys.readouterr().err
    _assert_kept(out)
    assert out.read_bytes() != b"an older file"


def test_the_python_functions_that_rewrite_keep_mode_and_owner(inputs, tmp_path, umask_022):
    from rlarchive.evaluate import evaluate, record

    archive = _copy(inputs["archive"], tmp_path / "private.rlarchive")
    _private(archive)
    update_metadata(archive, {"note": "x"})
    _assert_kept(archive)
    record(archive, evaluate(archive, "CartPole-v1", 1, 0))
    _assert_kept(archive)
    with rlarchive.open(archive) as ar:
        assert len(json.loads(ar.metadata["evaluations"])) == 1
    rlarchive.save(archive, {"x": 1})
    _assert_kept(archive)
    out = _copy(inputs["zip"], tmp_path / "model.zip")
    _private(out)
    rsb3.export_archive(inputs["archive"], out)
    _assert_kept(out)
    out = _copy(inputs["archive"], tmp_path / "imported.rlarchive")
    _private(out)
    rsb3.import_archive(inputs["zip"], out)
    _assert_kept(out)


def test_package_force_keeps_the_folder_s_mode_and_the_archive_s(inputs, tmp_path, umask_022):
    """``package --force`` replaces a folder: the new one has the old one's mode and owner, and the copy of a
    private archive in it stays private (its mode less the umask, as ``cp`` gives)."""
    from rlarchive.hub.package import package

    archive = _copy(inputs["archive"], tmp_path / "agent.rlarchive")
    os.chmod(archive, 0o600)
    out = tmp_path / "hub"
    out.mkdir()
    (out / "old.txt").write_text("old")
    if os.geteuid() == 0:
        os.chown(out, *OWNER)
    os.chmod(out, 0o750)
    package(archive, out, force=True, onnx=False)
    st = os.stat(out)
    assert stat.S_IMODE(st.st_mode) == 0o750 and not (out / "old.txt").exists()
    if os.geteuid() == 0:
        assert (st.st_uid, st.st_gid) == OWNER
    assert stat.S_IMODE(os.stat(out / "agent.rlarchive").st_mode) == 0o600
    fresh = tmp_path / "fresh"
    package(archive, fresh, onnx=False)  # a new folder: what mkdir gives
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o755
