"""A short fuzzing campaign of the restricted unpickler (tests/fuzz/unpickle_fuzz.py): 1000 cases.

Fails on any exception other than NotNeutral or LIMIT_EXCEEDED escaping
``decode``, any import, file write, process or socket during a case, memory
over the bound, or a hang. ``make fuzz`` runs the long campaign.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUZZ = os.path.join(ROOT, "tests", "fuzz")

import unpickle_fuzz  # noqa: E402

SEED = int(os.environ.get("RLARCHIVE_FUZZ_SEED", "20261122"))
CASES = 1000


@pytest.mark.slow
def test_unpickle_fuzz_smoke(capsys):
    s = unpickle_fuzz.run(CASES, SEED, progress=False)
    with capsys.disabled():
        print(f"\nunpickler fuzz smoke test, seed {SEED}:\n" + s.report())
    assert s.cases == CASES
    assert not s.failures, s.report()
    assert sum(s.outcomes.values()) == CASES
    # every outcome is reached: the campaign exercises conversions, refusals and the budget
    assert all(s.outcomes[o] > 0 for o in unpickle_fuzz.OUTCOMES), s.outcomes


def test_the_sandbox_catches_what_a_decode_must_never_do():
    """The worker's checks fire: an import, a file written, a process started, a raw exception."""
    r = subprocess.run(
        [sys.executable, os.path.join(FUZZ, "unpickle_fuzz.py"), "--self-test"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")),
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    got = {d["case"]: d for d in map(json.loads, r.stdout.splitlines())}
    assert all(d["outcome"] == "failure" for d in got.values()), got
    assert "import colorsys" in got["import"]["detail"] and "new modules ['colorsys']" in got["import"]["detail"]
    assert "for writing" in got["write"]["detail"] and "files created ['created.txt']" in got["write"]["detail"]
    assert "os.system" in got["system"]["detail"]
    assert got["raise"]["detail"].startswith("ValueError escaped")
