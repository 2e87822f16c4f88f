"""The tensor API in safetensors' conventions: framework names, a torch device, and partial reads
(``Archive.get_slice``) that equal NumPy's slicing and read only the bytes the selection needs."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from remote_servers import serve

import rlarchive
from rlarchive.errors import RlarchiveError
from rlarchive.limits import SLICE_MAX_REQUESTS, SLICE_OVERREAD_BYTES, SLICE_REQUEST_BYTES
from rlarchive.sources import FileObjectSource
from rlarchive.tensor_slice import TensorSlice

SHAPES = {"a3": (5, 7, 6), "v": (11,), "s": (), "wide": (3, 1, 40), "e": (4, 0, 3)}


@pytest.fixture(scope="module")
def archive_bytes(tmp_path_factory):
    rng = np.random.default_rng(0)
    group = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in SHAPES.items()}
    group["i64"] = np.arange(2 * 3 * 4, dtype=np.int64).reshape(2, 3, 4)
    group["big"] = rng.standard_normal((256, 64)).astype(np.float32)
    path = tmp_path_factory.mktemp("slice") / "t.rlarchive"
    rlarchive.save(str(path), {}, tensors={"g": group})
    return path.read_bytes(), group


def selection_runs(whole: np.ndarray, key) -> list[tuple[int, int]]:
    """The runs of consecutive bytes ``whole[key]`` selects, as ``(start, end)`` byte offsets in the tensor, in order."""
    flat = np.unique(np.arange(whole.size).reshape(whole.shape)[key]).astype(np.int64)
    if flat.size == 0:
        return []
    pieces = np.split(flat, np.flatnonzero(np.diff(flat) != 1) + 1)
    return [(int(r[0]) * whole.itemsize, int(r[-1] + 1) * whole.itemsize) for r in pieces]


def bounds(runs: list[tuple[int, int]]) -> tuple[int, int]:
    """What spec §11.4 allows a partial read of ``runs``: (the most requests, the most bytes read outside the runs).
    Requests: R = max(SLICE_MAX_REQUESTS, ceil(S / SLICE_REQUEST_BYTES)), or more when more gaps than that are
    larger than SLICE_REQUEST_BYTES (never read across). Bytes: the least a plan of that many requests must
    read (its smallest gaps), plus max(S, SLICE_OVERREAD_BYTES)."""
    selected = sum(b - a for a, b in runs)
    requests = max(SLICE_MAX_REQUESTS, -(-selected // SLICE_REQUEST_BYTES))
    gaps = sorted(b[0] - a[1] for a, b in zip(runs, runs[1:]))
    small = [g for g in gaps if g <= SLICE_REQUEST_BYTES]
    requests = max(requests, len(gaps) - len(small) + 1)
    least = sum(small[: max(0, len(runs) - requests)])
    return requests, least + max(selected, SLICE_OVERREAD_BYTES)


def _remote(data: bytes):
    """An archive on a counting source that is not mapped: every byte of a tensor is a read."""
    src = FileObjectSource(io.BytesIO(data))
    src.log = []
    return rlarchive.open(src), src


@st.composite
def keys(draw, shape):
    """An index of NumPy's basic kinds: integers (negative too), slices with any step, and at most one '...'."""
    parts: list = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "slice", "full"] if n else ["slice", "full"]))
        if kind == "int":
            parts.append(draw(st.integers(-n, n - 1)))
        elif kind == "full":
            parts.append(slice(None))
        else:
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = draw(st.one_of(st.none(), st.integers(-4, 4).filter(lambda s: s != 0)))
            parts.append(slice(draw(bound), draw(bound), step))
    cut = draw(st.integers(0, len(parts)))
    if draw(st.booleans()) and parts:  # replace a run of dimensions by '...'
        start = draw(st.integers(0, len(parts)))
        parts[start : cut if cut >= start else start] = [Ellipsis]
    elif draw(st.booleans()):
        parts = parts[:cut]  # trailing dimensions left out
    return tuple(parts) if len(parts) != 1 or draw(st.booleans()) else parts[0]


