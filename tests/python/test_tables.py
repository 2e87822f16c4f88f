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
