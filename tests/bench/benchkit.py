"""What the benchmarks share: interleaved rounds, CPU time, ratios as medians with their spread, and a
scratch folder that is removed on any exit.

- Rounds interleave the alternatives: round r runs every operation once, in an
  order rotated by r, so that a burst of load on the shared machine touches
  all of them alike; a first round warms the caches up and is not counted.
- CPU time is the process's (every thread's: ``time.process_time``), wall
  time ``time.perf_counter``.
- A ratio A/B is the median over the rounds of A's time / B's time in the
  same round, printed with the lowest and highest of them.
- The scratch folder (tmpfs by default: the figures then measure the code,
  not the disk) is ``rlarchive-bench-<pid>-...``; it is removed when the run
  ends, fails, or is stopped by SIGINT, SIGTERM or SIGHUP, and a run removes
  the folders of earlier runs whose process is gone (killed with SIGKILL).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

PREFIX = "rlarchive-bench-"


def bench_dir() -> str | None:
    """Where scratch folders go: $BENCH_DIR, else /dev/shm (tmpfs) when there is one, else the system's default."""
    return os.environ.get("BENCH_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep(parent: str | None) -> list[str]:
    """Remove the scratch folders of runs whose process is gone; the paths removed."""
    parent = parent or tempfile.gettempdir()
    removed = []
    for name in os.listdir(parent):
        m = re.fullmatch(re.escape(PREFIX) + r"(\d+)-.*", name)
        if m and not _alive(int(m.group(1))):
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
            removed.append(name)
    return removed


def _exit_on_signal(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def scratch(tag: str) -> Iterator[str]:
    """A fresh scratch folder, removed on any exit (and those of killed runs removed first)."""
    parent = bench_dir()
    stale = sweep(parent)
    if stale:
        print(f"removed {len(stale)} scratch folder(s) of earlier runs that were killed: {', '.join(stale)}")
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _exit_on_signal)  # SystemExit unwinds the with blocks: the folder goes
    folder = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{tag}-", dir=parent)
    atexit.register(shutil.rmtree, folder, True)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def load_average() -> str:
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


class Rounds:
    """Samples of operations measured in interleaved rounds: name -> [(wall s, CPU s, extra)]."""

    def __init__(self) -> None:
        self.samples: dict[str, list[tuple[float, float, Any]]] = {}

    def run(
        self,
        ops: dict[str, Callable[[], Any]],
        rounds: int,
        warmup: int = 1,
        before: Callable[[str], None] | None = None,
    ) -> None:
        """Run every operation once per round (order rotated each round); the first ``warmup`` rounds are not kept.

        An operation may return a dict of extra figures, kept with its sample.
        """
        names = list(ops)
        for r in range(warmup + rounds):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                if before is not None:
                    before(name)
                cpu, wall = time.process_time(), time.perf_counter()
                extra = ops[name]()
                sample = (time.perf_counter() - wall, time.process_time() - cpu, extra)
                if r >= warmup:
                    self.samples.setdefault(name, []).append(sample)

    def median(self, name: str, kind: str = "wall") -> float:
        i = 0 if kind == "wall" else 1
        return statistics.median(s[i] for s in self.samples[name])

    def extras(self, name: str, key: str) -> list[Any]:
        return [s[2][key] for s in self.samples[name] if isinstance(s[2], dict) and key in s[2]]

    def ratio(self, a: str, b: str, kind: str = "wall", a_key: str | None = None) -> tuple[float, float, float]:
        """(median, lowest, highest) over the rounds of a/b, each round's own; ``a_key``: an extra figure of a's."""
        i = 0 if kind == "wall" else 1
        nums = [sa[2][a_key] if a_key else sa[i] for sa in self.samples[a]]
        rs = [x / sb[i] for x, sb in zip(nums, self.samples[b])]
        return statistics.median(rs), min(rs), max(rs)


def ratio_text(r: tuple[float, float, float]) -> str:
    return f"{r[0]:6.2f}x  [{r[1]:.2f}-{r[2]:.2f}]"
