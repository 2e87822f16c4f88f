"""Describe a Stable-Baselines3 / sb3-contrib policy as a portable policy (extension ``RLA_policy``).

:func:`describe` walks the torch modules of a built SB3 policy, family by
family (actor-critic, recurrent actor-critic, Q-network, quantile network,
SAC/TQC/CrossQ actor, TD3/DDPG actor, ARS), and writes the operations of
:mod:`rlarchive.extensions.policy.evaluator` that compute its deterministic action. Weights are
:class:`Weight` objects naming the state-dict entry of the tensor group they
live in, so the archive refers to the tensors it already holds.

A module the walk does not know (a user's features extractor) raises
:class:`Unsupported`: such a model gets no portable policy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Weight", "Unsupported", "describe", "resolve"]


class Unsupported(Exception):
    """The policy holds a module or a layout the portable policy cannot express."""


@dataclass(frozen=True)
class Weight:
    """A tensor of a tensor group, by state-dict name (``array`` is its value, for evaluating without an archive)."""

    group: str
    name: str
    array: Any


def resolve(desc: Any, fn: Callable[[Weight], Any]) -> Any:
    """``desc`` with every :class:`Weight` replaced by ``fn(weight)``."""
    if isinstance(desc, Weight):
        return fn(desc)
    if isinstance(desc, dict):
        return {k: resolve(v, fn) for k, v in desc.items()}
    if isinstance(desc, list):
        return [resolve(v, fn) for v in desc]
    return desc


_ACTIVATIONS = {
    "ReLU": ("relu", ()),
    "Tanh": ("tanh", ()),
    "Sigmoid": ("sigmoid", ()),
    "ELU": ("elu", ("alpha",)),
    "LeakyReLU": ("leaky_relu", ("negative_slope",)),
    "SiLU": ("silu", ()),
    "GELU": ("gelu", ("approximate",)),
    "Softplus": ("softplus", ("beta", "threshold")),
    "Identity": ("identity", ()),
    "SELU": ("selu", ()),
    "CELU": ("celu", ("alpha",)),
    "Mish": ("mish", ()),
    "Hardswish": ("hardswish", ()),
    "Hardsigmoid": ("hardsigmoid", ()),
    "Softsign": ("softsign", ()),
}


class _Walker:
    def __init__(self, policy: Any, group: str = "policy") -> None:
        self.group = group
        self.names = {id(m): n for n, m in policy.named_modules()}
        self.nodes: list[dict[str, Any]] = []
        self.count = 0

    def weight(self, module: Any, attr: str) -> Any:
        t = getattr(module, attr, None)
        if t is None:
            return None
        prefix = self.names[id(module)]
        return Weight(self.group, f"{prefix}.{attr}" if prefix else attr, t.detach().cpu().numpy())

    def fresh(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def add(self, op: str, ins: list[str], **attrs: Any) -> str:
        out = self.fresh()
        self.nodes.append({"op": op, "in": ins, "out": out, **attrs})
        return out

    def module(self, m: Any, x: str) -> str:
        import torch.nn as nn

        name = type(m).__name__
        if isinstance(m, nn.Sequential):
            for child in m:
                x = self.module(child, x)
            return x
        if isinstance(m, nn.Linear):
            return self.add("linear", [x], weight=self.weight(m, "weight"), bias=self.weight(m, "bias"))
        if isinstance(m, nn.Conv2d):
            if m.groups != 1 or tuple(m.dilation) != (1, 1) or m.padding_mode != "zeros" or isinstance(m.padding, str):
                raise Unsupported(f"a Conv2d with groups, dilation or padding mode ({self.names[id(m)]})")
            return self.add(
                "conv2d",
                [x],
                weight=self.weight(m, "weight"),
                bias=self.weight(m, "bias"),
                stride=list(m.stride),
                padding=list(m.padding),
            )
        if isinstance(m, nn.Flatten):
            if m.start_dim != 1 or m.end_dim != -1:
                raise Unsupported("a Flatten other than Flatten(1, -1)")
            return self.add("flatten", [x])
        if isinstance(m, (nn.Dropout,)) or name == "Identity":
            return x
        if name in _ACTIVATIONS and type(m).__module__.startswith("torch.nn"):
            fn, params = _ACTIVATIONS[name]
            return self.add("activation", [x], fn=fn, **{p: getattr(m, p) for p in params})
        if isinstance(m, nn.PReLU):  # a learned slope, one for all channels or one per channel (dim 1 of the batch)
            return self.add("prelu", [x], weight=self.weight(m, "weight"))
        if name in ("Hardtanh", "ReLU6"):  # ReLU6 is Hardtanh(0, 6)
            return self.add("activation", [x], fn="hardtanh", min_val=float(m.min_val), max_val=float(m.max_val))
        if isinstance(m, nn.LayerNorm):
            if len(m.normalized_shape) != 1:
                raise Unsupported("a LayerNorm over more than the last dimension")
            return self.add(
                "layer_norm", [x], weight=self.weight(m, "weight"), bias=self.weight(m, "bias"), eps=float(m.eps)
            )
        if isinstance(m, nn.BatchNorm1d) or name == "BatchRenorm1d":  # in evaluation mode: the running statistics
            renorm = name == "BatchRenorm1d"  # sb3-contrib's, for CrossQ: ra_mean, ra_var, scale, bias
            if not renorm and not m.track_running_stats:
                raise Unsupported("a BatchNorm1d without running statistics")
            return self.add(
                "batch_norm",
                [x],
                running_mean=self.weight(m, "ra_mean" if renorm else "running_mean"),
                running_var=self.weight(m, "ra_var" if renorm else "running_var"),
                weight=self.weight(m, "scale" if renorm else "weight") if getattr(m, "affine", True) else None,
                bias=self.weight(m, "bias") if getattr(m, "affine", True) else None,
                eps=float(m.eps),
            )
        if name == "FlattenExtractor":
            return self.add("flatten", [x])
        if name == "NatureCNN":
            return self.module(m.linear, self.module(m.cnn, x))
        raise Unsupported(
            f"no portable form for the module {type(m).__module__}.{type(m).__qualname__} ({self.names.get(id(m), '?')})"
        )

    def features(self, extractor: Any, space: Any) -> str:
        if type(extractor).__name__ == "CombinedExtractor":
            parts = [self.module(sub, f"obs.{key}") for key, sub in extractor.extractors.items()]
            return self.add("concat", parts)
        if type(extractor).__module__.startswith(("stable_baselines3.", "sb3_contrib.")):
            return self.module(extractor, "obs")
        raise Unsupported(
            f"the features extractor {type(extractor).__module__}.{type(extractor).__qualname__} is a user class"
        )


def _space(space: Any) -> Any:
    from .. import spaces

    return spaces.from_gymnasium(space)


def _box_head(action_space: Any, x: str, squash: str) -> dict[str, Any]:
    """A box head: the action space's bounds and dtype are those of the description's ``action_space``."""
    return {"op": "box", "in": x, "squash": squash}


def _distribution_head(action_space: Any, x: str, squash_output: bool, distribution: Any = None) -> dict[str, Any]:
    from gymnasium import spaces

    if isinstance(action_space, spaces.MultiBinary) and type(distribution).__name__ == "MaskableBernoulliDistribution":
        # MaskablePPO: two logits per binary action (a categorical over {0, 1} each), the index of the larger
        return {"op": "multi_argmax", "in": x, "sizes": [2] * int(np.prod(action_space.shape))}
    if isinstance(action_space, spaces.Discrete):
        return {"op": "argmax", "in": x}
    if isinstance(action_space, spaces.MultiDiscrete):
        return {"op": "multi_argmax", "in": x, "sizes": [int(n) for n in action_space.nvec.reshape(-1)]}
    if isinstance(action_space, spaces.MultiBinary):
        return {"op": "bernoulli", "in": x}
    if isinstance(action_space, spaces.Box):
        return _box_head(action_space, x, "tanh" if squash_output else "clip")
    raise Unsupported(f"no portable head for a {type(action_space).__name__} action space")


def _lstm(w: _Walker, lstm: Any, x: str, desc: dict[str, Any]) -> str:
    """RecurrentPPO's actor LSTM: one step per observation, its state carried by ``predict``."""
    if lstm.batch_first or lstm.bidirectional or getattr(lstm, "proj_size", 0) or not lstm.bias:
        raise Unsupported("an LSTM that is batch-first, bidirectional, projected or without biases")
    layers = [
        {k: w.weight(lstm, f"{k}_l{i}") for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
        for i in range(lstm.num_layers)
    ]
    out = w.fresh()
    desc["recurrent"] = {
        "hidden_in": "state.hidden",
        "cell_in": "state.cell",
        "hidden_out": "state.hidden.next",
        "cell_out": "state.cell.next",
        "layers": lstm.num_layers,
        "hidden_size": lstm.hidden_size,
    }
    w.nodes.append(
        {
            "op": "lstm",
            "in": [x, "state.hidden", "state.cell"],
            "out": [out, "state.hidden.next", "state.cell.next"],
            "layers": layers,
        }
    )
    return out


def describe(model: Any) -> dict[str, Any]:
    """The portable policy of a built SB3 or sb3-contrib model (weights as :class:`Weight`).

    Raises:
        Unsupported: the policy uses a module or layout the portable policy cannot express.
    """
    policy = model.policy
    w = _Walker(policy)
    family = type(policy).__name__
    action_space = model.action_space
    desc: dict[str, Any] = {
        "observation_space": _space(model.observation_space),
        "action_space": _space(action_space),
        "normalize_images": bool(getattr(policy, "normalize_images", True)),
    }
    if hasattr(policy, "mlp_extractor") and hasattr(
        policy, "action_net"
    ):  # actor-critic (PPO, A2C, TRPO, MaskablePPO, RecurrentPPO)
        extractor = policy.features_extractor if policy.share_features_extractor else policy.pi_features_extractor
        x = w.features(extractor, model.observation_space)
        if hasattr(policy, "lstm_actor"):
            x = _lstm(w, policy.lstm_actor, x, desc)
        shared = getattr(policy.mlp_extractor, "shared_net", None)  # SB3 < 1.8: layers the critic shares
        if shared is not None:
            x = w.module(shared, x)
        x = w.module(policy.mlp_extractor.policy_net, x)
        x = w.module(policy.action_net, x)
        head = _distribution_head(
            action_space, x, bool(getattr(policy, "squash_output", False)), getattr(policy, "action_dist", None)
        )
    elif hasattr(policy, "q_net"):  # DQN
        x = w.features(policy.q_net.features_extractor, model.observation_space)
        x = w.module(policy.q_net.q_net, x)
        head = {"op": "argmax", "in": x}
    elif hasattr(policy, "quantile_net"):  # QR-DQN
        qn = policy.quantile_net
        x = w.features(qn.features_extractor, model.observation_space)
        x = w.module(qn.quantile_net, x)
        head = {"op": "quantile_argmax", "in": x, "n_quantiles": int(qn.n_quantiles)}
    elif hasattr(policy, "actor") and hasattr(policy.actor, "latent_pi"):  # SAC, TQC, CrossQ
        actor = policy.actor
        x = w.features(actor.features_extractor, model.observation_space)
        x = w.module(actor.latent_pi, x)
        x = w.module(actor.mu, x)
        head = _box_head(action_space, x, "tanh")
    elif hasattr(policy, "actor") and hasattr(policy.actor, "mu"):  # TD3, DDPG: mu ends with Tanh
        actor = policy.actor
        x = w.features(actor.features_extractor, model.observation_space)
        x = w.module(actor.mu, x)
        head = _box_head(action_space, x, "rescale")
    elif family in ("ARSPolicy", "ARSLinearPolicy"):
        x = w.module(policy.action_net, w.add("flatten", ["obs"]))
        from gymnasium import spaces

        if isinstance(action_space, spaces.Box):
            head = _box_head(action_space, x, "rescale" if policy.squash_output else "clip")
        else:
            head = _distribution_head(action_space, x, False)
    else:
        raise Unsupported(f"no portable form for the policy {type(policy).__module__}.{family}")
    desc["nodes"] = w.nodes
    desc["action"] = head
    return desc
