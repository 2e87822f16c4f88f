"""What the Stable-Baselines3 bridge records about where an agent comes from (spec/metadata.md §5).

:func:`from_model` reads a live model (its environment's id and wrappers, its
run's size and seed, the installed library versions); :func:`from_data` and
:func:`from_system_info` read what a saved zip holds. Every value is checked
against its format and left out when it does not fit: provenance is recorded
where known, never guessed.
"""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Mapping
from typing import Any

from .. import metadata as keys

__all__ = ["from_model", "from_data", "from_system_info", "wrappers_of", "env_id_of", "merged"]

#: system_info.txt labels (SB3's ``get_system_info``) and the ``versions.NAME`` they give.
_SYSTEM_INFO_NAMES = {
    "Python": "python",
    "Stable-Baselines3": "stable_baselines3",
    "PyTorch": "torch",
    "Numpy": "numpy",
    "Gymnasium": "gymnasium",
}


def _put(out: dict[str, str], key: str, value: Any) -> None:
    """Record ``value`` under ``key`` when it fits the key's format (else leave it out)."""
    if value is None or isinstance(value, bool):
        return
    text = str(value)
    if keys.check_value(key, text) is None:
        out[key] = text


def from_data(data: Mapping[str, Any]) -> dict[str, str]:
    """``n_envs``, ``num_timesteps`` and ``seed`` from an SB3 model's data (the decoded ``data`` member)."""
    out: dict[str, str] = {}
    for key in (keys.N_ENVS, keys.NUM_TIMESTEPS, keys.SEED):
        v = data.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            _put(out, key, v)
    return out


def from_system_info(text: str) -> dict[str, str]:
    """``versions.*`` from the ``system_info.txt`` SB3 writes (lines ``- NAME: VERSION``; the OS line has more after it)."""
    out: dict[str, str] = {}
    for line in text.splitlines()[:64]:
        label, sep, value = line.strip().lstrip("-").strip().partition(":")
        name = _SYSTEM_INFO_NAMES.get(label.strip())
        if sep and name is not None:
            _put(out, keys.VERSIONS_PREFIX + name, value.strip().split(" ")[0])
    return out


def _installed_versions(model: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    _put(out, "versions.python", platform.python_version())
    for module, name in (
        ("stable_baselines3", "stable_baselines3"),
        ("sb3_contrib", "sb3_contrib"),
        ("torch", "torch"),
        ("gymnasium", "gymnasium"),
        ("numpy", "numpy"),
    ):
        if name == "sb3_contrib" and not type(model).__module__.startswith("sb3_contrib"):
            continue  # recorded only when the model is one of its algorithms
        mod = sys.modules.get(module)
        if mod is not None:
            _put(out, keys.VERSIONS_PREFIX + name, getattr(mod, "__version__", None))
    return out


def _frame_stack(w: Any) -> dict[str, Any] | None:
    stacked = getattr(w, "stacked_obs", None)
    n = getattr(stacked, "n_stack", None)
    if not isinstance(n, int):
        return None
    subs = getattr(stacked, "sub_stacked_observations", None)
    if isinstance(subs, Mapping):
        order: Any = {str(k): ("first" if getattr(s, "channels_first", False) else "last") for k, s in subs.items()}
    else:
        order = "first" if getattr(stacked, "channels_first", False) else "last"
    return {"name": "VecFrameStack", "n_stack": n, "channels_order": order}


def wrappers_of(venv: Any) -> list[dict[str, Any]]:
    """The acting-relevant wrappers of a ``VecEnv`` chain (frame stacking, image transposition,
    normalisation), nearest the environment first (spec/metadata.md §2)."""
    try:
        from stable_baselines3.common.vec_env import VecEnvWrapper, VecFrameStack, VecNormalize, VecTransposeImage
    except ImportError:
        return []
    chain: list[Any] = []
    env = venv
    while isinstance(env, VecEnvWrapper) and len(chain) < keys.MAX_WRAPPERS:
        chain.append(env)
        env = env.venv
    out: list[dict[str, Any]] = []
    for w in reversed(chain):
        if isinstance(w, VecFrameStack):
            entry = _frame_stack(w)
            if entry is not None:
                out.append(entry)
        elif isinstance(w, VecTransposeImage):
            out.append({"name": "VecTransposeImage"})
        elif isinstance(w, VecNormalize):
            out.append({"name": "VecNormalize", "norm_obs": bool(w.norm_obs), "norm_reward": bool(w.norm_reward)})
    return out


def env_id_of(venv: Any) -> str | None:
    """The registry id of the first environment under a ``VecEnv`` chain (its ``spec.id``), or None."""
    env = venv
    for _ in range(keys.MAX_WRAPPERS):
        inner = getattr(env, "venv", None)
        if inner is None:
            break
        env = inner
    spec = None
    try:
        envs = getattr(env, "envs", None)
        if isinstance(envs, list) and envs:
            spec = getattr(envs[0], "spec", None)
        elif hasattr(env, "get_attr"):
            spec = env.get_attr("spec", [0])[0]
    except Exception:  # a subprocess environment that cannot answer: no id
        return None
    env_id = getattr(spec, "id", None)
    return env_id if isinstance(env_id, str) and keys.check_value(keys.ENV_ID, env_id) is None else None


def from_model(model: Any, vec_normalize: Any = None) -> dict[str, str]:
    """Everything :func:`rlarchive.sb3.save` records about a live model (spec/metadata.md §5)."""
    out: dict[str, str] = {}
    venv = model.get_env() if hasattr(model, "get_env") else None
    _put(out, keys.ENV_ID, env_id_of(venv) if venv is not None else None)
    for key in (keys.N_ENVS, keys.NUM_TIMESTEPS, keys.SEED):
        v = getattr(model, key, None)
        if isinstance(v, int) and not isinstance(v, bool):
            _put(out, key, v)
    out.update(_installed_versions(model))
    wrappers = wrappers_of(venv) if venv is not None else []
    if vec_normalize is not None and not any(w["name"] == "VecNormalize" for w in wrappers):
        wrappers.append(_vec_normalize_entry(vec_normalize))
    if wrappers:
        _put(out, keys.WRAPPERS, json.dumps(wrappers, separators=(",", ":")))
    return out


def _vec_normalize_entry(stats: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": "VecNormalize"}
    for k in ("norm_obs", "norm_reward"):
        if isinstance(getattr(stats, k, None), bool):
            entry[k] = getattr(stats, k)
    return entry


def vec_normalize_wrappers(stats: Any) -> dict[str, str]:
    """The ``wrappers`` entry for statistics read from a ``vecnormalize.pkl`` (where the chain is not known)."""
    return {keys.WRAPPERS: json.dumps([_vec_normalize_entry(stats)], separators=(",", ":"))}


def merged(found: Mapping[str, str], given: Mapping[str, Any] | None) -> dict[str, str]:
    """``found`` with the caller's ``given`` metadata over it (keys and values as strings).

    Raises:
        RlarchiveError: WRITE_INVALID when a given value of a defined key breaks its format.
    """
    from ..errors import RlarchiveError

    out = dict(found)
    for k, v in (given or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise RlarchiveError(
                "WRITE_INVALID", f"metadata maps strings to strings, not {type(k).__name__} to {type(v).__name__}"
            )
        problem = keys.check_value(k, v)
        if problem is not None:
            raise RlarchiveError("WRITE_INVALID", f"the metadata would break spec/metadata.md: {problem.message}")
        out[k] = v
    return out
