"""Facts written once, and derived everywhere else: the format version and the implementation's name, the
manifest's properties (from the order of spec §5.1's table), the integer dtypes (from the dtype table, in both
languages), the space classes (``spaces.Space``); and no check that ``python -O`` removes, no ``==`` without a
hash that agrees with it."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
from typing import Any

import numpy as np
import pytest
from suite import ROOT

import rlarchive
from rlarchive import manifest, spaces
from rlarchive.dtypes import INTEGER_CODES
from rlarchive.tables import DTYPE_TABLE
from rlarchive.tensors import RawTensor
from rlarchive.version import NAME, VERSION

PACKAGE = os.path.join(ROOT, "python", "rlarchive")


def _sources(folder: str = PACKAGE) -> dict[str, ast.Module]:
    """Path (relative to the package) -> parsed module, for every module under ``folder`` (not vectors/)."""
    out = {}
    for d, dirs, files in os.walk(folder):
        dirs[:] = [x for x in dirs if x != "vectors"]
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                with open(path, encoding="utf-8") as fh:
                    out[os.path.relpath(path, PACKAGE)] = ast.parse(fh.read(), path)
    return out


def _node_json(script: str) -> Any:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    r = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _js_module(rel: str) -> str:
    return json.dumps("file://" + os.path.join(ROOT, "reader-js", "src", rel))


def test_the_format_version_is_written_once_and_major_minor_come_from_it():
    assigned = [
        path
        for path, tree in _sources().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FORMAT_VERSION" for t in node.targets)
    ]
    assert assigned == ["manifest.py"]
    assert rlarchive.FORMAT_VERSION is manifest.FORMAT_VERSION
    assert f"{manifest.MAJOR}.{manifest.MINOR}" == manifest.FORMAT_VERSION
    js = _node_json(
        f"import * as m from {_js_module('manifest.js')}; console.log(JSON.stringify([m.FORMAT_VERSION, m.MAJOR, m.MINOR]))"
    )
    assert js == [manifest.FORMAT_VERSION, manifest.MAJOR, manifest.MINOR]


def test_the_implementations_name_is_written_once_and_used_by_the_writer_validator_and_evaluator(tmp_path):
    literals = [
        path
        for path, tree in _sources().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == NAME
    ]
    assert literals == ["version.py"]
    assert rlarchive.__version__ == VERSION
    path = tmp_path / "a.rlarchive"
    rlarchive.save(path, {"x": 1})
    with rlarchive.open(path) as ar:
        assert ar.producer == {"name": NAME, "version": VERSION}
    assert rlarchive.validate(path)["validator"] == {"name": NAME, "version": VERSION}
    from rlarchive.evaluate import Evaluation

    record = Evaluation("CartPole-v1", [0], [1.0], [1], "2024-01-01T00:00:00Z").to_record()
    assert record["evaluator"] == {"name": NAME, "version": VERSION}


def test_the_javascript_readers_name_is_written_once():
    src = os.path.join(ROOT, "reader-js", "src")
    found = []
    for d, _, files in os.walk(src):
        for f in files:
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                if "'rlarchive-reader'" in fh.read():
                    found.append(os.path.relpath(os.path.join(d, f), src))
    assert found == ["version.js"]
    js = _node_json(f"import * as m from {_js_module('version.js')}; console.log(JSON.stringify([m.NAME, m.VERSION]))")
    with open(os.path.join(ROOT, "reader-js", "package.json"), encoding="utf-8") as f:
        package = json.load(f)
    assert js == [package["name"], package["version"]]


def test_the_manifests_properties_come_from_the_order_of_its_table_in_both_readers():
    assert manifest.KNOWN_PROPERTIES == frozenset(manifest.PROPERTIES)
    assert manifest.REQUIRED == manifest.PROPERTIES[: len(manifest.REQUIRED)]
    js = _node_json(
        f"import * as m from {_js_module('manifest.js')}; console.log(JSON.stringify("
        "[m.PROPERTIES, m.KNOWN_PROPERTIES, m.REQUIRED, m.PRODUCER_PROPERTIES, m.ENTRY_PROPERTIES, "
        "m.MAX_PRODUCER_CHARS, m.UNLISTED]))"
    )
    assert js == [
        list(manifest.PROPERTIES),
        list(manifest.PROPERTIES),
        list(manifest.REQUIRED),
        list(manifest.PRODUCER_PROPERTIES),
        list(manifest.ENTRY_PROPERTIES),
        manifest.MAX_PRODUCER_CHARS,
        list(manifest.UNLISTED),
    ]


def test_the_integer_dtypes_come_from_the_dtype_table_in_both_readers():
    table_order = [code for code, (_, _, kind) in DTYPE_TABLE.items() if kind in ("int", "uint")]
    assert INTEGER_CODES == frozenset(table_order)
    js = _node_json(f"import * as m from {_js_module('dtypes.js')}; console.log(JSON.stringify(m.INTEGER_CODES))")
    assert js == table_order


#: A literal holding this many integer dtype codes restates the dtype table.
_RESTATED = 4
_JS_LIST = re.compile(r"[\[{(][^\[\]{}()]*[\]})]")
_JS_CODE = re.compile(r"'([A-Z][A-Z0-9_]*)'")


def test_no_literal_restates_the_integer_dtypes():
    """The integer dtypes are read from the generated dtype table (tables.py, tables.js), never listed again: no
    list, set, tuple or object literal of the package, the JavaScript reader or its inspector holds four or more."""
    found = []
    for path, tree in _sources().items():
        if path == "tables.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.List, ast.Set, ast.Tuple)):
                codes = {e.value for e in node.elts if isinstance(e, ast.Constant)} & INTEGER_CODES
                if len(codes) >= _RESTATED:
                    found.append(f"python/rlarchive/{path}:{node.lineno}")
    js = os.path.join(ROOT, "reader-js")
    for folder in ("src", "web", "bin"):
        for d, _, files in os.walk(os.path.join(js, folder)):
            for f in files:
                path = os.path.join(d, f)
                if not f.endswith((".js", ".mjs")) or os.path.relpath(path, js) == os.path.join("src", "tables.js"):
                    continue
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                for m in _JS_LIST.finditer(text):
                    if len(set(_JS_CODE.findall(m.group(0))) & INTEGER_CODES) >= _RESTATED:
                        found.append(f"{os.path.relpath(path, ROOT)}:{text.count(chr(10), 0, m.start()) + 1}")
    assert found == []


def test_no_isinstance_restates_the_space_classes():
    """``isinstance(x, spaces.Space)``, not a tuple of the classes ``spaces.Space`` already unites."""
    classes = {c.__name__ for c in (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary, spaces.Text)}
    found = []
    for path, tree in _sources().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
                kinds = node.args[1]
                named = {getattr(e, "attr", getattr(e, "id", None)) for e in getattr(kinds, "elts", [])}
                if len(named & classes) >= 3:
                    found.append(f"{path}:{node.lineno}")
    assert found == []


def test_the_readers_checks_hold_no_assert():
    """``python -O`` removes assert statements: a check of the format's core (the modules at the package's root) or
    of an extension must be an ``if`` that raises."""
    core = {p: t for p, t in _sources().items() if os.sep not in p}
    found = [
        f"{path}:{node.lineno}"
        for path, tree in [*core.items(), *_sources(os.path.join(PACKAGE, "extensions")).items()]
        for node in ast.walk(tree)
        if isinstance(node, ast.Assert)
    ]
    assert len(core) > 30 and found == []


def _pairs() -> list[tuple[Any, Any, Any]]:
    """(a, an equal copy, a different one) of each class with array members."""
    f32 = np.array([0.0, 1.0], np.float32)
    return [
        (
            spaces.Box(f32, f32 + 1, (2,), "F32"),
            spaces.Box(f32.copy(), f32 + 1, (2,), "F32"),
            spaces.Box(f32, f32 + 2, (2,), "F32"),
        ),
        (
            spaces.MultiDiscrete(np.array([2, 3]), np.array([0, 0])),
            spaces.MultiDiscrete(np.array([2, 3]), np.array([0, 0])),
            spaces.MultiDiscrete(np.array([2, 4]), np.array([0, 0])),
        ),
        (
            RawTensor("BF16", (2,), np.array([1, 2], np.uint16)),
            RawTensor("BF16", (2,), np.array([1, 2], np.uint16)),
            RawTensor("BF16", (2,), np.array([1, 3], np.uint16)),
        ),
    ]


@pytest.mark.parametrize("a, same, other", _pairs(), ids=lambda x: type(x).__name__)
def test_equal_spaces_and_tensors_hash_equal(a, same, other):
    assert a == same and hash(a) == hash(same)
    assert a != other
    assert len({a, same, other}) == 2
    assert hash(spaces.Dict((("a", a),))) == hash(spaces.Dict((("a", same),)))  # a space holding it is hashable


def test_every_space_class_defines_a_hash_with_its_equality():
    for cls in [*spaces.Space.__args__, RawTensor]:
        if "__eq__" in vars(cls):
            assert vars(cls).get("__hash__") is not None, f"{cls.__name__} defines == but no hash"
