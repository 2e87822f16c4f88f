"""vecnormalize.pkl is read without running it, and its statistics equal what VecNormalize.load gives."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import sb_zoo  # noqa: E402

from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.sb3 import vec_normalize as vecnormalize  # noqa: E402

NAMES = [n for n, e in sb_zoo.CATALOGUE.items() if e.vecnormalize is not None]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", NAMES)
def test_statistics_equal_sb3s_bit_for_bit(name, sb3_zoo):
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    m, entry = sb3_zoo[name], sb_zoo.CATALOGUE[name]
    got = vecnormalize.read(m.vecnormalize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = VecNormalize.load(m.vecnormalize, DummyVecEnv([entry.env]))
    assert (got.norm_obs, got.norm_reward, got.training) == (want.norm_obs, want.norm_reward, want.training)
    assert (got.clip_obs, got.clip_reward, got.epsilon, got.gamma) == (
        want.clip_obs,
        want.clip_reward,
        want.epsilon,
        want.gamma,
    )
    pairs = [(got.ret, want.ret_rms)]
    if isinstance(want.obs_rms, dict):
        assert got.obs_keys == want.norm_obs_keys and list(got.obs) == list(want.obs_rms)
        pairs += [(got.obs[k], want.obs_rms[k]) for k in want.obs_rms]
    else:
        pairs.append((got.obs, want.obs_rms))
    for s, w in pairs:
        assert (
            _same(s.mean, np.asarray(w.mean, np.float64))
            and _same(s.var, np.asarray(w.var, np.float64))
            and s.count == w.count
        )
    want.training = False
    for obs in m.observations:
        a, b = got.normalize_obs(obs), want.normalize_obs(obs)
        if isinstance(a, dict):
            assert a.keys() == b.keys() and all(_same(np.asarray(a[k]), np.asarray(b[k])) for k in a)
        else:
            assert _same(a, b)


class _Marker:
    ran: list = []

    def __reduce__(self):
        return (_Marker.ran.append, ("ran",))


def test_other_pickles_are_refused_and_nothing_runs(tmp_path):
    cases = {
        "a dict": pickle.dumps({"obs_rms": None}),
        "a call": pickle.dumps(_Marker()),
        "truncated": pickle.dumps({"a": 1})[:-3],
    }
    for label, raw in cases.items():
        with pytest.raises(RlarchiveError) as e:
            vecnormalize.read(raw)
        assert e.value.code == "IMPORT_INVALID", label
    assert _Marker.ran == []
    with pytest.raises(RlarchiveError) as e:
        vecnormalize.read(tmp_path / "missing.pkl")
    assert e.value.code == "IO_ERROR"
    with pytest.raises(RlarchiveError) as e:
        vecnormalize.read(b"\x80\x04" + b"\x8c\x05numpy\x94" * 3 + b".", budget=16)
    assert e.value.code == "LIMIT_EXCEEDED"


@pytest.mark.parametrize("name", NAMES)
def test_the_wrapper_is_rebuilt_and_written_back(name, sb3_zoo, tmp_path):
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    m, entry = sb3_zoo[name], sb_zoo.CATALOGUE[name]
    stats = vecnormalize.read(m.vecnormalize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = VecNormalize.load(m.vecnormalize, DummyVecEnv([entry.env]))
        want.training = False
        rebuilt = vecnormalize.wrap(stats, DummyVecEnv([entry.env]))
        rebuilt.training = False
        out = tmp_path / "vecnormalize.pkl"
        vecnormalize.write(stats, out, venv=DummyVecEnv([entry.env]))
        loaded = VecNormalize.load(str(out), DummyVecEnv([entry.env]))
        loaded.training = False
        # from the spaces alone (what export-sb3 --vecnormalize-out has)
        env = entry.env()
        bare = tmp_path / "bare.pkl"
        vecnormalize.write(stats, bare, observation_space=env.observation_space, action_space=env.action_space)
        from_spaces = VecNormalize.load(str(bare), DummyVecEnv([entry.env]))
        from_spaces.training = False
    for vn in (rebuilt, loaded, from_spaces):
        for obs in m.observations:
            a, b = vn.normalize_obs(obs), want.normalize_obs(obs)
            if isinstance(a, dict):
                assert all(_same(np.asarray(a[k]), np.asarray(b[k])) for k in a)
            else:
                assert _same(a, b)
    again = vecnormalize.read(out)
    scalars = ("norm_obs", "norm_reward", "clip_obs", "clip_reward", "epsilon", "gamma", "training", "obs_keys")
    assert all(getattr(again, f) == getattr(stats, f) for f in scalars)
    pairs = [(again.ret, stats.ret)]
    pairs += (
        [(again.obs[k], stats.obs[k]) for k in stats.obs] if isinstance(stats.obs, dict) else [(again.obs, stats.obs)]
    )
    for x, y in pairs:
        assert _same(x.mean, y.mean) and _same(x.var, y.var) and x.count == y.count


def _stepped_wrapper():
    """A VecNormalize over two Pendulums after three steps: a running return away from zero in each environment."""
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    vn = VecNormalize(make_vec_env("Pendulum-v1", n_envs=2, seed=0))
    vn.reset()
    for _ in range(3):
        vn.step(np.zeros((2, 1), np.float32))
    assert np.all(vn.returns != 0)
    return vn


def test_sb3s_own_file_has_no_running_return(tmp_path):
    """VecNormalize.save leaves the running return out (its __getstate__ drops it): read gives none."""
    vn = _stepped_wrapper()
    vn.save(str(tmp_path / "vn.pkl"))
    assert vecnormalize.read(tmp_path / "vn.pkl").returns is None
    assert _same(vecnormalize.from_wrapper(vn).returns, vn.returns)  # the live wrapper has it


def test_a_file_that_holds_the_running_return_keeps_it(tmp_path, monkeypatch):
    from stable_baselines3.common.vec_env import VecNormalize

    vn = _stepped_wrapper()
    keep_all = lambda self: {k: v for k, v in self.__dict__.items() if k not in ("venv", "class_attributes")}  # noqa: E731
    monkeypatch.setattr(VecNormalize, "__getstate__", keep_all)
    vn.save(str(tmp_path / "vn.pkl"))
    assert _same(vecnormalize.read(tmp_path / "vn.pkl").returns, vn.returns)
    for bad in (np.array([1.0, np.nan]), np.zeros((2, 1)), np.zeros(0)):
        vn.returns = bad
        vn.save(str(tmp_path / "bad.pkl"))
        with pytest.raises(RlarchiveError) as e:
            vecnormalize.read(tmp_path / "bad.pkl")
        assert e.value.code == "IMPORT_INVALID" and "returns" in e.value.message, bad


def test_wrap_restores_the_running_return_when_the_counts_agree():
    from stable_baselines3.common.env_util import make_vec_env

    stats = vecnormalize.from_wrapper(_stepped_wrapper())
    again = vecnormalize.wrap(stats, make_vec_env("Pendulum-v1", n_envs=2, seed=1))
    assert _same(again.returns, stats.returns) and vecnormalize.returns_note(stats, 2) is None
    one = vecnormalize.wrap(stats, make_vec_env("Pendulum-v1", n_envs=1, seed=1))
    assert one.returns.tolist() == [0.0] and "for 2 environments" in vecnormalize.returns_note(stats, 1)
