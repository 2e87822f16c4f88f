#!/usr/bin/env python3
"""Saving and loading a SAC model with its replay buffer: rlarchive against SB3's pickles, in one run.

    make bench                                    # part of it
    python tests/bench/bench_replay_buffer.py --vector 1000000 --image 100000 --repeat 3

Two buffers, filled with random data directly (no training):
  vector: SAC on 17 float32 observations and 6 actions (HalfCheetah-sized),
  image:  SAC on 84x84x4 uint8 observations, optimize_memory_usage=True.
For each: ``rlarchive.sb3.save(model, path, replay_buffer=True)`` against
``model.save`` + ``model.save_replay_buffer``; ``rlarchive.sb3.load`` against
``SAC.load`` + ``load_replay_buffer``; ``rlarchive.open(path).verify()``; and
the SHA-256 of the buffer's bytes on one thread (the floor of a save that
digests them). Every operation runs in its own process (the model is built and
filled there first), --repeat times in a row, each save to a new file; the
figures are the best run (as in bench.py), with the CPU time it took (all
threads), and the first run, which also carries what a process pays once
(importing and compiling the modules a save needs). A save does about 2.2
times the work of the SHA-256 alone (SHA-256, CRC-32 and the copy into the
file), spread over two threads: it reaches the floor only when both cores are
free, which the "two cores free" figure shows.
Peak memory is VmHWM above the process size before a run, the highest of the
runs. Nothing is asserted: it prints.
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
        model = SAC(
            "CnnPolicy",
            Env(),
            buffer_size=n,
            optimize_memory_usage=True,
            replay_buffer_kwargs={"handle_timeout_termination": False},
            device="cpu",
            seed=0,
        )
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


def _two_cores(buf) -> float:
    """SHA-256 of the observations on one thread / the two halves on two threads: 2.0 when both cores are free."""
    import hashlib
    import threading

    mv = memoryview(buf.observations).cast("B")
    half = len(mv) // 2
    t = time.perf_counter()
    hashlib.sha256(mv).digest()
    one = time.perf_counter() - t
    t = time.perf_counter()
    th = threading.Thread(target=lambda: hashlib.sha256(mv[:half]).digest())
    th.start()
    hashlib.sha256(mv[half:]).digest()
    th.join()
    return one / (time.perf_counter() - t)


def child(op: str, kind: str, n: int, folder: str, repeat: int) -> None:
    """One operation, ``repeat`` times in this process; prints its figures as JSON."""
    import gc
    import hashlib

    ra, sb, pkl = (os.path.join(folder, f"{kind}.{ext}") for ext in ("rlarchive", "zip", "pkl"))
    model = buf = None
    if op in ("sha256", "rlarchive save", "sb3 save"):
        model, buf = _build(kind, n)
    from stable_baselines3 import SAC

    import rlarchive
    import rlarchive.sb3 as ra_sb3

    size = sum(a.nbytes for a in _buffer_arrays(buf)) if buf is not None else 0
    extra: dict = {}
    if op == "sha256":
        extra["two_cores"] = max(_two_cores(buf) for _ in range(repeat))
    runs = []
    for _ in range(repeat):
        for p in {"rlarchive save": [ra], "sb3 save": [sb, pkl]}.get(op, []):
            if os.path.exists(p):
                os.unlink(p)  # every run writes a new file, as the first does
        loaded = None
        gc.collect()
        _reset_peak()
        before = _status_kib("VmRSS")
        cpu = time.process_time()
        t = time.perf_counter()
        if op == "sha256":
            h = hashlib.sha256()
            for a in _buffer_arrays(buf):
                h.update(memoryview(a).cast("B"))
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
        elif op == "rlarchive verify":
            with rlarchive.open(ra, spaces="neutral") as ar:
                ar.verify()
        seconds = time.perf_counter() - t
        runs.append((seconds, time.process_time() - cpu, max(0, _status_kib("VmHWM") - before) / 1024))
        del loaded
    best = min(runs)
    print(
        json.dumps(
            {
                "first": runs[0][0],
                "seconds": best[0],
                "cpu": best[1],
                "peak_mib": max(r[2] for r in runs),
                "bytes": size,
                **extra,
            }
        )
    )


def run(op: str, kind: str, n: int, folder: str, repeat: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", op, kind, str(n), folder, str(repeat)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if out.returncode != 0:
        raise SystemExit(f"{op} ({kind}) failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


#: The operations, in the order they run (the loads and the verification read what the saves wrote).
OPS = ("sha256", "rlarchive save", "sb3 save", "rlarchive load", "sb3 load", "rlarchive verify")
LABELS = {
    "sha256": "SHA-256 of the buffer's bytes",
    "sb3 save": "sb3 save + save_replay_buffer",
    "sb3 load": "sb3 SAC.load + load_replay_buffer",
    "rlarchive load": "rlarchive load (verifies digests)",
    "rlarchive verify": "rlarchive open + verify",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vector", type=int, default=1_000_000, help="transitions of the 17-float buffer")
    ap.add_argument("--image", type=int, default=100_000, help="transitions of the 84x84x4 uint8 buffer (0: skip)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each operation in its process; the best is reported")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        op, kind, n, folder, repeat = args.child
        child(op, kind, int(n), folder, int(repeat))
        return
    bench_dir = os.environ.get("BENCH_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    cases = [("vector", args.vector), ("image", args.image)]
    print(
        f"replay buffers: one process per operation, {args.repeat} run(s) each; seconds: the best run and the process's first;"
    )
    print("peak = VmHWM above the process size before a run (the highest of the runs)")
    for kind, n in cases:
        if n <= 0:
            continue
        with tempfile.TemporaryDirectory(dir=bench_dir) as d:
            r = {op: run(op, kind, n, d, args.repeat) for op in OPS}
            ra_size = os.path.getsize(os.path.join(d, f"{kind}.rlarchive"))
            sb_size = os.path.getsize(os.path.join(d, f"{kind}.zip")) + os.path.getsize(os.path.join(d, f"{kind}.pkl"))
        shape = (
            f"{OBS_DIM} float32" if kind == "vector" else "x".join(map(str, IMAGE)) + " uint8, optimize_memory_usage"
        )
        nbytes = r["sha256"]["bytes"]
        print(
            f"\n{kind}: {n:,} transitions of {shape}; buffer {nbytes / 1e6:.0f} MB; "
            f"rlarchive {ra_size / 1e6:.0f} MB, SB3 zip + pickle {sb_size / 1e6:.0f} MB"
        )
        print(f"  {'operation':36} {'best s':>8} {'its CPU s':>9} {'first s':>8} {'GB/s':>6} {'peak MiB':>9}")
        for op, f in r.items():
            print(
                f"  {LABELS.get(op, op):36} {f['seconds']:8.3f} {f['cpu']:9.3f} {f['first']:8.3f} {nbytes / 1e9 / f['seconds']:6.2f} {f['peak_mib']:9.1f}"
            )
        sha = r["sha256"]["seconds"]
        save, load = r["rlarchive save"], r["rlarchive load"]
        print(
            f"  ratios (best runs; two cores free: SHA-256 on one core / on two = {r['sha256']['two_cores']:.2f}, 2.0 on an idle machine)"
        )
        first = save["first"]
        lines = [
            ("rlarchive save / SHA-256 floor", save["seconds"] / sha, "target <= 1.25"),
            (
                "  its CPU time / the SHA-256's",
                save["cpu"] / r["sha256"]["cpu"],
                "SHA-256 + CRC-32 + copy into the file, on two threads",
            ),
            ("rlarchive save / SB3 save + save_replay_buffer", save["seconds"] / r["sb3 save"]["seconds"], ""),
            ("rlarchive load / SB3 load + load_replay_buffer", load["seconds"] / r["sb3 load"]["seconds"], ""),
            ("rlarchive load / SHA-256 floor", load["seconds"] / sha, "the load verifies every digest"),
            ("rlarchive verify / SHA-256 floor", r["rlarchive verify"]["seconds"] / sha, "target <= 1.1"),
            (
                "first save of a process / SHA-256 floor",
                first / sha,
                f"+{first - save['seconds']:.3f} s paid once per process",
            ),
        ]
        for label, ratio, note in lines:
            print(f"    {label + ':':48} {ratio:6.2f}x" + (f"  ({note})" if note else ""))


if __name__ == "__main__":
    main()
