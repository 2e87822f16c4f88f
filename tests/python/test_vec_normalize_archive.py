"""VecNormalize statistics travel inside the archive (extension RLA_vec_normalize) and come back out for SB3."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import sb_zoo  # noqa: E402
from suite import ROOT, schema_validator  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import sb3
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.extensions import vec_normalize as ext  # noqa: E402
from rlarchive.sb3 import vec_normalize as vecnormalize  # noqa: E402

NAMES = [n for n, e in sb_zoo.CATALOGUE.items() if e.vecnormalize is not None]


def _same_stats(a: ext.Statistics, b: ext.Statistics) -> bool:
    scalars = ("norm_obs", "norm_reward", "clip_obs", "clip_reward", "epsilon", "gamma", "training", "obs_keys")
    if any(getattr(a, f) != getattr(b, f) for f in scalars):
        return False
    pairs = [(a.ret, b.ret)]
    if isinstance(b.obs, dict):
        if not isinstance(a.obs, dict) or list(a.obs) != list(b.obs):
            return False
        pairs += [(a.obs[k], b.obs[k]) for k in b.obs]
    else:
        pairs.append((a.obs, b.obs))
    return all(
        x.mean.dtype == y.mean.dtype
        and x.mean.tobytes() == y.mean.tobytes()
        and x.var.tobytes() == y.var.tobytes()
        and x.count == y.count
        for x, y in pairs
    )


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rlarchive", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_import_stores_the_statistics_and_export_gives_them_back(name, sb3_zoo, tmp_path):
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    m, entry = sb3_zoo[name], sb_zoo.CATALOGUE[name]
    want = vecnormalize.read(m.vecnormalize)
    out = tmp_path / "m.rlarchive"
    r = _cli("import-sb3", m.path, str(out), "--vecnormalize", m.vecnormalize)
    assert r.returncode == 0, r.stderr
    with rlarchive.open(out) as ar:
        assert ext.EXTENSION in ar.extensions_used
        got = ar.vec_normalize()
        ar.dump()  # checks the extension member as every reader must
    assert _same_stats(got, want)
    report = rlarchive.validate(str(out))
    assert report["valid"] and not [i for i in report["issues"] if i["code"] == "EXTENSION_UNKNOWN"], report

    back_zip, back_pkl = tmp_path / "back.zip", tmp_path / "back.pkl"
    r = _cli("export-sb3", str(out), str(back_zip), "--vecnormalize-out", str(back_pkl))
    assert r.returncode == 0, r.stderr
    assert _same_stats(vecnormalize.read(back_pkl), want)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        original = VecNormalize.load(m.vecnormalize, DummyVecEnv([entry.env]))
        loaded = VecNormalize.load(str(back_pkl), DummyVecEnv([entry.env]))
        rebuilt = sb3.load_vec_normalize(out, DummyVecEnv([entry.env]))
    for vn in (original, loaded, rebuilt):
        vn.training = False
    for obs in m.observations:
        a = original.normalize_obs(obs)
        for vn in (loaded, rebuilt):
            b = vn.normalize_obs(obs)
            if isinstance(a, dict):
                assert all(np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes() for k in a)
            else:
                assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


@pytest.mark.parametrize("name", NAMES)
def test_save_from_a_live_model_and_wrapper(name, sb3_zoo, tmp_path):
    from stable_baselines3.common.vec_env import DummyVecEnv

    m, entry = sb3_zoo[name], sb_zoo.CATALOGUE[name]
    want = vecnormalize.read(m.vecnormalize)
    live = vecnormalize.wrap(want, DummyVecEnv([entry.env]))
    imported = tmp_path / "plain.rlarchive"
    sb3.import_archive(m.path, imported)
    model = sb3.load(imported)
    out = tmp_path / "saved.rlarchive"
    sb3.save(model, out, vec_normalize=live)
    with rlarchive.open(out) as ar:
        assert _same_stats(ar.vec_normalize(), want)
    # a path or the statistics themselves give the same archive
    for given in (m.vecnormalize, want):
        other = tmp_path / "other.rlarchive"
        sb3.save(model, other, vec_normalize=given)
        with rlarchive.open(other) as ar:
            assert _same_stats(ar.vec_normalize(), want)


@pytest.mark.parametrize("training", [True, False])
def test_load_vec_normalize_for_training_or_evaluation(training, sb3_zoo, tmp_path):
    """training=True gives the flags the archive records; training=False the flags for evaluation; the statistics are the stored ones."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    m, entry = sb3_zoo["ppo_vecnormalize_box"], sb_zoo.CATALOGUE["ppo_vecnormalize_box"]
    want = vecnormalize.read(m.vecnormalize)
    assert want.training and want.norm_reward  # the wrapper was saved while training, rewards normalised
    out = tmp_path / "m.rlarchive"
    sb3.import_archive(m.path, out, vec_normalize=m.vecnormalize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vn = sb3.load_vec_normalize(out, DummyVecEnv([entry.env]), training=training)
    assert (vn.training, vn.norm_reward) == ((want.training, want.norm_reward) if training else (False, False))
    assert _same_stats(
        dataclasses.replace(vecnormalize.from_wrapper(vn), training=want.training, norm_reward=want.norm_reward), want
    )
    reward = np.array([3.0])
    assert bool(np.array_equal(vn.normalize_reward(reward), reward)) is (not training)
    vn.reset()
    vn.step(np.array([vn.action_space.sample()]))
    moved = vecnormalize.from_wrapper(vn)
    assert (moved.obs.count != want.obs.count) is training  # evaluation leaves the stored statistics as they are


def test_an_archive_without_statistics(sb3_zoo, tmp_path):
    m = sb3_zoo["ppo_cartpole"]
    out = tmp_path / "plain.rlarchive"
    sb3.import_archive(m.path, out)
    with rlarchive.open(out) as ar:
        assert ar.vec_normalize() is None and ext.EXTENSION not in ar.extensions_used
    with pytest.raises(RlarchiveError) as e:
        sb3.export_archive(out, tmp_path / "x.zip", vec_normalize_out=tmp_path / "x.pkl")
    assert e.value.code == "VALUE_UNSUPPORTED"
    assert not (tmp_path / "x.pkl").exists()


def test_statistics_that_do_not_fit_the_observation_space_are_not_written(sb3_zoo, tmp_path):
    name = next(n for n in NAMES if not isinstance(vecnormalize.read(sb3_zoo[n].vecnormalize).obs, dict))
    m = sb3_zoo[name]
    stats = vecnormalize.read(m.vecnormalize)
    assert isinstance(stats.obs, ext.Stats)
    wrong = dataclasses.replace(
        stats, obs=ext.Stats(np.zeros(stats.obs.mean.size + 1), np.ones(stats.obs.mean.size + 1), 1.0)
    )
    out = tmp_path / "bad.rlarchive"
    with pytest.raises(RlarchiveError) as e:
        sb3.import_archive(m.path, out, vec_normalize=wrong)
    assert e.value.code == "WRITE_INVALID" and "shape" in e.value.message
    assert not out.exists()


def test_the_member_holds_values_and_tensors_only(sb3_zoo, tmp_path):
    name = NAMES[0]
    m = sb3_zoo[name]
    out = tmp_path / "m.rlarchive"
    sb3.import_archive(m.path, out, vec_normalize=m.vecnormalize)
    with rlarchive.open(out) as ar:
        raw = ar.source.read(ar.members[ext.MEMBER].data_offset, ar.members[ext.MEMBER].size)
    doc = json.loads(raw)
    assert list(doc) == ["vec_normalize"]
    text = json.dumps(doc)
    assert '"opaque"' not in text and "pickle" not in text


def test_javascript_reads_the_same_statistics(sb3_zoo, tmp_path):
    import os
    import shutil

    node = shutil.which("node")
    if node is None or not os.path.isdir(os.path.join(ROOT, "reader-js", "node_modules")):
        pytest.skip("node or the JavaScript reader's npm install is missing")
    paths = []
    for name in NAMES:
        out = tmp_path / f"{name}.rlarchive"
        sb3.import_archive(sb3_zoo[name].path, out, vec_normalize=sb3_zoo[name].vecnormalize)
        paths.append(str(out))
    for n_envs in (2, 100):  # a running return inline, and one referenced from the tensor group
        out = tmp_path / f"returns-{n_envs}.rlarchive"
        _write(out, _with_returns(np.random.default_rng(n_envs).normal(size=n_envs)))
        paths.append(str(out))
    js = os.path.abspath(os.path.join(ROOT, "reader-js", "src", "index.js"))
    script = f"""
        import {{ open }} from {json.dumps("file://" + js)};
        const hex = (nd) => Buffer.from(nd.data.buffer, nd.data.byteOffset, nd.data.byteLength).toString('hex');
        const st = (s) => ({{ mean: hex(s.mean), var: hex(s.var), shape: s.mean.shape, count: s.count }});
        const out = {{}};
        for (const p of {json.dumps(paths)}) {{
          const ar = await open(p);
          const v = await ar.vecNormalize();
          const obs = v.obs === null ? null : v.obs_keys === null ? st(v.obs) : Object.fromEntries(v.obs_keys.map((k) => [k, st(v.obs[k])]));
          const returns = v.returns === undefined ? null : hex(v.returns);
          out[p] = {{ ...v, obs, ret: st(v.ret), returns }};
          await ar.close();
        }}
        console.log(JSON.stringify(out));
    """
    r = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)

    def st(s: ext.Stats) -> dict:
        return {
            "mean": s.mean.tobytes().hex(),
            "var": s.var.tobytes().hex(),
            "shape": list(s.mean.shape),
            "count": s.count,
        }

    for p in paths:
        with rlarchive.open(p) as ar:
            want = ar.vec_normalize()
        obs = (
            None
            if want.obs is None
            else st(want.obs)
            if want.obs_keys is None
            else {k: st(want.obs[k]) for k in want.obs_keys}
        )
        scalars = {
            f: getattr(want, f)
            for f in ("norm_obs", "norm_reward", "clip_obs", "clip_reward", "epsilon", "gamma", "training", "obs_keys")
        }
        returns = None if want.returns is None else want.returns.tobytes().hex()
        assert got[p] == {**scalars, "obs": obs, "ret": st(want.ret), "returns": returns}


