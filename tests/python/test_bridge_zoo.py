"""Every zoo model through the whole bridge: import, validate, export, SB3 load, rlarchive load, re-import.

For each tiny real model of :mod:`sb_zoo` (every algorithm of SB3 and
sb3-contrib and the features of the catalogue):

- ``import_archive`` tells the algorithm from the data alone and records its class;
- the archive is valid, and what stays opaque is only what has no neutral
  form (a lambda, action noise), never the architecture;
- ``export_archive`` writes a zip that SB3's own ``load`` reads with
  bit-identical parameters and the same deterministic actions;
- importing that export again gives the same canonical dump (Annex B);
- the JavaScript reader reads every tensor with the SHA-256 Python computes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import warnings

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import sb_zoo  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.sb3 import algorithms  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
NAMES = list(sb_zoo.CATALOGUE)

#: Data keys that may stay opaque: values with no neutral form, none of which decides the architecture.
MAY_STAY_OPAQUE = {"learning_rate", "lr_schedule", "action_noise"}


@pytest.fixture(scope="module")
def imported(sb3_zoo, tmp_path_factory):
    """name -> (the archive, its import report), imported once for this module."""
    folder = tmp_path_factory.mktemp("bridge_zoo")
    out = {}
    for name in NAMES:
        arc = str(folder / f"{name}.rlarchive")
        out[name] = (arc, rsb3.import_archive(sb3_zoo[name].path, arc))
    return out


def _load_env(m, entry):
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    venv = DummyVecEnv([entry.env])
    normalizer = None
    if m.vecnormalize is not None:
        normalizer = venv = VecNormalize.load(m.vecnormalize, venv)
        normalizer.training = False
    return venv, normalizer


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_import_export_and_reimport(name, sb3_zoo, imported, tmp_path):
    m, entry = sb3_zoo[name], sb_zoo.CATALOGUE[name]
    arc, report = imported[name]
    # the algorithm, told from the data, and its exact class
    assert report.algorithm == entry.algorithm
    with rlarchive.open(arc, spaces="neutral") as ar:
        assert ar.metadata["sb3.algorithm"] == entry.algorithm
        assert ar.metadata["sb3.algorithm_class"] == f"{entry.algo.__module__}.{entry.algo.__qualname__}"
    assert rlarchive.validate(arc)["valid"]
    # only values without a neutral form stay opaque, each at its smallest leaf
    top = {o.key.split("/")[0] for o in report.opaque}
    assert top <= MAY_STAY_OPAQUE, report.opaque
    assert not top & rsb3.ARCHITECTURE_KEYS

    # export: SB3's own load gives the same parameters and actions
    out = str(tmp_path / "export.zip")
    rsb3.export_archive(arc, out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        venv, normalizer = _load_env(m, entry)
        original = entry.algo.load(m.path, env=venv, device="cpu")
        exported = entry.algo.load(out, env=venv, device="cpu")
    a, b = original.get_parameters(), exported.get_parameters()
    assert a.keys() == b.keys()
    for group in a:
        for k, t in a[group].items():
            if hasattr(t, "dtype"):
                assert t.dtype == b[group][k].dtype and bool((t == b[group][k]).all()), (group, k)
    got = sb_zoo.predict_actions(
        exported, m.observations, vecnormalize=normalizer, action_masks=m.action_masks, episode_starts=m.episode_starts
    )
    for x, y in zip(m.actions, got):
        assert x.dtype == y.dtype and np.array_equal(x, y)

    # importing the export gives the same canonical dump
    again = str(tmp_path / "again.rlarchive")
    rsb3.import_archive(out, again)
    with rlarchive.open(arc, spaces="neutral") as a1, rlarchive.open(again, spaces="neutral") as a2:
        assert a1.dump() == a2.dump()


@pytest.mark.parametrize("version", ["2.0", "2.4", "2.7"])
def test_export_for_an_older_sb3_writes_its_schedule_form(version, sb3_zoo, imported, tmp_path):
    """Before 2.7 SB3 pickles schedules as closures; from 2.7 as objects; NumPy is written as both majors read it."""
    import base64
    import zipfile

    from rlarchive import unpickle

    name = next(n for n in NAMES if sb_zoo.LINEAR_SCHEDULE in sb_zoo.CATALOGUE[n].features)
    arc, _ = imported[name]
    out = str(tmp_path / "old.zip")
    rsb3.export_archive(arc, out, sb3_version=version)
    with zipfile.ZipFile(out) as z:
        assert z.read("_stable_baselines3_version").decode().startswith(version + ".")
        data = json.loads(z.read("data"))
    names = set()
    for item in data.values():
        if isinstance(item, dict) and ":serialized:" in item:
            names |= set(unpickle.describe_globals(base64.b64decode(item[":serialized:"])))
    assert not any(mod.startswith("numpy._core") for mod, _ in names), names
    classes = {n for _, n in names}
    if version == "2.7":
        assert "FloatSchedule" in classes
    else:
        assert not classes & {"FloatSchedule", "LinearSchedule", "ConstantSchedule"}
    # SB3 here loads it either way, and importing it again gives the same values
    again = str(tmp_path / "again.rlarchive")
    rsb3.import_archive(out, again)
    with rlarchive.open(arc, spaces="neutral") as a1, rlarchive.open(again, spaces="neutral") as a2:
        assert a1.data["lr_schedule"] == a2.data["lr_schedule"]


def test_every_algorithm_is_in_the_zoo():
    assert {e.algorithm for e in sb_zoo.CATALOGUE.values()} == set(algorithms.ALGORITHMS)


def test_javascript_reads_every_tensor(imported):
    node = shutil.which("node")
    if node is None or not os.path.isdir(os.path.join(ROOT, "reader-js", "node_modules")):
        pytest.skip("node or the JavaScript reader's npm install is missing")
    js = os.path.abspath(os.path.join(ROOT, "reader-js", "src", "index.js"))
    paths = [imported[n][0] for n in NAMES]
    script = f"""
        import {{ open }} from {json.dumps("file://" + js)};
        import {{ createHash }} from 'node:crypto';
        const out = {{}};
        for (const p of {json.dumps(paths)}) {{
          const ar = await open(p);
          const groups = {{}};
          for (const g of ar.groups) {{
            groups[g] = {{}};
            for (const info of ar.tensorInfo(g)) {{
              const t = await ar.tensor(g, info.name, {{verify: true}});
              const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
              groups[g][info.name] = createHash('sha256').update(bytes).digest('hex');
            }}
          }}
          out[p] = groups;
          await ar.close();
        }}
        console.log(JSON.stringify(out));
    """
    r = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    for p in paths:
        with rlarchive.open(p, spaces="neutral") as ar:
            want = {g: {n: ar.tensor_sha256(g, n) for n in ar.tensor_info(g)} for g in ar.groups}
        assert got[p] == want, p


@pytest.mark.parametrize("name", ["dqn_cartpole", "qrdqn_cartpole"])
def test_export_for_sb3_before_2_4_puts_the_target_network_in_the_optimizer(name, sb3_zoo, imported, tmp_path):
    """Before 2.4, DQN's and QR-DQN's optimizer held the target network's parameters too; the export writes that form and load fits it back."""
    import io
    import zipfile

    import torch

    arc, _ = imported[name]
    out = tmp_path / "old.zip"
    rsb3.export_archive(arc, out, sb3_version="2.3")
    with zipfile.ZipFile(out) as z:
        old = torch.load(io.BytesIO(z.read("policy.optimizer.pth")), weights_only=True)
        policy = torch.load(io.BytesIO(z.read("policy.pth")), weights_only=True)
    online = "q_net." if name.startswith("dqn") else "quantile_net."
    n = sum(1 for k in policy if k.startswith(online))
    assert len(old["param_groups"][0]["params"]) == 2 * n
    # importing that file again and loading it gives the optimizer of the online network only
    again = tmp_path / "again.rlarchive"
    rsb3.import_archive(out, again)
    model = rsb3.load(again)
    assert len(model.policy.optimizer.param_groups[0]["params"]) == n
