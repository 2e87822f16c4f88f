"""The value of the extension ``RLA_replay_buffer`` on the bridge's side: its classes, HER's info dicts, its checks.

What :mod:`rlarchive.sb3.replay_buffer` (a live buffer, a model) and
:mod:`rlarchive.sb3.replay_buffer_import` (the file SB3's
``save_replay_buffer`` writes) share: the buffer classes carried
(:data:`SB3_CLASSES`), HER's info dicts as values of spec §7 counted against
``MAX_JSON_BYTES`` as they come (:func:`infos_value`), and the checks a
writer runs before anything is written (:func:`check_value`,
:func:`check_spaces`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..describe import counted
from ..errors import RlarchiveError

if TYPE_CHECKING:
    from ..tensors import TensorData

__all__ = [
    "SB3_CLASSES",
    "ROW_KEYS",
    "unsupported",
    "class_name",
    "info_error",
    "infos_value",
    "infos_array",
    "check_value",
    "check_spaces",
    "transitions",
    "describe",
]


#: The buffer classes carried: value ``class`` -> (module, class name) in Stable-Baselines3.
SB3_CLASSES: Mapping[str, tuple[str, str]] = {
    "ReplayBuffer": ("stable_baselines3.common.buffers", "ReplayBuffer"),
    "DictReplayBuffer": ("stable_baselines3.common.buffers", "DictReplayBuffer"),
    "HerReplayBuffer": ("stable_baselines3.her.her_replay_buffer", "HerReplayBuffer"),
    "NStepReplayBuffer": ("stable_baselines3.common.buffers", "NStepReplayBuffer"),
}
#: The per-row arrays of every buffer, [buffer_size, n_envs] of float32.
ROW_KEYS = ("rewards", "dones", "timeouts")


def unsupported(msg: str) -> RlarchiveError:
    """The error for a buffer the extension cannot hold (VALUE_UNSUPPORTED)."""
    return RlarchiveError("VALUE_UNSUPPORTED", msg)


def class_name(buffer: Any) -> str:
    """The value ``class`` of a live buffer: its exact class must be one of :data:`SB3_CLASSES`."""
    cls = type(buffer)
    for name, (module, qualname) in SB3_CLASSES.items():
        if cls.__module__ == module and cls.__qualname__ == qualname:
            return name
    raise unsupported(
        f"the replay buffer is a {cls.__module__}.{cls.__qualname__}; only {', '.join(SB3_CLASSES)} can be stored"
    )


# ---------------------------------------------------------------- HER's info dicts

#: JSON levels of the extension member around one info: ``{"replay_buffer": {"her": {"infos": [[ info ]]}}}``.
_INFO_LEVELS = 5


def info_error(
    row: int, env: int, info: Any, reason: str, code: str = "VALUE_UNSUPPORTED", key: Any = None
) -> RlarchiveError:
    """The error for the info dict of ``row`` and ``env`` (naming ``key`` when given) that cannot be stored."""
    where = f"the info dict of row {row}, environment {env}" + (f", key {key!r}" if key is not None else "")
    return RlarchiveError(code, f"{where} cannot be stored: {reason}")


def _info_json_size(info: Any, row: int, env: int, levels: int) -> int:
    """Bytes of ``info``'s JSON text in the member, once checked to be a value the archive holds (spec §7) within ``levels`` JSON levels."""
    if type(info) is dict and not info:  # a row SB3 has not written yet
        return 2
    if _plain_depth(info, levels) is not None:  # plain JSON (flags, numbers, Monitor's record): its own text
        return len(_PLAIN.encode(info).encode("utf-8"))
    from .. import jsonstrict
    from ..extensions.replay_buffer import GROUP, KEY
    from ..limits import INLINE_ARRAY_BYTES
    from ..values import Encoder

    ptr = f"/{KEY}/her/infos/{row}/{env}"

    def text(x: Any, at: str) -> bytes:
        return jsonstrict.dumps(Encoder(GROUP, {}, INLINE_ARRAY_BYTES).encode(x, at))

    try:
        raw = text(info, ptr)
    except (RlarchiveError, ValueError, RecursionError) as e:
        key = None
        if isinstance(info, dict):  # name the first key whose value cannot be stored
            for k, v in info.items():
                try:
                    text(v, f"{ptr}/{k}")
                except (RlarchiveError, ValueError, RecursionError):
                    key = k
                    break
        if (
            isinstance(e, RecursionError)
            or isinstance(e, RlarchiveError)
            and ("MAX_JSON_DEPTH" in e.message or "MAX_INT_DIGITS" in e.message)
        ):
            reason = e.message if isinstance(e, RlarchiveError) else "it nests too deeply"  # a limit of spec §15
            raise info_error(row, env, info, reason, "LIMIT_EXCEEDED", key) from None
        if isinstance(
            e, RlarchiveError
        ):  # VALUE_UNSUPPORTED, or a key that cannot name an array's tensor (WRITE_INVALID)
            reason = e.message.split("; pass opaque_fallback")[0]
        else:
            reason = f"it is not JSON text ({e})"  # a string that is not Unicode text
        raise info_error(row, env, info, reason, key=key) from None
    depth = jsonstrict.nesting_depth(raw.decode("utf-8"))
    if depth > levels:
        raise info_error(
            row,
            env,
            info,
            f"it nests {depth} levels deep, and the member allows {levels} there (MAX_JSON_DEPTH)",
            "LIMIT_EXCEEDED",
        )
    return len(raw)


