"""The ``rlarchive`` command: validate, inspect, dump, Stable-Baselines conversion, and ONNX export.

Exit status:

- 0: success (for ``validate``: every file is valid);
- 1: a file is invalid (``validate`` found errors, or a command could not
  read, import or convert a file because of what it holds);
- 2: a usage error, a file or destination that cannot be read or written
  (``IO_ERROR``, ``IO_TIMEOUT`` for a URL), a missing optional package (``FRAMEWORK_UNAVAILABLE``), or a
  defect (``INTERNAL_ERROR``).

Every failure prints one line ``rlarchive: CODE: message`` on standard error,
never a traceback. When standard output is closed early (``rlarchive dump x |
head -c1``) the command stops quietly with status 2.

File names are printed in the escaped form of spec §14 (bytes that are not
UTF-8 as ``\\xHH``, control and invisible characters as ``\\uHHHH``), and the
strings of an archive with such characters escaped, so that nothing printed
can break a line, forge one or reach the terminal as a control; a JSON report
gives a name that is not UTF-8 as that form plus ``file_base64`` (its bytes).
"""
from __future__ import annotations

import argparse
import codecs
import io
import json
import os
import re
import signal
import stat
import sys
from typing import Any, Iterator, Optional, Sequence

from . import spaces as sp
from .errors import RlarchiveError
from .filenames import escape_name, printable
from .schedules import Constant, Linear, Piecewise
from .tensors import RawTensor
from .values import ClassRef, Opaque

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_ERROR = 2
#: Codes that are about the environment or the request rather than a file's content.
_EXIT_ERROR_CODES = frozenset({"IO_ERROR", "IO_TIMEOUT", "FRAMEWORK_UNAVAILABLE", "INTERNAL_ERROR", "INPUT_INVALID", "ENV_NOT_FOUND", "ENV_MISMATCH"})
#: Longest message printed, in characters (a message can quote a whole library error).
_MAX_MESSAGE = 2000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def _one_line(text: str) -> str:
    """``text`` on one printable line: line breaks and other control characters become spaces,
    bytes that are not UTF-8 and invisible characters are escaped (:func:`rlarchive.filenames.printable`)."""
    text = printable(_CONTROL.sub(" ", text).strip())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def _shown(text: str, names: Sequence[Optional[str]] = ()) -> str:
    """``text`` with each of the file ``names`` it quotes in its escaped form (spec §14)."""
    for name in names:
        if name and name in text:
            escaped = escape_name(name)
            if escaped != name:
                text = text.replace(name, escaped)
    return text


def _say(text: str, names: Sequence[Optional[str]] = ()) -> None:
    """Print one line ``rlarchive: ...`` on standard error (which may itself be gone); the file
    ``names`` the text quotes are shown in their escaped form."""
    if sys.stderr is None:  # no standard error at all (print would fall back to standard output)
        return
    try:
        print("rlarchive: " + _one_line(_shown(text, names)), file=sys.stderr, flush=True)
    except (OSError, ValueError):  # standard error closed
        pass


def _exit_status(code: str) -> int:
    return EXIT_ERROR if code in _EXIT_ERROR_CODES else EXIT_INVALID


# ---------------------------------------------------------------- hints


def _zip_names(path: str) -> Optional[list]:
    """The member names of a plain ZIP file, or None (never raises; reads only the central directory)."""
    import zipfile

    from .limits import MAX_MEMBERS

    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            return [i.filename for i in infos] if len(infos) <= MAX_MEMBERS else None
    except Exception:  # anything zipfile raises on a damaged file means: no hint
        return None


def _conversion_hint(path: str) -> str:
    """Advice for a Stable-Baselines model given where an rlarchive was expected, or ``""``."""
    names = _zip_names(path)
    if not names or "data" not in names:
        return ""
    shown = escape_name(path)
    if any(n.endswith(".pth") for n in names):
        return f" (this is a Stable-Baselines3 model: convert it with: rlarchive import-sb3 {shown} OUT.rlarchive)"
    if "parameters" in names and "parameter_list" in names:
        return f" (this is a Stable-Baselines (SB2) model: convert it with: rlarchive import-sb2 {shown} OUT.rlarchive)"
    return ""


