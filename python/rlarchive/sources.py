"""Random-access byte sources: what a reader reads an archive from.

A :class:`Source` has a ``size`` and ``read(offset, length)``, which returns
exactly ``length`` bytes or raises :class:`~rlarchive.errors.RlarchiveError`:
``ZIP_TRUNCATED`` for a range outside ``0..size`` (offsets come from the file,
so a range beyond its end means the file is cut short), ``IO_ERROR`` when the
bytes cannot be had. Implementations:

- :class:`PathSource`: a local file, read with ``os.pread`` where the platform
  has it and with seek and read under a lock elsewhere; it can be
  memory-mapped (``mappable``, ``fileno()``).
- :class:`BytesSource`: any bytes-like object, held as a ``memoryview``
  without a copy (``in_memory``, ``view()``).
- :class:`FileObjectSource`: a seekable binary file object.
- :class:`FsspecSource`: a URL (``http(s)://``, ``s3://``, ``hf://``,
  ``memory://``...) through fsspec, with range reads: it fetches the end of
  the file when opened, and ahead of its reads the ranges a reader announces
  (:meth:`Source.prefetch`); needs the ``fsspec`` extra (``http`` for
  http(s) URLs, ``hf`` for the Hugging Face Hub's ``hf://``).

:func:`open_source` picks one for what the caller gives.

Deadlines (spec §11.4). Every request for an http(s) URL fails with
``IO_TIMEOUT`` when the connection or the next byte takes more than
``timeout`` seconds (default :data:`DEFAULT_TIMEOUT`), or when the whole
request takes more than ``timeout + n / min_rate`` seconds for ``n`` bytes
asked for (``min_rate`` in bytes per second, default :data:`DEFAULT_MIN_RATE`):
a server that trickles bytes fails within a bound, while a large read from an
honest server gets time in proportion to its size. A response that ends
before the bytes it announced is ``IO_ERROR`` at once.
"""

from __future__ import annotations

import io
import operator
import os
import re
import stat
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from typing import Any, BinaryIO, Union

from .errors import RlarchiveError
from .http_range import Answer, get_range
from .range_cache import RangeCache
from .range_plan import read_ahead_plan
from .zipprofile import EOCD_SEARCH, ZIP64_EOCD_RECORD, ZIP64_LOCATOR

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

#: Seconds a request for an http(s) URL may wait for its connection or for its next byte (spec §11.4).
DEFAULT_TIMEOUT = 30.0
#: Bytes per second: a request for ``n`` bytes of an http(s) URL has ``timeout + n / DEFAULT_MIN_RATE`` seconds in all (spec §11.4).
DEFAULT_MIN_RATE = 65536.0

#: Bytes a remote source fetches from the end of the file when it is opened: the end records, with the
#: longest comment they may have and the ZIP64 records before them (spec §2.1, §2.6), and with them the
#: central directory and the last members of most archives (spec §12 puts ``manifest.json`` last).
TAIL_BYTES = EOCD_SEARCH + ZIP64_LOCATOR.size + ZIP64_EOCD_RECORD.size

#: what :func:`open_source` accepts (any other object with the buffer protocol is taken as bytes)
SourceInput = Union["Source", str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO]


def _io_error(message: str, offset: int | None = None) -> RlarchiveError:
    return RlarchiveError("IO_ERROR", message, offset=offset)


def _reason(e: BaseException) -> str:
    text = getattr(e, "strerror", None) or str(e)
    return text or type(e).__name__


def _timed_out(e: BaseException) -> bool:
    """Whether ``e``, or an exception it was raised from, is a timeout."""
    seen = 0
    cur: BaseException | None = e
    while cur is not None and seen < 16:
        if isinstance(cur, TimeoutError):
            return True
        cur, seen = cur.__cause__ or cur.__context__, seen + 1
    return False


