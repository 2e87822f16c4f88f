"""Test cases of the extension RLA_policy: Stable-Baselines3 policies of every kind, with the actions SB3 computes.

Each model is built by Stable-Baselines3 or sb3-contrib (never trained),
its weights replaced by values drawn with NumPy's generator from a fixed seed
(so the archive's bytes do not depend on torch's initialisation), saved with
``rlarchive.sb3.save`` (which writes the portable policy), and given sample
observations drawn with NumPy. The expected actions are those of SB3's own
``model.predict(obs, deterministic=True)``, one observation after the other
(carrying a recurrent state, with action masks). Each model gives two cases:
the archive's dump, and a ``predict`` request judged on actions (Annex A).

Building needs torch, stable-baselines3 and sb3-contrib (``make vectors``);
nothing here is imported by readers.
"""

from __future__ import annotations

import functools
import os
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from cases import CASES, Case, case

from rlarchive.values import dump_value

POLICY = "RLA_policy"
VN = "RLA_vec_normalize"
SEED = 20261123
N_OBS = 5


@dataclass
class Built:
    archive: bytes
    predict: dict  # observations, episode_starts?, action_masks?, actions: JSON-ready values


def _env(observation_space: Any, action_space: Any) -> Any:
    """A gymnasium environment with these spaces (SB3 needs one to build a model; it never steps here)."""
    import gymnasium

    class Spaces(gymnasium.Env):
        def __init__(self) -> None:
            self.observation_space = observation_space
            self.action_space = action_space

        def reset(self, *, seed=None, options=None):
            return observation_space.sample(), {}

        def step(self, action):
            return observation_space.sample(), 0.0, False, False, {}

    return Spaces()


def _fill(model: Any, rng: np.random.Generator) -> None:
    """Every floating-point parameter and buffer drawn from ``rng`` (variances positive)."""
    import torch

    with torch.no_grad():
        for module in (model.policy,):
            for name, t in module.state_dict(keep_vars=True).items():
                if not t.is_floating_point():
                    continue
                shape = tuple(t.shape)
                if name.endswith(("running_var", "ra_var")):
                    values = rng.uniform(0.5, 1.5, size=shape)
                else:
                    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else max(shape[0] if shape else 1, 1)
                    values = rng.normal(0.0, 1.0 / np.sqrt(fan_in), size=shape)
                t.copy_(torch.from_numpy(values.astype(np.float32)))


def _sample(space: Any, rng: np.random.Generator) -> Any:
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return {k: _sample(s, rng) for k, s in space.spaces.items()}
    if isinstance(space, spaces.Box):
        if space.dtype == np.uint8:
            return rng.integers(0, 256, size=space.shape).astype(np.uint8)
        low = np.where(np.isfinite(space.low), space.low, -3.0)
        high = np.where(np.isfinite(space.high), space.high, 3.0)
        return rng.uniform(low, high).astype(space.dtype)
    if isinstance(space, spaces.Discrete):
        return np.asarray(rng.integers(0, space.n), dtype=np.int64)
    if isinstance(space, spaces.MultiDiscrete):
        return rng.integers(0, space.nvec).astype(np.int64)
    if isinstance(space, spaces.MultiBinary):
        return rng.integers(0, 2, size=space.shape).astype(np.int8)
    raise TypeError(space)


def _mask(space: Any, rng: np.random.Generator) -> np.ndarray:
    from gymnasium import spaces

    if isinstance(space, spaces.MultiBinary):  # MaskablePPO: a mask over {0, 1} for each binary action
        m = rng.random((int(np.prod(space.shape)), 2)) < 0.6
        m[np.arange(len(m)), rng.integers(0, 2, len(m))] = True
        return m.reshape(-1)
    n = int(space.n) if hasattr(space, "n") else int(np.sum(space.nvec))
    m = rng.random(n) < 0.6
    m[rng.integers(0, n)] = True
    return m


