"""A zoo of tiny trained Stable-Baselines3 and sb3-contrib models for the tests.

:data:`CATALOGUE` maps a model name to a :class:`ZooEntry` (algorithm class,
policy, environment factory, keyword arguments, training steps, feature tags
and a one-line description). :func:`build` trains one entry for a few steps on
the CPU, saves it with ``model.save`` (and its ``VecNormalize`` statistics with
``vec_env.save`` when the entry uses them), and records sample observations
drawn with a fixed seed together with the deterministic actions that SB3's own
``model.predict`` gives for them. :class:`Zoo` builds each entry once into a
folder and caches it; the ``sb3_zoo`` fixture of ``conftest.py`` is a
:class:`Zoo` living for the whole test run.

Every environment is written here (plus gymnasium's CartPole-v1 and
Pendulum-v1); nothing is downloaded. Networks are a few units wide and
training takes a few dozen steps, so building every entry takes seconds.
"""

from __future__ import annotations

import copy
import functools
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import sb3_contrib
import stable_baselines3 as sb3
import torch
from gymnasium import spaces
from stable_baselines3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise
from stable_baselines3.common.sb2_compat.rmsprop_tf_like import RMSpropTFLike
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.utils import LinearSchedule, get_linear_fn
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize
from stable_baselines3.her.her_replay_buffer import HerReplayBuffer

#: Seed of every model (and so of its environment).
SEED = 1
#: Seed of the sample observations, action masks and episode starts.
SAMPLE_SEED = 1234
#: Number of sample observations per model.
N_SAMPLES = 5

# Feature tags of the catalogue entries.
GSDE = "gsde"  # generalized state-dependent exploration (use_sde=True)
DICT_OBS = "dict_obs"  # Dict observations (MultiInputPolicy)
IMAGE = "image"  # an image observation (NatureCNN), alone or under a Dict key
CHANNEL_FIRST = "channel_first"
CHANNEL_LAST = "channel_last"
NO_IMAGE_NORMALIZATION = "normalize_images_false"
FLOAT64_OBS = "float64_obs"
DISCRETE_START = "discrete_start"  # a Discrete space with a non-zero start
MULTIDISCRETE_START = "multidiscrete_start"  # a MultiDiscrete space with a non-zero start
MULTIBINARY_ACTION = "multibinary_action"
MULTIDISCRETE_ACTION = "multidiscrete_action"
BOX_ACTION = "box_action"
NET_ARCH_LIST = "net_arch_list"
NET_ARCH_DICT = "net_arch_dict"  # separate pi/vf or pi/qf layers
UNSHARED_EXTRACTOR = "share_features_extractor_false"
SHARED_EXTRACTOR = "share_features_extractor_true"
LAMBDA_SCHEDULE = "lambda_schedule"  # a lambda learning rate: pickled by value, kept opaque
LINEAR_SCHEDULE = "linear_schedule"  # LinearSchedule objects
LINEAR_FN_CLOSURE = "linear_fn_closure"  # get_linear_fn's closure (the SB3 1.x schedule form)
ACTION_NOISE = "action_noise"
USER_CLASS = "user_class"  # the architecture depends on a user class defined in this module
VEC_NORMALIZE = "vecnormalize"  # VecNormalize statistics saved beside the model
HER = "her"  # HerReplayBuffer on a goal environment
ACTION_MASKS = "action_masks"  # MaskablePPO: predictions take action masks
RECURRENT = "recurrent"  # RecurrentPPO: predictions carry LSTM states and episode starts
FIXED_ENT_COEF = "fixed_ent_coef"
SHARED_LSTM = "shared_lstm"
OPTIMIZER_CLASS = "optimizer_class"  # policy_kwargs names an optimizer class other than Adam


def activation(name: str) -> str:
    """The feature tag of an activation function class, e.g. ``activation:ReLU``."""
    return f"activation:{name}"


# ---------------------------------------------------------------------------
# Environments
# ---------------------------------------------------------------------------


def _fresh_space(space: spaces.Space, seed: int) -> spaces.Space:
    out = copy.deepcopy(space)
    out.seed(seed)
    return out


