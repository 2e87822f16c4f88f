"""Benchmark: ``predict`` of the portable policy (NumPy, JavaScript) against SB3's ``policy.predict`` with torch.

Policies built by Stable-Baselines3 and saved with ``rlarchive.sb3.save``:

- a PPO ``MlpPolicy`` with two hidden layers of 64 units over an
  8-dimensional Box observation (Discrete actions), one observation a step;
- the same with two hidden layers of 256 units, over a batch of 256
  observations (as an evaluation over many environments runs it);
- a DQN ``CnnPolicy`` (NatureCNN) over an 84x84x4 uint8 image, one observation.

For each, the processor time of one deterministic ``predict`` (the best of
``--rounds`` rounds of three measures, each the mean of ``--steps`` calls after
a warm-up; CPU time rather than wall time, so that other work on the machine
weighs less)
for: ``model.policy.predict`` (torch, one thread); ``Archive.policy().predict``
(NumPy, its BLAS on one thread) in a process of its own that imports neither
torch nor SB3, as a program using the portable policy runs it (loading torch
changes how the process allocates memory, and NumPy's times with it), and in
the torch process; and the JavaScript reader's ``policy.predict`` (Node, timed
inside one process) with each of its kernels for the sums of linear and
conv2d: WebAssembly SIMD (the default where the runtime has it), the same with
relaxed SIMD multiply-adds (where Node takes ``--experimental-wasm-relaxed-simd``;
later runtimes have them without a flag), and pure JavaScript (the fallback).
The rounds of every evaluator are interleaved; the machine's load average is
printed with them.

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
import { readFileSync } from 'node:fs';
import { open } from %(index)s;
import { setWasmEnabled, wasmAvailable, wasmRelaxed } from %(gemm)s;
const [path, obsPath, steps, rounds, kernel] = process.argv.slice(2);
setWasmEnabled(kernel !== 'js');
if (kernel !== 'js' && (!wasmAvailable() || wasmRelaxed() !== (kernel === 'relaxed'))) {
  console.log('NaN');
  process.exit(0);
}
const ar = await open(path);
const policy = await ar.policy();
const obs = JSON.parse(readFileSync(obsPath, 'utf8'));
const x = { dtype: obs.dtype, shape: obs.shape, data: obs.dtype === 'U8' ? Uint8Array.from(obs.data) : Float32Array.from(obs.data) };
for (let i = 0; i < 20; i++) policy.predict(x);
let best = Infinity;
for (let r = 0; r < Number(rounds); r++) {
  const start = process.cpuUsage();
  for (let i = 0; i < Number(steps); i++) policy.predict(x);
  const used = process.cpuUsage(start);
  best = Math.min(best, (used.user + used.system) / 1000 / Number(steps));
}
console.log(best);
"""

# NumPy alone: a process that imports rlarchive and NumPy only
NUMPY = """
import json, sys, time
import numpy as np
import rlarchive
path, obs_path, steps, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with open(obs_path) as f:
    o = json.load(f)
obs = np.array(o["data"], np.uint8 if o["dtype"] == "U8" else np.float32).reshape(o["shape"])
with rlarchive.open(path) as ar:
    policy = ar.policy()
for _ in range(20):
    policy.predict(obs)
best = float("inf")
for _ in range(rounds):
    t = time.process_time()
    for _ in range(steps):
        policy.predict(obs)
    best = min(best, (time.process_time() - t) / steps * 1000)
print(best)
"""


def cpu_ms(fn, steps: int, rounds: int = 1) -> float:
    """The processor time of one call of ``fn``, in ms: the best of ``rounds`` means over ``steps`` calls."""
    best = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(steps):
            fn()
        best = min(best, (time.process_time() - t) / steps * 1000)
    return best


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


