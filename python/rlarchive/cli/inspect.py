"""The commands that read an archive for a person or a tool: ``inspect``, ``dump`` and ``diff``.

``inspect`` prints a summary that fits one screen (what the agent is, its
spaces, its policy's layers, its tensor groups with their sizes, what was
checked); ``--all`` prints everything (every hyperparameter, metadata key and
tensor), ``--json`` one document of ``schemas/inspect-1.0.schema.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from typing import Any

from .. import spaces as sp
from ..describe import describe
from ..filenames import escape_name, json_text, report_fields
from ..values import canonical
from .common import EXIT_INVALID, EXIT_OK, line, natural

INSPECT_VERSION = "1.0"


def _evaluation_line(e: dict[str, Any]) -> str:
    seeds = "unseeded" if e["seeds"] is None else f"seeds {e['seeds'][0]}..{e['seeds'][-1]}"
    return (
        f"  mean reward     {float(e['mean']):.6g} +/- {float(e['std']):.6g} over {e['episodes']} episode{'s' if e['episodes'] != 1 else ''} of {e['env_id']} "
        f"({'deterministic' if e['deterministic'] else 'stochastic'}, {seeds}; {e['evaluator']['name']} {e['evaluator']['version']}, {e['date']})"
    )


def agent_lines(ar: Any) -> list[str]:
    """The lines ``inspect`` starts with: what the agent is and how good it is (spec/metadata.md), as far as recorded.

    The environment id is shown as a hint (nothing resolves it); a defined key whose value is malformed
    is left out and its ``METADATA_INVALID`` warning shown instead.
    """
    from ..hub.card import latest_by_env

    meta, p = ar.metadata, ar.provenance
    lines = []
    if p.env_id is not None:
        lines.append(f"  environment     {p.env_id} (as recorded: a hint)")
    algorithm = meta.get("sb3.algorithm") or meta.get("sb2.algorithm")
    if algorithm:
        lines.append(
            f"  algorithm       {algorithm}"
            + (f" ({meta['sb3.algorithm_class']})" if meta.get("sb3.algorithm_class") else "")
        )
    evaluations = ar.evaluations
    lines += [_evaluation_line(e) for e in latest_by_env(evaluations)]
    if len(evaluations) > 1:
        lines.append(f"  evaluations     {len(evaluations)} recorded (the latest of each environment above)")
    run = []
    if p.n_envs is not None:
        run.append(f"{p.n_envs} environment{'s' if p.n_envs != 1 else ''} in parallel")
    if p.seed is not None:
        run.append(f"seed {p.seed}")
    if p.num_timesteps is not None:
        lines.append(f"  timesteps       {p.num_timesteps}" + (f" ({', '.join(run)})" if run else ""))
    elif run:
        lines.append(f"  training        {', '.join(run)}")
    if p.versions:
        lines.append("  versions        " + ", ".join(f"{k} {v}" for k, v in p.versions.items()))
    if p.wrappers:
        shown = []
        for w in p.wrappers:
            params = ", ".join(
                f"{k}={json.dumps(v, sort_keys=True, ensure_ascii=False)}" for k, v in w.items() if k != "name"
            )
            shown.append(w["name"] + (f"({params})" if params else ""))
        lines.append("  wrappers        " + " -> ".join(shown))
    for w in ar.warnings:
        if w.code == "METADATA_INVALID":
            lines.append(f"  warning         {w.code} at {w.pointer}: {w.message}")
    return lines


def _node(node: dict[str, Any]) -> str:
    """One node of a portable policy in a few characters: ``linear 4->64``, ``tanh``, ``conv2d 4->32 8x8``."""
    op = node["op"]
    weight = node.get("weight")
    shape = getattr(weight, "shape", None)
    if op == "linear" and shape is not None and len(shape) == 2:
        return f"linear {shape[1]}->{shape[0]}"
    if op == "conv2d" and shape is not None and len(shape) == 4:
        return f"conv2d {shape[1]}->{shape[0]} {shape[2]}x{shape[3]}"
    if op == "activation":
        return str(node.get("fn", op))
    return str(op)


def policy_outline(ar: Any) -> Any:
    """The portable policy in outline (``None`` without one): preprocessing, layers in order, head."""
    from ..extensions.policy.observations import is_image, kind

    policy = ar.policy()
    if policy is None:
        return None
    pre = []
    if policy.vec_normalize is not None:
        pre.append("VecNormalize statistics")
    space = policy.observation_space
    subspaces = [s for _, s in space.spaces] if kind(space) == "dict" else [space]
    if any(kind(s) in ("discrete", "multi_discrete") for s in subspaces):
        pre.append("one-hot")
    if policy.normalize_images and any(is_image(s) for s in subspaces):
        pre.append("images / 255")
    if kind(space) == "dict":
        pre.append("Dict keys in order")
    return {
        "preprocessing": pre,
        "layers": [_node(n) for n in policy.nodes],
        "head": str(policy.action["op"]),
        "recurrent": policy.recurrent is not None,
    }


def _wrapped(label: str, items: list[Any], width: int = 100) -> list[Any]:
    """``label`` and ``items`` joined by `` -> ``, broken into lines of about ``width`` characters."""
    lines, current = [], f"  {label:15} "
    for i, item in enumerate(items):
        piece = item if i == 0 else " -> " + item
        if len(current) + len(piece) > width and current.strip() != label:
            lines.append(current)
            current = " " * 18 + piece.removeprefix(" ")
        else:
            current += piece
    return lines + [current]


def _statistics(ar: Any) -> Any:
    stats = ar.vec_normalize()
    if stats is None:
        return None
    what = (
        "none"
        if stats.obs is None
        else (", ".join(stats.obs_keys) if stats.obs_keys is not None else f"shape {list(stats.obs.mean.shape)}")
    )
    return stats, what


def _head_lines(ar: Any, args: argparse.Namespace) -> None:
    """The lines both forms start with: the file, the agent, the version, the producer, what was checked."""
    p = ar.producer
    print(escape_name(args.file))
    for text in agent_lines(ar):
        line(text)
    line(f"  format version  {ar.format_version}")
    line(f"  producer        {p['name']} {p['version']}")
    if args.verify:
        line("  digests         every member checked (CRC-32 and SHA-256)")
    else:
        line("  digests         manifest and data.json checked; tensor and extension members not (use --verify)")
    others = [w for w in ar.warnings if w.code != "METADATA_INVALID"]
    if others:
        line(
            f"  validation      no error found; {len(others)} warning{'s' if len(others) != 1 else ''}: "
            + ", ".join(sorted({w.code for w in others}))
        )
    else:
        line(
            "  validation      no error found"
            + ("" if args.verify else " in what was checked (rlarchive validate checks everything)")
        )


def _tail_lines(ar: Any, full: bool) -> None:
    """What follows the head: metadata, extensions, statistics, spaces, policy, data, tensor groups, optimizers."""
    if full:
        for k, v in ar.metadata.items():
            line(f"  metadata        {k}: {v.splitlines()[0] if v else ''}")
    elif ar.metadata:
        line(
            f"  metadata        {len(ar.metadata)} keys: {', '.join(list(ar.metadata)[:6])}"
            + (", ..." if len(ar.metadata) > 6 else "")
        )
    if ar.manifest.extensions_used:
        line(f"  extensions      {', '.join(ar.manifest.extensions_used)}")
    stats = _statistics(ar)
    if stats is not None:
        s, what = stats
        line(
            f"  vec_normalize   observations: {what}; rewards: {'yes' if s.norm_reward else 'no'}; clip_obs {s.clip_obs}; "
            + ("running return not stored" if s.returns is None else f"running return of {s.returns.size} environments")
        )
    data = ar.data
    space_keys = {k: None for k, v in data.items() if isinstance(v, sp.Space)}  # in order, looked up in O(1)
    if space_keys:
        line("spaces")
        for k in space_keys:
            line(f"  {k:30} {describe(data[k])}")
    if not full:
        _policy_lines(ar)
        line(f"data              {len(data) - len(space_keys)} hyperparameters (--all lists them)")
    else:
        line("data")
        for k, v in data.items():
            if k not in space_keys:
                line(f"  {k:30} {describe(v)}")
    line("tensor groups")
    for g in groups_in_order(ar):
        infos = ar.tensor_info(g)
        line(f"  {g}: {len(infos)} tensors, {sum(i.nbytes for i in infos.values())} bytes")
        if full:
            for name, i in infos.items():
                line(f"    {name:40} {i.dtype:6} {list(i.shape)} {i.nbytes} B")
    if ar.optimizer_names:
        line("optimizers")
        for name in ar.optimizer_names:
            line(f"  {name}")


def groups_in_order(ar: Any) -> list[Any]:
    """The tensor groups, ``policy`` first, then the others in member order."""
    return sorted(ar.groups, key=lambda g: g != "policy")


def _policy_lines(ar: Any) -> None:
    outline = policy_outline(ar)
    if outline is None:
        return
    line("policy")
    if outline["preprocessing"]:
        line(f"  preprocessing   {', '.join(outline['preprocessing'])}")
    for text in _wrapped("layers", outline["layers"] + (["(LSTM state carried)"] if outline["recurrent"] else [])):
        line(text)
    line(f"  head            {outline['head']}")


def _number(x: float) -> Any:
    """A float for JSON: itself when finite, else ``"inf"``, ``"-inf"`` or ``"nan"``."""
    return x if math.isfinite(x) else str(x)


def inspect_document(ar: Any, path: Any, verified: bool) -> dict[str, Any]:
    """What ``inspect --json`` prints (``schemas/inspect-1.0.schema.json``)."""
    raw = ar.raw_data["data"]
    space_keys = {k: None for k, v in ar.data.items() if isinstance(v, sp.Space)}  # in order, looked up in O(1)
    stats = _statistics(ar)
    meta = ar.metadata
    return {
        "inspect_version": INSPECT_VERSION,
        **report_fields(path),
        "format_version": ar.format_version,
        "producer": ar.producer,
        "algorithm": meta.get("sb3.algorithm") or meta.get("sb2.algorithm"),
        "provenance": dataclasses.asdict(ar.provenance),
        "evaluations": ar.evaluations,
        "checked": "all" if verified else "structure",
        "warnings": [w.as_issue() for w in ar.warnings],
        "metadata": meta,
        "extensions_used": ar.manifest.extensions_used,
        "vec_normalize": None
        if stats is None
        else {
            "observations": stats[1],
            "rewards": bool(stats[0].norm_reward),
            "clip_obs": _number(float(stats[0].clip_obs)),
            "returns": None if stats[0].returns is None else int(stats[0].returns.size),
        },
        "spaces": {k: canonical(raw[k]) for k in space_keys},
        "hyperparameters": {k: canonical(v) for k, v in raw.items() if k not in space_keys},
        "policy": policy_outline(ar),
        "groups": [
            {
                "name": g,
                "tensors": len(ar.tensor_info(g)),
                "bytes": sum(i.nbytes for i in ar.tensor_info(g).values()),
                "entries": [
                    {"name": n, "dtype": i.dtype, "shape": list(i.shape), "bytes": i.nbytes}
                    for n, i in ar.tensor_info(g).items()
                ],
            }
            for g in groups_in_order(ar)
        ],
        "optimizers": ar.optimizer_names,
    }


def cmd_inspect(args: argparse.Namespace) -> int:
    """``inspect``: the summary, everything (``--all``) or the JSON document (``--json``)."""
    from ..reader import Archive

    with Archive(args.file, spaces="neutral") as ar:
        if args.verify:
            ar.verify()
        ar.check_extensions()
        if args.json:
            print(json_text(inspect_document(ar, args.file, args.verify)))
            return EXIT_OK
        _head_lines(ar, args)
        _tail_lines(ar, args.all)
    return EXIT_OK


def cmd_dump(args: argparse.Namespace) -> int:
    """``dump``: the canonical dump (spec §13), byte for byte (so without a trailing newline, §13.3);
    ``--indent N`` the same JSON indented for people, ending with a newline."""
    from ..reader import Archive

    with Archive(args.file, spaces="neutral") as ar:
        out = ar.dump()
    if args.indent is not None:
        out = json_text(json.loads(out), indent=args.indent).encode("utf-8") + b"\n"
    sys.stdout.buffer.write(out)
    return EXIT_OK


def _value(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 80 else text[:77] + "..."


def difference_line(d: dict[str, Any]) -> str:
    """One line of ``diff``'s text output for a difference of :func:`rlarchive.diff.diff`."""
    head = f"{d['section']:15} {d['key']}"
    if d["change"] == "added":
        return f"{head}: only in B: {_value(d['b'])}"
    if d["change"] == "removed":
        return f"{head}: only in A: {_value(d['a'])}"
    if d["section"] == "tensors":
        a, b = d["a"], d["b"]
        if (a["dtype"], a["shape"]) != (b["dtype"], b["shape"]):
            return f"{head}: {a['dtype']}{a['shape']} -> {b['dtype']}{b['shape']}"
        text = f"{head}: {a['dtype']}{a['shape']}, digests differ"
        if d.get("max_abs_diff") is not None:
            text += f", max |a-b| {d['max_abs_diff']:.6g}"
        if d.get("nonfinite_differ"):
            text += f", {d['nonfinite_differ']} non-finite elements differ"
        elif "nonfinite_differ" not in d:
            text += " (no arithmetic for this dtype)"
        return text
    return f"{head}: {_value(d['a'])} -> {_value(d['b'])}"


