"""Export the portable policy (extension ``RLA_policy``) of an archive as an ONNX model.

:func:`export_onnx` turns the checked description that
:meth:`rlarchive.Archive.policy` gives (a :class:`rlarchive.policy.Policy`)
into one ONNX graph that computes what ``Policy.predict`` computes, and so
what Stable-Baselines3's ``predict(deterministic=True)`` returns:

- inputs: the raw observations, batch first, with the dtype of their space
  (``obs``, or ``obs.KEY`` for each key of a Dict space, in the space's
  order); for a recurrent policy the state inputs named as in the
  description (float32, ``[layers, batch, hidden_size]``) and
  ``episode_start`` (float32 ``[batch]``, 1.0 where an episode starts); for a
  masked policy (MaskablePPO, or when asked) ``action_masks`` (bool
  ``[batch, W]``, true where an action is allowed);
- outputs: ``action`` (int64 for the argmax heads, float32 for Bernoulli, the
  action space's dtype for a Box) of shape ``[batch, *action shape]``, and for
  a recurrent policy the next state, named as in the description.

The graph holds the whole path: the ``RLA_vec_normalize`` normalisation
(float64, clipped, as :meth:`rlarchive.vec_normalize.Statistics.normalize_obs`
computes it), the preprocessing of spec ``RLA_policy`` §4 (casts, images
divided by 255, one-hot of Discrete and MultiDiscrete values), every node, the
head with its masks, and the scaling or clipping to the action space. Image
observations are taken in the space's layout (channel first); the channel-last
transposition that SB3's ``predict`` applies is left to the caller
(:func:`onnx_inputs` does it, and makes the inputs of any ``predict``-shaped
call).

``onnx`` is an optional dependency (``pip install 'rlarchive[onnx]'``): it is
imported only when a model is built, never by ``import rlarchive``.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from .dtypes import numpy_view_dtype
from .errors import RlarchiveError
from .policy import ACTIVATIONS, Policy, _dict_keys, _is_image, _kind, _obs_shape, _sub
from .writer import atomic_file

if TYPE_CHECKING:
    from .reader import Archive

__all__ = ["DEFAULT_OPSET", "MIN_OPSET", "TensorInfo", "OnnxExport", "build_model", "export_onnx", "onnx_inputs"]

#: The opset written when none is asked for: run by onnxruntime (also onnxruntime-web) and most runtimes.
DEFAULT_OPSET = 17
#: The oldest opset the graph can be written in (HardSwish is in opset 14).
MIN_OPSET = 14

#: Names of the graph's fixed inputs and output.
EPISODE_START = "episode_start"
ACTION_MASKS = "action_masks"
ACTION = "action"
#: The symbolic batch dimension of every input and output.
BATCH = "batch"

_F32 = np.float32
#: What a masked-out action's logit becomes (as MaskablePPO does, spec RLA_policy §6).
_MASKED_LOGIT = -1e8
_INSTALL = "install it with: pip install 'rlarchive[onnx]'"


def _contiguous(a: Any, dtype: Any = None) -> np.ndarray:
    """``a`` as a C-contiguous array of its rank (``np.ascontiguousarray`` would turn a scalar into a vector)."""
    return np.array(a, dtype=dtype, order="C", copy=True)


@dataclass(frozen=True)
class TensorInfo:
    """One input or output of the exported graph: its name, NumPy dtype name, shape (``"batch"`` for the batch) and meaning."""

    name: str
    dtype: str
    shape: tuple
    doc: str

    def to_dict(self) -> dict:
        """As JSON-ready values (also stored in the model's metadata)."""
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape), "doc": self.doc}


@dataclass(frozen=True)
class OnnxExport:
    """What :func:`export_onnx` wrote."""

    path: str
    opset: int
    inputs: tuple
    outputs: tuple
    nodes: int
    size: int

    def to_dict(self) -> dict:
        """As JSON-ready values."""
        return {
            "path": self.path,
            "opset": self.opset,
            "inputs": [i.to_dict() for i in self.inputs],
            "outputs": [o.to_dict() for o in self.outputs],
            "nodes": self.nodes,
            "size": self.size,
        }

    def __str__(self) -> str:
        def line(t: TensorInfo) -> str:
            shape = "[" + ", ".join(str(d) for d in t.shape) + "]"
            return f"  {t.name:24} {t.dtype:8} {shape}"

        lines = [f"wrote {self.path} (ONNX opset {self.opset}, {self.nodes} nodes, {self.size} bytes)", "inputs"]
        lines += [line(t) for t in self.inputs]
        lines.append("outputs")
        lines += [line(t) for t in self.outputs]
        return "\n".join(lines)


