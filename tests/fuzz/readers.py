"""Long-lived reader processes speaking the conformance protocol (spec Annex A).

:class:`ReaderProcess` is the conformance harness's testee
(:class:`rlarchive.conformance.Testee`) with what fuzzing needs besides: it
pipelines requests (many in flight, answers in order), turns a hang or a
death into that case's answer and restarts the testee, and records the peak
resident memory of every process it started (``VmHWM`` from /proc).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from rlarchive.conformance import Testee, TesteeDied

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV_PYTHON = os.path.join(ROOT, ".venv", "bin", "python")

#: The official conformance testees (tests/conformance/readers.json).
OFFICIAL = {
    "python": [VENV_PYTHON, os.path.join(ROOT, "tests", "conformance", "testee_python.py")],
    "javascript": ["node", os.path.join(ROOT, "reader-js", "bin", "conformance.mjs")],
}
#: The fuzzing testees: the same readers, also decoding every value and tensor of
#: an accepted archive, and answering INTERNAL_ERROR instead of dying on a crash.
DEEP = {
    "python": [VENV_PYTHON, os.path.join(HERE, "py_testee.py")],
    "javascript": ["node", os.path.join(HERE, "js_testee.mjs")],
}


#: The testee exited, or wrote something that is not an answer.
ReaderDied = TesteeDied
#: The testee did not answer within the time limit.
ReaderTimeout = TimeoutError


def proc_status_kib(pid: int, key: str) -> int:
    """A memory figure (``VmHWM``, ``VmRSS``) of a process in KiB, 0 if unavailable."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass
class Stats:
    started: int = 0
    deaths: int = 0
    timeouts: int = 0
    peak_rss_kib: int = 0  # max VmHWM over every process started
    first_rss_kib: int = 0  # VmRSS at the first measurement
    last_rss_kib: int = 0  # VmRSS at the last measurement


class ReaderProcess(Testee):
    """One testee process; restarted transparently after a death or a hang."""

    def __init__(
        self, name: str, cmd: list, *, timeout: float = 10.0, cwd: str = ROOT, env: dict | None = None
    ) -> None:
        super().__init__(name, cmd, timeout, cwd, env)
        self.stats = Stats()

    def start(self) -> None:
        self.stats.started += 1
        super().start()

    def measure(self) -> None:
        """Fold the current process's VmHWM into the peak and record its VmRSS."""
        if self.proc is not None:
            hwm = proc_status_kib(self.proc.pid, "VmHWM")
            self.stats.peak_rss_kib = max(self.stats.peak_rss_kib, hwm)
            self.stats.last_rss_kib = proc_status_kib(self.proc.pid, "VmRSS") or self.stats.last_rss_kib
            self.stats.first_rss_kib = self.stats.first_rss_kib or self.stats.last_rss_kib

    def kill(self) -> None:
        """Record the testee's memory, then end it and its process group."""
        if self.proc is None:
            return
        self.measure()
        super().kill()

    def stop(self, kill: bool = False) -> None:
        """Ask the testee to exit (kill it if it does not)."""
        self.measure()
        if kill:
            self.kill()
        else:
            super().stop()

    def dump(self, path: str) -> dict:
        """One case: the reader's answer (``result`` dump/error/skipped), or a pseudo-answer
        ``{"result": "hang"}`` / ``{"result": "died", "message": ...}`` after which the
        reader is restarted on the next call."""
        return self.dump_many([path])[0]

    def dump_many(self, paths: list) -> list:
        """Answers for many files, requested all at once (pipelined). A hang or death
        ends that case; the reader is restarted and the remaining cases are re-sent."""
        answers: list = []
        while len(answers) < len(paths):
            if not self.alive():
                self.kill()
                self.start()
            todo = paths[len(answers) :]
            first = self.seq + 1
            try:
                for p in todo:
                    self.seq += 1
                    self.send({"cmd": "dump", "seq": self.seq, "file": p})
            except TesteeDied:
                pass  # the answers already in the pipe are still read below
            for k in range(len(todo)):
                t0 = time.monotonic()
                try:
                    reply = self.receive(self.timeout)
                except TimeoutError:
                    self.stats.timeouts += 1
                    answers.append(
                        {
                            "result": "hang",
                            "message": f"no answer within {self.timeout} s",
                            "seconds": time.monotonic() - t0,
                        }
                    )
                    self.kill()
                    break
                except TesteeDied as e:
                    self.stats.deaths += 1
                    self.measure()
                    answers.append({"result": "died", "message": f"{self.name}: {e}", "stderr": list(self.stderr)})
                    self.kill()
                    break
                if reply.get("seq") != first + k:
                    self.stats.deaths += 1
                    answers.append({"result": "died", "message": f"answer out of order: {str(reply)[:200]}"})
                    self.kill()
                    break
                answers.append(reply)
        return answers

    def predict(self, path: str, **fields) -> dict:
        """A predict request (Annex A) with ``observations`` and the optional fields: the reader's answer.

        A hang or death raises (the property tests treat it as a failure)."""
        return self.request("predict", path, **fields)

    def __enter__(self) -> ReaderProcess:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def outcome(reply: dict) -> tuple[str, str]:
    """An answer as (kind, detail): ("dump", text), ("error", code), ("crash"|"hang"|"skipped", message)."""
    r = reply.get("result")
    if r == "dump":
        return "dump", reply.get("dump", "")
    if r == "error":
        if reply.get("code") == "INTERNAL_ERROR":
            return "crash", reply.get("message", "")
        return "error", reply.get("code", "?")
    if r == "hang":
        return "hang", reply.get("message", "")
    if r == "died":
        return "crash", reply.get("message", "") + "\n" + "\n".join(reply.get("stderr", [])[-5:])
    return "skipped", reply.get("reason", str(reply)[:200])
