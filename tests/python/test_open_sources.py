"""An archive opens from a path, bytes, a file object, a URL or a Source, and reads the same everywhere."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest

import rlarchive
from rlarchive.errors import RlarchiveError
from rlarchive.sources import BytesSource, PathSource

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.join(HERE, "..", "..", "test-vectors")


@pytest.fixture
def archive(tmp_path):
    p = tmp_path / "a.rlarchive"
    rlarchive.save(
        p,
        {"gamma": 0.99, "arr": np.arange(3000, dtype=np.float32)},
        {"policy": {"w": np.arange(12, dtype=np.float64).reshape(3, 4)}},
    )
    return p


def _forms(p):
    raw = p.read_bytes()
    yield "path", str(p)
    yield "pathlike", p
    yield "bytes", raw
    yield "bytearray", bytearray(raw)
    yield "memoryview", memoryview(raw)
    yield "file object", io.BytesIO(raw)
    yield "open file", open(p, "rb")
    yield "source", PathSource(p)
    yield "bytes source", BytesSource(raw)


def test_every_form_reads_the_same(archive):
    with rlarchive.open(archive, spaces="neutral") as ar:
        want_dump = ar.dump()
        want_w = np.array(ar.tensor("policy", "w"))
    for (label, src), (_, again) in zip(_forms(archive), _forms(archive)):
        with rlarchive.open(src, spaces="neutral") as ar:
            assert ar.dump() == want_dump, label
            assert np.array_equal(ar.tensor("policy", "w"), want_w), label
            ar.verify()
        report = rlarchive.validate(again)
        assert report["valid"] and report["summary"]["errors"] == 0, label
        for x in (src, again):
            if hasattr(x, "close"):
                x.close()


def test_a_url_reads_through_fsspec(archive):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    fs.pipe("/a.rlarchive", archive.read_bytes())
    with (
        rlarchive.open("memory://a.rlarchive", spaces="neutral") as ar,
        rlarchive.open(archive, spaces="neutral") as local,
    ):
        assert ar.dump() == local.dump()


def test_invalid_bytes_fail_with_the_same_code_as_the_file():
    folder = os.path.join(VECTORS, "invalid")
    names = sorted(n for n in os.listdir(folder) if n.endswith(".rlarchive"))[:40]
    assert names
    for n in names:
        path = os.path.join(folder, n)
        codes = []
        for src in (path, open(path, "rb").read()):
            try:
                with rlarchive.open(src, spaces="neutral") as ar:
                    ar.dump()
                codes.append(None)
            except RlarchiveError as e:
                codes.append(e.code)
        assert codes[0] == codes[1], n


def test_a_closed_archive_reads_nothing(archive):
    ar = rlarchive.open(archive.read_bytes(), spaces="neutral")
    ar.close()
    with pytest.raises(RlarchiveError) as e:
        ar.source.read(0, 1)
    assert e.value.code == "IO_ERROR"


def test_an_archive_over_http_reads_by_range(tmp_path):
    """Opening a 20 MB archive over HTTP and reading one small tensor transfers less than 2 MB."""
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp", reason="http(s) URLs need aiohttp (the http extra)")
    from test_sources import serve

    rng = np.random.default_rng(0)
    big = {f"layer{i}": rng.standard_normal((640, 1024)).astype(np.float32) for i in range(8)}  # 20 MiB
    small = np.arange(16, dtype=np.float32)
    p = tmp_path / "big.rlarchive"
    rlarchive.save(p, {"gamma": 0.99}, {"policy": {**big, "small": small}})
    body = p.read_bytes()
    assert len(body) > 20_000_000
    with serve(body) as (url, handler):
        with rlarchive.open(url, spaces="neutral") as ar:
            assert ar.data["gamma"] == 0.99
            assert np.array_equal(ar.tensor("policy", "small"), small)
            assert np.array_equal(ar.tensor("policy", "layer3")[:2], big["layer3"][:2])
        assert handler.sent < 5_000_000, f"{handler.sent} bytes sent"
        handler.sent = 0
        with rlarchive.open(url, spaces="neutral") as ar:
            ar.tensor("policy", "small")
        assert handler.sent < 2_000_000, f"{handler.sent} bytes sent to open and read one small tensor"
        handler.sent = 0
        report = rlarchive.validate(url)  # validating reads (and checks) every byte
        assert report["valid"] and handler.sent >= len(body)