# -- the graph's interface -------------------------------------------------------------


def _space_dtype(space: Any) -> np.dtype:
    """The dtype of a space's raw observations (MultiBinary: int8, as gymnasium samples them)."""
    if _kind(space) == "multi_binary":
        return np.dtype(np.int8)
    dt = getattr(space, "dtype", "I64")
    return numpy_view_dtype(dt) if isinstance(dt, str) else np.dtype(dt)


def _observations(policy: Policy) -> list:
    """(input name, space) of every observation input, in order."""
    sp = policy.observation_space
    if _kind(sp) == "dict":
        return [(f"obs.{k}", _sub(sp, k)) for k in _dict_keys(sp)]
    return [("obs", sp)]


def _action_dtype(policy: Policy) -> np.dtype:
    op = policy.action["op"]
    if op == "box":
        return np.dtype(policy.action["dtype"])
    if op == "bernoulli":
        return np.dtype(_F32)
    return np.dtype(np.int64)


def _interface(policy: Policy, action_masks: bool) -> tuple:
    """The graph's inputs and outputs (:class:`TensorInfo`), in order."""
    inputs = []
    for name, space in _observations(policy):
        what = {"box": "Box", "discrete": "Discrete", "multi_discrete": "MultiDiscrete", "multi_binary": "MultiBinary"}.get(_kind(space) or "", "?")
        doc = f"raw {what} observations" + (" (channel first)" if _is_image(space) else "")
        inputs.append(TensorInfo(name, _space_dtype(space).name, (BATCH,) + tuple(int(d) for d in _obs_shape(space)), doc))
    outputs = [TensorInfo(ACTION, _action_dtype(policy).name, (BATCH,) + tuple(int(d) for d in _obs_shape(policy.action_space)), "the deterministic action")]
    rec = policy.recurrent
    if rec is not None:
        shape = (int(rec["layers"]), BATCH, int(rec["hidden_size"]))
        inputs.append(TensorInfo(rec["hidden_in"], "float32", shape, "LSTM hidden state (zeros at the start)"))
        inputs.append(TensorInfo(rec["cell_in"], "float32", shape, "LSTM cell state (zeros at the start)"))
        inputs.append(TensorInfo(EPISODE_START, "float32", (BATCH,), "1.0 where an episode starts (the state is reset), else 0.0"))
        outputs.append(TensorInfo(rec["hidden_out"], "float32", shape, "the next LSTM hidden state"))
        outputs.append(TensorInfo(rec["cell_out"], "float32", shape, "the next LSTM cell state"))
    if action_masks:
        width = policy.mask_width
        if width is None:
            raise RlarchiveError("INPUT_INVALID", f"the head {policy.action['op']} takes no action masks (argmax and multi_argmax heads do)")
        inputs.append(TensorInfo(ACTION_MASKS, "bool", (BATCH, width), "true where an action is allowed"))
    names = [t.name for t in inputs + outputs]
    if len(set(names)) != len(names):
        raise RlarchiveError("VALUE_UNSUPPORTED", f"the policy's state names clash with the graph's own names: {names}")
    return tuple(inputs), tuple(outputs)


def onnx_inputs(
    policy: Policy,
    observation: Any,
    state: Optional[tuple] = None,
    episode_start: Optional[Any] = None,
    action_masks: Optional[Any] = None,
) -> tuple:
    """The inputs of the exported graph for arguments shaped like ``Policy.predict`` (and SB3's ``predict``).

    Returns ``(feeds, single)``: a dict of input name to array (with the
    batch dimension and the input's dtype; channel-last images transposed),
    and whether ``observation`` was a single one (its action is then the
    first row of the output). Without ``state`` or ``episode_start`` a
    recurrent policy starts from zeros and resets nothing; ``action_masks``
    go to the graph's ``action_masks`` input (give them when the graph has
    it).
    """
    obs, single = policy._batch(observation)
    specs = {t.name: t for t in _interface(policy, False)[0]}
    arrays = {f"obs.{k}": v for k, v in obs.items()} if isinstance(obs, dict) else {"obs": obs}
    feeds = {name: _contiguous(a, specs[name].dtype) for name, a in arrays.items()}
    n = next(iter(feeds.values())).shape[0]
    rec = policy.recurrent
    if rec is not None:
        feeds[rec["hidden_in"]], feeds[rec["cell_in"]] = policy._state(rec, state, n)  # the graph applies episode_start
        start = np.zeros(n, _F32) if episode_start is None else np.asarray(episode_start, _F32).reshape(n)
        feeds[EPISODE_START] = start
    if action_masks is not None:
        feeds[ACTION_MASKS] = np.asarray(action_masks, dtype=bool).reshape(n, -1)
    return feeds, single


