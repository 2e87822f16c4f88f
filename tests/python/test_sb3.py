"""Stable-Baselines3 interoperability: import, validate, export, load, with real tiny models.

Every test here trains or saves real SB3 models; the module is skipped when
stable_baselines3 (or gymnasium / torch / cloudpickle, its dependencies) is not
importable.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import subprocess
import sys
import types
import warnings
import zipfile
from collections import deque

import numpy as np
import pytest

try:
    import cloudpickle
    import gymnasium as gym
    import stable_baselines3
    import torch
    from stable_baselines3 import A2C, DDPG, DQN, PPO, SAC, TD3
    from stable_baselines3.common.noise import NormalActionNoise
    from stable_baselines3.common.save_util import load_from_zip_file

    HAVE_SB3 = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_SB3 = False

pytestmark = pytest.mark.skipif(
    not HAVE_SB3, reason="stable_baselines3 (with torch, gymnasium, cloudpickle) is not importable"
)

import sb_fixtures as F  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive import (  # noqa: E402
    schedules,
    spaces,
    unpickle,  # noqa: E402
)
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.values import ClassRef, Opaque  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "..", "python")


@pytest.fixture(autouse=True)
def _quiet_and_small():
    torch.set_num_threads(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def lr_lambda(progress):
    return 3e-4 * progress


# ---------------------------------------------------------------------------
# models: (algorithm class, builder, data keys expected to stay opaque)
# ---------------------------------------------------------------------------


def _ppo_custom():
    m = PPO(
        "MlpPolicy",
        "CartPole-v1",
        n_steps=16,
        batch_size=16,
        n_epochs=1,
        learning_rate=lambda p: 3e-4 * p,
        policy_kwargs=dict(net_arch=dict(pi=[16, 16], vf=[8]), activation_fn=torch.nn.ReLU),
        seed=1,
        device="cpu",
    )
    return m.learn(32)


def _a2c_pendulum():
    return A2C("MlpPolicy", "Pendulum-v1", n_steps=8, policy_kwargs=dict(net_arch=[8]), seed=1, device="cpu").learn(16)


def _dqn():
    return DQN(
        "MlpPolicy",
        "CartPole-v1",
        learning_starts=8,
        buffer_size=64,
        batch_size=8,
        target_update_interval=8,
        train_freq=4,
        policy_kwargs=dict(net_arch=[8]),
        seed=1,
        device="cpu",
    ).learn(32)


def _sac():
    return SAC(
        "MlpPolicy",
        "Pendulum-v1",
        learning_starts=8,
        buffer_size=64,
        batch_size=8,
        policy_kwargs=dict(net_arch=[8]),
        seed=1,
        device="cpu",
    ).learn(24)


def _td3_noise():
    noise = NormalActionNoise(mean=np.zeros(1), sigma=0.1 * np.ones(1))
    return TD3(
        "MlpPolicy",
        "Pendulum-v1",
        learning_starts=8,
        buffer_size=64,
        batch_size=8,
        action_noise=noise,
        policy_kwargs=dict(net_arch=[8]),
        seed=1,
        device="cpu",
    ).learn(24)


def _ddpg():
    return DDPG(
        "MlpPolicy",
        "Pendulum-v1",
        learning_starts=8,
        buffer_size=64,
        batch_size=8,
        policy_kwargs=dict(net_arch=[8]),
        seed=1,
        device="cpu",
    ).learn(24)


def _ppo_multi():
    env = F.tiny_env(gym.spaces.MultiBinary(6), gym.spaces.MultiDiscrete([3, 2]))
    return PPO(
        "MlpPolicy", env, n_steps=16, batch_size=16, n_epochs=1, policy_kwargs=dict(net_arch=[8]), seed=1, device="cpu"
    ).learn(32)


def _a2c_multibinary_action():
    env = F.tiny_env(gym.spaces.Box(-1, 1, (3,), np.float32), gym.spaces.MultiBinary(3))
    return A2C(
        "MlpPolicy", env, n_steps=8, policy_kwargs=dict(net_arch=[8], activation_fn=torch.nn.Tanh), seed=1, device="cpu"
    ).learn(16)


def _ppo_dict():
    obs = gym.spaces.Dict(
        {
            "pos": gym.spaces.Box(-1, 1, (2,), np.float32),
            "flag": gym.spaces.Discrete(3),
            "bits": gym.spaces.MultiBinary(2),
        }
    )
    env = F.tiny_env(obs, gym.spaces.Discrete(2))
    return PPO(
        "MultiInputPolicy",
        env,
        n_steps=16,
        batch_size=16,
        n_epochs=1,
        policy_kwargs=dict(net_arch=[8]),
        seed=1,
        device="cpu",
    ).learn(32)


def _sac_dict():
    obs = gym.spaces.Dict({"a": gym.spaces.Box(-1, 1, (2,), np.float32), "b": gym.spaces.MultiDiscrete([2, 3])})
    env = F.tiny_env(obs, gym.spaces.Box(-1, 1, (2,), np.float32))
    return SAC(
        "MultiInputPolicy",
        env,
        learning_starts=8,
        buffer_size=64,
        batch_size=8,
        policy_kwargs=dict(net_arch=[8]),
        seed=1,
        device="cpu",
    ).learn(16)


def _ppo_cnn():
    env = F.tiny_env(gym.spaces.Box(0, 255, (36, 36, 1), np.uint8), gym.spaces.Discrete(3))
    return PPO(
        "CnnPolicy",
        env,
        n_steps=8,
        batch_size=8,
        n_epochs=1,
        policy_kwargs=dict(features_extractor_kwargs=dict(features_dim=16), net_arch=[8]),
        seed=1,
        device="cpu",
    ).learn(8)


MODELS = (
    {
        "ppo_custom_netarch_relu_lambda_lr": (PPO, _ppo_custom, {"learning_rate", "lr_schedule"}),
        "a2c_box_action": (A2C, _a2c_pendulum, set()),
        "dqn": (DQN, _dqn, set()),
        "sac": (SAC, _sac, set()),
        "td3_action_noise": (TD3, _td3_noise, {"action_noise"}),
        "ddpg": (DDPG, _ddpg, set()),
        "ppo_multibinary_obs_multidiscrete_action": (PPO, _ppo_multi, set()),
        "a2c_multibinary_action_tanh": (A2C, _a2c_multibinary_action, set()),
        "ppo_dict_obs": (PPO, _ppo_dict, set()),
        "sac_dict_obs": (SAC, _sac_dict, set()),
        "ppo_cnn_image": (PPO, _ppo_cnn, set()),
    }
    if HAVE_SB3
    else {}
)


# ---------------------------------------------------------------------------
# comparisons
# ---------------------------------------------------------------------------


def fixed_observations(space, n=4):
    space = pickle.loads(pickle.dumps(space))
    space.seed(1234)
    return [space.sample() for _ in range(n)]


def assert_same_parameters(m0, m1):
    p0, p1 = m0.get_parameters(), m1.get_parameters()
    assert p0.keys() == p1.keys()
    for name in p0:
        a, b = p0[name], p1[name]
        if "state" in a and "param_groups" in a:
            assert a["param_groups"] == b["param_groups"], name
            assert a["state"].keys() == b["state"].keys(), name
            for i in a["state"]:
                assert a["state"][i].keys() == b["state"][i].keys()
                for k in a["state"][i]:
                    x, y = a["state"][i][k], b["state"][i][k]
                    assert x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y), (name, i, k)
        else:
            assert a.keys() == b.keys(), name
            for k in a:
                assert a[k].dtype == b[k].dtype and torch.equal(a[k], b[k]), (name, k)
    _, var_names = m0._get_torch_save_params()
    for v in var_names:
        x = rsb3_recursive_getattr(m0, v)
        y = rsb3_recursive_getattr(m1, v)
        assert torch.equal(x, y), v


def rsb3_recursive_getattr(obj, attr):
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def assert_same_predictions(m0, m1):
    for obs in fixed_observations(m0.observation_space):
        a0, _ = m0.predict(obs, deterministic=True)
        a1, _ = m1.predict(obs, deterministic=True)
        assert np.array_equal(a0, a1)


def _callable_values(f):
    return [float(f(p)) for p in (1.0, 0.75, 0.5, 0.05, 0.0)]


def assert_same_data_value(key, a, b):
    if isinstance(a, gym.spaces.Space):
        assert type(a) is type(b) and a == b, key
        if isinstance(a, gym.spaces.Box):
            assert a.dtype == b.dtype and np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high)
    elif isinstance(a, deque):
        assert isinstance(b, deque) and a.maxlen == b.maxlen and list(a) == list(b), key
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b), key
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), key
        for k in a:
            assert_same_data_value(f"{key}/{k}", a[k], b[k])
    elif isinstance(a, type):
        assert a is b, key
    elif isinstance(a, types.FunctionType) or type(a).__name__.endswith("Schedule"):
        assert type(a) is type(b), key
        assert _callable_values(a) == _callable_values(b), key
    elif hasattr(a, "__dict__"):
        assert type(a) is type(b), key
        assert_same_data_value(key, vars(a), vars(b))
    elif isinstance(a, tuple):
        assert type(a) is type(b) and len(a) == len(b), key
        for x, y in zip(a, b):
            assert_same_data_value(key, x, y)
    else:
        assert type(a) is type(b) and a == b, (key, a, b)


# ---------------------------------------------------------------------------
# the round trip
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MODELS))
def test_round_trip(name, tmp_path):
    algo, build, expect_opaque = MODELS[name]
    model = build()
    src = str(tmp_path / "model.zip")
    model.save(src)
    arc = str(tmp_path / "model.rlarchive")

    report = rsb3.import_archive(src, arc)
    assert set(report.opaque_keys) == expect_opaque, str(report)
    assert report.algorithm == algo.__name__
    assert report.library_version == stable_baselines3.__version__
    assert "policy" in report.tensor_groups
    v = rlarchive.validate(arc)
    assert v["valid"], v

    # the archive holds neutral values, and opaque ones only where expected
    with rlarchive.open(arc, spaces="neutral") as ar:
        assert isinstance(ar.data["observation_space"], (spaces.Box, spaces.Discrete, spaces.MultiBinary, spaces.Dict))
        assert isinstance(ar.data["policy_class"], ClassRef)
        assert ar.metadata["sb3.version"] == stable_baselines3.__version__
        assert "sb3.system_info" in ar.metadata
        assert {k for k, x in ar.data.items() if isinstance(x, Opaque)} == expect_opaque
        if "lr_schedule" not in expect_opaque:
            assert isinstance(ar.data["lr_schedule"], schedules.Constant)

    # export and load with SB3's own load
    out = str(tmp_path / "exported.zip")
    rsb3.export_archive(arc, out)
    original = algo.load(src, device="cpu")
    exported = algo.load(out, device="cpu")
    assert_same_parameters(original, exported)
    assert_same_predictions(original, exported)
    d0, _, _ = load_from_zip_file(src, device="cpu")
    d1, _, _ = load_from_zip_file(out, device="cpu")
    assert list(d0) == list(d1)
    for k in d0:
        assert_same_data_value(k, d0[k], d1[k])
    with zipfile.ZipFile(src) as z0, zipfile.ZipFile(out) as z1:
        assert sorted(z0.namelist()) == sorted(z1.namelist())
        assert z0.read("_stable_baselines3_version") == z1.read("_stable_baselines3_version")

    # load straight from the rlarchive
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        direct = rsb3.load(arc, device="cpu")
    left_out = [w for w in caught if issubclass(w.category, rsb3.LoadWarning)]
    assert len(left_out) == (1 if expect_opaque else 0)
    assert type(direct) is algo
    assert_same_parameters(original, direct)
    assert_same_predictions(original, direct)
    if expect_opaque:
        with pytest.raises(RlarchiveError) as e:
            rsb3.load(arc, opaque="error")
        assert e.value.code == "PICKLE_NOT_ALLOWED"

    # importing the exported zip gives the same archive content
    arc2 = str(tmp_path / "again.rlarchive")
    rsb3.import_archive(out, arc2)
    with rlarchive.open(arc, spaces="neutral") as a1, rlarchive.open(arc2, spaces="neutral") as a2:
        assert a1.dump() == a2.dump()


def test_lambda_learning_rate_with_custom_objects(tmp_path):
    model = _ppo_custom()
    src = str(tmp_path / "m.zip")
    model.save(src)
    arc = str(tmp_path / "m.rlarchive")
    report = rsb3.import_archive(src, arc)
    kinds = {o.key: o.type for o in report.opaque}
    assert kinds == {"learning_rate": "function", "lr_schedule": "stable_baselines3.common.utils.FloatSchedule"}
    loaded = rsb3.load(arc, custom_objects={"learning_rate": lr_lambda, "lr_schedule": lr_lambda})
    assert loaded.learning_rate is lr_lambda
    trusted = rsb3.load(arc, opaque="unpickle")
    assert trusted.lr_schedule(0.5) == pytest.approx(1.5e-4)


def test_policy_kwargs_and_classes(tmp_path):
    model = _a2c_multibinary_action()
    src = str(tmp_path / "m.zip")
    model.save(src)
    arc = str(tmp_path / "m.rlarchive")
    rsb3.import_archive(src, arc)
    with rlarchive.open(arc, spaces="neutral") as ar:
        pk = ar.data["policy_kwargs"]
        assert pk["activation_fn"] == ClassRef("torch.nn.modules.activation", "Tanh")
        assert pk["optimizer_class"] == ClassRef("torch.optim.rmsprop", "RMSprop")
        assert ar.data["policy_class"] == ClassRef("stable_baselines3.common.policies", "ActorCriticPolicy")
        assert ar.data["rollout_buffer_class"] == ClassRef("stable_baselines3.common.buffers", "RolloutBuffer")
        assert isinstance(ar.data["action_space"], spaces.MultiBinary)
    # a class reference outside the allow-list is refused by load ...
    bad = str(tmp_path / "bad.rlarchive")
    with rlarchive.open(arc, spaces="neutral") as ar:
        data = dict(ar.data)
        data["policy_kwargs"] = dict(data["policy_kwargs"], activation_fn=ClassRef("os", "system"))
        tensors = {
            g: {k: np.array(v) for k, v in ar.tensors(g).items()} for g in ar.groups if not g.startswith("optimizer.")
        }
        tensors.pop("arrays", None)
        opts = {n: _np_copy(ar.optimizer(n)) for n in ar.optimizer_names}
        meta = dict(ar.metadata)
        data = {k: _np_copy(v) for k, v in data.items()}
    rlarchive.save(bad, data, tensors, opts, metadata=meta)
    with pytest.raises(RlarchiveError) as e:
        rsb3.load(bad)
    assert e.value.code == "IMPORT_NOT_ALLOWED"
    # ... and exported by name, without being imported
    out = str(tmp_path / "bad.zip")
    rsb3.export_archive(bad, out)
    raw = base64.b64decode(json.loads(zipfile.ZipFile(out).read("data"))["policy_kwargs"][":serialized:"])
    names = unpickle.describe_globals(raw)
    # a bare global: nothing is called to find it, and importing the export records the same name
    assert ("os", "system") in names and ("importlib", "import_module") not in names
    again = str(tmp_path / "bad-again.rlarchive")
    rsb3.import_archive(out, again)
    with rlarchive.open(again, spaces="neutral") as ar:
        assert ar.data["policy_kwargs"]["activation_fn"] == ClassRef("os", "system")


def _np_copy(v):
    if isinstance(v, np.ndarray):
        return np.array(v)
    if isinstance(v, dict):
        return {k: _np_copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_np_copy(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_np_copy(x) for x in v)
    return v


# ---------------------------------------------------------------------------
# archives of older SB3 versions: gym spaces and closure schedules
# ---------------------------------------------------------------------------


def test_old_sb3_archive_gym_spaces_and_closures(tmp_path):
    from stable_baselines3.common.utils import constant_fn, get_linear_fn, get_schedule_fn

    model = DQN(
        "MlpPolicy",
        "CartPole-v1",
        learning_starts=8,
        buffer_size=64,
        batch_size=8,
        policy_kwargs=dict(net_arch=[8]),
        device="cpu",
    ).learn(16)
    src = str(tmp_path / "new.zip")
    model.save(src)
    obs = model.observation_space
    old = str(tmp_path / "old.zip")
    F.rewrite_sb3_zip(
        src,
        old,
        {
            # SB3 1.x: spaces pickled from gym, schedules as cloudpickled closures
            "observation_space": (
                "pickle",
                F.cloudpickle_with(F.gym_box(obs.low, obs.high, obs.shape, np.float32, rng=True)),
                "<class 'gym.spaces.box.Box'>",
            ),
            "action_space": ("pickle", F.cloudpickle_with(F.gym_discrete(2)), "<class 'gym.spaces.discrete.Discrete'>"),
            "lr_schedule": ("pickle", cloudpickle.dumps(get_schedule_fn(1e-4)), "<class 'function'>"),
            "exploration_schedule": ("pickle", cloudpickle.dumps(get_linear_fn(1.0, 0.05, 0.1)), "<class 'function'>"),
            "extra_constant": ("pickle", cloudpickle.dumps(constant_fn(0.5)), "<class 'function'>"),
        },
    )
    raw = base64.b64decode(json.loads(zipfile.ZipFile(old).read("data"))["observation_space"][":serialized:"])
    assert b"gym.spaces.box" in raw and b"gymnasium" not in raw
    arc = str(tmp_path / "old.rlarchive")
    report = rsb3.import_archive(old, arc)
    assert report.opaque == []
    with rlarchive.open(arc, spaces="neutral") as ar:
        assert ar.data["lr_schedule"] == schedules.Constant(1e-4)
        assert ar.data["exploration_schedule"] == schedules.Linear(1.0, 0.05, 0.1)
        assert ar.data["extra_constant"] == schedules.Constant(0.5)
        assert ar.data["observation_space"] == spaces.Box(obs.low, obs.high, obs.shape, "F32")
        assert ar.data["action_space"] == spaces.Discrete(2, 0, "I64")
    out = str(tmp_path / "exported.zip")
    rsb3.export_archive(arc, out)
    loaded = DQN.load(out, device="cpu")
    assert isinstance(loaded.observation_space, gym.spaces.Box) and loaded.observation_space == obs
    assert _callable_values(loaded.lr_schedule) == [1e-4] * 5
    assert _callable_values(loaded.exploration_schedule) == _callable_values(get_linear_fn(1.0, 0.05, 0.1))
    assert_same_parameters(model, loaded)
    assert_same_predictions(model, loaded)


# ---------------------------------------------------------------------------
# safety
# ---------------------------------------------------------------------------


def test_pickles_that_run_code_are_never_run(tmp_path):
    model = _dqn()
    src = str(tmp_path / "m.zip")
    model.save(src)
    marker1 = tmp_path / "marker-os-system"
    marker2 = tmp_path / "marker-exec"
    marker3 = tmp_path / "marker-box"
    evil = str(tmp_path / "evil.zip")
    payloads = {
        "evil_system": cloudpickle.dumps(F.RunsCommand(f"touch {marker1}")),
        "evil_exec": cloudpickle.dumps(F.WritesMarker(str(marker2))),
        "action_noise": cloudpickle.dumps(F.BoxWithPayload(f"touch {marker3}")),  # a key SB3 uses
    }
    F.rewrite_sb3_zip(src, evil, {k: ("pickle", v, "<class 'object'>") for k, v in payloads.items()})
    arc = str(tmp_path / "evil.rlarchive")
    report = rsb3.import_archive(evil, arc)
    assert not marker1.exists() and not marker2.exists() and not marker3.exists()
    assert set(report.opaque_keys) == set(payloads)
    reasons = {o.key: o.reason for o in report.opaque}
    assert "posix.system" in reasons["evil_system"] or "os.system" in reasons["evil_system"]
    assert "exec" in reasons["evil_exec"]
    assert rlarchive.validate(arc)["valid"]
    with rlarchive.open(arc, spaces="neutral") as ar:
        for k, raw in payloads.items():
            assert ar.data[k] == Opaque(raw, "object", reasons[k])
    # export passes the bytes through untouched, and runs nothing
    out = str(tmp_path / "out.zip")
    rsb3.export_archive(arc, out)
    data = json.loads(zipfile.ZipFile(out).read("data"))
    for k, raw in payloads.items():
        assert base64.b64decode(data[k][":serialized:"]) == raw
    # strict load refuses to unpickle, naming every opaque key it would restore (as SB3 restores every saved key);
    # the default leaves them all out with a warning: none is unpickled, none becomes an attribute
    with pytest.raises(RlarchiveError) as e:
        rsb3.load(arc, opaque="error")
    assert e.value.code == "PICKLE_NOT_ALLOWED"
    assert all(k in e.value.message for k in ("action_noise", "evil_system", "evil_exec"))
    with pytest.warns(rsb3.LoadWarning, match="action_noise"):
        m = rsb3.load(arc)
    assert not hasattr(m, "evil_system") and not hasattr(m, "evil_exec") and m.action_noise is None
    assert not marker1.exists() and not marker2.exists() and not marker3.exists()


def test_direct_unpickler_refusals():
    import os as _os

    class Reduce:
        def __init__(self, f, args):
            self.f, self.args = f, args

        def __reduce__(self):
            return (self.f, self.args)

    cases = [
        Reduce(_os.system, ("true",)),
        Reduce(eval, ("1",)),
        Reduce(getattr, (_os, "system")),
        Reduce(ClassRef, ("a", "b")),  # a module not on the allow-list
        Reduce(bytearray, (10**12,)),  # allowed constructor, refused arguments
        {1, 2},
        lambda x: x,
        np.array([1 + 2j]),
        np.array([None], dtype=object),
    ]
    for obj in cases:
        for proto in (2, 4, 5):
            with pytest.raises(unpickle.NotNeutral):
                unpickle.decode(cloudpickle.dumps(obj, protocol=proto))
    # a class name under an allowed prefix may be named, but not called
    from stable_baselines3.common.buffers import ReplayBuffer

    assert unpickle.decode(pickle.dumps(ReplayBuffer)) == ClassRef("stable_baselines3.common.buffers", "ReplayBuffer")
    with pytest.raises(unpickle.NotNeutral):
        unpickle.decode(pickle.dumps(Reduce(ReplayBuffer, (10,))))
    # malformed and truncated streams
    good = cloudpickle.dumps(gym.spaces.Box(-1, 1, (3,)))
    for bad in (b"", b"garbage", good[: len(good) // 2], good[:-1]):
        with pytest.raises(unpickle.NotNeutral):
            unpickle.decode(bad)


def test_unpickler_values_all_protocols():
    from stable_baselines3.common.utils import FloatSchedule, LinearSchedule

    box = gym.spaces.Box(np.array([0, -1], np.float32), np.array([1, np.inf], np.float32))
    box.sample()  # gives it a random generator, which is dropped
    cases = [
        (box, spaces.Box(np.array([0, -1], np.float32), np.array([1, np.inf], np.float32), (2,), "F32")),
        (gym.spaces.Discrete(5, start=-2), spaces.Discrete(5, -2, "I64")),
        (
            gym.spaces.MultiDiscrete([[2, 3], [4, 5]], dtype=np.int32),
            spaces.MultiDiscrete(np.array([[2, 3], [4, 5]], np.int32), np.zeros((2, 2), np.int32), "I32"),
        ),
        (gym.spaces.MultiBinary([2, 3]), spaces.MultiBinary((2, 3))),
        (
            gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Text(5, min_length=2, charset="cab"))),
            spaces.Tuple((spaces.Discrete(2), spaces.Text(5, 2, "abc"))),
        ),
        (
            gym.spaces.Dict({"z": gym.spaces.Discrete(2), "a": gym.spaces.Discrete(3)}),
            spaces.Dict((("a", spaces.Discrete(3)), ("z", spaces.Discrete(2)))),
        ),
        (FloatSchedule(LinearSchedule(1.0, 0.0, 0.5)), schedules.Linear(1.0, 0.0, 0.5)),
        (FloatSchedule(0.1), schedules.Constant(0.1)),
        (deque([1, 2], maxlen=3), [1, 2]),
        (np.float32(2.5), np.float32(2.5)),
        ((1, "a", b"x", None), (1, "a", b"x", None)),
        ({1: "int key", "s": [1.5, float("inf")]}, {1: "int key", "s": [1.5, float("inf")]}),
    ]
    for obj, want in cases:
        for proto in (2, 3, 4, 5):
            got = unpickle.decode(cloudpickle.dumps(obj, protocol=proto))
            assert got == want, (obj, proto, got)
    for proto in (0, 1):  # copyreg._reconstructor path
        assert unpickle.decode(pickle.dumps(gym.spaces.Discrete(3), protocol=proto)) == spaces.Discrete(3, 0, "I64")
    for arr in (
        np.arange(12, dtype=">i4").reshape(3, 4),
        np.asfortranarray(np.ones((2, 3))),
        np.zeros((0, 2), np.uint8),
        np.array(True),
    ):
        for proto in (2, 4, 5):
            got = unpickle.decode(pickle.dumps(arr, protocol=proto))
            assert got.dtype == arr.dtype.newbyteorder("<") and np.array_equal(got, arr)


def test_unpickler_imports_nothing(tmp_path):
    model = _sac()
    src = str(tmp_path / "m.zip")
    model.save(src)
    blob = tmp_path / "pickles.json"
    data = json.loads(zipfile.ZipFile(src).read("data"))
    blob.write_text(
        json.dumps({k: v[":serialized:"] for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v})
    )
    code = (
        "import base64, json, sys\n"
        "from rlarchive import unpickle\n"
        f"items = json.load(open({str(blob)!r}))\n"
        "vals = {k: unpickle.decode(base64.b64decode(v)) for k, v in items.items()}\n"
        "bad = [m for m in ('gymnasium', 'gym', 'stable_baselines3', 'torch', 'cloudpickle') if m in sys.modules]\n"
        "assert not bad, bad\n"
        "print(sorted(vals))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.path.abspath(PYTHON_DIR))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "observation_space" in r.stdout and "train_freq" in r.stdout


def test_import_errors(tmp_path):
    p = tmp_path / "not.zip"
    p.write_bytes(b"not a zip")
    with pytest.raises(RlarchiveError) as e:
        rsb3.import_archive(str(p), str(tmp_path / "o.rlarchive"))
    assert e.value.code == "IMPORT_INVALID"
    z = tmp_path / "nodata.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("policy.pth", b"")
    with pytest.raises(RlarchiveError) as e:
        rsb3.import_archive(str(z), str(tmp_path / "o.rlarchive"))
    assert e.value.code == "IMPORT_INVALID"
    # a .pth that is not weights-only is refused by torch.load(weights_only=True), without running it
    marker = tmp_path / "pth-marker"
    zp = tmp_path / "badpth.zip"
    buf = __import__("io").BytesIO()
    torch.save({"x": F.RunsCommand(f"touch {marker}")}, buf)
    with zipfile.ZipFile(zp, "w") as zf:
        zf.writestr("data", json.dumps({"gamma": 0.9}))
        zf.writestr("policy.pth", buf.getvalue())
    with pytest.raises(RlarchiveError) as e:
        rsb3.import_archive(str(zp), str(tmp_path / "o.rlarchive"))
    assert e.value.code == "VALUE_UNSUPPORTED" and not marker.exists()
    # SB2's members make it an SB2 model, even beside a .pth: refused with the command to use
    hybrid = tmp_path / "hybrid.zip"
    with zipfile.ZipFile(hybrid, "w") as zf:
        zf.writestr("data", json.dumps({"gamma": 0.9}))
        zf.writestr("policy.pth", buf.getvalue())
        zf.writestr("parameter_list", "[]")
    with pytest.raises(RlarchiveError) as e:
        rsb3.import_archive(str(hybrid), str(tmp_path / "o.rlarchive"))
    assert e.value.code == "IMPORT_INVALID" and "rlarchive import-sb2" in e.value.message
    # a sparse tensor is not stored (and never made dense behind the budget's back)
    sparse = tmp_path / "sparse.zip"
    sbuf = __import__("io").BytesIO()
    torch.save({"w": torch.eye(3).to_sparse()}, sbuf)
    with zipfile.ZipFile(sparse, "w") as zf:
        zf.writestr("data", json.dumps({"gamma": 0.9}))
        zf.writestr("policy.pth", sbuf.getvalue())
    with pytest.raises(RlarchiveError) as e:
        rsb3.import_archive(str(sparse), str(tmp_path / "o.rlarchive"))
    assert e.value.code == "VALUE_UNSUPPORTED" and not (tmp_path / "o.rlarchive").exists()


def test_report_text(tmp_path):
    model = _td3_noise()
    src = str(tmp_path / "m.zip")
    model.save(src)
    report = rsb3.import_archive(src, str(tmp_path / "m.rlarchive"))
    text = str(report)
    assert "action_noise" in text and "NormalActionNoise" in text and "TD3" in text
    d = report.to_dict()
    assert d["opaque"][0]["key"] == "action_noise"
    json.dumps(d)


@pytest.mark.slow
def test_shared_references_and_huge_shapes_are_bounded():
    # 2**40 paths through shared lists: refused quickly instead of expanding
    x = [1.0]
    for _ in range(40):
        x = [x, x]
    with pytest.raises(unpickle.NotNeutral):
        unpickle.decode(pickle.dumps(x))
    # a Box whose shape claims terabytes, with scalar bounds
    box = gym.spaces.Box(-1, 1, (2,))
    state = dict(box.__dict__, _shape=(1 << 20, 1 << 20), low=np.float32(-1), high=np.float32(1))
    b2 = gym.spaces.Box.__new__(gym.spaces.Box)
    b2.__dict__.update(state)
    with pytest.raises(unpickle.NotNeutral):
        unpickle.decode(cloudpickle.dumps(b2))


def test_closures_pickled_by_cloudpickle_1_6():
    const = base64.b64decode("".join(F.CONSTANT_FN_CLOUDPICKLE_1_6))
    linear = base64.b64decode("".join(F.LINEAR_FN_CLOUDPICKLE_1_6))
    assert b"cloudpickle_fast" in const and b"LambdaType" in const
    assert unpickle.decode(const) == schedules.Constant(0.5)
    assert unpickle.decode(linear) == schedules.Linear(1.0, 0.1, 0.3)


def test_load_with_env(tmp_path):
    model = _dqn()
    src = str(tmp_path / "m.zip")
    model.save(src)
    arc = str(tmp_path / "m.rlarchive")
    rsb3.import_archive(src, arc, algorithm="DQN")
    env = gym.make("CartPole-v1")
    loaded = rsb3.load(arc, env=env)
    assert loaded.get_env() is not None and loaded.n_envs == 1
    assert_same_parameters(model, loaded)
    loaded.learn(8)  # training continues from the loaded state
    with pytest.raises(ValueError, match="spaces do not match"):  # SB3's own check, passed through
        rsb3.load(arc, env=gym.make("Pendulum-v1"))


@pytest.mark.slow
def test_cli_two_command_migration(tmp_path):
    """The README's migration: import-sb3 then export-sb3, on the command line."""
    import json
    import subprocess

    model = PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1, seed=3, device="cpu").learn(16)
    src, arc, back = str(tmp_path / "m.zip"), str(tmp_path / "m.rlarchive"), str(tmp_path / "back.zip")
    model.save(src)
    cli = [sys.executable, "-m", "rlarchive.cli"]
    r = subprocess.run([*cli, "import-sb3", src, arc, "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["algorithm"] == "PPO"
    assert subprocess.run([*cli, "validate", arc], capture_output=True).returncode == 0
    r = subprocess.run([*cli, "export-sb3", arc, back], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert_same_parameters(model, PPO.load(back, device="cpu"))
    r = subprocess.run([*cli, "import-sb3", str(tmp_path / "missing.zip"), arc], capture_output=True, text=True)
    assert r.returncode == 2 and "IO_ERROR" in r.stderr


def test_javascript_reads_an_imported_ppo_archive(tmp_path):
    """An imported SB3 PPO archive read by the JavaScript reader in Node: spaces and policy weights."""
    import json
    import shutil
    import subprocess

    node = shutil.which("node")
    js = os.path.join(HERE, "..", "..", "reader-js", "src", "index.js")
    if node is None or not os.path.isdir(os.path.join(HERE, "..", "..", "reader-js", "node_modules")):
        pytest.skip("node or the JavaScript reader's npm install is missing")
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1, seed=5, device="cpu").learn(16)
    src, arc = str(tmp_path / "ppo.zip"), str(tmp_path / "ppo.rlarchive")
    model.save(src)
    rsb3.import_archive(src, arc)
    script = f"""
        import {{ open }} from {json.dumps("file://" + os.path.abspath(js))};
        const ar = await open({json.dumps(arc)});
        const obs = ar.data.observation_space, act = ar.data.action_space;
        const low = await obs.low.load();
        const out = {{obs: {{kind: obs.kind, shape: obs.shape, dtype: obs.dtype, low: Array.from(low.data ?? low).map(String)}},  // JSON has no -Infinity
                     act: {{kind: act.kind, n: Number(act.n)}}, weights: {{}}}};
        for (const info of ar.tensorInfo('policy')) {{
          const t = await ar.tensor('policy', info.name, {{verify: true}});
          out.weights[info.name] = {{dtype: t.dtype, shape: t.shape, values: Array.from(t.data).map(Number)}};
        }}
        console.log(JSON.stringify(out));
        await ar.close();
    """
    r = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["obs"]["kind"] == "box" and got["obs"]["shape"] == [4] and got["obs"]["dtype"] == "F32"
    assert np.array_equal(np.array([float(x) for x in got["obs"]["low"]], np.float32), model.observation_space.low)
    assert got["act"] == {"kind": "discrete", "n": 2}
    sd = model.policy.state_dict()
    assert set(got["weights"]) == set(sd)
    for name, t in sd.items():
        w = got["weights"][name]
        assert w["shape"] == list(t.shape)
        assert np.array_equal(np.array(w["values"], np.float32), t.numpy().reshape(-1)), name


# ---------------------------------------------------------------------------
# load over every model of the zoo: the key table lets through what SB3 needs
# ---------------------------------------------------------------------------


def _zoo_names():
    try:
        import sb_zoo
    except ImportError:  # pragma: no cover - sb3_contrib missing
        return []
    return list(sb_zoo.CATALOGUE)


@pytest.mark.parametrize("name", _zoo_names())
def test_load_reproduces_every_zoo_model(name, sb3_zoo, tmp_path):
    """``rlarchive.sb3.load`` of the imported archive predicts exactly what SB3's own load of the zip predicts."""
    import sb_zoo
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    m = sb3_zoo[name]
    entry = sb_zoo.CATALOGUE[name]
    arc = str(tmp_path / "m.rlarchive")
    report = rsb3.import_archive(m.path, arc)  # the algorithm is told from the data
    assert report.algorithm == m.algorithm
    allow = []
    if sb_zoo.USER_CLASS in entry.features:  # the user class is a class reference: load names it and the argument
        assert "policy_kwargs" not in report.opaque_keys
        with pytest.raises(RlarchiveError) as e:
            rsb3.load(arc)
        assert (
            e.value.code == "IMPORT_NOT_ALLOWED"
            and "sb_zoo.TinyExtractor" in e.value.message
            and "allow_classes" in e.value.message
        )
        allow = ["sb_zoo.TinyExtractor"]
    venv = DummyVecEnv([entry.env])  # HerReplayBuffer needs an env to be built
    normalizer = None
    if m.vecnormalize is not None:
        normalizer = venv = VecNormalize.load(m.vecnormalize, venv)
        normalizer.training = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        model = rsb3.load(arc, env=venv, allow_classes=allow)
    assert type(model) is entry.algo and model.tensorboard_log is None and model.verbose == 0
    got = sb_zoo.predict_actions(
        model, m.observations, vecnormalize=normalizer, action_masks=m.action_masks, episode_starts=m.episode_starts
    )
    assert len(got) == len(m.actions)
    for a, b in zip(m.actions, got):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
