"""Test cases of the extensions this specification defines (spec/extensions/).

A case here lists the extension it needs (``extensions=[...]``): a reader
that does not support it would ignore the member (spec §5.4) and answer
differently, so the harness runs the case only for readers that declare the
extension (Annex A.3).
"""

from __future__ import annotations

import json

import numpy as np
from cases import case, nd, saved

from rlarchive import spaces as sp
from rlarchive.extensions.vec_normalize import EXTENSION as VN
from rlarchive.extensions.vec_normalize import MEMBER as VN_MEMBER

# ----------------------------------------------------------------------- RLA_vec_normalize

VN_SPEC = "RLA_vec_normalize §3"


def _box(shape) -> sp.Box:
    return sp.Box(np.full(shape, -10, np.float32), np.full(shape, 10, np.float32), tuple(shape), "F32")


def _spaces(obs) -> dict:
    return {"observation_space": obs, "action_space": sp.Discrete(2), "gamma": 0.99}


def _stats(shape, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"mean": rng.normal(size=shape), "var": rng.uniform(0.5, 2.0, size=shape), "count": 1234.0}


def _vn(obs, obs_keys=None, **over) -> dict:
    v = {
        "norm_obs": obs is not None,
        "norm_reward": True,
        "clip_obs": 10.0,
        "clip_reward": 10.0,
        "epsilon": 1e-8,
        "gamma": 0.99,
        "training": False,
        "obs": obs,
        "obs_keys": obs_keys,
        "ret": _stats((), 0),
    }
    v.update(over)
    return v


@case(
    "vec-normalize-box",
    "VecNormalize statistics for a Box observation space: flags, clip bounds, epsilon, gamma, observation and return statistics (small arrays inline).",
    [VN_SPEC, "§5.4"],
    extensions=[VN],
)
def _():
    return saved(_spaces(_box((3,))), extension_values={VN: _vn(_stats((3,), 1))})


@case(
    "vec-normalize-referenced-arrays",
    "VecNormalize statistics whose arrays exceed INLINE_ARRAY_BYTES and are referenced from the tensor group RLA_vec_normalize.",
    [VN_SPEC, "§7.6"],
    extensions=[VN],
)
def _():
    return saved(_spaces(_box((4, 40))), extension_values={VN: _vn(_stats((4, 40), 2))})


@case(
    "vec-normalize-dict",
    "VecNormalize statistics for a Dict observation space, per key in obs_keys order, one key left unnormalised, clip_obs infinite.",
    [VN_SPEC],
    extensions=[VN],
)
def _():
    space = sp.Dict((("pos", _box((2,))), ("vel", _box((3,))), ("goal", _box((2,)))))
    obs = {"vel": _stats((3,), 3), "pos": _stats((2,), 4)}
    return saved(_spaces(space), extension_values={VN: _vn(obs, ["vel", "pos"], clip_obs=float("inf"))})


@case(
    "vec-normalize-rewards-only",
    "VecNormalize statistics that normalise rewards only: norm_obs false and obs null.",
    [VN_SPEC],
    extensions=[VN],
)
def _():
    return saved(_spaces(_box((3,))), extension_values={VN: _vn(None)})


def _raw_vn(value, data=None, *, member: str = VN_MEMBER, text: bytes = b"", extra: dict | None = None) -> bytes:
    """An archive using RLA_vec_normalize whose member is exactly ``value`` (JSON) or ``text``, bypassing the writer's checks."""
    extra = extra or {}
    doc = text or json.dumps({"vec_normalize": value} if not isinstance(value, tuple) else value[0]).encode()
    members = {member: doc} if member else {}
    members.update(extra)
    return saved(data if data is not None else _spaces(_box((3,))), extensions_used=[VN], extension_members=members)


def _f64(shape, fill: float = 0.5) -> dict:
    a = np.full(shape, fill, np.float64)
    return nd("F64", a.shape, a.tobytes())


def _json_stats(shape=(3,), **over) -> dict:
    s = {"mean": _f64(shape, 0.0), "var": _f64(shape, 1.0), "count": 10.0}
    s.update(over)
    return s


