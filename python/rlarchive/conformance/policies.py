"""Random portable policies for the generated conformance cases (spec Annex A.6).

A policy (extension ``RLA_policy``) of random weights over a random
observation space (a Box vector, a Discrete, a MultiBinary, or a Dict of a
Box and a Discrete), an MLP of random widths and activations, optionally an
LSTM, and a random head (``argmax`` with or without action masks,
``multi_argmax``, ``bernoulli``, ``box``); written by the reference writer,
given random observations, and judged on the reference reader's actions.
Weights and observations stay far from float32's limits, where RLA_policy §7
would accept two answers.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from typing import Any

import numpy as np

from .. import spaces as sp
from ..extensions.policy.activations import ACTIVATIONS
from ..extensions.policy.evaluator import act
from ..reader import Archive
from ..values import dump_value, load_value
from ..writer import save

#: The writer the generated archives (these and generated.py's) name in their manifest.
PRODUCER = ("rlarchive-conformance-generated", "1")
#: Observations in a generated predict request.
OBSERVATIONS = 4
_F32 = np.float32


class _Net:
    """Draws nodes over named values."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.np = np.random.default_rng(rng.getrandbits(64))
        self.nodes: list[dict[str, Any]] = []

    def w(self, *shape: int) -> np.ndarray:
        values: np.ndarray = self.np.normal(size=shape) / np.sqrt(max(shape[-1], 1))
        return values.astype(_F32)

    def add(self, op: str, ins: list[str], **params: Any) -> str:
        out = f"v{len(self.nodes) + 1}"
        self.nodes.append({"op": op, "in": ins, "out": out, **params})
        return out

    def mlp(self, x: str, width: int) -> tuple[str, int]:
        for _ in range(self.rng.randint(0, 2)):
            out = self.rng.randint(1, 8)
            x = self.add(
                "linear", [x], weight=self.w(out, width), bias=self.w(out) if self.rng.random() < 0.7 else None
            )
            x = self.add("activation", [x], fn=self.rng.choice(sorted(ACTIVATIONS)))
            width = out
        return x, width

    def lstm(self, x: str, width: int) -> tuple[str, int, dict[str, Any]]:
        layers, hidden = self.rng.randint(1, 2), self.rng.randint(1, 4)
        weights = [
            {
                "weight_ih": self.w(4 * hidden, width if i == 0 else hidden),
                "weight_hh": self.w(4 * hidden, hidden),
                "bias_ih": self.w(4 * hidden),
                "bias_hh": self.w(4 * hidden),
            }
            for i in range(layers)
        ]
        out = f"v{len(self.nodes) + 1}"
        self.nodes.append({"op": "lstm", "in": [x, "h", "c"], "out": [out, "h2", "c2"], "layers": weights})
        names = {"hidden_in": "h", "cell_in": "c", "hidden_out": "h2", "cell_out": "c2"}
        return out, hidden, {**names, "layers": layers, "hidden_size": hidden}


def _box(n: int) -> sp.Box:
    return sp.Box(np.full(n, -3.0, _F32), np.full(n, 3.0, _F32), (n,), "F32")


def _observation_space(net: _Net) -> tuple[Any, str, int]:
    """(space, the input node, its width)."""
    kind = net.rng.randrange(4)
    if kind == 0:
        n = net.rng.randint(1, 6)
        return _box(n), "obs", n
    if kind == 1:
        space: Any = sp.Discrete(net.rng.randint(1, 5))
        return space, "obs", space.n
    if kind == 2:
        n = net.rng.randint(1, 5)
        return sp.MultiBinary(n), "obs", n
    pos, mode = _box(net.rng.randint(1, 4)), sp.Discrete(net.rng.randint(1, 3))
    x = net.add("concat", [net.add("flatten", ["obs.pos"]), net.add("flatten", ["obs.mode"])])
    return sp.Dict((("pos", pos), ("mode", mode))), x, pos.shape[0] + mode.n


def _sample(space: Any, rng: np.random.Generator) -> Any:
    if isinstance(space, sp.Dict):
        return {k: _sample(s, rng) for k, s in space.spaces}
    if isinstance(space, sp.Box):
        return rng.uniform(-3, 3, size=space.shape).astype(_F32)
    if isinstance(space, sp.Discrete):
        return np.asarray(rng.integers(0, space.n), np.int64)
    return rng.integers(0, 2, size=space.n).astype(np.int8)