def cmd_diff(args: argparse.Namespace) -> int:
    """``diff A B``: exit 0 when the archives hold the same, 1 when they differ (2 on an error)."""
    from ..diff import diff

    result = diff(args.a, args.b)
    if args.json:
        print(json_text(result))
    elif result["equal"]:
        line(f"{escape_name(args.a)} and {escape_name(args.b)}: the same")
    else:
        line(f"A {escape_name(args.a)}")
        line(f"B {escape_name(args.b)}")
        for d in result["differences"]:
            line(difference_line(d))
        line(f"{len(result['differences'])} difference{'s' if len(result['differences']) != 1 else ''}")
    return EXIT_OK if result["equal"] else EXIT_INVALID


def add_commands(sub: Any) -> None:
    """Register ``inspect``, ``dump`` and ``diff`` on the ``rlarchive`` parser's sub-parsers ``sub``."""
    p = sub.add_parser("inspect", help="print a one-screen summary (--all: everything; --json: a JSON document)")
    p.add_argument("file")
    p.add_argument(
        "--verify", action="store_true", help="also check the CRC-32 and SHA-256 of every member (reads the whole file)"
    )
    p.add_argument("--all", action="store_true", help="list every metadata key, hyperparameter and tensor")
    p.add_argument("--json", action="store_true", help="print one JSON document (schemas/inspect-1.0.schema.json)")
    p.set_defaults(fn=cmd_inspect)
    p = sub.add_parser("dump", help="print the canonical dump (spec §13), byte for byte: no trailing newline (§13.3)")
    p.add_argument("file")
    p.add_argument(
        "--indent",
        type=natural,
        metavar="N",
        help="indent by N spaces, for people, ending with a newline (the default output is the canonical dump, byte for byte)",
    )
    p.set_defaults(fn=cmd_dump)
    p = sub.add_parser(
        "diff",
        help="what differs between two archives: metadata, hyperparameters, spaces, extensions, tensors; exit 0 same, 1 different, 2 error",
    )
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--json", action="store_true", help="print one JSON document (schemas/diff-1.0.schema.json)")
    p.set_defaults(fn=cmd_diff)
