"""A model card for an archive (``rlarchive card``): Markdown with YAML front matter, as model hubs read it.

The front matter follows the Hugging Face model card format, as
``huggingface_hub``'s model-card tools read it: ``library_name``
(``stable-baselines3`` for an agent of that library, the one the hub knows;
none otherwise), ``license`` (the metadata key, in lower case),
``tags`` (the environment id among them) and, when the archive records
evaluations (spec/metadata.md §3), a ``model-index`` whose results each have
``task`` (``type`` and ``name``: ``reinforcement-learning``), ``dataset``
(``type`` and ``name``: the environment id) and ``metrics`` (``type``
``mean_reward``, ``value`` ``"MEAN +/- STD"`` with two decimals, as the
hub's reinforcement-learning leaderboards read it).

Text from the archive, and its file name, is written in each context in the
form :mod:`rlarchive.hub.quoting` gives for it (spec/metadata.md §6): a YAML
double-quoted scalar in ASCII in the front matter, escaped Markdown in the
body, Python and JavaScript string literals in ASCII in the examples, and a
POSIX shell word on the command lines, where a value with no safe shell form
is replaced by its placeholder (``FILE``, ``ENV_ID``) and a note says so.

The output depends on the archive and on the file name given only (no clock,
no environment), so the same archive always gives the same card.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import metadata as keys
from ..errors import RlarchiveError
from ..filenames import printable
from ..report import Report
from . import card_sections as sections
from .quoting import js_string, markdown_text, python_string, shell_word, yaml_string

__all__ = ["card"]

#: SB3 data keys that are run state or logging, not hyperparameters.
_NOT_SETTINGS = frozenset(
    {
        "verbose",
        "start_time",
        "tensorboard_log",
        "ep_success_buffer",
        "num_timesteps",
        "seed",
        "n_envs",
        "device",
        "policy_class",
    }
)


def _md(text: Any) -> str:
    """Archive text for a Markdown table cell or line (:func:`rlarchive.hub.quoting.markdown_text`)."""
    return markdown_text(str(text))


def _y(text: str) -> str:
    """A YAML double-quoted scalar (:func:`rlarchive.hub.quoting.yaml_string`)."""
    return yaml_string(str(text))


def latest_by_env(evaluations: list[Any]) -> list[Any]:
    """The last evaluation of each environment, in the order environments first appear."""
    order: list[Any] = []
    latest: dict[str, Any] = {}
    for e in evaluations:
        if e["env_id"] not in latest:
            order.append(e["env_id"])
        latest[e["env_id"]] = e
    return [latest[env] for env in order]


def _mean_std(e: dict[str, Any]) -> str:
    return f"{float(e['mean']):.2f} +/- {float(e['std']):.2f}"


def _front_matter(name: str, env_id: str | None, sb3: bool, licence: str | None, evaluations: list[Any]) -> list[Any]:
    tags = ["reinforcement-learning", "deep-reinforcement-learning", "rlarchive"]
    if sb3:
        tags.append("stable-baselines3")
    for env in [env_id, *(e["env_id"] for e in evaluations)]:
        if env and env not in tags:
            tags.append(env)
    lines = ["---"]
    if sb3:  # the library the hub knows and files the agent under; the body says how to load it
        lines.append(f"library_name: {_y('stable-baselines3')}")
    if licence is not None:
        lines.append(f"license: {_y(licence.lower())}")
    lines.append("tags:")
    lines += [f"- {_y(t)}" for t in tags]
    results = latest_by_env(evaluations)
    if results:
        lines += ["model-index:", f"- name: {_y(name)}", "  results:"]
        for e in results:
            lines += [
                "  - task:",
                f"      type: {_y('reinforcement-learning')}",
                f"      name: {_y('reinforcement-learning')}",
                "    dataset:",
                f"      type: {_y(e['env_id'])}",
                f"      name: {_y(e['env_id'])}",
                "    metrics:",
                f"    - type: {_y('mean_reward')}",
                f"      value: {_y(_mean_std(e))}",
                f"      name: {_y('mean_reward')}",
                "      verified: false",
            ]
    lines.append("---")
    return lines


def _plain(v: Any) -> str | None:
    """A hyperparameter's value as text, or None for values that are not settings (arrays, spaces, objects)."""
    from ..describe import describe
    from ..schedules import Constant, Linear, Piecewise

    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, (int, float, str)):
        text = repr(v) if isinstance(v, float) else str(v)
        return text if len(text) <= 120 else None
    if isinstance(v, (Constant, Linear, Piecewise)):
        return describe(v)
    if isinstance(v, (list, tuple)) and len(v) <= 8 and all(isinstance(x, (int, float, str, bool)) for x in v):
        return str(list(v))
    if (
        isinstance(v, dict)
        and 0 < len(v) <= 8
        and all(isinstance(x, (int, float, str, bool)) or x is None for x in v.values())
    ):
        return ", ".join(f"{k}={x}" for k, x in v.items())
    return None


