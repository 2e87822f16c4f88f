"""Test cases of the extension RLA_training (spec/extensions/RLA_training.md): run states, valid and malformed."""

from __future__ import annotations

import copy
import json
import struct

import numpy as np
from cases import case, saved

from rlarchive import spaces as sp
from rlarchive.extensions.training import EXTENSION as TR
from rlarchive.extensions.training import MEMBER as TR_MEMBER
from rlarchive.values import Encoder

SPEC = "RLA_training §3"
ERRORS = "RLA_training §5"


def _box(shape) -> sp.Box:
    return sp.Box(np.full(shape, -10, np.float32), np.full(shape, 10, np.float32), tuple(shape), "F32")


def _data(obs=None, n_envs: int = 2) -> dict:
    return {"observation_space": obs if obs is not None else _box((3,)), "action_space": _box((1,)), "n_envs": n_envs}


def _generator(seed: int) -> dict:
    st = np.random.Generator(np.random.PCG64(seed)).bit_generator.state
    return {
        "bit_generator": "PCG64",
        "state": st["state"]["state"],
        "inc": st["state"]["inc"],
        "has_uint32": 0,
        "uinteger": 0,
    }


def mt_words(seed: int) -> list:
    """The 624 words MT19937's seeding from one 32-bit ``seed`` makes (as PyTorch's ``manual_seed`` does)."""
    w = [seed & 0xFFFFFFFF]
    for i in range(1, 624):
        w.append((1812433253 * (w[-1] ^ (w[-1] >> 30)) + i) & 0xFFFFFFFF)
    return w


def torch_state(seed: int = 5, **fields) -> np.ndarray:
    """PyTorch's CPU generator state of 5056 bytes (RLA_training §3.7), freshly seeded unless ``fields`` say otherwise."""
    f = dict(the_initial_seed=seed, left=1, seeded=1, next=0, state=mt_words(seed), normal_x=0.0, normal_y=0.0,
             normal_rho=0.0, normal_is_valid=0, next_float_normal_sample=0.0, is_next_float_normal_sample_valid=0)  # fmt: skip
    f.update(fields)
    raw = bytearray(5056)
    struct.pack_into("<QiiQ", raw, 0, f["the_initial_seed"], f["left"], f["seeded"], f["next"])
    struct.pack_into("<624Q", raw, 24, *f["state"])
    struct.pack_into("<dddi", raw, 5016, f["normal_x"], f["normal_y"], f["normal_rho"], f["normal_is_valid"])
    struct.pack_into("<fB", raw, 5048, f["next_float_normal_sample"], f["is_next_float_normal_sample_valid"])
    return np.frombuffer(bytes(raw), np.uint8).copy()


def cuda_state(seed: int = 42, offset: int = 8) -> np.ndarray:
    """A CUDA generator's state: its seed and Philox offset (16 bytes)."""
    return np.frombuffer(struct.pack("<Qq", seed, offset), np.uint8).copy()


def _random(torch=None, cuda=None) -> dict:
    rng = np.random.RandomState(3)
    key = rng.get_state()[1]
    words = np.arange(624, dtype=np.uint32) * np.uint32(2654435761)
    return {
        "torch": torch_state() if torch is None else torch,
        "torch_cuda": cuda,
        "numpy": {"key": np.array(key, np.uint32), "pos": 17, "has_gauss": True, "cached_gaussian": -0.25},
        "python": {"version": 3, "state": np.concatenate([words, np.array([624], np.uint32)]), "gauss_next": None},
        "action_space": {"generator": _generator(7), "spaces": []},
        "observation_space": {"generator": None, "spaces": []},
    }


def _window(maxlen, items) -> dict:
    return {"maxlen": maxlen, "items": items}


def _state(**over) -> dict:
    """A run state of a Box(3) observation space and two environments (Python objects for the writer)."""
    v = {
        "counters": {
            "num_timesteps": 64,
            "total_timesteps": 128,
            "num_timesteps_at_start": 0,
            "n_updates": 4,
            "episode_num": 3,
            "n_calls": None,
        },
        "progress_remaining": 0.5,
        "exploration_rate": None,
        "last_obs": np.arange(6, dtype=np.float32).reshape(2, 3),
        "last_original_obs": None,
        "last_episode_starts": np.array([False, True]),
        "episode_info": _window(100, [{"r": 12.0, "l": 12, "t": 0.5}, {"r": -3.5, "l": 40, "t": 1.25}]),
        "episode_success": _window(100, [True, False]),
        "action_noise": {"kind": "normal", "mean": np.zeros(1), "sigma": np.full(1, 0.1), "dtype": "F32"},
        "lstm_states": None,
        "random": _random(),
    }
    v.update(over)
    return v


