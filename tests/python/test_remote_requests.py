"""The requests a remote archive costs (spec §11.4), counted against a local server: opening sends no HEAD
request and starts with one suffix range request (``bytes=-n``), whose answer gives the end of the file and its
size; what the checks read next is fetched in planned rounds, so that opening an archive of one tensor member
and reading one 1 KiB tensor takes three requests: the end of the file, the start of the file (the
identification, the local headers, data.json and the safetensors header), and the tensor's bytes."""

from __future__ import annotations

import pathlib
from collections.abc import Iterable

import numpy as np
import pytest
from remote_servers import serve

import rlarchive
from rlarchive.errors import RlarchiveError
from rlarchive.limits import OPEN_READAHEAD_TOTAL_BYTES
from rlarchive.read_plan import prefetch_opening
from rlarchive.sources import TAIL_BYTES, Source, open_source

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp", reason="http(s) URLs need aiohttp (the http extra)")

ONE_KIB = np.arange(256, dtype=np.float32)  # the tensor read: 1 KiB


def _archive(tmp_path: pathlib.Path, tensors: dict[str, dict[str, np.ndarray]]) -> bytes:
    p = tmp_path / "a.rlarchive"
    rlarchive.save(p, {"gamma": 0.99}, tensors)
    return p.read_bytes()


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """An archive of about 300 KB: one tensor member whose 1 KiB tensor lies between two large ones, so that
    neither the end of the file nor the start of the member holds it."""
    rng = np.random.default_rng(3)
    policy = {
        "a.weight": rng.standard_normal((64, 600)).astype(np.float32),
        "b.bias": ONE_KIB,
        "c.weight": rng.standard_normal((64, 600)).astype(np.float32),
    }
    return _archive(tmp_path_factory.mktemp("large"), {"policy": policy})


def _open_and_read(url: str) -> tuple[int, int]:
    """Opens the archive at ``url`` and reads its 1 KiB tensor: (its file offset, its size)."""
    with rlarchive.open(url, spaces="neutral") as ar:
        assert ar.data["gamma"] == 0.99
        assert np.array_equal(ar.tensor("policy", "b.bias"), ONE_KIB)
        info = ar.tensor_info("policy")["b.bias"]
        return info.offset, info.nbytes


def test_open_and_one_small_tensor_take_three_requests(large):
    with serve(large) as (url, h):
        offset, nbytes = _open_and_read(url)
    assert h.asked[0] == f"GET bytes=-{TAIL_BYTES}", "a suffix range first, no HEAD request"
    assert not [a for a in h.asked if not a.startswith("GET ")], f"only GET requests: {h.asked}"
    assert h.requests == 3, f"the end of the file, its start, the tensor: {h.asked}"
    assert h.ranges[0] == (len(large) - TAIL_BYTES, len(large))
    assert h.ranges[2] == (offset, offset + nbytes), "the tensor's bytes, exactly"
    assert h.sent < TAIL_BYTES + 3 * 8192, f"{h.sent} bytes sent of {len(large)}"


def test_a_small_archive_takes_one_request(tmp_path):
    body = _archive(tmp_path, {"policy": {"b.bias": ONE_KIB}})
    assert len(body) < TAIL_BYTES
    with serve(body) as (url, h):
        _open_and_read(url)
    assert h.asked == [f"GET bytes=-{TAIL_BYTES}"] and h.sent == len(body)


def test_a_server_without_suffix_ranges_costs_one_request_more(large):
    """A server that answers a suffix range with the whole file: its answer's size is read from the headers,
    its body left unread, and the end of the file asked for by offset."""
    with serve(large, suffix_ranges=False) as (url, h):
        _open_and_read(url)
    assert (
        h.asked[0] == f"GET bytes=-{TAIL_BYTES}"
        and h.asked[1] == f"GET bytes={len(large) - TAIL_BYTES}-{len(large) - 1}"
    )
    assert not [a for a in h.asked if not a.startswith("GET ")], f"only GET requests: {h.asked}"
    assert h.requests == 4, h.asked