def _network(ar: Any) -> tuple[Any, ...]:
    """(the Markdown lines describing the network, whether the archive has a portable policy)."""
    from .. import extensions
    from ..extensions.policy import description as policy_description

    lines: list[Any] = []
    raw = extensions.read_document(ar, policy_description.EXTENSION)
    if raw is None:
        lines.append(
            "No portable policy (extension `RLA_policy`): the archive holds the weights but no description of how to act."
        )
    else:
        ops: list[Any] = []
        for node in raw.get("nodes", []):
            op = node.get("op", "?")
            if op == "activation":
                op = f"{op}({node.get('fn', '?')})"
            ops.append(op)
        action = raw.get("action", {}).get("op", "?")
        lines.append(f"Portable policy (`RLA_policy`): {len(ops)} operations, action head {_md(action)}.")
        lines.append("")
        lines.append("    " + printable(" -> ".join(str(op) for op in ops + [action])))
    lines.append("")
    lines.append("| tensor group | tensors | parameters | bytes |")
    lines.append("| --- | --- | --- | --- |")
    for g in ar.groups:
        infos = ar.tensor_info(g)
        count = sum(int(np.prod(i.shape)) for i in infos.values())
        lines.append(f"| {_md(g)} | {len(infos)} | {count} | {sum(i.nbytes for i in infos.values())} |")
    return lines, raw is not None


def card(path: str | os.PathLike[str], files: Sequence[tuple[str, str]] = ()) -> str:
    """The model card of the archive at ``path`` (Markdown with YAML front matter), deterministic.

    ``files``: for the card of a package (:func:`rlarchive.hub.package.package`), the package's other files as
    (name, what it is), listed in a section of their own.

    Raises:
        RlarchiveError: the archive's first broken rule; METADATA_INVALID when
            a defined metadata key the card shows is malformed.
    """
    from ..reader import Archive
    from ..validate import validate

    file_name = os.path.basename(os.fspath(path))
    report = validate(path)
    errors = [i for i in report["issues"] if i["severity"] == "error"]
    if errors:
        first = errors[0]
        raise RlarchiveError(first["code"], f"{file_name} is invalid, no card: {first['message']}")
    with Archive(path, spaces="neutral") as ar:
        meta = ar.metadata
        env_id = keys.parsed(meta, keys.ENV_ID)
        evaluations = keys.parsed(meta, keys.EVALUATIONS) or []
        wrappers = keys.parsed(meta, keys.WRAPPERS) or []
        for k in (keys.N_ENVS, keys.NUM_TIMESTEPS, keys.SEED):
            keys.parsed(meta, k)
        licence = keys.parsed(meta, keys.LICENSE)
        dropped = keys.parsed(meta, keys.DROPPED) or []
        zoo = (keys.parsed(meta, keys.ZOO_CONFIG), keys.parsed(meta, keys.ZOO_ENV_KWARGS))
        versions = keys.versions(meta)
        algorithm = meta.get("sb3.algorithm") or meta.get("sb2.algorithm")
        sb3 = meta.get("source") == "stable-baselines3"
        data = ar.data
        producer = ar.producer
        network, has_policy = _network(ar)
        fmt = ar.format_version
    name = (
        "-".join(x for x in ((algorithm or "").lower(), env_id or "") if x) or os.path.splitext(file_name)[0] or "agent"
    )
    out = _front_matter(name, env_id, sb3, licence, evaluations)
    title = f"{algorithm or 'An'} agent" + (f" for {env_id}" if env_id else "")
    out += ["", f"# {_md(title)}", ""]
    out.append(
        f"An agent in an rlarchive file ({_md(file_name)}, format {fmt}), written by {_md(producer['name'])} {_md(producer['version'])}"
        + (f"; trained with Stable-Baselines3 ({_md(algorithm)})." if sb3 and algorithm else ".")
    )
    if env_id:
        out += ["", f"Environment: {_md(env_id)} (as recorded)."]
    out += ["", _licence_line(licence)]
    out += sections.contents(dropped)
    out += _provenance(meta, versions, wrappers, producer)
    out += _settings(meta, data, algorithm)
    out += sections.zoo_configuration(*zoo)
    out += ["", "## Network", "", *network]
    out += _evaluation(evaluations)
    out += sections.package_files(files)
    out += _how_to_load(file_name, env_id, meta if sb3 else None, has_policy)
    out += sections.user_metadata(meta)
    out += _validation(report, fmt)
    return "\n".join(out) + "\n"


