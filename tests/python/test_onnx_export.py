"""The ONNX export of the portable policy acts like Stable-Baselines3 and like the NumPy policy.

Every model of the SB3 / sb3-contrib zoo is imported with its VecNormalize
statistics, exported with :func:`rlarchive.onnx_export.export_onnx`, checked
by ``onnx.checker`` (full check) and run by onnxruntime on the zoo's raw
sample observations, carrying recurrent state and action masks as SB3 does;
its actions must equal SB3's (integers exactly, floats within 1e-4). The
same holds for the ``predict`` test vectors. The command ``export-onnx`` and
the behaviour without the package ``onnx`` are checked too.
"""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import rlarchive  # noqa: E402
from rlarchive import onnx_export  # noqa: E402
from rlarchive import spaces as sp  # noqa: E402
from rlarchive.conformance import same_actions  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.onnx_export import export_onnx, onnx_inputs  # noqa: E402
from rlarchive.policy import ACTIVATIONS, Policy  # noqa: E402
from rlarchive.values import dump_value, load_value  # noqa: E402

from suite import ROOT  # noqa: E402

try:  # the zoo needs torch, SB3, sb3-contrib and gymnasium; the rest of this file does not
    import sb_zoo

    ZOO = list(sb_zoo.CATALOGUE)
except ImportError:
    sb_zoo = None
    ZOO = []

VECTORS = os.path.join(ROOT, "test-vectors")
with open(os.path.join(VECTORS, "index.json"), encoding="utf-8") as _f:
    PREDICT_CASES = [c for c in json.load(_f)["cases"] if c["expect"]["result"] == "actions"]
NO_POLICY = os.path.join(VECTORS, "valid", "minimal.rlarchive")


def _session(path) -> "ort.InferenceSession":
    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _checked(path) -> None:
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)


def _act(path, policy: Policy, observations, episode_starts=None, action_masks=None) -> list:
    """The ONNX model's actions for single observations in order, carrying the recurrent state as SB3 does."""
    session = _session(path)
    names = [o.name for o in session.get_outputs()]
    rec = policy.recurrent
    state, out = None, []
    for i, obs in enumerate(observations):
        start = [episode_starts[i]] if episode_starts is not None else None
        masks = action_masks[i] if action_masks is not None else None
        feeds, single = onnx_inputs(policy, obs, state, start, masks)
        got = dict(zip(names, session.run(None, feeds)))
        if rec is not None:
            state = (got[rec["hidden_out"]], got[rec["cell_out"]])
        out.append(got["action"][0] if single else got["action"])
    return out


# -- (a) the SB3 / sb3-contrib zoo ------------------------------------------------------------------


@pytest.mark.parametrize("name", ZOO)
def test_the_onnx_model_acts_like_sb3(name, sb3_zoo, tmp_path):
    from test_policy_zoo import same_action

    from rlarchive.interop import sb3

    m, entry = sb3_zoo[name], sb_zoo.CATALOGUE[name]
    archive, out = tmp_path / f"{name}.rlarchive", tmp_path / f"{name}.onnx"
    report = sb3.import_archive(m.path, archive, vec_normalize=m.vecnormalize)
    if sb_zoo.USER_CLASS in entry.features:  # the importer wrote no policy: nothing to export, said clearly
        assert report.policy.startswith("not written")
        with pytest.raises(RlarchiveError) as e:
            export_onnx(archive, out)
        assert e.value.code == "INPUT_INVALID" and "no portable policy" in e.value.message
        assert not out.exists() and os.listdir(tmp_path) == [archive.name]
        return
    result = export_onnx(archive, out)
    _checked(out)
    with rlarchive.open(archive) as ar:
        policy = ar.policy()
    names = [t.name for t in result.inputs]
    assert ("action_masks" in names) == (m.action_masks is not None)
    assert ("episode_start" in names) == (m.episode_starts is not None)
    got = _act(out, policy, m.observations, m.episode_starts, m.action_masks)
    for i, (g, w) in enumerate(zip(got, m.actions)):
        assert same_action(np.asarray(g), w), (i, g, w)
    if m.episode_starts is None:  # the whole batch at once gives the same actions
        obs = m.observations
        batch = {k: np.stack([o[k] for o in obs]) for k in obs[0]} if isinstance(obs[0], dict) else np.stack(obs)
        masks = np.stack(m.action_masks) if m.action_masks is not None else None
        (actions,) = _act(out, policy, [batch], action_masks=[masks] if masks is not None else None)
        assert len(actions) == len(m.actions)
        for i, (g, w) in enumerate(zip(actions, m.actions)):
            assert same_action(np.asarray(g), w), (i, g, w)


