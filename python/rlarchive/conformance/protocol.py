"""The harness's side of the conformance protocol (spec Annex A.1): one reader process and its lines.

A :class:`Testee` is a reader started in a process group of its own, asked one
question at a time on stdin and read on stdout, a line at most
:data:`MAX_LINE_BYTES` long; when it is done, or misbehaves, the whole group
is ended (:func:`end_process_group`). Standard library only: this module also
ships beside ``run.py`` in the standalone conformance kit.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import select
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from ..jsonbounds import loads as bounded_loads
else:  # beside run.py in the standalone kit
    from jsonbounds import loads as bounded_loads


class TesteeDied(Exception):
    pass


#: The longest answer line the harness reads, in bytes before its ``\n`` (Annex A.1). The longest
#: answer any vector expects is about 20 KB, so this leaves room for any escaping and for far larger
#: vectors; it is also the largest JSON member a reader accepts (MAX_JSON_BYTES, §15).
MAX_LINE_BYTES = 64 * 1024 * 1024
#: The deepest nesting of an answer the harness parses (Annex A.1; MAX_JSON_DEPTH of §15).
MAX_ANSWER_DEPTH = 64
#: The most memory an answer line and its parse may take (Annex A.1; counted before parsing as for a caller's JSON,
#: §15): room for a line of MAX_LINE_BYTES of text, such as a dump, and not for one that expands into tiny objects.
MAX_ANSWER_MEMORY = 32 * MAX_LINE_BYTES
#: Seconds a testee's process group is given to exit after SIGTERM before it is sent SIGKILL (Annex A.1).
GRACE_SECONDS = 2.0
_TOO_LONG = object()  # what the stdout pump queues for a line longer than MAX_LINE_BYTES


def bounded_lines(stream: Any, limit: int, preview: int = 1000) -> Iterator[tuple[bytes, bool]]:
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
    #: The longest a failure's report waits for standard error the testee wrote and the harness has not read yet.
    STDERR_SETTLE_SECONDS = 0.05

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
        self.lines: queue.Queue[Any] = queue.Queue()
        self.stderr: collections.deque[Any] = collections.deque(maxlen=20)

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
    def _pump_stderr(proc: Any, tail: collections.deque[Any]) -> None:
        try:
            for line, complete in bounded_lines(proc.stderr, 500, preview=500):
                text = line.decode("utf-8", "replace").rstrip("\r")[:500]
                tail.append(text if complete else text + " [...]")
        except (OSError, ValueError):
            pass

    def stderr_tail(self, lines: int = 8) -> str:
        """The testee's last lines of standard error, to show beside a failure."""
        self._stderr_settle()
        got = list(self.stderr)[-lines:]
        return ("\n      stderr: " + "\n      stderr: ".join(got)) if got else ""

    def _stderr_settle(self) -> None:
        """Wait, at most :attr:`STDERR_SETTLE_SECONDS`, while the testee's standard error holds bytes the pump
        has not read yet (all that time where the pipe cannot be polled); no wait when it holds none."""
        try:
            fd = self.proc.stderr.fileno()
        except (AttributeError, OSError, ValueError):
            return  # no testee, or its pipe is closed: nothing more will come
        if os.name != "posix":
            time.sleep(self.STDERR_SETTLE_SECONDS)
            return
        deadline = time.monotonic() + self.STDERR_SETTLE_SECONDS
        try:
            while select.select([fd], [], [], 0)[0] and time.monotonic() < deadline:
                time.sleep(0.005)  # readable: the pump is behind (or the pipe is at its end)
        except (OSError, ValueError):
            return
        time.sleep(0.002)  # what the pump has just read, into the tail

    @staticmethod
    def _pump(proc: Any, q: queue.Queue[Any], limit: int) -> None:
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
        self.send_line(json.dumps(msg).encode("utf-8"))

    def send_line(self, line: bytes) -> None:
        """Write one line of any bytes (a request line, or one that is not a request at all)."""
        try:
            self.proc.stdin.write(line + b"\n")
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
            reply = bounded_loads(line, max_depth=MAX_ANSWER_DEPTH, max_memory=MAX_ANSWER_MEMORY)
        except ValueError as e:  # not UTF-8, not JSON, or beyond a bound
            raise TesteeDied(f"not a JSON line within the bounds of Annex A.1 ({e}): {line[:200]!r}") from None
        if not isinstance(reply, dict):
            raise TesteeDied(f"not a JSON object: {line[:200]!r}")
        return reply

    def request(self, cmd: str, path: str, **fields: Any) -> dict[str, Any]:
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

    def request_line(self, template: bytes, path: str) -> tuple[int, dict[str, Any]]:
        """(seq, answer) of a request line given as bytes (a case's request file, Annex A.5): ``$SEQ``
        becomes the next sequence number, ``$FILE`` the path as a JSON string. The answer's ``seq``
        is left to the caller to judge: a testee that cannot read the request answers null."""
        if not self.alive():
            self.start()
        self.seq += 1
        line = template.replace(b"$SEQ", str(self.seq).encode()).replace(b"$FILE", json.dumps(path).encode())
        self.send_line(line)
        try:
            reply = self.receive(self.timeout)
        except TimeoutError:
            self.stop(kill=True)
            raise
        return self.seq, reply

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
