"""The conversion commands: ``import-sb3``, ``import-sb2``, ``import-zoo`` and ``export-sb3``."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from ..errors import RlarchiveError
from ..filenames import escape_name, printable
from .common import EXIT_OK, lines, metadata_pair, pairs, size


def sb3_algorithm(text: str) -> str:
    """An algorithm name of :data:`rlarchive.sb3.algorithms.ALGORITHMS` (any other is a usage error)."""
    from ..sb3.algorithms import ALGORITHMS

    if text not in ALGORITHMS:
        raise argparse.ArgumentTypeError(f"not an algorithm: {text!r} (one of {', '.join(ALGORITHMS)})")
    return text


def sb3_version(text: str) -> str:
    """A Stable-Baselines3 version an export can be written for: ``X.Y`` (or ``X.Y.Z``), 2.0 or later."""
    from ..sb3.exporting import check_version

    try:
        check_version(text)
    except RlarchiveError as e:
        raise argparse.ArgumentTypeError(e.message) from None
    return text


def _export_parts(args: argparse.Namespace) -> None:
    """Refuse an export's request for a part the archive does not hold (INPUT_INVALID): the file is valid, the
    request is not; the archive's own faults are its own codes."""
    from ..extensions import replay_buffer, vec_normalize
    from ..reader import open_archive

    wanted = ((args.vecnormalize_out, vec_normalize.EXTENSION, "--vecnormalize-out", "VecNormalize statistics"),
              (args.replay_buffer_out, replay_buffer.EXTENSION, "--replay-buffer-out", "replay buffer"))  # fmt: skip
    if not any(out for out, *_ in wanted):
        return
    with open_archive(args.input, spaces="neutral") as ar:
        used = ar.manifest.extensions_used
    for out, ext, option, what in wanted:
        if out is not None and ext not in used:
            raise RlarchiveError("INPUT_INVALID", f"{option}: {args.input} holds no {what} (extension {ext}) to write")


def training_contents(path: str) -> dict[str, Any]:
    """What an archive carries for training to go on: its replay buffer (class, transitions), run state and random state."""
    from .. import extensions
    from ..extensions import replay_buffer
    from ..extensions import training as training_state
    from ..reader import open_archive
    from ..sb3 import replay_buffer as buffers

    with open_archive(path, spaces="neutral") as ar:
        raw = extensions.read_document(ar, replay_buffer.EXTENSION)
        run = training_state.EXTENSION in ar.manifest.extensions_used
    buffer = (
        None
        if raw is None
        else {"class": raw["class"], "transitions": buffers.transitions(raw), "description": buffers.describe(raw)}
    )
    return {"replay_buffer": buffer, "run_state": run, "random_state": run}


def training_lines(contents: dict[str, Any], none_why: str) -> list[Any]:
    """The lines that say what ``contents`` (:func:`training_contents`) holds; ``none_why`` says why the run and random state are absent."""
    rb = contents["replay_buffer"]
    lines = [f"    replay buffer: yes, {rb['description']}" if rb else "    replay buffer: no"]
    for key, name in (("run_state", "run state"), ("random_state", "random state")):
        lines.append(f"    {name}: yes" if contents[key] else f"    {name}: no ({none_why})")
    return lines


def cmd_import(args: argparse.Namespace) -> int:
    """``import-sb3`` and ``import-sb2``."""
    mod = importlib.import_module(f"rlarchive.{args.module}")
    extra = (
        {"vec_normalize": args.vecnormalize, "replay_buffer": args.replay_buffer, "metadata": pairs(args.metadata)}
        if args.module == "sb3"
        else {}
    )
    report = mod.import_archive(args.input, args.output, algorithm=args.algorithm, budget=args.budget, **extra)
    if args.module != "sb3":
        if args.json:
            print(json.dumps(report.to_dict(), indent=2))
        else:
            lines(str(report), (args.input, args.output))
        return EXIT_OK
    contents = training_contents(args.output)  # what the written archive carries for training to go on
    if args.json:
        print(json.dumps(dict(report.to_dict(), training=contents), indent=2))
    else:
        why = "Stable-Baselines3's files keep none; rlarchive.sb3.save(model, path, replay_buffer=True) stores them from the live model"
        text = [str(report), "  for training to go on:"] + training_lines(contents, why)
        lines("\n".join(text), (args.input, args.output))
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """``export-sb3``."""
    import warnings

    from .. import sb3

    _export_parts(args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sb3.ExportWarning)  # the notes returned are printed below
        notes = sb3.export_archive(
            args.input,
            args.output,
            allow_classes=tuple(args.allow_class),
            sb3_version=args.sb3_version,
            vec_normalize_out=args.vecnormalize_out,
            replay_buffer_out=args.replay_buffer_out,
        )
    for note in notes or ():
        print(f"warning: {printable(note)}", file=sys.stderr)
    extra = [escape_name(p) for p in (args.vecnormalize_out, args.replay_buffer_out) if p]
    print(f"wrote {escape_name(args.output)}" + "".join(f" and {p}" for p in extra))
    contents = training_contents(args.input)
    rb = contents["replay_buffer"]
    if args.replay_buffer_out:
        print(f"  replay buffer: {printable(rb['description'])} -> {escape_name(args.replay_buffer_out)}")
    elif rb:
        print(
            f"  replay buffer: not written ({rb['transitions']} transitions in the archive; --replay-buffer-out PKL writes it)"
        )
    if contents["run_state"]:
        print(
            "  run state and random state: not written (a Stable-Baselines3 .zip has no place for them; rlarchive.sb3.load restores them from the archive)"
        )
    return EXIT_OK


