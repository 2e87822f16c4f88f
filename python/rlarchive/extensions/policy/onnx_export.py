"""Export the portable policy (extension ``RLA_policy``) of an archive as an ONNX model.

:func:`export_onnx` turns the checked description that
:meth:`rlarchive.Archive.policy` gives (a :class:`rlarchive.extensions.policy.evaluator.Policy`)
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
(float64, clipped, as :meth:`rlarchive.extensions.vec_normalize.Statistics.normalize_obs`
computes it), the preprocessing of spec ``RLA_policy`` §4 (casts, images
divided by 255, one-hot of Discrete and MultiDiscrete values), every node, the
head with its masks, and the scaling or clipping to the action space. Image
observations are taken in the space's layout (channel first); the channel-last
transposition that SB3's ``predict`` applies is left to the caller
(:func:`onnx_inputs` does it, and makes the inputs of any ``predict``-shaped
call).

Precision (``precision``, CLI ``--precision``). ``"float64"``, the default,
computes what spec ``RLA_policy`` §5 defines: every sum (linear, conv2d, each
LSTM gate, the quantile mean, the normalisations) in binary64 from the float32
values, rounded once to float32, so a float32 partial sum never overflows.
onnxruntime's CPU provider (and onnxruntime-web) run MatMul in double but have
no double Conv, so a conv2d is written as a sum over the kernel's offsets of a
strided Slice of the input times that offset's [C, O] tap (a double MatMul).
``"float32"`` writes float32 MatMul and Conv instead: faster (a native
convolution), and the same actions except where a float32 partial sum
overflows (or its float32 rounding moves an action across a tie). In both,
activations follow §5 (NaN and infinities as its table of activations gives
them): they are written with comparisons and Where, never a runtime's fused
kernel, so that NaN propagates; transcendental and compound formulas are
computed in binary64 and rounded once (gelu's erf alone in float32:
onnxruntime has no double Erf; the difference stays within §7's tolerance);
softplus does not overflow for any threshold; a zero-width linear gives its
bias; the box head's rescale is computed in binary64 and rounded once.

Size. Each weight of the description is written once as an initializer,
however many nodes reference it (found by identity, then by content), and what
is derived from it (casts, transposes, convolution taps) is computed once, so
the model is about as large as the archive's tensors and the export's memory a
small multiple of them. A model above ``MAX_MODEL_BYTES`` (protobuf's 2 GiB)
or with more than ``MAX_GRAPH_NODES`` nodes is refused with
``VALUE_UNSUPPORTED``, before it takes more memory.

``onnx`` is an optional dependency (``pip install 'rlarchive[onnx]'``): it is
imported only when a model is built, never by ``import rlarchive``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import RlarchiveError
from ...filenames import printable
from ...writer import atomic_file
from .evaluator import Policy
from .observations import (
    batch,
    is_image,
    kind,
    observation_dtype,
    observation_inputs,
    observation_shape,
    recurrent_state,
)
from .onnx_graph import (
    ACTION,
    ACTION_MASKS,
    BATCH,
    EPISODE_START,
    MAX_GRAPH_NODES,
    MAX_MODEL_BYTES,
    Graph,
    contiguous,
    import_onnx,
    serialized,
)
from .onnx_lowering import lower_head, lower_node, observation, statistics

if TYPE_CHECKING:
    from ...reader import Archive

__all__ = [
    "DEFAULT_OPSET",
    "MIN_OPSET",
    "PRECISIONS",
    "DEFAULT_PRECISION",
    "MAX_MODEL_BYTES",
    "MAX_GRAPH_NODES",
    "TensorInfo",
    "OnnxExport",
    "build_model",
    "export_onnx",
    "onnx_inputs",
]

#: The opset written when none is asked for: run by onnxruntime (also onnxruntime-web) and most runtimes.
DEFAULT_OPSET = 17
#: The oldest opset the graph can be written in.
MIN_OPSET = 14
#: The dtypes sums can be computed in: float64 (spec RLA_policy §5, the default) or float32 (faster).
PRECISIONS = ("float64", "float32")
DEFAULT_PRECISION = "float64"

_F32 = np.float32


@dataclass(frozen=True)
class TensorInfo:
    """One input or output of the exported graph: its name, NumPy dtype name, shape (``"batch"`` for the batch) and meaning."""

    name: str
    dtype: str
    shape: tuple[Any, ...]
    doc: str

    def to_dict(self) -> dict[str, Any]:
        """As JSON-ready values (also stored in the model's metadata)."""
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape), "doc": self.doc}