# -- building the graph ------------------------------------------------------------------


def _import_onnx() -> Any:
    try:
        import onnx
        import onnx.helper  # noqa: F401
        import onnx.numpy_helper  # noqa: F401
    except ImportError as e:
        raise RlarchiveError("FRAMEWORK_UNAVAILABLE", f"exporting to ONNX needs the Python package 'onnx', which is not installed ({e}): {_INSTALL}") from None
    return onnx


class _Graph:
    """Nodes, constants and unique value names of the graph under construction."""

    def __init__(self, onnx: Any, opset: int, reserved: Iterable[str]) -> None:
        self.onnx = onnx
        self.opset = opset
        self.nodes: list = []
        self.initializers: list = []
        self.used: set = set(reserved)
        self.value: dict = {}  # a name of the description -> its value in the graph
        self._consts: dict = {}

    def fresh(self, hint: str) -> str:
        """A name not used yet: ``hint`` itself, or ``hint`` with a number."""
        name, k = hint, 1
        while name in self.used:
            name, k = f"{hint}_{k}", k + 1
        self.used.add(name)
        return name

    def const(self, array: Any, hint: str = "const") -> str:
        """A constant (an initializer); equal small constants are shared."""
        a = _contiguous(array)
        key = (a.dtype.str, a.shape, a.tobytes()) if a.size <= 64 else None
        if key is not None and key in self._consts:
            return str(self._consts[key])
        name = self.fresh(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(a, name))
        if key is not None:
            self._consts[key] = name
        return name

    def op(self, op_type: str, inputs: Sequence[str], hint: str, outputs: int = 1, out: Optional[Sequence[str]] = None, **attrs: Any) -> Any:
        """Add a node; its output name (or list of names when ``outputs`` > 1)."""
        names = list(out) if out is not None else [self.fresh(f"{hint}/{op_type}" if outputs == 1 else f"{hint}/{op_type}:{i}") for i in range(outputs)]
        self.nodes.append(self.onnx.helper.make_node(op_type, list(inputs), names, name=self.fresh(f"{hint}#{op_type}"), **attrs))
        return names[0] if len(names) == 1 else names

    def rename_output(self, value: str, name: str) -> None:
        """Make the node that computes ``value`` (read by no node yet) write ``name`` instead."""
        for node in reversed(self.nodes):
            if value in node.output:
                node.output[list(node.output).index(value)] = name
                return
        self.op("Identity", [value], name, out=[name])

    def reduce_mean(self, x: str, axes: list, hint: str, keepdims: int) -> str:
        if self.opset >= 18:  # axes became an input in opset 18
            return str(self.op("ReduceMean", [x, self.const(np.array(axes, np.int64), "axes")], hint, keepdims=keepdims))
        return str(self.op("ReduceMean", [x], hint, axes=axes, keepdims=keepdims))

    def scalar(self, v: float, dtype: Any = _F32) -> str:
        return self.const(np.array(v, dtype), "scalar")

    def cast(self, x: str, dtype: Any, hint: str) -> str:
        return str(self.op("Cast", [x], hint, to=self.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))))


# -- observations (spec RLA_policy §4, RLA_vec_normalize §4) ---------------------------------------


def _normalized(g: _Graph, x: str, stats: Any, vn: Any, hint: str) -> str:
    """(float64(x) − mean) / √(var + ε), clipped to ±clip_obs, as float32 (exactly as ``Statistics.normalize_obs``)."""
    d = g.cast(x, np.float64, hint)
    d = g.op("Sub", [d, g.const(np.asarray(stats.mean, np.float64), f"{hint}/mean")], hint)
    d = g.op("Div", [d, g.const(np.sqrt(np.asarray(stats.var, np.float64) + vn.epsilon), f"{hint}/std")], hint)
    d = g.op("Max", [d, g.scalar(-vn.clip_obs, np.float64)], hint)
    d = g.op("Min", [d, g.scalar(vn.clip_obs, np.float64)], hint)
    return g.cast(d, _F32, hint)


