"""Cases that pin where an RLA_policy issue is located (RLA_policy §8), and the policy arithmetic a strict reader could get wrong.

The invalid cases each break one rule of a hand-written description (the
well-formed base of cases_extensions.py) at a place where two readings were
possible; each names its check (spec/checks.json) and site, and its
description says which rule of RLA_policy §8 puts the issue there. The
``predict`` cases (dump and actions) are built so that a reader that breaks
the arithmetic rule of RLA_policy §5 or §6 they name gives another action,
beyond any tolerance: an argmax over two values that the rule orders (or
ties) one way and the other reading the other way, or a bernoulli logit on
either side of the threshold. Their expected actions are computed here, by
torch where torch computes what the spec decides (SB3's bernoulli mode), by
binary64 formulas written out below otherwise.
"""

from __future__ import annotations

import math

import numpy as np
from cases import CASES, Case, case, nd
from cases_extensions import (
    _DROP,
    _RECURRENT_OK,
    POLICY,
    POLICY_MEMBER,
    _box,
    _lstm_node,
    _node,
    _policy_json,
    _raw_policy,
    _space_json,
)
from sites import doc

from rlarchive import spaces as sp

F32 = np.float32
SECTIONS = ["RLA_policy §8", "§11.2"]


def _at(pointer: str, by: str):
    return doc(pointer, by, member=POLICY_MEMBER)


def _invalid(cid: str, description: str, pointer: str, by: str, build, code: str = "EXTENSION_INVALID") -> None:
    check = "extension-limit" if code == "LIMIT_EXCEEDED" else "extension-document"
    case(cid, description, SECTIONS, code, extensions=[POLICY], check=check, at=_at(pointer, by))(build)


def _zeros(shape) -> dict:
    return nd("F32", list(shape), np.zeros(shape, F32).tobytes())


def _with_nodes(nodes: list, **over) -> bytes:
    return _raw_policy(_policy_json(nodes=nodes, **over))


_LINEAR0 = _policy_json()["nodes"][0]
_Q = _policy_json()["nodes"][2]


# -- discriminators, missing and not allowed members (RLA_policy §8 step 5) --------------------------------------

_invalid(
    "policy-loc-op-missing",
    "A node without op: a member missing is located at the object, the node /policy/nodes/1 (RLA_policy §8, 5.7).",
    "/policy/nodes/1",
    "missing",
    lambda: _with_nodes(_node(1, op=_DROP)),
)
_invalid(
    "policy-loc-op-not-string",
    "A node whose op is a number: the discriminator itself is at fault, /policy/nodes/1/op, not the node (RLA_policy §8, 5; §11.2).",
    "/policy/nodes/1/op",
    "value",
    lambda: _with_nodes(_node(1, op=5)),
)
_invalid(
    "policy-loc-fn-missing",
    "An activation node without fn (fn is REQUIRED): at the node /policy/nodes/1 (RLA_policy §5, §8 5.7).",
    "/policy/nodes/1",
    "missing",
    lambda: _with_nodes(_node(1, fn=_DROP)),
)
_invalid(
    "policy-loc-fn-before-members",
    "An unknown fn and a parameter no activation takes: fn is the discriminator, checked before the members not allowed, so at /policy/nodes/1/fn (RLA_policy §8, 5).",
    "/policy/nodes/1/fn",
    "value",
    lambda: _with_nodes(_node(1, fn="swish", zeta=1)),
)
_invalid(
    "policy-loc-activation-not-allowed-first",
    "elu with alpha a string and beta (softplus's, not elu's): a member not allowed comes before the members' values, so at /policy/nodes/1/beta (RLA_policy §8, 5).",
    "/policy/nodes/1/beta",
    "not-allowed",
    lambda: _with_nodes(_node(1, fn="elu", alpha="x", beta=1.0)),
)
_invalid(
    "policy-loc-activation-parameter-order",
    "softplus with threshold a string (first in the document) and beta 0: the parameters are checked in the order of the table of activations (beta, threshold), so at /policy/nodes/1/beta.",
    "/policy/nodes/1/beta",
    "value",
    lambda: _with_nodes(_node(1, fn="softplus", threshold="x", beta=0.0)),
)
_invalid(
    "policy-loc-not-allowed-document-order",
    "A linear node with two members linear does not take, zeta then alpha: the first in document order, /policy/nodes/0/zeta (§11.2), not the first by name.",
    "/policy/nodes/0/zeta",
    "not-allowed",
    lambda: _with_nodes(_node(0, zeta=1, alpha=2)),
)
_invalid(
    "policy-loc-in-missing",
    "A linear node without in: at the node /policy/nodes/0 (a member missing, §11.2), never at /in.",
    "/policy/nodes/0",
    "missing",
    lambda: _with_nodes(_node(0, **{"in": _DROP})),
)
_invalid(
    "policy-loc-out-missing",
    "A linear node without out: at the node /policy/nodes/2.",
    "/policy/nodes/2",
    "missing",
    lambda: _with_nodes(_node(2, out=_DROP)),
)
_invalid(
    "policy-loc-head-op-missing",
    "A head without op: at the head /policy/action (a member missing).",
    "/policy/action",
    "missing",
    lambda: _raw_policy(_policy_json(action={"in": "q"})),
)
_invalid(
    "policy-loc-head-in-missing",
    "An argmax head without in: at the head /policy/action (a member missing), never at /policy/action/in.",
    "/policy/action",
    "missing",
    lambda: _raw_policy(_policy_json(action={"op": "argmax"})),
)

