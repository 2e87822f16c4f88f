"""Optimizer parameters by name (spec §7.9): the checks of ``param_tensors``, and which parameter each state tensor is of.

An optimizer state (spec §7.9) holds its parameters by position: its
``param_groups`` list ids, its ``state`` maps each id to that parameter's
entries (Adam's ``step``, ``exp_avg``, ``exp_avg_sq``), their tensors in the
group ``optimizer.NAME``. A parameter group may name its parameters by the
tensors of the group ``policy`` they are, in ``param_tensors`` beside
``params``. :func:`check` applies the rules of §7.9 to it (§11.1 step 9; the
JavaScript reader's ``param_tensors.js`` has the same). :func:`state_parameters`
tells, for each tensor of an optimizer's group, the parameter it belongs to:
by ``param_tensors`` when the archive records them, else guessed by shape
(the archive of an older writer), and marked so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import RlarchiveError, esc

__all__ = ["PARAM_TENSORS", "POLICY_GROUP", "Parameter", "check", "states", "state_parameters"]

#: The member of a parameter group that names its parameters.
PARAM_TENSORS = "param_tensors"
#: The tensor group the names are in.
POLICY_GROUP = "policy"
_DATA = "data.json"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_map(v: Any) -> bool:
    return isinstance(v, dict) and "$type" not in v


def _param_groups(opt: Any) -> list[Any]:
    """The ``param_groups`` of an optimizer value (raw JSON) when it is a map holding a list of them, else []."""
    groups = opt.get("param_groups") if _is_map(opt) else None
    return groups if isinstance(groups, list) else []


def states(opt: Any) -> dict[int, Any]:
    """Parameter id -> its state in an optimizer value (raw JSON): the entries of its ``state`` (a ``dict``, spec
    §7.5) whose key is a plain integer (distinct: step 7 checked the keys), read once, so that looking a parameter
    up costs nothing however many there are."""
    state = opt.get("state") if _is_map(opt) else None
    if not (isinstance(state, dict) and state.get("$type") == "dict" and isinstance(state.get("entries"), list)):
        return {}
    return {e[0]: e[1] for e in state["entries"] if isinstance(e, list) and len(e) == 2 and _is_int(e[0])}


def ndarrays(v: Any) -> Iterator[dict[str, Any]]:
    """Every ``ndarray`` value inside a raw JSON value, depth first, in document order."""
    if isinstance(v, list):
        for x in v:
            yield from ndarrays(x)
    elif isinstance(v, dict):
        if v.get("$type") == "ndarray":
            yield v
            return
        for x in v.values():
            yield from ndarrays(x)


def fits(state_shape: Any, tensor_shape: Any) -> bool:
    """Whether a state tensor's shape fits its parameter's (spec §7.9): no dimension, or the parameter's rank with
    every dimension equal to the parameter's or 1."""
    s, t = list(state_shape), list(tensor_shape)
    return not s or (len(s) == len(t) and all(a == b or a == 1 for a, b in zip(s, t)))


def _fail(code: str, message: str, pointer: str) -> RlarchiveError:
    return RlarchiveError(code, message, member=_DATA, pointer=pointer)


def _check_group(
    by_id: Mapping[int, Any], g: dict[str, Any], ptr: str, seen: set[str], policy: Mapping[str, Any] | None
) -> None:
    names = g[PARAM_TENSORS]
    if not isinstance(names, list):
        raise _fail("VALUE_INVALID", f"{PARAM_TENSORS} must be a list of tensor names", ptr)
    for j, n in enumerate(names):
        if not isinstance(n, str):
            raise _fail("VALUE_INVALID", f"{PARAM_TENSORS} holds {type(n).__name__}, not a tensor name", f"{ptr}/{j}")
    params = g.get("params")
    if not (isinstance(params, list) and all(_is_int(p) for p in params) and len(params) == len(names)):
        raise _fail("VALUE_INVALID", f"{PARAM_TENSORS} must name as many parameters as params lists ids", ptr)
    for j, (n, pid) in enumerate(zip(names, params)):
        if n in seen:
            raise _fail("VALUE_INVALID", f"{PARAM_TENSORS} names {n[:200]!r} twice", f"{ptr}/{j}")
        seen.add(n)
        if policy is None:
            continue
        if n not in policy:
            raise _fail("REF_NOT_FOUND", f"no tensor {n[:200]!r} in group {POLICY_GROUP!r}", f"{ptr}/{j}")
        for nd in ndarrays(by_id.get(pid)):
            if not fits(nd["shape"], policy[n]):
                raise _fail(
                    "REF_MISMATCH",
                    f"the state of parameter {pid} holds a tensor of shape {nd['shape']}, which does not fit "
                    f"{n[:200]!r} of shape {list(policy[n])}",
                    f"{ptr}/{j}",
                )


def check(optimizers: Mapping[str, Any], policy: Mapping[str, Any] | None) -> RlarchiveError | None:
    """The first broken rule of the optimizer states' ``param_tensors`` (spec §7.9), or None.

    Args:
        optimizers: the ``optimizers`` of ``data.json`` (raw JSON, already through step 7).
        policy: tensor name -> shape of the group ``policy`` (empty when there is none), or None when its
            member failed at step 8: then only the rules on the names themselves are checked.
    """
    for name, opt in optimizers.items():
        seen: set[str] = set()
        by_id: dict[int, Any] | None = None
        for i, g in enumerate(_param_groups(opt)):
            if _is_map(g) and PARAM_TENSORS in g:
                by_id = states(opt) if by_id is None else by_id
                try:
                    _check_group(by_id, g, f"/optimizers/{esc(name)}/param_groups/{i}/{PARAM_TENSORS}", seen, policy)
                except RlarchiveError as e:
                    return e
    return None


