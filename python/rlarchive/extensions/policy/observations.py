"""Observations of a space as a policy takes them (spec RLA_policy §4): one or a batch, and preprocessed.

A space is any object shaped like the spaces of :mod:`rlarchive.spaces` or
gymnasium's (its class name gives the kind). :func:`as_batch` tells a single
observation from a batch as Stable-Baselines3's ``is_vectorized_observation``
does, for every kind, and for every key of a Dict (all keys single, or all a
batch of the same size); :func:`preprocess` turns a batch into the float32
input of the network (one-hot vectors, images divided by 255). Observations
that do not fit their space are errors of the caller: ``ValueError`` (or
``TypeError`` for a value that is not an observation at all).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...dtypes import numpy_view_dtype

__all__ = [
    "kind",
    "dict_keys",
    "subspace",
    "is_image",
    "observation_shape",
    "observation_dtype",
    "observation_inputs",
    "as_batch",
    "batch",
    "preprocess",
    "one_hot",
    "recurrent_state",
]

_F32 = np.float32
_KINDS = {
    "Box": "box",
    "Discrete": "discrete",
    "MultiDiscrete": "multi_discrete",
    "MultiBinary": "multi_binary",
    "Dict": "dict",
    "Tuple": "tuple",
}


def kind(space: Any) -> str | None:
    """The kind of ``space``: ``box``, ``discrete``, ``multi_discrete``, ``multi_binary``, ``dict``, ``tuple``, or None."""
    return _KINDS.get(type(space).__name__)


def dict_keys(space: Any) -> list[Any]:
    """The keys of a Dict space, in its order."""
    spaces = getattr(space, "spaces", ())
    return [k for k, _ in spaces] if isinstance(spaces, tuple) else list(spaces)


def subspace(space: Any, key: str) -> Any:
    """The space of ``key`` in a Dict space."""
    spaces = space.spaces
    return dict(spaces)[key] if isinstance(spaces, tuple) else spaces[key]


def is_image(space: Any) -> bool:
    """SB3's ``is_image_space`` without the channel check: a uint8 Box of rank 3 with bounds 0 and 255."""
    if kind(space) != "box" or len(space.shape) != 3 or np.asarray(space.low).dtype != np.uint8:
        return False
    return bool(np.all(np.asarray(space.low) == 0) and np.all(np.asarray(space.high) == 255))


def observation_shape(space: Any) -> tuple[Any, ...]:
    """The shape of one observation of a Box, Discrete (``()``), MultiDiscrete or MultiBinary space."""
    k = kind(space)
    if k == "box":
        return tuple(int(d) for d in space.shape)
    if k == "discrete":
        return ()
    if k == "multi_discrete":
        return tuple(np.asarray(space.nvec).shape)
    if k == "multi_binary":
        n = space.n
        return tuple(int(d) for d in n) if isinstance(n, (tuple, list, np.ndarray)) else (int(n),)
    raise ValueError(f"no observation shape for a {k} space")


def observation_dtype(space: Any) -> np.dtype:
    """The dtype of a space's raw observations (MultiBinary: int8, as gymnasium samples them; Discrete: int64 unless it says)."""
    if kind(space) == "multi_binary":
        return np.dtype(np.int8)
    dt = getattr(space, "dtype", "I64")
    return numpy_view_dtype(dt) if isinstance(dt, str) else np.dtype(dt)


def observation_inputs(space: Any) -> list[Any]:
    """(name, key, space) of each input of the network, in order (RLA_policy §4): ``obs`` (key None), or ``obs.KEY`` for each key of a Dict space."""
    if kind(space) == "dict":
        return [(f"obs.{k}", k, subspace(space, k)) for k in dict_keys(space)]
    return [("obs", None, space)]


def _array(obs: Any) -> np.ndarray:
    if isinstance(obs, Mapping) or obs is None:
        raise TypeError(f"not an observation array: {type(obs).__name__}")
    a = np.asarray(obs)
    if a.dtype == object or a.dtype.kind not in "biuf":
        raise TypeError(f"an observation of dtype {a.dtype} (numbers expected)")
    return a