# -- (b), (c) the predict test vectors ---------------------------------------------------------------


@pytest.mark.parametrize("case", PREDICT_CASES, ids=[c["id"] for c in PREDICT_CASES])
def test_the_onnx_model_gives_the_vectors_actions(case, tmp_path):
    with open(os.path.join(VECTORS, case["expect"]["predict_file"]), encoding="utf-8") as f:
        spec = json.load(f)
    path = os.path.join(VECTORS, case["file"])
    out = tmp_path / "policy.onnx"
    result = export_onnx(path, out)
    _checked(out)
    assert result.size == out.stat().st_size and result.opset == onnx_export.DEFAULT_OPSET
    with rlarchive.open(path, spaces="neutral") as ar:
        policy = ar.policy()
    masks = [load_value(k) for k in spec["action_masks"]] if "action_masks" in spec else None
    got = _act(out, policy, [load_value(o) for o in spec["observations"]], spec.get("episode_starts"), masks)
    assert same_actions([dump_value(np.asarray(a)) for a in got], spec["actions"]) == ""


@pytest.mark.parametrize("opset", [onnx_export.MIN_OPSET, 18, 21])
def test_other_opsets(opset, tmp_path):
    """ReduceMean and Split change form across opsets; quantile, recurrent and masked heads still act the same."""
    for cid in ("policy-qrdqn-quantiles-predict", "policy-recurrent-ppo-two-layer-lstm-predict", "policy-maskable-ppo-multibinary-predict"):
        case = next(c for c in PREDICT_CASES if c["id"] == cid)
        with open(os.path.join(VECTORS, case["expect"]["predict_file"]), encoding="utf-8") as f:
            spec = json.load(f)
        out = tmp_path / f"{cid}.onnx"
        assert export_onnx(os.path.join(VECTORS, case["file"]), out, opset=opset).opset == opset
        _checked(out)
        assert onnx.load(str(out)).opset_import[0].version == opset
        with rlarchive.open(os.path.join(VECTORS, case["file"])) as ar:
            policy = ar.policy()
        masks = [load_value(k) for k in spec["action_masks"]] if "action_masks" in spec else None
        got = _act(out, policy, [load_value(o) for o in spec["observations"]], spec.get("episode_starts"), masks)
        assert same_actions([dump_value(np.asarray(a)) for a in got], spec["actions"]) == "", cid


def test_every_activation_and_normalisation_matches_the_numpy_policy(tmp_path):
    """Each of the 16 activations (with parameters off their defaults), layer_norm and batch_norm, as the NumPy evaluator computes them."""
    rng = np.random.default_rng(0)
    n = 6
    params = {"elu": {"alpha": 0.7}, "leaky_relu": {"negative_slope": 0.2}, "softplus": {"beta": 2.0, "threshold": 5.0},
              "hardtanh": {"min_val": -2.0, "max_val": 3.0}, "celu": {"alpha": 0.5}, "gelu": {"approximate": "tanh"}}  # fmt: skip
    nodes = [{"op": "activation", "in": ["obs"], "out": fn, "fn": fn, **params.get(fn, {})} for fn in ACTIVATIONS]
    nodes.append({"op": "activation", "in": ["obs"], "out": "gelu_none", "fn": "gelu"})
    vec = lambda: rng.normal(0, 1, n).astype(np.float32)  # noqa: E731
    nodes.append({"op": "layer_norm", "in": ["obs"], "out": "ln", "weight": vec(), "bias": vec(), "eps": 1e-5})
    nodes.append({"op": "layer_norm", "in": ["obs"], "out": "ln_plain", "weight": None, "bias": None, "eps": 1e-3})
    nodes.append({"op": "batch_norm", "in": ["obs"], "out": "bn", "running_mean": vec(), "running_var": np.abs(vec()) + 0.1,
                  "weight": vec(), "bias": None, "eps": 1e-3})  # fmt: skip
    names = [node["out"] for node in nodes]
    nodes.append({"op": "concat", "in": names, "out": "all"})
    width = n * len(names)
    big = np.full(width, 1e30, np.float32)
    desc = {
        "observation_space": sp.Box(np.full(n, -np.inf, np.float32), np.full(n, np.inf, np.float32), (n,), "F32"),
        "action_space": sp.Box(-big, big, (width,), "F32"),
        "normalize_images": True,
        "nodes": nodes,
        "action": {"op": "box", "in": "all", "squash": "clip"},
    }
    policy = Policy(desc)
    out = tmp_path / "all.onnx"
    with open(out, "wb") as f:
        f.write(onnx_export.build_model(policy).SerializeToString())
    _checked(out)
    x = np.concatenate([np.linspace(-30, 30, 61 * n), rng.normal(0, 3, 40 * n)]).astype(np.float32).reshape(-1, n)
    (got,) = _act(out, policy, [x])
    want, _ = policy.predict(x)
    assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
    diff = np.abs(got - want) <= np.maximum(1e-4, 1e-4 * np.abs(want))
    assert diff.all(), [names[i // n] for i in sorted(set(np.nonzero(~diff)[1]))]


def test_masks_on_request_and_an_open_archive(tmp_path):
    """``action_masks`` adds or removes the masks input; an open Archive is exported like its path."""
    plain = os.path.join(VECTORS, "valid", "policy-ppo-mlp-discrete.rlarchive")
    out = tmp_path / "masked.onnx"
    with rlarchive.open(plain) as ar:
        report = export_onnx(ar, out, action_masks=True)
        policy = ar.policy()
    _checked(out)
    n = int(policy.action_space.n)
    assert [t.name for t in report.inputs] == ["obs", "action_masks"] and report.inputs[1].shape == ("batch", n)
    obs = np.zeros((3,) + report.inputs[0].shape[1:], np.float32)
    for allowed in range(n):
        masks = np.zeros((3, n), bool)
        masks[:, allowed] = True
        (got,) = _act(out, policy, [obs], action_masks=[masks])
        assert got.tolist() == [allowed] * 3 and got.dtype == np.int64
    maskable = os.path.join(VECTORS, "valid", "policy-maskable-ppo-masks.rlarchive")
    assert "action_masks" in [t.name for t in export_onnx(maskable, tmp_path / "a.onnx").inputs]
    assert "action_masks" not in [t.name for t in export_onnx(maskable, tmp_path / "b.onnx", action_masks=False).inputs]
    with pytest.raises(RlarchiveError) as e:
        export_onnx(os.path.join(VECTORS, "valid", "policy-sac-silu.rlarchive"), tmp_path / "c.onnx", action_masks=True)
    assert e.value.code == "INPUT_INVALID" and not (tmp_path / "c.onnx").exists()


# -- (d) the command -------------------------------------------------------------------------------


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "rlarchive", *args], capture_output=True, text=True)