def _one_hot(g: _Graph, x: str, nvec: list, hint: str) -> str:
    """The one-hot vectors of each component of ``x`` (Discrete: one component), concatenated, in float32."""
    flat = g.op("Reshape", [x, g.const(np.array([-1, len(nvec)], np.int64), "shape")], hint)
    flat = g.cast(flat, np.int64, hint)
    component = np.concatenate([np.full(n, i, np.int64) for i, n in enumerate(nvec)])
    value = np.concatenate([np.arange(n, dtype=np.int64) for n in nvec])
    picked = g.op("Gather", [flat, g.const(component, f"{hint}/component")], hint, axis=1)
    hot = g.op("Equal", [picked, g.const(value, f"{hint}/value")], hint)
    return g.cast(hot, _F32, hint)


def _observation(g: _Graph, name: str, space: Any, normalize_images: bool, stats: Any, vn: Any) -> str:
    x = name
    if stats is not None:
        x = _normalized(g, x, stats, vn, f"{name}/vec_normalize")
    kind = _kind(space)
    if kind == "box":
        if g.onnx.helper.np_dtype_to_tensor_dtype(_space_dtype(space)) != g.onnx.TensorProto.FLOAT or stats is not None:
            x = g.cast(x, _F32, name)
        if normalize_images and _is_image(space):
            x = g.op("Div", [x, g.scalar(255.0)], f"{name}/image")
        return x
    if kind == "discrete":
        return _one_hot(g, x, [int(space.n)], f"{name}/one_hot")
    if kind == "multi_discrete":
        return _one_hot(g, x, [int(n) for n in np.asarray(space.nvec).reshape(-1)], f"{name}/one_hot")
    if kind == "multi_binary":
        return g.cast(x, _F32, name)
    raise RlarchiveError("VALUE_UNSUPPORTED", f"no ONNX preprocessing for a {kind} observation space")


def _statistics(policy: Policy) -> dict:
    """Input name -> the VecNormalize statistics that apply to it (as ``Statistics.normalize_obs`` picks them)."""
    vn = policy.vec_normalize
    if vn is None or not vn.norm_obs or vn.obs is None:
        return {}
    dict_space = _kind(policy.observation_space) == "dict"
    if isinstance(vn.obs, Mapping):
        if not dict_space:
            raise RlarchiveError("VALUE_UNSUPPORTED", "per-key VecNormalize statistics for an observation space that is not a Dict")
        return {f"obs.{k}": vn.obs[k] for k in vn.obs_keys or ()}
    if dict_space:
        raise RlarchiveError("VALUE_UNSUPPORTED", "one set of VecNormalize statistics for a Dict observation space")
    return {"obs": vn.obs}


# -- operations (spec RLA_policy §5) ----------------------------------------------------------------


def _f32(a: Any) -> np.ndarray:
    return _contiguous(a, _F32)


def _softplus(g: _Graph, x: str, beta: float, threshold: float, hint: str) -> str:
    """x where beta·x > threshold, else log(1 + e^(beta·x)) / beta."""
    bx = x if beta == 1.0 else g.op("Mul", [x, g.scalar(beta)], hint)
    soft = g.op("Softplus", [bx], hint)
    if beta != 1.0:
        soft = g.op("Div", [soft, g.scalar(beta)], hint)
    return str(g.op("Where", [g.op("Greater", [bx, g.scalar(threshold)], hint), x, soft], hint))