# -- in and out (RLA_policy §8, 5.7) ------------------------------------------------------------------------------

_invalid(
    "policy-loc-in-count",
    "A linear node reading two names (it takes one): the list is at fault, /policy/nodes/0/in.",
    "/policy/nodes/0/in",
    "value",
    lambda: _with_nodes(_node(0, **{"in": ["obs", "obs"]})),
)
_invalid(
    "policy-loc-in-not-name",
    "A concat whose second input is the empty string: the element, /policy/nodes/1/in/1 (G5: an element at fault).",
    "/policy/nodes/1/in/1",
    "element",
    lambda: _with_nodes(_node(1, op="concat", fn=_DROP, **{"in": ["h", ""]})),
)
_invalid(
    "policy-loc-state-read-by-concat",
    "A concat reading the obs and then a recurrent state: the element naming the state, /policy/nodes/1/in/1 (only the lstm reads a state).",
    "/policy/nodes/1/in/1",
    "element",
    lambda: _raw_policy(
        _policy_json(
            recurrent=_RECURRENT_OK,
            nodes=[_lstm_node(), {"op": "concat", "in": ["y", "hs2"], "out": "f"}],
            action={"op": "argmax", "in": "y"},
        )
    ),
)
_invalid(
    "policy-loc-lstm-in-state-slot",
    "An lstm reading cell_in where hidden_in goes: the element /policy/nodes/0/in/1 (in[1] must be hidden_in).",
    "/policy/nodes/0/in/1",
    "element",
    lambda: _raw_policy(
        _policy_json(
            recurrent=_RECURRENT_OK,
            nodes=[dict(_lstm_node(), **{"in": ["obs", "cs", "hs"]})],
            action={"op": "argmax", "in": "y"},
        )
    ),
)
_invalid(
    "policy-loc-lstm-out-state-slot",
    "An lstm writing its next cell where hidden_out goes: the element /policy/nodes/0/out/1 (out[1] must be hidden_out).",
    "/policy/nodes/0/out/1",
    "element",
    lambda: _raw_policy(
        _policy_json(
            recurrent=_RECURRENT_OK,
            nodes=[dict(_lstm_node(), out=["y", "cs2", "hs2"])],
            action={"op": "argmax", "in": "y"},
        )
    ),
)
_invalid(
    "policy-loc-second-lstm",
    "Two lstm nodes for one recurrent state: the operation of the second is at fault, the node /policy/nodes/1 (checked before its in).",
    "/policy/nodes/1",
    "value",
    lambda: _raw_policy(
        _policy_json(
            recurrent=_RECURRENT_OK,
            nodes=[_lstm_node(), dict(_lstm_node(), out=["y2", "hs3", "cs3"])],
            action={"op": "argmax", "in": "y"},
        )
    ),
)
_invalid(
    "policy-loc-out-not-name",
    "A node whose out is a number: the value at fault, /policy/nodes/1/out.",
    "/policy/nodes/1/out",
    "value",
    lambda: _with_nodes(_node(1, out=7)),
)
_invalid(
    "policy-loc-linear-rank0",
    "A linear over a 0-dimensional observation (Box of shape []): the input of the wrong rank, /policy/nodes/0/in/0, checked in in's turn before weight.",
    "/policy/nodes/0/in/0",
    "element",
    lambda: _raw_policy(_policy_json(observation_space=_space_json(_box(())))),
)
_invalid(
    "policy-loc-batch-norm-rank",
    "A batch_norm over a [1, 3] observation (it takes vectors): the input, /policy/nodes/0/in/0.",
    "/policy/nodes/0/in/0",
    "element",
    lambda: _raw_policy(
        _policy_json(
            observation_space=_space_json(_box((1, 3))),
            nodes=[
                {
                    "op": "batch_norm",
                    "in": ["obs"],
                    "out": "h",
                    "running_mean": _zeros((3,)),
                    "running_var": _zeros((3,)),
                    "weight": None,
                    "bias": None,
                    "eps": 1e-5,
                },
                {"op": "flatten", "in": ["h"], "out": "f"},
                dict(_LINEAR0, **{"in": ["f"], "out": "q2"}),
            ],
            action={"op": "argmax", "in": "q2"},
        )
    ),
)

