"""The ONNX form of each part of a portable policy (extension ``RLA_policy``): observations, operations, activations, heads.

Used by :mod:`rlarchive.extensions.policy.onnx_export` over a :class:`rlarchive.extensions.policy.onnx_graph.Graph`.
Which operations, activation functions and heads exist comes from the registry
(:mod:`rlarchive.extensions.policy.ops`): each table of lowerings below is checked against
it when the module is imported. Every lowering computes what
:mod:`rlarchive.extensions.policy.evaluator` computes (spec RLA_policy §4-§6); the module
:mod:`rlarchive.extensions.policy.onnx_export` describes the precisions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ...errors import RlarchiveError
from .evaluator import BERNOULLI_THRESHOLD, Policy
from .observations import is_image, kind, observation_dtype, observation_shape
from .onnx_graph import ACTION, ACTION_MASKS, Graph, contiguous
from .ops import ACTIVATION_DEFAULTS, ACTIVATIONS, HEADS, MASKED_LOGIT, OPERATIONS, implementations

__all__ = ["observation", "statistics", "lower_node", "lower_head"]

_F32 = np.float32
_F64 = np.float64


# -- observations (spec RLA_policy §4, RLA_vec_normalize §4) ---------------------------------------


def _normalized(g: Graph, x: str, stats: Any, vn: Any, hint: str) -> str:
    """(float64(x) − mean) / √(var + ε), clipped to ±clip_obs, as float32 (exactly as ``Statistics.normalize_obs``)."""
    d = g.cast(x, np.float64, hint)
    d = g.op("Sub", [d, g.const(np.asarray(stats.mean, np.float64), f"{hint}/mean")], hint)
    d = g.op("Div", [d, g.const(np.sqrt(np.asarray(stats.var, np.float64) + vn.epsilon), f"{hint}/std")], hint)
    d = g.clamp(d, g.scalar(-vn.clip_obs, np.float64), g.scalar(vn.clip_obs, np.float64), hint)
    return g.cast(d, _F32, hint)


def _one_hot(g: Graph, x: str, nvec: list[Any], hint: str) -> str:
    """The one-hot vectors of each component of ``x`` (Discrete: one component), concatenated, in float32."""
    flat = g.op("Reshape", [x, g.const(np.array([-1, len(nvec)], np.int64), "shape")], hint)
    flat = g.cast(flat, np.int64, hint)
    component = np.concatenate([np.full(n, i, np.int64) for i, n in enumerate(nvec)])
    value = np.concatenate([np.arange(n, dtype=np.int64) for n in nvec])
    picked = g.op("Gather", [flat, g.const(component, f"{hint}/component")], hint, axis=1)
    hot = g.op("Equal", [picked, g.const(value, f"{hint}/value")], hint)
    return g.cast(hot, _F32, hint)


def observation(g: Graph, name: str, space: Any, normalize_images: bool, stats: Any, vn: Any) -> str:
    """The float32 input ``name`` of the network from the raw observation of ``space`` (normalised with ``stats`` when given)."""
    x = name
    if stats is not None:
        x = _normalized(g, x, stats, vn, f"{name}/vec_normalize")
    what = kind(space)
    if what == "box":
        if (
            g.onnx.helper.np_dtype_to_tensor_dtype(observation_dtype(space)) != g.onnx.TensorProto.FLOAT
            or stats is not None
        ):
            x = g.cast(x, _F32, name)
        if normalize_images and is_image(space):
            x = g.op("Div", [x, g.scalar(255.0)], f"{name}/image")
        g.rank[x] = len(observation_shape(space))
        return x
    if what in ("discrete", "multi_discrete"):
        nvec = [int(space.n)] if what == "discrete" else [int(n) for n in np.asarray(space.nvec).reshape(-1)]
        x = _one_hot(g, x, nvec, f"{name}/one_hot")
        g.rank[x] = 1
        return x
    if what == "multi_binary":
        x = g.cast(x, _F32, name)
        g.rank[x] = len(observation_shape(space))
        return x
    raise RlarchiveError("VALUE_UNSUPPORTED", f"no ONNX preprocessing for a {what} observation space")


def statistics(policy: Policy) -> dict[str, Any]:
    """Input name -> the VecNormalize statistics that apply to it (as ``Statistics.normalize_obs`` picks them)."""
    vn = policy.vec_normalize
    if vn is None or not vn.norm_obs or vn.obs is None:
        return {}
    dict_space = kind(policy.observation_space) == "dict"
    if isinstance(vn.obs, Mapping):
        if not dict_space:
            raise RlarchiveError(
                "VALUE_UNSUPPORTED", "per-key VecNormalize statistics for an observation space that is not a Dict"
            )
        return {f"obs.{k}": vn.obs[k] for k in vn.obs_keys or ()}
    if dict_space:
        raise RlarchiveError("VALUE_UNSUPPORTED", "one set of VecNormalize statistics for a Dict observation space")
    return {"obs": vn.obs}


# -- activations (spec RLA_policy §5, item 5: NaN and infinities as its table gives them) ---------
#
# Each is an expression over Where and comparisons, which are false for NaN, so
# that NaN propagates whatever a runtime's fused kernel does; transcendental
# and compound formulas are evaluated in float64 from the float32 input and
# rounded once (onnxruntime has no float64 Erf, so gelu's erf alone is float32).


def _in_float64(g: Graph, x: str, hint: str, formula: Callable[[str], str]) -> str:
    """``formula`` over float64(x), rounded once to float32."""
    return g.cast(formula(g.cast(x, _F64, hint)), _F32, hint)


def _expm1(g: Graph, d: str, hint: str) -> str:
    return str(g.op("Sub", [g.op("Exp", [d], hint), g.scalar(1.0, _F64)], hint))


def _log1p(g: Graph, u: str, hint: str) -> str:
    """log(1 + u) accurate for small u (u where 1 + u rounds to 1, else log(1 + u)·u / ((1 + u) − 1)); NaN stays NaN."""
    w = g.op("Add", [u, g.scalar(1.0, _F64)], hint)
    ratio = g.op(
        "Div", [g.op("Mul", [g.op("Log", [w], hint), u], hint), g.op("Sub", [w, g.scalar(1.0, _F64)], hint)], hint
    )
    return g.where(g.op("Equal", [w, g.scalar(1.0, _F64)], hint), u, ratio, hint)


def _softplus64(g: Graph, d: str, beta: float, threshold: float, hint: str) -> str:
    """Float64 softplus: d where beta·d > threshold, else (max(beta·d, 0) + log1p(e^−|beta·d|)) / beta: no overflow, any threshold."""
    z = d if beta == 1.0 else g.op("Mul", [d, g.scalar(beta, _F64)], hint)
    positive = g.where(g.op("Greater", [z, g.scalar(0.0, _F64)], hint), z, g.scalar(0.0, _F64), hint)
    tail = _log1p(g, g.op("Exp", [g.op("Neg", [g.op("Abs", [z], hint)], hint)], hint), hint)
    soft = g.op("Add", [positive, tail], hint)
    if beta != 1.0:
        soft = g.op("Div", [soft, g.scalar(beta, _F64)], hint)
    return g.where(g.op("Greater", [z, g.scalar(threshold, _F64)], hint), d, soft, hint)


def _negative_part(g: Graph, d: str, hint: str, negative: Callable[[str], str]) -> str:
    """d where d > 0, else ``negative(d)`` (so NaN gives ``negative(NaN)``, NaN)."""
    return g.where(g.op("Greater", [d, g.scalar(0.0, _F64)], hint), d, negative(d), hint)


def _sigmoid32(g: Graph, x: str, hint: str) -> str:
    return _in_float64(g, x, hint, lambda d: str(g.op("Sigmoid", [d], hint)))


def _tanh32(g: Graph, x: str, hint: str) -> str:
    return _in_float64(g, x, hint, lambda d: str(g.op("Tanh", [d], hint)))


_SELU = ACTIVATIONS["selu"]["constants"]  # a and s of the registry's formula
_SOFTPLUS = ACTIVATION_DEFAULTS["softplus"]  # mish's softplus: beta 1, threshold 20


def _s(g: Graph, v: float) -> str:
    return g.scalar(v, _F64)


def _mul(g: Graph, a: str, b: str, hint: str) -> str:
    return str(g.op("Mul", [a, b], hint))


def _hard(g: Graph, d: str, hint: str) -> str:
    """min(max(d + 3, 0), 6) (hardswish and hardsigmoid), NaN kept."""
    return g.clamp(g.op("Add", [d, _s(g, 3.0)], hint), _s(g, 0.0), _s(g, 6.0), hint)


def _gelu(g: Graph, x: str, p: Mapping[str, Any], hint: str) -> str:
    def tanh_form(d: str) -> str:
        inner = g.op("Add", [d, _mul(g, _mul(g, _mul(g, d, d, hint), d, hint), _s(g, 0.044715), hint)], hint)
        t = g.op("Tanh", [_mul(g, inner, _s(g, math.sqrt(2.0 / math.pi)), hint)], hint)
        return _mul(g, _mul(g, d, _s(g, 0.5), hint), g.op("Add", [t, _s(g, 1.0)], hint), hint)

    def erf_form(d: str) -> str:  # onnxruntime has no float64 Erf: erf alone in float32
        t = g.cast(g.op("Erf", [g.cast(g.op("Div", [d, _s(g, math.sqrt(2.0))], hint), _F32, hint)], hint), _F64, hint)
        return _mul(g, _mul(g, d, _s(g, 0.5), hint), g.op("Add", [t, _s(g, 1.0)], hint), hint)

    return _in_float64(g, x, hint, tanh_form if p["approximate"] == "tanh" else erf_form)


_Lowering = Callable[[Graph, str, Mapping[str, Any], str], str]

#: Activation function -> its ONNX form of (graph, x, parameters with their defaults, hint).
_ACTIVATIONS: Mapping[str, _Lowering] = implementations(
    ACTIVATIONS,
    {
        "identity": lambda g, x, p, hint: x,
        # 0 where x < 0, else x (NaN, +inf and −0 kept)
        "relu": lambda g, x, p, hint: g.where(g.op("Less", [x, g.scalar(0.0)], hint), g.scalar(0.0), x, hint),
        # x where x ≥ 0, else the float32 product slope·x
        "leaky_relu": lambda g, x, p, hint: g.where(
            g.op("GreaterOrEqual", [x, g.scalar(0.0)], hint),
            x,
            _mul(g, x, g.scalar(float(p["negative_slope"])), hint),
            hint,
        ),
        "hardtanh": lambda g, x, p, hint: g.clamp(
            x, g.scalar(float(p["min_val"])), g.scalar(float(p["max_val"])), hint
        ),
        "tanh": lambda g, x, p, hint: _tanh32(g, x, hint),
        "sigmoid": lambda g, x, p, hint: _sigmoid32(g, x, hint),
        "elu": lambda g, x, p, hint: _in_float64(
            g,
            x,
            hint,
            lambda d: _negative_part(g, d, hint, lambda v: _mul(g, _s(g, float(p["alpha"])), _expm1(g, v, hint), hint)),
        ),
        "selu": lambda g, x, p, hint: _in_float64(
            g,
            x,
            hint,
            lambda d: _mul(
                g,
                _s(g, _SELU["s"]),
                _negative_part(g, d, hint, lambda v: _mul(g, _s(g, _SELU["a"]), _expm1(g, v, hint), hint)),
                hint,
            ),
        ),
        "celu": lambda g, x, p, hint: _in_float64(
            g,
            x,
            hint,
            lambda d: _negative_part(
                g,
                d,
                hint,
                lambda v: _mul(
                    g,
                    _s(g, float(p["alpha"])),
                    _expm1(g, str(g.op("Div", [v, _s(g, float(p["alpha"]))], hint)), hint),
                    hint,
                ),
            ),
        ),
        # x / (1 + e^−x), not x·sigmoid(x), which onnxruntime-web fuses into a float32-only kernel
        "silu": lambda g, x, p, hint: _in_float64(
            g,
            x,
            hint,
            lambda d: str(
                g.op("Div", [d, g.op("Add", [_s(g, 1.0), g.op("Exp", [g.op("Neg", [d], hint)], hint)], hint)], hint)
            ),
        ),
        "softplus": lambda g, x, p, hint: _in_float64(
            g, x, hint, lambda d: _softplus64(g, d, float(p["beta"]), float(p["threshold"]), hint)
        ),
        "mish": lambda g, x, p, hint: _in_float64(
            g,
            x,
            hint,
            lambda d: _mul(
                g,
                d,
                g.op("Tanh", [_softplus64(g, d, float(_SOFTPLUS["beta"]), float(_SOFTPLUS["threshold"]), hint)], hint),
                hint,
            ),
        ),
        # x·min(max(x + 3, 0), 6)/6: −inf·0 is NaN, as in torch
        "hardswish": lambda g, x, p, hint: _in_float64(
            g, x, hint, lambda d: str(g.op("Div", [_mul(g, d, _hard(g, d, hint), hint), _s(g, 6.0)], hint))
        ),
        "hardsigmoid": lambda g, x, p, hint: _in_float64(
            g, x, hint, lambda d: str(g.op("Div", [_hard(g, d, hint), _s(g, 6.0)], hint))
        ),
        # x / (1 + |x|): ±inf give NaN, as in torch
        "softsign": lambda g, x, p, hint: _in_float64(
            g, x, hint, lambda d: str(g.op("Div", [d, g.op("Add", [_s(g, 1.0), g.op("Abs", [d], hint)], hint)], hint))
        ),
        "gelu": _gelu,
    },
    "activations of the ONNX export",
)


def _activation(g: Graph, node: Mapping[str, Any], x: str, hint: str) -> str:
    fn = node["fn"]
    p = {k: node.get(k, v) for k, v in ACTIVATION_DEFAULTS[fn].items()}
    return _ACTIVATIONS[fn](g, x, p, hint)


# -- operations (spec RLA_policy §5) ----------------------------------------------------------------


def _linear(g: Graph, x: str, weight: Any, bias: Any, hint: str) -> str:
    """x · weightᵀ + bias summed in ``g.acc`` and rounded once to float32 (a zero-width x gives the bias, or zeros)."""
    acc = g.acc
    w = g.tensor(weight, f"{hint}/weight")
    y = g.op("MatMul", [g.cast(x, acc, hint) if acc != _F32 else x, g.transposed(w, (1, 0), acc)], hint)
    if bias is not None:
        y = g.op("Add", [y, g.tensor_as(g.tensor(bias, f"{hint}/bias"), acc)], hint)
    return g.cast(y, _F32, hint) if acc != _F32 else str(y)


_INT64_MAX = np.iinfo(np.int64).max


def _conv2d(g: Graph, node: Mapping[str, Any], x: str, hint: str) -> str:
    """2-d cross-correlation (spec RLA_policy §5, item 2).

    float64 (onnxruntime has no float64 Conv): the input padded and made
    channel-last once, then for each kernel offset (i, j) the strided slice of
    the input times the kernel's [C, O] tap at (i, j), summed in float64, the
    bias added, rounded once. float32: ONNX's Conv.
    """
    weight = np.asarray(node["weight"])
    o, c, kh, kw = (int(d) for d in weight.shape)
    (sh, sw), (ph, pw) = ([int(v) for v in node.get("stride", [1, 1])], [int(v) for v in node.get("padding", [0, 0])])
    w = g.tensor(node["weight"], f"{hint}/weight")
    b = g.tensor(node["bias"], f"{hint}/bias") if node.get("bias") is not None else None
    if g.acc == _F32:
        return str(
            g.op(
                "Conv",
                [x, w] + ([b] if b else []),
                hint,
                kernel_shape=[kh, kw],
                strides=[sh, sw],
                pads=[ph, pw, ph, pw],
            )
        )
    d = g.cast(x, _F64, hint)
    if ph or pw:
        d = g.op("Pad", [d, g.const(np.array([0, 0, ph, pw, 0, 0, ph, pw], np.int64), "pads")], hint)
    d = g.op("Transpose", [d], hint, perm=[0, 2, 3, 1])  # [N, H, W, C]
    taps = g.derived(
        ("conv_taps", w),
        lambda: str(
            g.op(
                "Reshape",
                [g.transposed(w, (2, 3, 1, 0), _F64), g.const(np.array([kh * kw, c, o], np.int64), "shape")],
                w,
            )
        ),
    )
    total: Any = None
    for i in range(kh):
        for j in range(kw):
            tap = g.derived(
                ("conv_tap", w, i, j),
                lambda: str(g.op("Gather", [taps, g.const(np.array(i * kw + j, np.int64), "index")], w, axis=0)),
            )
            # rows i, i + sh, ... and columns j, j + sw, ...: as many as the output has (the end counted from the end: kh − 1 − i before it)
            ends = [-(kh - 1 - i) or _INT64_MAX, -(kw - 1 - j) or _INT64_MAX]
            part = g.op("Slice", [d, g.const(np.array([i, j], np.int64), "starts"), g.const(np.array(ends, np.int64), "ends"),
                                  g.const(np.array([1, 2], np.int64), "axes"), g.const(np.array([sh, sw], np.int64), "steps")], hint)  # fmt: skip
            term = g.op("MatMul", [part, tap], hint)  # [N, H', W', O]
            total = term if total is None else g.op("Add", [total, term], hint)
    if b is not None:
        total = g.op("Add", [total, g.tensor_as(b, _F64)], hint)
    return g.cast(g.op("Transpose", [total], hint, perm=[0, 3, 1, 2]), _F32, hint)


def _prelu(g: Graph, node: Mapping[str, Any], x: str, hint: str) -> str:
    """x where x ≥ 0, else the float32 product weight·x, the weight along the first dimension after the batch (NaN kept)."""
    w = g.tensor(node["weight"], f"{hint}/weight")
    rank = g.rank.get(x, 1)
    n = int(np.asarray(node["weight"]).size)
    slope = (
        w
        if n == 1 or rank <= 1
        else g.derived(
            ("prelu", w, rank),
            lambda: str(g.op("Reshape", [w, g.const(np.array([n] + [1] * (rank - 1), np.int64), "shape")], w)),
        )
    )
    return g.where(g.op("GreaterOrEqual", [x, g.scalar(0.0)], hint), x, g.op("Mul", [x, slope], hint), hint)


def _affine64(g: Graph, node: Mapping[str, Any], d: str, hint: str) -> str:
    """``d * weight + bias`` in float64, each only when the node has it (a normalisation's affine part)."""
    if node.get("weight") is not None:
        d = g.op("Mul", [d, g.tensor_as(g.tensor(node["weight"], f"{hint}/weight"), _F64)], hint)
    if node.get("bias") is not None:
        d = g.op("Add", [d, g.tensor_as(g.tensor(node["bias"], f"{hint}/bias"), _F64)], hint)
    return str(d)


def _lstm(g: Graph, node: Mapping[str, Any], xs: list[Any], hint: str) -> list[Any]:
    """One step of a multi-layer LSTM in PyTorch's gate order, written out so that any runtime runs it (gates summed in ``g.acc``)."""
    x, h, c = xs
    outs = node["out"]
    acc = g.acc
    hs, cs = [], []
    inp = x
    for layer, p in enumerate(node["layers"]):
        lh = f"{hint}/layer{layer}"
        index = g.const(np.array(layer, np.int64), "index")
        h_l = g.op("Gather", [h, index], lh, axis=0)
        c_l = g.op("Gather", [c, index], lh, axis=0)

        def wide(v: str, lh: str = lh) -> str:
            return g.cast(v, acc, lh) if acc != _F32 else v

        gates = g.op("MatMul", [wide(inp), g.transposed(g.tensor(p["weight_ih"], f"{lh}/weight_ih"), (1, 0), acc)], lh)
        gates = g.op("Add", [gates, g.tensor_as(g.tensor(p["bias_ih"], f"{lh}/bias_ih"), acc)], lh)
        gates = g.op(
            "Add",
            [
                gates,
                g.op("MatMul", [wide(h_l), g.transposed(g.tensor(p["weight_hh"], f"{lh}/weight_hh"), (1, 0), acc)], lh),
            ],
            lh,
        )
        gates = g.op("Add", [gates, g.tensor_as(g.tensor(p["bias_hh"], f"{lh}/bias_hh"), acc)], lh)
        if acc != _F32:
            gates = g.cast(gates, _F32, lh)
        size = np.asarray(p["weight_hh"]).shape[1]
        i, f, gg, o = g.op("Split", [gates, g.const(np.full(4, size, np.int64), "split")], lh, outputs=4, axis=1)
        i, f, o = (_sigmoid32(g, v, lh) for v in (i, f, o))
        gg = _tanh32(g, gg, lh)
        c_new = g.op("Add", [g.op("Mul", [f, c_l], lh), g.op("Mul", [i, gg], lh)], lh)
        h_new = g.op("Mul", [o, _tanh32(g, c_new, lh)], lh)
        hs.append(h_new)
        cs.append(c_new)
        inp = h_new
    zero = g.const(np.array([0], np.int64), "axes")
    stacked = []
    for values, name in ((hs, outs[1]), (cs, outs[2])):
        parts = [g.op("Unsqueeze", [v, zero], hint) for v in values]
        if len(parts) == 1:
            g.rename_output(parts[0], name)
        else:
            g.op("Concat", parts, hint, out=[name], axis=0)
        stacked.append(name)
    return [inp] + stacked


def _layer_norm(g: Graph, node: Mapping[str, Any], x: str, hint: str) -> str:
    """In float64 throughout, rounded once (spec RLA_policy §5)."""
    x64 = g.cast(x, _F64, hint)
    d = g.op("Sub", [x64, g.reduce_mean(x64, [-1], hint, 1)], hint)
    var = g.reduce_mean(g.op("Mul", [d, d], hint), [-1], hint, 1)
    std = g.op("Sqrt", [g.op("Add", [var, g.scalar(float(node["eps"]), _F64)], hint)], hint)
    return g.cast(_affine64(g, node, g.op("Div", [d, std], hint), hint), _F32, hint)


def _batch_norm(g: Graph, node: Mapping[str, Any], x: str, hint: str) -> str:
    """In float64 throughout, rounded once (spec RLA_policy §5)."""
    mean = g.tensor_as(g.tensor(node["running_mean"], f"{hint}/running_mean"), _F64)
    var = g.tensor_as(g.tensor(node["running_var"], f"{hint}/running_var"), _F64)
    eps = float(node["eps"])
    std = g.derived(("std", var, eps), lambda: str(g.op("Sqrt", [g.op("Add", [var, g.scalar(eps, _F64)], hint)], hint)))
    return g.cast(
        _affine64(g, node, g.op("Div", [g.op("Sub", [g.cast(x, _F64, hint), mean], hint), std], hint), hint), _F32, hint
    )


def _concat(g: Graph, node: Mapping[str, Any], xs: list[Any], hint: str) -> str:
    return str(g.op("Concat", [g.op("Flatten", [x], hint, axis=1) for x in xs], hint, axis=1))


#: Operation -> (its ONNX form of (graph, node, inputs, hint), the rank of its first output: None for its input's).
_OPERATIONS: Mapping[str, tuple[Callable[[Graph, Mapping[str, Any], list[Any], str], Any], Any]] = implementations(
    OPERATIONS,
    {
        "linear": (lambda g, node, xs, hint: _linear(g, xs[0], node["weight"], node.get("bias"), hint), None),
        "conv2d": (lambda g, node, xs, hint: _conv2d(g, node, xs[0], hint), 3),
        "activation": (lambda g, node, xs, hint: _activation(g, node, xs[0], hint), None),
        "prelu": (lambda g, node, xs, hint: _prelu(g, node, xs[0], hint), None),
        "flatten": (lambda g, node, xs, hint: g.op("Flatten", [xs[0]], hint, axis=1), 1),
        "concat": (_concat, 1),
        "layer_norm": (lambda g, node, xs, hint: _layer_norm(g, node, xs[0], hint), None),
        "batch_norm": (lambda g, node, xs, hint: _batch_norm(g, node, xs[0], hint), None),
        "lstm": (_lstm, 1),
    },
    "operations of the ONNX export",
)


def lower_node(g: Graph, node: Mapping[str, Any], xs: list[Any], hint: str) -> Any:
    """The ONNX form of one node of the description over the graph values ``xs``: its output (a list for an lstm)."""
    lower, rank = _OPERATIONS[node["op"]]
    y = lower(g, node, xs, hint)
    first = y[0] if isinstance(y, list) else y
    g.rank[str(first)] = g.rank.get(xs[0], 1) if rank is None else rank
    return y


# -- heads (spec RLA_policy §6) ---------------------------------------------------------------------


def _argmax(g: Graph, v: str, axis: int = 1) -> str:
    """The first largest value along ``axis`` (kept, of size 1), the first NaN where there is one (RLA_policy §6)."""
    nan = g.cast(g.op("IsNaN", [v], "head"), _F32, "head")
    first_nan = g.op("ArgMax", [nan], "head", axis=axis, keepdims=1)
    has_nan = g.op("Greater", [g.op("GatherElements", [nan, first_nan], "head", axis=axis), g.scalar(0.5)], "head")
    return str(g.op("Where", [has_nan, first_nan, g.op("ArgMax", [v], "head", axis=axis, keepdims=1)], "head"))


def _flat(g: Graph, v: str) -> str:
    return str(g.op("Reshape", [v, g.const(np.array([-1], np.int64), "shape")], "head"))


def _action_shape(g: Graph, policy: Policy) -> str:
    """[batch, *the action space's shape], for a Reshape."""
    return g.const(np.array([-1] + [int(d) for d in observation_shape(policy.action_space)], np.int64), "action_shape")


def _quantile_argmax(g: Graph, policy: Policy, x: str) -> str:
    """The mean over quantiles in float64, rounded once, then the argmax."""
    n = int(policy.action_space.n)
    q = g.op(
        "Reshape",
        [g.cast(x, _F64, "head"), g.const(np.array([-1, int(policy.action["n_quantiles"]), n], np.int64), "shape")],
        "head",
    )
    return _flat(g, _argmax(g, g.cast(g.reduce_mean(q, [1], "head", 0), _F32, "head")))


def _multi_argmax(g: Graph, policy: Policy, x: str) -> str:
    """Each run of equal sizes at once: [batch, count·size] as [batch, count, size], the argmax over the last axis."""
    runs: list[Any] = []
    for size in (int(n) for n in policy.action["sizes"]):
        if runs and runs[-1][0] == size:
            runs[-1][1] += 1
        else:
            runs.append([size, 1])
    widths = np.array([size * count for size, count in runs], np.int64)
    parts = g.op("Split", [x, g.const(widths, "split")], "head", outputs=len(runs), axis=1) if len(runs) > 1 else [x]
    picks = [
        _argmax(g, g.op("Reshape", [p, g.const(np.array([-1, count, size], np.int64), "shape")], "head"), axis=2)
        for p, (size, count) in zip(parts, runs)
    ]
    return str(
        g.op(
            "Reshape",
            [g.op("Concat", picks, "head", axis=1) if len(picks) > 1 else picks[0], _action_shape(g, policy)],
            "head",
        )
    )


def _bernoulli(g: Graph, policy: Policy, x: str) -> str:
    """1.0 where the logit > 3·2⁻²⁵ (SB3's float32 round(sigmoid); NaN gives 0.0), RLA_policy §6."""
    hot = g.op("Greater", [x, g.scalar(float(BERNOULLI_THRESHOLD))], "head")
    return str(g.op("Reshape", [g.cast(hot, _F32, "head"), _action_shape(g, policy)], "head"))


def _box(g: Graph, policy: Policy, x: str) -> str:
    head = policy.action
    low, high = _f32(head["low"]), _f32(head["high"])
    a = g.op("Reshape", [x, _action_shape(g, policy)], "head")
    if head.get("squash") == "tanh":
        a = _tanh32(g, a, "head")
    if head.get("squash") in (
        "tanh",
        "rescale",
    ):  # low + 0.5·(a + 1)·(high − low) in float64 from float32 values, rounded once
        a = g.op(
            "Mul", [g.scalar(0.5, _F64), g.op("Add", [g.cast(a, _F64, "head"), g.scalar(1.0, _F64)], "head")], "head"
        )
        a = g.op("Mul", [a, g.const(high.astype(_F64) - low.astype(_F64), "head/span")], "head")
        a = g.cast(g.op("Add", [g.const(low.astype(_F64), "head/low64"), a], "head"), _F32, "head")
    else:
        a = g.clamp(a, g.const(low, "head/low"), g.const(high, "head/high"), "head")
    dtype = np.dtype(head["dtype"])
    return str(a) if dtype == np.dtype(_F32) else g.cast(a, dtype, "head")


#: Head -> its ONNX form of (graph, policy, the head's input): the action.
_HEADS: Mapping[str, Callable[[Graph, Policy, str], str]] = implementations(
    HEADS,
    {
        "argmax": lambda g, policy, x: _flat(g, _argmax(g, x)),
        "quantile_argmax": _quantile_argmax,
        "multi_argmax": _multi_argmax,
        "bernoulli": _bernoulli,
        "box": _box,
    },
    "heads of the ONNX export",
)


def lower_head(g: Graph, policy: Policy, x: str, action_masks: bool) -> None:
    """The head over the graph value ``x``, written to the output ``action`` (masked-out logits count as −1e8 with ``action_masks``)."""
    if action_masks:
        x = g.op("Where", [ACTION_MASKS, x, g.scalar(MASKED_LOGIT)], "head/masks")
    g.rename_output(_HEADS[policy.action["op"]](g, policy, x), ACTION)


def _f32(a: Any) -> np.ndarray:
    return contiguous(a, _F32)