def _ou(prev: float) -> dict:
    return {
        "kind": "ornstein_uhlenbeck", "mean": np.zeros(1), "sigma": np.full(1, 0.2), "theta": 0.15, "dt": 0.01,
        "initial_noise": None, "noise_prev": np.full(1, prev), "dtype": "F64",
    }  # fmt: skip


# ------------------------------------------------------------------------------ valid


@case(
    "training-run-state",
    "A run state: counters, the last observations of two environments, episode windows, a normal action noise, and the generators' states (PyTorch's referenced from the group RLA_training, a space's PCG64 state with 128-bit integers): what a loader restores (RLA_training §4).",
    [SPEC, "RLA_training §4", "§5.4", "§7.3"],
    extensions=[TR],
)
def _():
    return saved(_data(), extension_values={TR: _state()})


@case(
    "training-dict-recurrent",
    "A run state of a Dict observation space (last_obs per key), LSTM states, a vectorized Ornstein-Uhlenbeck noise, a CUDA generator state, and a Dict space's subspace generators.",
    [SPEC],
    extensions=[TR],
)
def _():
    obs_space = sp.Dict((("pos", _box((2,))), ("vel", _box((3,)))))
    lstm = [np.full((1, 2, 4), 0.5, np.float32), np.full((1, 2, 4), -0.5, np.float32)]
    rnd = _random(torch_state(9, left=600, next=25), cuda=[cuda_state()])
    rnd["observation_space"] = {
        "generator": _generator(1),
        "spaces": [{"generator": _generator(2), "spaces": []}, {"generator": None, "spaces": []}],
    }
    state = _state(
        last_obs={"pos": np.zeros((2, 2), np.float32), "vel": np.ones((2, 3), np.float32)},
        last_original_obs={"pos": np.zeros((2, 2), np.float32), "vel": np.ones((2, 3), np.float32)},
        lstm_states={"pi": lstm, "vf": [a * 2 for a in lstm]},
        action_noise={"kind": "vectorized", "base": _ou(0.0), "noises": [_ou(0.1), _ou(-0.2)]},
        random=rnd,
    )
    return saved(_data(obs_space), extension_values={TR: state})


@case(
    "training-before-learning",
    "The run state of a model that has not learnt yet: no observation, no episode windows, no noise, an exploration rate and n_calls (DQN).",
    [SPEC],
    extensions=[TR],
)
def _():
    counters = {
        "num_timesteps": 0,
        "total_timesteps": 0,
        "num_timesteps_at_start": 0,
        "n_updates": 0,
        "episode_num": 0,
        "n_calls": 0,
    }
    state = _state(
        counters=counters, progress_remaining=1, exploration_rate=1.0, last_obs=None, last_episode_starts=None,
        episode_info=_window(None, []), episode_success=_window(None, []), action_noise=None,
    )  # fmt: skip
    return saved(_data(), extension_values={TR: state})


# ------------------------------------------------------------------------------ malformed


def _json(value) -> dict:
    """The value as its JSON form, every array inline."""
    return Encoder("RLA_training", {}, 1 << 20).encode(value, "/training")


def _raw(value, data=None, *, member: str = TR_MEMBER, text: bytes = b"", extra: dict | None = None) -> bytes:
    """An archive using RLA_training whose member is exactly ``value`` (its JSON form) or ``text``, bypassing the writer's checks."""
    extra = extra or {}
    doc = text or json.dumps(value[0] if isinstance(value, tuple) else {"training": value}).encode()
    members = {member: doc} if member else {}
    members.update(extra)
    return saved(data if data is not None else _data(), extensions_used=[TR], extension_members=members)


def _edit(fn, **over):
    """The JSON form of _state(**over) after ``fn`` changed it in place."""

    def build():
        v = _json(_state(**over))
        fn(v)
        return v

    return build


def _set(path: str, value):
    """An edit setting the JSON Pointer ``path`` (below /training) to ``value`` (a JSON form); ``...`` deletes it."""

    def fn(v):
        parts = path.strip("/").split("/")
        node = v
        for p in parts[:-1]:
            node = node[int(p)] if isinstance(node, list) else node[p]
        last = parts[-1]
        if value is ...:
            del node[last]
        elif isinstance(node, list):
            node[int(last)] = copy.deepcopy(value)
        else:
            node[last] = copy.deepcopy(value)

    return fn