#: The text :func:`rlarchive.jsonstrict.dumps` writes, for plain JSON values (compact, literal non-ASCII).
_PLAIN = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _plain_depth(x: Any, room: int) -> int | None:
    """JSON levels of ``x`` when it is plain JSON the value model writes as it is (maps of string keys other than
    ``$type``, lists, strings, booleans, null, safe integers, finite floats) within ``room`` levels; else None."""
    t = type(x)
    if x is None or t is bool or t is str or (t is int and abs(x) <= 2**53 - 1) or (t is float and math.isfinite(x)):
        return 0
    if room <= 0 or not (t is dict or t is list):
        return None
    inner = 0
    for k, v in x.items() if t is dict else enumerate(x):
        if t is dict and (type(k) is not str or k == "$type"):
            return None
        d = _plain_depth(v, room - 1)
        if d is None:
            return None
        inner = max(inner, d)
    return inner + 1


def _json_room(value: Mapping[str, Any]) -> int:
    """Bytes the JSON text of HER's ``infos`` may take in the member of ``value`` (whose ``infos`` is still null)."""
    from .. import jsonstrict
    from ..extensions.replay_buffer import GROUP, KEY
    from ..limits import INLINE_ARRAY_BYTES, MAX_JSON_BYTES
    from ..values import Encoder

    rest = jsonstrict.dumps({KEY: Encoder(GROUP, {}, INLINE_ARRAY_BYTES).encode(value, "/" + KEY)})
    return MAX_JSON_BYTES - len(rest) + len(b"null")


def infos_value(
    rows: Iterable[Sequence[Any]], value: Mapping[str, Any], convert: Callable[[Any, int, int], Any] | None = None
) -> list[list[Any]]:
    """HER's info dicts as the value's ``infos``: ``buffer_size`` lists of ``n_envs`` values (spec RLA_replay_buffer §3).

    ``rows`` gives each row's infos, ``value`` is the buffer's value (its
    ``infos`` still null), and ``convert(item, row, env)``, when given, turns
    an item into the value it stands for (the pickle reader's stand-ins).
    Each info must be a value of spec §7 (maps, lists, numbers, strings,
    arrays, NumPy scalars ...); the items are kept as they are, not copied.
    The JSON text they make is counted as they come, and refused once the
    extension's member would exceed ``MAX_JSON_BYTES`` (spec §15), before
    anything more is converted.

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for an info the value model cannot
            hold, LIMIT_EXCEEDED past ``MAX_JSON_BYTES`` or ``MAX_JSON_DEPTH``;
            the message names the row, the environment and the key.
    """
    from ..limits import MAX_JSON_BYTES, MAX_JSON_DEPTH

    levels = MAX_JSON_DEPTH - _INFO_LEVELS
    size, n_envs = int(value["buffer_size"]), int(value["n_envs"])
    room = _json_room(value)
    used = 1 + size * (n_envs + 2)  # the brackets and commas of B lists of N items: [[a,b],[c,d]]
    if used > room:
        raise RlarchiveError(
            "LIMIT_EXCEEDED",
            f"the info dicts of {size} rows of {n_envs} environments need at least {used} bytes of JSON, beyond what the member holds ({MAX_JSON_BYTES} bytes, MAX_JSON_BYTES)",
        )
    out: list[list[Any]] = []
    for i, row in enumerate(rows):
        items = list(row)
        if i >= size or len(items) != n_envs:
            raise unsupported(f"the infos are not [buffer_size, n_envs] = [{size}, {n_envs}] (row {i} of {len(items)})")
        for j, item in enumerate(items):
            if convert is not None:
                items[j] = item = convert(item, i, j)
            used += _info_json_size(item, i, j, levels)
            if used > room:
                raise info_error(
                    i,
                    j,
                    item,
                    f"the info dicts' JSON reaches {used} bytes there, beyond what the member holds ({MAX_JSON_BYTES} bytes, MAX_JSON_BYTES)",
                    "LIMIT_EXCEEDED",
                )
        out.append(items)
    if len(out) != size:
        raise unsupported(f"the infos have {len(out)} rows, not buffer_size {size}")
    return out


