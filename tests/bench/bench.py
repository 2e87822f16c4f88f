#!/usr/bin/env python3
"""Speed of rlarchive against the alternatives, measured in one run and reported as ratios.

    make bench                      # a 210 MiB float32 policy
    python tests/bench/bench.py --mb 100
    python tests/bench/bench.py --quick

The operations run in interleaved rounds (benchkit: every operation once per
round, in a rotated order; a first round warms up and is not counted), on
tmpfs, so that the figures measure the code, not the disk. Figures are
medians; a ratio is the median of the rounds' own ratios, with the lowest and
highest; CPU time is the process's (all threads). Nothing here asserts a
speed: it prints.

The floors are what any writer or verifier of these bytes must spend, done the
cheapest way measured: a save computes the SHA-256 and the CRC-32 of every byte
and writes them to a new file (fsynced), so its floor is the three in one pass
on one thread, each piece (:data:`rlarchive.checksums.ONE_PASS_BYTES`) digested
and written while it is in the core's cache; no arrangement on two threads
spends less CPU time than that (it can only spend less wall time). A
verification reads the mapped file and computes both digests, so its floor is
the two in one pass over the mapping of the same archive file. The parts of the save floor (CRC-32
alone, a write alone) are printed too. The JavaScript
reader (reader-js/bench/bench.mjs, when `node` is on the PATH) opens, verifies
and materialises the same archive file in the same run, with the runtime's
built-in CRC-32 and SHA-256 and with the package's JavaScript ones.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import mmap
import os
import shutil
import subprocess
import sys
import threading
import time
import zlib

import numpy as np

import rlarchive
from rlarchive import checksums, crc32

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchkit  # noqa: E402

#: The operations that measure the floors (see the module's doc).
SAVE_FLOOR = "floor of a save: SHA-256 + CRC-32 + write"
VERIFY_FLOOR = "floor of a verify: SHA-256 + CRC-32, mapped"
ONE_PASS = checksums.ONE_PASS_BYTES

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
    """The shortest of ``repeat`` runs of ``fn`` (bench_metadata's timing; the rounds here interleave instead)."""
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


def _policy(mb: int) -> dict:
    """A policy of 40 float32 layers (a large MLP) of ``mb`` MiB in all."""
    n = mb * 1024 * 1024 // 4
    rng = np.random.default_rng(0)
    sizes = [n // 40] * 39 + [n - 39 * (n // 40)]
    return {f"layer{i}.weight": rng.standard_normal(s, dtype=np.float32) for i, s in enumerate(sizes)}


def _operations(policy: dict, d: str) -> dict:
    """name -> function, for the interleaved rounds; every save (and floor) writes a new file, the removal of
    the one before timed with it, alike for all (safetensors' save neither digests nor fsyncs)."""
    from safetensors import safe_open
    from safetensors.numpy import save_file

    ra, st, raw = os.path.join(d, "a.rlarchive"), os.path.join(d, "a.safetensors"), os.path.join(d, "raw.bin")
    blob = np.concatenate([a.view(np.uint8) for a in policy.values()])
    views = [memoryview(a).cast("B") for a in policy.values()]
    buf = bytearray(64 << 20)

    def fresh(p):
        if os.path.exists(p):
            os.unlink(p)

    def save_floor(digest: bool = True) -> None:
        """SHA-256, CRC-32 and write of each piece in turn, on this thread, to a new file, fsynced: the
        bytes of the policy's arrays, the memory that the saves read."""
        fresh(raw)
        h, crc, at, fd = hashlib.sha256(), 0, 0, os.open(raw, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            for mv in views:
                for i in range(0, len(mv), ONE_PASS):
                    piece = mv[i : i + ONE_PASS]
                    if digest:
                        h.update(piece)
                        crc = crc32.crc32(piece, crc)
                    at += os.pwrite(fd, piece, at)
            os.fsync(fd)
        finally:
            os.close(fd)

    def verify_floor():
        """SHA-256 and CRC-32 of each piece of the mapped archive file in turn, on this thread (the file the
        verification reads: a file written just before may still be in the processor's cache)."""
        with open(ra, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            mv, h, crc = memoryview(m), hashlib.sha256(), 0
            for i in range(0, len(mv), ONE_PASS):
                piece = mv[i : i + ONE_PASS]
                h.update(piece)
                crc = crc32.crc32(piece, crc)
                piece.release()
            mv.release()

    def read_raw():
        with open(raw, "rb") as f:
            while f.readinto(buf):
                pass

    def st_open():
        with safe_open(st, framework="np") as f:
            f.keys()

    def st_load():
        with safe_open(st, framework="np") as f:
            for k in f.keys():
                f.get_tensor(k)

    def ra_open_map():
        with rlarchive.open(ra, spaces="neutral") as ar:
            ar.tensors("policy")

    def ra_materialise():
        with rlarchive.open(ra, spaces="neutral") as ar:
            for v in ar.tensors("policy").values():
                np.array(v, copy=True)

    def ra_verify():
        with rlarchive.open(ra, spaces="neutral") as ar:
            ar.verify()

    def ra_save():
        fresh(ra)
        rlarchive.save(ra, {"gamma": 0.99}, {"policy": policy})

    def st_save():
        fresh(st)
        save_file(policy, st)

    return {
        "sha256": lambda: hashlib.sha256(blob).digest(),
        "crc32 (zlib)": lambda: zlib.crc32(blob),
        f"crc32 ({crc32.IMPLEMENTATION})": lambda: crc32.crc32(blob, 0),
        "sha256, two halves on two threads": lambda: two_threads(blob),
        "write to a new file, fsynced": lambda: save_floor(digest=False),
        SAVE_FLOOR: save_floor,
        VERIFY_FLOOR: verify_floor,
        "page-cache read": read_raw,
        "safetensors save": st_save,
        "rlarchive save": ra_save,
        "safetensors open (lazy)": st_open,
        "safetensors load all": st_load,
        "rlarchive open + map all tensors": ra_open_map,
        "rlarchive open + materialise all": ra_materialise,
        "rlarchive open + verify (CRC-32 + SHA-256)": ra_verify,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=int, default=210, help="size of the policy in MiB (float32)")
    ap.add_argument("--rounds", type=int, default=4, help="interleaved rounds counted (after one that warms up)")
    ap.add_argument("--quick", action="store_true", help="a 64 MiB policy, 3 rounds")
    args = ap.parse_args()
    if args.quick:
        args.mb, args.rounds = min(args.mb, 64), 3
    policy = _policy(args.mb)
    nbytes = sum(a.nbytes for a in policy.values())
    gb = nbytes / 1e9
    print(f"load average {benchkit.load_average()}; CRC-32: {crc32.IMPLEMENTATION}")
    with benchkit.scratch("policy") as d:
        r = benchkit.Rounds()
        ops = _operations(policy, d)
        for first in ("rlarchive save", "safetensors save", SAVE_FLOOR):
            ops[first]()  # the files the reads need, before the first round
        r.run(ops, args.rounds)
        js, js_skipped = js_bench(os.path.join(d, "a.rlarchive"), args.rounds)
    print(f"policy: {len(policy)} tensors, {nbytes / 1e6:.0f} MB float32; medians of {args.rounds} interleaved rounds")
    print(f"{'operation':44} {'wall s':>9} {'CPU s':>9} {'GB/s':>7}")
    for k in r.samples:
        print(f"{k:44} {r.median(k):9.4f} {r.median(k, 'cpu'):9.4f} {gb / r.median(k):7.2f}")
    print("\nratios: median of the rounds' own [lowest-highest]")
    verify, crc = "rlarchive open + verify (CRC-32 + SHA-256)", f"crc32 ({crc32.IMPLEMENTATION})"
    lines = [
        ("two cores free (SHA-256, one core / two)", r.ratio("sha256", "sha256, two halves on two threads"), "2.0 when idle"),
        ("rlarchive save / SHA-256 (CPU)", r.ratio("rlarchive save", "sha256", "cpu"), "goal <= 1.3"),
        ("rlarchive save / SHA-256 (wall)", r.ratio("rlarchive save", "sha256"), "goal <= 1.1 with a free core"),
        ("floor of a save / SHA-256 (CPU)", r.ratio(SAVE_FLOOR, "sha256", "cpu"), "the least a save can spend"),
        ("  CRC-32 alone / SHA-256 (CPU)", r.ratio(crc, "sha256", "cpu"), "a part of it"),
        ("  write to a new file / SHA-256 (CPU)", r.ratio("write to a new file, fsynced", "sha256", "cpu"), "a part of it"),
        ("rlarchive save / floor of a save (CPU)", r.ratio("rlarchive save", SAVE_FLOOR, "cpu"), "1.0 = the floor"),
        ("rlarchive save / safetensors save (wall)", r.ratio("rlarchive save", "safetensors save"), ""),
        ("rlarchive verify / SHA-256 (CPU)", r.ratio(verify, "sha256", "cpu"), "goal <= 1.2"),
        ("rlarchive verify / SHA-256 (wall)", r.ratio(verify, "sha256"), ""),
        ("floor of a verify / SHA-256 (CPU)", r.ratio(VERIFY_FLOOR, "sha256", "cpu"), "the least a verify can spend"),
        ("rlarchive verify / floor of a verify (CPU)", r.ratio(verify, VERIFY_FLOOR, "cpu"), "1.0 = the floor"),
        (f"CRC-32 {crc32.IMPLEMENTATION} / zlib (CPU)", r.ratio(f"crc32 ({crc32.IMPLEMENTATION})", "crc32 (zlib)", "cpu"), ""),
        ("rlarchive open+map / safetensors lazy open", r.ratio("rlarchive open + map all tensors", "safetensors open (lazy)"), ""),
        ("rlarchive materialise / page-cache read", r.ratio("rlarchive open + materialise all", "page-cache read"), "1.0 = read bandwidth"),
        ("rlarchive materialise / safetensors load all", r.ratio("rlarchive open + materialise all", "safetensors load all"), ""),
    ]  # fmt: skip
    for label, ratio, note in lines:
        print(f"  {label + ':':52} {benchkit.ratio_text(ratio)}" + (f"  ({note})" if note else ""))
    print(f"load average at the end: {benchkit.load_average()}")
    python_figures = {"open": r.median("rlarchive open + map all tensors"), "verify": r.median(verify)}
    python_figures["materialise"] = r.median("rlarchive open + materialise all")

    print("\nJavaScript reader (reader-js) on the same file, against the Python reader in this run")
    if js is None:
        print(f"  skipped: {js_skipped}")
        return
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