def _with_returns(returns) -> ext.Statistics:
    stats = ext.Stats(np.array(0.5), np.array(2.0), 7.0)
    return ext.Statistics(False, True, 10.0, 10.0, 1e-8, 0.99, True, None, None, stats, returns)


def _write(path, stats: ext.Statistics) -> None:
    from rlarchive import spaces as sp

    box = sp.Box(np.full(3, -1, np.float32), np.full(3, 1, np.float32), (3,), "F32")
    data = {"observation_space": box, "action_space": sp.Discrete(2)}
    rlarchive.save(path, data, extension_values={ext.EXTENSION: ext.to_value(stats)})


@pytest.mark.parametrize("n_envs", [3, 100])  # inline, and referenced from the tensor group (above INLINE_ARRAY_BYTES)
def test_the_running_return_round_trips(n_envs, tmp_path):
    returns = np.random.default_rng(n_envs).normal(size=n_envs) * 1e3
    out = tmp_path / "m.rlarchive"
    _write(out, _with_returns(returns))
    with rlarchive.open(out) as ar:
        got = ar.vec_normalize().returns
        ar.dump()
    assert got.dtype == np.float64 and got.tobytes() == returns.tobytes()
    assert rlarchive.validate(str(out))["valid"]
    _write(out, _with_returns(None))  # an archive without it stays valid and reads as unknown
    with rlarchive.open(out) as ar:
        assert ar.vec_normalize().returns is None


