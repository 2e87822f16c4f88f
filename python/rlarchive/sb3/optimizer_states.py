"""An archive's optimizer states, checked against the optimizers of the model they are loaded into.

SB3's ``set_parameters`` hands each state to torch's ``load_state_dict``,
which compares only the number of parameter groups and their sizes: a moment
of another shape than its parameter, a parameter group without its
learning rate, ``amsgrad`` without its maximum, ``capturable`` on a device
that cannot capture, a negative step... all load, and the first training step
crashes or quietly computes something else. So :func:`check_form` looks at a
state's form before torch sees it, and :func:`check_loaded` at what the
optimizer holds once torch has loaded it (its parameter groups with the
defaults torch fills in, its per-parameter states cast to the parameters'
dtype and device), against the optimizer the model built: the same
hyperparameters and flags of the same kinds (finite numbers, values the
optimizer class accepts), the flags that change what a step computes equal to
the model's, no flag the device cannot honour, and for every parameter the
state entries its class keeps (:data:`STATE_ENTRIES`), of the parameter's
shape, finite, and non-negative where they are squares. Every refusal is
``VALUE_UNSUPPORTED`` naming the optimizer, the parameter group or the
parameter, and the entry.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import RlarchiveError

__all__ = ["STATE_ENTRIES", "check_form", "check_sizes", "check_loaded"]

#: Per-parameter state of each optimizer class (by name in ``torch.optim``, or SB3's RMSpropTFLike): entry ->
#: (kind, when it is required). Kinds: ``step`` (a non-negative whole number, or a 0-dimensional real tensor
#: holding one), ``scalar`` (a finite number or 0-dimensional tensor), ``param`` (a finite tensor of the
#: parameter's shape), ``square`` (the same, non-negative), ``param?`` (``param`` or None), ``row`` and
#: ``col`` (Adafactor's factored second moments, non-negative). When: None (always), a hyperparameter whose
#: value makes it required (``amsgrad``, ``momentum``, ``centered``; allowed otherwise), ``matrix`` or
#: ``vector`` (required for a parameter of two or more dimensions, or of fewer, and allowed only then).
STATE_ENTRIES: Mapping[str, Mapping[str, tuple[str, str | None]]] = {
    "Adam": {"step": ("step", None), "exp_avg": ("param", None), "exp_avg_sq": ("square", None),
             "max_exp_avg_sq": ("square", "amsgrad")},
    "AdamW": {"step": ("step", None), "exp_avg": ("param", None), "exp_avg_sq": ("square", None),
              "max_exp_avg_sq": ("square", "amsgrad")},
    "Adamax": {"step": ("step", None), "exp_avg": ("param", None), "exp_inf": ("square", None)},
    "NAdam": {"step": ("step", None), "mu_product": ("scalar", None), "exp_avg": ("param", None),
              "exp_avg_sq": ("square", None)},
    "RAdam": {"step": ("step", None), "exp_avg": ("param", None), "exp_avg_sq": ("square", None)},
    "SparseAdam": {"step": ("step", None), "exp_avg": ("param", None), "exp_avg_sq": ("square", None)},
    "RMSprop": {"step": ("step", None), "square_avg": ("square", None), "momentum_buffer": ("param", "momentum"),
                "grad_avg": ("param", "centered")},
    "RMSpropTFLike": {"step": ("step", None), "square_avg": ("square", None),
                      "momentum_buffer": ("param", "momentum"), "grad_avg": ("param", "centered")},
    "SGD": {"momentum_buffer": ("param?", "")},
    "Muon": {"momentum_buffer": ("param", "")},
    "Adagrad": {"step": ("step", None), "sum": ("square", None)},
    "Adadelta": {"step": ("step", None), "square_avg": ("square", None), "acc_delta": ("square", None)},
    "ASGD": {"step": ("step", None), "eta": ("scalar", None), "mu": ("scalar", None), "ax": ("param", None)},
    "Rprop": {"step": ("step", None), "prev": ("param", None), "step_size": ("square", None)},
    "Adafactor": {"step": ("step", None), "row_var": ("row", "matrix"), "col_var": ("col", "matrix"),
                  "variance": ("square", "vector")},
}  # fmt: skip
_SB3_CLASSES = {"stable_baselines3.common.sb2_compat.rmsprop_tf_like.RMSpropTFLike": "RMSpropTFLike"}
#: Flags that choose how a step is computed, not what it computes: any value of their kind is accepted.
_IMPLEMENTATION_FLAGS = ("foreach", "fused")


def _refuse(name: str, msg: str) -> RlarchiveError:
    return RlarchiveError("VALUE_UNSUPPORTED", f"the optimizer state {name} does not fit the model's optimizer: {msg}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_form(name: str, sd: Any) -> None:
    """The form torch's ``load_state_dict`` relies on: groups of distinct integer ids, a state keyed by them."""
    if not (isinstance(sd, dict) and set(sd) == {"state", "param_groups"}):
        raise _refuse(name, "it is not a map of exactly state and param_groups")
    groups, state = sd["param_groups"], sd["state"]
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        raise _refuse(name, "param_groups is not a list of maps")
    ids: set[int] = set()
    for i, g in enumerate(groups):
        params = g.get("params")
        if not (isinstance(params, list) and all(_is_int(p) for p in params)) or not all(isinstance(k, str) for k in g):
            raise _refuse(name, f"param group {i} has no list of integer params, or a key that is not a string")
        if ids & set(params) or len(set(params)) != len(params):
            raise _refuse(name, f"param group {i} repeats a parameter id")
        ids |= set(params)
    if not isinstance(state, dict):
        raise _refuse(name, "state is not a map")
    for k, v in state.items():
        if not _is_int(k) or k not in ids:
            raise _refuse(name, f"its state has the key {k!r}, which is no parameter of its groups")
        if not (isinstance(v, dict) and all(isinstance(e, str) for e in v)):
            raise _refuse(name, f"the state of parameter {k} is not a map of named entries")


