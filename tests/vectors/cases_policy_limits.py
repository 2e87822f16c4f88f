"""Test cases of RLA_policy §5.11 (cost and memory, checked before anything runs) and of the parameters §5 refuses.

Each case is a hand-written description (the helpers of cases_extensions):
chains whose cost or memory a reader computes from the registry
(spec/policy_ops.json), a ``prelu`` whose weight does not fit, and the
degenerate activation parameters the extension refuses. The numbers in the
descriptions are chosen so that the outcome changes when a reader breaks the
rule: a chain that passes only because values are freed after their last
reader, a peak exactly at MAX_POLICY_MEMORY_BYTES, one just above it.
"""

from __future__ import annotations

import json

import numpy as np
from cases import case, nd, saved
from cases_extensions import (
    _DROP,
    _WEIGHTS,
    POLICY,
    POLICY_MEMBER,
    _box,
    _node,
    _policy_json,
    _raw_policy,
    _space_json,
    _spaces,
)

from rlarchive import spaces as sp

LIMITS = ["RLA_policy §5.11", "RLA_policy §8"]
PARAMS = ["RLA_policy §5", "RLA_policy §8"]


def _compact(value: dict) -> bytes:
    """A description archive whose member is compact JSON (the long chains below stay small)."""
    member = json.dumps({"policy": value}, separators=(",", ":")).encode()
    return saved(
        _spaces(_box((3,))), {"policy": _WEIGHTS}, extensions_used=[POLICY], extension_members={POLICY_MEMBER: member}
    )


def _discrete(n: int, nodes: list, head_in: str) -> dict:
    """A description over a Discrete(n) observation (a one-hot of n elements) acting in Discrete(n)."""
    return _policy_json(
        observation_space=_space_json(sp.Discrete(n)),
        action_space=_space_json(sp.Discrete(n)),
        nodes=nodes,
        action={"op": "argmax", "in": head_in},
    )


def _relu(src: str, out: str) -> dict:
    return {"op": "activation", "in": [src], "out": out, "fn": "relu"}


# ----------------------------------------------------------------------- cost (§5.11)


@case(
    "policy-zero-width-linear-chain",
    "256 linear layers of 2^24 outputs over a zero-width observation, each reading the observation: a zero-width linear still costs POLICY_NODE_COST plus its outputs, so the 256th passes MAX_POLICY_OPERATIONS (a reader that counts only multiply-adds would accept it).",
    LIMITS,
    "LIMIT_EXCEEDED",
    extensions=[POLICY],
)
def _():
    zero = sp.Box(np.zeros(0, np.float32), np.zeros(0, np.float32), (0,), "F32")
    weight = nd("F32", [1 << 24, 0], b"")
    nodes = [{"op": "linear", "in": ["obs"], "out": f"l{i}", "weight": weight, "bias": None} for i in range(256)]
    return _compact(
        _policy_json(
            observation_space=_space_json(zero),
            action_space=_space_json(sp.Discrete(1 << 24)),
            nodes=nodes,
            action={"op": "argmax", "in": "l255"},
        )
    )


def _base36(i: int) -> str:
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # upper case: never the input name obs
    out = ""
    while True:
        i, d = divmod(i, 36)
        out = digits[d] + out
        if i == 0:
            return out


@case(
    "policy-node-cost",
    "65,536 flatten nodes, each reading a one-element observation: each costs POLICY_NODE_COST + 1, so the last passes MAX_POLICY_OPERATIONS; the number of nodes is bounded by the cost alone (stored gzipped in this folder).",
    LIMITS,
    "LIMIT_EXCEEDED",
    gzip=True,
    extensions=[POLICY],
)
def _():
    nodes = [{"op": "flatten", "in": ["obs"], "out": _base36(i)} for i in range(65536)]
    return _compact(_discrete(1, nodes, "0"))


@case(
    "policy-conv2d-padding-huge",
    "A conv2d with padding and stride 2^40 over a 1x2x2 input: a 3x3 output, but the zero-padded input it reads costs its elements, far beyond MAX_POLICY_OPERATIONS.",
    LIMITS,
    "LIMIT_EXCEEDED",
    extensions=[POLICY],
)
def _():
    big = 1 << 40
    node = {
        "op": "conv2d",
        "in": ["obs"],
        "out": "c",
        "weight": nd("F32", [1, 1, 1, 1], np.ones(1, np.float32).tobytes()),
        "bias": None,
        "stride": [big, big],
        "padding": [big, big],
    }
    return _raw_policy(
        _policy_json(
            observation_space=_space_json(_box((1, 2, 2))),
            nodes=[node, {"op": "flatten", "in": ["c"], "out": "q"}],
            action_space=_space_json(sp.Discrete(9)),
            action={"op": "argmax", "in": "q"},
        )
    )


# ----------------------------------------------------------------------- memory (§5.11)


