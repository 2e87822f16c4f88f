"""One import budget bounds the memory of an import, whatever a small input declares.

Each hostile input is smaller than 16 MB. It is imported by a child process
that a wrapper process starts and waits for; the wrapper reports the child's
peak memory (``getrusage(RUSAGE_CHILDREN).ru_maxrss``), which must stay under
1 GiB, and the stable error code; no output file may be left behind.
"""

from __future__ import annotations

import base64
import collections
import io
import json
import os
import pickle
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.abspath(os.path.join(HERE, "..", "..", "python"))
GIB = 1 << 30
MB16 = 16 * 1000 * 1000

from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.unpickle import budget as B  # noqa: E402

IMPORT = """
import json, sys
from rlarchive.errors import RlarchiveError
from rlarchive import sb2, sb3
mod = sb3 if sys.argv[1] == "sb3" else sb2
try:
    mod.import_archive(sys.argv[2], sys.argv[3])
    print(json.dumps({"code": None}))
except RlarchiveError as e:
    print(json.dumps({"code": e.code, "message": e.message}))
"""

WRAPPER = """
import json, resource, subprocess, sys
r = subprocess.run([sys.executable, "-c", sys.argv[1], *sys.argv[2:]], capture_output=True, text=True)
out = {"returncode": r.returncode, "stderr": r.stderr[-2000:], "maxrss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}
out.update(json.loads(r.stdout) if r.returncode == 0 else {})
print(json.dumps(out))
"""


def _import(kind: str, src: str, out: str) -> dict:
    assert os.path.getsize(src) < MB16
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    r = subprocess.run(
        [sys.executable, "-c", WRAPPER, IMPORT, kind, src, out], capture_output=True, text=True, env=env, timeout=600
    )
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["returncode"] == 0, res["stderr"]
    assert res["maxrss"] < GIB, res
    assert not os.path.exists(out)
    assert [n for n in os.listdir(os.path.dirname(out)) if n.endswith("-tmp") or n.startswith(".")] == []
    return res


def _zip(path: str, members: dict, level: int = 6) -> str:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        for name, content in members.items():
            if callable(content):
                with z.open(name, "w", force_zip64=True) as f:
                    content(f)
            else:
                z.writestr(name, content)
    return path


def _zeros(n_mib: int):
    def write(f):
        chunk = bytes(1 << 20)
        for _ in range(n_mib):
            f.write(chunk)

    return write


@pytest.mark.slow
def test_json_that_parses_into_far_more_objects_than_bytes(tmp_path):
    """60 MB of ``{},`` (a 60 KB deflated member) would make 1.5 GB of dicts: refused before parsing."""
    text = '{"x": [' + "{}," * (20 << 20) + "{}]}"
    src = _zip(str(tmp_path / "m.zip"), {"data": text, "_stable_baselines3_version": "2.9.2"})
    res = _import("sb3", src, str(tmp_path / "out.rlarchive"))
    assert res["code"] == "LIMIT_EXCEEDED" and "data" in res["message"]
    src2 = _zip(
        str(tmp_path / "m2.zip"),
        {"data": '{"gamma": 0.99}', "parameters": b"", "parameter_list": "[" + "[]," * (20 << 20) + "[]]"},
    )
    assert _import("sb2", src2, str(tmp_path / "out2.rlarchive"))["code"] == "LIMIT_EXCEEDED"


def test_one_array_referenced_10000_times_by_a_data_pickle(tmp_path):
    """A 1 MB array in a pickle's memo, referenced 10,000 times: 10 GB once converted, refused on the way."""
    arr = np.zeros(1 << 18, np.float32)
    raw = pickle.dumps([arr] * 10_000, protocol=4)
    assert len(raw) < 2 << 20
    entry = {":type:": "<class 'list'>", ":serialized:": base64.b64encode(raw).decode()}
    src = _zip(
        str(tmp_path / "m.zip"),
        {"data": json.dumps({"gamma": 0.99, "x": entry}), "_stable_baselines3_version": "2.9.2"},
    )
    assert _import("sb3", src, str(tmp_path / "out.rlarchive"))["code"] == "LIMIT_EXCEEDED"


