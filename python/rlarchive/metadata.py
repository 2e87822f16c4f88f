"""The metadata keys the specification defines (spec/metadata.md): provenance and evaluations.

The manifest's ``metadata`` is an object of strings (spec §5.1). Some keys have a
defined meaning and format: the environment the agent was trained in, the run's
size, the library versions, the wrappers that matter for acting, and the
evaluations run with the portable policy. Any other key stays free text.

:func:`check` gives one ``METADATA_INVALID`` warning (member ``manifest.json``,
pointer ``/metadata/KEY``) per defined key whose value breaks its format, in the
order of the metadata object; a reader still reads the archive, and a program
that needs the value refuses it (:func:`parsed`). :func:`parsed` gives the
well-formed defined values as Python values.

An environment id read from an archive is a hint for the user: nothing here
resolves it. Gymnasium ids can name modules to import (``module:Env``); the
id an evaluation runs comes from the caller, or is the recorded one only when
:mod:`rlarchive.env_ids` finds it registered in the installed gymnasium.

``license`` names the licence the agent is published under; ``dropped`` lists
the parts an inference-only rewrite removed (:mod:`rlarchive.strip`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import jsonstrict
from .errors import RlarchiveError, esc

__all__ = [
    "ENV_ID",
    "N_ENVS",
    "NUM_TIMESTEPS",
    "SEED",
    "VERSIONS_PREFIX",
    "WRAPPERS",
    "EVALUATIONS",
    "check",
    "check_value",
    "parsed",
    "MAX_WRAPPERS",
    "ZOO_CONFIG",
    "ZOO_ENV_KWARGS",
    "PART",
    "PARTS",
    "part_of",
    "LICENSE",
    "DROPPED",
    "DROPPABLE_PARTS",
    "TRAINING_ONLY_PARTS",
    "Provenance",
    "provenance",
    "evaluations",
]

ENV_ID = "env_id"
N_ENVS = "n_envs"
NUM_TIMESTEPS = "num_timesteps"
SEED = "seed"
VERSIONS_PREFIX = "versions."
WRAPPERS = "wrappers"
EVALUATIONS = "evaluations"
ZOO_CONFIG = "zoo.config"
ZOO_ENV_KWARGS = "zoo.env_kwargs"
PART = "part"
#: The values of ``part``: what of an agent the archive holds (spec/metadata.md §8).
PARTS = ("model", "replay_buffer", "vec_normalize", "policy")
LICENSE = "license"
DROPPED = "dropped"
#: The parts an inference-only rewrite can drop (spec/metadata.md §7), in the order ``dropped`` lists them.
DROPPABLE_PARTS = ("training", "replay_buffer", "optimizers", "opaque")
#: The parts only training reads: what an inference-only rewrite drops by default.
TRAINING_ONLY_PARTS = ("training", "replay_buffer", "optimizers")
#: The most wrappers the ``wrappers`` key may list.
MAX_WRAPPERS = 64
#: The most evaluations the ``evaluations`` key may list.
MAX_EVALUATIONS = 1024
#: The most episodes one evaluation may list.
MAX_EPISODES = 1_000_000
_INT64_MAX = (1 << 63) - 1
_NON_NEGATIVE = re.compile(r"0|[1-9][0-9]{0,18}")
_SIGNED = re.compile(r"0|-?[1-9][0-9]{0,18}")
_VERSION_NAME = re.compile(r"[a-z0-9_]{1,64}")
_VERSION = re.compile(r"[0-9A-Za-z.+!_-]{1,64}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DATE = re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z")
_CHANNELS = ("first", "last")
_LICENSE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+-]{0,63}")


class _Bad(Exception):
    """A value that breaks its key's format (the message says how)."""


def _text(v: Any, what: str, most: int = 256) -> str:
    if not isinstance(v, str) or not 1 <= len(v) <= most or _CONTROL.search(v):
        raise _Bad(f"{what} must be 1 to {most} characters without control characters")
    return v


def _decimal(v: str, pattern: re.Pattern[str], least: int | None, what: str) -> int:
    if not pattern.fullmatch(v) or abs(int(v)) > _INT64_MAX or (least is not None and int(v) < least):
        bound = "" if least is None else f" of at least {least}"
        raise _Bad(
            f"{what} must be a decimal integer{bound} (no sign, spaces or leading zeros; at most 2^63-1 in magnitude), not {v[:40]!r}"
        )
    return int(v)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return _is_int(v) or isinstance(v, float)


def _json(v: str, what: str) -> Any:
    try:
        return jsonstrict.parse(v.encode("utf-8"))
    except RlarchiveError as e:
        raise _Bad(f"{what} is not a JSON text of spec §6 ({e.code}: {e.message})") from None
    except UnicodeEncodeError:
        raise _Bad(f"{what} is not a JSON text of spec §6 (it holds a lone surrogate)") from None


