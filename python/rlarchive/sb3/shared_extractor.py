"""One features extractor shared by actor and critic: the layout of A2C and PPO policies before Stable-Baselines3 1.7.

Before 1.7 an actor-critic policy held one ``features_extractor``; its
state dict names the extractor's weights ``features_extractor.*`` only.
Since 1.7 a policy that shares its extractor (``share_features_extractor``,
the default of A2C and PPO) also registers the same module as
``pi_features_extractor`` and ``vf_features_extractor``, so its state dict
lists every extractor weight three times, under the three names, and SB3's
exact load of an old state dict misses the ``pi_``/``vf_`` entries (SB3
loads it without the exact match, with a warning).

:func:`complete` gives such a state dict the entries the shared module has
under its other names (the same tensors: the three names are one module),
so that load, import and export build and fill the layout the weights
describe, with every weight checked. The portable policy reads the
extractor under ``features_extractor`` (``rlarchive.sb3.portable_policy``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import RlarchiveError

__all__ = ["ALIASES", "complete", "missing_aliases", "for_model"]

#: The names a shared extractor also has in SB3 >= 1.7.
ALIASES = ("pi_features_extractor.", "vf_features_extractor.")
_BASE = "features_extractor."


def missing_aliases(state: Mapping[str, Any]) -> list[str]:
    """The ``pi_``/``vf_features_extractor.*`` names an old shared-extractor state dict lacks (empty when none)."""
    base = [k[len(_BASE) :] for k in state if isinstance(k, str) and k.startswith(_BASE)]
    if not base:
        return []
    return [a + rest for a in ALIASES for rest in base if a + rest not in state]


def complete(state: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``state`` with the alias entries of a shared extractor filled from ``features_extractor.*``, and a note.

    An alias entry already present must hold the same tensor as its
    ``features_extractor`` entry (else the extractors are not shared:
    VALUE_UNSUPPORTED). Returns (the state, None) when nothing was missing.
    """
    import torch

    missing = missing_aliases(state)
    if not missing:
        return dict(state), None
    out = dict(state)
    for name in missing:
        out[name] = state[_BASE + name.split(".", 1)[1]]
    for a in ALIASES:
        for k in state:
            if isinstance(k, str) and k.startswith(a):
                base = state.get(_BASE + k[len(a) :])
                if base is None or not torch.equal(torch.as_tensor(state[k]), torch.as_tensor(base)):
                    raise RlarchiveError(
                        "VALUE_UNSUPPORTED",
                        f"the policy names {k} but its features_extractor differs: the extractors are not shared, "
                        "and the weights do not describe one layout",
                    )
    note = (
        "the policy holds one features extractor shared by actor and critic (Stable-Baselines3 before 1.7, no "
        "pi_features_extractor weights): built as SB3 1.7 and later build a shared extractor, "
        "every weight loaded from features_extractor.*; save it again to write the current layout"
    )
    return out, note


def for_model(model: Any, params: Mapping[str, Any]) -> Mapping[str, Any]:
    """``params`` (tensor groups by name) with the policy state completed by :func:`complete` when ``model``'s
    policy registers a shared extractor under its other names, with a ``LoadWarning`` saying so."""
    import warnings

    from .keys import LoadWarning

    state = params.get("policy")
    expected = getattr(getattr(model, "policy", None), "state_dict", None)
    if not isinstance(state, Mapping) or expected is None:
        return params
    if not any(k.startswith(ALIASES) for k in expected()):
        return params
    state, note = complete(state)
    if note is None:
        return params
    warnings.warn(note, LoadWarning, stacklevel=6)
    return dict(params, policy=state)
