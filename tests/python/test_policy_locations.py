"""Where the RLA_policy checks locate an issue (RLA_policy §8 step 5), and the bernoulli head's exact rule (§6).

Each description breaks one rule, or two whose order §8 decides; the issue's
pointer is the one §8 gives. The test vectors ``policy-loc-*`` run the same
places through both readers; these cover the rest of the rules of §8 cheaply.
"""

from __future__ import annotations

import numpy as np
import pytest

from rlarchive import spaces as sp
from rlarchive.errors import RlarchiveError
from rlarchive.extensions.policy.description import check
from rlarchive.extensions.policy.evaluator import _HEADS, BERNOULLI_THRESHOLD
from rlarchive.values import dump_value

F32 = np.float32


def nd(shape) -> dict:
    return {"$type": "ndarray", "dtype": "F32", "shape": list(shape), "base64": ""}


def box(shape) -> dict:
    return dump_value(sp.Box(np.full(shape, -1, F32), np.full(shape, 1, F32), tuple(shape), "F32"))


LIN = {"op": "linear", "in": ["obs"], "out": "h", "weight": nd([4, 3]), "bias": None}
REC = {"hidden_in": "hs", "cell_in": "cs", "hidden_out": "hs2", "cell_out": "cs2", "layers": 1, "hidden_size": 2}
LSTM = {
    "op": "lstm",
    "in": ["obs", "hs", "cs"],
    "out": ["y", "hs2", "cs2"],
    "layers": [{"weight_ih": nd([8, 3]), "weight_hh": nd([8, 2]), "bias_ih": nd([8]), "bias_hh": nd([8])}],
}


def describe(nodes=(LIN,), action=None, action_space=None, **over) -> dict:
    d = {
        "observation_space": box((3,)),
        "action_space": action_space or dump_value(sp.Discrete(4)),
        "normalize_images": False,
        "nodes": list(nodes),
        "action": action or {"op": "argmax", "in": "h"},
    }
    d.update(over)
    return d


def pointer(desc: dict, data=None, used=()) -> tuple:
    with pytest.raises(RlarchiveError) as e:
        check(desc, data, used)
    return e.value.code, e.value.pointer


PLACES = [
    # the description's members in the order of the table of §3
    (
        describe(normalize_images="no", observation_space=dump_value(sp.Text(1, 2, "ab"))),
        "/policy/observation_space/kind",
    ),
    (describe(observation_space=dict(box((3,)), dtype="F16")), "/policy/observation_space/dtype"),
    (
        describe(
            observation_space=dump_value(sp.Dict((("a", sp.Discrete(3)), ("b", sp.Dict((("c", sp.Discrete(2)),))))))
        ),
        "/policy/observation_space/spaces/1/1/kind",
    ),
    (describe(observation_space=7), "/policy/observation_space"),
    (describe(normalize_images="no", vec_normalize="yes"), "/policy/normalize_images"),
    (describe(vec_normalize=True), "/policy/vec_normalize"),
    (describe(recurrent=REC), "/policy/nodes"),
    (describe(recurrent=dict(REC, hidden_out=3)), "/policy/recurrent/hidden_out"),
    (describe(recurrent=dict(REC, layers=0, hidden_in="")), "/policy/recurrent/hidden_in"),
    (describe(action_space=5, action={"op": "zeta"}), "/policy/action_space"),
    # a node: op, missing, not allowed, the operation, in, out, parameters
    (describe([dict(LIN, op="relu", zeta=1)]), "/policy/nodes/0/op"),
    (describe([{"op": "linear", "zeta": 1}]), "/policy/nodes/0"),
    (describe([dict(LIN, zeta=1, **{"in": 5})]), "/policy/nodes/0/zeta"),
    (describe([dict(LSTM, **{"in": 5})]), "/policy/nodes/0"),
    (describe([dict(LIN, **{"in": ["obs", 1]})]), "/policy/nodes/0/in"),
    (describe([{"op": "concat", "in": ["obs", 7], "out": "h"}]), "/policy/nodes/0/in/1"),
    (describe([dict(LIN, out="obs", weight=nd([4]))]), "/policy/nodes/0/out"),
    (describe([dict(LIN, weight=nd([4, 2]), bias=nd([5]))]), "/policy/nodes/0/weight"),
    (describe([dict(LIN, bias=nd([5]))]), "/policy/nodes/0/bias"),
    (
        describe(
            [{"op": "activation", "in": ["obs"], "out": "h", "fn": "hardtanh", "min_val": 2.0}],
            action={"op": "argmax", "in": "h"},
            action_space=dump_value(sp.Discrete(3)),
        ),
        "/policy/nodes/0/min_val",
    ),
    (
        describe([{"op": "activation", "in": ["obs"], "out": "h", "fn": "hardtanh", "max_val": -2.0}]),
        "/policy/nodes/0/max_val",
    ),
    (
        describe([{"op": "activation", "in": ["obs"], "out": "h", "fn": "gelu", "approximate": "fast", "zeta": 1}]),
        "/policy/nodes/0/zeta",
    ),
    (
        describe([dict(LSTM, **{"in": ["hs", "hs", "cs"]})], recurrent=REC, action={"op": "argmax", "in": "y"}),
        "/policy/nodes/0/in/0",
    ),
    (
        describe([dict(LSTM, **{"in": ["obs", "hs", "hs"]})], recurrent=REC, action={"op": "argmax", "in": "y"}),
        "/policy/nodes/0/in/2",
    ),
    (
        describe([dict(LSTM, out=["y", "hs2", "obs"])], recurrent=REC, action={"op": "argmax", "in": "y"}),
        "/policy/nodes/0/out/2",
    ),
    (describe([dict(LSTM, layers=[])], recurrent=REC, action={"op": "argmax", "in": "y"}), "/policy/nodes/0/layers"),
    # the head: op, missing, not allowed, in, its parameters, the action space, sizes, the width
    (describe(action={"op": "argmax", "in": "h", "zeta": 1}), "/policy/action/zeta"),
    (describe(action={"op": "sample", "zeta": 1}), "/policy/action/op"),
    (describe(action={"op": "argmax", "in": "hs"}), "/policy/action/in"),
    (
        describe(action={"op": "quantile_argmax", "in": "h", "n_quantiles": 0}, action_space=box((4,))),
        "/policy/action/n_quantiles",
    ),
    (describe(action={"op": "multi_argmax", "in": "h", "sizes": [2, 2]}), "/policy/action"),
    (
        describe(
            action={"op": "multi_argmax", "in": "h", "sizes": [4]},
            action_space=dump_value(sp.MultiDiscrete(np.array([2, 2]), np.zeros(2, np.int64))),
        ),
        "/policy/action/sizes",
    ),
    (describe(action={"op": "argmax", "in": "h"}, action_space=dump_value(sp.Discrete(5))), "/policy/action/in"),
]