def _build(
    make: Callable[[Any], Any],
    obs_space: Any,
    act_space: Any,
    *,
    masks: bool = False,
    recurrent: bool = False,
    vec_normalize: bool = False,
    weights: dict | None = None,
    observations: list | None = None,
) -> Built:
    """A model with drawn weights (``weights`` then sets some by name), SB3's actions for drawn (or the given) observations."""
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv

    from rlarchive import sb3
    from rlarchive.extensions.vec_normalize import Statistics, Stats
    from rlarchive.sb3 import vec_normalize as vecnormalize

    torch.manual_seed(0)
    rng = np.random.default_rng(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        venv = DummyVecEnv([lambda: _env(obs_space, act_space)])
        model = make(venv)
    _fill(model, rng)
    if weights:
        with torch.no_grad():
            params = model.policy.state_dict(keep_vars=True)
            for name, values in weights.items():
                params[name].copy_(torch.from_numpy(np.asarray(values, np.float32)))
    stats = None
    if vec_normalize:
        shape = obs_space.shape
        stats = Statistics(
            norm_obs=True,
            norm_reward=True,
            clip_obs=5.0,
            clip_reward=10.0,
            epsilon=1e-8,
            gamma=0.99,
            training=False,
            obs=Stats(rng.normal(size=shape), rng.uniform(0.2, 3.0, size=shape), 321.0),
            obs_keys=None,
            ret=Stats(np.asarray(rng.normal()), np.asarray(rng.uniform(0.5, 2.0)), 321.0),
        )
    if observations is None:
        observations = [_sample(obs_space, rng) for _ in range(N_OBS)]
    starts = [True] + [bool(x) for x in rng.random(N_OBS - 1) < 0.4] if recurrent else None
    action_masks = [_mask(act_space, rng) for _ in range(N_OBS)] if masks else None
    normalizer = vecnormalize.wrap(stats, venv) if stats is not None else None
    actions, state = [], None
    for i, obs in enumerate(observations):
        kw: dict = {}
        if action_masks is not None:
            kw["action_masks"] = action_masks[i]
        if starts is not None:
            kw["state"], kw["episode_start"] = state, np.array([starts[i]])
        seen = normalizer.normalize_obs(obs) if normalizer is not None else obs
        action, state = model.predict(seen, deterministic=True, **kw)
        actions.append(np.asarray(action))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.rlarchive")
        report = sb3.save(model, path, vec_normalize=stats, provenance=False)  # no dependence on the installed versions
        if report.policy != "written":
            raise RuntimeError(f"no portable policy: {report.policy}")
        with open(path, "rb") as f:
            raw = f.read()
    predict: dict = {"observations": [dump_value(o) for o in observations]}
    if starts is not None:
        predict["episode_starts"] = starts
    if action_masks is not None:
        predict["action_masks"] = [dump_value(m) for m in action_masks]
    predict["actions"] = [dump_value(a) for a in actions]
    return Built(raw, predict)


def _models() -> dict:
    """id -> (description, spec sections, a function building it)."""
    import torch.nn as nn
    from gymnasium import spaces
    from sb3_contrib import QRDQN, TQC, CrossQ, MaskablePPO, RecurrentPPO
    from stable_baselines3 import A2C, DDPG, DQN, PPO, SAC, TD3

    box3 = spaces.Box(-1.0, 1.0, (3,), np.float32)
    act_box = spaces.Box(np.array([-2.0, 0.0], np.float32), np.array([2.0, 1.0], np.float32))
    small = dict(net_arch=[8, 8])
    return {
        "ppo-mlp-discrete": (
            "PPO, MlpPolicy (Tanh), Box observations, Discrete actions: linear, tanh, argmax.",
            ["RLA_policy §5", "RLA_policy §6"],
            lambda: _build(
                lambda env: PPO("MlpPolicy", env, policy_kwargs=small, seed=0, device="cpu"),
                spaces.Box(-np.inf, np.inf, (4,), np.float32),
                spaces.Discrete(3),
            ),
        ),
        "ppo-discrete-obs-box-action": (
            "PPO with ReLU, a Discrete observation (one-hot) and a Box action clipped to its bounds.",
            ["RLA_policy §4", "RLA_policy §6"],
            lambda: _build(
                lambda env: PPO(
                    "MlpPolicy", env, policy_kwargs=dict(net_arch=[8], activation_fn=nn.ReLU), seed=0, device="cpu"
                ),
                spaces.Discrete(5),
                act_box,
            ),
        ),
        "a2c-multidiscrete-obs-multibinary-action": (
            "A2C with ELU, MultiDiscrete observations (one-hot per component) and MultiBinary actions (bernoulli).",
            ["RLA_policy §4", "RLA_policy §6"],
            lambda: _build(
                lambda env: A2C(
                    "MlpPolicy", env, policy_kwargs=dict(net_arch=[8], activation_fn=nn.ELU), seed=0, device="cpu"
                ),
                spaces.MultiDiscrete([3, 4]),
                spaces.MultiBinary(3),
            ),
        ),
        "ppo-multibinary-obs-multidiscrete-action-gelu": (
            "PPO with GELU, MultiBinary observations and MultiDiscrete actions (multi_argmax).",
            ["RLA_policy §5", "RLA_policy §6"],
            lambda: _build(
                lambda env: PPO(
                    "MlpPolicy", env, policy_kwargs=dict(net_arch=[8], activation_fn=nn.GELU), seed=0, device="cpu"
                ),
                spaces.MultiBinary(5),
                spaces.MultiDiscrete([3, 2]),
            ),
        ),
        "sac-silu": (
            "SAC with SiLU: the actor's mean squashed by tanh and rescaled to the action bounds.",
            ["RLA_policy §6"],
            lambda: _build(
                lambda env: SAC(
                    "MlpPolicy",
                    env,
                    policy_kwargs=dict(net_arch=[8], activation_fn=nn.SiLU),
                    learning_starts=0,
                    buffer_size=10,
                    seed=0,
                    device="cpu",
                ),
                box3,
                act_box,
            ),
        ),
        "td3-softplus": (
            "TD3 with Softplus: the actor ends with tanh and is rescaled to the action bounds.",
            ["RLA_policy §5", "RLA_policy §6"],
            lambda: _build(
                lambda env: TD3(
                    "MlpPolicy",
                    env,
                    policy_kwargs=dict(net_arch=[8], activation_fn=nn.Softplus),
                    buffer_size=10,
                    seed=0,
                    device="cpu",
                ),
                box3,
                act_box,
            ),
        ),
        "ddpg-leaky-relu": (
            "DDPG with LeakyReLU.",
            ["RLA_policy §5"],
            lambda: _build(
                lambda env: DDPG(
                    "MlpPolicy",
                    env,
                    policy_kwargs=dict(net_arch=[8], activation_fn=nn.LeakyReLU),
                    buffer_size=10,
                    seed=0,
                    device="cpu",
                ),
                box3,
                act_box,
            ),
        ),
        "dqn-nature-cnn": (
            "DQN with NatureCNN on a channel-first uint8 image: divided by 255, conv2d with strides, flatten, linear, argmax.",
            ["RLA_policy §4", "RLA_policy §5"],
            lambda: _build(
                lambda env: DQN(
                    "CnnPolicy",
                    env,
                    policy_kwargs=dict(features_extractor_kwargs=dict(features_dim=16), net_arch=[8]),
                    buffer_size=10,
                    seed=0,
                    device="cpu",
                ),
                spaces.Box(0, 255, (1, 36, 36), np.uint8),
                spaces.Discrete(4),
            ),
        ),
        "qrdqn-quantiles": (
            "QR-DQN: the mean over quantiles, then argmax.",
            ["RLA_policy §6"],
            lambda: _build(
                lambda env: QRDQN(
                    "MlpPolicy",
                    env,
                    policy_kwargs=dict(net_arch=[8], n_quantiles=5),
                    buffer_size=10,
                    seed=0,
                    device="cpu",
                ),
                box3,
                spaces.Discrete(3),
            ),
        ),
        "recurrent-ppo-two-layer-lstm": (
            "RecurrentPPO with a 2-layer LSTM: the state is carried across observations and reset at episode starts.",
            ["RLA_policy §5"],
            lambda: _build(
                lambda env: RecurrentPPO(
                    "MlpLstmPolicy",
                    env,
                    policy_kwargs=dict(net_arch=[8], lstm_hidden_size=6, n_lstm_layers=2),
                    n_steps=8,
                    batch_size=8,
                    seed=0,
                    device="cpu",
                ),
                box3,
                spaces.Discrete(3),
                recurrent=True,
            ),
        ),
        "maskable-ppo-masks": (
            "MaskablePPO with action masks: masked-out actions are never chosen.",
            ["RLA_policy §6"],
            lambda: _build(
                lambda env: MaskablePPO("MlpPolicy", env, policy_kwargs=small, seed=0, device="cpu"),
                box3,
                spaces.Discrete(6),
                masks=True,
            ),
        ),
        "maskable-ppo-multibinary": (
            "MaskablePPO with MultiBinary actions: two masked logits per binary action, the larger one's index (int64), as MaskablePPO computes.",
            ["RLA_policy §6"],
            lambda: _build(
                lambda env: MaskablePPO("MlpPolicy", env, policy_kwargs=small, seed=0, device="cpu"),
                box3,
                spaces.MultiBinary(3),
                masks=True,
            ),
        ),
        "crossq-batch-renorm": (
            "CrossQ: batch renormalisation in evaluation mode (running statistics).",
            ["RLA_policy §5"],
            lambda: _build(
                lambda env: CrossQ(
                    "MlpPolicy", env, policy_kwargs=dict(net_arch=[8]), buffer_size=10, seed=0, device="cpu"
                ),
                box3,
                act_box,
            ),
        ),
        "tqc-hardtanh": (
            "TQC with Hardtanh activations.",
            ["RLA_policy §5"],
            lambda: _build(
                lambda env: TQC(
                    "MlpPolicy",
                    env,
                    policy_kwargs=dict(net_arch=[8], activation_fn=nn.Hardtanh),
                    buffer_size=10,
                    seed=0,
                    device="cpu",
                ),
                box3,
                act_box,
            ),
        ),
        "ppo-dict-observation": (
            "PPO MultiInputPolicy on a Dict observation (a Box and a Discrete key): one extractor per key, concatenated in key order.",
            ["RLA_policy §4", "RLA_policy §5"],
            lambda: _build(
                lambda env: PPO(
                    "MultiInputPolicy",
                    env,
                    policy_kwargs=dict(net_arch=[8], activation_fn=nn.Sigmoid),
                    seed=0,
                    device="cpu",
                ),
                spaces.Dict({"pos": box3, "mode": spaces.Discrete(3)}),
                spaces.Discrete(2),
            ),
        ),
        "dqn-nan-logits": (
            "DQN whose single linear layer turns the observations +inf, NaN and -inf into Q-values with NaN beside ±inf: argmax takes the first NaN as the largest value, as torch does.",
            ["RLA_policy §6"],
            lambda: _build(
                lambda env: DQN("MlpPolicy", env, policy_kwargs=dict(net_arch=[]), seed=0, device="cpu"),
                spaces.Box(-np.inf, np.inf, (1,), np.float32),
                spaces.Discrete(4),
                weights={
                    "q_net.q_net.0.weight": [[-1.0], [0.0], [1.0], [0.0]],
                    "q_net.q_net.0.bias": [0.0, 0.0, 0.0, 0.0],
                },
                observations=[np.array([v], np.float32) for v in (np.inf, -np.inf, np.nan, 2.0, 0.0)],
            ),
        ),
        "ppo-vec-normalize": (
            "PPO behind VecNormalize: the policy takes raw observations and normalises them with the archive's RLA_vec_normalize statistics.",
            ["RLA_policy §4", "RLA_vec_normalize §4"],
            lambda: _build(
                lambda env: PPO("MlpPolicy", env, policy_kwargs=small, seed=0, device="cpu"),
                spaces.Box(-10.0, 10.0, (3,), np.float32),
                spaces.Discrete(2),
                vec_normalize=True,
            ),
        ),
    }


@functools.cache
def built(model_id: str) -> Built:
    return _models()[model_id][2]()


def _register() -> None:
    try:
        ids = list(_models())
    except ImportError:  # torch or SB3 missing: these cases cannot be built here
        return
    for model_id in ids:
        desc, sections, _ = _models()[model_id]
        exts = [POLICY, VN] if "vec-normalize" in model_id else [POLICY]
        cid = f"policy-{model_id}"
        case(cid, desc + " The archive's dump.", sections + ["RLA_policy §3"], extensions=exts)(
            lambda m=model_id: built(m).archive
        )
        CASES.append(
            Case(
                f"{cid}-predict",
                desc + " Actions for sample observations, as SB3 computes them.",
                sections + ["RLA_policy §7"],
                "actions",
                lambda m=model_id: built(m).archive,
                extensions=exts,
                predict=lambda m=model_id: built(m).predict,
                file_id=cid,
            )
        )


_register()
