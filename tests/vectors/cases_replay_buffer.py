"""Test cases of the extension RLA_replay_buffer (spec/extensions/RLA_replay_buffer.md): replay buffers, valid and malformed."""

from __future__ import annotations

import copy
import json

import numpy as np
from cases import case, saved
from sites import doc

from rlarchive import spaces as sp
from rlarchive.extensions.replay_buffer import EXTENSION as RB
from rlarchive.extensions.replay_buffer import MEMBER as RB_MEMBER
from rlarchive.values import Encoder

SPEC = "RLA_replay_buffer §4"
ERRORS = "RLA_replay_buffer §6"


def _box(shape, dtype: str = "F32") -> sp.Box:
    np_dtype = {"F32": np.float32, "F64": np.float64}[dtype]
    return sp.Box(np.full(shape, -10, np_dtype), np.full(shape, 10, np_dtype), tuple(shape), dtype)


def _goal_space() -> sp.Dict:
    return sp.Dict((("observation", _box((4,))), ("achieved_goal", _box((2,))), ("desired_goal", _box((2,)))))


def _rows(b: int, n: int, seed: int, dtype=np.float32, *tail) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(b, n, *tail)).astype(dtype)


def _obs_for(space, b: int, n: int, seed: int):
    """Observations as SB3 stores them for ``space``: [b, n, *obs_shape] of the space's dtype."""
    if isinstance(space, sp.Dict):
        return {k: _obs_for(s, b, n, seed + i) for i, (k, s) in enumerate(space.spaces)}
    if isinstance(space, sp.Box):
        return _rows(b, n, seed, np.float32 if space.dtype == "F32" else np.float64, *space.shape)
    if isinstance(space, sp.Discrete):
        return np.random.default_rng(seed).integers(0, space.n, size=(b, n, 1)).astype(np.int64)
    if isinstance(space, sp.MultiBinary):
        return np.random.default_rng(seed).integers(0, 2, size=(b, n, space.n)).astype(np.int8)
    raise AssertionError(space)


def _buffer(
    cls: str = "ReplayBuffer",
    obs=None,
    act=None,
    b: int = 6,
    n: int = 1,
    pos: int = 4,
    full: bool = False,
    optimize: bool = False,
    **over,
) -> dict:
    """A replay buffer value (Python objects for the writer), consistent with its spaces."""
    obs = obs if obs is not None else _box((3,))
    act = act if act is not None else _box((2,))
    if isinstance(act, sp.Box):
        actions = _rows(b, n, 9, np.float32, int(np.prod(act.shape)))
    else:
        actions = np.random.default_rng(9).integers(0, act.n, size=(b, n, 1)).astype(np.int64)
    v = {
        "class": cls,
        "buffer_size": b,
        "n_envs": n,
        "pos": pos,
        "full": full,
        "optimize_memory_usage": optimize,
        "handle_timeout_termination": not optimize,
        "observation_space": obs,
        "action_space": act,
        "observations": _obs_for(obs, b, n, 1),
        "next_observations": None if optimize else _obs_for(obs, b, n, 5),
        "actions": actions,
        "rewards": _rows(b, n, 11),
        "dones": (np.arange(b * n).reshape(b, n) % 3 == 0).astype(np.float32),
        "timeouts": np.zeros((b, n), np.float32),
        "her": None,
        "n_step": None,
    }
    v.update(over)
    return v


