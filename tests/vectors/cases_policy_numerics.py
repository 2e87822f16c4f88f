"""Test cases of the extension RLA_policy at its numerical edges: NaN and infinities, sums near the float32 limit, empty values, Dict observations.

Each case is a hand-written description (or an SB3 model, for Dict
observations) with sample observations, and the actions computed here,
independently of any evaluator: by torch where torch computes what the spec
decides, otherwise by exact arithmetic (``fractions.Fraction``, or binary64
formulas written out below) rounded once to float32, as RLA_policy §5 says.
Each gives two cases, as in ``cases_policy``: the archive's dump and a
``predict`` request judged on actions (Annex A).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
from cases import CASES, Case, case, saved
from cases_policy import POLICY, Built, _build

from rlarchive import spaces as sp
from rlarchive.values import dump_value

F32 = np.float32
BIG = float(np.finfo(F32).max)


def _box(shape, low, high) -> sp.Box:
    return sp.Box(np.full(shape, low, F32), np.full(shape, high, F32), tuple(shape), "F32")


def _hand(
    observation_space: Any, action_space: Any, nodes: list, head: dict, observations: list, actions: list
) -> Built:
    """An archive holding the description, and its predict request with the expected actions."""
    desc = {
        "observation_space": observation_space,
        "action_space": action_space,
        "normalize_images": False,
        "nodes": nodes,
        "action": head,
    }
    raw = saved({"observation_space": observation_space, "action_space": action_space}, extension_values={POLICY: desc})
    return Built(
        raw, {"observations": [dump_value(o) for o in observations], "actions": [dump_value(a) for a in actions]}
    )


def _f32(x: Any) -> np.float32:
    """A real number (a Fraction or a binary64) rounded to float32."""
    return F32(float(x))


# -- NaN from a finite observation: batch_norm with a negative running variance, then relu --------------------


def _nan_network(width: int, negative: int) -> tuple:
    """batch_norm (running_var -1 at ``negative``) then relu over a Box(width) observation; torch's module and our nodes."""
    import torch

    mean = np.linspace(-0.5, 0.5, width).astype(F32)
    var = np.ones(width, F32)
    var[negative] = -1.0
    bn = torch.nn.BatchNorm1d(width, eps=1e-5)
    with torch.no_grad():
        bn.running_mean.copy_(torch.from_numpy(mean))
        bn.running_var.copy_(torch.from_numpy(var))
        bn.weight.fill_(1.0)
        bn.bias.fill_(0.0)
    bn.eval()
    nodes = [
        {
            "op": "batch_norm",
            "in": ["obs"],
            "out": "n",
            "running_mean": mean,
            "running_var": var,
            "weight": np.ones(width, F32),
            "bias": np.zeros(width, F32),
            "eps": 1e-5,
        },
        {"op": "activation", "in": ["n"], "out": "y", "fn": "relu"},
    ]

    def logits(obs: np.ndarray) -> torch.Tensor:
        with torch.no_grad():
            return torch.relu(bn(torch.from_numpy(obs.reshape(1, -1))))[0]

    return nodes, logits


def _nan_observations(width: int) -> list:
    rng = np.random.default_rng(7)
    return [rng.uniform(-2, 2, width).astype(F32) for _ in range(4)]


