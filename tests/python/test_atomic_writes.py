"""Atomic, well-behaved writes (spec §12): permissions, durability, temporary files, links, failures.

Helpers for destinations that cannot be written (a read-only folder, a full
disk, the file-size limit) live here and are shared with test_cli_robust.py.
"""

import contextlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import pytest

import rlarchive
from rlarchive import RlarchiveError, atomic
from rlarchive.writer import atomic_file

pytestmark = pytest.mark.skipif(os.name != "posix", reason="permissions, locks and limits as POSIX has them")

#: The temporary-file naming of spec §12, written out independently of the writer.
TEMP_NAME = re.compile(r"\.(?P<stem>.+)\.[0-9a-f]{16}\.rlarchive-tmp")
BIG = np.arange(50_000, dtype=np.float32)  # 200 kB of tensor data


def temps(folder) -> list:
    """The writer's temporary files in ``folder``."""
    return sorted(n for n in os.listdir(folder) if TEMP_NAME.fullmatch(n))


# ---------------------------------------------------------------- shared helpers (also used by test_cli_robust.py)


@contextlib.contextmanager
def read_only_folder(path):
    """Make the folder ``path`` unwritable for this process (and its children), or skip the test.

    As root, permissions do not stop writes: the folder is made immutable with
    ``chattr +i`` instead, where the file system supports it.
    """
    path = str(path)
    if os.geteuid() != 0:
        os.chmod(path, 0o555)
        undo = ["chmod", "755", path]
    else:
        if shutil.which("chattr") is None:
            pytest.skip("running as root and chattr is not installed: no way to make a folder read-only")
        r = subprocess.run(["chattr", "+i", path], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"running as root and chattr +i fails here: {r.stderr.strip()}")
        undo = ["chattr", "-i", path]
    try:
        try:
            with open(os.path.join(path, ".probe"), "x"):
                pass
        except OSError:
            pass
        else:
            os.unlink(os.path.join(path, ".probe"))
            pytest.skip("the folder stays writable for this user")
        yield path
    finally:
        subprocess.run(undo, check=True)


def run_on_full_disk(folder, script: str, *args: str, size: str = "64k") -> subprocess.CompletedProcess:
    """Run ``python -c script args...`` with a ``size`` tmpfs mounted on ``folder``, or skip.

    The mount lives in a private mount namespace (``unshare``), so it vanishes
    with the child and nothing outside sees it. Within it the disk really fills
    up: writes fail with ENOSPC.
    """
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed: no way to mount a small file system")
    wrapper = 'mount -t tmpfs -o size="$1" none "$2" || exit 97; shift 2; exec "$@"'
    cmd = [
        "unshare",
        "--user",
        "--map-root-user",
        "--mount",
        "sh",
        "-c",
        wrapper,
        "sh",
        size,
        str(folder),
        sys.executable,
        "-c",
        script,
        *args,
    ]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 97 or "unshare failed" in r.stderr or "unshare:" in r.stderr:
        pytest.skip(f"cannot mount a small file system here: {r.stderr.strip()[:200]}")
    return r


def limit_file_size(limit: int):
    """A ``preexec_fn`` that sets RLIMIT_FSIZE to ``limit`` bytes in the child (SIGXFSZ left as it is)."""

    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def python(script: str, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], capture_output=True, text=True, **kw)


# ---------------------------------------------------------------- permissions


@contextlib.contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002, 0o027])
def test_mode_follows_the_umask(tmp_path, mask):
    dest = tmp_path / "a.rlarchive"
    with umask(mask):
        rlarchive.save(dest, {"x": 1})
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o666 & ~mask


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o604, 0o444, 0o755, 0o000], ids=oct)
@pytest.mark.parametrize("mask", [0o022, 0o077], ids=oct)
def test_replacing_a_file_keeps_its_mode(tmp_path, mode, mask):
    """A private file stays private (and a shared one shared) whatever the umask, as an editor's safe save keeps it."""
    dest = tmp_path / "a.rlarchive"
    dest.write_bytes(b"old")
    os.chmod(dest, mode)
    with umask(mask):
        rlarchive.save(dest, {"x": 1})
    assert stat.S_IMODE(os.stat(dest).st_mode) == mode
    assert rlarchive.open(dest).data == {"x": 1}


