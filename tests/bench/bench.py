#!/usr/bin/env python3
"""Speed of rlarchive against the alternatives, measured in one run and reported as ratios.

    make bench                      # 100M float32 parameters (400 MB)
    python tests/bench/bench.py --mb 100

Every figure is the best of --repeat runs (page cache warm), so it measures the
code, not the disk. Nothing here asserts a speed: it prints. The JavaScript
reader (reader-js/bench/bench.mjs, when `node` is on the PATH) opens, verifies
and materialises the same archive file in the same run, with the runtime's
built-in CRC-32 and SHA-256 and with the package's JavaScript ones.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import zipfile
import zlib

import numpy as np

import rlarchive

JS_BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "reader-js", "bench", "bench.mjs")


def js_bench(path: str, repeat: int) -> tuple[dict | None, str]:
    """The JavaScript reader's figures on ``path`` (bench.mjs --json), or None and the reason."""
    node = shutil.which("node")
    if node is None:
        return None, "node is not on the PATH"
    try:
        out = subprocess.run(
            [node, JS_BENCH, path, "--repeat", str(repeat), "--json"],
            capture_output=True,
            text=True,
            timeout=1800,
            check=True,
        )
        return json.loads(out.stdout), ""
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        detail = getattr(e, "stderr", None) or str(e)
        return None, detail.strip().splitlines()[-1] if detail.strip() else type(e).__name__


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def two_threads(blob) -> None:
    """The SHA-256 of each half of ``blob``, on two threads at once: the time of one half when both cores are free."""
    half = len(blob) // 2
    t = threading.Thread(target=lambda: hashlib.sha256(blob[:half]).digest())
    t.start()
    hashlib.sha256(blob[half:]).digest()
    t.join()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=int, default=400, help="size of the policy in MB (float32)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n = args.mb * 1024 * 1024 // 4
    rng = np.random.default_rng(0)
    # a policy of 40 layers, like a large MLP
    sizes = [n // 40] * 39 + [n - 39 * (n // 40)]
    policy = {f"layer{i}.weight": rng.standard_normal(s, dtype=np.float32) for i, s in enumerate(sizes)}
    nbytes = sum(a.nbytes for a in policy.values())
    gb = nbytes / 1e9
    results: dict[str, float] = {}
    # tmpfs by default: the figures then measure the code, not the disk's writeback
    bench_dir = os.environ.get("BENCH_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    with tempfile.TemporaryDirectory(dir=bench_dir) as d:
        ra, st, sb = os.path.join(d, "a.rlarchive"), os.path.join(d, "a.safetensors"), os.path.join(d, "sb3.zip")

        # baselines: page-cache read bandwidth and SHA-256
        raw = os.path.join(d, "raw.bin")
        with open(raw, "wb") as f:
            for a in policy.values():
                f.write(a.data)

        def read_raw():
            with open(raw, "rb") as f:
                while f.readinto(buf):
                    pass

        buf = bytearray(64 << 20)
        results["page-cache read"] = best(read_raw, args.repeat)
        blob = np.concatenate([a.view(np.uint8) for a in policy.values()])
        results["sha256"] = best(lambda b=blob: hashlib.sha256(b).digest(), args.repeat)
        results["crc32"] = best(lambda b=blob: zlib.crc32(b), args.repeat)
        results["sha256, two halves on two threads"] = best(lambda b=blob: two_threads(b), args.repeat)
        del blob

        # safetensors
        from safetensors import safe_open
        from safetensors.numpy import save_file

        results["safetensors save"] = best(lambda: save_file(policy, st), args.repeat)

        def st_open():
            with safe_open(st, framework="np") as f:
                f.keys()

        results["safetensors open (lazy)"] = best(st_open, args.repeat)

        def st_load():
            with safe_open(st, framework="np") as f:
                for k in f.keys():
                    f.get_tensor(k)

        results["safetensors load all"] = best(st_load, args.repeat)

        # rlarchive
        results["rlarchive save"] = best(lambda: rlarchive.save(ra, {"gamma": 0.99}, {"policy": policy}), args.repeat)

        def ra_open_map():
            with rlarchive.open(ra, spaces="neutral") as ar:
                ar.tensors("policy")

        results["rlarchive open + map all tensors"] = best(ra_open_map, args.repeat)

        def ra_materialise():
            with rlarchive.open(ra, spaces="neutral") as ar:
                for v in ar.tensors("policy").values():
                    np.array(v, copy=True)

        results["rlarchive materialise all"] = best(ra_materialise, args.repeat)

        def ra_verify():
            with rlarchive.open(ra, spaces="neutral") as ar:
                ar.verify()

        results["rlarchive verify (CRC-32 + SHA-256)"] = best(ra_verify, args.repeat)

        # the JavaScript reader on the same file
        js, js_skipped = js_bench(ra, args.repeat)

        # an SB3-style zip: torch.save of the state dict inside a deflated zip
        try:
            import torch

            tpolicy = {k: torch.from_numpy(v) for k, v in policy.items()}

            def sb3_save():
                with zipfile.ZipFile(sb, "w", compression=zipfile.ZIP_DEFLATED) as z:
                    with z.open("policy.pth", "w", force_zip64=True) as f:
                        torch.save(tpolicy, f)

            def sb3_load():
                with zipfile.ZipFile(sb) as z:
                    torch.load(io.BytesIO(z.read("policy.pth")), weights_only=True)

            results["sb3-style zip save"] = best(sb3_save, 1)
            results["sb3-style zip load"] = best(sb3_load, 1)
        except ImportError:
            pass

    # saving to a real file system as well: there the disk's writeback, not the CPU, sets the pace
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DISK_DIR", os.getcwd())) as d:
        results["safetensors save (disk)"] = best(
            lambda: save_file(policy, os.path.join(d, "a.safetensors")), args.repeat
        )
        results["rlarchive save (disk)"] = best(
            lambda: rlarchive.save(os.path.join(d, "a.rlarchive"), {}, {"policy": policy}), args.repeat
        )

    print(f"policy: {len(policy)} tensors, {nbytes / 1e6:.0f} MB float32; best of {args.repeat} (SB3-style: 1) run(s)")
    print(f"{'operation':40} {'seconds':>10} {'GB/s':>8}")
    for k, t in results.items():
        print(f"{k:40} {t:10.4f} {gb / t:8.2f}")
    r = results
    print("\nratios (in this run)")
    print(
        f"  two cores free (SHA-256 on one core / on two):      {r['sha256'] / r['sha256, two halves on two threads']:.2f}x  (2.0 on an idle machine; below, other processes hold a core)"
    )
    print(
        f"  rlarchive save / safetensors save (tmpfs):          {r['rlarchive save'] / r['safetensors save']:.2f}x  (target <= 1.5; SHA-256 alone is {r['sha256'] / r['safetensors save']:.2f}x)"
    )
    print(
        f"  rlarchive save / SHA-256 alone (tmpfs):             {r['rlarchive save'] / r['sha256']:.2f}x  (target <= 1.25: CRC-32, SHA-256 and writing overlap; CRC-32 alone is {r['crc32'] / r['sha256']:.2f}x)"
    )
    print(
        f"  rlarchive save / safetensors save (disk):           {r['rlarchive save (disk)'] / r['safetensors save (disk)']:.2f}x  (target <= 1.5)"
    )
    print(
        f"  rlarchive open+map / safetensors lazy open:         {r['rlarchive open + map all tensors'] / r['safetensors open (lazy)']:.2f}x  ({r['rlarchive open + map all tensors'] * 1e3:.2f} ms)"
    )
    print(
        f"  rlarchive materialise / page-cache read:            {r['rlarchive materialise all'] / r['page-cache read']:.2f}x  (1.0 = read bandwidth)"
    )
    print(
        f"  rlarchive materialise / safetensors load all:       {r['rlarchive materialise all'] / r['safetensors load all']:.2f}x"
    )
    print(
        f"  rlarchive verify / SHA-256 alone:                   {r['rlarchive verify (CRC-32 + SHA-256)'] / r['sha256']:.2f}x  (target <= 1.1: CRC-32 beside SHA-256)"
    )
    if "sb3-style zip load" in r:
        print(
            f"  sb3-style zip load / rlarchive materialise:         {r['sb3-style zip load'] / r['rlarchive materialise all']:.2f}x"
        )
        print(
            f"  sb3-style zip save / rlarchive save:                {r['sb3-style zip save'] / r['rlarchive save']:.2f}x"
        )

    print("\nJavaScript reader (reader-js) on the same file, against the Python reader in this run")
    if js is None:
        print(f"  skipped: {js_skipped}")
        return
    python_figures = {
        "open": r["rlarchive open + map all tensors"],
        "verify": r["rlarchive verify (CRC-32 + SHA-256)"],
        "materialise": r["rlarchive materialise all"],
    }
    print(
        f"  Node {js['node']}; best of {js['repeat']}; CRC-32/SHA-256 alone over {js['hash_sample_bytes'] / 1e6:.0f} MB"
    )
    for mode, m in js["modes"].items():
        print(
            f"  {mode} digests (CRC-32: {m['crc32']}; SHA-256: {m['sha256']['oneShot']}, incremental {m['sha256']['incremental']})"
        )
        for op, t in m["seconds"].items():
            size = js["hash_sample_bytes"] if op.endswith("alone") else js["file_bytes"]
            rate = "" if op == "open" else f"{size / 1e9 / t:8.2f} GB/s"  # opening reads a few records, not the file
            ratio = f"   JS/Python {t / python_figures[op]:.2f}x" if op in python_figures else ""
            print(f"    {op:14} {t:10.4f} s {rate:>13}{ratio}")
    fast, slow = js["modes"].get("built-in"), js["modes"].get("javascript")
    if fast and slow:
        print(
            f"  verify, JavaScript digests / built-in digests:      {slow['seconds']['verify'] / fast['seconds']['verify']:.2f}x"
        )
        print(
            f"  CRC-32 alone, JavaScript / node:zlib:               {slow['seconds']['crc32 alone'] / fast['seconds']['crc32 alone']:.2f}x"
        )
        print(
            f"  SHA-256 alone, JavaScript / built-in:               {slow['seconds']['sha256 alone'] / fast['seconds']['sha256 alone']:.2f}x"
        )


if __name__ == "__main__":
    main()
