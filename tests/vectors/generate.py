#!/usr/bin/env python3
"""Write the golden test vectors: ``generate.py OUT`` (``make vectors``), or check them.

``generate.py --check DIR`` regenerates into a temporary folder and fails if any
byte differs from DIR (``make generate-check``, part of ``make test``).
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

from cases import CASES, build_bytes  # noqa: E402
from locations import SITES  # noqa: E402
from sites import derive, load_checks  # noqa: E402

import rlarchive  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "conformance"))
from testee_python import reply_to  # noqa: E402  (the reference testee answers each request case)

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


def judge_actions():
    """The harness's judge of actions (RLA_policy §7), loaded from tests/conformance/run."""
    from rlarchive.conformance import same_actions

    return same_actions


def _issues(raw: bytes) -> list:
    out = []
    for i in rlarchive.validate(raw)["issues"]:
        out.append({k: i[k] for k in ("code", "severity", "member", "pointer", "offset") if k in i})
    return out


def expected_issues(c, raw: bytes) -> list:
    """The issues the table (spec/checks.json) derives from the case's checks and sites, which the reference validator must report.

    A case names them beside its definition (``check=``, ``at=``) or in locations.py. The
    generator stops when a case whose file is not valid names none, when a site does not fit
    its check, and when the reference validator reports anything else.
    """
    got = _issues(raw)
    named = c.sites or SITES.get(c.id, [])
    if not named:
        if got:
            raise SystemExit(
                f"case {c.id}: the reference validator reports {got}, and the case names no check and site"
            )
        return got
    checks = load_checks()
    want = []
    for check_id, site in named:
        if check_id not in checks:
            raise SystemExit(f"case {c.id}: no check {check_id!r} in spec/checks.json")
        try:
            want.append(derive(checks[check_id], site, raw))
        except ValueError as e:
            raise SystemExit(f"case {c.id}: {e}") from None
    if got != want:
        raise SystemExit(f"case {c.id}: the reference validator reports {got}, the table derives {want}")
    return want


def check_predict(c, raw: bytes) -> None:
    """The reference reader's policy acts as SB3 did on the case's observations."""
    from rlarchive.extensions.policy.evaluator import act
    from rlarchive.values import dump_value, load_value

    spec = c.predict()
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "v.rlarchive")
        with open(p, "wb") as f:
            f.write(raw)
        with rlarchive.open(p, spaces="neutral") as ar:
            policy = ar.policy()
    masks = [load_value(m) for m in spec["action_masks"]] if "action_masks" in spec else None
    got = act(policy, [load_value(o) for o in spec["observations"]], spec.get("episode_starts"), masks)
    why = judge_actions()([dump_value(a) for a in got], spec["actions"])
    if why:
        raise SystemExit(f"case {c.id}: the reference reader's actions differ from SB3's: {why}")


def _request_entry(c, raw: bytes, out: str) -> dict:
    """A request case (Annex A.5): its request file written, the reference testee's answer checked."""
    line = c.request()
    with open(os.path.join(out, c.request_file), "wb") as f:
        f.write(gzip.compress(line, compresslevel=9, mtime=0) if c.request_gzip else line)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "v.rlarchive")
        with open(p, "wb") as f:
            f.write(raw)
        answer = reply_to(line.replace(b"$SEQ", b"7").replace(b"$FILE", json.dumps(p).encode()))
    got = answer.get("code", answer.get("result")) if answer else None
    if got != c.expect or answer.get("seq") != (None if c.seq_unreadable else 7):
        raise SystemExit(f"case {c.id}: the reference testee answers {answer}, the case expects {c.expect}")
    entry = {"id": c.id, "description": c.description, "spec": c.spec, "file": c.file}
    if c.extensions:
        entry["extensions"] = c.extensions
    entry["request_file"] = c.request_file
    if c.seq_unreadable:
        entry["seq_unreadable"] = True
    if c.expect == "dump":
        dump_file = f"valid/{c.id}.dump.json"
        with open(os.path.join(out, dump_file), "w", encoding="utf-8") as f:
            f.write(answer["dump"])
        entry["expect"] = {"result": "dump", "dump_file": dump_file}
    else:
        entry["expect"] = {"result": "error", "code": c.expect}
    return entry


FOLDERS = ("valid", "invalid", "requests")


def generate(out: str) -> None:
    """Write every case, its expected result, and index.json into ``out``."""
    for sub in FOLDERS:
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
        if c.request is not None:
            index.append(_request_entry(c, raw, out))
            continue
        got, dump = _outcome(raw)
        if c.expect == "actions":
            check_predict(c, raw)
        elif got != c.expect:
            raise SystemExit(f"case {c.id}: the reference reader answers {got}, the case expects {c.expect}")
        entry = {"id": c.id, "description": c.description, "spec": c.spec, "file": c.file}
        if c.extensions:
            entry["extensions"] = c.extensions
        if (
            c.expect != "actions"
        ):  # what a validator reports (Annex A validate): code, severity and member of each issue, in order
            entry["issues"] = expected_issues(c, raw)
            if entry["issues"] and (
                c.sites or c.id in SITES
            ):  # the checks of spec/checks.json the issues come from, one each
                entry["checks"] = [check_id for check_id, _ in (c.sites or SITES[c.id])]
        if c.expect == "actions":
            predict_file = f"valid/{c.id}.predict.json"
            with open(os.path.join(out, predict_file), "w", encoding="utf-8") as f:
                json.dump(c.predict(), f, indent=1)
                f.write("\n")
            entry["expect"] = {"result": "actions", "predict_file": predict_file}
        elif c.expect == "dump":
            dump_file = f"valid/{c.id}.dump.json"
            with open(os.path.join(out, dump_file), "wb") as f:
                f.write(dump)
            entry["expect"] = {"result": "dump", "dump_file": dump_file}
            entry["warnings"] = c.warnings
        else:
            entry["expect"] = {"result": "error", "code": c.expect}
        index.append(entry)
    doc = {
        "format": "rlarchive-test-vectors",
        "version": INDEX_VERSION,
        "format_version": rlarchive.FORMAT_VERSION,
        "cases": index,
    }
    with open(os.path.join(out, "index.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


def _same_predict(new: str, old: str) -> str:
    """Predict files agree when their requests are identical and their actions equal as readers' are judged.

    The actions come from SB3 computing in float32 on this machine's CPU, whose
    last bits may differ between machines (RLA_policy §7 allows 1e-4).
    """
    with open(new, encoding="utf-8") as f:
        a = json.load(f)
    with open(old, encoding="utf-8") as f:
        b = json.load(f)
    if {k: v for k, v in a.items() if k != "actions"} != {k: v for k, v in b.items() if k != "actions"}:
        return "the requests differ"
    return judge_actions()(a["actions"], b["actions"])


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
                elif name.endswith(".predict.json"):
                    why = _same_predict(os.path.join(root, name), mine)
                    if why:
                        problems.append(f"differs: {rel}: {why}")
                elif not filecmp.cmp(os.path.join(root, name), mine, shallow=False):
                    problems.append(f"differs: {rel}")
        for sub in FOLDERS:
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
    os.makedirs(args.folder, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=parent) as tmp:
        generate(tmp)
        for sub in FOLDERS:
            shutil.rmtree(os.path.join(args.folder, sub), ignore_errors=True)
            os.replace(os.path.join(tmp, sub), os.path.join(args.folder, sub))
        os.replace(os.path.join(tmp, "index.json"), os.path.join(args.folder, "index.json"))
    print(f"wrote {len(CASES)} cases to {args.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
