"""spec/tables.json is the one source of the shared tables: every generated copy is current, and the readers use it."""
import json
import os
import subprocess
import sys

from suite import ROOT

import rlarchive.dtypes
import rlarchive.errors
import rlarchive.limits


def _tables() -> dict:
    with open(os.path.join(ROOT, "spec", "tables.json"), encoding="utf-8") as f:
        return json.load(f)


def test_no_generated_file_is_stale():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "spec", "tables.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_python_reader_uses_the_tables():
    t = _tables()
    assert rlarchive.errors.CATALOGUE == {e["code"]: e["severity"] for e in t["errors"]}
    assert rlarchive.errors.API_CODES == {e["code"] for e in t["api_errors"]}
    assert [(d.code, d.size, d.alignment, d.kind) for d in rlarchive.dtypes.DTYPES.values()] == [(d["code"], d["size"], d["alignment"], d["kind"]) for d in t["dtypes"]]
    assert {x["name"]: getattr(rlarchive.limits, x["name"]) for x in t["limits"]} == {x["name"]: x["value"] for x in t["limits"]}


def test_the_javascript_reader_uses_the_tables():
    import shutil

    import pytest

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = (
        f"import * as m from {json.dumps('file://' + os.path.join(ROOT, 'reader-js', 'src', 'index.js'))};"
        "console.log(JSON.stringify({catalogue: m.CATALOGUE, api: m.API_CODES, "
        "dtypes: Object.values(m.DTYPES).map((d) => [d.code, d.size, d.alignment, d.kind]), limits: Object.fromEntries(Object.entries(m.limits).filter(([, v]) => typeof v === 'number'))}));"
    )
    r = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got, t = json.loads(r.stdout), _tables()
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
    r = subprocess.run([sys.executable, os.path.join(ROOT, "spec", "policy_ops.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_python_policy_checker_uses_the_registry():
    import rlarchive.policy_description as checker
    import rlarchive.policy_ops as ops

    r = _registry()
    assert ops.OPERATIONS == _by_name(r["operations"]) and ops.ACTIVATIONS == _by_name(r["activations"]) and ops.HEADS == _by_name(r["heads"])
    assert {x["name"]: getattr(ops, x["name"]) for x in r["limits"]} == {x["name"]: x["value"] for x in r["limits"]}
    assert ops.ACTIVATION_DEFAULTS == {a["name"]: {p["name"]: p["default"] for p in a["parameters"]} for a in r["activations"]}
    assert checker.OPERATIONS is ops.OPERATIONS and checker.HEADS is ops.HEADS
    assert checker.MAX_POLICY_OPERATIONS is ops.MAX_POLICY_OPERATIONS and checker.MAX_POLICY_VALUE_ELEMENTS is ops.MAX_POLICY_VALUE_ELEMENTS
    assert {fn: set(p) for fn, p in checker.ACTIVATION_PARAMETERS.items()} == {fn: set(d) for fn, d in ops.ACTIVATION_DEFAULTS.items()}
    with open(os.path.join(ROOT, "python", "rlarchive", "policy_description.py"), encoding="utf-8") as f:
        source = f.read()
    for name in ("leaky_relu", "hardsigmoid", "softsign", "mish"):  # no hand-written table of activations
        assert name not in source, name


def test_the_javascript_policy_checker_uses_the_registry():
    import shutil

    import pytest

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    src = os.path.join(ROOT, "reader-js", "src")
    script = (
        f"import * as ops from {json.dumps('file://' + os.path.join(src, 'policy_ops.js'))};"
        f"import * as checker from {json.dumps('file://' + os.path.join(src, 'policy_description.js'))};"
        "console.log(JSON.stringify({operations: ops.OPERATIONS, activations: ops.ACTIVATIONS, heads: ops.HEADS, defaults: ops.ACTIVATION_DEFAULTS,"
        " limits: Object.fromEntries(Object.entries(ops).filter(([, v]) => typeof v === 'number')),"
        " same: checker.OPERATIONS === ops.OPERATIONS && checker.HEADS === ops.HEADS && checker.MAX_POLICY_OPERATIONS === ops.MAX_POLICY_OPERATIONS,"
        " parameters: Object.fromEntries(Object.entries(checker.ACTIVATION_PARAMETERS).map(([fn, p]) => [fn, Object.keys(p)]))}));"
    )
    r = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got, reg = json.loads(r.stdout), _registry()
    assert got["operations"] == _by_name(reg["operations"]) and got["activations"] == _by_name(reg["activations"]) and got["heads"] == _by_name(reg["heads"])
    assert got["limits"] == {x["name"]: x["value"] for x in reg["limits"]}
    assert got["defaults"] == {a["name"]: {p["name"]: p["default"] for p in a["parameters"]} for a in reg["activations"]}
    assert got["same"] is True
    assert got["parameters"] == {a["name"]: [p["name"] for p in a["parameters"]] for a in reg["activations"]}
    with open(os.path.join(src, "policy_description.js"), encoding="utf-8") as f:
        source = f.read()
    for name in ("leaky_relu", "hardsigmoid", "softsign", "mish"):
        assert name not in source, name