def _wrapper(w: Any, i: int) -> dict[str, Any]:
    at = f"wrapper {i}"
    if not isinstance(w, dict):
        raise _Bad(f"{at} must be an object")
    _text(w.get("name"), f"the name of {at}")
    if w["name"] == "VecFrameStack":
        n: Any = w.get("n_stack")
        if not _is_int(n) or not 1 <= n <= 65536:
            raise _Bad(f"{at} (VecFrameStack) needs n_stack, an integer from 1 to 65536")
        order = w.get("channels_order")
        ok = order in _CHANNELS or (
            isinstance(order, dict) and all(isinstance(o, str) and o in _CHANNELS for o in order.values())
        )
        if not ok:
            raise _Bad(
                f'{at} (VecFrameStack) needs channels_order, "first", "last", or an object of them by observation key'
            )
    elif w["name"] == "VecNormalize":
        for k in ("norm_obs", "norm_reward"):
            if k in w and not isinstance(w[k], bool):
                raise _Bad(f"{at} (VecNormalize): {k} must be a boolean")
    return w


def _wrappers(v: str) -> list[Any]:
    doc = _json(v, "wrappers")
    if not isinstance(doc, list) or len(doc) > MAX_WRAPPERS:
        raise _Bad(f"wrappers must be a JSON array of at most {MAX_WRAPPERS} objects")
    return [_wrapper(w, i) for i, w in enumerate(doc)]


def _evaluation(e: Any, i: int) -> dict[str, Any]:
    at = f"evaluation {i}"
    if not isinstance(e, dict):
        raise _Bad(f"{at} must be an object")
    _text(e.get("env_id"), f"the env_id of {at}")
    n: Any = e.get("episodes")
    if not _is_int(n) or not 1 <= n <= MAX_EPISODES:
        raise _Bad(f"{at}: episodes must be an integer from 1 to {MAX_EPISODES}")
    seeds = e.get("seeds", False)
    if seeds is not None and not (isinstance(seeds, list) and len(seeds) == n and all(_is_int(s) for s in seeds)):
        raise _Bad(f"{at}: seeds must be null or an array of {n} integers")
    if not isinstance(e.get("deterministic"), bool):
        raise _Bad(f"{at}: deterministic must be a boolean")
    if not _is_number(e.get("mean")):
        raise _Bad(f"{at}: mean must be a number")
    if not _is_number(e.get("std")) or e["std"] < 0:
        raise _Bad(f"{at}: std must be a number of at least 0")
    returns, lengths = e.get("returns"), e.get("lengths")
    if not (isinstance(returns, list) and len(returns) == n and all(_is_number(r) for r in returns)):
        raise _Bad(f"{at}: returns must be an array of {n} numbers")
    if not (isinstance(lengths, list) and len(lengths) == n and all(_is_int(x) and x >= 0 for x in lengths)):
        raise _Bad(f"{at}: lengths must be an array of {n} integers of at least 0")
    ev = e.get("evaluator")
    if not isinstance(ev, dict):
        raise _Bad(f"{at}: evaluator must be an object with name and version")
    _text(ev.get("name"), f"the evaluator name of {at}")
    _text(ev.get("version"), f"the evaluator version of {at}")
    if not isinstance(e.get("date"), str) or not _DATE.fullmatch(e["date"]):
        raise _Bad(f"{at}: date must be a UTC time YYYY-MM-DDTHH:MM:SSZ")
    return e


def _evaluations(v: str) -> list[Any]:
    doc = _json(v, "evaluations")
    if not isinstance(doc, list) or len(doc) > MAX_EVALUATIONS:
        raise _Bad(f"evaluations must be a JSON array of at most {MAX_EVALUATIONS} objects")
    return [_evaluation(e, i) for i, e in enumerate(doc)]


def _version(v: str) -> str:
    if not _VERSION.fullmatch(v):
        raise _Bad(f"a version must be 1 to 64 characters of letters, digits and . + ! _ -, not {v[:40]!r}")
    return v


def _license(v: str) -> str:
    if not _LICENSE.fullmatch(v):
        raise _Bad(
            f"license must be a licence identifier: 1 to 64 of A-Z, a-z, 0-9, '.', '+', '-' beginning with a letter or digit, not {v[:40]!r}"
        )
    return v


def _dropped(v: str) -> list[str]:
    doc = _json(v, DROPPED)
    if (
        not isinstance(doc, list)
        or not all(isinstance(p, str) and p in DROPPABLE_PARTS for p in doc)
        or doc != [p for p in DROPPABLE_PARTS if p in doc]
    ):
        raise _Bad(
            f"dropped must be a JSON array of distinct part names from {', '.join(DROPPABLE_PARTS)}, in that order"
        )
    return list(doc)


def _json_object(v: str, what: str) -> dict[str, Any]:
    doc = _json(v, what)
    if not isinstance(doc, dict):
        raise _Bad(f"{what} must be a JSON object")
    return doc


def _part(v: str) -> str:
    if v not in PARTS:
        raise _Bad(f"part must be one of {', '.join(PARTS)}, not {v[:40]!r}")
    return v