def test_opening_fetches_each_member_head_once(tmp_path):
    """Two tensor members far apart: the start of the file (data.json, the first member's header) and the
    second member's header are one request each, none read twice; the tensor is one more."""
    rng = np.random.default_rng(4)
    big = rng.standard_normal((64, 600)).astype(np.float32)
    body = _archive(
        tmp_path,
        {"policy": {"a.weight": big, "b.bias": ONE_KIB, "c.weight": big}, "optimizer.adam": {"m": big, "v": big}},
    )
    with serve(body) as (url, h):
        with rlarchive.open(url, spaces="neutral") as ar:
            opened = h.requests
            assert np.array_equal(ar.tensor("policy", "b.bias"), ONE_KIB)
    assert h.asked[0] == f"GET bytes=-{TAIL_BYTES}" and opened == 3, h.asked
    assert h.requests == 4, h.asked
    spans = sorted(h.ranges)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), f"no byte fetched twice: {spans}"


def test_a_file_replaced_between_requests_is_an_io_error(large):
    """Every answer names the file's version (its ETag): one that names another version than the first answer
    is IO_ERROR, not bytes of two files put together."""
    with serve(large) as (url, h):
        h.etag = '"v1"'
        with rlarchive.open(url, spaces="neutral") as ar:
            h.etag = '"v2"'
            with pytest.raises(RlarchiveError) as ei:
                ar.tensor("policy", "b.bias")
            assert ei.value.code == "IO_ERROR" and "changed" in ei.value.message
            h.etag = '"v1"'
            assert np.array_equal(ar.tensor("policy", "b.bias"), ONE_KIB)
        h.etag = ""
        with rlarchive.open(url, spaces="neutral") as ar:  # a server that names no version: nothing to compare
            assert np.array_equal(ar.tensor("policy", "b.bias"), ONE_KIB)
        with rlarchive.open(url, spaces="neutral") as ar:  # nor one whose file grows: its answers give another size
            h.body = large + b"\0" * 100
            with pytest.raises(RlarchiveError) as ei:
                ar.tensor("policy", "b.bias")
            assert ei.value.code == "IO_ERROR" and "changed size" in ei.value.message


class _Recording(Source):
    """A source that lists the ranges announced to it (``announced``: one list per call of ``prefetch``)
    and passes everything on to ``inner``."""

    def __init__(self, inner: Source) -> None:
        super().__init__(inner.size)
        self.inner = inner
        self.announced: list[list[tuple[int, int]]] = []

    def _read(self, offset: int, length: int) -> bytes:
        return self.inner.read(offset, length)

    def peek(self, offset: int, length: int) -> bytes | None:
        return self.inner.peek(offset, length)

    def prefetch(self, ranges: Iterable[tuple[int, int]]) -> None:
        self.announced.append(list(ranges))
        self.inner.prefetch(self.announced[-1])


def test_the_read_ahead_of_opening_is_bounded(tmp_path):
    """Past the directory, opening announces at most its budget of bytes, whatever the directory says (a
    member's extent, a JSON member's size, a safetensors header's length): the ranges that do not fit are left
    to the checks' own reads."""
    body = _archive(tmp_path, {f"g{i:02}": {"w": np.full(5000, i, np.float32)} for i in range(12)})
    assert len(body) > TAIL_BYTES + 150_000
    with serve(body) as (url, h):
        wanted = []
        for budget in (30_000, OPEN_READAHEAD_TOTAL_BYTES):
            with open_source(url) as inner:
                src = _Recording(inner)
                prefetch_opening(src, budget)
                later = [n for ranges in src.announced[1:] for _, n in ranges]
                assert later and sum(later) <= budget, src.announced
                wanted.append(sum(later))
        assert wanted[0] < 30_000 < wanted[1], "the small budget left ranges out"
        with rlarchive.open(url, spaces="neutral") as ar:
            assert ar.tensor("g07", "w")[0] == 7