def _pth_with_inflating_records(n_records: int, n_mib: int) -> bytes:
    """A ``.pth`` whose storage records are deflated inside it: a few MB that ``torch.load`` inflates to n_records * n_mib MiB."""
    torch = pytest.importorskip("torch")
    small = io.BytesIO()
    torch.save({"w": torch.zeros(1)}, small)
    template = zipfile.ZipFile(io.BytesIO(small.getvalue()))
    numel = (n_mib << 20) // 4
    keys = [object() for _ in range(n_records)]

    class Tensor:
        def __init__(self, key):
            self.key = key

        def __reduce__(self):
            return (torch._utils._rebuild_tensor_v2, (self.key, 0, (numel,), (1,), False, collections.OrderedDict()))

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return (
                ("storage", torch.FloatStorage, str(keys.index(obj)), "cpu", numel)
                if any(obj is k for k in keys)
                else None
            )

    pk = io.BytesIO()
    Pickler(pk, protocol=2).dump({f"w{i}": Tensor(k) for i, k in enumerate(keys)})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for info in template.infolist():
            name = info.filename
            if name.endswith("/data.pkl"):
                z.writestr(name, pk.getvalue())
            elif name.endswith("/data/0"):
                prefix = name[: -len("0")]
                for i in range(n_records):
                    with z.open(f"{prefix}{i}", "w", force_zip64=True) as f:
                        _zeros(n_mib)(f)
            else:
                z.writestr(name, template.read(name))
    return out.getvalue()


@pytest.mark.slow
def test_a_pth_whose_own_records_are_deflated(tmp_path):
    """torch.load inflates a .pth's inner records: their uncompressed sizes are charged before it runs."""
    pth = _pth_with_inflating_records(4, 256)  # 1 GiB of storages in about 5 MB
    src = _zip(
        str(tmp_path / "m.zip"),
        {"data": '{"gamma": 0.99}', "_stable_baselines3_version": "2.9.2", "policy.pth": pth},
        level=0,
    )
    res = _import("sb3", src, str(tmp_path / "out.rlarchive"))
    assert res["code"] == "LIMIT_EXCEEDED" and "torch.load" in res["message"]


@pytest.mark.slow
def test_an_npy_version_2_header_that_declares_gigabytes(tmp_path):
    """NumPy reads a version 2 header of any declared length before checking it: the length is checked first."""

    def npy(f):
        f.write(b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFF0))
        _zeros(1200)(f)  # 1.2 GiB of header, deflated to about 1 MB

    params = io.BytesIO()
    with zipfile.ZipFile(params, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        with z.open("model/w:0.npy", "w", force_zip64=True) as f:
            npy(f)
    src = _zip(
        str(tmp_path / "m.zip"),
        {"data": '{"gamma": 0.99}', "parameters": params.getvalue(), "parameter_list": '["model/w:0"]'},
        level=0,
    )
    res = _import("sb2", src, str(tmp_path / "out.rlarchive"))
    assert res["code"] == "IMPORT_INVALID" and "header" in res["message"]


def test_the_budget_argument(tmp_path):
    """``budget=`` bytes or an ImportBudget shared by several imports; the default follows the input's size."""
    import sb_fixtures as F

    from rlarchive import sb2

    pytest.importorskip("cloudpickle")
    src = str(tmp_path / "m.zip")
    F.write_sb2_ppo2(src)
    with pytest.raises(RlarchiveError) as e:
        sb2.import_archive(src, str(tmp_path / "a.rlarchive"), budget=1000)
    assert e.value.code == "LIMIT_EXCEEDED" and not os.path.exists(tmp_path / "a.rlarchive")
    shared = B.ImportBudget(64 << 20)
    sb2.import_archive(src, str(tmp_path / "b.rlarchive"), budget=shared)
    first = shared.used
    assert 0 < first < shared.limit
    sb2.import_archive(src, str(tmp_path / "c.rlarchive"), budget=shared)
    assert shared.used == 2 * first
    assert B.budget_for(src).limit == max(B.DEFAULT_IMPORT_BUDGET, B.BUDGET_PER_INPUT_BYTE * os.path.getsize(src))
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate(100 << 20)
    assert B.budget_for(str(big)).limit == B.BUDGET_PER_INPUT_BYTE * (100 << 20)
    assert B.budget_for(str(big), 5).limit == 5
