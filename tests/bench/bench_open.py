#!/usr/bin/env python3
"""Benchmark: opening an archive of many small tensors, against safetensors' ``safe_open``.

One group of ``--tensors`` float32 tensors of 4 elements each (as a replay
buffer's or a large model's many small arrays make headers long), saved by
``rlarchive.save`` and, the same arrays, by ``safetensors.numpy.save_file``.
Timed, each the best of ``--rounds`` interleaved rounds, in processor time
(other work on the machine weighs less than in wall time; the wall time of the
same calls is printed too):

- ``rlarchive.open`` and every tensor's info (``tensor_info``: dtype, shape,
  offset), the strict checks of the ZIP profile, the manifest, data.json and
  the safetensors header (spec §11.1 steps 1-9) included;
- ``safetensors.safe_open`` and, for every tensor, ``get_slice`` with its
  shape and dtype;
- the JavaScript reader's ``open`` and ``tensorInfo`` (Node, the best of five
  in one process after five to warm its compiler), when ``node`` is on the PATH.

Then opening over HTTP, from a local server, and reading one 1 KiB tensor, in
both readers (spec §11.4): the requests, the bytes sent and the best wall time
of ``--rounds``, for an archive of one tensor member (16 MiB, the 1 KiB tensor
between two large ones) and for one with an optimizer's member too.

Prints the times and their ratios in this run; asserts nothing about speed.
``--quick``: 2,000 tensors, 3 rounds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))  # remote_servers: the tests' local HTTP server

JS = """
import { open } from %s;
const [path, rounds] = [process.argv[2], Number(process.argv[3])];
let cpu = Infinity, wall = Infinity;
for (let i = 0; i < rounds + 5; i++) {  // five first to warm the compiler
  const c = process.cpuUsage(), t = performance.now();
  const ar = await open(path);
  for (const info of ar.tensorInfo('g')) if (info.shape.length !== 1) throw new Error(info.name);
  await ar.close();
  const u = process.cpuUsage(c);
  if (i >= 5) [cpu, wall] = [Math.min(cpu, (u.user + u.system) / 1000), Math.min(wall, performance.now() - t)];
}
console.log(JSON.stringify([cpu, wall]));
"""

REMOTE_JS = """
import { open } from %s;
const [url, rounds] = [process.argv[2], Number(process.argv[3])];
let wall = Infinity;
for (let i = 0; i < rounds; i++) {
  const t = performance.now();
  const ar = await open(url);
  const x = await ar.tensor('policy', 'b.bias');
  if (x.data.length !== 256) throw new Error('b.bias');
  await ar.close();
  wall = Math.min(wall, performance.now() - t);
}
console.log(JSON.stringify(wall));
"""


def timed(fn) -> tuple[float, float]:
    """(processor ms, wall ms) of one call of ``fn``."""
    c, w = time.process_time(), time.perf_counter()
    fn()
    return (time.process_time() - c) * 1000, (time.perf_counter() - w) * 1000


def remote(tmp: str, node: str | None, rounds: int) -> None:
    """Opening over HTTP and reading one 1 KiB tensor, in both readers: requests, bytes sent, best wall time."""
    import numpy as np
    from remote_servers import serve

    import rlarchive

    big = np.zeros(1 << 21, np.float32)  # 8 MiB
    policy = {"a.weight": big, "b.bias": np.arange(256, dtype=np.float32), "c.weight": big}
    layouts = {
        "one tensor member": {"policy": policy},
        "policy and optimizer": {"policy": policy, "optimizer.adam": {"m": big}},
    }
    script = os.path.join(tmp, "remote.mjs")
    with open(script, "w") as f:
        f.write(REMOTE_JS % repr("file://" + os.path.join(ROOT, "reader-js", "src", "index.js")))
    print(f"open over HTTP (a local server) and read one 1 KiB tensor, best of {rounds} rounds")
    for label, tensors in layouts.items():
        path = os.path.join(tmp, "remote.rlarchive")
        rlarchive.save(path, {"gamma": 0.99}, tensors=tensors)
        with open(path, "rb") as f:
            body = f.read()
        with serve(body) as (url, h):

            def python_open() -> None:
                with rlarchive.open(url, spaces="neutral") as ar:
                    assert ar.tensor("policy", "b.bias").shape == (256,)

            walls = [timed(python_open)[1] for _ in range(rounds)]
            rows = {"rlarchive.open + tensor": (h.requests / rounds, h.sent / rounds, min(walls))}
            if node:
                h.requests = h.sent = 0
                out = subprocess.run([node, script, url, str(rounds)], capture_output=True, text=True, check=True)
                rows["reader-js open + tensor"] = (h.requests / rounds, h.sent / rounds, float(out.stdout))
        print(f"  {label}, {len(body) / 2**20:.1f} MiB:")
        for name, (requests, sent, wall) in rows.items():
            print(f"    {name:26} {requests:4.0f} requests {sent / 1024:8.1f} KiB sent {wall:8.1f} ms wall")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tensors", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="2,000 tensors, 3 rounds")
    args = ap.parse_args()
    if args.quick:
        args.tensors, args.rounds = min(args.tensors, 2000), 3
    import numpy as np
    from safetensors import safe_open
    from safetensors.numpy import save_file

    import rlarchive

    arrays = {f"layer{i}.weight": np.full(4, i, np.float32) for i in range(args.tensors)}
    node = shutil.which("node")
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = os.path.join(tmp, "many.rlarchive"), os.path.join(tmp, "many.safetensors")
        rlarchive.save(ours, {}, tensors={"g": arrays})
        save_file(arrays, theirs)
        script = os.path.join(tmp, "open.mjs")
        with open(script, "w") as f:
            f.write(JS % repr("file://" + os.path.join(ROOT, "reader-js", "src", "index.js")))

        def rlarchive_open() -> None:
            with rlarchive.open(ours) as ar:
                for info in ar.tensor_info("g").values():
                    assert len(info.shape) == 1

        def safetensors_open() -> None:
            with safe_open(theirs, "numpy") as f:
                for name in f.keys():
                    s = f.get_slice(name)
                    assert len(s.get_shape()) == 1 and s.get_dtype() == "F32"

        runs: dict[str, list[tuple[float, float]]] = {}
        loads = []
        for fn in (rlarchive_open, safetensors_open):  # warm the page cache and the imports
            fn()
        for _ in range(args.rounds):
            loads.append(os.getloadavg()[0])
            runs.setdefault("rlarchive.open + tensor_info", []).append(timed(rlarchive_open))
            runs.setdefault("safetensors safe_open + get_slice", []).append(timed(safetensors_open))
            if node:
                out = subprocess.run([node, script, ours, "5"], capture_output=True, text=True, check=True).stdout
                cpu, wall = (float(v) for v in out.strip("[]\n").split(","))
                runs.setdefault("reader-js open + tensorInfo", []).append((cpu, wall))
        best = {k: (min(c for c, _ in v), min(w for _, w in v)) for k, v in runs.items()}
        base = best["safetensors safe_open + get_slice"][0]
        print(
            f"open and every tensor's info, {args.tensors} tensors of 4 float32, best of {args.rounds} rounds "
            f"(load average {min(loads):.1f}-{max(loads):.1f})"
        )
        for name, (cpu, wall) in best.items():
            print(f"  {name:34} {cpu:8.1f} ms CPU ({wall:8.1f} ms wall)  {cpu / base:5.2f}x safetensors")
        remote(tmp, node, args.rounds)


if __name__ == "__main__":
    main()
