"""The structure of a portable policy description (extension ``RLA_policy`` §3-§6), checked before any evaluation.

:func:`check` walks the parsed, value-checked JSON of the member
(``extensions/RLA_policy/policy.json``) once, in document order: the keys of
the description, the observation and action spaces it accepts, every node
with its parameters, and the head. It infers the shape of every named value
from the observation space through the nodes, so a description whose layers
do not fit together (a weight of the wrong width, a head that does not match
the action space) is refused here with ``EXTENSION_INVALID`` and the JSON
Pointer of the offending value, and the evaluators (:mod:`rlarchive.policy`,
``reader-js/src/policy.js``) only ever see descriptions that compute.
"""
from __future__ import annotations

import base64
import math
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .dtypes import numpy_view_dtype
from .errors import RlarchiveError, esc, members_pointer

__all__ = ["EXTENSION", "MEMBER", "KEY", "GROUP", "OPS", "HEADS", "ACTIVATION_PARAMETERS", "MAX_POLICY_VALUE_ELEMENTS", "check"]

#: The extension's name, its one member, the member's top-level key, and the
#: tensor group that receives arrays of the description itself (none for SB3
#: policies: their weights are references into the group ``policy``).
EXTENSION = "RLA_policy"
MEMBER = "extensions/RLA_policy/policy.json"
KEY = "policy"
GROUP = "RLA_policy"

#: Activation functions and their parameters with the kind each takes ("float", or the strings allowed).
ACTIVATION_PARAMETERS: Mapping[str, Mapping[str, Any]] = {
    "identity": {},
    "relu": {},
    "tanh": {},
    "sigmoid": {},
    "elu": {"alpha": "float"},
    "leaky_relu": {"negative_slope": "float"},
    "silu": {},
    "gelu": {"approximate": ("none", "tanh")},
    "softplus": {"beta": "float", "threshold": "float"},
    "hardtanh": {"min_val": "float", "max_val": "float"},
    "selu": {},
    "celu": {"alpha": "float"},
    "mish": {},
    "hardswish": {},
    "hardsigmoid": {},
    "softsign": {},
}

#: Operations: required and optional parameters besides ``op``, ``in`` and ``out``.
OPS: Mapping[str, tuple[frozenset, frozenset]] = {
    "linear": (frozenset({"weight", "bias"}), frozenset()),
    "conv2d": (frozenset({"weight", "bias", "stride", "padding"}), frozenset()),
    "activation": (frozenset({"fn"}), frozenset({"alpha", "negative_slope", "approximate", "beta", "threshold", "min_val", "max_val"})),
    "flatten": (frozenset(), frozenset()),
    "concat": (frozenset(), frozenset()),
    "layer_norm": (frozenset({"weight", "bias", "eps"}), frozenset()),
    "batch_norm": (frozenset({"running_mean", "running_var", "weight", "bias", "eps"}), frozenset()),
    "lstm": (frozenset({"layers"}), frozenset()),
}

#: Heads: required parameters besides ``op`` and ``in``, and the action space kind each acts in.
HEADS: Mapping[str, tuple[frozenset, Any]] = {
    "argmax": (frozenset(), "discrete"),
    "multi_argmax": (frozenset({"sizes"}), ("multi_discrete", "multi_binary")),
    "bernoulli": (frozenset(), "multi_binary"),
    "box": (frozenset({"squash"}), "box"),
    "quantile_argmax": (frozenset({"n_quantiles"}), "discrete"),
}

#: Elements a value of the description may have per observation (spec §5): the
#: evaluators allocate every value, so its size is bounded before they run.
MAX_POLICY_VALUE_ELEMENTS = 1 << 24
#: Multiply-adds (and element operations) one observation may cost (spec §5): bounds the time to act.
MAX_POLICY_OPERATIONS = 1 << 32

_TOP_REQUIRED = {"observation_space", "action_space", "normalize_images", "nodes", "action"}
_TOP_OPTIONAL = {"vec_normalize", "recurrent"}
_RECURRENT = {"hidden_in", "cell_in", "hidden_out", "cell_out", "layers", "hidden_size"}
_LAYER = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"}
_OBS_KINDS = ("box", "discrete", "multi_discrete", "multi_binary")
_SQUASH = ("clip", "tanh", "rescale")