def _deadlines(timeout: float | None, min_rate: float | None) -> tuple[float, float]:
    """``(timeout, min_rate)`` with the defaults filled in, checked (positive and finite)."""
    t = DEFAULT_TIMEOUT if timeout is None else timeout
    r = DEFAULT_MIN_RATE if min_rate is None else min_rate
    for name, v in (("timeout", t), ("min_rate", r)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < float("inf"):
            raise ValueError(
                f"{name} must be a positive, finite number of {'seconds' if name == 'timeout' else 'bytes per second'}, not {v!r}"
            )
    return float(t), float(r)


class Source:
    """Bytes read by position. ``size`` is fixed when the source is opened.

    Attributes:
        size: the number of bytes.
        mappable: whether :meth:`fileno` gives a descriptor to memory-map.
        in_memory: whether the bytes are already in memory (:meth:`view` is zero-copy).
        bytes_read: bytes returned by :meth:`read` so far.
        reads: calls of :meth:`read` that returned bytes.
        log: None, or a list to which each read appends ``(offset, length)``.
    """

    mappable: bool = False
    in_memory: bool = False

    def __init__(self, size: int) -> None:
        self.size = size
        self.bytes_read = 0
        self.reads = 0
        self.log: list[Any] | None = None
        self._closed = False

    def read(self, offset: int, length: int) -> bytes:
        """Exactly ``length`` bytes at ``offset``.

        Raises:
            RlarchiveError: ``ZIP_TRUNCATED`` when the range is not within
                ``0..size``; ``IO_ERROR`` when the source is closed or fails.
        """
        offset, length = operator.index(offset), operator.index(length)  # ints, NumPy integers; TypeError otherwise
        if offset < 0 or length < 0 or offset + length > self.size:
            raise RlarchiveError(
                "ZIP_TRUNCATED",
                f"a read of {length} bytes at {offset} goes beyond the {self.size} bytes of the file",
                offset=offset,
            )
        if self._closed:
            raise _io_error("the source is closed", offset)
        if length == 0:
            return b""
        data = self._read(offset, length)
        if len(data) != length:
            raise _io_error(f"got {len(data)} of {length} bytes: the file changed while being read", offset)
        self.reads += 1
        self.bytes_read += length
        if self.log is not None:
            self.log.append((offset, length))
        return data

    def _read(self, offset: int, length: int) -> bytes:
        raise NotImplementedError

    def peek(self, offset: int, length: int) -> bytes | None:
        """The ``length`` bytes at ``offset`` when the source holds them without reading (a remote
        source's fetched ranges), else None; never a request, never counted as a read."""
        return None

    def prefetch(self, ranges: Iterable[tuple[int, int]]) -> None:
        """Says that the ranges ``(offset, length)`` are about to be read: a source that reads by request
        fetches them ahead, in as few requests as its plan allows, and keeps them; others do nothing."""

    def fileno(self) -> int:
        """The file descriptor to memory-map (only when ``mappable``)."""
        raise _io_error(f"a {type(self).__name__} cannot be memory-mapped")

    def close(self) -> None:
        """Releases what the source holds; later reads raise ``IO_ERROR``."""
        self._closed = True

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_exactly(read: Callable[[int], bytes], length: int, offset: int) -> bytes:
    """Calls ``read(n)`` until ``length`` bytes have come (a short read means the file shrank)."""
    first = read(length)
    if not isinstance(first, bytes):
        raise _io_error("the file object does not return bytes (opened in text mode?)", offset)
    if len(first) == length:
        return first
    chunks, got = [first], len(first)
    while got < length:
        b = read(length - got)
        if not b:
            raise _io_error("the file ended before the expected size: it changed while being read", offset + got)
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


class PathSource(Source):
    """A local file. ``use_pread``: positional reads with ``os.pread`` (default:
    where the platform has it), otherwise seek and read under a lock."""

    mappable = True

    def __init__(self, path: str | os.PathLike[str], *, use_pread: bool | None = None) -> None:
        self.path = os.fspath(path)
        try:
            self._file = open(self.path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        except (OSError, ValueError) as e:
            raise _io_error(f"cannot open {self.path}: {_reason(e)}") from None
        try:
            st = os.fstat(self._file.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise _io_error(f"cannot open {self.path}: not a regular file")
        except OSError as e:
            self._file.close()
            raise _io_error(f"cannot open {self.path}: {_reason(e)}") from None
        except RlarchiveError:
            self._file.close()
            raise
        super().__init__(st.st_size)
        self.use_pread = hasattr(os, "pread") if use_pread is None else bool(use_pread)
        if self.use_pread and not hasattr(os, "pread"):
            self._file.close()
            raise ValueError("os.pread is not available on this platform")
        self._lock = threading.Lock()

    def _read(self, offset: int, length: int) -> bytes:
        try:
            if self.use_pread:
                fd = self._file.fileno()
                got = 0

                def pread(n: int) -> bytes:
                    nonlocal got
                    b = os.pread(fd, n, offset + got)
                    got += len(b)
                    return b

                return _read_exactly(pread, length, offset)
            with self._lock:
                self._file.seek(offset)
                return _read_exactly(self._file.read, length, offset)
        except OSError as e:
            raise _io_error(f"cannot read {self.path}: {_reason(e)}", offset) from None

    def fileno(self) -> int:
        if self._closed:
            raise _io_error("the source is closed")
        return self._file.fileno()

    def close(self) -> None:
        super().close()
        self._file.close()


class BytesSource(Source):
    """Bytes in memory: any object with the buffer protocol (``bytes``,
    ``bytearray``, ``memoryview``, a NumPy array, an ``mmap``), held as a
    ``memoryview`` without a copy."""

    in_memory = True

    def __init__(self, data: Any) -> None:
        try:
            view = memoryview(data)
        except TypeError as e:
            raise _io_error(f"not a bytes-like object: {_reason(e)}") from None
        if not view.c_contiguous:
            raise _io_error("the bytes-like object is not contiguous in memory")
        self._view: memoryview | None = view.cast("B") if view.ndim != 1 or view.format != "B" else view
        super().__init__(self._view.nbytes)

    def _read(self, offset: int, length: int) -> bytes:
        if self._view is None:  # Source.read refuses a closed source first; the view goes when it closes
            raise _io_error("the source is closed", offset)
        return bytes(self._view[offset : offset + length])

    def view(self, offset: int = 0, length: int | None = None) -> memoryview:
        """A zero-copy ``memoryview`` of ``length`` bytes at ``offset`` (to the end by default)."""
        if length is None:
            length = self.size - offset
        if offset < 0 or length < 0 or offset + length > self.size:
            raise RlarchiveError(
                "ZIP_TRUNCATED",
                f"a view of {length} bytes at {offset} goes beyond the {self.size} bytes",
                offset=offset,
            )
        if self._view is None:
            raise _io_error("the source is closed", offset)
        return self._view[offset : offset + length]

    def close(self) -> None:
        super().close()
        self._view = None


class FileObjectSource(Source):
    """A seekable binary file object (``io.BytesIO``, an open file...). Reads
    move its position; the caller keeps it open and closes it."""

    def __init__(self, f: BinaryIO) -> None:
        if not callable(getattr(f, "read", None)) or not callable(getattr(f, "seek", None)):
            raise _io_error("not a file object: it needs read() and seek()")
        try:
            seekable = f.seekable() if callable(getattr(f, "seekable", None)) else True
            if not seekable:
                raise _io_error("the stream is not seekable: give a path, bytes or a seekable file")
            size = f.seek(0, io.SEEK_END)
            if isinstance(f.read(0), str):
                raise _io_error("the file object is in text mode: open it in binary mode ('rb')")
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation) as e:
            raise _io_error(f"the stream is not seekable: {_reason(e)}") from None
        if not isinstance(size, int) or size < 0:
            raise _io_error("the file object does not report its size through seek()")
        super().__init__(size)
        self._f = f
        self._lock = threading.Lock()

    def _read(self, offset: int, length: int) -> bytes:
        try:
            with self._lock:
                self._f.seek(offset)
                return _read_exactly(self._f.read, length, offset)
        except (OSError, ValueError) as e:
            raise _io_error(f"cannot read the file object: {_reason(e)}", offset) from None


#: The optional extra that provides the file system of a URL scheme (the others: ``fsspec`` and the file system's own package).
_EXTRAS = {"http": "http", "https": "http", "hf": "hf"}


class FsspecSource(Source):
    """A URL read through fsspec (``http(s)://``, ``s3://``, ``gs://``,
    ``hf://`` (the Hugging Face Hub, through ``huggingface_hub``),
    ``memory://``...). ``storage_options`` go to the file system (credentials, headers).

    Opening fetches the last :data:`TAIL_BYTES` of the file (the whole file
    when it is no larger): for an http(s) URL in one request, a suffix range
    whose answer also gives the file's size (no HEAD request; a server that
    does not take suffix ranges costs one request more). A reader then
    announces the ranges it is about to read (:meth:`prefetch`), which are
    fetched by the plan of :func:`rlarchive.range_plan.read_ahead_plan` and
    kept; every other read is one request of exactly the bytes asked for.
    An answer whose ``ETag`` differs from an earlier one's (the file was
    replaced between two requests) is ``IO_ERROR``, as is a change of size.
    ``requests`` and ``bytes_fetched`` count the traffic.

    For an http(s) URL, ``timeout`` (seconds) and ``min_rate`` (bytes per
    second) bound every request as the module's description says (defaults
    :data:`DEFAULT_TIMEOUT`, :data:`DEFAULT_MIN_RATE`); other file systems
    take their own time-outs through ``storage_options``."""

    def __init__(
        self,
        url: str,
        storage_options: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        min_rate: float | None = None,
    ) -> None:
        self.timeout, self.min_rate = _deadlines(timeout, min_rate)
        super().__init__(0)
        self.url = url
        self.requests = 0
        self.bytes_fetched = 0
        self._etag: str | None = None  # the version of the file the first answer that names one names
        self._lock = threading.Lock()
        self._http = url.split(":", 1)[0].lower() in ("http", "https")
        try:
            import fsspec
            import fsspec.core
        except ImportError:
            raise _io_error(
                f"cannot open {url}: reading URLs needs fsspec (pip install 'rlarchive[fsspec]', or 'rlarchive[http]' for http(s))"
            ) from None
        try:
            self._fs, self._path = fsspec.core.url_to_fs(url, **dict(storage_options or {}))
            if self._http:
                tail = self._open_http()
            else:
                tail = self._open_file()
        except Exception as e:  # noqa: BLE001 - file systems raise their own types; all become IO_ERROR
            raise self._failure(e, "cannot open") from None
        self._cache = RangeCache(self.size)
        self._cache.add(*tail)

    def _open_file(self) -> tuple[int, bytes]:
        """The size from the file system's ``info``, the file opened, and its last bytes."""
        info = self._fs.info(self._path)
        if info.get("type", "file") != "file":
            raise _io_error(f"cannot open {self.url}: not a file")
        size = info.get("size")
        if size is None:
            size = self._fs.size(self._path)
        if not isinstance(size, int) or size < 0:
            raise _io_error(f"cannot open {self.url}: its size is unknown")
        self.size = size
        self._f = self._fs.open(self._path, "rb", block_size=1 << 20, cache_type="none")
        start = max(0, size - TAIL_BYTES)
        return start, self._fetch(start, size - start)

    def _open_http(self) -> tuple[int, bytes]:
        """The size and the last bytes of the file, from a suffix range request (spec §11.4)."""
        answer = self._get(f"bytes=-{TAIL_BYTES}", TAIL_BYTES)
        if answer.total is None:
            raise _io_error(f"cannot open {self.url}: the server tells neither a range nor the file's size")
        self.size = answer.total
        if answer.body is not None and answer.start + len(answer.body) == answer.total:
            return answer.start, answer.body  # the end of the file, or all of it
        if answer.status == 206:
            raise _io_error(f"cannot open {self.url}: the server sent a range other than the end of the file")
        # 416 (a server that takes no suffix range, or an empty file) or a whole file larger than asked for
        start = max(0, self.size - TAIL_BYTES)
        return start, self._fetch(start, self.size - start)

    def _client_timeout(self, length: int) -> Any:
        """The aiohttp time-outs of a request for ``length`` bytes (spec §11.4)."""
        import aiohttp

        return aiohttp.ClientTimeout(
            total=self.timeout + length / self.min_rate, sock_connect=self.timeout, sock_read=self.timeout
        )

    def _get(self, range_value: str, asked: int) -> Answer:
        """One request of an http(s) URL, through the aiohttp session of fsspec's file system."""
        import fsspec.asyn

        fs = self._fs

        async def request() -> Answer:
            session = await fs.set_session()
            options = dict(fs.kwargs)
            headers = dict(options.pop("headers", None) or {})
            options.pop("timeout", None)
            url = fs.encode_url(self._path) if hasattr(fs, "encode_url") else self._path
            return await get_range(session, url, range_value, asked, self._client_timeout(asked), headers, options)

        self.requests += 1
        answer: Answer = fsspec.asyn.sync(fs.loop, request)
        self.bytes_fetched += len(answer.body or b"")
        if answer.etag is not None and self._etag is not None and answer.etag != self._etag:
            raise _io_error(f"{self.url} changed while being read (an answer names another ETag)")
        self._etag = self._etag or answer.etag
        return answer

    def _fetch(self, offset: int, length: int) -> bytes:
        """``length`` bytes at ``offset`` in one request."""
        if not self._http:
            self.requests += 1
            self._f.seek(offset)
            data = _read_exactly(self._f.read, length, offset)
            self.bytes_fetched += len(data)
            return data
        answer = self._get(f"bytes={offset}-{offset + length - 1}", length)
        if answer.status == 206 and answer.body is not None:
            if answer.total != self.size:
                raise _io_error(f"{self.url} changed size while being read", offset)
            if answer.start == offset and len(answer.body) == length:
                return answer.body
        elif answer.status == 200 and answer.body is not None and len(answer.body) == self.size:
            return answer.body[offset : offset + length]  # a small file from a server that ignores Range
        elif answer.status == 200:
            raise _io_error(f"{self.url}: the server does not honour Range requests (it sends the whole file)", offset)
        raise _io_error(f"{self.url}: the server sent a range other than the one asked for", offset)

    def _failure(self, e: BaseException, what: str, length: int = 0, offset: int | None = None) -> RlarchiveError:
        """The error for ``e``, raised by a file system or a request (``IO_TIMEOUT`` without a location, as
        spec §11.2 says; ``IO_ERROR`` otherwise)."""
        if isinstance(e, RlarchiveError):
            return e
        if _timed_out(e):
            return RlarchiveError(
                "IO_TIMEOUT",
                f"{what} {self.url}: no byte for {self.timeout:g} s, or the request took more than "
                f"{self.timeout + length / self.min_rate:g} s (timeout {self.timeout:g} s, minimum rate {self.min_rate:g} bytes/s)",
            )
        if isinstance(e, ImportError):
            detail = f"the package {e.name} is missing" if getattr(e, "name", None) else _reason(e)
            extra = _EXTRAS.get(self.url.split(":", 1)[0].lower())
            hint = f"pip install 'rlarchive[{extra}]'" if extra else "for http(s) URLs: pip install 'rlarchive[http]'"
            return _io_error(f"{what} {self.url}: {detail} ({hint})")
        return _io_error(f"{what} {self.url}: {_reason(e)}", offset)

    def peek(self, offset: int, length: int) -> bytes | None:
        with self._lock:
            return self._cache.get(offset, length)

    def prefetch(self, ranges: Iterable[tuple[int, int]]) -> None:
        with self._lock:
            for offset, length in read_ahead_plan(self._cache.missing(ranges)):
                try:
                    self._cache.add(offset, self._fetch(offset, length))
                except Exception as e:  # noqa: BLE001 - as in __init__
                    raise self._failure(e, "cannot read", length, offset) from None

    def _read(self, offset: int, length: int) -> bytes:
        with self._lock:
            held = self._cache.get(offset, length)
            if held is not None:
                return held
            try:
                return self._fetch(offset, length)
            except Exception as e:  # noqa: BLE001 - as in __init__
                raise self._failure(e, "cannot read", length, offset) from None

    def close(self) -> None:
        super().close()
        self._cache = RangeCache(0)
        try:
            if not self._http:
                self._f.close()
        except Exception:  # noqa: BLE001 - nothing left to release
            pass


def _file_url_path(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise _io_error(f"cannot open {url}: a file: URL on another host")
    return urllib.request.url2pathname(parts.path)


def open_source(
    obj: SourceInput,
    *,
    storage_options: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    min_rate: float | None = None,
) -> Source:
    """A :class:`Source` for ``obj``: a Source (returned as it is); a path
    (``str`` or ``os.PathLike``) or ``file://`` URL; another URL
    (``scheme://...``, through fsspec, with ``storage_options``); a bytes-like
    object; or a seekable binary file object.

    ``timeout`` (seconds, default :data:`DEFAULT_TIMEOUT`) and ``min_rate``
    (bytes per second, default :data:`DEFAULT_MIN_RATE`) bound each request
    for an http(s) URL (spec §11.4).

    Raises:
        RlarchiveError: ``IO_ERROR`` when ``obj`` is none of these or cannot be
            opened; ``IO_TIMEOUT`` when an http(s) server does not answer in time.
        ValueError: ``timeout`` or ``min_rate`` is not a positive, finite number.
    """
    _deadlines(timeout, min_rate)
    if isinstance(obj, Source):
        return obj
    if isinstance(obj, os.PathLike):
        obj = os.fsdecode(obj)  # a path, even one given as bytes by its PathLike (bytes themselves are content)
    if isinstance(obj, str):
        if obj == "" or "\x00" in obj:
            raise _io_error(f"{obj!r} is neither a file path nor a URL")
        if _URL.match(obj):
            if obj[:7].lower() == "file://":
                return PathSource(_file_url_path(obj))
            return FsspecSource(obj, storage_options, timeout=timeout, min_rate=min_rate)
        return PathSource(obj)
    try:
        memoryview(obj)  # type: ignore[arg-type]
    except TypeError:
        pass
    else:
        return BytesSource(obj)
    if callable(getattr(obj, "read", None)):
        return FileObjectSource(obj)  # type: ignore[arg-type]
    raise _io_error(f"unsupported source {type(obj).__name__}: give a path, a URL, bytes or a seekable binary file")
