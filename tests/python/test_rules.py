"""spec/rules.json maps every MUST of the specification to the vectors (or tests) that catch a reader breaking it."""

import json
import os
import re

from suite import ROOT


def _musts(path: str = os.path.join("spec", "rlarchive.md")) -> list:
    """(section, sentence) of every sentence with MUST in a specification, before any change log (the split rules.json uses)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    text = text.split("## Change log")[0]
    out, section = [], None
    for para in re.split(r"\n\s*\n", text):
        m = re.match(r"#{2,3} ((?:A\.)?\d+(?:\.\d+)?)\.? ", para)
        if m:
            section = m.group(1)
            continue
        if section is None:
            continue
        for s in re.split(r"(?<=[.:;])\s+(?=[A-Z`(-])", " ".join(para.split())):
            if "MUST" in s:
                out.append((section, s))
    return out


def _rules(key: str = "rules") -> list:
    with open(os.path.join(ROOT, "spec", "rules.json"), encoding="utf-8") as f:
        return json.load(f)[key]


def test_every_must_of_the_spec_is_mapped_in_order():
    musts, rules = _musts(), _rules()
    assert [(r["id"].split("/")[0].lstrip("§"), r["rule"]) for r in rules] == [(s, t[:200]) for s, t in musts], (
        "spec/rules.json is stale: a MUST was added, removed or reworded"
    )


def test_every_must_of_each_extension_is_mapped_in_order():
    got = [(r["id"].split(" §")[0], r["id"].split(" §")[1].split("/")[0], r["rule"]) for r in _rules("extension_rules")]
    want = []
    for name in sorted(os.listdir(os.path.join(ROOT, "spec", "extensions"))):
        want += [(name[:-3], s, t[:200]) for s, t in _musts(os.path.join("spec", "extensions", name))]
    assert got == want, "the extension_rules of spec/rules.json are stale"


def test_every_must_of_the_normative_annex_a_is_mapped_in_order():
    got = [(r["id"].split(" ")[1].split("/")[0], r["rule"]) for r in _rules("annex_rules")]
    assert got == [(s, t[:200]) for s, t in _musts(os.path.join("spec", "annex-a-conformance.md"))], (
        "the annex_rules of spec/rules.json are stale"
    )
    with open(os.path.join(ROOT, "spec", "annex-a-conformance.md"), encoding="utf-8") as f:
        assert f.readline().startswith("# Annex A (normative)"), "Annex A states requirements: it is normative"


def test_every_must_of_the_metadata_keys_is_mapped_in_order():
    got = [(r["id"].split(" §")[1].split("/")[0], r["rule"]) for r in _rules("metadata_rules")]
    assert got == [(s, t[:200]) for s, t in _musts(os.path.join("spec", "metadata.md"))], (
        "the metadata_rules of spec/rules.json are stale"
    )


def test_every_rule_names_existing_vectors_or_tests():
    with open(os.path.join(ROOT, "test-vectors", "index.json"), encoding="utf-8") as f:
        ids = {c["id"] for c in json.load(f)["cases"]}
    for r in _rules() + _rules("extension_rules") + _rules("annex_rules") + _rules("metadata_rules"):
        assert r["vectors"] or r.get("tests"), r["id"]
        assert set(r["vectors"]) <= ids, (r["id"], set(r["vectors"]) - ids)
        for t in r.get("tests", []):
            assert os.path.exists(os.path.join(ROOT, t)), (r["id"], t)
