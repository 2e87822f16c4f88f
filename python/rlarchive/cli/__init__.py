"""The ``rlarchive`` command: validate, inspect, dump, diff, Stable-Baselines conversion, the portable policy, and ONNX export.

Exit status:

- 0: success (for ``validate``: every file is valid; for ``diff``: the archives hold the same);
- 1: a file is invalid (``validate`` found errors, or a command could not
  read, import or convert a file because of what it holds), or ``diff`` found differences;
- 2: a request that cannot be carried out: a usage error or an option's value the command cannot take
  (``INPUT_INVALID``: an unknown option, a metadata value breaking its format, ``--best`` for a run without a
  best model, a part of an archive it does not hold), a file or destination that cannot be read or written
  (``IO_ERROR``, ``IO_TIMEOUT`` for a URL: a missing file is not an invalid one), a missing optional package
  (``FRAMEWORK_UNAVAILABLE``), an environment (``ENV_NOT_FOUND``, ``ENV_MISMATCH``), or a defect
  (``INTERNAL_ERROR``); for ``diff``, any error.

Every failure prints one line ``rlarchive: CODE: message`` on standard error,
never a traceback, a usage error too (:class:`.common.Parser`). When standard output is closed early
(``rlarchive dump x | head -c1``) the command stops quietly with status 2.

File names are printed in the escaped form of spec §14 (bytes that are not
UTF-8 as ``\\xHH``, control and invisible characters as ``\\uHHHH``), and the
strings of an archive with such characters escaped, so that nothing printed
can break a line, forge one or reach the terminal as a control; a JSON report
gives a name that is not UTF-8 as that form plus ``file_base64`` (its bytes).

The commands live in one module per family: :mod:`.inspect` (inspect, dump,
diff), :mod:`.validate` (validate, with the report formats of :mod:`.reports`),
:mod:`.convert` (import-*, export-sb3), :mod:`.policy` (predict, evaluate,
export-onnx) and :mod:`.share` (metadata, card, package).
"""

from __future__ import annotations

import argparse
import codecs
import functools
import io
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from ..describe import describe
from ..errors import RlarchiveError
from . import convert, inspect, policy, share, validate
from .common import EXIT_ERROR, EXIT_INVALID, EXIT_OK, INSTALL, Parser, error_line, exit_status, say, unreadable

__all__ = ["main", "describe", "EXIT_OK", "EXIT_INVALID", "EXIT_ERROR"]


@functools.lru_cache(maxsize=1)
def _parser() -> argparse.ArgumentParser:
    """The command line's parser, built once per process (building it is most of a short command's time when
    ``main`` is called again in the same process); :func:`_parse` keeps calls from sharing what it returns."""
    from .. import FORMAT_VERSION, __version__

    parser = Parser(
        prog="rlarchive",
        description="Check, inspect, dump, compare and convert rlarchive files.",
        epilog="Exit status: 0 success, 1 a file is invalid (diff: the files differ), 2 usage or I/O error.",
    )
    parser.add_argument("--version", action="version", version=f"rlarchive {__version__} (format {FORMAT_VERSION})")
    sub = parser.add_subparsers(dest="command", required=True)
    validate.add_commands(sub)
    inspect.add_commands(sub)
    convert.add_commands(sub)
    share.add_commands(sub)
    policy.add_commands(sub)
    # listed for --help only: main() hands "conformance ..." to rlarchive.conformance before parsing
    sub.add_parser(
        "conformance",
        help="run a reader over the test vectors of this package's format version (spec Annex A); see rlarchive conformance --help",
    )
    return parser


def _parse(argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed; a list in the result (a repeatable option's default is one object of the parser) is this
    call's own copy, so that no command changes what a later call gets."""
    args = _parser().parse_args(argv)
    for key, value in vars(args).items():
        if isinstance(value, list):
            setattr(args, key, list(value))
    return args


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


def _missing_package(e: ModuleNotFoundError, command: str) -> RlarchiveError:
    return RlarchiveError(
        "FRAMEWORK_UNAVAILABLE", f"{command} needs the Python package {e.name!r}, which is not installed: {INSTALL}"
    )


def _inputs(args: argparse.Namespace) -> list[Any]:
    """The input files of a command, checked before it runs (``validate`` reports its own)."""
    first = getattr(args, "file", None) or getattr(args, "input", None)
    return [p for p in (first, getattr(args, "a", None), getattr(args, "b", None)) if p is not None]


def _run(args: argparse.Namespace, inputs: list[Any]) -> int:
    for p in inputs:
        problem = unreadable(p)
        if problem is not None:
            raise problem
    status = args.fn(args)
    if sys.stdout is not None:
        sys.stdout.flush()
    result: int = status
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rlarchive`` command; returns the exit status."""
    _ignore_file_size_signal()
    _tolerant_stdout()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["conformance"]:  # the harness parses its own options (rlarchive conformance --help)
        from ..conformance import main as run

        return run(argv[1:])
    try:
        args = _parse(argv)  # exits 2 on a usage error, 0 after --help or --version
    except BrokenPipeError:
        return _stdout_gone()
    inputs = _inputs(args)
    path = inputs[0] if inputs else None
    try:
        return _run(args, inputs)
    except BrokenPipeError:
        return _stdout_gone()
    except RlarchiveError as e:
        line = error_line(e, path)
        if e.code == "FRAMEWORK_UNAVAILABLE" and "pip install" not in line:
            line += f" ({args.command}: {INSTALL})"
        say(line, (*inputs, getattr(args, "output", None), *getattr(args, "paths", ())))
        return EXIT_ERROR if args.command == "diff" else exit_status(e.code)
    except ModuleNotFoundError as e:
        if e.name and not e.name.startswith("rlarchive"):
            err = _missing_package(e, args.command)
        else:
            err = RlarchiveError("INTERNAL_ERROR", f"{type(e).__name__}: {e}")
        say(str(err))
        return EXIT_ERROR
    except OSError as e:
        where = f" {e.filename}" if e.filename is not None else ""
        say(
            f"IO_ERROR: {args.command}:{where}: {e.strerror or e}",
            (os.fsdecode(e.filename) if e.filename is not None else None,),
        )
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a defect: still one line with a code, never a traceback
        say(f"INTERNAL_ERROR: {args.command} failed: {type(e).__name__}: {e}")
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