# -- parameters (RLA_policy §8, 5.7) ------------------------------------------------------------------------------

_invalid(
    "policy-loc-conv2d-kernel-fit",
    "A 3x3 kernel over a 2x2 input without padding: weight and padding contradict the input; the later member, /policy/nodes/0/padding (G6).",
    "/policy/nodes/0/padding",
    "contradiction",
    lambda: _raw_policy(
        _policy_json(
            observation_space=_space_json(_box((3, 2, 2))),
            nodes=[
                {
                    "op": "conv2d",
                    "in": ["obs"],
                    "out": "c",
                    "weight": _zeros((1, 3, 3, 3)),
                    "bias": None,
                    "stride": [1, 1],
                    "padding": [0, 0],
                }
            ],
            action={"op": "argmax", "in": "c"},
        )
    ),
)
_invalid(
    "policy-loc-hardtanh-both-bounds",
    "hardtanh with min_val 2 and max_val 1, both given: the later of the table's two, /policy/nodes/1/max_val.",
    "/policy/nodes/1/max_val",
    "contradiction",
    lambda: _with_nodes(_node(1, fn="hardtanh", min_val=2.0, max_val=1.0)),
)
_invalid(
    "policy-loc-output-too-large",
    "A conv2d whose padding makes a 6001x6001 output, more than MAX_POLICY_VALUE_ELEMENTS: LIMIT_EXCEEDED at the output's name /policy/nodes/0/out (G9), before the node's cost.",
    "/policy/nodes/0/out",
    "limit",
    lambda: _raw_policy(
        _policy_json(
            observation_space=_space_json(_box((1, 1, 1))),
            nodes=[
                {
                    "op": "conv2d",
                    "in": ["obs"],
                    "out": "c",
                    "weight": _zeros((1, 1, 1, 1)),
                    "bias": None,
                    "stride": [1, 1],
                    "padding": [3000, 3000],
                }
            ],
            action={"op": "argmax", "in": "c"},
        )
    ),
    code="LIMIT_EXCEEDED",
)

# -- recurrent (RLA_policy §8, 5.4) -------------------------------------------------------------------------------

_invalid(
    "policy-loc-recurrent-name-observation",
    "recurrent's hidden_in is obs, an observation input: at that key, /policy/recurrent/hidden_in.",
    "/policy/recurrent/hidden_in",
    "value",
    lambda: _raw_policy(_policy_json(recurrent=dict(_RECURRENT_OK, hidden_in="obs"))),
)
_invalid(
    "policy-loc-recurrent-name-repeated",
    "recurrent's cell_out equals its hidden_out: the later key in the table's order, /policy/recurrent/cell_out.",
    "/policy/recurrent/cell_out",
    "value",
    lambda: _raw_policy(_policy_json(recurrent=dict(_RECURRENT_OK, cell_out="hs2"))),
)

# -- the head (RLA_policy §8, 5.8) --------------------------------------------------------------------------------

_invalid(
    "policy-loc-head-parameter-before-space",
    "A box head with an unknown squash for a Discrete action space: the head's own parameters come before its agreement with action_space, so at /policy/action/squash.",
    "/policy/action/squash",
    "value",
    lambda: _raw_policy(_policy_json(action={"op": "box", "in": "q", "squash": "sigmoid"})),
)
_invalid(
    "policy-loc-head-vector-before-space",
    "A box head reading a [1, 3] value for a Discrete action space: in (not a vector) comes before the action space, so at /policy/action/in.",
    "/policy/action/in",
    "value",
    lambda: _raw_policy(
        _policy_json(
            observation_space=_space_json(_box((1, 3))), nodes=[], action={"op": "box", "in": "obs", "squash": "clip"}
        )
    ),
)


# -- arithmetic: predict cases (RLA_policy §5, §6) ------------------------------------------------------------------


def _bernoulli_threshold():
    import torch
    from cases_policy_numerics import _hand

    t = F32(3 * 2.0**-25)
    xs = [
        F32(0.0),
        F32(-0.0),
        F32(2.0**-25),
        t,
        np.nextafter(t, F32(1)),
        F32(1e-7),
        F32(2.0**-23),
        np.nextafter(F32(2.0**-23), F32(1)),
        F32(-1e-7),
        F32(0.25),
    ]
    obs = [np.array([x], F32) for x in xs]
    # SB3's mode: torch.round of the Bernoulli's probs, sigmoid in float32
    acts = [
        torch.round(torch.distributions.Bernoulli(logits=torch.from_numpy(o)).probs).numpy().astype(F32) for o in obs
    ]
    nodes = [{"op": "activation", "in": ["obs"], "out": "y", "fn": "identity"}]
    return _hand(_box((1,)), sp.MultiBinary(1), nodes, {"op": "bernoulli", "in": "y"}, obs, acts)


