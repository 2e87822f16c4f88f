#!/usr/bin/env python3
"""Saving, checkpointing and loading a SAC model with its replay buffer: rlarchive against SB3's pickles, in one run.

    make bench                                       # part of it
    python tests/bench/bench_replay_buffer.py --quick
    python tests/bench/bench_replay_buffer.py --vector 1000000 --image 20000 --rounds 5

Two buffers, filled with random data directly (no training), each in a
process of its own that builds the model once:
  vector: SAC on 17 float32 observations and 6 actions (HalfCheetah-sized),
  image:  SAC on 84x84x4 uint8 observations, optimize_memory_usage=True
          (20,000 transitions: 565 MB).
The operations run in interleaved rounds (benchkit): each round runs every
save in a rotated order, then every load; each save writes a new file (the removal of
the one before is timed with it, alike for every save and the floor).
Figures are medians over the rounds; a ratio is the median of the rounds'
own ratios, with its lowest and highest. CPU time is the process's, all
threads. Peak memory is VmHWM above the process size before the operation,
the highest of the rounds. The checkpoint figures compare what a training
loop waits for: SB3's ``model.save`` + ``save_replay_buffer``, against a
checkpoint of ``rlarchive.sb3.CheckpointCallback`` with the replay buffer
(``callbacks.write_checkpoint(..., background=True)``, the callback's
default then: the model, the run state and the buffer; the call returns once
the snapshot is taken; the archive is written meanwhile, and its whole CPU
time, until it appears, is counted). The floor is what any save of the
buffer's bytes into an archive computes, the cheapest way measured (as in
bench.py): their SHA-256, CRC-32 and write to a new file, in one pass on one
thread; floor / SB3 save is the least that rlarchive save / SB3 save can be.
Nothing is asserted: it prints.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchkit  # noqa: E402

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

    kw = {"device": "cpu", "seed": 0, "buffer_size": n}
    if kind == "image":
        kw.update(optimize_memory_usage=True, replay_buffer_kwargs={"handle_timeout_termination": False})
    model = SAC("CnnPolicy" if kind == "image" else "MlpPolicy", Env(), **kw)
    buf = model.replay_buffer
    rng = np.random.default_rng(0)
    block = rng.integers(0, 256, 1 << 24, dtype=np.uint8)  # random bytes, repeated: as costly to hash as any
    for arr in _buffer_arrays(buf):
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


def _operations(model, buf, folder: str) -> tuple[dict, dict]:
    """(the saves, the loads): name -> function; each save writes a new file."""
    from stable_baselines3 import SAC

    import rlarchive
    import rlarchive.sb3 as ra_sb3
    from rlarchive.checksums import ONE_PASS_BYTES
    from rlarchive.crc32 import crc32
    from rlarchive.sb3 import callbacks

    ra, sb, pkl, raw, bg = (
        os.path.join(folder, n) for n in ("a.rlarchive", "a.zip", "a.pkl", "raw.bin", "b.rlarchive")
    )
    views = [memoryview(a).cast("B") for a in _buffer_arrays(buf)]

    def fresh(*paths):
        for p in paths:
            if os.path.exists(p):
                os.unlink(p)

    def sha():
        h = hashlib.sha256()
        for v in views:
            h.update(v)

    def save_floor():
        """SHA-256, CRC-32 and write of each piece in turn, on this thread, to a new file, fsynced (see bench.py)."""
        fresh(raw)
        h, crc, fd, pos = hashlib.sha256(), 0, os.open(raw, os.O_WRONLY | os.O_CREAT, 0o644), 0
        try:
            for v in views:
                for i in range(0, len(v), ONE_PASS_BYTES):
                    piece = v[i : i + ONE_PASS_BYTES]
                    h.update(piece)
                    crc = crc32(piece, crc)
                    pos += os.pwrite(fd, piece, pos)
            os.fsync(fd)
        finally:
            os.close(fd)

    def sb3_save():
        fresh(sb, pkl)
        model.save(sb)
        model.save_replay_buffer(pkl)

    def ra_save():
        fresh(ra)
        ra_sb3.save(model, ra, replay_buffer=True)

    def ra_checkpoint():
        fresh(bg)
        cpu, wall = time.process_time(), time.perf_counter()
        handle = callbacks.write_checkpoint(model, bg, replay_buffer=True, background=True)
        stall = time.perf_counter() - wall
        handle.result()
        return {"stall": stall, "appears": time.perf_counter() - wall, "cpu_total": time.process_time() - cpu}

    def sb3_load():
        loaded = SAC.load(sb, device="cpu")
        loaded.load_replay_buffer(pkl)

    def ra_load():
        ra_sb3.load(ra, device="cpu")

    def ra_verify():
        with rlarchive.open(ra, spaces="neutral") as ar:
            ar.verify()

    saves = {
        "sha256": sha,
        "floor": save_floor,
        "sb3 save": sb3_save,
        "rlarchive save": ra_save,
        "rlarchive checkpoint": ra_checkpoint,
    }
    loads = {
        "sb3 load": sb3_load,
        "rlarchive load": ra_load,
        "rlarchive verify": ra_verify,
    }
    return saves, loads


def child(kind: str, n: int, folder: str, rounds: int) -> None:
    """Every operation on one buffer, in interleaved rounds; prints the samples as JSON."""
    import gc

    model, buf = _build(kind, n)
    saves, loads = _operations(model, buf, folder)
    peaks: dict = {}
    state = {}

    def before(name):
        gc.collect()
        if "name" in state:
            peaks[state["name"]] = max(peaks.get(state["name"], 0), _status_kib("VmHWM") - state["rss"])
        _reset_peak()
        state.update(name=name, rss=_status_kib("VmRSS"))

    results = benchkit.Rounds()
    for r in range(rounds + 1):  # a round of the saves, then one of the loads (they read what the saves wrote)
        part = benchkit.Rounds()
        part.run({**saves}, rounds=1, warmup=0, before=before)
        part.run({**loads}, rounds=1, warmup=0, before=before)
        before("end")
        if r:  # the first round warms up
            for name, samples in part.samples.items():
                results.samples.setdefault(name, []).extend(samples)
        saves = dict(list(saves.items())[1:] + list(saves.items())[:1])  # rotate the order
        loads = dict(list(loads.items())[1:] + list(loads.items())[:1])
    nbytes = sum(a.nbytes for a in _buffer_arrays(buf))
    print(json.dumps({"bytes": nbytes, "samples": results.samples, "peak_kib": peaks}))


def run(kind: str, n: int, folder: str, rounds: int) -> benchkit.Rounds:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", kind, str(n), folder, str(rounds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=1800)
    finally:
        if proc.poll() is None:  # stopped meanwhile: the child goes too, before its folder
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{err[-3000:]}")
    got = json.loads(out.strip().splitlines()[-1])
    r = benchkit.Rounds()
    r.samples = {k: [tuple(s) for s in v] for k, v in got["samples"].items()}
    r.bytes, r.peaks = got["bytes"], got["peak_kib"]  # type: ignore[attr-defined]
    return r


LABELS = {
    "sha256": "SHA-256 of the buffer's bytes",
    "floor": "floor: SHA-256 + CRC-32 + write, one pass",
    "sb3 save": "SB3 save + save_replay_buffer",
    "rlarchive save": "rlarchive save",
    "rlarchive checkpoint": "rlarchive CheckpointCallback (background)",
    "sb3 load": "SB3 SAC.load + load_replay_buffer",
    "rlarchive load": "rlarchive load (buffer mapped, not hashed)",
    "rlarchive verify": "rlarchive open + verify (every digest)",
}


def report(kind: str, n: int, r: benchkit.Rounds, rounds: int) -> None:
    shape = f"{OBS_DIM} float32" if kind == "vector" else "x".join(map(str, IMAGE)) + " uint8, optimize_memory_usage"
    print(f"\n{kind}: {n:,} transitions of {shape}; buffer {r.bytes / 1e6:.0f} MB; {rounds} rounds")  # type: ignore[attr-defined]
    print(f"  {'operation (median of the rounds)':44} {'wall s':>8} {'CPU s':>8} {'peak MiB':>9}")
    for op, label in LABELS.items():
        peak = r.peaks.get(op, 0) / 1024  # type: ignore[attr-defined]
        print(f"  {label:44} {r.median(op):8.3f} {r.median(op, 'cpu'):8.3f} {peak:9.1f}")
    stall = sorted(r.extras("rlarchive checkpoint", "stall"))[len(r.samples["rlarchive checkpoint"]) // 2]
    appears = sorted(r.extras("rlarchive checkpoint", "appears"))[len(r.samples["rlarchive checkpoint"]) // 2]
    print(f"    background save: training waits {stall:.3f} s; the archive appears after {appears:.3f} s")
    print("  ratios: median of the rounds [lowest-highest]")
    lines = [
        ("checkpoint stall / SB3 save (wall)", r.ratio("rlarchive checkpoint", "sb3 save", a_key="stall"), "goal <= 1"),
        (
            "checkpoint CPU, all of it / SB3 save's",
            r.ratio("rlarchive checkpoint", "sb3 save", "cpu", a_key="cpu_total"),
            "snapshot + background write",
        ),
        ("rlarchive save / SB3 save (CPU)", r.ratio("rlarchive save", "sb3 save", "cpu"), "goal <= 2"),
        (
            "floor / SB3 save (CPU)",
            r.ratio("floor", "sb3 save", "cpu"),
            "the least the line above can be: the buffer's bytes alone",
        ),
        ("rlarchive save / SB3 save (wall)", r.ratio("rlarchive save", "sb3 save"), ""),
        ("rlarchive save / SHA-256 (CPU)", r.ratio("rlarchive save", "sha256", "cpu"), ""),
        ("floor / SHA-256 (CPU)", r.ratio("floor", "sha256", "cpu"), ""),
        ("rlarchive save / floor (CPU)", r.ratio("rlarchive save", "floor", "cpu"), "1.0 = the floor"),
        ("rlarchive verify / SHA-256 (CPU)", r.ratio("rlarchive verify", "sha256", "cpu"), ""),
        ("rlarchive load / SB3 load (wall)", r.ratio("rlarchive load", "sb3 load"), ""),
    ]
    for label, ratio, note in lines:
        print(f"    {label + ':':44} {benchkit.ratio_text(ratio)}" + (f"  ({note})" if note else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vector", type=int, default=1_000_000, help="transitions of the 17-float buffer (0: skip)")
    ap.add_argument("--image", type=int, default=20_000, help="transitions of the 84x84x4 uint8 buffer (0: skip)")
    ap.add_argument("--rounds", type=int, default=4, help="rounds counted (after one that warms up)")
    ap.add_argument("--quick", action="store_true", help="small buffers (200,000 and 5,000), 3 rounds")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, n, folder, rounds = args.child
        child(kind, int(n), folder, int(rounds))
        return
    if args.quick:
        args.vector, args.image, args.rounds = min(args.vector, 200_000), min(args.image, 5_000), 3
    from rlarchive import crc32

    print(f"replay buffers; load average {benchkit.load_average()}; CRC-32: {crc32.IMPLEMENTATION}")
    for kind, n in (("vector", args.vector), ("image", args.image)):
        if n > 0:
            with benchkit.scratch(kind) as d:
                report(kind, n, run(kind, n, d, args.rounds), args.rounds)
    print(f"\nload average at the end: {benchkit.load_average()}")


if __name__ == "__main__":
    main()
