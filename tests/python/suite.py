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


def import_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of an import graph (module -> the modules it imports) as a path whose first module is
    repeated at its end, or [] when there is none (test_imports.py, over every module of the package)."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []
