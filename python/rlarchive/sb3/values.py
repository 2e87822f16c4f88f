"""Neutral values back into the objects Stable-Baselines3 keeps, and an open archive's parts as SB3 holds them.

:class:`Rebuilder` turns decoded values into gymnasium spaces, SB3 schedules,
NumPy arrays and classes (resolved under the allow-list only);
:func:`archive_parts` gives an open archive's data, metadata, state dicts and
variables. Both serve the export (:mod:`rlarchive.sb3.exporting`) and
the load (:mod:`rlarchive.sb3.loading`).
"""

from __future__ import annotations

import json
import sys
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import jsonbounds
from ..errors import RlarchiveError
from ..extensions import replay_buffer as replay_buffer_ext
from ..limits import MAX_INPUT_JSON_MEMORY, MAX_JSON_DEPTH
from ..unpickle import pickler
from ..values import ClassRef, Opaque
from .keys import META_TORCH_VALUES
from .model_zip import escape_pointer, unsupported
from .optimizer_names import without_param_tensors

if TYPE_CHECKING:
    from ..reader import Archive

__all__ = ["Rebuilder", "is_json_serializable", "archive_parts", "buffer_members", "map_leaves"]


# SB3 pickles schedules as FloatSchedule/LinearSchedule/ConstantSchedule objects from 2.7 on, as closures before
_SCHEDULE_CLASSES = (2, 7)
# data keys whose schedules SB3 wraps in FloatSchedule (get_schedule_fn before 2.7)
_FLOAT_SCHEDULE_KEYS = frozenset({"lr_schedule", "clip_range", "clip_range_vf"})
# data keys that SB3 keeps as collections.deque(maxlen=_stats_window_size)
_DEQUE_KEYS = frozenset({"ep_info_buffer", "ep_success_buffer"})


