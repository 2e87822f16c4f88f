"""The Python package as users get it: the wheel and the sdist carry the
licence and the type marker, their metadata declare what the package needs
(NumPy alone), and the wheel works in a fresh environment without torch."""

from __future__ import annotations

import email.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile

import pytest
from suite import ROOT

PYTHON_DIR = os.path.join(ROOT, "python")
VALID = os.path.join(ROOT, "test-vectors", "valid", "minimal.rlarchive")
INVALID = os.path.join(ROOT, "test-vectors", "invalid", "manifest-wrong-format.rlarchive")


def _setuptools_version() -> tuple[int, ...]:
    try:
        import setuptools
    except ImportError:
        return (0,)
    return tuple(int(x) for x in re.findall(r"\d+", setuptools.__version__)[:2])


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, str]:
    """The wheel and the sdist, built offline with the setuptools of this environment from a copy of python/
    beside a copy of test-vectors/ (as in a checkout), and a second wheel built from that sdist alone."""
    if _setuptools_version() < (77,):
        pytest.skip("building needs setuptools>=77 in this environment (the test extra installs it)")
    work = tmp_path_factory.mktemp("build")
    src = work / "python"
    shutil.copytree(
        PYTHON_DIR, src, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "build", "dist", "vectors")
    )
    shutil.copytree(os.path.join(ROOT, "test-vectors"), work / "test-vectors")
    out = work / "dist"
    out.mkdir()
    logs = []
    for hook in ("build_sdist", "build_wheel"):  # one process each: setuptools keeps state between the two
        code = f"import sys; from setuptools import build_meta as b; b.{hook}(sys.argv[1])"
        r = subprocess.run([sys.executable, "-c", code, str(out)], cwd=src, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-4000:]
        logs.append(r.stdout + r.stderr)
    wheels, sdists = sorted(out.glob("rlarchive-*.whl")), sorted(out.glob("rlarchive-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, os.listdir(out)
    assert not (src / "rlarchive" / "vectors").exists(), "the build wrote the vectors into the source tree"
    # the sdist alone, no test-vectors/ beside it: its wheel takes the vectors the sdist carries
    unpacked = work / "from-sdist"
    with tarfile.open(sdists[0]) as t:
        t.extractall(unpacked, filter="data")
    top = next(unpacked.iterdir())
    out2 = work / "dist-from-sdist"
    out2.mkdir()
    code = "import sys; from setuptools import build_meta as b; b.build_wheel(sys.argv[1])"
    r = subprocess.run([sys.executable, "-c", code, str(out2)], cwd=top, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    logs.append(r.stdout + r.stderr)
    (wheel2,) = sorted(out2.glob("rlarchive-*.whl"))
    return {
        "wheel": str(wheels[0]),
        "sdist": str(sdists[0]),
        "dir": str(out),
        "wheel_from_sdist": str(wheel2),
        "log": "\n".join(logs),
    }


def _metadata(wheel: str) -> email.message.Message:
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(z.read(name).decode("utf-8"))


def test_the_licence_files_are_the_same_apache_text():
    texts = {}
    for rel in ("LICENSE", "python/LICENSE", "reader-js/LICENSE"):
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            texts[rel] = f.read()
    assert len(set(texts.values())) == 1, "the copies of LICENSE differ"
    text = texts["LICENSE"]
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


@pytest.mark.slow
def test_the_wheel_carries_the_conformance_kit(dists):
    with zipfile.ZipFile(dists["wheel"]) as z:
        names = set(z.namelist())
    assert {
        "rlarchive/conformance/__init__.py",
        "rlarchive/vectors/index.json",
        "rlarchive/vectors/valid/minimal.rlarchive",
    } <= names


def test_wheel_and_sdist_contain_the_licence_and_py_typed(dists):
    with zipfile.ZipFile(dists["wheel"]) as z:
        names = z.namelist()
        lic = [n for n in names if re.fullmatch(r"rlarchive-[^/]+\.dist-info/licenses/LICENSE", n)]
        assert lic, names
        with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
            assert z.read(lic[0]) == f.read()
    for f in (
        "rlarchive/py.typed",
        "rlarchive/sources.py",
        "rlarchive/sb3/__init__.py",
    ):
        assert f in names, f
    assert not [n for n in names if "schema" in n], "the package reads no JSON Schema: schemas/ is the one copy"
    with tarfile.open(dists["sdist"]) as t:
        snames = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for f in ("LICENSE", "README.md", "pyproject.toml", "rlarchive/py.typed"):
        assert f in snames, f


def test_wheel_metadata(dists):
    md = _metadata(dists["wheel"])
    assert md["License-Expression"] == "Apache-2.0"
    assert md.get_all("License-File") == ["LICENSE"]
    assert not [c for c in md.get_all("Classifier") or [] if c.startswith("License ::")], (
        "no licence classifiers beside the expression"
    )
    assert md["Description-Content-Type"] == "text/markdown"
    assert "pip install rlarchive" in md.get_payload()
    assert md.get_all("Project-URL")
    requires = md.get_all("Requires-Dist") or []
    plain = [r for r in requires if "extra ==" not in r]
    assert sorted(re.match(r"[A-Za-z0-9_.-]+", r).group(0) for r in plain) == ["numpy"], plain
    extras = set(md.get_all("Provides-Extra") or [])
    assert {"torch", "sb3", "fsspec", "http", "test"} <= extras


def test_declared_dependencies_are_imported_and_extras_fit_the_tested_versions(dists):
    """Every runtime dependency is imported by the package; every installed tested version is within its extra's range."""
    import importlib.metadata as md

    from packaging.requirements import Requirement

    reqs = [Requirement(r) for r in _metadata(dists["wheel"]).get_all("Requires-Dist") or []]
    sources = []
    for dirpath, _, files in os.walk(os.path.join(PYTHON_DIR, "rlarchive")):
        for f in files:
            if f.endswith(".py"):
                with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                    sources.append(fh.read())
    code = "\n".join(sources)
    for r in reqs:
        if r.marker is None:
            assert re.search(rf"^\s*(import|from) {r.name}\b", code, re.M), (
                f"{r.name} is declared but nothing imports it"
            )
        try:
            installed = md.version(r.name)
        except md.PackageNotFoundError:
            continue
        assert r.specifier.contains(installed, prereleases=True), f"{r.name} {installed} is outside {r}"


def test_readme_links_are_absolute():
    with open(os.path.join(PYTHON_DIR, "README.md"), encoding="utf-8") as f:
        links = re.findall(r"\]\(([^)\s]+)\)", f.read())
    assert links
    for link in links:
        assert link.startswith("https://"), f"{link}: relative links break on the package index"
        m = re.match(r"https://github\.com/rlarchive/rlarchive/blob/main/(.+)", link)
        if m:
            assert os.path.exists(os.path.join(ROOT, m.group(1))), link


@pytest.mark.slow
def test_wheel_works_in_a_fresh_environment_without_torch(dists, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = str(env_dir / ("Scripts" if os.name == "nt" else "bin") / ("python.exe" if os.name == "nt" else "python"))
    # this environment's pip installs into the fresh one, from the configured (local) index
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            py,
            "install",
            "-q",
            "--disable-pip-version-check",
            "--find-links",
            dists["dir"],
            dists["wheel"],
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0 and re.search(
        r"No matching distribution|Could not find a version|Network is unreachable|Failed to establish", r.stderr
    ):
        pytest.skip(f"the dependencies cannot be installed here: {r.stderr.strip().splitlines()[-1]}")
    assert r.returncode == 0, r.stderr[-4000:]
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    probe = (
        "import importlib.metadata, importlib.util, rlarchive, rlarchive.sources; "
        "assert importlib.util.find_spec('torch') is None, 'torch is installed'; "
        "print(rlarchive.__version__, rlarchive.__file__); "
        "print(*sorted(d.metadata['Name'].lower() for d in importlib.metadata.distributions()))"
    )
    r = subprocess.run([py, "-c", probe], cwd=empty, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    first, installed = r.stdout.splitlines()
    assert installed.split() == ["numpy", "rlarchive"], f"installing the wheel installed {installed}"
    version, location = first.split()
    assert location.startswith(str(env_dir)), f"rlarchive came from {location}, not the fresh environment"
    cli = str(env_dir / ("Scripts" if os.name == "nt" else "bin") / "rlarchive")
    r = subprocess.run([cli, "validate", VALID], cwd=empty, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "valid" in r.stdout
    r = subprocess.run([cli, "validate", "--json", INVALID], cwd=empty, env=env, capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MANIFEST_INVALID" in r.stdout
    r = subprocess.run([cli, "--version"], cwd=empty, env=env, capture_output=True, text=True)
    assert version in r.stdout + r.stderr
    # the conformance kit: the package's own vectors, a reader given by a path relative to the caller's folder
    shutil.copy(os.path.join(ROOT, "tests", "conformance", "testee_python.py"), empty / "my_reader.py")
    r = subprocess.run(
        [cli, "conformance", "--quiet", "--reader-cmd", f"{py} ./my_reader.py"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 failed" in r.stdout and "coverage" in r.stdout


def _listed_files(node) -> set:
    """Every file an index names: the values of its "file" and "*_file" members, at any depth."""
    found: set = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, str) and (k == "file" or k.endswith("_file")):
                found.add(v)
            else:
                found |= _listed_files(v)
    elif isinstance(node, list):
        for v in node:
            found |= _listed_files(v)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("which", ["wheel", "wheel_from_sdist", "sdist"])
def test_the_distributions_carry_the_test_vectors(dists, which):
    """test-vectors/ is kept once in the repository; the build copies it into the package: index.json and
    every file it lists, byte for byte, in the wheel, the sdist and a wheel built from the sdist."""
    vectors = os.path.join(ROOT, "test-vectors")
    with open(os.path.join(vectors, "index.json"), "rb") as f:
        index_bytes = f.read()
    listed = _listed_files(json.loads(index_bytes))
    assert len(listed) > 100 and "valid/minimal.rlarchive" in listed
    if which == "sdist":
        with tarfile.open(dists["sdist"]) as t:
            members = {m.name.split("/", 1)[1]: m for m in t.getmembers() if "/" in m.name}

            def read(rel):
                m = members.get("rlarchive/vectors/" + rel)
                f = t.extractfile(m) if m is not None else None
                return f.read() if f is not None else None

            contents = {rel: read(rel) for rel in listed | {"index.json"}}
    else:
        with zipfile.ZipFile(dists[which]) as z:
            names = set(z.namelist())
            contents = {
                rel: z.read("rlarchive/vectors/" + rel) if "rlarchive/vectors/" + rel in names else None
                for rel in listed | {"index.json"}
            }
    assert contents["index.json"] == index_bytes
    for rel in sorted(listed):
        assert contents[rel] is not None, f"{rel} is missing from the {which}"
        with open(os.path.join(vectors, rel), "rb") as f:
            assert contents[rel] == f.read(), f"{rel} differs in the {which}"


def test_the_build_raises_no_setuptools_warning(dists):
    """No "Package 'rlarchive.vectors' is absent from the packages configuration" banner, nor any other."""
    assert "absent from the `packages` configuration" not in dists["log"]
    assert "*****" not in dists["log"] and "SetuptoolsDeprecationWarning" not in dists["log"], dists["log"][-3000:]


def test_make_dist_needs_the_build_tools_alone():
    """make dist builds a pure-Python wheel, an sdist, an npm tarball and the kit: what it runs, prerequisites
    included, installs setuptools and nothing else (no torch, SB3, test tools, nor the reader's node_modules)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    r = subprocess.run(["make", "-n", "-B", "dist"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    installs = [
        line for line in r.stdout.splitlines() if "pip install" in line or "npm ci" in line or "npm install" in line
    ]
    assert installs and all(re.search(r"pip install -q 'setuptools>=[0-9]+'$", line) for line in installs), installs
    assert "npm pack" in r.stdout and "build_wheel" in r.stdout and "kit.py dist" in r.stdout


def test_the_kit_script_runs_without_the_packages_dependencies(tmp_path):
    """tests/vectors/kit.py (make dist's last step) imports nothing outside the standard library: it runs in a
    Python that has neither NumPy nor the package on its path (-I: isolated, -S: no site-packages)."""
    r = subprocess.run(
        [sys.executable, "-I", "-S", os.path.join(ROOT, "tests", "vectors", "kit.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["rlarchive-conformance-1.0.tar.gz"]


def test_the_vectors_are_kept_once_in_the_repository():
    """Git tracks test-vectors/ and no copy inside the package (.gitignore keeps the build's copy out)."""
    if (
        shutil.which("git") is None
        or not os.path.isdir(os.path.join(ROOT, ".git"))
        and not os.path.isfile(os.path.join(ROOT, ".git"))
    ):
        pytest.skip("not a git checkout")
    r = subprocess.run(
        ["git", "ls-files", "python/rlarchive/vectors", "test-vectors/index.json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["test-vectors/index.json"]
    r = subprocess.run(["git", "check-ignore", "-q", "python/rlarchive/vectors/index.json"], cwd=ROOT)
    assert r.returncode == 0, "python/rlarchive/vectors/ is not ignored"


@pytest.mark.slow
def test_the_standalone_conformance_kit_runs_on_the_standard_library(tmp_path):
    """make dist's kit: run.py with Python's standard library alone (-S: no site-packages) judges a reader given by a relative path."""
    import kit

    path = kit.build(str(tmp_path / "dist"))
    assert path == kit.build(str(tmp_path / "again")).replace("again", "dist")
    with open(path, "rb") as a, open(kit.build(str(tmp_path / "again")), "rb") as b:
        assert a.read() == b.read(), "the kit is not reproducible"
    with tarfile.open(path) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    top = next((tmp_path / "x").iterdir())
    assert {"run.py", "README.txt", "annex-a-conformance.md", "errors.md", "vectors"} <= set(os.listdir(top))
    shutil.copy(os.path.join(ROOT, "tests", "conformance", "testee_python.py"), top / "my_reader.py")
    r = subprocess.run(
        [sys.executable, "-S", "run.py", "--quiet", "--reader-cmd", f"{sys.executable} ./my_reader.py"],
        cwd=top,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 failed" in r.stdout


def test_a_checkout_runs_the_conformance_kit_on_test_vectors():
    """From a checkout (an editable install: the package holds no copy), the vectors are test-vectors/."""
    from rlarchive.conformance import vectors_dir

    assert os.path.samefile(vectors_dir(), os.path.join(ROOT, "test-vectors"))