def _fail(msg: str, ptr: str) -> RlarchiveError:
    return RlarchiveError("EXTENSION_INVALID", msg, member=MEMBER, pointer=ptr)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_float(v: Any) -> bool:
    return _is_int(v) or isinstance(v, float) or (isinstance(v, dict) and v.get("$type") == "float")


def _is_map(v: Any) -> bool:
    return isinstance(v, dict) and "$type" not in v


def _name(v: Any) -> bool:
    return isinstance(v, str) and v != ""


def _inline_ints(nd: Mapping[str, Any]) -> list:
    """The integers of an inline ndarray (multi_discrete ``nvec`` is always inline, spec §8)."""
    raw = base64.b64decode(nd["base64"])
    return [int(x) for x in np.frombuffer(raw, dtype=numpy_view_dtype(nd["dtype"])).reshape(-1)]


#: Box dtypes the portable policy takes observations of, and acts in (float actions only).
OBSERVATION_DTYPES = frozenset({"BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64", "F32", "F64"})
ACTION_DTYPES = frozenset({"F32", "F64"})


def _space_shape(sp: Mapping[str, Any], ptr: str) -> list:
    """The shape a space's observations have once preprocessed (spec §4), without the batch dimension."""
    kind = sp.get("kind")
    if kind == "box":
        if sp["dtype"] not in OBSERVATION_DTYPES:
            raise _fail(f"the portable policy takes no Box observations of dtype {sp['dtype']}", ptr)
        return list(sp["shape"])
    if kind == "discrete":
        if not _is_int(sp["n"]):
            raise _fail("a Discrete observation space of more than 2^53 values", ptr)
        return [sp["n"]]
    if kind == "multi_discrete":
        return [sum(_inline_ints(sp["nvec"]))]
    if kind == "multi_binary":
        n = sp["n"]
        return [n] if _is_int(n) else list(n)
    raise _fail(f"the portable policy takes no {kind} observations", ptr)


def _bounded(shape: Any, ptr: str) -> None:
    if not isinstance(shape, tuple) and math.prod(shape) > MAX_POLICY_VALUE_ELEMENTS:
        raise RlarchiveError("LIMIT_EXCEEDED", f"a value of shape {shape} has more than MAX_POLICY_VALUE_ELEMENTS elements", member=MEMBER, pointer=ptr)


def _operations(op: str, node: Mapping[str, Any], out: list) -> int:
    """What one observation costs a node (spec §5): multiply-adds for the layers, elements for the rest."""
    if op == "linear":
        return math.prod(out) * node["weight"]["shape"][1]
    if op == "conv2d":
        return math.prod(out) * math.prod(node["weight"]["shape"][1:])
    if op == "lstm":
        return sum(math.prod(layer["weight_ih"]["shape"]) + math.prod(layer["weight_hh"]["shape"]) for layer in node["layers"])
    return math.prod(out)


def _inputs(space: Any, ptr: str) -> dict:
    """Name -> shape of the preprocessed observation(s)."""
    if not (isinstance(space, dict) and space.get("$type") == "space"):
        raise _fail("observation_space must be a space", ptr)
    if space.get("kind") == "dict":
        out = {}
        for i, (key, sub) in enumerate(space["spaces"]):
            if sub.get("kind") not in _OBS_KINDS:
                raise _fail(f"the portable policy takes no {sub.get('kind')} observations (key {key!r})", f"{ptr}/spaces/{i}/1")
            out[f"obs.{key}"] = _space_shape(sub, f"{ptr}/spaces/{i}/1")
            _bounded(out[f"obs.{key}"], f"{ptr}/spaces/{i}/1")
        return out
    shape = _space_shape(space, ptr)
    _bounded(shape, ptr)
    return {"obs": shape}


