"""The type-checking configuration (root pyproject.toml) that `make lint` runs: mypy --strict on the whole
core package, the bridges (unpickle/, sb3/, sb2/, zoo/) at mypy's default level."""

import os

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

from suite import ROOT

#: the bridges' packages and their modules: the only modules mypy checks at its default level
BRIDGES = {
    "rlarchive.unpickle",
    "rlarchive.unpickle.*",
    "rlarchive.sb3",
    "rlarchive.sb3.*",
    "rlarchive.sb2",
    "rlarchive.zoo",
    "rlarchive.zoo.*",
}
STRICT_FLAGS = ("disallow_untyped_defs", "disallow_any_generics", "warn_return_any", "no_implicit_reexport")


def _config() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["tool"]["mypy"]


def test_core_is_strict():
    cfg = _config()
    assert cfg.get("strict") is True
    assert cfg.get("files") == ["python/rlarchive"]


def test_only_the_bridges_are_relaxed():
    relaxed = set()
    for o in _config().get("overrides", []):
        if any(o.get(flag) is False for flag in STRICT_FLAGS):
            relaxed.update(o["module"])
    package = os.path.join(ROOT, "python", "rlarchive")
    core = {f"rlarchive.{n[:-3]}" for n in os.listdir(package) if n.endswith(".py") and n != "__init__.py"}
    core |= {
        f"rlarchive.{n}"
        for n in os.listdir(package)
        if f"rlarchive.{n}" not in BRIDGES and os.path.isfile(os.path.join(package, n, "__init__.py"))
    }
    relaxed_core = relaxed & core
    # the bridges are relaxed as a whole; a core module only by name, and each must exist
    assert BRIDGES <= relaxed
    assert relaxed - core - BRIDGES == set(), "a relaxed module that does not exist"
    assert relaxed_core == set(), f"core modules not checked with --strict: {sorted(relaxed_core)}"
