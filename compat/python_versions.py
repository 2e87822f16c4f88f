#!/usr/bin/env python3
"""make compat-python: the core of the package under every Python version its classifiers claim.

The versions are read from python/pyproject.toml (``Programming Language :: Python :: 3.X``). For each,
an interpreter is looked for, in this order: ``uv python find`` (when uv is installed), ``python3.X`` on
PATH (Debian's packages), pyenv's versions, and last ``uv python install`` (when uv is installed and may
download). A version with no interpreter is skipped with a line saying so, and does not fail the run.

For each interpreter found: a virtual environment under .compat/python-3.X with the package's
dependency (numpy) and pytest, hypothesis and jsonschema, and then, on this checkout's source
(PYTHONPATH=python, nothing installed from it):

1. the core tests (the reader, the writer, the sources, the checks, the vectors; none needs torch,
   Stable-Baselines3 or Node);
2. the conformance harness run by that interpreter over test-vectors/ with the Python reader
   (tests/conformance/testee_python.py) run by that interpreter too.

Prints one line per version and exits non-zero when a version found fails. Not part of ``make test``:
it installs packages into its own environments.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: The core tests: torch, Stable-Baselines3, gymnasium, onnx and Node are not needed by any of them.
CORE_TESTS = [
    "tests/python/test_vectors.py",
    "tests/python/test_sources.py",
    "tests/python/test_open_sources.py",
    "tests/python/test_json_locations.py",
    "tests/python/test_zip_locations.py",
    "tests/python/test_manifest_order.py",
    "tests/python/test_manifest_schema.py",
    "tests/python/test_run_time_dependencies.py",
    "tests/python/test_write_pipeline.py",
    "tests/python/test_atomic_writes.py",
    "tests/python/test_archive_provenance.py",
    "tests/python/test_classref.py",
    "tests/python/test_types.py",
    "tests/python/test_policy_limits.py",
    "tests/python/test_catalogue.py",
    "tests/python/test_tables.py",
    "tests/python/test_tensor_slice.py",
]
#: Left out: regenerating the vectors needs torch and Stable-Baselines3 (make test checks them on the CI's Python).
DESELECTED = ["tests/python/test_vectors.py::test_vectors_are_reproducible_byte_for_byte"]
TEST_REQUIREMENTS = ["pytest>=8", "hypothesis>=6.100", "jsonschema>=4.18"]


def claimed_versions(pyproject: str) -> list[str]:
    """The 3.X versions the classifiers of ``pyproject`` claim, in order."""
    with open(pyproject, encoding="utf-8") as f:
        text = f.read()
    return sorted(
        set(re.findall(r'"Programming Language :: Python :: (3\.\d+)"', text)), key=lambda v: int(v.split(".")[1])
    )


def dependencies(pyproject: str) -> list[str]:
    """The package's run-time dependencies, as pyproject.toml declares them."""
    with open(pyproject, encoding="utf-8") as f:
        block = re.search(r"^dependencies = \[(.*?)\]", f.read(), re.S | re.M)
    return re.findall(r'"([^"]+)"', block.group(1)) if block else []


def _version_of(python: str) -> str | None:
    try:
        r = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def _uv() -> str | None:
    near = os.path.join(os.path.dirname(sys.executable), "uv")
    return near if os.path.exists(near) else shutil.which("uv")


