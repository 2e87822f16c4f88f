"""The structure of a portable policy description (extension ``RLA_policy`` §3-§6), checked before any evaluation.

:func:`check` walks the parsed, value-checked JSON of the member
(``extensions/RLA_policy/policy.json``) once, in document order: the keys of
the description, the observation and action spaces it accepts, every node
with its parameters, and the head. It infers the shape of every named value
from the observation space through the nodes, so a description whose layers
do not fit together (a weight of the wrong width, a head that does not match
the action space) is refused here with ``EXTENSION_INVALID`` and the JSON
Pointer of the offending value, and the evaluators (:mod:`rlarchive.extensions.policy.evaluator`,
``reader-js/src/extensions/policy/evaluator.js``) only ever see descriptions that compute.

The operations, activation functions and heads, their parameters, and what
each costs in operations and workspace come from the registry
:mod:`rlarchive.extensions.policy.ops` (generated from ``spec/policy_ops.json``). Before
anything runs, the check computes what one observation costs (every node at
least ``POLICY_NODE_COST``) and the peak memory of its evaluation (the values
live at each node, freed after their last reader, plus the node's workspace),
and refuses a description above ``MAX_POLICY_OPERATIONS`` or
``MAX_POLICY_MEMORY_BYTES`` with ``LIMIT_EXCEEDED`` at the node that goes past.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import esc, members_pointer
from .ops import (
    ACTIVATIONS,
    HEADS,
    MAX_POLICY_MEMORY_BYTES,
    MAX_POLICY_OPERATIONS,
    MAX_POLICY_VALUE_ELEMENTS,
    OPERATIONS,
    POLICY_BLOCK_ELEMENTS,
    POLICY_NODE_COST,
)
from .spaces import (
    ACTION_DTYPES,
    HEAD_WIDTHS,
    MAX_SAFE,
    MEMBER,
    OBSERVATION_DTYPES,
    bounded,
    fail,
    is_int,
    is_map,
    is_name,
    limit,
    observation_shapes,
    outline,
)

__all__ = [
    "EXTENSION",
    "MEMBER",
    "KEY",
    "GROUP",
    "OPERATIONS",
    "HEADS",
    "ACTIVATION_PARAMETERS",
    "MAX_POLICY_VALUE_ELEMENTS",
    "MAX_POLICY_OPERATIONS",
    "MAX_POLICY_MEMORY_BYTES",
    "OBSERVATION_DTYPES",
    "ACTION_DTYPES",
    "Cost",
    "check",
]

#: The extension's name, its one member, the member's top-level key, and the
#: tensor group that receives arrays of the description itself (none for SB3
#: policies: their weights are references into the group ``policy``).
EXTENSION = "RLA_policy"
KEY = "policy"
GROUP = "RLA_policy"

#: Activation functions and the kind each parameter takes ("float", or the strings allowed), from the registry.
ACTIVATION_PARAMETERS: Mapping[str, Mapping[str, Any]] = {
    fn: {p["name"]: tuple(p["values"]) if p["type"] == "enum" else p["type"] for p in a["parameters"]}
    for fn, a in ACTIVATIONS.items()
}
#: Every parameter some activation takes: an activation node may carry these besides ``fn``.
_ACTIVATION_KEYS = frozenset(k for params in ACTIVATION_PARAMETERS.values() for k in params)
#: Operation -> (its required parameters, every parameter it may have), from the registry.
_PARAMETERS = {
    op: (
        frozenset(p["name"] for p in o["parameters"] if p["required"]),
        frozenset(p["name"] for p in o["parameters"]) | (_ACTIVATION_KEYS if op == "activation" else frozenset()),
    )
    for op, o in OPERATIONS.items()
}
#: The largest finite float32: a numeric parameter is at most this in magnitude.
_F32_MAX = 3.4028234663852886e38

_TOP_REQUIRED = {"observation_space", "action_space", "normalize_images", "nodes", "action"}
_TOP_OPTIONAL = {"vec_normalize", "recurrent"}
_RECURRENT = {"hidden_in", "cell_in", "hidden_out", "cell_out", "layers", "hidden_size"}
_LAYER = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"}


def _float_parameter(node: Mapping[str, Any], key: str, ptr: str) -> float:
    """A numeric parameter (RLA_policy §5): a finite number no larger in magnitude than the largest float32."""
    v = node[key]
    if not (is_int(v) or isinstance(v, float)):
        raise fail(f"{key} must be a finite float", f"{ptr}/{esc(key)}")
    if abs(v) > _F32_MAX:
        raise fail(f"{key} must be at most the largest float32 in magnitude", f"{ptr}/{esc(key)}")
    return float(v)


def _formula(terms: Sequence[Mapping[str, Any]], q: Mapping[str, int], coefficient: int = 0) -> int:
    """A cost or workspace formula of the registry: the sum of its terms, each k times the product of the named quantities."""
    return sum(
        (coefficient if t["k"] == "activation" else t["k"]) * math.prod(q[name] for name in t["of"]) for t in terms
    )


def _elements(shape: Any) -> int:
    """Elements of a value per observation (a recurrent state: layers x hidden_size)."""
    return shape[1] * shape[2] if isinstance(shape, tuple) else math.prod(shape)


@dataclass(frozen=True)
class Cost:
    """What one observation's evaluation costs a checked description (RLA_policy §5.11).

    Attributes:
        operations: the operations of every node and the head, POLICY_NODE_COST each included.
        memory_bytes: the peak bytes of live values (4 per element) plus workspace.
        peak_at: the JSON Pointer of the node (or head) where the peak is reached.
        memory: the bytes at each node, in order, then at the head.
    """

    operations: int
    memory_bytes: int
    peak_at: str
    memory: tuple[Any, ...] = ()


class _Shapes:
    """Walks the nodes, inferring the shape (without batch) of every named value, and what each node costs."""

    def __init__(self, known: dict[str, Any], recurrent: Mapping[str, Any] | None) -> None:
        self.known = known  # name -> shape, or ("state", layers, hidden) for a recurrent state
        self.recurrent = recurrent
        # the lstm node's state names and size (node() checks that recurrent is given before it reads an lstm)
        self.state: Mapping[str, Any] = recurrent if recurrent is not None else {}
        self.lstm_seen = False
        self.cost = 0  # operations per observation so far
        self.defined = {
            name: 0 for name in known
        }  # name -> index of the node that computes it (inputs: 0, present at the first)
        self.last: dict[str, Any] = {}  # name -> index of its last reader (the head: the number of nodes)
        self.workspace: list[Any] = []  # bytes of workspace of each node, then of the head
        self.pointers: list[Any] = []  # JSON Pointer of each node, then of the head

    # -- parameters
    def weight(self, node: Mapping[str, Any], key: str, ptr: str, ndim: int, nullable: bool = False) -> list[Any]:
        """The shape of an F32 ndarray parameter of ``ndim`` dimensions (``nullable``: one that may also be null,
        which the caller has handled; the message says so)."""
        v = node.get(key)
        if not (isinstance(v, dict) and v.get("$type") == "ndarray"):
            raise fail(f"{key} must be an ndarray" + (" or null" if nullable else ""), f"{ptr}/{key}")
        if v["dtype"] != "F32":
            raise fail(f"{key} must have dtype F32, not {v['dtype']}", f"{ptr}/{key}")
        if len(v["shape"]) != ndim:
            raise fail(f"{key} must have {ndim} dimensions, not {len(v['shape'])}", f"{ptr}/{key}")
        return list(v["shape"])

    def vector(self, node: Mapping[str, Any], key: str, ptr: str, n: int | None, optional: bool = False) -> int | None:
        if optional and node.get(key) is None:
            return n
        shape = self.weight(node, key, ptr, 1, nullable=optional)
        if n is not None and shape[0] != n:
            raise fail(f"{key} has {shape[0]} elements where {n} are needed", f"{ptr}/{key}")
        result: int | None = shape[0]
        return result

    def shape_of(self, name: str, ptr: str) -> Any:
        shape = self.known[name]
        if isinstance(shape, tuple):
            raise fail(f"{name!r} is a recurrent state, which only an lstm node reads", ptr)
        return shape

    # -- operations (spec §5)
    def node(self, node: Any, ptr: str) -> None:
        """Check one node, in the order of RLA_policy §8: ``op`` (and an activation's ``fn``), the members
        missing, the members not allowed, the operation, ``in``, ``out``, the parameters, the outputs' size, the cost."""
        op, fn = self._members(node, ptr)
        spec = OPERATIONS[op]
        rec = self.recurrent
        if op == "lstm":  # the operation itself: one lstm, and the state it reads and writes (spec §5.9)
            if rec is None:
                raise fail("an lstm node needs 'recurrent'", ptr)
            if self.lstm_seen:
                raise fail("at most one lstm node: 'recurrent' describes one state", ptr)
            self.lstm_seen = True
        ins = node["in"]
        xs = self._ins(op, ins, ptr)
        outs, many = self._outs(op, node["out"], ptr)
        q: dict[str, Any] = {}
        shapes = getattr(self, "_" + op)(node, ptr, xs, q)
        for i, (name, shape) in enumerate(zip(outs, shapes)):
            bounded(shape, f"{ptr}/out" + (f"/{i}" if many else ""))
            self.known[name] = shape
        # what the node costs (spec §5.11), from the registry's formulas over these quantities
        index = len(self.pointers)
        q.update(
            out=_elements(shapes[0]), outs=sum(_elements(s) for s in shapes), **{"in": sum(_elements(x) for x in xs)}
        )
        q.setdefault("width", xs[0][-1] if isinstance(xs[0], list) and xs[0] else 0)
        q["weights"] = sum(math.prod(v["shape"]) for v in _ndarrays(node))
        coefficient = ACTIVATIONS[fn] if fn is not None else None
        self.cost += POLICY_NODE_COST + _formula(spec["cost"], q, coefficient["cost"] if coefficient else 0)
        if self.cost > MAX_POLICY_OPERATIONS:
            raise limit("the nodes so far cost more than MAX_POLICY_OPERATIONS per observation", ptr)
        self.workspace.append(_formula(spec["workspace"], q, coefficient["workspace"] if coefficient else 0))
        self.pointers.append(ptr)
        for name in ins:
            self.last[name] = index
        for name in outs:
            self.defined[name] = index

    def _members(self, node: Any, ptr: str) -> tuple[Any, ...]:
        """(op, fn or None) of a node: ``op`` (and an activation's ``fn``), then the members missing, then those not allowed."""
        if not is_map(node):
            raise fail("a node must be a map", ptr)
        if "op" not in node:
            raise fail("a node lacks 'op'", ptr)
        op = node["op"]
        if not isinstance(op, str) or op not in OPERATIONS:
            raise fail(f"unknown operation {op!r}", f"{ptr}/op")
        fn = None
        if op == "activation":  # fn decides the parameters an activation node has, as op does for a node
            if "fn" not in node:
                raise fail("an activation lacks 'fn'", ptr)
            fn = node["fn"]
            if not isinstance(fn, str) or fn not in ACTIVATIONS:
                raise fail(f"unknown activation {fn!r}", f"{ptr}/fn")
        required, allowed = _PARAMETERS[op]
        if fn is not None:
            allowed = frozenset({"fn"}) | frozenset(ACTIVATION_PARAMETERS[fn])
        for k in sorted((required | {"in", "out"}) - node.keys()):  # spec §11.2: the object before its members
            raise fail(f"the node lacks {k!r}", ptr)
        for k in node:
            if k not in allowed | {"op", "in", "out"}:
                raise fail(f"{op if fn is None else fn} has no parameter {k!r}", f"{ptr}/{esc(k)}")
        return op, fn

    def _ins(self, op: str, ins: Any, ptr: str) -> list[Any]:
        """The shapes of a node's inputs: each computed before it, of the rank the operation reads (an lstm: its state after its input)."""
        want = OPERATIONS[op]["inputs"] if is_int(OPERATIONS[op]["inputs"]) else None  # concat: "1 or more"
        if not (isinstance(ins, list) and ins and (want is None or len(ins) == want)):
            raise fail(f"'in' of {op} must be a list of {want or 'one or more'} name(s)", f"{ptr}/in")
        least, most = OPERATIONS[op]["input_rank"]
        xs = []
        for i, n in enumerate(ins):
            where = f"{ptr}/in/{i}"
            if not is_name(n):
                raise fail("an input is a non-empty string", where)
            if n not in self.known:
                raise fail(f"{n!r} is not computed before this node", where)
            shape = self.known[n]
            if op == "lstm" and i > 0:
                state = self.state["hidden_in" if i == 1 else "cell_in"]
                if n != state:
                    raise fail(f"in[{i}] of the lstm is the state {state!r} of 'recurrent'", where)
            elif isinstance(shape, tuple):
                raise fail(f"{n!r} is a recurrent state, which only the lstm node reads", where)
            elif len(shape) < least or (most is not None and len(shape) > most):
                raise fail(
                    f"{op} reads a value of rank {least if least == most else f'at least {least}'}, not {shape}", where
                )
            xs.append(shape)
        return xs

    def _outs(self, op: str, outs: Any, ptr: str) -> tuple[Any, ...]:
        """(the names a node computes, whether ``out`` is a list): each new (an lstm's states: those of ``recurrent``)."""
        want = OPERATIONS[op]["outputs"]
        if want > 1 and not (isinstance(outs, list) and len(outs) == want):
            raise fail(f"'out' of {op} must be a list of {want} names", f"{ptr}/out")
        names = outs if want > 1 else [outs]
        for i, name in enumerate(names):
            where = f"{ptr}/out" + (f"/{i}" if want > 1 else "")
            if not is_name(name):
                raise fail("an output is a non-empty string", where)
            if name in self.known or names.index(name) != i:
                raise fail(f"{name!r} is computed twice", where)
            if op == "lstm" and i > 0:
                state = self.state["hidden_out" if i == 1 else "cell_out"]
                if name != state:
                    raise fail(f"out[{i}] of the lstm is the state {state!r} of 'recurrent'", where)
        return names, want > 1

    def _linear(self, node: Mapping[str, Any], ptr: str, xs: list[Any], q: dict[str, Any]) -> list[Any]:
        (x,) = xs
        w = self.weight(node, "weight", ptr, 2)
        if x[-1] != w[1]:
            raise fail(f"linear of width {w[1]} applied to a value of shape {x}", f"{ptr}/weight")
        self.vector(node, "bias", ptr, w[0], optional=True)
        return [x[:-1] + [w[0]]]

    def _conv2d(self, node: Mapping[str, Any], ptr: str, xs: list[Any], q: dict[str, Any]) -> list[Any]:
        (x,) = xs
        w = self.weight(node, "weight", ptr, 4)
        if x[0] != w[1]:
            raise fail(
                f"conv2d over {w[1]} channels applied to a value of shape {x} (channels, height, width)",
                f"{ptr}/weight",
            )
        self.vector(node, "bias", ptr, w[0], optional=True)
        pairs = {}
        for p in OPERATIONS["conv2d"]["parameters"]:
            if p["type"] != "int_pair":
                continue
            key, least = p["name"], p["least"]
            v = node[key]
            if not (isinstance(v, list) and len(v) == 2 and all(is_int(n) and least <= n <= MAX_SAFE for n in v)):
                raise fail(f"{key} must be two integers >= {least}", f"{ptr}/{key}")
            pairs[key] = v
        (sh, sw), (ph, pw) = pairs["stride"], pairs["padding"]
        if x[1] + 2 * ph < w[2] or x[2] + 2 * pw < w[3]:  # the later of weight and padding (spec §11.2)
            raise fail(
                f"a {w[2]}x{w[3]} kernel does not fit a {x[1]}x{x[2]} input with padding {ph}, {pw}", f"{ptr}/padding"
            )
        h, wd = (x[1] + 2 * ph - w[2]) // sh + 1, (x[2] + 2 * pw - w[3]) // sw + 1
        kernel = w[1] * w[2] * w[3]
        q.update(
            kernel=kernel,
            padded=x[0] * (x[1] + 2 * ph) * (x[2] + 2 * pw),
            block=min(h * wd * kernel, max(POLICY_BLOCK_ELEMENTS, kernel)),
        )
        return [[w[0], h, wd]]

    def _activation(self, node: Mapping[str, Any], ptr: str, xs: list[Any], q: dict[str, Any]) -> list[Any]:
        fn = node["fn"]  # node() checked fn and the parameters allowed
        params = {p["name"]: p for p in ACTIVATIONS[fn]["parameters"]}
        values = {}
        for k, p in params.items():  # in the order of the table of activations
            if k not in node:
                continue
            v = node[k]
            if p["type"] == "enum":
                if not (isinstance(v, str) and v in p["values"]):
                    raise fail(f"{k} must be one of {p['values']}", f"{ptr}/{esc(k)}")
            else:
                values[k] = _float_parameter(node, k, ptr)
                if p.get("nonzero") and values[k] == 0:
                    raise fail(f"{k} of {fn} must not be 0", f"{ptr}/{esc(k)}")
        ordered = ACTIVATIONS[fn].get("ordered")
        if ordered:  # e.g. hardtanh: min_val <= max_val, either given or by default; at the later one given
            lo, hi = (values.get(k, params[k]["default"]) for k in ordered)
            if lo > hi:
                at = ordered[1] if ordered[1] in node else ordered[0]
                raise fail(f"{ordered[0]} must not be greater than {ordered[1]}", f"{ptr}/{at}")
        return [xs[0]]

    def _prelu(self, node: Mapping[str, Any], ptr: str, xs: list[Any], q: dict[str, Any]) -> list[Any]:
        (x,) = xs
        w = self.weight(node, "weight", ptr, 1)
        if w[0] not in (1, x[0]):
            raise fail(
                f"weight must have shape [1] or [{x[0]}] (the channels of a value of shape {x}), not {w}",
                f"{ptr}/weight",
            )
        return [x]

    def _flatten(self, node: Mapping[str, Any], ptr: str, xs: list[Any], q: dict[str, Any]) -> list[Any]:
        return [[math.prod(xs[0])]]

    def _concat(self, node: Mapping[str, Any], ptr: str, xs: list[Any], q: dict[str, Any]) -> list[Any]:
        return [[sum(math.prod(x) for x in xs)]]

    def _layer_norm(self, node: Mapping[str, Any], ptr: str, xs: list[Any], q: dict[str, Any]) -> list[Any]:
        (x,) = xs
        for key in ("weight", "bias"):
            self.vector(node, key, ptr, x[-1], optional=True)
        _float_parameter(node, "eps", ptr)
        return [x]

    def _batch_norm(self, node: Mapping[str, Any], ptr: str, xs: list[Any], q: dict[str, Any]) -> list[Any]:
        (x,) = xs
        for key, optional in (("running_mean", False), ("running_var", False), ("weight", True), ("bias", True)):
            self.vector(node, key, ptr, x[0], optional=optional)
        _float_parameter(node, "eps", ptr)
        return [x]

    def _lstm(self, node: Mapping[str, Any], ptr: str, xs: list[Any], q: dict[str, Any]) -> list[Any]:
        rec = self.state  # node() checked that recurrent is given, the state names and the input's rank
        x, h, c = xs
        layers = node["layers"]
        hidden = rec["hidden_size"]
        if not (isinstance(layers, list) and len(layers) == rec["layers"]):
            raise fail(f"layers must be a list of {rec['layers']} layers, as 'recurrent' says", f"{ptr}/layers")
        width = x[0]
        for i, layer in enumerate(layers):
            lp = f"{ptr}/layers/{i}"
            if not (is_map(layer) and set(layer) == _LAYER):
                raise fail(
                    "a layer must be a map with exactly weight_ih, weight_hh, bias_ih, bias_hh",
                    members_pointer(layer, lp, _LAYER),
                )
            for key, want in (("weight_ih", [4 * hidden, width]), ("weight_hh", [4 * hidden, hidden])):
                if self.weight(layer, key, lp, 2) != want:
                    raise fail(f"{key} must have shape {want}", f"{lp}/{key}")
            for key in ("bias_ih", "bias_hh"):
                self.vector(layer, key, lp, 4 * hidden)
            width = hidden
        q.update(gates=4 * hidden, state=rec["layers"] * hidden, width=x[0])
        return [[hidden], h, c]

    # -- heads (spec §6)
    def head(self, head: Any, action_space: Any, ptr: str) -> None:
        """Check the head, in the order of RLA_policy §8: ``op``, the members missing, the members not allowed,
        ``in``, the parameters, the action space (at the head), ``sizes`` against it, the width of ``in``, the cost."""
        if not is_map(head):
            raise fail("the action head must be a map", ptr)
        if "op" not in head:
            raise fail("the action head lacks 'op'", ptr)
        op = head["op"]
        if not isinstance(op, str) or op not in HEADS:
            raise fail(f"unknown action head {op!r}", f"{ptr}/op")
        spec = HEADS[op]
        params = [p["name"] for p in spec["parameters"]]
        for k in sorted({"in", *params} - set(head)):
            raise fail(f"the head {op} lacks {k!r}", ptr)
        for k in head:
            if k not in {"op", "in", *params}:
                raise fail(f"the head {op} has no parameter {k!r}", f"{ptr}/{esc(k)}")
        x = head["in"]
        if not is_name(x) or x not in self.known:
            raise fail(f"the head reads {x!r}, which is not computed", f"{ptr}/in")
        shape = self.shape_of(x, f"{ptr}/in")
        if len(shape) != 1:
            raise fail(f"the head reads a vector, not a value of shape {shape}", f"{ptr}/in")
        width = shape[0]
        for p in spec["parameters"]:
            _head_parameter(head, p, ptr)
        kinds = tuple(spec["spaces"])
        sp = action_space
        if not (isinstance(sp, dict) and sp.get("$type") == "space" and sp.get("kind") in kinds):
            raise fail(f"the head {op} acts in a {' or '.join(kinds)} action space", ptr)
        need = HEAD_WIDTHS[op](head, sp, ptr)
        if width != need:
            raise fail(f"the head {op} needs {need} values per observation, the network gives {width}", f"{ptr}/in")
        q = {"in": width, "out": width}
        self.cost += POLICY_NODE_COST + _formula(spec["cost"], q)
        if self.cost > MAX_POLICY_OPERATIONS:
            raise limit("the nodes and the head cost more than MAX_POLICY_OPERATIONS per observation", ptr)
        self.last[x] = len(self.pointers)
        self.workspace.append(_formula(spec["workspace"], q))
        self.pointers.append(ptr)

    # -- memory (spec §5.11)
    def memory(self) -> tuple[Any, ...]:
        """The peak bytes of one observation's evaluation, where it is reached, and the bytes at each point; LIMIT_EXCEEDED where it passes the limit.

        A value is live from the node that computes it (the inputs: from the
        first) to its last reader (the recurrent state outputs: to the head);
        at each node, the live values at 4 bytes per element, its outputs
        included, plus its workspace.
        """
        end = len(self.pointers)  # points 0 .. end-1: the nodes, then the head
        keep = set()
        if self.recurrent is not None:
            keep = {self.recurrent["hidden_out"], self.recurrent["cell_out"]}
        delta = [0] * (end + 1)
        for name, first in self.defined.items():
            last = end - 1 if name in keep else max(first, self.last.get(name, first))
            size = 4 * _elements(self.known[name])
            delta[min(first, end - 1)] += size
            delta[min(last, end - 1) + 1] -= size
        live, peak, at, memory = 0, -1, "", []
        for i in range(end):
            live += delta[i]
            used = live + self.workspace[i]
            if used > MAX_POLICY_MEMORY_BYTES:
                raise limit(
                    f"the evaluation needs {used} bytes here, more than MAX_POLICY_MEMORY_BYTES per observation",
                    self.pointers[i],
                )
            if used > peak:
                peak, at = used, self.pointers[i]
            memory.append(used)
        return peak, at, tuple(memory)


def _head_parameter(head: Mapping[str, Any], p: Mapping[str, Any], ptr: str) -> None:
    """A parameter of a head, of the type the registry gives it: an integer of at least ``least``, a list of integers, one of ``values``."""
    key, v = p["name"], head[p["name"]]
    if p["type"] == "int" and not (is_int(v) and p["least"] <= v <= MAX_SAFE):
        raise fail(f"{key} must be an integer >= {p['least']}", f"{ptr}/{key}")
    if p["type"] == "int_list" and not (isinstance(v, list) and all(is_int(n) for n in v)):
        raise fail(f"{key} must be a list of integers", f"{ptr}/{key}")
    if p["type"] == "enum" and v not in p["values"]:
        raise fail(f"{key} must be one of {p['values']}", f"{ptr}/{key}")


def _ndarrays(node: Mapping[str, Any]) -> list[Any]:
    """The ndarray parameters of a node (an lstm's: those of every layer)."""
    out = [v for v in node.values() if isinstance(v, dict) and v.get("$type") == "ndarray"]
    for layer in node.get("layers", ()) if node.get("op") == "lstm" else ():
        out += [v for v in layer.values() if isinstance(v, dict) and v.get("$type") == "ndarray"]
    return out


def _recurrent(rec: Any, inputs: dict[str, Any], ptr: str) -> Mapping[str, Any] | None:
    """Check ``recurrent`` (RLA_policy §5.9): its members in the order of its table, each name against the observations and the names before it."""
    if rec is None:
        return None
    if not (is_map(rec) and set(rec) == _RECURRENT):
        raise fail(f"recurrent must be a map with exactly {sorted(_RECURRENT)}", members_pointer(rec, ptr, _RECURRENT))
    names: list[Any] = []
    for k in ("hidden_in", "cell_in", "hidden_out", "cell_out"):
        n = rec[k]
        if not is_name(n):
            raise fail(f"{k} must be a non-empty string", f"{ptr}/{k}")
        if n in inputs:
            raise fail(f"{k} {n!r} is an observation input", f"{ptr}/{k}")
        if n in names:
            raise fail(f"{k} {n!r} is another state name too: the four state names are distinct", f"{ptr}/{k}")
        names.append(n)
    for k in ("layers", "hidden_size"):
        if not (is_int(rec[k]) and 1 <= rec[k] <= 1 << 24):
            raise fail(f"{k} must be an integer from 1 to 2^24", f"{ptr}/{k}")
    if rec["layers"] * rec["hidden_size"] > MAX_POLICY_VALUE_ELEMENTS:  # the state is a value (spec §5.11)
        raise limit("a recurrent state of more than MAX_POLICY_VALUE_ELEMENTS elements", f"{ptr}/hidden_size")
    result: Mapping[str, Any] | None = rec
    return result


def check(value: Any, data: Mapping[str, Any] | None = None, used: Sequence[str] = ()) -> Cost:
    """Check a description (the value under ``policy``), inferring every value's shape and what it costs.

    ``data`` is the archive's raw ``data`` object (with ``vec_normalize``, its
    observation space must have the description's outline), ``used`` its
    ``extensions_used``.

    Returns:
        What one observation's evaluation costs: its operations and peak memory (RLA_policy §5.11).

    Raises:
        RlarchiveError: EXTENSION_INVALID with the JSON Pointer of the offending value;
            LIMIT_EXCEEDED at the value, node or head that goes past a limit of RLA_policy §5.11.
    """
    base = "/" + KEY
    if not is_map(value):
        raise fail("the policy must be a map", base)
    for k in sorted(_TOP_REQUIRED - set(value)):  # spec §11.2: the object before its members
        raise fail(f"the key {k!r} is missing", base)
    for k in value:
        if k not in _TOP_REQUIRED | _TOP_OPTIONAL:
            raise fail(f"unknown key {k!r}", f"{base}/{esc(k)}")
    # the members in the order of the table of RLA_policy §3
    inputs = observation_shapes(value["observation_space"], f"{base}/observation_space")
    for k in ("normalize_images", "vec_normalize"):
        if k in value and not isinstance(value[k], bool):
            raise fail(f"{k} must be a boolean", f"{base}/{k}")
    if value.get("vec_normalize"):
        if "RLA_vec_normalize" not in used:
            raise fail("vec_normalize is true but the archive does not use RLA_vec_normalize", f"{base}/vec_normalize")
        if outline(value["observation_space"]) != outline((data or {}).get("observation_space")):
            # the statistics are checked against the data's observation space (RLA_vec_normalize §3)
            raise fail(
                "vec_normalize is true but the observation space differs from the data's", f"{base}/vec_normalize"
            )
    shapes = _Shapes(dict(inputs), _recurrent(value.get("recurrent"), inputs, f"{base}/recurrent"))
    if shapes.recurrent is not None:
        rec = shapes.recurrent
        state = ("state", rec["layers"], rec["hidden_size"])
        for k in ("hidden_in", "cell_in"):
            shapes.known[rec[k]] = state
            shapes.defined[rec[k]] = 0
    nodes = value["nodes"]
    if not isinstance(nodes, list):
        raise fail("nodes must be a list", f"{base}/nodes")
    for i, node in enumerate(nodes):
        shapes.node(node, f"{base}/nodes/{i}")
    if shapes.recurrent is not None and not shapes.lstm_seen:  # nodes, after recurrent in the table, contradict it
        raise fail("'recurrent' is given but no lstm node uses it", f"{base}/nodes")
    if not (isinstance(value["action_space"], dict) and value["action_space"].get("$type") == "space"):
        raise fail("action_space must be a space", f"{base}/action_space")
    shapes.head(value["action"], value["action_space"], f"{base}/action")
    peak, at, memory = shapes.memory()
    return Cost(operations=shapes.cost, memory_bytes=peak, peak_at=at, memory=memory)
