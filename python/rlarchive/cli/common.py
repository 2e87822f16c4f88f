"""What every command of the ``rlarchive`` command line shares: exit statuses, one-line messages, input checks, option types."""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .. import jsonbounds
from ..errors import RlarchiveError
from ..filenames import escape_name, printable
from ..limits import MAX_INPUT_JSON_MEMORY, MAX_JSON_DEPTH

#: Exit statuses: success (``diff``: the same), a file is invalid (``diff``: they differ), a request that cannot be
#: carried out (a usage error, an option's value, a file or folder that cannot be read or written, a missing package).
EXIT_OK = 0
EXIT_INVALID = 1
EXIT_ERROR = 2
#: Codes that are about the environment or the request rather than a file's content.
EXIT_ERROR_CODES = frozenset(
    {
        "IO_ERROR",
        "IO_TIMEOUT",
        "FRAMEWORK_UNAVAILABLE",
        "INTERNAL_ERROR",
        "INPUT_INVALID",
        "ENV_NOT_FOUND",
        "ENV_MISMATCH",
    }
)
#: Longest message printed, in characters (a message can quote a whole library error).
MAX_MESSAGE = 2000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
#: What to install for the commands that need optional packages (torch, stable-baselines3, gymnasium).
INSTALL = "install it with: pip install 'rlarchive[sb3]'"


def one_line(text: str) -> str:
    """``text`` on one printable line: line breaks and other control characters become spaces,
    bytes that are not UTF-8 and invisible characters are escaped (:func:`rlarchive.filenames.printable`)."""
    text = printable(_CONTROL.sub(" ", text).strip())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def shown(text: str, names: Sequence[str | None] = ()) -> str:
    """``text`` with each of the file ``names`` it quotes in its escaped form (spec §14)."""
    for name in names:
        if name and name in text:
            escaped = escape_name(name)
            if escaped != name:
                text = text.replace(name, escaped)
    return text


def say(text: str, names: Sequence[str | None] = ()) -> None:
    """Print one line ``rlarchive: ...`` on standard error (which may itself be gone); the file
    ``names`` the text quotes are shown in their escaped form."""
    if sys.stderr is None:  # no standard error at all (print would fall back to standard output)
        return
    try:
        print("rlarchive: " + one_line(shown(text, names)), file=sys.stderr, flush=True)
    except (OSError, ValueError):  # standard error closed
        pass


def line(text: str) -> None:
    """Print one line of text taken from an archive (names, keys, metadata) with what could break or disguise the line escaped."""
    print(printable(text))


def lines(text: str, names: Sequence[str | None] = ()) -> None:
    """Print a multi-line report (an import's, an export's): the file ``names`` it quotes in their escaped form, and
    each of its lines as :func:`line` prints it, so that no text from an input (member names, keys, class names,
    version strings) breaks or disguises a line."""
    for part in shown(text, names).split("\n"):
        line(part)


def exit_status(code: str) -> int:
    """The exit status that an error of ``code`` ends a command with."""
    return EXIT_ERROR if code in EXIT_ERROR_CODES else EXIT_INVALID


# ---------------------------------------------------------------- hints


def _zip_names(path: str) -> list[Any] | None:
    """The member names of a plain ZIP file, or None (never raises; reads only the central directory)."""
    import zipfile

    from ..limits import MAX_MEMBERS

    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            return [i.filename for i in infos] if len(infos) <= MAX_MEMBERS else None
    except Exception:  # anything zipfile raises on a damaged file means: no hint
        return None


def conversion_hint(path: str) -> str:
    """Advice for a Stable-Baselines model given where an rlarchive was expected, or ``""``."""
    names = _zip_names(path)
    if not names or "data" not in names:
        return ""
    name = escape_name(path)
    if any(n.endswith(".pth") for n in names):
        return f" (this is a Stable-Baselines3 model: convert it with: rlarchive import-sb3 {name} OUT.rlarchive)"
    if "parameters" in names and "parameter_list" in names:
        return f" (this is a Stable-Baselines (SB2) model: convert it with: rlarchive import-sb2 {name} OUT.rlarchive)"
    return ""


