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
from ..describe import counted, describe
from ..diff import SECTIONS
from ..filenames import escape_name, json_text, report_fields
from ..values import canonical
from .common import EXIT_INVALID, EXIT_OK, line, natural

INSPECT_VERSION = "1.0"


def _evaluation_line(e: dict[str, Any]) -> str:
    seeds = "unseeded" if e["seeds"] is None else f"seeds {e['seeds'][0]}..{e['seeds'][-1]}"
    return (
        f"  mean reward     {float(e['mean']):.6g} +/- {float(e['std']):.6g} over {counted(e['episodes'], 'episode')} of {e['env_id']} "
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
        run.append(f"{counted(p.n_envs, 'environment')} in parallel")
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
        line(
            "  digests         NOT checked for the tensor and extension members (only for manifest.json and "
            "data.json): check them with --verify, or rlarchive validate"
        )
    others = [w for w in ar.warnings if w.code != "METADATA_INVALID"]
    found = "no error found" if args.verify else "no error found in the structure; digests not checked (above)"
    line(
        f"  validation      {found}"
        + (f"; {counted(len(others), 'warning')}: {', '.join(sorted({w.code for w in others}))}" if others else "")
    )


def _tail_lines(ar: Any, full: bool) -> None:
    """What follows the head: metadata, extensions, statistics, spaces, policy, data, tensor groups, optimizers."""
    if full:
        for k, v in ar.metadata.items():
            line(f"  metadata        {k}: {v.splitlines()[0] if v else ''}")
    elif ar.metadata:
        line(
            f"  metadata        {counted(len(ar.metadata), 'key')}: {', '.join(list(ar.metadata)[:6])}"
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
        line(f"data              {counted(len(data) - len(space_keys), 'hyperparameter')} (--all lists them)")
    else:
        line("data")
        for k, v in data.items():
            if k not in space_keys:
                line(f"  {k:30} {describe(v)}")
    line("tensor groups")
    for g in groups_in_order(ar):
        infos = ar.tensor_info(g)
        line(f"  {g}: {counted(len(infos), 'tensor')}, {counted(sum(i.nbytes for i in infos.values()), 'byte')}")
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


def _tensor_name(d: dict[str, Any]) -> str:
    """A tensor difference's name in its group: for an optimizer's state, the parameter it belongs to and its entry
    (the parameter marked ``?`` when guessed by shape)."""
    p = d.get("parameter")
    if p is None:
        return str(d["key"].split("/", 1)[1])
    return str(p["name"]) + ("" if p["by"] == "param_tensors" else "?") + (f" {p['entry']}" if p["entry"] else "")


def difference_line(d: dict[str, Any]) -> str:
    """One line of ``diff``'s text output for a difference of :func:`rlarchive.diff.diff`."""
    head = f"{d['section']:15} {d['key']}"
    if d["section"] == "tensors" and "parameter" in d:
        head = f"{d['section']:15} {d['key'].split('/', 1)[0]}: {_tensor_name(d)}"
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


def group_line(group: str, ds: list[dict[str, Any]], count: tuple[int, int, int]) -> str:
    """One line of ``diff``'s text output for the differing tensors ``ds`` of one group: how many changed of those
    in both archives (``count``: tensors in A, in B, in both), were added or removed, the parameters an optimizer's
    state belongs to, and the largest difference."""
    changed = [d for d in ds if d["change"] == "changed"]
    parts = [f"{len(changed)} of {count[2]} changed"] if changed else []
    params = {d["parameter"]["name"] for d in changed if "parameter" in d}
    if params:
        parts[0] += f" (the state of {counted(len(params), 'parameter')})"
    added, removed = (sum(1 for d in ds if d["change"] == c) for c in ("added", "removed"))
    parts += [f"{added} only in B"] * bool(added) + [f"{removed} only in A"] * bool(removed)
    numeric = [d for d in changed if d.get("max_abs_diff") is not None]
    shaped = [d for d in numeric if d["a"]["shape"]] or numeric  # an optimizer's step counters say little
    top = max(shaped, key=lambda d: d["max_abs_diff"], default=None)
    largest = "" if top is None else f", largest |a-b| {top['max_abs_diff']:.6g} ({_tensor_name(top)})"
    return f"{'tensors':15} {group}: {', '.join(parts)}{largest}"


def diff_lines(result: dict[str, Any], counts: dict[str, tuple[int, int, int]], each: bool) -> list[str]:
    """``diff``'s text output for its document ``result``: one line per difference, but the tensors of a group
    with several differences summarised in one (:func:`group_line`) unless ``each``."""
    out: list[str] = []
    groups: dict[str, list[dict[str, Any]]] = {}
    for d in result["differences"]:
        if d["section"] == "tensors" and not each:
            groups.setdefault(d["key"].split("/", 1)[0], []).append(d)
        else:
            out.append(difference_line(d))
    summarised = False
    rank = {g: (g != "policy") + g.startswith("optimizer.") for g in groups}  # policy, the others, the optimizers
    for g, ds in sorted(groups.items(), key=lambda item: rank[item[0]]):
        summarised |= len(ds) > 1
        out.append(group_line(g, ds, counts[g]) if len(ds) > 1 else difference_line(ds[0]))
    n = len(result["differences"])
    out.append(counted(n, "difference") + (" (tensors by group: --all lists each)" if summarised else ""))
    if any(d.get("parameter", {}).get("by") == "shape" for d in result["differences"]):
        out.append(
            "? the parameter of an optimizer's state, guessed by shape: the archive does not name it "
            "(param_tensors, spec §7.9)"
        )
    return out


def cmd_diff(args: argparse.Namespace) -> int:
    """``diff A B``: exit 0 when the archives hold the same (what ``--only`` and ``--ignore`` select), 1 when they
    differ (2 on an error)."""
    from ..diff import compare_archives

    result, counts = compare_archives(args.a, args.b, args.only, args.ignore)
    if args.json:
        print(json_text(result))
    elif result["equal"]:
        line(
            f"{escape_name(args.a)} and {escape_name(args.b)}: the same"
            + (" (in what was compared)" if args.only or args.ignore else "")
        )
    else:
        line(f"A {escape_name(args.a)}")
        line(f"B {escape_name(args.b)}")
        for text in diff_lines(result, counts, args.all):
            line(text)
    return EXIT_OK if result["equal"] else EXIT_INVALID


def diff_pattern(text: str) -> str:
    """A pattern of ``diff --only``/``--ignore`` (:func:`rlarchive.diff.selects`); one that selects no section is a
    usage error."""
    from ..diff import check_patterns
    from ..errors import RlarchiveError

    try:
        check_patterns([text])
    except RlarchiveError as e:
        raise argparse.ArgumentTypeError(e.message) from None
    return text


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
        help="what differs between two archives: metadata, hyperparameters, spaces, optimizers, extensions, tensors "
        "(by group; an optimizer's state by parameter); exit 0 same, 1 different, 2 error",
    )
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    for option, what in (
        ("--only", "compare only what PATTERN selects"),
        ("--ignore", "leave out what PATTERN selects"),
    ):
        p.add_argument(
            option,
            action="append",
            default=[],
            type=diff_pattern,
            metavar="PATTERN",
            help=f"{what} (repeatable): a section ({', '.join(SECTIONS)}), or a shell-style pattern over SECTION/KEY, "
            "a tensor's key being GROUP/NAME: 'tensors/optimizer.*' is every optimizer's state, "
            "'hyperparameters/start_time' one key",
        )
    p.add_argument(
        "--all",
        action="store_true",
        help="list every differing tensor (by default a group's are summarised in one line)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document (schemas/diff-1.0.schema.json)")
    p.set_defaults(fn=cmd_diff)
