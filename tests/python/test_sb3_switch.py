"""rlarchive.sb3.use_archives(): SB3's own persistence methods writing and reading archives; the part archives
(replay buffer, VecNormalize statistics, policy) and the callbacks that write archives."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from stable_baselines3 import DQN, PPO, SAC  # noqa: E402
from stable_baselines3.common.base_class import BaseAlgorithm  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.envs import BitFlippingEnv  # noqa: E402
from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402
from stable_baselines3.her.her_replay_buffer import HerReplayBuffer  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import metadata as keys  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.sb3 import files as sb3_files  # noqa: E402


def _part(path):
    with rlarchive.open(path) as ar:
        return keys.part_of(ar.metadata)


@pytest.mark.slow
def test_switch_is_opt_in_and_undone():
    """Importing rlarchive changes nothing; the switch replaces the methods until undone, as a call or a with block."""
    code = "import rlarchive.sb3, rlarchive.sb3.switch; from stable_baselines3.common.base_class import BaseAlgorithm as B; print(B.save.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=dict(os.environ))
    assert out.stdout.strip() == "stable_baselines3.common.base_class"
    original = BaseAlgorithm.__dict__["save"]
    switch = rsb3.use_archives()
    assert BaseAlgorithm.__dict__["save"] is not original and switch.active
    switch.undo()
    switch.undo()  # a second undo does nothing
    assert BaseAlgorithm.__dict__["save"] is original and not switch.active
    with rsb3.use_archives() as outer:
        inner = rsb3.use_archives()
        with pytest.raises(RuntimeError):
            outer.undo()
        inner.undo()
    assert BaseAlgorithm.__dict__["save"] is original


def test_model_save_and_load_go_through_archives(tmp_path):
    """model.save(path) writes an archive where SB3 writes its zip (.zip added), and Class.load reads it."""
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1, seed=0)
    model.learn(16)
    with rsb3.use_archives():
        model.save(tmp_path / "sub" / "ppo")
        path = tmp_path / "sub" / "ppo.zip"
        assert sb3_files.is_archive(path) and _part(path) == "model"
        again = PPO.load(tmp_path / "sub" / "ppo")
        again.set_parameters(str(path))
    obs = np.zeros((3, 4), np.float32)
    assert np.array_equal(again.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0])
    assert again.num_timesteps == 16


def test_an_sb3_zip_is_imported_without_running_its_pickles(tmp_path):
    """A file SB3 wrote before the switch loads by default through the import (no pickle run); legacy='error' refuses it."""
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16)
    model.save(tmp_path / "old.zip")
    with rsb3.use_archives():
        assert PPO.load(tmp_path / "old.zip").n_steps == 16
    with rsb3.use_archives(legacy="error"), pytest.raises(RlarchiveError) as e:
        PPO.load(tmp_path / "old.zip")
    assert e.value.code == "ARCHIVE_NOT_RLARCHIVE"


def test_replay_buffer_part_loads_into_an_existing_model(tmp_path):
    """save_replay_buffer writes an archive of part replay_buffer; load_replay_buffer puts a new buffer into the model."""
    model = SAC(
        "MlpPolicy", "Pendulum-v1", buffer_size=100, learning_starts=5, policy_kwargs=dict(net_arch=[8]), seed=0
    )
    model.learn(20)
    with rsb3.use_archives():
        model.save_replay_buffer(tmp_path / "buffer")
        assert _part(tmp_path / "buffer.pkl") == "replay_buffer"
        other = SAC("MlpPolicy", "Pendulum-v1", buffer_size=100, policy_kwargs=dict(net_arch=[8]))
        other.load_replay_buffer(tmp_path / "buffer")
    assert other.replay_buffer.pos == 20
    assert np.array_equal(other.replay_buffer.observations, model.replay_buffer.observations)
    with pytest.raises(RlarchiveError, match="holds a replay buffer"):
        rsb3.load(tmp_path / "buffer.pkl")


def test_her_buffer_part_truncates_as_sb3_does(tmp_path):
    """A HerReplayBuffer gets the model's env; truncate_last_traj closes the open episode with SB3's own warning."""
    env = make_vec_env(lambda: BitFlippingEnv(n_bits=4, continuous=True), 1)
    model = SAC("MultiInputPolicy", env, replay_buffer_class=HerReplayBuffer, buffer_size=200, learning_starts=50)
    model.learn(30)
    path = tmp_path / "her.rlarchive"
    rsb3.save_replay_buffer(model, path)
    open_episode = bool((model.replay_buffer.dones[model.replay_buffer.pos - 1] == 0).any())
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        buffer = rsb3.load_replay_buffer(model, path, truncate_last_traj=True)
    assert buffer.env is model.env
    assert any("truncated" in str(w.message) for w in record) == open_episode


def test_vec_normalize_part(tmp_path):
    """VecNormalize.save writes an archive of part vec_normalize; VecNormalize.load wraps the caller's env with it."""
    venv = VecNormalize(make_vec_env("Pendulum-v1", 2), gamma=0.9)
    venv.reset()
    for _ in range(5):
        venv.step(np.zeros((2, 1), np.float32))
    with rsb3.use_archives():
        venv.save(str(tmp_path / "vecnormalize.pkl"))
        assert _part(tmp_path / "vecnormalize.pkl") == "vec_normalize"
        loaded = VecNormalize.load(str(tmp_path / "vecnormalize.pkl"), make_vec_env("Pendulum-v1", 2))
        with pytest.raises(AssertionError):
            VecNormalize.load(str(tmp_path / "vecnormalize.pkl"), make_vec_env("CartPole-v1", 2))
    assert np.array_equal(loaded.obs_rms.mean, venv.obs_rms.mean) and loaded.gamma == 0.9
    assert loaded.ret_rms.count == venv.ret_rms.count


