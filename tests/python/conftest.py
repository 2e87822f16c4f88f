"""Shared helpers for the Python test suite."""
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "vectors"))


def schema_registry():
    """A referencing registry holding every schema in schemas/."""
    from referencing import Registry, Resource

    resources = []
    folder = os.path.join(ROOT, "schemas")
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            doc = json.load(f)
        resources.append((doc["$id"], Resource.from_contents(doc)))
    return Registry().with_resources(resources)


def schema_validator(name: str):
    import jsonschema

    with open(os.path.join(ROOT, "schemas", name), encoding="utf-8") as f:
        doc = json.load(f)
    return jsonschema.Draft202012Validator(doc, registry=schema_registry())


@pytest.fixture
def root():
    return ROOT


@pytest.fixture(scope="session")
def sb3_zoo(tmp_path_factory):
    """The tiny SB3 / sb3-contrib models of sb_zoo.py: each built on first use, once per test run."""
    pytest.importorskip("sb3_contrib")
    import sb_zoo

    return sb_zoo.Zoo(tmp_path_factory.mktemp("sb3_zoo"))
