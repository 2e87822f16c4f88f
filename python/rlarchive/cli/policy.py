"""The commands that run an archive's portable policy: ``predict``, ``evaluate`` and ``export-onnx``.

``predict --obs`` takes one of three forms of its input (the rule is in
:func:`read_obs` and the command's help): ``-`` reads standard input; text
that starts (after spaces) with ``[`` or ``{``, or is a number (a digit, or
``-`` followed by a digit), is inline JSON; anything else is a file's path
(``./5`` reads a file named ``5``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import RlarchiveError
from ..filenames import escape_name, printable
from .common import EXIT_OK, line, lines, parse_input, positive, read_input

OBS_HELP = (
    "the observations: '-' reads standard input; text starting with '[' or '{', or a number (a digit, or '-' and a digit), "
    "is inline JSON; anything else is a file (./NAME for a file whose name looks like JSON). The JSON is one observation "
    "(JSON numbers, or a value of spec §7), a batch of observations (one action each), or "
    '{"observations": [...], "episode_starts": [...], "action_masks": [...]} (a sequence in time, as the conformance predict request); '
    "at most 64 levels deep, and within 256 MiB of memory read and parsed (spec §15)"
)


def is_inline(text: str) -> bool:
    """Whether an ``--obs`` argument is inline JSON rather than a path: it starts (after spaces) with ``[`` or ``{``,
    with a digit, or with ``-`` followed by a digit."""
    t = text.lstrip()
    return t[:1] in ("[", "{") or t[:1].isdigit() or (t[:1] == "-" and t[1:2].isdigit())


def read_obs(given: str) -> tuple[Any, ...]:
    """(the parsed JSON of an ``--obs`` argument, what to call it in messages). The text is JSON as Python's json
    module reads it (NaN and Infinity too), within the bounds of :func:`rlarchive.cli.common.parse_input`:
    INPUT_INVALID for a text too deep, or too large to read and parse within MAX_INPUT_JSON_MEMORY (spec §15)."""
    if given == "-":
        what = "standard input"
        raw = read_input(sys.stdin.buffer, what)
    elif is_inline(given):
        raw, what = given.encode("utf-8", "surrogateescape"), "--obs"
    else:
        with open(given, "rb") as f:
            raw = read_input(f, given)
        what = given
    return parse_input(raw, what), what


def _bare(policy: Any, given: Any) -> list[Any]:
    """The actions for a bare ``--obs`` value: one observation, or a batch (SB3's sense: observations side by side,
    each from the start of an episode), one action each. A JSON array of objects for a Dict space is a batch; any
    other value is one observation when its shape is the space's, a batch when it has one more axis."""
    import numpy as np

    from ..extensions.policy.observations import kind, observation_shape
    from ..values import load_value

    if kind(policy.observation_space) == "dict" and isinstance(given, list):
        items = [load_value(v, f"/{i}") for i, v in enumerate(given)]
        value: Any = {k: np.stack([np.asarray(o[k]) for o in items]) for k in (items[0] if items else {})}
        if not items or any(not isinstance(o, dict) or set(o) != set(items[0]) for o in items):
            raise ValueError("a batch of Dict observations is a non-empty array of objects with the same keys")
    else:
        value = load_value(given, "")
    actions, _ = policy.predict(value)
    actions = np.asarray(actions)
    single = actions.shape == observation_shape(policy.action_space)  # predict gives one action for one observation
    return [actions] if single else list(actions)


def _request(given: Any) -> tuple[Any, ...]:
    """(observations, episode starts, action masks) of an ``--obs`` request ``{"observations": [...], ...}``."""
    from ..values import load_value

    if not isinstance(given["observations"], list):
        raise ValueError("'observations' must be a list")
    observations = [load_value(v, f"/observations/{i}") for i, v in enumerate(given["observations"])]
    masks = given.get("action_masks")
    masks = [load_value(v, f"/action_masks/{i}") for i, v in enumerate(masks)] if masks is not None else None
    return observations, given.get("episode_starts"), masks


def cmd_predict(args: argparse.Namespace) -> int:
    """``predict``: one action per observation, as ``{"actions": [...]}``."""
    from ..extensions.policy.evaluator import act
    from ..reader import Archive
    from ..values import dump_value

    given, what = read_obs(args.obs)
    with Archive(args.file, spaces="neutral") as ar:
        policy = ar.policy()
    if policy is None:
        raise RlarchiveError(
            "INPUT_INVALID",
            f"{args.file} has no portable policy (extension RLA_policy); import it again with SB3 installed",
        )
    try:
        if isinstance(given, dict) and "observations" in given:
            actions = act(policy, *_request(given))
        else:
            actions = _bare(policy, given)
    except RlarchiveError as e:  # a value of the caller's input that is not a value of spec §7
        raise RlarchiveError("INPUT_INVALID", f"{what}: {e}") from None
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise RlarchiveError("INPUT_INVALID", f"{what}: the observations do not fit the policy: {e}") from None
    out = [dump_value(a) if args.values else a.tolist() for a in actions]
    print(json.dumps({"actions": out}))
    return EXIT_OK


def cmd_export_onnx(args: argparse.Namespace) -> int:
    """``export-onnx``."""
    from ..extensions.policy.onnx_export import DEFAULT_OPSET, export_onnx

    masks = {"auto": None, "yes": True, "no": False}[args.action_masks]
    report = export_onnx(
        args.file,
        args.output,
        opset=DEFAULT_OPSET if args.opset is None else args.opset,
        action_masks=masks,
        precision=args.precision,
    )
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        lines(str(report), (args.file, args.output))
    return EXIT_OK


def _environment(args: argparse.Namespace) -> str:
    """The environment id: ``--env``, or the one the archive records when it is registered in the installed
    gymnasium (spec/metadata.md §6), said on standard error."""
    from .. import env_ids
    from ..metadata import provenance
    from ..reader import Archive

    if args.env is not None:
        env: str = args.env
        return env
    with Archive(args.file, spaces="neutral") as ar:
        recorded = provenance(ar.metadata).env_id
    if recorded is None:
        raise RlarchiveError(
            "INPUT_INVALID",
            "the archive records no environment id: give one (usage: rlarchive evaluate FILE --env ENV_ID)",
        )
    why = env_ids.why_not(recorded)
    if why is not None:
        raise RlarchiveError(
            "INPUT_INVALID",
            f"the archive records the environment {recorded!r}, which is not used ({why}): give the id yourself "
            "(usage: rlarchive evaluate FILE --env ENV_ID)",
        )
    print(
        f"note: environment {printable(repr(recorded))}, as the archive records it (registered in the installed gymnasium)",
        file=sys.stderr,
    )
    return recorded


def cmd_evaluate(args: argparse.Namespace) -> int:
    """``evaluate``."""
    from ..evaluate import evaluate, record, to_json

    env = _environment(args)
    result = evaluate(args.file, env, args.episodes, args.seed)
    for note in result.notes:
        print(f"note: {printable(note)}", file=sys.stderr)
    if args.record:
        record(args.file, result)
    video_notes: list[str] = []
    if args.video is not None:
        from ..video import record_video

        video_notes = record_video(args.file, env, args.video, seed=args.seed)
        for note in video_notes:
            print(f"note: {printable(note)}", file=sys.stderr)
    if args.json:
        print(to_json(result))
        return EXIT_OK
    line(f"environment     {env}")
    line(
        f"episodes        {result.episodes}"
        + (f" (seeds {result.seeds[0]}..{result.seeds[-1]})" if result.seeds else " (unseeded)")
    )
    line(f"mean return     {result.mean:.6g} +/- {result.std:.6g}")
    line(
        f"lengths         mean {float(sum(result.lengths)) / len(result.lengths):.6g}, min {min(result.lengths)}, max {max(result.lengths)}"
    )
    line("returns         " + " ".join(f"{r:.6g}" for r in result.returns))
    if args.record:
        line(f"recorded in     {escape_name(args.file)} (metadata evaluations)")
    if args.video is not None and not video_notes:
        line(f"video           {escape_name(args.video)}")
    return EXIT_OK


def add_commands(sub: Any) -> None:
    """Register ``evaluate``, ``predict`` and ``export-onnx`` on the ``rlarchive`` parser's sub-parsers ``sub``."""
    p = sub.add_parser(
        "evaluate",
        help="run the archive's portable policy in a gymnasium environment (NumPy and gymnasium only) and print the returns",
    )
    p.add_argument("file")
    p.add_argument(
        "--env",
        metavar="ENV_ID",
        help="the gymnasium id to make (default: the id the archive records, only when it names an environment "
        "registered in the installed gymnasium, with no module part)",
    )
    p.add_argument("--episodes", type=positive, default=10, metavar="N", help="episodes to run (default 10)")
    p.add_argument("--seed", type=int, metavar="S", help="reset episode i with seed S+i (default: unseeded)")
    p.add_argument(
        "--record",
        action="store_true",
        help="append the result to the archive's metadata evaluations (rewrites it atomically)",
    )
    p.add_argument(
        "--video",
        metavar="OUT.mp4",
        help="also record one episode (seed S) as an MP4 video (needs rlarchive[video] and an environment that renders)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON (the recorded structure, plus notes)")
    p.set_defaults(fn=cmd_evaluate)
    p = sub.add_parser("predict", help="print the actions the archive's portable policy takes (NumPy only)")
    p.add_argument("file")
    p.add_argument("--obs", required=True, metavar="OBS", help=OBS_HELP)
    p.add_argument(
        "--values", action="store_true", help="print actions as typed values of spec §7 (dtype, shape, base64)"
    )
    p.set_defaults(fn=cmd_predict)
    p = sub.add_parser(
        "export-onnx", help="write the archive's portable policy as an ONNX model (needs the package onnx)"
    )
    p.add_argument("file")
    p.add_argument("output", metavar="OUT.onnx")
    p.add_argument("--opset", type=int, metavar="N", help="the ONNX opset to write (default 17; 14 or later)")
    p.add_argument(
        "--action-masks",
        choices=("auto", "yes", "no"),
        default="auto",
        help="give the model an action_masks input: auto (for MaskablePPO), yes (any argmax head), no",
    )
    p.add_argument(
        "--precision",
        choices=("float64", "float32"),
        default="float64",
        help="the dtype of sums (linear, conv2d, LSTM gates): float64 (default) rounds each sum once, as the spec says; "
        "float32 is faster (native Conv) and gives the same actions except where a float32 partial sum overflows",
    )
    p.add_argument("--json", action="store_true", help="print what was written (inputs, outputs, size) as JSON")
    p.set_defaults(fn=cmd_export_onnx)
