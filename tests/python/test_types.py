"""The type-checking configuration (root pyproject.toml) that `make lint` runs: mypy --strict on the whole package.

No module is checked at a lower level, whether by an override in the configuration or by a comment in the module.
"""

import os
import re

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

from suite import ROOT

#: the flags --strict turns on: an override that turns one off relaxes its modules
STRICT_FLAGS = (
    "disallow_any_generics",
    "disallow_subclassing_any",
    "disallow_untyped_calls",
    "disallow_untyped_defs",
    "disallow_incomplete_defs",
    "check_untyped_defs",
    "disallow_untyped_decorators",
    "warn_redundant_casts",
    "warn_unused_ignores",
    "warn_return_any",
    "no_implicit_reexport",
    "strict_equality",
    "extra_checks",
)
PACKAGE = os.path.join(ROOT, "python", "rlarchive")


def _config() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["tool"]["mypy"]


def _relaxes(options: dict) -> bool:
    """Whether a mypy section lowers the level --strict sets."""
    return (
        options.get("strict") is False
        or any(options.get(flag) is False for flag in STRICT_FLAGS)
        or options.get("ignore_errors") is True
        or bool(options.get("disable_error_code"))
    )


def test_the_whole_package_is_strict():
    cfg = _config()
    assert cfg.get("strict") is True
    assert cfg.get("files") == ["python/rlarchive"]
    assert cfg.get("exclude", []) in ([], ["python/rlarchive/vectors/"])  # the vectors copied into a built package
    assert not _relaxes(cfg)


def test_no_override_relaxes_a_module():
    relaxed = set()
    for o in _config().get("overrides", []):
        if _relaxes(o):
            modules = o["module"]
            relaxed.update([modules] if isinstance(modules, str) else modules)
    assert relaxed == set(), f"modules checked below --strict: {sorted(relaxed)}"


def test_no_module_relaxes_itself():
    """An inline ``# mypy:`` comment or a whole-file ``# type: ignore`` would relax a module without the config."""
    found = []
    for folder, _dirs, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    head = f.read()
                if re.search(r"^# *mypy:", head, re.M) or re.match(
                    r"(\s*#[^\n]*\n)*\s*# *type: *ignore\s*$", head, re.M
                ):
                    found.append(os.path.relpath(path, PACKAGE))
    assert found == []
