"""The ONNX export of the portable policy acts like Stable-Baselines3 and like the NumPy policy.

Every model of the SB3 / sb3-contrib zoo is imported with its VecNormalize
statistics, exported with :func:`rlarchive.extensions.policy.onnx_export.export_onnx`, checked
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

from suite import ROOT  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import spaces as sp  # noqa: E402
from rlarchive.conformance import same_actions  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.extensions.policy import onnx_export, onnx_graph  # noqa: E402
from rlarchive.extensions.policy.evaluator import ACTIVATIONS, Policy  # noqa: E402
from rlarchive.extensions.policy.onnx_export import export_onnx, onnx_inputs  # noqa: E402
from rlarchive.values import dump_value, load_value  # noqa: E402

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


def _session(path) -> ort.InferenceSession:
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


@pytest.mark.slow
@pytest.mark.parametrize("name", ZOO)
def test_the_onnx_model_acts_like_sb3(name, sb3_zoo, tmp_path):
    from test_policy_zoo import same_action

    from rlarchive import sb3

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


OVERFLOWING = {"policy-numerics-linear-partial-sums-overflow-predict"}  # float32 partial sums overflow there


def test_precision_float32_gives_the_vectors_actions_except_where_partial_sums_overflow(tmp_path):
    """The faster float32 graph acts like the default on every predict vector but those whose float32 partial sums overflow."""
    differ = set()
    for case in PREDICT_CASES:
        with open(os.path.join(VECTORS, case["expect"]["predict_file"]), encoding="utf-8") as f:
            spec = json.load(f)
        path, out = os.path.join(VECTORS, case["file"]), tmp_path / f"{case['id']}.onnx"
        assert export_onnx(path, out, precision="float32").precision == "float32"
        with rlarchive.open(path, spaces="neutral") as ar:
            policy = ar.policy()
        masks = [load_value(k) for k in spec["action_masks"]] if "action_masks" in spec else None
        got = _act(out, policy, [load_value(o) for o in spec["observations"]], spec.get("episode_starts"), masks)
        if same_actions([dump_value(np.asarray(a)) for a in got], spec["actions"]) != "":
            differ.add(case["id"])
    assert differ == OVERFLOWING


@pytest.mark.parametrize("opset", [onnx_export.MIN_OPSET, 18, 21])
def test_other_opsets(opset, tmp_path):
    """ReduceMean, Split, Pad and Cast change form across opsets; quantile, recurrent, masked and convolutional policies still act the same."""
    for cid in (
        "policy-qrdqn-quantiles-predict",
        "policy-recurrent-ppo-two-layer-lstm-predict",
        "policy-maskable-ppo-multibinary-predict",
        "policy-dqn-nature-cnn-predict",
    ):
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


# -- numerics: NaN, infinities, large values, sums in float64 (spec RLA_policy §5, §7) ------------------

BIG = float(np.finfo(np.float32).max)
#: NaN, infinities, values near the float32 limit, tiny values, and the edges of the activations' branches.
SPECIAL = [
    np.nan,
    np.inf,
    -np.inf,
    3e38,
    -3e38,
    0.0,
    -0.0,
    750.0,
    -750.0,
    1e-30,
    -1e-30,
    100.0,
    -100.0,
    1e-8,
    -1e-8,
    20.5,
    -20.5,
    3.0,
    -3.0,
]
PARAMS = {"elu": {"alpha": 0.7}, "leaky_relu": {"negative_slope": 0.2}, "softplus": {"beta": 2.0, "threshold": 5.0},
          "hardtanh": {"min_val": -2.0, "max_val": 3.0}, "celu": {"alpha": 0.5}, "gelu": {"approximate": "tanh"}}  # fmt: skip


def _box_space(shape, bound=np.inf) -> sp.Box:
    return sp.Box(np.full(shape, -bound, np.float32), np.full(shape, bound, np.float32), tuple(shape), "F32")


def _box_policy(obs_shape, nodes: list, out: str, width: int) -> Policy:
    """A checked description: Box observations, ``nodes``, and a clip head over ``out`` (``width`` values) with infinite bounds."""
    from rlarchive.extensions.policy import description as policy_description

    desc = {"observation_space": _box_space(obs_shape), "action_space": _box_space((width,)), "normalize_images": False, "nodes": nodes,
            "action": {"op": "box", "in": out, "squash": "clip"}}  # fmt: skip
    policy_description.check(dump_value(desc))
    return Policy(desc)


def _close(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Element by element: both NaN, or equal (infinities included), or within spec §7's 1e-4 absolute or relative."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    with np.errstate(invalid="ignore"):
        near = np.abs(got - want) <= np.maximum(1e-4, 1e-4 * np.abs(want))
    return (np.isnan(got) & np.isnan(want)) | (got == want) | near


#: The onnxruntime-web process of this module's tests (ort-web-run.mjs --serve), started at the first use: its
#: WebAssembly is compiled once, not once per call.
_ORT_WEB: dict = {}
#: The longest a batch of jobs may take in onnxruntime-web before the test fails as hung.
ORT_WEB_SECONDS = 600


@pytest.fixture(scope="module", autouse=True)
def _ort_web_process():
    yield
    p = _ORT_WEB.pop("process", None)
    if p is not None:
        p.stdin.close()
        p.wait(timeout=60)


def _ort_web(jobs: list, tmp_path) -> list:
    """Run ``jobs`` (see ort-web-run.mjs) in onnxruntime-web; the test is skipped without node or onnxruntime-web."""
    import selectors
    import shutil

    if shutil.which("node") is None or not os.path.exists(ORT_WEB):
        pytest.skip("node or reader-js's onnxruntime-web (npm ci in reader-js) is missing")
    job = tmp_path / "jobs.json"
    job.write_text(json.dumps(jobs))
    p = _ORT_WEB.get("process")
    if p is None or p.poll() is not None:
        p = _ORT_WEB["process"] = subprocess.Popen(
            ["node", ORT_WEB_RUN, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=os.path.join(ROOT, "reader-js"),
        )
    p.stdin.write(f"{job}\n")
    p.stdin.flush()
    with selectors.DefaultSelector() as sel:
        sel.register(p.stdout, selectors.EVENT_READ)
        if not sel.select(timeout=ORT_WEB_SECONDS):
            p.kill()
            raise AssertionError(f"onnxruntime-web gave no answer in {ORT_WEB_SECONDS} s")
    line = p.stdout.readline()
    assert line, f"onnxruntime-web ended (status {p.poll()})"
    answer = json.loads(line)
    assert not (isinstance(answer, dict) and "error" in answer), answer
    return answer


def _write(policy: Policy, path, precision: str) -> None:
    with open(path, "wb") as f:
        f.write(onnx_export.build_model(policy, precision=precision).SerializeToString())
    _checked(path)


def _run_everywhere(policy: Policy, x: np.ndarray, tmp_path) -> dict:
    """The model's actions for the batch ``x``: {"float64": ..., "float32": ... (onnxruntime), "web": float64 in onnxruntime-web}."""
    got = {}
    for precision in onnx_export.PRECISIONS:
        path = tmp_path / f"{precision}.onnx"
        _write(policy, path, precision)
        (got[precision],) = _act(path, policy, [x])
    (web,) = _ort_web([{"model": str(tmp_path / "float64.onnx"), "steps": [{"obs": _feed(x)}], "carry": {}}], tmp_path)
    got["web"] = _as_array(web[0]["action"])
    return got


