"""Going on with training from an archive: the run state and random state of RLA_training (spec/extensions/RLA_training.md).

Each case trains a tiny model for N steps, then either goes on for M more
steps on the same object, or saves it with rlarchive.sb3.save(training=True),
loads it back on the same environment (force_reset=False) and goes on for M
steps there. Parameters, optimizer states, PyTorch variables and (off-policy)
replay buffer contents must be bitwise equal. Everything runs on the CPU.
"""

import copy
import os
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")
sb3_contrib = pytest.importorskip("sb3_contrib")

from sb3_contrib import ARS, QRDQN, TQC, TRPO, CrossQ, MaskablePPO, RecurrentPPO  # noqa: E402
from sb3_contrib.common.envs import InvalidActionEnvDiscrete  # noqa: E402
from stable_baselines3 import A2C, DDPG, DQN, PPO, SAC, TD3  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.envs import BitFlippingEnv, IdentityEnv  # noqa: E402
from stable_baselines3.common.noise import (  # noqa: E402
    NormalActionNoise,
    OrnsteinUhlenbeckActionNoise,
    VectorizedActionNoise,
)
from stable_baselines3.common.save_util import recursive_getattr  # noqa: E402
from stable_baselines3.common.utils import LinearSchedule  # noqa: E402
from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402
from stable_baselines3.her.her_replay_buffer import HerReplayBuffer  # noqa: E402

from rlarchive import open as open_archive  # noqa: E402
from rlarchive import sb3 as rsb3
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.extensions import training as training_state
from rlarchive.sb3 import files as sb3_files  # noqa: E402
from rlarchive.sb3 import run_state  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _flatten(x, path, out):
    if isinstance(x, torch.Tensor):
        out[path] = x.detach().cpu().clone()
    elif isinstance(x, np.ndarray):
        out[path] = x.copy()
    elif isinstance(x, dict):
        for k, v in x.items():
            _flatten(v, f"{path}/{k}", out)
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            _flatten(v, f"{path}/{i}", out)
    else:
        out[path] = x


def snapshot(model):
    """Parameters, optimizer states, PyTorch variables, counters, and the replay buffer's contents, flattened."""
    out = {}
    for name, state in model.get_parameters().items():
        _flatten(state, name, out)
    for name in model._get_torch_save_params()[1]:
        _flatten(recursive_getattr(model, name), name, out)
    _flatten(
        {"num_timesteps": model.num_timesteps, "n_updates": model._n_updates, "episode_num": model._episode_num},
        "run",
        out,
    )
    rb = getattr(model, "replay_buffer", None)
    if rb is not None:
        _flatten(
            {
                k: v
                for k, v in vars(rb).items()
                if isinstance(v, (np.ndarray, int, bool, dict)) and not k.startswith("_")
            },
            "buffer",
            out,
        )
    return out