def _head(net: _Net, x: str, width: int) -> tuple[dict[str, Any], Any, int]:
    """(the head, the action space, the mask width: 0 for no masks)."""
    kind = net.rng.randrange(4)
    if kind == 0:
        n = net.rng.randint(1, 5)
        x = net.add("linear", [x], weight=net.w(n, width), bias=net.w(n))
        return {"op": "argmax", "in": x}, sp.Discrete(n), n if net.rng.random() < 0.5 else 0
    if kind == 1:
        nvec = [net.rng.randint(1, 4) for _ in range(net.rng.randint(1, 3))]
        x = net.add("linear", [x], weight=net.w(sum(nvec), width), bias=None)
        multi = sp.MultiDiscrete(np.array(nvec, np.int64), np.zeros(len(nvec), np.int64))
        return {"op": "multi_argmax", "in": x, "sizes": nvec}, multi, sum(nvec) if net.rng.random() < 0.5 else 0
    n = net.rng.randint(1, 4)
    x = net.add("linear", [x], weight=net.w(n, width), bias=net.w(n))
    if kind == 2:
        return {"op": "bernoulli", "in": x}, sp.MultiBinary(n), 0
    low = net.np.uniform(-3, -0.5, n).astype(_F32)
    space = sp.Box(low, net.np.uniform(0.5, 3, n).astype(_F32), (n,), "F32")
    return {"op": "box", "in": x, "squash": net.rng.choice(["clip", "tanh", "rescale"])}, space, 0


def random_policy_case(rng: random.Random, case_id: str, out: str) -> dict[str, Any]:
    """A predict case (an entry as in ``index.json``, its files written into ``out``) of a random policy."""
    net = _Net(rng)
    obs_space, x, width = _observation_space(net)
    recurrent = None
    if rng.random() < 0.3:
        x, width, recurrent = net.lstm(x, width)
    x, width = net.mlp(x, width)
    head, action_space, mask_width = _head(net, x, width)
    desc: dict[str, Any] = {
        "observation_space": obs_space,
        "action_space": action_space,
        "normalize_images": False,
        "nodes": net.nodes,
        "action": head,
    }
    if recurrent is not None:
        desc["recurrent"] = recurrent
    name = case_id + ".rlarchive"
    path = os.path.join(out, name)
    with tempfile.TemporaryDirectory() as tmp:  # written beside, then moved: out holds only finished files
        save(
            os.path.join(tmp, name),
            {"observation_space": obs_space, "action_space": action_space},
            extension_values={"RLA_policy": desc},
            producer=PRODUCER,
        )
        os.replace(os.path.join(tmp, name), path)
    request: dict[str, Any] = {"observations": [dump_value(_sample(obs_space, net.np)) for _ in range(OBSERVATIONS)]}
    if recurrent is not None:
        request["episode_starts"] = [True] + [bool(v) for v in net.np.random(OBSERVATIONS - 1) < 0.4]
    if mask_width:
        masks = net.np.random((OBSERVATIONS, mask_width)) < 0.7
        masks[:, 0] = True
        request["action_masks"] = [dump_value(m) for m in masks]
    with Archive(path, spaces="neutral") as ar:
        policy = ar.policy()
    return {
        "id": case_id + "-predict",
        "description": f"A random portable policy ({head['op']} head) on random observations: the reference reader's actions.",
        "spec": ["RLA_policy §7"],
        "file": name,
        "extensions": ["RLA_policy"],
        "expect": {"result": "actions", "predict_file": predict_file(out, case_id + ".predict.json", request, policy)},
        "section": "generated",
        "root": out,
    }


def predict_file(out: str, name: str, request: dict[str, Any], policy: Any) -> str:
    """Write a predict file (the request's fields and the reference reader's actions); its name."""
    masks = [load_value(m) for m in request["action_masks"]] if "action_masks" in request else None
    actions = act(policy, [load_value(o) for o in request["observations"]], request.get("episode_starts"), masks)
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        json.dump({**request, "actions": [dump_value(a) for a in actions]}, f)
    return name
