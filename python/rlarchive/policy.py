"""The portable policy (extension ``RLA_policy``): check a policy description and act with NumPy alone.

A description (``extensions/RLA_policy/policy.json``, see
``spec/extensions/RLA_policy.md``) names the observation and action spaces,
how observations are preprocessed, a list of operations over named values,
and the head that turns the last of them into actions. Weights are ``ndarray``
references into the archive's tensor groups, so no weight is stored twice.

:class:`Policy` evaluates it in float32, as Stable-Baselines3 computes, with
``predict(obs, state=None, episode_start=None, action_masks=None)`` shaped like
SB3's ``predict``. Only NumPy is needed. :func:`rlarchive.interop.sb3_policy.describe`
makes a description from a built SB3 model; its structure is checked by
:mod:`rlarchive.policy_description` before a :class:`Policy` is made.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from .dtypes import numpy_view_dtype

__all__ = ["Policy", "ACTIVATIONS", "act"]

_F32 = np.float32


# -- activations (spec RLA_policy §5.3): float32 in, float32 out -------------------


def _softplus(x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    bx = x.astype(np.float64) * beta
    with np.errstate(over="ignore"):  # exp overflows only where the threshold takes x itself
        soft = np.log1p(np.exp(np.minimum(bx, 700.0))) / beta
    return np.where(bx > threshold, x, soft).astype(_F32)


def _gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    x64 = x.astype(np.float64)
    if approximate == "tanh":
        y = 0.5 * x64 * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64**3)))
    else:
        from math import erf

        y = 0.5 * x64 * (1.0 + np.vectorize(erf, otypes=[np.float64])(x64 / math.sqrt(2.0)))
    return y.astype(_F32)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(_F32)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _f64(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """``fn`` evaluated in float64, rounded to float32 (spec RLA_policy §5.5: higher precision, then rounded)."""
    return np.asarray(fn(x.astype(np.float64))).astype(_F32)


#: name -> (function of (x, **parameters), the parameters it takes with their defaults)
ACTIVATIONS: Mapping[str, tuple[Callable[..., np.ndarray], dict]] = {
    "identity": (lambda x: x, {}),
    "relu": (lambda x: np.maximum(x, _F32(0)), {}),
    "tanh": (lambda x: np.tanh(x).astype(_F32), {}),
    "sigmoid": (_sigmoid, {}),
    "elu": (lambda x, alpha=1.0: np.where(x > 0, x, _F32(alpha) * np.expm1(np.minimum(x, _F32(0)))).astype(_F32), {"alpha": 1.0}),
    "leaky_relu": (lambda x, negative_slope=0.01: np.where(x >= 0, x, x * _F32(negative_slope)).astype(_F32), {"negative_slope": 0.01}),
    "silu": (lambda x: (x.astype(np.float64) * _sigmoid(x).astype(np.float64)).astype(_F32), {}),
    "gelu": (_gelu, {"approximate": "none"}),
    "softplus": (_softplus, {"beta": 1.0, "threshold": 20.0}),
    "hardtanh": (lambda x, min_val=-1.0, max_val=1.0: np.clip(x, _F32(min_val), _F32(max_val)).astype(_F32), {"min_val": -1.0, "max_val": 1.0}),
    "selu": (lambda x: _f64(lambda v: _SELU_SCALE * np.where(v > 0, v, _SELU_ALPHA * np.expm1(np.minimum(v, 0.0))), x), {}),
    "celu": (lambda x, alpha=1.0: _f64(lambda v: np.where(v > 0, v, alpha * np.expm1(np.minimum(v, 0.0) / alpha)), x), {"alpha": 1.0}),
    "mish": (lambda x: _f64(lambda v: v * np.tanh(np.where(v > 20.0, v, np.log1p(np.exp(np.minimum(v, 20.0))))), x), {}),
    "hardswish": (lambda x: _f64(lambda v: v * np.clip(v + 3.0, 0.0, 6.0) / 6.0, x), {}),
    "hardsigmoid": (lambda x: _f64(lambda v: np.clip(v + 3.0, 0.0, 6.0) / 6.0, x), {}),
    "softsign": (lambda x: _f64(lambda v: v / (1.0 + np.abs(v)), x), {}),
}


# -- the description ------------------------------------------------------------------

_SPACE_KINDS = ("box", "discrete", "multi_discrete", "multi_binary", "dict")


class Policy:
    """A policy description, ready to act (open it with :meth:`rlarchive.Archive.policy`).

    Args:
        desc: the decoded description (the value under ``policy`` in the
            member), checked by :func:`rlarchive.policy_description.check`,
            with every ``ndarray`` resolved to an array.
        vec_normalize: the archive's :class:`rlarchive.vec_normalize.Statistics`,
            needed when the description says ``vec_normalize``.
    """

    def __init__(self, desc: Mapping[str, Any], vec_normalize: Any = None) -> None:
        self.desc = desc
        self.observation_space = desc["observation_space"]
        self.action_space = desc["action_space"]
        self.normalize_images = bool(desc.get("normalize_images", True))
        self.vec_normalize = vec_normalize if desc.get("vec_normalize") else None
        if desc.get("vec_normalize") and vec_normalize is None:
            raise ValueError("the policy takes normalised observations: give the archive's RLA_vec_normalize statistics")
        self.nodes = list(desc["nodes"])
        action = dict(desc["action"])
        if action["op"] == "box":  # the bounds and dtype of the action space
            sp = self.action_space
            action.update(low=np.asarray(sp.low, _F32), high=np.asarray(sp.high, _F32), dtype=numpy_view_dtype(sp.dtype))
        self.action: Mapping[str, Any] = action
        self.recurrent: Optional[Mapping[str, Any]] = desc.get("recurrent")

    @property
    def mask_width(self) -> Optional[int]:
        """How many action-mask entries the head takes (RLA_policy §6: ``argmax`` one per
        action, ``multi_argmax`` one per choice of every component), or None for heads
        that take no masks."""
        head = self.action
        if head["op"] == "argmax":
            return int(self.action_space.n)
        if head["op"] == "multi_argmax":
            return sum(int(n) for n in head["sizes"])
        return None

    def _input_names(self) -> list:
        sp = self.observation_space
        if _kind(sp) == "dict":
            return [f"obs.{k}" for k in _dict_keys(sp)]
        return ["obs"]

    # -- acting ----------------------------------------------------------------
    def predict(
        self,
        observation: Any,
        state: Optional[tuple] = None,
        episode_start: Optional[Any] = None,
        deterministic: bool = True,
        action_masks: Optional[Any] = None,
    ) -> tuple:
        """The deterministic action for ``observation`` (one, or a batch), and the next recurrent state.

        Shaped like Stable-Baselines3's ``predict``: a single observation gives
        a single action, a batch a batch. ``state`` and ``episode_start`` are
        used by recurrent policies only (``state`` is ``(hidden, cell)`` as
        SB3 returns it); ``action_masks`` by masked heads.
        """
        if not deterministic:
            raise ValueError("the portable policy acts deterministically only")
        obs, single = self._batch(observation)
        values = self._preprocess(obs)
        n = next(iter(values.values())).shape[0]
        if self.recurrent is not None:
            values.update(self._state_in(self.recurrent, state, episode_start, n))
        masks = None
        if action_masks is not None:
            masks = np.asarray(action_masks, dtype=bool).reshape(n, -1)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):  # IEEE float32: inf and NaN are values here
            for node in self.nodes:
                out = _OPS[node["op"]](node, [values[name] for name in node["in"]])
                names = node["out"] if isinstance(node["out"], list) else [node["out"]]
                outs = out if isinstance(node["out"], list) else [out]
                values.update(zip(names, outs))
            action = _HEADS[self.action["op"]](self.action, values[self.action["in"]], masks)
        action = action.reshape((n,) + _obs_shape(self.action_space))  # SB3 gives actions the action space's shape
        new_state = None
        if self.recurrent is not None:
            new_state = (values[self.recurrent["hidden_out"]], values[self.recurrent["cell_out"]])
        if single:
            action = action[0]
        return action, new_state

    def _batch(self, observation: Any) -> tuple:
        sp = self.observation_space
        if _kind(sp) == "dict":
            if not isinstance(observation, Mapping):
                raise ValueError("a Dict observation space takes a dict of observations")
            out, single = {}, None
            for key in _dict_keys(sp):
                arr, one = _as_batch(observation[key], _sub(sp, key))
                single = one if single is None else single
                out[key] = arr
            return out, bool(single)
        return _as_batch(observation, sp)

    def _preprocess(self, obs: Any) -> dict:
        sp = self.observation_space
        if self.vec_normalize is not None:
            obs = self.vec_normalize.normalize_obs(obs)
        if _kind(sp) == "dict":
            return {f"obs.{k}": _preprocess_one(obs[k], _sub(sp, k), self.normalize_images) for k in _dict_keys(sp)}
        return {"obs": _preprocess_one(obs, sp, self.normalize_images)}

    def _state(self, rec: Mapping[str, Any], state: Optional[tuple], n: int) -> tuple:
        """The recurrent state ``(hidden, cell)`` for a batch of ``n``, float32 ``[layers, n, hidden_size]``: zeros without ``state``."""
        shape = (int(rec["layers"]), n, int(rec["hidden_size"]))
        if state is None:
            return np.zeros(shape, _F32), np.zeros(shape, _F32)
        h, c = (np.asarray(s, _F32).reshape(shape) for s in state)
        return h, c

    def _state_in(self, rec: Mapping[str, Any], state: Optional[tuple], episode_start: Any, n: int) -> dict:
        h, c = self._state(rec, state, n)
        if episode_start is not None:
            keep = (1.0 - np.asarray(episode_start, _F32).reshape(1, n, 1)).astype(_F32)
            h, c = h * keep, c * keep
        return {rec["hidden_in"]: h, rec["cell_in"]: c}


def act(policy: Policy, observations: Sequence[Any], episode_starts: Optional[Sequence[bool]] = None, action_masks: Optional[Sequence[Any]] = None) -> list:
    """The actions for a sequence of single observations, in order (the conformance ``predict`` request, Annex A).

    A recurrent policy carries its state from one observation to the next and
    resets it where ``episode_starts`` is true; ``action_masks[i]`` goes with
    ``observations[i]``.
    """
    state = None
    out = []
    for i, obs in enumerate(observations):
        start = [bool(episode_starts[i])] if episode_starts is not None else None
        mask = action_masks[i] if action_masks is not None else None
        action, state = policy.predict(obs, state=state, episode_start=start, action_masks=mask)
        out.append(np.asarray(action))
    return out


# -- spaces ---------------------------------------------------------------------------


_KINDS = {"Box": "box", "Discrete": "discrete", "MultiDiscrete": "multi_discrete", "MultiBinary": "multi_binary", "Dict": "dict", "Tuple": "tuple"}


def _kind(space: Any) -> Optional[str]:
    return _KINDS.get(type(space).__name__)


def _dict_keys(space: Any) -> list:
    spaces = getattr(space, "spaces", ())
    return [k for k, _ in spaces] if isinstance(spaces, tuple) else list(spaces)


def _sub(space: Any, key: str) -> Any:
    spaces = space.spaces
    return dict(spaces)[key] if isinstance(spaces, tuple) else spaces[key]


def _is_image(space: Any) -> bool:
    """SB3's is_image_space without the channel check: a uint8 Box of rank 3 with bounds 0 and 255."""
    if _kind(space) != "box" or len(space.shape) != 3 or np.asarray(space.low).dtype != np.uint8:
        return False
    return bool(np.all(np.asarray(space.low) == 0) and np.all(np.asarray(space.high) == 255))


