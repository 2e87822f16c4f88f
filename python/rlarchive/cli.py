"""The ``rlarchive`` command: validate, inspect, dump (and SB3/SB2 conversion when available)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional, Sequence

from . import spaces as sp
from .errors import RlarchiveError
from .schedules import Constant, Linear, Piecewise
from .tensors import RawTensor
from .values import ClassRef, Opaque


def _cmd_validate(args: argparse.Namespace) -> int:
    from .validate import validate

    reports = [validate(f) for f in args.files]
    if args.json:
        out: Any = reports[0] if len(reports) == 1 else reports
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        for r in reports:
            s = r["summary"]
            verdict = "valid" if r["valid"] else "INVALID"
            print(f"{r['file']}: {verdict} ({s['errors']} errors, {s['warnings']} warnings, {s['infos']} infos)")
            for i in r["issues"]:
                loc = " ".join(
                    x
                    for x in (
                        (i.get("member", "") + ("#" + i["pointer"] if "pointer" in i else "")) or None,
                        f"@{i['offset']}" if "offset" in i else None,
                    )
                    if x
                )
                print(f"  {i['severity']:7} {i['code']}: {i['message']}" + (f" [{loc}]" if loc else ""))
    return 0 if all(r["valid"] for r in reports) else 1


def describe(v: Any, depth: int = 0) -> str:
    """A one-line, human-readable description of a decoded value."""
    import numpy as np

    if isinstance(v, sp.Box):
        lo, hi = np.asarray(v.low), np.asarray(v.high)
        bounds = f"[{lo.min()}, {hi.max()}]" if lo.size else "[]"
        return f"Box({v.dtype}, shape={tuple(v.shape)}, bounds {bounds})"
    if isinstance(v, sp.Discrete):
        return f"Discrete(n={v.n}, start={v.start})"
    if isinstance(v, sp.MultiDiscrete):
        return f"MultiDiscrete(nvec={np.asarray(v.nvec).tolist()})"
    if isinstance(v, sp.MultiBinary):
        return f"MultiBinary({v.n})"
    if isinstance(v, sp.Dict):
        return "Dict(" + ", ".join(f"{k}: {describe(s)}" for k, s in v.spaces) + ")"
    if isinstance(v, sp.Tuple):
        return "Tuple(" + ", ".join(describe(s) for s in v.spaces) + ")"
    if isinstance(v, sp.Text):
        return f"Text({v.min_length}..{v.max_length} chars)"
    if isinstance(v, Constant):
        return f"constant schedule {v.value}"
    if isinstance(v, Linear):
        return f"linear schedule {v.start} -> {v.end} over {v.end_fraction} of training"
    if isinstance(v, Piecewise):
        return f"piecewise schedule ({v.interpolation}, {len(v.points)} points)"
    if isinstance(v, ClassRef):
        return f"class {v.name}"
    if isinstance(v, Opaque):
        return f"opaque pickle ({len(v.data)} bytes" + (f", {v.type}" if v.type else "") + ")"
    if isinstance(v, RawTensor):
        return f"array {v.dtype}{list(v.shape)}"
    if isinstance(v, np.ndarray):
        return f"array {v.dtype}{list(v.shape)}" if v.size > 8 else f"array {v.tolist()}"
    if isinstance(v, dict) and depth < 2:
        return "{" + ", ".join(f"{k!r}: {describe(x, depth + 1)}" for k, x in list(v.items())[:8]) + (", ..." if len(v) > 8 else "") + "}"
    text = repr(v)
    return text if len(text) <= 100 else text[:97] + "..."


def _cmd_inspect(args: argparse.Namespace) -> int:
    from .reader import Archive

    with Archive(args.file, spaces="neutral") as ar:
        p = ar.producer
        print(f"{args.file}")
        print(f"  format version  {ar.format_version}")
        print(f"  producer        {p['name']} {p['version']}")
        for k, v in ar.metadata.items():
            first = v.splitlines()[0] if v else ""
            print(f"  metadata        {k}: {first}")
        if ar.manifest.extensions_used:
            print(f"  extensions      {', '.join(ar.manifest.extensions_used)}")
        data = ar.data
        space_keys = [k for k, v in data.items() if isinstance(v, (sp.Box, sp.Discrete, sp.MultiDiscrete, sp.MultiBinary, sp.Dict, sp.Tuple, sp.Text))]
        if space_keys:
            print("spaces")
            for k in space_keys:
                print(f"  {k:30} {describe(data[k])}")
        print("data")
        for k, v in data.items():
            if k not in space_keys:
                print(f"  {k:30} {describe(v)}")
        print("tensor groups")
        for g in ar.groups:
            infos = ar.tensor_info(g)
            total = sum(i.nbytes for i in infos.values())
            print(f"  {g}: {len(infos)} tensors, {total} bytes")
            for name, i in infos.items():
                print(f"    {name:40} {i.dtype:6} {list(i.shape)} {i.nbytes} B")
        if ar.optimizer_names:
            print("optimizers")
            for name in ar.optimizer_names:
                print(f"  {name}")
    return 0


def _cmd_dump(args: argparse.Namespace) -> int:
    from .reader import Archive

    with Archive(args.file, spaces="neutral") as ar:
        out = ar.dump()
    sys.stdout.buffer.write(out + b"\n")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    import importlib

    mod = importlib.import_module(f"rlarchive.interop.{args.module}")
    report = mod.import_archive(args.input, args.output, algorithm=args.algorithm)
    print(json.dumps(report.to_dict(), indent=2) if args.json else str(report))
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from .interop import sb3

    sb3.export_archive(args.input, args.output, allow_classes=tuple(args.allow_class))
    print(f"wrote {args.output}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``rlarchive`` command."""
    parser = argparse.ArgumentParser(prog="rlarchive", description="Check, inspect and dump rlarchive files.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="check files against the spec; exit 1 if any has errors")
    p.add_argument("files", nargs="+")
    p.add_argument("--json", action="store_true", help="print the JSON report (spec §14)")
    p.set_defaults(fn=_cmd_validate)
    p = sub.add_parser("inspect", help="print a readable summary")
    p.add_argument("file")
    p.set_defaults(fn=_cmd_inspect)
    p = sub.add_parser("dump", help="print the canonical dump (spec §13)")
    p.add_argument("file")
    p.set_defaults(fn=_cmd_dump)
    for module, library, example in (("sb3", "Stable-Baselines3", "PPO"), ("sb2", "Stable-Baselines (SB2)", "PPO2")):
        p = sub.add_parser(f"import-{module}", help=f"convert a {library} .zip without running its pickles")
        p.add_argument("input")
        p.add_argument("output")
        p.add_argument("--algorithm", help=f"e.g. {example} (guessed from the data when omitted)")
        p.add_argument("--json", action="store_true", help="print the import report as JSON")
        p.set_defaults(fn=_cmd_import, module=module)
    p = sub.add_parser("export-sb3", help="write a Stable-Baselines3 .zip that SB3's load accepts")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--allow-class", action="append", default=[], metavar="NAME", help="also allow this class name (or prefix.*)")
    p.set_defaults(fn=_cmd_export)
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except RlarchiveError as e:
        print(f"rlarchive: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
