"""Extension ``RLA_replay_buffer``: an off-policy algorithm's replay buffer, so that training can go on.

The buffer travels as one extension member,
``extensions/RLA_replay_buffer/replay_buffer.json`` (values, its large arrays
as tensors of the group ``RLA_replay_buffer``; no pickle;
``spec/extensions/RLA_replay_buffer.md``). This module holds the member's
checks: :func:`check`, the structure (spec §3, §4 rules 1-7, on the parsed
JSON alone), and :func:`check_content`, the rules that read element bytes
(spec §4 rules 8-9: the spaces against the data's, the HER indices; never
the bytes of observations, actions, rewards, dones or timeouts). The reader's
view is :class:`ReplayBufferData` (:meth:`rlarchive.Archive.replay_buffer`),
whose referenced arrays are zero-copy views on the archive.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import RlarchiveError, esc, members_pointer
from ...limits import MAX_REPLAY_N_STEPS
from ...values import Decoder

if TYPE_CHECKING:
    from .. import Content

__all__ = [
    "EXTENSION",
    "MEMBER",
    "KEY",
    "GROUP",
    "CLASSES",
    "STRATEGIES",
    "HerState",
    "NStepState",
    "ReplayBufferData",
    "check",
    "check_content",
    "from_value",
]

#: The extension's name, its one member, the member's top-level key, and the
#: tensor group that receives its arrays above ``INLINE_ARRAY_BYTES``.
EXTENSION = "RLA_replay_buffer"
MEMBER = "extensions/RLA_replay_buffer/replay_buffer.json"
KEY = "replay_buffer"
GROUP = "RLA_replay_buffer"

#: The buffer classes (Stable-Baselines3's names) and HER's goal selection strategies.
CLASSES = ("ReplayBuffer", "DictReplayBuffer", "HerReplayBuffer", "NStepReplayBuffer")
STRATEGIES = ("future", "final", "episode")

_KEYS = (
    "class",
    "buffer_size",
    "n_envs",
    "pos",
    "full",
    "optimize_memory_usage",
    "handle_timeout_termination",
    "observation_space",
    "action_space",
    "observations",
    "next_observations",
    "actions",
    "rewards",
    "dones",
    "timeouts",
    "her",
    "n_step",
)
_HER_KEYS = (
    "n_sampled_goal",
    "goal_selection_strategy",
    "copy_info_dict",
    "ep_start",
    "ep_length",
    "current_ep_start",
    "infos",
)
_NSTEP_KEYS = ("n_steps", "gamma")
_FLAGS = ("full", "optimize_memory_usage", "handle_timeout_termination")
_ROWS = ("rewards", "dones", "timeouts")  # F32 [buffer_size, n_envs]
_DICT_CLASSES = ("DictReplayBuffer", "HerReplayBuffer")
_GOAL_KEYS = ("achieved_goal", "desired_goal")


@dataclass(frozen=True)
class HerState:
    """What ``HerReplayBuffer`` keeps besides a ``DictReplayBuffer``'s arrays (spec RLA_replay_buffer §3)."""

    n_sampled_goal: int
    goal_selection_strategy: str
    copy_info_dict: bool
    ep_start: np.ndarray
    ep_length: np.ndarray
    current_ep_start: np.ndarray
    infos: list[Any] | None


@dataclass(frozen=True)
class NStepState:
    """``NStepReplayBuffer``'s parameters."""

    n_steps: int
    gamma: float


Observations = np.ndarray | Mapping[str, np.ndarray]


@dataclass(frozen=True)
class ReplayBufferData:
    """A replay buffer as the archive holds it (spec RLA_replay_buffer §3).

    ``buffer_size`` counts rows per environment; arrays are ``[buffer_size,
    n_envs, ...]``. Referenced arrays are zero-copy, read-only views on the
    archive (valid while it is open); rows at or after ``pos`` are unused
    when ``full`` is false. ``observations`` (and ``next_observations``) is a
    map of key to array for a Dict observation space; ``next_observations``
    is None when ``optimize_memory_usage`` is true.
    """

    class_name: str
    buffer_size: int
    n_envs: int
    pos: int
    full: bool
    optimize_memory_usage: bool
    handle_timeout_termination: bool
    observation_space: Any
    action_space: Any
    observations: Observations
    next_observations: Observations | None
    actions: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    timeouts: np.ndarray
    her: HerState | None
    n_step: NStepState | None

    @property
    def size(self) -> int:
        """Rows in use per environment: ``buffer_size`` when full, else ``pos`` (SB3's ``size()``)."""
        return self.buffer_size if self.full else self.pos


