#!/usr/bin/env python3
"""Fuzzing campaign: mutated golden vectors through the Python and the JavaScript reader.

    .venv/bin/python tests/fuzz/campaign.py --cases 100000 --seed 1      # make fuzz
    .venv/bin/python tests/fuzz/campaign.py --seed 1 --replay 4711 --out case.rlarchive

Each case is a valid vector mutated by :mod:`mutators` (several levels, from
JSON values to raw bytes). Both readers run as long-lived testee processes
(spec Annex A protocol, many cases in flight per process); each must answer
every case, and the two answers must agree: the same canonical dump byte for
byte, or an error with the same code (spec §11.1 decides which error comes
first). The Python testee also runs the validator, whose first error must be
the reader's (spec §14).

Failures counted: disagreements, crashes (an exception other than
RlarchiveError, or a testee that exits), hangs (no answer within --timeout
seconds; the testee is killed and restarted), and memory beyond the bound
(peak resident set VmHWM of a testee process above --max-rss-mib). Each
failing case is saved with its mutations under --save-dir. Exit status 1 on
any failure.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from known_issues import KNOWN, classify  # noqa: E402
from mutators import load_seeds, mutate  # noqa: E402
from readers import DEEP, OFFICIAL, ReaderProcess, outcome  # noqa: E402

READERS = ("python", "javascript")
DEFAULT_MAX_RSS_MIB = 256


@dataclass
class Summary:
    cases: int = 0
    agreements: int = 0
    agreed_dumps: int = 0
    disagreements: collections.Counter = field(default_factory=collections.Counter)  # (py, js) -> count
    validator_disagreements: collections.Counter = field(default_factory=collections.Counter)
    crashes: collections.Counter = field(default_factory=collections.Counter)  # reader -> count
    hangs: collections.Counter = field(default_factory=collections.Counter)
    memory: dict = field(default_factory=dict)  # reader -> peak KiB
    rss: dict = field(default_factory=dict)  # reader -> (VmRSS after the first batch, at the end) KiB
    memory_violations: list = field(default_factory=list)
    codes: collections.Counter = field(default_factory=collections.Counter)  # agreed outcomes
    restarts: dict = field(default_factory=dict)
    seconds: float = 0.0
    examples: list = field(default_factory=list)  # (case index, kind, mutations)
    known: collections.Counter = field(default_factory=collections.Counter)  # known issue id -> failing cases

    @property
    def new_failures(self) -> int:
        return self.failures - sum(self.known.values())

    @property
    def failures(self) -> int:
        return (
            sum(self.disagreements.values())
            + sum(self.validator_disagreements.values())
            + sum(self.crashes.values())
            + sum(self.hangs.values())
            + len(self.memory_violations)
        )

    def report(self) -> str:
        lines = [
            f"cases run:      {self.cases} in {self.seconds:.1f} s ({self.cases / max(self.seconds, 1e-9):.0f} cases/s)",
            f"agreements:     {self.agreements} ({self.agreed_dumps} identical dumps, {self.agreements - self.agreed_dumps} identical error codes)",
            f"disagreements:  {sum(self.disagreements.values())}"
            + "".join(f"\n    python {p} / javascript {j}: {n}" for (p, j), n in self.disagreements.most_common()),
            f"validator vs reader (python): {sum(self.validator_disagreements.values())}"
            + "".join(
                f"\n    reader {r} / validator {v}: {n}" for (r, v), n in self.validator_disagreements.most_common()
            ),
            f"crashes:        {sum(self.crashes.values())}" + "".join(f"  {r}: {n}" for r, n in self.crashes.items()),
            f"hangs:          {sum(self.hangs.values())}" + "".join(f"  {r}: {n}" for r, n in self.hangs.items()),
            "peak RSS:       "
            + ", ".join(f"{r} {kib / 1024:.1f} MiB" for r, kib in self.memory.items())
            + (f"  (bound {self._bound} MiB per process)" if hasattr(self, "_bound") else ""),
            "resident set after the first batch -> at the end: "
            + ", ".join(f"{r} {a / 1024:.1f} -> {b / 1024:.1f} MiB" for r, (a, b) in self.rss.items()),
            f"memory over bound: {len(self.memory_violations)}" + "".join(f"\n    {v}" for v in self.memory_violations),
            "reader processes started: " + ", ".join(f"{r} {n}" for r, n in self.restarts.items()),
            "agreed outcomes: " + ", ".join(f"{c} {n}" for c, n in self.codes.most_common()),
            f"failing cases of known issues (known_issues.py): {sum(self.known.values())}"
            + "".join(f"\n    {k}: {n} ({KNOWN[k][:90]}...)" for k, n in sorted(self.known.items())),
            f"new failing cases: {self.new_failures}",
        ] + (
            [
                f"mutator errors (cases replaced by an empty file): {sum(MUTATOR_ERRORS.values())} {dict(MUTATOR_ERRORS.most_common(3))}"
            ]
            if MUTATOR_ERRORS
            else []
        )
        return "\n".join(lines)


def workdir_root() -> str:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


def case_rng(seed: int, index: int) -> random.Random:
    return random.Random(f"rlarchive-fuzz:{seed}:{index}")


MUTATOR_ERRORS = collections.Counter()


def make_case(seeds: list, seed: int, index: int) -> tuple[bytes, list, str]:
    rng = case_rng(seed, index)
    s = seeds[rng.randrange(len(seeds))]
    try:
        raw, descs = mutate(s, rng)
    except Exception as e:  # a bug of the mutators must not stop the campaign: count it, fall back to raw bytes
        MUTATOR_ERRORS[f"{type(e).__name__}: {e}"[:120]] += 1
        raw, descs = b"", ["mutator-error"]
    return raw, descs, s.name


def run(
    cases: int,
    seed: int = 1,
    *,
    timeout: float = 10.0,
    batch: int = 64,
    vectors: str = os.path.join(ROOT, "test-vectors"),
    save_dir: str | None = None,
    official: bool = False,
    max_rss_mib: int = DEFAULT_MAX_RSS_MIB,
    progress: bool = True,
    max_saved_per_kind: int = 5,
) -> Summary:
    """Run ``cases`` mutated cases through both readers; return the summary."""
    seeds = load_seeds(vectors)
    table = OFFICIAL if official else DEEP
    readers = {name: ReaderProcess(name, table[name], timeout=timeout) for name in READERS}
    summary = Summary()
    summary._bound = max_rss_mib  # type: ignore[attr-defined]
    work = tempfile.mkdtemp(prefix="rlarchive-fuzz-", dir=workdir_root())
    saved = collections.Counter()
    findings_log = None
    if save_dir:
        os.makedirs(save_dir, exist_ok=True)
        findings_log = open(os.path.join(save_dir, "findings.jsonl"), "a", encoding="utf-8")

    def save(kind: str, index: int, raw: bytes, descs: list, seed_name: str, answers: dict) -> None:
        issue = classify(answers, descs)
        if issue:
            summary.known[issue] += 1
            kind = f"{issue}-{kind}"
        summary.examples.append((index, kind, descs))
        if not save_dir or saved[kind] >= max_saved_per_kind:
            return
        saved[kind] += 1
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in kind)[:80]
        path = os.path.join(save_dir, f"{safe}-s{seed}-c{index}.rlarchive")
        with open(path, "wb") as f:
            f.write(raw)
        rec = {
            "kind": kind,
            "seed": seed,
            "case": index,
            "from": seed_name,
            "mutations": descs,
            "file": path,
            "answers": {
                r: {k: (v[:300] if isinstance(v, str) else v) for k, v in a.items() if k != "dump"}
                for r, a in answers.items()
            },
        }
        findings_log.write(json.dumps(rec) + "\n")
        findings_log.flush()

    t0 = last = time.monotonic()
    try:
        for r in readers.values():
            r.start()
        for start in range(0, cases, batch):
            indices = list(range(start, min(cases, start + batch)))
            built = []
            paths = []
            for k, i in enumerate(indices):
                raw, descs, seed_name = make_case(seeds, seed, i)
                p = os.path.join(work, f"case-{k}.rlarchive")
                with open(p, "wb") as f:
                    f.write(raw)
                built.append((raw, descs, seed_name))
                paths.append(p)
            answers: dict = {}

            def ask(name: str) -> None:
                answers[name] = readers[name].dump_many(paths)

            threads = [threading.Thread(target=ask, args=(n,)) for n in READERS]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            for k, i in enumerate(indices):
                raw, descs, seed_name = built[k]
                a = {n: answers[n][k] for n in READERS}
                (pk, pd), (jk, jd) = outcome(a["python"]), outcome(a["javascript"])
                summary.cases += 1
                bad = False
                for n, (kind, _detail) in (("python", (pk, pd)), ("javascript", (jk, jd))):
                    if kind == "crash":
                        summary.crashes[n] += 1
                        save(f"crash-{n}", i, raw, descs, seed_name, a)
                        bad = True
                    elif kind == "hang":
                        summary.hangs[n] += 1
                        save(f"hang-{n}", i, raw, descs, seed_name, a)
                        bad = True
                if bad:
                    continue
                if pk == jk == "dump" and pd == jd:
                    summary.agreements += 1
                    summary.agreed_dumps += 1
                    summary.codes["dump"] += 1
                elif pk == jk == "error" and pd == jd:
                    summary.agreements += 1
                    summary.codes[pd] += 1
                else:
                    key = (pd if pk == "error" else pk, jd if jk == "error" else jk)
                    if pk == jk == "dump":
                        key = ("dump", "other dump")
                    summary.disagreements[key] += 1
                    save(f"disagree-{key[0]}-{key[1]}", i, raw, descs, seed_name, a)
                    continue
                if "validate" in a["python"]:
                    want = pd if pk == "error" else None
                    if a["python"]["validate"] != want:
                        summary.validator_disagreements[(want, a["python"]["validate"])] += 1
                        save(f"validator-{want}-{a['python']['validate']}", i, raw, descs, seed_name, a)
            for name, r in readers.items():
                r.measure()
                if r.stats.peak_rss_kib > max_rss_mib * 1024 and not any(
                    v.startswith(name) for v in summary.memory_violations
                ):
                    summary.memory_violations.append(
                        f"{name}: VmHWM {r.stats.peak_rss_kib / 1024:.1f} MiB after case {indices[-1]}"
                    )
            now = time.monotonic()
            if progress and now - last > 15:
                last = now
                print(
                    f"  ... {summary.cases} cases, {summary.failures} failures, {summary.cases / (now - t0):.0f} cases/s",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        for r in readers.values():
            r.stop()
        shutil.rmtree(work, ignore_errors=True)
        if findings_log:
            findings_log.close()
    summary.seconds = time.monotonic() - t0
    summary.memory = {n: r.stats.peak_rss_kib for n, r in readers.items()}
    summary.rss = {n: (r.stats.first_rss_kib, r.stats.last_rss_kib) for n, r in readers.items()}
    summary.restarts = {n: r.stats.started for n, r in readers.items()}
    return summary


def replay(seed: int, index: int, out: str, vectors: str, timeout: float) -> int:
    """Rebuild one case, write it to ``out``, and show both readers' answers."""
    seeds = load_seeds(vectors)
    raw, descs, seed_name = make_case(seeds, seed, index)
    with open(out, "wb") as f:
        f.write(raw)
    print(f"case {index} of seed {seed}: from {seed_name}, mutations {descs}; {len(raw)} bytes written to {out}")
    for name in READERS:
        with ReaderProcess(name, DEEP[name], timeout=timeout) as r:
            a = r.dump(os.path.abspath(out))
        kind, detail = outcome(a)
        print(
            f"  {name}: {kind} {detail[:300] if kind != 'dump' else str(len(detail)) + ' chars'} {a.get('message', '')[:300]}"
        )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--timeout", type=float, default=10.0, help="seconds per case before a reader counts as hung (default 10)"
    )
    ap.add_argument("--batch", type=int, default=64, help="cases in flight per reader process")
    ap.add_argument(
        "--max-rss-mib",
        type=int,
        default=DEFAULT_MAX_RSS_MIB,
        help=f"memory bound per reader process (VmHWM), default {DEFAULT_MAX_RSS_MIB}",
    )
    ap.add_argument("--vectors", default=os.path.join(ROOT, "test-vectors"))
    ap.add_argument(
        "--save-dir",
        default=os.path.join(tempfile.gettempdir(), "rlarchive-fuzz-findings"),
        help="where failing cases are saved",
    )
    ap.add_argument(
        "--official",
        action="store_true",
        help="use the official conformance testees (dump only) instead of the deep ones",
    )
    ap.add_argument(
        "--replay", type=int, metavar="I", help="rebuild case I of --seed, write it to --out and show both answers"
    )
    ap.add_argument("--out", default="case.rlarchive")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument(
        "--allow-known", action="store_true", help="exit 0 when every failure is a known issue of known_issues.py"
    )
    args = ap.parse_args()
    if args.replay is not None:
        return replay(args.seed, args.replay, args.out, args.vectors, args.timeout)
    print(
        f"fuzzing {args.cases} cases, seed {args.seed}, readers {', '.join(READERS)} ({'official' if args.official else 'deep'} testees), "
        f"timeout {args.timeout} s per case, memory bound {args.max_rss_mib} MiB per process",
        flush=True,
    )
    s = run(
        args.cases,
        args.seed,
        timeout=args.timeout,
        batch=args.batch,
        vectors=args.vectors,
        save_dir=args.save_dir,
        official=args.official,
        max_rss_mib=args.max_rss_mib,
        progress=not args.quiet,
    )
    print(s.report())
    if s.failures and args.allow_known and not s.new_failures:
        print(f"OK but for {s.failures} failing cases of known issues (known_issues.py)")
        return 0
    if s.failures:
        print(f"FAILED: {s.failures} failing cases; saved under {args.save_dir} (findings.jsonl lists their mutations)")
        return 1
    print("OK: no disagreement, crash, hang or memory over the bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
