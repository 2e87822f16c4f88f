"""import-zoo reads a downloaded run folder without leaving it, and prints the names it holds escaped.

A run folder is made by whoever published it: a ``config.yml`` linked to a
token file elsewhere once put the token into the archive's metadata (ready for
``package`` to publish). No link that leaves the folder is followed (files,
sub-folders, devices), no FIFO or device is read, a file swapped for a link
after the folder was listed is refused, the report names what was skipped,
and every name from the folder reaches the terminal escaped (spec §14).
"""

import os
import shutil
import subprocess
import sys
import unicodedata
import zipfile

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symbolic links and FIFOs as POSIX has them")
pytest.importorskip("yaml")
pytest.importorskip("stable_baselines3")

import rlarchive  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive import zoo  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.filenames import escape_name  # noqa: E402

TOKEN = "hf_SECRET_TOKEN_4f9a"
ENV = {**os.environ, "PYTHONPATH": os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))}


@pytest.fixture(scope="module")
def zoo_run(tmp_path_factory):
    """A run folder as rl_zoo3 lays it out: CartPole-v1.zip, and CartPole-v1/{config,args}.yml."""
    from stable_baselines3 import PPO

    run = tmp_path_factory.mktemp("logs") / "ppo" / "CartPole-v1_1"
    (run / "CartPole-v1").mkdir(parents=True)
    PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, seed=0, device="cpu").save(run / "CartPole-v1")
    (run / "CartPole-v1" / "config.yml").write_text("n_envs: 1\npolicy: MlpPolicy\n")
    (run / "CartPole-v1" / "args.yml").write_text("env: CartPole-v1\nseed: 0\n")
    return run


def _secret(tmp_path):
    """A private file outside the run folder, as YAML (so that reading it would succeed)."""
    secret = tmp_path / "outside" / "token.yml"
    secret.parent.mkdir()
    secret.write_text(f"token: {TOKEN}\n")
    return secret


def _run(zoo_run, tmp_path, name="r_1"):
    copy = tmp_path / name
    shutil.copytree(zoo_run, copy)
    return copy


def _archive_text(path) -> str:
    with open(path, "rb") as f:
        return f.read().decode("latin-1")


def _import(run, tmp_path):
    out = tmp_path / "out.rlarchive"
    report = rsb3.import_zoo(run, out)
    assert rlarchive.validate(out)["valid"]
    return out, report


def test_a_config_linked_outside_the_folder_is_not_read(zoo_run, tmp_path):
    run = _run(zoo_run, tmp_path)
    secret = _secret(tmp_path)
    os.remove(run / "CartPole-v1" / "config.yml")
    os.symlink(secret, run / "CartPole-v1" / "config.yml")
    out, report = _import(run, tmp_path)
    assert TOKEN not in _archive_text(out)
    with rlarchive.open(out) as ar:
        assert "zoo.config" not in ar.metadata
    assert any("CartPole-v1/config.yml" in n and "leads out of the run folder" in n for n in report.notes)


def test_a_relative_link_that_climbs_out_is_not_read(zoo_run, tmp_path):
    run = _run(zoo_run, tmp_path)
    _secret(tmp_path)
    os.remove(run / "CartPole-v1" / "args.yml")
    os.symlink("../../outside/token.yml", run / "CartPole-v1" / "args.yml")
    out, report = _import(run, tmp_path)
    assert TOKEN not in _archive_text(out)
    assert any("args.yml" in n and "leads out" in n for n in report.notes)


def test_a_linked_parameter_folder_outside_is_not_entered(zoo_run, tmp_path):
    run = _run(zoo_run, tmp_path)
    secret = _secret(tmp_path)
    os.rename(secret, secret.parent / "config.yml")
    shutil.rmtree(run / "CartPole-v1")
    os.symlink(secret.parent, run / "CartPole-v1")
    files = zoo.find_run(run)
    assert files.params is None and files.config is None
    assert any(n.startswith("skipped CartPole-v1:") and "leads out" in n for n in files.notes)


@pytest.mark.slow
def test_devices_fifos_and_links_to_them_are_skipped_without_blocking(zoo_run, tmp_path):
    run = _run(zoo_run, tmp_path)
    os.mkfifo(run / "fifo.yml")
    os.remove(run / "CartPole-v1" / "config.yml")
    os.symlink("../fifo.yml", run / "CartPole-v1" / "config.yml")  # inside the folder, but a FIFO
    os.symlink("/dev/zero", run / "replay_buffer.pkl")
    os.symlink(tmp_path / "nowhere", run / "vec_normalize.pkl")
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "import-zoo", str(run), str(tmp_path / "o.rlarchive")],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    for name, why in (
        ("fifo.yml", "neither a regular file nor a folder"),
        ("CartPole-v1/config.yml", "neither a regular file nor a folder"),
        ("replay_buffer.pkl", "leads out of the run folder"),
        ("vec_normalize.pkl", "leads out of the run folder"),
    ):
        (shown,) = [line for line in r.stdout.splitlines() if line.startswith(f"  note: skipped {name}: ")]
        assert why in shown, (name, r.stdout)