@pytest.mark.parametrize("which", ["policy", "q_net"])
def test_policy_part(tmp_path, which):
    """policy.save / Class.load write and read an archive of part policy holding the constructor values and weights."""
    model = DQN("MlpPolicy", "CartPole-v1", buffer_size=100, policy_kwargs=dict(net_arch=[8]))
    module = model.policy if which == "policy" else model.q_net
    with rsb3.use_archives():
        module.save(tmp_path / "p.pkl")
        again = type(module).load(tmp_path / "p.pkl")
    assert _part(tmp_path / "p.pkl") == "policy"
    for k, v in module.state_dict().items():
        assert torch.equal(again.state_dict()[k], v)
    obs = np.zeros((2, 4), np.float32)
    assert np.array_equal(again.predict(obs, deterministic=True)[0], module.predict(obs, deterministic=True)[0])


def test_checkpoint_callback_keeps_the_last_n(tmp_path):
    """The CheckpointCallback twin writes a model archive (with buffer and statistics when asked) every save_freq calls,
    named with the prefix, and keeps the newest keep_last."""
    env = VecNormalize(make_vec_env("Pendulum-v1", 1))
    model = SAC("MlpPolicy", env, buffer_size=100, learning_starts=5, policy_kwargs=dict(net_arch=[8]), seed=0)
    callback = rsb3.CheckpointCallback(
        10, str(tmp_path), name_prefix="sac", save_replay_buffer=True, save_vecnormalize=True, keep_last=2
    )
    model.learn(40, callback=callback)
    assert sorted(os.listdir(tmp_path)) == ["sac_30_steps.rlarchive", "sac_40_steps.rlarchive"]
    assert len(callback.written) == 4
    last = tmp_path / "sac_40_steps.rlarchive"
    with rlarchive.open(last) as ar:
        assert ar.replay_buffer() is not None and ar.vec_normalize() is not None
    again = rsb3.load(last, env=env)
    # the callback runs after the step and before SB3 stores its transition, as SB3's own does
    assert again.replay_buffer.pos == 39 and again.num_timesteps == 40


def test_eval_callback_writes_the_best_model_as_an_archive(tmp_path):
    """The EvalCallback twin writes best_model.rlarchive, then runs the caller's callback_on_new_best."""
    from stable_baselines3.common.callbacks import StopTrainingOnRewardThreshold

    model = PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1)
    stop = StopTrainingOnRewardThreshold(reward_threshold=1e9)
    callback = rsb3.EvalCallback(
        make_vec_env("CartPole-v1", 1),
        eval_freq=16,
        n_eval_episodes=1,
        best_model_save_path=str(tmp_path / "best"),
        callback_on_new_best=stop,
    )
    model.learn(32, callback=callback)
    assert os.listdir(tmp_path / "best") == ["best_model.rlarchive"]
    assert stop.n_calls >= 1
    assert rsb3.load(tmp_path / "best" / "best_model.rlarchive").n_steps == 16


def test_importing_a_file_the_switch_wrote_says_it_is_an_archive_already(tmp_path):
    """A Zoo run through the switch leaves archives under SB3's names: import-sb3 of one says so."""
    with rsb3.use_archives():
        PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16).save(tmp_path / "CartPole-v1")
    with pytest.raises(RlarchiveError, match="already an rlarchive") as e:
        rsb3.import_archive(tmp_path / "CartPole-v1.zip", tmp_path / "out.rlarchive")
    assert e.value.code == "IMPORT_INVALID" and not (tmp_path / "out.rlarchive").exists()


