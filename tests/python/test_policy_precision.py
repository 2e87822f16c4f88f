"""The NumPy evaluator's faster mode: float32 sums (``precision="float32"``), and how far it strays from the spec's.

The default (``"float64"``) is the spec's evaluation, bit for bit what every
conforming reader gives (the vectors and the conformance run hold it to that).
The float32 mode accumulates the sums of linear, conv2d and the LSTM gates in
float32: each output then lies within the float32 summation bound of the
exact one, (K + 3)·2^-24 times the sum of its terms' magnitudes (K products
and the bias, plus the exact result's own rounding), computed here from the
operands; where terms cancel, the spec's mode keeps what float32 may lose
(whether it does depends on the order its BLAS adds them in).
"""

from __future__ import annotations

import numpy as np
import pytest

from rlarchive import spaces as sp
from rlarchive.extensions.policy import PRECISIONS, Policy

F32 = np.float32
U = 2.0**-24


def box(n: int, bound: float = 1e30) -> sp.Box:
    return sp.Box(np.full(n, -bound, F32), np.full(n, bound, F32), (n,), "F32")


def linear_policy(w: np.ndarray, b: np.ndarray | None, precision: str) -> Policy:
    o, k = w.shape
    return Policy(
        {
            "observation_space": box(k),
            "action_space": box(o, np.inf),
            "normalize_images": False,
            "nodes": [{"op": "linear", "in": ["obs"], "out": "y", "weight": w, "bias": b}],
            "action": {"op": "box", "in": "y", "squash": "clip"},
        },
        precision=precision,
    )


def test_precisions_are_the_spec_s_and_float32_and_nothing_else():
    assert PRECISIONS == ("float64", "float32")
    with pytest.raises(ValueError, match="precision"):
        linear_policy(np.ones((1, 1), F32), None, "float16")


def test_cancelling_terms_are_kept_by_the_spec_s_sums_and_within_the_bound_in_float32():
    w = np.ones((1, 3), F32)
    x = np.array([[2.0**30, 1.0, -(2.0**30)]], F32)
    exact, _ = linear_policy(w, None, "float64").predict(x)
    fast, _ = linear_policy(w, None, "float32").predict(x)
    assert exact.tolist() == [[1.0]]  # the real sum, rounded once (in float32, 2^30 + 1 is 2^30: the order decides)
    assert abs(fast[0, 0] - exact[0, 0]) <= (3 + 3) * U * (2.0**31 + 1)


@pytest.mark.parametrize("seed", range(6))
def test_float32_sums_stay_within_the_float32_summation_bound_of_the_exact_ones(seed):
    rng = np.random.default_rng(seed)
    k, o, n = int(rng.integers(1, 600)), int(rng.integers(1, 40)), int(rng.integers(1, 300))
    scale = 2.0 ** rng.integers(-20, 20, size=(1, k))  # mixed magnitudes: some terms dwarf others
    w = (rng.normal(size=(o, k)) * scale).astype(F32)
    b = rng.normal(size=o).astype(F32) if seed % 2 else None
    x = (rng.normal(size=(n, k)) * rng.choice([1.0, 1e3], size=(n, 1))).astype(F32)
    exact, _ = linear_policy(w, b, "float64").predict(x)
    fast, _ = linear_policy(w, b, "float32").predict(x)
    magnitude = np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64)).T
    if b is not None:
        magnitude += np.abs(b.astype(np.float64))
    strayed = np.abs(fast.astype(np.float64) - exact.astype(np.float64))
    assert np.all(strayed <= (k + 3) * U * magnitude * (1 + 1e-9))
    assert np.any(strayed > 0)  # the mode does use float32 sums


def test_a_tanh_mlp_in_float32_mostly_acts_as_the_spec_s_and_its_values_stay_close():
    rng = np.random.default_rng(7)
    nodes, width = [], 8
    for i, out in enumerate((256, 256)):
        w = (rng.normal(size=(out, width)) / np.sqrt(width)).astype(F32)
        nodes += [
            {"op": "linear", "in": ["obs" if i == 0 else f"a{i - 1}"], "out": f"l{i}", "weight": w, "bias": None},
            {"op": "activation", "in": [f"l{i}"], "out": f"a{i}", "fn": "tanh"},
        ]
        width = out
    nodes.append({"op": "linear", "in": ["a1"], "out": "logits", "weight": rng.normal(size=(6, 256)).astype(F32)})
    nodes[-1]["bias"] = None
    desc = {
        "observation_space": box(8),
        "action_space": sp.Discrete(6),
        "normalize_images": False,
        "nodes": nodes,
        "action": {"op": "argmax", "in": "logits"},
    }
    x = rng.normal(size=(4096, 8)).astype(F32)
    exact, fast = (Policy(desc, precision=p).predict(x)[0] for p in PRECISIONS)
    agree = float(np.mean(exact == fast))
    assert agree >= 0.99, f"{agree:.4f} of the actions agree"
