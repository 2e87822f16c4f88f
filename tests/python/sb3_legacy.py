"""Stable-Baselines3 1.x zips with layers shared by the actor and the critic, written in their documented layout.

SB3 before 1.8 (and sb3-contrib before 1.8) built ``MlpExtractor.shared_net``
from the leading integers of ``net_arch`` (``[32, dict(pi=[16], vf=[16])]``;
a plain list of integers made every layer shared). Such files cannot be
downloaded here, so they are written as SB3 1.6's ``save`` writes them:

- ``data``: ``data_to_json`` of the attributes SB3 1.6.2 keeps for PPO (and
  sb3-contrib 1.6's RecurrentPPO), spaces pickled from the old ``gym``
  package (stand-ins, :mod:`sb_fixtures`), schedules as cloudpickled
  closures, ``policy_class`` pickled by reference, ``policy_kwargs`` plain
  JSON or a cloudpickled dict when it holds a class;
- ``policy.pth``: the state dict in the order SB3 1.7's modules register
  their parameters (``mlp_extractor.shared_net.0.weight`` ...);
- ``policy.optimizer.pth``: an Adam state after one step over those
  parameters, in that order; ``pytorch_variables.pth``: ``{}``;
- ``_stable_baselines3_version``: ``1.6.2``.

:func:`reference_actions` computes the deterministic actions with plain torch
functions, following SB3 1.7's ``MlpExtractor.forward_actor`` (shared layers,
then the policy layers) and its ``ActorCriticPolicy`` / sb3-contrib's
``RecurrentActorCriticPolicy`` (the actor LSTM first).
"""

from __future__ import annotations

import io
import zipfile
from collections import OrderedDict, deque
from itertools import zip_longest

import numpy as np
import sb_fixtures as F

OBS_DIM = 4
N_ACTIONS = 3


def _closure_schedule(value: float) -> bytes:
    import cloudpickle
    from stable_baselines3.common.utils import get_schedule_fn

    return cloudpickle.dumps(get_schedule_fn(value))


def _linear(state: OrderedDict, prefix: str, n_in: int, n_out: int, rng: np.random.Generator) -> None:
    import torch

    state[f"{prefix}.weight"] = torch.tensor(rng.normal(0, 0.7, (n_out, n_in)), dtype=torch.float32)
    state[f"{prefix}.bias"] = torch.tensor(rng.normal(0, 0.3, (n_out,)), dtype=torch.float32)


def _mlp_state(
    state: OrderedDict, feature_dim: int, shared: list, pi: list, vf: list, rng: np.random.Generator
) -> tuple:
    """The mlp_extractor entries, registered as SB3 1.7 registers them (shared_net, policy_net, value_net)."""
    last = feature_dim
    for i, n in enumerate(shared):
        _linear(state, f"mlp_extractor.shared_net.{2 * i}", last, n, rng)
        last = n
    dims = {"policy_net": last, "value_net": last}
    layers: dict = {"policy_net": [], "value_net": []}
    for n_pi, n_vf in zip_longest(pi, vf):
        for net, n in (("policy_net", n_pi), ("value_net", n_vf)):
            if n is not None:
                layers[net].append((dims[net], n))
                dims[net] = n
    for net in ("policy_net", "value_net"):
        for i, (a, b) in enumerate(layers[net]):
            _linear(state, f"mlp_extractor.{net}.{2 * i}", a, b, rng)
    return dims["policy_net"], dims["value_net"]


def _lstm(state: OrderedDict, prefix: str, n_in: int, hidden: int, rng: np.random.Generator) -> None:
    import torch

    for name, shape in (
        ("weight_ih_l0", (4 * hidden, n_in)),
        ("weight_hh_l0", (4 * hidden, hidden)),
        ("bias_ih_l0", (4 * hidden,)),
        ("bias_hh_l0", (4 * hidden,)),
    ):
        state[f"{prefix}.{name}"] = torch.tensor(rng.normal(0, 0.5, shape), dtype=torch.float32)


def policy_state(net_arch: list, recurrent: bool = False, lstm_hidden: int = 8, seed: int = 0) -> OrderedDict:
    """A policy state dict as SB3 1.7 (sb3-contrib 1.7 for RecurrentPPO) orders it, for CartPole-like spaces."""
    rng = np.random.default_rng(seed)
    shared = [n for n in net_arch if isinstance(n, int)]
    tail = next((n for n in net_arch if isinstance(n, dict)), {})
    state: OrderedDict = OrderedDict()
    feature_dim = lstm_hidden if recurrent else OBS_DIM
    pi_dim, vf_dim = _mlp_state(state, feature_dim, shared, list(tail.get("pi", [])), list(tail.get("vf", [])), rng)
    _linear(state, "action_net", pi_dim, N_ACTIONS, rng)
    _linear(state, "value_net", vf_dim, 1, rng)
    if (
        recurrent
    ):  # lstm_actor, lstm_critic (enable_critic_lstm, not shared) are registered after the actor-critic's modules
        _lstm(state, "lstm_actor", OBS_DIM, lstm_hidden, rng)
        _lstm(state, "lstm_critic", OBS_DIM, lstm_hidden, rng)
    return state


