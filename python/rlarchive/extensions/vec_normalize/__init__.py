"""Extension ``RLA_vec_normalize``: observation and return normalisation statistics.

Agents trained behind Stable-Baselines3's ``VecNormalize`` act on normalised
observations; the statistics travel in the archive as one extension member,
``extensions/RLA_vec_normalize/vec_normalize.json`` (values and tensors, no
pickle; ``spec/extensions/RLA_vec_normalize.md``). This module holds the
statistics (:class:`Statistics`), the member's structural checks
(:func:`check`, spec §3, ``EXTENSION_INVALID``), and the conversion between
the statistics and the member's value. The normalisation is
:meth:`Statistics.normalize_obs` (spec §4).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import RlarchiveError, esc, members_pointer

if TYPE_CHECKING:
    from .. import Content

__all__ = [
    "EXTENSION",
    "MEMBER",
    "KEY",
    "GROUP",
    "Stats",
    "Statistics",
    "check",
    "check_content",
    "check_returns",
    "from_value",
    "to_value",
]

#: The extension's name, its one member, the member's top-level key, and the
#: tensor group that receives its arrays above ``INLINE_ARRAY_BYTES``.
EXTENSION = "RLA_vec_normalize"
MEMBER = "extensions/RLA_vec_normalize/vec_normalize.json"
KEY = "vec_normalize"
GROUP = "RLA_vec_normalize"

_FLAGS = ("norm_obs", "norm_reward", "training")
_FLOATS = ("clip_obs", "clip_reward", "epsilon", "gamma")
#: The keys of the value in the order of spec §3's table, the order they are checked in
#: (``returns``, the last, is OPTIONAL: the others are REQUIRED).
_ORDER = (
    "norm_obs",
    "norm_reward",
    "clip_obs",
    "clip_reward",
    "epsilon",
    "gamma",
    "training",
    "obs",
    "obs_keys",
    "ret",
    "returns",
)
_REQUIRED = _ORDER[:-1]
_KEYS = set(_ORDER)


@dataclass(frozen=True)
class Stats:
    """Running statistics: float64 ``mean`` and ``var`` of one shape, and ``count``."""

    mean: np.ndarray
    var: np.ndarray
    count: float


@dataclass(frozen=True)
class Statistics:
    """What ``VecNormalize`` keeps (spec RLA_vec_normalize §3).

    ``obs`` is one :class:`Stats` for a Box observation space, a map of key to
    :class:`Stats` for a Dict one (``obs_keys`` then lists the keys
    normalised, in order), or None when observations are not normalised.
    ``returns`` is the running discounted return of each environment that
    feeds ``ret`` (spec §4.1), float64 of shape ``[num_envs]``, or None when
    it is not known (spec §3 rule 5).
    """

    norm_obs: bool
    norm_reward: bool
    clip_obs: float
    clip_reward: float
    epsilon: float
    gamma: float
    training: bool
    obs: Stats | Mapping[str, Stats] | None
    obs_keys: list[Any] | None
    ret: Stats
    returns: np.ndarray | None = None

    def normalize_obs(self, obs: Any) -> Any:
        """Spec §4 (SB3's ``VecNormalize.normalize_obs``): (obs − mean) / √(var + ε) in float64, clipped, as float32.

        ``obs`` is one observation or a batch (an array, or a dict of arrays
        for a Dict space); keys not in ``obs_keys`` are returned unchanged.
        """
        if not self.norm_obs or self.obs is None:
            return obs
        if isinstance(self.obs, Mapping):
            out = dict(obs)
            for key in self.obs_keys or ():
                out[key] = self._one(np.asarray(obs[key]), self.obs[key])
            return out
        return self._one(np.asarray(obs), self.obs)

    def normalize_reward(self, reward: Any) -> Any:
        """Spec §4: the reward divided by the return's standard deviation, clipped (as in training)."""
        if not self.norm_reward:
            return reward
        r = np.asarray(reward, dtype=np.float64) / np.sqrt(self.ret.var + self.epsilon)
        return np.clip(r, -self.clip_reward, self.clip_reward)

    def _one(self, obs: np.ndarray, s: Stats) -> np.ndarray:
        x = (obs.astype(np.float64) - s.mean) / np.sqrt(s.var + self.epsilon)
        out: np.ndarray = np.clip(x, -self.clip_obs, self.clip_obs).astype(np.float32)
        return out


# -- the member's structure (spec §3), checked on the parsed, value-checked JSON --------


def _fail(msg: str, ptr: str) -> RlarchiveError:
    return RlarchiveError("EXTENSION_INVALID", msg, member=MEMBER, pointer=ptr)


def _is_float(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    return isinstance(v, dict) and v.get("$type") == "float"


def _stats_shape(v: Any, ptr: str) -> list[Any]:
    """Check STATS (``{"mean", "var", "count"}``) and return the arrays' shape."""
    if not isinstance(v, dict) or "$type" in v or set(v) != {"mean", "var", "count"}:
        raise _fail(
            "statistics must be a map with exactly mean, var and count",
            members_pointer(v, ptr, ("mean", "var", "count")),
        )
    shapes = []
    for k in ("mean", "var"):
        a = v[k]
        if not (isinstance(a, dict) and a.get("$type") == "ndarray" and a.get("dtype") == "F64"):
            raise _fail(f"{k} must be an F64 ndarray", f"{ptr}/{k}")
        shapes.append(list(a["shape"]))
    if shapes[0] != shapes[1]:
        raise _fail(f"mean has shape {shapes[0]} and var {shapes[1]}", f"{ptr}/var")
    if not _is_float(v["count"]):
        raise _fail("count must be a float", f"{ptr}/count")
    return shapes[0]


def _observation_space(data: Mapping[str, Any] | None) -> dict[str, Any] | None:
    sp = (data or {}).get("observation_space")
    return sp if isinstance(sp, dict) and sp.get("$type") == "space" else None


def check(value: Any, data: Mapping[str, Any] | None = None, used: Sequence[str] = ()) -> None:
    """Check the value under ``vec_normalize`` (spec §3, in the order of spec §5); ``data`` is the archive's raw ``data`` object, ``used`` its extensions.

    Raises:
        RlarchiveError: EXTENSION_INVALID with the JSON Pointer of the offending value.
    """
    base = "/" + KEY
    if not isinstance(value, dict) or "$type" in value:
        raise _fail("the statistics must be a map", base)
    for k in _REQUIRED:  # spec §11.2: the object before its members
        if k not in value:
            raise _fail(f"the key {k!r} is missing", base)
    for k in value:
        if k not in _KEYS:
            raise _fail(f"unknown key {k!r}", f"{base}/{esc(k)}")
    for k in _ORDER[:7]:  # the members in the order of the table
        if k in _FLAGS and not isinstance(value[k], bool):
            raise _fail(f"{k} must be a boolean", f"{base}/{k}")
        if k in _FLOATS and not _is_float(value[k]):
            raise _fail(f"{k} must be a float", f"{base}/{k}")
    obs, keys = value["obs"], value["obs_keys"]
    if obs is not None and not (isinstance(obs, dict) and "$type" not in obs):
        raise _fail("obs must be null or a map", f"{base}/obs")
    if obs is None and value["norm_obs"]:
        raise _fail("norm_obs is true but there are no observation statistics", f"{base}/obs")
    if keys is not None:
        if not isinstance(keys, list):
            raise _fail("obs_keys must be null or a list of strings", f"{base}/obs_keys")
        for i, k in enumerate(keys):
            if not isinstance(k, str):
                raise _fail("obs_keys must be null or a list of strings", f"{base}/obs_keys/{i}")
            if k in keys[:i]:
                raise _fail(f"obs_keys lists {k!r} twice", f"{base}/obs_keys/{i}")
    if obs is None:
        if keys is not None:
            raise _fail("obs_keys must be null when obs is null", f"{base}/obs_keys")
    else:
        _check_obs(obs, keys, _observation_space(data), base)
    if _stats_shape(value["ret"], f"{base}/ret") != []:
        raise _fail("the return statistics must be 0-dimensional", f"{base}/ret/mean")
    if "returns" in value:
        r = value["returns"]
        if not (isinstance(r, dict) and r.get("$type") == "ndarray" and r.get("dtype") == "F64"):
            raise _fail("returns must be an F64 ndarray", f"{base}/returns")
        if len(r["shape"]) != 1 or r["shape"][0] < 1:
            raise _fail(
                f"returns must have one element per environment (shape [N], N >= 1), not shape {r['shape']}",
                f"{base}/returns",
            )


def check_content(content: Content, value: Any) -> None:
    """Spec §5 step 6, after :func:`check`: every element of ``returns`` is finite (element bytes).

    ``content`` (:class:`rlarchive.extensions.Content`) gives the referenced tensors.

    Raises:
        RlarchiveError: EXTENSION_INVALID at ``/vec_normalize/returns``.
    """
    from ...values import Decoder

    if "returns" in value:
        check_returns(Decoder(content.tensor_array, "neutral").decode(value["returns"]))


def check_returns(returns: np.ndarray) -> None:
    """Spec §3 rule 5 on a decoded ``returns``: every element finite.

    Raises:
        RlarchiveError: EXTENSION_INVALID at ``/vec_normalize/returns``.
    """
    bad = np.flatnonzero(~np.isfinite(returns))
    if bad.size:
        raise _fail(
            f"the running return of environment {int(bad[0])} is {returns[bad[0]]}, not finite", f"/{KEY}/returns"
        )


def _check_obs(obs: dict[str, Any], keys: list[Any] | None, space: dict[str, Any] | None, base: str) -> None:
    """``obs`` in the form ``obs_keys`` gives it, then both against the data's observation space (spec §3 rules 3-4)."""
    kind = space.get("kind") if space is not None else None
    if keys is None:  # one observation's statistics; a map of them comes with obs_keys
        shape = _stats_shape(obs, f"{base}/obs")
        if kind == "dict":
            raise _fail("a Dict observation space needs statistics per key (obs_keys)", f"{base}/obs_keys")
        box_shape = list(space.get("shape", [])) if space is not None and kind == "box" else None
        if box_shape is not None and box_shape != shape:
            raise _fail(f"the statistics have shape {shape}, the observation space {box_shape}", f"{base}/obs/mean")
        return
    if list(obs) != keys:
        raise _fail(
            f"obs must be a map with exactly the keys of obs_keys {keys}, in order",
            members_pointer(obs, f"{base}/obs", keys),
        )
    shapes = [_stats_shape(obs[k], f"{base}/obs/{esc(k)}") for k in keys]
    if space is None:
        return
    if kind != "dict":
        raise _fail(f"obs_keys given for a {kind} observation space", f"{base}/obs_keys")
    sub = dict(space.get("spaces", []))
    for i, (k, shape) in enumerate(zip(keys, shapes)):
        if k not in sub:
            raise _fail(f"{k!r} is not a key of the observation space", f"{base}/obs_keys/{i}")
        if sub[k].get("kind") == "box" and list(sub[k].get("shape", [])) != shape:
            raise _fail(
                f"the statistics of {k!r} have shape {shape}, the space {sub[k].get('shape')}",
                f"{base}/obs/{esc(k)}/mean",
            )


# -- value <-> statistics -----------------------------------------------------------------


def _stats(v: Mapping[str, Any]) -> Stats:
    return Stats(np.array(v["mean"], np.float64), np.array(v["var"], np.float64), float(v["count"]))


def from_value(v: Mapping[str, Any]) -> Statistics:
    """The statistics of a checked, decoded value (arrays as NumPy arrays)."""
    obs = v["obs"]
    o: Stats | dict[str, Any] | None
    if obs is None:
        o = None
    elif v["obs_keys"] is None:
        o = _stats(obs)
    else:
        o = {k: _stats(obs[k]) for k in v["obs_keys"]}
    return Statistics(
        norm_obs=bool(v["norm_obs"]),
        norm_reward=bool(v["norm_reward"]),
        clip_obs=float(v["clip_obs"]),
        clip_reward=float(v["clip_reward"]),
        epsilon=float(v["epsilon"]),
        gamma=float(v["gamma"]),
        training=bool(v["training"]),
        obs=o,
        obs_keys=list(v["obs_keys"]) if v["obs_keys"] is not None else None,
        ret=_stats(v["ret"]),
        returns=np.array(v["returns"], np.float64) if "returns" in v else None,
    )


def _stats_value(s: Stats) -> dict[str, Any]:
    count = float(s.count)
    if not math.isfinite(count):
        raise RlarchiveError("WRITE_INVALID", "a statistics count must be finite")
    return {
        "mean": np.array(s.mean, np.float64, order="C"),
        "var": np.array(s.var, np.float64, order="C"),
        "count": count,
    }


def _returns_value(returns: Any) -> np.ndarray:
    r = np.array(returns, np.float64, order="C")
    if r.ndim != 1 or r.size < 1 or not np.all(np.isfinite(r)):
        raise RlarchiveError(
            "WRITE_INVALID", f"the running return must be one finite number per environment, not {r.tolist()!r}"
        )
    return r


def to_value(stats: Statistics) -> dict[str, Any]:
    """The member's value for ``stats`` (Python objects for :class:`rlarchive.values.Encoder`).

    ``returns`` is written when ``stats`` has it (spec §3 rule 5).

    Raises:
        RlarchiveError: WRITE_INVALID for a count or a running return that is not finite.
    """
    obs: Any
    if stats.obs is None:
        obs = None
    elif isinstance(stats.obs, Mapping):
        obs = {k: _stats_value(stats.obs[k]) for k in stats.obs_keys or list(stats.obs)}
    else:
        obs = _stats_value(stats.obs)
    keys = list(stats.obs_keys or list(stats.obs)) if isinstance(stats.obs, Mapping) else None
    value: dict[str, Any] = {
        "norm_obs": bool(stats.norm_obs),
        "norm_reward": bool(stats.norm_reward),
        "clip_obs": float(stats.clip_obs),
        "clip_reward": float(stats.clip_reward),
        "epsilon": float(stats.epsilon),
        "gamma": float(stats.gamma),
        "training": bool(stats.training),
        "obs": obs,
        "obs_keys": keys,
        "ret": _stats_value(stats.ret),
    }
    if stats.returns is not None:
        value["returns"] = _returns_value(stats.returns)
    return value