class SampledEnv(gym.Env):
    """Observations are seeded samples of a space; the reward depends on the action.

    ``sample_space`` (default: the observation space) is the space the
    observations are drawn from. Stable-Baselines3 one-hot encodes Discrete
    and MultiDiscrete observations ignoring ``start``, so for such spaces with
    a non-zero start the zoo draws from the part it can encode (values below
    ``n``), which still lies inside the observation space.
    """

    metadata: dict = {"render_modes": []}

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        episode_length: int = 8,
        sample_space: spaces.Space | None = None,
    ):
        self.observation_space = observation_space
        self.action_space = action_space
        self.sample_space = sample_space if sample_space is not None else observation_space
        self.episode_length = episode_length
        self._source = _fresh_space(self.sample_space, 0)
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._source = _fresh_space(self.sample_space, seed)
        self._t = 0
        return self._source.sample(), {}

    def step(self, action: Any):
        self._t += 1
        reward = float(np.tanh(np.sum(np.asarray(action, dtype=np.float64))))
        return self._source.sample(), reward, self._t >= self.episode_length, False, {}


class MaskedEnv(SampledEnv):
    """A :class:`SampledEnv` with a Discrete or MultiDiscrete action space and seeded action masks."""

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        out = super().reset(seed=seed, options=options)
        self._mask_rng = np.random.default_rng(seed if seed is not None else 0)
        return out

    def action_masks(self) -> np.ndarray:
        """The valid actions now: one flag per action (per sub-action for MultiDiscrete)."""
        if not hasattr(self, "_mask_rng"):
            self._mask_rng = np.random.default_rng(0)
        return random_action_mask(self.action_space, self._mask_rng)


def random_action_mask(action_space: spaces.Space, rng: np.random.Generator) -> np.ndarray:
    """A random action mask for a Discrete or MultiDiscrete space with at least one valid choice per part."""
    sizes = [int(action_space.n)] if isinstance(action_space, spaces.Discrete) else [int(n) for n in action_space.nvec]
    parts = []
    for n in sizes:
        part = rng.random(n) < 0.6
        part[rng.integers(n)] = True
        parts.append(part)
    return np.concatenate(parts)


