"""RLA_policy §5.11: what the description checker charges (cost and memory), that both readers' checkers agree, and that an evaluation stays within the memory charged."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import tempfile
import tracemalloc

import numpy as np
import pytest
from suite import ROOT

import rlarchive
from rlarchive import spaces as sp
from rlarchive.errors import RlarchiveError
from rlarchive.extensions.policy.description import check
from rlarchive.extensions.policy.ops import (
    ACTIVATIONS,
    MAX_POLICY_MEMORY_BYTES,
    MAX_POLICY_OPERATIONS,
    POLICY_NODE_COST,
)
from rlarchive.values import dump_value

NODE = POLICY_NODE_COST


def space(s) -> dict:
    return json.loads(json.dumps(dump_value(s)))


def nd(shape, dtype: str = "F32") -> dict:
    """An ndarray parameter as the checker sees it: only its dtype and shape matter to the checks."""
    return {"$type": "ndarray", "dtype": dtype, "shape": list(shape), "base64": ""}


def box(shape) -> sp.Box:
    return sp.Box(np.full(shape, -1, np.float32), np.full(shape, 1, np.float32), tuple(shape), "F32")


def describe(obs, nodes: list, head: dict, action, recurrent=None) -> dict:
    d = {
        "observation_space": space(obs),
        "action_space": space(action),
        "normalize_images": False,
        "nodes": nodes,
        "action": head,
    }
    if recurrent is not None:
        d["recurrent"] = recurrent
    return d


def relu(src: str, out: str, fn: str = "relu") -> dict:
    return {"op": "activation", "in": [src], "out": out, "fn": fn}


def refused(desc: dict) -> tuple:
    with pytest.raises(RlarchiveError) as e:
        check(desc)
    return e.value.code, e.value.pointer


def test_a_zero_width_linear_still_costs():
    nodes = [{"op": "linear", "in": ["obs"], "out": "y", "weight": nd([5, 0]), "bias": None}]
    c = check(describe(box((0,)), nodes, {"op": "argmax", "in": "y"}, sp.Discrete(5)))
    assert c.operations == (NODE + 5) + (NODE + 5)  # linear: out·width (0) + out; argmax: its input


def test_the_cost_limit_is_reached_exactly_then_passed():
    n = (1 << 24) - NODE  # each flatten costs NODE + n = 2^24, the argmax head as much

    def chain(k: int) -> dict:
        nodes = [{"op": "flatten", "in": ["obs" if i == 0 else f"f{i - 1}"], "out": f"f{i}"} for i in range(k)]
        return describe(sp.Discrete(n), nodes, {"op": "argmax", "in": f"f{k - 1}"}, sp.Discrete(n))

    assert check(chain(255)).operations == MAX_POLICY_OPERATIONS  # exactly the limit is allowed
    assert refused(chain(256)) == ("LIMIT_EXCEEDED", "/policy/action")  # the head passes it
    assert refused(chain(257)) == ("LIMIT_EXCEEDED", "/policy/nodes/256")


def test_every_node_costs_the_node_cost_so_nodes_are_bounded():
    count = MAX_POLICY_OPERATIONS // (NODE + 1)  # one-element flattens
    nodes = [{"op": "flatten", "in": ["obs"], "out": f"f{i}"} for i in range(count + 1)]
    assert refused(describe(sp.Discrete(1), nodes, {"op": "argmax", "in": "f0"}, sp.Discrete(1))) == (
        "LIMIT_EXCEEDED",
        f"/policy/nodes/{count}",
    )


def test_a_chain_frees_its_values():
    n = 1 << 20
    nodes = [relu("obs" if i == 0 else f"a{i - 1}", f"a{i}") for i in range(50)]
    c = check(describe(sp.Discrete(n), nodes, {"op": "argmax", "in": "a49"}, sp.Discrete(n)))
    relu_bytes = ACTIVATIONS["relu"]["workspace"] * n
    assert c.memory[0] == 4 * n * 2 + relu_bytes  # the observation and a0, then relu's workspace
    assert c.memory[1:50] == (4 * n * 2 + relu_bytes,) * 49  # a(i-1) and a(i): the observation is freed after node 0
    assert c.memory_bytes == 4 * n * 2 + relu_bytes and c.peak_at == "/policy/nodes/0"
    assert 51 * 4 * n > MAX_POLICY_MEMORY_BYTES // 32  # (all values kept would be 25 times more)


def _kept(n: int, k: int) -> dict:
    nodes = [relu("obs", f"a{i}") for i in range(k)] + [
        {"op": "flatten", "in": [f"a{i}"], "out": f"f{i}"} for i in reversed(range(k))
    ]
    return describe(sp.Discrete(n), nodes, {"op": "argmax", "in": "f0"}, sp.Discrete(n))


def test_a_value_lives_until_its_last_reader():
    n, k = 1000, 6
    c = check(_kept(n, k))
    ws = ACTIVATIONS["relu"]["workspace"] * n
    assert list(c.memory[:k]) == [4 * n * (i + 2) + ws for i in range(k)]  # the observation and a0..ai
    # flatten of a(k-1-j): a0..a(k-1-j) and its output, which no one reads but f0
    assert list(c.memory[k : 2 * k]) == [4 * n * (k - j + 1) for j in range(k)]
    assert c.memory[-1] == 4 * n + 8 * n  # f0 and the argmax head's workspace


def test_the_memory_limit_is_reached_exactly_then_passed():
    n = 1 << 24
    c = check(_kept(n, 13))
    assert c.memory_bytes == MAX_POLICY_MEMORY_BYTES and c.peak_at == "/policy/nodes/12"
    assert refused(_kept(n, 14)) == ("LIMIT_EXCEEDED", "/policy/nodes/13")


def test_recurrent_outputs_live_to_the_end():
    hidden, layers = 64, 2
    rec = {
        "hidden_in": "h",
        "cell_in": "c",
        "hidden_out": "h2",
        "cell_out": "c2",
        "layers": layers,
        "hidden_size": hidden,
    }
    lstm = {
        "op": "lstm",
        "in": ["obs", "h", "c"],
        "out": ["y", "h2", "c2"],
        "layers": [
            {
                "weight_ih": nd([4 * hidden, 3 if i == 0 else hidden]),
                "weight_hh": nd([4 * hidden, hidden]),
                "bias_ih": nd([4 * hidden]),
                "bias_hh": nd([4 * hidden]),
            }
            for i in range(layers)
        ],
    }
    nodes = [lstm, {"op": "linear", "in": ["y"], "out": "q", "weight": nd([2, hidden]), "bias": None}]
    c = check(describe(box((3,)), nodes, {"op": "argmax", "in": "q"}, sp.Discrete(2), rec))
    state = 4 * layers * hidden
    argmax = 8 * 2  # the head's workspace over its 2 inputs
    assert c.memory[-1] == 4 * 2 + 2 * state + argmax  # q, and both next states, kept for the caller
    linear_ws = 8 * hidden + 8 * 2 * hidden + 16 * 2
    assert c.memory[1] == 4 * hidden + 4 * 2 + 2 * state + linear_ws  # y, q and the next states
    assert c.operations > 2 * NODE + sum(4 * hidden * w for w in (3, hidden, hidden, hidden))


def _recurrent(layers: int, hidden: int) -> dict:
    rec = {
        "hidden_in": "h",
        "cell_in": "c",
        "hidden_out": "h2",
        "cell_out": "c2",
        "layers": layers,
        "hidden_size": hidden,
    }
    lstm = {
        "op": "lstm",
        "in": ["obs", "h", "c"],
        "out": ["y", "h2", "c2"],
        "layers": [
            {
                "weight_ih": nd([4 * hidden, 3 if i == 0 else hidden]),
                "weight_hh": nd([4 * hidden, hidden]),
                "bias_ih": nd([4 * hidden]),
                "bias_hh": nd([4 * hidden]),
            }
            for i in range(min(layers, 4))
        ],
    }
    return describe(box((3,)), [lstm], {"op": "argmax", "in": "y"}, sp.Discrete(hidden), rec)


def test_a_recurrent_state_is_a_bounded_value():
    assert refused(_recurrent(1 << 12, 1 << 13)) == ("LIMIT_EXCEEDED", "/policy/recurrent/hidden_size")
    assert refused(_recurrent(2, 1 << 23)) == (
        "LIMIT_EXCEEDED",
        "/policy/nodes/0",
    )  # within the value limit, not the cost


def test_conv2d_pays_for_its_padding():
    big = 1 << 20
    node = {
        "op": "conv2d",
        "in": ["obs"],
        "out": "c",
        "weight": nd([1, 1, 1, 1]),
        "bias": None,
        "stride": [big, big],
        "padding": [big, big],
    }
    desc = describe(
        box((1, 2, 2)), [node, {"op": "flatten", "in": ["c"], "out": "q"}], {"op": "argmax", "in": "q"}, sp.Discrete(9)
    )
    assert refused(desc) == ("LIMIT_EXCEEDED", "/policy/nodes/0")


@pytest.mark.parametrize(
    "params, where",
    [
        ({"fn": "softplus", "beta": 0.0}, "beta"),
        ({"fn": "softplus", "beta": -0.0}, "beta"),
        ({"fn": "celu", "alpha": 0}, "alpha"),
        ({"fn": "hardtanh", "min_val": 2.0}, "min_val"),
        ({"fn": "hardtanh", "max_val": -2}, "max_val"),
        ({"fn": "hardtanh", "min_val": 0.5, "max_val": 0.25}, "max_val"),
        ({"fn": "elu", "alpha": {"$type": "float", "value": "nan"}}, "alpha"),
        ({"fn": "leaky_relu", "negative_slope": 1e39}, "negative_slope"),
        ({"fn": "leaky_relu", "negative_slope": -(10**39)}, "negative_slope"),
        ({"fn": "gelu", "approximate": "erf"}, "approximate"),
    ],
)
def test_degenerate_parameters_are_refused(params, where):
    nodes = [dict(relu("obs", "y"), **params)]
    assert refused(describe(box((2,)), nodes, {"op": "argmax", "in": "y"}, sp.Discrete(2))) == (
        "EXTENSION_INVALID",
        f"/policy/nodes/0/{where}",
    )


@pytest.mark.parametrize(
    "params",
    [
        {"fn": "softplus", "beta": -1.0, "threshold": -5},
        {"fn": "hardtanh", "min_val": 0.5, "max_val": 0.5},
        {"fn": "elu", "alpha": 0.0},
        {"fn": "leaky_relu", "negative_slope": int(3.4028234663852886e38)},
        {"fn": "celu", "alpha": -2.0},
    ],
)
def test_defined_parameters_are_accepted(params):
    check(describe(box((2,)), [dict(relu("obs", "y"), **params)], {"op": "argmax", "in": "y"}, sp.Discrete(2)))


def test_a_negative_eps_is_accepted_a_non_finite_one_refused():
    def norm(eps) -> dict:
        node = {"op": "layer_norm", "in": ["obs"], "out": "y", "weight": None, "bias": None, "eps": eps}
        return describe(box((2,)), [node], {"op": "argmax", "in": "y"}, sp.Discrete(2))

    check(norm(-1.0))
    assert refused(norm({"$type": "float", "value": "inf"})) == ("EXTENSION_INVALID", "/policy/nodes/0/eps")


@pytest.mark.parametrize(
    "x, w, ok",
    [
        ((4,), [1], True),
        ((4,), [4], True),
        ((3, 5, 5), [3], True),
        ((3, 5, 5), [5], False),
        ((4,), [2], False),
        ((4,), [1, 4], False),
    ],
)
def test_prelu_takes_one_slope_or_one_per_channel(x, w, ok):
    nodes = [{"op": "prelu", "in": ["obs"], "out": "p", "weight": nd(w)}, {"op": "flatten", "in": ["p"], "out": "y"}]
    desc = describe(box(x), nodes, {"op": "argmax", "in": "y"}, sp.Discrete(int(np.prod(x))))
    if ok:
        assert check(desc).operations == (NODE + 2 * int(np.prod(x))) + 2 * (NODE + int(np.prod(x)))
    else:
        assert refused(desc) == ("EXTENSION_INVALID", "/policy/nodes/0/weight")


# -- the two checkers agree -----------------------------------------------------------------


def _random_description(rng: random.Random) -> dict:
    """A random chain over a Discrete or Box observation, often near a limit, sometimes broken."""
    n = rng.choice([1, 7, 1000, 1 << 16, 1 << 20, (1 << 24) - 3])
    if rng.random() < 0.2:  # a convolution, its padding and stride up to 2^53 - 1
        sizes = [1, 2, 3, 1 << 12, 1 << 40, (1 << 52) + 1, (1 << 53) - 1]
        conv = {
            "op": "conv2d",
            "in": ["obs"],
            "out": "c",
            "weight": nd([rng.choice([1, 3]), 2, rng.choice([1, 3]), 3]),
            "bias": None,
            "stride": [rng.choice(sizes[:2] + sizes[3:]), rng.choice(sizes[:2] + sizes[3:])],
            "padding": [rng.choice([0] + sizes), rng.choice([0] + sizes)],
        }
        return describe(
            box((2, 5, 5)),
            [conv, {"op": "flatten", "in": ["c"], "out": "f"}],
            {"op": "argmax", "in": "f"},
            sp.Discrete(rng.choice([3, 75, 48])),
        )
    obs = sp.Discrete(n) if rng.random() < 0.7 else box((rng.choice([0, 1, 4]), 3))
    widths = {"obs": n if isinstance(obs, sp.Discrete) else None}  # name -> width of a vector (None: the Box of rank 2)
    nodes: list = []
    for i in range(rng.randrange(1, 40)):
        src = rng.choice(list(widths)[-3:])
        width, out = widths[src], f"v{i}"
        kind = rng.random()
        if width is None:
            nodes.append({"op": "flatten", "in": [src], "out": out})
            widths[out] = obs.shape[0] * 3
        elif kind < 0.45:
            fn = rng.choice(sorted(ACTIVATIONS))
            node = relu(src, out, fn)
            if fn == "softplus" and rng.random() < 0.3:
                node["beta"] = rng.choice([0.0, 2.0, -1.0])
            if fn == "hardtanh" and rng.random() < 0.3:
                node["min_val"] = rng.choice([-3.0, 3.0])
            nodes.append(node)
            widths[out] = width
        elif kind < 0.6:
            size = rng.choice([1, 3, 1 << 12, 1 << 24])
            nodes.append(
                {
                    "op": "linear",
                    "in": [src],
                    "out": out,
                    "weight": nd([size, width if rng.random() < 0.95 else width + 1]),
                    "bias": None,
                }
            )
            widths[out] = size
        elif kind < 0.7:
            nodes.append({"op": "prelu", "in": [src], "out": out, "weight": nd([rng.choice([1, width, width, 2])])})
            widths[out] = width
        elif kind < 0.8:
            ins = list(widths)[-2:]
            nodes.append({"op": "concat", "in": ins, "out": out})
            widths[out] = sum(widths[x] or obs.shape[0] * 3 for x in ins)
        elif kind < 0.9:
            nodes.append(
                {
                    "op": "layer_norm",
                    "in": [src],
                    "out": out,
                    "weight": None,
                    "bias": None,
                    "eps": rng.choice([1e-5, -1.0, 0]),
                }
            )
            widths[out] = width
        else:
            nodes.append(
                {
                    "op": "batch_norm",
                    "in": [src],
                    "out": out,
                    "running_mean": nd([width]),
                    "running_var": nd([width]),
                    "weight": None,
                    "bias": None,
                    "eps": 1e-5,
                }
            )
            widths[out] = width
    last = list(widths)[-1]
    return describe(obs, nodes, {"op": "argmax", "in": last}, sp.Discrete(widths[last] or 2))


def _python_outcome(desc: dict) -> list:
    try:
        c = check(json.loads(json.dumps(desc)))
    except RlarchiveError as e:
        return [e.code, e.pointer]
    return ["ok", c.operations, c.memory_bytes, c.peak_at, list(c.memory)]


def test_python_and_javascript_checkers_agree():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    rng = random.Random(20261124)
    descs = [_random_description(rng) for _ in range(400)]
    descs += [
        _kept(1 << 24, 13),
        _kept(1 << 24, 14),
        _recurrent(1 << 12, 1 << 13),
        _recurrent(2, 1 << 23),
        _recurrent(2, 64),
    ]
    want = [_python_outcome(d) for d in descs]
    assert {w[0] for w in want} >= {"ok", "LIMIT_EXCEEDED", "EXTENSION_INVALID"}
    script = f"""