# ---------------------------------------------------------------- the parameter of each state tensor


@dataclass(frozen=True)
class Parameter:
    """The parameter a tensor of an optimizer's state belongs to.

    Attributes:
        group: the tensor group the parameter is in (``policy``; a guess may find ``variables``).
        name: the parameter's tensor name.
        entry: the tensor's place in the parameter's state (``exp_avg``; ``""`` for the state itself).
        recorded: True when the archive names it (``param_tensors``); False for a guess by shape.
        certain: for a guess, whether no other parameter of the module has that shape.
    """

    group: str
    name: str
    entry: str
    recorded: bool
    certain: bool = True


_LAST = {"weight": 0, "bias": 1}


def _order_key(name: str) -> tuple[Any, ...]:
    """PyTorch's usual order of parameter names: component by component, numbers as numbers, ``weight`` before ``bias``."""
    return tuple(
        (0, int(p), "") if p.isdigit() else (1, _LAST[p], "") if p in _LAST else (2, 0, p) for p in name.split(".")
    )


def _candidates(infos: Mapping[str, Mapping[str, Any]], optimizer: str) -> list[tuple[str, str, tuple[Any, ...]]]:
    """The parameters optimizer ``optimizer`` may optimize, (group, name, shape) in PyTorch's usual order (Annex B:
    ``policy.optimizer`` the whole policy, ``actor.optimizer`` the tensors ``actor.*``, ``ent_coef_optimizer`` the
    variable ``log_ent_coef``)."""
    module = re.sub(r"[._]optimizer$", "", optimizer)
    policy = [(POLICY_GROUP, n, tuple(s)) for n, s in infos.get(POLICY_GROUP, {}).items()]
    variables = [("variables", n, tuple(s)) for n, s in infos.get("variables", {}).items()]
    prefixed = policy if module == POLICY_GROUP else [c for c in policy if c[1].startswith(module + ".")]
    named = [c for c in variables if module in c[1]]
    found = prefixed or named or variables + policy
    return sorted(found, key=lambda c: _order_key(c[1]))


def _state_tensors(state: Any, group: str) -> list[tuple[str, str, list[Any]]]:
    """(tensor name, entry, shape) of each reference into ``group`` in the state of one parameter."""
    out = []
    for entry, nd in _entries(state, ""):
        ref = nd.get("ref")
        if isinstance(ref, dict) and ref.get("group") == group and isinstance(ref.get("name"), str):
            out.append((ref["name"], entry, list(nd["shape"])))
    return out


def _entries(v: Any, at: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(place, ndarray) of every ``ndarray`` inside a parameter's state: the place is the entry's key path (``exp_avg``)."""
    if isinstance(v, dict) and v.get("$type") == "ndarray":
        yield at, v
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _entries(x, f"{at}.{i}" if at else str(i))
    elif isinstance(v, dict):
        for k, x in v.items():
            if k != "$type":
                yield from _entries(x, f"{at}.{k}" if at else str(k))


def state_parameters(optimizer: str, opt: Any, infos: Mapping[str, Mapping[str, Any]]) -> dict[str, Parameter]:
    """Tensor name in the group ``optimizer.NAME`` -> the :class:`Parameter` it belongs to, for optimizer ``optimizer``.

    Args:
        optimizer: the optimizer's name.
        opt: its value in ``data.json`` (raw JSON).
        infos: group -> {tensor name -> shape} of the archive (``policy`` and ``variables`` are used).

    The parameters ``param_tensors`` names are taken as recorded; the others are matched by the shape of their
    state to a parameter of the module the optimizer belongs to, in PyTorch's usual order (``recorded`` False,
    ``certain`` when no other parameter of the module has that shape). A tensor whose parameter cannot be told is
    left out.
    """
    group = "optimizer." + optimizer
    out: dict[str, Parameter] = {}
    positions: list[Any] = []
    named: dict[Any, str] = {}
    for g in _param_groups(opt):
        params = g.get("params") if _is_map(g) else None
        if not isinstance(params, list):
            continue
        positions += [p for p in params if _is_int(p)]
        names = g.get(PARAM_TENSORS)
        if isinstance(names, list) and len(names) == len(params):
            named.update({p: n for p, n in zip(params, names) if _is_int(p) and isinstance(n, str)})
    recorded = {(POLICY_GROUP, n) for n in named.values()}
    by_shape: dict[tuple[Any, ...], list[tuple[str, str]]] = {}  # the module's parameters of each shape, in order
    for g, n, dims in _candidates(infos, optimizer):
        by_shape.setdefault(dims, []).append((g, n))
    taken: dict[tuple[Any, ...], int] = {}  # how far the guesses went into each shape's list
    by_id = states(opt)
    for pid in positions:
        tensors = _state_tensors(by_id.get(pid), group)
        if pid in named:
            out.update({t: Parameter(POLICY_GROUP, named[pid], entry, True) for t, entry, _ in tensors})
            continue
        shape = next((tuple(s) for _, _, s in tensors if s), ())  # () for a state of no shaped tensor: no fit
        fit = by_shape.get(shape, []) if shape else []
        i = taken.get(shape, 0)
        while i < len(fit) and fit[i] in recorded:
            i += 1
        if i >= len(fit):
            continue
        taken[shape] = i + 1  # each shape's candidates are taken in order: the lookups cost their number in all
        pick = fit[i]
        out.update({t: Parameter(pick[0], pick[1], entry, False, len(fit) == 1) for t, entry, _ in tensors})
    return out
