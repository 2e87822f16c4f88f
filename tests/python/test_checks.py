"""spec/checks.json, the table that locates every issue: complete, consistent, and what the vectors are judged by."""

import json
import os

from suite import ROOT


def _load(*path: str) -> dict:
    with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
        return json.load(f)


CHECKS = _load("spec", "checks.json")
CODES = {e["code"] for e in _load("spec", "tables.json")["errors"]}


def test_every_error_code_has_a_check_or_says_why_not():
    used = {c["code"] for c in CHECKS["checks"]}
    assert used <= CODES, used - CODES
    assert CODES - used == set(CHECKS["no_check"]), "a code without a check must say why in no_check (and only then)"


def test_checks_are_unique_in_processing_order_and_use_defined_anchors():
    ids = [c["id"] for c in CHECKS["checks"]]
    assert len(ids) == len(set(ids))
    steps = [c["step"] for c in CHECKS["checks"]]
    assert steps == sorted(steps) and set(steps) <= set(range(1, 12)), "the rows follow the steps of §11.1"
    anchors = CHECKS["anchors"]
    for c in CHECKS["checks"]:
        assert c["member"] in anchors["member"], c["id"]
        for kind in ("pointer", "offset"):
            for a in c[kind] or []:
                assert a is None or a in anchors[kind], (c["id"], kind, a)
        assert (
            c["pointer"] is None or c["offset"] is None or c["code"].startswith("ST_") or c["id"].startswith("st-")
        ), (
            "only a safetensors header entry has both a pointer and an offset",
            c["id"],
        )


def test_every_check_is_broken_by_a_vector_and_every_issue_names_its_check():
    index = _load("test-vectors", "index.json")
    by_id = {c["id"]: c for c in CHECKS["checks"]}
    broken = set()
    for case in index["cases"]:
        issues = case.get("issues") or []
        assert len(case.get("checks", [])) == len(issues), case["id"]
        for check_id, issue in zip(case.get("checks", []), issues):
            assert by_id[check_id]["code"] == issue["code"], case["id"]
            broken.add(check_id)
    assert set(by_id) - broken == set(), "checks no vector breaks"


def test_each_rule_names_the_checks_its_invalid_vectors_break():
    """spec/rules.json gives, for each rule, the checks (code and location) of its invalid vectors, in table order."""
    index = {c["id"]: c for c in _load("test-vectors", "index.json")["cases"]}
    order = [c["id"] for c in CHECKS["checks"]]
    rules = _load("spec", "rules.json")
    for key in ("rules", "extension_rules", "annex_rules", "metadata_rules"):
        for rule in rules[key]:
            want: list = []
            for v in rule["vectors"]:
                want += [c for c in index[v].get("checks", []) if c not in want]
            assert rule["checks"] == sorted(want, key=order.index), (rule["id"], "stale: recompute from the vectors")


def test_the_table_lists_the_directory_checks_in_the_order_the_readers_apply_them():
    """A file breaking both directory checks of step 2 gets the code of the one the table lists first
    (§2.2, §11.1 step 2: the size, then the bounds), in the reference reader and in the vectors."""
    import struct

    import rlarchive

    path = os.path.join(ROOT, "test-vectors", "invalid", "decide-directory-size-before-bounds.rlarchive")
    with open(path, "rb") as f:
        raw = f.read()
    eocd = raw.rfind(b"PK\x05\x06")
    count, size, offset = struct.unpack_from("<HII", raw, eocd + 10)
    assert size > 329 * count and offset + size > len(raw), "the file breaks directory-size and directory-bounds"
    code = None
    try:
        with rlarchive.open(path) as ar:
            ar.dump()
    except rlarchive.RlarchiveError as e:
        code = e.code
    by_id = {c["id"]: c for c in CHECKS["checks"]}
    order = [c["id"] for c in CHECKS["checks"]]
    first = min(("directory-size", "directory-bounds"), key=order.index)
    assert by_id[first]["code"] == code == "ZIP_CD_INVALID"