@dataclass(frozen=True)
class OnnxExport:
    """What :func:`export_onnx` wrote."""

    path: str
    opset: int
    inputs: tuple[Any, ...]
    outputs: tuple[Any, ...]
    nodes: int
    size: int
    precision: str = DEFAULT_PRECISION

    def to_dict(self) -> dict[str, Any]:
        """As JSON-ready values."""
        return {
            "path": self.path,
            "opset": self.opset,
            "precision": self.precision,
            "inputs": [i.to_dict() for i in self.inputs],
            "outputs": [o.to_dict() for o in self.outputs],
            "nodes": self.nodes,
            "size": self.size,
        }

    def __str__(self) -> str:
        def line(t: TensorInfo) -> str:
            shape = "[" + ", ".join(str(d) for d in t.shape) + "]"
            return f"  {t.name:24} {t.dtype:8} {shape}"

        lines = [
            f"wrote {self.path} (ONNX opset {self.opset}, sums in {self.precision}, {self.nodes} nodes, {self.size} bytes)",
            "inputs",
        ]
        lines += [line(t) for t in self.inputs]
        lines.append("outputs")
        lines += [line(t) for t in self.outputs]
        return "\n".join(printable(text) for text in lines)  # input names from the archive: one line each


# -- the graph's interface -------------------------------------------------------------


def _action_dtype(policy: Policy) -> np.dtype:
    op = policy.action["op"]
    if op == "box":
        result: np.dtype = np.dtype(policy.action["dtype"])
        return result
    if op == "bernoulli":
        return np.dtype(_F32)
    return np.dtype(np.int64)


def _interface(policy: Policy, action_masks: bool) -> tuple[Any, ...]:
    """The graph's inputs and outputs (:class:`TensorInfo`), in order."""
    inputs = []
    for name, _, space in observation_inputs(policy.observation_space):
        what = {
            "box": "Box",
            "discrete": "Discrete",
            "multi_discrete": "MultiDiscrete",
            "multi_binary": "MultiBinary",
        }.get(kind(space) or "", "?")
        doc = f"raw {what} observations" + (" (channel first)" if is_image(space) else "")
        inputs.append(
            TensorInfo(
                name, observation_dtype(space).name, (BATCH,) + tuple(int(d) for d in observation_shape(space)), doc
            )
        )
    outputs = [
        TensorInfo(
            ACTION,
            _action_dtype(policy).name,
            (BATCH,) + tuple(int(d) for d in observation_shape(policy.action_space)),
            "the deterministic action",
        )
    ]
    rec = policy.recurrent
    if rec is not None:
        shape = (int(rec["layers"]), BATCH, int(rec["hidden_size"]))
        inputs.append(TensorInfo(rec["hidden_in"], "float32", shape, "LSTM hidden state (zeros at the start)"))
        inputs.append(TensorInfo(rec["cell_in"], "float32", shape, "LSTM cell state (zeros at the start)"))
        inputs.append(
            TensorInfo(EPISODE_START, "float32", (BATCH,), "1.0 where an episode starts (the state is reset), else 0.0")
        )
        outputs.append(TensorInfo(rec["hidden_out"], "float32", shape, "the next LSTM hidden state"))
        outputs.append(TensorInfo(rec["cell_out"], "float32", shape, "the next LSTM cell state"))
    if action_masks:
        width = policy.mask_width
        if width is None:
            raise RlarchiveError(
                "INPUT_INVALID",
                f"the head {policy.action['op']} takes no action masks (argmax and multi_argmax heads do)",
            )
        inputs.append(TensorInfo(ACTION_MASKS, "bool", (BATCH, width), "true where an action is allowed"))
    names = [t.name for t in inputs + outputs]
    if len(set(names)) != len(names):
        raise RlarchiveError("VALUE_UNSUPPORTED", f"the policy's state names clash with the graph's own names: {names}")
    return tuple(inputs), tuple(outputs)


def onnx_inputs(
    policy: Policy,
    observation: Any,
    state: tuple[Any, ...] | None = None,
    episode_start: Any | None = None,
    action_masks: Any | None = None,
) -> tuple[Any, ...]:
    """The inputs of the exported graph for arguments shaped like ``Policy.predict`` (and SB3's ``predict``).

    Returns ``(feeds, single)``: a dict of input name to array (with the
    batch dimension and the input's dtype; channel-last images transposed),
    and whether ``observation`` was a single one (its action is then the
    first row of the output). Without ``state`` or ``episode_start`` a
    recurrent policy starts from zeros and resets nothing; ``action_masks``
    go to the graph's ``action_masks`` input (give them when the graph has
    it).
    """
    obs, single = batch(observation, policy.observation_space)
    specs = {t.name: t for t in _interface(policy, False)[0]}
    arrays = {name: obs if key is None else obs[key] for name, key, _ in observation_inputs(policy.observation_space)}
    feeds = {name: contiguous(a, specs[name].dtype) for name, a in arrays.items()}
    n = next(iter(feeds.values())).shape[0]
    rec = policy.recurrent
    if rec is not None:
        feeds[rec["hidden_in"]], feeds[rec["cell_in"]] = recurrent_state(
            rec, state, n
        )  # the graph applies episode_start
        start = np.zeros(n, _F32) if episode_start is None else np.asarray(episode_start, _F32).reshape(n)
        feeds[EPISODE_START] = start
    if action_masks is not None:
        feeds[ACTION_MASKS] = np.asarray(action_masks, dtype=bool).reshape(n, -1)
    return feeds, single


