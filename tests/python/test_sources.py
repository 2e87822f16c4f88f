"""Byte sources (rlarchive.sources): every kind gives the same bytes, a remote
file is read by range, and bad input gets a stable code."""

from __future__ import annotations

import io
import mmap
import os
import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from remote_servers import serve

from rlarchive.errors import RlarchiveError
from rlarchive.sources import BytesSource, FileObjectSource, FsspecSource, PathSource, Source, open_source

DATA = random.Random(7).randbytes(100_003)


def ranges(size: int, n: int = 40, seed: int = 1) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    out = [(0, 0), (0, 1), (size - 1, 1), (0, size), (size, 0)]
    for _ in range(n):
        a = rng.randrange(size)
        out.append((a, rng.randrange(size - a + 1)))
    return out


@pytest.fixture
def data_file(tmp_path) -> str:
    p = tmp_path / "data.bin"
    p.write_bytes(DATA)
    return str(p)


def code_of(fn) -> str:
    with pytest.raises(RlarchiveError) as ei:
        fn()
    return ei.value.code


@pytest.fixture
def memory_url() -> Iterator[str]:
    fsspec = pytest.importorskip("fsspec")
    url = "memory://rlarchive-test-sources/data.bin"
    with fsspec.open(url, "wb") as f:
        f.write(DATA)
    yield url
    fsspec.filesystem("memory").rm(url)


def every_kind(path: str, memory_url: str) -> dict[str, Source]:
    kinds: dict[str, Source] = {
        "path, os.pread" if hasattr(os, "pread") else "path, default": PathSource(path),
        "path, seek and read": PathSource(path, use_pread=False),
        "file: URL": open_source("file://" + path),
        "bytes": open_source(DATA),
        "bytearray": open_source(bytearray(DATA)),
        "memoryview": open_source(memoryview(DATA)),
        "numpy array": open_source(np.frombuffer(DATA, np.uint8)),
        "BytesIO": open_source(io.BytesIO(DATA)),
        "open file": open_source(open(path, "rb")),  # noqa: SIM115 - closed below
        "fsspec memory://": open_source(memory_url),
    }
    return kinds


def test_every_kind_gives_the_same_bytes(data_file, memory_url):
    kinds = every_kind(data_file, memory_url)
    types = {name: type(s).__name__ for name, s in kinds.items()}
    assert types["file: URL"] == "PathSource" and types["fsspec memory://"] == "FsspecSource"
    assert types["BytesIO"] == types["open file"] == "FileObjectSource"
    for name, src in kinds.items():
        with src:
            assert src.size == len(DATA), name
            for off, n in ranges(len(DATA)):
                got = src.read(off, n)
                assert isinstance(got, bytes), name
                assert got == DATA[off : off + n], (name, off, n)
            assert src.bytes_read == sum(n for _, n in ranges(len(DATA))), name
    kinds["open file"]._f.close()


def test_only_a_path_can_be_memory_mapped(data_file, memory_url):
    for name, src in every_kind(data_file, memory_url).items():
        with src:
            if isinstance(src, PathSource):
                assert src.mappable
                with mmap.mmap(src.fileno(), 0, access=mmap.ACCESS_READ) as m:
                    assert m[:] == DATA
            else:
                assert not src.mappable, name
                assert code_of(src.fileno) == "IO_ERROR", name


def test_bytes_are_held_without_a_copy():
    buf = bytearray(DATA)
    src = open_source(buf)
    assert isinstance(src, BytesSource) and src.in_memory
    view = src.view(10, 5)
    buf[10] ^= 0xFF
    assert view[0] == buf[10], "the view shares the caller's memory"
    arr = np.zeros((4, 3), np.float64)
    src2 = open_source(arr)
    assert src2.size == arr.nbytes
    assert np.shares_memory(np.frombuffer(src2.view(), np.uint8), arr)
    assert code_of(lambda: src2.view(90, 10)) == "ZIP_TRUNCATED"
    assert code_of(lambda: BytesSource(np.zeros((4, 4))[:, ::2])) == "IO_ERROR", "a non-contiguous array is refused"


def test_portable_reads_where_the_platform_has_no_pread(data_file, monkeypatch):
    monkeypatch.delattr(os, "pread", raising=False)
    src = PathSource(data_file)
    assert not src.use_pread
    with src:
        with ThreadPoolExecutor(4) as ex:  # reads from several threads do not disturb each other's position
            work = ranges(len(DATA), 200, seed=3)
            results = list(ex.map(lambda r: src.read(*r), work))
        assert results == [DATA[a : a + n] for a, n in work]


