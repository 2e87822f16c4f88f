"""Random portable policies act the same in Python (NumPy) and JavaScript.

Hypothesis draws descriptions (extension RLA_policy) over every observation
kind, MLPs of random widths with every activation and its parameters,
layer and batch normalisation, prelu, CNNs with random kernels, strides and
padding, one- and two-layer LSTMs with episode starts, Dict observations,
every head with and without action masks, and VecNormalize statistics; and
numerical edges: zero-width values (an empty observation, a linear of width
0), NaN and infinities made inside the network (negative running variances,
huge weights whose products overflow float32), observations near the
float32 limit. The reference writer stores them (refusing any it could not
check), and both readers answer the conformance ``predict`` request
(JavaScript through its long-lived testee). Actions must be equal as
RLA_policy §7 says (NaN equal to NaN).
"""

from __future__ import annotations

import os

import numpy as np
from generate import judge_actions
from hypothesis import event, given, settings
from hypothesis import strategies as st
from scale import examples

import rlarchive
from rlarchive import spaces as sp
from rlarchive.extensions.policy.evaluator import act
from rlarchive.values import dump_value, load_value

F32 = np.float32
BIG = float(np.finfo(F32).max)
ACTIVATIONS = {
    "identity": {},
    "relu": {},
    "tanh": {},
    "sigmoid": {},
    "silu": {},
    "elu": {"alpha": st.floats(0.1, 2.0)},
    "leaky_relu": {"negative_slope": st.floats(0.001, 0.5)},
    "gelu": {"approximate": st.sampled_from(["none", "tanh"])},
    "softplus": {"beta": st.floats(0.5, 3.0), "threshold": st.floats(1.0, 20.0)},
    "hardtanh": {"min_val": st.floats(-2.0, -0.1), "max_val": st.floats(0.1, 2.0)},
    "selu": {},
    "celu": {"alpha": st.floats(0.2, 2.0)},
    "mish": {},
    "hardswish": {},
    "hardsigmoid": {},
    "softsign": {},
}


