"""The package ships py.typed: ``mypy python/rlarchive`` passes, run from the repository's root."""
import os
import subprocess
import sys

import pytest

from suite import ROOT


def test_mypy_passes():
    pytest.importorskip("mypy")
    r = subprocess.run(
        [sys.executable, "-m", "mypy", os.path.join("python", "rlarchive")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "Success" in r.stdout
