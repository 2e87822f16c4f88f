"""SB2 ``parameters``: every .npy header is checked and its size charged to the import budget before reading.

Each hostile input is imported in a child process whose peak memory is measured.
"""

import io
import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

pytest.importorskip("cloudpickle", reason="cloudpickle is needed to build SB2 fixtures")

import sb_fixtures as F  # noqa: E402

GIB = 1 << 30


def _npy_header(shape, descr="<f4") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def _sb2_zip(path, arrays: dict, compress: bool) -> None:
    """An SB2 zip whose ``parameters`` npz holds the given .npy members.

    A member is raw bytes, or (header, n) for a header followed by n zero bytes,
    streamed so that the test itself never holds them.
    """
    npz = io.BytesIO()
    with zipfile.ZipFile(npz, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as z:
        for name, raw in arrays.items():
            if isinstance(raw, bytes):
                z.writestr(name + ".npy", raw)
                continue
            header, n = raw
            with z.open(name + ".npy", "w", force_zip64=True) as f:
                f.write(header)
                zeros = bytes(1 << 20)
                for _ in range(n >> 20):
                    f.write(zeros)
    data = F.sb2_ppo2_data()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("data", F.sb_data_json(data, F.sb2_modules_for(data)))
        z.writestr("parameters", npz.getvalue())
        z.writestr("parameter_list", json.dumps(list(arrays)))


def _import_in_child(src, out):
    code = (
        "import json, resource, sys\n"
        "from rlarchive.errors import RlarchiveError\n"
        "from rlarchive import sb2\n"
        "try:\n"
        "    sb2.import_archive(sys.argv[1], sys.argv[2]); code = None\n"
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


def test_a_header_declaring_2_to_the_40_elements_is_refused_before_allocating(tmp_path):
    src, out = str(tmp_path / "m.zip"), str(tmp_path / "m.rlarchive")
    _sb2_zip(src, {"model/pi/w:0": _npy_header((1 << 20, 1 << 20)) + b"\0" * 64}, compress=False)
    res = _import_in_child(src, out)
    assert res["code"] == "LIMIT_EXCEEDED" and res["rss"] < GIB
    assert not os.path.exists(out)


@pytest.mark.slow
def test_many_arrays_of_large_declared_size_share_one_budget(tmp_path):
    # 12 arrays of 32 MiB each, deflated to almost nothing: 384 MiB declared (above the 256 MiB default) in a file of a few KB
    src, out = str(tmp_path / "m.zip"), str(tmp_path / "m.rlarchive")
    arrays = {f"model/l{i}/w:0": (_npy_header((8 << 20,)), 32 << 20) for i in range(12)}
    _sb2_zip(src, arrays, compress=True)
    assert os.path.getsize(src) < 16 << 20
    res = _import_in_child(src, out)
    assert res["code"] == "LIMIT_EXCEEDED" and res["rss"] < GIB
    assert not os.path.exists(out)


def test_a_truncated_array_and_an_object_array_get_stable_codes(tmp_path):
    src, out = str(tmp_path / "m.zip"), str(tmp_path / "m.rlarchive")
    _sb2_zip(src, {"model/pi/w:0": _npy_header((100,)) + b"\0" * 10}, compress=False)
    assert _import_in_child(src, out)["code"] == "IMPORT_INVALID"
    _sb2_zip(src, {"model/pi/w:0": _npy_header((1,), descr="|O") + b"\0" * 8}, compress=False)
    assert _import_in_child(src, out)["code"] == "VALUE_UNSUPPORTED"
    assert not os.path.exists(out)


def test_a_big_endian_array_is_imported_in_little_endian_order(tmp_path):
    src, out = str(tmp_path / "m.zip"), str(tmp_path / "m.rlarchive")
    a = np.arange(6, dtype=">f4").reshape(2, 3)
    _sb2_zip(src, {"model/pi/w:0": _npy_header((2, 3), descr=">f4") + a.tobytes()}, compress=True)
    assert _import_in_child(src, out)["code"] is None
    import rlarchive

    with rlarchive.open(out) as ar:
        w = ar.tensors("policy")["model/pi/w:0"]
        assert w.dtype == np.float32 and np.array_equal(w, a)