def _activation(g: _Graph, node: Mapping, x: str, hint: str) -> str:
    fn = node["fn"]
    if fn not in ACTIVATIONS:
        raise RlarchiveError("VALUE_UNSUPPORTED", f"no ONNX form of the activation {fn!r}")
    p = {k: node.get(k, v) for k, v in ACTIVATIONS[fn][1].items()}
    simple = {"identity": "Identity", "relu": "Relu", "tanh": "Tanh", "sigmoid": "Sigmoid", "selu": "Selu", "hardswish": "HardSwish", "softsign": "Softsign"}
    if fn in simple:
        return str(g.op(simple[fn], [x], hint))
    if fn == "elu":
        return str(g.op("Elu", [x], hint, alpha=float(p["alpha"])))
    if fn == "celu":
        return str(g.op("Celu", [x], hint, alpha=float(p["alpha"])))
    if fn == "leaky_relu":
        return str(g.op("LeakyRelu", [x], hint, alpha=float(p["negative_slope"])))
    if fn == "silu":
        return str(g.op("Mul", [x, g.op("Sigmoid", [x], hint)], hint))
    if fn == "hardtanh":
        return str(g.op("Clip", [x, g.scalar(float(p["min_val"])), g.scalar(float(p["max_val"]))], hint))
    if fn == "hardsigmoid":
        return str(g.op("HardSigmoid", [x], hint, alpha=1.0 / 6.0, beta=0.5))
    if fn == "softplus":
        return _softplus(g, x, float(p["beta"]), float(p["threshold"]), hint)
    if fn == "mish":
        return str(g.op("Mul", [x, g.op("Tanh", [_softplus(g, x, 1.0, 20.0, hint)], hint)], hint))
    if fn == "gelu":
        if p["approximate"] == "tanh":
            cube = g.op("Mul", [g.op("Mul", [x, x], hint), x], hint)
            inner = g.op("Add", [x, g.op("Mul", [cube, g.scalar(0.044715)], hint)], hint)
            t = g.op("Tanh", [g.op("Mul", [inner, g.scalar(math.sqrt(2.0 / math.pi))], hint)], hint)
        else:
            t = g.op("Erf", [g.op("Div", [x, g.scalar(math.sqrt(2.0))], hint)], hint)
        half_x = g.op("Mul", [x, g.scalar(0.5)], hint)
        return str(g.op("Mul", [half_x, g.op("Add", [t, g.scalar(1.0)], hint)], hint))
    raise RlarchiveError("VALUE_UNSUPPORTED", f"no ONNX form of the activation {fn!r}")


def _affine(g: _Graph, node: Mapping, y: str, hint: str) -> str:
    """``y * weight + bias``, each only when the node has it."""
    if node.get("weight") is not None:
        y = g.op("Mul", [y, g.const(_f32(node["weight"]), f"{hint}/weight")], hint)
    if node.get("bias") is not None:
        y = g.op("Add", [y, g.const(_f32(node["bias"]), f"{hint}/bias")], hint)
    return y


def _lstm(g: _Graph, node: Mapping, xs: list, hint: str) -> list:
    """One step of a multi-layer LSTM in PyTorch's gate order, written out so that any runtime runs it."""
    x, h, c = xs
    outs = node["out"]
    hs, cs = [], []
    inp = x
    for layer, p in enumerate(node["layers"]):
        lh = f"{hint}/layer{layer}"
        index = g.const(np.array(layer, np.int64), "index")
        h_l = g.op("Gather", [h, index], lh, axis=0)
        c_l = g.op("Gather", [c, index], lh, axis=0)
        gates = g.op("MatMul", [inp, g.const(_f32(p["weight_ih"]).T.copy(), f"{lh}/weight_ih_T")], lh)
        gates = g.op("Add", [gates, g.const(_f32(p["bias_ih"]), f"{lh}/bias_ih")], lh)
        gates = g.op("Add", [gates, g.op("MatMul", [h_l, g.const(_f32(p["weight_hh"]).T.copy(), f"{lh}/weight_hh_T")], lh)], lh)
        gates = g.op("Add", [gates, g.const(_f32(p["bias_hh"]), f"{lh}/bias_hh")], lh)
        size = np.asarray(p["weight_hh"]).shape[1]
        i, f, gg, o = g.op("Split", [gates, g.const(np.full(4, size, np.int64), "split")], lh, outputs=4, axis=1)
        i, f, o = (g.op("Sigmoid", [v], lh) for v in (i, f, o))
        gg = g.op("Tanh", [gg], lh)
        c_new = g.op("Add", [g.op("Mul", [f, c_l], lh), g.op("Mul", [i, gg], lh)], lh)
        h_new = g.op("Mul", [o, g.op("Tanh", [c_new], lh)], lh)
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