def _obs_shape(space: Any) -> tuple:
    k = _kind(space)
    if k == "box":
        return tuple(space.shape)
    if k == "discrete":
        return ()
    if k == "multi_discrete":
        return tuple(np.asarray(space.nvec).shape)
    if k == "multi_binary":
        n = space.n
        return tuple(n) if isinstance(n, (tuple, list)) else (int(n),)
    raise ValueError(f"no observation shape for a {k} space")


def _as_batch(obs: Any, space: Any) -> tuple:
    """(a batch of observations, whether ``obs`` was one), transposing channel-last images as SB3 does."""
    a = np.asarray(obs)
    shape = _obs_shape(space)
    if _is_image(space) and a.shape[-3:] != shape and a.shape[-3:] == (shape[1], shape[2], shape[0]):
        a = np.moveaxis(a, -1, -3)  # SB3's maybe_transpose: the env gives channel-last
    if a.shape == shape:
        return a.reshape((1,) + shape), True
    if a.shape[1:] == shape:
        return a, False
    raise ValueError(f"observation of shape {a.shape} for a space of shape {shape}")


def _preprocess_one(obs: np.ndarray, space: Any, normalize_images: bool) -> np.ndarray:
    k = _kind(space)
    if k == "box":
        x = obs.astype(_F32)
        if normalize_images and _is_image(space):
            x = (x / _F32(255.0)).astype(_F32)
        return x
    if k == "discrete":
        return _one_hot(obs.reshape(-1), int(space.n))
    if k == "multi_discrete":
        nvec = np.asarray(space.nvec).reshape(-1)
        flat = obs.reshape(obs.shape[0], -1)
        return np.concatenate([_one_hot(flat[:, i], int(n)) for i, n in enumerate(nvec)], axis=1)
    if k == "multi_binary":
        return obs.astype(_F32)
    raise ValueError(f"no preprocessing for a {k} space")


