"""The commands that describe and share an agent: ``metadata``, ``card``, ``package`` and ``strip``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..filenames import escape_name, json_text, printable
from ..hub.package import DEFAULT_EPISODES
from ..metadata import DROPPABLE_PARTS as PARTS
from ..metadata import TRAINING_ONLY_PARTS as TRAINING_ONLY
from .common import EXIT_OK, key_value, line, metadata_pair, natural, pairs


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
    from ..hub.card import card

    sys.stdout.write(card(args.file))
    return EXIT_OK


def cmd_package(args: argparse.Namespace) -> int:
    """``package``: a folder ready for a model hub, from an archive or an RL Zoo run folder."""
    from ..hub.package import package
    from .common import special, unreadable

    if not os.path.isdir(args.source) or special(args.source):
        problem = unreadable(args.source)
        if problem is not None:
            raise problem
    result = package(
        args.source,
        args.outdir,
        force=args.force,
        onnx=not args.no_onnx,
        keep_training=args.keep_training,
        env_id=args.env,
        episodes=args.episodes,
        seed=args.seed,
        video=not args.no_video,
        metadata=pairs(args.metadata),
    )
    for note in result.notes:
        print(f"note: {printable(note)}", file=sys.stderr)
    line(f"package         {escape_name(result.folder)}")
    for name in result.files:
        line(f"  {escape_name(name)}")
    return EXIT_OK


def cmd_strip(args: argparse.Namespace) -> int:
    """``strip``: an inference-only archive."""
    from ..strip import strip

    result = strip(args.file, args.output, args.drop or None)
    for note in result.notes:
        print(f"note: {printable(note)}", file=sys.stderr)
    line(f"wrote           {escape_name(result.path)}")
    line(f"dropped         {', '.join(result.dropped) or 'nothing'}")
    line(f"size            {result.bytes_before} -> {result.bytes_after} bytes")
    return EXIT_OK


def add_commands(sub: Any) -> None:
    """Register ``metadata``, ``card``, ``package`` and ``strip`` on the ``rlarchive`` parser's sub-parsers ``sub``."""
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
        help="write a folder ready for a model hub from an archive or an RL Zoo run folder: the archive "
        "(inference-only), README.md (the card), an evaluation (results.json), model.onnx, replay.mp4, the Zoo's "
        "config files and training curves, .gitattributes",
    )
    p.add_argument("source", metavar="SOURCE", help="an archive, or an RL Zoo run folder (logs/ALGO/ENV_N)")
    p.add_argument("outdir")
    p.add_argument("--force", action="store_true", help="replace an existing non-empty OUTDIR (as a whole)")
    p.add_argument("--no-onnx", action="store_true", help="leave the ONNX model out")
    p.add_argument(
        "--keep-training",
        action="store_true",
        help="keep the replay buffer, run state and optimizer moments (default: the archive is inference-only)",
    )
    p.add_argument(
        "--env",
        metavar="ENV_ID",
        help="the gymnasium id to evaluate in and record (default: the recorded id, if registered in the installed "
        "gymnasium; else no evaluation)",
    )
    p.add_argument(
        "--episodes",
        type=natural,
        default=DEFAULT_EPISODES,
        metavar="N",
        help=f"episodes of the evaluation (default {DEFAULT_EPISODES}; 0: none)",
    )
    p.add_argument("--seed", type=int, default=0, metavar="S", help="reset episode i with seed S+i (default 0)")
    p.add_argument("--no-video", action="store_true", help="leave the replay video out")
    p.add_argument(
        "--metadata",
        action="append",
        type=key_value,
        metavar="KEY=VALUE",
        help="put KEY into the package's archive (e.g. license=apache-2.0; repeatable)",
    )
    p.set_defaults(fn=cmd_package)
    p = sub.add_parser(
        "strip",
        help="rewrite an archive without what only training reads (replay buffer, run state, optimizer moments): "
        "an inference-only archive, validated, atomically",
    )
    p.add_argument("file")
    p.add_argument("-o", "--output", metavar="OUT", help="write the result here (default: rewrite FILE)")
    p.add_argument(
        "--drop",
        action="append",
        choices=PARTS,
        metavar="PART",
        help=f"drop this part only (repeatable): {', '.join(PARTS)}; default: {', '.join(TRAINING_ONLY)}",
    )
    p.set_defaults(fn=cmd_strip)
