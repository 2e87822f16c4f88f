"""Run Stable-Baselines3's and sb3-contrib's own persistence tests with pickle and through ``use_archives()``.

``make peers`` fetches the tests (``tests/peers/fetch.py``) and runs this:
each selected test file of each package, in its own pytest run with the
package's own configuration, once as SB3 ships it (``pickle``) and once with
every test inside ``rlarchive.sb3.use_archives()`` (``archives``). It prints
one line per test (its outcome each way, and for a test excluded in
``excluded.json`` why), then the counts. It exits 1 when a test that passes
with pickle does not pass through the switch and is not excluded, or when
an excluded test passes (the list is then out of date).

``--subset fast`` runs the few tests of :data:`FAST` (the normal test run's
share); ``--mode archives`` runs only through the switch (a test then counts
as passing with pickle).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

#: package folder stem -> the test files and node ids run (the persistence tests)
SELECTION = {
    "stable_baselines3": [
        "tests/test_save_load.py",
        "tests/test_her.py::test_save_load",
        "tests/test_her.py::test_save_load_replay_buffer",
        "tests/test_vec_normalize.py::test_vec_env",
    ],
    "sb3_contrib": ["tests/test_save_load.py"],
}
#: a few quick tests, one per kind of persistence call, for the normal test run
FAST = {
    "stable_baselines3": [
        "tests/test_save_load.py::test_exclude_include_saved_params[PPO]",
        "tests/test_save_load.py::test_dqn_target_update_interval",
        "tests/test_save_load.py::test_save_load_q_net[MlpPolicy-DQN]",
        "tests/test_vec_normalize.py::test_vec_env[make_env]",
    ],
    "sb3_contrib": ["tests/test_save_load.py::test_dqn_target_update_interval"],
}


def packages(peers: str) -> dict[str, str]:
    """Package stem -> its unpacked source distribution under ``peers``."""
    out = {}
    for name in sorted(os.listdir(peers)) if os.path.isdir(peers) else []:
        stem = name.rsplit("-", 1)[0]
        if stem in SELECTION and os.path.isdir(os.path.join(peers, name, "tests")):
            out[stem] = os.path.join(peers, name)
    return out


def run(folder: str, nodes: list[str], mode: str, out: str, extra: list[str]) -> dict[str, str]:
    """Run ``nodes`` of the package in ``folder``; node id -> "passed", "failed" or "skipped"."""
    xml = os.path.join(out, f"{os.path.basename(folder)}-{mode}.xml")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE, os.path.join(ROOT, "python")]))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "rlarchive_peers"]
    cmd += ["-c", os.path.join(folder, "pyproject.toml"), "--rootdir", folder, f"--rlarchive={mode}"]
    cmd += ["-m", "not expensive", f"--junitxml={xml}", f"--basetemp={os.path.join(out, 'tmp-' + mode)}", *extra]
    subprocess.run([*cmd, *nodes], cwd=folder, env=env, check=False)
    return outcomes(xml)


def outcomes(xml: str) -> dict[str, str]:
    """Node id (``tests/FILE.py::NAME``) -> outcome, from a JUnit XML report."""
    if not os.path.exists(xml):
        return {}
    found = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/") + ".py"
        node = f"{path}::{case.get('name')}"
        kinds = {child.tag for child in case}
        found[node] = "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed"
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peers", default=os.path.join(ROOT, ".peers"))
    ap.add_argument("--mode", choices=("both", "archives", "pickle"), default="both")
    ap.add_argument("--subset", choices=("all", "fast"), default="all")
    ap.add_argument("--out", help="folder for the reports (default: a temporary folder)")
    ap.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    args = ap.parse_args(argv)
    found = packages(args.peers)
    if not found:
        print(f"peers: skipped: no peer tests under {args.peers} (run make peers, which fetches them)")
        return 0
    with open(os.path.join(HERE, "excluded.json"), encoding="utf-8") as f:
        excluded = json.load(f)["tests"]
    out = args.out or tempfile.mkdtemp(prefix="rlarchive-peers-")
    os.makedirs(out, exist_ok=True)
    modes = ["pickle", "archives"] if args.mode == "both" else [args.mode]
    results: dict[str, dict[str, str]] = {m: {} for m in modes}
    for stem, folder in found.items():
        nodes = (FAST if args.subset == "fast" else SELECTION)[stem]
        for mode in modes:
            got = run(folder, nodes, mode, out, args.pytest_args)
            results[mode].update({f"{stem}/{k}": v for k, v in got.items()})
    return report(results, excluded, modes)


def report(results: dict[str, dict[str, str]], excluded: dict[str, str], modes: list[str]) -> int:
    """Print the table and the counts; 1 when a test passing with pickle fails through the switch unexcluded."""
    names = sorted(set().union(*(r.keys() for r in results.values())))
    bad = 0
    for node in names:
        pickle_ = results.get("pickle", {}).get(node, "passed" if "pickle" not in modes else "absent")
        archives = results.get("archives", {}).get(node, "-")
        why = excluded.get(node)
        flag = ""
        if "archives" in modes and pickle_ == "passed" and archives == "failed" and why is None:
            flag, bad = "  <-- fails through the switch", bad + 1
        if why is not None and archives == "passed":
            flag, bad = "  <-- excluded but passes: update excluded.json", bad + 1
        print(f"{node}: pickle {pickle_}, archives {archives}{f' (excluded: {why})' if why else ''}{flag}")
    for mode in modes:
        counts = {k: sum(1 for v in results[mode].values() if v == k) for k in ("passed", "failed", "skipped")}
        print(f"peers {mode}: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