_FORMATS: Mapping[str, Callable[[str], Any]] = {
    ENV_ID: lambda v: _text(v, "env_id"),
    N_ENVS: lambda v: _decimal(v, _NON_NEGATIVE, 1, "n_envs"),
    NUM_TIMESTEPS: lambda v: _decimal(v, _NON_NEGATIVE, 0, "num_timesteps"),
    SEED: lambda v: _decimal(v, _SIGNED, None, "seed"),
    WRAPPERS: _wrappers,
    EVALUATIONS: _evaluations,
    ZOO_CONFIG: lambda v: _json_object(v, ZOO_CONFIG),
    ZOO_ENV_KWARGS: lambda v: _json_object(v, ZOO_ENV_KWARGS),
    PART: _part,
    LICENSE: _license,
    DROPPED: _dropped,
}


def is_defined(key: str) -> bool:
    """Whether the specification defines ``key`` (spec/metadata.md)."""
    return key in _FORMATS or key.startswith(VERSIONS_PREFIX)


def _parse(key: str, value: str) -> Any:
    if key.startswith(VERSIONS_PREFIX):
        name = key[len(VERSIONS_PREFIX) :]
        if not _VERSION_NAME.fullmatch(name):
            raise _Bad(f"a versions key names a library in 1 to 64 of a-z, 0-9 and _, not {name[:40]!r}")
        return _version(value)
    return _FORMATS[key](value)


def check_value(key: str, value: str) -> RlarchiveError | None:
    """The ``METADATA_INVALID`` warning for one metadata entry, or None (also for keys the spec does not define)."""
    if not is_defined(key):
        return None
    try:
        _parse(key, value)
    except _Bad as e:
        return RlarchiveError(
            "METADATA_INVALID", f"metadata {key}: {e}", member="manifest.json", pointer="/metadata/" + esc(key)
        )
    return None


def check(metadata: Mapping[str, str]) -> list[RlarchiveError]:
    """One ``METADATA_INVALID`` warning per defined key whose value breaks its format, in the metadata's order."""
    return [w for w in (check_value(k, v) for k, v in metadata.items()) if w is not None]


def parsed(metadata: Mapping[str, str], key: str) -> Any:
    """The value of defined ``key`` as a Python value (int, str, list of dicts), or None when absent.

    Raises:
        RlarchiveError: METADATA_INVALID when the value breaks its format.
    """
    if key not in metadata:
        return None
    err = check_value(key, metadata[key])
    if err is not None:
        raise err
    return _parse(key, metadata[key])


def part_of(metadata: Mapping[str, str]) -> str:
    """What of an agent an archive holds: its ``part`` (``"model"`` when absent, spec/metadata.md §8).

    Raises:
        RlarchiveError: METADATA_INVALID when ``part`` is not one of :data:`PARTS`.
    """
    value = parsed(metadata, PART)
    return "model" if value is None else str(value)


def versions(metadata: Mapping[str, str]) -> dict[str, str]:
    """The well-formed ``versions.NAME`` entries, by NAME, in the metadata's order."""
    return {
        k[len(VERSIONS_PREFIX) :]: v
        for k, v in metadata.items()
        if k.startswith(VERSIONS_PREFIX) and check_value(k, v) is None
    }


@dataclass(frozen=True)
class Provenance:
    """What the metadata says about the training run (spec/metadata.md §1).

    A key absent from the metadata, or malformed (the archive's ``warnings``
    then hold its ``METADATA_INVALID``), is None. ``env_id`` is a hint to show,
    never to resolve.
    """

    env_id: str | None = None
    n_envs: int | None = None
    num_timesteps: int | None = None
    seed: int | None = None
    #: The well-formed ``versions.NAME`` entries by NAME, in the metadata's order.
    versions: dict[str, str] = field(default_factory=dict)
    #: The wrappers (dicts with ``name`` and parameters), nearest the environment first.
    wrappers: list[Any] | None = None


def _well_formed(metadata: Mapping[str, str], key: str) -> Any:
    """The value of defined ``key`` as a Python value, or None when absent or malformed."""
    if key not in metadata or check_value(key, metadata[key]) is not None:
        return None
    return _parse(key, metadata[key])


def provenance(metadata: Mapping[str, str]) -> Provenance:
    """The provenance of the defined keys (malformed ones None: :func:`check` says why)."""
    return Provenance(
        env_id=_well_formed(metadata, ENV_ID),
        n_envs=_well_formed(metadata, N_ENVS),
        num_timesteps=_well_formed(metadata, NUM_TIMESTEPS),
        seed=_well_formed(metadata, SEED),
        versions=versions(metadata),
        wrappers=_well_formed(metadata, WRAPPERS),
    )


def evaluations(metadata: Mapping[str, str]) -> list[dict[str, Any]]:
    """The recorded evaluations (spec/metadata.md §3), oldest first, as dicts with the spec's
    member names (and any other member they have); [] when absent or malformed."""
    return _well_formed(metadata, EVALUATIONS) or []
