"""What the bridge makes of values inside pickles, and the pickles it writes back.

- NumPy 2's transposed arrays (``_frombuffer`` with ``order="K"`` and ``axis_order``);
- Stable-Baselines3 enums, torch tensors and ``pickle.loads`` of bytes become neutral values;
- any other call stays an opaque leaf that makes exactly the recorded call, and nothing else;
- :mod:`rlarchive.unpickle.pickler` writes NumPy values under names both NumPy majors read;
- ``rlarchive.sb3.save`` of a live model equals the import of its saved zip;
- ``rlarchive.sb3.load`` builds without running ``torch.nn.init`` and refuses weights that do not fit.
"""

from __future__ import annotations

import pickle
import pickletools
import warnings

import cloudpickle
import numpy as np
import pytest
import torch

import rlarchive
from rlarchive import sb3 as rsb3
from rlarchive import unpickle
from rlarchive.errors import RlarchiveError
from rlarchive.unpickle import pickler
from rlarchive.values import ClassRef, Opaque


def _globals(data: bytes) -> set:
    return set(unpickle.describe_globals(data))


@pytest.mark.parametrize("axes", [(1, 2, 0), (2, 0, 1), (0, 2, 1)])
def test_numpy2_transposed_arrays_are_decoded(axes):
    a = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4).transpose(axes)
    data = pickle.dumps(a, protocol=5)
    if np.__version__ >= "2":  # NumPy 2 writes the memory order and the axis order
        assert b"K" in data
    got = unpickle.decode(data)
    assert got.dtype == a.dtype and np.array_equal(got, a) and got.flags.c_contiguous


def test_a_malformed_axis_order_is_refused():
    good = pickle.dumps(np.arange(24, dtype=np.int16).reshape(2, 3, 4).transpose(1, 2, 0), protocol=5)
    if not any(op.name == "SHORT_BINUNICODE" and arg == "K" for op, arg, _ in pickletools.genops(good)):
        pytest.skip("this NumPy writes no axis order")
    # the same stream with the axis order (1, 2, 0) replaced by (1, 1, 0)
    bad = good.replace(b"K\x01K\x02K\x00\x87", b"K\x01K\x01K\x00\x87")
    assert bad != good
    with pytest.raises(unpickle.NotNeutral):
        unpickle.decode(bad)


def test_sb3_enums_and_torch_tensors_become_neutral():
    from stable_baselines3.her.goal_selection_strategy import GoalSelectionStrategy

    value = {
        "goal": GoalSelectionStrategy.EPISODE,
        "weights": torch.arange(6, dtype=torch.float64).reshape(2, 3).t(),
        "view": torch.arange(10, dtype=torch.int32)[2:8:2],
        "flags": torch.tensor([True, False]),
    }
    got = unpickle.decode(cloudpickle.dumps(value))
    assert got["goal"] == "episode"
    for k in ("weights", "view", "flags"):
        want = value[k].numpy()
        assert got[k].dtype == want.dtype and np.array_equal(got[k], want), k


def test_a_tensor_reaching_beyond_its_storage_stays_opaque():
    t = torch.arange(4, dtype=torch.float32)
    fn, (storage, offset, size, stride, grad, hooks) = t.__reduce_ex__(4)[:2]

    class Evil:
        def __reduce__(self):
            return (fn, (storage, 2, (4,), (1,), grad, hooks))  # elements 2..5 of a 4-element storage

    got = unpickle.decode(cloudpickle.dumps({"w": Evil()}))
    assert isinstance(got["w"], Opaque) and got["w"].type == "torch._utils._rebuild_tensor_v2"


class _Noise:  # a user class: its instances have no neutral form
    def __init__(self, sigma):
        self.sigma = sigma


def test_only_the_unconvertible_leaf_stays_opaque_and_it_rebuilds_exactly():
    value = {"n_sampled_goal": 4, "noise": _Noise(np.float32(0.5)), "extractor": _Noise}
    got = unpickle.decode(cloudpickle.dumps(value))
    assert got["n_sampled_goal"] == 4
    assert got["extractor"] == ClassRef(__name__, "_Noise")  # a class is a name, never a pickle
    leaf = got["noise"]
    assert isinstance(leaf, Opaque) and leaf.type == f"{__name__}._Noise"
    rebuilt = pickle.loads(leaf.data)  # the leaf makes exactly what the pickle described
    assert type(rebuilt) is _Noise and rebuilt.sigma == np.float32(0.5)