def _error_line(e: RlarchiveError, path: Optional[str] = None) -> str:
    hint = _conversion_hint(path) if path is not None and e.code == "ARCHIVE_NOT_RLARCHIVE" else ""
    return str(e) + hint


# ---------------------------------------------------------------- inputs


def _unreadable(path: str) -> Optional[RlarchiveError]:
    """Why ``path`` cannot serve as an input file (IO_ERROR), or None.

    Checked before a command opens it, so that a FIFO or a device never
    blocks a command or feeds it without end.
    """
    try:
        st = os.stat(path)
    except OSError as e:
        return RlarchiveError("IO_ERROR", f"cannot open {path}: {e.strerror}")
    if stat.S_ISDIR(st.st_mode):
        return RlarchiveError("IO_ERROR", f"cannot read {path}: it is a directory")
    if not stat.S_ISREG(st.st_mode):
        return RlarchiveError("IO_ERROR", f"cannot read {path}: it is not a regular file")
    try:
        os.close(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
    except OSError as e:
        return RlarchiveError("IO_ERROR", f"cannot open {path}: {e.strerror}")
    return None


def _special(path: str) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a directory (a FIFO, a device, a socket)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


# ---------------------------------------------------------------- validate


def _archives_under(folder: str, problems: list) -> Iterator[str]:
    """Every ``*.rlarchive`` file under ``folder``, recursively, in sorted order (links to folders not followed)."""
    for top, dirs, files in os.walk(folder, onerror=problems.append):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".rlarchive"):
                yield os.path.join(top, name)


def _validation_targets(paths: Sequence[str], problems: list) -> list:
    out: list = []
    for p in paths:
        if os.path.isdir(p):
            out.extend(_archives_under(p, problems))
        else:
            out.append(p)  # a missing or unreadable file gets its IO_ERROR report
    return out


def _print_report(name: str, r: dict) -> None:
    """One line for the file (its name in the escaped form of spec §14), then one indented line per issue."""
    s = r["summary"]
    verdict = "valid" if r["valid"] else "INVALID"
    print(f"{escape_name(name)}: {verdict} ({s['errors']} errors, {s['warnings']} warnings, {s['infos']} infos)")
    for i in r["issues"]:
        loc = " ".join(
            x
            for x in (
                (i.get("member", "") + ("#" + i["pointer"] if "pointer" in i else "")) or None,
                f"@{i['offset']}" if "offset" in i else None,
            )
            if x
        )
        print(f"  {i['severity']:7} {i['code']}: " + _one_line(_shown(i["message"], (name,)) + (f" [{loc}]" if loc else "")))


def _cmd_validate(args: argparse.Namespace) -> int:
    from .validate import validate

    problems: list = []
    files = _validation_targets(args.paths, problems)
    if not files and not problems:
        raise RlarchiveError("IO_ERROR", "no *.rlarchive file in " + ", ".join(args.paths))
    special = [_special(f) for f in files]  # reading a FIFO could block: reported, not validated
    refused = [f for f, no in zip(files, special) if no]
    checked = [f for f, no in zip(files, special) if not no]
    reports = [validate(f) for f in checked]
    if args.json:
        single = len(args.paths) == 1 and len(reports) == 1 and not os.path.isdir(args.paths[0])
        out: Any = reports[0] if single else {"reports": reports}
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        for f, r in zip(checked, reports):
            _print_report(f, r)
    status = EXIT_OK
    for e in problems:
        _say(f"IO_ERROR: cannot list {e.filename}: {e.strerror}", (e.filename,))
        status = EXIT_ERROR
    for f in refused:
        _say(f"IO_ERROR: cannot read {f}: it is not a regular file", (f,))
        status = EXIT_ERROR
    for f, r in zip(checked, reports):
        errors = [i for i in r["issues"] if i["severity"] == "error"]
        if errors:
            what = errors[0]["message"] if len(errors) == 1 else f"{len(errors)} errors; the first: {errors[0]['message']}"
            first = RlarchiveError(errors[0]["code"], f"{f} is invalid ({what})")
            _say(_error_line(first, f), (f,))
            status = max(status, _exit_status(first.code))
    return status


