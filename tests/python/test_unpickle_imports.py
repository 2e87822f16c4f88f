"""The restricted unpickler's modules and the replay buffer bridge, split: the modules are there, their facades
keep their public names, and each reads in one sitting. (No import cycle and no private name across modules:
test_imports.py, over every module of the package.)"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "python"
PACKAGE = "rlarchive"
#: (folder, file pattern): the unpickler's modules and the replay buffer bridge's
PATTERNS = (("unpickle", "*.py"), ("sb3", "replay_buffer*.py"))

#: The public API of ``rlarchive.unpickle`` before it became a facade.
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
#: The public API of ``rlarchive.sb3.replay_buffer`` before the split.
REPLAY_BUFFER_API = (
    "SB3_CLASSES",
    "capture",
    "describe",
    "read_value",
    "restore",
    "build_buffer",
    "write_pickle",
    "read_pickle",
    "copy_on_write_resolver",
    "infos_value",
    "transitions",
)


def _modules() -> dict:
    """Module name -> source of the modules this test walks."""
    out = {}
    for folder, pattern in PATTERNS:
        for p in sorted((ROOT / PACKAGE / folder).glob(pattern)):
            name = f"{PACKAGE}.{folder}" if p.stem == "__init__" else f"{PACKAGE}.{folder}.{p.stem}"
            out[name] = p.read_text(encoding="utf-8")
    return out


def test_the_modules_are_the_split_ones():
    names = set(_modules())
    for name in (
        "unpickle",
        "unpickle.machine",
        "unpickle.standins",
        "unpickle.neutral",
        "unpickle.recorded",
        "unpickle.pickler",
        "sb3.replay_buffer",
        "sb3.replay_buffer_import",
    ):
        assert f"{PACKAGE}.{name}" in names


@pytest.mark.parametrize("module", ["rlarchive.unpickle"])
def test_the_unpickle_facade_keeps_its_public_names(module):
    import importlib

    mod = importlib.import_module(module)
    for name in UNPICKLE_API:
        assert name in mod.__all__ and getattr(mod, name) is not None, name
    # the stand-ins other modules test against are public
    assert {"Array", "Scalar", "Function"} <= set(mod.__all__)


def test_the_replay_buffer_facade_keeps_its_public_names():
    from rlarchive.sb3 import replay_buffer

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