@pytest.mark.parametrize("desc, where", PLACES, ids=[w + f" #{i}" for i, (_, w) in enumerate(PLACES)])
def test_each_issue_is_where_section_8_puts_it(desc, where):
    assert pointer(desc) == ("EXTENSION_INVALID", where)


def test_an_observation_above_the_value_limit_is_at_the_member_that_gives_its_size():
    big = 1 << 25
    for space, member in (
        (sp.Discrete(big), "n"),
        (sp.MultiBinary(big), "n"),
        (sp.Box(np.zeros(1, F32), np.ones(1, F32), (1,), "F32"), None),
    ):
        desc = describe(observation_space=dump_value(space))
        if member is None:  # a box: its shape (given here without its bounds' arrays: the checker reads the shape only)
            desc["observation_space"]["shape"] = [big]
            member = "shape"
        assert pointer(desc) == ("LIMIT_EXCEEDED", f"/policy/observation_space/{member}")


def test_vec_normalize_with_another_outline_is_at_vec_normalize():
    data = {"observation_space": box((4,))}
    assert pointer(describe(vec_normalize=True), data, ["RLA_vec_normalize"]) == (
        "EXTENSION_INVALID",
        "/policy/vec_normalize",
    )
    check(
        describe(vec_normalize=True), {"observation_space": box((3,))}, ["RLA_vec_normalize"]
    )  # the same outline passes


def test_bernoulli_is_sb3s_mode_for_every_float32_logit_near_the_threshold():
    torch = pytest.importorskip("torch")
    for start in range(0x32000000, 0x35800000, 1 << 22):  # float32 from about 7e-9 to 9.5e-7, a slice at a time
        bits = np.arange(start, min(start + (1 << 22), 0x35800000), dtype=np.uint32)
        x = np.concatenate([bits.view(F32), -bits.view(F32), np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf], F32)])
        want = torch.round(torch.sigmoid(torch.from_numpy(x))).numpy()  # SB3's BernoulliDistribution.mode, in float32
        got = _HEADS["bernoulli"]({"op": "bernoulli"}, x.reshape(1, -1), None)[0]
        assert got.dtype == F32
        assert np.array_equal(got, want), hex(start)
    assert float(BERNOULLI_THRESHOLD) == 3 * 2.0**-25
    assert _HEADS["bernoulli"]({}, np.array([[np.nan]], F32), None)[0, 0] == 0.0  # NaN gives 0.0 (RLA_policy §6)


#: Descriptions whose checks once leaned on ``assert`` (an lstm without ``recurrent``, a weight that is null).
WITHOUT_ASSERT = [
    describe([LSTM], action={"op": "argmax", "in": "y"}),
    describe([dict(LIN, weight=None)]),
    describe([{"op": "prelu", "in": ["obs"], "out": "h", "weight": None}]),
    describe(
        [{"op": "conv2d", "in": ["obs"], "out": "h", "weight": None, "bias": None, "stride": 1, "padding": 0}],
        observation_space=box((1, 4, 4)),
    ),
]

_UNDER_O = """
import json, sys
from rlarchive.errors import RlarchiveError
from rlarchive.extensions.policy.description import check
assert False, "python -O keeps assert statements"
out = []
for desc in json.load(sys.stdin):
    try:
        check(desc)
        out.append(None)
    except RlarchiveError as e:
        out.append([e.code, e.pointer])
print(json.dumps(out))
"""


def test_python_O_rejects_each_bad_description_where_python_does():
    """``python -O`` drops assert statements: each check is an ``if`` that raises, so the answers are the same."""
    import json
    import subprocess
    import sys

    descs = [d for d, _ in PLACES] + WITHOUT_ASSERT
    want = [list(pointer(d)) for d in descs]
    assert all(code == "EXTENSION_INVALID" for code, _ in want[len(PLACES) :])
    r = subprocess.run(
        [sys.executable, "-O", "-c", _UNDER_O], input=json.dumps(descs), capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout) == want
