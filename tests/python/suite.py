"""Shared helpers of the Python test suite (a module of its own name, so that one pytest run can collect every test folder)."""

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
