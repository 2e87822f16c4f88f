"""Run an unchanged Python program (a module or a script) with :func:`rlarchive.sb3.use_archives` on.

    python -m rlarchive.sb3.run_with_archives -m rl_zoo3.train --algo ppo --env CartPole-v1
    python -m rlarchive.sb3.run_with_archives train.py --seed 3
    python -m rlarchive.sb3.run_with_archives --legacy error -m rl_zoo3.train -i logs/ppo/CartPole-v1_1/CartPole-v1.zip

The program is named as to ``python`` itself: ``-m MODULE`` runs a module as
``python -m MODULE`` does, otherwise the first argument is a script's path.
What follows it is the program's own command line (its ``sys.argv[1:]``).
Before it, the launcher's options set the switch: ``--legacy`` (``import``,
the default: files written before the switch are converted without running
their pickles; ``pickle``: handed to SB3, trusted files only; ``error``),
``--opaque`` (``skip``, the default; ``error``; ``unpickle``, trusted files
only) and ``--allow-class NAME`` (repeatable: a further class loads may
import). The program runs in this process, as ``__main__``, with every save
and load of SB3 and sb3-contrib going through archives; its exit status is
the launcher's.
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Any

__all__ = ["main"]

_USAGE = (
    "usage: python -m rlarchive.sb3.run_with_archives [--legacy import|pickle|error] "
    "[--opaque skip|error|unpickle] [--allow-class NAME]... (-m MODULE | SCRIPT) [ARG]..."
)
_CHOICES = {"--legacy": ("import", "pickle", "error"), "--opaque": ("skip", "error", "unpickle")}


def _parse(argv: list[str]) -> tuple[dict[str, Any], str | None, str | None, list[str]]:
    """(the switch's arguments, the module, the script, the program's arguments), from the launcher's command line.

    Raises:
        SystemExit: 2 with the usage, for a command line without a program or with an unknown option.
    """
    options: dict[str, Any] = {"allow_classes": []}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-h", "--help"):
            print(_USAGE)
            print(__doc__)
            raise SystemExit(0)
        if arg in ("-m", *_CHOICES, "--allow-class") and i + 1 == len(argv):
            _fail(f"{arg} needs a value")
        if arg == "-m":
            return options, argv[i + 1], None, argv[i + 2 :]
        if arg in (*_CHOICES, "--allow-class"):
            value = argv[i + 1]
            if arg == "--allow-class":
                options["allow_classes"].append(value)
            elif value not in _CHOICES[arg]:
                _fail(f"{arg} must be one of {', '.join(_CHOICES[arg])}, not {value!r}")
            else:
                options[arg[2:]] = value
            i += 2
            continue
        if arg.startswith("-"):
            _fail(f"unknown option {arg!r} (the program's own options come after it)")
        return options, None, arg, argv[i + 1 :]
    _fail("no program given: -m MODULE or SCRIPT")
    raise AssertionError("unreachable")


def _fail(message: str) -> None:
    print(_USAGE, file=sys.stderr)
    print(f"run_with_archives: {message}", file=sys.stderr)
    raise SystemExit(2)


def main(argv: list[str] | None = None) -> None:
    """Turn the switch on and run the program named by ``argv`` (default: ``sys.argv[1:]``) as ``__main__``."""
    from .switch import use_archives

    options, module, script, args = _parse(list(sys.argv[1:] if argv is None else argv))
    with use_archives(**options):
        if module is not None:
            sys.argv = [module, *args]  # runpy puts the module's file first, as python -m does
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            assert script is not None
            sys.argv = [script, *args]
            sys.path[0] = os.path.dirname(os.path.abspath(script))  # as python SCRIPT does
            runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
