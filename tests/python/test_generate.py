"""tools/generate.py: one entry point for every generator (``make generate``, ``make generate-check``). Every file
of the repository that says it is generated is written by one of its generators, and a stale one is named."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest
from suite import ROOT


def _tool():
    """tools/generate.py under a name of its own (tests/vectors/generate.py is the module ``generate`` of the suite)."""
    spec = importlib.util.spec_from_file_location("tools_generate", os.path.join(ROOT, "tools", "generate.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


generate = _tool()

#: The generators' own sources (they hold their headers' text and the markers they look for).
SCRIPTS = {os.path.join(*g.command[1].split("/")) for g in generate.GENERATORS}


def _tracked() -> list[str]:
    r = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("not a git checkout")
    return [p for p in r.stdout.split("\0") if p]


def _says_generated(path: str) -> bool:
    """A file that says it is generated: "do not edit" in its first lines, or a ``<!-- table:NAME -->`` marker."""
    try:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
    except (UnicodeDecodeError, OSError):
        return False
    return "do not edit" in text[:400].lower() or "<!-- table:" in text


def _covered(path: str) -> bool:
    return any(path == o or path.startswith(o + "/") for g in generate.GENERATORS for o in g.outputs)


def test_every_generated_file_has_a_generator():
    tracked = _tracked()
    this = os.path.relpath(os.path.abspath(__file__), ROOT).replace(os.sep, "/")  # it names the markers it looks for
    generated = [
        p for p in tracked if not p.startswith("test-vectors/") and p not in SCRIPTS | {this} and _says_generated(p)
    ]
    assert len(generated) >= 9, generated
    assert [p for p in generated if not _covered(p)] == []
    assert all(_covered(p) for p in tracked if p.startswith("test-vectors/"))
    for g in generate.GENERATORS:  # and every output it declares exists
        assert all(os.path.exists(os.path.join(ROOT, o)) for o in g.outputs), g.name


def _load(path: str):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.join(ROOT, path)))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    return module


def test_the_tables_generators_write_what_they_are_declared_to():
    declared = {g.name: set(g.outputs) for g in generate.GENERATORS}
    for name, path in (("tables", "spec/tables.py"), ("policy-ops", "spec/policy_ops.py")):
        module = _load(path)
        assert set(module.outputs(module.load())) == declared[name], name


#: What the tables, policy-ops and wasm generators read and write: copied into a scratch checkout.
SCRATCH = ["spec", "tools/generate.py", "reader-js/scripts/build-wasm.mjs"] + [
    o for g in generate.GENERATORS if g.name != "vectors" for o in g.outputs
]


def test_make_generate_check_names_each_stale_file_and_make_generate_refreshes_it(tmp_path):
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    for rel in SCRATCH:
        src, dst = os.path.join(ROOT, rel), tmp_path / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, dst)
    names = ["tables", "policy-ops", "wasm"]

    def run(*args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, str(tmp_path / "tools" / "generate.py"), *args, *names]
        return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)

    assert run("--check").returncode == 0
    for g in generate.GENERATORS:
        if g.name == "vectors":
            continue
        # a file it writes whole (a table between markers keeps what is outside them)
        stale = next(tmp_path / o for o in g.outputs if "do not edit" in (tmp_path / o).read_text()[:400].lower())
        good = stale.read_bytes()
        stale.write_bytes(good + b"\n")
        r = run("--check")
        assert r.returncode == 1 and f"{g.name}: stale" in r.stdout, (g.name, r.stdout, r.stderr)
        assert stale.read_bytes() == good + b"\n", "--check wrote"
        assert run().returncode == 0
        assert stale.read_bytes() == good, g.name
    assert run("--check").returncode == 0


def test_make_test_runs_the_staleness_check_of_every_generator():
    """make test's stages hold generate-check, which runs tools/generate.py --check (every generator, none named)."""
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        text = f.read()
    stages = next(line for line in text.splitlines() if line.startswith("TEST_STAGES :="))
    targets = stages.split(":=", 1)[1].replace("+", " ").split()
    assert "generate-check" in [t.lstrip("~") for t in targets]  # ~TARGET: a stage run at a lower priority
    recipe = text.split("\ngenerate-check:", 1)[1].split("\n\n", 1)[0]
    assert recipe.strip().splitlines()[-1].strip() == "$(PY) tools/generate.py --check"