def _json_vn(**over) -> dict:
    v = {
        "norm_obs": True,
        "norm_reward": False,
        "clip_obs": 10.0,
        "clip_reward": 10.0,
        "epsilon": 1e-8,
        "gamma": 0.99,
        "training": False,
        "obs": _json_stats(),
        "obs_keys": None,
        "ret": _json_stats(()),
    }
    v.update(over)
    return v


def _without(key: str) -> dict:
    v = _json_vn()
    del v[key]
    return v


_INVALID = [
    (
        "vec-normalize-member-absent",
        "RLA_vec_normalize is used but its member is absent.",
        lambda: _raw_vn(None, member=""),
    ),
    (
        "vec-normalize-extra-member",
        "A second member under extensions/RLA_vec_normalize/.",
        lambda: _raw_vn(_json_vn(), extra={"extensions/RLA_vec_normalize/notes.txt": b"x"}),
    ),
    (
        "vec-normalize-top-level-key",
        "The member's object has a property other than vec_normalize.",
        lambda: _raw_vn(({"vec_normalize": _json_vn(), "more": 1},)),
    ),
    ("vec-normalize-key-missing", "The statistics lack the key epsilon.", lambda: _raw_vn(_without("epsilon"))),
    (
        "vec-normalize-key-unknown",
        "The statistics have a key the extension does not define.",
        lambda: _raw_vn(_json_vn(shift=1.0)),
    ),
    ("vec-normalize-flag-not-bool", "norm_obs is the integer 1, not a boolean.", lambda: _raw_vn(_json_vn(norm_obs=1))),
    ("vec-normalize-float-is-string", "clip_obs is a string.", lambda: _raw_vn(_json_vn(clip_obs="10"))),
    (
        "vec-normalize-mean-not-f64",
        "The observation mean is an F32 array.",
        lambda: _raw_vn(_json_vn(obs=_json_stats(mean=nd("F32", [3], np.zeros(3, np.float32).tobytes())))),
    ),
    (
        "vec-normalize-mean-var-shapes",
        "The observation mean and var differ in shape.",
        lambda: _raw_vn(_json_vn(obs=_json_stats(var=_f64((4,))))),
    ),
    (
        "vec-normalize-stats-extra-key",
        "Observation statistics with a key besides mean, var and count.",
        lambda: _raw_vn(_json_vn(obs=_json_stats(std=1.0))),
    ),
    (
        "vec-normalize-ret-not-scalar",
        "The return statistics are 1-dimensional.",
        lambda: _raw_vn(_json_vn(ret=_json_stats((1,)))),
    ),
    ("vec-normalize-obs-null-but-normalised", "norm_obs is true but obs is null.", lambda: _raw_vn(_json_vn(obs=None))),
    (
        "vec-normalize-box-shape",
        "The observation statistics have shape [4], the Box observation space [3].",
        lambda: _raw_vn(_json_vn(obs=_json_stats((4,)))),
    ),
    (
        "vec-normalize-keys-order",
        "obs_keys lists the keys of obs in another order.",
        lambda: _raw_vn(
            _json_vn(obs={"a": _json_stats((2,)), "b": _json_stats((2,))}, obs_keys=["b", "a"]),
            _spaces(sp.Dict((("a", _box((2,))), ("b", _box((2,)))))),
        ),
    ),
    (
        "vec-normalize-key-not-in-space",
        "obs_keys names a key the Dict observation space does not have.",
        lambda: _raw_vn(
            _json_vn(obs={"a": _json_stats((2,)), "c": _json_stats((2,))}, obs_keys=["a", "c"]),
            _spaces(sp.Dict((("a", _box((2,))), ("b", _box((2,)))))),
        ),
    ),
    (
        "vec-normalize-dict-space-one-stats",
        "One set of statistics (obs_keys null) for a Dict observation space.",
        lambda: _raw_vn(
            _json_vn(obs=_json_stats((2,))),
            _spaces(sp.Dict((("a", _box((2,))),))),
        ),
    ),
    (
        "vec-normalize-keys-for-box",
        "obs_keys and per-key statistics for a Box observation space.",
        lambda: _raw_vn(_json_vn(obs={"a": _json_stats()}, obs_keys=["a"])),
    ),
]