@pytest.mark.parametrize("name", ["a3", "v", "wide", "e", "i64"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_slice_equals_numpys_slicing_of_the_whole_tensor(archive_bytes, name, data):
    raw, group = archive_bytes
    whole = group[name]
    key = data.draw(keys(whole.shape))
    ar, src = _remote(raw)
    with ar:
        before, reads = src.bytes_read, src.reads
        got = ar.get_slice("g", name)[key]
        expected = whole[key]
        assert got.shape == expected.shape and got.dtype == expected.dtype
        assert np.array_equal(got, expected)
        # the requests and the bytes read within the bounds of spec §11.4
        runs = selection_runs(whole, key)
        requests, most = bounds(runs)
        needed = sum(b - a for a, b in runs)
        assert src.reads - reads <= min(requests, len(runs))
        assert needed <= src.bytes_read - before <= needed + most, key
        # without coalescing, exactly the selected bytes, one read per run
        before, reads = src.bytes_read, src.reads
        exact = TensorSlice(ar.tensor_info("g")[name], src.read, coalesce=False)[key]
        assert np.array_equal(exact, expected)
        assert (src.bytes_read - before, src.reads - reads) == (needed, len(runs)), key


def test_a_scalar_tensor_and_its_indexes(archive_bytes):
    raw, group = archive_bytes
    with rlarchive.open(raw) as ar:
        s = ar.get_slice("g", "s")
        assert s.shape == () and s.get_shape() == []
        assert np.array_equal(s[()], group["s"][()]) and np.array_equal(s[...], group["s"][...])
        with pytest.raises(IndexError):
            s[0]
        with pytest.raises(TypeError):
            len(s)


def test_a_column_of_a_big_tensor_reads_only_that_column_region(archive_bytes):
    """t[:, 3] of a (256, 64) float32 tensor: 256 runs of 4 bytes 252 bytes apart, read as one range of
    at most the span from the first to the last element; t[10:12] reads exactly its two rows."""
    raw, group = archive_bytes
    ar, src = _remote(raw)
    with ar:
        info = ar.tensor_info("g")["big"]
        sl = ar.get_slice("g", "big")
        before, reads = src.bytes_read, src.reads
        assert np.array_equal(sl[:, 3], group["big"][:, 3])
        assert src.reads - reads == 1
        assert src.bytes_read - before == (255 * 64 + 1) * 4
        before, reads = src.bytes_read, src.reads
        assert np.array_equal(sl[10:12], group["big"][10:12])
        assert (src.bytes_read - before, src.reads - reads) == (2 * 64 * 4, 1)
        assert src.log[-1] == (info.offset + 10 * 64 * 4, 2 * 64 * 4)
        # without coalescing, each run is a read of its own bytes only
        narrow = TensorSlice(info, src.read, coalesce=False)
        before, reads = src.bytes_read, src.reads
        assert np.array_equal(narrow[::100, 5:7], group["big"][::100, 5:7])
        assert (src.bytes_read - before, src.reads - reads) == (3 * 2 * 4, 3)


def test_the_whole_tensor_and_a_step_through_it_on_a_mapped_file(archive_bytes, tmp_path):
    raw, group = archive_bytes
    p = tmp_path / "t.rlarchive"
    p.write_bytes(raw)
    with rlarchive.open(str(p)) as ar:
        sl = ar.get_slice("g", "a3")
        assert (sl.shape, sl.dtype, sl.get_dtype(), len(sl)) == ((5, 7, 6), "F32", "F32", 5)
        for key in [slice(None), (Ellipsis, slice(None, None, -2)), (-1, slice(2, None), 0)]:
            out = sl[key]
            assert np.array_equal(out, group["a3"][key])
            out[...] = 0  # a new array, not a view of the file
        assert np.array_equal(ar.tensor("g", "a3"), group["a3"])


def test_indexes_numpy_refuses_are_refused(archive_bytes):
    raw, _ = archive_bytes
    with rlarchive.open(raw) as ar:
        sl = ar.get_slice("g", "a3")
        for key, error in [
            ((0, 0, 0, 0), IndexError),
            (5, IndexError),
            ((0, -8), IndexError),
            ((..., ...), IndexError),
            ([0, 1], TypeError),
            (None, TypeError),
            (True, TypeError),
            (1.5, TypeError),
        ]:
            with pytest.raises(error):
                sl[key]
            if error is IndexError:
                with pytest.raises(IndexError):
                    np.empty((5, 7, 6))[key]  # NumPy refuses them alike
        with pytest.raises(RlarchiveError) as e:
            ar.get_slice("g", "nothing")
        assert e.value.code == "TENSOR_NOT_FOUND"


def test_framework_names_and_devices(archive_bytes):
    torch = pytest.importorskip("torch")
    raw, group = archive_bytes
    with rlarchive.open(raw) as ar:
        for name in ("np", "numpy"):
            assert isinstance(ar.tensor("g", "a3", framework=name), np.ndarray)
            assert isinstance(ar.tensors("g", framework=name)["v"], np.ndarray)
        for name in ("pt", "torch"):
            t = ar.tensor("g", "a3", framework=name, device="cpu")
            assert isinstance(t, torch.Tensor) and t.device.type == "cpu"
            assert torch.equal(t, torch.from_numpy(group["a3"]))
            ts = ar.tensors("g", framework=name, device=torch.device("cpu"))
            assert ts["i64"].dtype == torch.int64 and ts["i64"].device.type == "cpu"
            part = ar.get_slice("g", "big", framework=name, device="cpu")[3:5, ::7]
            assert isinstance(part, torch.Tensor) and torch.equal(part, torch.from_numpy(group["big"][3:5, ::7].copy()))
        with pytest.raises(ValueError, match="device"):
            ar.tensor("g", "a3", framework="np", device="cpu")
        with pytest.raises(ValueError, match="framework"):
            ar.tensor("g", "a3", framework="jax")
        with pytest.raises(ValueError, match="framework"):
            ar.get_slice("g", "a3", framework="tf")


def test_pt_without_torch_is_a_clear_error(archive_bytes, monkeypatch):
    raw, _ = archive_bytes
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with rlarchive.open(raw) as ar:
        for call in (
            lambda: ar.tensor("g", "a3", framework="pt"),
            lambda: ar.get_slice("g", "a3", framework="pt"),
            lambda: ar.tensors("g", framework="torch"),
        ):
            with pytest.raises(RlarchiveError) as e:
                call()
            assert e.value.code == "FRAMEWORK_UNAVAILABLE" and "torch" in str(e.value)
        assert isinstance(ar.get_slice("g", "a3", framework="np")[0], np.ndarray)


#: Tensors served over HTTP for the request-counting tests: rows of 4400 bytes, of exactly 4096 bytes
#: (the largest gap an earlier reader joined), of 4100 bytes (just past it) and of just over SLICE_REQUEST_BYTES.
HTTP_SHAPES = {"wide": (2000, 1100), "rows4096": (2000, 1024), "rows4100": (2000, 1025), "tall": (20, 262_400)}
#: Selections built to cost many requests or many bytes: a column, every other row, strided in both
#: dimensions, backwards, rows far apart, and runs more than SLICE_REQUEST_BYTES apart (read one by one).
HTTP_CASES = [
    ("wide", (slice(None), 3)),
    ("wide", (slice(None, None, 2),)),
    ("rows4096", (slice(None), 5)),
    ("rows4100", (slice(None), 5)),
    ("rows4096", (slice(None, None, 2),)),
    ("rows4100", (slice(None, None, 2), slice(0, 512))),
    ("wide", (slice(1, None, 3), slice(None, None, 7))),
    ("wide", (slice(None, None, -5), slice(100, 110))),
    ("wide", (slice(None, None, 97), 0)),
    ("wide", (Ellipsis, slice(0, 1100, 550))),
    ("tall", (slice(None), 7)),
    ("tall", (slice(None, None, 3), slice(0, 100_000))),
]


@pytest.fixture(scope="module")
def http_archive(tmp_path_factory):
    """(an archive open over HTTP from a local server, the server's counting handler, the tensors)."""
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp", reason="http(s) URLs need aiohttp (the http extra)")
    rng = np.random.default_rng(3)
    group = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in HTTP_SHAPES.items()}
    path = tmp_path_factory.mktemp("http") / "t.rlarchive"
    rlarchive.save(str(path), {}, tensors={"g": group})
    with serve(path.read_bytes()) as (url, handler):
        with rlarchive.open(url) as ar:
            yield ar, handler, group


@pytest.mark.slow
@pytest.mark.parametrize(("name", "key"), HTTP_CASES)
def test_a_slice_over_http_makes_few_requests_and_reads_little_more_than_it_selects(http_archive, name, key):
    """Spec §11.4: at most max(SLICE_MAX_REQUESTS, ceil(S / SLICE_REQUEST_BYTES)) requests, and outside the
    selection at most the least such a plan must read plus max(S, SLICE_OVERREAD_BYTES), counted by the server."""
    ar, handler, group = http_archive
    whole = group[name]
    runs = selection_runs(whole, key)
    requests, most = bounds(runs)
    selected = sum(b - a for a, b in runs)
    before, sent = handler.requests, handler.sent
    got = ar.get_slice("g", name)[key]
    assert np.array_equal(got, whole[key])
    made, read = handler.requests - before, handler.sent - sent
    assert 1 <= made <= min(requests, len(runs)), (made, len(runs))
    assert selected <= read <= min(selected + most, whole.nbytes), (read, selected, most)
