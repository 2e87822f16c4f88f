"""The rlarchive conformance harness (spec Annex A), shipped with the package.

Runs readers (commands speaking the JSON-lines protocol of Annex A) over every
test vector and prints a reader x case matrix; the exit status is 0 only when
every result is expected. A reader gets each case as a copy of its archive
under a random name, alone in a fresh folder (Annex A.4); it runs in a process
group of its own, which the harness ends as a whole, and an answer line may be
at most 64 MiB long (Annex A.1). The vectors of this package's format version come
inside the package, so a reader author needs nothing else:

    rlarchive conformance --reader-cmd "./my-reader"               # from any folder
    rlarchive conformance --reader-cmd "node my-reader.js" --xfail known.json --junit results.xml

This repository's own readers run through ``tests/conformance/run`` (the
registered readers of ``tests/conformance/readers.json``).
"""

from __future__ import annotations

import argparse
import base64
import collections
import gzip
import json
import os
import queue
import secrets
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

SYMBOL = {
    "pass": "ok",
    "fail": "FAIL",
    "skip": "SKIPPED",
    "n/a": "n/a",
    "xfail": "xfail",
    "xpass": "XPASS",
    "crash": "CRASH",
    "timeout": "TIMEOUT",
}
# A case the testee answers "skipped" counts against it: it was sent only because the testee
# declared every extension the case needs ("n/a" marks the cases not sent, Annex A.3).
UNEXPECTED = {"fail", "skip", "xpass", "crash", "timeout"}


class TesteeDied(Exception):
    pass


#: The longest answer line the harness reads, in bytes before its ``\n`` (Annex A.1). The longest
#: answer any vector expects is about 20 KB, so this leaves room for any escaping and for far larger
#: vectors; it is also the largest JSON member a reader accepts (MAX_JSON_BYTES, §15).
MAX_LINE_BYTES = 64 * 1024 * 1024
#: Seconds a testee's process group is given to exit after SIGTERM before it is sent SIGKILL (Annex A.1).
GRACE_SECONDS = 2.0
_TOO_LONG = object()  # what the stdout pump queues for a line longer than MAX_LINE_BYTES


def bounded_lines(stream: Any, limit: int, preview: int = 1000):
    """The lines of a binary stream, read a chunk at a time, as ``(bytes, complete)`` without the ``\n``.

    A line of more than ``limit`` bytes is never held whole: it comes as its first ``preview`` bytes
    with ``complete`` false, and the rest of it is read and thrown away. A last line without ``\n``
    counts as a line."""
    buf = bytearray()
    scanned = 0  # buf[:scanned] holds no newline
    skipping = False  # inside a too-long line that was already reported
    while True:
        nl = buf.find(b"\n", scanned)
        if nl >= 0:
            if skipping:
                skipping = False
            elif nl > limit:
                yield bytes(buf[:preview]), False
            else:
                with memoryview(buf) as view:
                    line = bytes(view[:nl])
                yield line, True
            del buf[: nl + 1]
            scanned = 0
            continue
        if len(buf) > limit or (skipping and buf):
            if not skipping:
                yield bytes(buf[:preview]), False
                skipping = True
            buf.clear()
        scanned = len(buf)
        chunk = stream.read1(1 << 16)
        if not chunk:
            if buf and not skipping:
                yield bytes(buf), True
            return
        buf += chunk


