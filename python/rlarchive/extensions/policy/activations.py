"""The activation functions of the portable policy (extension ``RLA_policy`` §5.5) in NumPy, and a vectorised erf.

Each function takes and gives float32 arrays: the formula of the registry's
table of activations is computed in binary64 and rounded once to float32
(relu, leaky_relu and hardtanh are exact in float32), over blocks of at most
``POLICY_BLOCK_ELEMENTS`` elements so that the binary64 temporaries stay
bounded. NaN and infinities give what the table says. Which functions exist,
their parameters and defaults come from the registry
(:mod:`rlarchive.extensions.policy.ops`); :data:`ACTIVATIONS` fails at import when an
implementation is missing or extra.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .ops import ACTIVATION_DEFAULTS, POLICY_BLOCK_ELEMENTS, implementations
from .ops import ACTIVATIONS as REGISTRY

__all__ = ["ACTIVATIONS", "IN_PLACE", "erf", "sigmoid64"]

_F32 = np.float32
_F64 = np.float64


# -- erf in binary64, vectorised --------------------------------------------------------
#
# |x| < 0.375: the Maclaurin series of erf(x)/x in x^2 (12 terms). 0.375 <= |x| < 6:
# the Taylor polynomial of degree 16 about the centre of one of 15 intervals of width
# 0.375, its coefficients from erf'(x) = 2/sqrt(pi) exp(-x^2) and the Hermite
# recurrence (d/dx)^k exp(-x^2) = (-1)^k H_k(x) exp(-x^2). |x| >= 6: +-1 (erfc(6) is
# below half an ulp of 1). Relative error below 3e-16 against math.erf.

_ERF_LO, _ERF_WIDTH, _ERF_PIECES, _ERF_DEGREE, _ERF_HI = 0.375, 0.375, 15, 16, 6.0


def _erf_tables() -> tuple[Any, ...]:
    series = [2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(12)]
    rows = []
    for i in range(_ERF_PIECES):
        c = _ERF_LO + _ERF_WIDTH * (i + 0.5)
        scale = 2 / math.sqrt(math.pi) * math.exp(-c * c)
        h_prev, h, fact = 0.0, 1.0, 1.0  # H_{k-1}(c), H_k(c), (k+1)!
        row = [math.erf(c)]
        for k in range(_ERF_DEGREE):
            fact *= k + 1
            row.append(scale * (-1) ** k * h / fact)
            h_prev, h = h, 2 * c * h - 2 * k * h_prev
        rows.append(row)
    columns = [np.ascontiguousarray([r[k] for r in rows]) for k in range(_ERF_DEGREE + 1)]
    centres = _ERF_LO + _ERF_WIDTH * (np.arange(_ERF_PIECES) + 0.5)
    return series, columns, centres


_ERF_SERIES, _ERF_COLUMNS, _ERF_CENTRES = _erf_tables()


def erf(x: np.ndarray) -> np.ndarray:
    """The error function of a binary64 array, element by element, vectorised (relative error below 3e-16)."""
    x = np.asarray(x, _F64)
    a = np.abs(x)
    with np.errstate(all="ignore"):  # the polynomial overflows far beyond 6, where the result is 1 anyway
        idx = np.clip(
            np.nan_to_num((a - _ERF_LO) * (1 / _ERF_WIDTH), nan=0.0, posinf=_ERF_PIECES, neginf=0.0), 0, _ERF_PIECES - 1
        ).astype(np.intp)
        t = a - _ERF_CENTRES[idx]
        y = _ERF_COLUMNS[_ERF_DEGREE][idx]
        for k in range(_ERF_DEGREE - 1, -1, -1):
            y *= t
            y += _ERF_COLUMNS[k][idx]
        small = np.nonzero(a < _ERF_LO)[0] if x.ndim == 1 else np.nonzero(a.reshape(-1) < _ERF_LO)[0]
        y = y.reshape(-1)
        if small.size:
            xs = a.reshape(-1)[small]
            z = xs * xs
            s = np.full(z.shape, _ERF_SERIES[-1])
            for k in range(len(_ERF_SERIES) - 2, -1, -1):
                s *= z
                s += _ERF_SERIES[k]
            y[small] = s * xs
        y = y.reshape(x.shape)
        y[a >= _ERF_HI] = 1.0
        y = np.copysign(y, x)
        y[np.isnan(x)] = np.nan
    out: np.ndarray = y
    return out


# -- activations (spec RLA_policy §5.5): float32 in, float32 out -------------------------


def _blocked(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """``fn`` over ``x`` converted to binary64, rounded once to float32, at most POLICY_BLOCK_ELEMENTS elements at a time."""
    with np.errstate(all="ignore"):  # IEEE: inf and NaN are values here
        if x.size <= POLICY_BLOCK_ELEMENTS:
            result: np.ndarray = fn(x.astype(_F64)).astype(_F32)
            return result
    out = np.empty(x.shape, _F32)
    src, dst = x.reshape(-1), out.reshape(-1)
    with np.errstate(all="ignore"):
        for s in range(0, src.size, POLICY_BLOCK_ELEMENTS):
            dst[s : s + POLICY_BLOCK_ELEMENTS] = fn(src[s : s + POLICY_BLOCK_ELEMENTS].astype(_F64))
    return out


def _softplus64(v: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    z = v * beta
    return np.where(z > threshold, v, (np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))) / beta)


def sigmoid64(v: np.ndarray) -> np.ndarray:
    """The logistic function of a binary64 array (IEEE: +-inf give 1 and 0)."""
    out: np.ndarray = 1.0 / (1.0 + np.exp(-v))
    return out


def _gelu64(v: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        out: np.ndarray = 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v * v * v)))
        return out
    return 0.5 * v * (1.0 + erf(v * (1 / math.sqrt(2.0))))


_SELU = REGISTRY["selu"]["constants"]  # a and s of the registry's formula
_SOFTPLUS = ACTIVATION_DEFAULTS["softplus"]  # mish's softplus: beta 1, threshold 20


def _relu(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.maximum(x, _F32(0))  # NaN stays NaN
    return out


def _hardtanh(x: np.ndarray, min_val: float = -1.0, max_val: float = 1.0) -> np.ndarray:
    out: np.ndarray = np.minimum(np.maximum(x, _F32(min_val)), _F32(max_val))  # NaN stays NaN
    return out


def _leaky_relu(x: np.ndarray, negative_slope: float = 0.01) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(x >= 0, x, x * _F32(negative_slope)).astype(_F32)


def _in64(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """An activation of float32 arrays from ``fn`` of binary64 blocks (and the node's parameters)."""
    return lambda x, *args, **p: _blocked(lambda v: fn(v, *args, **p), x)


#: The activations whose binary64 formula can overwrite its argument (a binary64 array the caller owns): name -> it.
#: np.tanh gives the same bits in place as into a new array (checked over every float32 input).
IN_PLACE: Mapping[str, Callable[[np.ndarray], np.ndarray]] = {"tanh": lambda v: np.tanh(v, out=v)}

_FUNCTIONS: Mapping[str, Callable[..., np.ndarray]] = implementations(
    REGISTRY,
    {
        "identity": lambda x: x,
        "relu": _relu,
        "tanh": _in64(IN_PLACE["tanh"]),  # on _blocked's own binary64 copy
        "sigmoid": _in64(sigmoid64),
        "elu": _in64(lambda v, alpha=1.0: np.where(v > 0, v, alpha * np.expm1(np.minimum(v, 0.0)))),
        "leaky_relu": _leaky_relu,
        "silu": _in64(lambda v: v * sigmoid64(v)),
        "gelu": _in64(_gelu64),
        "softplus": _in64(_softplus64),
        "hardtanh": _hardtanh,
        "selu": _in64(lambda v: _SELU["s"] * np.where(v > 0, v, _SELU["a"] * np.expm1(np.minimum(v, 0.0)))),
        "celu": _in64(lambda v, alpha=1.0: np.where(v > 0, v, alpha * np.expm1(np.minimum(v, 0.0) / alpha))),
        "mish": _in64(lambda v: v * np.tanh(_softplus64(v, **_SOFTPLUS))),
        "hardswish": _in64(lambda v: v * np.minimum(np.maximum(v + 3.0, 0.0), 6.0) / 6.0),
        "hardsigmoid": _in64(lambda v: np.minimum(np.maximum(v + 3.0, 0.0), 6.0) / 6.0),
        "softsign": _in64(lambda v: v / (1.0 + np.abs(v))),
    },
    "activations of the NumPy evaluator",
)

#: name -> (function of (x, **parameters), the parameters it takes with their defaults (the registry's))
ACTIVATIONS: Mapping[str, tuple[Callable[..., np.ndarray], dict[str, Any]]] = {
    name: (_FUNCTIONS[name], dict(defaults)) for name, defaults in ACTIVATION_DEFAULTS.items()
}
