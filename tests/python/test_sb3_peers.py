"""SB3's and sb3-contrib's own persistence tests through rlarchive.sb3.use_archives(): a fast subset, and the exclusions.

``make peers`` runs them all (``tests/peers/run.py``); here a few quick ones,
one per kind of persistence call, when ``make peers-fetch`` has put the
peer tests in ``.peers/`` (skipped otherwise, saying so).
"""

import json
import os
import subprocess
import sys

import pytest
from suite import ROOT

PEERS = os.path.join(ROOT, ".peers")
RUN = os.path.join(ROOT, "tests", "peers", "run.py")


def test_the_excluded_peer_tests_are_the_annex_list():
    """Every excluded peer test is listed with its reason in Annex B.15, and only those."""
    with open(os.path.join(ROOT, "tests", "peers", "excluded.json"), encoding="utf-8") as f:
        excluded = json.load(f)["tests"]
    with open(os.path.join(ROOT, "spec", "annex-b-stable-baselines.md"), encoding="utf-8") as f:
        annex = f.read().split("## B.15")[1]
    listed = [line.split("`")[1] for line in annex.splitlines() if line.startswith("| `") and "::" in line]
    assert sorted(listed) == sorted(excluded)
    for node, why in excluded.items():
        assert why.strip() and f"| `{node}` | {why} |" in annex


@pytest.mark.skipif(not os.path.isdir(PEERS), reason="no peer tests in .peers/ (make peers-fetch fetches them)")
def test_fast_peer_subset_passes_through_the_switch(tmp_path):
    """A few of SB3's and sb3-contrib's own save/load tests pass with every call routed through archives."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    done = subprocess.run(
        [sys.executable, RUN, "--mode", "archives", "--subset", "fast", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert (
        last.startswith("peers archives:") and " 0 failed" in last and not last.startswith("peers archives: 0 passed")
    )