import {{ readFileSync }} from 'node:fs';
import {{ parseJson }} from {json.dumps("file://" + os.path.join(ROOT, "reader-js", "src", "index.js"))};
import {{ check }} from {json.dumps("file://" + os.path.join(ROOT, "reader-js", "src", "extensions", "policy", "description.js"))};
const out = [];
for (const text of JSON.parse(readFileSync(process.argv[1], 'utf8'))) {{
  try {{
    const c = check(parseJson(new TextEncoder().encode(text)));
    out.push(['ok', c.operations, c.memoryBytes, c.peakAt, c.memory]);
  }} catch (e) {{
    if (!e.code) throw e;
    out.push([e.code, e.pointer]);
  }}
}}
console.log(JSON.stringify(out));
"""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "descs.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump([json.dumps(x) for x in descs], f)
        r = subprocess.run([node, "--input-type=module", "-e", script, path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, (i, descs[i])
    assert len(got) == len(want)


# -- an evaluation stays within what it is charged -----------------------------------------


def _archive(tmp: str, desc: dict, tensors: dict) -> str:
    path = os.path.join(tmp, "p.rlarchive")
    member = json.dumps({"policy": desc}).encode()
    rlarchive.save(
        path,
        {"gamma": 0.99},
        {"policy": tensors},
        extensions_used=["RLA_policy"],
        extension_members={"extensions/RLA_policy/policy.json": member},
    )
    return path


def _ref(name: str, shape) -> dict:
    return {"$type": "ndarray", "dtype": "F32", "shape": list(shape), "ref": {"group": "policy", "name": name}}


def _traced_peak(policy, obs) -> int:
    """The peak bytes traced while ``policy`` evaluates ``obs`` (after a first call: imports and caches are not the evaluation's)."""
    policy.predict(obs)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        policy.predict(obs)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_a_chain_runs_within_the_memory_it_is_charged(tmp_path):
    n = 1 << 17
    fns = ["relu", "leaky_relu", "tanh", "hardtanh", "relu", "elu", "sigmoid", "relu"] * 5
    nodes = [relu("obs" if i == 0 else f"a{i - 1}", f"a{i}", fn) for i, fn in enumerate(fns)]
    nodes.append({"op": "linear", "in": [f"a{len(fns) - 1}"], "out": "q", "weight": _ref("w", (4, n)), "bias": None})
    desc = describe(sp.Discrete(n), nodes, {"op": "argmax", "in": "q"}, sp.Discrete(4))
    rng = np.random.default_rng(0)
    path = _archive(str(tmp_path), desc, {"w": rng.normal(size=(4, n)).astype(np.float32)})
    charged = check(json.loads(json.dumps(desc)))
    with rlarchive.open(path) as ar:
        policy = ar.policy()
    peak = _traced_peak(policy, 3)
    assert peak >= 4 * n * 2, "the evaluation's arrays are traced"
    assert (
        len(fns) + 1
    ) * 4 * n > charged.memory_bytes * 2  # keeping every value would take more than twice the charge
    assert peak <= charged.memory_bytes, (peak, charged.memory_bytes)


def test_a_convolution_runs_within_the_memory_it_is_charged(tmp_path):
    c, h, w, o = 4, 96, 96, 8
    nodes = [
        {
            "op": "conv2d",
            "in": ["obs"],
            "out": "c",
            "weight": _ref("k", (o, c, 3, 3)),
            "bias": _ref("b", (o,)),
            "stride": [1, 1],
            "padding": [1, 1],
        },
        {"op": "activation", "in": ["c"], "out": "r", "fn": "relu"},
        {"op": "flatten", "in": ["r"], "out": "f"},
        {"op": "linear", "in": ["f"], "out": "q", "weight": _ref("w", (3, o * h * w)), "bias": None},
    ]
    image = sp.Box(np.zeros((c, h, w), np.uint8), np.full((c, h, w), 255, np.uint8), (c, h, w), "U8")
    desc = dict(describe(image, nodes, {"op": "argmax", "in": "q"}, sp.Discrete(3)), normalize_images=True)
    rng = np.random.default_rng(1)
    tensors = {
        "k": rng.normal(size=(o, c, 3, 3)).astype(np.float32),
        "b": rng.normal(size=o).astype(np.float32),
        "w": rng.normal(size=(3, o * h * w)).astype(np.float32),
    }
    path = _archive(str(tmp_path), desc, tensors)
    charged = check(json.loads(json.dumps(desc)))
    obs = rng.integers(0, 256, size=(c, h, w)).astype(np.uint8)
    with rlarchive.open(path) as ar:
        policy = ar.policy()
    peak = _traced_peak(policy, obs)
    assert peak >= 4 * o * h * w, "the evaluation's arrays are traced"
    assert peak <= charged.memory_bytes, (peak, charged.memory_bytes)
