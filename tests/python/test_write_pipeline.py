"""The two-thread digest and write pipeline: the same bytes and digests as a plain computation, and clean failures."""

import errno
import hashlib
import io
import json
import os
import threading
import time
import zipfile
import zlib

import numpy as np
import pytest

import rlarchive
from rlarchive import checksums
from rlarchive.errors import RlarchiveError
from rlarchive.zipwrite import ZipWriter


def _pipeline_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("rlarchive-")]


def _tensors() -> dict:
    rng = np.random.default_rng(7)
    return {
        "big": rng.standard_normal(
            ((checksums.PIECE_BYTES * 5) // 8 + 3,), dtype=np.float32
        ),  # several pieces, a short last one
        "small": rng.standard_normal(10, dtype=np.float32),
        "empty": np.zeros((0, 3), np.float32),
        **{
            f"layer{i}": rng.integers(0, 1 << 30, 3000 + i, dtype=np.int64) for i in range(600)
        },  # gathered into shared pieces
    }


def test_written_archive_matches_independent_digests(tmp_path):
    p = tmp_path / "a.rlarchive"
    rlarchive.save(p, {"gamma": 0.99}, {"policy": _tensors(), "other": {"x": np.arange(5000, dtype=np.float64)}})
    raw = p.read_bytes()
    with zipfile.ZipFile(p) as z:
        manifest = json.loads(z.read("manifest.json"))
        listed = {m["name"]: m["sha256"] for m in manifest["members"]}
        checked = 0
        for info in z.infolist():
            data = z.read(info.filename)  # zipfile checks the CRC-32 as well
            assert zlib.crc32(data) == info.CRC
            # the CRC-32 in the local header, patched after the data was written
            assert int.from_bytes(raw[info.header_offset + 14 : info.header_offset + 18], "little") == zlib.crc32(data)
            if info.filename in listed:
                assert hashlib.sha256(data).hexdigest() == listed[info.filename]
                checked += 1
    assert checked == len(listed) >= 3
    with rlarchive.open(p) as ar:
        ar.verify()
        assert np.array_equal(ar.tensor("policy", "big"), _tensors()["big"])


def test_positional_and_sequential_writes_give_the_same_bytes(tmp_path):
    """The archive written by position from two threads equals one written in order to a file object."""
    p = tmp_path / "a.rlarchive"
    tensors = _tensors()
    rlarchive.save(p, {"gamma": 0.99}, {"policy": tensors})
    from rlarchive.tensors import as_tensor, group_chunks, group_layout

    with rlarchive.open(p) as ar:
        members = list(ar.members.values())
    seq = io.BytesIO()
    zw = ZipWriter(seq)
    assert zw._fd is None  # no descriptor: written in order by the calling thread
    prefix, order = group_layout({k: as_tensor(v) for k, v in tensors.items()})
    data = p.read_bytes()
    for m in members:
        chunks = (
            group_chunks(prefix, order)
            if m.name == "tensors/policy.safetensors"
            else [data[m.data_offset : m.data_offset + m.size]]
        )
        zw.add(m.name, chunks, m.size, align=64 if m.name.startswith("tensors/") else 0)
    zw.finish()
    assert seq.getvalue() == data


def test_both_threads_write_and_the_result_is_exact():
    """When the calling thread is slow to write, the hashing thread takes pieces to write: still every byte once, in place."""
    rng = np.random.default_rng(1)
    chunks = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in (3 << 20, 12 << 20, 100, 5, 9 << 20, 1 << 20)]
    whole = b"".join(chunks)
    out = bytearray(len(whole))
    writers: list = []
    lock = threading.Lock()

    def pwrite(piece, at):
        if threading.current_thread() is threading.main_thread():
            time.sleep(0.05)
        with lock:
            assert out[at : at + len(piece)] == bytes(len(piece))  # each byte written once
            writers.append(threading.current_thread().name)
        out[at : at + len(piece)] = piece

    crc, sha, n = checksums.digest_and_write(chunks, pwrite=pwrite)
    assert (crc, sha, n) == (zlib.crc32(whole), hashlib.sha256(whole).hexdigest(), len(whole))
    assert out == whole
    assert {"rlarchive-sha256", threading.main_thread().name} <= set(writers)
    assert not _pipeline_threads()


def test_full_disk_mid_write_leaves_no_partial_file_and_no_thread(tmp_path, monkeypatch):
    p = tmp_path / "agent.rlarchive"
    rlarchive.save(p, {"gamma": 0.9})
    before = p.read_bytes()
    real = os.pwrite
    written = [0]

    def pwrite(fd, data, offset):
        if written[0] > checksums.PIECE_BYTES * 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = real(fd, data, offset)
        written[0] += n
        return n

    monkeypatch.setattr(os, "pwrite", pwrite)
    with pytest.raises(RlarchiveError) as e:
        rlarchive.save(p, {"gamma": 0.99}, {"policy": _tensors()})
    assert e.value.code == "IO_ERROR" and "No space left" in e.value.message
    assert written[0] > checksums.PIECE_BYTES * 2  # the failure came mid-way through the data
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["agent.rlarchive"]
    assert not _pipeline_threads()