# -- the model ----------------------------------------------------------------------------------


def _ir_version(onnx: Any, opset: int) -> int:
    """The oldest IR version that carries ``opset`` (so that older runtimes load the file)."""
    irs = [ir for _, ir, ai_onnx, *_ in onnx.helper.VERSION_TABLE if ai_onnx >= opset]
    return min(irs) if irs else int(onnx.IR_VERSION)


def _value_info(onnx: Any, t: TensorInfo) -> Any:
    elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype))
    return onnx.helper.make_tensor_value_info(t.name, elem, list(t.shape), doc_string=t.doc)


def _build(policy: Policy, opset: int, action_masks: bool, name: str, precision: str) -> tuple[Any, ...]:
    """(the model, its inputs, its outputs)."""
    onnx = import_onnx()
    newest = int(onnx.defs.onnx_opset_version())
    if isinstance(opset, bool) or not isinstance(opset, int) or not MIN_OPSET <= opset <= newest:
        raise RlarchiveError(
            "INPUT_INVALID",
            f"ONNX opset {opset!r} is not supported: choose one from {MIN_OPSET} to {newest} (default {DEFAULT_OPSET})",
        )
    if precision not in PRECISIONS:
        raise RlarchiveError(
            "INPUT_INVALID",
            f"precision {precision!r} is not one of {', '.join(PRECISIONS)} (default {DEFAULT_PRECISION})",
        )
    from ... import __version__

    inputs, outputs = _interface(policy, action_masks)
    g = Graph(onnx, opset, [t.name for t in inputs + outputs], precision)
    stats = statistics(policy)
    for obs_name, _, space in observation_inputs(policy.observation_space):
        g.value[obs_name] = observation(
            g, obs_name, space, policy.normalize_images, stats.get(obs_name), policy.vec_normalize
        )
    rec = policy.recurrent
    if rec is not None:  # the state is multiplied by (1 − episode_start) per batch entry before the step
        keep = g.op("Sub", [g.scalar(1.0), EPISODE_START], "state")
        keep = g.op("Reshape", [keep, g.const(np.array([1, -1, 1], np.int64), "shape")], "state")
        g.value[rec["hidden_in"]] = g.op("Mul", [rec["hidden_in"], keep], "state")
        g.value[rec["cell_in"]] = g.op("Mul", [rec["cell_in"], keep], "state")
    for i, node in enumerate(policy.nodes):
        outs = node["out"] if isinstance(node["out"], list) else [node["out"]]
        got = lower_node(g, node, [g.value[n] for n in node["in"]], f"node{i}:{node['op']}")
        for out, value in zip(outs, got if isinstance(node["out"], list) else [got]):
            g.value[out] = value
    lower_head(g, policy, g.value[policy.action["in"]], action_masks)
    doc = (
        "A policy exported by rlarchive from an archive's portable policy (extension RLA_policy): "
        f"raw observations in, the deterministic action out; sums in {precision}. "
        "Inputs: " + "; ".join(f"{t.name} {t.dtype}{list(t.shape)}: {t.doc}" for t in inputs) + ". "
        "Outputs: " + "; ".join(f"{t.name} {t.dtype}{list(t.shape)}: {t.doc}" for t in outputs) + "."
    )
    model = g.model  # built in place: its initializers are never copied
    graph = model.graph
    graph.name, graph.doc_string = name, doc
    graph.node.extend(g.nodes)
    graph.input.extend(_value_info(onnx, t) for t in inputs)
    graph.output.extend(_value_info(onnx, t) for t in outputs)
    model.ir_version = _ir_version(onnx, opset)
    model.producer_name, model.producer_version, model.doc_string = "rlarchive", __version__, doc
    model.opset_import.append(onnx.helper.make_opsetid("", opset))
    onnx.helper.set_model_props(
        model,
        {
            "rlarchive.inputs": json.dumps([t.to_dict() for t in inputs]),
            "rlarchive.outputs": json.dumps([t.to_dict() for t in outputs]),
            "rlarchive.precision": json.dumps(precision),
        },
    )
    return model, inputs, outputs


