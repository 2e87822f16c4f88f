"""The contents of a hub package's smaller files (spec/metadata.md §6): the RL Zoo's YAML files and ``.gitattributes``.

- :func:`yaml_text`: a JSON object (``zoo.config``, ``zoo.env_kwargs``) as the YAML file the RL Zoo keeps
  (``config.yml``, ``env_kwargs.yml``): one ``KEY: VALUE`` line per entry, the value in flow style. Strings are
  double-quoted in printable ASCII (:func:`rlarchive.hub.quoting.yaml_string`), floats always have a ``.`` and a signed
  exponent where they have one (YAML 1.1, which PyYAML reads, takes ``1e-05`` for a string), so ``yaml.safe_load``
  and the RL Zoo's loader read back exactly the JSON value, and nothing in the file is a tag or an anchor.
- :func:`gitattributes`: Git LFS for the large files a hub stores (the archive, the ONNX model, the video).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .quoting import yaml_string

__all__ = [
    "CONFIG_NAME",
    "ENV_KWARGS_NAME",
    "VIDEO_NAME",
    "CURVES_PLOT",
    "EPISODES_CSV",
    "EVALUATIONS_CSV",
    "GITATTRIBUTES_NAME",
    "yaml_text",
    "gitattributes",
]

CONFIG_NAME = "config.yml"
ENV_KWARGS_NAME = "env_kwargs.yml"
VIDEO_NAME = "replay.mp4"
CURVES_PLOT = "training_curves.svg"
EPISODES_CSV = "training_episodes.csv"
EVALUATIONS_CSV = "training_evaluations.csv"
GITATTRIBUTES_NAME = ".gitattributes"

_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Plain scalars YAML 1.1 reads as something other than a string.
_YAML_WORDS = frozenset(
    "y n yes no on off true false null".split() + ["~"],
)
#: File names that are LFS patterns as they are (no glob, space, quote or backslash character).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
_LFS = "filter=lfs diff=lfs merge=lfs -text"


def _float(x: float) -> str:
    if not math.isfinite(x):  # not reached: JSON texts of spec §6 hold no such number
        raise ValueError("a YAML file of the package holds finite numbers only")
    text = repr(x)
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    if e and exponent[0] not in "+-":
        exponent = "+" + exponent
    return mantissa + (("e" + exponent) if e else "")


def _flow(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return yaml_string(v)
    if isinstance(v, list):
        return "[" + ", ".join(_flow(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)}: {_flow(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"not a JSON value: {type(v).__name__}")


def _key(k: str) -> str:
    return k if _BARE_KEY.fullmatch(k) and k.lower() not in _YAML_WORDS else yaml_string(k)


def yaml_text(doc: Mapping[str, Any]) -> str:
    """The JSON object ``doc`` as a YAML file: one line per entry, in order (``{}`` for an empty object)."""
    if not doc:
        return "{}\n"
    return "".join(f"{_key(k)}: {_flow(v)}\n" for k, v in doc.items())


def gitattributes(names: Iterable[str]) -> tuple[str, list[str]]:
    """The ``.gitattributes`` of a package holding ``names`` (Git LFS for the archive, ``*.onnx`` and ``*.mp4``),
    and notes for a name that cannot be written as a pattern as it is."""
    patterns = ["*.rlarchive", "*.onnx", "*.mp4"]
    notes: list[str] = []
    for name in names:
        if any(name.endswith(p[1:]) for p in patterns):
            continue
        if _PLAIN_NAME.fullmatch(name):
            patterns.append(name)
        else:
            notes.append(f"{GITATTRIBUTES_NAME}: the archive's name is not a plain pattern; add it to Git LFS yourself")
    return "".join(f"{p} {_LFS}\n" for p in patterns), notes