def error_line(e: RlarchiveError, path: str | None = None) -> str:
    """The message of ``e``, with advice to convert when ``path`` is a Stable-Baselines model."""
    hint = conversion_hint(path) if path is not None and e.code == "ARCHIVE_NOT_RLARCHIVE" else ""
    return str(e) + hint


# ---------------------------------------------------------------- inputs


def unreadable(path: str) -> RlarchiveError | None:
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


def special(path: str) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a directory (a FIFO, a device, a socket)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


# ---------------------------------------------------------------- JSON from the caller

#: The most bytes of a JSON text a command reads from a caller: a longer text cannot be read and parsed
#: within MAX_INPUT_JSON_MEMORY (its cost is at least PLAIN_BYTE_COST bytes a byte).
MAX_INPUT_JSON_BYTES = MAX_INPUT_JSON_MEMORY // jsonbounds.PLAIN_BYTE_COST
_CHUNK = 1 << 20


def read_input(stream: Any, what: str, limit: int = MAX_INPUT_JSON_BYTES) -> bytes:
    """All the bytes of a binary ``stream`` (standard input, a file), a piece at a time: INPUT_INVALID when there
    are more than ``limit`` (memory grows with what comes, up to twice that while the pieces are joined)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise RlarchiveError("INPUT_INVALID", f"{what}: more than {limit} bytes of JSON")


def parse_input(raw: bytes, what: str) -> Any:
    """A JSON text a caller gave (``what`` names it in messages), parsed as :func:`json.loads` does once it is known
    to nest at most MAX_JSON_DEPTH levels and, with its parse, to take at most MAX_INPUT_JSON_MEMORY bytes (spec §15,
    :mod:`rlarchive.jsonbounds`); INPUT_INVALID otherwise, and when it is not UTF-8 or not JSON."""
    try:
        return jsonbounds.loads(raw, max_depth=MAX_JSON_DEPTH, max_memory=MAX_INPUT_JSON_MEMORY)
    except jsonbounds.JSONBoundsError as e:
        raise RlarchiveError("INPUT_INVALID", f"{what}: {e}") from None
    except ValueError as e:  # not UTF-8, or not JSON
        raise RlarchiveError("INPUT_INVALID", f"{what}: not JSON: {e}") from None


# ---------------------------------------------------------------- usage errors and option types


class Parser(argparse.ArgumentParser):
    """The command line's parser: a usage error (an unknown option, an option's value its type refuses) is one line
    ``rlarchive: INPUT_INVALID: ...`` on standard error and exit status 2, as every other failure of a request."""

    def error(self, message: str) -> NoReturn:
        say(f"INPUT_INVALID: {self.prog}: {message} ({self.prog} --help lists the options)")
        raise SystemExit(EXIT_ERROR)


def key_value(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` (the first ``=`` separates; KEY not empty)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"not KEY=VALUE: {text!r}")
    return key, value


def metadata_pair(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` of manifest metadata: a key spec/metadata.md defines must have its format (``evaluations`` a
    JSON list of results, ``n_envs`` a positive integer...), so that a wrong value is a usage error, found before
    any work."""
    from ..metadata import check_value

    key, value = key_value(text)
    problem = check_value(key, value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem.message)
    return key, value


def pairs(given: Sequence[tuple[str, str]] | None) -> dict[str, str]:
    """The metadata ``--set``/``--metadata`` options give, in order (a repeated key: the last value)."""
    return {k: v for k, v in given or ()}


def positive(text: str) -> int:
    """A positive integer option."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive integer: {text!r}")
    return int(text)


def natural(text: str) -> int:
    """A non-negative integer option."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a non-negative integer: {text!r}")
    return int(text)


def size(text: str) -> int:
    """A byte count: digits with an optional K, M or G (powers of 1024)."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = t[-1:] if t[-1:] in units else ""
    number = t[: len(t) - len(unit)]
    if not number.isdigit() or len(number) > 15:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 512M, 2G, 1000000)")
    return int(number) * units[unit]
