"""Models older Stable-Baselines3 wrote, and the policy parts SB3 users pick: optimizers, shared layers, PReLU.

- every optimizer class SB3 ships (RL Zoo's Atari A2C: ``RMSpropTFLike``) is
  restored by ``load``; an optimizer class off the allow-list never stops the
  portable policy, and ``load`` builds the model with SB3's default optimizer;
- layers shared by actor and critic (SB3 < 1.8, :mod:`sb3_legacy` writes such
  zips as SB3 1.6.2 did) import, load, act and export (for the installed SB3,
  which has no shared layers) with the actions of SB3 1.7's forward pass;
- ``nn.PReLU`` becomes the ``prelu`` node of the portable policy;
- exports of archives SB3 1.x wrote are for the installed SB3, and say so;
- what the import imports: gymnasium and stable-baselines3 only to write the
  portable policy, and no module a file names unless the allow-list has it.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

try:
    import cloudpickle
    import gymnasium as gym
    import sb3_contrib
    import stable_baselines3
    import torch
    from sb3_contrib import RecurrentPPO
    from stable_baselines3 import A2C, PPO
    from stable_baselines3.common.sb2_compat.rmsprop_tf_like import RMSpropTFLike
    from stable_baselines3.common.utils import get_schedule_fn

    HAVE_SB3 = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_SB3 = False

pytestmark = pytest.mark.skipif(
    not HAVE_SB3, reason="stable_baselines3 and sb3_contrib (with torch, gymnasium) are not importable"
)

import sb3_legacy as L  # noqa: E402
import sb_fixtures as F  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.sb3 import portable_policy as sb3_policy  # noqa: E402
from rlarchive.sb3 import shared_layers
from rlarchive.values import ClassRef  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.abspath(os.path.join(HERE, "..", "..", "python"))
SITE_PACKAGES = os.path.dirname(os.path.dirname(inspect.getfile(stable_baselines3))) if HAVE_SB3 else ""


@pytest.fixture(autouse=True)
def _one_thread():
    torch.set_num_threads(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _observations(n: int = 64, seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (n, L.OBS_DIM)).astype(np.float32)


def _portable_actions(path, obs, recurrent=False):
    with rlarchive.open(path) as ar:
        policy = ar.policy()
        if recurrent:
            return policy.predict(obs, episode_start=np.ones(len(obs), bool))[0]
        return policy.predict(obs)[0]


def _sb3_actions(model, obs, recurrent=False):
    if recurrent:
        return model.predict(obs, deterministic=True, episode_start=np.ones(len(obs), bool))[0]
    return model.predict(obs, deterministic=True)[0]


# ---------------------------------------------------------------------------
# optimizers
# ---------------------------------------------------------------------------


def _optimizer_classes(package) -> set:
    """Every torch.optim.Optimizer subclass a package defines, found by walking its modules."""
    import importlib
    import pkgutil

    found = set()
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if any(part in info.name for part in (".tests", "plot", "results_plotter")):
            continue
        try:
            mod = importlib.import_module(info.name)
        except Exception:  # optional dependencies (e.g. a plotting backend) are not part of the question
            continue
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, torch.optim.Optimizer) and obj.__module__ == info.name:
                found.add(f"{obj.__module__}.{obj.__qualname__}")
    return found


def test_every_optimizer_sb3_and_torch_ship_is_allowed():
    shipped = _optimizer_classes(stable_baselines3) | _optimizer_classes(sb3_contrib)
    assert "stable_baselines3.common.sb2_compat.rmsprop_tf_like.RMSpropTFLike" in shipped
    torch_own = {
        f"{c.__module__}.{c.__qualname__}"
        for c in vars(torch.optim).values()
        if isinstance(c, type) and issubclass(c, torch.optim.Optimizer) and c is not torch.optim.Optimizer
    }
    for name in shipped | torch_own:
        assert name in rsb3.ALLOWED_CLASSES, name
        module, _, qual = name.rpartition(".")
        assert issubclass(ClassRef(module, qual).resolve(rsb3.ALLOWED_CLASSES), torch.optim.Optimizer)
    # exact names only: the base class and a look-alike module are not allowed
    assert not ClassRef("torch.optim.optimizer", "Optimizer").allowed(rsb3.ALLOWED_CLASSES)
    assert not ClassRef("stable_baselines3.common.sb2_compat", "RMSpropTFLike").allowed(rsb3.ALLOWED_CLASSES)


def _a2c_rmsprop_tf_like():
    kwargs = dict(optimizer_class=RMSpropTFLike, optimizer_kwargs=dict(alpha=0.99, eps=1e-5, weight_decay=0))
    return A2C("MlpPolicy", "CartPole-v1", n_steps=8, policy_kwargs=kwargs, seed=0, device="cpu").learn(16)


def _as_sb3_1_8(src: str, dst: str, version: bytes = b"1.8.0") -> None:
    """SB3 1.8 wrote schedules as cloudpickled closures and recorded its version."""
    import zipfile

    first = dst + ".schedules"
    F.rewrite_sb3_zip(
        src, first, {"lr_schedule": ("pickle", cloudpickle.dumps(get_schedule_fn(7e-4)), "<class 'function'>")}
    )
    tmp = dst + ".tmp"
    with zipfile.ZipFile(first) as zin, zipfile.ZipFile(tmp, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, version if info.filename == "_stable_baselines3_version" else zin.read(info.filename))
    os.remove(first)
    os.replace(tmp, dst)


@pytest.mark.parametrize("written_by", ["2.9", "1.8"])
def test_rmsprop_tf_like_a2c(written_by, tmp_path):
    model = _a2c_rmsprop_tf_like()
    src = str(tmp_path / "a2c.zip")
    model.save(src)
    if written_by == "1.8":
        _as_sb3_1_8(src, src)
    arc = str(tmp_path / "a2c.rlarchive")
    report = rsb3.import_archive(src, arc)
    assert report.policy == "written"
    obs = _observations(32)
    expected = model.predict(obs, deterministic=True)[0]
    np.testing.assert_array_equal(_portable_actions(arc, obs), expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.LoadWarning)  # nothing is left out
        loaded = rsb3.load(arc)
    assert type(loaded.policy.optimizer) is RMSpropTFLike
    saved, restored = model.policy.optimizer.state_dict(), loaded.policy.optimizer.state_dict()
    assert saved["param_groups"] == restored["param_groups"]
    for k, s in saved["state"].items():
        for name, v in s.items():
            torch.testing.assert_close(restored["state"][k][name], v)
    np.testing.assert_array_equal(loaded.predict(obs, deterministic=True)[0], expected)
    out = str(tmp_path / "back.zip")
    rsb3.export_archive(arc, out)
    back = A2C.load(out, device="cpu")
    assert type(back.policy.optimizer) is RMSpropTFLike
    np.testing.assert_array_equal(back.predict(obs, deterministic=True)[0], expected)


def test_unknown_optimizer_keeps_the_model_and_the_portable_policy(tmp_path):
    model = _a2c_rmsprop_tf_like()
    src = str(tmp_path / "a2c.zip")
    model.save(src)
    fancy = F._standin_class("fancy_optim.optimizers", "Fancy")
    pk = F.cloudpickle_with(
        dict(optimizer_class=fancy, optimizer_kwargs=dict(alpha=0.5)), {"fancy_optim.optimizers": {"Fancy": fancy}}
    )
    odd = str(tmp_path / "odd.zip")
    F.rewrite_sb3_zip(src, odd, {"policy_kwargs": ("pickle", pk, "<class 'dict'>")})
    arc = str(tmp_path / "odd.rlarchive")
    report = rsb3.import_archive(odd, arc)
    assert report.policy == "written"
    assert any("fancy_optim.optimizers.Fancy" in n and "load" in n for n in report.notes)
    with rlarchive.open(arc, spaces="neutral") as ar:  # the model is kept as it was: the name and the state
        assert ar.data["policy_kwargs"]["optimizer_class"] == ClassRef("fancy_optim.optimizers", "Fancy")
        assert "policy.optimizer" in ar.optimizer_names
    obs = _observations(32)
    expected = model.predict(obs, deterministic=True)[0]
    np.testing.assert_array_equal(_portable_actions(arc, obs), expected)
    with pytest.warns(rsb3.LoadWarning, match="fancy_optim.optimizers.Fancy"):
        loaded = rsb3.load(arc)
    assert type(loaded.policy.optimizer) is torch.optim.Adam and loaded.policy.optimizer.state_dict()["state"] == {}
    np.testing.assert_array_equal(loaded.predict(obs, deterministic=True)[0], expected)
    loaded.set_env(gym.make("CartPole-v1"))
    loaded.learn(8)  # the default optimizer trains
    with pytest.raises(RlarchiveError) as e:
        rsb3.load(arc, opaque="error")
    assert e.value.code == "IMPORT_NOT_ALLOWED" and "fancy_optim.optimizers.Fancy" in e.value.message


# ---------------------------------------------------------------------------
# shared layers (SB3 < 1.8)
# ---------------------------------------------------------------------------

SHARED_CASES = {
    "ppo-shared-then-split": ([32, {"pi": [16], "vf": [16]}], False, None),
    "ppo-all-shared-relu": ([16, 16], False, "ReLU"),
    "ppo-shared-split-uneven": ([8, {"pi": [16, 8], "vf": [4]}], False, None),
    "recurrent-ppo-plain-list": ([32], True, None),
}


@pytest.mark.parametrize("name", list(SHARED_CASES))
def test_shared_layers_of_sb3_1x(name, tmp_path):
    net_arch, recurrent, activation = SHARED_CASES[name]
    src = str(tmp_path / "old.zip")
    state = L.write_ppo_1x(src, net_arch, recurrent=recurrent, activation=activation, seed=7)
    obs = _observations()
    expected = L.reference_actions(state, net_arch, obs, recurrent=recurrent, activation=activation or "Tanh")
    assert len(set(expected.tolist())) > 1  # the observations tell the actions apart

    arc = str(tmp_path / "old.rlarchive")
    report = rsb3.import_archive(src, arc)
    assert report.algorithm == ("RecurrentPPO" if recurrent else "PPO") and report.library_version == "1.6.2"
    assert report.policy == "written", report.policy
    with rlarchive.open(arc, spaces="neutral") as ar:
        assert "mlp_extractor.shared_net.0.weight" in ar.tensors("policy")
    np.testing.assert_array_equal(_portable_actions(arc, obs, recurrent), expected)

    loaded = rsb3.load(arc)
    assert loaded.policy_class.__module__.startswith(("stable_baselines3.", "sb3_contrib."))  # the class the file names
    np.testing.assert_array_equal(_sb3_actions(loaded, obs, recurrent), expected)
    for k, v in state.items():  # every weight where SB3 1.7 had it
        torch.testing.assert_close(loaded.policy.state_dict()[k], v, rtol=0, atol=0)

    out = str(tmp_path / "back.zip")
    with pytest.warns(rsb3.ExportWarning) as caught:
        notes = rsb3.export_archive(arc, out)
    assert any("1.6.2" in n and stable_baselines3.__version__ in n for n in notes)
    assert any("shared by actor and critic" in n for n in notes)
    assert len(caught) == len(notes)
    back = (RecurrentPPO if recurrent else PPO).load(out, device="cpu")
    np.testing.assert_array_equal(_sb3_actions(back, obs, recurrent), expected)
    assert not any(k.startswith("mlp_extractor.shared_net") for k in back.policy.state_dict())
    # the optimizer state follows its parameters: one Adam step over sum(p^2) leaves exp_avg = 0.1 * 2p
    opt = back.policy.optimizer.state_dict()
    params = list(back.policy.parameters())
    assert len(opt["state"]) == len(params)
    for i, p in enumerate(params):
        torch.testing.assert_close(opt["state"][i]["exp_avg"], 0.2 * p.detach(), rtol=1e-5, atol=1e-6)
    # values agree too: the critic sees the shared layers as before
    ref_model = rsb3.load(arc)
    t = torch.as_tensor(obs)
    if not recurrent:
        torch.testing.assert_close(back.policy.predict_values(t), ref_model.policy.predict_values(t))


def test_shared_layers_save_again_keeps_the_layout(tmp_path):
    net_arch = [32, {"pi": [16], "vf": [16]}]
    src = str(tmp_path / "old.zip")
    L.write_ppo_1x(src, net_arch, seed=2)
    arc = str(tmp_path / "old.rlarchive")
    rsb3.import_archive(src, arc)
    again = str(tmp_path / "again.rlarchive")
    report = rsb3.save(rsb3.load(arc), again)
    assert report.policy == "written"
    with rlarchive.open(arc) as a, rlarchive.open(again) as b:
        assert sorted(a.tensors("policy")) == sorted(b.tensors("policy"))
        assert a.data["policy_kwargs"] == b.data["policy_kwargs"]


def test_shared_layers_the_net_arch_does_not_describe(tmp_path):
    src = str(tmp_path / "old.zip")
    L.write_ppo_1x(src, [32, {"pi": [16], "vf": [16]}])
    arc = str(tmp_path / "old.rlarchive")
    rsb3.import_archive(src, arc)
    with rlarchive.open(arc, spaces="neutral") as ar:
        data = {k: v for k, v in ar.data.items()}
        tensors = {
            g: {k: np.array(v) for k, v in ar.tensors(g).items()}
            for g in ar.groups
            if g == "policy" or g == "variables"
        }
        opts = {n: ar.optimizer(n) for n in ar.optimizer_names}
        meta = dict(ar.metadata)
    data["policy_kwargs"] = dict(data["policy_kwargs"], net_arch=[64, {"pi": [16], "vf": [16]}])
    bad = str(tmp_path / "bad.rlarchive")
    rlarchive.save(bad, data, tensors, opts, metadata=meta)
    with pytest.raises(RlarchiveError) as e:
        rsb3.load(bad)
    assert e.value.code == "VALUE_UNSUPPORTED" and "shared_net" in e.value.message
    with pytest.raises(RlarchiveError) as e:
        rsb3.export_archive(bad, str(tmp_path / "bad.zip"))
    assert e.value.code == "VALUE_UNSUPPORTED"


@pytest.mark.slow
def test_cli_import_and_export_of_a_shared_layer_model(tmp_path):
    src = str(tmp_path / "old.zip")
    L.write_ppo_1x(src, [32, {"pi": [16], "vf": [16]}])
    arc, out = str(tmp_path / "old.rlarchive"), str(tmp_path / "back.zip")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "import-sb3", src, arc, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["policy"] == "written"
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "export-sb3", arc, out],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith("warning: ")]
    assert any("1.6.2" in x for x in lines) and any("shared by actor and critic" in x for x in lines)
    PPO.load(out, device="cpu")


def test_shared_layout_needs_the_old_net_arch():
    state = {"mlp_extractor.shared_net.0.weight": torch.zeros(8, 4), "mlp_extractor.shared_net.0.bias": torch.zeros(8)}
    assert shared_layers.layout({"net_arch": [8]}, state) == shared_layers.Layout((8,), (), ())
    assert shared_layers.layout({"net_arch": [8, {"pi": [4]}]}, state) == shared_layers.Layout((8,), (4,), ())
    assert (
        shared_layers.layout({"net_arch": {"pi": [8], "vf": [8]}}, {"policy_net.0.weight": torch.zeros(8, 4)}) is None
    )
    for arch in ({"pi": [8], "vf": [8]}, [16], [8, 8], [8, {"pi": ["x"]}], None, [True]):
        with pytest.raises(RlarchiveError) as e:
            shared_layers.layout({"net_arch": arch}, state)
        assert e.value.code == "VALUE_UNSUPPORTED"


# ---------------------------------------------------------------------------
# PReLU
# ---------------------------------------------------------------------------


def _ppo_prelu():
    kwargs = dict(net_arch=dict(pi=[16, 16], vf=[8]), activation_fn=torch.nn.PReLU)
    model = PPO(
        "MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1, policy_kwargs=kwargs, seed=4, device="cpu"
    )
    with torch.no_grad():  # distinct slopes, so that a slope read from the wrong layer shows
        for i, m in enumerate(model.policy.mlp_extractor.policy_net):
            if isinstance(m, torch.nn.PReLU):
                m.weight.fill_(0.1 + 0.3 * i)
    return model


def test_prelu_is_described_as_a_prelu_node():
    model = _ppo_prelu()
    desc = sb3_policy.describe(model)
    prelu = [n for n in desc["nodes"] if n["op"] == "prelu"]
    assert [n["weight"].name for n in prelu] == [
        "mlp_extractor.policy_net.1.weight",
        "mlp_extractor.policy_net.3.weight",
    ]
    for n in prelu:
        assert n["weight"].group == "policy" and n["weight"].array.shape == (1,)
        np.testing.assert_array_equal(n["weight"].array, model.policy.state_dict()[n["weight"].name].numpy())
    assert not [n for n in desc["nodes"] if n["op"] == "activation"]


def test_prelu_end_to_end(tmp_path):
    pytest.importorskip("rlarchive.extensions.policy.ops", reason="the prelu evaluators are not installed")
    model = _ppo_prelu()
    arc = str(tmp_path / "prelu.rlarchive")
    report = rsb3.save(model, arc)
    assert report.policy == "written", report.policy
    obs = np.random.default_rng(5).normal(0, 2, (64, 4)).astype(np.float32)
    np.testing.assert_array_equal(_portable_actions(arc, obs), model.predict(obs, deterministic=True)[0])
    src = str(tmp_path / "prelu.zip")
    model.save(src)
    again = str(tmp_path / "again.rlarchive")
    assert rsb3.import_archive(src, again).policy == "written"
    np.testing.assert_array_equal(_portable_actions(again, obs), model.predict(obs, deterministic=True)[0])


# ---------------------------------------------------------------------------
# exports of SB3 1.x models, and what the import imports
# ---------------------------------------------------------------------------


def test_export_of_an_sb3_1x_model_is_for_the_installed_sb3(tmp_path):
    model = _a2c_rmsprop_tf_like()
    src = str(tmp_path / "a2c.zip")
    model.save(src)
    _as_sb3_1_8(src, src)
    arc = str(tmp_path / "a2c.rlarchive")
    rsb3.import_archive(src, arc)
    out = str(tmp_path / "back.zip")
    with pytest.warns(rsb3.ExportWarning, match="1.8.0"):
        notes = rsb3.export_archive(arc, out)
    assert len(notes) == 1 and stable_baselines3.__version__ in notes[0]
    import zipfile

    assert zipfile.ZipFile(out).read("_stable_baselines3_version").decode() == stable_baselines3.__version__
    A2C.load(out, device="cpu")
    # asked for explicitly, an SB3 1.x target is still refused
    with pytest.raises(RlarchiveError) as e:
        rsb3.export_archive(arc, out, sb3_version="1.8")
    assert e.value.code == "VALUE_UNSUPPORTED"
    # a version that cannot be read: the installed SB3 too
    odd, odd_arc = str(tmp_path / "odd.zip"), str(tmp_path / "odd.rlarchive")
    _as_sb3_1_8(str(tmp_path / "a2c.zip"), odd, b"unknown\x1b[2J")
    rsb3.import_archive(odd, odd_arc)
    with pytest.warns(rsb3.ExportWarning, match="unknown"):
        assert len(rsb3.export_archive(odd_arc, out)) == 1
    assert zipfile.ZipFile(out).read("_stable_baselines3_version").decode() == stable_baselines3.__version__
    # an archive of SB3 2.x exports for the version that wrote it, with no note
    plain = str(tmp_path / "plain.rlarchive")
    rsb3.save(model, plain)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.ExportWarning)
        assert rsb3.export_archive(plain, out) == []


_IMPORT_PROBE = """
import json, sys
block = sys.argv[3] == "block"
if block:  # as if neither were installed
    sys.modules["stable_baselines3"] = None
    sys.modules["gymnasium"] = None