def end_process_group(proc: Any, grace: float = GRACE_SECONDS) -> None:
    """End a process started with ``start_new_session=True`` and everything it started in its group:
    SIGTERM to the group, SIGKILL to whatever is left of it after ``grace`` seconds (Annex A.1)."""
    if os.name != "posix":  # no process groups to end: the process alone
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        return
    pgid = proc.pid  # the leader of its own session and group
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    deadline = time.monotonic() + grace
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    while _group_running(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.poll() is None:  # a leader that left its group
        proc.kill()
    proc.wait()


def _group_running(pgid: int) -> bool:
    """Whether a process group has a member that has not exited (zombies, which an init process that
    does not reap leaves behind, do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:  # no /proc: a member answered the signal, so count the group as running
        return True
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


class Testee:
    """One long-lived reader process speaking the protocol of Annex A.

    :meth:`request` asks one question and waits for its answer; :meth:`send`
    and :meth:`receive` let a caller keep many requests in flight (answers
    come in order). A testee that exits or writes something that is not an
    answer (or an answer line longer than :data:`MAX_LINE_BYTES`) raises
    :class:`TesteeDied`; one that does not answer in time, :class:`TimeoutError`.
    The testee runs in a process group of its own, which :meth:`stop` and
    :meth:`kill` end as a whole.
    """

    #: The least time a testee is given to answer the handshake (starting an interpreter can be slow).
    HANDSHAKE_SECONDS = 30.0
    #: Once the testee has exited, how long answers it wrote before exiting may still take to arrive.
    EXIT_SECONDS = 1.0

    def __init__(
        self,
        name: str,
        cmd: list[Any],
        timeout: float,
        cwd: str,
        env: dict[str, Any] | None = None,
        max_line: int = MAX_LINE_BYTES,
    ) -> None:
        self.name, self.cmd, self.timeout, self.cwd, self.env, self.max_line = name, cmd, timeout, cwd, env, max_line
        self.proc: Any = None  # the running testee (subprocess.Popen), or None
        self.info: dict[str, Any] = {}
        self.extensions: set[Any] = set()
        self.requests: set[Any] = set()  # requests besides dump the testee answers (Annex A: "validate")
        self.seq = 0
        self.lines: queue.Queue = queue.Queue()
        self.stderr: collections.deque = collections.deque(maxlen=20)

    def start(self) -> None:
        self.proc = subprocess.Popen(
            self.cmd,
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=os.name == "posix",
        )
        self.lines = queue.Queue()
        self.stderr = collections.deque(maxlen=20)
        threading.Thread(target=self._pump, args=(self.proc, self.lines, self.max_line), daemon=True).start()
        threading.Thread(target=self._pump_stderr, args=(self.proc, self.stderr), daemon=True).start()
        try:
            self.send({"cmd": "start", "protocol": 1})
            reply = self.receive(max(self.timeout, self.HANDSHAKE_SECONDS))
        except TesteeDied as e:
            why = f"no handshake ({e}){self.stderr_tail()}"
            self.stop(kill=True)
            raise TesteeDied(why) from None
        except TimeoutError:
            self.stop(kill=True)
            raise TesteeDied(f"no handshake within {max(self.timeout, self.HANDSHAKE_SECONDS)} s") from None
        if not reply.get("ok") or reply.get("protocol") != 1:
            why = f'handshake refused: the testee answered {json.dumps(reply)[:300]} to {{"cmd": "start", "protocol": 1}}, not {{"ok": true, "protocol": 1, ...}}{self.stderr_tail()}'
            self.stop(kill=True)
            raise TesteeDied(why)
        self.info = reply.get("reader", {})
        ext = reply.get("extensions", [])
        self.extensions = set(ext) if isinstance(ext, list) else set()
        req = reply.get("requests", [])
        self.requests = set(req) if isinstance(req, list) else set()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @staticmethod
    def _pump_stderr(proc: Any, tail: collections.deque) -> None:
        try:
            for line, complete in bounded_lines(proc.stderr, 500, preview=500):
                text = line.decode("utf-8", "replace").rstrip("\r")[:500]
                tail.append(text if complete else text + " [...]")
        except (OSError, ValueError):
            pass

    def stderr_tail(self, lines: int = 8) -> str:
        """The testee's last lines of standard error, to show beside a failure."""
        time.sleep(0.05)  # let the pump catch up with what was just written
        got = list(self.stderr)[-lines:]
        return ("\n      stderr: " + "\n      stderr: ".join(got)) if got else ""

    @staticmethod
    def _pump(proc: Any, q: queue.Queue, limit: int) -> None:
        try:
            for line, complete in bounded_lines(proc.stdout, limit, preview=200):
                if not complete:  # read no further: the testee is ended and restarted
                    q.put((_TOO_LONG, line))
                    return
                q.put(line)
        except (OSError, ValueError):
            pass
        q.put(None)

    def send(self, msg: dict[str, Any]) -> None:
        """Write one request line."""
        try:
            self.proc.stdin.write(json.dumps(msg).encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError, AttributeError):
            raise TesteeDied("reader exited") from None

    def _next_line(self, timeout: float) -> Any:
        """The next item of the stdout pump; a testee that has exited gets :attr:`EXIT_SECONDS` for what
        it wrote before (a child it left running may hold its standard output open)."""
        deadline = time.monotonic() + timeout
        exited_at = None
        while True:
            now = time.monotonic()
            if now >= deadline:
                raise TimeoutError(f"no answer within {timeout} s")
            try:
                return self.lines.get(timeout=min(0.2, deadline - now))
            except queue.Empty:
                pass
            if self.proc is not None and self.proc.poll() is not None:
                exited_at = exited_at or time.monotonic()
                if time.monotonic() - exited_at >= self.EXIT_SECONDS:
                    return None

    def receive(self, timeout: float) -> dict[str, Any]:
        """The next answer line, as an object."""
        line = self._next_line(timeout)
        if line is None:
            raise TesteeDied(f"reader exited (status {self.proc.poll() if self.proc is not None else '?'})")
        if isinstance(line, tuple) and line[0] is _TOO_LONG:
            raise TesteeDied(
                f"answer line longer than {self.max_line} bytes (the limit of Annex A.1), starting {line[1][:100]!r}"
            )
        try:
            reply = json.loads(line.decode("utf-8"))
        except ValueError:  # not UTF-8, or not JSON
            raise TesteeDied(f"not a JSON line: {line[:200]!r}") from None
        if not isinstance(reply, dict):
            raise TesteeDied(f"not a JSON object: {line[:200]!r}")
        return reply

    def request(self, cmd: str, path: str, **fields) -> dict[str, Any]:
        """One request (``dump``, ``predict``, ``validate``) on one file, answered in order; a testee that
        does not answer in time is ended (the next request starts it again)."""
        if not self.alive():
            self.start()
        self.seq += 1
        self.send({"cmd": cmd, "seq": self.seq, "file": path, **fields})
        try:
            reply = self.receive(self.timeout)
        except TimeoutError:
            self.stop(kill=True)
            raise
        if reply.get("seq") != self.seq:
            raise TesteeDied(f"answer out of order: {reply}")
        return reply

    def kill(self) -> None:
        """End the testee and its whole process group now (SIGTERM, then SIGKILL after :data:`GRACE_SECONDS`)."""
        if self.proc is None:
            return
        end_process_group(self.proc)
        try:
            self.proc.stdin.close()
        except (OSError, ValueError):
            pass
        self.proc = None  # its pumps stop at the end of its output

    def stop(self, kill: bool = False) -> None:
        """Ask the testee to exit (unless ``kill``), then end what is left of its process group."""
        if self.proc is None:
            return
        if not kill:
            try:
                self.send({"cmd": "stop"})
                self.proc.wait(timeout=5)
            except Exception:
                pass
        self.kill()


def load_cases(vectors: str) -> list[Any]:
    """The cases of ``vectors/index.json``, checked against the index schema (when the package is at hand)."""
    with open(os.path.join(vectors, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    try:
        from .manifest import validator
    except ImportError:  # run as a file of the standalone kit (make dist): no package, no schema check
        return index["cases"]
    validator("test-vectors-index-1.schema.json").validate(index)
    return index["cases"]


def stage(vectors: str, case: dict[str, Any], tmp: str) -> tuple[str, str]:
    """(folder, path): a copy of a case's archive, as a testee gets it (Annex A.4): the archive's bytes
    (a gzip-stored vector expanded) under a random name ending ``.rlarchive``, alone in a fresh folder
    inside ``tmp``. The caller removes the folder when the case is over."""
    src = os.path.join(os.path.abspath(vectors), case["file"])
    folder = tempfile.mkdtemp(dir=tmp)
    path = os.path.join(folder, secrets.token_hex(8) + ".rlarchive")
    try:
        with gzip.open(src, "rb") if src.endswith(".gz") else open(src, "rb") as fsrc, open(path, "wb") as dst:
            shutil.copyfileobj(fsrc, dst, 1 << 20)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder, path


# dtype code -> struct format of one element (little-endian), for judging actions without NumPy
_ELEMENT = {
    "BOOL": "?",
    "U8": "B",
    "I8": "b",
    "U16": "H",
    "I16": "h",
    "U32": "I",
    "I32": "i",
    "U64": "Q",
    "I64": "q",
    "F16": "e",
    "F32": "f",
    "F64": "d",
}


def _elements(value) -> tuple[Any, ...]:
    """(dtype, shape, elements) of an inline ndarray value; raises ValueError for anything else."""
    if not (
        isinstance(value, dict)
        and value.get("$type") == "ndarray"
        and "base64" in value
        and value.get("dtype") in _ELEMENT
    ):
        raise ValueError(f"not an inline ndarray of a known dtype: {str(value)[:120]}")
    raw = base64.b64decode(value["base64"], validate=True)
    fmt = _ELEMENT[value["dtype"]]
    n = len(raw) // struct.calcsize(fmt)
    count = 1
    for d in value["shape"]:
        count *= d
    if n != count or n * struct.calcsize(fmt) != len(raw):
        raise ValueError("the bytes do not match the shape")
    return value["dtype"], list(value["shape"]), struct.unpack(f"<{n}{fmt}", raw)


def same_actions(got, want) -> str:
    """ "" when ``got`` equals ``want`` as RLA_policy §7 says (integers exactly, floats within 1e-4 absolute or relative), else why not."""
    if not isinstance(got, list) or len(got) != len(want):
        return f"expected {len(want)} actions, got {len(got) if isinstance(got, list) else got!r}"
    for i, (g, w) in enumerate(zip(got, want)):
        try:
            gd, gs, ge = _elements(g)
        except ValueError as e:
            return f"action {i}: {e}"
        wd, ws, we = _elements(w)
        if (gd, gs) != (wd, ws):
            return f"action {i}: {gd}{gs}, expected {wd}{ws}"
        for k, (a, b) in enumerate(zip(ge, we)):
            ok = (
                a == b
                if not wd.startswith("F")
                else (a == b or (a != a and b != b) or abs(a - b) <= max(1e-4, 1e-4 * abs(b)))
            )  # NaN equals NaN
            if not ok:
                return f"action {i}, element {k}: {a!r}, expected {b!r}"
    return ""


def judge_report(case: dict[str, Any], reply: dict[str, Any]) -> tuple[str, str]:
    """A validate answer (Annex A): the report's issues, by code, severity and location
    (member, pointer, offset: spec §11.2), in order; messages are free."""
    if reply.get("result") != "report" or not isinstance(reply.get("report"), dict):
        return (
            "fail",
            f"validate: expected a report, got {reply.get('code', reply.get('result'))}: {str(reply.get('message', ''))[:160]}",
        )
    issues = reply["report"].get("issues")
    if not isinstance(issues, list):
        return "fail", "validate: the report has no issues list"
    got = [
        {k: i[k] for k in ("code", "severity", "member", "pointer", "offset") if isinstance(i, dict) and k in i}
        for i in issues
    ]
    if got != case["issues"]:
        return "fail", f"validate: issues {got}, expected {case['issues']}"
    return "pass", ""


def judge(vectors: str, case: dict[str, Any], reply: dict[str, Any]) -> tuple[str, str]:
    exp = case["expect"]
    result = reply.get("result")
    if result == "skipped":
        return "skip", reply.get("reason", "")
    if exp["result"] == "actions":
        if result != "actions":
            return "fail", f"expected actions, got {reply.get('code', result)}: {reply.get('message', '')[:160]}"
        with open(os.path.join(vectors, exp["predict_file"]), encoding="utf-8") as f:
            want = json.load(f)["actions"]
        why = same_actions(reply.get("actions"), want)
        return ("fail", why) if why else ("pass", "")
    if exp["result"] == "error":
        if result == "error" and reply.get("code") == exp["code"]:
            return "pass", ""
        got = reply.get("code") if result == "error" else result
        return "fail", f"expected {exp['code']}, got {got}: {reply.get('message', '')[:160]}"
    if result != "dump":
        return "fail", f"expected a dump, got {reply.get('code', result)}: {reply.get('message', '')[:160]}"
    with open(os.path.join(vectors, exp["dump_file"]), "rb") as f:
        want = f.read()
    got = reply.get("dump", "")
    if not isinstance(got, str) or got.encode("utf-8") != want:
        g = got.encode("utf-8") if isinstance(got, str) else b""
        i = next((k for k in range(min(len(g), len(want))) if g[k] != want[k]), min(len(g), len(want)))
        return (
            "fail",
            f"dump differs at byte {i}: got {g[max(0, i - 40) : i + 40]!r}, want {want[max(0, i - 40) : i + 40]!r}",
        )
    return "pass", ""


def ask(testee: Testee, vectors: str, case: dict[str, Any], path: str) -> dict[str, Any]:
    """Send a case's request: ``predict`` (with the observations of its predict file) or ``dump``."""
    if case["expect"]["result"] == "actions":
        with open(os.path.join(vectors, case["expect"]["predict_file"]), encoding="utf-8") as f:
            spec = json.load(f)
        fields = {k: spec[k] for k in ("observations", "episode_starts", "action_masks") if k in spec}
        return testee.request("predict", path, **fields)
    return testee.request("dump", path)


def run_reader(
    name: str, cmd: list[Any], cases: list[Any], vectors: str, xfail: dict[str, Any], timeout: float, tmp: str, cwd: str
) -> dict[str, Any]:
    testee = Testee(name, cmd, timeout, cwd)
    results: dict[str, Any] = {}
    try:
        testee.start()
    except (TesteeDied, TimeoutError, OSError) as e:
        testee.stop(kill=True)
        return {c["id"]: ("crash", f"cannot start reader: {e}") for c in cases}
    try:
        _run_cases(testee, cases, vectors, xfail, timeout, tmp, results)
        testee.stop()
    finally:
        testee.stop(kill=True)  # whatever happened, nothing of the testee outlives the run
    results["__info__"] = testee.info
    return results


def _run_cases(
    testee: Testee,
    cases: list[Any],
    vectors: str,
    xfail: dict[str, Any],
    timeout: float,
    tmp: str,
    results: dict[str, Any],
) -> None:
    """Each case through the testee, its result into ``results`` (case id -> (status, detail))."""
    for c in cases:
        missing = [x for x in c.get("extensions", []) if x not in testee.extensions]
        if missing:
            results[c["id"]] = ("n/a", f"not sent: the reader does not declare {', '.join(missing)}")
            continue
        if hasattr(testee, "stderr"):
            testee.stderr.clear()  # what the testee writes for this case only
        folder = None
        try:
            folder, path = stage(vectors, c, tmp)
            status, detail = judge(vectors, c, ask(testee, vectors, c, path))
            if status == "pass" and "validate" in testee.requests and "issues" in c:
                status, detail = judge_report(c, testee.request("validate", path))
        except TimeoutError:
            status, detail = "timeout", f"no answer within {timeout} s"
        except TesteeDied as e:
            status, detail = "crash", str(e)
            testee.stop(kill=True)
        except OSError as e:
            status, detail = "crash", f"cannot start reader: {e}"
        finally:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        if status in ("fail", "crash", "timeout", "skip"):
            detail += testee.stderr_tail()
        if c["id"] in xfail:
            if status == "pass":
                status, detail = (
                    "xpass",
                    f"listed as expected failure ({xfail[c['id']]}) but passed: remove it from the list",
                )
            elif status == "fail":
                status, detail = "xfail", xfail[c["id"]]
        results[c["id"]] = (status, detail)


def junit_xml(title: str, suites: list[Any]) -> bytes:
    """A JUnit XML document (as CI systems read it): ``suites`` is a list of ``(name, seconds, cases)``, each case
    ``(classname, name, outcome, message)`` with outcome ``"pass"``, ``"failure"`` or ``"skipped"``."""
    from xml.etree import ElementTree as ET

    root = ET.Element("testsuites", name=title)
    for suite_name, seconds, cases in suites:
        suite = ET.SubElement(root, "testsuite", name=suite_name, tests=str(len(cases)), time=f"{seconds:.3f}")
        bad = skipped = 0
        for classname, name, outcome, message in cases:
            tc = ET.SubElement(suite, "testcase", classname=classname, name=name)
            if outcome == "failure":
                bad += 1
                ET.SubElement(tc, "failure", message=message[:2000])
            elif outcome == "skipped":
                skipped += 1
                ET.SubElement(tc, "skipped", message=message)
        suite.set("failures", str(bad))
        suite.set("skipped", str(skipped))
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def write_junit(path: str, names: list[Any], cases: list[Any], results: dict[str, Any]) -> None:
    """The results as JUnit XML: one test suite per reader, one test case per vector."""
    suites = []
    for n in names:
        rows = []
        for c in cases:
            status, detail = results[n][c["id"]]
            if status in UNEXPECTED:
                rows.append((n, c["id"], "failure", f"{status}: {detail}"))
            else:
                rows.append((n, c["id"], "skipped" if status == "n/a" else "pass", detail))
        suites.append((n, results[n]["__seconds__"], rows))
    with open(path, "wb") as f:
        f.write(junit_xml("rlarchive conformance", suites))


def handshake_name(info: Any) -> str:
    """The reader's name from its handshake (``reader.name``), as one short printable word, or ``""``."""
    name = info.get("name") if isinstance(info, dict) else None
    if not isinstance(name, str):
        return ""
    return "".join(ch if ch.isprintable() and not ch.isspace() else "_" for ch in name)[:40]


def vectors_dir() -> str:
    """The test vectors of this format version: the checkout's test-vectors/ (an editable install, where the
    vectors are kept once), else the copy inside the package (or the kit) that the build made."""
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "..", "..", "test-vectors"), os.path.join(here, "vectors")):
        if os.path.isfile(os.path.join(candidate, "index.json")):
            return os.path.abspath(candidate)
    raise SystemExit("rlarchive conformance: this installation carries no test vectors")


def _readers(args: argparse.Namespace, registered: str | None) -> list[Any]:
    """The readers to run: the outside reader of --reader-cmd, or the registered ones (--readers picks some)."""
    if args.reader_cmd:  # an outside reader runs in, and its paths resolve from, the caller's folder
        xf = os.path.abspath(args.xfail) if args.xfail else None
        # "named": no --reader-name, so the name its handshake gives replaces "outside" once it has run
        readers: list[dict[str, Any]] = [
            {
                "name": args.reader_name or "outside",
                "cmd": shlex.split(args.reader_cmd),
                "xfail": xf,
                "cwd": os.getcwd(),
                "named": args.reader_name is None,
            }
        ]
    else:
        assert registered is not None  # main checked it
        with open(registered, encoding="utf-8") as f:
            readers = json.load(f)["readers"]
        root = os.path.abspath(
            os.path.join(os.path.dirname(registered), "..", "..")
        )  # tests/conformance/ -> the repository
        for r in readers:  # registered commands and xfail lists are relative to the repository's root
            r["cwd"] = root
            if r.get("xfail") and not os.path.isabs(r["xfail"]):
                r["xfail"] = os.path.join(root, r["xfail"])
        if args.readers:
            wanted = set(args.readers.split(","))
            readers = [r for r in readers if r["name"] in wanted]
    return readers


def main(argv: list[Any] | None = None, registered: str | None = None, prog: str = "rlarchive conformance") -> int:
    """Run the harness; ``registered`` is a readers.json listing readers to run when no --reader-cmd is given."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vectors", default=None, help="folder with index.json (default: the vectors inside this package)")
    ap.add_argument("--reader-cmd", help="command of an outside reader (shell-quoted)")
    ap.add_argument(
        "--reader-name",
        help="name of the outside reader in the matrix (default: the name its handshake gives, else 'outside')",
    )
    ap.add_argument("--xfail", help="expected-failure list of the outside reader (JSON: case id -> reason)")
    ap.add_argument("--readers", help="comma-separated registered readers to run (default: all)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    ap.add_argument("--quiet", action="store_true", help="print only rows with an unexpected result")
    ap.add_argument("--report", help="write the results as JSON here")
    ap.add_argument("--junit", help="write the results as JUnit XML here (one test case per reader and case)")
    args = ap.parse_args(argv)
    if args.vectors is None:
        args.vectors = vectors_dir()
    if not args.reader_cmd and registered is None:
        ap.error("give the reader to test: --reader-cmd CMD")
    cases = load_cases(args.vectors)
    readers = _readers(args, registered)
    all_results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in readers:
            xfail = {}
            if r.get("xfail"):
                with open(r["xfail"], encoding="utf-8") as f:
                    xfail = json.load(f)
            t0 = time.monotonic()
            results = run_reader(r["name"], r["cmd"], cases, args.vectors, xfail, args.timeout, tmp, r["cwd"])
            results["__seconds__"] = time.monotonic() - t0
            if r.get("named"):  # no --reader-name: the name the reader's handshake gave
                r["name"] = handshake_name(results.get("__info__", {})) or r["name"]
            all_results[r["name"]] = results

    names = [r["name"] for r in readers]
    width = max(len(c["id"]) for c in cases) + 2
    print("case".ljust(width) + "".join(n.ljust(12) for n in names))
    bad = 0
    for c in cases:
        row = [all_results[n][c["id"]] for n in names]
        unexpected = any(s in UNEXPECTED for s, _ in row)
        bad += unexpected
        if args.quiet and not unexpected:
            continue
        print(c["id"].ljust(width) + "".join(SYMBOL[s].ljust(12) for s, _ in row))
        for n, (s, d) in zip(names, row):
            if s in UNEXPECTED:
                print(f"    {n}: {d}")
    print()
    total_pass = total_fail = 0
    for n in names:
        res = [v for k, v in all_results[n].items() if not k.startswith("__")]
        count = {s: sum(1 for st, _ in res if st == s) for s in SYMBOL}
        failed = sum(count[s] for s in UNEXPECTED)
        total_pass += count["pass"] + count["xfail"]
        total_fail += failed
        info = all_results[n].get("__info__", {})
        who = f"{info.get('name', '?')} {info.get('version', '')}".strip()
        sent = len(cases) - count["n/a"]
        print(
            f"{n} ({who}): {count['pass']} passed, {failed} failed ({count['skip']} of them answered skipped), {count['xfail']} expected failures"
            f" of {sent} cases sent in {all_results[n]['__seconds__']:.1f} s; coverage {sent} of {len(cases)} cases"
            + (f" ({count['n/a']} need extensions the reader does not declare)" if count["n/a"] else "")
        )
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump({n: {k: v for k, v in all_results[n].items()} for n in names}, f, indent=1)
    if args.junit:
        write_junit(args.junit, names, cases, all_results)
    print(f"conformance: {total_pass} passed, {total_fail} failed")
    return 1 if total_fail or not readers else 0


if __name__ == "__main__":  # the standalone kit: python run.py --reader-cmd CMD
    sys.exit(main(prog=os.path.basename(sys.argv[0])))