def _nan_head(kind: str) -> Built:
    import torch

    if kind == "argmax":
        nodes, logits = _nan_network(3, 1)
        obs = _nan_observations(3)
        # torch.argmax takes a NaN as the largest value (the first NaN), as RLA_policy §6 says
        return _hand(
            _box((3,), -2, 2),
            sp.Discrete(3),
            nodes,
            {"op": "argmax", "in": "y"},
            obs,
            [np.asarray(int(torch.argmax(logits(o))), np.int64) for o in obs],
        )
    if kind == "quantile_argmax":
        nodes, logits = _nan_network(4, 3)
        obs = _nan_observations(4)
        acts = [np.asarray(int(torch.argmax(logits(o).reshape(2, 2).mean(0))), np.int64) for o in obs]
        return _hand(
            _box((4,), -2, 2), sp.Discrete(2), nodes, {"op": "quantile_argmax", "in": "y", "n_quantiles": 2}, obs, acts
        )
    if kind == "multi_argmax":
        nodes, logits = _nan_network(5, 3)
        obs = _nan_observations(5)
        acts = [np.array([int(torch.argmax(logits(o)[:2])), int(torch.argmax(logits(o)[2:]))], np.int64) for o in obs]
        nvec = np.array([2, 3], np.int64)
        return _hand(
            _box((5,), -2, 2),
            sp.MultiDiscrete(nvec, np.zeros(2, np.int64)),
            nodes,
            {"op": "multi_argmax", "in": "y", "sizes": [2, 3]},
            obs,
            acts,
        )
    if kind == "bernoulli":
        nodes, logits = _nan_network(3, 0)
        obs = _nan_observations(3)
        acts = [(torch.sigmoid(logits(o)) > 0.5).to(torch.float32).numpy() for o in obs]  # NaN > 0.5 is false: 0.0
        return _hand(_box((3,), -2, 2), sp.MultiBinary(3), nodes, {"op": "bernoulli", "in": "y"}, obs, acts)
    squash = kind.split("-")[1]
    nodes, logits = _nan_network(3, 2)
    obs = _nan_observations(3)
    low, high = np.array([-1.0, -2.0, -0.5], F32), np.array([1.0, 0.5, 3.0], F32)
    lo, hi = torch.from_numpy(low).double(), torch.from_numpy(high).double()

    def action(o: np.ndarray) -> np.ndarray:
        a = logits(o)
        if squash == "clip":
            return torch.minimum(
                torch.maximum(a, torch.from_numpy(low)), torch.from_numpy(high)
            ).numpy()  # NaN stays NaN
        if squash == "tanh":
            a = torch.tanh(a.double()).float()
        return (lo + 0.5 * (a.double() + 1.0) * (hi - lo)).float().numpy()

    return _hand(
        _box((3,), -2, 2),
        sp.Box(low, high, (3,), "F32"),
        nodes,
        {"op": "box", "in": "y", "squash": squash},
        obs,
        [action(o) for o in obs],
    )


# -- softplus with a threshold above 700 -------------------------------------------------------------------------


def _softplus_threshold() -> Built:
    xs = [750.0, 800.5, -750.0, 0.5, 30.0]
    obs = [np.array([x], F32) for x in xs]

    def softplus(x: float, threshold: float = 800.0) -> float:  # RLA_policy §5.5 with beta 1, in binary64
        return x if x > threshold else max(x, 0.0) + math.log1p(math.exp(-abs(x)))

    nodes = [{"op": "activation", "in": ["obs"], "out": "y", "fn": "softplus", "beta": 1.0, "threshold": 800.0}]
    acts = [np.array([_f32(softplus(x))], F32) for x in xs]
    return _hand(
        _box((1,), -1000, 1000), _box((1,), -BIG, BIG), nodes, {"op": "box", "in": "y", "squash": "clip"}, obs, acts
    )


# -- a linear whose float32 partial sums overflow but whose exact sum is finite ---------------------------------


def _linear_overflow() -> Built:
    w = np.array([[1.0, 1.0, 1.0, 1.0], [0.5, 0.5, 0.5, -1.0], [2.0, 2.0, -2.0, -2.0]], F32)
    b = np.array([0.0, 1.0, -1e38], F32)
    xs = [
        np.array([3e38, 3e38, -3e38, -2e38], F32),
        np.array([-3.4e38, -3.4e38, 3.4e38, 1.0], F32),
        np.array([1e38, 1e38, 1e38, 1e38], F32),
    ]

    def exact(x: np.ndarray) -> np.ndarray:
        sums = [
            sum((Fraction(float(xi)) * Fraction(float(wi)) for xi, wi in zip(x, row)), Fraction(float(bi)))
            for row, bi in zip(w, b)
        ]
        with np.errstate(over="ignore"):
            return np.array([_f32(s) for s in sums], F32)

    nodes = [{"op": "linear", "in": ["obs"], "out": "y", "weight": w, "bias": b}]
    acts = [exact(x) for x in xs]
    return _hand(
        _box((4,), -BIG, BIG),
        sp.Box(np.full(3, -np.inf, F32), np.full(3, np.inf, F32), (3,), "F32"),
        nodes,
        {"op": "box", "in": "y", "squash": "clip"},
        xs,
        acts,
    )


# -- a zero-width value -----------------------------------------------------------------------------------------


