"""The pre-commit hook validates a repository's archives, installed from this repository as pre-commit installs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import tomllib
from suite import ROOT


def _project(path: str) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def test_the_root_builds_the_same_package_as_python():
    root, package = (
        _project(os.path.join(ROOT, "pyproject.toml")),
        _project(os.path.join(ROOT, "python", "pyproject.toml")),
    )
    for key in ("name", "version", "requires-python", "license", "dependencies", "scripts"):
        assert root["project"].get(key) == package["project"].get(key), key
    assert root["tool"]["setuptools"]["packages"] == package["tool"]["setuptools"]["packages"]
    assert root["tool"]["setuptools"]["package-data"] == package["tool"]["setuptools"]["package-data"]
    # the type checker's configuration is the repository's (the root's), once
    assert "strict" in root["tool"]["mypy"] and "mypy" not in package["tool"]


def test_the_hook_passes_valid_archives_and_fails_invalid_ones(tmp_path):
    pytest.importorskip("pre_commit")
    if shutil.which("git") is None or not os.path.isdir(os.path.join(ROOT, ".git")):
        pytest.skip("git or this repository's .git is missing")
    work = tmp_path / "agents"
    work.mkdir()
    shutil.copy(os.path.join(ROOT, "test-vectors", "valid", "minimal.rlarchive"), work / "good.rlarchive")
    shutil.copy(os.path.join(ROOT, "test-vectors", "invalid", "member-unlisted.rlarchive"), work / "bad.rlarchive")
    env = dict(
        os.environ,
        PRE_COMMIT_HOME=str(tmp_path / "cache"),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    subprocess.run(["git", "init", "-q"], cwd=work, check=True, env=env)
    subprocess.run(["git", "add", "."], cwd=work, check=True, env=env)

    def hook(*files: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", ROOT, "rlarchive-validate", "--files", *files],
            cwd=work,
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )

    bad = hook("good.rlarchive", "bad.rlarchive")  # one run: each builds the hook's environment anew
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "MEMBER_UNLISTED" in bad.stdout and "bad.rlarchive" in bad.stdout and "good.rlarchive" not in bad.stdout
    # the hook's entry (as .pre-commit-hooks.yaml gives it) on the valid file alone passes, silently
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as f:
        entry = next(line.split(":", 1)[1].split() for line in f if line.strip().startswith("entry:"))
    assert entry[0] == "rlarchive"
    cli = [sys.executable, "-c", "import sys; from rlarchive.cli import main; sys.exit(main())"]
    ok = subprocess.run([*cli, *entry[1:], "good.rlarchive"], cwd=work, capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout == "", ok.stdout + ok.stderr
