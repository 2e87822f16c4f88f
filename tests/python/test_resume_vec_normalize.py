"""Going on with training behind a VecNormalize given back from the archive (spec RLA_vec_normalize §4.1).

Each case trains a tiny model behind ``VecNormalize(norm_reward=True)`` for
N steps, then either goes on for M more steps on the same objects, or saves
the model with its wrapper, builds the wrapper again from the archive around
the same inner environment (``load_vec_normalize``), loads the model onto it
(``force_reset=False``) and goes on for M steps. The running discounted
return (``VecNormalize.returns``) feeds the return statistics, which scale
every reward the model learns from: the parameters, optimizer states, buffer
and the wrapper's statistics and running return must be bitwise equal.
"""

import dataclasses
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO, SAC  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402
from test_resume import _off, differences, snapshot  # noqa: E402

from rlarchive import open as open_archive  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.sb3 import vec_normalize as vecnormalize  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


# algorithm, its arguments, N, M, what save stores besides the wrapper
CASES = {
    "PPO": (
        PPO,
        lambda: dict(n_steps=16, batch_size=16, n_epochs=1, policy_kwargs=dict(net_arch=[8])),
        32,
        32,
        dict(training=True),
    ),
    "SAC": (SAC, lambda: _off(learning_starts=10), 20, 20, dict(replay_buffer=True)),
}


def _build(case):
    cls, kwargs, *_ = case
    env = VecNormalize(make_vec_env("Pendulum-v1", n_envs=2, seed=0), norm_reward=True)
    return cls("MlpPolicy", env, seed=0, device="cpu", **kwargs()), env


def _state(model, wrapper):
    """The model's snapshot, and the wrapper's statistics and running return."""
    out = snapshot(model)
    for name in ("obs_rms", "ret_rms"):
        r = getattr(wrapper, name)
        out.update({f"wrapper/{name}/mean": r.mean, f"wrapper/{name}/var": r.var, f"wrapper/{name}/count": r.count})
    out["wrapper/returns"] = wrapper.returns
    return out


def _uninterrupted(case):
    model, env = _build(case)
    model.learn(case[2])
    model.learn(case[3], reset_num_timesteps=False)
    return _state(model, env)


def _saved(case, path, keep_returns=True):
    """The model trained N steps and saved with its wrapper; its wrapper (whose inner environment goes on)."""
    model, env = _build(case)
    model.learn(case[2])
    assert np.any(env.returns != 0)  # episodes in progress: the running return is not SB3's reset value
    stats = vecnormalize.from_wrapper(env)
    if not keep_returns:  # as an archive written before RLA_vec_normalize had returns
        stats = dataclasses.replace(stats, returns=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        rsb3.save(model, path, vec_normalize=stats, **case[4])
    return env


def _go_on(case, path, venv):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        wrapper = rsb3.load_vec_normalize(path, venv)
        again = rsb3.load(path, env=wrapper, force_reset=False)
    again.learn(case[3], reset_num_timesteps=False)
    return _state(again, wrapper)


@pytest.mark.parametrize("name", list(CASES))
def test_resume_with_the_wrapper_from_the_archive_is_bitwise(name, tmp_path):
    case = CASES[name]
    path = tmp_path / "model.rlarchive"
    env = _saved(case, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.LoadWarning)  # the running return is restored: nothing to say
        wrapper = rsb3.load_vec_normalize(path, env.venv)
    assert wrapper.returns.tobytes() == env.returns.tobytes()
    assert differences(_uninterrupted(case), _go_on(case, path, env.venv)) == []


@pytest.mark.parametrize("name", list(CASES))
def test_without_the_running_return_the_runs_differ_and_load_says_so(name, tmp_path):
    """The comparison sees the running return: an archive without it gives the wrapper SB3's reset value, with a warning."""
    case = CASES[name]
    path = tmp_path / "model.rlarchive"
    env = _saved(case, path, keep_returns=False)
    with open_archive(path) as ar:
        assert ar.vec_normalize().returns is None
    with pytest.warns(rsb3.LoadWarning, match="no running return"):
        wrapper = rsb3.load_vec_normalize(path, env.venv)
    assert wrapper.returns.tolist() == [0.0, 0.0]
    got = _go_on(case, path, env.venv)
    assert "wrapper/ret_rms/var" in differences(_uninterrupted(case), got)


def test_another_number_of_environments_starts_at_zero(tmp_path):
    path = tmp_path / "model.rlarchive"
    _saved(CASES["PPO"], path)
    with pytest.warns(rsb3.LoadWarning, match="for 2 environments and the VecEnv has 1"):
        wrapper = rsb3.load_vec_normalize(path, make_vec_env("Pendulum-v1", n_envs=1, seed=0))
    assert wrapper.returns.tolist() == [0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.LoadWarning)  # evaluation does not use it
        evaluation = rsb3.load_vec_normalize(path, make_vec_env("Pendulum-v1", n_envs=1, seed=0), training=False)
    assert not evaluation.training