def _node(g: _Graph, node: Mapping, xs: list, hint: str) -> Any:
    op = node["op"]
    if op == "linear":
        y = g.op("MatMul", [xs[0], g.const(_f32(node["weight"]).T.copy(), f"{hint}/weight_T")], hint)
        if node.get("bias") is not None:
            y = g.op("Add", [y, g.const(_f32(node["bias"]), f"{hint}/bias")], hint)
        return y
    if op == "conv2d":
        w = _f32(node["weight"])
        ins = [xs[0], g.const(w, f"{hint}/weight")]
        if node.get("bias") is not None:
            ins.append(g.const(_f32(node["bias"]), f"{hint}/bias"))
        (sh, sw), (ph, pw) = node.get("stride", [1, 1]), node.get("padding", [0, 0])
        return g.op("Conv", ins, hint, kernel_shape=list(w.shape[2:]), strides=[int(sh), int(sw)], pads=[int(ph), int(pw), int(ph), int(pw)])
    if op == "activation":
        return _activation(g, node, xs[0], hint)
    if op == "flatten":
        return g.op("Flatten", [xs[0]], hint, axis=1)
    if op == "concat":
        return g.op("Concat", [g.op("Flatten", [x], hint, axis=1) for x in xs], hint, axis=1)
    if op == "layer_norm":  # in float64, then rounded, as the NumPy evaluator computes it
        x64 = g.cast(xs[0], np.float64, hint)
        d = g.op("Sub", [x64, g.reduce_mean(x64, [-1], hint, 1)], hint)
        var = g.reduce_mean(g.op("Mul", [d, d], hint), [-1], hint, 1)
        std = g.op("Sqrt", [g.op("Add", [var, g.scalar(float(node.get("eps", 1e-5)), np.float64)], hint)], hint)
        return _affine(g, node, g.cast(g.op("Div", [d, std], hint), _F32, hint), hint)
    if op == "batch_norm":
        mean = g.const(_f32(node["running_mean"]), f"{hint}/running_mean")
        std = np.sqrt(_f32(node["running_var"]) + _F32(node.get("eps", 1e-5))).astype(_F32)
        return _affine(g, node, g.op("Div", [g.op("Sub", [xs[0], mean], hint), g.const(std, f"{hint}/running_std")], hint), hint)
    if op == "lstm":
        return _lstm(g, node, xs, hint)
    raise RlarchiveError("VALUE_UNSUPPORTED", f"no ONNX form of the operation {op!r}")


# -- heads (spec RLA_policy §6) ---------------------------------------------------------------------


def _head(g: _Graph, policy: Policy, x: str, action_masks: bool) -> None:
    head = policy.action
    op = head["op"]
    shape = [int(d) for d in _obs_shape(policy.action_space)]

    def to_shape() -> str:  # [batch, *the action space's shape]
        return g.const(np.array([-1] + shape, np.int64), "action_shape")

    def argmax(v: str) -> str:
        """[batch, 1]: the first largest value of each row, the first NaN where a row holds one (RLA_policy §6)."""
        nan = g.cast(g.op("IsNaN", [v], "head"), _F32, "head")
        first_nan = g.op("ArgMax", [nan], "head", axis=1, keepdims=1)
        has_nan = g.op("Greater", [g.op("GatherElements", [nan, first_nan], "head", axis=1), g.scalar(0.5)], "head")
        return str(g.op("Where", [has_nan, first_nan, g.op("ArgMax", [v], "head", axis=1, keepdims=1)], "head"))

    def flat(v: str) -> str:
        return str(g.op("Reshape", [v, g.const(np.array([-1], np.int64), "shape")], "head"))

    if action_masks:  # masked-out logits count as −1e8
        x = g.op("Where", [ACTION_MASKS, x, g.scalar(_MASKED_LOGIT)], "head/masks")
    if op == "argmax":
        y = flat(argmax(x))
    elif op == "quantile_argmax":
        n = int(policy.action_space.n)
        q = g.op("Reshape", [x, g.const(np.array([-1, int(head["n_quantiles"]), n], np.int64), "shape")], "head")
        y = flat(argmax(g.reduce_mean(q, [1], "head", 0)))
    elif op == "multi_argmax":
        sizes = [int(n) for n in head["sizes"]]
        parts = g.op("Split", [x, g.const(np.array(sizes, np.int64), "split")], "head", outputs=len(sizes), axis=1) if len(sizes) > 1 else [x]
        picks = [argmax(p) for p in parts]
        y = g.op("Reshape", [g.op("Concat", picks, "head", axis=1) if len(picks) > 1 else picks[0], to_shape()], "head")
    elif op == "bernoulli":  # 1.0 where sigmoid(x) > 0.5, as SB3 gives MultiBinary actions
        hot = g.op("Greater", [g.op("Sigmoid", [x], "head"), g.scalar(0.5)], "head")
        y = g.op("Reshape", [g.cast(hot, _F32, "head"), to_shape()], "head")
    elif op == "box":
        low, high = _f32(head["low"]), _f32(head["high"])
        a = g.op("Reshape", [x, to_shape()], "head")
        if head.get("squash") == "tanh":
            a = g.op("Tanh", [a], "head")
        if head.get("squash") in ("tanh", "rescale"):  # low + 0.5·(a + 1)·(high − low), in the evaluator's order
            a = g.op("Mul", [g.scalar(0.5), g.op("Add", [a, g.scalar(1.0)], "head")], "head")
            a = g.op("Mul", [a, g.const((high - low).astype(_F32), "head/span")], "head")
            a = g.op("Add", [g.const(low, "head/low"), a], "head")
        else:
            a = g.op("Min", [g.op("Max", [a, g.const(low, "head/low")], "head"), g.const(high, "head/high")], "head")
        dtype = np.dtype(head["dtype"])
        y = a if dtype == np.dtype(_F32) else g.cast(a, dtype, "head")
    else:
        raise RlarchiveError("VALUE_UNSUPPORTED", f"no ONNX form of the head {op!r}")
    g.rename_output(str(y), ACTION)


