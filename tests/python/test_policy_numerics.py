"""The portable policy's evaluators at the numerical edges (RLA_policy §5-§7) and within bounded memory.

- erf (binary64, vectorised) against ``math.erf`` over a dense grid with the tails;
- every activation in Python and in JavaScript against torch's CPU float32 modules at
  NaN, ±inf, values near the float32 limit and ordinary values;
- Dict observations told single or batch per key (``rlarchive.extensions.policy.observations``);
- memory: values are dropped after their last reader, and a conv2d whose whole im2col
  would be ~2^32 floats runs in blocks.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest
from suite import ROOT

from rlarchive import spaces as sp
from rlarchive.extensions.policy import observations
from rlarchive.extensions.policy.evaluator import ACTIVATIONS, erf

F32 = np.float32
BIG = float(np.finfo(F32).max)


def test_erf_is_vectorised_and_accurate_against_math_erf():
    x = np.concatenate(
        [
            np.linspace(-7, 7, 280_001),
            np.geomspace(1e-300, 7, 20_000),
            -np.geomspace(1e-300, 7, 20_000),
            np.array([0.375, -0.375, 6.0, -6.0, 5.9999999, 26.0, -26.0, 1e300, -1e300, 0.0, -0.0]),
        ]
    )
    want = np.array([math.erf(v) for v in x])
    got = erf(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    assert np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)) < 1e-15
    special = erf(np.array([np.nan, np.inf, -np.inf]))
    assert np.isnan(special[0]) and special[1] == 1.0 and special[2] == -1.0
    assert erf(np.zeros((2, 3))).shape == (2, 3)


# -- activations against torch at NaN, infinities and large values ---------------------------------------------

torch_modules = {
    "relu": ("ReLU", {}),
    "tanh": ("Tanh", {}),
    "sigmoid": ("Sigmoid", {}),
    "elu": ("ELU", {"alpha": 0.7}),
    "leaky_relu": ("LeakyReLU", {"negative_slope": 0.2}),
    "silu": ("SiLU", {}),
    "gelu": ("GELU", {"approximate": "none"}),
    "gelu-tanh": ("GELU", {"approximate": "tanh"}),
    "softplus": ("Softplus", {"beta": 2.0, "threshold": 5.0}),
    "softplus-default": ("Softplus", {}),
    "hardtanh": ("Hardtanh", {"min_val": -2.0, "max_val": 0.5}),
    "selu": ("SELU", {}),
    "celu": ("CELU", {"alpha": 0.5}),
    "mish": ("Mish", {}),
    "hardswish": ("Hardswish", {}),
    "hardsigmoid": ("Hardsigmoid", {}),
    "softsign": ("Softsign", {}),
    "identity": ("Identity", {}),
}

EDGES = np.array(
    [
        np.nan,
        np.inf,
        -np.inf,
        BIG,
        -BIG,
        3e38,
        -3e38,
        1e30,
        -1e30,
        1e10,
        -1e10,
        88.0,
        -88.0,
        750.0,
        -750.0,
        30.0,
        -30.0,
        3.0,
        -3.0,
        1.5,
        -0.5,
        1e-30,
        -1e-30,
        1e-45,
        0.0,
        -0.0,
    ],
    F32,
)


def _torch_values(key: str) -> np.ndarray:
    """torch's values at :data:`EDGES`, one element at a time: its vectorised kernels differ by CPU (with AVX-512,
    ``GELU`` gives NaN at ±inf where its element-wise code, and AVX2's, give ±inf)."""
    torch = pytest.importorskip("torch")
    name, params = torch_modules[key]
    module = getattr(torch.nn, name)(**params)
    return np.array([module(torch.from_numpy(EDGES[i : i + 1].copy())).numpy()[0] for i in range(len(EDGES))], F32)


def _compare(got: np.ndarray, want: np.ndarray, key: str, who: str) -> None:
    if (
        key == "hardswish"
    ):  # torch multiplies in float32: x·6 overflows for |x| > FLT_MAX/6; RLA_policy computes in binary64
        keep = ~(np.abs(EDGES) > BIG / 6) | ~np.isfinite(EDGES)
        got, want = got[keep], want[keep]
    with np.errstate(invalid="ignore"):
        same = (
            (got == want)
            | (np.isnan(got) & np.isnan(want))
            | (np.abs(got.astype(np.float64) - want) <= 2e-6 * np.maximum(1.0, np.abs(want.astype(np.float64))))
        )
    bad = [(float(x), float(g), float(w)) for x, g, w, ok in zip(EDGES, got, want, same) if not ok]
    assert not bad, f"{who} {key}: (x, got, torch) {bad}"