# -- the member's structure (spec §3, §4), checked on the parsed, value-checked JSON ------


def _fail(msg: str, ptr: str) -> RlarchiveError:
    return RlarchiveError("EXTENSION_INVALID", msg, member=MEMBER, pointer=ptr)


def _is_int(v: Any) -> bool:
    return type(v) is int  # an integer literal (spec §7.2): not a boolean, not a tagged int


def _is_float(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, (int, float)) or (isinstance(v, dict) and v.get("$type") == "float")


def _is_map(v: Any) -> bool:
    return isinstance(v, dict) and "$type" not in v


def _is_nd(v: Any) -> bool:
    return isinstance(v, dict) and v.get("$type") == "ndarray"


def _is_space(v: Any) -> bool:
    return isinstance(v, dict) and v.get("$type") == "space"


def _exact_keys(v: Any, keys: Sequence[str], ptr: str, what: str) -> None:
    """A plain map with exactly ``keys``: the object first (a missing key), then its first unknown key."""
    if not _is_map(v):
        raise _fail(f"{what} must be a map", ptr)
    for k in keys:
        if k not in v:
            raise _fail(f"{what} lacks the key {k!r}", ptr)
    for k in v:
        if k not in keys:
            raise _fail(f"{what} has the unknown key {k!r}", f"{ptr}/{esc(k)}")


def _int_at_least(v: Any, low: int, ptr: str, name: str) -> int:
    if not _is_int(v) or v < low:
        raise _fail(f"{name} must be an integer >= {low}", ptr)
    result: int = v
    return result


def _check_obs_form(v: Any, ptr: str, name: str) -> None:
    """An ndarray, or a plain map of key to ndarray."""
    if _is_nd(v):
        return
    if not _is_map(v):
        raise _fail(f"{name} must be an ndarray or a map of key to ndarray", ptr)
    for k, a in v.items():
        if not _is_nd(a):
            raise _fail(f"{name}[{k!r}] must be an ndarray", f"{ptr}/{esc(k)}")


def _sub_spaces(space: dict[str, Any]) -> list[Any] | None:
    return [(k, s) for k, s in space["spaces"]] if space.get("kind") == "dict" else None


def _nvec_len(space: dict[str, Any], ptr: str) -> int:
    shape = space["nvec"]["shape"]
    if len(shape) != 1:
        raise _fail(f"a multi_discrete space's nvec must be 1-dimensional, not of shape {shape}", f"{ptr}/nvec")
    result: int = shape[0]
    return result


def _obs_layout(space: dict[str, Any], ptr: str) -> tuple[list[Any], str]:
    """Spec §5: the shape of one observation and its dtype, for a Box, Discrete, MultiDiscrete or MultiBinary space."""
    kind = space.get("kind")
    if kind == "box":
        return list(space["shape"]), space["dtype"]
    if kind == "discrete":
        return [1], space["dtype"]
    if kind == "multi_discrete":
        return [_nvec_len(space, ptr)], space["dtype"]
    if kind == "multi_binary":
        n = space["n"]
        return (list(n) if isinstance(n, list) else [n]), "I8"
    raise _fail(f"a replay buffer does not store observations of a {kind} space", f"{ptr}/kind")


def _action_layout(space: dict[str, Any], ptr: str) -> tuple[int, str]:
    """Spec §5: action_dim and the actions' dtype (F64 stored as F32)."""
    kind = space.get("kind")
    if kind == "box":
        return math.prod(space["shape"]), "F32" if space["dtype"] == "F64" else space["dtype"]
    if kind == "discrete":
        return 1, space["dtype"]
    if kind == "multi_discrete":
        return _nvec_len(space, ptr), space["dtype"]
    if kind == "multi_binary":
        if isinstance(space["n"], list):
            raise _fail("a replay buffer does not store actions of a multi_binary space with an array n", f"{ptr}/n")
        return space["n"], "I8"
    raise _fail(f"a replay buffer does not store actions of a {kind} space", f"{ptr}/kind")