def _zero_width() -> Built:
    b = np.array([0.25, -1.5], F32)
    nodes = [{"op": "linear", "in": ["obs"], "out": "y", "weight": np.zeros((2, 0), F32), "bias": b}]
    obs = [np.zeros((0,), F32) for _ in range(2)]
    return _hand(
        _box((0,), -1, 1),
        _box((2,), -5, 5),
        nodes,
        {"op": "box", "in": "y", "squash": "clip"},
        obs,
        [b.copy() for _ in obs],
    )  # an empty sum is 0: the bias


# -- box rescale with bounds near the float32 limit -------------------------------------------------------------


def _rescale_huge(squash: str) -> Built:
    low = np.array([-3e38, -1e30, -1e30], F32)
    high = np.array([3e38, 1e30, 3.4e38], F32)
    xs = [np.array([0.25, -0.5, 0.75], F32), np.array([1.0, -1.0, 0.0], F32), np.array([-0.999, 0.3, -0.2], F32)]

    def rescale(a: float, lo: float, hi: float) -> np.float32:  # exact low + (a + 1)/2 · (high − low), rounded once
        return _f32(Fraction(lo) + (Fraction(a) + 1) / 2 * (Fraction(hi) - Fraction(lo)))

    def action(x: np.ndarray) -> np.ndarray:
        a = [float(F32(math.tanh(float(v)))) if squash == "tanh" else float(v) for v in x]
        return np.array([rescale(ai, float(lo), float(hi)) for ai, lo, hi in zip(a, low, high)], F32)

    nodes = [{"op": "activation", "in": ["obs"], "out": "y", "fn": "identity"}]
    return _hand(
        _box((3,), -1, 1),
        sp.Box(low, high, (3,), "F32"),
        nodes,
        {"op": "box", "in": "y", "squash": squash},
        xs,
        [action(x) for x in xs],
    )


# -- Dict observations with Discrete (0-d), Box, MultiDiscrete and MultiBinary keys -----------------------------


def _dict_mixed(batched: bool) -> Built:
    import torch.nn as nn
    from gymnasium import spaces
    from stable_baselines3 import PPO

    obs_space = spaces.Dict(
        {
            "mode": spaces.Discrete(3),
            "pos": spaces.Box(-1.0, 1.0, (2,), np.float32),
            "grid": spaces.MultiDiscrete([2, 3]),
            "flags": spaces.MultiBinary(2),
        }
    )
    rng = np.random.default_rng(11)

    def one(n: Any) -> dict:
        shape = () if n is None else (n,)
        return {
            "mode": np.asarray(rng.integers(0, 3, size=shape), np.int64),
            "pos": rng.uniform(-1, 1, size=shape + (2,)).astype(np.float32),
            "grid": rng.integers(0, [2, 3], size=shape + (2,)).astype(np.int64),
            "flags": rng.integers(0, 2, size=shape + (2,)).astype(np.int8),
        }

    observations = [one(3 if batched else None) for _ in range(4)]
    return _build(
        lambda env: PPO(
            "MultiInputPolicy", env, policy_kwargs=dict(net_arch=[8], activation_fn=nn.Tanh), seed=0, device="cpu"
        ),
        obs_space,
        spaces.Discrete(3),
        observations=observations,
    )


# -- prelu, one shared slope and one per channel ----------------------------------------------------------------


def _prelu(per_channel: bool) -> Built:
    import torch

    rng = np.random.default_rng(13)
    if per_channel:  # conv2d [2, 3, 3] -> prelu over 2 channels -> flatten
        w = rng.normal(size=(2, 1, 2, 2)).astype(F32)
        slope = np.array([0.1, -0.7], F32)
        conv = torch.nn.Conv2d(1, 2, 2, bias=False)
        act = torch.nn.PReLU(2)
        with torch.no_grad():
            conv.weight.copy_(torch.from_numpy(w))
            act.weight.copy_(torch.from_numpy(slope))
        nodes = [
            {"op": "conv2d", "in": ["obs"], "out": "c", "weight": w, "bias": None, "stride": [1, 1], "padding": [0, 0]},
            {"op": "prelu", "in": ["c"], "out": "p", "weight": slope},
            {"op": "flatten", "in": ["p"], "out": "y"},
        ]
        space, width = _box((1, 4, 4), -3, 3), 2 * 3 * 3
        net = lambda t: act(conv(t)).reshape(1, -1)  # noqa: E731
    else:
        w = rng.normal(size=(4, 3)).astype(F32)
        slope = np.array([0.25], F32)
        lin = torch.nn.Linear(3, 4, bias=False)
        act = torch.nn.PReLU(1)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w))
            act.weight.copy_(torch.from_numpy(slope))
        nodes = [
            {"op": "linear", "in": ["obs"], "out": "l", "weight": w, "bias": None},
            {"op": "prelu", "in": ["l"], "out": "y", "weight": slope},
        ]
        space, width = _box((3,), -3, 3), 4
        net = lambda t: act(lin(t))  # noqa: E731
    obs = [rng.uniform(-3, 3, size=space.shape).astype(F32) for _ in range(4)]
    with torch.no_grad():
        acts = [net(torch.from_numpy(o)[None]).numpy()[0] for o in obs]
    return _hand(space, _box((width,), -BIG, BIG), nodes, {"op": "box", "in": "y", "squash": "clip"}, obs, acts)


