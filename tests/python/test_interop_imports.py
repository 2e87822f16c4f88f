"""The interop package's modules import one another without a cycle, and none uses another module's private names.

Every import of an rlarchive module is read from the source (module level and
inside functions alike), so an import made lazily to break a cycle counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

from suite import import_cycle

INTEROP = Path(__file__).resolve().parents[2] / "python" / "rlarchive" / "interop"
PACKAGE = "rlarchive.interop"


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The dotted name an ``from X import ...`` in ``rlarchive.interop.<module>`` reads from."""
    if node.level == 0:
        return node.module or ""
    base = f"{PACKAGE}.{module}".split(".")[: -node.level]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, tree: ast.AST) -> list[tuple[str, str, int]]:
    """(imported rlarchive module, name taken from it or "", line) for every import in ``tree``."""
    found: list[tuple[str, str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, "", node.lineno) for a in node.names if a.name.split(".")[0] == "rlarchive"]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            if source.split(".")[0] != "rlarchive":
                continue
            for alias in node.names:
                if source == PACKAGE or (source == "rlarchive" and not alias.name.startswith("_")):
                    found.append((f"{source}.{alias.name}", "", node.lineno))  # `from . import x`: the module x
                else:
                    found.append((source, alias.name, node.lineno))
    return found


def _module_aliases(module: str, tree: ast.AST) -> dict[str, str]:
    """Local name -> rlarchive module, for the names ``import`` binds to modules in ``tree``."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _absolute(module, node).split(".")[0] == "rlarchive":
            source = _absolute(module, node)
            for alias in node.names:
                if source in (PACKAGE, "rlarchive"):
                    names[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("rlarchive") and alias.asname:
                    names[alias.asname] = alias.name
    return names


def _private(module: str, short: str | None, name: str) -> bool:
    """Whether ``name``, taken by ``module`` from the interop module ``short`` (None: from outside interop), is private."""
    return name.startswith("_") and not name.startswith("__")


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    """(interop module -> the interop modules it imports; private names used across modules, as messages)."""
    graph: dict[str, set[str]] = {}
    private: list[str] = []
    for path in sorted(INTEROP.glob("*.py")):
        module = path.stem
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges = graph.setdefault(module, set())
        for target, name, line in _imports(module, tree):
            short = target[len(PACKAGE) + 1 :].split(".")[0] if target.startswith(PACKAGE + ".") else None
            if short is not None and short != module and short != "__init__":
                edges.add(short)
            if _private(module, short, name):
                private.append(f"{module}.py:{line} imports {name} from {target}")
        aliases = _module_aliases(module, tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                attr = node.attr
                target = aliases[node.value.id]
                short = target[len(PACKAGE) + 1 :] if target.startswith(PACKAGE + ".") else None
                if _private(module, short, attr):
                    private.append(f"{module}.py:{node.lineno} uses {target}.{attr}")
    return graph, private


def test_no_import_cycle_among_interop_modules():
    graph, _ = _graph()
    assert "sb3" in graph and "sb3_zip" in graph["sb2"], "the walk found the modules and their imports"
    assert import_cycle(graph) == [], " -> ".join(import_cycle(graph))


def test_no_private_name_used_across_modules():
    _, private = _graph()
    assert private == [], "\n".join(private)


def test_the_walk_sees_cycles_and_private_names(tmp_path):
    """The checks can fail: a cycle made of lazy imports and a private name are found."""
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert import_cycle({"a": {"b"}, "b": set()}) == []
    tree = ast.parse(
        "def f():\n    from .sb3_zip import _type_name\n    from . import sb3_keys\n    return sb3_keys._DATA_KEYS\n"
    )
    assert ("rlarchive.interop.sb3_zip", "_type_name", 2) in _imports("x", tree)
    assert ("rlarchive.interop.sb3_keys", "", 3) in _imports("x", tree)
    assert _module_aliases("x", tree) == {"sb3_keys": "rlarchive.interop.sb3_keys"}


def test_the_facade_keeps_the_public_api():
    """``rlarchive.sb3`` and ``rlarchive.interop.sb3`` give every name of ``__all__``, the same objects as the modules that define them."""
    import rlarchive.sb3
    from rlarchive.interop import (
        sb3,
        sb3_export,
        sb3_import,
        sb3_keys,
        sb3_load,
        sb3_parts,
        sb3_policy_file,
        sb3_save,
        sb3_switch,
        sb3_zip,
    )

    assert rlarchive.sb3 is sb3
    for name in sb3.__all__:
        assert getattr(sb3, name) is not None, name
    defined = {}
    for mod in (sb3_zip, sb3_keys, sb3_import, sb3_save, sb3_export, sb3_load, sb3_parts, sb3_policy_file, sb3_switch):
        defined.update({n: getattr(mod, n) for n in mod.__all__})
    for name in set(sb3.__all__) - {"import_zoo"}:
        assert getattr(sb3, name) is defined[name], name
    for name in (
        "META_VERSION",
        "META_SYSTEM_INFO",
        "META_ALGORITHM",
        "META_ALGORITHM_CLASS",
        "META_TORCH_VALUES",
        "META_SOURCE",
    ):
        assert getattr(sb3, name) == getattr(sb3_keys, name)