def _licence_line(licence: str | None) -> str:
    if licence is None:
        return "Licence: not recorded (set one with `rlarchive metadata FILE --set license=ID`, e.g. `apache-2.0`)."
    return f"Licence: {_md(licence)}."


def _provenance(
    meta: dict[str, Any], versions: dict[str, Any], wrappers: list[Any], producer: dict[str, Any]
) -> list[str]:
    """The card's Provenance section: what the metadata records of the training, and the writer."""
    out: list[str] = []
    out += ["", "## Provenance", "", "| | |", "| --- | --- |"]
    for label, key in (
        ("environment", keys.ENV_ID),
        ("environments in parallel", keys.N_ENVS),
        ("timesteps trained", keys.NUM_TIMESTEPS),
        ("seed", keys.SEED),
    ):
        if key in meta:
            out.append(f"| {label} | {_md(meta[key])} |")
    for lib, version in versions.items():
        out.append(f"| {_md(lib)} | {_md(version)} |")
    for w in wrappers:
        params = ", ".join(f"{k}={json.dumps(v, sort_keys=True)}" for k, v in w.items() if k != "name")
        out.append(f"| wrapper | {_md(w['name'])}{' (' + _md(params) + ')' if params else ''} |")
    out.append(f"| written by | {_md(producer['name'])} {_md(producer['version'])} |")
    return out


def _settings(meta: dict[str, Any], data: dict[str, Any], algorithm: Any) -> list[str]:
    """The card's Algorithm, Spaces and Hyperparameters sections, from the metadata and the data."""
    out: list[str] = []
    from .. import spaces as sp
    from ..describe import describe

    out += ["", "## Algorithm", ""]
    out.append(f"{_md(algorithm)} ({_md(meta.get('sb3.algorithm_class', ''))})" if algorithm else "Not recorded.")
    spaces = [(k, v) for k, v in data.items() if isinstance(v, sp.Space)]
    out += ["", "## Spaces", ""]
    out += [f"- {_md(k)}: {_md(describe(v))}" for k, v in spaces] or ["Not recorded."]
    out += ["", "## Hyperparameters", "", "| name | value |", "| --- | --- |"]
    for k, v in data.items():
        text = None if isinstance(v, sp.Space) or k.startswith("_") or k in _NOT_SETTINGS else _plain(v)
        if text is not None:
            out.append(f"| {_md(k)} | {_md(text)} |")
    return out