def test_nested_pickle_loads_reads_back_as_the_same_leaf():
    inner = cloudpickle.dumps(lambda x: x + 1)
    outer = pickler.dumps({"a": 1, "f": pickler.Call(pickler.Name("pickle", "loads"), (inner,))})
    got = unpickle.decode(outer)
    assert got["a"] == 1 and isinstance(got["f"], Opaque) and got["f"].data == inner
    with pytest.raises(unpickle.NotNeutral) as e:
        unpickle.decode(inner)
    assert got["f"].note == e.value.reason


def test_portable_pickles_use_names_both_numpy_majors_read():
    value = {
        "a": np.arange(6, dtype=np.float32).reshape(2, 3).T,
        "s": np.float64(2.5),
        "d": np.dtype("int16"),
        "i": np.int64(-3),
    }
    data = pickler.dumps(value)
    names = _globals(data)
    assert not any(m.startswith("numpy._core") for m, _ in names), names
    assert names <= {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy 2 reads these names without a deprecation warning
        back = pickle.loads(data)
    for k, v in value.items():
        assert type(back[k]) is type(v) and np.array_equal(back[k], v), k
    assert unpickle.decode(pickler.dumps({"s": value["s"]}))["s"] == 2.5


def test_a_name_is_written_as_a_bare_global_and_never_looked_up():
    data = pickler.dumps({"cls": pickler.Name("no_such_package.sub", "Outer.Inner")})
    assert _globals(data) == {("no_such_package.sub", "Outer.Inner")}
    assert unpickle.decode(data) == {"cls": ClassRef("no_such_package.sub", "Outer.Inner")}


def _tiny_models():
    from stable_baselines3 import DQN, PPO, SAC

    return [
        PPO(
            "MlpPolicy",
            "CartPole-v1",
            n_steps=16,
            batch_size=16,
            n_epochs=1,
            device="cpu",
            seed=1,
            policy_kwargs=dict(net_arch=[8]),
        ).learn(16),
        SAC(
            "MlpPolicy",
            "Pendulum-v1",
            learning_starts=4,
            buffer_size=64,
            device="cpu",
            seed=1,
            policy_kwargs=dict(net_arch=[8]),
        ).learn(8),
        DQN(
            "MlpPolicy",
            "CartPole-v1",
            learning_starts=4,
            buffer_size=64,
            device="cpu",
            seed=1,
            policy_kwargs=dict(net_arch=[8]),
        ).learn(8),
    ]


def test_save_from_a_live_model_equals_the_import_of_its_zip(tmp_path):
    for model in _tiny_models():
        z, a, b = tmp_path / "m.zip", tmp_path / "a.rlarchive", tmp_path / "b.rlarchive"
        model.save(z)
        rsb3.import_archive(z, a)
        report = rsb3.save(model, b)
        assert report.algorithm == type(model).__name__
        with rlarchive.open(a, spaces="neutral") as x, rlarchive.open(b, spaces="neutral") as y:
            assert repr(dict(x.data)) == repr(dict(y.data))
            assert x.groups == y.groups
            for g in x.groups:
                assert {n: x.tensor_sha256(g, n) for n in x.tensor_info(g)} == {
                    n: y.tensor_sha256(g, n) for n in y.tensor_info(g)
                }
        loaded = rsb3.load(b)
        for (k1, p1), (k2, p2) in zip(model.policy.state_dict().items(), loaded.policy.state_dict().items()):
            assert k1 == k2 and torch.equal(p1, p2)


def test_load_runs_no_initialiser_and_every_weight_comes_from_the_archive(tmp_path, monkeypatch):
    model = _tiny_models()[0]
    a = tmp_path / "m.rlarchive"
    rsb3.save(model, a)
    calls = []
    real = torch.nn.init.orthogonal_

    def counting(tensor, *args, **kwargs):
        calls.append(tuple(tensor.shape))
        return real(tensor, *args, **kwargs)

    monkeypatch.setattr(torch.nn.init, "orthogonal_", counting)
    loaded = rsb3.load(a)
    assert calls == []  # SB3's orthogonal initialisation never ran
    assert torch.nn.init.orthogonal_ is counting  # and the initialisers are back afterwards
    from stable_baselines3 import PPO

    PPO("MlpPolicy", "CartPole-v1", device="cpu", policy_kwargs=dict(net_arch=[8]))
    assert calls  # a model built the usual way does run it
    for (k1, p1), (k2, p2) in zip(model.policy.state_dict().items(), loaded.policy.state_dict().items()):
        assert k1 == k2 and torch.equal(p1, p2)


def test_weights_that_do_not_fit_the_policy_fail_with_a_code(tmp_path):
    model = _tiny_models()[0]
    a, bad = tmp_path / "m.rlarchive", tmp_path / "bad.rlarchive"
    rsb3.save(model, a)
    with rlarchive.open(a, spaces="neutral") as ar:
        data = {k: v for k, v in ar.data.items()}
        data["policy_kwargs"] = dict(data["policy_kwargs"], net_arch=[16])  # a wider network than the weights
        tensors = {
            g: {k: np.array(v) for k, v in ar.tensors(g).items()} for g in ar.groups if not g.startswith("optimizer.")
        }
        tensors.pop("arrays", None)
        meta = dict(ar.metadata)
        data = {k: (np.array(v) if isinstance(v, np.ndarray) else v) for k, v in data.items()}
    rlarchive.save(bad, data, tensors, {}, metadata=meta)
    with pytest.raises(RlarchiveError) as e:
        rsb3.load(bad)
    assert e.value.code == "VALUE_UNSUPPORTED" and "do not fit" in e.value.message


def test_load_places_the_model_on_the_requested_device(tmp_path):
    model = _tiny_models()[0]
    a = tmp_path / "m.rlarchive"
    rsb3.save(model, a)
    m = rsb3.load(a, device="cpu")
    assert m.device.type == "cpu" and all(p.device.type == "cpu" for p in m.policy.parameters())
    if torch.cuda.is_available():  # pragma: no cover - no GPU on the CI machine
        g = rsb3.load(a, device="cuda")
        assert all(p.device.type == "cuda" for p in g.policy.parameters())


def test_a_dqn_optimizer_state_travels_between_sb3_before_and_after_2_4(tmp_path):
    """SB3 < 2.4 kept the target network's parameters in DQN's optimizer: exports for it add them, loads drop them."""
    from stable_baselines3 import DQN
    from stable_baselines3.common.save_util import load_from_zip_file

    model = _tiny_models()[2]
    a, old, again = tmp_path / "m.rlarchive", tmp_path / "old.zip", tmp_path / "again.rlarchive"
    rsb3.save(model, a)
    n = len(model.policy.optimizer.param_groups[0]["params"])
    rsb3.export_archive(a, old, sb3_version="2.0")
    _, params, _ = load_from_zip_file(str(old), device="cpu")
    assert len(params["policy.optimizer"]["param_groups"][0]["params"]) == 2 * n
    # SB3 here reads that form (it drops the second half), and so does rlarchive's load of its import
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DQN.load(old, device="cpu")
    rsb3.import_archive(old, again)
    with pytest.warns(
        rsb3.LoadWarning, match=f"holds {2 * n} parameters.*kept the state of the first {n}"
    ) as got_warnings:
        loaded = rsb3.load(again)
    assert [w.filename for w in got_warnings] == [__file__]  # it points at load's caller
    assert len(loaded.policy.optimizer.param_groups[0]["params"]) == n
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the state as the model keeps it loads without a word
        rsb3.load(a)
    want = model.policy.optimizer.state_dict()["state"]
    got = loaded.policy.optimizer.state_dict()["state"]
    assert want.keys() == got.keys()
    for k in want:
        for name, t in want[k].items():
            assert torch.equal(t, got[k][name]), (k, name)