def check_sizes(name: str, sd: Mapping[str, Any], optimizer: Any) -> None:
    """As many parameter groups as the model's optimizer, each with as many parameters."""
    mine = optimizer.param_groups
    if len(sd["param_groups"]) != len(mine):
        raise _refuse(name, f"it has {len(sd['param_groups'])} parameter groups, the model's optimizer {len(mine)}")
    for i, (g, m) in enumerate(zip(sd["param_groups"], mine)):
        if len(g["params"]) != len(m["params"]):
            raise _refuse(name, f"param group {i} has {len(g['params'])} parameters, the model's {len(m['params'])}")


def _finite(v: Any) -> bool:
    import torch

    if isinstance(v, torch.Tensor):
        return bool(torch.isfinite(v).all()) if (v.is_floating_point() or v.is_complex()) else True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, (tuple, list)):
        return all(_finite(x) for x in v)
    return True


def _same_kind(mine: Any, theirs: Any) -> bool:
    """``theirs`` is a value of the kind of the model's own ``mine`` (flags, finite numbers, sequences of them, ...)."""
    import torch

    number = (int, float)
    if isinstance(mine, bool):
        return theirs is None or isinstance(theirs, bool)
    if mine is None:
        return theirs is None or isinstance(theirs, (bool, str, *number))
    if isinstance(mine, number):
        return isinstance(theirs, number) and not isinstance(theirs, bool)
    if isinstance(mine, (tuple, list)):
        return (
            isinstance(theirs, (tuple, list))
            and len(theirs) == len(mine)
            and all(_same_kind(a, b) for a, b in zip(mine, theirs))
        )
    if isinstance(mine, torch.Tensor):
        return isinstance(theirs, torch.Tensor) and theirs.shape == mine.shape
    return type(theirs) is type(mine)


def _class_name(optimizer: Any) -> str | None:
    import torch

    cls = type(optimizer)
    name: str = cls.__name__
    if getattr(torch.optim, name, None) is cls:
        return name
    return _SB3_CLASSES.get(f"{cls.__module__}.{cls.__qualname__}")


def _check_group(name: str, optimizer: Any, defaults: Mapping[str, Any], i: int, g: Mapping[str, Any]) -> None:
    """Parameter group ``i`` of ``optimizer`` after the load, against the ``defaults`` the model built it with."""
    for k, mine in defaults.items():
        if k not in g:
            raise _refuse(name, f"param group {i} lacks {k!r}")
        if not _same_kind(mine, g[k]) or not _finite(g[k]):
            raise _refuse(name, f"param group {i} has {k} = {g[k]!r}, not a value of the kind of the model's {mine!r}")
        if isinstance(mine, bool) and k not in _IMPLEMENTATION_FLAGS and bool(g[k]) != mine:
            raise _refuse(name, f"param group {i} has {k} = {g[k]!r}, the model's optimizer {mine!r}")
    if g.get("differentiable"):
        raise _refuse(name, f"param group {i} has differentiable = True, which a training step does not use")
    if g.get("capturable"):
        try:
            from torch.optim.optimizer import _get_capturable_supported_devices

            devices = list(_get_capturable_supported_devices())
        except ImportError:
            devices = ["cuda"]
        if any(p.device.type not in devices for p in g["params"]):
            raise _refuse(name, f"param group {i} has capturable = True and parameters on a device that cannot capture")
    if _class_name(optimizer) is not None:  # the class's own checks of its hyperparameters (ranges, flags together)
        given = {k: g[k] for k in defaults}
        if isinstance(given.get("lr"), (int, float)) and given["lr"] < 0:
            # SB3 sets lr from its schedule before every update; a linear schedule run past its end (the last
            # rollout passes total_timesteps) leaves a slightly negative one in the files SB3 writes: kept as it is
            given["lr"] = 0.0
        try:
            type(optimizer)(g["params"], **given)
        except (TypeError, ValueError, RuntimeError) as e:
            raise _refuse(name, f"param group {i}: {type(optimizer).__name__} refuses it: {str(e)[:200]}") from None