def _canon(x, key=None):
    """An info dict's content, bitwise: maps by their items in order (a dict and an OrderedDict alike: the archive holds maps), arrays and NumPy scalars by dtype and bytes.

    Monitor's episode record has ``t``, the wall-clock seconds since the
    Monitor started, which differ between two uninterrupted runs as well:
    only its presence is compared.
    """
    if isinstance(x, dict):
        if key == "episode" and "t" in x:
            x = dict(x, t="wall-clock")
        return ("map", tuple((k, _canon(v, k)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_canon(v) for v in x))
    if isinstance(x, (np.ndarray, np.generic)):
        return (type(x).__name__, str(x.dtype), np.shape(x), np.ascontiguousarray(x).tobytes())
    return (type(x).__name__, repr(x))


def _bits(x):
    if isinstance(x, torch.Tensor):
        return (
            str(x.dtype),
            tuple(x.shape),
            x.contiguous().view(-1).view(torch.uint8).numpy().tobytes() if x.numel() else b"",
        )
    if isinstance(x, np.ndarray) and x.dtype == object:  # HER's infos: dicts per transition
        return ("object", x.shape, _canon(x.tolist()))
    if isinstance(x, np.ndarray):
        return (str(x.dtype), x.shape, np.ascontiguousarray(x).tobytes())
    return x


def differences(a, b):
    """Keys whose values are not bitwise equal (NaN payloads included)."""
    return [k for k in sorted(set(a) | set(b), key=str) if k not in a or k not in b or _bits(a[k]) != _bits(b[k])]


def _cartpole(n_envs=1):
    return make_vec_env("CartPole-v1", n_envs=n_envs, seed=0)


def _pendulum():
    return make_vec_env("Pendulum-v1", n_envs=1, seed=0)


def _normalized():
    """Two Pendulums behind VecNormalize: the model keeps the observation before normalisation too (_last_original_obs)."""
    return VecNormalize(make_vec_env("Pendulum-v1", n_envs=2, seed=0))


def _masked(n_envs=1):
    return make_vec_env(lambda: InvalidActionEnvDiscrete(dim=4, n_invalid_actions=2), n_envs=n_envs, seed=0)


def _bits_env(continuous, n_envs=1):
    env = lambda: BitFlippingEnv(n_bits=4, continuous=continuous, max_steps=4)  # noqa: E731
    return lambda: make_vec_env(env, n_envs=n_envs, seed=0)


def _her(copy_info_dict=False, **kwargs):
    her = dict(n_sampled_goal=2, goal_selection_strategy="future", copy_info_dict=copy_info_dict)
    return _off(replay_buffer_class=HerReplayBuffer, replay_buffer_kwargs=her, **kwargs)


def _identity(n_envs=1):
    return make_vec_env(lambda: IdentityEnv(dim=3, ep_length=7), n_envs=n_envs, seed=0)


def _two(make_env):
    """The environment factory with two environments side by side."""
    return lambda: make_env(n_envs=2)


def _off(**kwargs):
    """Small off-policy settings (a new dict each time: SB3 adds entries to policy_kwargs)."""
    return dict(dict(buffer_size=300, batch_size=8, policy_kwargs=dict(net_arch=[8])), **kwargs)


def _noise(kind):
    if kind == "normal":
        return NormalActionNoise(np.zeros(1), 0.2 * np.ones(1))
    if kind == "ou":
        return OrnsteinUhlenbeckActionNoise(np.zeros(1), 0.2 * np.ones(1), initial_noise=np.full(1, 0.05))
    return VectorizedActionNoise(OrnsteinUhlenbeckActionNoise(np.zeros(1), 0.2 * np.ones(1)), 2)


#: name -> (class, policy, env factory, keyword arguments factory, N, M)
ON_POLICY = {
    "PPO": (
        PPO,
        "MlpPolicy",
        _cartpole,
        lambda: dict(
            n_steps=32,
            batch_size=16,
            n_epochs=2,
            learning_rate=LinearSchedule(1e-3, 1e-4, 1.0),
            clip_range=LinearSchedule(0.3, 0.1, 1.0),
            policy_kwargs=dict(net_arch=[8]),
        ),
        64,
        64,
    ),
    "A2C": (
        A2C,
        "MlpPolicy",
        _cartpole,
        lambda: dict(n_steps=5, learning_rate=LinearSchedule(1e-3, 1e-4, 1.0), policy_kwargs=dict(net_arch=[8])),
        20,
        25,
    ),
    "TRPO": (
        TRPO,
        "MlpPolicy",
        _cartpole,
        lambda: dict(n_steps=32, batch_size=16, policy_kwargs=dict(net_arch=[8])),
        64,
        64,
    ),
    "RecurrentPPO": (
        RecurrentPPO,
        "MlpLstmPolicy",
        _cartpole,
        lambda: dict(n_steps=16, batch_size=8, n_epochs=2, policy_kwargs=dict(net_arch=[8], lstm_hidden_size=8)),
        32,
        32,
    ),
    "MaskablePPO": (
        MaskablePPO,
        "MlpPolicy",
        _masked,
        lambda: dict(n_steps=16, batch_size=8, n_epochs=2, policy_kwargs=dict(net_arch=[8])),
        32,
        32,
    ),
    "PPO-gSDE": (
        PPO,
        "MlpPolicy",
        _pendulum,
        lambda: dict(
            use_sde=True, sde_sample_freq=4, n_steps=16, batch_size=16, n_epochs=1, policy_kwargs=dict(net_arch=[8])
        ),
        32,
        32,
    ),
    "PPO-VecNormalize": (
        PPO,
        "MlpPolicy",
        _normalized,
        lambda: dict(n_steps=16, batch_size=16, n_epochs=1, policy_kwargs=dict(net_arch=[8])),
        32,
        32,
    ),
    # two environments: per-environment episode state (RecurrentPPO's LSTM states, the masks, the rollout buffer)
    "A2C-2envs": (
        A2C,
        "MlpPolicy",
        _two(_cartpole),
        lambda: dict(n_steps=5, policy_kwargs=dict(net_arch=[8])),
        20,
        30,
    ),
    "RecurrentPPO-2envs": (
        RecurrentPPO,
        "MlpLstmPolicy",
        _two(_cartpole),
        lambda: dict(n_steps=8, batch_size=8, n_epochs=2, policy_kwargs=dict(net_arch=[8], lstm_hidden_size=8)),
        32,
        32,
    ),
    "MaskablePPO-2envs": (
        MaskablePPO,
        "MlpPolicy",
        _two(_masked),
        lambda: dict(n_steps=8, batch_size=8, n_epochs=2, policy_kwargs=dict(net_arch=[8])),
        32,
        32,
    ),
    "ARS": (
        ARS,
        "LinearPolicy",
        _cartpole,
        lambda: dict(n_delta=2, n_eval_episodes=1, learning_rate=LinearSchedule(0.02, 0.01, 1.0)),
        200,
        200,
    ),
}
OFF_POLICY = {
    # learning_starts above N: the resumed run still draws from the action space's generator
    "DQN": (
        DQN,
        "MlpPolicy",
        _identity,
        lambda: _off(learning_starts=30, exploration_fraction=0.5, target_update_interval=10),
        20,
        40,
    ),
    "QRDQN": (
        QRDQN,
        "MlpPolicy",
        _cartpole,
        lambda: _off(
            learning_starts=20,
            exploration_fraction=0.5,
            target_update_interval=10,
            policy_kwargs=dict(net_arch=[8], n_quantiles=5),
        ),
        40,
        40,
    ),
    "SAC": (
        SAC,
        "MlpPolicy",
        _pendulum,
        lambda: _off(learning_starts=30, learning_rate=LinearSchedule(1e-3, 1e-4, 1.0)),
        20,
        40,
    ),
    "DQN-2envs": (
        DQN,
        "MlpPolicy",
        _two(_identity),
        lambda: _off(learning_starts=20, exploration_fraction=0.5, target_update_interval=10),
        20,
        40,
    ),
    "TD3": (TD3, "MlpPolicy", _pendulum, lambda: _off(learning_starts=20, action_noise=_noise("normal")), 40, 40),
    "DDPG": (DDPG, "MlpPolicy", _pendulum, lambda: _off(learning_starts=20, action_noise=_noise("ou")), 40, 40),
    "TQC": (
        TQC,
        "MlpPolicy",
        _pendulum,
        lambda: _off(learning_starts=20, policy_kwargs=dict(net_arch=[8], n_quantiles=5, n_critics=2)),
        40,
        40,
    ),
    "CrossQ": (CrossQ, "MlpPolicy", _pendulum, lambda: _off(learning_starts=20), 40, 40),
    "SAC-gSDE": (
        SAC,
        "MlpPolicy",
        _pendulum,
        lambda: _off(learning_starts=10, use_sde=True, sde_sample_freq=3),
        20,
        20,
    ),
    "TQC-gSDE": (
        TQC,
        "MlpPolicy",
        _pendulum,
        lambda: _off(
            learning_starts=10, use_sde=True, sde_sample_freq=3, policy_kwargs=dict(net_arch=[8], n_quantiles=5)
        ),
        20,
        20,
    ),
    "SAC-VecNormalize": (SAC, "MlpPolicy", _normalized, lambda: _off(learning_starts=10), 20, 20),
    "HER-DQN": (DQN, "MultiInputPolicy", _bits_env(False), lambda: _her(learning_starts=10), 20, 20),
    "HER-SAC": (SAC, "MultiInputPolicy", _bits_env(True), lambda: _her(learning_starts=10), 20, 20),
    "HER-SAC-2envs": (SAC, "MultiInputPolicy", _bits_env(True, n_envs=2), lambda: _her(learning_starts=10), 20, 20),
    # the info dicts (terminal observations, Monitor's episode records) travel in the archive too
    "HER-SAC-infos": (
        SAC,
        "MultiInputPolicy",
        _bits_env(True),
        lambda: _her(copy_info_dict=True, learning_starts=10),
        20,
        20,
    ),
}


def _build(case):
    cls, policy, make_env, kwargs, n, m = case
    env = make_env()
    return cls(policy, env, seed=0, device="cpu", **kwargs()), env


def uninterrupted(case):
    model, _ = _build(case)
    model.learn(case[4])
    model.learn(case[5], reset_num_timesteps=False)
    return snapshot(model)


def resumed(case, tmp_path, training=True, carry_buffer=False, **load_kwargs):
    """The run saved after N steps and loaded back; ``training=None`` saves as a user would: ``save(model, path, replay_buffer=True)``."""
    model, env = _build(case)
    model.learn(case[4])
    path = tmp_path / "model.rlarchive"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        if training is None:
            rsb3.save(model, path, replay_buffer=True)
        else:
            rsb3.save(model, path, training=training)
        buffer = copy.deepcopy(getattr(model, "replay_buffer", None)) if carry_buffer else None
        again = rsb3.load(path, env=env, force_reset=False, **load_kwargs)
    if carry_buffer:
        if isinstance(buffer, HerReplayBuffer):  # its copy leaves the environment out
            buffer.set_env(again.get_env())
        again.replay_buffer = buffer
    again.learn(case[5], reset_num_timesteps=False)
    return snapshot(again)


@pytest.mark.parametrize("name", list(ON_POLICY))
def test_on_policy_resume_is_bitwise(name, tmp_path):
    case = ON_POLICY[name]
    assert differences(uninterrupted(case), resumed(case, tmp_path)) == []


@pytest.mark.parametrize("name", list(OFF_POLICY))
def test_off_policy_resume_is_bitwise(name, tmp_path):
    """save(model, path, replay_buffer=True), load(path, env, force_reset=False), learn: the run and the buffer go on bitwise."""
    case = OFF_POLICY[name]
    assert differences(uninterrupted(case), resumed(case, tmp_path, training=None)) == []


@pytest.mark.parametrize("name", list(OFF_POLICY))
def test_off_policy_run_state_is_bitwise(name, tmp_path):
    """The run and random state alone: the replay buffer is carried over in memory (its archive form is not this test's)."""
    case = OFF_POLICY[name]
    assert differences(uninterrupted(case), resumed(case, tmp_path, carry_buffer=True)) == []


@pytest.mark.parametrize("name", [*ON_POLICY, *OFF_POLICY])
def test_resume_through_the_switch_is_bitwise(name, tmp_path):
    """A script that saves with model.save (and save_replay_buffer) and goes on after Class.load(force_reset=False)
    (and load_replay_buffer), unchanged but for rlarchive.sb3.use_archives(), trains on bit for bit as without the save."""
    case = {**ON_POLICY, **OFF_POLICY}[name]
    model, env = _build(case)
    model.learn(case[4])
    off_policy = getattr(model, "replay_buffer", None) is not None
    with rsb3.use_archives(), warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        model.save(tmp_path / "model")
        if off_policy:
            model.save_replay_buffer(tmp_path / "buffer")
        again = type(model).load(tmp_path / "model", env=env, force_reset=False)
        if off_policy:
            again.load_replay_buffer(tmp_path / "buffer", truncate_last_traj=False)
    assert sb3_files.is_archive(tmp_path / "model.zip")
    again.learn(case[5], reset_num_timesteps=False)
    assert differences(uninterrupted(case), snapshot(again)) == []


@pytest.mark.parametrize("name", ["PPO", "ARS"])
def test_without_the_run_state_the_runs_differ(name, tmp_path):
    """The comparison sees the difference the extension makes."""
    case = ON_POLICY[name]
    assert differences(uninterrupted(case), resumed(case, tmp_path, training=False)) != []


def test_sb3_own_save_and_load_differ(tmp_path):
    """SB3's own path (save + save_replay_buffer, load + load_replay_buffer) does not go on bitwise: it reseeds the generators."""
    case = OFF_POLICY["SAC"]
    expected = uninterrupted(case)
    model, env = _build(case)
    model.learn(case[4])
    model.save(tmp_path / "sb3.zip")
    model.save_replay_buffer(tmp_path / "buffer.pkl")
    again = case[0].load(tmp_path / "sb3.zip", env=env, force_reset=False, device="cpu")
    again.load_replay_buffer(tmp_path / "buffer.pkl")
    again.learn(case[5], reset_num_timesteps=False)
    got = snapshot(again)
    assert differences(expected, got) != []
    assert differences(expected, resumed(case, tmp_path, training=None)) == []


def test_vectorized_noise_round_trip(tmp_path):
    """A VectorizedActionNoise of Ornstein-Uhlenbeck processes comes back with each process's state."""
    case = (
        TD3,
        "MlpPolicy",
        lambda: make_vec_env("Pendulum-v1", n_envs=2, seed=0),
        lambda: _off(learning_starts=10, action_noise=_noise("vectorized")),
        20,
        20,
    )
    assert differences(uninterrupted(case), resumed(case, tmp_path, training=None)) == []
    model, _ = _build(case)
    model.learn(10)
    model.action_noise()  # moves every process away from its reset state
    rsb3.save(model, tmp_path / "m.rlarchive", training=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        again = rsb3.load(tmp_path / "m.rlarchive", env=model.get_env(), force_reset=False)
    assert isinstance(again.action_noise, VectorizedActionNoise)
    for a, b in zip(model.action_noise.noises, again.action_noise.noises):
        assert np.array_equal(a.noise_prev, b.noise_prev) and a._theta == b._theta


def test_force_reset_keeps_sb3_behaviour(tmp_path):
    """With force_reset (the default) the counters and generators are restored, the last observation is not."""
    model, env = _build(ON_POLICY["PPO"])
    model.learn(32)
    rsb3.save(model, tmp_path / "m.rlarchive", training=True)
    expected = torch.get_rng_state()
    torch.manual_seed(123)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        again = rsb3.load(tmp_path / "m.rlarchive", env=env)
    assert again._last_obs is None and again.num_timesteps == model.num_timesteps == 32
    assert torch.equal(torch.get_rng_state(), expected)


def test_space_generators_restored_into_loaded_spaces(tmp_path):
    """Without an environment the stored generator states go into the loaded model's own spaces."""
    model, _ = _build(OFF_POLICY["SAC"])
    model.learn(5)
    rsb3.save(model, tmp_path / "m.rlarchive", training=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        again = rsb3.load(tmp_path / "m.rlarchive")
    assert again.action_space is not model.action_space
    assert np.array_equal(again.action_space.sample(), model.action_space.sample())
    assert again.action_space.np_random.bit_generator.state == model.action_space.np_random.bit_generator.state


def test_cuda_states_without_cuda_warn(tmp_path, monkeypatch):
    """Recorded CUDA generator states on a machine without (as many) CUDA devices: a LoadWarning, the rest restored."""
    model, _ = _build(ON_POLICY["A2C"])
    model.learn(5)
    state = run_state.capture(model)
    state["random"]["torch_cuda"] = [np.zeros(16, np.uint8)]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    torch.manual_seed(7)
    with pytest.warns(rsb3.LoadWarning, match="CUDA"):
        run_state.restore(model, state)
    assert np.array_equal(torch.get_rng_state().numpy(), state["random"]["torch"])


def test_archive_holds_the_extension(tmp_path):
    model, _ = _build(ON_POLICY["RecurrentPPO"])
    model.learn(16)
    rsb3.save(model, tmp_path / "m.rlarchive", training=True)
    rsb3.save(model, tmp_path / "plain.rlarchive")
    with open_archive(tmp_path / "m.rlarchive") as ar:
        assert training_state.EXTENSION in ar.extensions_used
        state = training_state.read(ar)
        ar.check_extensions()
    assert state["counters"]["num_timesteps"] == 16 and state["lstm_states"]["pi"][0].shape == (1, 1, 8)
    assert np.array_equal(state["random"]["numpy"]["key"], np.random.get_state()[1])
    with open_archive(tmp_path / "plain.rlarchive") as ar:
        assert training_state.EXTENSION not in ar.extensions_used and training_state.read(ar) is None
    # replay_buffer=True stores the run state unless training=False says otherwise
    rsb3.save(model, tmp_path / "rb.rlarchive", replay_buffer=True)
    rsb3.save(model, tmp_path / "rb-only.rlarchive", replay_buffer=True, training=False)
    with open_archive(tmp_path / "rb.rlarchive") as a, open_archive(tmp_path / "rb-only.rlarchive") as b:
        assert training_state.EXTENSION in a.extensions_used and training_state.EXTENSION not in b.extensions_used


def test_unsupported_noise_is_refused(tmp_path):
    class Noise(NormalActionNoise):
        pass

    model, _ = _build(
        (
            TD3,
            "MlpPolicy",
            _pendulum,
            lambda: _off(learning_starts=5, action_noise=Noise(np.zeros(1), np.ones(1))),
            5,
            5,
        )
    )
    with pytest.raises(RlarchiveError) as e:
        rsb3.save(model, tmp_path / "m.rlarchive", training=True)
    assert e.value.code == "VALUE_UNSUPPORTED" and not os.path.exists(tmp_path / "m.rlarchive")


def test_her_infos_come_back(tmp_path):
    """copy_info_dict=True: the loaded buffer holds the info dicts SB3 kept, terminal observations and episode records included."""
    model, env = _build(OFF_POLICY["HER-SAC-infos"])
    model.learn(20)
    report = rsb3.save(model, tmp_path / "m.rlarchive", replay_buffer=True)
    assert any(n.startswith("replay buffer stored") and "with the info dicts" in n for n in report.notes), report.notes
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.LoadWarning)
        again, done = rsb3.load(tmp_path / "m.rlarchive", env=env, force_reset=False, report=True)
    mine, theirs = model.replay_buffer.infos, again.replay_buffer.infos
    assert again.replay_buffer.copy_info_dict and mine.shape == theirs.shape
    assert any("terminal_observation" in i for i in mine.ravel()), (
        "the run ended no episode: the test would see no info"
    )
    assert _bits(mine) == _bits(theirs)
    assert "replay_buffer" in done.restored and "with the info dicts" in done.details["replay_buffer"]


def test_restore_report(tmp_path):
    """load(..., report=True) names what it restored and what it did not, and why; the model is SB3's own."""
    case = OFF_POLICY["TD3"]
    model, env = _build(case)
    model.learn(case[4])
    rsb3.save(model, tmp_path / "full.rlarchive", replay_buffer=True)
    rsb3.save(model, tmp_path / "plain.rlarchive")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        again, full = rsb3.load(tmp_path / "full.rlarchive", env=env, force_reset=False, report=True)
        reset, forced = rsb3.load(tmp_path / "full.rlarchive", env=env, report=True)
        plain, bare = rsb3.load(tmp_path / "plain.rlarchive", env=env, report=True)
        only = rsb3.load(tmp_path / "plain.rlarchive", env=env)
    assert (
        type(again) is TD3
        and type(only) is TD3
        and not any(isinstance(v, rsb3.RestoreReport) for v in vars(again).values())
    )
    expected = ["parameters", "optimizers", "replay_buffer", "run_state", "last_obs", "action_noise"]
    expected += [f"random_state.{k}" for k in ("action_space", "observation_space", "numpy", "python", "torch")]
    assert full.restored == expected and full.not_restored == {}
    assert f"{model.replay_buffer.pos} transitions" in full.details["replay_buffer"]
    assert "last_obs" not in forced.restored and "force_reset" in forced.not_restored["last_obs"]
    assert bare.restored == ["parameters", "optimizers"]
    assert set(bare.not_restored) == {
        "replay_buffer",
        "run_state",
        "random_state",
        "data.action_noise",
    }  # the noise: an opaque pickle in data
    assert "restored replay_buffer: ReplayBuffer" in str(
        full
    ) and "not restored run_state: the archive holds none" in str(bare)
    assert full.to_dict()["restored"] == expected
