"""What rlarchive.sb3.load takes from an archive must fit the model it builds (Annex B.4, B.11; RLA_training §4; RLA_replay_buffer §6).

The model's construction decides its optimizers' hyperparameters, its
replay buffer's sizes and parameters, its number of environments and its
spaces. An archive whose optimizer states, buffer or run state disagree with
them used to load, and the first training step then crashed, allocated
without bound, or computed something else: each is now refused at load with
a stable code (or, for a replay buffer, left out with a LoadWarning, as a
buffer of another size already was).
"""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO, SAC, TD3  # noqa: E402
from stable_baselines3.common.buffers import NStepReplayBuffer  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.envs import BitFlippingEnv  # noqa: E402
from stable_baselines3.common.noise import NormalActionNoise, VectorizedActionNoise  # noqa: E402
from stable_baselines3.her.her_replay_buffer import HerReplayBuffer  # noqa: E402

from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.extensions import replay_buffer as replay_buffer_ext  # noqa: E402
from rlarchive.sb3 import run_state  # noqa: E402


def _pendulum(n=1):
    return make_vec_env("Pendulum-v1", n_envs=n, seed=0)


def _sac(**kwargs):
    kwargs.setdefault("policy_kwargs", dict(net_arch=[8]))
    model = SAC("MlpPolicy", _pendulum(), buffer_size=200, batch_size=8, learning_starts=5, seed=0, device="cpu",
                **kwargs)  # fmt: skip
    model.learn(10)
    return model


