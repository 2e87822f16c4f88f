"""Stable-Baselines (SB2) import: fixtures in SB2's documented zip layout, old-gym pickles.

SB2 needs TensorFlow 1 and cannot be installed on current Pythons; the
fixtures are built by :mod:`sb_fixtures` (cloudpickle of stand-in classes named
as gym's and SB2's). Only cloudpickle and NumPy are needed.
"""

from __future__ import annotations

import base64
import io
import json
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

cloudpickle = pytest.importorskip("cloudpickle", reason="cloudpickle is needed to build SB2 fixtures")

import sb_fixtures as F  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import (
    sb2,  # noqa: E402
    spaces,  # noqa: E402
)
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.values import ClassRef, Opaque  # noqa: E402


def _data_entry(path, key):
    return json.loads(zipfile.ZipFile(path).read("data"))[key]


def test_ppo2_import(tmp_path):
    src = str(tmp_path / "ppo2.zip")
    params = F.write_sb2_ppo2(src)
    # the pickles name the old gym package and numpy's RandomState, as real SB2 files do
    raw = base64.b64decode(_data_entry(src, "observation_space")[":serialized:"])
    assert b"gym.spaces.box" in raw and b"gymnasium" not in raw and b"__randomstate_ctor" in raw
    assert _data_entry(src, "observation_space")[":type:"] == "<class 'gym.spaces.box.Box'>"
    assert "gym" not in sys.modules and "stable_baselines" not in sys.modules

    arc = str(tmp_path / "ppo2.rlarchive")
    report = sb2.import_archive(src, arc)
    assert report.source == "stable-baselines"
    assert report.algorithm == "PPO2"
    assert report.opaque == []
    assert set(report.converted) == {"policy", "observation_space", "action_space", "policy_kwargs"}
    assert report.tensor_groups == {"policy": len(params)}
    v = rlarchive.validate(arc)
    assert v["valid"], v
    with rlarchive.open(arc, spaces="neutral") as ar:
        d = ar.data
        F.assert_ppo2_cartpole_values(d)
        assert d["learning_rate"] == 2.5e-4 and d["cliprange_vf"] is None and d["n_cpu_tf_sess"] is None
        t = ar.tensors("policy")
        assert set(t) == set(params)
        for name, arr in params.items():
            assert t[name].dtype == arr.dtype and np.array_equal(t[name], arr), name
        assert json.loads(ar.metadata["sb2.parameter_list"]) == list(params)
        assert ar.metadata["sb2.algorithm"] == "PPO2"
        assert ar.metadata["source"] == "stable-baselines"


def test_callable_learning_rate_stays_opaque(tmp_path):
    src = str(tmp_path / "m.zip")
    F.write_sb2_ppo2(src, learning_rate=lambda frac: 2.5e-4 * frac)
    arc = str(tmp_path / "m.rlarchive")
    report = sb2.import_archive(src, arc)
    assert report.opaque_keys == ["learning_rate"]
    assert report.opaque[0].type == "function"
    assert "never run" in report.opaque[0].reason
    with rlarchive.open(arc, spaces="neutral") as ar:
        op = ar.data["learning_rate"]
        assert isinstance(op, Opaque)
        assert op.data == base64.b64decode(_data_entry(src, "learning_rate")[":serialized:"])