def _nd(a) -> dict:
    return _json(np.asarray(a))


_INVALID = [
    ("training-key-missing", "The run state lacks the key random.", _edit(_set("random", ...))),
    ("training-key-unknown", "The run state has a key the extension does not define.", _edit(_set("seed", 0))),
    ("training-counters-key-missing", "The counters lack n_calls.", _edit(_set("counters/n_calls", ...))),
    ("training-counter-negative", "num_timesteps is negative.", _edit(_set("counters/num_timesteps", -1))),
    ("training-counter-float", "n_updates is the float 4.0, not an integer.", _edit(_set("counters/n_updates", 4.0))),
    ("training-progress-not-float", "progress_remaining is a string.", _edit(_set("progress_remaining", "0.5"))),
    ("training-exploration-rate-bool", "exploration_rate is a boolean.", _edit(_set("exploration_rate", True))),
    (
        "training-episode-starts-not-bool",
        "last_episode_starts is a U8 array.",
        _edit(_set("last_episode_starts", _nd(np.array([0, 1], np.uint8)))),
    ),
    (
        "training-obs-environments",
        "last_obs has 3 rows for the 2 environments of last_episode_starts.",
        _edit(_set("last_obs", _nd(np.zeros((3, 3), np.float32)))),
    ),
    (
        "training-obs-map-for-box",
        "last_obs is a map of observations for a Box observation space.",
        _edit(_set("last_obs", {"a": _nd(np.zeros((2, 3), np.float32))})),
    ),
    (
        "training-obs-scalar",
        "last_obs is a 0-dimensional array: its first dimension must count the environments.",
        _edit(_set("last_obs", _nd(np.float32(1.0).reshape(())))),
    ),
    ("training-window-maxlen-zero", "episode_info's maxlen is 0.", _edit(_set("episode_info/maxlen", 0))),
    (
        "training-window-over-maxlen",
        "episode_success holds more items than its maxlen.",
        _edit(_set("episode_success/maxlen", 1)),
    ),
    (
        "training-window-info-not-map",
        "An item of episode_info is a number, not a map.",
        _edit(_set("episode_info/items/1", 3.5)),
    ),
    (
        "training-window-success-not-bool",
        "An item of episode_success is the integer 1, not a boolean.",
        _edit(_set("episode_success/items/0", 1)),
    ),
    (
        "training-noise-kind-unknown",
        "The action noise's kind is not one the extension defines.",
        _edit(_set("action_noise/kind", "pink")),
    ),
    (
        "training-noise-key-unknown",
        "A normal action noise with an Ornstein-Uhlenbeck key.",
        _edit(_set("action_noise/theta", 0.15)),
    ),
    (
        "training-noise-sigma-shape",
        "The action noise's sigma has another shape than its mean.",
        _edit(_set("action_noise/sigma", _nd(np.zeros(2)))),
    ),
    ("training-noise-dtype", "The action noise's dtype is F16.", _edit(_set("action_noise/dtype", "F16"))),
    (
        "training-noise-vectorized-nested",
        "A vectorized action noise whose base is itself vectorized.",
        _edit(
            lambda v: None,
            action_noise={
                "kind": "vectorized",
                "base": {"kind": "vectorized", "base": _ou(0.0), "noises": [_ou(0.0)]},
                "noises": [_ou(0.0)],
            },
        ),
    ),
    (
        "training-noise-vectorized-empty",
        "A vectorized action noise without noises.",
        _edit(lambda v: None, action_noise={"kind": "vectorized", "base": _ou(0.0), "noises": []}),
    ),
    (
        "training-lstm-shapes",
        "The recurrent states differ in shape.",
        _edit(
            lambda v: None,
            lstm_states={
                "pi": [np.zeros((1, 2, 4), np.float32)] * 2,
                "vf": [np.zeros((1, 2, 4), np.float32), np.zeros((1, 2, 5), np.float32)],
            },
        ),
    ),
    (
        "training-lstm-not-pair",
        "A recurrent state is one array, not a list of hidden and cell states.",
        _edit(
            lambda v: None,
            lstm_states={"pi": [np.zeros((1, 2, 4), np.float32)], "vf": [np.zeros((1, 2, 4), np.float32)] * 2},
        ),
    ),
    (
        "training-torch-not-u8",
        "PyTorch's generator state is an I8 array.",
        _edit(_set("random/torch", _nd(np.zeros(5056, np.int8)))),
    ),
    (
        "training-cuda-not-list",
        "torch_cuda is an array, not a list of arrays.",
        _edit(_set("random/torch_cuda", _nd(np.zeros(16, np.uint8)))),
    ),
    (
        "training-numpy-key-shape",
        "NumPy's MT19937 key has 623 words.",
        _edit(_set("random/numpy/key", _nd(np.zeros(623, np.uint32)))),
    ),
    ("training-numpy-pos-range", "NumPy's pos is 625.", _edit(_set("random/numpy/pos", 625))),
    (
        "training-numpy-has-gauss-int",
        "NumPy's has_gauss is the integer 1, not a boolean.",
        _edit(_set("random/numpy/has_gauss", 1)),
    ),
    ("training-python-version", "Python's generator state has version 2.", _edit(_set("random/python/version", 2))),
    (
        "training-python-state-shape",
        "Python's generator state has 624 words, without the index.",
        _edit(_set("random/python/state", _nd(np.zeros(624, np.uint32)))),
    ),
    (
        "training-generator-unknown",
        "A space's bit generator is MT19937, whose state the extension does not hold.",
        _edit(_set("random/action_space/generator/bit_generator", "MT19937")),
    ),
    (
        "training-generator-state-range",
        "A space's PCG64 state is 2^128.",
        _edit(_set("random/action_space/generator/state", {"$type": "int", "value": str(1 << 128)})),
    ),
    (
        "training-generator-has-uint32",
        "A space's has_uint32 is 2.",
        _edit(_set("random/action_space/generator/has_uint32", 2)),
    ),
    (
        "training-subspace-null",
        "A subspace's generators are null.",
        _edit(_set("random/observation_space/spaces", [None])),
    ),
]

