"""The ONNX graph under construction for :mod:`rlarchive.extensions.policy.onnx_export`: names, constants, initializers written once.

:class:`Graph` holds the nodes and initializers of one model and gives the
small building blocks the lowering (:mod:`rlarchive.extensions.policy.onnx_lowering`) composes:
unique names, shared constants, each weight of the description written once
however many nodes read it, values derived from constants computed once, and
NaN-keeping comparisons. ``onnx`` is imported only when a model is built
(:func:`import_onnx`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ...errors import RlarchiveError

__all__ = [
    "MAX_MODEL_BYTES",
    "MAX_GRAPH_NODES",
    "EPISODE_START",
    "ACTION_MASKS",
    "ACTION",
    "BATCH",
    "Graph",
    "contiguous",
    "import_onnx",
    "serialized",
    "too_large",
]

#: The largest model written: a single ONNX file is one protobuf message, below 2 GiB.
MAX_MODEL_BYTES = 2**31 - 1
#: Room left beside the initializers for the graph's nodes and names.
_GRAPH_ALLOWANCE = 64 << 20
#: The most nodes a graph is given (a few per node of the description, per kernel offset of a float64 conv2d, per run of a multi_argmax).
MAX_GRAPH_NODES = 1 << 18

#: Names of the graph's fixed inputs and output.
EPISODE_START = "episode_start"
ACTION_MASKS = "action_masks"
ACTION = "action"
#: The symbolic batch dimension of every input and output.
BATCH = "batch"

_F32 = np.float32
_INSTALL = "install it with: pip install 'rlarchive[onnx]'"


def contiguous(a: Any, dtype: Any = None) -> np.ndarray:
    """``a`` as a C-contiguous array of its rank (``np.ascontiguousarray`` would turn a scalar into a vector)."""
    return np.array(a, dtype=dtype, order="C", copy=True)


def import_onnx() -> Any:
    """The package ``onnx`` (FRAMEWORK_UNAVAILABLE when it is not installed)."""
    try:
        import onnx
        import onnx.helper  # noqa: F401
        import onnx.numpy_helper  # noqa: F401
    except ImportError as e:
        raise RlarchiveError(
            "FRAMEWORK_UNAVAILABLE",
            f"exporting to ONNX needs the Python package 'onnx', which is not installed ({e}): {_INSTALL}",
        ) from None
    return onnx


def too_large() -> RlarchiveError:
    """VALUE_UNSUPPORTED: the model would pass MAX_MODEL_BYTES."""
    return RlarchiveError(
        "VALUE_UNSUPPORTED",
        f"the ONNX model would be larger than {MAX_MODEL_BYTES} bytes, the limit of a single ONNX file (protobuf's 2 GiB)",
    )


class Graph:
    """Nodes, constants and unique value names of the graph under construction.

    Initializers go straight into ``model.graph`` (one copy of each), and every
    weight of the description is written once however many nodes read it
    (:meth:`tensor`); values derived from it (casts, transposes, a
    convolution's taps) are computed once too (:meth:`derived`).
    """

    def __init__(self, onnx: Any, opset: int, reserved: Iterable[str], precision: str) -> None:
        self.onnx = onnx
        self.opset = opset
        self.model = onnx.ModelProto()
        self.nodes: list[Any] = []
        self.used: set[Any] = set(reserved)
        self.value: dict[str, Any] = {}  # a name of the description -> its value in the graph
        self.rank: dict[str, Any] = {}  # a value of the graph -> its rank without the batch dimension
        #: The dtype of sums (linear, conv2d, the LSTM's gates): float64 by default, float32 on request.
        self.acc = np.dtype(np.float64 if precision == "float64" else np.float32)
        self.initializer_bytes = 0
        self._consts: dict[Any, str] = {}
        self._tensors_by_id: dict[
            int, tuple[Any, str]
        ] = {}  # id(array) -> (array, initializer): the same array object, the same initializer
        self._tensors_by_digest: dict[tuple[Any, ...], str] = {}  # (shape, SHA-256 of the float32 bytes) -> initializer
        self._derived: dict[tuple[Any, ...], str] = {}
        self._counters: dict[str, int] = {}

    def fresh(self, hint: str) -> str:
        """A name not used yet: ``hint`` itself, or ``hint`` with a number."""
        name, k = hint, self._counters.get(hint, 1)
        while name in self.used:
            name, k = f"{hint}_{k}", k + 1
        self._counters[hint] = k
        self.used.add(name)
        return name

    def _initializer(self, a: np.ndarray, hint: str) -> str:
        self.initializer_bytes += a.nbytes
        if self.initializer_bytes > MAX_MODEL_BYTES - _GRAPH_ALLOWANCE:
            raise too_large()
        name = self.fresh(hint)
        t = self.model.graph.initializer.add()
        t.name = name
        t.data_type = self.onnx.helper.np_dtype_to_tensor_dtype(a.dtype)
        t.dims.extend(int(d) for d in a.shape)
        t.raw_data = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        return name

    def const(self, array: Any, hint: str = "const") -> str:
        """A constant of the export itself (shapes, scalars, bounds); equal small constants are shared."""
        a = contiguous(array)
        key = (a.dtype.str, a.shape, a.tobytes()) if a.size <= 64 else None
        if key is not None and key in self._consts:
            return str(self._consts[key])
        name = self._initializer(a, hint)
        if key is not None:
            self._consts[key] = name
        return name

    def tensor(self, array: Any, hint: str) -> str:
        """A float32 weight of the description as an initializer, written once for every node that reads it.

        The same array object (the archive's tensor, which the description
        references by group and name) is found by identity; an equal array
        (same shape and bytes) by its SHA-256 digest.
        """
        hit = self._tensors_by_id.get(id(array))
        if hit is not None and hit[0] is array:
            return str(hit[1])
        a = np.ascontiguousarray(np.asarray(array, _F32))
        key = (a.shape, hashlib.sha256(a.reshape(-1).view(np.uint8).data).digest())
        name = self._tensors_by_digest.get(key)
        if name is None:
            name = self._tensors_by_digest[key] = self._initializer(a, hint)
        self._tensors_by_id[id(array)] = (array, name)  # the array is kept, so its id stays its own
        return name

    def derived(self, key: tuple[Any, ...], build: Callable[[], str]) -> str:
        """A value computed from constants only, built once per ``key`` (the runtime folds it once)."""
        name = self._derived.get(key)
        if name is None:
            name = self._derived[key] = build()
        return str(name)

    def tensor_as(self, name: str, dtype: Any) -> str:
        """The initializer ``name`` (float32) in ``dtype``, cast once."""
        if np.dtype(dtype) == np.dtype(_F32):
            return name
        return self.derived(("cast", name, np.dtype(dtype).str), lambda: self.cast(name, dtype, name))

    def transposed(self, name: str, perm: Sequence[int], dtype: Any) -> str:
        """The initializer ``name`` in ``dtype``, transposed by ``perm``, computed once."""
        key = ("transpose", name, tuple(perm), np.dtype(dtype).str)
        return self.derived(
            key, lambda: str(self.op("Transpose", [self.tensor_as(name, dtype)], name, perm=list(perm)))
        )

    def op(
        self,
        op_type: str,
        inputs: Sequence[str],
        hint: str,
        outputs: int = 1,
        out: Sequence[str] | None = None,
        **attrs: Any,
    ) -> Any:
        """Add a node; its output name (or list of names when ``outputs`` > 1)."""
        if len(self.nodes) >= MAX_GRAPH_NODES:
            raise RlarchiveError(
                "VALUE_UNSUPPORTED",
                f"the ONNX graph would have more than MAX_GRAPH_NODES = {MAX_GRAPH_NODES} nodes "
                "(a float64 conv2d takes a few per kernel offset: --precision float32 writes one Conv per conv2d)",
            )
        names = (
            list(out)
            if out is not None
            else [self.fresh(f"{hint}/{op_type}" if outputs == 1 else f"{hint}/{op_type}:{i}") for i in range(outputs)]
        )
        self.nodes.append(
            self.onnx.helper.make_node(op_type, list(inputs), names, name=self.fresh(f"{hint}#{op_type}"), **attrs)
        )
        return names[0] if len(names) == 1 else names

    def rename_output(self, value: str, name: str) -> None:
        """Make the node that computes ``value`` (read by no node yet) write ``name`` instead."""
        for node in reversed(self.nodes):
            if value in node.output:
                node.output[list(node.output).index(value)] = name
                return
        self.op("Identity", [value], name, out=[name])

    def reduce_mean(self, x: str, axes: list[Any], hint: str, keepdims: int) -> str:
        if self.opset >= 18:  # axes became an input in opset 18
            return str(
                self.op("ReduceMean", [x, self.const(np.array(axes, np.int64), "axes")], hint, keepdims=keepdims)
            )
        return str(self.op("ReduceMean", [x], hint, axes=axes, keepdims=keepdims))

    def scalar(self, v: float, dtype: Any = _F32) -> str:
        return self.const(np.array(v, dtype), "scalar")

    def cast(self, x: str, dtype: Any, hint: str) -> str:
        return str(self.op("Cast", [x], hint, to=self.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))))

    def where(self, cond: str, a: str, b: str, hint: str) -> str:
        return str(self.op("Where", [cond, a, b], hint))

    def clamp(self, x: str, low: str, high: str, hint: str) -> str:
        """min(max(x, low), high) with NaN kept (NumPy's clip, torch's clamp): comparisons with NaN are false."""
        x = self.where(self.op("Less", [x, low], hint), low, x, hint)
        return self.where(self.op("Greater", [x, high], hint), high, x, hint)


def serialized(model: Any) -> bytes:
    """The model's bytes; VALUE_UNSUPPORTED (never a protobuf error) when they would pass the 2 GiB limit."""
    if model.ByteSize() > MAX_MODEL_BYTES:
        raise too_large()
    try:
        return bytes(model.SerializeToString())
    except (ValueError, RuntimeError, OverflowError) as e:  # protobuf's EncodeError is a ValueError
        raise RlarchiveError(
            "VALUE_UNSUPPORTED", f"the ONNX model cannot be serialised: {type(e).__name__}: {e}"
        ) from None