@pytest.mark.parametrize("style", ["0.17", "0.21"])
def test_old_gym_spaces(tmp_path, style):
    obs = F.gym_dict(
        {
            "image": F.gym_box(0, 255, (4, 4, 1), np.uint8, style=style),
            "choice": F.gym_multi_discrete([3, 4], style=style),
            "bits": F.gym_multi_binary(5, style=style),
            "pair": F.gym_tuple(
                [F.gym_discrete(3, style=style), F.gym_box(-1.0, 1.0, (2,), np.float64, style=style)], style=style
            ),
        },
        style=style,
    )
    extra = {
        "observation_space": obs,
        "action_space": F.gym_multi_binary([2, 3], style=style),
        "policy": F.sb2_policy_class("stable_baselines.deepq.policies", "MlpPolicy"),
    }
    src = str(tmp_path / "m.zip")
    F.write_sb2_ppo2(src, style=style, extra=extra)
    arc = str(tmp_path / "m.rlarchive")
    report = sb2.import_archive(src, arc)
    assert report.opaque == [] and report.algorithm == "DQN"
    assert rlarchive.validate(arc)["valid"]
    with rlarchive.open(arc, spaces="neutral") as ar:
        o = ar.data["observation_space"]
        assert [k for k, _ in o.spaces] == ["image", "choice", "bits", "pair"]
        got = dict(o.spaces)
        assert got["image"] == spaces.Box(
            np.zeros((4, 4, 1), np.uint8), np.full((4, 4, 1), 255, np.uint8), (4, 4, 1), "U8"
        )
        assert got["choice"] == spaces.MultiDiscrete(np.array([3, 4], np.int64), np.zeros(2, np.int64), "I64")
        assert got["bits"] == spaces.MultiBinary(5)
        assert got["pair"] == spaces.Tuple(
            (spaces.Discrete(3, 0, "I64"), spaces.Box(-np.ones(2), np.ones(2), (2,), "F64"))
        )
        assert ar.data["action_space"] == spaces.MultiBinary((2, 3))


def test_malicious_pickle_in_sb2_data(tmp_path):
    marker = tmp_path / "sb2-marker"
    src = str(tmp_path / "m.zip")
    F.write_sb2_ppo2(
        src, extra={"observation_space": F.RunsCommand(f"touch {marker}"), "note": F.WritesMarker(str(marker))}
    )
    arc = str(tmp_path / "m.rlarchive")
    report = sb2.import_archive(src, arc)
    assert not marker.exists()
    assert set(report.opaque_keys) == {"observation_space", "note"}
    assert rlarchive.validate(arc)["valid"]


def test_not_a_zip_and_bad_parameters(tmp_path):
    pkl = tmp_path / "old.pkl"
    pkl.write_bytes(cloudpickle.dumps({"data": 1}))
    with pytest.raises(RlarchiveError) as e:
        sb2.import_archive(str(pkl), str(tmp_path / "o.rlarchive"))
    assert (
        e.value.code == "IMPORT_INVALID"
        and "not a stable-baselines model" in e.value.message
        and "found a dict" in e.value.message
    )

    data_json = F.sb_data_json({"gamma": 0.99})
    # an object array would need pickle: refused
    bad = str(tmp_path / "objarr.zip")
    buf = io.BytesIO()
    np.savez(buf, **{"model/w:0": np.array([None, 1], dtype=object)})
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("data", data_json)
        z.writestr("parameters", buf.getvalue())
        z.writestr("parameter_list", json.dumps(["model/w:0"]))
    with pytest.raises(RlarchiveError) as e:
        sb2.import_archive(bad, str(tmp_path / "o.rlarchive"))
    assert e.value.code == "VALUE_UNSUPPORTED"

    # a listed parameter that is missing
    missing = str(tmp_path / "missing.zip")
    F.write_sb2_zip(missing, data_json, OrderedDict({"model/a:0": np.zeros(2, np.float32)}))
    with zipfile.ZipFile(missing) as z:
        items = {n: z.read(n) for n in z.namelist()}
    items["parameter_list"] = json.dumps(["model/a:0", "model/b:0"]).encode()
    with zipfile.ZipFile(missing, "w") as z:
        for n, b in items.items():
            z.writestr(n, b)
    with pytest.raises(RlarchiveError) as e:
        sb2.import_archive(missing, str(tmp_path / "o.rlarchive"))
    assert e.value.code == "IMPORT_INVALID"


def test_params_only_and_inference():
    assert sb2.infer_algorithm({"policy": ClassRef("stable_baselines.sac.policies", "MlpPolicy")}) == "SAC"
    assert sb2.infer_algorithm({"alpha": 0.99, "epsilon": 1e-5, "lr_schedule": "constant", "n_steps": 5}) == "A2C"
    assert sb2.infer_algorithm({"gamma": 0.9}) is None