class _Shapes:
    """Walks the nodes, inferring the shape (without batch) of every named value."""

    def __init__(self, known: dict, recurrent: Optional[Mapping[str, Any]]) -> None:
        self.known = known  # name -> shape, or ("state", layers, hidden) for a recurrent state
        self.recurrent = recurrent
        self.lstm_seen = False
        self.cost = 0  # operations per observation so far

    # -- parameters
    def weight(self, node: Mapping[str, Any], key: str, ptr: str, ndim: int, optional: bool = False) -> Optional[list]:
        v = node.get(key)
        if v is None and optional:
            return None
        if not (isinstance(v, dict) and v.get("$type") == "ndarray"):
            raise _fail(f"{key} must be an ndarray" + (" or null" if optional else ""), f"{ptr}/{key}")
        if v["dtype"] != "F32":
            raise _fail(f"{key} must have dtype F32, not {v['dtype']}", f"{ptr}/{key}")
        if len(v["shape"]) != ndim:
            raise _fail(f"{key} must have {ndim} dimensions, not {len(v['shape'])}", f"{ptr}/{key}")
        return list(v["shape"])

    def vector(self, node: Mapping[str, Any], key: str, ptr: str, n: Optional[int], optional: bool = False) -> Optional[int]:
        shape = self.weight(node, key, ptr, 1, optional)
        if shape is None:
            return n
        if n is not None and shape[0] != n:
            raise _fail(f"{key} has {shape[0]} elements where {n} are needed", f"{ptr}/{key}")
        return shape[0]

    def shape_of(self, name: str, ptr: str) -> Any:
        shape = self.known[name]
        if isinstance(shape, tuple):
            raise _fail(f"{name!r} is a recurrent state, which only an lstm node reads", ptr)
        return shape

    # -- operations (spec §5)
    def node(self, node: Any, ptr: str) -> None:
        if not _is_map(node):
            raise _fail("a node must be a map", ptr)
        op = node.get("op")
        if op not in OPS:
            raise _fail(f"unknown operation {op!r}", f"{ptr}/op")
        required, optional = OPS[op]
        keys = set(node) - {"op", "in", "out"}
        for k in sorted(required - keys):
            raise _fail(f"{op} lacks the parameter {k!r}", ptr)
        for k in sorted(keys - required - optional):
            raise _fail(f"{op} has no parameter {k!r}", f"{ptr}/{esc(k)}")
        if op == "lstm" and self.recurrent is None:
            raise _fail("an lstm node needs 'recurrent'", ptr)
        ins = node.get("in")
        if not (isinstance(ins, list) and ins and all(_name(n) for n in ins)):
            raise _fail("'in' must be a non-empty list of names", f"{ptr}/in")
        for i, n in enumerate(ins):
            if n not in self.known:
                raise _fail(f"{n!r} is not computed before this node", f"{ptr}/in/{i}")
        want_outs = 3 if op == "lstm" else 1
        want_ins = 3 if op == "lstm" else (len(ins) if op == "concat" else 1)
        if len(ins) != want_ins:
            raise _fail(f"{op} takes {want_ins} input(s), not {len(ins)}", f"{ptr}/in")
        outs = node.get("out")
        outs_list = outs if op == "lstm" else [outs]
        if not (isinstance(outs_list, list) and len(outs_list) == want_outs and all(_name(n) for n in outs_list)):
            raise _fail("'out' must be a name" if op != "lstm" else "'out' of lstm must be a list of 3 names", f"{ptr}/out")
        shapes = getattr(self, "_" + op)(node, ptr, [self.known[n] if op == "lstm" else self.shape_of(n, f"{ptr}/in") for n in ins])
        for i, (name, shape) in enumerate(zip(outs_list, shapes)):
            where = f"{ptr}/out" + (f"/{i}" if op == "lstm" else "")
            if name in self.known or outs_list.index(name) != i:
                raise _fail(f"{name!r} is computed twice", where)
            _bounded(shape, where)
            self.known[name] = shape
        self.cost += _operations(op, node, shapes[0])
        if self.cost > MAX_POLICY_OPERATIONS:
            raise RlarchiveError("LIMIT_EXCEEDED", "the nodes so far cost more than MAX_POLICY_OPERATIONS per observation", member=MEMBER, pointer=ptr)

    def _linear(self, node: Mapping, ptr: str, xs: list) -> list:
        (x,) = xs
        w = self.weight(node, "weight", ptr, 2)
        assert w is not None
        if not x or x[-1] != w[1]:
            raise _fail(f"linear of width {w[1]} applied to a value of shape {x}", f"{ptr}/weight")
        self.vector(node, "bias", ptr, w[0], optional=True)
        return [x[:-1] + [w[0]]]

    def _conv2d(self, node: Mapping, ptr: str, xs: list) -> list:
        (x,) = xs
        w = self.weight(node, "weight", ptr, 4)
        assert w is not None
        pairs = {}
        for key, least in (("stride", 1), ("padding", 0)):
            v = node[key]
            if not (isinstance(v, list) and len(v) == 2 and all(_is_int(n) and n >= least for n in v)):
                raise _fail(f"{key} must be two integers >= {least}", f"{ptr}/{key}")
            pairs[key] = v
        if len(x) != 3 or x[0] != w[1]:
            raise _fail(f"conv2d over {w[1]} channels applied to a value of shape {x} (channels, height, width)", f"{ptr}/weight")
        self.vector(node, "bias", ptr, w[0], optional=True)
        (sh, sw), (ph, pw) = pairs["stride"], pairs["padding"]
        h, wd = (x[1] + 2 * ph - w[2]) // sh + 1, (x[2] + 2 * pw - w[3]) // sw + 1
        if x[1] + 2 * ph < w[2] or x[2] + 2 * pw < w[3]:
            raise _fail(f"a {w[2]}x{w[3]} kernel does not fit a {x[1]}x{x[2]} input with padding {ph}, {pw}", f"{ptr}/weight")
        return [[w[0], h, wd]]

    def _activation(self, node: Mapping, ptr: str, xs: list) -> list:
        fn = node["fn"]
        if fn not in ACTIVATION_PARAMETERS:
            raise _fail(f"unknown activation {fn!r}", f"{ptr}/fn")
        params = ACTIVATION_PARAMETERS[fn]
        for k, v in node.items():
            if k in ("op", "in", "out", "fn"):
                continue
            if k not in params:
                raise _fail(f"the activation {fn} has no parameter {k!r}", f"{ptr}/{esc(k)}")
            kind = params[k]
            if not (_is_float(v) if kind == "float" else v in kind):
                raise _fail(f"{k} must be " + ("a float" if kind == "float" else f"one of {list(kind)}"), f"{ptr}/{esc(k)}")
        return [xs[0]]

    def _flatten(self, node: Mapping, ptr: str, xs: list) -> list:
        return [[math.prod(xs[0])]]

    def _concat(self, node: Mapping, ptr: str, xs: list) -> list:
        return [[sum(math.prod(x) for x in xs)]]

    def _layer_norm(self, node: Mapping, ptr: str, xs: list) -> list:
        (x,) = xs
        if not x:
            raise _fail("layer_norm of a 0-dimensional value", ptr)
        for key in ("weight", "bias"):
            self.vector(node, key, ptr, x[-1], optional=True)
        if not _is_float(node["eps"]):
            raise _fail("eps must be a float", f"{ptr}/eps")
        return [x]

    def _batch_norm(self, node: Mapping, ptr: str, xs: list) -> list:
        (x,) = xs
        if len(x) != 1:
            raise _fail(f"batch_norm applies to vectors, not to a value of shape {x}", ptr)
        for key, optional in (("running_mean", False), ("running_var", False), ("weight", True), ("bias", True)):
            self.vector(node, key, ptr, x[0], optional=optional)
        if not _is_float(node["eps"]):
            raise _fail("eps must be a float", f"{ptr}/eps")
        return [x]

    def _lstm(self, node: Mapping, ptr: str, xs: list) -> list:
        rec = self.recurrent
        assert rec is not None  # node() checked it
        if self.lstm_seen:
            raise _fail("at most one lstm node: 'recurrent' describes one state", ptr)
        self.lstm_seen = True
        x, h, c = xs
        ins, outs = node["in"], node["out"]
        if [ins[1], ins[2], outs[1], outs[2]] != [rec["hidden_in"], rec["cell_in"], rec["hidden_out"], rec["cell_out"]]:
            raise _fail("an lstm node reads and writes the state names of 'recurrent'", f"{ptr}/in")
        if isinstance(x, tuple) or len(x) != 1:
            raise _fail(f"an lstm reads a vector, not a value of shape {x}", f"{ptr}/in/0")
        layers = node["layers"]
        hidden = rec["hidden_size"]
        if not (isinstance(layers, list) and len(layers) == rec["layers"]):
            raise _fail(f"layers must be a list of {rec['layers']} layers, as 'recurrent' says", f"{ptr}/layers")
        width = x[0]
        for i, layer in enumerate(layers):
            lp = f"{ptr}/layers/{i}"
            if not (_is_map(layer) and set(layer) == _LAYER):
                raise _fail("a layer must be a map with exactly weight_ih, weight_hh, bias_ih, bias_hh", members_pointer(layer, lp, _LAYER))
            for key, want in (("weight_ih", [4 * hidden, width]), ("weight_hh", [4 * hidden, hidden])):
                if self.weight(layer, key, lp, 2) != want:
                    raise _fail(f"{key} must have shape {want}", f"{lp}/{key}")
            for key in ("bias_ih", "bias_hh"):
                self.vector(layer, key, lp, 4 * hidden)
            width = hidden
        return [[hidden], h, c]

    # -- heads (spec §6)
    def head(self, head: Any, action_space: Any, ptr: str) -> None:
        if not _is_map(head):
            raise _fail("the action head must be a map", ptr)
        op = head.get("op")
        if op not in HEADS:
            raise _fail(f"unknown action head {op!r}", f"{ptr}/op")
        required, kind = HEADS[op]
        keys = set(head) - {"op", "in"}
        if keys != required:
            raise _fail(f"the head {op} takes exactly the parameters {sorted(required)}", members_pointer(head, ptr, required | {"op", "in"}, required))
        x = head.get("in")
        if not _name(x) or x not in self.known:
            raise _fail(f"the head reads {x!r}, which is not computed", f"{ptr}/in")
        shape = self.shape_of(x, f"{ptr}/in")
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not (isinstance(action_space, dict) and action_space.get("$type") == "space" and action_space.get("kind") in kinds):
            raise _fail(f"the head {op} acts in a {' or '.join(kinds)} action space", ptr)
        width = math.prod(shape) if len(shape) == 1 else None
        if width is None:
            raise _fail(f"the head reads a vector, not a value of shape {shape}", f"{ptr}/in")
        sp = action_space
        if op == "argmax":
            need = sp["n"]
        elif op == "quantile_argmax":
            nq = head["n_quantiles"]
            if not (_is_int(nq) and nq >= 1):
                raise _fail("n_quantiles must be an integer >= 1", f"{ptr}/n_quantiles")
            need = nq * sp["n"]
        elif op == "multi_argmax":
            sizes = head["sizes"]
            if sp["kind"] == "multi_binary":  # MaskablePPO: a categorical over {0, 1} per binary action
                n = sp["n"]
                nvec = [2] * (n if _is_int(n) else math.prod(n))
            else:
                nvec = _inline_ints(sp["nvec"])
            if sizes != nvec:
                raise _fail(f"sizes must be the action space's nvec {nvec}", f"{ptr}/sizes")
            need = sum(nvec)
        elif op == "bernoulli":
            n = sp["n"]
            need = n if _is_int(n) else math.prod(n)
        else:
            if head["squash"] not in _SQUASH:
                raise _fail(f"squash must be one of {list(_SQUASH)}", f"{ptr}/squash")
            if sp["dtype"] not in ACTION_DTYPES:
                raise _fail(f"a box head acts in an F32 or F64 action space, not {sp['dtype']}", ptr)
            need = math.prod(sp["shape"])
        if width != need:
            raise _fail(f"the head {op} needs {need} values per observation, the network gives {width}", f"{ptr}/in")


