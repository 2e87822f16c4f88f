"""The portable policy (extension ``RLA_policy``): check a policy description and act with NumPy alone.

A description (``extensions/RLA_policy/policy.json``, see
``spec/extensions/RLA_policy.md``) names the observation and action spaces,
how observations are preprocessed, a list of operations over named values,
and the head that turns the last of them into actions. Weights are ``ndarray``
references into the archive's tensor groups, so no weight is stored twice.

:class:`Policy` evaluates it as the spec says (float32 values; sums, norms
and transcendental functions in binary64 rounded once to float32; IEEE NaN
and infinities), with ``predict(obs, state=None, episode_start=None,
action_masks=None)`` shaped like SB3's ``predict``. Only NumPy is needed.
Memory stays bounded: a value is dropped after its last reader, and every
binary64 workspace (convolution patches, copies for the transcendental
functions) is computed over blocks of at most ``POLICY_BLOCK_ELEMENTS``
elements. :func:`rlarchive.sb3.portable_policy.describe` makes a description
from a built SB3 model; its structure is checked by
:mod:`rlarchive.extensions.policy.description` before a :class:`Policy` is made. The
activation functions are in :mod:`rlarchive.extensions.policy.activations`; which
operations and heads exist comes from the registry :mod:`rlarchive.extensions.policy.ops`,
and the tables of their implementations here are checked against it at import.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ...dtypes import numpy_view_dtype
from ...errors import RlarchiveError
from . import observations as _observations
from .activations import ACTIVATIONS, IN_PLACE, erf, sigmoid64
from .observations import observation_shape
from .ops import BERNOULLI_THRESHOLD as _BERNOULLI_THRESHOLD
from .ops import HEADS, MASKED_LOGIT, OPERATIONS, POLICY_BLOCK_ELEMENTS, implementations

__all__ = ["Policy", "ACTIVATIONS", "BERNOULLI_THRESHOLD", "PRECISIONS", "act", "erf"]

_F32 = np.float32
_F64 = np.float64

#: The precisions of :class:`Policy`'s sums: the spec's (binary64, rounded once), and float32 for faster runs.
PRECISIONS = ("float64", "float32")


# -- the description ------------------------------------------------------------------


class Policy:
    """A policy description, ready to act (open it with :meth:`rlarchive.Archive.policy`).

    It takes **raw observations**, as the environment returns them: when the agent was trained behind
    ``VecNormalize`` (:attr:`normalizes_observations`), :meth:`predict` normalises them itself with the archive's
    statistics. The Stable-Baselines3 model :func:`rlarchive.sb3.load` builds from the same archive does not: it
    takes observations as its ``VecNormalize`` wrapper hands them on, normalised. Give that model
    :meth:`normalize_obs` of a raw observation (or wrap its environment with
    :func:`rlarchive.sb3.load_vec_normalize`), never the raw observation itself.

    Args:
        desc: the decoded description (the value under ``policy`` in the
            member), checked by :func:`rlarchive.extensions.policy.description.check`,
            with every ``ndarray`` resolved to an array.
        vec_normalize: the archive's :class:`rlarchive.extensions.vec_normalize.Statistics`,
            needed when the description says ``vec_normalize``.
        precision: ``"float64"`` (the default) evaluates as the spec says, every
            sum of linear, conv2d and the LSTM gates accumulated in binary64 and
            rounded once, the same bits as every conforming reader. ``"float32"``
            accumulates those sums in float32 (NumPy's float32 BLAS), as
            ``export-onnx --precision float32`` writes them, for faster evaluation
            runs over large batches: the rest is unchanged, each sum strays from
            the exact one by at most the float32 summation bound (about K·2^-24
            times the sum of its terms' magnitudes, K terms), so actions may differ
            where two are close, and a float32 partial sum may overflow.
    """

    def __init__(self, desc: Mapping[str, Any], vec_normalize: Any = None, precision: str = "float64") -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
        self.precision = precision
        self.desc = desc
        self.observation_space = desc["observation_space"]
        self.action_space = desc["action_space"]
        self.normalize_images = bool(desc.get("normalize_images", True))
        self.vec_normalize = vec_normalize if desc.get("vec_normalize") else None
        if desc.get("vec_normalize") and vec_normalize is None:
            raise ValueError(
                "the policy takes normalised observations: give the archive's RLA_vec_normalize statistics"
            )
        self.nodes = list(desc["nodes"])
        action = dict(desc["action"])
        if action["op"] == "box":  # the bounds and dtype of the action space
            sp = self.action_space
            action.update(
                low=np.asarray(sp.low, _F32), high=np.asarray(sp.high, _F32), dtype=numpy_view_dtype(sp.dtype)
            )
        if "sizes" in action:  # multi_argmax: read once, not at every predict
            action["sizes"] = np.asarray(action["sizes"], np.intp)
        self.action: Mapping[str, Any] = action
        self.recurrent: Mapping[str, Any] | None = desc.get("recurrent")
        self._steps: list[Any] | None = None  # each node's evaluation, prepared at the first predict
        self._workspace: _Workspace | None = None  # the steps' copies of weights and workspace
        self._keep = {self.action["in"]}
        if self.recurrent is not None:
            self._keep |= {self.recurrent["hidden_out"], self.recurrent["cell_out"]}
        # the index of the last node reading each value (len(nodes) for the head): values are dropped after it
        self._last: dict[str, Any] = {}
        for i, node in enumerate(self.nodes):
            for name in node["in"]:
                self._last[name] = i
        for name in self._keep:
            self._last[name] = len(self.nodes)

    @property
    def normalizes_observations(self) -> bool:
        """Whether :meth:`predict` normalises the raw observations it takes with the archive's VecNormalize
        statistics (extension ``RLA_vec_normalize``): then the SB3 model of the same archive takes
        :meth:`normalize_obs` of them, not the raw observations."""
        return self.vec_normalize is not None

    def normalize_obs(self, observation: Any) -> Any:
        """A raw ``observation`` (one or a batch, as :meth:`predict` takes it) as the Stable-Baselines3 model of the
        same archive (:func:`rlarchive.sb3.load`) takes it: normalised and clipped with the archive's VecNormalize
        statistics, in float32, as SB3's ``VecNormalize`` gives it; unchanged when the agent was trained without
        them. So ``model.predict(policy.normalize_obs(obs))`` and ``policy.predict(obs)`` agree."""
        if self.vec_normalize is None:
            return observation
        return self.vec_normalize.normalize_obs(observation)

    @property
    def mask_width(self) -> int | None:
        """How many action-mask entries the head takes (RLA_policy §6: ``argmax`` one per
        action, ``multi_argmax`` one per choice of every component), or None for heads
        that take no masks."""
        head = self.action
        if head["op"] == "argmax":
            return int(self.action_space.n)
        if head["op"] == "multi_argmax":
            return int(np.sum(head["sizes"]))
        return None

    # -- acting ----------------------------------------------------------------
    def predict(
        self,
        observation: Any,
        state: tuple[Any, ...] | None = None,
        episode_start: Any | None = None,
        deterministic: bool = True,
        action_masks: Any | None = None,
    ) -> tuple[Any, ...]:
        """The deterministic action for ``observation`` (one, or a batch, **raw**: as the environment returns it,
        before any VecNormalize), and the next recurrent state.

        Shaped like Stable-Baselines3's ``predict``: a single observation gives
        a single action, a batch a batch. ``state`` and ``episode_start`` are
        used by recurrent policies only (``state`` is ``(hidden, cell)`` as
        SB3 returns it); ``action_masks`` by masked heads. Observations,
        states and masks that do not fit are a ``ValueError`` (or ``TypeError``).
        """
        if not deterministic:
            raise ValueError("the portable policy acts deterministically only")
        obs, single = self._batch(observation)
        values = self._preprocess(obs)
        del obs
        n = next(iter(values.values())).shape[0]
        if self.recurrent is not None:
            values.update(self._state_in(self.recurrent, state, episode_start, n))
        masks = None
        if action_masks is not None:
            masks = np.asarray(action_masks, dtype=bool)
            if masks.size != n * (self.mask_width or -1):
                raise ValueError(
                    f"action masks of shape {masks.shape} for {n} observations and {self.mask_width} actions"
                )
            masks = masks.reshape(n, -1)
        last, keep = self._last, self._keep
        for name in [k for k in values if last.get(k, -1) < 0]:
            del values[name]  # an input nothing reads
        with np.errstate(all="ignore"):  # IEEE float32: inf and NaN are values here
            if self._steps is None:
                self._workspace = _Workspace(_F64 if self.precision == "float64" else _F32)
                self._steps = [_PREPARE[node["op"]](node, self._workspace) for node in self.nodes]
            for i, (node, step) in enumerate(zip(self.nodes, self._steps)):
                out = step([values[name] for name in node["in"]])
                for name in set(node["in"]):
                    if last[name] == i and name not in keep:
                        del values[name]
                names = node["out"] if isinstance(node["out"], list) else [node["out"]]
                outs = out if isinstance(node["out"], list) else [out]
                for name, value in zip(names, outs):
                    if last.get(name, -1) > i:
                        values[name] = value
                del out, outs
            action = _HEADS[self.action["op"]](self.action, values[self.action["in"]], masks)
        action = action.reshape(
            (n,) + observation_shape(self.action_space)
        )  # SB3 gives actions the action space's shape
        new_state = None
        if self.recurrent is not None:
            new_state = (values[self.recurrent["hidden_out"]], values[self.recurrent["cell_out"]])
        if single:
            action = action[0]
        return action, new_state

    def _batch(self, observation: Any) -> tuple[Any, ...]:
        """(the observation as a batch: an array, or a dict of arrays for a Dict space; whether it was one)."""
        return _observations.batch(observation, self.observation_space)

    def _preprocess(self, obs: Any) -> dict[str, Any]:
        if self.vec_normalize is not None:
            obs = self.vec_normalize.normalize_obs(obs)
        inputs = _observations.observation_inputs(self.observation_space)
        return {
            name: _observations.preprocess(obs if key is None else obs[key], sub, self.normalize_images)
            for name, key, sub in inputs
        }

    def _state_in(
        self, rec: Mapping[str, Any], state: tuple[Any, ...] | None, episode_start: Any, n: int
    ) -> dict[str, Any]:
        h, c = _observations.recurrent_state(rec, state, n)
        if episode_start is not None:
            starts = np.asarray(episode_start, _F32)
            if starts.size != n:
                raise ValueError(f"{starts.size} episode starts for {n} observations")
            keep = (1.0 - starts.reshape(1, n, 1)).astype(_F32)
            h, c = h * keep, c * keep
        return {rec["hidden_in"]: h, rec["cell_in"]: c}


def act(
    policy: Policy,
    observations: Sequence[Any],
    episode_starts: Sequence[bool] | None = None,
    action_masks: Sequence[Any] | None = None,
) -> list[Any]:
    """The actions for a sequence of observations, in order (the conformance ``predict`` request, Annex A).

    Each observation is one observation or a batch, as :meth:`Policy.predict`
    takes it. A recurrent policy carries its state from one observation to the
    next and resets it where ``episode_starts`` is true; ``action_masks[i]``
    goes with ``observations[i]``.

    Raises:
        RlarchiveError: INPUT_INVALID for an observation, episode start or mask
            that does not fit the policy (RLA_policy §4), naming its index.
    """
    state = None
    out = []
    for i, obs in enumerate(observations):
        try:
            start = [bool(episode_starts[i])] if episode_starts is not None else None
            mask = action_masks[i] if action_masks is not None else None
            action, state = policy.predict(obs, state=state, episode_start=start, action_masks=mask)
        except (ValueError, TypeError, IndexError) as e:  # what predict raises for input that does not fit
            raise RlarchiveError("INPUT_INVALID", f"observation {i}: {e}") from None
        out.append(np.asarray(action))
    return out


# -- operations (spec RLA_policy §5): each prepared once per Policy ----------------------
#
# A sum (linear, conv2d, the LSTM gates) is accumulated in binary64, where the product
# of two float32 values is exact, and rounded once to float32 (RLA_policy §5).


class _Workspace:
    """The weights of a policy's sums, copied once in the dtype of the sums (``sums``: binary64, or float32 in the
    faster mode) and shared by every node that reads the same array; binary64 copies of the parameters of the other
    formulas (:meth:`__call__`); and workspace (:meth:`scratch`), reused from call to call.

    ``layout``: ``"plain"``; ``"t"``, the transpose of a matrix; ``"rows"``, the
    transpose of the array seen as a matrix of its first dimension by the rest.
    """

    def __init__(self, sums: Any = _F64) -> None:
        self.sums = np.dtype(sums)
        self._copies: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] = {}
        self._scratch = threading.local()

    def scratch(self, role: str, shape: tuple[int, ...], dtype: Any = _F64) -> np.ndarray:
        """An array of ``shape`` (binary64 unless ``dtype``) for a node's temporaries, its contents undefined: one
        buffer per ``role`` (the temporaries a node holds at once have different roles), reused by every node and
        every call of this thread, so that a call does not allocate (and fault in) fresh memory for them. Only
        buffers of up to a block (POLICY_BLOCK_ELEMENTS elements) are kept: a larger one is made for the call."""
        size = math.prod(shape)
        if size > POLICY_BLOCK_ELEMENTS:
            return np.empty(shape, dtype)
        key = f"{role}.{np.dtype(dtype).char}"
        buf = getattr(self._scratch, key, None)
        if buf is None or buf.size < size:
            buf = np.empty(size, dtype)
            setattr(self._scratch, key, buf)
        view: np.ndarray = buf[:size].reshape(shape)
        return view

    def optional(self, nd: Any) -> np.ndarray | None:
        """The binary64 copy of an optional parameter (None for none)."""
        return None if nd is None else self(nd)

    def matrix(self, nd: Any, layout: str) -> np.ndarray:
        """The copy of a matrix of products, in the dtype of the sums."""
        return self(nd, layout, self.sums)

    def __call__(self, nd: Any, layout: str = "plain", dtype: Any = _F64) -> np.ndarray:
        a = np.asarray(nd, _F32)
        key = (a.__array_interface__["data"][0], a.shape, a.strides, layout, np.dtype(dtype).char)
        if key not in self._copies:
            m = a.astype(dtype)
            if layout == "t":
                m = np.ascontiguousarray(m.T)
            elif layout == "rows":
                m = np.ascontiguousarray(m.reshape(a.shape[0], -1).T)
            self._copies[key] = (a, m)  # the source is kept alive, so that its address names it
        return self._copies[key][1]


def _rows_per_block(width: int) -> int:
    return max(1, POLICY_BLOCK_ELEMENTS // max(width, 1))


def _linear(node: Mapping[str, Any], f64: _Workspace) -> Callable[[list[Any]], np.ndarray]:
    wt = f64.matrix(node["weight"], "t")
    b = f64.optional(node.get("bias"))
    k, o = wt.shape
    sums = f64.sums
    kb = max(1, min(k, POLICY_BLOCK_ELEMENTS))
    rb = _rows_per_block(max(k, o))

    def run(xs: list[Any]) -> np.ndarray:
        (x,) = xs
        rows = x.reshape(-1, k) if k else np.zeros((math.prod(x.shape[:-1]), 0), _F32)
        n = rows.shape[0]
        out = np.empty((n, o), _F32)
        for r in range(0, n, rb):
            m = min(rb, n - r)
            if 0 < k <= kb:  # one block of the products: their sums, then the bias
                x64 = f64.scratch("in", (m, k), sums)
                np.copyto(x64, rows[r : r + m])
                acc = np.matmul(x64, wt, out=f64.scratch("acc", (m, o), sums))
                acc += 0.0 if b is None else b  # the order below: 0.0 + s (a zero sum is +0), b + s
                out[r : r + m] = acc
                continue
            acc = np.zeros((m, o), sums) if b is None else np.tile(b, (m, 1)).astype(sums)
            for s in range(0, k, kb):
                acc += rows[r : r + m, s : s + kb].astype(sums) @ wt[s : s + kb]
            out[r : r + m] = acc
        result: np.ndarray = out.reshape(x.shape[:-1] + (o,))
        return result

    return run


def _conv2d(node: Mapping[str, Any], f64: _Workspace) -> Callable[[list[Any]], np.ndarray]:
    o, c, kh, kw = np.shape(node["weight"])
    k = c * kh * kw
    wt = f64.matrix(node["weight"], "rows")
    b = f64.optional(node.get("bias"))
    sums = f64.sums
    sh, sw = (int(v) for v in node["stride"])
    ph, pw = (int(v) for v in node["padding"])

    def run(xs: list[Any]) -> np.ndarray:
        (x,) = xs
        n, _, h, wd = x.shape
        oh, ow = (h + 2 * ph - kh) // sh + 1, (wd + 2 * pw - kw) // sw + 1
        out = np.empty((n, o, oh, ow), _F32)
        # blocks of output positions, at most POLICY_BLOCK_ELEMENTS patch elements each (one
        # position when a patch is larger): whole rows when a row fits, else parts of one row
        if ow * k <= POLICY_BLOCK_ELEMENTS:
            rows = max(1, POLICY_BLOCK_ELEMENTS // max(ow * k, 1))
            blocks = [(y, min(oh, y + rows), 0, ow) for y in range(0, oh, rows)]
        else:
            step = max(1, POLICY_BLOCK_ELEMENTS // k)
            blocks = [(y, y + 1, s, min(ow, s + step)) for y in range(oh) for s in range(0, ow, step)]
        padded = np.zeros((c, h + 2 * ph, wd + 2 * pw), sums)  # the registry charges this binary64 copy
        s0, s1, s2 = padded.strides
        view = np.lib.stride_tricks.as_strided(
            padded, (oh, ow, c, kh, kw), (s1 * sh, s2 * sw, s0, s1, s2), writeable=False
        )
        for i in range(n):
            padded[:, ph : ph + h, pw : pw + wd] = x[i]
            for y0, y1, x0, x1 in blocks:
                cols = view[y0:y1, x0:x1].reshape(-1, k)  # im2col of the block (a copy of at most a block)
                acc = cols @ wt
                if b is not None:
                    acc += b
                out[i, :, y0:y1, x0:x1] = acc.T.reshape(o, y1 - y0, x1 - x0)
        return out

    return run


def _activation(node: Mapping[str, Any], f64: _Workspace) -> Callable[[list[Any]], np.ndarray]:
    fn, defaults = ACTIVATIONS[node["fn"]]
    params = {k: node.get(k, v) for k, v in defaults.items()}
    params = {k: (v if isinstance(v, str) else float(v)) for k, v in params.items()}
    in_place = IN_PLACE.get(node["fn"])
    if in_place is None:
        return lambda xs: fn(xs[0], **params)

    def run(xs: list[Any]) -> np.ndarray:
        (x,) = xs
        if x.size > POLICY_BLOCK_ELEMENTS:
            return fn(x, **params)  # in blocks
        v = f64.scratch("activation", x.shape)  # the binary64 copy, in a buffer this thread reuses
        np.copyto(v, x)
        with np.errstate(all="ignore"):
            result: np.ndarray = in_place(v).astype(_F32)
        return result

    return run


def _prelu(node: Mapping[str, Any], f64: _Workspace) -> Callable[[list[Any]], np.ndarray]:
    weight = np.asarray(node["weight"], _F32).reshape(-1)

    def run(xs: list[Any]) -> np.ndarray:
        (x,) = xs
        wb = weight.reshape((1, -1) + (1,) * (x.ndim - 2)) if weight.size > 1 else weight.reshape(())
        with np.errstate(all="ignore"):
            result: np.ndarray = np.where(x >= 0, x, x * wb).astype(_F32)  # NaN: NaN times the slope
            return result

    return run


def _flatten(node: Mapping[str, Any], f64: _Workspace) -> Callable[[list[Any]], np.ndarray]:
    return lambda xs: xs[0].reshape(xs[0].shape[0], -1)


def _concat(node: Mapping[str, Any], f64: _Workspace) -> Callable[[list[Any]], np.ndarray]:
    return lambda xs: np.concatenate([x.reshape(x.shape[0], -1) for x in xs], axis=1)


def _normalise(x: np.ndarray, width: int, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``fn`` over rows of ``width`` values of ``x`` in binary64, rounded once, a block of rows at a time."""
    if width == 0 or x.size == 0:
        return np.zeros(x.shape, _F32)  # nothing to normalise
    rows = x.reshape(-1, width)
    out = np.empty(rows.shape, _F32)
    rb = _rows_per_block(width)
    for r in range(0, rows.shape[0], rb):
        out[r : r + rb] = fn(rows[r : r + rb].astype(_F64))
    return out.reshape(x.shape)


def _scale_shift(y: np.ndarray, w: np.ndarray | None, b: np.ndarray | None) -> np.ndarray:
    """``y * w + b`` in place, each only when the node has it (a normalisation's affine part, binary64)."""
    if w is not None:
        y *= w
    if b is not None:
        y += b
    return y


def _layer_norm(node: Mapping[str, Any], f64: _Workspace) -> Callable[[list[Any]], np.ndarray]:
    w, b, eps = f64.optional(node.get("weight")), f64.optional(node.get("bias")), float(node["eps"])

    def fn(v: np.ndarray) -> np.ndarray:
        mean = v.mean(axis=-1, keepdims=True)
        d = v - mean
        return _scale_shift(d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + eps), w, b)

    return lambda xs: _normalise(xs[0], xs[0].shape[-1], fn)