class Builder:
    """Draws nodes over named values, tracking each value's shape (without batch)."""

    def __init__(self, data, rng: np.random.Generator) -> None:
        self.data, self.rng, self.nodes, self.count = data, rng, [], 0
        #: whether this network may make NaN and infinities inside (huge weights, negative variances) and zero-width values
        self.edgy = bool(rng.random() < 0.5)  # drawn from the seed: Hypothesis's own draws favour the plain case

    def w(self, *shape: int) -> np.ndarray:
        return (self.rng.normal(size=shape) * 1.5 / np.sqrt(max(shape[-1], 1))).astype(F32)

    def big_w(self, *shape: int) -> np.ndarray:
        """Weights that are sometimes huge (1e30 to 1e38): their products overflow float32, sums of them meet inf of both signs."""
        w = self.w(*shape)
        if self.edgy and self.data.draw(st.booleans()):
            w = (w * F32(10.0 ** self.data.draw(st.integers(30, 38)))).astype(F32)
        return w

    def add(self, op: str, ins: list, **params) -> str:
        self.count += 1
        out = f"v{self.count}"
        self.nodes.append({"op": op, "in": ins, "out": out, **params})
        return out

    def activation(self, x: str) -> str:
        fn = sorted(ACTIVATIONS)[
            int(self.rng.integers(len(ACTIVATIONS)))
        ]  # uniform (Hypothesis favours some elements of a list)
        params = {k: self.data.draw(s) for k, s in ACTIVATIONS[fn].items() if self.data.draw(st.booleans())}
        return self.add("activation", [x], fn=fn, **params)

    def mlp(self, x: str, width: int) -> tuple[str, int]:
        if self.edgy and width and self.rng.random() < 0.75:  # NaN made first, then carried through every later node
            x = self.elementwise("batch_norm", x, width, nan=True)
            for _ in range(int(self.rng.integers(1, 4))):  # activations meeting the NaN
                x = self.activation(x)
        for _ in range(self.data.draw(st.integers(0, 3 if self.edgy else 2))):
            out = (
                0 if self.edgy and self.rng.random() < 0.2 else self.data.draw(st.integers(1, 9))
            )  # a zero-width value now and then
            x = self.add(
                "linear",
                [x],
                weight=self.big_w(out, width),
                bias=self.w(out) if self.data.draw(st.booleans()) else None,
            )
            width = out
            # after a linear: a few of these (a NaN made by one meets the next, e.g. batch_norm then relu)
            for kind in self.data.draw(
                st.lists(
                    st.sampled_from(["activation", "layer_norm", "batch_norm", "prelu"]),
                    min_size=int(self.edgy),
                    max_size=2 + self.edgy,
                )
            ):
                x = self.elementwise(kind, x, width)
        return x, width

    def elementwise(self, kind: str, x: str, width: int, nan: bool = False) -> str:
        if kind == "activation":
            return self.activation(x)
        if kind == "prelu":
            shared = width == 0 or self.data.draw(st.booleans())
            return self.add("prelu", [x], weight=self.w(1 if shared else width))
        if kind == "layer_norm":
            return self.add(
                "layer_norm",
                [x],
                weight=self.w(width),
                bias=None if self.data.draw(st.booleans()) else self.w(width),
                eps=1e-5,
            )
        var = self.rng.uniform(0.5, 2.0, width).astype(F32)
        if nan or (self.edgy and width and self.data.draw(st.booleans())):
            var[self.data.draw(st.integers(0, width - 1))] = -1.0  # NaN from a finite observation
        return self.add(
            "batch_norm",
            [x],
            running_mean=self.w(width),
            running_var=var,
            weight=self.w(width),
            bias=self.w(width),
            eps=1e-3,
        )

    def cnn(self, x: str, shape: tuple) -> tuple[str, int]:
        c, h, w = shape
        out = self.data.draw(st.integers(1, 4))
        k = self.data.draw(st.integers(1, min(3, h, w)))
        stride = [self.data.draw(st.integers(1, 2)), self.data.draw(st.integers(1, 2))]
        pad = [self.data.draw(st.integers(0, 1)), self.data.draw(st.integers(0, 1))]
        x = self.add(
            "conv2d",
            [x],
            weight=self.w(out, c, k, k),
            bias=self.w(out) if self.data.draw(st.booleans()) else None,
            stride=stride,
            padding=pad,
        )
        x = self.activation(x)
        oh, ow = (h + 2 * pad[0] - k) // stride[0] + 1, (w + 2 * pad[1] - k) // stride[1] + 1
        return self.add("flatten", [x]), out * oh * ow


def _box(shape, low=-3.0, high=3.0) -> sp.Box:
    return sp.Box(np.full(shape, low, F32), np.full(shape, high, F32), tuple(shape), "F32")


def _observation_space(data) -> tuple:
    kind = data.draw(
        st.sampled_from(
            ["vector", "image", "chw", "discrete", "multi_discrete", "multi_binary", "dict", "empty", "huge"]
        )
    )
    if kind == "vector":
        n = data.draw(st.integers(1, 6))
        return _box((n,)), kind
    if kind == "empty":  # a zero-width observation: every sum over it is empty
        return _box((0,)), kind
    if kind == "huge":  # observations near the float32 limit
        return _box((data.draw(st.integers(1, 6)),), -BIG, BIG), kind
    if kind == "image":
        shape = (data.draw(st.integers(1, 2)), data.draw(st.integers(3, 6)), data.draw(st.integers(3, 6)))
        return sp.Box(np.zeros(shape, np.uint8), np.full(shape, 255, np.uint8), shape, "U8"), kind
    if kind == "chw":
        return _box((data.draw(st.integers(1, 3)), data.draw(st.integers(2, 5)), data.draw(st.integers(2, 5)))), kind
    if kind == "discrete":
        return sp.Discrete(data.draw(st.integers(1, 5))), kind
    if kind == "multi_discrete":
        nvec = np.array(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)), np.int64)
        return sp.MultiDiscrete(nvec, np.zeros_like(nvec)), kind
    if kind == "multi_binary":
        return sp.MultiBinary(data.draw(st.integers(1, 5))), kind
    return sp.Dict(
        (("pos", _box((data.draw(st.integers(1, 4)),))), ("mode", sp.Discrete(data.draw(st.integers(1, 3)))))
    ), kind