# Pairs of adjacent float32 x1 < x2 (found by search): silu's binary64 value rounded once to float32 ties on the
# first pair and orders the second x1 < x2; rounding the sigmoid to float32 first orders the first and ties the second.
_SILU_PAIRS = [(0.7390760779380798, 0.7390761375427246), (0.738961398601532, 0.7389614582061768)]


def _silu_once():
    from cases_policy_numerics import _hand

    def silu(x: float) -> F32:  # RLA_policy §5: x·sigmoid(x) in binary64, rounded once
        return F32(x * (1.0 / (1.0 + math.exp(-x))))

    def rounded_twice(x: float) -> F32:  # the reading the rule excludes: the sigmoid rounded to float32 first
        return F32(F32(x) * F32(1.0 / (1.0 + math.exp(-x))))

    obs, acts = [], []
    for x1, x2 in _SILU_PAIRS:
        once, twice = (silu(x1), silu(x2)), (rounded_twice(x1), rounded_twice(x2))
        a_once, a_twice = int(np.argmax(once)), int(np.argmax(twice))  # the first on ties
        assert a_once != a_twice, (x1, x2)  # the case tells the readings apart
        obs.append(np.array([x1, x2], F32))
        acts.append(np.int64(a_once))
    nodes = [{"op": "activation", "in": ["obs"], "out": "y", "fn": "silu"}]
    return _hand(_box((2,)), sp.Discrete(2), nodes, {"op": "argmax", "in": "y"}, obs, acts)


def _nvec_2d():
    from cases_policy_numerics import _hand

    nvec = np.array([[2, 3], [4, 2]], np.int64)
    space = sp.MultiDiscrete(nvec, np.zeros_like(nvec))
    rng = np.random.default_rng(5)
    obs = [rng.normal(size=11).astype(F32) for _ in range(3)]
    sizes = [int(n) for n in nvec.reshape(-1)]  # C order

    def expect(x: np.ndarray) -> np.ndarray:
        parts, at = [], 0
        for n in sizes:
            parts.append(int(np.argmax(x[at : at + n])))
            at += n
        return np.array(parts, np.int64).reshape(nvec.shape)  # the action space's shape, C order

    nodes = [{"op": "activation", "in": ["obs"], "out": "y", "fn": "identity"}]
    return _hand(
        _box((11,)), space, nodes, {"op": "multi_argmax", "in": "y", "sizes": sizes}, obs, [expect(o) for o in obs]
    )


_PREDICT = {
    "policy-bernoulli-threshold": (
        "A bernoulli head over float32 logits around 3·2^-25 (and 2^-23): 1.0 exactly above 3·2^-25, as SB3's torch.round(torch.sigmoid(x)) in float32; the rounded exact sigmoid would give 0.0 up to 2^-23.",
        ["RLA_policy §6"],
        _bernoulli_threshold,
    ),
    "policy-activation-silu-rounded-once": (
        "silu computed in binary64 and rounded once, then argmax over two adjacent float32 inputs: a reader rounding the sigmoid to float32 first breaks or makes the tie, and acts otherwise.",
        ["RLA_policy §5"],
        _silu_once,
    ),
    "policy-multi-argmax-nvec-2d": (
        "multi_argmax for a MultiDiscrete action space with nvec of shape [2, 2]: sizes is nvec in C order, and each action has nvec's shape [2, 2].",
        ["RLA_policy §6"],
        _nvec_2d,
    ),
}
_BUILT: dict = {}


def _built(cid: str):
    if cid not in _BUILT:
        _BUILT[cid] = _PREDICT[cid][2]()
    return _BUILT[cid]


def _register() -> None:
    try:
        import torch  # noqa: F401
    except ImportError:  # torch missing: these cases cannot be built here
        return
    for cid, (desc, sections, _) in _PREDICT.items():
        case(cid, desc + " The archive's dump.", sections + ["RLA_policy §3"], extensions=[POLICY])(
            lambda c=cid: _built(c).archive
        )
        CASES.append(
            Case(
                f"{cid}-predict",
                desc + " Actions for sample observations.",
                sections + ["RLA_policy §7"],
                "actions",
                lambda c=cid: _built(c).archive,
                extensions=[POLICY],
                predict=lambda c=cid: _built(c).predict,
                file_id=cid,
            )
        )


_register()