@pytest.mark.slow
def test_every_activation_and_normalisation_matches_the_numpy_policy(tmp_path):
    """Each activation (parameters off their defaults), prelu, layer_norm and batch_norm, as the NumPy evaluator computes them,
    at NaN, ±inf, values near the float32 limit and ordinary values, in onnxruntime (both precisions) and onnxruntime-web."""
    rng = np.random.default_rng(0)
    n = 6
    nodes = [{"op": "activation", "in": ["obs"], "out": fn, "fn": fn, **PARAMS.get(fn, {})} for fn in ACTIVATIONS]
    nodes.append({"op": "activation", "in": ["obs"], "out": "gelu_none", "fn": "gelu"})
    nodes.append(
        {"op": "activation", "in": ["obs"], "out": "softplus_800", "fn": "softplus", "beta": 1.0, "threshold": 800.0}
    )
    nodes.append(
        {
            "op": "activation",
            "in": ["obs"],
            "out": "softplus_negative_beta",
            "fn": "softplus",
            "beta": -1.5,
            "threshold": 20.0,
        }
    )
    vec = lambda: rng.normal(0, 1, n).astype(np.float32)  # noqa: E731
    nodes.append({"op": "prelu", "in": ["obs"], "out": "prelu", "weight": vec()})
    nodes.append({"op": "prelu", "in": ["obs"], "out": "prelu_shared", "weight": np.array([0.25], np.float32)})
    nodes.append({"op": "layer_norm", "in": ["obs"], "out": "ln", "weight": vec(), "bias": vec(), "eps": 1e-5})
    nodes.append({"op": "layer_norm", "in": ["obs"], "out": "ln_plain", "weight": None, "bias": None, "eps": 1e-3})
    nodes.append({"op": "batch_norm", "in": ["obs"], "out": "bn", "running_mean": vec(), "running_var": np.abs(vec()) + 0.1,
                  "weight": vec(), "bias": None, "eps": 1e-3})  # fmt: skip
    names = [node["out"] for node in nodes]
    nodes.append({"op": "concat", "in": names, "out": "all"})
    policy = _box_policy((n,), nodes, "all", n * len(names))
    special = np.array(SPECIAL * 8, np.float32)[: (len(SPECIAL) * 8) // n * n].reshape(
        -1, n
    )  # long enough for vectorised kernels
    x = (
        np.concatenate([special.reshape(-1), np.linspace(-30, 30, 61 * n), rng.normal(0, 3, 40 * n)])
        .astype(np.float32)
        .reshape(-1, n)
    )
    want, _ = policy.predict(x)
    for where, got in _run_everywhere(policy, x, tmp_path).items():
        assert got.dtype == want.dtype == np.float32 and got.shape == want.shape, where
        ok = _close(got, want)
        assert ok.all(), (where, [names[i // n] for i in sorted(set(np.nonzero(~ok)[1]))])


TORCH_MODULES = {  # activation -> torch.nn module name and its parameters (spec RLA_policy §7: at NaN and ±inf, what torch gives)
    "relu": ("ReLU", {}), "tanh": ("Tanh", {}), "sigmoid": ("Sigmoid", {}), "elu": ("ELU", {"alpha": 0.7}), "leaky_relu": ("LeakyReLU", {"negative_slope": 0.2}),
    "silu": ("SiLU", {}), "gelu": ("GELU", {"approximate": "tanh"}), "softplus": ("Softplus", {"beta": 2.0, "threshold": 5.0}),
    "hardtanh": ("Hardtanh", {"min_val": -2.0, "max_val": 3.0}), "selu": ("SELU", {}), "celu": ("CELU", {"alpha": 0.5}), "mish": ("Mish", {}),
    "hardswish": ("Hardswish", {}), "hardsigmoid": ("Hardsigmoid", {}), "softsign": ("Softsign", {}),
}  # fmt: skip


@pytest.mark.slow
def test_activations_at_nan_and_infinities_give_what_torch_gives(tmp_path):
    """NaN gives NaN in every activation; ±inf gives torch's CPU float32 result (NaN where its formula meets inf·0 or inf/inf)."""
    torch = pytest.importorskip("torch")
    x = np.array([[np.nan, np.inf, -np.inf, 1.0]] * 8, np.float32)
    nodes = [{"op": "activation", "in": ["obs"], "out": fn, "fn": fn, **TORCH_MODULES[fn][1]} for fn in TORCH_MODULES]
    nodes.append({"op": "prelu", "in": ["obs"], "out": "prelu", "weight": np.array([0.0], np.float32)})
    nodes.append({"op": "concat", "in": [node["out"] for node in nodes], "out": "all"})
    policy = _box_policy((4,), nodes, "all", 4 * (len(nodes) - 1))
    with torch.no_grad():
        want = [getattr(torch.nn, name)(**p)(torch.from_numpy(x)).numpy() for name, p in TORCH_MODULES.values()]
        want.append(torch.nn.PReLU(1, 0.0)(torch.from_numpy(x)).numpy())
    want = np.concatenate(want, axis=1)
    assert np.isnan(want[:, 0::4]).all()  # NaN -> NaN everywhere
    for where, got in _run_everywhere(policy, x, tmp_path).items():
        ok = _close(got, want)
        assert ok.all(), (where, [nodes[i // 4]["out"] for i in sorted(set(np.nonzero(~ok)[1]))])


@pytest.mark.slow
@pytest.mark.parametrize("c, h, w, o, kernel, stride, padding, bias", [
    (3, 7, 9, 4, (3, 3), (1, 1), (0, 0), True),
    (2, 8, 8, 3, (4, 2), (2, 3), (1, 2), False),
    (1, 5, 6, 2, (5, 6), (1, 1), (0, 0), True),  # the kernel covers the whole image
    (4, 6, 6, 5, (1, 1), (3, 2), (0, 0), True),  # 1×1, strides larger than the kernel
    (2, 3, 4, 3, (2, 3), (2, 2), (2, 1), True),  # padding larger than the image's margin
])  # fmt: skip
def test_conv2d_sums_in_float64(c, h, w, o, kernel, stride, padding, bias, tmp_path):
    """conv2d as a float64 sum of strided slices times the kernel's taps gives the NumPy evaluator's values (and float32 Conv within §7's tolerance)."""
    rng = np.random.default_rng(sum(kernel) * 31 + c)
    node = {"op": "conv2d", "in": ["obs"], "out": "c", "weight": rng.normal(0, 1, (o, c) + kernel).astype(np.float32),
            "bias": rng.normal(0, 1, o).astype(np.float32) if bias else None, "stride": list(stride), "padding": list(padding)}  # fmt: skip
    oh = (h + 2 * padding[0] - kernel[0]) // stride[0] + 1
    ow = (w + 2 * padding[1] - kernel[1]) // stride[1] + 1
    policy = _box_policy((c, h, w), [node, {"op": "flatten", "in": ["c"], "out": "y"}], "y", o * oh * ow)
    x = rng.normal(0, 2, (5, c, h, w)).astype(np.float32)
    x[0, :, 0, 0] = np.nan
    want, _ = policy.predict(x)
    for where, got in _run_everywhere(policy, x, tmp_path).items():
        assert got.shape == want.shape and _close(got, want).all(), where


@pytest.mark.slow
def test_sums_do_not_overflow_in_float32_partial_sums(tmp_path):
    """A conv2d and a linear whose exact sums are finite but whose float32 running sums overflow: the default model gives the
    float32 rounding of the exact sum (spec §5), in onnxruntime and onnxruntime-web; precision float32 gives infinity."""
    from fractions import Fraction

    ones = np.ones((1, 3, 1, 1), np.float32)
    nodes = [
        {"op": "conv2d", "in": ["obs"], "out": "c", "weight": ones, "bias": None, "stride": [1, 1], "padding": [0, 0]},
        {"op": "flatten", "in": ["c"], "out": "f"},
        {"op": "flatten", "in": ["obs"], "out": "x"},
        {
            "op": "linear",
            "in": ["x"],
            "out": "l",
            "weight": np.ones((1, 3), np.float32),
            "bias": np.array([-BIG], np.float32),
        },
        {"op": "concat", "in": ["f", "l"], "out": "y"},
    ]
    policy = _box_policy((3, 1, 1), nodes, "y", 2)
    x = np.array([BIG, BIG / 2, -BIG], np.float32).reshape(1, 3, 1, 1)
    total = sum(Fraction(float(v)) for v in x.reshape(-1))
    exact = [np.float32(float(total)), np.float32(float(total - Fraction(BIG)))]
    with np.errstate(over="ignore"):
        assert np.isfinite(exact).all() and np.isinf(x[0, 0, 0, 0] + x[0, 1, 0, 0])
    got = _run_everywhere(policy, x, tmp_path)
    for where in ("float64", "web"):
        assert got[where][0].tolist() == [float(v) for v in exact], where
    assert np.isinf(
        got["float32"][0]
    ).all()  # onnxruntime's float32 MatMul and Conv add the terms in order: the reason for the default


@pytest.mark.slow
def test_a_weight_read_by_many_nodes_is_written_once(tmp_path):
    """140 nodes reading one 1 MiB tensor: the model holds it once (about one copy's size), the float64 copy and the transpose are
    computed once, the export's memory stays a small multiple of the tensor, and the command succeeds (never INTERNAL_ERROR)."""
    from rlarchive.values import TensorRef

    n, refs = 512, 140
    rng = np.random.default_rng(3)
    w = np.zeros((n, n), np.float32)
    w[np.arange(n), rng.permutation(n)] = rng.choice(
        [-1.0, 1.0], n
    )  # a signed permutation: values stay exact through 140 layers
    ref = TensorRef("policy", "w", "F32", (n, n))
    nodes = [
        {"op": "linear", "in": ["obs" if i == 0 else f"h{i - 1}"], "out": f"h{i}", "weight": ref, "bias": None}
        for i in range(refs)
    ]
    desc = {"observation_space": _box_space((n,), 1.0), "action_space": sp.Discrete(n), "normalize_images": False, "nodes": nodes,
            "action": {"op": "argmax", "in": f"h{refs - 1}"}}  # fmt: skip
    path, out = tmp_path / "shared.rlarchive", tmp_path / "shared.onnx"
    rlarchive.save(path, {"n": n}, {"policy": {"w": w}}, extension_values={"RLA_policy": desc})
    probe = (  # the peak resident memory (VmHWM, of this process image only) before and after the export
        "import sys, json\n"
        "from rlarchive.extensions.policy.onnx_export import export_onnx\n"
        "import onnx\n"
        "def peak():\n"
        "    with open('/proc/self/status') as f:\n"
        "        return next(int(line.split()[1]) for line in f if line.startswith('VmHWM:')) * 1024\n"
        "before = peak()\n"
        "report = export_onnx(sys.argv[1], sys.argv[2])\n"
        "print(json.dumps([before, peak(), report.size]))\n"
    )
    if not os.path.exists("/proc/self/status"):
        pytest.skip("no /proc/self/status to read the peak memory from")
    r = subprocess.run([sys.executable, "-c", probe, str(path), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    before, after, size = json.loads(r.stdout)
    assert size == out.stat().st_size and w.nbytes < size < w.nbytes + (256 << 10)  # one copy, and the nodes
    assert after - before < 16 * w.nbytes + (32 << 20), (before, after)
    model = onnx.load(str(out))
    (weight,) = [t.name for t in model.graph.initializer if t.dims == [n, n]]
    (cast,) = [node for node in model.graph.node if weight in node.input]  # the float64 copy, made once
    (transpose,) = [node for node in model.graph.node if cast.output[0] in node.input]  # transposed once
    assert cast.op_type == "Cast" and transpose.op_type == "Transpose"
    assert sum(transpose.output[0] in node.input for node in model.graph.node) == refs  # and read by every MatMul
    with rlarchive.open(path) as ar:
        policy = ar.policy()
    x = rng.uniform(-1, 1, (4, n)).astype(np.float32)
    (got,) = _act(out, policy, [x])
    assert got.tolist() == policy.predict(x)[0].tolist()
    r = _cli("export-onnx", str(path), str(tmp_path / "cli.onnx"))
    assert r.returncode == 0 and r.stderr == "" and "INTERNAL_ERROR" not in r.stdout, r.stderr


def test_a_model_above_the_size_limit_is_refused(monkeypatch, tmp_path):
    """Past MAX_MODEL_BYTES the export stops with VALUE_UNSUPPORTED before building the rest, and writes nothing."""
    monkeypatch.setattr(onnx_graph, "MAX_MODEL_BYTES", 100_000)
    monkeypatch.setattr(onnx_graph, "_GRAPH_ALLOWANCE", 1_000)
    out = tmp_path / "big.onnx"
    with pytest.raises(RlarchiveError) as e:
        export_onnx(os.path.join(VECTORS, "valid", "policy-dqn-nature-cnn.rlarchive"), out)
    assert e.value.code == "VALUE_UNSUPPORTED" and "larger than 100000 bytes" in e.value.message
    assert os.listdir(tmp_path) == []


def test_a_graph_above_the_node_limit_is_refused(monkeypatch, tmp_path):
    """Many conv2d nodes reading one large kernel: the float64 graph (a few nodes per kernel offset) stops at MAX_GRAPH_NODES with
    VALUE_UNSUPPORTED, before it takes more memory, and says that precision float32 (one Conv per conv2d) is the way out."""
    from rlarchive.values import TensorRef

    monkeypatch.setattr(onnx_graph, "MAX_GRAPH_NODES", 4000)
    k = 8
    ref = TensorRef("policy", "w", "F32", (1, 1, k, k))
    nodes = [
        {
            "op": "conv2d",
            "in": ["obs"],
            "out": f"c{i}",
            "weight": ref,
            "bias": None,
            "stride": [1, 1],
            "padding": [0, 0],
        }
        for i in range(40)
    ]
    nodes.append({"op": "flatten", "in": ["c39"], "out": "y"})
    desc = {"observation_space": _box_space((1, k, k), 1.0), "action_space": sp.Discrete(1), "normalize_images": False, "nodes": nodes,
            "action": {"op": "argmax", "in": "y"}}  # fmt: skip
    path = tmp_path / "convs.rlarchive"
    rlarchive.save(
        path, {"k": k}, {"policy": {"w": np.ones((1, 1, k, k), np.float32)}}, extension_values={"RLA_policy": desc}
    )
    out = tmp_path / "convs.onnx"
    with pytest.raises(RlarchiveError) as e:
        export_onnx(path, out)
    assert (
        e.value.code == "VALUE_UNSUPPORTED"
        and "MAX_GRAPH_NODES" in e.value.message
        and "--precision float32" in e.value.message
    )
    assert not out.exists()
    assert export_onnx(path, out, precision="float32").nodes < 4000


@pytest.mark.slow
def test_multi_argmax_over_many_components(tmp_path):
    """A MultiDiscrete of 60,000 components takes one Reshape and ArgMax per run of equal sizes, not nodes per component;
    NaN logits pick their first NaN, in onnxruntime and onnxruntime-web."""
    nvec = [2] * 40_000 + [3] * 20_000
    width = sum(nvec)
    desc = {"observation_space": _box_space((width,)), "action_space": sp.MultiDiscrete(np.array(nvec, np.int64), np.zeros(len(nvec), np.int64)), "normalize_images": False,
            "nodes": [{"op": "activation", "in": ["obs"], "out": "y", "fn": "identity"}], "action": {"op": "multi_argmax", "in": "y", "sizes": nvec}}  # fmt: skip
    from rlarchive.extensions.policy import description as policy_description

    policy_description.check(dump_value(desc))
    policy = Policy(desc)
    x = np.random.default_rng(5).normal(0, 1, (3, width)).astype(np.float32)
    x[0, ::7] = np.nan
    x[1, 80_000:] = np.inf
    want, _ = policy.predict(x)
    out = tmp_path / "multi.onnx"
    _write(policy, out, "float64")
    assert len(onnx.load(str(out)).graph.node) < 40
    (got,) = _act(out, policy, [x])
    assert got.tolist() == want.tolist()
    (web,) = _ort_web([{"model": str(out), "steps": [{"obs": _feed(x)}], "carry": {}}], tmp_path)
    assert _as_array(web[0]["action"]).tolist() == want.tolist()


def test_an_unknown_precision_is_refused(tmp_path):
    with pytest.raises(RlarchiveError) as e:
        export_onnx(
            os.path.join(VECTORS, "valid", "policy-ppo-mlp-discrete.rlarchive"),
            tmp_path / "a.onnx",
            precision="float16",
        )
    assert e.value.code == "INPUT_INVALID" and "float16" in e.value.message and os.listdir(tmp_path) == []


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


@pytest.mark.slow
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
    cnn = os.path.join(VECTORS, "valid", "policy-dqn-nature-cnn.rlarchive")
    for flags, precision in (((), "float64"), (("--precision", "float32"), "float32")):
        r = _cli("export-onnx", cnn, str(out), "--json", *flags)
        assert r.returncode == 0 and json.loads(r.stdout)["precision"] == precision, r.stderr
        model = onnx.load(str(out))
        assert json.loads({p.key: p.value for p in model.metadata_props}["rlarchive.precision"]) == precision
        assert ("Conv" in {node.op_type for node in model.graph.node}) == (
            precision == "float32"
        )  # float64: slices times taps
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
    probe = (
        "import sys, rlarchive, rlarchive.extensions.policy.onnx_export, rlarchive.cli; print('onnx' in sys.modules)"
    )
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
    return {
        "dtype": dtype,
        "dims": list(a.shape),
        "base64": base64.b64encode(a.astype(a.dtype.newbyteorder("<")).tobytes()).decode(),
    }


def _as_array(out: dict) -> np.ndarray:
    dtype = np.dtype(np.bool_ if out["dtype"] == "bool" else out["dtype"]).newbyteorder("<")
    return np.frombuffer(base64.b64decode(out["base64"]), dtype=dtype).reshape(out["dims"])


@pytest.mark.slow
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
            feeds, single = onnx_inputs(
                policy,
                load_value(obs),
                None,
                [starts[i]] if starts is not None else None,
                load_value(masks[i]) if masks is not None else None,
            )
            steps.append({k: _feed(v) for k, v in feeds.items()})
            singles.append(single)
        rec = policy.recurrent
        carry = {rec["hidden_in"]: rec["hidden_out"], rec["cell_in"]: rec["cell_out"]} if rec is not None else {}
        jobs.append({"model": str(out), "steps": steps, "carry": carry})
        expected.append((case["id"], singles, spec["actions"]))
    job = tmp_path / "jobs.json"
    job.write_text(json.dumps(jobs))
    run = subprocess.run(
        ["node", ORT_WEB_RUN, str(job)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=os.path.join(ROOT, "reader-js"),
    )
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(run.stdout)
    assert len(results) == len(expected)
    for outputs, (cid, singles, actions) in zip(results, expected):
        got = [_as_array(o["action"])[0] if single else _as_array(o["action"]) for o, single in zip(outputs, singles)]
        assert same_actions([dump_value(np.asarray(a)) for a in got], actions) == "", cid