for _id, _desc, _build in _INVALID:
    case(_id, _desc, [VN_SPEC, "RLA_vec_normalize §5"], "EXTENSION_INVALID", extensions=[VN])(_build)


@case(
    "vec-normalize-member-not-json",
    "The RLA_vec_normalize member is not JSON: the JSON rules of §6 apply to it, with their codes.",
    ["§6", "RLA_vec_normalize §5"],
    "JSON_SYNTAX",
    extensions=[VN],
)
def _():
    return _raw_vn(None, text=b'{"vec_normalize": ')


@case(
    "vec-normalize-value-invalid",
    "A value in the RLA_vec_normalize member breaks §7 (an ndarray whose base64 does not match its size): the value rules apply, with their codes.",
    ["§7.6", "RLA_vec_normalize §5"],
    "ARRAY_SIZE_MISMATCH",
    extensions=[VN],
)
def _():
    return _raw_vn(_json_vn(obs=_json_stats(mean=nd("F64", [3], b"\0" * 16))))


@case(
    "vec-normalize-ref-not-found",
    "An array of the RLA_vec_normalize member references a tensor that does not exist.",
    ["§7.6", "RLA_vec_normalize §5"],
    "REF_NOT_FOUND",
    extensions=[VN],
)
def _():
    ref = {"$type": "ndarray", "dtype": "F64", "shape": [3], "ref": {"group": "RLA_vec_normalize", "name": "obs/mean"}}
    return _raw_vn(_json_vn(obs=_json_stats(mean=ref)))


# ----------------------------------------------------------------------- RLA_policy: malformed descriptions

POLICY = "RLA_policy"
POLICY_MEMBER = "extensions/RLA_policy/policy.json"