def cmd_import_zoo(args: argparse.Namespace) -> int:
    """``import-zoo``."""
    from ..zoo import find_run, import_zoo

    if args.best and find_run(args.run).best_model is None:  # a run that is no run at all: its own error (exit 1)
        raise RlarchiveError(
            "INPUT_INVALID", f"--best: {args.run} has no best_model.zip (the run did not evaluate during training)"
        )

    report = import_zoo(
        args.run,
        args.output,
        best=args.best,
        replay_buffer=not args.no_replay_buffer,
        algorithm=args.algorithm,
        budget=args.budget,
        metadata=pairs(args.metadata),
    )
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        lines(str(report), (args.run, args.output))
    return EXIT_OK


def _add_import_zoo(sub: Any) -> None:
    """The ``import-zoo`` command (Annex B.12)."""
    p = sub.add_parser(
        "import-zoo",
        help="convert an RL Zoo run folder (model zip, vecnormalize.pkl, config.yml, args.yml) without running its pickles or YAML tags",
    )
    p.add_argument(
        "run", metavar="RUN_FOLDER", help="the run's folder, e.g. logs/ppo/CartPole-v1_1 (or a hub repository's files)"
    )
    p.add_argument("output")
    p.add_argument("--best", action="store_true", help="import best_model.zip instead of the final model")
    p.add_argument("--no-replay-buffer", action="store_true", help="leave out the run's replay_buffer.pkl")
    p.add_argument("--algorithm", type=sb3_algorithm, help="e.g. PPO (told from the data when omitted)")
    p.add_argument("--budget", type=size, metavar="BYTES", help="memory each import step may allocate, e.g. 2G")
    p.add_argument(
        "--metadata",
        action="append",
        type=metadata_pair,
        metavar="KEY=VALUE",
        help="add manifest metadata (repeatable), over what the run gives",
    )
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    p.set_defaults(fn=cmd_import_zoo)


def _add_imports(sub: Any) -> None:
    """The ``import-sb3`` and ``import-sb2`` commands."""
    for module, library, example in (("sb3", "Stable-Baselines3", "PPO"), ("sb2", "Stable-Baselines (SB2)", "PPO2")):
        p = sub.add_parser(f"import-{module}", help=f"convert a {library} model file without running its pickles")
        p.add_argument("input")
        p.add_argument("output")
        p.add_argument(
            "--algorithm",
            type=sb3_algorithm if module == "sb3" else str,
            help=f"e.g. {example} (told from the data when omitted)",
        )
        p.add_argument(
            "--budget",
            type=size,
            metavar="BYTES",
            help="memory the import may allocate, e.g. 2G (default: 256M or 4 times the input's size, whichever is larger)",
        )
        p.add_argument("--json", action="store_true", help="print the import report as JSON")
        if module == "sb3":
            p.add_argument(
                "--vecnormalize",
                metavar="PKL",
                help="the vecnormalize.pkl saved beside the model: its statistics go into the archive (read without running it)",
            )
            p.add_argument(
                "--replay-buffer",
                metavar="PKL",
                help="the file model.save_replay_buffer wrote: the buffer goes into the archive (read without running it)",
            )
            p.add_argument(
                "--metadata",
                action="append",
                type=metadata_pair,
                metavar="KEY=VALUE",
                help="add manifest metadata (repeatable), e.g. env_id=CartPole-v1 (spec/metadata.md; the zip does not name its environment)",
            )
        p.set_defaults(fn=cmd_import, module=module)


def _add_export(sub: Any) -> None:
    """The ``export-sb3`` command."""
    p = sub.add_parser("export-sb3", help="write a Stable-Baselines3 .zip that SB3's load accepts")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument(
        "--allow-class", action="append", default=[], metavar="NAME", help="also allow this class name (or prefix.*)"
    )
    p.add_argument(
        "--sb3-version",
        type=sb3_version,
        metavar="X.Y",
        help="the Stable-Baselines3 version (2.0 or later) that must load the file (default: the version recorded at import)",
    )
    p.add_argument(
        "--vecnormalize-out",
        metavar="PKL",
        help="also write the archive's VecNormalize statistics, for VecNormalize.load",
    )
    p.add_argument(
        "--replay-buffer-out",
        metavar="PKL",
        help="also write the archive's replay buffer, for model.load_replay_buffer",
    )
    p.set_defaults(fn=cmd_export)


def add_commands(sub: Any) -> None:
    """Register the conversion commands on the ``rlarchive`` parser's sub-parsers ``sub``."""
    _add_imports(sub)
    _add_import_zoo(sub)
    _add_export(sub)