@case(
    "policy-relu-chain-freed",
    "96 relu nodes in a chain over a one-hot of 2^22 elements: its values together take 1.5 GiB, more than MAX_POLICY_MEMORY_BYTES, but each is freed after its last reader, so the peak is 64 MiB and the description is valid.",
    LIMITS,
    extensions=[POLICY],
)
def _():
    n = 1 << 22
    nodes = [_relu("obs" if i == 0 else f"a{i - 1}", f"a{i}") for i in range(96)]
    return _compact(_discrete(n, nodes, "a95"))


def _kept(kept: int) -> dict:
    """``kept`` relu nodes each reading the one-hot of 2^24 elements, then flatten nodes reading them in reverse order: all are live at once."""
    n = 1 << 24
    nodes = [_relu("obs", f"a{i}") for i in range(kept)]
    nodes += [{"op": "flatten", "in": [f"a{i}"], "out": f"f{i}"} for i in reversed(range(kept))]
    return _discrete(n, nodes, "f0")


@case(
    "policy-memory-at-limit",
    "13 relu values of 2^24 elements kept live together with the observation: at the 13th relu node, 14 values of 64 MiB and the relu's workspace of 8 bytes per element make exactly MAX_POLICY_MEMORY_BYTES, which is allowed.",
    LIMITS,
    extensions=[POLICY],
)
def _():
    return _compact(_kept(13))


@case(
    "policy-memory-too-much",
    "14 relu values of 2^24 elements kept live together with the observation: at the 14th relu node the live values and its workspace take 1088 MiB, more than MAX_POLICY_MEMORY_BYTES, though the cost is within MAX_POLICY_OPERATIONS.",
    LIMITS,
    "LIMIT_EXCEEDED",
    extensions=[POLICY],
)
def _():
    return _compact(_kept(14))


# ----------------------------------------------------------------------- prelu and parameters (§5)


def _prelu(width: int) -> list:
    """The base description with a prelu of ``width`` slopes after its first linear layer (4 outputs)."""
    return _node(1, op="prelu", fn=_DROP, weight=nd("F32", [width], np.full(width, 0.25, np.float32).tobytes()))


@case("policy-prelu", "A prelu with one slope per channel between two linear layers.", PARAMS, extensions=[POLICY])
def _():
    return _raw_policy(_policy_json(nodes=_prelu(4)))


@case(
    "policy-prelu-weight-shape",
    "A prelu with 3 slopes over a value of 4 channels (its weight must have shape [1] or [4]).",
    PARAMS,
    "EXTENSION_INVALID",
    extensions=[POLICY],
)
def _():
    return _raw_policy(_policy_json(nodes=_prelu(3)))


def _activation(**params) -> bytes:
    return _raw_policy(_policy_json(nodes=_node(1, **params)))


_INF = {"$type": "float", "value": "inf"}

for _id, _desc, _params in [
    ("policy-softplus-beta-zero", "softplus with beta 0 (it would divide by zero).", {"fn": "softplus", "beta": 0.0}),
    (
        "policy-celu-alpha-zero",
        "celu with alpha 0 (it would divide by zero; PyTorch refuses it).",
        {"fn": "celu", "alpha": 0},
    ),
    (
        "policy-hardtanh-min-above-max",
        "hardtanh with min_val 2 above its default max_val 1 (PyTorch refuses it).",
        {"fn": "hardtanh", "min_val": 2.0},
    ),
    ("policy-parameter-not-finite", "elu with alpha +inf (a tagged non-finite float).", {"fn": "elu", "alpha": _INF}),
    (
        "policy-parameter-beyond-float32",
        "leaky_relu with a negative_slope of 1e39, beyond the largest float32.",
        {"fn": "leaky_relu", "negative_slope": 1e39},
    ),
]:
    case(_id, _desc, PARAMS, "EXTENSION_INVALID", extensions=[POLICY])(lambda p=_params: _activation(**p))


@case(
    "policy-eps-not-finite",
    "A layer_norm whose eps is NaN (a tagged non-finite float).",
    PARAMS,
    "EXTENSION_INVALID",
    extensions=[POLICY],
)
def _():
    return _raw_policy(
        _policy_json(
            nodes=_node(1, op="layer_norm", fn=_DROP, weight=None, bias=None, eps={"$type": "float", "value": "nan"})
        )
    )


@case(
    "policy-recurrent-state-too-large",
    "A recurrent state of 2^12 layers of 2^13 units: 2^25 elements, more than MAX_POLICY_VALUE_ELEMENTS (a state is a value like any other).",
    LIMITS,
    "LIMIT_EXCEEDED",
    extensions=[POLICY],
)
def _():
    from cases_extensions import _RECURRENT_OK, _lstm_node

    return _raw_policy(
        _policy_json(
            recurrent=dict(_RECURRENT_OK, layers=1 << 12, hidden_size=1 << 13),
            nodes=[_lstm_node()],
            action={"op": "argmax", "in": "y"},
        )
    )
