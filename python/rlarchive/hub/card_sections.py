"""Sections of a model card (:mod:`rlarchive.hub.card`) beyond the archive's own description: what an inference-only
archive lacks, the RL Zoo configuration, the files of a package, loading into Stable-Baselines3, and the metadata
no other section shows (spec/metadata.md §6).

Every text from the archive is written in the form :mod:`rlarchive.hub.quoting` gives for where it stands.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .. import metadata as keys
from .quoting import markdown_text

__all__ = ["contents", "zoo_configuration", "package_files", "stable_baselines3", "user_metadata", "SHOWN_KEYS"]

#: What each droppable part is, in words (spec/metadata.md §7).
PART_WORDS = {
    "training": "the run and random state training goes on from (RLA_training)",
    "replay_buffer": "the replay buffer (RLA_replay_buffer)",
    "optimizers": "the optimizers' per-parameter state (moments and step counts; their settings stay)",
    "opaque": "the data entries kept as opaque pickles",
}
#: Metadata keys that other sections of the card show.
SHOWN_KEYS = frozenset(
    {
        keys.ENV_ID,
        keys.N_ENVS,
        keys.NUM_TIMESTEPS,
        keys.SEED,
        keys.WRAPPERS,
        keys.EVALUATIONS,
        keys.ZOO_CONFIG,
        keys.ZOO_ENV_KWARGS,
        keys.LICENSE,
        keys.DROPPED,
        "source",
        "sb3.algorithm",
        "sb3.algorithm_class",
        "sb2.algorithm",
    }
)
#: Characters of a metadata value the card shows (a longer one is cut, and says how long it is).
MAX_SHOWN_VALUE = 300


def _md(text: Any) -> str:
    return markdown_text(str(text))


def contents(dropped: Sequence[str]) -> list[str]:
    """What the archive lacks for training (the metadata ``dropped``), or nothing."""
    if not dropped:
        return []
    out = ["", "Inference-only: this archive was written without what only training reads (`rlarchive strip`):"]
    out += [""] + [f"- {PART_WORDS[p]}" for p in dropped if p in PART_WORDS]
    return out + ["", "It acts as the trained agent does; to train it further, start from the full archive."]


def _value(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False, sort_keys=False) if not isinstance(v, str) else v
    return _cut(text)


def _cut(text: str) -> str:
    if len(text) <= MAX_SHOWN_VALUE:
        return _md(text)
    return _md(text[:MAX_SHOWN_VALUE]) + f" ... ({len(text)} characters)"


def zoo_configuration(config: Mapping[str, Any] | None, env_kwargs: Mapping[str, Any] | None) -> list[str]:
    """The RL Zoo run's hyperparameters (``zoo.config``) and environment arguments (``zoo.env_kwargs``)."""
    out: list[str] = []
    for title, table in (("RL Zoo configuration (config.yml)", config), ("Environment arguments", env_kwargs)):
        if table:
            out += ["", f"## {title}", "", "| name | value |", "| --- | --- |"]
            out += [f"| {_md(k)} | {_value(v)} |" for k, v in table.items()]
    return out


def package_files(files: Sequence[tuple[str, str]]) -> list[str]:
    """The files of a package beside the archive and the card, with the training curves' plot shown."""
    if not files:
        return []
    out = ["", "## Files", "", "| file | content |", "| --- | --- |"]
    out += [f"| {_md(name)} | {_md(what)} |" for name, what in files]
    names = {name for name, _ in files}
    from .package_files import CURVES_PLOT

    if CURVES_PLOT in names:
        out += ["", f"![Training curves]({CURVES_PLOT})"]
    return out


def stable_baselines3(py: str, file_word: str, meta: Mapping[str, Any]) -> list[str]:
    """Loading into Stable-Baselines3: in one step with rlarchive, or as a Stable-Baselines3 zip (``export-sb3``).

    The class is named only when the metadata's ``sb3.algorithm`` is one of the algorithms rlarchive knows (an
    identifier from that closed list, never a text of the archive); otherwise the example has ``ALGORITHM``.
    """
    from ..sb3.algorithms import ALGORITHMS

    algo = ALGORITHMS.get(str(meta.get("sb3.algorithm", "")))
    package, name = (algo.package, algo.name) if algo is not None else ("stable_baselines3", "ALGORITHM")
    out = [
        "",
        "Back into Stable-Baselines3, no pickle run (rlarchive builds the model):",
        "",
        "```python",
        "from rlarchive import sb3 as rsb3",
        "",
        f"model = rsb3.load({py})",
        "```",
        "",
        "As a Stable-Baselines3 zip, for `ALGORITHM.load` and the RL Zoo:",
        "",
        "```sh",
        f"rlarchive export-sb3 {file_word} agent.zip",
        "```",
        "",
        "```python",
        f"from {package} import {name}",
        "",
        f'model = {name}.load("agent.zip")',
        "```",
    ]
    if algo is None:
        out += ["", "(ALGORITHM: the algorithm's class, which the archive does not name as one rlarchive knows.)"]
    return out


def user_metadata(meta: Mapping[str, Any]) -> list[str]:
    """The metadata no other section shows (keys set by the user among them), in the metadata's order."""
    rest = [(k, v) for k, v in meta.items() if k not in SHOWN_KEYS and not k.startswith(keys.VERSIONS_PREFIX)]
    if not rest:
        return []
    out = ["", "## Metadata", "", "| key | value |", "| --- | --- |"]
    return out + [f"| {_md(k)} | {_cut(str(v))} |" for k, v in rest]
