"""Test cases of the metadata key ``part`` (spec/metadata.md §8): archives holding one part of an agent."""

from __future__ import annotations

import numpy as np
from cases import archive, case, saved
from cases_extensions import VN, _box, _stats, _vn
from cases_replay_buffer import RB, _buffer
from sites import doc

from rlarchive import spaces as sp
from rlarchive.values import ClassRef

META = "metadata §8"


@case(
    "part-replay-buffer",
    "An archive of part replay_buffer: the extension RLA_replay_buffer, and in data exactly the buffer's observation and action spaces.",
    ["§5.1", META],
    extensions=[RB],
)
def _():
    value = _buffer()
    data = {"observation_space": value["observation_space"], "action_space": value["action_space"]}
    return saved(data, metadata={"part": "replay_buffer"}, extension_values={RB: value})


@case(
    "part-vec-normalize",
    "An archive of part vec_normalize: the extension RLA_vec_normalize, and in data exactly the environment's observation and action spaces.",
    ["§5.1", META],
    extensions=[VN],
)
def _():
    data = {"observation_space": _box((3,)), "action_space": sp.Discrete(2)}
    return saved(data, metadata={"part": "vec_normalize"}, extension_values={VN: _vn(_stats((3,), 3))})


@case(
    "part-policy",
    "An archive of part policy: the values its class is built from (spaces, net_arch, the class reference policy_class) and its weights in the group policy.",
    ["§5.1", META],
)
def _():
    rng = np.random.default_rng(5)
    data = {
        "observation_space": _box((3,)),
        "action_space": sp.Discrete(2),
        "net_arch": [4],
        "normalize_images": True,
        "policy_class": ClassRef("stable_baselines3.dqn.policies", "QNetwork"),
    }
    weights = {
        "q_net.0.weight": rng.normal(size=(4, 3)).astype(np.float32),
        "q_net.0.bias": np.zeros(4, np.float32),
        "q_net.2.weight": rng.normal(size=(2, 4)).astype(np.float32),
        "q_net.2.bias": np.zeros(2, np.float32),
    }
    return saved(data, {"policy": weights}, metadata={"part": "policy"})


@case(
    "metadata-invalid-part",
    "The metadata part naming no part spec/metadata.md §8 defines: the warning METADATA_INVALID at its key, the archive read as usual.",
    ["§5.1", META],
    warnings=["METADATA_INVALID"],
    check="metadata-value",
    at=doc("/metadata/part", "value", member="manifest.json"),
)
def _():
    def patch(m):
        m["metadata"] = {"env_id": "CartPole-v1", "part": "optimizer"}

    return archive({"data": {"gamma": 0.99}}, manifest_patch=patch)