@pytest.mark.parametrize(
    "returns", [np.array([1.0, np.inf]), np.array([np.nan]), np.zeros((2, 1)), np.zeros(0), np.array(1.0)]
)
def test_a_running_return_readers_refuse_is_not_written(returns, tmp_path):
    out = tmp_path / "bad.rlarchive"
    with pytest.raises(RlarchiveError) as e:
        _write(out, _with_returns(returns))
    assert e.value.code == "WRITE_INVALID" and "running return" in e.value.message
    assert not out.exists()


def test_save_stores_the_live_wrappers_running_return(sb3_zoo, tmp_path):
    from stable_baselines3.common.vec_env import DummyVecEnv

    m, entry = sb3_zoo["ppo_vecnormalize_box"], sb_zoo.CATALOGUE["ppo_vecnormalize_box"]
    live = vecnormalize.wrap(vecnormalize.read(m.vecnormalize), DummyVecEnv([entry.env, entry.env]))
    live.reset()
    for _ in range(2):
        live.step(np.array([live.action_space.sample() for _ in range(2)]))
    assert np.all(live.returns != 0)
    imported = tmp_path / "plain.rlarchive"
    sb3.import_archive(m.path, imported)
    out = tmp_path / "saved.rlarchive"
    sb3.save(sb3.load(imported), out, vec_normalize=live)
    with rlarchive.open(out) as ar:
        assert ar.vec_normalize().returns.tobytes() == live.returns.tobytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error", sb3.LoadWarning)
        back = sb3.load_vec_normalize(out, DummyVecEnv([entry.env, entry.env]))
    assert back.returns.tobytes() == live.returns.tobytes()


