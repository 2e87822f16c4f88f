"""The bridges' modules (unpickle/, sb3/, sb2/, zoo/) import one another without a cycle, and none uses another
module's private names.

Every import of an rlarchive module is read from the source (module level and
inside functions alike), so an import made lazily to break a cycle counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

from suite import import_cycle

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "python" / "rlarchive"
PACKAGE = "rlarchive"
#: the bridges: their modules are the nodes of the graph, named ``sb3`` (a package) or ``sb3.keys``
BRIDGES = ("unpickle", "sb3", "sb2", "zoo")


def _bridge_modules() -> dict[str, Path]:
    """Node name (``sb3``, ``sb3.keys``) -> file, for every module of the bridges."""
    out = {}
    for bridge in BRIDGES:
        for path in sorted((PACKAGE_DIR / bridge).glob("*.py")):
            out[bridge if path.stem == "__init__" else f"{bridge}.{path.stem}"] = path
    return out


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The dotted name an ``from X import ...`` in ``rlarchive.<module>`` reads from (``module``: a node name)."""
    if node.level == 0:
        return node.module or ""
    package = f"{PACKAGE}.{module}" if module in BRIDGES else f"{PACKAGE}.{module}".rsplit(".", 1)[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
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
                if source in _PACKAGES or (source == "rlarchive" and not alias.name.startswith("_")):
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
                if source in _PACKAGES or source == "rlarchive":
                    names[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("rlarchive") and alias.asname:
                    names[alias.asname] = alias.name
    return names


#: the packages whose ``from P import x`` names a module x
_PACKAGES = {f"{PACKAGE}.{b}" for b in BRIDGES}


def _private(module: str, short: str | None, name: str) -> bool:
    """Whether ``name``, taken by ``module`` from the bridge module ``short`` (None: from outside the bridges), is private."""
    return name.startswith("_") and not name.startswith("__")


def _node(target: str, nodes: dict) -> str | None:
    """The bridge module (node name) a dotted name imports, or None (outside the bridges)."""
    parts = target.split(".")
    for n in (3, 2):
        if len(parts) >= n and ".".join(parts[1:n]) in nodes:
            return ".".join(parts[1:n])
    return None


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    """(bridge module -> the bridge modules it imports; private names used across modules, as messages)."""
    graph: dict[str, set[str]] = {}
    private: list[str] = []
    nodes = _bridge_modules()
    for module, path in nodes.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges = graph.setdefault(module, set())
        for target, name, line in _imports(module, tree):
            short = _node(target, nodes)
            if short is not None and short != module:
                edges.add(short)
            if _private(module, short, name):
                private.append(f"{module}:{line} imports {name} from {target}")
        aliases = _module_aliases(module, tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                attr = node.attr
                target = aliases[node.value.id]
                short = _node(target, nodes)
                if _private(module, short, attr):
                    private.append(f"{module}:{node.lineno} uses {target}.{attr}")
    return graph, private


def test_no_import_cycle_among_bridge_modules():
    graph, _ = _graph()
    assert "sb3" in graph and "sb3.model_zip" in graph["sb2"], "the walk found the modules and their imports"
    assert import_cycle(graph) == [], " -> ".join(import_cycle(graph))


def test_no_private_name_used_across_modules():
    _, private = _graph()
    assert private == [], "\n".join(private)


def test_the_walk_sees_cycles_and_private_names(tmp_path):
    """The checks can fail: a cycle made of lazy imports and a private name are found."""
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert import_cycle({"a": {"b"}, "b": set()}) == []
    tree = ast.parse(
        "def f():\n    from .model_zip import _type_name\n    from . import keys\n    return keys._DATA_KEYS\n"
    )
    assert ("rlarchive.sb3.model_zip", "_type_name", 2) in _imports("sb3.x", tree)
    assert ("rlarchive.sb3.keys", "", 3) in _imports("sb3.x", tree)
    assert _module_aliases("sb3.x", tree) == {"keys": "rlarchive.sb3.keys"}
    assert _node("rlarchive.sb3.keys", _bridge_modules()) == "sb3.keys"
    assert _node("rlarchive.sb3", _bridge_modules()) == "sb3" and _node("rlarchive.values", _bridge_modules()) is None


def test_the_facade_keeps_the_public_api():
    """``rlarchive.sb3`` gives every name of ``__all__``, the same objects as the modules that define them."""
    import rlarchive.sb3
    from rlarchive import sb3
    from rlarchive.sb3 import exporting as sb3_export
    from rlarchive.sb3 import importing as sb3_import
    from rlarchive.sb3 import keys as sb3_keys
    from rlarchive.sb3 import loading as sb3_load
    from rlarchive.sb3 import model_zip as sb3_zip
    from rlarchive.sb3 import parts as sb3_parts
    from rlarchive.sb3 import policy_file as sb3_policy_file
    from rlarchive.sb3 import saving as sb3_save
    from rlarchive.sb3 import switch as sb3_switch

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
