"""spec/tables.json and spec/policy_ops.json are the one sources of the shared tables: every generated copy is current, and the readers use them."""

import json
import os
import subprocess
import sys
from typing import Any

from suite import ROOT

import rlarchive.dtypes
import rlarchive.errors
import rlarchive.limits


def _tables() -> dict:
    with open(os.path.join(ROOT, "spec", "tables.json"), encoding="utf-8") as f:
        return json.load(f)


def _node_json(script: str) -> Any:
    """What the ES module ``script`` prints as JSON, run by Node (the test is skipped without Node)."""
    import shutil

    import pytest

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    r = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_no_generated_file_is_stale():
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "spec", "tables.py"), "--check"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_python_reader_uses_the_tables():
    t = _tables()
    assert rlarchive.errors.CATALOGUE == {e["code"]: e["severity"] for e in t["errors"]}
    assert rlarchive.errors.API_CODES == {e["code"] for e in t["api_errors"]}
    assert [(d.code, d.size, d.alignment, d.kind) for d in rlarchive.dtypes.DTYPES.values()] == [
        (d["code"], d["size"], d["alignment"], d["kind"]) for d in t["dtypes"]
    ]
    assert {x["name"]: getattr(rlarchive.limits, x["name"]) for x in t["limits"]} == {
        x["name"]: x["value"] for x in t["limits"]
    }


def test_the_javascript_reader_uses_the_tables():
    script = (
        f"import * as m from {json.dumps('file://' + os.path.join(ROOT, 'reader-js', 'src', 'index.js'))};"
        "console.log(JSON.stringify({catalogue: m.CATALOGUE, api: m.API_CODES, "
        "dtypes: Object.values(m.DTYPES).map((d) => [d.code, d.size, d.alignment, d.kind]), limits: Object.fromEntries(Object.entries(m.limits).filter(([, v]) => typeof v === 'number'))}));"
    )
    got, t = _node_json(script), _tables()
    assert got["catalogue"] == {e["code"]: e["severity"] for e in t["errors"]}
    assert got["api"] == [e["code"] for e in t["api_errors"]]
    assert got["dtypes"] == [[d["code"], d["size"], d["alignment"], d["kind"]] for d in t["dtypes"]]
    assert all(got["limits"][x["name"]] == x["value"] for x in t["limits"])


# -- the portable-policy registry (spec/policy_ops.json, spec/policy_ops.py) ------------------


def _registry() -> dict:
    with open(os.path.join(ROOT, "spec", "policy_ops.json"), encoding="utf-8") as f:
        return json.load(f)


def _by_name(items: list) -> dict:
    return {x["name"]: {k: v for k, v in x.items() if k != "name"} for x in items}


