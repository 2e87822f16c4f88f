#!/usr/bin/env python3
"""Every generated file of the repository, from its one source: ``make generate`` writes them all,
``make generate-check`` (part of ``make test``) fails, naming each stale one.

| generator | source | what it writes |
| --- | --- | --- |
| ``tables`` (spec/tables.py) | spec/tables.json, spec/checks.json | the tables of spec/errors.md and spec/rlarchive.md, python/rlarchive/tables.py, reader-js/src/tables.js, the ErrorCode type of reader-js/index.d.ts |
| ``policy-ops`` (spec/policy_ops.py) | spec/policy_ops.json | the tables of spec/extensions/RLA_policy.md, the two readers' extensions/policy/ops.py and ops.js |
| ``wasm`` (reader-js/scripts/build-wasm.mjs) | the instruction lists in the script | reader-js/src/extensions/policy/gemm-wasm.js |
| ``vectors`` (tests/vectors/generate.py) | tests/vectors/cases*.py, through the reference writer | test-vectors/ |

Each generator keeps its own logic and takes ``--check`` (regenerate in memory or in a temporary folder,
compare with the committed files, exit 1 naming the stale ones); this script runs them in this order,
passing ``--check`` on. The vectors need the test environment (torch, Stable-Baselines3: ``make
setup-python``), the Wasm kernel Node. One copy is made at build time and never committed: python/setup.py
copies test-vectors/ into the wheel and the sdist (``make dist``; tests/python/test_packaging.py checks it).

Usage: tools/generate.py [--check] [NAME ...]   (NAME: tables, policy-ops, wasm, vectors; default: every one)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class Generator:
    name: str
    command: tuple[str, ...]  # "python" and "node": this interpreter, Node; "--check" is appended when checking
    outputs: tuple[str, ...]  # the files and folders it writes, relative to the repository


GENERATORS = (
    Generator(
        "tables",
        ("python", "spec/tables.py"),
        (
            "spec/errors.md",
            "spec/rlarchive.md",
            "python/rlarchive/tables.py",
            "reader-js/src/tables.js",
            "reader-js/index.d.ts",
        ),
    ),
    Generator(
        "policy-ops",
        ("python", "spec/policy_ops.py"),
        (
            "spec/extensions/RLA_policy.md",
            "python/rlarchive/extensions/policy/ops.py",
            "reader-js/src/extensions/policy/ops.js",
        ),
    ),
    Generator("wasm", ("node", "reader-js/scripts/build-wasm.mjs"), ("reader-js/src/extensions/policy/gemm-wasm.js",)),
    Generator("vectors", ("python", "tests/vectors/generate.py", "test-vectors"), ("test-vectors",)),
)


def _command(g: Generator, check: bool) -> list[str]:
    interpreter = {"python": sys.executable, "node": shutil.which("node") or "node"}[g.command[0]]
    script, *args = g.command[1:]
    return [interpreter, os.path.join(ROOT, script), *args, *(["--check"] if check else [])]


def run(names: list[str], check: bool) -> int:
    """Run the named generators (all when ``names`` is empty) in order; 1 when any fails or is stale."""
    known = {g.name for g in GENERATORS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"tools/generate.py: no generator {', '.join(unknown)} (there are {', '.join(sorted(known))})")
    failed = []
    for g in GENERATORS:
        if names and g.name not in names:
            continue
        print(f"{'checking' if check else 'generating'} {g.name}", flush=True)
        if subprocess.run(_command(g, check), cwd=ROOT).returncode != 0:
            failed.append(g.name)
    for name in failed:
        print(f"{name}: stale (run make generate)" if check else f"{name}: failed")
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    check = "--check" in argv
    return run([a for a in argv if a != "--check"], check)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