for _id, _desc, _build in _INVALID:
    case(_id, _desc, [SPEC, ERRORS], "EXTENSION_INVALID", extensions=[TR])(lambda _b=_build: _raw(_b()))


@case(
    "training-obs-dict-keys",
    "last_obs is a map whose keys are not those of the Dict observation space, in its order.",
    [SPEC, ERRORS],
    "EXTENSION_INVALID",
    extensions=[TR],
)
def _():
    obs_space = sp.Dict((("pos", _box((2,))), ("vel", _box((3,)))))
    v = _json(_state(last_obs={"vel": np.ones((2, 3), np.float32), "pos": np.zeros((2, 2), np.float32)}))
    return _raw(v, _data(obs_space))


@case(
    "training-obs-array-for-dict",
    "last_obs is one array for a Dict observation space.",
    [SPEC, ERRORS],
    "EXTENSION_INVALID",
    extensions=[TR],
)
def _():
    return _raw(_json(_state()), _data(sp.Dict((("pos", _box((3,))),))))


@case(
    "training-member-absent",
    "RLA_training is used but its member is absent.",
    [ERRORS],
    "EXTENSION_INVALID",
    extensions=[TR],
)
def _():
    return _raw(None, member="")


@case(
    "training-extra-member",
    "A second member under extensions/RLA_training/.",
    [ERRORS],
    "EXTENSION_INVALID",
    extensions=[TR],
)
def _():
    return _raw(_json(_state()), extra={"extensions/RLA_training/notes.txt": b"x"})


@case(
    "training-top-level-key",
    "The member's object has a property other than training.",
    [ERRORS],
    "EXTENSION_INVALID",
    extensions=[TR],
)
def _():
    return _raw(({"training": _json(_state()), "more": 1},))


@case(
    "training-member-not-json",
    "The RLA_training member is not JSON: the JSON rules of §6 apply to it, with their codes.",
    ["§6", ERRORS],
    "JSON_SYNTAX",
    extensions=[TR],
)
def _():
    return _raw(None, text=b'{"training": ')


@case(
    "training-ref-not-found",
    "An array of the RLA_training member references a tensor that does not exist.",
    ["§7.6", ERRORS],
    "REF_NOT_FOUND",
    extensions=[TR],
)
def _():
    v = _json(_state())
    v["random"]["torch"] = {
        "$type": "ndarray",
        "dtype": "U8",
        "shape": [16],
        "ref": {"group": "RLA_training", "name": "random/torch"},
    }
    return _raw(v)
