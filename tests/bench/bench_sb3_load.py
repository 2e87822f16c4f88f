"""Benchmark: ``rlarchive.sb3.load`` against ``PPO.load`` on the same 17M-parameter PPO, in one run.

Builds a PPO whose actor and critic are three layers of 2048 units over a
256-dimensional observation (about 17.8M parameters, 71 MB of float32; with
the Adam state the SB3 zip holds about 213 MB), saves it with ``model.save``,
imports it, and times, best of ``--repeat``:

- ``PPO.load(zip)``: SB3's own load (build with random initialisation, then
  ``torch.load`` and copy every weight);
- ``rlarchive.sb3.load(archive)``: verify the archive, rebuild the values,
  build the policy without initialising it, copy the mapped tensors in.

The two run in interleaved rounds (benchkit; no warm-up round: the model is
built, and every module imported, before the first). Both produce a model
whose parameters are checked equal. Prints the medians and their ratio;
asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
import benchkit  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--width", type=int, default=2048)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import torch
    from stable_baselines3 import PPO

    from rlarchive import sb3 as rsb3

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    layers = [args.width] * 3
    model = PPO(
        "MlpPolicy",
        _Env256(),
        policy_kwargs=dict(net_arch=dict(pi=layers, vf=layers)),
        device="cpu",
        n_steps=64,
        batch_size=64,
    )
    model.learn(64)  # one update: the Adam state then holds two more copies of every weight
    n_params = sum(p.numel() for p in model.policy.parameters())
    with benchkit.scratch("ppo") as d:
        z, a = os.path.join(d, "ppo.zip"), os.path.join(d, "ppo.rlarchive")
        model.save(z)
        rsb3.import_archive(z, a)
        sizes = (os.path.getsize(z), os.path.getsize(a))
        r = benchkit.Rounds()
        r.run(
            {"PPO.load": lambda: PPO.load(z, device="cpu"), "rlarchive.sb3.load": lambda: rsb3.load(a, device="cpu")},
            args.rounds,
            warmup=0,
        )
        t_sb3, t_ra = r.median("PPO.load"), r.median("rlarchive.sb3.load")
        x, y = PPO.load(z, device="cpu"), rsb3.load(a, device="cpu")
        for (k1, p1), (k2, p2) in zip(x.policy.state_dict().items(), y.policy.state_dict().items()):
            assert k1 == k2 and torch.equal(p1, p2), k1
    print(
        f"PPO with {n_params / 1e6:.1f}M parameters; SB3 zip {sizes[0] / 1e6:.0f} MB, rlarchive {sizes[1] / 1e6:.0f} MB; medians of {args.rounds} rounds; load average {benchkit.load_average()}"
    )
    print(f"  PPO.load:             {t_sb3 * 1000:8.1f} ms")
    print(f"  rlarchive.sb3.load:   {t_ra * 1000:8.1f} ms")
    print(f"  PPO.load / rlarchive.sb3.load: {benchkit.ratio_text(r.ratio('PPO.load', 'rlarchive.sb3.load'))}")


class _Env256:
    """A stand-in environment with a 256-dimensional Box observation (never stepped)."""

    def __new__(cls):
        import gymnasium as gym
        import numpy as np

        class Env(gym.Env):
            observation_space = gym.spaces.Box(-1.0, 1.0, (256,), np.float32)
            action_space = gym.spaces.Discrete(4)

            def reset(self, *, seed=None, options=None):
                return np.zeros(256, np.float32), {}

            def step(self, action):
                return np.zeros(256, np.float32), 0.0, True, False, {}

        return Env()


if __name__ == "__main__":
    main()