def test_no_generated_policy_table_is_stale():
    r = subprocess.run(
        [sys.executable, os.path.join(ROOT, "spec", "policy_ops.py"), "--check"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_python_policy_checker_uses_the_registry():
    import rlarchive.extensions.policy.description as checker
    import rlarchive.extensions.policy.ops as ops

    r = _registry()
    assert (
        ops.OPERATIONS == _by_name(r["operations"])
        and ops.ACTIVATIONS == _by_name(r["activations"])
        and ops.HEADS == _by_name(r["heads"])
    )
    assert {x["name"]: getattr(ops, x["name"]) for x in r["limits"] + r["constants"]} == {
        x["name"]: x["value"] for x in r["limits"] + r["constants"]
    }
    assert ops.ACTIVATION_DEFAULTS == {
        a["name"]: {p["name"]: p["default"] for p in a["parameters"]} for a in r["activations"]
    }
    assert checker.OPERATIONS is ops.OPERATIONS and checker.HEADS is ops.HEADS
    assert (
        checker.MAX_POLICY_OPERATIONS is ops.MAX_POLICY_OPERATIONS
        and checker.MAX_POLICY_VALUE_ELEMENTS is ops.MAX_POLICY_VALUE_ELEMENTS
    )
    assert {fn: set(p) for fn, p in checker.ACTIVATION_PARAMETERS.items()} == {
        fn: set(d) for fn, d in ops.ACTIVATION_DEFAULTS.items()
    }
    with open(
        os.path.join(ROOT, "python", "rlarchive", "extensions", "policy", "description.py"), encoding="utf-8"
    ) as f:
        source = f.read()
    for name in ("leaky_relu", "hardsigmoid", "softsign", "mish"):  # no hand-written table of activations
        assert name not in source, name


def test_the_javascript_policy_checker_uses_the_registry():
    src = os.path.join(ROOT, "reader-js", "src")
    script = (
        f"import * as ops from {json.dumps('file://' + os.path.join(src, 'extensions', 'policy', 'ops.js'))};"
        f"import * as checker from {json.dumps('file://' + os.path.join(src, 'extensions', 'policy', 'description.js'))};"
        "console.log(JSON.stringify({operations: ops.OPERATIONS, activations: ops.ACTIVATIONS, heads: ops.HEADS, defaults: ops.ACTIVATION_DEFAULTS,"
        " limits: Object.fromEntries(Object.entries(ops).filter(([, v]) => typeof v === 'number')),"
        " same: checker.OPERATIONS === ops.OPERATIONS && checker.HEADS === ops.HEADS && checker.MAX_POLICY_OPERATIONS === ops.MAX_POLICY_OPERATIONS,"
        " parameters: Object.fromEntries(Object.entries(checker.ACTIVATION_PARAMETERS).map(([fn, p]) => [fn, Object.keys(p)]))}));"
    )
    got, reg = _node_json(script), _registry()
    assert (
        got["operations"] == _by_name(reg["operations"])
        and got["activations"] == _by_name(reg["activations"])
        and got["heads"] == _by_name(reg["heads"])
    )
    assert got["limits"] == {x["name"]: x["value"] for x in reg["limits"] + reg["constants"]}
    assert got["defaults"] == {
        a["name"]: {p["name"]: p["default"] for p in a["parameters"]} for a in reg["activations"]
    }
    assert got["same"] is True
    assert got["parameters"] == {a["name"]: [p["name"] for p in a["parameters"]] for a in reg["activations"]}
    with open(os.path.join(src, "extensions", "policy", "description.js"), encoding="utf-8") as f:
        source = f.read()
    for name in ("leaky_relu", "hardsigmoid", "softsign", "mish"):
        assert name not in source, name


# -- the registry is the only source of the names of operations, activations and heads ----------------


def _registry_names() -> set:
    r = _registry()
    return {x["name"] for key in ("operations", "activations", "heads") for x in r[key]}


def _policy_sources() -> list:
    """Every hand-written module of both readers that evaluates, checks or exports a portable policy (the generated policy_ops excluded)."""
    import glob

    py = sorted(glob.glob(os.path.join(ROOT, "python", "rlarchive", "extensions", "policy", "*.py")))
    js = sorted(glob.glob(os.path.join(ROOT, "reader-js", "src", "extensions", "policy", "*.js")))
    generated = ("ops.py", "ops.js", "gemm-wasm.js")  # the registry itself; the WebAssembly bytes
    return [p for p in py + js if os.path.basename(p) not in generated]


def _python_copies(source: str, names: set) -> list:
    """Hand-written copies of the registry's names in Python source: a list, tuple, set or dict literal holding 3 or more of
    them (unless it is the table of ``implementations(TABLE, {...}, what)``, which is checked against the registry when the
    module is imported), or 3 or more of them compared with one expression in one function (an if/elif switch)."""
    import ast

    tree = ast.parse(source)
    exempt = {
        id(call.args[1])
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "implementations" and len(call.args) > 1
    }
    found = []
    for n in ast.walk(tree):
        items = (
            n.keys + n.values
            if isinstance(n, ast.Dict)
            else n.elts
            if isinstance(n, (ast.List, ast.Tuple, ast.Set))
            else []
        )
        held = {x.value for x in items if isinstance(x, ast.Constant) and x.value in names}
        if len(held) >= 3 and id(n) not in exempt:
            found.append(f"line {n.lineno}: a literal of {sorted(held)}")
    for fn in [t for t in ast.walk(tree) if isinstance(t, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))] + [
        tree
    ]:
        subjects: dict = {}
        for c in ast.walk(fn):
            if isinstance(c, ast.Compare) and all(isinstance(o, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for o in c.ops):
                consts = [x for x in c.comparators if isinstance(x, ast.Constant)]
                consts += [
                    e
                    for x in c.comparators
                    if isinstance(x, (ast.Tuple, ast.List, ast.Set))
                    for e in x.elts
                    if isinstance(e, ast.Constant)
                ]
                subjects.setdefault(ast.dump(c.left), set()).update(x.value for x in consts if x.value in names)
        found += [
            f"line {getattr(fn, 'lineno', 1)}: {sorted(held)} compared with one value"
            for held in subjects.values()
            if len(held) >= 3
        ]
    return found


def _js_tokens(source: str) -> list:
    """(kind, text) tokens of JavaScript: 'str' (quotes and template text), 'id', 'punct'; comments dropped (enough for these modules: no regular expressions)."""
    import re

    out, i, n, templates = [], 0, len(source), []  # templates: brace depth at each ${ of an open template literal
    depth = 0
    word = re.compile(r"[A-Za-z_$][\w$]*|\d[\w.]*")
    while i < n:
        ch = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i) if source.find("\n", i) >= 0 else n
        elif source.startswith("/*", i):
            i = source.index("*/", i) + 2
        elif ch in "'\"":
            j = i + 1
            while source[j] != ch:
                j += 2 if source[j] == "\\" else 1
            out.append(("str", source[i + 1 : j]))
            i = j + 1
        elif ch == "`" or (ch == "}" and templates and templates[-1] == depth):
            if ch == "}":
                templates.pop()
            j = i + 1
            while source[j] != "`" and not source.startswith("${", j):
                j += 2 if source[j] == "\\" else 1
            out.append(("str", source[i + 1 : j]))
            if source.startswith("${", j):
                templates.append(depth)
                i = j + 2
            else:
                i = j + 1
        elif ch.isspace():
            i += 1
        elif word.match(source, i):
            m = word.match(source, i)
            out.append(("id", m.group()))
            i = m.end()
        else:
            three = source[i : i + 3]
            op = (
                three
                if three in ("===", "!==")
                else source[i : i + 2]
                if source[i : i + 2] in ("==", "!=", "=>", "?.", "??", "&&", "||")
                else ch
            )
            depth += {"{": 1, "}": -1}.get(op, 0)
            out.append(("punct", op))
            i += len(op)
    return out


def _js_copies(source: str, names: set) -> list:
    """The JavaScript counterpart of :func:`_python_copies`: an object or array literal holding 3 or more of the names (as
    strings, keys or shorthand properties) unless it is the table of ``implementations(TABLE, {...}, what)``; 3 or more of
    them compared with one expression (``x === 'name'``, ``case 'name':``) in one module."""
    tokens = _js_tokens(source)
    found, stack, subjects = [], [], {}
    for k, (kind, text) in enumerate(tokens):
        prev = tokens[k - 1] if k else ("punct", "")
        nxt = tokens[k + 1] if k + 1 < len(tokens) else ("punct", "")
        if text in ("{", "[", "(") and kind == "punct":
            callee = prev[1] if prev[0] == "id" else None
            # the table of implementations(TABLE, {...}), also inside a JSDoc cast's parentheses: ( /** @type */ ({...}))
            outer = [entry for entry in stack if not (entry[0] == "(" and entry[1] is None)]
            exempt = text == "{" and bool(outer) and outer[-1][0] == "(" and outer[-1][1] == "implementations"
            stack.append((text, callee, set(), exempt))
        elif text in ("}", "]", ")") and kind == "punct":
            opener, _, held, exempt = stack.pop()
            if opener != "(" and len(held) >= 3 and not exempt:
                found.append(f"a literal of {sorted(held)}")
        elif (
            stack
            and text in names
            and (kind == "str" or (stack[-1][0] == "{" and prev[1] in ("{", ",") and nxt[1] in (":", ",", "}")))
        ):
            stack[-1][2].add(text)
        if kind == "str" and text in names and (prev[1] in ("===", "!==", "==", "!=", "case")):
            j, subject = k - 2, []
            while j >= 0 and (tokens[j][0] == "id" or tokens[j][1] in (".", "?.")) and prev[1] != "case":
                subject.insert(0, tokens[j][1])
                j -= 1
            subjects.setdefault("".join(subject) or "case", set()).add(text)
    found += [f"{sorted(held)} compared with {subject}" for subject, held in subjects.items() if len(held) >= 3]
    return found


def test_the_scans_find_a_copy_of_the_names():
    names = _registry_names()
    assert _python_copies('KINDS = ("linear", "conv2d", "lstm")\n', names)
    assert _python_copies(
        'def f(op):\n    if op == "linear":\n        pass\n    elif op in ("conv2d", "lstm"):\n        pass\n', names
    )
    assert not _python_copies('T = implementations(OPERATIONS, {"linear": 1, "conv2d": 2, "lstm": 3}, "x")\n', names)
    assert _js_copies("const F = { linear, conv2d: 1, 'lstm': 2 };", names)
    assert _js_copies("const F = ['relu', 'tanh', `${x}`, 'elu'];", names)
    assert _js_copies("if (op === 'linear') a(); else if (op === 'conv2d') b(); else if (op === 'lstm') c();", names)
    assert _js_copies("switch (op) { case 'argmax': break; case 'box': break; case 'bernoulli': break; }", names)
    assert not _js_copies(
        "const F = implementations(OPERATIONS, { linear, conv2d: (x) => { return x; }, lstm }, 'x');", names
    )
    assert not _js_copies("const F = implementations(OPERATIONS, /** @type {T} */ ({ linear, conv2d, lstm }));", names)
    assert _js_copies("const F = f(/** @type {T} */ ({ linear, conv2d, lstm }));", names)
    assert not _js_copies("const s = `a ${b ? `linear ${c}` : 'conv2d'} lstm`; const o = { a: 'linear' };", names)


def test_the_registry_is_the_only_source_of_the_names():
    """No module of either reader that evaluates, checks or exports a policy restates the registry's names of operations,
    activations and heads as a table or a switch: they come from policy_ops, and each table of implementations is checked
    against it by ``implementations`` when its module loads."""
    names = _registry_names()
    found = {}
    for path in _policy_sources():
        with open(path, encoding="utf-8") as f:
            source = f.read()
        copies = _python_copies(source, names) if path.endswith(".py") else _js_copies(source, names)
        if copies:
            found[os.path.relpath(path, ROOT)] = copies
    assert len(_policy_sources()) >= 10 and found == {}, found


def test_a_table_of_implementations_must_match_the_registry():
    import pytest

    from rlarchive.extensions.policy.ops import HEADS, implementations

    table = {name: None for name in HEADS}
    assert dict(implementations(HEADS, table, "heads")) == table
    for wrong in ({k: v for k, v in table.items() if k != "box"}, {**table, "softmax": None}):
        with pytest.raises(RuntimeError, match="differ from the registry"):
            implementations(HEADS, wrong, "heads")


def test_a_javascript_table_of_implementations_must_match_the_registry():
    script = (
        f"import {{ HEADS, implementations }} from {json.dumps('file://' + os.path.join(ROOT, 'reader-js', 'src', 'extensions', 'policy', 'ops.js'))};"
        "const table = Object.fromEntries(Object.keys(HEADS).map((k) => [k, null]));"
        "const fails = (t) => { try { implementations(HEADS, t, 'heads'); return false; } catch (e) { return /differ from the registry/.test(e.message); } };"
        "const { box, ...fewer } = table;"
        "console.log(JSON.stringify([Object.keys(implementations(HEADS, table, 'heads')), fails(fewer), fails({ ...table, softmax: null })]));"
    )
    assert _node_json(script) == [[h["name"] for h in _registry()["heads"]], True, True]