def _one_hot(values: np.ndarray, n: int) -> np.ndarray:
    v = values.astype(np.int64)
    if np.any(v < 0) or np.any(v >= n):
        raise ValueError(f"a discrete observation outside 0..{n - 1}")
    out = np.zeros((v.shape[0], n), _F32)
    out[np.arange(v.shape[0]), v] = 1.0
    return out


# -- operations (spec RLA_policy §5) ---------------------------------------------------


def _linear(node: Mapping, xs: list) -> np.ndarray:
    (x,) = xs
    w = np.asarray(node["weight"], _F32)
    y = (x.astype(_F32) @ w.T).astype(_F32)
    if node.get("bias") is not None:
        y = (y + np.asarray(node["bias"], _F32)).astype(_F32)
    return y


def _conv2d(node: Mapping, xs: list) -> np.ndarray:
    (x,) = xs
    w = np.asarray(node["weight"], _F32)
    sh, sw = node.get("stride", [1, 1])
    ph, pw = node.get("padding", [0, 0])
    if ph or pw:
        x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    if ci != c:
        raise ValueError(f"conv2d: {c} input channels for a kernel of {ci}")
    oh, ow = (h - kh) // sh + 1, (wd - kw) // sw + 1
    s = x.strides
    cols = np.lib.stride_tricks.as_strided(x, (n, c, oh, ow, kh, kw), (s[0], s[1], s[2] * sh, s[3] * sw, s[2], s[3]), writeable=False)
    y = np.einsum("ncijkl,ockl->noij", cols, w, optimize=True).astype(_F32)
    if node.get("bias") is not None:
        y = (y + np.asarray(node["bias"], _F32).reshape(1, -1, 1, 1)).astype(_F32)
    return y