def _features(b: Builder, space, kind: str) -> tuple[str, int]:
    if kind == "dict":
        parts = [b.add("flatten", [f"obs.{key}"]) for key, _ in space.spaces]
        width = int(space.spaces[0][1].shape[0]) + int(space.spaces[1][1].n)
        return b.add("concat", parts), width
    if kind in ("image", "chw"):
        return b.cnn("obs", space.shape)
    width = {
        "vector": lambda: space.shape[0],
        "empty": lambda: 0,
        "huge": lambda: space.shape[0],
        "discrete": lambda: space.n,
        "multi_discrete": lambda: int(space.nvec.sum()),
        "multi_binary": lambda: space.n,
    }[kind]()
    return "obs", int(width)


def _sample(space, rng):
    if isinstance(space, sp.Dict):
        return {k: _sample(s, rng) for k, s in space.spaces}
    if isinstance(space, sp.Box):
        if space.dtype == "U8":
            return rng.integers(0, 256, size=space.shape).astype(np.uint8)
        if float(np.max(space.high, initial=0)) >= BIG:  # near the float32 limit
            return (rng.choice([-1.0, 1.0], size=space.shape) * rng.uniform(1e37, BIG, size=space.shape)).astype(F32)
        return rng.uniform(-3, 3, size=space.shape).astype(F32)
    if isinstance(space, sp.Discrete):
        return np.asarray(rng.integers(0, space.n), np.int64)
    if isinstance(space, sp.MultiDiscrete):
        return rng.integers(0, space.nvec).astype(np.int64)
    return rng.integers(0, 2, size=space.n).astype(np.int8)


