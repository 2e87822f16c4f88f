"""The archive's weights, optimizer states and PyTorch variables put into a model built from its data.

:func:`set_weights` does what SB3's ``load`` does after building the model
(``set_parameters`` with exact matching, then the PyTorch variables), and
first and after checks each optimizer state against the optimizer the model
built (:mod:`rlarchive.sb3.optimizer_states`): a state that does not fit
is refused before the first training step could crash on it.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from ..errors import RlarchiveError
from . import optimizer_states
from .keys import LoadWarning

__all__ = ["set_weights"]

#: What torch's ``load_state_dict`` and SB3's ``set_parameters`` raise for a state dict they cannot take.
_LOAD_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError, RuntimeError, OverflowError)


def _optimizer_params_for(model: Any, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with a DQN or QR-DQN optimizer state of SB3 < 2.4 fitted to the model (as SB3's own ``load`` does).

    Before 2.4 their optimizer also held the target network's parameters
    (twice as many, the second half never stepped); later versions hold only
    the Q-network's. As SB3's ``load`` does when the policy optimizer's only
    parameter group holds twice the parameters of the model's, the state of
    the first half is kept, with a :class:`~rlarchive.sb3.keys.LoadWarning`
    (saving the model again writes the fitted state).
    """
    opt = params.get("policy.optimizer")
    optimizer = getattr(getattr(model, "policy", None), "optimizer", None)
    if not (isinstance(opt, dict) and optimizer is not None and len(opt.get("param_groups", ())) == 1):
        return params
    saved = opt["param_groups"][0].get("params", [])
    n = len(optimizer.param_groups[0]["params"])
    if len(saved) == 2 * n:
        group = dict(opt["param_groups"][0], params=list(saved[:n]))
        state = {k: v for k, v in opt.get("state", {}).items() if k in set(saved[:n])}
        params = dict(params, **{"policy.optimizer": dict(opt, param_groups=[group], state=state)})
        warnings.warn(
            f"the archive's policy optimizer state holds {len(saved)} parameters, the model's optimizer {n} (a DQN "
            "of SB3 < 2.4 kept its target network's parameters there too): kept the state of the first "
            f"{n}, the online network's; save the model again to store the state in the current form",
            LoadWarning,
            stacklevel=6,
        )
    return params


def _optimizers(model: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """Group name -> the model's optimizer it names, once the names are exactly the state dicts the model saves.

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for a name the model does not save (SB3 would fail after loading some).
    """
    import torch
    from stable_baselines3.common.save_util import recursive_getattr

    expected = set(model._get_torch_save_params()[0])
    if set(params) != expected:
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            f"the archive's weights do not fit the model: its tensor groups {sorted(params)} are not the state "
            f"dicts the model keeps {sorted(expected)}",
        )
    found = {name: recursive_getattr(model, name) for name in params}
    return {name: opt for name, opt in found.items() if isinstance(opt, torch.optim.Optimizer)}


def set_weights(
    cls: Any, model: Any, params: Mapping[str, Any], variables: Mapping[str, Any], device: Any, fresh_optimizers: bool
) -> None:
    """Put the archive's tensor groups (with fresh optimizers: the model's own optimizer state) and its other
    torch variables into a model of ``cls`` built from the archive's data.

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for weights or an optimizer state that do not fit the model.
    """
    optimizers = _optimizers(model, params)
    for name in optimizers:
        optimizer_states.check_form(name, params[name])
    params = _optimizer_params_for(model, dict(params))
    if fresh_optimizers:
        params = {
            k: (optimizers[k].state_dict() if k in optimizers and k.endswith(".optimizer") else v)
            for k, v in params.items()
        }
    defaults = {}
    for name, optimizer in optimizers.items():
        optimizer_states.check_sizes(name, params[name], optimizer)
        defaults[name] = dict(optimizer.defaults)  # as the model built it: loading adds to them
    try:
        model.set_parameters(params, exact_match=True, device=device)
    except _LOAD_ERRORS as e:  # a tensor group or optimizer state the model does not have, or of another size
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            f"the archive's weights do not fit the policy {cls.__name__} builds: {type(e).__name__}: {str(e)[:500]}",
        ) from None
    for name, optimizer in optimizers.items():
        optimizer_states.check_loaded(name, optimizer, defaults[name])
    for name, tensor in variables.items():
        target = model
        for part in name.split(".")[:-1]:
            target = getattr(target, part)
        getattr(target, name.split(".")[-1]).data = tensor.data.clone().to(model.device)
    if model.use_sde:
        model.policy.reset_noise()
