"""The portable policy computes Stable-Baselines3's deterministic actions for every standard zoo model.

Each model is imported with its VecNormalize statistics (the importer writes
the portable policy, extension RLA_policy), and the archive's policy
(``Archive.policy()``, NumPy alone) acts on the zoo's raw sample observations,
carrying recurrent state and action masks as SB3 does; integer actions must
be equal, float actions within 1e-4 (absolute or relative).
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import sb_zoo  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import sb3  # noqa: E402

NAMES = list(sb_zoo.CATALOGUE)


def same_action(got: np.ndarray, want: np.ndarray) -> bool:
    """Spec RLA_policy: integer actions exactly, float actions within 1e-4 absolute or relative."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind == "f":
        return bool(np.all(np.abs(got - want) <= np.maximum(1e-4, 1e-4 * np.abs(want))))
    return bool(np.array_equal(got, want))


@pytest.fixture(scope="module")
def imported(sb3_zoo, tmp_path_factory):
    """name -> (archive written by import_archive with the VecNormalize statistics, the import report)."""
    folder = tmp_path_factory.mktemp("policy_zoo")
    out = {}
    for name in NAMES:
        m = sb3_zoo[name]
        path = folder / f"{name}.rlarchive"
        report = sb3.import_archive(m.path, path, vec_normalize=m.vecnormalize)
        out[name] = (path, report)
    return out


def _act_like_sb3(policy, m) -> None:
    """The zoo's raw sample observations in, SB3's actions out (the policy normalises them itself)."""
    state = None
    for i, obs in enumerate(m.observations):
        masks = m.action_masks[i] if m.action_masks is not None else None
        starts = [m.episode_starts[i]] if m.episode_starts is not None else None
        action, state = policy.predict(obs, state=state, episode_start=starts, action_masks=masks)
        assert same_action(np.asarray(action), m.actions[i]), (i, action, m.actions[i])


@pytest.mark.parametrize("name", NAMES)
def test_the_archived_policy_acts_like_sb3(name, sb3_zoo, imported):
    m, entry = sb3_zoo[name], sb_zoo.CATALOGUE[name]
    path, report = imported[name]
    with rlarchive.open(path) as ar:
        policy = ar.policy()
    if sb_zoo.USER_CLASS in entry.features:
        assert policy is None and report.policy.startswith("not written") and "features_extractor" in report.policy
        return
    assert report.policy == "written" and policy is not None
    _act_like_sb3(policy, m)


@pytest.mark.parametrize(
    "name",
    [
        "recurrent_ppo_dict_shared_lstm",
        "sac_vecnormalize_dict",
        "maskable_ppo_multidiscrete_dict",
        "ppo_cnn_channel_last",
    ],
)
def test_save_from_a_live_model_writes_the_policy(name, sb3_zoo, tmp_path):
    m, entry = sb3_zoo[name], sb_zoo.CATALOGUE[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = entry.algo.load(m.path, device="cpu")
    path = tmp_path / "saved.rlarchive"
    report = sb3.save(model, path, vec_normalize=m.vecnormalize)
    assert report.policy == "written"
    with rlarchive.open(path) as ar:
        _act_like_sb3(ar.policy(), m)


@pytest.mark.parametrize("name", ["ppo_dict_obs_image", "recurrent_ppo_pendulum", "sac_vecnormalize_dict"])
def test_the_archived_policy_needs_numpy_only(name, sb3_zoo, imported, tmp_path):
    """In a process where torch, SB3, sb3-contrib and gymnasium cannot be imported, the archive still acts like SB3."""
    m = sb3_zoo[name]
    path, _ = imported[name]
    inputs = {}
    for i, obs in enumerate(m.observations):
        for k, v in obs.items() if isinstance(obs, dict) else [("", obs)]:
            inputs[f"obs{i}.{k}"] = np.asarray(v)
        inputs[f"act{i}"] = m.actions[i]
        if m.episode_starts is not None:
            inputs[f"start{i}"] = np.asarray([m.episode_starts[i]])
    np.savez(tmp_path / "cases.npz", **inputs)
    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'stable_baselines3', 'sb3_contrib', 'gymnasium'):
            raise ImportError(name + ' is blocked')