def _load(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        return rsb3.load(path, **kwargs)


def _refused(path, code="VALUE_UNSUPPORTED", **kwargs):
    with pytest.raises(RlarchiveError) as e:
        _load(path, **kwargs)
    assert e.value.code == code, e.value
    return e.value.message


# ------------------------------------------------------------------ optimizer states


def _first(model):
    opt = model.actor.optimizer
    return opt, opt.param_groups[0], opt.state[opt.param_groups[0]["params"][0]]


def _entry(key, value):
    return lambda m: _first(m)[2].__setitem__(key, value)


def _group(key, value):
    return lambda m: _first(m)[1].__setitem__(key, value)


def _drop_group(key):
    return lambda m: _first(m)[1].pop(key)


#: name -> (a change to a trained SAC's actor optimizer, words of the refusal). Each loaded before, and the
#: first training step then crashed (a shape, a flag, a missing entry, a type) or computed NaN or inf.
OPTIMIZER_STATES = {
    "exp-avg-shape": (_entry("exp_avg", torch.zeros(7)), "exp_avg"),
    "exp-avg-sq-negative": (lambda m: _first(m)[2]["exp_avg_sq"].fill_(-1.0), "exp_avg_sq"),
    "exp-avg-nan": (lambda m: _first(m)[2]["exp_avg"].fill_(float("nan")), "exp_avg"),
    "step-vector": (_entry("step", torch.zeros(3)), "step"),
    "step-negative": (_entry("step", torch.tensor(-5.0)), "step"),
    "step-fraction": (_entry("step", torch.tensor(2.5)), "step"),
    "capturable-on-cpu": (_group("capturable", True), "capturable"),
    "differentiable": (_group("differentiable", True), "differentiable"),
    "amsgrad-turned-on": (_group("amsgrad", True), "amsgrad"),
    "maximize": (_group("maximize", True), "maximize"),
    "fused-and-foreach": (lambda m: _first(m)[1].update(fused=True, foreach=True), "refuses"),
    "lr-string": (_group("lr", "fast"), "lr"),
    "lr-inf": (_group("lr", float("inf")), "lr"),
    "betas-three": (_group("betas", (0.9, 0.99, 0.999)), "betas"),
    "beta-above-one": (_group("betas", (0.9, 1.5)), "refuses"),
    "eps-missing": (_drop_group("eps"), "eps"),
    "unknown-entry": (_entry("momentum_buffer", torch.zeros(1)), "momentum_buffer"),
}


@pytest.mark.parametrize("name", list(OPTIMIZER_STATES))
def test_an_optimizer_state_that_does_not_fit_is_refused_at_load(name, tmp_path):
    change, words = OPTIMIZER_STATES[name]
    model = _sac()
    change(model)
    rsb3.save(model, tmp_path / "m.rlarchive")
    message = _refused(tmp_path / "m.rlarchive", env=model.get_env())
    assert "actor.optimizer" in message and words in message, message


def test_an_amsgrad_state_without_its_maximum_is_refused(tmp_path):
    """Old behaviour: KeyError 'max_exp_avg_sq' at the first training step."""
    model = _sac(policy_kwargs=dict(net_arch=[8], optimizer_kwargs=dict(amsgrad=True)))
    del _first(model)[2]["max_exp_avg_sq"]
    rsb3.save(model, tmp_path / "m.rlarchive")
    assert "lacks 'max_exp_avg_sq'" in _refused(tmp_path / "m.rlarchive", env=model.get_env())


def test_an_optimizer_state_for_no_parameter_is_refused(tmp_path):
    model = _sac()
    model.actor.optimizer.state[99] = {"step": torch.tensor(1.0)}  # an id that is no parameter of the groups
    rsb3.save(model, tmp_path / "m.rlarchive")
    assert "no parameter" in _refused(tmp_path / "m.rlarchive")


def test_fitting_optimizer_states_load_and_train(tmp_path):
    """The checks refuse nothing SB3 itself writes: amsgrad, foreach and fused on the CPU load and train."""
    model = _sac(policy_kwargs=dict(net_arch=[8], optimizer_kwargs=dict(amsgrad=True, foreach=True)))
    rsb3.save(model, tmp_path / "m.rlarchive")
    again = _load(tmp_path / "m.rlarchive", env=model.get_env())
    again.learn(4)
    p = again.actor.optimizer.param_groups[0]["params"][0]
    assert "max_exp_avg_sq" in again.actor.optimizer.state[p]


def test_a_negative_learning_rate_as_sb3_writes_it_loads_and_the_schedule_sets_it_again(tmp_path):
    """A linear schedule run past its end (the last rollout passes total_timesteps) leaves a slightly negative
    lr in the optimizer state SB3 saves (RL Zoo's PPO CartPole-v1: -9.6e-07); SB3's own load takes it and sets
    lr from the schedule before every update. The archive loads it as it is, and training sets it again."""
    model = _sac(learning_rate=lambda progress: 3e-4 * progress)
    _first(model)[1]["lr"] = -9.6e-07
    model.save(tmp_path / "sb3.zip")
    assert SAC.load(tmp_path / "sb3.zip", device="cpu").actor.optimizer.param_groups[0]["lr"] == -9.6e-07
    rsb3.save(model, tmp_path / "m.rlarchive")
    again = _load(tmp_path / "m.rlarchive", env=model.get_env())
    assert _first(again)[1]["lr"] == -9.6e-07
    again.learn(8, reset_num_timesteps=False)
    assert _first(again)[1]["lr"] == again.lr_schedule(again._current_progress_remaining)


# ------------------------------------------------------------------ replay buffers


def _nstep(n_steps=3):
    return _sac(replay_buffer_class=NStepReplayBuffer, replay_buffer_kwargs=dict(n_steps=n_steps))


def test_a_replay_buffer_n_steps_above_the_limit_is_refused(tmp_path, monkeypatch):
    """An archive whose buffer has n_steps 2^40: its first training step would allocate terabytes."""
    model = _nstep()
    model.replay_buffer.n_steps = 1 << 40
    with monkeypatch.context() as m:  # as another writer could write it
        m.setattr(replay_buffer_ext, "MAX_REPLAY_N_STEPS", 1 << 62, raising=False)
        rsb3.save(model, tmp_path / "m.rlarchive", replay_buffer=True)
    message = _refused(tmp_path / "m.rlarchive", "LIMIT_EXCEEDED", env=model.get_env())
    assert "MAX_REPLAY_N_STEPS" in message


def test_a_model_whose_own_n_step_buffer_is_above_the_limit_is_refused(tmp_path):
    model = SAC("MlpPolicy", _pendulum(), buffer_size=200, replay_buffer_class=NStepReplayBuffer,
                replay_buffer_kwargs=dict(n_steps=1 << 40), policy_kwargs=dict(net_arch=[8]), device="cpu")  # fmt: skip
    rsb3.save(model, tmp_path / "m.rlarchive")
    assert "MAX_REPLAY_N_STEPS" in _refused(tmp_path / "m.rlarchive", "LIMIT_EXCEEDED")


def _her():
    env = make_vec_env(lambda: BitFlippingEnv(n_bits=4, continuous=True, max_steps=4), n_envs=1, seed=0)
    model = SAC("MultiInputPolicy", env, buffer_size=200, batch_size=8, learning_starts=5,
                replay_buffer_class=HerReplayBuffer, replay_buffer_kwargs=dict(n_sampled_goal=2),
                policy_kwargs=dict(net_arch=[8]), seed=0, device="cpu")  # fmt: skip
    model.learn(10)
    return model


#: name -> (model factory, the buffer attribute changed before the save, its value). The archive's value used
#: to replace the one the model's construction (its data) decided.
BUFFER_PARAMETERS = {
    "n_steps": (_nstep, "n_steps", 5),
    "gamma": (_nstep, "gamma", 0.5),
    "handle_timeout_termination": (_sac, "handle_timeout_termination", False),
    "n_sampled_goal": (_her, "n_sampled_goal", 7),
}


@pytest.mark.parametrize("name", list(BUFFER_PARAMETERS))
def test_a_buffer_parameter_the_model_decides_is_not_taken_from_the_archive(name, tmp_path):
    make, attr, value = BUFFER_PARAMETERS[name]
    model = make()
    mine = getattr(model.replay_buffer, attr)
    setattr(model.replay_buffer, attr, value)
    rsb3.save(model, tmp_path / "m.rlarchive", replay_buffer=True)
    with pytest.warns(rsb3.LoadWarning, match=f"its {attr} is"):
        again, done = rsb3.load(tmp_path / "m.rlarchive", env=model.get_env(), report=True)
    assert getattr(again.replay_buffer, attr) == mine and "replay_buffer" in done.not_restored


# ------------------------------------------------------------------ run states


def _td3(n_envs=1, noise=None):
    model = TD3("MlpPolicy", _pendulum(n_envs), buffer_size=200, batch_size=8, learning_starts=5,
                action_noise=noise or NormalActionNoise(np.zeros(1), 0.2 * np.ones(1)),
                policy_kwargs=dict(net_arch=[8]), seed=0, device="cpu")  # fmt: skip
    model.learn(8)
    return model


def _save_state(model, path, change, monkeypatch):
    state = run_state.capture(model)
    change(state)
    with monkeypatch.context() as m:
        m.setattr(run_state, "capture", lambda _model: state)
        rsb3.save(model, path, training=True)


def _more_envs(s):
    s.update(last_obs=np.zeros((3, 3), np.float32), last_original_obs=None, last_episode_starts=np.zeros(3, bool))


#: name -> (change to the captured run state, words of the refusal), for a TD3 on one Pendulum.
RUN_STATES = {
    "observations-environments": (_more_envs, "environment"),
    "observation-shape": (
        lambda s: s.update(last_obs=np.zeros((1, 5), np.float32), last_original_obs=None),
        "last_obs",
    ),
    "lstm-without-lstm": (
        lambda s: s.update(
            lstm_states={"pi": [np.zeros((1, 1, 4), np.float32)] * 2, "vf": [np.zeros((1, 1, 4), np.float32)] * 2}
        ),
        "recurrent",
    ),
    "noise-shape": (
        lambda s: s["action_noise"].update(mean=np.zeros(2), sigma=np.ones(2)),
        "action noise",
    ),
    "window-maxlen": (lambda s: s["episode_info"].update(maxlen=7), "stats_window_size"),
    "progress-huge": (lambda s: s.update(progress_remaining=10**400), "progress_remaining"),
}


@pytest.mark.parametrize("name", list(RUN_STATES))
def test_a_run_state_that_does_not_fit_the_model_is_refused(name, tmp_path, monkeypatch):
    change, words = RUN_STATES[name]
    model = _td3()
    _save_state(model, tmp_path / "m.rlarchive", change, monkeypatch)
    message = _refused(tmp_path / "m.rlarchive", env=model.get_env(), force_reset=False)
    assert words in message, message


def test_a_vectorized_noise_needs_one_process_per_environment(tmp_path, monkeypatch):
    from stable_baselines3.common.noise import OrnsteinUhlenbeckActionNoise

    model = _td3(2, VectorizedActionNoise(OrnsteinUhlenbeckActionNoise(np.zeros(1), np.ones(1)), 2))
    base = run_state.capture(model)["action_noise"]["noises"][0]
    _save_state(model, tmp_path / "m.rlarchive", lambda s: s["action_noise"]["noises"].append(base), monkeypatch)
    assert "processes" in _refused(tmp_path / "m.rlarchive", env=model.get_env(), force_reset=False)


def test_a_run_state_without_an_environment_is_checked_against_the_model_alone(tmp_path, monkeypatch):
    """Without env (or with force_reset) the observations are not restored, so their environments do not matter."""
    model = _td3()
    _save_state(model, tmp_path / "m.rlarchive", _more_envs, monkeypatch)
    again, done = _load(tmp_path / "m.rlarchive", report=True)
    assert "last_obs" in done.not_restored and again.num_timesteps == model.num_timesteps


def test_on_policy_models_keep_loading(tmp_path):
    """An archive SB3's own objects wrote loads as before (PPO: no replay buffer, no noise)."""
    model = PPO("MlpPolicy", make_vec_env("CartPole-v1", n_envs=2, seed=0), n_steps=16, batch_size=16,
                policy_kwargs=dict(net_arch=[8]), seed=0, device="cpu")  # fmt: skip
    model.learn(32)
    rsb3.save(model, tmp_path / "m.rlarchive", training=True)
    again = _load(tmp_path / "m.rlarchive", env=model.get_env(), force_reset=False)
    again.learn(32, reset_num_timesteps=False)
