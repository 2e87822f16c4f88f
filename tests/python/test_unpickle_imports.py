"""The restricted unpickler's modules and the replay buffer bridge: no import cycle, no private name across modules.

The modules are read as source (nothing is imported to walk them): every
import, at the top of a module or inside a function, counts. A name that
starts with an underscore (``from .x import _y``, or ``x._y`` on a module
imported as ``x``) must not be taken from another rlarchive module.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "python"
INTEROP = ROOT / "rlarchive" / "interop"
PACKAGE = "rlarchive.interop"
PATTERNS = ("unpickle*.py", "recorded.py", "pickler.py", "replay_buffer*.py")

#: The public API of ``rlarchive.interop.unpickle`` (and its alias ``rlarchive.unpickle``) before it became a facade.
UNPICKLE_API = (
    "NotNeutral",
    "RestrictedUnpickler",
    "GlobalName",
    "restricted_loads",
    "to_neutral",
    "decode",
    "CONSTRUCTORS",
    "Unknown",
    "describe_globals",
    "pickled_type_name",
)
#: The public API of ``rlarchive.interop.replay_buffer`` before the split.
REPLAY_BUFFER_API = (
    "SB3_CLASSES",
    "capture",
    "describe",
    "read_value",
    "restore",
    "build_buffer",
    "write_pickle",
    "read_pickle",
    "check_spaces",
    "check_value",
    "copy_on_write_resolver",
    "infos_value",
    "transitions",
)


def _modules() -> dict:
    """Module name -> source of the modules this test walks."""
    files = sorted({p for pattern in PATTERNS for p in INTEROP.glob(pattern)})
    return {f"{PACKAGE}.{p.stem}": p.read_text(encoding="utf-8") for p in files}


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute name of the module a ``from ... import`` reads from."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")[: -node.level]
    return ".".join(parts + ([node.module] if node.module else []))


def _is_module(name: str) -> bool:
    """Whether ``name`` is a module or package of the source tree (not a name inside one)."""
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports(module: str, source: str, known: set) -> tuple:
    """(the rlarchive modules ``module`` imports, the private names it takes from them)."""
    deps, private, aliases = set(), [], {}
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("rlarchive"):
                    deps.add(a.name)
                    aliases[a.asname or a.name.split(".")[0]] = a.name
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node)
            if not base.startswith("rlarchive"):
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in known or _is_module(sub):
                    deps.add(sub)  # a module of the package, imported by name
                    aliases[a.asname or a.name] = sub
                    continue
                deps.add(base)
                if a.name.startswith("_"):
                    private.append(f"{module} imports {a.name} from {base}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            if node.attr.startswith("_") and not node.attr.startswith("__"):
                private.append(f"{module} uses {node.value.id}.{node.attr} of {aliases[node.value.id]}")
    return deps, private


def _cycle(graph: dict) -> list:
    """One import cycle of ``graph`` (module -> modules it imports), or []."""
    state: dict = {}
    path: list = []

    def visit(m: str) -> list:
        state[m] = "open"
        path.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == "open":
                return path[path.index(d) :] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        state[m] = "done"
        path.pop()
        return []

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return []


def _walk(sources: dict) -> tuple:
    known = set(sources)
    graph, private = {}, []
    for name, source in sources.items():
        deps, names = _imports(name, source, known)
        graph[name] = {d for d in deps if d in known and d != name}
        private += names
    return graph, private


def test_the_walk_finds_cycles_and_private_names():
    """The checks below can fail: a made-up pair of modules with both faults is caught."""
    sources = {
        f"{PACKAGE}.unpickle_a": "from .unpickle_b import _hidden\n",
        f"{PACKAGE}.unpickle_b": "def f():\n    from . import unpickle_a as a\n    return a._other\n",
    }
    graph, private = _walk(sources)
    assert _cycle(graph)
    assert len(private) == 2 and "_hidden" in private[0] and "a._other" in private[1]


def test_the_modules_are_the_split_ones():
    names = set(_modules())
    for stem in (
        "unpickle",
        "unpickle_machine",
        "unpickle_standins",
        "unpickle_neutral",
        "recorded",
        "pickler",
        "replay_buffer",
        "replay_buffer_import",
    ):
        assert f"{PACKAGE}.{stem}" in names


def test_no_cycle_among_the_modules():
    graph, _ = _walk(_modules())
    assert _cycle(graph) == []


def test_no_private_name_taken_from_another_module():
    _, private = _walk(_modules())
    assert private == []


@pytest.mark.parametrize("module", ["rlarchive.interop.unpickle", "rlarchive.unpickle"])
def test_the_unpickle_facade_keeps_its_public_names(module):
    import importlib

    mod = importlib.import_module(module)
    for name in UNPICKLE_API:
        assert name in mod.__all__ and getattr(mod, name) is not None, name
    # the stand-ins other modules test against are public
    assert {"Array", "Scalar", "Function"} <= set(mod.__all__)


def test_the_replay_buffer_facade_keeps_its_public_names():
    from rlarchive.interop import replay_buffer

    assert set(REPLAY_BUFFER_API) <= set(replay_buffer.__all__)
    for name in REPLAY_BUFFER_API:
        assert callable(getattr(replay_buffer, name)) or name == "SB3_CLASSES", name


def test_each_module_reads_in_one_sitting():
    """No module over 600 lines, no function over 80 (the size a reviewer reads at once)."""
    long = []
    for name, source in _modules().items():
        lines = source.count("\n")
        if lines > 600:
            long.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 80:
                long.append(f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert long == []