def _evaluation(evaluations: list[Any]) -> list[str]:
    """The card's Evaluation section: one row per recorded evaluation."""
    out: list[str] = []
    out += ["", "## Evaluation", ""]
    if evaluations:
        out += [
            "| environment | episodes | seeds | mean return | std | mean length | evaluator | date |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for e in evaluations:
            seeds = "unseeded" if e["seeds"] is None else f"{e['seeds'][0]}..{e['seeds'][-1]}"
            length = float(np.mean(e["lengths"]))
            ev = e["evaluator"]
            out.append(
                f"| {_md(e['env_id'])} | {e['episodes']} | {seeds} | {float(e['mean']):.6g} | {float(e['std']):.6g} | {length:.6g} | "
                f"{_md(ev['name'])} {_md(ev['version'])} | {_md(e['date'])} |"
            )
        out += ["", "Deterministic actions of the portable policy; returns are the environment's own rewards."]
    else:
        out.append("None recorded. Run `rlarchive evaluate FILE --env ENV_ID --episodes 10 --seed 0 --record`.")
    return out


def _shell_args(file_name: str, env_id: Any) -> tuple[str, str, list[str]]:
    """The file and ``--env`` arguments of the card's command lines as shell words (placeholders where a value has
    no safe shell form), and the notes that say which were replaced."""
    notes: list[str] = []
    file_word = shell_word("./" + file_name if file_name.startswith("-") else file_name)
    if file_word is None:
        file_word = "FILE"
        notes.append("(The file name holds characters a shell line cannot show safely: put it in place of FILE.)")
    env_word = shell_word(env_id) if env_id else "ENV_ID"
    if env_word is None:
        env_word = "ENV_ID"
        notes.append(
            "(The environment id holds characters a shell line cannot show safely: put it in place of ENV_ID.)"
        )
    env_arg = f"--env={env_word}" if env_word.startswith(("-", "'-")) else f"--env {env_word}"
    return file_word, env_arg, notes


def _how_to_load(file_name: str, env_id: Any, sb3_meta: dict[str, Any] | None, has_policy: bool) -> list[str]:
    """The card's How to load section: Python, Stable-Baselines3 (``sb3_meta``: the metadata of an agent from it),
    JavaScript, ONNX, evaluation."""
    out: list[str] = []
    py, js = python_string(file_name), js_string(file_name)
    file_word, env_arg, notes = _shell_args(file_name, env_id)
    out += [
        "",
        "## How to load",
        "",
        "Python (NumPy only, no pickle is run):",
        "",
        "```python",
        "import rlarchive",
        "",
        f"with rlarchive.open({py}) as ar:",
        "    policy = ar.policy()",
        "action, _ = policy.predict(obs)   # obs from the environment",
        "```",
    ]
    if sb3_meta is not None:
        out += sections.stable_baselines3(py, file_word, sb3_meta)
    out += [
        "",
        "JavaScript (Node or a browser):",
        "",
        "```js",
        "import { open } from 'rlarchive-reader';",
        "",
        f"const ar = await open({js});",
        "const policy = await ar.policy();",
        "```",
    ]
    out += ["", "ONNX:", "", "```sh", f"rlarchive export-onnx {file_word} agent.onnx", "```"]
    out += [
        "",
        "Evaluate it yourself:",
        "",
        "```sh",
        f"rlarchive evaluate {file_word} {env_arg} --episodes 10 --seed 0",
        "```",
    ]
    out += [x for note in notes for x in ("", note)]
    if not has_policy:
        out += [
            "",
            "(This archive has no portable policy: the Python, JavaScript and ONNX routes need one; import the model again with Stable-Baselines3 installed.)",
        ]
    return out


def _validation(report: Report, fmt: str) -> list[str]:
    """The card's Validation section: the validator's verdict and its warnings."""
    out: list[str] = []
    warnings = [i for i in report["issues"] if i["severity"] == "warning"]
    out += ["", "## Validation", ""]
    out.append(
        f"Valid rlarchive {fmt}: every check of the specification passed, digests included ({len(warnings)} warnings, {report['summary']['infos']} infos), "
        f"checked by {_md(report['validator']['name'])} {_md(report['validator']['version'])}."
    )
    for w in warnings:
        out.append(f"- {_md(w['code'])}: {_md(w['message'])}")
    return out