def infos_array(rows: Sequence[Sequence[Any]]) -> np.ndarray:
    """The object array SB3 keeps HER's infos in, holding the given items (not copies)."""
    out = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=object)
    for i, row in enumerate(rows):
        for j, info in enumerate(row):
            out[i, j] = info
    return out


# ---------------------------------------------------------------- what a writer checks


def check_value(value: Mapping[str, Any], data: Mapping[str, Any]) -> None:
    """Check ``value`` as its reader will: every rule of spec RLA_replay_buffer §4, before anything is written.

    ``value`` is a buffer value (:func:`capture`, :func:`read_pickle`) and
    ``data`` the model's data as the archive will hold it (its spaces are
    compared, rule 8). The value is encoded as the writer encodes it (arrays
    referenced, not copied), then checked by the reader's own functions:
    :func:`rlarchive.extensions.replay_buffer.check` (rules 1-7) and
    :func:`rlarchive.extensions.replay_buffer.check_content_of` (rules 8-9, reading
    only the spaces' arrays and HER's indices), so that no writer produces a
    buffer its reader refuses. HER's info dicts count here by their rows'
    lengths only: :func:`infos_value` has checked each of them, and the
    writer checks the values it writes again.

    Raises:
        RlarchiveError: EXTENSION_INVALID with the JSON Pointer of the first
            broken rule (as a reader reports it); a value code (spec §7) for
            a value the archive cannot hold.
    """
    from ..extensions import replay_buffer as ext
    from ..limits import INLINE_ARRAY_BYTES
    from ..values import Checker, Encoder
    from ..writer import ARRAYS_GROUP

    her = value.get("her")
    if isinstance(her, Mapping) and isinstance(
        her.get("infos"), list
    ):  # each info is checked by infos_value; the rules see only their rows' lengths
        value = dict(
            value,
            her=dict(her, infos=[[None] * len(row) if isinstance(row, (list, tuple)) else row for row in her["infos"]]),
        )
    tensors: dict[str, dict[str, TensorData]] = {ext.GROUP: {}, ARRAYS_GROUP: {}}
    encoded = Encoder(ext.GROUP, tensors[ext.GROUP], INLINE_ARRAY_BYTES).encode(value, "/" + ext.KEY)
    Checker().check(encoded, "/" + ext.KEY)
    raw_data: dict[str, Any] = {}
    for key in ("observation_space", "action_space"):  # as the writer encodes data.json
        if key in data:
            try:
                raw_data[key] = Encoder(ARRAYS_GROUP, tensors[ARRAYS_GROUP], INLINE_ARRAY_BYTES).encode(
                    data[key], f"/data/{key}"
                )
            except RlarchiveError:  # not a value the writer takes: it refuses the data itself
                continue

    def tensor(group: str, name: str) -> TensorData:
        t = tensors.get(group, {}).get(name)
        if t is None:
            raise RlarchiveError("REF_NOT_FOUND", f"no tensor {name!r} in group {group!r}")
        return t

    def array_of(group: str, name: str) -> np.ndarray:
        return tensor(group, name).array

    def raw_of(group: str, name: str) -> bytes:
        return tensor(group, name).data.tobytes()  # the element bytes as written (little-endian, C order)

    ext.check(encoded, raw_data)
    ext.check_content_of(encoded, raw_data, raw_of, array_of)


def transitions(value: Mapping[str, Any]) -> int:
    """Transitions the buffer holds: rows in use (``buffer_size`` when full, else ``pos``) times ``n_envs``."""
    return (int(value["buffer_size"]) if value["full"] else int(value["pos"])) * int(value["n_envs"])


def check_spaces(value: Mapping[str, Any], data: Mapping[str, Any]) -> None:
    """Refuse a buffer whose spaces differ from the model's ``data`` (spec RLA_replay_buffer §4 rule 8), with IMPORT_INVALID."""
    from ..values import Encoder

    for key in ("observation_space", "action_space"):
        if key not in data:
            continue
        mine, theirs = (Encoder("", {}, 1 << 62).encode(v, "/" + key) for v in (value[key], data[key]))
        if mine != theirs:
            raise RlarchiveError("IMPORT_INVALID", f"the replay buffer's {key} differs from the model's")


def describe(value: Mapping[str, Any]) -> str:
    """What a buffer value holds, in a few words (for reports)."""
    rows = value["buffer_size"] if value["full"] else value["pos"]
    her = value.get("her")
    infos = ", with the info dicts" if her is not None and her["copy_info_dict"] else ""
    envs = "the environment" if value["n_envs"] == 1 else f"each of {value['n_envs']} environments"
    return f"{value['class']}, {rows} of {value['buffer_size']} rows filled in {envs} ({counted(transitions(value), 'transition')}{infos})"