def _shape_is(a: dict[str, Any], shape: list[Any], ptr: str, name: str) -> None:
    if list(a["shape"]) != shape:
        raise _fail(f"{name} has shape {list(a['shape'])}, expected {shape}", ptr)


def _check_observations(
    value: dict[str, Any], key: str, base: str, layout: tuple[Any, ...] | dict[str, Any], is_dict: bool
) -> None:
    """``observations`` or ``next_observations`` (not null): its form, its form against the class, its keys, then each array's shape and dtype."""
    v, ptr = value[key], f"{base}/{key}"
    _check_obs_form(v, ptr, key)
    if _is_map(v) != is_dict:
        raise _fail(
            f"the {key} of a {value['class']} are {'a map of key to ndarray' if is_dict else 'one ndarray'}", ptr
        )
    b, n = value["buffer_size"], value["n_envs"]
    if isinstance(layout, dict):
        if list(v) != list(layout):
            raise _fail(
                f"{key} must have exactly the keys of the observation space {list(layout)}, in order",
                members_pointer(v, ptr, list(layout)),
            )
        arrays = [(a, f"{ptr}/{esc(k)}", f"{key}[{k!r}]", layout[k]) for k, a in v.items()]
    else:
        arrays = [(v, ptr, key, layout)]
    for a, p, name, (shape, dtype) in arrays:
        _shape_is(a, [b, n, *shape], p, name)
        if a["dtype"] != dtype:
            raise _fail(f"{name} has dtype {a['dtype']}, the observation space stores {dtype}", p)


def _check_her(value: dict[str, Any], base: str) -> None:
    """``her``: its own rules (keys, then its members in the order of its table), then against the buffer."""
    her, p = value["her"], f"{base}/her"
    if her is not None:
        _exact_keys(her, _HER_KEYS, p, "her")
        _int_at_least(her["n_sampled_goal"], 0, f"{p}/n_sampled_goal", "n_sampled_goal")
        if her["goal_selection_strategy"] not in STRATEGIES:
            raise _fail(f"goal_selection_strategy must be one of {list(STRATEGIES)}", f"{p}/goal_selection_strategy")
        if not isinstance(her["copy_info_dict"], bool):
            raise _fail("copy_info_dict must be a boolean", f"{p}/copy_info_dict")
        for k in ("ep_start", "ep_length", "current_ep_start"):
            if not _is_nd(her[k]) or her[k]["dtype"] != "I64":
                raise _fail(f"{k} must be an I64 ndarray", f"{p}/{k}")
        infos = her["infos"]
        if infos is not None:
            if not isinstance(infos, list):
                raise _fail("infos must be null or a list of lists", f"{p}/infos")
            for i, row in enumerate(infos):
                if not isinstance(row, list):
                    raise _fail("a row of infos must be a list", f"{p}/infos/{i}")
        if (infos is not None) != her["copy_info_dict"]:
            raise _fail("infos is given exactly when copy_info_dict is true", f"{p}/infos")
    if (her is not None) != (value["class"] == "HerReplayBuffer"):
        raise _fail("her is given exactly for a HerReplayBuffer", p)
    if her is None:
        return
    b, n = value["buffer_size"], value["n_envs"]
    _shape_is(her["ep_start"], [b, n], f"{p}/ep_start", "ep_start")
    _shape_is(her["ep_length"], [b, n], f"{p}/ep_length", "ep_length")
    _shape_is(her["current_ep_start"], [n], f"{p}/current_ep_start", "current_ep_start")
    if her["infos"] is not None:
        if len(her["infos"]) != b:
            raise _fail(f"infos has {len(her['infos'])} rows, expected buffer_size {b}", f"{p}/infos")
        for i, row in enumerate(her["infos"]):
            if len(row) != n:
                raise _fail(f"infos row {i} has {len(row)} items, expected n_envs {n}", f"{p}/infos/{i}")