def as_batch(obs: Any, space: Any) -> tuple[Any, ...]:
    """(a batch of observations of ``space``, whether ``obs`` was one), transposing channel-last images as SB3 does.

    ``obs`` is single when its shape is the space's observation shape, a batch
    of n when it is ``(n,) + shape``; anything else is a ``ValueError``.
    """
    a = _array(obs)
    shape = observation_shape(space)
    if (
        is_image(space)
        and a.shape[-3:] != shape
        and a.shape[-3:] == (shape[1], shape[2], shape[0])
        and a.ndim in (3, 4)
    ):
        a = np.moveaxis(a, -1, -3)  # SB3's maybe_transpose: the env gives channel-last
    if a.shape == shape:
        return a.reshape((1,) + shape), True
    if a.ndim == len(shape) + 1 and a.shape[1:] == shape:
        return a, False
    raise ValueError(f"observation of shape {a.shape} for a space of shape {shape}")


def batch(observation: Any, space: Any) -> tuple[Any, ...]:
    """(the observation as a batch, whether it was one): for a Dict space a dict of batches, one per key, in the space's order.

    A Dict observation is single when every key is single, a batch of n when
    every key is a batch of the same n (spec RLA_policy §4); keys that
    disagree are a ``ValueError``.
    """
    if kind(space) != "dict":
        return as_batch(observation, space)
    if not isinstance(observation, Mapping):
        raise TypeError("a Dict observation space takes a dict of observations")
    out, single, n = {}, None, None
    for key in dict_keys(space):
        if key not in observation:
            raise ValueError(f"the observation lacks the key {key!r}")
        arr, one = as_batch(observation[key], subspace(space, key))
        if single is None:
            single, n = one, arr.shape[0]
        elif one != single or arr.shape[0] != n:
            raise ValueError(
                f"the key {key!r} is {'one observation' if one else f'a batch of {arr.shape[0]}'} "
                f"while the keys before it are {'one observation' if single else f'a batch of {n}'}"
            )
        out[key] = arr
    return out, bool(single)


def one_hot(values: np.ndarray, n: int) -> np.ndarray:
    """float32 one-hot rows of ``n`` for integer ``values`` (a ``ValueError`` outside 0..n-1 or for a non-integer)."""
    v = np.asarray(values)
    if v.dtype.kind == "f":
        if not np.all(np.isfinite(v)) or np.any(v != np.round(v)):
            raise ValueError("a discrete observation that is not an integer")
    if v.size and (np.any(v < 0) or np.any(v >= n)):
        raise ValueError(f"a discrete observation outside 0..{n - 1}")
    v = v.astype(np.int64)
    out = np.zeros((v.shape[0], n), _F32)
    out[np.arange(v.shape[0]), v] = 1.0
    return out


def preprocess(obs: np.ndarray, space: Any, normalize_images: bool) -> np.ndarray:
    """A batch of observations of ``space`` as the float32 input of the network (spec RLA_policy §4)."""
    k = kind(space)
    if k == "box":
        x = obs.astype(_F32)
        if normalize_images and is_image(space):
            x = (x / _F32(255.0)).astype(_F32)
        return x
    if k == "discrete":
        return one_hot(obs.reshape(-1), int(space.n))
    if k == "multi_discrete":
        nvec = np.asarray(space.nvec).reshape(-1)
        flat = obs.reshape(obs.shape[0], -1)
        return np.concatenate([one_hot(flat[:, i], int(n)) for i, n in enumerate(nvec)], axis=1)
    if k == "multi_binary":
        return obs.astype(_F32)
    raise ValueError(f"no preprocessing for a {k} space")


def recurrent_state(recurrent: Mapping[str, Any], state: tuple[Any, ...] | None, n: int) -> tuple[Any, ...]:
    """The recurrent state ``(hidden, cell)`` for a batch of ``n``, float32 ``[layers, n, hidden_size]`` (RLA_policy §5.9).

    ``recurrent`` is the description's ``recurrent`` member; without ``state``
    the state is zeros. A state that is not a pair of ``layers·n·hidden_size``
    values is a ``ValueError``.
    """
    shape = (int(recurrent["layers"]), n, int(recurrent["hidden_size"]))
    if state is None:
        return np.zeros(shape, _F32), np.zeros(shape, _F32)
    if not isinstance(state, (tuple, list)) or len(state) != 2:
        raise ValueError("a recurrent state is a pair (hidden, cell)")
    h, c = (np.asarray(s, _F32) for s in state)
    if h.size != math.prod(shape) or c.size != math.prod(shape):
        raise ValueError(f"a state of {h.size} and {c.size} values for the shape {shape}")
    return h.reshape(shape), c.reshape(shape)