# -- the model ----------------------------------------------------------------------------------


def _ir_version(onnx: Any, opset: int) -> int:
    """The oldest IR version that carries ``opset`` (so that older runtimes load the file)."""
    irs = [ir for _, ir, ai_onnx, *_ in onnx.helper.VERSION_TABLE if ai_onnx >= opset]
    return min(irs) if irs else int(onnx.IR_VERSION)


def _value_info(onnx: Any, t: TensorInfo) -> Any:
    elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype))
    return onnx.helper.make_tensor_value_info(t.name, elem, list(t.shape), doc_string=t.doc)


def _build(policy: Policy, opset: int, action_masks: bool, name: str) -> tuple:
    """(the model, its inputs, its outputs)."""
    onnx = _import_onnx()
    newest = int(onnx.defs.onnx_opset_version())
    if isinstance(opset, bool) or not isinstance(opset, int) or not MIN_OPSET <= opset <= newest:
        raise RlarchiveError("INPUT_INVALID", f"ONNX opset {opset!r} is not supported: choose one from {MIN_OPSET} to {newest} (default {DEFAULT_OPSET})")
    from . import __version__

    inputs, outputs = _interface(policy, action_masks)
    g = _Graph(onnx, opset, [t.name for t in inputs + outputs])
    stats = _statistics(policy)
    for obs_name, space in _observations(policy):
        g.value[obs_name] = _observation(g, obs_name, space, policy.normalize_images, stats.get(obs_name), policy.vec_normalize)
    rec = policy.recurrent
    if rec is not None:  # the state is multiplied by (1 − episode_start) per batch entry before the step
        keep = g.op("Sub", [g.scalar(1.0), EPISODE_START], "state")
        keep = g.op("Reshape", [keep, g.const(np.array([1, -1, 1], np.int64), "shape")], "state")
        g.value[rec["hidden_in"]] = g.op("Mul", [rec["hidden_in"], keep], "state")
        g.value[rec["cell_in"]] = g.op("Mul", [rec["cell_in"], keep], "state")
    for i, node in enumerate(policy.nodes):
        outs = node["out"] if isinstance(node["out"], list) else [node["out"]]
        got = _node(g, node, [g.value[n] for n in node["in"]], f"node{i}:{node['op']}")
        for out, value in zip(outs, got if isinstance(node["out"], list) else [got]):
            g.value[out] = value
    _head(g, policy, g.value[policy.action["in"]], action_masks)
    doc = (
        "A policy exported by rlarchive from an archive's portable policy (extension RLA_policy): "
        "raw observations in, the deterministic action out. "
        "Inputs: " + "; ".join(f"{t.name} {t.dtype}{list(t.shape)}: {t.doc}" for t in inputs) + ". "
        "Outputs: " + "; ".join(f"{t.name} {t.dtype}{list(t.shape)}: {t.doc}" for t in outputs) + "."
    )
    graph = onnx.helper.make_graph(
        g.nodes, name, [_value_info(onnx, t) for t in inputs], [_value_info(onnx, t) for t in outputs], g.initializers, doc_string=doc,
    )
    model = onnx.helper.make_model(
        graph, producer_name="rlarchive", producer_version=__version__, opset_imports=[onnx.helper.make_opsetid("", opset)], doc_string=doc,
    )
    model.ir_version = _ir_version(onnx, opset)
    onnx.helper.set_model_props(model, {
        "rlarchive.inputs": json.dumps([t.to_dict() for t in inputs]),
        "rlarchive.outputs": json.dumps([t.to_dict() for t in outputs]),
    })
    return model, inputs, outputs