def _batch_norm(node: Mapping[str, Any], f64: _Workspace) -> Callable[[list[Any]], np.ndarray]:
    mean, var = f64(node["running_mean"]), f64(node["running_var"])
    w, b, eps = f64.optional(node.get("weight")), f64.optional(node.get("bias")), float(node["eps"])
    with np.errstate(all="ignore"):
        inv = 1.0 / np.sqrt(var + eps)  # a negative running variance gives NaN

    def fn(v: np.ndarray) -> np.ndarray:
        return _scale_shift((v - mean) * inv, w, b)

    return lambda xs: _normalise(xs[0], xs[0].shape[-1], fn)


def _lstm(node: Mapping[str, Any], f64: _Workspace) -> Callable[[list[Any]], list[Any]]:
    """One step of a (multi-layer) LSTM: in = [x, hidden, cell], out = [output, hidden, cell]."""
    layers = [
        (f64.matrix(p["weight_ih"], "t"), f64.matrix(p["weight_hh"], "t"), f64(p["bias_ih"]), f64(p["bias_hh"]))
        for p in node["layers"]
    ]
    sums = f64.sums

    def run(xs: list[Any]) -> list[Any]:
        x, h, c = xs
        hs, cs = [], []
        inp = x
        for layer, (wih, whh, bih, bhh) in enumerate(layers):
            gates = (((inp.astype(sums) @ wih + bih) + h[layer].astype(sums) @ whh) + bhh).astype(_F32)
            i, f, g, o = (part.astype(_F64) for part in np.split(gates, 4, axis=1))
            i, f, o = (sigmoid64(v).astype(_F32).astype(_F64) for v in (i, f, o))
            g = np.tanh(g).astype(_F32).astype(_F64)
            c_new = (f * c[layer].astype(_F64) + i * g).astype(_F32)
            h_new = (o * np.tanh(c_new.astype(_F64))).astype(_F32)
            hs.append(h_new)
            cs.append(c_new)
            inp = h_new
        return [inp, np.stack(hs), np.stack(cs)]

    return run


