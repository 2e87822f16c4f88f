"""The core package's imports: no cycle, and no private name imported across modules.

Every module python/rlarchive/*.py (the core; extensions/, conformance/ and hub/ one node each; not the
bridges unpickle/, sb3/, sb2/, zoo/, not vectors/) is
parsed with ``ast``; every import of an rlarchive module counts, at module
level and inside functions alike (a lazy import still closes a cycle at run
time). Imports under ``if TYPE_CHECKING:`` are left out: they never run.
An import of the package itself (``from . import __version__``) is no edge:
the package is initialised before any of its modules.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from suite import ROOT, import_cycle

PACKAGE = "rlarchive"
CORE = os.path.join(ROOT, "python", PACKAGE)
#: the core's subpackages (their modules are nodes named ``cli.inspect`` ...); the bridges have their own test
SUBPACKAGES = ("cli",)


#: the package's other folders, each one node (its __init__.py and the modules inside it)
TOP_PACKAGES = ("extensions", "conformance", "hub")
#: the bridges: not the core (test_interop_imports.py walks them)
BRIDGES = ("unpickle", "sb3", "sb2", "zoo")


def _modules() -> dict[str, ast.Module]:
    out = {}
    for name in sorted(os.listdir(CORE)):
        if name.endswith(".py") and name != "__init__.py":
            with open(os.path.join(CORE, name), encoding="utf-8") as f:
                out[name[:-3]] = ast.parse(f.read(), name)
    for package in TOP_PACKAGES:
        with open(os.path.join(CORE, package, "__init__.py"), encoding="utf-8") as f:
            out[package] = ast.parse(f.read(), package)
    for package in SUBPACKAGES:
        folder = os.path.join(CORE, package)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                module = package if name == "__init__.py" else f"{package}.{name[:-3]}"
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    out[module] = ast.parse(f.read(), name)
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.stmt]:
    """Every import statement below ``node``, but those under ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child):
            for other in child.orelse:
                yield from _imports_of(other)
            continue
        yield from _imports_of(child)


def _imports_of(node: ast.AST) -> Iterator[ast.stmt]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _imports(node)


def _core_module(dotted: str) -> str | None:
    """The core module a dotted name inside the package is (``reader``, ``cli.inspect``), or None (the
    package itself, a bridge)."""
    parts = dotted.split(".")
    if len(parts) < 2 or parts[0] != PACKAGE or parts[1] in BRIDGES + ("vectors",):
        return None
    if parts[1] in SUBPACKAGES and len(parts) == 2:
        return None  # the subpackage itself: `from . import x` inside it names its modules
    if parts[1] in SUBPACKAGES:
        return f"{parts[1]}.{parts[2]}"
    return parts[1]


def _targets(stmt: ast.stmt, modules: dict, importer: str = "") -> Iterator[tuple[str, list[str]]]:
    """(core module imported, names imported from it) for one import statement of core module ``importer``."""
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            target = _core_module(alias.name)
            if target is not None:
                yield target, []
        return
    if importer in TOP_PACKAGES:  # a package's __init__: its relative imports start from the package itself
        importer += ".__init__"
    assert isinstance(stmt, ast.ImportFrom)
    # the package a relative import starts from: rlarchive for a top-level module, rlarchive.cli inside cli/
    if importer in SUBPACKAGES:
        here = [PACKAGE, importer]
    else:
        here = [PACKAGE] + importer.split(".")[:-1]
    if stmt.level == 0:
        base = stmt.module or ""
    elif stmt.level <= len(here):
        parent = here[: len(here) - stmt.level + 1]
        base = ".".join(parent + ([stmt.module] if stmt.module else []))
    else:
        return  # above the package: not a core import
    target = _core_module(base)
    if target is not None:
        yield target, [a.name for a in stmt.names]
    elif base == PACKAGE or base.split(".")[-1] in SUBPACKAGES:
        prefix = "" if base == PACKAGE else base.split(".")[-1] + "."
        for alias in stmt.names:  # from . import reader: the module; from . import __version__: the package
            if prefix + alias.name in modules:
                yield prefix + alias.name, []


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    modules = _modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    private = []
    for name, tree in modules.items():
        for stmt in _imports(tree):
            for target, names in _targets(stmt, modules, name):
                if target not in modules or target == name:
                    continue
                private += [f"{name}.py:{stmt.lineno} imports {target}.{n}" for n in names if n.startswith("_")]
                edges[name].add(target)
    return edges, private


def test_the_core_has_no_import_cycle():
    edges, _ = _graph()
    cycle = import_cycle(edges)
    assert cycle == [], "import cycle: " + " -> ".join(cycle)


def test_no_private_name_is_imported_across_core_modules():
    _, private = _graph()
    assert private == []


def test_the_walk_sees_lazy_imports_and_leaves_type_checking_ones_out():
    """The graph finds an import inside a function, and none under ``if TYPE_CHECKING:``."""
    edges, _ = _graph()
    lazy = ast.parse("def f():\n    from .policy import Policy\n")
    assert [t for s in _imports(lazy) for t, _ in _targets(s, _modules())] == ["policy"]
    typed = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .reader import Archive\n")
    assert [t for s in _imports(typed) for t, _ in _targets(s, _modules())] == []
    assert "extensions" in edges["reader"]  # Archive.policy imports extensions.policy.evaluator lazily
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