def test_set_id_bits_are_not_carried_over(tmp_path):
    dest = tmp_path / "a.rlarchive"
    dest.write_bytes(b"old")
    os.chmod(dest, 0o6750)
    rlarchive.save(dest, {"x": 1})
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o750


def test_the_temporary_file_has_the_old_permissions_before_a_byte_is_written(tmp_path):
    """No moment where the new content is readable by someone the old file did not admit."""
    dest = tmp_path / "a.rlarchive"
    dest.write_bytes(b"old")
    os.chmod(dest, 0o600)
    with umask(0o000), atomic_file(dest) as f:
        st = os.fstat(f.fileno())
        assert st.st_size == 0 and stat.S_IMODE(st.st_mode) == 0o600
        f.write(b"new")
    assert dest.read_bytes() == b"new" and stat.S_IMODE(os.stat(dest).st_mode) == 0o600


def test_a_link_keeps_the_mode_of_the_file_it_points_to(tmp_path):
    target = tmp_path / "real.rlarchive"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    (tmp_path / "link.rlarchive").symlink_to("real.rlarchive")
    with umask(0o022):
        rlarchive.save(tmp_path / "link.rlarchive", {"x": 1})
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file another owner needs privileges")
def test_replacing_a_file_keeps_its_owner_and_group(tmp_path):
    dest = tmp_path / "a.rlarchive"
    dest.write_bytes(b"old")
    os.chown(dest, 4321, 8765)
    os.chmod(dest, 0o640)
    rlarchive.save(dest, {"x": 1})
    st = os.stat(dest)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 8765, 0o640)


@contextlib.contextmanager
def as_user(uid: int, gid: int):
    """Run the block with the effective user and group ``uid``/``gid`` and no supplementary groups (needs root)."""
    groups = os.getgroups()
    os.setgroups([])
    os.setegid(gid)
    os.seteuid(uid)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(groups)


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to an unprivileged user needs root")
@pytest.mark.parametrize(("mode", "want"), [(0o640, 0o600), (0o664, 0o644), (0o604, 0o644), (0o600, 0o600)])
def test_a_group_the_writer_cannot_give_gets_the_others_bits(mode, want):
    """An unprivileged user replacing a file of a group it is not in: the new file's group members get what
    others had (never what the old group had)."""
    nobody = 65534
    folder = tempfile.mkdtemp(dir="/tmp")
    try:
        os.chown(folder, nobody, nobody)
        dest = os.path.join(folder, "a.rlarchive")
        with open(dest, "wb") as f:
            f.write(b"old")
        os.chown(dest, nobody, 0)  # group root: nobody is not a member
        os.chmod(dest, mode)
        with as_user(nobody, nobody):
            rlarchive.save(dest, {"x": 1})
        st = os.stat(dest)
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (nobody, nobody, want)
    finally:
        shutil.rmtree(folder)


# ---------------------------------------------------------------- durability