sys.meta_path.insert(0, Block())
import numpy as np
import rlarchive
z = np.load({str(tmp_path / "cases.npz")!r})
with rlarchive.open({str(path)!r}) as ar:
    policy = ar.policy()
state = None
for i in range({len(m.observations)}):
    parts = {{k.split('.', 1)[1]: z[k] for k in z.files if k.startswith(f'obs{{i}}.')}}
    obs = parts[''] if '' in parts else parts
    start = z[f'start{{i}}'] if f'start{{i}}' in z.files else None
    action, state = policy.predict(obs, state=state, episode_start=start)
    want = z[f'act{{i}}']
    ok = np.array_equal(action, want) if want.dtype.kind != 'f' else np.all(np.abs(action - want) <= np.maximum(1e-4, 1e-4 * np.abs(want)))
    assert ok and action.dtype == want.dtype, (i, action, want)
print('ok', 'torch' in sys.modules)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ok", "False"]


def test_javascript_acts_like_sb3_on_every_zoo_model(sb3_zoo, imported):
    """The JavaScript reader's policy, through the conformance predict request, gives SB3's actions for every standard model."""
    import json
    import os
    import shutil

    from generate import judge_actions
    from suite import ROOT

    from rlarchive.values import dump_value

    node = shutil.which("node")
    if node is None or not os.path.isdir(os.path.join(ROOT, "reader-js", "node_modules")):
        pytest.skip("node or the JavaScript reader's npm install is missing")
    names = [n for n in NAMES if sb_zoo.USER_CLASS not in sb_zoo.CATALOGUE[n].features]
    lines = [{"cmd": "start", "protocol": 1}]
    for seq, name in enumerate(names, 1):
        m = sb3_zoo[name]
        req = {
            "cmd": "predict",
            "seq": seq,
            "file": str(imported[name][0]),
            "observations": [dump_value(o) for o in m.observations],
        }
        if m.episode_starts is not None:
            req["episode_starts"] = list(m.episode_starts)
        if m.action_masks is not None:
            req["action_masks"] = [dump_value(np.asarray(k)) for k in m.action_masks]
        lines.append(req)
    lines.append({"cmd": "stop"})
    r = subprocess.run(
        [node, os.path.join(ROOT, "reader-js", "bin", "conformance.mjs")],
        input="".join(json.dumps(x) + "\n" for x in lines),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    replies = [json.loads(line) for line in r.stdout.splitlines()][1:]
    judge = judge_actions()
    for name, reply in zip(names, replies):
        assert reply.get("result") == "actions", (name, reply)
        want = [dump_value(np.asarray(a)) for a in sb3_zoo[name].actions]
        assert judge(reply["actions"], want) == "", name
    assert len(replies) == len(names)


def test_an_import_survives_a_policy_it_cannot_write(sb3_zoo, tmp_path, monkeypatch):
    """A description the checks refuse is left out, the model is still imported, and the report says why."""
    from rlarchive.sb3 import portable_policy as sb3_policy

    real = sb3_policy.describe

    def broken(model):
        desc = real(model)
        desc["action"] = {"op": "argmax", "in": "obs"}  # the observation is not as wide as the action space
        return desc

    monkeypatch.setattr(sb3_policy, "describe", broken)
    out = tmp_path / "m.rlarchive"
    report = sb3.import_archive(sb3_zoo["ppo_cartpole"].path, out)
    assert report.policy.startswith("not written") and "EXTENSION_INVALID" in report.policy
    with rlarchive.open(out) as ar:
        assert ar.policy() is None and ar.data["gamma"] == 0.99
