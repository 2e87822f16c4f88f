"""Read Stable-Baselines3's ``vecnormalize.pkl`` without running it.

``VecNormalize.save`` pickles the wrapper object (its ``__dict__`` without the
wrapped environment): running mean, variance and count of the observations
(one ``RunningMeanStd`` per key for Dict observations) and of the discounted
return, and the settings (``clip_obs``, ``clip_reward``, ``epsilon``,
``gamma``, ``norm_obs``, ``norm_reward``, ``norm_obs_keys``, ``training``).
It leaves out the running discounted return ``returns`` (``__getstate__``
drops it; ``VecNormalize.load`` starts it at zero): a pickle that holds it
all the same gives it too. A live wrapper (:func:`from_wrapper`) always has
it, and :func:`wrap` puts it back (spec RLA_vec_normalize §4.1).

:func:`read` loads the file with the restricted unpickler, where the wrapper
and each ``RunningMeanStd`` arrive as recorded calls with their ``BUILD``
state (nothing is called or imported), checks the exact class names and the
state, and returns :class:`rlarchive.extensions.vec_normalize.Statistics`: the value of
the extension ``RLA_vec_normalize`` (``spec/extensions/RLA_vec_normalize.md``
§3). The normalisation itself is :meth:`Statistics.normalize_obs`, SB3's
formula. :func:`wrap` rebuilds the wrapper around a given environment, and
:func:`write` a file ``VecNormalize.load`` accepts (from the archive's spaces
alone, with portable pickles NumPy 1.x and 2.x read).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from contextlib import nullcontext
from typing import Any

import numpy as np

from .. import spaces
from ..errors import RlarchiveError
from ..extensions.vec_normalize import Statistics, Stats
from ..unpickle import Array, GlobalName, NotNeutral, Scalar, Unknown, restricted_loads
from ..unpickle.budget import ImportBudget, Source, budget_for, source_name

__all__ = ["Stats", "Statistics", "read", "for_legacy_her", "from_wrapper", "wrap", "returns_note", "write"]

_VEC_NORMALIZE = GlobalName("stable_baselines3.common.vec_env.vec_normalize", "VecNormalize")
_RUNNING_MEAN_STD = GlobalName("stable_baselines3.common.running_mean_std", "RunningMeanStd")
_MAX_PKL_BYTES = 1 << 30


def _fail(msg: str) -> RlarchiveError:
    return RlarchiveError("IMPORT_INVALID", f"not a VecNormalize file: {msg}")


def _number(x: Any, what: str) -> float:
    if isinstance(x, Scalar):
        x = x.value.item()
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise _fail(f"{what} is not a number")
    return float(x)


def _array(x: Any, what: str) -> np.ndarray:
    if isinstance(x, Array) and x.array is not None:
        out: np.ndarray = np.asarray(x.array, dtype=np.float64).copy()
        return out
    if isinstance(x, Scalar):
        return np.asarray(x.value, dtype=np.float64)
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return np.asarray(float(x))
    raise _fail(f"{what} is not an array")


def _stats(x: Any, what: str) -> Stats:
    if not (isinstance(x, Unknown) and x.func == _RUNNING_MEAN_STD and x.has_state and isinstance(x.state, dict)):
        raise _fail(f"{what} is not a RunningMeanStd")
    mean, var = _array(x.state.get("mean"), f"{what}.mean"), _array(x.state.get("var"), f"{what}.var")
    if mean.shape != var.shape:
        raise _fail(f"{what}: mean and var differ in shape")
    count = _number(x.state.get("count"), f"{what}.count")
    if not math.isfinite(count) or np.any(var < 0):
        raise _fail(f"{what}: a negative variance or an infinite count")
    return Stats(mean, var, count)


def _returns(x: Any) -> np.ndarray | None:
    """The pickled running return, when the pickle holds one (SB3's own never does)."""
    if x is None:
        return None
    r = _array(x, "returns")
    if r.ndim != 1 or r.size < 1 or not np.all(np.isfinite(r)):
        raise _fail("returns must be one finite number per environment")
    return r


def read(source: Source | bytes, *, budget: int | ImportBudget | None = None) -> Statistics:
    """The statistics of a ``vecnormalize.pkl`` (a path, an open binary file or the bytes), read with the restricted
    unpickler.

    Raises:
        RlarchiveError: IMPORT_INVALID for anything but a VecNormalize pickle
            with its statistics; LIMIT_EXCEEDED past the budget; IO_ERROR when
            the file cannot be read.
    """
    if isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
        budget = budget if isinstance(budget, ImportBudget) else ImportBudget(budget or max(1 << 28, 4 * len(raw)))
    else:
        budget = budget_for(source, budget)
        try:
            with open(os.fspath(source), "rb") if isinstance(source, (str, os.PathLike)) else nullcontext(source) as f:
                raw = f.read(_MAX_PKL_BYTES + 1)
        except OSError as e:
            raise RlarchiveError("IO_ERROR", f"cannot read {source_name(source)}: {e.strerror}") from None
        if len(raw) > _MAX_PKL_BYTES:
            raise RlarchiveError("LIMIT_EXCEEDED", f"{source_name(source)} is larger than {_MAX_PKL_BYTES} bytes")
    budget.charge(len(raw), "the VecNormalize file")
    try:
        top = restricted_loads(raw, budget=budget)
    except NotNeutral as e:
        raise _fail(e.reason) from None
    if not (isinstance(top, Unknown) and top.func == _VEC_NORMALIZE and top.has_state and isinstance(top.state, dict)):
        raise _fail("the pickle is not a VecNormalize object")
    st = top.state
    flags = {k: st.get(k) for k in ("norm_obs", "norm_reward", "training")}
    if not all(isinstance(v, bool) for v in flags.values()):
        raise _fail("norm_obs, norm_reward and training must be booleans")
    keys = st.get("norm_obs_keys")
    obs_rms = st.get("obs_rms")
    obs: Stats | dict[str, Stats] | None
    if isinstance(obs_rms, dict):
        if not all(isinstance(k, str) for k in obs_rms):
            raise _fail("obs_rms has a key that is not a string")
        obs = {k: _stats(v, f"obs_rms[{k!r}]") for k, v in obs_rms.items()}
        if keys is None:
            keys = list(obs)
        if not (isinstance(keys, list) and keys == [k for k in keys if k in obs] and set(keys) == set(obs)):
            raise _fail("norm_obs_keys do not name the observation statistics")
    else:
        obs = _stats(obs_rms, "obs_rms") if obs_rms is not None else None
        keys = None
    return Statistics(
        norm_obs=bool(flags["norm_obs"]),
        norm_reward=bool(flags["norm_reward"]),
        clip_obs=_number(st.get("clip_obs"), "clip_obs"),
        clip_reward=_number(st.get("clip_reward"), "clip_reward"),
        epsilon=_number(st.get("epsilon"), "epsilon"),
        gamma=_number(st.get("gamma"), "gamma"),
        training=bool(flags["training"]),
        obs=obs,
        obs_keys=keys,
        ret=_stats(st.get("ret_rms"), "ret_rms"),
        returns=_returns(st.get("returns")),
    )


#: The keys SB3 1.0's ``ObsDictWrapper`` gave HER's model, concatenated in this order (``convert_dict``).
LEGACY_HER_KEYS = ("observation", "desired_goal")


def for_legacy_her(stats: Statistics, data: Mapping[str, Any]) -> tuple[Statistics, str | None]:
    """The statistics as they apply to a model of SB3 1.0's HER, and a note saying so; ``stats`` unchanged and no
    note for any other model (Annex B.9).

    Until SB3 1.1, HER trained its model on a Dict environment through ``ObsDictWrapper``: ``VecNormalize``
    normalised each key of the Dict, then the wrapper gave the model ``observation`` and ``desired_goal``
    concatenated, and the model's observation space is that flat Box (its data holds ``model_class`` and
    ``online_sampling``). The normalisation is elementwise, so the statistics of the two keys concatenated, in
    that order, normalise the model's observation exactly as the wrapper chain did; ``achieved_goal``'s, which
    never reached the model, are left out. Only when the shapes agree and both keys were counted alike (one
    ``VecNormalize`` updates every key at each step): anything else is left as it is for the extension's rules.
    """
    space = data.get("observation_space")
    if not (isinstance(stats.obs, Mapping) and isinstance(space, spaces.Box) and "model_class" in data):
        return stats, None
    if "online_sampling" not in data or not all(k in stats.obs for k in LEGACY_HER_KEYS):
        return stats, None
    parts = [stats.obs[k] for k in LEGACY_HER_KEYS]
    size = sum(p.mean.size for p in parts)
    if any(p.mean.ndim != 1 for p in parts) or parts[0].count != parts[1].count or tuple(space.shape) != (size,):
        return stats, None
    flat = Stats(np.concatenate([p.mean for p in parts]), np.concatenate([p.var for p in parts]), parts[0].count)
    note = (
        "VecNormalize statistics of a model of SB3 1.0's HER: those of 'observation' and 'desired_goal' "
        f"concatenated ({size} values), as its ObsDictWrapper concatenated the normalised keys for the model"
    )
    return dataclasses.replace(stats, obs=flat, obs_keys=None), note


def from_wrapper(vn: Any) -> Statistics:
    """The statistics of a live ``VecNormalize`` (the caller's object: its attributes are read, nothing is pickled)."""

    def stats(r: Any) -> Stats:
        return Stats(np.array(r.mean, np.float64), np.array(r.var, np.float64), float(r.count))

    obs_rms = getattr(vn, "obs_rms", None) if vn.norm_obs else None
    keys = getattr(vn, "norm_obs_keys", None)
    obs: Stats | dict[str, Stats] | None
    if isinstance(obs_rms, Mapping):
        keys = list(keys) if keys is not None else list(obs_rms)
        obs = {k: stats(obs_rms[k]) for k in keys}
    else:
        obs = stats(obs_rms) if obs_rms is not None else None
        keys = None
    return Statistics(
        norm_obs=bool(vn.norm_obs),
        norm_reward=bool(vn.norm_reward),
        clip_obs=float(vn.clip_obs),
        clip_reward=float(vn.clip_reward),
        epsilon=float(vn.epsilon),
        gamma=float(vn.gamma),
        training=bool(vn.training),
        obs=obs,
        obs_keys=keys,
        ret=stats(vn.ret_rms),
        returns=np.array(vn.returns, np.float64) if getattr(vn, "returns", None) is not None else None,
    )


def wrap(stats: Statistics, venv: Any) -> Any:
    """A ``VecNormalize`` around ``venv`` (a SB3 ``VecEnv``) holding ``stats``, as ``VecNormalize.load`` would give it.

    The running return is ``stats.returns`` when it has one element per
    environment of ``venv``, else zero for each (as ``VecNormalize.load``
    starts it); :func:`returns_note` says which.
    """
    from stable_baselines3.common.running_mean_std import RunningMeanStd
    from stable_baselines3.common.vec_env import VecNormalize

    def rms(s: Stats) -> Any:
        r = RunningMeanStd(shape=s.mean.shape)
        r.mean, r.var, r.count = s.mean.copy(), s.var.copy(), s.count
        return r

    vn = VecNormalize(
        venv,
        training=stats.training,
        norm_obs=stats.norm_obs,
        norm_reward=stats.norm_reward,
        clip_obs=stats.clip_obs,
        clip_reward=stats.clip_reward,
        gamma=stats.gamma,
        epsilon=stats.epsilon,
        norm_obs_keys=list(stats.obs_keys) if stats.obs_keys is not None else None,
    )
    if isinstance(stats.obs, Mapping):
        vn.obs_rms = {k: rms(v) for k, v in stats.obs.items()}
    elif stats.obs is not None:
        vn.obs_rms = rms(stats.obs)
    vn.ret_rms = rms(stats.ret)
    if returns_note(stats, vn.num_envs) is None:
        vn.returns = np.array(stats.returns, np.float64)
    return vn


def returns_note(stats: Statistics, num_envs: int) -> str | None:
    """None when :func:`wrap` restores ``stats.returns`` for ``num_envs`` environments, else why it starts them at zero."""
    if stats.returns is None:
        return (
            "the archive holds no running return (RLA_vec_normalize returns): it starts at zero, as "
            "VecNormalize.load starts it, so the return statistics drift from the uninterrupted run's"
        )
    if stats.returns.shape != (num_envs,):
        return (
            f"the archive's running return is for {stats.returns.size} environments and the VecEnv has "
            f"{num_envs}: it starts at zero, as VecNormalize.load starts it"
        )
    return None


def write(
    stats: Statistics,
    path: str | os.PathLike[str],
    *,
    venv: Any = None,
    observation_space: Any = None,
    action_space: Any = None,
) -> None:
    """Write ``stats`` as ``VecNormalize.save`` does, atomically, for ``VecNormalize.load(path, venv)``.

    The wrapper is built around ``venv`` when given, else around a stand-in
    environment with the given (gymnasium) spaces, which ``VecNormalize.load``
    replaces by the caller's environment. Like ``VecNormalize.save``, the
    file holds the wrapper without its environment; it is written with the
    portable pickler (:mod:`rlarchive.unpickle.pickler`).
    """
    from ..unpickle import pickler
    from ..writer import atomic_file

    if venv is None:
        if observation_space is None or action_space is None:
            raise ValueError("write needs venv, or both observation_space and action_space")
        venv = stand_in_env(observation_space, action_space)
    data = pickler.dumps(wrap(stats, venv))
    with atomic_file(path) as f:
        f.write(data)


def stand_in_env(observation_space: Any, action_space: Any) -> Any:
    """A one-environment VecEnv with these spaces that never steps (only its spaces are used)."""
    import gymnasium
    from stable_baselines3.common.vec_env import DummyVecEnv

    class _Spaces(gymnasium.Env):
        def __init__(self) -> None:
            self.observation_space = observation_space
            self.action_space = action_space

    return DummyVecEnv([_Spaces])