def check(value: Any, data: Mapping[str, Any] | None = None, used: Sequence[str] = ()) -> None:
    """Check the value under ``replay_buffer`` (spec §4 rules 1-7, in the order and at the places of spec §6); ``data`` is the archive's raw ``data``, ``used`` its extensions.

    The keys first; then the members in the order of the table of spec §3,
    each by its own rules, then against the members before it (spec §11.2).

    Raises:
        RlarchiveError: EXTENSION_INVALID with the JSON Pointer of the offending value.
    """
    base = "/" + KEY
    _exact_keys(value, _KEYS, base, "the replay buffer")
    cls = value["class"]
    if cls not in CLASSES:
        raise _fail(f"class must be one of {list(CLASSES)}", f"{base}/class")
    b = _int_at_least(value["buffer_size"], 1, f"{base}/buffer_size", "buffer_size")
    _int_at_least(value["n_envs"], 1, f"{base}/n_envs", "n_envs")
    if _int_at_least(value["pos"], 0, f"{base}/pos", "pos") >= b:
        raise _fail(f"pos {value['pos']} is not below buffer_size {b}", f"{base}/pos")
    for k in _FLAGS:
        if not isinstance(value[k], bool):
            raise _fail(f"{k} must be a boolean", f"{base}/{k}")
        if k == "optimize_memory_usage" and value[k] and cls != "ReplayBuffer":
            raise _fail(f"a {cls} does not support optimize_memory_usage", f"{base}/{k}")
        if k == "handle_timeout_termination" and value[k] and value["optimize_memory_usage"]:
            raise _fail("optimize_memory_usage and handle_timeout_termination are not both true", f"{base}/{k}")
    is_dict = cls in _DICT_CLASSES
    osp, ptr = value["observation_space"], f"{base}/observation_space"
    if not _is_space(osp):
        raise _fail("observation_space must be a space", ptr)
    subs = _sub_spaces(osp)
    obs_layout: tuple[Any, ...] | dict[str, Any]
    if subs is None:
        obs_layout = _obs_layout(osp, ptr)
    else:
        obs_layout = {k: _obs_layout(s, f"{ptr}/spaces/{i}/1") for i, (k, s) in enumerate(subs)}
    if (subs is not None) != is_dict:
        raise _fail(f"a {cls} {'needs' if is_dict else 'does not take'} a Dict observation space", ptr)
    if cls == "HerReplayBuffer":
        for k in _GOAL_KEYS:
            if k not in obs_layout:
                raise _fail(f"the observation space of a HerReplayBuffer has the key {k!r}", ptr)
    if not _is_space(value["action_space"]):
        raise _fail("action_space must be a space", f"{base}/action_space")
    action_dim, action_dtype = _action_layout(value["action_space"], f"{base}/action_space")
    _check_observations(value, "observations", base, obs_layout, is_dict)
    if value["next_observations"] is not None:
        _check_obs_form(value["next_observations"], f"{base}/next_observations", "next_observations")
    if (value["next_observations"] is None) != value["optimize_memory_usage"]:
        raise _fail("next_observations is null exactly when optimize_memory_usage is true", f"{base}/next_observations")
    if value["next_observations"] is not None:
        _check_observations(value, "next_observations", base, obs_layout, is_dict)
    n = value["n_envs"]
    actions = value["actions"]
    if not _is_nd(actions):
        raise _fail("actions must be an ndarray", f"{base}/actions")
    _shape_is(actions, [b, n, action_dim], f"{base}/actions", "actions")
    if actions["dtype"] != action_dtype:
        raise _fail(f"actions have dtype {actions['dtype']}, the action space stores {action_dtype}", f"{base}/actions")
    for k in _ROWS:
        if not _is_nd(value[k]) or value[k]["dtype"] != "F32":
            raise _fail(f"{k} must be an F32 ndarray", f"{base}/{k}")
        _shape_is(value[k], [b, n], f"{base}/{k}", k)
    _check_her(value, base)
    n_step, p = value["n_step"], f"{base}/n_step"
    if n_step is not None:
        _exact_keys(n_step, _NSTEP_KEYS, p, "n_step")
        if _int_at_least(n_step["n_steps"], 1, f"{p}/n_steps", "n_steps") > MAX_REPLAY_N_STEPS:
            raise RlarchiveError(
                "LIMIT_EXCEEDED",
                f"n_steps {n_step['n_steps']} is above MAX_REPLAY_N_STEPS ({MAX_REPLAY_N_STEPS})",
                member=MEMBER,
                pointer=f"{p}/n_steps",
            )
        if not _is_float(n_step["gamma"]):
            raise _fail("gamma must be a float", f"{p}/gamma")
    if (n_step is not None) != (cls == "NStepReplayBuffer"):
        raise _fail("n_step is given exactly for an NStepReplayBuffer", p)


