"""The package's imports: no cycle, no private name taken across modules, and each layer imports only what it may.

Every module of python/rlarchive (its folders included; not vectors/) is parsed with ``ast``; every import of an
rlarchive module counts, at module level and inside functions alike (a lazy import still closes a cycle at run
time). Imports under ``if TYPE_CHECKING:`` are left out: they never run. An import of the package itself
(``from . import __version__``) is no edge: the package is initialised before any of its modules.

A module is named by its path inside the package (``reader``, ``cli.inspect``, ``extensions`` for the registry,
``extensions.policy.evaluator``, ``sb3.keys``). Its layer is the folder it is in:

- the core: the modules at the package's root (the format: reading, checking, writing, the API);
- the registry (``extensions``) and one folder per extension (``extensions.<name>``, the same in reader-js/src/);
- the bridges, split by trust: ``unpickle`` (the restricted unpickler: the security boundary), then ``sb3``,
  ``sb2`` and ``zoo``, which use it;
- ``conformance`` (also the standalone kit), ``hub`` (card, package) and ``cli`` (the command line).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from functools import cache

from suite import ROOT, import_cycle

PACKAGE = "rlarchive"
PACKAGE_DIR = os.path.join(ROOT, "python", PACKAGE)
BRIDGES = ("sb3", "sb2", "zoo")
FOLDERS = ("extensions", "unpickle", *BRIDGES, "conformance", "hub", "cli")
#: what a module of each layer may import, besides its own layer (an extension: its own folder)
ALLOWED = {
    "core": {"core", "registry"},
    "registry": {"core", "extension"},
    "extension": {"core"},
    "unpickle": {"core"},
    **{b: {"core", "registry", "extension", "unpickle", *BRIDGES} for b in BRIDGES},
    "conformance": {"core", "registry", "extension"},  # the reference reader judges a reader's answers
    # the hub package of an RL Zoo run imports the run through the Zoo's bridge, the card names SB3's algorithms
    "hub": {"core", "registry", "extension", *BRIDGES},
    "cli": {"core", "registry", "extension", "unpickle", *BRIDGES, "conformance", "hub"},
}
#: the extensions an extension builds on (RLA_policy normalises observations with RLA_vec_normalize's statistics;
#: the JavaScript evaluator imports its function, reader-js/test/imports.test.mjs has the same table)
DEPENDS = {"policy": {"vec_normalize"}}
#: the core's accessors of an extension's content, the only core modules that import an extension's module:
#: Archive.policy, vec_normalize and replay_buffer (lazily, when called), and evaluate, which runs a policy
ACCESSORS = {
    "reader": {"extensions.policy.evaluator", "extensions.vec_normalize", "extensions.replay_buffer"},
    "evaluate": {"extensions.policy.observations"},
}
KIT = os.path.join(ROOT, "tests", "vectors", "kit.py")


@cache
def kit_modules() -> frozenset[str]:
    """The package's modules the standalone conformance kit (make dist, tests/vectors/kit.py) ships as files beside
    its run.py, which is the harness: the names of its tuple of "the modules run.py imports"."""
    with open(KIT, encoding="utf-8") as f:
        text = f.read()
    end = text.index("# the modules run.py imports")
    line = text[text.rindex("for name in (", 0, end) : end]  # the tuple, on one line or formatted over several
    files = re.findall(r'"([\w/]+)\.py"', line)
    assert files, line
    return frozenset(f.replace("/", ".") for f in files)


def _modules() -> dict[str, tuple[str, ast.Module]]:
    """Module name -> (its package, its tree), for every module of the package."""
    out = {}
    for folder, dirs, files in os.walk(PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if os.path.isfile(os.path.join(folder, d, "__init__.py")))
        rel = os.path.relpath(folder, PACKAGE_DIR)
        package = "" if rel == os.curdir else rel.replace(os.sep, ".")
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                tree = ast.parse(f.read(), os.path.join(folder, name))
            module = package if name == "__init__.py" else ".".join(filter(None, [package, name[:-3]]))
            out[module or "__init__"] = (package, tree)
    return out


def layer(module: str) -> str:
    """The layer of a module (see the docstring)."""
    top = module.split(".")[0]
    if module == "extensions":
        return "registry"
    if top == "extensions":
        return "extension"
    if module == "__main__":
        return "cli"
    return top if top in FOLDERS else "core"


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


def _inside(dotted: str) -> str | None:
    """A dotted name's part inside the package (``rlarchive.sb3.keys`` -> ``sb3.keys``; the package: ``""``), or None."""
    parts = dotted.split(".")
    return ".".join(parts[1:]) if parts[0] == PACKAGE else None