@pytest.mark.slow
def test_inspect_says_whether_the_running_return_is_stored(tmp_path):
    for returns, text, count in (
        (np.array([1.0, -2.0]), "running return of 2 environments", 2),
        (None, "not stored", None),
    ):
        out = tmp_path / "m.rlarchive"
        _write(out, _with_returns(returns))
        r = _cli("inspect", str(out))
        assert r.returncode == 0 and text in r.stdout, r.stdout + r.stderr
        r = _cli("inspect", "--json", str(out))
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        schema_validator("inspect-1.0.schema.json").validate(doc)
        assert doc["vec_normalize"]["returns"] == count


@pytest.mark.parametrize("name", NAMES)
def test_the_portable_policy_takes_raw_observations_and_the_sb3_model_normalised_ones(name, sb3_zoo, tmp_path):
    """The portable policy normalises raw observations itself; the SB3 model of the same archive takes them as its
    VecNormalize hands them on: Policy.normalize_obs gives exactly that, so both act alike on the same raw input."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    m, entry = sb3_zoo[name], sb_zoo.CATALOGUE[name]
    out = tmp_path / "m.rlarchive"
    sb3.import_archive(m.path, out, vec_normalize=m.vecnormalize)
    with rlarchive.open(out) as ar:
        policy = ar.policy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sb3.load(out)
        venv = sb3.load_vec_normalize(out, DummyVecEnv([entry.env]), training=False)
    env = entry.env()
    raw, _ = env.reset(seed=0)
    assert policy.normalizes_observations
    for _ in range(20):
        normalised = policy.normalize_obs(raw)
        want = venv.normalize_obs(raw)  # SB3's own VecNormalize, with the archive's statistics
        for key in want if isinstance(want, dict) else [None]:
            a, b = (np.asarray(x if key is None else x[key]) for x in (normalised, want))
            assert a.dtype == b.dtype and np.array_equal(a, b), key
        action, _ = policy.predict(raw)
        sb3_action, _ = model.predict(normalised, deterministic=True)
        assert np.allclose(np.asarray(action, np.float64), np.asarray(sb3_action, np.float64), atol=1e-4)
        raw, _, done, truncated, _ = env.step(action)
        if done or truncated:
            raw, _ = env.reset()
    plain = tmp_path / "plain.rlarchive"
    sb3.import_archive(m.path, plain)  # the same agent without its statistics: nothing to normalise
    with rlarchive.open(plain) as ar:
        bare = ar.policy()
    assert not bare.normalizes_observations and bare.normalize_obs(raw) is raw


def _legacy_her_zip(src, dst) -> None:
    """``src`` (an SB3 zip) as SB3 1.0's HER saved its models: the data names the wrapped model's class and says
    ``online_sampling`` (Annex B.9)."""
    import base64
    import pickle
    import zipfile

    from stable_baselines3 import SAC

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            raw = zin.read(info)
            if info.filename == "data":
                data = json.loads(raw)
                data["model_class"] = {
                    ":type:": "<class 'abc.ABCMeta'>",
                    ":serialized:": base64.b64encode(pickle.dumps(SAC)).decode(),
                }
                data["online_sampling"] = True
                raw = json.dumps(data).encode()
            zout.writestr(info, raw)


def test_a_legacy_her_models_statistics_are_the_ones_its_model_saw(tmp_path):
    """SB3 1.0's HER normalised a Dict environment's keys, then gave its model 'observation' and 'desired_goal'
    concatenated (ObsDictWrapper): the import stores the two keys' statistics concatenated, and the archive's
    normalisation of the flat observation is, bit for bit, SB3's VecNormalize of the Dict then the concatenation.
    Any other model whose space is a Box keeps the rule: statistics per key are refused."""
    import gymnasium as gym
    from stable_baselines3 import SAC
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    obs_dim, goal_dim = 5, 3
    goal = gym.spaces.Box(-3, 3, (goal_dim,), np.float32)
    dict_space = gym.spaces.Dict(
        {"achieved_goal": goal, "desired_goal": goal, "observation": gym.spaces.Box(-9, 9, (obs_dim,), np.float32)}
    )
    action_space = gym.spaces.Box(-1, 1, (2,), np.float32)
    venv = VecNormalize(DummyVecEnv([sb_zoo._sampled(dict_space, action_space)]), clip_obs=2.5)
    venv.reset()
    for _ in range(40):
        venv.step(np.zeros((1, 2), np.float32))
    pkl = tmp_path / "vecnormalize.pkl"
    venv.save(str(pkl))
    flat = gym.spaces.Box(-9, 9, (obs_dim + goal_dim,), np.float32)
    model = SAC("MlpPolicy", sb_zoo.SampledEnv(flat, action_space), policy_kwargs={"net_arch": [8]}, device="cpu")
    model.save(tmp_path / "sac.zip")
    _legacy_her_zip(tmp_path / "sac.zip", tmp_path / "her.zip")

    out = tmp_path / "her.rlarchive"
    report = sb3.import_archive(tmp_path / "her.zip", out, vec_normalize=pkl)
    assert any("SB3 1.0's HER" in n for n in report.notes), report.notes
    with rlarchive.open(out) as ar:
        stats = ar.vec_normalize()
        policy = ar.policy()
    assert stats.obs_keys is None and stats.obs.mean.shape == (obs_dim + goal_dim,)
    assert stats.obs.count == venv.obs_rms["observation"].count and stats.clip_obs == 2.5
    venv.training = False
    rng = np.random.default_rng(0)
    for _ in range(20):
        raw = {k: (s.sample() * rng.uniform(0.5, 4)).astype(np.float32) for k, s in dict_space.spaces.items()}
        want = venv.normalize_obs(raw)
        want = np.concatenate([want["observation"], want["desired_goal"]])
        got = stats.normalize_obs(np.concatenate([raw["observation"], raw["desired_goal"]]))
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert np.array_equal(policy.normalize_obs(np.concatenate([raw["observation"], raw["desired_goal"]])), want)

    plain = tmp_path / "plain.rlarchive"  # the same model without HER's marks: the extension's rule stands
    with pytest.raises(RlarchiveError) as e:
        sb3.import_archive(tmp_path / "sac.zip", plain, vec_normalize=pkl)
    assert e.value.code == "WRITE_INVALID" and "obs_keys given for a box observation space" in e.value.message
    assert not plain.exists()
