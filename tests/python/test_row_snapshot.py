"""Row snapshots: an array written as it was while another thread overwrites its rows (rlarchive.row_snapshot)."""

import threading
import zlib

import numpy as np
import pytest

import rlarchive
from rlarchive import checksums, crc32
from rlarchive.row_snapshot import RowGuard


def _rows(n: int = 64, width: int = 256) -> np.ndarray:
    return np.random.default_rng(3).integers(0, 256, (n, width), dtype=np.uint8)


def _read_all(snap, size: int) -> bytes:
    """The snapshot's bytes, reporting progress after each piece as the writer does."""
    out, done = bytearray(), 0
    for piece in snap.chunks(size):
        out += piece
        done += len(piece)
        snap.progress(done)
    return bytes(out)


def _blocked(fn) -> tuple[threading.Thread, threading.Event]:
    """Run ``fn`` on a thread; the event is set once it returns."""
    returned = threading.Event()

    def run():
        fn()
        returned.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, returned


def test_rows_overwritten_before_they_are_read_are_read_as_they_were():
    a = _rows()
    before = a.tobytes()
    guard = RowGuard(copy_limit=1 << 20)
    snap = guard.snapshot(a)
    for row in (0, 5, 6, 63, 5):  # row 5 twice: the first copy is kept
        guard.before_write([(snap, row)])
        a[row] = 255 - a[row]
    assert guard.copies == 4 and guard.copied == 4 * 256
    assert _read_all(snap, 1000) == before  # pieces that cut rows in two, copies spliced in
    assert guard.copied == 0  # the writer passed them: freed


def test_rows_the_writer_is_done_with_are_neither_copied_nor_waited_for():
    a = _rows()
    guard = RowGuard(copy_limit=1 << 20)
    snap = guard.snapshot(a)
    pieces = snap.chunks(256 * 8)
    next(pieces)  # rows 0-7 handed out
    snap.progress(256 * 8)  # and done with
    guard.before_write([(snap, 3)])
    assert guard.copies == 0 and guard.waits == 0


def test_a_row_being_read_is_waited_for_until_the_writer_is_past_it():
    a = _rows()
    before = a.tobytes()
    guard = RowGuard(copy_limit=1 << 20)
    snap = guard.snapshot(a)
    pieces = snap.chunks(256 * 8)
    first = bytes(next(pieces))  # rows 0-7 are being read

    def overwrite_row_2():
        guard.before_write([(snap, 2)])
        a[2] = 0

    t, returned = _blocked(overwrite_row_2)
    assert not returned.wait(0.3)  # waits: the writer still reads row 2
    assert bytes(a[2]) == before[512:768]
    snap.progress(256 * 8)
    assert returned.wait(30)
    t.join()
    assert guard.copies == 0 and guard.waits >= 1
    assert first == before[: 256 * 8]


def test_copies_stay_within_the_limit_and_the_next_row_waits_for_the_writer():
    a = _rows()
    before = a.tobytes()
    guard = RowGuard(copy_limit=3 * 256)
    snap = guard.snapshot(a)
    for row in (40, 41, 42):
        guard.before_write([(snap, row)])
        a[row] = 0
    assert guard.copied == 3 * 256

    def overwrite_row_43():
        guard.before_write([(snap, 43)])
        a[43] = 0

    t, returned = _blocked(overwrite_row_43)
    assert not returned.wait(0.3)  # over the budget: waits until the writer is past row 43
    got = _read_all(snap, 256 * 4)
    assert returned.wait(30)
    t.join()
    assert got == before
    assert guard.peak <= 3 * 256


def test_closing_frees_the_copies_and_releases_waiting_writers():
    a = _rows()
    guard = RowGuard(copy_limit=256)
    snap = guard.snapshot(a)
    guard.before_write([(snap, 10)])
    t, returned = _blocked(lambda: guard.before_write([(snap, 11)]))
    assert not returned.wait(0.3)
    guard.close()
    assert returned.wait(30)
    t.join()
    assert guard.copied == 0
    with pytest.raises(RuntimeError):
        list(snap.chunks(1024))


def test_a_snapshot_is_read_once():
    guard = RowGuard(copy_limit=1 << 20)
    snap = guard.snapshot(_rows())
    _read_all(snap, 4096)
    with pytest.raises(RuntimeError, match="read once"):
        next(snap.chunks(4096))


def test_an_archive_written_while_rows_change_holds_the_rows_as_they_were(tmp_path, monkeypatch):
    """The writer's progress reaches the snapshot: rows behind it change freely, rows ahead are copied."""
    monkeypatch.setattr(checksums, "PIECE_BYTES", 4096)
    monkeypatch.setattr(checksums, "GATHER_BYTES", 1024)
    a = _rows(2000, 512)
    expected = a.copy()
    guard = RowGuard(copy_limit=1 << 30)
    snap = guard.snapshot(a)
    seen = []
    original = snap.progress

    def progress(done):
        seen.append(done)
        if len(seen) % 3 == 0:  # writes as the save goes on: a row not read yet (copied) and one passed (free)
            for row in (snap.read // 512 + 1, snap.done // 512 - 1):
                if 0 <= row < 2000:
                    guard.before_write([(snap, row)])  # neither is being read: no wait on the writer's own thread
                    a[row] = 7
        original(done)

    monkeypatch.setattr(snap, "progress", progress)
    rlarchive.save(tmp_path / "a.rlarchive", {}, {"rows": {"a": snap, "b": np.arange(10.0)}})
    guard.close()
    assert seen == sorted(seen) and seen[-1] == a.nbytes
    assert not np.array_equal(a, expected)  # the array did change meanwhile
    with rlarchive.open(tmp_path / "a.rlarchive") as ar:
        ar.verify()
        assert np.array_equal(ar.tensor("rows", "a"), expected)
    assert guard.copies > 0


def test_the_fast_crc32_is_zlibs():
    rng = np.random.default_rng(1)
    for n in (0, 1, 15, 16, 63, 64, 65, 4095, 100_003):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        for start in (0, 1, 0xFFFFFFFF, 0x1234ABCD):
            assert crc32.crc32(data, start) == zlib.crc32(data, start)
    assert crc32.IMPLEMENTATION in ("isal", "zlib")


def test_without_isal_the_crc32_is_zlibs_own(monkeypatch):
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "isal", None)  # import isal raises ImportError
    try:
        fallback = importlib.reload(crc32)
        assert fallback.IMPLEMENTATION == "zlib" and fallback.crc32 is zlib.crc32
    finally:
        monkeypatch.undo()
        importlib.reload(crc32)