class _FullDisk(io.BytesIO):
    """A file object whose disk fills after ``room`` bytes."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def write(self, b) -> int:
        if self.tell() + len(memoryview(b)) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(b)


def test_failing_file_object_stops_the_pipeline():
    zw = ZipWriter(_FullDisk(checksums.PIECE_BYTES + 1000))
    big = np.ones(checksums.PIECE_BYTES, np.uint8)
    with pytest.raises(OSError) as e:
        zw.add("tensors/x.safetensors", [big, big, big], 3 * big.nbytes)
    assert e.value.errno == errno.ENOSPC
    assert not _pipeline_threads()


@pytest.mark.parametrize("where", ["chunks", "calling thread", "hashing thread"])
def test_errors_in_either_thread_propagate_and_stop_the_worker(where):
    piece = bytes(checksums.PIECE_BYTES)

    def chunks():
        for i in range(8):
            if where == "chunks" and i == 4:
                raise ValueError("bad chunk")
            yield piece

    def pwrite(data, at):
        worker = threading.current_thread().name == "rlarchive-sha256"
        if not worker and where == "hashing thread":
            time.sleep(0.05)  # a slow calling thread: the hashing thread takes the next pieces to write
        if at >= 3 * len(piece) and worker == (where == "hashing thread"):
            raise ValueError("bad write")

    def write(data):  # in order, on the calling thread
        if calls.append(1) or len(calls) > 3:
            raise ValueError("bad write")

    calls: list = []
    with pytest.raises(ValueError, match="bad"):
        if where == "calling thread":
            checksums.digest_and_write(chunks(), write=write)
        else:
            checksums.digest_and_write(chunks(), pwrite=pwrite)
    assert not _pipeline_threads()


def test_digests_of_empty_and_tiny_inputs():
    for chunks in ([], [b""], [b"a"], [b"ab", memoryview(b"cd"), np.arange(3, dtype=np.int16)]):
        whole = b"".join(bytes(memoryview(c).cast("B")) for c in chunks)
        assert checksums.digests(chunks) == (zlib.crc32(whole), hashlib.sha256(whole).hexdigest())
    assert not _pipeline_threads()


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a.T,  # Fortran order
        lambda a: a[:, ::3],  # strided
        lambda a: a.astype(">f4"),  # big-endian
        lambda a: a.astype(">f4").T[::2],  # both
        lambda a: np.broadcast_to(a[:1], a.shape),  # zero strides
    ],
)
def test_arrays_in_any_layout_are_written_as_their_c_order_copy(tmp_path, make):
    base = np.random.default_rng(3).standard_normal((700, 2100), dtype=np.float32)
    odd = make(base)
    assert not (odd.flags.c_contiguous and odd.dtype.byteorder != ">")
    rlarchive.save(tmp_path / "odd.rlarchive", {}, {"p": {"w": odd}})
    rlarchive.save(tmp_path / "plain.rlarchive", {}, {"p": {"w": np.ascontiguousarray(odd, dtype="<f4")}})
    assert (tmp_path / "odd.rlarchive").read_bytes() == (tmp_path / "plain.rlarchive").read_bytes()


def test_a_strided_array_is_converted_a_piece_at_a_time():
    from rlarchive.tensors import as_tensor

    a = np.arange(3000 * 4000, dtype=np.float64).reshape(3000, 4000).T  # 96 MB, Fortran order
    t = as_tensor(a)
    sizes = [len(c) for c in t.chunks(1 << 20)]
    assert sum(sizes) == a.nbytes and max(sizes) <= 1 << 20
    assert b"".join(bytes(c) for c in t.chunks(1 << 20)) == np.ascontiguousarray(a).tobytes()


@pytest.mark.slow
def test_saving_a_large_strided_array_keeps_memory_bounded(tmp_path):
    """Peak memory of a save stays far below the size of the archive: no whole-member or whole-tensor copies."""
    import subprocess
    import sys
    import textwrap

    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("needs Linux's /proc/self/clear_refs to measure the peak")
    script = textwrap.dedent(
        """
        import sys, numpy as np, rlarchive
        a = np.ones((8192, 12288), np.float32).T  # 384 MiB, Fortran order
        def kib(field):
            return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(field + ":"))
        open("/proc/self/clear_refs", "w").write("5")
        before = kib("VmRSS")
        rlarchive.save(sys.argv[1], {}, {"p": {"a": a}})
        print((kib("VmHWM") - before) // 1024)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "big.rlarchive")], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) < 256, f"a save of 384 MiB took {out.stdout.strip()} MiB above the process size"
    assert os.path.getsize(tmp_path / "big.rlarchive") > 384 << 20
