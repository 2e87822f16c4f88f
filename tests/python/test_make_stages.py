"""tools/test_stages.py, which runs the stages of make test: a banner per stage, every stage run even after one
fails, one summary counting the tests of each stage from its JUnit report and saying why tests were skipped,
and an exit status that is non-zero when any stage failed."""

import os
import subprocess
import sys
import textwrap

import pytest
from suite import ROOT

RUNNER = os.path.join(ROOT, "tools", "test_stages.py")

# A stand-in for make: `fake-make --no-print-directory TARGET NO_SETUP=1 REPORTS=DIR` writes the JUnit
# report and the exit status that TARGET names.
FAKE_MAKE = r"""
import os, sys
args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
target = [a for a in sys.argv[1:] if not a.startswith("-") and "=" not in a][0]
assert args["NO_SETUP"] == "1"
print(f"{target} runs; stages of this run: {os.environ['RLARCHIVE_STAGES']}; niceness {os.nice(0)}", flush=True)
cases = {
    "passing": '<testcase name="a"/><testcase name="b"/><testcase name="c"><skipped message="Skipped: no chromium"/></testcase>',
    "failing": '<testcase name="a"/><testcase name="b"><failure message="boom"/></testcase>',
}
if target in cases:
    with open(os.path.join(args["REPORTS"], "r.xml"), "w") as f:
        f.write(f"<testsuites><testsuite>{cases[target]}</testsuite></testsuites>")
sys.exit({"passing": 0, "failing": 1, "crashing": 2, "linting": 0}[target])
"""


def _run(tmp_path, *groups):
    fake = tmp_path / "fake_make.py"
    fake.write_text(textwrap.dedent(FAKE_MAKE))
    return subprocess.run(
        [sys.executable, RUNNER, "--make", f"{sys.executable} {fake}", *groups],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _summary(stdout: str) -> list:
    return stdout.split("==== summary", 1)[1].splitlines()


def test_every_stage_runs_and_the_summary_counts_each_from_its_report(tmp_path):
    r = _run(tmp_path, "passing", "failing", "crashing", "linting")
    assert r.returncode == 1, r.stdout + r.stderr
    for target in ("passing", "failing", "crashing", "linting"):
        assert f"==== {target}: started" in r.stdout
        assert f"{target} runs; stages of this run: passing,failing,crashing,linting;" in r.stdout
    lines = _summary(r.stdout)
    row = {line.split()[0]: line for line in lines if line.startswith("  ") and line.split()}
    assert "ok: 2 passed, 0 failed, 1 skipped" in row["passing"]
    assert "FAILED (exit status 1): 1 passed, 1 failed, 0 skipped" in row["failing"]
    assert "FAILED (exit status 2): no test count" in row["crashing"]
    assert "ok: no test count" in row["linting"]
    assert "    passing: 1 x no chromium" in lines
    assert "  stages that failed: failing, crashing" in lines
    # the crash counts as one failure: the closing line never says 0 failed when the run failed
    assert lines[-1] == "total: 3 passed, 2 failed, 1 skipped"


def test_a_run_whose_stages_all_pass_exits_0(tmp_path):
    r = _run(tmp_path, "passing", "linting")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _summary(r.stdout)[-1] == "total: 2 passed, 0 failed, 1 skipped"


def test_stages_joined_by_plus_run_together_and_each_output_is_shown(tmp_path):
    r = _run(tmp_path, "passing+failing", "linting")
    assert r.returncode == 1
    out = r.stdout
    assert "==== passing and failing: started (at the same time)" in out
    assert out.index("passing runs;") < out.index("==== passing: ok") < out.index("==== failing: its output")
    assert out.index("==== failing: its output") < out.index("failing runs;") < out.index("==== failing: FAILED")
    assert out.index("==== failing: FAILED") < out.index("==== linting: started")
    assert _summary(out)[-1] == "total: 3 passed, 1 failed, 1 skipped"


def test_a_stage_written_with_a_tilde_runs_at_a_lower_priority_beside_the_others(tmp_path):
    import shutil

    if shutil.which("nice") is None or not hasattr(os, "nice"):
        pytest.skip("needs nice(1)")
    own = os.nice(0)
    r = _run(tmp_path, "passing+~linting")
    assert r.returncode == 0, r.stdout
    assert "==== passing and linting: started (at the same time)" in r.stdout
    assert f"passing runs; stages of this run: passing,linting; niceness {own}" in r.stdout
    assert f"linting runs; stages of this run: passing,linting; niceness {min(own + 10, 19)}" in r.stdout
    assert "  linting  ok: no test count in" in r.stdout


@pytest.mark.slow
def test_a_test_that_does_what_a_stage_does_is_skipped_when_that_stage_runs():
    node = "tests/python/test_vectors.py::test_vectors_are_reproducible_byte_for_byte"
    env = dict(os.environ, RLARCHIVE_STAGES="lint,generate-check,docs")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", node],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0 and "1 skipped" in r.stdout, r.stdout[-2000:]
    assert "make test runs it as its stage generate-check" in r.stdout