def _her(b: int, n: int, copy_info: bool = False, **over) -> dict:
    """HER's episode bookkeeping for episodes of 3 steps in a full buffer of b rows."""
    starts = np.repeat((np.arange(b) // 3 * 3)[:, None], n, axis=1).astype(np.int64)
    v = {
        "n_sampled_goal": 4,
        "goal_selection_strategy": "future",
        "copy_info_dict": copy_info,
        "ep_start": starts,
        "ep_length": np.full((b, n), 3, np.int64),
        "current_ep_start": np.zeros(n, np.int64),
        "infos": [[{"is_success": bool((i + j) % 2)} for j in range(n)] for i in range(b)] if copy_info else None,
    }
    v.update(over)
    return v


def _data(value: dict) -> dict:
    return {
        "observation_space": value["observation_space"],
        "action_space": value["action_space"],
        "n_envs": value["n_envs"],
    }


def _saved(value: dict) -> bytes:
    return saved(_data(value), extension_values={RB: value})


# ------------------------------------------------------------------------------ valid


@case(
    "replay-buffer-box",
    "A ReplayBuffer of a Box(3) observation and a Box(2) action space, one environment, not full (rows at and after pos unused): arrays inline.",
    [SPEC, "RLA_replay_buffer §3", "§5.4"],
    extensions=[RB],
)
def _():
    return _saved(_buffer())


@case(
    "replay-buffer-several-envs",
    "A full ReplayBuffer of four environments whose arrays exceed INLINE_ARRAY_BYTES and are referenced from the tensor group RLA_replay_buffer; a Discrete action space (I64 actions of one column).",
    [SPEC, "§7.6", "§13.1"],
    extensions=[RB],
)
def _():
    return _saved(_buffer(act=sp.Discrete(3), b=80, n=4, pos=10, full=True))


@case(
    "replay-buffer-dict",
    "A DictReplayBuffer of a Dict observation space (a Box, a Discrete and a MultiBinary key: F32, I64 [1] and I8 observations), two environments.",
    [SPEC],
    extensions=[RB],
)
def _():
    space = sp.Dict((("pos", _box((2,))), ("mode", sp.Discrete(4)), ("flags", sp.MultiBinary(3))))
    return _saved(_buffer("DictReplayBuffer", obs=space, n=2))


@case(
    "replay-buffer-her",
    "A HerReplayBuffer of a goal Dict space: episode starts and lengths, the current episode starts, and the info dicts (copy_info_dict).",
    [SPEC, "RLA_replay_buffer §5"],
    extensions=[RB],
)
def _():
    return _saved(
        _buffer("HerReplayBuffer", obs=_goal_space(), b=6, n=2, pos=0, full=True, her=_her(6, 2, copy_info=True))
    )


@case(
    "replay-buffer-nstep", "An NStepReplayBuffer (n_steps 3, gamma 0.99) of two environments.", [SPEC], extensions=[RB]
)
def _():
    return _saved(_buffer("NStepReplayBuffer", n=2, n_step={"n_steps": 3, "gamma": 0.99}))


@case(
    "replay-buffer-optimize-memory",
    "A ReplayBuffer with optimize_memory_usage (next_observations null, handle_timeout_termination false) over an F64 Box action space, whose actions are stored as F32.",
    [SPEC, "RLA_replay_buffer §5"],
    extensions=[RB],
)
def _():
    return _saved(_buffer(act=_box((2,), "F64"), optimize=True))


# ------------------------------------------------------------------------------ malformed


def _json(value: dict) -> dict:
    """The member's value as JSON, every array inline."""
    return Encoder(RB, {}, 1 << 20).encode(value, "/" + "replay_buffer")


def _raw(value, data=None, *, member: str = RB_MEMBER, text: bytes = b"", extra: dict | None = None) -> bytes:
    """An archive using RLA_replay_buffer whose member is exactly ``value`` (JSON) or ``text``, bypassing the writer's checks."""
    extra = extra or {}
    doc = text or json.dumps({"replay_buffer": value} if not isinstance(value, tuple) else value[0]).encode()
    members = {member: doc} if member else {}
    members.update(extra)
    return saved(data if data is not None else _data(_buffer()), extensions_used=[RB], extension_members=members)


def _bad(mutate, base=None, data=None):
    """A builder: the JSON of ``base`` (a plain buffer by default) changed by ``mutate``, in an archive whose data holds ``data`` (default: base's spaces)."""

    def build() -> bytes:
        b = base() if base else _buffer()
        v = _json(b)
        mutate(v)
        return _raw(v, _data(b) if data is None else data)

    return build


def _set(path: str, new):
    """A mutation setting the value at ``path`` (keys joined by '/') to ``new`` (a JSON value, or a function of the value there)."""

    def mutate(v: dict) -> None:
        *parents, last = path.split("/")
        for p in parents:
            v = v[int(p)] if isinstance(v, list) else v[p]
        v[last] = new(v[last]) if callable(new) else copy.deepcopy(new)

    return mutate


def _drop(key: str):
    return lambda v: v.pop(key)


def _nd(dtype: str, shape, fill=0) -> dict:
    np_dtype = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32, "BOOL": np.bool_}[dtype]
    return _json({"a": np.full(shape, fill, np_dtype)})["a"]


def _her_buffer(**over):
    return lambda: _buffer("HerReplayBuffer", obs=_goal_space(), b=6, n=2, pos=0, full=True, her=_her(6, 2, **over))


def _nstep_buffer():
    return _buffer("NStepReplayBuffer", n_step={"n_steps": 3, "gamma": 0.99})


def _dict_buffer():
    return _buffer("DictReplayBuffer", obs=sp.Dict((("a", _box((2,))), ("b", _box((1,))))))


def _reorder(key: str):
    def mutate(v: dict) -> None:
        v[key] = dict(reversed(list(v[key].items())))

    return mutate


def _both(*mutations):
    def mutate(v: dict) -> None:
        for m in mutations:
            m(v)

    return mutate


_INVALID = [
    # rule 1: the keys
    ("replay-buffer-key-missing", "The replay buffer lacks the key timeouts.", _bad(_drop("timeouts"))),
    ("replay-buffer-key-unknown", "The replay buffer has a key the extension does not define.", _bad(_set("size", 4))),
    # rule 2: each key's kind
    (
        "replay-buffer-class-unknown",
        "class is RolloutBuffer, which the extension does not store.",
        _bad(_set("class", "RolloutBuffer")),
    ),
    ("replay-buffer-size-zero", "buffer_size is 0.", _bad(_set("buffer_size", 0))),
    ("replay-buffer-n-envs-float", "n_envs is the float 1.0, not an integer.", _bad(_set("n_envs", 1.0))),
    ("replay-buffer-pos-negative", "pos is -1.", _bad(_set("pos", -1))),
    ("replay-buffer-full-not-bool", "full is the integer 0, not a boolean.", _bad(_set("full", 0))),
    (
        "replay-buffer-space-not-space",
        "action_space is a map, not a space value.",
        _bad(_set("action_space", {"kind": "box"})),
    ),
    ("replay-buffer-observations-list", "observations is a list, not an ndarray.", _bad(_set("observations", [1, 2]))),
    ("replay-buffer-rewards-not-ndarray", "rewards is null.", _bad(_set("rewards", None))),
    ("replay-buffer-her-key-missing", "her lacks the key infos.", _bad(lambda v: v["her"].pop("infos"), _her_buffer())),
    (
        "replay-buffer-her-strategy",
        "goal_selection_strategy is 'random'.",
        _bad(_set("her/goal_selection_strategy", "random"), _her_buffer()),
    ),
    (
        "replay-buffer-her-infos-not-lists",
        "infos is a list of maps, not of lists.",
        _bad(_set("her/infos", [{}] * 6), _her_buffer(copy_info=True)),
    ),
    ("replay-buffer-n-steps-zero", "n_steps is 0.", _bad(_set("n_step/n_steps", 0), _nstep_buffer)),
    ("replay-buffer-gamma-string", "n_step's gamma is a string.", _bad(_set("n_step/gamma", "0.99"), _nstep_buffer)),
    # rule 3: the class
    (
        "replay-buffer-her-for-plain",
        "A ReplayBuffer with HER's bookkeeping.",
        _bad(_set("her", _json({"h": _her(6, 1)})["h"])),
    ),
    (
        "replay-buffer-n-step-missing",
        "An NStepReplayBuffer whose n_step is null.",
        _bad(_set("class", "NStepReplayBuffer")),
    ),
    (
        "replay-buffer-dict-class-box-space",
        "A DictReplayBuffer of a Box observation space.",
        _bad(_set("class", "DictReplayBuffer")),
    ),
    (
        "replay-buffer-observations-map-for-box",
        "A ReplayBuffer whose observations are a map.",
        _bad(_set("observations", lambda a: {"obs": a})),
    ),
    (
        "replay-buffer-optimize-dict",
        "A DictReplayBuffer with optimize_memory_usage.",
        _bad(
            _both(
                _set("optimize_memory_usage", True),
                _set("handle_timeout_termination", False),
                _set("next_observations", None),
            ),
            _dict_buffer,
        ),
    ),
    (
        "replay-buffer-optimize-and-timeouts",
        "optimize_memory_usage and handle_timeout_termination both true.",
        _bad(_both(_set("optimize_memory_usage", True), _set("next_observations", None))),
    ),
    (
        "replay-buffer-next-observations-null",
        "next_observations is null but optimize_memory_usage is false.",
        _bad(_set("next_observations", None)),
    ),
    (
        "replay-buffer-her-without-goals",
        "A HerReplayBuffer whose Dict observation space has no desired_goal key.",
        _bad(
            lambda v: None,
            lambda: _buffer(
                "HerReplayBuffer",
                obs=sp.Dict((("observation", _box((4,))), ("achieved_goal", _box((2,))))),
                b=6,
                n=2,
                pos=0,
                full=True,
                her=_her(6, 2),
            ),
        ),
    ),
    (
        "replay-buffer-her-infos-without-copy",
        "infos given while copy_info_dict is false.",
        _bad(_set("her/copy_info_dict", False), _her_buffer(copy_info=True)),
    ),
    # rule 4: the spaces
    (
        "replay-buffer-space-tuple",
        "A Tuple observation space, which a replay buffer does not store.",
        _bad(_set("observation_space", _json({"s": sp.Tuple((_box((3,)),))})["s"])),
    ),
    (
        "replay-buffer-action-multi-binary-array",
        "A MultiBinary action space of n [2, 2] (SB3 takes an integer n only).",
        _bad(_set("action_space", _json({"s": sp.MultiBinary((2, 2))})["s"])),
    ),
    # rule 5: shapes
    (
        "replay-buffer-observations-shape",
        "observations of shape [6, 1, 4] for a Box(3) space.",
        _bad(_set("observations", _nd("F32", (6, 1, 4)))),
    ),
    (
        "replay-buffer-dict-keys-order",
        "Dict observations whose keys are in another order than the space's.",
        _bad(_reorder("observations"), _dict_buffer),
    ),
    (
        "replay-buffer-actions-dim",
        "actions of shape [6, 1, 3] for a Box(2) action space.",
        _bad(_set("actions", _nd("F32", (6, 1, 3)))),
    ),
    ("replay-buffer-rewards-shape", "rewards of shape [6] instead of [6, 1].", _bad(_set("rewards", _nd("F32", (6,))))),
    (
        "replay-buffer-her-ep-start-shape",
        "ep_start of shape [6, 1] for two environments.",
        _bad(_set("her/ep_start", _nd("I64", (6, 1))), _her_buffer()),
    ),
    (
        "replay-buffer-her-infos-rows",
        "infos with 5 rows for a buffer of 6.",
        _bad(_set("her/infos", lambda rows: rows[:5]), _her_buffer(copy_info=True)),
    ),
    # rule 6: pos
    ("replay-buffer-pos-out-of-range", "pos equals buffer_size.", _bad(_set("pos", 6))),
    # rule 7: dtypes
    (
        "replay-buffer-observations-dtype",
        "F64 observations for an F32 Box space.",
        _bad(_set("observations", _nd("F64", (6, 1, 3)))),
    ),
    (
        "replay-buffer-actions-f64",
        "F64 actions for an F64 Box action space (SB3 stores them as F32).",
        _bad(_set("actions", _nd("F64", (6, 1, 2))), lambda: _buffer(act=_box((2,), "F64"))),
    ),
    ("replay-buffer-dones-bool", "dones of dtype BOOL instead of F32.", _bad(_set("dones", _nd("BOOL", (6, 1))))),
    (
        "replay-buffer-her-ep-length-dtype",
        "ep_length of dtype I32.",
        _bad(_set("her/ep_length", _nd("I32", (6, 2), 3)), _her_buffer()),
    ),
    # rule 8: the spaces against the data's
    (
        "replay-buffer-space-differs",
        "The buffer's observation space has other bounds than the data's.",
        _bad(
            lambda v: None,
            data={
                "observation_space": sp.Box(np.full(3, -1, np.float32), np.full(3, 1, np.float32), (3,), "F32"),
                "action_space": _box((2,)),
            },
        ),
    ),
    # rule 9: HER indices
    (
        "replay-buffer-her-ep-start-range",
        "An ep_start equal to buffer_size.",
        _bad(
            _set(
                "her/ep_start",
                lambda a: _json({"a": np.where(np.arange(12).reshape(6, 2) == 7, 6, 0).astype(np.int64)})["a"],
            ),
            _her_buffer(),
        ),
    ),
    (
        "replay-buffer-her-ep-length-range",
        "A negative ep_length.",
        _bad(_set("her/ep_length", _nd("I64", (6, 2), -1)), _her_buffer()),
    ),
    (
        "replay-buffer-her-current-ep-start-range",
        "current_ep_start beyond the buffer.",
        _bad(_set("her/current_ep_start", _nd("I64", (2,), 9)), _her_buffer()),
    ),
    # the member
    (
        "replay-buffer-member-absent",
        "RLA_replay_buffer is used but its member is absent.",
        lambda: _raw(None, member=""),
    ),
    (
        "replay-buffer-extra-member",
        "A second member under extensions/RLA_replay_buffer/.",
        lambda: _raw(_json(_buffer()), extra={"extensions/RLA_replay_buffer/notes.txt": b"x"}),
    ),
    (
        "replay-buffer-top-level-key",
        "The member's object has a property other than replay_buffer.",
        lambda: _raw(({"replay_buffer": _json(_buffer()), "more": 1},)),
    ),
]

for _id, _desc, _build in _INVALID:
    case(_id, _desc, [SPEC, ERRORS], "EXTENSION_INVALID", extensions=[RB])(_build)


@case(
    "replay-buffer-n-steps-at-limit",
    "An NStepReplayBuffer whose n_steps is MAX_REPLAY_N_STEPS (1024), the largest allowed.",
    ["RLA_replay_buffer §3", "§15"],
    extensions=[RB],
)
def _():
    return _saved(_buffer("NStepReplayBuffer", n_step={"n_steps": 1024, "gamma": 0.99}))


@case(
    "replay-buffer-n-steps-limit",
    "An NStepReplayBuffer whose n_steps is 2^40: above MAX_REPLAY_N_STEPS, every training step would allocate arrays of that length per sampled transition.",
    ["RLA_replay_buffer §3", ERRORS, "§15"],
    "LIMIT_EXCEEDED",
    extensions=[RB],
    check="extension-limit",
    at=doc("/replay_buffer/n_step/n_steps", "limit", RB_MEMBER),
)
def _():
    return _bad(_set("n_step/n_steps", 1 << 40), _nstep_buffer)()


@case(
    "replay-buffer-ref-not-found",
    "An array of the RLA_replay_buffer member references a tensor that does not exist.",
    ["§7.6", ERRORS],
    "REF_NOT_FOUND",
    extensions=[RB],
)
def _():
    ref = {
        "$type": "ndarray",
        "dtype": "F32",
        "shape": [6, 1],
        "ref": {"group": "RLA_replay_buffer", "name": "rewards"},
    }
    v = _json(_buffer())
    v["rewards"] = ref
    return _raw(v)


@case(
    "replay-buffer-member-not-json",
    "The RLA_replay_buffer member is not JSON: the JSON rules of §6 apply to it, with their codes.",
    ["§6", ERRORS],
    "JSON_SYNTAX",
    extensions=[RB],
)
def _():
    return _raw(None, text=b'{"replay_buffer": ')