def test_a_link_inside_the_folder_is_followed(zoo_run, tmp_path):
    run = _run(zoo_run, tmp_path)
    os.rename(run / "CartPole-v1" / "config.yml", run / "shared-config.yml")
    os.symlink("../shared-config.yml", run / "CartPole-v1" / "config.yml")
    os.rename(run / "CartPole-v1.zip", run / "models.zip.real")
    os.symlink("models.zip.real", run / "CartPole-v1.zip")
    out, report = _import(run, tmp_path)
    with rlarchive.open(out) as ar:
        assert "zoo.config" in ar.metadata
    assert not any(n.startswith("skipped") for n in report.notes)


def test_a_file_swapped_for_a_link_after_the_listing_is_refused(zoo_run, tmp_path):
    """The race: listed as a regular file, replaced by a link before it is opened; never followed."""
    run = _run(zoo_run, tmp_path)
    secret = _secret(tmp_path)
    files = zoo.find_run(run)
    os.remove(run / "CartPole-v1" / "config.yml")
    os.symlink(secret, run / "CartPole-v1" / "config.yml")
    with pytest.raises(RlarchiveError) as e:
        zoo.zoo_metadata(files)
    assert e.value.code == "IO_ERROR" and TOKEN not in str(e.value)


def test_a_folder_swapped_for_a_link_after_the_listing_is_refused(zoo_run, tmp_path):
    run = _run(zoo_run, tmp_path)
    secret = _secret(tmp_path)
    files = zoo.find_run(run)
    shutil.copy(run / "CartPole-v1" / "args.yml", secret.parent / "args.yml")
    os.rename(secret, secret.parent / "config.yml")
    shutil.rmtree(run / "CartPole-v1")
    os.symlink(secret.parent, run / "CartPole-v1")
    with pytest.raises(RlarchiveError) as e:
        zoo.zoo_metadata(files)
    assert e.value.code == "IO_ERROR"


def _clean(text: str) -> bool:
    return not any(
        c != "\n"
        and (unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") or (unicodedata.category(c) == "Zs" and c != " "))
        for c in text
    )


HOSTILE_ZIP = "model \x1b[2J\x1b]0;owned\x07\nnote: forged line \u202eevil.zip"


@pytest.mark.slow
def test_import_zoo_prints_names_from_the_folder_escaped(zoo_run, tmp_path):
    run = _run(zoo_run, tmp_path, "evil_1")
    shutil.rmtree(run / "CartPole-v1")  # the flat layout: the one zip is the model, whatever its name
    os.rename(run / "CartPole-v1.zip", run / HOSTILE_ZIP)
    os.symlink("/etc/hostname", run / "link \x1b[31m\nout")
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "import-zoo", str(run), str(tmp_path / "o.rlarchive")],
        capture_output=True,
        env=ENV,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode("utf-8")
    assert _clean(out) and _clean(r.stderr.decode("utf-8"))
    assert escape_name(HOSTILE_ZIP) in out and escape_name("link \x1b[31m\nout") in out
    assert not any(line.startswith("note: forged") for line in out.splitlines())


def test_import_zoo_error_names_candidates_escaped(zoo_run, tmp_path):
    run = _run(zoo_run, tmp_path, "two_1")
    shutil.rmtree(run / "CartPole-v1")
    shutil.copy(run / "CartPole-v1.zip", run / HOSTILE_ZIP)
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "import-zoo", str(run), str(tmp_path / "o.rlarchive")],
        capture_output=True,
        env=ENV,
        timeout=300,
    )
    err = r.stderr.decode("utf-8")
    assert r.returncode == 1 and "IMPORT_INVALID" in err and len(err.splitlines()) == 1
    assert _clean(err) and escape_name(HOSTILE_ZIP) in err


@pytest.mark.slow
def test_import_sb3_prints_member_names_from_the_zip_escaped(zoo_run, tmp_path):
    """The same class in import-sb3: a member name of the zip, a library version read from it."""
    src = tmp_path / "model.zip"
    shutil.copy(zoo_run / "CartPole-v1.zip", src)
    with zipfile.ZipFile(src, "a") as z:
        z.writestr("extra \x1b]0;owned\x07\n  note: forged \u202e", b"x")
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "import-sb3", str(src), str(tmp_path / "o.rlarchive")],
        capture_output=True,
        env=ENV,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode("utf-8")
    assert _clean(out) and not any(line.startswith("  note: forged") for line in out.splitlines())
    assert "extra \\u001b]0;owned\\u0007\\u000a  note: forged \\u202e" in out
