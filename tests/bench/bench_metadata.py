#!/usr/bin/env python3
"""Rewriting an archive's metadata (``rlarchive metadata --set``) against copying the file with ``cp``.

    python tests/bench/bench_metadata.py --mib 1024 --repeat 3

Writes one archive of about ``--mib`` MiB (one float32 tensor), then, from a
warm page cache, times ``cp`` of the file against
``rlarchive.edit.update_metadata`` (copy every member's bytes, CRC-32 and
SHA-256 of each compared with the manifest, new manifest, fsync, rename) and
``cp`` followed by ``sync`` of the copy (the rewrite syncs its file). Prints
the best time of each and the ratios. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

import rlarchive
from rlarchive.edit import update_metadata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import best  # noqa: E402  (the timing helper every bench shares)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="folder for the files (default: a temporary folder)")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=a.dir) as d:
        src = os.path.join(d, "model.rlarchive")
        n = a.mib * (1 << 20) // 4
        rlarchive.save(
            src, {"gamma": 0.99}, {"policy": {"w": np.ones(n, np.float32)}}, metadata={"env_id": "CartPole-v1"}
        )
        size = os.path.getsize(src)
        with open(src, "rb") as f:  # warm the page cache
            while f.read(1 << 24):
                pass
        copy = os.path.join(d, "copy.rlarchive")
        t_cp = best(lambda: subprocess.run(["cp", src, copy], check=True), a.repeat)

        def cp_sync() -> None:
            subprocess.run(["cp", src, copy], check=True)
            fd = os.open(copy, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)

        t_cp_sync = best(cp_sync, a.repeat)
        counter = iter(range(10**9))
        t_rw = best(lambda: update_metadata(src, {"seed": str(next(counter))}), a.repeat)
        gbs = lambda t: size / t / 1e9  # noqa: E731
        print(f"archive: {size / (1 << 20):.0f} MiB")
        print(f"cp:                       {t_cp:7.3f} s  {gbs(t_cp):5.2f} GB/s")
        print(f"cp + fsync:               {t_cp_sync:7.3f} s  {gbs(t_cp_sync):5.2f} GB/s")
        print(f"rlarchive metadata --set: {t_rw:7.3f} s  {gbs(t_rw):5.2f} GB/s")
        print(f"ratio rewrite / cp: {t_rw / t_cp:.2f}; rewrite / (cp + fsync): {t_rw / t_cp_sync:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
