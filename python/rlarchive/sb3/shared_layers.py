"""Layers shared by the actor and the critic: the ``MlpExtractor`` of Stable-Baselines3 before 1.8.

Before 1.8, an actor-critic ``net_arch`` such as ``[32, dict(pi=[16], vf=[16])]``
(or a plain list of sizes, ``[64, 64]``, which made every layer shared) built
``mlp_extractor.shared_net`` (Linear, activation, ...) feeding both
``policy_net`` and ``value_net``; the policy's state dict names those weights
``mlp_extractor.shared_net.N.*``. SB3 1.8 removed shared layers: a plain list
now means separate actor and critic networks of those sizes.

:func:`layout` tells the shared layout from the recorded ``net_arch`` and the
weights; :func:`policy_class` gives a subclass of the recorded policy class
whose extractor is :class:`SharedMlpExtractor`, which holds exactly those
weights and computes what SB3 1.7 computes; :func:`to_separate` turns the
layout into the equivalent one of SB3 >= 1.8 (the shared layers copied at the
head of both networks, which predicts the same) for an export (Annex B.4).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from ..errors import RlarchiveError

__all__ = ["Layout", "SharedMlpExtractor", "layout", "policy_class", "to_separate", "PREFIX"]

#: The state-dict prefix of the shared layers.
PREFIX = "mlp_extractor.shared_net."
_ENTRY = re.compile(r"^mlp_extractor\.(shared_net|policy_net|value_net)\.(\d+)\.(.+)$")


@dataclass(frozen=True)
class Layout:
    """Layer sizes: ``shared`` by both networks, then ``pi`` (actor only) and ``vf`` (critic only)."""

    shared: tuple[int, ...]
    pi: tuple[int, ...]
    vf: tuple[int, ...]

    def net_arch(self) -> dict[str, list[int]]:
        """The equivalent ``net_arch`` of SB3 >= 1.8: each network starts with copies of the shared layers."""
        return {"pi": list(self.shared + self.pi), "vf": list(self.shared + self.vf)}


def _sizes(v: Any) -> tuple[int, ...] | None:
    if isinstance(v, (list, tuple)) and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in v):
        return tuple(v)
    return None


def _parse(net_arch: Any) -> Layout | None:
    """A ``net_arch`` of SB3 < 1.8 (leading ints shared, then an optional dict of ``pi`` / ``vf``), or None."""
    if not isinstance(net_arch, (list, tuple)):
        return None
    shared: list[int] = []
    pi: tuple[int, ...] = ()
    vf: tuple[int, ...] = ()
    for _i, item in enumerate(net_arch):
        if isinstance(item, int) and not isinstance(item, bool) and item > 0:
            shared.append(item)
        elif isinstance(item, Mapping):  # SB3 < 1.8 read "pi" and "vf" only
            pi_sizes, vf_sizes = _sizes(item.get("pi", [])), _sizes(item.get("vf", []))
            if pi_sizes is None or vf_sizes is None:
                return None
            pi, vf = pi_sizes, vf_sizes
            break  # SB3 < 1.8 reads nothing after the dict
        else:
            return None
    return Layout(tuple(shared), pi, vf)


def layout(policy_kwargs: Any, state: Mapping[str, Any] | None) -> Layout | None:
    """The shared layout a policy state dict holds (keys ``mlp_extractor.shared_net.*``), or None.

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED when the state dict holds shared
            layers that ``policy_kwargs["net_arch"]`` does not describe.
    """
    if not isinstance(state, Mapping) or not any(isinstance(k, str) and k.startswith(PREFIX) for k in state):
        return None
    arch = policy_kwargs.get("net_arch") if isinstance(policy_kwargs, Mapping) else None
    found = _parse(arch)
    linear = sorted(
        (int(m.group(2)), tuple(state[k].shape))
        for k in state
        if isinstance(k, str)
        and (m := _ENTRY.match(k))
        and m.group(1) == "shared_net"
        and m.group(3) == "weight"
        and len(state[k].shape) == 2
    )
    if (
        found is None
        or [shape[0] for _, shape in linear] != list(found.shared)
        or [i for i, _ in linear] != list(range(0, 2 * len(linear), 2))
    ):
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            f"the policy holds layers shared by the actor and the critic (mlp_extractor.shared_net) that its net_arch {arch!r} "
            "does not describe as Stable-Baselines3 before 1.8 did",
        )
    return found


def _extractor_class() -> type:
    import torch.nn as nn

    class SharedMlpExtractor(nn.Module):
        """SB3 1.7's ``MlpExtractor``: ``shared_net`` feeds ``policy_net`` and ``value_net``.

        The modules are registered (and so their parameters ordered) as SB3 1.7 registers them.
        """

        def __init__(self, feature_dim: int, shape: Layout, activation_fn: type, device: Any = "cpu") -> None:
            super().__init__()
            shared: list[nn.Module] = []
            policy: list[nn.Module] = []
            value: list[nn.Module] = []
            last = feature_dim
            for n in shape.shared:
                shared += [nn.Linear(last, n), activation_fn()]
                last = n
            last_pi = last_vf = last
            for n_pi, n_vf in zip_longest(shape.pi, shape.vf):
                if n_pi is not None:
                    policy += [nn.Linear(last_pi, n_pi), activation_fn()]
                    last_pi = n_pi
                if n_vf is not None:
                    value += [nn.Linear(last_vf, n_vf), activation_fn()]
                    last_vf = n_vf
            self.latent_dim_pi = last_pi
            self.latent_dim_vf = last_vf
            self.shared_net = nn.Sequential(*shared).to(device)
            self.policy_net = nn.Sequential(*policy).to(device)
            self.value_net = nn.Sequential(*value).to(device)

        def forward(self, features: Any) -> tuple[Any, Any]:
            latent = self.shared_net(features)
            return self.policy_net(latent), self.value_net(latent)

        def forward_actor(self, features: Any) -> Any:
            return self.policy_net(self.shared_net(features))

        def forward_critic(self, features: Any) -> Any:
            return self.value_net(self.shared_net(features))

    SharedMlpExtractor.__module__ = __name__
    return SharedMlpExtractor


@functools.cache
def extractor_class() -> type:
    """The ``torch.nn.Module`` class of the shared-layer extractor (torch is imported on first use)."""
    return _extractor_class()


def SharedMlpExtractor(feature_dim: int, shape: Layout, activation_fn: type, device: Any = "cpu") -> Any:
    """A new shared-layer extractor (see :func:`extractor_class`)."""
    return extractor_class()(feature_dim, shape, activation_fn, device)


@functools.lru_cache(maxsize=64)
def policy_class(base: type, shape: Layout) -> type:
    """A subclass of the actor-critic policy class ``base`` whose ``mlp_extractor`` is the shared layout ``shape``."""

    def _build_mlp_extractor(self: Any) -> None:
        dim = getattr(self, "lstm_output_dim", None) or self.features_dim  # RecurrentPPO: after the LSTM
        self.mlp_extractor = SharedMlpExtractor(dim, shape, self.activation_fn, self.device)

    if not hasattr(base, "_build_mlp_extractor"):
        raise RlarchiveError(
            "VALUE_UNSUPPORTED", f"the policy class {base.__name__} has no MLP extractor to hold shared layers"
        )
    return type(base.__name__, (base,), {"_build_mlp_extractor": _build_mlp_extractor, "__module__": __name__})


def to_separate(state: Mapping[str, Any], shape: Layout) -> dict[str, str]:
    """How SB3 >= 1.8 names the entries of a shared-layout policy state dict, for :meth:`Layout.net_arch`.

    ``shared_net.N.*`` becomes both ``policy_net.N.*`` and ``value_net.N.*``
    (copies), and ``policy_net.N.*`` / ``value_net.N.*`` move up by the number
    of shared modules. Returns new name -> old name.
    """
    shift = 2 * len(shape.shared)
    out: dict[str, str] = {}
    for k in state:
        m = _ENTRY.match(k) if isinstance(k, str) else None
        if m is None:
            out[k] = k
        elif m.group(1) == "shared_net":
            for net in ("policy_net", "value_net"):
                out[f"mlp_extractor.{net}.{m.group(2)}.{m.group(3)}"] = k
        else:
            out[f"mlp_extractor.{m.group(1)}.{int(m.group(2)) + shift}.{m.group(3)}"] = k
    return out


def separate_order(old_names: list[str], shape: Layout) -> list[tuple[str, str]] | None:
    """(new name, old name) for each parameter of the policy SB3 >= 1.8 builds, in its registration order.

    ``old_names`` are the shared-layout policy's parameter names in
    registration order (``named_parameters()``); the extractor's block
    (shared, policy, value) becomes SB3 >= 1.8's (policy, then value, each
    starting with its copies of the shared layers). None when the extractor's
    parameters are not one block in that order.
    """
    shift = 2 * len(shape.shared)
    where = [i for i, n in enumerate(old_names) if n.startswith("mlp_extractor.")]
    if where and where != list(range(where[0], where[-1] + 1)):
        return None
    block = [old_names[i] for i in where]
    new_block = []
    for net in ("policy_net", "value_net"):
        for old in block:
            m = _ENTRY.match(old)
            if m is None:
                return None
            if m.group(1) in ("shared_net", net):
                index = int(m.group(2)) + (0 if m.group(1) == "shared_net" else shift)
                new_block.append((f"mlp_extractor.{net}.{index}.{m.group(3)}", old))
    start = where[0] if where else len(old_names)
    rest = old_names[start + len(block) :]
    return [(n, n) for n in old_names[:start]] + new_block + [(n, n) for n in rest]