# ---------------------------------------------------------------- inspect


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


def _line(text: str) -> None:
    """Print one line of text taken from an archive (names, keys, metadata) with what could break or disguise the line escaped."""
    print(printable(text))


def _agent_lines(ar: Any) -> list[str]:
    """The lines ``inspect`` starts with: what the agent is and how good it is (spec/metadata.md), as far as recorded.

    The environment id is shown as a hint (nothing resolves it); a defined key whose value is malformed
    is left out and its ``METADATA_INVALID`` warning shown instead.
    """
    from .card import _latest_by_env

    meta = ar.metadata
    p = ar.provenance
    lines = []
    if p.env_id is not None:
        lines.append(f"  environment     {p.env_id} (as recorded: a hint)")
    algorithm = meta.get("sb3.algorithm") or meta.get("sb2.algorithm")
    if algorithm:
        lines.append(f"  algorithm       {algorithm}" + (f" ({meta['sb3.algorithm_class']})" if meta.get("sb3.algorithm_class") else ""))
    evaluations = ar.evaluations
    for e in _latest_by_env(evaluations):
        seeds = "unseeded" if e["seeds"] is None else f"seeds {e['seeds'][0]}..{e['seeds'][-1]}"
        lines.append(
            f"  mean reward     {float(e['mean']):.6g} +/- {float(e['std']):.6g} over {e['episodes']} episode{'s' if e['episodes'] != 1 else ''} of {e['env_id']} "
            f"({'deterministic' if e['deterministic'] else 'stochastic'}, {seeds}; {e['evaluator']['name']} {e['evaluator']['version']}, {e['date']})"
        )
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
            params = ", ".join(f"{k}={json.dumps(v, sort_keys=True, ensure_ascii=False)}" for k, v in w.items() if k != "name")
            shown.append(w["name"] + (f"({params})" if params else ""))
        lines.append("  wrappers        " + " -> ".join(shown))
    for w in ar.warnings:
        if w.code == "METADATA_INVALID":
            lines.append(f"  warning         {w.code} at {w.pointer}: {w.message}")
    return lines


def _cmd_inspect(args: argparse.Namespace) -> int:
    from .reader import Archive

    with Archive(args.file, spaces="neutral") as ar:
        if args.verify:
            ar.verify()
        ar.check_extensions()
        p = ar.producer
        print(escape_name(args.file))
        for line in _agent_lines(ar):
            _line(line)
        _line(f"  format version  {ar.format_version}")
        _line(f"  producer        {p['name']} {p['version']}")
        if args.verify:
            _line("  digests         every member checked (CRC-32 and SHA-256)")
        else:
            _line("  digests         manifest and data.json checked; tensor and extension members not (use --verify)")
        for k, v in ar.metadata.items():
            first = v.splitlines()[0] if v else ""
            _line(f"  metadata        {k}: {first}")
        if ar.manifest.extensions_used:
            _line(f"  extensions      {', '.join(ar.manifest.extensions_used)}")
        stats = ar.vec_normalize()
        if stats is not None:
            what = "none" if stats.obs is None else (", ".join(stats.obs_keys) if stats.obs_keys is not None else f"shape {list(stats.obs.mean.shape)}")  # type: ignore[union-attr]
            _line(f"  vec_normalize   observations: {what}; rewards: {'yes' if stats.norm_reward else 'no'}; clip_obs {stats.clip_obs}")
        data = ar.data
        space_keys = [k for k, v in data.items() if isinstance(v, (sp.Box, sp.Discrete, sp.MultiDiscrete, sp.MultiBinary, sp.Dict, sp.Tuple, sp.Text))]
        if space_keys:
            _line("spaces")
            for k in space_keys:
                _line(f"  {k:30} {describe(data[k])}")
        _line("data")
        for k, v in data.items():
            if k not in space_keys:
                _line(f"  {k:30} {describe(v)}")
        _line("tensor groups")
        for g in ar.groups:
            infos = ar.tensor_info(g)
            total = sum(i.nbytes for i in infos.values())
            _line(f"  {g}: {len(infos)} tensors, {total} bytes")
            for name, i in infos.items():
                _line(f"    {name:40} {i.dtype:6} {list(i.shape)} {i.nbytes} B")
        if ar.optimizer_names:
            _line("optimizers")
            for name in ar.optimizer_names:
                _line(f"  {name}")
    return EXIT_OK


