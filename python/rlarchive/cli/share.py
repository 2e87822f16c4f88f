"""The commands that describe and share an agent: ``metadata``, ``card`` and ``package``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..filenames import escape_name, json_text, printable
from .common import EXIT_OK, line, metadata_pair, pairs


def _print_metadata(metadata: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json_text(metadata))
        return
    for k, v in metadata.items():
        line(f"{k}: {v}" if "\n" not in v else f"{k}: {v.splitlines()[0] if v.splitlines() else ''} ...")


def cmd_metadata(args: argparse.Namespace) -> int:
    """``metadata``: print the metadata, or change it."""
    from ..edit import update_metadata
    from ..reader import Archive

    changes = pairs(args.set)
    if changes or args.unset:
        metadata = update_metadata(args.file, changes, args.unset)
    else:
        with Archive(args.file, spaces="neutral") as ar:
            metadata = ar.metadata
    _print_metadata(metadata, args.json)
    return EXIT_OK


def cmd_card(args: argparse.Namespace) -> int:
    """``card``: the model card."""
    from ..card import card

    sys.stdout.write(card(args.file))
    return EXIT_OK


def cmd_package(args: argparse.Namespace) -> int:
    """``package``: a folder ready for a model hub."""
    from ..package import package

    result = package(args.file, args.outdir, force=args.force, onnx=not args.no_onnx)
    for note in result.notes:
        print(f"note: {printable(note)}", file=sys.stderr)
    line(f"package         {escape_name(result.folder)}")
    for name in result.files:
        line(f"  {escape_name(name)}")
    return EXIT_OK


def add_commands(sub: Any) -> None:
    """Register ``metadata``, ``card`` and ``package`` on the ``rlarchive`` parser's sub-parsers ``sub``."""
    p = sub.add_parser(
        "metadata",
        help="print an archive's metadata, or change it (--set, --unset) by rewriting the archive atomically",
    )
    p.add_argument("file")
    p.add_argument("--set", action="append", type=metadata_pair, metavar="KEY=VALUE", help="put KEY (repeatable)")
    p.add_argument("--unset", action="append", default=[], metavar="KEY", help="remove KEY (repeatable; before --set)")
    p.add_argument("--json", action="store_true", help="print the metadata as one JSON object")
    p.set_defaults(fn=cmd_metadata)
    p = sub.add_parser(
        "card",
        help="print a model card (Markdown with YAML front matter, as model hubs read it): provenance, evaluations, how to load",
    )
    p.add_argument("file")
    p.set_defaults(fn=cmd_card)
    p = sub.add_parser(
        "package",
        help="write a folder ready for a model hub: the archive, README.md (the card), model.onnx, results.json (the RL Zoo's form)",
    )
    p.add_argument("file")
    p.add_argument("outdir")
    p.add_argument("--force", action="store_true", help="replace an existing non-empty OUTDIR (as a whole)")
    p.add_argument("--no-onnx", action="store_true", help="leave the ONNX model out")
    p.set_defaults(fn=cmd_package)