from rlarchive import sb3 as rsb3
report = rsb3.import_archive(sys.argv[1], sys.argv[2])
print(json.dumps({"policy": report.policy,
                  "loaded": sorted(m for m in ("gymnasium", "gym", "stable_baselines3", "sb3_contrib", "marker_pkg")
                                   if sys.modules.get(m) is not None)}))
"""


@pytest.mark.slow
def test_what_the_import_imports(tmp_path):
    """Decoding imports nothing; the portable policy needs SB3 and gymnasium; a module the file names is never imported."""
    model = _a2c_rmsprop_tf_like()
    src = str(tmp_path / "a2c.zip")
    model.save(src)
    # a package that leaves a mark when imported, named by the file as its features extractor
    pkg = tmp_path / "site" / "marker_pkg"
    pkg.mkdir(parents=True)
    mark = tmp_path / "imported"
    (pkg / "__init__.py").write_text(f"open({str(mark)!r}, 'w').close()\nclass Extractor:\n    pass\n")
    extractor = F._standin_class("marker_pkg", "Extractor")
    pk = F.cloudpickle_with(dict(features_extractor_class=extractor), {"marker_pkg": {"Extractor": extractor}})
    named = str(tmp_path / "named.zip")
    F.rewrite_sb3_zip(src, named, {"policy_kwargs": ("pickle", pk, "<class 'dict'>")})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, str(tmp_path / "site")]))

    def probe(zip_path, mode):
        r = subprocess.run(
            [sys.executable, "-c", _IMPORT_PROBE, zip_path, str(tmp_path / f"{mode}.rlarchive"), mode],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])

    out = probe(src, "block")
    assert out["loaded"] == [] and out["policy"].startswith("not written: stable-baselines3 is not installed")
    out = probe(src, "plain")
    assert out["policy"] == "written" and {"gymnasium", "stable_baselines3"} <= set(out["loaded"])
    out = probe(named, "named")
    assert "marker_pkg" not in out["loaded"] and not mark.exists()
    assert out["policy"].startswith("not written") and "marker_pkg.Extractor" in out["policy"]


# ---------------------------------------------------------------------------
# ARS's linear policy of sb3-contrib < 1.7.0
# ---------------------------------------------------------------------------


def _as_sb3_contrib_1_6(src: str, dst: str) -> None:
    """sb3-contrib < 1.7.0 saved ARS's linear policy with ``action_net`` one Linear: ``action_net.weight``."""
    import io
    import zipfile

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            raw = zin.read(info.filename)
            if info.filename == "policy.pth":
                state = torch.load(io.BytesIO(raw), weights_only=True)
                buf = io.BytesIO()
                torch.save({k.replace("action_net.0.", "action_net."): v for k, v in state.items()}, buf)
                raw = buf.getvalue()
            elif info.filename == "_stable_baselines3_version":
                raw = b"1.3.1a9"
            zout.writestr(info, raw)