# ---------------------------------------------------------------- dump and conversion


def _cmd_dump(args: argparse.Namespace) -> int:
    from .reader import Archive

    with Archive(args.file, spaces="neutral") as ar:
        out = ar.dump()
    sys.stdout.buffer.write(out + b"\n")
    return EXIT_OK


def _training_contents(path: str) -> dict:
    """What an archive carries for training to go on: its replay buffer (class, transitions), run state and random state."""
    from . import extensions, replay_buffer, training_state
    from .interop import replay_buffer as buffers
    from .reader import open_archive

    with open_archive(path, spaces="neutral") as ar:
        raw = extensions.read_document(ar, replay_buffer.EXTENSION)
        run = training_state.EXTENSION in ar.manifest.extensions_used
    buffer = None if raw is None else {"class": raw["class"], "transitions": buffers.transitions(raw), "description": buffers.describe(raw)}
    return {"replay_buffer": buffer, "run_state": run, "random_state": run}


def _training_lines(contents: dict, none_why: str) -> list:
    """The lines that say what ``contents`` (:func:`_training_contents`) holds; ``none_why`` says why the run and random state are absent."""
    rb = contents["replay_buffer"]
    lines = [f"    replay buffer: yes, {rb['description']}" if rb else "    replay buffer: no"]
    for key, name in (("run_state", "run state"), ("random_state", "random state")):
        lines.append(f"    {name}: yes" if contents[key] else f"    {name}: no ({none_why})")
    return lines


def _cmd_import(args: argparse.Namespace) -> int:
    import importlib

    mod = importlib.import_module(f"rlarchive.interop.{args.module}")
    extra = {"vec_normalize": args.vecnormalize, "replay_buffer": args.replay_buffer, "metadata": _pairs(args.metadata)} if args.module == "sb3" else {}
    report = mod.import_archive(args.input, args.output, algorithm=args.algorithm, budget=args.budget, **extra)
    if args.module != "sb3":
        print(json.dumps(report.to_dict(), indent=2) if args.json else _shown(str(report), (args.input, args.output)))
        return EXIT_OK
    contents = _training_contents(args.output)  # what the written archive carries for training to go on
    if args.json:
        print(json.dumps(dict(report.to_dict(), training=contents), indent=2))
    else:
        why = "Stable-Baselines3's files keep none; rlarchive.sb3.save(model, path, replay_buffer=True) stores them from the live model"
        lines = [str(report), "  for training to go on:"] + _training_lines(contents, why)
        print(_shown("\n".join(lines), (args.input, args.output)))
    return EXIT_OK


def _cmd_export(args: argparse.Namespace) -> int:
    import warnings

    from .interop import sb3

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sb3.ExportWarning)  # the notes returned are printed below
        notes = sb3.export_archive(
            args.input, args.output, allow_classes=tuple(args.allow_class), sb3_version=args.sb3_version, vec_normalize_out=args.vecnormalize_out,
            replay_buffer_out=args.replay_buffer_out,
        )
    for note in notes or ():
        print(f"warning: {printable(note)}", file=sys.stderr)
    extra = [escape_name(p) for p in (args.vecnormalize_out, args.replay_buffer_out) if p]
    print(f"wrote {escape_name(args.output)}" + "".join(f" and {p}" for p in extra))
    contents = _training_contents(args.input)
    rb = contents["replay_buffer"]
    if args.replay_buffer_out:
        print(f"  replay buffer: {rb['description']} -> {escape_name(args.replay_buffer_out)}")
    elif rb:
        print(f"  replay buffer: not written ({rb['transitions']} transitions in the archive; --replay-buffer-out PKL writes it)")
    if contents["run_state"]:
        print("  run state and random state: not written (a Stable-Baselines3 .zip has no place for them; rlarchive.sb3.load restores them from the archive)")
    return EXIT_OK