def _recurrent(rec: Any, inputs: dict, ptr: str) -> Optional[Mapping[str, Any]]:
    if rec is None:
        return None
    if not (_is_map(rec) and set(rec) == _RECURRENT):
        raise _fail(f"recurrent must be a map with exactly {sorted(_RECURRENT)}", members_pointer(rec, ptr, _RECURRENT))
    names = [rec[k] for k in ("hidden_in", "cell_in", "hidden_out", "cell_out")]
    if not all(_name(n) for n in names) or len(set(names)) != 4 or any(n in inputs for n in names):
        raise _fail("the four state names must be distinct names, none an observation", ptr)
    for k in ("layers", "hidden_size"):
        if not (_is_int(rec[k]) and 1 <= rec[k] <= 1 << 24):
            raise _fail(f"{k} must be an integer from 1 to 2^24", f"{ptr}/{k}")
    return rec


def _outline(space: Any) -> Any:
    """What the VecNormalize statistics depend on in a space value: its kind, a box's shape, a dict's keys and their outlines."""
    if not (isinstance(space, dict) and space.get("$type") == "space"):
        return None
    kind = space.get("kind")
    if kind == "box":
        return ("box", list(space.get("shape", [])))
    if kind == "dict":
        return ("dict", [(k, _outline(s)) for k, s in space.get("spaces", [])])
    return (kind,)