def _cases(gym, np, PPO, DQN):
    class Env(gym.Env):
        def __init__(self, obs, act):
            self.observation_space, self.action_space = obs, act

        def reset(self, *, seed=None, options=None):
            return self.observation_space.sample(), {}

        def step(self, action):
            return self.observation_space.sample(), 0.0, False, False, {}

    box8 = lambda: Env(gym.spaces.Box(-1, 1, (8,), np.float32), gym.spaces.Discrete(4))  # noqa: E731
    return [
        ("MLP 64x64 (PPO), 1 obs", 1, lambda: PPO("MlpPolicy", box8(), device="cpu", seed=0)),
        (
            "MLP 256x256 (PPO), batch 256",
            256,
            lambda: PPO("MlpPolicy", box8(), policy_kwargs={"net_arch": [256, 256]}, device="cpu", seed=0),
        ),
        (
            "NatureCNN (DQN), 1 obs",
            1,
            lambda: DQN(
                "CnnPolicy",
                Env(gym.spaces.Box(0, 255, (4, 84, 84), np.uint8), gym.spaces.Discrete(6)),
                buffer_size=10,
                device="cpu",
                seed=0,
            ),
        ),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=50, help="calls per measure (a fifth of it, at least 10, for batches)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of every evaluator; the best counts")
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
    node = shutil.which("node")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    print(
        f"predict, processor time per call, best of {args.rounds} interleaved rounds "
        "(torch and NumPy's BLAS with 1 thread)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "bench.mjs")
        with open(script, "w") as f:
            f.write(
                JS
                % {
                    "index": json.dumps("file://" + os.path.join(ROOT, "reader-js", "src", "index.js")),
                    "gemm": json.dumps(
                        "file://" + os.path.join(ROOT, "reader-js", "src", "extensions", "policy", "gemm.js")
                    ),
                }
            )
        for i, (label, batch, make) in enumerate(_cases(gym, np, PPO, DQN)):
            model = make()
            path, obs_path = os.path.join(tmp, f"m{i}.rlarchive"), os.path.join(tmp, f"o{i}.json")
            sb3.save(model, path)
            obs = (
                model.observation_space.sample()
                if batch == 1
                else np.stack([model.observation_space.sample() for _ in range(batch)])
            )
            with open(obs_path, "w") as f:
                json.dump(
                    {
                        "dtype": "U8" if obs.dtype == np.uint8 else "F32",
                        "shape": list(obs.shape),
                        "data": obs.reshape(-1).tolist(),
                    },
                    f,
                )
            with rlarchive.open(path) as ar:
                policy = ar.policy()
            a, _ = policy.predict(obs)
            b, _ = model.policy.predict(obs, deterministic=True)
            assert np.array_equal(a, b), "the two policies disagree"
            steps = args.steps if batch == 1 else max(10, args.steps // 5)
            sb3_fn = lambda m=model, o=obs: m.policy.predict(o, deterministic=True)  # noqa: E731
            np_fn = lambda p=policy, o=obs: p.predict(o)  # noqa: E731
            sb3_fn(), np_fn()
            runners = {
                "SB3/torch": lambda: cpu_ms(sb3_fn, steps, 3),
                "NumPy (alone)": lambda: float(
                    subprocess.run(
                        [sys.executable, "-c", NUMPY, path, obs_path, str(steps), "3"],
                        capture_output=True,
                        text=True,
                        check=True,
                        env=env,
                    ).stdout
                ),
                "NumPy (torch loaded)": lambda: cpu_ms(np_fn, steps, 3),
            }
            if node:
                for kernel, name, flags in (
                    ("wasm", "JavaScript, Wasm SIMD", []),
                    ("relaxed", "JavaScript, relaxed SIMD", ["--experimental-wasm-relaxed-simd"]),
                    ("js", "pure JavaScript", []),
                ):
                    cmd = [node, *flags, script, path, obs_path, str(steps), "3", kernel]
                    runners[name] = lambda cmd=cmd: float(
                        subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                    )
            times: dict[str, float] = {}
            loads = []
            for _ in range(args.rounds):
                loads.append(os.getloadavg()[0])
                for name, run in runners.items():
                    times[name] = min(times.get(name, float("inf")), run())
            t_sb3, t_np = times["SB3/torch"], times["NumPy (alone)"]
            print(f"  {label}  (load average {min(loads):.1f}-{max(loads):.1f})")
            for name, t in times.items():
                if t != t:  # NaN: this runtime has no such kernel
                    print(f"    {name:26} (not in this runtime)")
                    continue
                print(f"    {name:26} {t:8.3f} ms  {t / t_sb3:5.2f}x SB3  {t / t_np:5.2f}x NumPy")
    bench_gelu(args.gelu_elements)


if __name__ == "__main__":
    main()