def _cmd_predict(args: argparse.Namespace) -> int:
    from .policy import act
    from .reader import Archive
    from .values import dump_value, load_value

    try:
        with open(args.obs, "rb") as f:
            given = json.loads(f.read())
        request = given if isinstance(given, dict) and "observations" in given else {"observations": [given]}
        if not isinstance(request["observations"], list):
            raise ValueError("'observations' must be a list")
        observations = [load_value(v, f"/observations/{i}") for i, v in enumerate(request["observations"])]
        masks = request.get("action_masks")
        masks = [load_value(v, f"/action_masks/{i}") for i, v in enumerate(masks)] if masks is not None else None
        starts = request.get("episode_starts")
    except (ValueError, KeyError, RlarchiveError) as e:  # the caller's input, not an archive
        raise RlarchiveError("INPUT_INVALID", f"{args.obs}: {e}") from None
    with Archive(args.file, spaces="neutral") as ar:
        policy = ar.policy()
    if policy is None:
        raise RlarchiveError("INPUT_INVALID", f"{args.file} has no portable policy (extension RLA_policy); import it again with SB3 installed")
    try:
        actions = act(policy, observations, starts, masks)
    except (ValueError, IndexError, TypeError) as e:
        raise RlarchiveError("INPUT_INVALID", f"{args.obs}: the observations do not fit the policy: {e}") from None
    out = [dump_value(a) if args.values else a.tolist() for a in actions]
    print(json.dumps({"actions": out}))
    return EXIT_OK


def _cmd_export_onnx(args: argparse.Namespace) -> int:
    from .onnx_export import DEFAULT_OPSET, export_onnx

    masks = {"auto": None, "yes": True, "no": False}[args.action_masks]
    report = export_onnx(args.file, args.output, opset=DEFAULT_OPSET if args.opset is None else args.opset, action_masks=masks, precision=args.precision)
    print(json.dumps(report.to_dict(), indent=2) if args.json else _shown(str(report), (args.file, args.output)))
    return EXIT_OK


