"""SB3 import: one budget bounds what a small file can make the import allocate or write.

Each hostile model is imported in a child process whose peak memory is measured.
"""

import io
import json
import os
import subprocess
import sys
import zipfile

import pytest

torch = pytest.importorskip("torch", reason="torch is needed to write .pth members")
pytest.importorskip("stable_baselines3", reason="stable_baselines3 is needed for an SB3 data member")

GIB = 1 << 30


def _sb3_zip(path, members: dict) -> None:
    """A minimal SB3 zip: a plain JSON ``data`` member and the given .pth members (bytes or a writer)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("data", json.dumps({"gamma": 0.99}))
        z.writestr("_stable_baselines3_version", "2.9.2")
        for name, content in members.items():
            if isinstance(content, bytes):
                z.writestr(name, content)
            else:
                with z.open(name, "w", force_zip64=True) as f:
                    content(f)


def _import_in_child(src, out):
    code = (
        "import json, resource, sys\n"
        "from rlarchive.errors import RlarchiveError\n"
        "from rlarchive import sb3\n"
        "try:\n"
        "    sb3.import_archive(sys.argv[1], sys.argv[2], algorithm='PPO'); code = None\n"
        "except RlarchiveError as e:\n"
        "    code = e.code\n"
        # VmHWM: this process's own peak (ru_maxrss would also count the parent it was forked from)
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
        "rss = int(hwm[0].split()[1]) * 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
        "print(json.dumps({'code': code, 'rss': rss}))\n"
    )
    r = subprocess.run([sys.executable, "-c", code, src, out], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_deflate_bomb_pth_is_refused_before_it_is_inflated(tmp_path):
    def bomb(f):  # a .pth member of 320 MiB of zeros (above the 256 MiB default budget), deflated to about 300 KB
        zeros = bytes(1 << 20)
        for _ in range(320):
            f.write(zeros)

    src, out = str(tmp_path / "m.zip"), str(tmp_path / "m.rlarchive")
    _sb3_zip(src, {"policy.pth": bomb})
    assert os.path.getsize(src) < 16 << 20
    res = _import_in_child(src, out)
    assert res["code"] == "LIMIT_EXCEEDED" and res["rss"] < GIB
    assert not os.path.exists(out)


@pytest.mark.slow
def test_tensors_viewing_one_storage_are_charged_at_their_full_size(tmp_path):
    # 10,000 tensors of 2^16 elements each, all views with stride 0 of one 4-byte storage:
    # a .pth of a few hundred KB that would write 2.4 GiB of tensors
    base = torch.zeros(1)
    state = {f"w{i}": base.expand(1 << 16) for i in range(10_000)}
    buf = io.BytesIO()
    torch.save(state, buf)
    src, out = str(tmp_path / "m.zip"), str(tmp_path / "m.rlarchive")
    _sb3_zip(src, {"policy.pth": buf.getvalue()})
    assert os.path.getsize(src) < 16 << 20
    res = _import_in_child(src, out)
    assert res["code"] == "LIMIT_EXCEEDED" and res["rss"] < GIB
    assert not os.path.exists(out)


@pytest.mark.slow
def test_an_ordinary_small_model_fits_the_default_budget(tmp_path):
    state = {"w": torch.arange(12, dtype=torch.float32).reshape(3, 4), "b": torch.zeros(3)}
    buf = io.BytesIO()
    torch.save(state, buf)
    src, out = str(tmp_path / "m.zip"), str(tmp_path / "m.rlarchive")
    _sb3_zip(src, {"policy.pth": buf.getvalue()})
    assert _import_in_child(src, out)["code"] is None
    import rlarchive

    with rlarchive.open(out) as ar:
        assert ar.tensors("policy")["w"].tolist() == state["w"].tolist()