def check(value: Any, data: Optional[Mapping[str, Any]] = None, used: Sequence[str] = ()) -> None:
    """Check a description (the value under ``policy``), inferring every value's shape.

    ``data`` is the archive's raw ``data`` object (with ``vec_normalize``, its
    observation space must have the description's outline), ``used`` its
    ``extensions_used``.

    Raises:
        RlarchiveError: EXTENSION_INVALID with the JSON Pointer of the offending value.
    """
    base = "/" + KEY
    if not _is_map(value):
        raise _fail("the policy must be a map", base)
    for k in sorted(_TOP_REQUIRED - set(value)):  # spec §11.2: the object before its members
        raise _fail(f"the key {k!r} is missing", base)
    for k in value:
        if k not in _TOP_REQUIRED | _TOP_OPTIONAL:
            raise _fail(f"unknown key {k!r}", f"{base}/{esc(k)}")
    for k in ("normalize_images", "vec_normalize"):
        if k in value and not isinstance(value[k], bool):
            raise _fail(f"{k} must be a boolean", f"{base}/{k}")
    if value.get("vec_normalize") and "RLA_vec_normalize" not in used:
        raise _fail("vec_normalize is true but the archive does not use RLA_vec_normalize", f"{base}/vec_normalize")
    if value.get("vec_normalize") and _outline(value.get("observation_space")) != _outline((data or {}).get("observation_space")):
        # the statistics are checked against the data's observation space (RLA_vec_normalize §3)
        raise _fail("vec_normalize is true but the observation space differs from the data's", f"{base}/observation_space")
    inputs = _inputs(value["observation_space"], f"{base}/observation_space")
    shapes = _Shapes(dict(inputs), _recurrent(value.get("recurrent"), inputs, f"{base}/recurrent"))
    if shapes.recurrent is not None:
        rec = shapes.recurrent
        state = ("state", rec["layers"], rec["hidden_size"])
        shapes.known[rec["hidden_in"]] = state
        shapes.known[rec["cell_in"]] = state
    nodes = value["nodes"]
    if not isinstance(nodes, list):
        raise _fail("nodes must be a list", f"{base}/nodes")
    for i, node in enumerate(nodes):
        shapes.node(node, f"{base}/nodes/{i}")
    if shapes.recurrent is not None and not shapes.lstm_seen:
        raise _fail("'recurrent' is given but no lstm node uses it", f"{base}/recurrent")
    shapes.head(value["action"], value["action_space"], f"{base}/action")