def build_model(policy: Policy, *, opset: int = DEFAULT_OPSET, action_masks: bool = False, name: str = "rlarchive_policy") -> Any:
    """The ONNX ``ModelProto`` of ``policy`` (see the module's description of its inputs and outputs).

    ``action_masks`` adds the input ``action_masks`` (for ``argmax`` and
    ``multi_argmax`` heads only).

    Raises:
        RlarchiveError: FRAMEWORK_UNAVAILABLE without the package ``onnx``;
            INPUT_INVALID for an opset outside ``MIN_OPSET`` .. the newest
            the installed ``onnx`` knows, or masks for a head without them.
    """
    return _build(policy, opset, action_masks, name)[0]


def _masked_algorithm(metadata: Mapping[str, str]) -> bool:
    """Whether the archive's agent acts under action masks (SB3's ``MaskablePPO``, from the import's metadata)."""
    return str(metadata.get("sb3.algorithm", "")).startswith("Maskable")


def export_onnx(
    archive: Union[str, "os.PathLike[str]", "Archive"],
    out_path: Union[str, "os.PathLike[str]"],
    *,
    opset: int = DEFAULT_OPSET,
    action_masks: Optional[bool] = None,
) -> OnnxExport:
    """Write the archive's portable policy to ``out_path`` as an ONNX model (atomically: a temporary file renamed over it).

    ``archive`` is a path (opened and closed here) or an open
    :class:`rlarchive.Archive`. The model takes raw observations and returns
    the actions SB3's ``predict(deterministic=True)`` returns; the module's
    description lists its inputs and outputs, which the model's metadata
    (``rlarchive.inputs``, ``rlarchive.outputs``) and doc string also give.
    ``action_masks``: whether the model takes the input ``action_masks``;
    by default when the archive holds a MaskablePPO agent.

    Raises:
        RlarchiveError: INPUT_INVALID when the archive has no portable policy
            (extension ``RLA_policy``), the opset is not supported, or masks
            are asked for a head without them; FRAMEWORK_UNAVAILABLE without
            the package ``onnx``; the archive's own codes when its policy is
            malformed; IO_ERROR when the file cannot be written.
    """
    _import_onnx()
    if isinstance(archive, (str, os.PathLike)):
        from .reader import Archive

        where = os.fspath(archive)
        with Archive(archive, spaces="neutral") as ar:
            ar.verify()  # what is exported comes from a file that passes every check
            ar.check_extensions()
            policy, metadata = ar.policy(), ar.metadata
    else:
        where = str(getattr(archive, "path", None) or "the archive")
        policy, metadata = archive.policy(), archive.metadata
    if policy is None:
        raise RlarchiveError("INPUT_INVALID", f"{where} has no portable policy (extension RLA_policy), so there is nothing to export "
            "(the SB3 import writes one for standard policies when stable-baselines3 is installed; its report says why it did not)")
    masks = _masked_algorithm(metadata) and policy.mask_width is not None if action_masks is None else bool(action_masks)
    model, inputs, outputs = _build(policy, opset, masks, "rlarchive_policy")
    if model.ByteSize() >= 2**31:
        raise RlarchiveError("VALUE_UNSUPPORTED", "the ONNX model would be larger than 2 GiB, the limit of a single ONNX file")
    data = model.SerializeToString()
    with atomic_file(out_path) as f:
        f.write(data)
    return OnnxExport(os.fspath(out_path), opset, inputs, outputs, len(model.graph.node), len(data))