def test_the_command_writes_the_model(tmp_path):
    src = os.path.join(VECTORS, "valid", "policy-ppo-dict-observation.rlarchive")
    out = tmp_path / "policy.onnx"
    r = _cli("export-onnx", src, str(out), "--opset", "18")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith(f"wrote {out} (ONNX opset 18,") and "action" in r.stdout
    model = onnx.load(str(out))
    assert model.producer_name == "rlarchive" and model.opset_import[0].version == 18
    props = {p.key: json.loads(p.value) for p in model.metadata_props}
    assert [i["name"] for i in props["rlarchive.inputs"]] == [i.name for i in model.graph.input]
    assert [o["name"] for o in props["rlarchive.outputs"]] == [o.name for o in model.graph.output] == ["action"]
    assert all(i.name.startswith("obs.") for i in model.graph.input)
    r = _cli("export-onnx", src, str(out), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["opset"] == 17
    assert "action_masks" not in [i.name for i in onnx.load(str(out)).graph.input]
    r = _cli("export-onnx", src, str(out), "--action-masks", "yes")
    assert r.returncode == 0 and "action_masks" in [i.name for i in onnx.load(str(out)).graph.input]
    masked = os.path.join(VECTORS, "valid", "policy-maskable-ppo-multibinary.rlarchive")
    for flag, want in (("auto", True), ("no", False)):
        r = _cli("export-onnx", masked, str(out), "--action-masks", flag)
        assert r.returncode == 0 and ("action_masks" in [i.name for i in onnx.load(str(out)).graph.input]) == want, flag


@pytest.mark.parametrize("args, code", [
    ([NO_POLICY], "INPUT_INVALID"),
    ([os.path.join(VECTORS, "valid", "policy-ppo-mlp-discrete.rlarchive"), "--opset", "9"], "INPUT_INVALID"),
    ([os.path.join(VECTORS, "valid", "policy-ppo-mlp-discrete.rlarchive"), "--into-missing-folder"], "IO_ERROR"),
])  # fmt: skip
def test_the_command_fails_with_a_code_and_no_traceback(args, code, tmp_path):
    out = str(tmp_path / "out.onnx")
    if args[-1] == "--into-missing-folder":
        args, out = args[:-1], str(tmp_path / "missing" / "out.onnx")
    r = _cli("export-onnx", *args, out)
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"rlarchive: {code}: "), r.stderr
    assert not os.path.exists(out) and os.listdir(tmp_path) in ([], ["missing"])


# -- (e) without the package onnx --------------------------------------------------------------------


