#!/usr/bin/env python3
"""Write the golden test vectors: ``generate.py OUT`` (``make vectors``), or check them.

``generate.py --check DIR`` regenerates into a temporary folder and fails if any
byte differs from DIR (``make vectors-check``, part of ``make test``).
"""
from __future__ import annotations

import argparse
import filecmp
import gzip
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rlarchive  # noqa: E402
from rlarchive import jsonstrict  # noqa: E402

from cases import CASES, build_bytes  # noqa: E402

INDEX_VERSION = 1


def _dump_of(raw: bytes) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "v.rlarchive")
        with open(p, "wb") as f:
            f.write(raw)
        with rlarchive.open(p, spaces="neutral") as ar:
            return ar.dump()


def _outcome(raw: bytes) -> tuple[str, bytes]:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "v.rlarchive")
        with open(p, "wb") as f:
            f.write(raw)
        try:
            with rlarchive.open(p, spaces="neutral") as ar:
                return "dump", ar.dump()
        except rlarchive.RlarchiveError as e:
            return e.code, b""


def generate(out: str) -> None:
    """Write every case, its expected result, and index.json into ``out``."""
    for sub in ("valid", "invalid"):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
        os.makedirs(os.path.join(out, sub))
    seen = set()
    index = []
    for c in CASES:
        if c.id in seen:
            raise SystemExit(f"duplicate case id {c.id}")
        seen.add(c.id)
        stored = build_bytes(c)
        raw = gzip.decompress(stored) if c.gzip else stored
        with open(os.path.join(out, c.file), "wb") as f:
            f.write(stored)
        got, dump = _outcome(raw)
        if got != c.expect:
            raise SystemExit(f"case {c.id}: the reference reader answers {got}, the case expects {c.expect}")
        entry = {"id": c.id, "description": c.description, "spec": c.spec, "file": c.file}
        if c.expect == "dump":
            dump_file = f"valid/{c.id}.dump.json"
            with open(os.path.join(out, dump_file), "wb") as f:
                f.write(dump)
            entry["expect"] = {"result": "dump", "dump_file": dump_file}
            entry["warnings"] = c.warnings
        else:
            entry["expect"] = {"result": "error", "code": c.expect}
        index.append(entry)
    doc = {"format": "rlarchive-test-vectors", "version": INDEX_VERSION, "format_version": rlarchive.FORMAT_VERSION, "cases": index}
    with open(os.path.join(out, "index.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


def check(folder: str) -> int:
    """Regenerate into a temporary folder; report every file that differs from ``folder``."""
    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp)
        problems = []
        for root, _, files in os.walk(tmp):
            for name in files:
                rel = os.path.relpath(os.path.join(root, name), tmp)
                mine = os.path.join(folder, rel)
                if not os.path.exists(mine):
                    problems.append(f"missing from {folder}: {rel}")
                elif not filecmp.cmp(os.path.join(root, name), mine, shallow=False):
                    problems.append(f"differs: {rel}")
        for sub in ("valid", "invalid"):
            for name in os.listdir(os.path.join(folder, sub)) if os.path.isdir(os.path.join(folder, sub)) else []:
                if not os.path.exists(os.path.join(tmp, sub, name)):
                    problems.append(f"not generated any more: {sub}/{name}")
    for p in problems:
        print(p)
    n = len(CASES)
    print(f"vectors: {n} cases regenerated, {len(problems)} differences")
    return 1 if problems else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("folder")
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args()
    if args.check:
        return check(args.folder)
    # build beside the destination, then swap: a failing case leaves the old vectors intact
    parent = os.path.dirname(os.path.abspath(args.folder))
    with tempfile.TemporaryDirectory(dir=parent) as tmp:
        generate(tmp)
        for sub in ("valid", "invalid"):
            shutil.rmtree(os.path.join(args.folder, sub), ignore_errors=True)
            os.replace(os.path.join(tmp, sub), os.path.join(args.folder, sub))
        os.replace(os.path.join(tmp, "index.json"), os.path.join(args.folder, "index.json"))
    print(f"wrote {len(CASES)} cases to {args.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
