#!/usr/bin/env python3
"""Run the stages of ``make test`` (or ``make test-fast``) with a banner each and one summary at the end.

``test_stages.py [--make MAKE] GROUP...``: each GROUP is a make target, or several joined by ``+`` that run
at the same time (``test-python+test-js``); a target written ``~TARGET`` runs at a lower priority
(``nice -n BACKGROUND_NICE``), on the processor time the others leave. Groups run one after the other; a stage that fails does not stop
the others. Each stage is ``make TARGET NO_SETUP=1 REPORTS=DIR`` (the caller has set everything up), with
RLARCHIVE_STAGES naming every stage of the run (a test that does what one of them does then skips itself);
the test runners write JUnit XML into DIR, from which the summary counts the tests passed, failed and
skipped per stage, and says why tests were skipped. The output of the first stage of a group is shown as it
comes, that of the others when they end. The exit status is 0 only when every stage succeeded; the summary
is printed in any case, and ends with the line ``total: N passed, N failed, N skipped``.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

#: the longest reason of a skip shown in the summary
REASON_WIDTH = 110
#: how much lower the priority of a ``~TARGET`` stage is (nice(1)'s increment)
BACKGROUND_NICE = 10


@dataclass
class Stage:
    target: str
    background: bool = False  # runs at a lower priority (``~TARGET``)
    rc: int | None = None
    seconds: float = 0.0
    output: str = ""
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    counted: bool = False  # a report of the test runner was read
    deselected: int = 0
    reasons: collections.Counter = field(default_factory=collections.Counter)


def banner(text: str) -> str:
    return f"\n==== {text} " + "=" * max(4, 96 - len(text))


def _reason(message: str) -> str:
    message = " ".join(message.split())
    message = re.sub(r"^Skipped:\s*", "", message)
    return message if len(message) <= REASON_WIDTH else message[: REASON_WIDTH - 3] + "..."


def read_junit(stage: Stage, path: str) -> None:
    """Count the test cases of a JUnit XML file (pytest, node --test, the conformance harness) into ``stage``."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return
    stage.counted = True
    for case in root.iter("testcase"):
        children = {child.tag: child for child in case}
        if "failure" in children or "error" in children:
            stage.failed += 1
        elif "skipped" in children:
            stage.skipped += 1
            skip = children["skipped"]
            stage.reasons[_reason(skip.get("message") or skip.text or "no reason given")] += 1
        else:
            stage.passed += 1


def run_stage(stage: Stage, make: str, reports: str, env: dict, live: bool, lock: threading.Lock) -> None:
    folder = os.path.join(reports, stage.target)
    os.makedirs(folder, exist_ok=True)
    cmd = [*shlex.split(make), "--no-print-directory", stage.target, "NO_SETUP=1", f"REPORTS={folder}"]
    nice = shutil.which("nice") if stage.background else None
    if nice is not None:
        cmd = [nice, "-n", str(BACKGROUND_NICE), *cmd]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    chunks = []
    assert proc.stdout is not None
    for line in iter(proc.stdout.readline, b""):
        chunks.append(line)
        if live:
            with lock:
                sys.stdout.buffer.write(line)
                sys.stdout.flush()
    stage.rc = proc.wait()
    stage.seconds = time.monotonic() - start
    stage.output = b"".join(chunks).decode("utf-8", "replace")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".xml"):
            read_junit(stage, os.path.join(folder, name))
    m = re.findall(r"(\d+) deselected", stage.output)
    stage.deselected = sum(int(x) for x in m)


def outcome(stage: Stage) -> str:
    verdict = "ok" if stage.rc == 0 else f"FAILED (exit status {stage.rc})"
    counts = (
        f"{stage.passed} passed, {stage.failed} failed, {stage.skipped} skipped" if stage.counted else "no test count"
    )
    more = f", {stage.deselected} deselected (slow)" if stage.deselected else ""
    return f"{verdict}: {counts}{more} in {stage.seconds:.0f} s"


def run_group(stages: list[Stage], make: str, reports: str, env: dict) -> None:
    lock = threading.Lock()
    names = " and ".join(s.target for s in stages)
    print(banner(f"{names}: started" + (" (at the same time)" if len(stages) > 1 else "")), flush=True)
    threads = [
        threading.Thread(target=run_stage, args=(s, make, reports, env, i == 0, lock)) for i, s in enumerate(stages)
    ]
    for t in threads:
        t.start()
    threads[0].join()
    print(banner(f"{stages[0].target}: {outcome(stages[0])}"), flush=True)
    for s, t in zip(stages[1:], threads[1:]):
        t.join()
        print(banner(f"{s.target}: its output"), flush=True)
        sys.stdout.write(s.output)
        print(banner(f"{s.target}: {outcome(s)}"), flush=True)


def summary(stages: list[Stage], seconds: float) -> list[str]:
    width = max(len(s.target) for s in stages)
    lines = [banner("summary"), ""]
    for s in stages:
        lines.append(f"  {s.target:<{width}}  {outcome(s)}")
    skipped = [s for s in stages if s.reasons]
    if skipped:
        lines += ["", "  skipped, and why:"]
        for s in skipped:
            for reason, n in s.reasons.most_common():
                lines.append(f"    {s.target}: {n} x {reason}")
    failed_stages = [s for s in stages if s.rc != 0]
    passed = sum(s.passed for s in stages)
    skipped_n = sum(s.skipped for s in stages)
    # a stage that failed without a failing test counted (a linter, a build, a crash) counts as one failure
    failed = sum(s.failed if s.failed else (1 if s.rc != 0 else 0) for s in stages)
    lines.append("")
    if failed_stages:
        lines.append("  stages that failed: " + ", ".join(s.target for s in failed_stages))
    lines.append(f"  {len(stages)} stages in {seconds:.0f} s")
    lines.append(f"total: {passed} passed, {failed} failed, {skipped_n} skipped")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--make", default=os.environ.get("MAKE", "make"), help="the make program (default: $MAKE)")
    ap.add_argument("groups", nargs="+", metavar="GROUP", help="make targets; TARGET+TARGET runs them at once")
    args = ap.parse_args(argv)
    groups = [[Stage(t.lstrip("~"), t.startswith("~")) for t in g.split("+") if t.lstrip("~")] for g in args.groups]
    stages = [s for g in groups for s in g]
    reports = tempfile.mkdtemp(prefix="rlarchive-stages-")
    # the tests that do what a stage of this run does skip themselves (tests/python/conftest.py)
    env = dict(os.environ, RLARCHIVE_STAGES=",".join(s.target for s in stages))
    start = time.monotonic()
    try:
        for group in groups:
            run_group(group, args.make, reports, env)
    finally:
        shutil.rmtree(reports, ignore_errors=True)
    print("\n".join(summary(stages, time.monotonic() - start)), flush=True)
    return 0 if all(s.rc == 0 for s in stages) else 1


if __name__ == "__main__":
    sys.exit(main())
