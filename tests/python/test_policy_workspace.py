"""The NumPy evaluator's binary64 workspace: made once per thread and reused, never a fresh copy per call.

A PPO-sized MLP (8 -> 256 -> 256 -> 4, tanh) over a batch of 256: after the
first ``predict``, a call allocates only the float32 values it passes from
node to node (counted with tracemalloc, in bytes), not the binary64 copies of
its inputs, sums and activations. Two threads predicting at once get what
each gets alone; the reused buffers never outgrow a block.
"""

from __future__ import annotations

import threading
import tracemalloc

import numpy as np

from rlarchive import spaces as sp
from rlarchive.extensions.policy import Policy
from rlarchive.extensions.policy.ops import POLICY_BLOCK_ELEMENTS

F32 = np.float32
WIDTH, BATCH = 256, 256


def mlp(rng: np.random.Generator) -> Policy:
    nodes = [
        {"op": "linear", "in": ["obs"], "out": "l1", "weight": rng.normal(size=(WIDTH, 8)).astype(F32), "bias": None},
        {"op": "activation", "in": ["l1"], "out": "a1", "fn": "tanh"},
        {
            "op": "linear",
            "in": ["a1"],
            "out": "l2",
            "weight": (rng.normal(size=(WIDTH, WIDTH)) / 16).astype(F32),
            "bias": rng.normal(size=WIDTH).astype(F32),
        },
        {"op": "activation", "in": ["l2"], "out": "a2", "fn": "tanh"},
        {"op": "linear", "in": ["a2"], "out": "l3", "weight": rng.normal(size=(4, WIDTH)).astype(F32), "bias": None},
    ]
    return Policy(
        {
            "observation_space": sp.Box(np.full(8, -1, F32), np.full(8, 1, F32), (8,), "F32"),
            "action_space": sp.Box(np.full(4, -1e30, F32), np.full(4, 1e30, F32), (4,), "F32"),
            "normalize_images": False,
            "nodes": nodes,
            "action": {"op": "box", "in": "l3", "squash": "clip"},
        }
    )


def test_a_call_after_the_first_allocates_no_binary64_workspace():
    rng = np.random.default_rng(0)
    policy = mlp(rng)
    x = rng.normal(size=(BATCH, 8)).astype(F32)
    first, _ = policy.predict(x)
    tracemalloc.start()
    try:
        again, _ = policy.predict(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.array_equal(first, again)
    value = BATCH * WIDTH * 4  # one float32 value between nodes
    # a node's input and output, and the head's: a binary64 copy of one of them alone would be 2 * value
    assert peak < 3 * value, f"a predict peaked at {peak / value:.1f} float32 values of the batch"


def test_threads_predicting_at_once_get_what_each_gets_alone():
    rng = np.random.default_rng(1)
    policy = mlp(rng)
    inputs = [rng.normal(size=(BATCH, 8)).astype(F32) * (i + 1) for i in range(4)]
    alone = [policy.predict(x)[0] for x in inputs]
    results: dict[int, list] = {}

    def work(i: int) -> None:
        results[i] = [policy.predict(inputs[(i + k) % 4])[0] for k in range(40)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, got in results.items():
        for k, a in enumerate(got):
            assert np.array_equal(a, alone[(i + k) % 4])


def test_the_reused_buffers_stay_within_a_block():
    rng = np.random.default_rng(2)
    policy = mlp(rng)
    x = rng.normal(size=(3 * POLICY_BLOCK_ELEMENTS // WIDTH + 5, 8)).astype(F32)  # rows beyond one block
    policy.predict(x)
    buffers = list(vars(policy._workspace._scratch).values())
    assert buffers and all(b.size <= POLICY_BLOCK_ELEMENTS for b in buffers)