def _activation(node: Mapping, xs: list) -> np.ndarray:
    (x,) = xs
    fn, defaults = ACTIVATIONS[node["fn"]]
    params = {k: node.get(k, v) for k, v in defaults.items()}
    return fn(x, **params)


def _flatten(node: Mapping, xs: list) -> np.ndarray:
    (x,) = xs
    return x.reshape(x.shape[0], -1)


def _concat(node: Mapping, xs: list) -> np.ndarray:
    return np.concatenate([x.reshape(x.shape[0], -1) for x in xs], axis=1)


def _layer_norm(node: Mapping, xs: list) -> np.ndarray:
    (x,) = xs
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=-1, keepdims=True)
    var = x64.var(axis=-1, keepdims=True)
    return _affine(node, ((x64 - mean) / np.sqrt(var + float(node.get("eps", 1e-5)))).astype(_F32))


def _batch_norm(node: Mapping, xs: list) -> np.ndarray:
    (x,) = xs
    mean = np.asarray(node["running_mean"], _F32)
    var = np.asarray(node["running_var"], _F32)
    return _affine(node, ((x - mean) / np.sqrt(var + _F32(node.get("eps", 1e-5)))).astype(_F32))


def _affine(node: Mapping, y: np.ndarray) -> np.ndarray:
    """``y * weight + bias``, each only when the node has it (a normalisation's affine part)."""
    if node.get("weight") is not None:
        y = (y * np.asarray(node["weight"], _F32)).astype(_F32)
    if node.get("bias") is not None:
        y = (y + np.asarray(node["bias"], _F32)).astype(_F32)
    return y


