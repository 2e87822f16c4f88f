#!/usr/bin/env python3
"""Saving and loading a SAC model with its replay buffer: rlarchive against SB3's pickles, in one run.

    make bench                                    # part of it
    python tests/bench/bench_replay_buffer.py --vector 1000000 --image 100000

Two buffers, filled with random data directly (no training):
  vector: SAC on 17 float32 observations and 6 actions (HalfCheetah-sized),
  image:  SAC on 84x84x4 uint8 observations, optimize_memory_usage=True.
For each: ``rlarchive.sb3.save(model, path, replay_buffer=True)`` against
``model.save`` + ``model.save_replay_buffer``; ``rlarchive.sb3.load`` against
``SAC.load`` + ``load_replay_buffer``; and the SHA-256 of the buffer's bytes
(the floor of a save that digests them). Every operation runs in its own
process (the model is built and filled there first), which reports its time
and its peak memory above the process size before the operation (VmHWM).
Nothing is asserted: it prints.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

OBS_DIM, ACT_DIM, IMAGE = 17, 6, (84, 84, 4)


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> None:
    """Set VmHWM back to the current size (Linux: clear_refs 5), so that it measures what follows."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _build(kind: str, n: int):
    """A SAC model whose replay buffer holds ``n`` random transitions (full)."""
    import gymnasium as gym
    import numpy as np
    from stable_baselines3 import SAC

    class Env(gym.Env):
        def __init__(self) -> None:
            if kind == "image":
                self.observation_space = gym.spaces.Box(0, 255, IMAGE, np.uint8)
            else:
                self.observation_space = gym.spaces.Box(-np.inf, np.inf, (OBS_DIM,), np.float32)
            self.action_space = gym.spaces.Box(-1, 1, (ACT_DIM,), np.float32)

        def reset(self, *, seed=None, options=None):
            return self.observation_space.sample(), {}

        def step(self, action):
            return self.observation_space.sample(), 0.0, False, False, {}

    if kind == "image":
        model = SAC("CnnPolicy", Env(), buffer_size=n, optimize_memory_usage=True,
                    replay_buffer_kwargs={"handle_timeout_termination": False}, device="cpu", seed=0)
    else:
        model = SAC("MlpPolicy", Env(), buffer_size=n, device="cpu", seed=0)
    buf = model.replay_buffer
    rng = np.random.default_rng(0)
    block = rng.integers(0, 256, 1 << 24, dtype=np.uint8)  # random bytes, repeated: as costly to hash as any
    for name in ("observations", "next_observations", "actions", "rewards", "dones", "timeouts"):
        arr = getattr(buf, name, None)
        if arr is None or (name == "next_observations" and buf.optimize_memory_usage):
            continue
        if arr.dtype == np.float32:
            arr[...] = rng.standard_normal(arr.shape, dtype=np.float32)
        else:
            flat = arr.reshape(-1).view(np.uint8)
            for i in range(0, flat.size, block.size):
                flat[i : i + block.size] = block[: flat.size - i]
    buf.full, buf.pos = True, 0
    return model, buf


def _buffer_arrays(buf):
    names = ["observations", "actions", "rewards", "dones", "timeouts"]
    if not buf.optimize_memory_usage:
        names.insert(1, "next_observations")
    return [getattr(buf, k) for k in names]


def child(op: str, kind: str, n: int, folder: str) -> None:
    """One operation in this process; prints its figures as JSON."""
    import hashlib

    ra, sb, pkl = (os.path.join(folder, f"{kind}.{ext}") for ext in ("rlarchive", "zip", "pkl"))
    model = buf = None
    if op in ("sha256", "rlarchive save", "sb3 save"):
        model, buf = _build(kind, n)
    import rlarchive.sb3 as ra_sb3
    from stable_baselines3 import SAC

    size = os.path.getsize(ra) if op == "rlarchive load" else 0
    _reset_peak()
    before = _status_kib("VmRSS")
    t = time.perf_counter()
    if op == "sha256":
        h = hashlib.sha256()
        for a in _buffer_arrays(buf):
            h.update(memoryview(a).cast("B"))
        size = sum(a.nbytes for a in _buffer_arrays(buf))
    elif op == "rlarchive save":
        ra_sb3.save(model, ra, replay_buffer=True)
    elif op == "sb3 save":
        model.save(sb)
        model.save_replay_buffer(pkl)
    elif op == "rlarchive load":
        loaded = ra_sb3.load(ra)
        assert loaded.replay_buffer.full
    elif op == "sb3 load":
        loaded = SAC.load(sb, device="cpu")
        loaded.load_replay_buffer(pkl)
        assert loaded.replay_buffer.full
    seconds = time.perf_counter() - t
    peak = _status_kib("VmHWM")
    print(json.dumps({"seconds": seconds, "peak_mib": max(0, peak - before) / 1024, "bytes": size}))


def run(op: str, kind: str, n: int, folder: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", op, kind, str(n), folder], capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"{op} ({kind}) failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vector", type=int, default=1_000_000, help="transitions of the 17-float buffer")
    ap.add_argument("--image", type=int, default=100_000, help="transitions of the 84x84x4 uint8 buffer (0: skip)")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        op, kind, n, folder = args.child
        child(op, kind, int(n), folder)
        return
    bench_dir = os.environ.get("BENCH_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    cases = [("vector", args.vector), ("image", args.image)]
    print("replay buffers: one process per operation; peak = VmHWM above the process size before the operation")
    for kind, n in cases:
        if n <= 0:
            continue
        with tempfile.TemporaryDirectory(dir=bench_dir) as d:
            r = {op: run(op, kind, n, d) for op in ("sha256", "rlarchive save", "sb3 save", "rlarchive load", "sb3 load")}
            ra_size = os.path.getsize(os.path.join(d, f"{kind}.rlarchive"))
            sb_size = os.path.getsize(os.path.join(d, f"{kind}.zip")) + os.path.getsize(os.path.join(d, f"{kind}.pkl"))
        shape = f"{OBS_DIM} float32" if kind == "vector" else "x".join(map(str, IMAGE)) + " uint8, optimize_memory_usage"
        print(f"\n{kind}: {n:,} transitions of {shape}; buffer {r['sha256']['bytes'] / 1e6:.0f} MB; "
              f"rlarchive {ra_size / 1e6:.0f} MB, SB3 zip + pickle {sb_size / 1e6:.0f} MB")
        print(f"  {'operation':34} {'seconds':>9} {'peak MiB':>9}")
        for op, f in r.items():
            label = "SHA-256 of the buffer's bytes" if op == "sha256" else op
            if op == "sb3 save":
                label = "sb3 save + save_replay_buffer"
            if op == "sb3 load":
                label = "sb3 SAC.load + load_replay_buffer"
            print(f"  {label:34} {f['seconds']:9.3f} {f['peak_mib']:9.1f}")
        sha = r["sha256"]["seconds"]
        print(f"  rlarchive save / SB3 save:      {r['rlarchive save']['seconds'] / r['sb3 save']['seconds']:.2f}x")
        print(f"  rlarchive save / SHA-256 floor: {r['rlarchive save']['seconds'] / sha:.2f}x")
        print(f"  rlarchive load / SB3 load:      {r['rlarchive load']['seconds'] / r['sb3 load']['seconds']:.2f}x")
        print(f"  rlarchive load / SHA-256 floor: {r['rlarchive load']['seconds'] / sha:.2f}x")


if __name__ == "__main__":
    main()