def _targets(stmt: ast.stmt, package: str, modules: dict) -> Iterator[tuple[str, list[str]]]:
    """(module imported, names taken from it) for one import statement of a module of ``package``."""
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            inside = _inside(alias.name)
            if inside:
                yield inside, []
        return
    assert isinstance(stmt, ast.ImportFrom)
    here = [PACKAGE, *filter(None, package.split("."))]
    if stmt.level == 0:
        base = stmt.module or ""
    elif stmt.level <= len(here):
        base = ".".join(here[: len(here) - stmt.level + 1] + ([stmt.module] if stmt.module else []))
    else:
        return  # above the package
    inside = _inside(base)
    if inside is None:
        return
    taken = []
    for alias in stmt.names:
        sub = ".".join(filter(None, [inside, alias.name]))
        if sub in modules:  # from . import reader, from .extensions import training: the module
            yield sub, []
        else:
            taken.append(alias.name)
    if taken and inside:  # from .values import Checker; from . import __version__ (the package) is no edge
        yield inside, taken


def _module_aliases(stmt: ast.stmt, package: str, modules: dict) -> dict[str, str]:
    """Local name -> module, for the names an import statement binds to modules."""
    names = {}
    if isinstance(stmt, ast.ImportFrom):
        for target, taken in _targets(stmt, package, modules):
            if not taken:
                alias = next(a for a in stmt.names if target.endswith(a.name))
                names[alias.asname or alias.name] = target
    elif isinstance(stmt, ast.Import):
        names.update({a.asname: _inside(a.name) for a in stmt.names if a.asname and _inside(a.name)})
    return names


@cache
def _package_graph() -> tuple[dict[str, set[str]], list[str], dict[str, set[str]]]:
    return _graph(_modules())


def _graph(modules: dict[str, tuple[str, ast.Module]]) -> tuple[dict[str, set[str]], list[str], dict[str, set[str]]]:
    """(module -> the modules it imports; private names used across modules; module -> modules it imports at
    module level)."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    top_level: dict[str, set[str]] = {m: set() for m in modules}
    private = []
    for name, (package, tree) in modules.items():
        aliases = {}
        for stmt in _imports(tree):
            for target, taken in _targets(stmt, package, modules):
                if target not in modules or target == name:
                    continue
                edges[name].add(target)
                if stmt in tree.body:
                    top_level[name].add(target)
                private += [f"{name}:{stmt.lineno} imports {target}.{n}" for n in taken if n.startswith("_")]
            aliases.update(_module_aliases(stmt, package, modules))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                if node.attr.startswith("_") and not node.attr.startswith("__") and aliases[node.value.id] != name:
                    private.append(f"{name}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    return edges, private, top_level


def _broken_rules(edges: dict[str, set[str]]) -> list[str]:
    """Every import a module's layer may not make (see ALLOWED, DEPENDS, ACCESSORS, kit_modules)."""
    broken = []
    for module, targets in sorted(edges.items()):
        mine = layer(module)
        for target in sorted(targets):
            theirs = layer(target)
            if module in kit_modules() and target not in kit_modules():
                broken.append(f"{module} imports {target} (the standalone kit does not ship it)")
            elif mine == "extension" and theirs == "extension":
                own, other = module.split(".")[1], target.split(".")[1]
                if other != own and other not in DEPENDS.get(own, ()):
                    broken.append(f"{module} imports {target} (another extension's folder)")
            elif mine == "core" and theirs == "extension":
                if target not in ACCESSORS.get(module, ()):
                    broken.append(f"{module} imports {target} (the core reaches an extension through the registry)")
            elif theirs != mine and theirs not in ALLOWED[mine]:
                broken.append(f"{module} ({mine}) imports {target} ({theirs})")
    return broken