def _models() -> dict:
    """id -> (description, spec sections, a function building it)."""
    out: dict[str, tuple[str, list, Callable[[], Built]]] = {}
    for head in ("argmax", "quantile_argmax", "multi_argmax", "bernoulli", "box-clip", "box-tanh", "box-rescale"):
        out[f"nan-{head.replace('_', '-')}"] = (
            f"batch_norm with a negative running variance makes NaN from a finite observation; relu keeps it; the {head} head acts on it (as torch does).",
            ["RLA_policy §5", "RLA_policy §6"],
            lambda h=head: _nan_head(h),
        )
    out["softplus-threshold-800"] = (
        "softplus with threshold 800: x = 750 is below the threshold and gives 750 (no clamping of the exponent).",
        ["RLA_policy §5"],
        _softplus_threshold,
    )
    out["linear-partial-sums-overflow"] = (
        "A linear whose float32 partial sums would overflow but whose exact sums are finite: the float32 rounding of the exact sum.",
        ["RLA_policy §5"],
        _linear_overflow,
    )
    out["linear-zero-width"] = (
        "A linear over a zero-width observation: the empty sum is 0, so the result is the bias.",
        ["RLA_policy §5"],
        _zero_width,
    )
    out["box-rescale-huge-bounds"] = (
        "rescale to bounds near ±3e38 and ±1e30: computed in binary64 and rounded once, so high − low does not overflow.",
        ["RLA_policy §6"],
        lambda: _rescale_huge("rescale"),
    )
    out["box-tanh-huge-bounds"] = (
        "tanh, then rescale to bounds near ±3e38 and ±1e30, in binary64 rounded once.",
        ["RLA_policy §6"],
        lambda: _rescale_huge("tanh"),
    )
    out["dict-discrete-box-multidiscrete-multibinary"] = (
        "PPO MultiInputPolicy on a Dict of a Discrete (a 0-d observation), a Box, a MultiDiscrete and a MultiBinary key, one observation at a time.",
        ["RLA_policy §4"],
        lambda: _dict_mixed(False),
    )
    out["dict-discrete-box-multidiscrete-multibinary-batch"] = (
        "The same Dict policy given batches of 3 (each key with a leading dimension 3, the Discrete key of shape [3]): a batch of actions.",
        ["RLA_policy §4"],
        lambda: _dict_mixed(True),
    )
    out["prelu-shared"] = (
        "prelu with one shared slope after a linear, as torch's PReLU computes.",
        ["RLA_policy §5"],
        lambda: _prelu(False),
    )
    out["prelu-per-channel"] = (
        "prelu with one slope per channel of a conv2d output, as torch's PReLU computes.",
        ["RLA_policy §5"],
        lambda: _prelu(True),
    )
    return out


_BUILT: dict = {}


def built(model_id: str) -> Built:
    if model_id not in _BUILT:
        _BUILT[model_id] = _models()[model_id][2]()
    return _BUILT[model_id]


def _register() -> None:
    try:
        import torch  # noqa: F401

        ids = list(_models())
    except ImportError:  # torch missing: these cases cannot be built here
        return
    for model_id in ids:
        desc, sections, _ = _models()[model_id]
        cid = f"policy-numerics-{model_id}"
        case(cid, desc + " The archive's dump.", sections + ["RLA_policy §3"], extensions=[POLICY])(
            lambda m=model_id: built(m).archive
        )
        CASES.append(
            Case(
                f"{cid}-predict",
                desc + " Actions for sample observations.",
                sections + ["RLA_policy §7"],
                "actions",
                lambda m=model_id: built(m).archive,
                extensions=[POLICY],
                predict=lambda m=model_id: built(m).predict,
                file_id=cid,
            )
        )


_register()