def _lstm(node: Mapping, xs: list) -> list:
    """One step of a (multi-layer) LSTM: in = [x, hidden, cell], out = [output, hidden, cell]."""
    x, h, c = xs
    hs, cs = [], []
    inp = x
    for layer, p in enumerate(node["layers"]):
        gates = (
            inp @ np.asarray(p["weight_ih"], _F32).T
            + np.asarray(p["bias_ih"], _F32)
            + h[layer] @ np.asarray(p["weight_hh"], _F32).T
            + np.asarray(p["bias_hh"], _F32)
        ).astype(_F32)
        i, f, g, o = np.split(gates, 4, axis=1)
        i, f, o = _sigmoid(i), _sigmoid(f), _sigmoid(o)
        g = np.tanh(g).astype(_F32)
        c_new = (f * c[layer] + i * g).astype(_F32)
        h_new = (o * np.tanh(c_new)).astype(_F32)
        hs.append(h_new)
        cs.append(c_new)
        inp = h_new
    return [inp, np.stack(hs), np.stack(cs)]


_OPS: Mapping[str, Callable[[Mapping, list], Any]] = {
    "linear": _linear,
    "conv2d": _conv2d,
    "activation": _activation,
    "flatten": _flatten,
    "concat": _concat,
    "layer_norm": _layer_norm,
    "batch_norm": _batch_norm,
    "lstm": _lstm,
}


# -- heads (spec RLA_policy §6) ----------------------------------------------------------


def _masked(logits: np.ndarray, masks: Optional[np.ndarray]) -> np.ndarray:
    if masks is None:
        return logits
    if masks.shape != logits.shape:
        raise ValueError(f"action masks of shape {masks.shape} for {logits.shape[1]} actions")
    return np.where(masks, logits, _F32(-1e8))


def _argmax(head: Mapping, x: np.ndarray, masks: Optional[np.ndarray]) -> np.ndarray:
    return np.argmax(_masked(x, masks), axis=1).astype(np.int64)


def _multi_argmax(head: Mapping, x: np.ndarray, masks: Optional[np.ndarray]) -> np.ndarray:
    sizes = [int(n) for n in head["sizes"]]
    x = _masked(x, masks)
    parts = np.split(x, np.cumsum(sizes)[:-1], axis=1)
    return np.stack([np.argmax(p, axis=1) for p in parts], axis=1).astype(np.int64)


def _bernoulli(head: Mapping, x: np.ndarray, masks: Optional[np.ndarray]) -> np.ndarray:
    return (_sigmoid(x) > _F32(0.5)).astype(_F32)  # as SB3 gives it: 0.0 or 1.0


def _box(head: Mapping, x: np.ndarray, masks: Optional[np.ndarray]) -> np.ndarray:
    low, high = np.asarray(head["low"], _F32), np.asarray(head["high"], _F32)
    shape = low.shape
    a = x.reshape((x.shape[0],) + shape).astype(_F32)
    if head.get("squash") == "tanh":
        a = np.tanh(a).astype(_F32)
    if head.get("squash") in ("tanh", "rescale"):
        a = (low + _F32(0.5) * (a + _F32(1.0)) * (high - low)).astype(_F32)
    else:
        a = np.clip(a, low, high)
    return a.astype(head["dtype"])


def _quantile_argmax(head: Mapping, x: np.ndarray, masks: Optional[np.ndarray]) -> np.ndarray:
    nq = int(head["n_quantiles"])
    q = x.reshape(x.shape[0], nq, -1).mean(axis=1, dtype=np.float32)
    return np.argmax(q, axis=1).astype(np.int64)


_HEADS: Mapping[str, Callable[[Mapping, np.ndarray, Optional[np.ndarray]], np.ndarray]] = {
    "argmax": _argmax,
    "multi_argmax": _multi_argmax,
    "bernoulli": _bernoulli,
    "box": _box,
    "quantile_argmax": _quantile_argmax,
}