def test_a_dqn_optimizer_over_the_target_network_too_loads_with_a_warning_as_in_sb3(tmp_path):
    """A DQN whose optimizer also holds the target network's parameters (as SB3 < 2.4 built it) saves through the
    switch; DQN.load keeps the online network's state and warns, as SB3's own load does; the usual form loads silently."""
    model = DQN("MlpPolicy", "CartPole-v1", buffer_size=100, learning_starts=4, policy_kwargs=dict(net_arch=[8]))
    n = len(model.policy.optimizer.param_groups[0]["params"])
    with rsb3.use_archives():
        model.save(tmp_path / "usual")
        model.policy.optimizer = torch.optim.Adam(model.policy.parameters(), lr=0.001)
        model.learn(8)
        model.save(tmp_path / "old_form")
        with pytest.warns(UserWarning, match=f"holds {2 * n} parameters"):
            again = DQN.load(tmp_path / "old_form.zip", env=model.get_env())
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            DQN.load(tmp_path / "usual.zip")
    kept = again.policy.optimizer.state_dict()
    assert len(kept["param_groups"][0]["params"]) == n
    want = model.policy.optimizer.state_dict()["state"]
    assert sorted(kept["state"]) == list(range(n))
    for k in range(n):
        assert torch.equal(kept["state"][k]["exp_avg"], want[k]["exp_avg"])
    again.learn(8)


def test_action_noise_the_run_state_gives_back_is_not_warned_about(tmp_path):
    """model.save keeps SB3's noise object as an opaque pickle in data; with the run state (the default) the load
    gives it back from there, so only a switch with training=False warns that loads leave it out."""
    from stable_baselines3 import TD3
    from stable_baselines3.common.noise import NormalActionNoise

    noise = NormalActionNoise(np.zeros(1), 0.1 * np.ones(1))
    model = TD3("MlpPolicy", "Pendulum-v1", action_noise=noise, buffer_size=100, policy_kwargs=dict(net_arch=[8]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.SaveWarning)
        with rsb3.use_archives():
            model.save(tmp_path / "with_run_state")
            again = TD3.load(tmp_path / "with_run_state", env=model.get_env())
    assert isinstance(again.action_noise, NormalActionNoise)
    with rsb3.use_archives(training=False), pytest.warns(rsb3.SaveWarning, match="action_noise"):
        model.save(tmp_path / "without")


def _launch(monkeypatch, argv):
    """run_with_archives.main(argv) in this process (sys.argv and sys.path put back); its exit status, or None."""
    from rlarchive.sb3 import run_with_archives

    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        run_with_archives.main(argv)
    except SystemExit as e:
        return e.code
    return None


def test_the_launcher_runs_a_module_as_main_with_the_switch_on(tmp_path, monkeypatch):
    """python -m rlarchive.sb3.run_with_archives -m MODULE ARGS: MODULE runs as __main__ with its own arguments, the
    switch on (with the launcher's options) while it runs and off after it."""
    (tmp_path / "zoo_like.py").write_text(
        "import sys, json\n"
        "from stable_baselines3.common.base_class import BaseAlgorithm\n"
        "from rlarchive.sb3 import switch\n"
        "if __name__ == '__main__':\n"
        "    on = BaseAlgorithm.save.__module__ == switch.__name__\n"
        "    json.dump({'argv': sys.argv[1:], 'on': on, 'legacy': switch._STACK[-1].legacy},"
        " open(sys.argv[1], 'w'))\n"
        "    raise SystemExit(3)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "seen.json"
    original = BaseAlgorithm.__dict__["save"]
    assert _launch(monkeypatch, ["--legacy", "error", "-m", "zoo_like", str(out), "--algo", "ppo", "-m", "x"]) == 3
    import json

    assert json.loads(out.read_text()) == {
        "argv": [str(out), "--algo", "ppo", "-m", "x"],
        "on": True,
        "legacy": "error",
    }
    assert BaseAlgorithm.__dict__["save"] is original


def test_the_launcher_runs_a_script_whose_saves_are_archives(tmp_path, monkeypatch):
    """python -m rlarchive.sb3.run_with_archives SCRIPT ARGS: an unchanged SB3 script writes archives."""
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\n"
        "from stable_baselines3 import PPO\n"
        "PPO('MlpPolicy', 'CartPole-v1', n_steps=16, batch_size=16, policy_kwargs=dict(net_arch=[8])).save(sys.argv[1])\n"
    )
    assert _launch(monkeypatch, [str(script), str(tmp_path / "ppo")]) is None
    assert sb3_files.is_archive(tmp_path / "ppo.zip") and _part(tmp_path / "ppo.zip") == "model"


@pytest.mark.parametrize(
    "argv",
    [[], ["--legacy"], ["-m"], ["--legacy", "never", "-m", "x"], ["--opaque", "run", "x.py"], ["--fast", "-m", "x"]],
)
def test_the_launcher_refuses_a_command_line_without_a_program_or_with_a_wrong_option(argv, monkeypatch, capsys):
    assert _launch(monkeypatch, argv) == 2
    assert "usage: python -m rlarchive.sb3.run_with_archives" in capsys.readouterr().err