def _key_value(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` (the first ``=`` separates; KEY not empty)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"not KEY=VALUE: {text!r}")
    return key, value


def _pairs(given: Optional[Sequence[tuple[str, str]]]) -> dict[str, str]:
    """The metadata ``--set``/``--metadata`` options give, in order (a repeated key: the last value)."""
    return {k: v for k, v in given or ()}


def _print_metadata(metadata: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(metadata, indent=2, ensure_ascii=False))
        return
    for k, v in metadata.items():
        _line(f"{k}: {v}" if "\n" not in v else f"{k}: {v.splitlines()[0] if v.splitlines() else ''} ...")


def _cmd_metadata(args: argparse.Namespace) -> int:
    from .edit import update_metadata
    from .reader import Archive

    changes = _pairs(args.set)
    if changes or args.unset:
        metadata = update_metadata(args.file, changes, args.unset)
    else:
        with Archive(args.file, spaces="neutral") as ar:
            metadata = ar.metadata
    _print_metadata(metadata, args.json)
    return EXIT_OK


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .evaluate import evaluate, record, to_json

    result = evaluate(args.file, args.env, args.episodes, args.seed)
    for note in result.notes:
        print(f"note: {printable(note)}", file=sys.stderr)
    if args.record:
        record(args.file, result)
    if args.json:
        print(to_json(result))
        return EXIT_OK
    _line(f"environment     {args.env}")
    _line(f"episodes        {result.episodes}" + (f" (seeds {result.seeds[0]}..{result.seeds[-1]})" if result.seeds else " (unseeded)"))
    _line(f"mean return     {result.mean:.6g} +/- {result.std:.6g}")
    _line(f"lengths         mean {float(sum(result.lengths)) / len(result.lengths):.6g}, min {min(result.lengths)}, max {max(result.lengths)}")
    _line("returns         " + " ".join(f"{r:.6g}" for r in result.returns))
    if args.record:
        _line(f"recorded in     {escape_name(args.file)} (metadata evaluations)")
    return EXIT_OK


def _cmd_card(args: argparse.Namespace) -> int:
    from .card import card

    sys.stdout.write(card(args.file))
    return EXIT_OK


def _cmd_package(args: argparse.Namespace) -> int:
    from .package import package

    result = package(args.file, args.outdir, force=args.force, onnx=not args.no_onnx)
    for note in result.notes:
        print(f"note: {printable(note)}", file=sys.stderr)
    _line(f"package         {escape_name(result.folder)}")
    for name in result.files:
        _line(f"  {escape_name(name)}")
    return EXIT_OK


def _cmd_import_zoo(args: argparse.Namespace) -> int:
    from .interop.zoo import import_zoo

    report = import_zoo(
        args.run, args.output, best=args.best, replay_buffer=not args.no_replay_buffer, algorithm=args.algorithm, budget=args.budget,
        metadata=_pairs(args.metadata),
    )
    print(json.dumps(report.to_dict(), indent=2) if args.json else _shown(str(report), (args.run, args.output)))
    return EXIT_OK


def _add_import_zoo(sub: Any) -> None:
    """The ``import-zoo`` command (Annex B.12)."""
    p = sub.add_parser("import-zoo", help="convert an RL Zoo run folder (model zip, vecnormalize.pkl, config.yml, args.yml) without running its pickles or YAML tags")
    p.add_argument("run", metavar="RUN_FOLDER", help="the run's folder, e.g. logs/ppo/CartPole-v1_1 (or a hub repository's files)")
    p.add_argument("output")
    p.add_argument("--best", action="store_true", help="import best_model.zip instead of the final model")
    p.add_argument("--no-replay-buffer", action="store_true", help="leave out the run's replay_buffer.pkl")
    p.add_argument("--algorithm", help="e.g. PPO (told from the data when omitted)")
    p.add_argument("--budget", type=_size, metavar="BYTES", help="memory each import step may allocate, e.g. 2G")
    p.add_argument("--metadata", action="append", type=_key_value, metavar="KEY=VALUE", help="add manifest metadata (repeatable), over what the run gives")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    p.set_defaults(fn=_cmd_import_zoo)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive integer: {text!r}")
    return int(text)


def _size(text: str) -> int:
    """A byte count: digits with an optional K, M or G (powers of 1024)."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = t[-1:] if t[-1:] in units else ""
    number = t[: len(t) - len(unit)]
    if not number.isdigit() or len(number) > 15:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 512M, 2G, 1000000)")
    return int(number) * units[unit]


# ---------------------------------------------------------------- entry point


def _parser() -> argparse.ArgumentParser:
    from . import FORMAT_VERSION, __version__

    parser = argparse.ArgumentParser(
        prog="rlarchive",
        description="Check, inspect, dump and convert rlarchive files.",
        epilog="Exit status: 0 success, 1 a file is invalid, 2 usage or I/O error.",
    )
    parser.add_argument("--version", action="version", version=f"rlarchive {__version__} (format {FORMAT_VERSION})")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate", help="check files against the spec; exit 1 if any has errors")
    p.add_argument("paths", nargs="+", metavar="PATH", help="an archive, or a folder: every *.rlarchive file under it")
    p.add_argument("--json", action="store_true", help="print one JSON document: a report (one file), or {\"reports\": [...]} (spec §14)")
    p.set_defaults(fn=_cmd_validate)
    p = sub.add_parser("inspect", help="print a readable summary")
    p.add_argument("file")
    p.add_argument("--verify", action="store_true", help="also check the CRC-32 and SHA-256 of every member (reads the whole file)")
    p.set_defaults(fn=_cmd_inspect)
    p = sub.add_parser("dump", help="print the canonical dump (spec §13)")
    p.add_argument("file")
    p.set_defaults(fn=_cmd_dump)
    for module, library, example in (("sb3", "Stable-Baselines3", "PPO"), ("sb2", "Stable-Baselines (SB2)", "PPO2")):
        p = sub.add_parser(f"import-{module}", help=f"convert a {library} model file without running its pickles")
        p.add_argument("input")
        p.add_argument("output")
        p.add_argument("--algorithm", help=f"e.g. {example} (told from the data when omitted)")
        p.add_argument(
            "--budget", type=_size, metavar="BYTES",
            help="memory the import may allocate, e.g. 2G (default: 256M or 4 times the input's size, whichever is larger)",
        )
        p.add_argument("--json", action="store_true", help="print the import report as JSON")
        if module == "sb3":
            p.add_argument(
                "--vecnormalize", metavar="PKL",
                help="the vecnormalize.pkl saved beside the model: its statistics go into the archive (read without running it)",
            )
            p.add_argument(
                "--replay-buffer", metavar="PKL",
                help="the file model.save_replay_buffer wrote: the buffer goes into the archive (read without running it)",
            )
            p.add_argument(
                "--metadata", action="append", type=_key_value, metavar="KEY=VALUE",
                help="add manifest metadata (repeatable), e.g. env_id=CartPole-v1 (spec/metadata.md; the zip does not name its environment)",
            )
        p.set_defaults(fn=_cmd_import, module=module)
    _add_import_zoo(sub)
    p = sub.add_parser("metadata", help="print an archive's metadata, or change it (--set, --unset) by rewriting the archive atomically")
    p.add_argument("file")
    p.add_argument("--set", action="append", type=_key_value, metavar="KEY=VALUE", help="put KEY (repeatable)")
    p.add_argument("--unset", action="append", default=[], metavar="KEY", help="remove KEY (repeatable; before --set)")
    p.add_argument("--json", action="store_true", help="print the metadata as one JSON object")
    p.set_defaults(fn=_cmd_metadata)
    p = sub.add_parser("evaluate", help="run the archive's portable policy in a gymnasium environment (NumPy and gymnasium only) and print the returns")
    p.add_argument("file")
    p.add_argument("--env", required=True, metavar="ENV_ID", help="the gymnasium id to make (taken from here only, never from the archive)")
    p.add_argument("--episodes", type=_positive, default=10, metavar="N", help="episodes to run (default 10)")
    p.add_argument("--seed", type=int, metavar="S", help="reset episode i with seed S+i (default: unseeded)")
    p.add_argument("--record", action="store_true", help="append the result to the archive's metadata evaluations (rewrites it atomically)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (the recorded structure, plus notes)")
    p.set_defaults(fn=_cmd_evaluate)
    p = sub.add_parser("card", help="print a model card (Markdown with YAML front matter, as model hubs read it): provenance, evaluations, how to load")
    p.add_argument("file")
    p.set_defaults(fn=_cmd_card)
    p = sub.add_parser("export-sb3", help="write a Stable-Baselines3 .zip that SB3's load accepts")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--allow-class", action="append", default=[], metavar="NAME", help="also allow this class name (or prefix.*)")
    p.add_argument(
        "--sb3-version", metavar="X.Y",
        help="the Stable-Baselines3 version (2.0 or later) that must load the file (default: the version recorded at import)",
    )
    p.add_argument("--vecnormalize-out", metavar="PKL", help="also write the archive's VecNormalize statistics, for VecNormalize.load")
    p.add_argument("--replay-buffer-out", metavar="PKL", help="also write the archive's replay buffer, for model.load_replay_buffer")
    p.set_defaults(fn=_cmd_export)
    p = sub.add_parser("predict", help="print the actions the archive's portable policy takes (NumPy only)")
    p.add_argument("file")
    p.add_argument(
        "--obs", required=True, metavar="OBS.json",
        help='one observation (JSON numbers, or a value of spec §7), or {"observations": [...], "episode_starts": [...], "action_masks": [...]}',
    )
    p.add_argument("--values", action="store_true", help="print actions as typed values of spec §7 (dtype, shape, base64)")
    p.set_defaults(fn=_cmd_predict)
    p = sub.add_parser("package", help="write a folder ready for a model hub: the archive, README.md (the card), model.onnx, results.json (the RL Zoo's form)")
    p.add_argument("file")
    p.add_argument("outdir")
    p.add_argument("--force", action="store_true", help="replace an existing non-empty OUTDIR (as a whole)")
    p.add_argument("--no-onnx", action="store_true", help="leave the ONNX model out")
    p.set_defaults(fn=_cmd_package)
    p = sub.add_parser("export-onnx", help="write the archive's portable policy as an ONNX model (needs the package onnx)")
    p.add_argument("file")
    p.add_argument("output", metavar="OUT.onnx")
    p.add_argument("--opset", type=int, metavar="N", help="the ONNX opset to write (default 17; 14 or later)")
    p.add_argument(
        "--action-masks", choices=("auto", "yes", "no"), default="auto",
        help="give the model an action_masks input: auto (for MaskablePPO), yes (any argmax head), no",
    )
    p.add_argument(
        "--precision", choices=("float64", "float32"), default="float64",
        help="the dtype of sums (linear, conv2d, LSTM gates): float64 (default) rounds each sum once, as the spec says; "
        "float32 is faster (native Conv) and gives the same actions except where a float32 partial sum overflows",
    )
    p.add_argument("--json", action="store_true", help="print what was written (inputs, outputs, size) as JSON")
    p.set_defaults(fn=_cmd_export_onnx)
    # listed for --help only: main() hands "conformance ..." to rlarchive.conformance before parsing
    sub.add_parser("conformance", help="run a reader over the test vectors of this package's format version (spec Annex A); see rlarchive conformance --help")
    return parser


def _ignore_file_size_signal() -> None:
    """Turn the file-size limit's SIGXFSZ (which kills the process) into an IO_ERROR from the write."""
    if hasattr(signal, "SIGXFSZ"):
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        except ValueError:  # not the main thread: the signal cannot be set here
            pass


def _tolerant_stdout() -> None:
    """Let standard output print any file name and text instead of failing on what it cannot encode.

    A name that is not valid in the file-system encoding comes back as it was
    (surrogateescape) where the output is UTF-8; other encodings get escapes.
    """
    out = sys.stdout
    if isinstance(out, io.TextIOWrapper) and out.errors == "strict":
        utf8 = codecs.lookup(out.encoding).name == "utf-8"
        try:
            out.reconfigure(errors="surrogateescape" if utf8 else "backslashreplace")
        except (ValueError, OSError):  # already written to in a way that forbids it
            pass


def _stdout_gone() -> int:
    """Standard output was closed by its reader: stop quietly (and keep the exit-time flush from failing)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    return EXIT_ERROR


#: What to install for the commands that need optional packages (torch, stable-baselines3, gymnasium).
_INSTALL = "install it with: pip install 'rlarchive[sb3]'"


def _missing_package(e: ModuleNotFoundError, command: str) -> RlarchiveError:
    return RlarchiveError("FRAMEWORK_UNAVAILABLE", f"{command} needs the Python package {e.name!r}, which is not installed: {_INSTALL}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``rlarchive`` command; returns the exit status."""
    _ignore_file_size_signal()
    _tolerant_stdout()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["conformance"]:  # the harness parses its own options (rlarchive conformance --help)
        from .conformance import main as run

        return run(argv[1:])
    try:
        args = _parser().parse_args(argv)  # exits 2 on a usage error, 0 after --help or --version
    except BrokenPipeError:
        return _stdout_gone()
    path = getattr(args, "file", None) or getattr(args, "input", None)
    try:
        if path is not None:
            problem = _unreadable(path)
            if problem is not None:
                raise problem
        status = args.fn(args)
        if sys.stdout is not None:
            sys.stdout.flush()
        return status
    except BrokenPipeError:
        return _stdout_gone()
    except RlarchiveError as e:
        line = _error_line(e, path)
        if e.code == "FRAMEWORK_UNAVAILABLE" and "pip install" not in line:
            line += f" ({args.command}: {_INSTALL})"
        _say(line, (path, getattr(args, "output", None), *getattr(args, "paths", ())))
        return _exit_status(e.code)
    except ModuleNotFoundError as e:
        if e.name and not e.name.startswith("rlarchive"):
            err = _missing_package(e, args.command)
        else:
            err = RlarchiveError("INTERNAL_ERROR", f"{type(e).__name__}: {e}")
        _say(str(err))
        return EXIT_ERROR
    except OSError as e:
        where = f" {e.filename}" if e.filename is not None else ""
        _say(f"IO_ERROR: {args.command}:{where}: {e.strerror or e}", (os.fsdecode(e.filename) if e.filename is not None else None,))
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a defect: still one line with a code, never a traceback
        _say(f"INTERNAL_ERROR: {args.command} failed: {type(e).__name__}: {e}")
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
