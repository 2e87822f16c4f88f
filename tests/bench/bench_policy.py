"""Benchmark: per-step ``predict`` of the portable policy (NumPy, JavaScript) against SB3's ``policy.predict`` with torch.

Two policies, built by Stable-Baselines3 and saved with ``rlarchive.sb3.save``:

- a PPO ``MlpPolicy`` with two hidden layers of 64 units over an
  8-dimensional Box observation (Discrete actions);
- a DQN ``CnnPolicy`` (NatureCNN) over an 84x84x4 uint8 image.

For each, the time of one single-observation deterministic ``predict`` is
measured, the median of ``--steps`` calls after a warm-up, for:
``model.policy.predict`` (torch, one thread), ``Archive.policy().predict``
(NumPy, its BLAS on one thread), and the JavaScript reader's
``policy.predict`` (Node, timed inside one process) with each of its two
kernels for the sums of linear and conv2d: WebAssembly SIMD (the default
where the runtime has it) and pure JavaScript (the fallback).

Then the exact GELU (``approximate="none"``) over 2^24 float32 values, the
largest value a description may hold: the evaluator's vectorised binary64
erf, computed in blocks, against an element-by-element ``math.erf`` (what
an unvectorised evaluator does), with the time and the peak of traced
memory of each (``--gelu-elements`` to change the size).

Prints the times and the ratios in this run; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

# one core for NumPy's BLAS as for torch (set before NumPy is imported; a value given in the environment wins)
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

JS = """
import { open } from %(index)s;
import { setWasmEnabled, wasmAvailable } from %(gemm)s;
const [path, steps] = [process.argv[2], Number(process.argv[3])];
setWasmEnabled(process.argv[5] === 'wasm');
if (process.argv[5] === 'wasm' && !wasmAvailable()) {
  console.log('NaN');
  process.exit(0);
}
const ar = await open(path);
const policy = await ar.policy();
const obs = JSON.parse(process.argv[4]);
const x = { dtype: obs.dtype, shape: obs.shape, data: obs.dtype === 'U8' ? Uint8Array.from(obs.data) : Float32Array.from(obs.data) };
for (let i = 0; i < 20; i++) policy.predict(x);
const times = [];
for (let i = 0; i < steps; i++) {
  const t = process.hrtime.bigint();
  policy.predict(x);
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
}
times.sort((a, b) => a - b);
console.log(times[Math.floor(times.length / 2)]);
"""


def _median_ms(fn, steps: int) -> float:
    for _ in range(20):
        fn()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def _traced(fn) -> tuple:
    """(seconds of one call of ``fn``, peak MiB of memory traced by tracemalloc during a second call)."""
    import tracemalloc

    t = time.perf_counter()
    fn()
    seconds = time.perf_counter() - t
    tracemalloc.start()
    try:
        fn()
        return seconds, tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def bench_gelu(elements: int) -> None:
    """GELU over ``elements`` float32 values: the evaluator's against an element-by-element math.erf."""
    import math

    import numpy as np

    from rlarchive.extensions.policy.evaluator import ACTIVATIONS

    x = np.random.default_rng(0).normal(0, 3, elements).astype(np.float32)

    def per_element() -> np.ndarray:
        x64 = x.astype(np.float64)
        return (0.5 * x64 * (1.0 + np.vectorize(math.erf, otypes=[np.float64])(x64 / math.sqrt(2.0)))).astype(
            np.float32
        )

    gelu = ACTIVATIONS["gelu"][0]
    t_new, m_new = _traced(lambda: gelu(x))
    t_old, m_old = _traced(per_element)
    print(f"gelu (exact) over {elements} float32 values")
    print(f"  element-by-element math.erf  {t_old:7.2f} s   peak {m_old:7.0f} MiB")
    print(f"  vectorised erf, in blocks    {t_new:7.2f} s   peak {m_new:7.0f} MiB   ({t_old / t_new:5.1f}x faster)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--gelu-elements", type=int, default=1 << 24)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import gymnasium as gym
    import numpy as np
    import torch
    from stable_baselines3 import DQN, PPO

    import rlarchive
    from rlarchive import sb3

    torch.set_num_threads(1)

    class Env(gym.Env):
        def __init__(self, obs, act):
            self.observation_space, self.action_space = obs, act

        def reset(self, *, seed=None, options=None):
            return self.observation_space.sample(), {}

        def step(self, action):
            return self.observation_space.sample(), 0.0, False, False, {}

    cases = [
        (
            "MLP 64x64 (PPO)",
            lambda: PPO(
                "MlpPolicy", Env(gym.spaces.Box(-1, 1, (8,), np.float32), gym.spaces.Discrete(4)), device="cpu"
            ),
        ),
        (
            "NatureCNN (DQN)",
            lambda: DQN(
                "CnnPolicy",
                Env(gym.spaces.Box(0, 255, (4, 84, 84), np.uint8), gym.spaces.Discrete(6)),
                buffer_size=10,
                device="cpu",
            ),
        ),
    ]
    node = shutil.which("node")
    index = os.path.join(ROOT, "reader-js", "src", "index.js")
    print(f"per-step predict, median of {args.steps} single observations (torch and NumPy's BLAS with 1 thread)")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "bench.mjs")
        with open(script, "w") as f:
            f.write(
                JS
                % {
                    "index": json.dumps("file://" + index),
                    "gemm": json.dumps(
                        "file://" + os.path.join(ROOT, "reader-js", "src", "extensions", "policy", "gemm.js")
                    ),
                }
            )
        for label, make in cases:
            model = make()
            path = os.path.join(tmp, "m.rlarchive")
            sb3.save(model, path)
            obs = model.observation_space.sample()
            with rlarchive.open(path) as ar:
                policy = ar.policy()
            a, _ = policy.predict(obs)
            b, _ = model.policy.predict(obs, deterministic=True)
            assert np.array_equal(a, b), "the two policies disagree"
            t_sb3 = _median_ms(lambda m=model, o=obs: m.policy.predict(o, deterministic=True), args.steps)
            t_np = _median_ms(lambda p=policy, o=obs: p.predict(o), args.steps)
            row = f"  {label:18} SB3/torch {t_sb3:8.3f} ms   NumPy {t_np:8.3f} ms ({t_np / t_sb3:5.2f}x SB3)"
            if node:
                payload = json.dumps(
                    {
                        "dtype": "U8" if obs.dtype == np.uint8 else "F32",
                        "shape": list(obs.shape),
                        "data": obs.reshape(-1).tolist(),
                    }
                )
                for kernel, name in (("wasm", "JavaScript, Wasm SIMD"), ("js", "pure JavaScript")):
                    r = subprocess.run(
                        [node, script, path, str(args.steps), payload, kernel],
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                    t_js = float(r.stdout.strip())
                    row += f"\n  {'':18} {name:21} {t_js:8.3f} ms ({t_js / t_sb3:5.2f}x SB3, {t_js / t_np:5.2f}x NumPy)"
            print(row)
    bench_gelu(args.gelu_elements)


if __name__ == "__main__":
    main()
