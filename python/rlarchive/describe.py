"""One-line, human-readable descriptions of decoded values (spaces, schedules, class references, arrays...),
as ``rlarchive inspect`` prints them and the model card writes them."""

from __future__ import annotations

from typing import Any

from . import spaces as sp
from .schedules import Constant, Linear, Piecewise
from .tensors import RawTensor
from .values import ClassRef, Opaque

__all__ = ["describe", "counted"]


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and ``word`` in the number it takes: ``1 error``, ``2 errors``, ``0 entries`` (``plural`` when not ``word + "s"``)."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def describe(v: Any, depth: int = 0) -> str:
    """A one-line, human-readable description of a decoded value."""
    import numpy as np

    if isinstance(v, sp.Box):
        lo, hi = np.asarray(v.low), np.asarray(v.high)
        bounds = f"[{lo.min()}, {hi.max()}]" if lo.size else "[]"
        return f"Box({v.dtype}, shape={tuple(v.shape)}, bounds {bounds})"
    if isinstance(v, sp.Discrete):
        return f"Discrete(n={v.n}, start={v.start})"
    if isinstance(v, sp.MultiDiscrete):
        return f"MultiDiscrete(nvec={np.asarray(v.nvec).tolist()})"
    if isinstance(v, sp.MultiBinary):
        return f"MultiBinary({v.n})"
    if isinstance(v, sp.Dict):
        return "Dict(" + ", ".join(f"{k}: {describe(s)}" for k, s in v.spaces) + ")"
    if isinstance(v, sp.Tuple):
        return "Tuple(" + ", ".join(describe(s) for s in v.spaces) + ")"
    if isinstance(v, sp.Text):
        return f"Text({v.min_length}..{v.max_length} chars)"
    if isinstance(v, Constant):
        return f"constant schedule {v.value}"
    if isinstance(v, Linear):
        return f"linear schedule {v.start} -> {v.end} over {v.end_fraction} of training"
    if isinstance(v, Piecewise):
        return f"piecewise schedule ({v.interpolation}, {len(v.points)} points)"
    if isinstance(v, ClassRef):
        return f"class {v.name}"
    if isinstance(v, Opaque):
        return f"opaque pickle ({len(v.data)} bytes" + (f", {v.type}" if v.type else "") + ")"
    if isinstance(v, RawTensor):
        return f"array {v.dtype}{list(v.shape)}"
    if isinstance(v, np.ndarray):
        return f"array {v.dtype}{list(v.shape)}" if v.size > 8 else f"array {v.tolist()}"
    if isinstance(v, dict) and depth < 2:
        return (
            "{"
            + ", ".join(f"{k!r}: {describe(x, depth + 1)}" for k, x in list(v.items())[:8])
            + (", ..." if len(v) > 8 else "")
            + "}"
        )
    text = repr(v)
    return text if len(text) <= 100 else text[:97] + "..."
