"""The names of an SB3 model's optimizer parameters in an archive (spec §7.9 ``param_tensors``, Annex B.2).

SB3 saves an optimizer's state by position: its parameter groups list ids
0, 1, ... in the order of the optimizer's own parameter list
(``self.parameters()``, ``self.actor.parameters()``, the critic's without its
features extractor...). :func:`with_param_tensors` names them from the model
itself, each parameter by the name it has in the policy's state dict (the
tensor group ``policy``), never by its shape; an optimizer whose parameters
are not all the policy's (SAC's ``ent_coef_optimizer`` over ``log_ent_coef``)
or whose state does not fit the names is written without them.
:func:`without_param_tensors` takes them out again before a state goes back
to SB3 or torch (SB3's own optimizers hold none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..param_tensors import PARAM_TENSORS, fits

__all__ = ["with_param_tensors", "without_param_tensors"]


def _tensors(v: Any) -> list[Any]:
    """Every torch tensor inside a parameter's state (a map of entries, possibly nested)."""
    import torch

    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, Mapping):
        return [t for x in v.values() for t in _tensors(x)]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in _tensors(x)]
    return []


def _names(sd: Any, optimizer: Any, by_id: Mapping[int, str], policy: Mapping[str, Any]) -> list[list[str]] | None:
    """The ``param_tensors`` of each group of the saved state ``sd`` of ``optimizer``, or None when they cannot be had."""
    groups = sd.get("param_groups") if isinstance(sd, Mapping) else None
    state = sd.get("state") if isinstance(sd, Mapping) else None
    if not (isinstance(groups, list) and isinstance(state, Mapping) and len(groups) == len(optimizer.param_groups)):
        return None
    out = []
    for g, mine in zip(groups, optimizer.param_groups):
        params = g.get("params") if isinstance(g, Mapping) else None
        names = [by_id.get(id(p)) for p in mine["params"]]
        if not isinstance(params, list) or len(params) != len(names):
            return None
        named: list[str] = []
        for pid, n in zip(params, names):
            if n is None or n not in policy:
                return None
            if any(not fits(tuple(t.shape), tuple(policy[n].shape)) for t in _tensors(state.get(pid))):
                return None
            named.append(n)
        out.append(named)
    return out


def with_param_tensors(optimizers: Mapping[str, Any], model: Any, policy: Mapping[str, Any]) -> dict[str, Any]:
    """``optimizers`` (name -> saved state dict) with ``param_tensors`` in every parameter group, named from ``model``.

    Args:
        optimizers: the optimizer states as SB3 saves them (``policy.optimizer``, ``actor.optimizer``...).
        model: the SB3 model they belong to (built from the archive, or the live model being saved).
        policy: the tensor group ``policy`` (name -> tensor), the names' namespace.
    """
    import torch
    from stable_baselines3.common.save_util import recursive_getattr

    module = getattr(model, "policy", None)
    if not isinstance(module, torch.nn.Module):
        return dict(optimizers)
    by_id = {id(p): n for n, p in module.named_parameters()}  # a shared parameter: its first name
    out = {}
    for name, sd in optimizers.items():
        out[name] = sd
        try:
            optimizer = recursive_getattr(model, name)
        except AttributeError:
            continue
        if not isinstance(optimizer, torch.optim.Optimizer):
            continue
        names = _names(sd, optimizer, by_id, policy)
        if names is not None:
            groups = [{**g, PARAM_TENSORS: n} for g, n in zip(sd["param_groups"], names)]
            out[name] = {**sd, "param_groups": groups}
    return out


def without_param_tensors(sd: Any) -> Any:
    """An optimizer state dict without ``param_tensors`` in its parameter groups (as SB3 and torch hold it)."""
    groups = sd.get("param_groups") if isinstance(sd, dict) else None
    if not isinstance(groups, list) or not any(isinstance(g, dict) and PARAM_TENSORS in g for g in groups):
        return sd
    return {
        **sd,
        "param_groups": [
            {k: v for k, v in g.items() if k != PARAM_TENSORS} if isinstance(g, dict) else g for g in groups
        ],
    }
