"""The package ships py.typed: mypy passes on it with the configuration in python/pyproject.toml."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT


def test_mypy_passes():
    pytest.importorskip("mypy")
    python = os.path.join(ROOT, "python")
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", os.path.join(python, "pyproject.toml"), os.path.join(python, "rlarchive")],
        capture_output=True,
        text=True,
        cwd=python,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "Success" in r.stdout