def test_the_package_has_no_import_cycle():
    edges, _, _ = _package_graph()
    cycle = import_cycle(edges)
    assert cycle == [], "import cycle: " + " -> ".join(cycle)


def test_no_private_name_is_taken_across_modules():
    _, private, _ = _package_graph()
    assert private == [], "\n".join(private)


def test_each_layer_imports_only_what_it_may():
    """The core reaches an extension through the registry (or is one of its accessors); an extension's folder imports
    the core and itself (and what it builds on); the unpickler imports the core only, nothing of sb3/, sb2/ or zoo/;
    the conformance harness no bridge, and the modules its standalone kit ships only what the kit ships; no layer but
    the command line imports it."""
    edges, _, _ = _package_graph()
    assert _broken_rules(edges) == []


def test_the_accessors_import_their_extension_only_when_called():
    """The reader's accessors import their extension's module lazily (rlarchive and the manifest load no checks)."""
    _, _, top_level = _package_graph()
    assert not {t for t in top_level["reader"] if layer(t) == "extension"}
    assert {"extensions.policy.evaluator", "extensions.vec_normalize"} <= _package_graph()[0]["reader"]


def test_the_walk_sees_every_module_lazy_imports_and_the_rules_can_fail():
    """The graph finds an import inside a function and none under ``if TYPE_CHECKING:``; each rule catches its case."""
    modules = {m: None for m in _modules()}
    assert {"reader", "cli.inspect", "extensions", "extensions.policy.evaluator", "unpickle.machine", "sb3"} <= set(
        modules
    )
    lazy = ast.parse("def f():\n    from ..extensions.policy.evaluator import Policy\n")
    assert [t for s in _imports(lazy) for t, _ in _targets(s, "hub", modules)] == ["extensions.policy.evaluator"]
    typed = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .reader import Archive\n")
    assert [t for s in _imports(typed) for t, _ in _targets(s, "", modules)] == []
    both = ast.parse("from . import keys, load\nfrom .. import __version__\n")
    assert list(_targets(both.body[0], "sb3", modules)) == [("sb3.keys", []), ("sb3", ["load"])]
    assert list(_targets(both.body[1], "sb3", modules)) == []
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert {"conformance.protocol", "conformance.reports"} <= kit_modules() and "conformance" not in kit_modules()
    fake = {
        "a": (
            "",
            ast.parse("from .b import _x, y\nfrom . import b as bb\n\ndef f():\n    return bb._z, bb.__name__\n"),
        ),
        "b": ("", ast.parse("from .a import y\n")),
    }
    edges, private, top_level = _graph(fake)
    assert edges == {"a": {"b"}, "b": {"a"}} and top_level == edges and import_cycle(edges) == ["a", "b", "a"]
    assert private == ["a:1 imports b._x", "a:5 uses b._z"]
    assert _broken_rules(
        {
            "manifest": {"extensions.policy.description"},
            "reader": {"extensions.training"},
            "unpickle.recorded": {"sb3.keys"},
            "extensions.training": {"extensions.replay_buffer", "sb3.run_state"},
            "extensions.policy.evaluator": {"extensions.vec_normalize"},
            "conformance.protocol": {"errors"},
            "conformance": {"cli"},
            "hub.card": {"extensions.policy.description", "sb3", "cli"},
        }
    ) == [
        "conformance (conformance) imports cli (cli)",
        "conformance.protocol imports errors (the standalone kit does not ship it)",
        "extensions.training imports extensions.replay_buffer (another extension's folder)",
        "extensions.training (extension) imports sb3.run_state (sb3)",
        "hub.card (hub) imports cli (cli)",
        "manifest imports extensions.policy.description (the core reaches an extension through the registry)",
        "reader imports extensions.training (the core reaches an extension through the registry)",
        "unpickle.recorded (unpickle) imports sb3.keys (sb3)",
    ]