def find_interpreter(version: str) -> tuple[str | None, str]:
    """An interpreter of ``version`` and where it was found, or (None, what was tried)."""
    uv = _uv()
    candidates: list[tuple[str, str]] = []
    if uv:
        r = subprocess.run([uv, "python", "find", "--no-python-downloads", version], capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip():
            candidates.append((r.stdout.strip(), "uv"))
    on_path = shutil.which(f"python{version}")
    if on_path:
        candidates.append((on_path, "PATH"))
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for p in sorted(
        glob.glob(os.path.join(pyenv_root, "versions", f"{version}.*", "bin", f"python{version}")), reverse=True
    ):
        candidates.append((p, "pyenv"))
    for path, where in candidates:
        if _version_of(path) == version:
            return path, where
    tried = "uv python find, " if uv else ""
    tried += f"python{version} on PATH, {pyenv_root}/versions"
    if uv:
        r = subprocess.run([uv, "python", "install", version], capture_output=True, text=True, timeout=600)
        if r.returncode == 0:
            r = subprocess.run([uv, "python", "find", version], capture_output=True, text=True)
            if r.returncode == 0 and _version_of(r.stdout.strip()) == version:
                return r.stdout.strip(), "uv python install"
        tried += ", uv python install (" + (r.stderr.strip().splitlines() or ["failed"])[-1] + ")"
    return None, tried


def environment(version: str, python: str, requirements: list[str]) -> str:
    """The virtual environment of ``version`` (made on first use, or when its requirements changed): its python."""
    folder = os.path.join(ROOT, ".compat", f"python-{version}")
    venv_python = os.path.join(folder, "bin", "python")
    stamp = os.path.join(folder, ".installed")
    want = "\n".join([python, *requirements])
    if os.path.exists(stamp) and open(stamp, encoding="utf-8").read() == want:
        return venv_python
    uv = _uv()
    if uv:
        subprocess.run([uv, "venv", "-q", "--clear", "--python", python, folder], check=True)
        subprocess.run([uv, "pip", "install", "-q", "--python", venv_python, *requirements], check=True)
    else:
        subprocess.run([python, "-m", "venv", "--clear", folder], check=True)
        subprocess.run(
            [venv_python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements], check=True
        )
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(want)
    return venv_python


def run_version(venv_python: str, version: str) -> tuple[bool, str]:
    """The core tests and the conformance run under ``venv_python``: (passed, summary)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    tests = subprocess.run(
        [
            venv_python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *CORE_TESTS,
            *(f"--deselect={t}" for t in DESELECTED),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    tail = (tests.stdout.strip().splitlines() or ["(no output)"])[-1]
    if tests.returncode != 0:
        sys.stdout.write(tests.stdout[-6000:] + tests.stderr[-2000:])
    conf = subprocess.run(
        [
            venv_python,
            "tests/conformance/run",
            "--quiet",
            "--reader-name",
            f"python{version}",
            "--reader-cmd",
            f"{venv_python} tests/conformance/testee_python.py",
            "--xfail",
            "tests/conformance/xfail-python.json",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    conf_tail = (conf.stdout.strip().splitlines() or ["(no output)"])[-1]
    if conf.returncode != 0:
        sys.stdout.write(conf.stdout[-4000:] + conf.stderr[-2000:])
    ok = tests.returncode == 0 and conf.returncode == 0
    return ok, f"tests: {tail}; conformance: {conf_tail}"


def main() -> int:
    pyproject = os.path.join(ROOT, "python", "pyproject.toml")
    requirements = dependencies(pyproject) + TEST_REQUIREMENTS
    results = []
    for version in claimed_versions(pyproject):
        python, where = find_interpreter(version)
        if python is None:
            print(f"compat-python: Python {version}: SKIPPED, no interpreter found (tried {where})", flush=True)
            results.append((version, None))
            continue
        print(f"compat-python: Python {version}: {python} (from {where})", flush=True)
        ok, summary = run_version(environment(version, python, requirements), version)
        print(f"compat-python: Python {version}: {'PASS' if ok else 'FAIL'}: {summary}", flush=True)
        results.append((version, ok))
    tested = [v for v, ok in results if ok is not None]
    failed = [v for v, ok in results if ok is False]
    skipped = [v for v, ok in results if ok is None]
    print(
        f"compat-python: tested {', '.join(tested) or 'none'}; failed {', '.join(failed) or 'none'}; skipped {', '.join(skipped) or 'none'}"
    )
    return 1 if failed or not tested else 0


if __name__ == "__main__":
    sys.exit(main())