def _fn_and_params(key: str) -> tuple:
    fn = key.split("-")[0]
    _, params = torch_modules[key]
    return fn, dict(params)


@pytest.mark.parametrize("key", sorted(torch_modules))
def test_python_activations_agree_with_torch_at_nan_infinities_and_large_values(key):
    fn, params = _fn_and_params(key)
    got = ACTIVATIONS[fn][0](EDGES.copy(), **params)
    assert got.dtype == np.float32
    _compare(got, _torch_values(key), key, "python")


JS_ACTIVATIONS = """
import { ACTIVATIONS } from %(policy)s;
const decode = (v) => (typeof v === 'string' ? Number(v) : v);
const cases = JSON.parse(process.argv[2]);
const xs = Float32Array.from(JSON.parse(process.argv[3]).map(decode));
const out = {};
for (const [key, fn, params] of cases) {
  const [f, defaults] = ACTIVATIONS[fn];
  const p = { ...defaults, ...params };
  out[key] = Array.from(xs.map((x) => f(x, p)), (v) => (Number.isFinite(v) ? v : String(v)));
}
console.log(JSON.stringify(out));
"""


def test_javascript_activations_agree_with_torch_at_nan_infinities_and_large_values(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = tmp_path / "activations.mjs"
    script.write_text(
        JS_ACTIVATIONS
        % {
            "policy": json.dumps(
                "file://" + os.path.join(ROOT, "reader-js", "src", "extensions", "policy", "evaluator.js")
            )
        }
    )
    cases = [[key, *_fn_and_params(key)] for key in sorted(torch_modules)]
    xs = [float(v) if np.isfinite(v) else str(float(v)).replace("inf", "Infinity").replace("nan", "NaN") for v in EDGES]
    r = subprocess.run(
        [node, str(script), json.dumps(cases), json.dumps(xs)], capture_output=True, text=True, check=True
    )
    out = json.loads(r.stdout)
    for key in sorted(torch_modules):
        got = np.array(
            [float(v) if not isinstance(v, str) else float(v.replace("Infinity", "inf")) for v in out[key]], F32
        )
        _compare(got, _torch_values(key), key, "javascript")


# -- Dict observations: single or batch per key (RLA_policy §4) ------------------------------------------------


def _mixed_dict() -> sp.Dict:
    nvec = np.array([2, 3], np.int64)
    return sp.Dict(
        (
            ("mode", sp.Discrete(3)),
            ("pos", sp.Box(np.full((2,), -1, F32), np.full((2,), 1, F32), (2,), "F32")),
            ("grid", sp.MultiDiscrete(nvec, np.zeros(2, np.int64))),
            ("flags", sp.MultiBinary(2)),
            ("cells", sp.MultiBinary([2, 2])),
            ("image", sp.Box(np.zeros((1, 2, 3), np.uint8), np.full((1, 2, 3), 255, np.uint8), (1, 2, 3), "U8")),
        )
    )


def _observation(n=None) -> dict:
    lead = () if n is None else (n,)
    return {
        "mode": np.full(lead, 2, np.int64) if n is not None else 2,
        "pos": np.zeros(lead + (2,), F32),
        "grid": np.ones(lead + (2,), np.int64),
        "flags": np.ones(lead + (2,), np.int8),
        "cells": np.zeros(lead + (2, 2), np.int8),
        "image": np.zeros(lead + (2, 3, 1), np.uint8),  # channel-last
    }


def test_a_dict_observation_is_single_or_a_batch_by_every_key():
    space = _mixed_dict()
    obs, single = observations.batch(_observation(), space)
    assert single and obs["mode"].shape == (1,) and obs["pos"].shape == (1, 2) and obs["image"].shape == (1, 1, 2, 3)
    zero_d = dict(_observation(), mode=np.asarray(1, np.int64))
    assert observations.batch(zero_d, space)[1]
    obs, single = observations.batch(_observation(3), space)
    assert not single and {k: v.shape[0] for k, v in obs.items()} == dict.fromkeys(obs, 3)
    one_batch = _observation(1)
    assert observations.batch(one_batch, space)[1] is False


@pytest.mark.parametrize(
    "key, value",
    [
        ("mode", np.array([1], np.int64)),  # a batch of 1 beside single keys
        ("pos", np.zeros((3, 2), F32)),
        ("grid", np.zeros((2, 2, 2), np.int64)),
        ("flags", np.zeros(3, np.int8)),
        ("mode", np.zeros((1, 1), np.int64)),
    ],
)
def test_dict_keys_that_disagree_are_an_error_of_the_call(key, value):
    with pytest.raises(ValueError):
        observations.batch(dict(_observation(), **{key: value}), _mixed_dict())


def test_observations_that_are_not_arrays_are_type_errors():
    space = _mixed_dict()
    with pytest.raises(TypeError):
        observations.batch([1, 2], space)
    with pytest.raises(TypeError):
        observations.batch(dict(_observation(), pos={"x": 1}), space)
    with pytest.raises(ValueError):
        observations.batch({k: v for k, v in _observation().items() if k != "pos"}, space)
    with pytest.raises(ValueError):
        observations.preprocess(np.array([3]), sp.Discrete(3), False)


# -- memory ------------------------------------------------------------------------------------------------------


def _box(shape) -> sp.Box:
    return sp.Box(np.full(shape, -1, F32), np.full(shape, 1, F32), tuple(shape), "F32")


def test_each_value_is_dropped_after_its_last_reader(tmp_path):
    """255 relu nodes over a 2^20-element value: one observation's predict holds a few values at a time, not 255."""
    import rlarchive

    n = 1 << 20
    nodes = [
        {"op": "activation", "in": ["obs" if i == 0 else f"v{i}"], "out": f"v{i + 1}", "fn": "relu"} for i in range(255)
    ]
    desc = {
        "observation_space": _box((n,)),
        "action_space": sp.Discrete(n),
        "normalize_images": False,
        "nodes": nodes,
        "action": {"op": "argmax", "in": "v255"},
    }
    path = os.path.join(tmp_path, "chain.rlarchive")
    rlarchive.save(
        path,
        {"observation_space": desc["observation_space"], "action_space": desc["action_space"]},
        extension_values={"RLA_policy": desc},
    )
    with rlarchive.open(path) as ar:
        policy = ar.policy()
    x = np.linspace(-1, 1, n, dtype=F32)
    tracemalloc.start()
    try:
        action, _ = policy.predict(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert int(action) == n - 1
    assert peak < 6 * 4 * n, f"a predict of 255 values of 4 MiB each peaked at {peak / 2**20:.0f} MiB"


def test_elementwise_binary64_workspace_is_blocked():
    x = np.random.default_rng(0).normal(0, 3, 1 << 22).astype(F32)
    tracemalloc.start()
    try:
        ACTIVATIONS["gelu"][0](x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * x.size + 160 * 2**20, f"gelu over 2^22 values peaked at {peak / 2**20:.0f} MiB"


CONV = """
import sys
import numpy as np
with open("/proc/self/clear_refs", "w") as f:  # VmHWM from here (a child's ru_maxrss keeps its parent's peak across exec)
    f.write("5")
import rlarchive
path = sys.argv[1]
with rlarchive.open(path) as ar:
    policy = ar.policy()
h, o = 4000, 3985
x = np.zeros((1, h, h), np.float32)
x[0, 1000:1016, 2000:2016] = 1.0
action, _ = policy.predict(x)
with open("/proc/self/status") as f:
    hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
print(int(action), hwm)
"""


@pytest.mark.slow
def test_a_conv2d_whose_im2col_is_2_to_the_32_runs_in_blocks(tmp_path):
    """conv2d 16x16 over [1, 4000, 4000]: the whole im2col would be 3985^2 * 256 ~ 2^32 floats (16 GiB); blocks keep it small."""
    import rlarchive

    h, o = 4000, 3985
    desc = {
        "observation_space": _box((1, h, h)),
        "action_space": sp.Discrete(o * o),
        "normalize_images": False,
        "nodes": [
            {
                "op": "conv2d",
                "in": ["obs"],
                "out": "c",
                "weight": np.full((1, 1, 16, 16), 1 / 256, F32),
                "bias": None,
                "stride": [1, 1],
                "padding": [0, 0],
            },
            {"op": "flatten", "in": ["c"], "out": "f"},
        ],
        "action": {"op": "argmax", "in": "f"},
    }
    path = os.path.join(tmp_path, "conv.rlarchive")
    rlarchive.save(
        path,
        {"observation_space": desc["observation_space"], "action_space": desc["action_space"]},
        extension_values={"RLA_policy": desc},
    )
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CONV), path], capture_output=True, text=True, env=env, check=True
    )
    action, maxrss_kib = (int(v) for v in r.stdout.split())
    assert action == 1000 * o + 2000  # the first window covering the patch of ones
    assert maxrss_kib < 1024 * 1024, f"peak resident memory {maxrss_kib / 1024:.0f} MiB"
