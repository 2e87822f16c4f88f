"""Every command and the reading API are linear in the number of tensors, members and keys.

Speed is not measured: the checked state's mappings (members, the data document's top level,
the tensor groups and each group's headers) are wrapped so that every lookup and every key
iterated is counted, and the count for an archive with 4n tensors must stay within about 4 times
the count for n (a copy of a group per tensor, or a scan of the groups per tensor, makes it 16).
One run at 20,000 tensors in a subprocess guards against a hang.
"""

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
import pytest
from suite import ROOT

import rlarchive
from rlarchive import checks
from rlarchive.cli import main

#: Tensors of the smaller archive of each pair compared; the larger has 4 times as many.
N = 300
#: At most this much more work for 4 times the tensors (linear: 4, and less with fixed costs).
LINEAR = 4.5


class _Counting(Mapping):
    """A mapping that counts each lookup and each key it hands out."""

    def __init__(self, inner, counter):
        self._inner, self._counter = inner, counter

    def __getitem__(self, key):
        self._counter[0] += 1
        return self._inner[key]

    def __iter__(self):
        for k in self._inner:
            self._counter[0] += 1
            yield k

    def __len__(self):
        return len(self._inner)

    def __contains__(self, key):
        self._counter[0] += 1
        return key in self._inner


def build(path, n, variant=0):
    """An archive with ``n`` tensors in one group, ``n`` arrays referenced from the data document,
    ``n`` optimizer state tensors, ``n`` metadata keys and ``n // 20`` more groups."""
    data = {"gamma": 0.99 - variant / 100, **{f"k{i}": np.full(300, i + variant, np.float32) for i in range(n)}}
    tensors = {"policy": {f"t{i}": np.full(2, i, np.float32) for i in range(n)}}
    tensors.update({f"g{j}": {"w": np.full(3, j + variant, np.float32)} for j in range(n // 20)})
    state = {str(i): {"exp_avg": np.full(300, i, np.float32)} for i in range(n)}
    rlarchive.save(
        path,
        data,
        tensors=tensors,
        optimizers={"opt": {"state": state, "param_groups": [{"params": list(range(n))}]}},
        metadata={f"m{i}": "x" for i in range(n)},
    )
    return path


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """{n: (a, b)} for n = N and 4N: two archives that differ in a hyperparameter, an array and a group."""
    d = tmp_path_factory.mktemp("scaling")
    return {n: (build(d / f"a{n}.rlarchive", n), build(d / f"b{n}.rlarchive", n, 1)) for n in (N, 4 * N)}


def _api(a, _b, _tmp):
    with rlarchive.open(a, spaces="neutral") as ar:
        ar.verify()
        ar.check_extensions()
        assert len(ar.data) == len(ar.raw_data["data"])
        ar.optimizer("opt")
        for g in ar.groups:
            ar.tensors(g)
            for name in ar.tensor_info(g):
                ar.tensor_sha256(g, name)
                ar.get_slice(g, name)[...]
        ar.dump()


def _cli(*argv):
    def run(a, b, tmp):
        args = []
        for x in argv:
            if x == "A":
                x = str(a)
            elif x == "B":
                x = str(b)
            elif x == "COPY":
                x = str(tmp / "copy.rlarchive")
                shutil.copyfile(a, x)
            elif x == "OUT":
                x = str(tmp / "out")
                shutil.rmtree(x, ignore_errors=True)
            args.append(x)
        assert main(args) in (0, 1), args  # 1: diff found differences

    return run


CASES = {
    "api": _api,
    "diff": _cli("diff", "A", "B"),
    "diff --json": _cli("diff", "--json", "A", "B"),
    "inspect": _cli("inspect", "A"),
    "inspect --all --verify": _cli("inspect", "--all", "--verify", "A"),
    "inspect --json": _cli("inspect", "--json", "A"),
    "validate": _cli("validate", "A"),
    "card": _cli("card", "A"),
    "metadata": _cli("metadata", "A"),
    "metadata --set": _cli("metadata", "COPY", "--set", "k=v", "--unset", "m0"),
    "package": _cli("package", "--no-onnx", "A", "OUT"),
    "export-sb3": _cli("export-sb3", "A", "OUT"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_work_is_linear_in_the_number_of_tensors(case, pairs, tmp_path, monkeypatch, capsysbinary):
    counter = [0]
    monkeypatch.setattr(checks, "_frozen", lambda m: MappingProxyType(_Counting(m, counter)))
    counts = {}
    for n, (a, b) in pairs.items():
        counter[0] = 0
        CASES[case](a, b, tmp_path)
        counts[n] = counter[0]
        capsysbinary.readouterr()
    assert counts[N] >= N  # the counting sees the archive's entries
    assert counts[4 * N] <= LINEAR * counts[N], counts


@pytest.mark.slow
def test_20000_tensors_in_a_subprocess(tmp_path):
    """diff and inspect --all of archives with 20,000 tensors (and 20,000 referenced arrays) finish."""
    script = f"""
import sys
sys.path.insert(0, {os.path.join(ROOT, "tests", "python")!r})
from test_scaling import build
from rlarchive.cli import main
a, b = build({str(tmp_path / "a.rlarchive")!r}, 20000), build({str(tmp_path / "b.rlarchive")!r}, 20000, 1)
assert main(["diff", "--json", a, b]) == 1
assert main(["inspect", "--all", a]) == 0
"""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "python"), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert (
        done.stdout.count(b'"section": "tensors"') == 20000 + 20000 // 20
    )  # every array and every extra group differs