class Rebuilder:
    """Turns decoded rlarchive values back into the Python objects SB3 keeps.

    ``mode`` is ``"export"`` (class references outside the allow-list are
    written by name, opaque values nested in structures are passed through) or
    ``"load"`` (they are refused unless allowed).
    """

    def __init__(
        self,
        mode: str,
        allow: Iterable[str],
        data: Mapping[str, Any],
        target: tuple[int, int] = (99, 0),
        unpickle: bool = False,
    ):
        self.mode = mode
        self.unpickle = unpickle  # load: unpickle opaque values (the caller trusts the archive)
        self.allow = tuple(allow)
        self.data = data
        self.target = target  # the SB3 version (major, minor) that reads the values
        self.optimizer_left_out: str | None = None  # load: the optimizer class left out of policy_kwargs, if any
        self.not_restored: dict[str, str] = {}  # load: data keys not made attributes of the model, and why

    def top(self, key: str, value: Any) -> Any:
        """The object SB3 keeps for the data key ``key`` (a ``TrainFreq``, a ``deque``, a wrapped schedule, or :meth:`value`)."""
        from .. import schedules

        if key == "train_freq" and isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[1], str):
            from stable_baselines3.common.type_aliases import TrainFreq, TrainFrequencyUnit

            try:
                unit = TrainFrequencyUnit(value[1])
            except ValueError:
                raise unsupported(f"data key {key!r}: unknown train frequency unit {value[1][:40]!r}") from None
            return TrainFreq(self.value(value[0], key), unit)
        if key in _DEQUE_KEYS and isinstance(value, list):
            maxlen = self.data.get("_stats_window_size", 100)
            if not (isinstance(maxlen, int) and 0 <= maxlen <= sys.maxsize):
                maxlen = 100
            return deque((self.value(v, key) for v in value), maxlen=maxlen)
        if isinstance(value, (schedules.Constant, schedules.Linear, schedules.Piecewise)):
            return self.schedule(value, wrap=key in _FLOAT_SCHEDULE_KEYS)
        return self.value(value, key)

    def schedule(self, s: Any, wrap: bool) -> Any:
        """A schedule in the form the target SB3 version pickles: classes from 2.7 on, closures before."""
        import warnings

        from stable_baselines3.common import utils as sbu

        from .. import schedules

        inner: Any
        if self.target >= _SCHEDULE_CLASSES and hasattr(sbu, "FloatSchedule"):
            if isinstance(s, schedules.Constant):
                inner = sbu.ConstantSchedule(s.value)
            elif isinstance(s, schedules.Linear):
                inner = sbu.LinearSchedule(s.start, s.end, s.end_fraction)
            else:
                inner = s  # a Piecewise schedule: callable, pickled by reference to rlarchive
            return sbu.FloatSchedule(inner) if wrap else inner
        # SB3 < 2.7: the closure helpers (deprecated, still present, in later versions)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if isinstance(s, schedules.Constant):
                inner = sbu.constant_fn(s.value)
            elif isinstance(s, schedules.Linear):
                inner = sbu.get_linear_fn(s.start, s.end, s.end_fraction)
            else:
                inner = s
            return sbu.get_schedule_fn(inner) if wrap else inner

    def classref(self, ref: ClassRef, key: str) -> Any:
        """The class ``ref`` names, through :meth:`ClassRef.resolve` only (export: by name when not allowed)."""
        if ref.allowed(self.allow):
            try:
                return ref.resolve(self.allow)
            except RlarchiveError as e:
                raise RlarchiveError(e.code, f"data key {key!r}: {e.message}") from None
        if self.mode == "export":
            return pickler.Name(ref.module, ref.qualname)  # written by name: only SB3's own load imports it
        raise RlarchiveError(
            "IMPORT_NOT_ALLOWED",
            f"data key {key!r} names {ref.name}, which is not in the allow-list; pass allow_classes=[{ref.name!r}] to import it",
        )

    def value(self, v: Any, key: str) -> Any:
        """The Python object for the neutral value ``v`` found under the data key ``key``."""
        from .. import schedules, spaces
        from ..tensors import RawTensor

        if v is None or isinstance(v, (bool, int, float, str, bytes)):
            return v
        if isinstance(v, np.ndarray):
            return np.array(v, copy=True)
        if isinstance(v, np.generic):
            return v
        if isinstance(v, list):
            return [self.value(x, key) for x in v]
        if isinstance(v, tuple):
            return tuple(self.value(x, key) for x in v)
        if isinstance(v, dict):
            return {self.value(k, key): self.value(x, key) for k, x in v.items()}
        if isinstance(v, ClassRef):
            return self.classref(v, key)
        if isinstance(v, spaces.Space):
            try:
                return spaces.to_gymnasium(v)
            except (
                TypeError,
                ValueError,
            ) as e:  # a space gymnasium cannot hold (an FP8 box, a dtype older gymnasium lacks)
                raise unsupported(f"data key {key!r}: {e}") from None
        if spaces.is_gymnasium_space(v):
            return v
        if isinstance(v, (schedules.Constant, schedules.Linear, schedules.Piecewise)):
            return self.schedule(v, wrap=False)
        if isinstance(v, Opaque):
            if (
                self.mode == "export"
            ):  # written as pickle.loads(original bytes), which an import reads back as this value
                return pickler.Call(pickler.Name("pickle", "loads"), (v.data,))
            if self.unpickle:
                return v.unpickle(trusted=True)
            raise RlarchiveError("PICKLE_NOT_ALLOWED", f"data key {key!r} holds a nested opaque value")
        if isinstance(v, RawTensor):
            return v.to_torch()
        if type(v).__module__ == "torch" and type(v).__name__ == "Tensor":  # a torch value (metadata sb3.torch_values)
            return v.clone()
        raise unsupported(f"data key {key!r}: cannot rebuild a {type(v).__name__} for Stable-Baselines3")


def is_json_serializable(obj: Any) -> bool:
    """Whether SB3 would write ``obj`` into its ``data`` member as plain JSON (as its ``data_to_json`` tries)."""
    try:
        json.dumps(obj)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def buffer_members(ar: Archive) -> tuple[str, ...]:
    """The tensor members of the archive's replay buffer (extension RLA_replay_buffer), if any."""
    from ..reader import member_of

    return (member_of(replay_buffer_ext.GROUP),) if replay_buffer_ext.GROUP in ar.groups else ()