def build_model(
    policy: Policy,
    *,
    opset: int = DEFAULT_OPSET,
    action_masks: bool = False,
    name: str = "rlarchive_policy",
    precision: str = DEFAULT_PRECISION,
) -> Any:
    """The ONNX ``ModelProto`` of ``policy`` (see the module's description of its inputs, outputs and precisions).

    ``action_masks`` adds the input ``action_masks`` (for ``argmax`` and
    ``multi_argmax`` heads only). ``precision``: ``"float64"`` (sums in
    binary64, rounded once, as spec RLA_policy §5 says) or ``"float32"``
    (faster; may differ where float32 partial sums overflow).

    Raises:
        RlarchiveError: FRAMEWORK_UNAVAILABLE without the package ``onnx``;
            INPUT_INVALID for an opset outside ``MIN_OPSET`` .. the newest
            the installed ``onnx`` knows, an unknown precision, or masks for
            a head without them; VALUE_UNSUPPORTED when the model would pass
            ``MAX_MODEL_BYTES`` or ``MAX_GRAPH_NODES``.
    """
    return _build(policy, opset, action_masks, name, precision)[0]


def _masked_algorithm(metadata: Mapping[str, str]) -> bool:
    """Whether the archive's agent acts under action masks (SB3's ``MaskablePPO``, from the import's metadata)."""
    return str(metadata.get("sb3.algorithm", "")).startswith("Maskable")


def export_onnx(
    archive: str | os.PathLike[str] | Archive,
    out_path: str | os.PathLike[str],
    *,
    opset: int = DEFAULT_OPSET,
    action_masks: bool | None = None,
    precision: str = DEFAULT_PRECISION,
) -> OnnxExport:
    """Write the archive's portable policy to ``out_path`` as an ONNX model (atomically: a temporary file renamed over it).

    ``archive`` is a path (opened and closed here) or an open
    :class:`rlarchive.Archive`. The model takes raw observations and returns
    the actions SB3's ``predict(deterministic=True)`` returns; the module's
    description lists its inputs and outputs, which the model's metadata
    (``rlarchive.inputs``, ``rlarchive.outputs``) and doc string also give.
    ``action_masks``: whether the model takes the input ``action_masks``;
    by default when the archive holds a MaskablePPO agent. ``precision``:
    ``"float64"`` (the default: sums in binary64 rounded once, as spec
    RLA_policy §5 says) or ``"float32"`` (faster, native float32 MatMul and
    Conv; the same actions except where a float32 partial sum overflows).
    Each weight of the archive is written once, however many nodes read it.

    Raises:
        RlarchiveError: INPUT_INVALID when the archive has no portable policy
            (extension ``RLA_policy``), the opset or the precision is not
            supported, or masks are asked for a head without them;
            FRAMEWORK_UNAVAILABLE without the package ``onnx``; the
            archive's own codes when its policy is malformed;
            VALUE_UNSUPPORTED when the model would pass ``MAX_MODEL_BYTES``
            or ``MAX_GRAPH_NODES``;
            IO_ERROR when the file cannot be written.
    """
    import_onnx()
    if precision not in PRECISIONS:
        raise RlarchiveError(
            "INPUT_INVALID",
            f"precision {precision!r} is not one of {', '.join(PRECISIONS)} (default {DEFAULT_PRECISION})",
        )
    if isinstance(archive, (str, os.PathLike)):
        from ...reader import Archive

        where = os.fspath(archive)
        with Archive(archive, spaces="neutral") as ar:
            ar.verify()  # what is exported comes from a file that passes every check
            ar.check_extensions()
            policy, metadata = ar.policy(), ar.metadata
    else:
        where = str(getattr(archive, "path", None) or "the archive")
        policy, metadata = archive.policy(), archive.metadata
    if policy is None:
        raise RlarchiveError(
            "INPUT_INVALID",
            f"{where} has no portable policy (extension RLA_policy), so there is nothing to export "
            "(the SB3 import writes one for standard policies when stable-baselines3 is installed; its report says why it did not)",
        )
    masks = (
        _masked_algorithm(metadata) and policy.mask_width is not None if action_masks is None else bool(action_masks)
    )
    model, inputs, outputs = _build(policy, opset, masks, "rlarchive_policy", precision)
    nodes = len(model.graph.node)
    data = serialized(model)
    del model, policy  # the bytes alone are written
    with atomic_file(out_path) as f:
        f.write(data)
    return OnnxExport(os.fspath(out_path), opset, inputs, outputs, nodes, len(data), precision)
