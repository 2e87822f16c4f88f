"""The README's Python example runs and prints what it says."""
import os
import re
import subprocess
import sys

from conftest import ROOT


def test_readme_example_runs(tmp_path):
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        code = re.search(r"```python\n(.*?)```", f.read(), re.S).group(1)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    expected = [line.split("# ")[-1].strip() for line in code.splitlines() if "print(" in line]
    assert r.stdout.splitlines() == expected