def archive_parts(
    ar: Archive, copy: bool, unverified: Iterable[str] = ()
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(data, metadata, params, variables) of an open, verified archive.

    With ``copy=False`` tensors view the archive's mapped file: use them before it closes.
    ``unverified`` names members whose CRC-32 and digest are not checked here (spec §1.2).
    """
    ar.verify(skip=unverified)
    ar.check_extensions()
    data = dict(ar.data)
    # copy arrays out of the mapped file
    data = {k: _copy_arrays(v) for k, v in data.items()}
    metadata = dict(ar.metadata)
    params: dict[str, Any] = {}
    variables: dict[str, Any] = {}
    from ..extensions import SUPPORTED

    extension_groups = {e.group for e in SUPPORTED.values()}  # arrays of extension members, not SB3 state
    for g in ar.groups:
        if g == "arrays" or g.startswith("optimizer.") or g in extension_groups:
            continue
        ts = ar.tensors(g, framework="torch")
        if copy:
            ts = {k: v.clone() for k, v in ts.items()}
        if g == "variables":
            variables = ts
        else:
            params[g] = ts
    for name in ar.optimizer_names:
        params[name] = without_param_tensors(_clone_tensors(ar.optimizer(name, framework="torch")))
    # policy first, as SB3 writes it
    ordered = {k: params[k] for k in sorted(params, key=lambda n: (n != "policy", n))}
    if META_TORCH_VALUES in metadata:
        try:  # within bounds: the value is the archive's, and any text can be there
            pointers = jsonbounds.loads(
                metadata[META_TORCH_VALUES].encode("utf-8", "surrogatepass"),
                max_depth=MAX_JSON_DEPTH,
                max_memory=MAX_INPUT_JSON_MEMORY,
            )
        except ValueError:  # not JSON, or beyond a bound (JSONBoundsError)
            pointers = None
        if not (isinstance(pointers, list) and all(isinstance(p, str) for p in pointers)):
            raise unsupported(f"metadata {META_TORCH_VALUES} is not a JSON list of JSON Pointers")
        data = _torch_values(data, pointers)
    return data, metadata, ordered, variables


def map_leaves(v: Any, leaf: Callable[[Any], Any]) -> Any:
    """``v`` with every non-container inside lists, tuples and dicts replaced by ``leaf(x)``."""
    if isinstance(v, list):
        return [map_leaves(x, leaf) for x in v]
    if isinstance(v, tuple):
        return tuple(map_leaves(x, leaf) for x in v)
    if isinstance(v, dict):
        return {k: map_leaves(x, leaf) for k, x in v.items()}
    return leaf(v)


def _copy_arrays(v: Any) -> Any:
    """A copy of ``v`` whose NumPy arrays no longer view the archive's memory map."""
    return map_leaves(v, lambda x: np.array(x, copy=True) if isinstance(x, np.ndarray) else x)


def _clone_tensors(v: Any) -> Any:
    """A copy of ``v`` with torch tensors cloned and NumPy arrays turned into torch tensors."""
    import torch

    def leaf(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return x.clone()
        if isinstance(x, np.ndarray):
            return torch.from_numpy(np.array(x, copy=True))
        return x

    return map_leaves(v, leaf)


def _torch_values(data: dict[str, Any], pointers: Iterable[str]) -> dict[str, Any]:
    """``data`` with the arrays at ``pointers`` (metadata ``sb3.torch_values``) turned into torch tensors."""
    import torch

    def at(v: Any, parts: list[str]) -> Any:
        if not parts:
            return torch.from_numpy(np.array(v, copy=True)) if isinstance(v, np.ndarray) else v
        head, rest = parts[0], parts[1:]
        if isinstance(v, dict):
            key = next((k for k in v if (escape_pointer(k) if isinstance(k, str) else str(k)) == head), None)
            if key is None:
                return v
            return {**v, key: at(v[key], rest)}
        if isinstance(v, (list, tuple)) and head.isdigit() and int(head) < len(v):
            items = list(v)
            items[int(head)] = at(items[int(head)], rest)
            return type(v)(items) if isinstance(v, tuple) else items
        return v

    for p in pointers:
        if isinstance(p, str) and p.startswith("/"):
            data = at(data, p[1:].split("/"))
    return data
