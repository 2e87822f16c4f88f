"""Every activation of the portable policy computes what its torch.nn module computes, within float32 rounding."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rlarchive.extensions.policy.description import ACTIVATION_PARAMETERS  # noqa: E402
from rlarchive.extensions.policy.evaluator import ACTIVATIONS  # noqa: E402
from rlarchive.sb3.portable_policy import _ACTIVATIONS  # noqa: E402

MODULES = {
    "ReLU": {},
    "Tanh": {},
    "Sigmoid": {},
    "ELU": {"alpha": 0.7},
    "LeakyReLU": {"negative_slope": 0.2},
    "SiLU": {},
    "GELU": {"approximate": "tanh"},
    "Softplus": {"beta": 2.0, "threshold": 5.0},
    "Identity": {},
    "SELU": {},
    "CELU": {"alpha": 0.5},
    "Mish": {},
    "Hardswish": {},
    "Hardsigmoid": {},
    "Softsign": {},
}


def test_the_tables_agree():
    assert set(ACTIVATIONS) == set(ACTIVATION_PARAMETERS)
    assert {fn for fn, _ in _ACTIVATIONS.values()} <= set(ACTIVATIONS)
    assert set(MODULES) == set(_ACTIVATIONS)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_activation_matches_torch(name):
    x = np.concatenate([np.linspace(-30, 30, 2001), np.random.default_rng(0).normal(0, 3, 2000)]).astype(np.float32)
    module = getattr(torch.nn, name)(**MODULES[name])
    want = module(torch.from_numpy(x)).numpy()
    fn, params = _ACTIVATIONS[name]
    got = ACTIVATIONS[fn][0](x, **{p: getattr(module, p) for p in params})
    assert got.dtype == np.float32
    assert np.allclose(got, want, rtol=2e-6, atol=2e-6), np.max(np.abs(got - want))


def test_relu6_and_gelu_none():
    x = np.linspace(-10, 10, 1001).astype(np.float32)
    assert np.array_equal(ACTIVATIONS["hardtanh"][0](x, 0.0, 6.0), torch.nn.ReLU6()(torch.from_numpy(x)).numpy())
    assert np.allclose(
        ACTIVATIONS["gelu"][0](x, "none"), torch.nn.GELU()(torch.from_numpy(x)).numpy(), rtol=2e-6, atol=2e-6
    )


def test_mask_width_is_what_the_masked_vectors_take():
    """Policy.mask_width: the length of the masks each predict vector gives, None for heads without masks."""
    import json
    import os

    from suite import ROOT

    import rlarchive

    vectors = os.path.join(ROOT, "test-vectors")
    with open(os.path.join(vectors, "index.json"), encoding="utf-8") as f:
        cases = [c for c in json.load(f)["cases"] if c["expect"]["result"] == "actions"]
    seen = set()
    for c in cases:
        with open(os.path.join(vectors, c["expect"]["predict_file"]), encoding="utf-8") as f:
            spec = json.load(f)
        with rlarchive.open(os.path.join(vectors, c["file"]), spaces="neutral") as ar:
            policy = ar.policy()
        if "action_masks" in spec:
            assert policy.mask_width == spec["action_masks"][0]["shape"][-1], c["id"]
        if policy.action["op"] not in ("argmax", "multi_argmax"):
            assert policy.mask_width is None, c["id"]
        seen.add(policy.action["op"])
    assert {"argmax", "multi_argmax", "box"} <= seen
