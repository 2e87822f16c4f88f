"""HTTP servers on 127.0.0.1 for the tests of remote sources (spec §11.4).

:func:`misbehaving_server` stalls, trickles or cuts its answers, for the
deadline tests; each of its connections is answered from its own thread with a
bounded loop, and it stops itself when the test leaves its ``with`` block (or,
at the latest, after ``LIFETIME`` seconds). :func:`serve` is a well-behaved
server that counts the requests it answers and the bytes it sends.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: No server lives longer than this, whatever the test does.
LIFETIME = 120.0


def _range(range_header: str, size: int, suffix: bool = True) -> tuple[int, int] | None:
    """The first and last byte of the one range ``range_header`` asks for (``bytes=a-b``, ``bytes=a-``, and,
    when ``suffix``, ``bytes=-n``), or None: no such header, or a range the server ignores."""
    m = re.fullmatch(r"bytes=(\d*)-(\d*)", range_header.strip())
    if m is None or m.group(1) == m.group(2) == "" or (m.group(1) == "" and not suffix):
        return None
    if m.group(1) == "":
        return max(0, size - int(m.group(2))), size - 1
    return int(m.group(1)), min(int(m.group(2) or size - 1), size - 1)


def _response(body: bytes, range_header: str, head: bool, declared_extra: int) -> bytes:
    """The bytes of a well-formed answer to a GET or HEAD of ``body``, honouring one Range; ``declared_extra``
    bytes are added to the Content-Length (and to the Content-Range, whose file grows as much) without being sent."""
    size = len(body)
    rng = _range(range_header, size)
    if rng and rng[0] < size:
        start, end = rng
        part = body[start : end + 1]
        status = "206 Partial Content"
        extra = f"Content-Range: bytes {start}-{end + declared_extra}/{size + declared_extra}\r\n"
    else:
        part, status, extra = body, "200 OK", ""
    head_lines = (
        f"HTTP/1.1 {status}\r\nContent-Length: {len(part) + declared_extra}\r\nAccept-Ranges: bytes\r\n{extra}"
        "Content-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
    )
    return head_lines.encode("ascii") + (b"" if head else part)


@contextlib.contextmanager
def misbehaving_server(
    body: bytes,
    *,
    drip: str = "none",
    interval: float = 0.5,
    chunk: int = 1,
    declared_extra: int = 0,
    stall: bool = True,
) -> Iterator[str]:
    """A server of ``body`` at a URL on 127.0.0.1.

    ``drip``: ``"none"`` sends each answer at once; ``"all"`` sends every answer
    (status line and headers too) ``chunk`` bytes at a time, ``interval``
    seconds apart; ``"body"`` sends the headers at once and the body that way.
    ``declared_extra``: the Content-Length claims that many bytes more than are
    sent; then the server keeps the connection open without sending
    (``stall``) or closes it.
    """
    stop = threading.Event()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    deadline = time.monotonic() + LIFETIME

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(1.0)
            request = b""
            while b"\r\n\r\n" not in request and len(request) < 65536 and not stop.is_set():
                try:
                    got = conn.recv(4096)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not got:
                    return
                request += got
            text = request.decode("latin-1")
            rng = re.search(r"(?im)^range:\s*(\S+)\s*$", text)
            out = _response(body, rng.group(1) if rng else "", text.startswith("HEAD"), declared_extra)
            split = 0 if drip == "all" else out.index(b"\r\n\r\n") + 4 if drip == "body" else len(out)
            try:
                conn.sendall(out[:split])
                for i in range(split, len(out), chunk):
                    if stop.wait(interval) or time.monotonic() > deadline:
                        return
                    conn.sendall(out[i : i + chunk])
                if declared_extra and stall:
                    while not stop.wait(0.1) and time.monotonic() < deadline:
                        pass
            except OSError:  # the client gave up
                return

    def serve() -> None:
        threads = []
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            t = threading.Thread(target=answer, args=(conn,), daemon=True)
            t.start()
            threads.append(t)
        for t in threads:
            t.join(5)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/model.rlarchive"
    finally:
        stop.set()
        thread.join(10)
        listener.close()


class _RangeHandler(BaseHTTPRequestHandler):
    body = b""
    honour_range = True
    suffix_ranges = True
    sent = 0
    requests = 0
    ranges: list[tuple[int, int]] = []
    asked: list[str] = []
    etag = ""
    lock = threading.Lock()

    def log_message(self, *args: object) -> None:
        pass

    def _headers(self, status: int, length: int, extra: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes" if self.honour_range else "none")
        if self.etag:
            self.send_header("ETag", self.etag)
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()

    def do_HEAD(self) -> None:
        with self.lock:
            type(self).requests += 1
            type(self).asked.append("HEAD")
        self._headers(200, len(self.body), {})

    def do_GET(self) -> None:
        size = len(self.body)
        rng = _range(self.headers.get("Range", ""), size, self.suffix_ranges) if self.honour_range else None
        with self.lock:
            type(self).requests += 1
            type(self).asked.append(f"GET {self.headers.get('Range', '')}".strip())
        if rng and rng[0] >= size:
            self._headers(416, 0, {"Content-Range": f"bytes */{size}"})
            return
        start, end = rng or (0, size - 1)
        part = self.body[start : end + 1]
        self._headers(206 if rng else 200, len(part), {"Content-Range": f"bytes {start}-{end}/{size}"} if rng else {})
        with self.lock:
            type(self).ranges.append((start, end + 1))
        for at in range(0, len(part), 1 << 16):  # a client that stops reading is sent no more than it took
            with self.lock:  # counted before sending, so that the counts are complete when the client has the bytes
                type(self).sent += min(1 << 16, len(part) - at)
            try:
                self.wfile.write(part[at : at + (1 << 16)])
            except (BrokenPipeError, ConnectionResetError):
                return


@contextlib.contextmanager
def serve(body: bytes, *, suffix_ranges: bool = True) -> Iterator[tuple[str, type]]:
    """A well-behaved local HTTP server of ``body`` honouring one Range per GET (a suffix range ``bytes=-n``
    too, unless ``suffix_ranges`` is False: then it answers one with the whole file, as a server that does not
    take them): its URL, and the handler class, which counts the requests answered, ``requests``, and the body
    bytes sent, ``sent`` (a client that stops reading a body is counted up to 64 KiB past what it took, plus
    what the connection buffers), and lists each request's method and Range header, ``asked``
    (``"GET bytes=-10"``, ``"HEAD"``), and the ranges sent, ``ranges``, as ``(start, end)``. Setting its
    ``etag`` makes every later answer name that version of the file."""
    handler = type(
        "Handler",
        (_RangeHandler,),
        {"body": body, "sent": 0, "requests": 0, "ranges": [], "asked": [], "suffix_ranges": suffix_ranges},
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/model.rlarchive", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