@settings(max_examples=examples(60))
@given(st.data())
def test_random_policies_act_alike_in_python_and_javascript(js_reader, workdir, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    b = Builder(data, rng)
    obs_space, kind = _observation_space(data)
    x, width = _features(b, obs_space, kind)
    recurrent = None
    if data.draw(st.booleans()) and data.draw(st.booleans()):
        layers, hidden = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 4))
        weights = [
            {
                "weight_ih": b.w(4 * hidden, width if i == 0 else hidden),
                "weight_hh": b.w(4 * hidden, hidden),
                "bias_ih": b.w(4 * hidden),
                "bias_hh": b.w(4 * hidden),
            }
            for i in range(layers)
        ]
        b.count += 1
        b.nodes.append({"op": "lstm", "in": [x, "h", "c"], "out": [f"v{b.count}", "h2", "c2"], "layers": weights})
        recurrent = {
            "hidden_in": "h",
            "cell_in": "c",
            "hidden_out": "h2",
            "cell_out": "c2",
            "layers": layers,
            "hidden_size": hidden,
        }
        x, width = f"v{b.count}", hidden
    x, width = b.mlp(x, width)
    # float actions show the smallest difference, so box heads come up most
    head_kind = data.draw(
        st.sampled_from(["argmax", "quantile_argmax", "multi_argmax", "bernoulli", "box", "box", "box"])
    )
    masks = False
    if head_kind in ("argmax", "quantile_argmax"):
        n = data.draw(st.integers(1, 5))
        nq = data.draw(st.integers(1, 3)) if head_kind == "quantile_argmax" else 1
        x = b.add("linear", [x], weight=b.w(n * nq, width), bias=b.w(n * nq))
        head = {"op": head_kind, "in": x} | ({"n_quantiles": nq} if head_kind == "quantile_argmax" else {})
        action_space = sp.Discrete(n)
        masks = head_kind == "argmax" and data.draw(st.booleans())
    elif head_kind == "multi_argmax":
        nvec = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
        x = b.add("linear", [x], weight=b.w(sum(nvec), width), bias=None)
        head = {"op": "multi_argmax", "in": x, "sizes": nvec}
        action_space = sp.MultiDiscrete(np.array(nvec, np.int64), np.zeros(len(nvec), np.int64))
        masks = data.draw(st.booleans())
    elif head_kind == "bernoulli":
        n = data.draw(st.integers(1, 4))
        x = b.add("linear", [x], weight=b.w(n, width), bias=b.w(n))
        head, action_space = {"op": "bernoulli", "in": x}, sp.MultiBinary(n)
    else:
        n = data.draw(st.integers(1, 3))
        x = b.add("linear", [x], weight=b.big_w(n, width), bias=b.w(n))
        head = {"op": "box", "in": x, "squash": data.draw(st.sampled_from(["clip", "tanh", "rescale"]))}
        action_space = sp.Box(rng.uniform(-3, -0.5, n).astype(F32), rng.uniform(0.5, 3, n).astype(F32), (n,), "F32")
    desc = {
        "observation_space": obs_space,
        "action_space": action_space,
        "normalize_images": data.draw(st.booleans()),
        "nodes": b.nodes,
        "action": head,
    }
    if recurrent is not None:
        desc["recurrent"] = recurrent
    extensions = {}
    if kind == "vector" and data.draw(st.booleans()):
        shape = obs_space.shape
        extensions["RLA_vec_normalize"] = {
            "norm_obs": True,
            "norm_reward": False,
            "clip_obs": 2.5,
            "clip_reward": 10.0,
            "epsilon": 1e-8,
            "gamma": 0.99,
            "training": False,
            "obs": {"mean": rng.normal(size=shape), "var": rng.uniform(0.1, 3, size=shape), "count": 5.0},
            "obs_keys": None,
            "ret": {"mean": np.asarray(0.0), "var": np.asarray(1.0), "count": 5.0},
        }
        desc["vec_normalize"] = True
    extensions["RLA_policy"] = desc
    path = os.path.join(workdir, "policy.rlarchive")
    rlarchive.save(path, {"observation_space": obs_space, "action_space": action_space}, extension_values=extensions)

    n_obs = 4
    observations = [_sample(obs_space, rng) for _ in range(n_obs)]
    request: dict = {"observations": [dump_value(o) for o in observations]}
    if recurrent is not None:
        request["episode_starts"] = [True] + [bool(v) for v in rng.random(n_obs - 1) < 0.4]
    if masks:
        width = action_space.n if isinstance(action_space, sp.Discrete) else int(action_space.nvec.sum())
        m = rng.random((n_obs, width)) < 0.7
        m[:, 0] = True
        request["action_masks"] = [dump_value(row) for row in m]
    with rlarchive.open(path) as ar:
        policy = ar.policy()
    mask_values = [load_value(v) for v in request["action_masks"]] if masks else None
    act_values = act(
        policy, [load_value(v) for v in request["observations"]], request.get("episode_starts"), mask_values
    )
    want = [dump_value(a) for a in act_values]
    floats = [np.asarray(a, np.float64) for a in act_values if np.asarray(a).dtype.kind == "f"]
    event(f"kind {kind}, edgy {b.edgy}")
    if any(n["op"] == "batch_norm" and np.any(n["running_var"] < 0) for n in b.nodes):
        event("a negative running variance (NaN inside the network)")
    if any(np.isnan(a).any() for a in floats):
        event("NaN in a float action")
    if any(np.isinf(a).any() for a in floats):
        event("inf in a float action")
    reply = js_reader.predict(path, **request)
    assert reply.get("result") == "actions", reply
    why = judge_actions()(reply["actions"], want)
    assert why == "", f"{why}\n{desc}"