def test_file_synced_before_the_rename_and_folder_after(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        st = os.fstat(fd)
        events.append(
            (
                "fsync",
                "folder" if stat.S_ISDIR(st.st_mode) else "file",
                st.st_size if stat.S_ISREG(st.st_mode) else None,
            )
        )
        real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", os.path.basename(dst), None))
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    monkeypatch.setattr(atomic.os, "replace", replace)
    dest = tmp_path / "a.rlarchive"
    rlarchive.save(dest, {"x": 1}, {"policy": {"w": BIG}})
    size = os.path.getsize(dest)
    # the file's bytes are all written when it is synced, then renamed, then the folder synced
    assert events == [("fsync", "file", size), ("replace", "a.rlarchive", None), ("fsync", "folder", None)]


def test_without_folder_sync_or_locks_as_on_windows(tmp_path, monkeypatch):
    """Where folders cannot be opened and there are no advisory locks, saving still works;
    only temporary files older than STALE_TEMP_SECONDS count as stale."""
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(
        atomic.os, "fsync", lambda fd: (synced.append(stat.S_ISDIR(os.fstat(fd).st_mode)), real_fsync(fd))
    )
    monkeypatch.setattr(atomic, "_WINDOWS", True)
    monkeypatch.setattr(atomic, "fcntl", None)
    young = tmp_path / ".a.rlarchive.0123456789abcdef.rlarchive-tmp"
    old = tmp_path / ".a.rlarchive.fedcba9876543210.rlarchive-tmp"
    young.write_bytes(b"young")
    old.write_bytes(b"old")
    past = time.time() - atomic.STALE_TEMP_SECONDS - 60
    os.utime(old, (past, past))
    rlarchive.save(tmp_path / "a.rlarchive", {"x": 1})
    assert synced == [False]  # the file only, never the folder
    assert temps(tmp_path) == [young.name]
    assert rlarchive.validate(tmp_path / "a.rlarchive")["valid"]


# ---------------------------------------------------------------- temporary files


KILLED_SAVE = """
import os, signal, sys
from rlarchive.writer import atomic_file
with atomic_file(sys.argv[1]) as f:
    f.write(b"x" * 300000)
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_save_leaves_a_temporary_file_the_next_save_removes(tmp_path):
    dest = tmp_path / "agent.rlarchive"
    r = python(KILLED_SAVE, str(dest))
    assert r.returncode == -signal.SIGKILL
    left = temps(tmp_path)
    assert len(left) == 1 and TEMP_NAME.fullmatch(left[0])["stem"] == "agent.rlarchive"
    assert os.path.getsize(tmp_path / left[0]) == 300000 and not dest.exists()
    rlarchive.save(dest, {"x": 1})
    assert temps(tmp_path) == []
    assert rlarchive.validate(dest)["valid"]


def test_a_save_in_progress_keeps_its_temporary_file(tmp_path):
    dest = tmp_path / "agent.rlarchive"
    other = tmp_path / ".other.rlarchive.0123456789abcdef.rlarchive-tmp"  # another destination's: not touched
    other.write_bytes(b"other")
    unrelated = tmp_path / ".agent.rlarchive.notes"
    unrelated.write_bytes(b"notes")
    with atomic_file(dest) as f:
        f.write(b"first")
        mine = temps(tmp_path)
        assert len(mine) == 2 and other.name in mine
        rlarchive.save(dest, {"x": 1})  # a concurrent save to the same destination
        assert temps(tmp_path) == mine  # its sweep left the locked file alone
        assert rlarchive.validate(dest)["valid"]
    assert dest.read_bytes() == b"first"  # the first save finished last, and won
    assert temps(tmp_path) == [other.name] and unrelated.read_bytes() == b"notes"


def test_a_long_name_gets_a_short_enough_temporary_name(tmp_path):
    dest = tmp_path / ("a" * 240 + ".rlarchive")  # 250 bytes: a temporary name adding 33 would pass NAME_MAX
    rlarchive.save(dest, {"x": 1})
    assert rlarchive.validate(dest)["valid"] and temps(tmp_path) == []


# ---------------------------------------------------------------- symbolic links


def test_saving_to_a_link_replaces_the_file_it_points_to(tmp_path):
    target = tmp_path / "runs" / "run-1.rlarchive"
    target.parent.mkdir()
    rlarchive.save(target, {"x": 1})
    link = tmp_path / "latest.rlarchive"
    link.symlink_to(os.path.join("runs", "run-1.rlarchive"))
    rlarchive.save(link, {"x": 2})
    assert link.is_symlink() and os.readlink(link) == os.path.join("runs", "run-1.rlarchive")
    with rlarchive.open(target) as ar:
        assert ar.data["x"] == 2
    assert temps(tmp_path) == [] and temps(target.parent) == []


def test_a_dangling_link_gets_its_target_created(tmp_path):
    link = tmp_path / "latest.rlarchive"
    link.symlink_to("new.rlarchive")
    rlarchive.save(link, {"x": 3})
    assert link.is_symlink()
    with rlarchive.open(tmp_path / "new.rlarchive") as ar:
        assert ar.data["x"] == 3


def test_a_link_loop_is_refused(tmp_path):
    a, b = tmp_path / "a.rlarchive", tmp_path / "b.rlarchive"
    a.symlink_to(b.name)
    b.symlink_to(a.name)
    with pytest.raises(RlarchiveError) as e:
        rlarchive.save(a, {"x": 1})
    assert e.value.code == "IO_ERROR"
    assert os.readlink(a) == b.name and os.readlink(b) == a.name and temps(tmp_path) == []


# ---------------------------------------------------------------- destinations that cannot be written


def _refused(dest, folder) -> RlarchiveError:
    before = sorted(os.listdir(folder))
    with pytest.raises(RlarchiveError) as e:
        rlarchive.save(dest, {"x": 1}, {"policy": {"w": BIG}})
    assert e.value.code == "IO_ERROR"
    assert sorted(os.listdir(folder)) == before  # no temporary file, no partial destination
    return e.value


def test_a_directory_is_refused(tmp_path):
    d = tmp_path / "d.rlarchive"
    d.mkdir()
    (d / "keep").write_bytes(b"k")
    assert "directory" in str(_refused(d, tmp_path))
    assert os.listdir(d) == ["keep"]


def test_a_fifo_or_device_is_refused(tmp_path):
    fifo = tmp_path / "pipe.rlarchive"
    os.mkfifo(fifo)
    _refused(fifo, tmp_path)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    link = tmp_path / "null.rlarchive"
    link.symlink_to(os.devnull)
    _refused(link, tmp_path)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_missing_parent_is_refused(tmp_path):
    assert "No such file" in str(_refused(tmp_path / "missing" / "a.rlarchive", tmp_path))


def test_a_read_only_folder_is_refused(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "a.rlarchive").write_bytes(b"old")
    with read_only_folder(folder):
        _refused(folder / "a.rlarchive", folder)
    assert (folder / "a.rlarchive").read_bytes() == b"old"


FULL_DISK = """
import json, os, sys
import numpy as np, rlarchive
folder = sys.argv[1]
with open(os.path.join(folder, "a.rlarchive"), "wb") as f:
    f.write(b"old")
code = message = None
try:
    rlarchive.save(os.path.join(folder, "a.rlarchive"), {"x": 1}, {"policy": {"w": np.arange(50000, dtype=np.float32)}})
except rlarchive.RlarchiveError as e:
    code, message = e.code, e.message
with open(os.path.join(folder, "a.rlarchive"), "rb") as f:
    old = f.read()
print(json.dumps({"code": code, "message": message, "files": sorted(os.listdir(folder)), "old": old.decode()}))
"""


def test_a_full_disk_is_an_io_error_and_leaves_nothing(tmp_path):
    r = run_on_full_disk(tmp_path, FULL_DISK, str(tmp_path))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["code"] == "IO_ERROR" and "No space left" in out["message"]
    assert out["files"] == ["a.rlarchive"] and out["old"] == "old"


FILE_SIZE_LIMIT = """
import json, os, signal, sys
import numpy as np, rlarchive
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # as the docstring of atomic_file asks
dest = sys.argv[1]
try:
    rlarchive.save(dest, {"x": 1}, {"policy": {"w": np.arange(50000, dtype=np.float32)}})
    out = {"code": None}
except rlarchive.RlarchiveError as e:
    out = {"code": e.code, "message": e.message}
print(json.dumps(out))
"""


def test_the_file_size_limit_is_an_io_error_and_leaves_nothing(tmp_path):
    dest = tmp_path / "a.rlarchive"
    dest.write_bytes(b"old")
    r = python(FILE_SIZE_LIMIT, str(dest), preexec_fn=limit_file_size(64 * 1024))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["code"] == "IO_ERROR" and "too large" in out["message"]
    assert sorted(os.listdir(tmp_path)) == ["a.rlarchive"] and dest.read_bytes() == b"old"


def test_an_error_inside_the_block_leaves_the_destination_alone(tmp_path):
    dest = tmp_path / "a.rlarchive"
    dest.write_bytes(b"old")
    with pytest.raises(ZeroDivisionError):
        with atomic_file(dest) as f:
            f.write(b"new")
            1 / 0  # noqa: B018
    with pytest.raises(RlarchiveError) as e:
        with atomic_file(dest) as f:
            raise OSError(28, "No space left on device")
    assert e.value.code == "IO_ERROR"
    assert dest.read_bytes() == b"old" and os.listdir(tmp_path) == ["a.rlarchive"]
