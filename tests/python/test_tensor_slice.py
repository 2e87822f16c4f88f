"""The tensor API in safetensors' conventions: framework names, a torch device, and partial reads
(``Archive.get_slice``) that equal NumPy's slicing and read only the bytes the selection needs."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rlarchive
from rlarchive.errors import RlarchiveError
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
        before = src.bytes_read
        got = ar.get_slice("g", name)[key]
        expected = whole[key]
        assert got.shape == expected.shape and got.dtype == expected.dtype
        assert np.array_equal(got, expected)
        # the bytes read: the selected elements, plus at most max_gap bytes between two runs of them
        flat = np.unique(np.arange(whole.size).reshape(whole.shape)[key])
        runs = int(np.count_nonzero(np.diff(flat) != 1)) + 1 if flat.size else 0
        needed = flat.size * whole.itemsize
        assert needed <= src.bytes_read - before <= needed + max(0, runs - 1) * 4096, key
        # with no gap allowed, exactly the selected bytes, one read per run
        before, reads = src.bytes_read, src.reads
        exact = TensorSlice(ar.tensor_info("g")[name], src.read, max_gap=0)[key]
        assert np.array_equal(exact, expected)
        assert (src.bytes_read - before, src.reads - reads) == (needed, runs), key


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
        # runs farther apart than max_gap are separate reads of their own bytes only
        narrow = TensorSlice(info, src.read, max_gap=0)
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