def _optimizer_state(state: OrderedDict) -> dict:
    """Adam's state dict after one step over the parameters, in registration order."""
    import torch

    params = [torch.nn.Parameter(t.clone()) for t in state.values()]
    opt = torch.optim.Adam(params, lr=3e-4, eps=1e-5)
    sum((p * p).sum() for p in params).backward()
    opt.step()
    return opt.state_dict()


def write_ppo_1x(
    path: str, net_arch: list, *, recurrent: bool = False, activation: str | None = None, seed: int = 0
) -> OrderedDict:
    """Write a PPO (or RecurrentPPO) zip as SB3 1.6.2 saves it; returns the policy state dict."""
    import torch
    from stable_baselines3.common.policies import ActorCriticPolicy

    if recurrent:
        from sb3_contrib.common.recurrent.policies import RecurrentActorCriticPolicy as policy_class
    else:
        policy_class = ActorCriticPolicy
    state = policy_state(net_arch, recurrent=recurrent, seed=seed)
    policy_kwargs: dict = {"net_arch": net_arch}
    if recurrent:
        policy_kwargs["lstm_hidden_size"] = 8
    if activation is not None:
        policy_kwargs["activation_fn"] = getattr(torch.nn, activation)
    data = {
        "policy_class": F.serialized_entry(F.cloudpickle_with(policy_class), "<class 'abc.ABCMeta'>"),
        "policy_kwargs": policy_kwargs,
        "observation_space": F.gym_box(-1.0, 1.0, (OBS_DIM,), np.float32),
        "action_space": F.gym_discrete(N_ACTIONS),
        "n_envs": 1,
        "num_timesteps": 64,
        "_total_timesteps": 64,
        "_num_timesteps_at_start": 0,
        "seed": None,
        "action_noise": None,
        "start_time": 1700000000000000000,
        "learning_rate": 0.0003,
        "tensorboard_log": None,
        "lr_schedule": F.serialized_entry(_closure_schedule(3e-4), "<class 'function'>"),
        "_last_obs": None,
        "_last_episode_starts": np.ones((1,), dtype=bool),
        "_last_original_obs": None,
        "_episode_num": 0,
        "use_sde": False,
        "sde_sample_freq": -1,
        "_current_progress_remaining": 0.0,
        "ep_info_buffer": deque(maxlen=100),
        "ep_success_buffer": deque(maxlen=100),
        "_n_updates": 1,
        "n_steps": 64,
        "gamma": 0.99,
        "gae_lambda": 0.95,
        "ent_coef": 0.0,
        "vf_coef": 0.5,
        "max_grad_norm": 0.5,
        "batch_size": 64,
        "n_epochs": 1,
        "clip_range": F.serialized_entry(_closure_schedule(0.2), "<class 'function'>"),
        "clip_range_vf": None,
        "normalize_advantage": True,
        "target_kl": None,
    }
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", F.sb_data_json(data))
        for name, obj in (
            ("pytorch_variables.pth", {}),
            ("policy.pth", state),
            ("policy.optimizer.pth", _optimizer_state(state)),
        ):
            buf = io.BytesIO()
            torch.save(obj, buf)
            z.writestr(name, buf.getvalue())
        z.writestr("_stable_baselines3_version", "1.6.2")
        z.writestr(
            "system_info.txt",
            "- OS: Linux\n- Python: 3.8.10\n- Stable-Baselines3: 1.6.2\n- PyTorch: 1.12.1\n- GPU Enabled: False\n- Numpy: 1.23.3\n- Gym: 0.21.0\n",
        )
    return state


def reference_actions(
    state: OrderedDict, net_arch: list, obs: np.ndarray, *, recurrent: bool = False, activation: str = "Tanh"
) -> np.ndarray:
    """Deterministic actions of a batch of first observations (episode starts), computed as SB3 1.7 does."""
    import torch
    import torch.nn.functional as fn

    act = {"Tanh": torch.tanh, "ReLU": torch.relu}[activation]
    x = torch.as_tensor(obs, dtype=torch.float32)
    if recurrent:  # one LSTM step from a zero state: the gates of torch.nn.LSTM
        h = torch.zeros(x.shape[0], state["lstm_actor.weight_hh_l0"].shape[1])
        gates = (
            x @ state["lstm_actor.weight_ih_l0"].T
            + state["lstm_actor.bias_ih_l0"]
            + h @ state["lstm_actor.weight_hh_l0"].T
            + state["lstm_actor.bias_hh_l0"]
        )
        i, f, g, o = gates.chunk(4, dim=1)
        c = torch.sigmoid(f) * torch.zeros_like(h) + torch.sigmoid(i) * torch.tanh(g)
        x = torch.sigmoid(o) * torch.tanh(c)
    for net in ("shared_net", "policy_net"):
        i = 0
        while f"mlp_extractor.{net}.{i}.weight" in state:
            x = act(fn.linear(x, state[f"mlp_extractor.{net}.{i}.weight"], state[f"mlp_extractor.{net}.{i}.bias"]))
            i += 2
    logits = fn.linear(x, state["action_net.weight"], state["action_net.bias"])
    return logits.argmax(dim=1).numpy()