_PREPARE: Mapping[str, Callable[[Mapping[str, Any], _Workspace], Callable[[list[Any]], Any]]] = implementations(
    OPERATIONS,
    {
        "linear": _linear,
        "conv2d": _conv2d,
        "activation": _activation,
        "prelu": _prelu,
        "flatten": _flatten,
        "concat": _concat,
        "layer_norm": _layer_norm,
        "batch_norm": _batch_norm,
        "lstm": _lstm,
    },
    "operations of the NumPy evaluator",
)


# -- heads (spec RLA_policy §6) ----------------------------------------------------------


def _masked(logits: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
    if masks is None:
        return logits
    if masks.shape != logits.shape:
        raise ValueError(f"action masks of shape {masks.shape} for {logits.shape[1]} actions")
    return np.where(masks, logits, _F32(MASKED_LOGIT))


def _argmax(head: Mapping[str, Any], x: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
    result: np.ndarray = np.argmax(_masked(x, masks), axis=1).astype(np.int64)  # NumPy's argmax takes the first NaN
    return result


def _multi_argmax(head: Mapping[str, Any], x: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
    """The argmax of each run of ``sizes`` logits (the first largest, or the first NaN: RLA_policy §6), every run at once."""
    sizes = np.asarray(head["sizes"], np.intp)
    x = _masked(x, masks)
    if sizes.size == 0 or np.any(sizes <= 0):  # np.argmax refuses an empty run, as it always has here
        return np.stack([np.argmax(p, axis=1) for p in np.split(x, np.cumsum(sizes)[:-1], axis=1)], axis=1).astype(
            np.int64
        )
    width = x.shape[1]
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    out = np.empty((x.shape[0], sizes.size), np.int64)
    rb = _rows_per_block(width)
    for r in range(0, x.shape[0], rb):
        rows = x[r : r + rb]
        # the largest of each run (NaN where the run holds one: np.maximum propagates it); the first position reaching it
        top = np.repeat(np.maximum.reduceat(rows, starts, axis=1), sizes, axis=1)
        with np.errstate(invalid="ignore"):
            hit = rows == top
        del top
        hit |= np.isnan(rows)  # a NaN is in a run whose largest is NaN
        position = np.where(hit, np.arange(width, dtype=np.int32), np.int32(width))
        del hit
        out[r : r + rb] = np.minimum.reduceat(position, starts, axis=1) - starts
    return out


#: The bernoulli head gives 1.0 exactly for the float32 logits above 3·2^-25 (RLA_policy §6): SB3's mode,
#: torch.round(torch.sigmoid(x)) in float32, is 1 there and 0 elsewhere (PyTorch's float32 sigmoid is 0.5 up to it).
BERNOULLI_THRESHOLD = _F32(_BERNOULLI_THRESHOLD)


def _bernoulli(head: Mapping[str, Any], x: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        result: np.ndarray = (x > BERNOULLI_THRESHOLD).astype(_F32)  # as SB3 gives it: 0.0 or 1.0; NaN gives 0.0
        return result


def _box(head: Mapping[str, Any], x: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
    low, high = np.asarray(head["low"], _F32), np.asarray(head["high"], _F32)
    shape = low.shape
    a = x.reshape((x.shape[0],) + shape).astype(_F32)
    if head.get("squash") == "tanh":
        a = np.tanh(a.astype(_F64)).astype(_F32)
    if head.get("squash") in ("tanh", "rescale"):
        lo = low.astype(_F64)
        a = (lo + 0.5 * (a.astype(_F64) + 1.0) * (high.astype(_F64) - lo)).astype(_F32)
    else:
        a = np.minimum(np.maximum(a, low), high)  # NaN stays NaN
    return a.astype(head["dtype"])


def _quantile_argmax(head: Mapping[str, Any], x: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
    nq = int(head["n_quantiles"])
    q = x.reshape(x.shape[0], nq, -1).astype(_F64).sum(axis=1) / nq
    result: np.ndarray = np.argmax(q.astype(_F32), axis=1).astype(np.int64)
    return result


_HEADS: Mapping[str, Callable[[Mapping[str, Any], np.ndarray, np.ndarray | None], np.ndarray]] = implementations(
    HEADS,
    {
        "argmax": _argmax,
        "multi_argmax": _multi_argmax,
        "bernoulli": _bernoulli,
        "box": _box,
        "quantile_argmax": _quantile_argmax,
    },
    "heads of the NumPy evaluator",
)