def _entry_ok(kind: str, v: Any, p: Any) -> bool:
    """Whether the state entry ``v`` of parameter ``p`` is of ``kind`` (see :data:`STATE_ENTRIES`)."""
    import torch

    if kind == "param?" and v is None:
        return True
    if kind in ("step", "scalar"):
        if isinstance(v, torch.Tensor):
            if v.dim() != 0 or v.dtype == torch.bool or v.is_complex():
                return False
            v = v.item()
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            return False
        return kind == "scalar" or (v >= 0 and float(v).is_integer())
    if not isinstance(v, torch.Tensor) or v.is_complex() or not _finite(v):
        return False
    shape = list(p.shape)
    if kind == "row":
        shape = shape[:-1] + [1]
    elif kind == "col":
        shape = shape[:-2] + [1] + shape[-1:]
    if list(v.shape) != shape:
        return False
    return kind not in ("square", "row", "col") or bool((v >= 0).all())


def _check_state(
    name: str, where: str, entries: Mapping[str, tuple[str, str | None]] | None, g: Any, p: Any, st: Mapping[str, Any]
) -> None:
    """The state of one parameter: the entries its class keeps (for another class: tensors of its shape), each of its kind."""
    if entries is None:
        entries = {k: ("step" if k == "step" else "param?", "") for k in st}
    for k, (kind, when) in entries.items():
        need = when is None or (when == "matrix" and p.dim() > 1) or (when == "vector" and p.dim() <= 1)
        need = need or (when not in ("", "matrix", "vector") and bool(g.get(when)))
        banned = (when == "matrix" and p.dim() <= 1) or (when == "vector" and p.dim() > 1)
        if need and k not in st:
            raise _refuse(name, f"the state of {where} lacks {k!r}")
        if banned and k in st:
            raise _refuse(name, f"the state of {where} has {k!r}, which a parameter of its shape does not keep")
        if k in st and not _entry_ok(kind, st[k], p):
            raise _refuse(name, f"the state of {where} has an entry {k!r} that is not {_KINDS[kind]}")
    unknown = [k for k in st if k not in entries]
    if unknown:
        raise _refuse(name, f"the state of {where} has {unknown[0]!r}, which its optimizer does not keep")


_KINDS = {
    "step": "a non-negative whole number",
    "scalar": "a finite number",
    "param": "a finite tensor of the parameter's shape",
    "param?": "a finite tensor of the parameter's shape (or null)",
    "square": "a finite, non-negative tensor of the parameter's shape",
    "row": "a finite, non-negative tensor of the parameter's row shape",
    "col": "a finite, non-negative tensor of the parameter's column shape",
}


def check_loaded(name: str, optimizer: Any, defaults: Mapping[str, Any]) -> None:
    """What ``optimizer`` holds once the archive's state is loaded, against what the model built it with.

    ``defaults`` are the optimizer's hyperparameters as the model built it, taken before the load
    (torch's ``load_state_dict`` adds to them).

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED naming the group or parameter and the entry.
    """
    cls = _class_name(optimizer)
    entries = STATE_ENTRIES.get(cls) if cls is not None else None
    params = {id(p) for g in optimizer.param_groups for p in g["params"]}
    stray = [k for k in optimizer.state if id(k) not in params]
    if stray:
        raise _refuse(name, "its state has an entry for no parameter of its groups")
    for i, g in enumerate(optimizer.param_groups):
        _check_group(name, optimizer, defaults, i, g)
        for j, p in enumerate(g["params"]):
            st = optimizer.state.get(p)
            if st:
                _check_state(name, f"parameter {j} of param group {i} (shape {list(p.shape)})", entries, g, p, st)
