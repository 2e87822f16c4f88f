"""What the package needs at run time: NumPy alone. No module of it imports jsonschema (nor the packages
jsonschema brings), and with those packages refused by the import system the package opens, dumps,
validates and writes archives and loads the vectors' index as it does with them installed; the readers
check with their own rules (spec §11.1 step 6), the JSON Schemas of schemas/ are for documentation and
the tests."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

from suite import ROOT

PACKAGE = os.path.join(ROOT, "python", "rlarchive")
VECTORS = os.path.join(ROOT, "test-vectors")
#: jsonschema and what it depends on.
SCHEMA_PACKAGES = ("jsonschema", "jsonschema_specifications", "referencing", "attrs", "attr", "rpds")

#: Run in a fresh interpreter: a finder first on sys.meta_path refuses the schema packages and records every
#: time one is asked for (an ``import`` inside a ``try`` is seen too), then the package does its work.
PROBE = r"""
import json, os, sys, tempfile
BLOCKED = set(json.loads(sys.argv[1]))
asked = []

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            asked.append(name)
            raise ImportError(f"{name} is refused in this test")
        return None

sys.meta_path.insert(0, Refuse())
import rlarchive
from rlarchive.conformance import load_cases

vectors = sys.argv[2]
cases = load_cases(vectors)
out = {"cases": len(cases), "opened": 0, "rejected": {}, "valid_reports": 0}
for c in cases:
    if c.get("request_file") or c["expect"]["result"] == "actions":
        continue
    path = os.path.join(vectors, c["file"])
    if path.endswith(".gz"):
        continue
    try:
        with rlarchive.open(path) as ar:
            ar.dump()
        out["opened"] += 1
    except rlarchive.RlarchiveError as e:
        out["rejected"][c["id"]] = e.code
    out["valid_reports"] += rlarchive.validate(path)["valid"]
with tempfile.TemporaryDirectory() as tmp:
    written = os.path.join(tmp, "a.rlarchive")
    rlarchive.save(written, {"x": 1})
    out["written"] = rlarchive.validate(written)["valid"]
out["asked"] = asked
out["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
print(json.dumps(out))
"""


def test_no_module_of_the_package_imports_jsonschema():
    found = []
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "vectors"]
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(folder, f)
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), path)
            for node in ast.walk(tree):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and node.level == 0
                    else []
                )
                found += [
                    f"{os.path.relpath(path, PACKAGE)}:{node.lineno}"
                    for n in names
                    if n.split(".")[0] in SCHEMA_PACKAGES
                ]
    assert found == []


def test_the_package_opens_validates_and_writes_with_jsonschema_refused():
    """Every vector a reader opens opens and every invalid one is refused with its code, with jsonschema and its
    dependencies refused by the import system; none of them is even asked for."""
    r = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(SCHEMA_PACKAGES), VECTORS],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout)
    assert out["asked"] == [] and out["loaded"] == []
    with open(os.path.join(VECTORS, "index.json"), encoding="utf-8") as f:
        cases = [
            c
            for c in json.load(f)["cases"]
            if not c.get("request_file") and c["expect"]["result"] != "actions" and not c["file"].endswith(".gz")
        ]
    assert out["cases"] > len(cases)
    valid = [c for c in cases if c["expect"]["result"] == "dump"]
    invalid = {c["id"]: c["expect"]["code"] for c in cases if c["expect"]["result"] == "error"}
    assert len(valid) > 100 and len(invalid) > 100
    assert out["opened"] == len(valid)
    assert out["rejected"] == invalid
    assert out["valid_reports"] == len(valid)
    assert out["written"] is True
