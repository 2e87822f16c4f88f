"""Stable-Baselines before 2.7: one cloudpickle stream of ``(data, params)`` imported without running it.

The files are built as SB2 wrote them (``cloudpickle.dump((data, params), f)``)
from the stand-in gym and SB2 classes of :mod:`sb_fixtures`; ``params`` is a
list of arrays (older versions) or an ``OrderedDict`` name -> array.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from collections import OrderedDict

import numpy as np
import pytest

cloudpickle = pytest.importorskip("cloudpickle", reason="cloudpickle is needed to build SB2 fixtures")

import sb_fixtures as F  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import sb2  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.unpickle import describe_globals  # noqa: E402
from rlarchive.values import ClassRef, Opaque  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.abspath(os.path.join(HERE, "..", "..", "python"))


def _dump(obj, data_for_modules=None, protocol=None) -> bytes:
    """cloudpickle ``obj`` with the stand-in gym, SB2 and TensorFlow modules importable."""
    mods = dict(F._gym_modules())
    mods.update(F.sb2_modules_for(data_for_modules or {}))
    with F.fake_modules(mods):
        return cloudpickle.dumps(obj, protocol=protocol)


def _write(path, data, params, protocol=None) -> str:
    with open(path, "wb") as f:
        f.write(_dump((data, params), data, protocol))
    return str(path)


def _fn_after_spaces(frac):
    return 1e-3 * frac


@pytest.mark.parametrize("form", ["list", "ordered_dict"])
@pytest.mark.parametrize("protocol", [None, 2])
def test_first_format_imports(tmp_path, form, protocol):
    data = F.sb2_ppo2_data()
    named = F.sb2_ppo2_params()
    params = list(named.values()) if form == "list" else named
    src = _write(tmp_path / "model.pkl", data, params, protocol)
    arc = str(tmp_path / "model.rlarchive")

    report = sb2.import_archive(src, arc)
    names = list(named) if form == "ordered_dict" else [f"param_{i:04d}" for i in range(len(named))]
    assert report.source == "stable-baselines" and report.algorithm == "PPO2"
    assert report.opaque == []
    assert report.converted == list(data)
    assert report.tensor_groups == {"policy": len(named)}
    assert rlarchive.validate(arc)["valid"]
    with rlarchive.open(arc, spaces="neutral") as ar:
        d = ar.data
        F.assert_ppo2_cartpole_values(d)
        for key in ("gamma", "n_steps", "learning_rate", "cliprange_vf", "_vectorize_action", "n_cpu_tf_sess"):
            assert d[key] == data[key] and type(d[key]) is type(data[key]), key
        assert json.loads(ar.metadata["sb2.parameter_list"]) == names
        assert ar.metadata["sb2.algorithm"] == "PPO2" and ar.metadata["source"] == "stable-baselines"
        t = ar.tensors("policy")
        assert list(t) == names or set(t) == set(names)
        for name, arr in zip(names, named.values()):
            assert t[name].dtype == arr.dtype and t[name].shape == arr.shape
            assert t[name].tobytes() == arr.tobytes(), name
    assert "gym" not in sys.modules and "stable_baselines" not in sys.modules


def test_odd_arrays_are_stored_little_endian_in_c_order(tmp_path):
    data = {"gamma": 0.9}
    fortran = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    big = np.arange(5, dtype=">i4")
    src = _write(
        tmp_path / "m.pkl",
        data,
        OrderedDict([("a", fortran), ("b", big), ("c", np.array(2.5, np.float32)), ("d", np.float32(-1.5))]),
    )
    arc = str(tmp_path / "m.rlarchive")
    report = sb2.import_archive(src, arc, algorithm="A2C")
    assert report.algorithm == "A2C" and report.tensor_groups == {"policy": 4}
    with rlarchive.open(arc) as ar:
        t = ar.tensors("policy")
        assert t["a"].tobytes() == np.ascontiguousarray(fortran).tobytes() and t["a"].shape == (3, 4)
        assert t["b"].dtype == np.dtype("<i4") and t["b"].tolist() == [0, 1, 2, 3, 4]
        assert t["c"].shape == () and t["c"].dtype == np.float32 and float(t["c"]) == 2.5
        assert t["d"].shape == () and t["d"].dtype == np.float32 and float(t["d"]) == -1.5


def test_unconvertible_values_stay_opaque_and_rebuild_alone(tmp_path):
    data = F.sb2_ppo2_data()
    data["cliprange"] = lambda frac: 0.2 * frac  # a function pickled by value
    data["learning_rate"] = _fn_after_spaces  # importable: pickled by reference, so a class reference
    data["tags"] = {"a", "b"}  # a set has no neutral form
    data["noise"] = F.RunsCommand("true")  # a call of a name outside the allow-list, never made
    # values after the spaces and the policy: each opaque pickle must still make only its own value
    order = ["gamma", "policy", "observation_space", "action_space", "cliprange", "learning_rate", "tags", "noise"]
    data = {k: data[k] for k in order}
    src = _write(tmp_path / "m.pkl", data, [np.ones((2, 2), np.float32)])
    arc = str(tmp_path / "m.rlarchive")

    report = sb2.import_archive(src, arc)
    assert report.converted == ["gamma", "policy", "observation_space", "action_space", "learning_rate"]
    assert report.opaque_keys == ["cliprange", "tags", "noise"]
    types = {o.key: o.type for o in report.opaque}
    assert types["cliprange"] == "function" and types["tags"] == "set"
    assert types["noise"] in ("os.system", "posix.system")
    assert "never run" in {o.key: o.reason for o in report.opaque}["cliprange"]
    with rlarchive.open(arc, spaces="neutral") as ar:
        d = ar.data
        assert all(isinstance(d[k], Opaque) for k in report.opaque_keys)
        assert d["observation_space"].shape == (4,)
        assert d["learning_rate"] == ClassRef(__name__, "_fn_after_spaces")
        # rebuilt on purpose (trusted), each opaque value is its own value and nothing else
        with F.fake_modules({**F._gym_modules(), **F.sb2_modules_for(F.sb2_ppo2_data())}):
            assert d["cliprange"].unpickle(trusted=True)(0.5) == pytest.approx(0.1)
            assert d["tags"].unpickle(trusted=True) == {"a", "b"}
        for k in report.opaque_keys:
            assert b"\x95" not in d[k].data[:3]  # no FRAME: the frames of the stream are dropped
        with pytest.raises(RlarchiveError) as e:
            d["noise"].unpickle()
        assert e.value.code == "PICKLE_NOT_ALLOWED"


def test_cli_imports_the_first_format(tmp_path):
    src = _write(tmp_path / "m.pkl", F.sb2_ppo2_data(), F.sb2_ppo2_params())
    out = tmp_path / "m.rlarchive"
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "import-sb2", src, str(out), "--json"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["algorithm"] == "PPO2" and rep["tensor_groups"] == {"policy": 14} and rep["opaque"] == []
    assert rlarchive.validate(str(out))["valid"]


# -- hostile and malformed files ------------------------------------------------------


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _huge_declared() -> bytes:
    """A model whose one parameter declares 10**12 float64 elements over 8 bytes of data."""
    raw = pickle.dumps(({"gamma": 0.9}, [np.zeros(1)]), protocol=2)
    shape = b"K\x01\x85"  # the state tuple (version 1, shape (1,), ...)
    assert raw.count(b"K\x01" + shape) == 1
    big = pickle.encode_long(10**12)
    return raw.replace(b"K\x01" + shape, b"K\x01\x8a" + bytes([len(big)]) + big + b"\x85")


def _hostile_files(tmp_path, marker: str) -> dict:
    """name -> (path, budget or None)."""
    good = _dump(({"gamma": 0.9}, [np.zeros(3, np.float32)]))
    files = {
        # the value of a data key is a REDUCE of os.system: recorded, never called
        "reduce_in_data": (({"gamma": 0.9, "x": F.RunsCommand(f"touch {marker}")}, [np.zeros(2, np.float32)]), None),
        # the whole file is such a call
        "reduce_at_top": (F.RunsCommand(f"touch {marker}"), None),
        # a global whose module is not an identifier path
        "bad_global": (b"\x80\x02" + _global("os;x", "system") + b"(X\x04\x00\x00\x00trueq\x00tR.", None),
        # builtins.exec and eval are names like any other: recorded, never called
        "exec_param": (
            b"\x80\x02}q\x00]q\x01" + _global("builtins", "exec") + b"X\x0b\x00\x00\x00print('hi')\x85Ra\x86q\x02.",
            None,
        ),
        # an array declaring 10**12 float64 elements over 8 bytes of data
        "huge_declared": (_huge_declared(), None),
        # a true 1 MiB array: the file fits the budget, the array built from it does not
        "over_budget": (({"gamma": 0.9}, [np.zeros(1 << 17, np.float64)]), (1 << 20) + (1 << 19)),
        "three_tuple": (({"gamma": 0.9}, [], None), None),
        "list_top": (([{"gamma": 0.9}, []]), None),
        "data_not_dict": ((["gamma"], []), None),
        "int_keys": (({1: 0.9}, []), None),
        "params_not_arrays": (({"gamma": 0.9}, ["w"]), None),
        "params_a_set": (({"gamma": 0.9}, {1, 2}), None),
        "truncated": (good[: len(good) // 2], None),
        "empty": (b"", None),
        "text": (b"hello, not a model\n", None),
    }
    out = {}
    for name, (content, budget) in files.items():
        raw = content if isinstance(content, bytes) else _dump(content)
        path = tmp_path / f"{name}.pkl"
        path.write_bytes(raw)
        out[name] = (str(path), budget)
    return out


EXPECTED = {
    "reduce_in_data": None,
    "reduce_at_top": "IMPORT_INVALID",
    "bad_global": "IMPORT_INVALID",
    "exec_param": "VALUE_UNSUPPORTED",
    "huge_declared": "IMPORT_INVALID",
    "over_budget": "LIMIT_EXCEEDED",
    "three_tuple": "IMPORT_INVALID",
    "list_top": "IMPORT_INVALID",
    "data_not_dict": "IMPORT_INVALID",
    "int_keys": "IMPORT_INVALID",
    "params_not_arrays": "VALUE_UNSUPPORTED",
    "params_a_set": "IMPORT_INVALID",
    "truncated": "IMPORT_INVALID",
    "empty": "IMPORT_INVALID",
    "text": "IMPORT_INVALID",
}

CHILD = textwrap.dedent(
    """
    import json, os, sys
    from rlarchive.errors import RlarchiveError
    from rlarchive import sb2
    cases = json.loads(sys.argv[1])
    events, active = [], [False]
    WATCHED = ("import", "exec", "compile", "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork")
    def hook(event, args):
        if active[0] and (event in WATCHED or event.startswith("os.system")):
            events.append([event, str(args[0])[:120] if args else ""])
    sys.addaudithook(hook)
    results = {}
    for name, (path, budget) in cases.items():
        events.clear()
        before = set(sys.modules)
        out = path + ".rlarchive"
        active[0] = True
        try:
            sb2.import_archive(path, out, budget=budget)
            code, message = None, None
        except RlarchiveError as e:
            code, message = e.code, str(e)
        except BaseException as e:
            code, message = "crash", type(e).__name__ + ": " + str(e)[:200]
        active[0] = False
        new = sorted(m for m in set(sys.modules) - before if not m.startswith(("numpy", "encodings", "rlarchive")))
        results[name] = {"code": code, "message": message, "events": list(events), "new": new, "output": os.path.exists(out)}
    # the control: the hook does see an import and a command
    events.clear()
    active[0] = True
    import colorsys
    os.system("true")
    active[0] = False
    results["control"] = {"events": list(events)}
    print(json.dumps(results))
    """
)


def test_hostile_first_format_files_run_nothing(tmp_path):
    marker = str(tmp_path / "marker")
    cases = _hostile_files(tmp_path, marker)
    # one ordinary import first, so that the package's own lazy imports happen before the hook
    warm = _write(tmp_path / "warm.pkl", {"gamma": 0.9, "f": _fn_after_spaces}, [np.zeros(2, np.float32)])
    sb2.import_archive(warm, str(tmp_path / "warm.rlarchive"))
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = "import rlarchive.writer, rlarchive.unpickle.recorded, rlarchive.unpickle.pickler, pickletools\n" + CHILD
    warm_call = f"from rlarchive import sb2 as _s; _s.import_archive({warm!r}, {warm!r} + '.2.rlarchive')\n"
    r = subprocess.run(
        [sys.executable, "-c", warm_call + code, json.dumps(cases)], capture_output=True, text=True, env=env
    )
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)
    for name, expected in EXPECTED.items():
        got = results[name]
        assert got["code"] == expected, (name, got)
        assert got["events"] == [] and got["new"] == [], (name, got)
        assert got["output"] == (expected is None), (name, got)
    assert not os.path.exists(marker)
    assert "the model file" not in results["over_budget"]["message"], results[
        "over_budget"
    ]  # the array's bytes went over
    seen = [e[0] for e in results["control"]["events"]]
    assert "import" in seen and "os.system" in seen, results["control"]


def test_reduce_in_data_is_kept_as_the_recorded_call(tmp_path):
    marker = str(tmp_path / "marker")
    src = _write(tmp_path / "m.pkl", {"gamma": 0.9, "x": F.RunsCommand(f"touch {marker}")}, [np.zeros(2, np.float32)])
    arc = str(tmp_path / "m.rlarchive")
    report = sb2.import_archive(src, arc)
    assert report.opaque_keys == ["x"]
    assert not os.path.exists(marker)
    with rlarchive.open(arc) as ar:
        assert describe_globals(ar.data["x"].data)[-1][1] == "system"


def test_refusals_name_the_problem(tmp_path):
    p = tmp_path / "t.pkl"
    p.write_bytes(pickle.dumps(({"gamma": 0.9}, [], None), protocol=2))
    with pytest.raises(RlarchiveError) as e:
        sb2.import_archive(str(p), str(tmp_path / "o.rlarchive"))
    assert (
        e.value.code == "IMPORT_INVALID" and "(data dict, parameters)" in str(e.value) and "tuple of 3" in str(e.value)
    )
    p.write_bytes(b"\x80\x04\x95")
    with pytest.raises(RlarchiveError) as e:
        sb2.import_archive(str(p), str(tmp_path / "o.rlarchive"))
    assert e.value.code == "IMPORT_INVALID" and "neither a ZIP file nor a readable pickle" in str(e.value)
    assert not (tmp_path / "o.rlarchive").exists()