def test_ars_linear_policy_of_sb3_contrib_before_1_7(tmp_path):
    """The import stores the weight under the name ARS's own load gives it now (action_net.0.weight), so the
    portable policy is written and acts as sb3-contrib's load of the old file does; load and export agree."""
    from sb3_contrib import ARS

    model = ARS("LinearPolicy", "Pendulum-v1", n_delta=2, seed=0, device="cpu")
    with torch.no_grad():
        model.policy.action_net[0].weight.uniform_(-1, 1)
    src, old = str(tmp_path / "ars.zip"), str(tmp_path / "ars-1.6.zip")
    model.save(src)
    _as_sb3_contrib_1_6(src, old)
    reference = ARS.load(old, device="cpu")  # sb3-contrib renames the old name itself
    obs = np.random.default_rng(0).uniform(-1, 1, (16, 3)).astype(np.float32)
    expected = reference.predict(obs, deterministic=True)[0]
    arc = str(tmp_path / "ars.rlarchive")
    report = rsb3.import_archive(old, arc)
    assert report.policy == "written", report.policy
    assert any("ARS linear policy of sb3-contrib < 1.7.0" in n for n in report.notes), report.notes
    with rlarchive.open(arc) as ar:
        assert list(ar.tensors("policy")) == ["action_net.0.weight"]
    np.testing.assert_allclose(_portable_actions(arc, obs), expected, atol=1e-5)
    np.testing.assert_array_equal(rsb3.load(arc).predict(obs, deterministic=True)[0], expected)
    with pytest.warns(rsb3.ExportWarning, match="1.3.1a9"):  # written for the installed SB3, as it says
        rsb3.export_archive(arc, str(tmp_path / "back.zip"))
    np.testing.assert_array_equal(
        ARS.load(str(tmp_path / "back.zip"), device="cpu").predict(obs, deterministic=True)[0], expected
    )