class BitFlipGoalEnv(gym.Env):
    """A goal environment for HER: flip bits until they equal the goal.

    Observations are a Dict of ``observation``, ``achieved_goal`` and
    ``desired_goal`` (float 0/1 vectors). With ``continuous=False`` the action
    is the index of the bit to flip (Discrete); with ``continuous=True`` it is
    a Box vector and every bit whose component is positive flips.
    """

    metadata: dict = {"render_modes": []}

    def __init__(self, n_bits: int = 4, continuous: bool = False, max_steps: int = 4):
        self.n_bits = n_bits
        self.continuous = continuous
        self.max_steps = max_steps
        bits = spaces.Box(0.0, 1.0, (n_bits,), np.float32)
        self.observation_space = spaces.Dict({"observation": bits, "achieved_goal": bits, "desired_goal": bits})
        self.action_space = spaces.Box(-1.0, 1.0, (n_bits,), np.float32) if continuous else spaces.Discrete(n_bits)
        self._state = np.zeros(n_bits, np.float32)
        self._goal = np.zeros(n_bits, np.float32)
        self._t = 0

    def _obs(self) -> dict:
        return {
            "observation": self._state.copy(),
            "achieved_goal": self._state.copy(),
            "desired_goal": self._goal.copy(),
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._state = self.np_random.integers(0, 2, self.n_bits).astype(np.float32)
        self._goal = self.np_random.integers(0, 2, self.n_bits).astype(np.float32)
        self._t = 0
        return self._obs(), {}

    def compute_reward(self, achieved_goal: np.ndarray, desired_goal: np.ndarray, info: Any) -> np.ndarray:
        """-1 while the goal is not reached, 0 once it is (vectorised over leading axes)."""
        return -(np.abs(np.asarray(achieved_goal) - np.asarray(desired_goal)).sum(axis=-1) > 0).astype(np.float32)

    def step(self, action: Any):
        self._t += 1
        if self.continuous:
            flip = np.asarray(action) > 0
        else:
            flip = np.zeros(self.n_bits, bool)
            flip[int(action)] = True
        self._state = np.where(flip, 1.0 - self._state, self._state).astype(np.float32)
        obs = self._obs()
        reward = float(self.compute_reward(obs["achieved_goal"], obs["desired_goal"], None))
        done = reward == 0.0
        return obs, reward, done, self._t >= self.max_steps, {"is_success": done}


class TinyExtractor(BaseFeaturesExtractor):
    """A user-defined features extractor: flatten, one linear layer, Tanh."""

    def __init__(self, observation_space: spaces.Box, features_dim: int = 6):
        super().__init__(observation_space, features_dim)
        self.net = torch.nn.Sequential(
            torch.nn.Flatten(), torch.nn.Linear(int(np.prod(observation_space.shape)), features_dim), torch.nn.Tanh()
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.net(observations)


def _box(shape: Sequence[int], low: float = -1.0, high: float = 1.0, dtype: Any = np.float32) -> spaces.Box:
    return spaces.Box(low, high, tuple(shape), dtype)


def _image(shape: Sequence[int]) -> spaces.Box:
    return spaces.Box(0, 255, tuple(shape), np.uint8)


def _sampled(obs: spaces.Space, act: spaces.Space, **kw: Any) -> Callable[[], gym.Env]:
    return functools.partial(SampledEnv, obs, act, **kw)


def _linear_fn(start: float, end: float, end_fraction: float) -> Callable[[float], float]:
    """SB3's ``get_linear_fn`` closure (deprecated in SB3 2.x, still what 1.x models hold), without its warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return get_linear_fn(start, end, end_fraction)


def _gym(env_id: str) -> Callable[[], gym.Env]:
    return functools.partial(gym.make, env_id)


# ---------------------------------------------------------------------------
# The catalogue
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ZooEntry:
    """One model of the zoo, as data."""

    algo: type  # the SB3 / sb3-contrib algorithm class
    policy: str  # the policy alias passed to the algorithm
    env: Callable[[], gym.Env]  # builds one environment
    kwargs: Mapping[str, Any]  # algorithm keyword arguments (deep-copied for each build)
    steps: int  # total_timesteps passed to learn
    features: tuple  # feature tags (module constants above)
    description: str  # one line
    vecnormalize: Mapping[str, Any] | None = None  # VecNormalize keyword arguments, when used

    @property
    def algorithm(self) -> str:
        """The algorithm's class name (``"PPO"``, ``"MaskablePPO"``, ...)."""
        return self.algo.__name__


_PPO = dict(n_steps=16, batch_size=16, n_epochs=1)
_A2C = dict(n_steps=8)
_TRPO = dict(n_steps=16, batch_size=16, cg_max_steps=3, n_critic_updates=1, line_search_max_iter=3)
_OFF = dict(buffer_size=64, learning_starts=8, batch_size=8, train_freq=4)
_DQN = dict(_OFF, target_update_interval=8)
_HER = dict(
    replay_buffer_class=HerReplayBuffer, replay_buffer_kwargs=dict(n_sampled_goal=2, goal_selection_strategy="future")
)
_ARS = dict(n_delta=2, n_top=1)
_CNN8 = dict(features_extractor_kwargs=dict(features_dim=8))


def _policy(**kw: Any) -> dict:
    return {"policy_kwargs": kw}


_DICT_IMAGE_OBS = spaces.Dict(
    {"img": _image((36, 36, 1)), "vec": _box((3,)), "flag": spaces.Discrete(3), "bits": spaces.MultiBinary(2)}
)
_DICT_OBS = spaces.Dict({"vec": _box((3,), -2.0, 2.0), "pos": _box((2,)), "flag": spaces.Discrete(3)})


CATALOGUE: dict[str, ZooEntry] = {
    # --- A2C ---
    "a2c_cartpole": ZooEntry(
        sb3.A2C,
        "MlpPolicy",
        _gym("CartPole-v1"),
        dict(_A2C, **_policy(net_arch=[8])),
        16,
        (NET_ARCH_LIST,),
        "A2C on CartPole-v1, one hidden layer of 8 units",
    ),
    "a2c_multibinary_action_tanh": ZooEntry(
        sb3.A2C,
        "MlpPolicy",
        _sampled(_box((3,)), spaces.MultiBinary(3)),
        dict(_A2C, **_policy(net_arch=[8], activation_fn=torch.nn.Tanh)),
        16,
        (MULTIBINARY_ACTION, activation("Tanh")),
        "A2C with MultiBinary actions and Tanh activations",
    ),
    "a2c_pendulum_dict_arch_elu_linear_fn": ZooEntry(
        sb3.A2C,
        "MlpPolicy",
        _gym("Pendulum-v1"),
        dict(
            _A2C,
            learning_rate=_linear_fn(7e-4, 1e-4, 0.5),
            **_policy(net_arch=dict(pi=[8], vf=[8, 4]), activation_fn=torch.nn.ELU),
        ),
        16,
        (BOX_ACTION, NET_ARCH_DICT, activation("ELU"), LINEAR_FN_CLOSURE),
        "A2C on Pendulum-v1, separate pi/vf layers, ELU, learning rate from get_linear_fn (a closure)",
    ),
    "a2c_rmsprop_tf_like": ZooEntry(
        sb3.A2C,
        "MlpPolicy",
        _gym("CartPole-v1"),
        dict(
            _A2C,
            **_policy(
                net_arch=[8], optimizer_class=RMSpropTFLike, optimizer_kwargs=dict(alpha=0.99, eps=1e-5, weight_decay=0)
            ),
        ),
        16,
        (NET_ARCH_LIST, OPTIMIZER_CLASS),
        "A2C with SB3's RMSpropTFLike optimizer, as RL Zoo's Atari A2C",
    ),
    # --- PPO ---
    "ppo_cartpole": ZooEntry(
        sb3.PPO,
        "MlpPolicy",
        _gym("CartPole-v1"),
        dict(_PPO, **_policy(net_arch=[8])),
        32,
        (NET_ARCH_LIST,),
        "PPO on CartPole-v1, one hidden layer of 8 units",
    ),
    "ppo_lambda_lr_relu_dict_arch": ZooEntry(
        sb3.PPO,
        "MlpPolicy",
        _gym("CartPole-v1"),
        dict(
            _PPO,
            learning_rate=lambda progress: 3e-4 * progress,
            **_policy(net_arch=dict(pi=[8, 8], vf=[8]), activation_fn=torch.nn.ReLU),
        ),
        32,
        (LAMBDA_SCHEDULE, NET_ARCH_DICT, activation("ReLU")),
        "PPO with a lambda learning rate, pi [8, 8] / vf [8] and ReLU",
    ),
    "ppo_linear_schedules": ZooEntry(
        sb3.PPO,
        "MlpPolicy",
        _gym("CartPole-v1"),
        dict(
            _PPO,
            learning_rate=LinearSchedule(3e-4, 1e-5, 1.0),
            clip_range=LinearSchedule(0.3, 0.1, 0.5),
            clip_range_vf=0.2,
            **_policy(net_arch=[8]),
        ),
        32,
        (LINEAR_SCHEDULE, NET_ARCH_LIST),
        "PPO with LinearSchedule learning rate and clip range, and a value clip range",
    ),
    "ppo_gsde_silu": ZooEntry(
        sb3.PPO,
        "MlpPolicy",
        _sampled(_box((3,)), _box((2,))),
        dict(
            _PPO,
            use_sde=True,
            sde_sample_freq=4,
            **_policy(net_arch=[8], activation_fn=torch.nn.SiLU, log_std_init=-1.0),
        ),
        32,
        (GSDE, BOX_ACTION, activation("SiLU")),
        "PPO with gSDE on Box actions and SiLU",
    ),
    "ppo_prelu_box": ZooEntry(
        sb3.PPO,
        "MlpPolicy",
        _sampled(_box((3,), -3.0, 3.0), _box((2,))),
        dict(_PPO, **_policy(net_arch=dict(pi=[8, 8], vf=[8]), activation_fn=torch.nn.PReLU)),
        32,
        (BOX_ACTION, NET_ARCH_DICT, activation("PReLU")),
        "PPO on Box actions with PReLU activations (learned slopes)",
    ),
    "ppo_discrete_start": ZooEntry(
        sb3.PPO,
        "MlpPolicy",
        _sampled(spaces.Discrete(5, start=2), spaces.Discrete(3, start=-1), sample_space=spaces.Discrete(3, start=2)),
        dict(_PPO, **_policy(net_arch=[8])),
        32,
        (DISCRETE_START,),
        "PPO with Discrete observations (start 2) and Discrete actions (start -1)",
    ),
    "ppo_multidiscrete_start": ZooEntry(
        sb3.PPO,
        "MlpPolicy",
        _sampled(
            spaces.MultiDiscrete([4, 5], start=[1, 2]),
            spaces.MultiDiscrete([3, 2], start=[-1, 5]),
            sample_space=spaces.MultiDiscrete([3, 3], start=[1, 2]),
        ),
        dict(_PPO, **_policy(net_arch=[8])),
        32,
        (MULTIDISCRETE_START, MULTIDISCRETE_ACTION),
        "PPO with MultiDiscrete observations and actions, both with non-zero starts",
    ),
    "ppo_multibinary_obs": ZooEntry(
        sb3.PPO,
        "MlpPolicy",
        _sampled(spaces.MultiBinary(6), spaces.MultiDiscrete([3, 2])),
        dict(_PPO, **_policy(net_arch=[8])),
        32,
        (MULTIDISCRETE_ACTION,),
        "PPO with MultiBinary observations and MultiDiscrete actions",
    ),
    "ppo_float64_obs_gelu": ZooEntry(
        sb3.PPO,
        "MlpPolicy",
        _sampled(_box((4,), dtype=np.float64), spaces.Discrete(2)),
        dict(_PPO, **_policy(net_arch=[8], activation_fn=torch.nn.GELU)),
        32,
        (FLOAT64_OBS, activation("GELU")),
        "PPO with float64 Box observations and GELU",
    ),
    "ppo_dict_obs_image": ZooEntry(
        sb3.PPO,
        "MultiInputPolicy",
        _sampled(_DICT_IMAGE_OBS, spaces.Discrete(3)),
        dict(_PPO, **_policy(net_arch=[8], features_extractor_kwargs=dict(cnn_output_dim=8))),
        16,
        (DICT_OBS, IMAGE, CHANNEL_LAST),
        "PPO with Dict observations: a 36x36x1 image, a Box, a Discrete and a MultiBinary key",
    ),
    "ppo_cnn_channel_last": ZooEntry(
        sb3.PPO,
        "CnnPolicy",
        _sampled(_image((36, 36, 3)), spaces.Discrete(3)),
        dict(_PPO, **_policy(net_arch=[8], **_CNN8)),
        16,
        (IMAGE, CHANNEL_LAST),
        "PPO CnnPolicy on 36x36x3 uint8 images (channel-last, transposed by SB3)",
    ),
    "ppo_cnn_channel_first_unshared": ZooEntry(
        sb3.PPO,
        "CnnPolicy",
        _sampled(_image((1, 36, 36)), _box((2,))),
        dict(_PPO, **_policy(net_arch=[8], share_features_extractor=False, **_CNN8)),
        16,
        (IMAGE, CHANNEL_FIRST, UNSHARED_EXTRACTOR, BOX_ACTION),
        "PPO CnnPolicy on 1x36x36 uint8 images with separate actor and critic extractors, Box actions",
    ),
    "ppo_cnn_float_no_image_normalization": ZooEntry(
        sb3.PPO,
        "CnnPolicy",
        _sampled(_box((3, 36, 36), 0.0, 1.0), spaces.Discrete(2)),
        dict(_PPO, **_policy(net_arch=[8], normalize_images=False, **_CNN8)),
        16,
        (IMAGE, CHANNEL_FIRST, NO_IMAGE_NORMALIZATION),
        "PPO CnnPolicy on float32 images in [0, 1] with normalize_images=False",
    ),
    "ppo_user_extractor": ZooEntry(
        sb3.PPO,
        "MlpPolicy",
        _sampled(_box((2, 3)), spaces.Discrete(2)),
        dict(
            _PPO,
            **_policy(
                net_arch=[8], features_extractor_class=TinyExtractor, features_extractor_kwargs=dict(features_dim=6)
            ),
        ),
        32,
        (USER_CLASS,),
        "PPO whose features extractor is a user class (sb_zoo.TinyExtractor)",
    ),
    "ppo_vecnormalize_box": ZooEntry(
        sb3.PPO,
        "MlpPolicy",
        _gym("Pendulum-v1"),
        dict(_PPO, **_policy(net_arch=[8])),
        32,
        (VEC_NORMALIZE, BOX_ACTION),
        "PPO on Pendulum-v1 behind VecNormalize (observations and rewards)",
        vecnormalize=dict(norm_obs=True, norm_reward=True, clip_obs=5.0),
    ),
    # --- DQN ---
    "dqn_cartpole": ZooEntry(
        sb3.DQN,
        "MlpPolicy",
        _gym("CartPole-v1"),
        dict(_DQN, **_policy(net_arch=[8])),
        32,
        (NET_ARCH_LIST,),
        "DQN on CartPole-v1, one hidden layer of 8 units",
    ),
    "dqn_cnn_channel_first": ZooEntry(
        sb3.DQN,
        "CnnPolicy",
        _sampled(_image((1, 36, 36)), spaces.Discrete(3)),
        dict(_DQN, **_policy(net_arch=[8], **_CNN8)),
        16,
        (IMAGE, CHANNEL_FIRST),
        "DQN CnnPolicy on 1x36x36 uint8 images",
    ),
    "dqn_dict_obs_leaky_relu": ZooEntry(
        sb3.DQN,
        "MultiInputPolicy",
        _sampled(_DICT_OBS, spaces.Discrete(3)),
        dict(_DQN, **_policy(net_arch=[8, 8], activation_fn=torch.nn.LeakyReLU)),
        32,
        (DICT_OBS, activation("LeakyReLU"), NET_ARCH_LIST),
        "DQN with Dict observations and LeakyReLU",
    ),
    "dqn_her_bitflip": ZooEntry(
        sb3.DQN,
        "MultiInputPolicy",
        functools.partial(BitFlipGoalEnv, 4, False),
        dict(_DQN, **_HER, **_policy(net_arch=[8])),
        24,
        (HER, DICT_OBS),
        "DQN with HerReplayBuffer on a 4-bit flipping goal environment",
    ),
    # --- SAC ---
    "sac_pendulum": ZooEntry(
        sb3.SAC,
        "MlpPolicy",
        _gym("Pendulum-v1"),
        dict(_OFF, **_policy(net_arch=[8])),
        24,
        (BOX_ACTION, NET_ARCH_LIST),
        "SAC on Pendulum-v1 with a learned entropy coefficient",
    ),
    "sac_gsde": ZooEntry(
        sb3.SAC,
        "MlpPolicy",
        _gym("Pendulum-v1"),
        dict(_OFF, use_sde=True, **_policy(net_arch=[8])),
        24,
        (BOX_ACTION, GSDE),
        "SAC with gSDE on Pendulum-v1",
    ),
    "sac_dict_qf_arch_fixed_ent_coef": ZooEntry(
        sb3.SAC,
        "MultiInputPolicy",
        _sampled(spaces.Dict({"a": _box((2,)), "b": spaces.MultiDiscrete([2, 3])}), _box((2,))),
        dict(_OFF, ent_coef=0.1, **_policy(net_arch=dict(pi=[8], qf=[8, 4]))),
        24,
        (DICT_OBS, NET_ARCH_DICT, FIXED_ENT_COEF, BOX_ACTION),
        "SAC with Dict observations, pi [8] / qf [8, 4] and a fixed entropy coefficient",
    ),
    "sac_cnn_channel_last_shared": ZooEntry(
        sb3.SAC,
        "CnnPolicy",
        _sampled(_image((36, 36, 3)), _box((2,))),
        dict(_OFF, **_policy(net_arch=[8], share_features_extractor=True, **_CNN8)),
        16,
        (IMAGE, CHANNEL_LAST, SHARED_EXTRACTOR, BOX_ACTION),
        "SAC CnnPolicy on 36x36x3 uint8 images with one shared extractor",
    ),
    "sac_her_bitflip_continuous": ZooEntry(
        sb3.SAC,
        "MultiInputPolicy",
        functools.partial(BitFlipGoalEnv, 4, True),
        dict(_OFF, **_HER, **_policy(net_arch=[8])),
        24,
        (HER, DICT_OBS, BOX_ACTION),
        "SAC with HerReplayBuffer on the bit flipping goal environment with Box actions",
    ),
    "sac_vecnormalize_dict": ZooEntry(
        sb3.SAC,
        "MultiInputPolicy",
        _sampled(_DICT_OBS, _box((2,))),
        dict(_OFF, **_policy(net_arch=[8])),
        24,
        (VEC_NORMALIZE, DICT_OBS, BOX_ACTION),
        "SAC with Dict observations behind VecNormalize normalising only the 'vec' key",
        vecnormalize=dict(norm_obs=True, norm_reward=True, norm_obs_keys=["vec"]),
    ),
    # --- TD3 ---
    "td3_action_noise_qf_arch": ZooEntry(
        sb3.TD3,
        "MlpPolicy",
        _gym("Pendulum-v1"),
        dict(
            _OFF,
            action_noise=NormalActionNoise(np.zeros(1), 0.1 * np.ones(1)),
            **_policy(net_arch=dict(pi=[8], qf=[8])),
        ),
        24,
        (ACTION_NOISE, NET_ARCH_DICT, BOX_ACTION),
        "TD3 on Pendulum-v1 with Gaussian action noise and pi [8] / qf [8]",
    ),
    "td3_float64_obs_ou_noise": ZooEntry(
        sb3.TD3,
        "MlpPolicy",
        _sampled(_box((3,), dtype=np.float64), _box((2,))),
        dict(_OFF, action_noise=OrnsteinUhlenbeckActionNoise(np.zeros(2), 0.2 * np.ones(2)), **_policy(net_arch=[8])),
        24,
        (ACTION_NOISE, FLOAT64_OBS, BOX_ACTION),
        "TD3 with float64 observations and Ornstein-Uhlenbeck action noise",
    ),
    # --- DDPG ---
    "ddpg_pendulum": ZooEntry(
        sb3.DDPG,
        "MlpPolicy",
        _gym("Pendulum-v1"),
        dict(_OFF, **_policy(net_arch=[8])),
        24,
        (BOX_ACTION, NET_ARCH_LIST),
        "DDPG on Pendulum-v1",
    ),
    # --- ARS (sb3-contrib) ---
    "ars_linear_box": ZooEntry(
        sb3_contrib.ARS,
        "LinearPolicy",
        _sampled(_box((3,)), _box((2,))),
        dict(_ARS),
        64,
        (BOX_ACTION,),
        "ARS with the linear policy on Box actions",
    ),
    "ars_mlp_discrete": ZooEntry(
        sb3_contrib.ARS,
        "MlpPolicy",
        _sampled(_box((4,)), spaces.Discrete(3)),
        dict(_ARS, zero_policy=False, **_policy(net_arch=[8])),
        64,
        (NET_ARCH_LIST,),
        "ARS with an MLP policy on Discrete actions",
    ),
    # --- CrossQ (sb3-contrib) ---
    "crossq_pendulum": ZooEntry(
        sb3_contrib.CrossQ,
        "MlpPolicy",
        _gym("Pendulum-v1"),
        dict(_OFF, **_policy(net_arch=dict(pi=[8], qf=[8]))),
        24,
        (BOX_ACTION, NET_ARCH_DICT),
        "CrossQ on Pendulum-v1 (batch-renormalised critics, no target network)",
    ),
    # --- MaskablePPO (sb3-contrib) ---
    "maskable_ppo_discrete": ZooEntry(
        sb3_contrib.MaskablePPO,
        "MlpPolicy",
        functools.partial(MaskedEnv, _box((3,)), spaces.Discrete(4)),
        dict(_PPO, **_policy(net_arch=[8])),
        32,
        (ACTION_MASKS,),
        "MaskablePPO with Discrete actions and random action masks",
    ),
    "maskable_ppo_multidiscrete_dict": ZooEntry(
        sb3_contrib.MaskablePPO,
        "MultiInputPolicy",
        functools.partial(MaskedEnv, _DICT_OBS, spaces.MultiDiscrete([3, 2])),
        dict(_PPO, **_policy(net_arch=[8])),
        32,
        (ACTION_MASKS, DICT_OBS, MULTIDISCRETE_ACTION),
        "MaskablePPO with Dict observations and MultiDiscrete actions",
    ),
    # --- QRDQN (sb3-contrib) ---
    "qrdqn_cartpole": ZooEntry(
        sb3_contrib.QRDQN,
        "MlpPolicy",
        _gym("CartPole-v1"),
        dict(_DQN, **_policy(net_arch=[8], n_quantiles=5)),
        32,
        (NET_ARCH_LIST,),
        "QR-DQN on CartPole-v1 with 5 quantiles",
    ),
    # --- RecurrentPPO (sb3-contrib) ---
    "recurrent_ppo_pendulum": ZooEntry(
        sb3_contrib.RecurrentPPO,
        "MlpLstmPolicy",
        _gym("Pendulum-v1"),
        dict(_PPO, **_policy(net_arch=[8], lstm_hidden_size=8)),
        32,
        (RECURRENT, BOX_ACTION),
        "RecurrentPPO with separate actor and critic LSTMs of 8 units on Pendulum-v1",
    ),
    "recurrent_ppo_dict_shared_lstm": ZooEntry(
        sb3_contrib.RecurrentPPO,
        "MultiInputLstmPolicy",
        _sampled(_DICT_OBS, spaces.Discrete(3)),
        dict(_PPO, **_policy(net_arch=[8], lstm_hidden_size=8, shared_lstm=True, enable_critic_lstm=False)),
        32,
        (RECURRENT, DICT_OBS, SHARED_LSTM),
        "RecurrentPPO with Dict observations and one LSTM shared by actor and critic",
    ),
    # --- TQC (sb3-contrib) ---
    "tqc_pendulum": ZooEntry(
        sb3_contrib.TQC,
        "MlpPolicy",
        _gym("Pendulum-v1"),
        dict(_OFF, top_quantiles_to_drop_per_net=1, **_policy(net_arch=[8], n_quantiles=5, n_critics=2)),
        24,
        (BOX_ACTION,),
        "TQC on Pendulum-v1 with 2 critics of 5 quantiles",
    ),
    # --- TRPO (sb3-contrib) ---
    "trpo_cartpole": ZooEntry(
        sb3_contrib.TRPO,
        "MlpPolicy",
        _gym("CartPole-v1"),
        dict(_TRPO, **_policy(net_arch=[8])),
        32,
        (NET_ARCH_LIST,),
        "TRPO on CartPole-v1",
    ),
    "trpo_gsde_linear_lr": ZooEntry(
        sb3_contrib.TRPO,
        "MlpPolicy",
        _sampled(_box((3,)), _box((2,))),
        dict(
            _TRPO, use_sde=True, learning_rate=LinearSchedule(1e-3, 1e-4, 1.0), **_policy(net_arch=dict(pi=[8], vf=[8]))
        ),
        32,
        (GSDE, LINEAR_SCHEDULE, BOX_ACTION, NET_ARCH_DICT),
        "TRPO with gSDE, a LinearSchedule learning rate and pi/vf layers",
    ),
}


# ---------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------


@dataclass
class ZooModel:
    """A built zoo model and what SB3 itself predicts for fixed sample observations.

    ``actions[i]`` is ``model.predict(obs, deterministic=True)`` for
    ``observations[i]``: for a VecNormalize entry after the saved statistics
    normalise the observation; for a maskable entry with ``action_masks[i]``;
    for a recurrent entry one observation after the other, carrying the LSTM
    state and resetting it where ``episode_starts[i]`` is true. SB3 loads a
    HER entry only with an environment (``entry.env`` in a DummyVecEnv).
    """

    name: str
    algorithm: str
    path: str  # the .zip written by model.save
    vecnormalize: str | None  # the .pkl written by vec_env.save, or None
    observations: list
    actions: list
    action_masks: list | None = None
    episode_starts: list | None = None
    features: tuple = ()
    entry: ZooEntry | None = field(default=None, repr=False)


def sample_observations(env: gym.Env, n: int = N_SAMPLES) -> list:
    """``n`` observations drawn with :data:`SAMPLE_SEED` from the env's (sampled part of its) observation space."""
    space = _fresh_space(getattr(env, "sample_space", env.observation_space), SAMPLE_SEED)
    return [space.sample() for _ in range(n)]


def predict_actions(
    model: Any,
    observations: Sequence[Any],
    *,
    vecnormalize: Any = None,
    action_masks: Sequence[np.ndarray] | None = None,
    episode_starts: Sequence[bool] | None = None,
) -> list:
    """SB3's deterministic actions for ``observations``, one observation at a time (see :class:`ZooModel`)."""
    actions = []
    state = None
    for i, obs in enumerate(observations):
        if vecnormalize is not None:
            obs = vecnormalize.normalize_obs(obs)
        kw: dict = {}
        if action_masks is not None:
            kw["action_masks"] = action_masks[i]
        if episode_starts is not None:
            kw["state"] = state
            kw["episode_start"] = np.array([episode_starts[i]])
        action, state = model.predict(obs, deterministic=True, **kw)
        actions.append(np.array(action, copy=True))
    return actions


def make_vec_env(entry: ZooEntry) -> Any:
    """The entry's environment in a DummyVecEnv, behind VecNormalize when the entry uses it."""
    venv = DummyVecEnv([entry.env])
    if entry.vecnormalize is not None:
        venv = VecNormalize(venv, **dict(entry.vecnormalize))
    return venv


def build(name: str, folder: str | os.PathLike) -> ZooModel:
    """Train the catalogue entry ``name`` and save it under ``folder`` (``NAME.zip``, ``NAME.vecnormalize.pkl``)."""
    entry = CATALOGUE[name]
    torch.set_num_threads(1)
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        venv = make_vec_env(entry)
        model = entry.algo(entry.policy, venv, seed=SEED, device="cpu", **copy.deepcopy(dict(entry.kwargs)))
        model.learn(entry.steps)
        path = os.path.join(folder, f"{name}.zip")
        model.save(path)
        vn_path = None
        normalizer = None
        if entry.vecnormalize is not None:
            vn_path = os.path.join(folder, f"{name}.vecnormalize.pkl")
            venv.save(vn_path)
            normalizer = venv
            normalizer.training = False
        probe = entry.env()
        observations = sample_observations(probe)
        rng = np.random.default_rng(SAMPLE_SEED)
        masks = None
        if ACTION_MASKS in entry.features:
            masks = [random_action_mask(probe.action_space, rng) for _ in observations]
        starts = None
        if RECURRENT in entry.features:
            starts = [True] + [bool(x) for x in rng.random(len(observations) - 1) < 0.3]
        actions = predict_actions(
            model, observations, vecnormalize=normalizer, action_masks=masks, episode_starts=starts
        )
        probe.close()
        venv.close()
    return ZooModel(
        name=name,
        algorithm=entry.algorithm,
        path=path,
        vecnormalize=vn_path,
        observations=observations,
        actions=actions,
        action_masks=masks,
        episode_starts=starts,
        features=entry.features,
        entry=entry,
    )


class Zoo:
    """Builds catalogue entries on first use into ``folder`` and caches them."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = os.fspath(folder)
        self._built: dict[str, ZooModel] = {}

    def __getitem__(self, name: str) -> ZooModel:
        if name not in self._built:
            self._built[name] = build(name, self.folder)
        return self._built[name]

    def __iter__(self):
        return iter(CATALOGUE)

    def __len__(self) -> int:
        return len(CATALOGUE)

    def names(self, feature: str | None = None, algorithm: str | None = None) -> list:
        """Catalogue names, optionally only those with a feature tag and/or of an algorithm."""
        return [
            n
            for n, e in CATALOGUE.items()
            if (feature is None or feature in e.features) and (algorithm is None or e.algorithm == algorithm)
        ]
