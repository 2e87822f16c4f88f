"""The model zoo of sb_zoo.py: every entry builds, and SB3 loads its own zip back with the same predictions."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("stable_baselines3")

import sb_zoo  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize  # noqa: E402

from rlarchive.sb3 import algorithms  # noqa: E402

NAMES = list(sb_zoo.CATALOGUE)


def test_catalogue_covers_every_algorithm_and_feature():
    entries = sb_zoo.CATALOGUE.values()
    assert 35 <= len(sb_zoo.CATALOGUE) <= 45
    assert {e.algorithm for e in entries} == set(algorithms.ALGORITHMS)
    features = {f for e in entries for f in e.features}
    wanted = {
        sb_zoo.GSDE,
        sb_zoo.DICT_OBS,
        sb_zoo.IMAGE,
        sb_zoo.CHANNEL_FIRST,
        sb_zoo.CHANNEL_LAST,
        sb_zoo.NO_IMAGE_NORMALIZATION,
        sb_zoo.FLOAT64_OBS,
        sb_zoo.DISCRETE_START,
        sb_zoo.MULTIDISCRETE_START,
        sb_zoo.MULTIBINARY_ACTION,
        sb_zoo.MULTIDISCRETE_ACTION,
        sb_zoo.NET_ARCH_LIST,
        sb_zoo.NET_ARCH_DICT,
        sb_zoo.UNSHARED_EXTRACTOR,
        sb_zoo.LAMBDA_SCHEDULE,
        sb_zoo.LINEAR_SCHEDULE,
        sb_zoo.ACTION_NOISE,
        sb_zoo.USER_CLASS,
        sb_zoo.VEC_NORMALIZE,
        sb_zoo.HER,
        sb_zoo.ACTION_MASKS,
        sb_zoo.RECURRENT,
    } | {sb_zoo.activation(a) for a in ("Tanh", "ReLU", "ELU", "LeakyReLU", "SiLU", "GELU")}
    assert wanted <= features, wanted - features
    for algo in ("SAC", "DQN"):
        assert any(sb_zoo.HER in e.features and e.algorithm == algo for e in entries), algo
    for algo in ("PPO", "SAC"):
        assert any(sb_zoo.GSDE in e.features and e.algorithm == algo for e in entries), algo
    dict_vn = [e for e in entries if e.vecnormalize and "norm_obs_keys" in e.vecnormalize]
    box_vn = [e for e in entries if e.vecnormalize and "norm_obs_keys" not in e.vecnormalize]
    assert dict_vn and box_vn
    for name, e in sb_zoo.CATALOGUE.items():
        assert e.description and "\n" not in e.description, name
        assert (sb_zoo.VEC_NORMALIZE in e.features) == (e.vecnormalize is not None), name


def test_sample_observations_are_reproducible():
    for name in ("ppo_dict_obs_image", "ppo_multidiscrete_start", "dqn_her_bitflip"):
        entry = sb_zoo.CATALOGUE[name]
        a = sb_zoo.sample_observations(entry.env())
        b = sb_zoo.sample_observations(entry.env())
        assert len(a) == sb_zoo.N_SAMPLES
        for x, y in zip(a, b):
            if isinstance(x, dict):
                assert list(x) == list(y) and all(np.array_equal(x[k], y[k]) for k in x)
            else:
                assert np.array_equal(x, y)


def _assert_same_actions(expected, got):
    assert len(expected) == len(got)
    for a, b in zip(expected, got):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("name", NAMES)
def test_model_builds_and_sb3_loads_it_back(name, sb3_zoo):
    m = sb3_zoo[name]
    entry = sb_zoo.CATALOGUE[name]
    assert m.algorithm == entry.algorithm and m.features == entry.features
    assert os.path.isfile(m.path) and m.path.endswith(".zip")
    assert (m.vecnormalize is not None) == (entry.vecnormalize is not None)
    assert len(m.observations) == len(m.actions) == sb_zoo.N_SAMPLES
    probe = entry.env()
    for obs in m.observations:
        assert probe.observation_space.contains(obs)
    assert (m.action_masks is not None) == (sb_zoo.ACTION_MASKS in entry.features)
    assert (m.episode_starts is not None) == (sb_zoo.RECURRENT in entry.features)
    if m.episode_starts is not None:
        assert m.episode_starts[0] is True and len(m.episode_starts) == len(m.observations)
    if m.action_masks is not None:
        assert all(mask.dtype == bool and mask.any() for mask in m.action_masks)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        venv = DummyVecEnv([entry.env])  # HerReplayBuffer models need one to load; SB3 checks the spaces
        normalizer = None
        if m.vecnormalize is not None:
            normalizer = venv = VecNormalize.load(m.vecnormalize, venv)
            normalizer.training = False
            assert normalizer.norm_obs == entry.vecnormalize["norm_obs"]
            assert normalizer.norm_reward == entry.vecnormalize["norm_reward"]
        model = entry.algo.load(m.path, env=venv, device="cpu")
        got = sb_zoo.predict_actions(
            model, m.observations, vecnormalize=normalizer, action_masks=m.action_masks, episode_starts=m.episode_starts
        )
    assert type(model) is entry.algo
    _assert_same_actions(m.actions, got)


def test_vecnormalize_changes_the_actions(sb3_zoo):
    """The recorded actions of a VecNormalize entry are those of normalised observations, not raw ones."""
    m = sb3_zoo["ppo_vecnormalize_box"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = m.entry.algo.load(m.path, device="cpu")
        raw = sb_zoo.predict_actions(model, m.observations)
    assert any(not np.array_equal(a, b) for a, b in zip(m.actions, raw))


def test_recurrent_state_is_carried(sb3_zoo):
    """Recurrent entries: predicting every observation as an episode start changes some action."""
    m = sb3_zoo["recurrent_ppo_pendulum"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = m.entry.algo.load(m.path, device="cpu")
        fresh = sb_zoo.predict_actions(model, m.observations, episode_starts=[True] * len(m.observations))
    assert not all(m.episode_starts)
    assert any(not np.array_equal(a, b) for a, b in zip(m.actions, fresh))


def test_action_masks_are_respected(sb3_zoo):
    for name in sb3_zoo.names(feature=sb_zoo.ACTION_MASKS):
        m = sb3_zoo[name]
        space = m.entry.env().action_space
        sizes = [int(space.n)] if hasattr(space, "n") else [int(n) for n in space.nvec]
        for action, mask in zip(m.actions, m.action_masks):
            offsets = np.cumsum([0] + sizes[:-1])
            for part, off in zip(np.atleast_1d(action), offsets):
                assert mask[off + int(part)], (name, action, mask)
