"""Each importer recognises its own input format and refuses the other's, naming the right command."""

import subprocess
import sys

import pytest

pytest.importorskip("stable_baselines3", reason="stable_baselines3 is needed to write an SB3 model")
pytest.importorskip("cloudpickle", reason="cloudpickle is needed to build SB2 fixtures")

import sb_fixtures as F  # noqa: E402


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "rlarchive", *args], capture_output=True, text=True)


@pytest.mark.slow
def test_each_importer_refuses_the_other_format(tmp_path):
    from stable_baselines3 import PPO

    sb3_zip, sb2_zip = str(tmp_path / "sb3.zip"), str(tmp_path / "sb2.zip")
    PPO(
        "MlpPolicy",
        "CartPole-v1",
        n_steps=16,
        batch_size=16,
        n_epochs=1,
        seed=1,
        device="cpu",
        policy_kwargs={"net_arch": [4]},
    ).save(sb3_zip)
    F.write_sb2_ppo2(sb2_zip)
    out = tmp_path / "out.rlarchive"

    r = _cli("import-sb2", sb3_zip, str(out))
    assert r.returncode == 1 and "IMPORT_INVALID" in r.stderr and "import-sb3" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not out.exists()

    r = _cli("import-sb3", sb2_zip, str(out))
    assert r.returncode == 1 and "IMPORT_INVALID" in r.stderr and "import-sb2" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not out.exists()

    # and each still imports its own
    assert _cli("import-sb3", sb3_zip, str(out)).returncode == 0
    assert _cli("import-sb2", sb2_zip, str(tmp_path / "two.rlarchive")).returncode == 0
