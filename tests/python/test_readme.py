"""Every Python example of the README runs and prints what it says."""

import os
import re
import subprocess
import sys

import pytest
from suite import ROOT

with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as _f:
    BLOCKS = re.findall(r"```python\n(.*?)```", _f.read(), re.S)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, tmp_path):
    code = BLOCKS[index]
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    expected = [line.split("# ")[-1].strip() for line in code.splitlines() if "print(" in line]
    assert r.stdout.splitlines() == expected


def test_the_readme_has_its_examples():
    assert len(BLOCKS) >= 2