@pytest.mark.parametrize("use_pread", [True, False])
def test_a_file_that_shrinks_after_opening(data_file, use_pread):
    if use_pread and not hasattr(os, "pread"):
        pytest.skip("os.pread is not available on this platform")
    src = PathSource(data_file, use_pread=use_pread)
    with open(data_file, "r+b") as f:
        f.truncate(1000)
    with src:
        assert src.read(0, 1000) == DATA[:1000]
        assert code_of(lambda: src.read(500, 1000)) == "IO_ERROR"


def test_bad_reads_give_stable_codes(data_file, memory_url):
    for name, src in every_kind(data_file, memory_url).items():
        with src:
            assert code_of(lambda: src.read(-1, 4)) == "ZIP_TRUNCATED", name
            assert code_of(lambda: src.read(0, -1)) == "ZIP_TRUNCATED", name
            assert code_of(lambda: src.read(len(DATA) - 3, 4)) == "ZIP_TRUNCATED", name
            assert code_of(lambda: src.read(len(DATA) + 1, 0)) == "ZIP_TRUNCATED", name
        assert code_of(lambda: src.read(0, 1)) == "IO_ERROR", f"{name}: read after close"


def test_bad_inputs_give_stable_codes(tmp_path, monkeypatch):
    r, w = os.pipe()
    try:
        with os.fdopen(r, "rb") as pipe:
            assert code_of(lambda: open_source(pipe)) == "IO_ERROR", "a non-seekable stream"

        class ReadOnly:
            def read(self, n: int = -1) -> bytes:
                return b""

        assert code_of(lambda: open_source(ReadOnly())) == "IO_ERROR", "a stream without seek()"
    finally:
        os.close(w)
    text = tmp_path / "t.txt"
    text.write_text("abc")
    with open(text, encoding="utf-8") as f:
        assert code_of(lambda: FileObjectSource(f)) == "IO_ERROR", "a text-mode file"
    for bad in [
        "",
        "nul\x00byte",
        str(tmp_path / "missing.rlarchive"),
        str(tmp_path),
        "nosuchscheme://host/a.rlarchive",
        "file://otherhost/x",
    ]:
        assert code_of(lambda: open_source(bad)) == "IO_ERROR", repr(bad)
    for bad in [42, None, 1.5, object()]:
        assert code_of(lambda: open_source(bad)) == "IO_ERROR", repr(bad)


def test_a_url_without_fsspec_installed(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(RlarchiveError) as ei:
        open_source("https://example.invalid/a.rlarchive")
    assert ei.value.code == "IO_ERROR" and "rlarchive[fsspec]" in ei.value.message


def test_fsspec_memory_file_system(memory_url):
    src = open_source(memory_url)
    assert isinstance(src, FsspecSource) and not src.in_memory
    with src:
        assert src.read(99_000, 1003) == DATA[99_000:]
    assert code_of(lambda: open_source("memory://rlarchive-test-sources/missing.bin")) == "IO_ERROR"


@pytest.fixture
def http_server() -> Iterator[tuple[str, type]]:
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp", reason="http(s) URLs need aiohttp (the http extra)")
    with serve(random.Random(20).randbytes(20 * 1024 * 1024)) as s:
        yield s


def test_http_reads_only_the_range_asked_for(http_server):
    url, handler = http_server
    with open_source(url) as src:
        assert isinstance(src, FsspecSource)
        assert src.size == len(handler.body) == 20 * 1024 * 1024
        assert src.read(12_345_678, 4096) == handler.body[12_345_678 : 12_345_678 + 4096]
        assert src.read(len(handler.body) - 10, 10) == handler.body[-10:]
    assert 0 < handler.sent < 1_000_000, f"{handler.sent} bytes transferred for two small reads of a 20 MB file"


def test_http_server_that_ignores_range(http_server):
    """A server that answers every range with the whole file: a large file is IO_ERROR when it is opened (the
    first answer is left unread past its headers), a file no larger than the first request asked for is read
    from that answer."""
    url, handler = http_server
    handler.honour_range = False
    ei = pytest.raises(RlarchiveError, open_source, url)
    assert ei.value.code == "IO_ERROR" and "Range" in ei.value.message
    assert handler.requests == 2, "the suffix range, then the range of the end of the file"
    with serve(DATA[:5000]) as (small, h):
        h.honour_range = False
        with open_source(small) as src:
            assert src.read(1234, 100) == DATA[1234:1334] and src.read(0, 5000) == DATA[:5000]
        assert (h.requests, h.sent) == (1, 5000)


def test_a_pathlike_giving_bytes_is_a_path_not_content(data_file):
    class BytesPath:
        def __fspath__(self) -> bytes:
            return os.fsencode(data_file)

    with open_source(BytesPath()) as src:
        assert isinstance(src, PathSource) and src.size == len(DATA)