def _f32(shape, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


_WEIGHTS = {"l1.weight": _f32((4, 3), 1), "l1.bias": _f32((4,), 2), "l2.weight": _f32((2, 4), 3)}


def _ref(name: str, shape=None, dtype: str = "F32") -> dict:
    return {
        "$type": "ndarray",
        "dtype": dtype,
        "shape": list(shape or _WEIGHTS[name].shape),
        "ref": {"group": "policy", "name": name},
    }


def _space_json(space) -> dict:
    from rlarchive.values import dump_value

    return dump_value(space)


def _policy_json(**over) -> dict:
    """A well-formed description: Box(3) -> linear 4 -> tanh -> linear 2 -> argmax over Discrete(2)."""
    v = {
        "observation_space": _space_json(_box((3,))),
        "action_space": _space_json(sp.Discrete(2)),
        "normalize_images": True,
        "nodes": [
            {"op": "linear", "in": ["obs"], "out": "h", "weight": _ref("l1.weight"), "bias": _ref("l1.bias")},
            {"op": "activation", "in": ["h"], "out": "a", "fn": "tanh"},
            {"op": "linear", "in": ["a"], "out": "q", "weight": _ref("l2.weight"), "bias": None},
        ],
        "action": {"op": "argmax", "in": "q"},
    }
    v.update(over)
    return v


def _node(i: int, **over) -> list:
    nodes = [dict(n) for n in _policy_json()["nodes"]]
    nodes[i].update(over)
    return [{k: x for k, x in n.items() if x is not _DROP} for n in nodes]


_DROP = object()


def _raw_policy(value=None, *, member: str = POLICY_MEMBER, doc=None, used=(POLICY,), weights=None) -> bytes:
    doc = doc if doc is not None else {"policy": value}
    members = {member: json.dumps(doc).encode()} if member else {}
    return saved(
        _spaces(_box((3,))), {"policy": weights or _WEIGHTS}, extensions_used=list(used), extension_members=members
    )


@case(
    "policy-hand-written-valid",
    "A hand-written description whose weights reference the tensor group policy: the base of the malformed cases below.",
    ["RLA_policy §3", "RLA_policy §8"],
    extensions=[POLICY],
)
def _():
    return _raw_policy(_policy_json())


def _without_key(key: str) -> dict:
    v = _policy_json()
    del v[key]
    return v


def _lstm_node() -> dict:
    return {
        "op": "lstm",
        "in": ["obs", "hs", "cs"],
        "out": ["y", "hs2", "cs2"],
        "layers": [
            {
                "weight_ih": nd("F32", [8, 3], np.zeros((8, 3), np.float32).tobytes()),
                "weight_hh": nd("F32", [8, 2], np.zeros((8, 2), np.float32).tobytes()),
                "bias_ih": nd("F32", [8], np.zeros(8, np.float32).tobytes()),
                "bias_hh": nd("F32", [8], np.zeros(8, np.float32).tobytes()),
            }
        ],
    }


_RECURRENT_OK = {
    "hidden_in": "hs",
    "cell_in": "cs",
    "hidden_out": "hs2",
    "cell_out": "cs2",
    "layers": 1,
    "hidden_size": 2,
}

_POLICY_INVALID = [
    ("policy-member-absent", "RLA_policy is used but its member is absent.", lambda: _raw_policy(member="")),
    (
        "policy-top-level-key",
        "The member's object has a property besides policy.",
        lambda: _raw_policy(doc={"policy": _policy_json(), "version": 1}),
    ),
    (
        "policy-key-unknown",
        "The description has a key the extension does not define.",
        lambda: _raw_policy(_policy_json(device="cpu")),
    ),
    ("policy-key-missing", "The description has no nodes.", lambda: _raw_policy(_without_key("nodes"))),
    (
        "policy-normalize-images-not-bool",
        "normalize_images is a string.",
        lambda: _raw_policy(_policy_json(normalize_images="yes")),
    ),
    (
        "policy-vec-normalize-without-statistics",
        "vec_normalize is true but the archive does not use RLA_vec_normalize.",
        lambda: _raw_policy(_policy_json(vec_normalize=True)),
    ),
    (
        "policy-observation-space-tuple",
        "The observation space is a Tuple, which the portable policy does not take.",
        lambda: _raw_policy(_policy_json(observation_space=_space_json(sp.Tuple((sp.Discrete(2),))))),
    ),
    (
        "policy-op-unknown",
        "A node's operation is not in the closed set.",
        lambda: _raw_policy(_policy_json(nodes=_node(1, op="softmax"))),
    ),
    (
        "policy-parameter-missing",
        "A linear node without its bias parameter (null is required when there is none).",
        lambda: _raw_policy(_policy_json(nodes=_node(2, bias=_DROP))),
    ),
    (
        "policy-parameter-extra",
        "A linear node with a parameter linear does not take.",
        lambda: _raw_policy(_policy_json(nodes=_node(0, stride=[1, 1]))),
    ),
    (
        "policy-input-not-computed",
        "A node reads a name that no earlier node computes.",
        lambda: _raw_policy(_policy_json(nodes=_node(1, **{"in": ["z"]}))),
    ),
    (
        "policy-output-twice",
        "Two nodes compute the same name.",
        lambda: _raw_policy(_policy_json(nodes=_node(1, out="h"))),
    ),
    (
        "policy-weight-not-f32",
        "A weight of dtype F64.",
        lambda: _raw_policy(_policy_json(nodes=_node(2, weight=nd("F64", [2, 4], np.zeros((2, 4)).tobytes())))),
    ),
    (
        "policy-linear-width",
        "Inconsistent layer shapes: the second linear layer takes 5 inputs, the first gives 4.",
        lambda: _raw_policy(
            _policy_json(nodes=_node(2, weight=nd("F32", [2, 5], np.zeros((2, 5), np.float32).tobytes())))
        ),
    ),
    (
        "policy-bias-size",
        "A bias of 3 elements for a layer of 4 outputs.",
        lambda: _raw_policy(_policy_json(nodes=_node(0, bias=nd("F32", [3], np.zeros(3, np.float32).tobytes())))),
    ),
    (
        "policy-conv2d-on-vector",
        "A conv2d applied to a vector (it needs channels, height and width).",
        lambda: _raw_policy(
            _policy_json(
                nodes=_node(
                    0,
                    op="conv2d",
                    weight=nd("F32", [4, 3, 1, 1], np.zeros((4, 3, 1, 1), np.float32).tobytes()),
                    bias=None,
                    stride=[1, 1],
                    padding=[0, 0],
                )
            )
        ),
    ),
    (
        "policy-activation-unknown",
        "An activation the extension does not define.",
        lambda: _raw_policy(_policy_json(nodes=_node(1, fn="swish"))),
    ),
    (
        "policy-activation-parameter",
        "A parameter of another activation (tanh takes none).",
        lambda: _raw_policy(_policy_json(nodes=_node(1, alpha=1.0))),
    ),
    (
        "policy-layer-norm-size",
        "A layer_norm whose weight does not match the width of its input.",
        lambda: _raw_policy(
            _policy_json(
                nodes=_node(
                    1,
                    op="layer_norm",
                    fn=_DROP,
                    weight=nd("F32", [3], np.ones(3, np.float32).tobytes()),
                    bias=None,
                    eps=1e-5,
                )
            )
        ),
    ),
    (
        "policy-lstm-without-recurrent",
        "An lstm node in a description without recurrent.",
        lambda: _raw_policy(_policy_json(nodes=[_lstm_node()], action={"op": "argmax", "in": "y"})),
    ),
    (
        "policy-recurrent-without-lstm",
        "recurrent is given but no lstm node uses it.",
        lambda: _raw_policy(_policy_json(recurrent=_RECURRENT_OK)),
    ),
    (
        "policy-lstm-weight-shape",
        "LSTM weights of the wrong shape for the hidden size recurrent declares.",
        lambda: _raw_policy(
            _policy_json(
                recurrent=dict(_RECURRENT_OK, hidden_size=3), nodes=[_lstm_node()], action={"op": "argmax", "in": "y"}
            )
        ),
    ),
    (
        "policy-state-read-by-linear",
        "A recurrent state read by a node other than the lstm (a flatten).",
        lambda: _raw_policy(
            _policy_json(
                recurrent=_RECURRENT_OK,
                nodes=[_lstm_node(), {"op": "flatten", "in": ["hs2"], "out": "f"}],
                action={"op": "argmax", "in": "y"},
            )
        ),
    ),
    (
        "policy-head-unknown",
        "An action head the extension does not define.",
        lambda: _raw_policy(_policy_json(action={"op": "softmax_sample", "in": "q"})),
    ),
    (
        "policy-head-space-kind",
        "A box head for a Discrete action space.",
        lambda: _raw_policy(_policy_json(action={"op": "box", "in": "q", "squash": "clip"})),
    ),
    (
        "policy-head-width",
        "An argmax head over 4 values for a Discrete(2) action space.",
        lambda: _raw_policy(_policy_json(action={"op": "argmax", "in": "h"})),
    ),
    (
        "policy-multi-argmax-sizes",
        "multi_argmax sizes that are not the MultiDiscrete action space's nvec.",
        lambda: _raw_policy(
            _policy_json(
                action_space=_space_json(sp.MultiDiscrete(np.array([1, 1]), np.zeros(2, np.int64))),
                action={"op": "multi_argmax", "in": "q", "sizes": [2]},
            )
        ),
    ),
    (
        "policy-box-squash",
        "A box head with an unknown squash.",
        lambda: _raw_policy(
            _policy_json(
                action_space=_space_json(sp.Box(np.full(2, -1, np.float32), np.full(2, 1, np.float32), (2,), "F32")),
                action={"op": "box", "in": "q", "squash": "sigmoid"},
            )
        ),
    ),
]

for _id, _desc, _build in _POLICY_INVALID:
    case(_id, _desc, ["RLA_policy §3", "RLA_policy §8"], "EXTENSION_INVALID", extensions=[POLICY])(_build)


@case(
    "policy-value-too-large",
    "A Discrete(2^25) observation: its one-hot vector has more than MAX_POLICY_VALUE_ELEMENTS elements.",
    ["RLA_policy §5", "RLA_policy §8"],
    "LIMIT_EXCEEDED",
    extensions=[POLICY],
)
def _():
    return _raw_policy(
        _policy_json(
            observation_space=_space_json(sp.Discrete(1 << 25)),
            nodes=[],
            action={"op": "argmax", "in": "obs"},
            action_space=_space_json(sp.Discrete(1 << 25)),
        )
    )


@case(
    "policy-ref-mismatch",
    "A weight that references a policy tensor with another shape.",
    ["§7.6", "RLA_policy §8"],
    "REF_MISMATCH",
    extensions=[POLICY],
)
def _():
    return _raw_policy(_policy_json(nodes=_node(2, weight=_ref("l2.weight", shape=[4, 2]))))


@case(
    "policy-ref-not-found",
    "A weight that references a tensor the policy group does not have.",
    ["§7.6", "RLA_policy §8"],
    "REF_NOT_FOUND",
    extensions=[POLICY],
)
def _():
    return _raw_policy(_policy_json(nodes=_node(2, weight=_ref("l3.weight", shape=[2, 4]))))


@case(
    "policy-observation-box-bf16",
    "A Box observation space of dtype BF16, which the portable policy does not take (observations are integer, BOOL, F32 or F64).",
    ["RLA_policy §3", "RLA_policy §8"],
    "EXTENSION_INVALID",
    extensions=[POLICY],
)
def _():
    from rlarchive.tensors import RawTensor

    bf = sp.Box(
        RawTensor("BF16", (3,), np.zeros(3, np.uint16)),
        RawTensor("BF16", (3,), np.full(3, 0x3F80, np.uint16)),
        (3,),
        "BF16",
    )
    return _raw_policy(_policy_json(observation_space=_space_json(bf)))


@case(
    "policy-box-head-f16",
    "A box head over an F16 action space: the portable policy acts in F32 or F64 boxes only.",
    ["RLA_policy §6", "RLA_policy §8"],
    "EXTENSION_INVALID",
    extensions=[POLICY],
)
def _():
    half = sp.Box(np.full(2, -1, np.float16), np.full(2, 1, np.float16), (2,), "F16")
    return _raw_policy(_policy_json(action_space=_space_json(half), action={"op": "box", "in": "q", "squash": "clip"}))


@case(
    "policy-operations-too-many",
    "300 activations over a one-hot of 2^24 elements: more than MAX_POLICY_OPERATIONS per observation, refused before anything runs.",
    ["RLA_policy §5", "RLA_policy §8"],
    "LIMIT_EXCEEDED",
    extensions=[POLICY],
)
def _():
    n = 1 << 24
    nodes = [
        {"op": "activation", "in": ["obs" if i == 0 else f"a{i - 1}"], "out": f"a{i}", "fn": "relu"} for i in range(300)
    ]
    return _raw_policy(
        _policy_json(
            observation_space=_space_json(sp.Discrete(n)),
            nodes=nodes,
            action={"op": "argmax", "in": "a299"},
            action_space=_space_json(sp.Discrete(n)),
        )
    )


@case(
    "policy-vec-normalize-other-space",
    "vec_normalize is true but the description's observation space (shape [2]) differs from the data's ([3]), against which the statistics are checked.",
    ["RLA_policy §3", "RLA_policy §8"],
    "EXTENSION_INVALID",
    extensions=[POLICY, VN],
)
def _():
    desc = _policy_json(vec_normalize=True, observation_space=_space_json(_box((2,))))
    desc["nodes"] = _node(0, weight=nd("F32", [4, 2], np.zeros((4, 2), np.float32).tobytes()))
    return saved(
        _spaces(_box((3,))),
        {"policy": _WEIGHTS},
        extensions_used=[POLICY, VN],
        extension_values={VN: _vn(_stats((3,), 9))},
        extension_members={POLICY_MEMBER: json.dumps({"policy": desc}).encode()},
    )
