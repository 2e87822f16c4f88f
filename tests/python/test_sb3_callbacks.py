"""rlarchive.sb3.CheckpointCallback with the replay buffer: background saves by default, training going on meanwhile;
a checkpoint that fails raises its error at the next checkpoint, or when training ends."""

import os
import shutil
import threading
import warnings

import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3 import SAC  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402

from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.sb3 import background  # noqa: E402
from rlarchive.sb3 import callbacks as callbacks_mod  # noqa: E402


@pytest.fixture(autouse=True)
def _settled():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        yield
    try:
        background.settle()
    except RlarchiveError:  # a test's failing save, already checked
        pass


def _sac():
    env = make_vec_env("Pendulum-v1", n_envs=1, seed=0)
    return SAC("MlpPolicy", env, buffer_size=100, learning_starts=5, seed=0, device="cpu", policy_kwargs=dict(net_arch=[8]))  # fmt: skip


class _At(BaseCallback):
    """Runs ``action(self)`` at call ``n`` (after the checkpoint callback listed before it)."""

    def __init__(self, n, action):
        super().__init__()
        self.n, self.action = n, action

    def _on_step(self):
        if self.n_calls == self.n:
            self.action(self)
        return True


def test_with_the_replay_buffer_checkpoints_are_background_saves_by_default(tmp_path, monkeypatch):
    calls = []
    real = callbacks_mod.write_checkpoint

    def spy(model, path, **kwargs):
        done = real(model, path, **kwargs)
        calls.append((os.path.basename(path), kwargs["background"], type(done).__name__))
        return done

    monkeypatch.setattr(callbacks_mod, "write_checkpoint", spy)
    assert rsb3.CheckpointCallback(10, str(tmp_path)).background is False
    assert rsb3.CheckpointCallback(10, str(tmp_path), save_replay_buffer=True, background=False).background is False
    callback = rsb3.CheckpointCallback(10, str(tmp_path), name_prefix="sac", save_replay_buffer=True, keep_last=2)
    model = _sac()
    model.learn(30, callback=callback)
    assert calls == [(f"sac_{n}_steps.rlarchive", True, "BackgroundSave") for n in (10, 20, 30)]
    # when learn returns the last one is written, and only the newest two are kept
    assert sorted(os.listdir(tmp_path)) == ["sac_20_steps.rlarchive", "sac_30_steps.rlarchive"]
    again = rsb3.load(tmp_path / "sac_30_steps.rlarchive", env=model.get_env())
    assert again.replay_buffer.pos == 29 and again.num_timesteps == 30


def test_training_goes_on_while_the_checkpoint_is_written(tmp_path, monkeypatch):
    """The writer is held until step 14: the checkpoint of step 10 is not there yet, and training has gone on."""
    gate, seen = threading.Event(), []
    real_start = background.start

    def held_start(path, work, cleanup):
        def held():
            assert gate.wait(120), "the test never opened the gate"
            return work()

        return real_start(path, held, cleanup)

    monkeypatch.setattr(background, "start", held_start)
    first = tmp_path / "rl_model_10_steps.rlarchive"

    def look(cb):
        seen.append((cb.model.num_timesteps, first.exists()))
        gate.set()

    callback = rsb3.CheckpointCallback(10, str(tmp_path), save_replay_buffer=True)
    model = _sac()
    model.learn(14, callback=[callback, _At(14, look)])
    assert seen == [(14, False)] and first.exists()
    assert rsb3.load(first).num_timesteps == 10


def _vanish(cb):
    shutil.rmtree(cb.path)


def test_a_failed_background_checkpoint_is_raised_at_the_next_checkpoint(tmp_path):
    folder = tmp_path / "checkpoints"
    callback = rsb3.CheckpointCallback(10, str(folder), save_replay_buffer=True)
    remover = _At(5, _vanish)
    remover.path = folder
    model = _sac()
    with pytest.raises(RlarchiveError) as e:
        model.learn(30, callback=[callback, remover])
    assert e.value.code == "IO_ERROR" and "rl_model_10_steps.rlarchive failed" in e.value.message
    assert model.num_timesteps == 20  # raised at the checkpoint of step 20, before it started
    assert not folder.exists()


def test_a_failed_last_checkpoint_is_raised_when_training_ends(tmp_path):
    folder = tmp_path / "checkpoints"
    callback = rsb3.CheckpointCallback(10, str(folder), save_replay_buffer=True)
    remover = _At(5, _vanish)
    remover.path = folder
    model = _sac()
    with pytest.raises(RlarchiveError) as e:
        model.learn(12, callback=[callback, remover])
    assert e.value.code == "IO_ERROR" and "rl_model_10_steps.rlarchive failed" in e.value.message
    assert model.num_timesteps == 12


def test_without_background_a_failed_checkpoint_raises_at_once(tmp_path):
    folder = tmp_path / "checkpoints"
    callback = rsb3.CheckpointCallback(10, str(folder), save_replay_buffer=True, background=False)
    remover = _At(5, _vanish)
    remover.path = folder
    model = _sac()
    with pytest.raises(RlarchiveError) as e:
        model.learn(30, callback=[callback, remover])
    assert e.value.code == "IO_ERROR" and model.num_timesteps == 10