# -- rules that read element bytes (spec §4 rules 8-9) ------------------------------------


def _comparable(raw_of: Callable[[str, str], bytes], v: Any) -> Any:
    """A space's raw JSON with every ndarray replaced by its dtype, shape and element bytes (inline or referenced)."""
    if isinstance(v, list):
        return [_comparable(raw_of, x) for x in v]
    if isinstance(v, dict):
        if v.get("$type") == "ndarray":
            if "base64" in v:
                raw = base64.b64decode(v["base64"])
            else:
                raw = raw_of(v["ref"]["group"], v["ref"]["name"])
            return ("ndarray", v["dtype"], tuple(v["shape"]), raw)
        return {k: _comparable(raw_of, x) for k, x in v.items()}
    return v


def check_content(content: Content, value: Any) -> None:
    """Spec §4 rules 8-9, after :func:`check`: the spaces equal the data's, the HER indices are in range.

    ``content`` (:class:`rlarchive.extensions.Content`) gives the raw ``data``
    of the archive (its spaces are compared) and the referenced tensors: an
    archive's, or those a writer is about to write. Reads the element bytes
    of the spaces' arrays and of the HER indices only.

    Raises:
        RlarchiveError: EXTENSION_INVALID with the JSON Pointer of the offending value.
    """
    data, raw_of, array_of = content.data, content.tensor_bytes, content.tensor_array
    base = "/" + KEY
    decode = Decoder(array_of, "neutral").decode
    for k in ("observation_space", "action_space"):
        theirs = data.get(k)
        if _is_space(theirs) and _comparable(raw_of, theirs) != _comparable(raw_of, value[k]):
            raise _fail(f"{k} differs from the data's {k}", f"{base}/{k}")
    her = value["her"]
    if her is None:
        return
    b = value["buffer_size"]
    for k, high in (("ep_start", b - 1), ("ep_length", b), ("current_ep_start", b - 1)):
        a = np.asarray(decode(her[k]))
        bad = np.flatnonzero((a < 0) | (a > high))
        if bad.size:
            at = np.unravel_index(int(bad[0]), a.shape)
            raise _fail(f"{k}{list(map(int, at))} = {int(a[at])} is outside [0, {high}]", f"{base}/her/{k}")


# -- value -> view ------------------------------------------------------------------------


def from_value(v: Mapping[str, Any]) -> ReplayBufferData:
    """The view of a checked, decoded value (arrays as NumPy arrays or views)."""
    her = v["her"]
    n_step = v["n_step"]
    return ReplayBufferData(
        class_name=v["class"],
        buffer_size=int(v["buffer_size"]),
        n_envs=int(v["n_envs"]),
        pos=int(v["pos"]),
        full=bool(v["full"]),
        optimize_memory_usage=bool(v["optimize_memory_usage"]),
        handle_timeout_termination=bool(v["handle_timeout_termination"]),
        observation_space=v["observation_space"],
        action_space=v["action_space"],
        observations=v["observations"],
        next_observations=v["next_observations"],
        actions=v["actions"],
        rewards=v["rewards"],
        dones=v["dones"],
        timeouts=v["timeouts"],
        her=None
        if her is None
        else HerState(
            n_sampled_goal=int(her["n_sampled_goal"]),
            goal_selection_strategy=her["goal_selection_strategy"],
            copy_info_dict=bool(her["copy_info_dict"]),
            ep_start=her["ep_start"],
            ep_length=her["ep_length"],
            current_ep_start=her["current_ep_start"],
            infos=her["infos"],
        ),
        n_step=None if n_step is None else NStepState(n_steps=int(n_step["n_steps"]), gamma=float(n_step["gamma"])),
    )