def test_without_onnx_the_export_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` now fails as if it were not installed
    out = tmp_path / "policy.onnx"
    with pytest.raises(RlarchiveError) as e:
        export_onnx(os.path.join(VECTORS, "valid", "policy-ppo-mlp-discrete.rlarchive"), out)
    assert e.value.code == "FRAMEWORK_UNAVAILABLE" and "pip install 'rlarchive[onnx]'" in e.value.message
    assert not out.exists()


BLOCK_ONNX = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'onnx':
            raise ImportError(name + ' is blocked')
sys.meta_path.insert(0, Block())
"""


def test_rlarchive_does_not_import_onnx_and_the_command_fails_cleanly_without_it(tmp_path):
    probe = "import sys, rlarchive, rlarchive.onnx_export, rlarchive.cli; print('onnx' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == ["False"], r.stderr
    out = str(tmp_path / "out.onnx")
    src = os.path.join(VECTORS, "valid", "policy-ppo-mlp-discrete.rlarchive")
    run = BLOCK_ONNX + f"from rlarchive.cli import main\nsys.exit(main(['export-onnx', {src!r}, {out!r}]))\n"
    r = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and not os.path.exists(out)
    assert r.stderr.startswith("rlarchive: FRAMEWORK_UNAVAILABLE: ") and "pip install 'rlarchive[onnx]'" in r.stderr
    assert len(r.stderr.splitlines()) == 1


# -- (f) onnxruntime-web, the runtime of browsers ---------------------------------------------------

ORT_WEB = os.path.join(ROOT, "reader-js", "node_modules", "onnxruntime-web", "package.json")
ORT_WEB_RUN = os.path.join(ROOT, "reader-js", "test", "helpers", "ort-web-run.mjs")


def _feed(a: np.ndarray) -> dict:
    """An array for ort-web-run.mjs: dtype, dims and its little-endian bytes (non-finite floats included)."""
    a = np.ascontiguousarray(a)
    dtype = "bool" if a.dtype == np.bool_ else str(a.dtype)
    return {"dtype": dtype, "dims": list(a.shape), "base64": base64.b64encode(a.astype(a.dtype.newbyteorder("<")).tobytes()).decode()}


def _as_array(out: dict) -> np.ndarray:
    dtype = np.dtype(np.bool_ if out["dtype"] == "bool" else out["dtype"]).newbyteorder("<")
    return np.frombuffer(base64.b64decode(out["base64"]), dtype=dtype).reshape(out["dims"])


def test_onnxruntime_web_runs_every_exported_vector(tmp_path):
    """The default opset runs in onnxruntime-web (WebAssembly, under Node, as in a browser) and gives the vectors' actions."""
    import shutil

    if shutil.which("node") is None or not os.path.exists(ORT_WEB):
        pytest.skip("node or reader-js's onnxruntime-web (npm ci in reader-js) is missing")
    assert len(PREDICT_CASES) >= 16
    jobs, expected = [], []
    for case in PREDICT_CASES:
        with open(os.path.join(VECTORS, case["expect"]["predict_file"]), encoding="utf-8") as f:
            spec = json.load(f)
        path = os.path.join(VECTORS, case["file"])
        out = tmp_path / f"{case['id']}.onnx"
        export_onnx(path, out)
        with rlarchive.open(path, spaces="neutral") as ar:
            policy = ar.policy()
        starts = spec.get("episode_starts")
        masks = spec.get("action_masks")
        steps, singles = [], []
        for i, obs in enumerate(spec["observations"]):
            feeds, single = onnx_inputs(policy, load_value(obs), None, [starts[i]] if starts is not None else None, load_value(masks[i]) if masks is not None else None)
            steps.append({k: _feed(v) for k, v in feeds.items()})
            singles.append(single)
        rec = policy.recurrent
        carry = {rec["hidden_in"]: rec["hidden_out"], rec["cell_in"]: rec["cell_out"]} if rec is not None else {}
        jobs.append({"model": str(out), "steps": steps, "carry": carry})
        expected.append((case["id"], singles, spec["actions"]))
    job = tmp_path / "jobs.json"
    job.write_text(json.dumps(jobs))
    run = subprocess.run(["node", ORT_WEB_RUN, str(job)], capture_output=True, text=True, timeout=600, cwd=os.path.join(ROOT, "reader-js"))
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(run.stdout)
    assert len(results) == len(expected)
    for outputs, (cid, singles, actions) in zip(results, expected):
        got = [_as_array(o["action"])[0] if single else _as_array(o["action"]) for o, single in zip(outputs, singles)]
        assert same_actions([dump_value(np.asarray(a)) for a in got], actions) == "", cid
