"""Every Python example of the README runs and prints what it says.

Each example runs as ``python -c`` would run it, in a folder of its own: in a fork of one process that has
imported what the examples import (NumPy, PyTorch, Stable-Baselines3, rlarchive), so that each starts from that
state without paying for the imports again; its ``__main__``, ``sys.argv``, working folder, standard streams
and exit status are its own.
"""

import json
import os
import re
import subprocess
import sys

import pytest
from suite import ROOT

with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as _f:
    BLOCKS = re.findall(r"```python\n(.*?)```", _f.read(), re.S)

#: Reads one job per line ({"code", "cwd", "out", "err"}), runs it in a fork, answers {"status"} per line.
_FORKS = r"""
import json, os, sys, traceback, types
import numpy, torch, gymnasium, stable_baselines3, rlarchive, rlarchive.sb3  # what the examples import

def run(job):
    os.chdir(job["cwd"])
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, job["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, job["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        os.dup2(os.open(path, flags, 0o600), fd)
    sys.argv = ["-c"]
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    status = 0
    try:
        exec(compile(job["code"], "<string>", "exec"), main.__dict__)
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)

for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        run(json.loads(line))
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)
"""


@pytest.fixture(scope="module")
def forks():
    """Run a README example (code, folder) -> (exit status, stdout, stderr), as ``python -c`` in that folder."""
    if not hasattr(os, "fork"):
        pytest.skip("runs each example in a fork")
    server = subprocess.Popen(
        [sys.executable, "-c", _FORKS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
    )

    def run(code, folder):
        out, err = folder / ".." / f"{folder.name}.stdout", folder / ".." / f"{folder.name}.stderr"
        server.stdin.write(json.dumps({"code": code, "cwd": str(folder), "out": str(out), "err": str(err)}) + "\n")
        server.stdin.flush()
        answer = server.stdout.readline()
        assert answer, "the process running the examples ended"
        return json.loads(answer)["status"], out.read_text(), err.read_text()

    yield run
    server.stdin.close()
    server.wait(timeout=60)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, tmp_path, forks):
    code = BLOCKS[index]
    (tmp_path / "run").mkdir()
    status, stdout, stderr = forks(code, tmp_path / "run")
    assert status == 0, stderr
    expected = [line.split("# ")[-1].strip() for line in code.splitlines() if "print(" in line]
    assert stdout.splitlines() == expected


@pytest.mark.slow
def test_an_example_that_fails_fails_its_test(tmp_path, forks):
    """The runner reports what ``python -c`` would: the status, what was printed, the traceback."""
    (tmp_path / "run").mkdir()
    status, stdout, stderr = forks("import os\nprint(os.getcwd())\nraise SystemExit(3)", tmp_path / "run")
    assert (status, stdout.strip(), stderr) == (3, str(tmp_path / "run"), "")
    status, _, stderr = forks("1 / 0", tmp_path / "run")
    assert status == 1 and "ZeroDivisionError" in stderr
    status, stdout, _ = forks("import sys\nprint(__name__, sys.argv, os.getcwd() if 'os' in dir() else '-')", tmp_path)
    assert status == 0 and stdout == "__main__ ['-c'] -\n"  # a fresh __main__: the example before left nothing


def test_the_readme_has_its_examples():
    assert len(BLOCKS) >= 2
