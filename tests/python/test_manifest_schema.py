"""The readers' own checks of the manifest (spec §11.1 step 6: python/rlarchive/manifest.py,
reader-js/src/manifest.js) held against schemas/manifest-1.0.schema.json, which neither reader reads.

Over the manifest of every test vector and some twenty thousand mutations of them (manifest_corpus.py),
the Python check reports exactly the schema's verdict: no issue where the schema and the two rules of
§5.3 it cannot say find none, else the first of them in the order of §11.2 (the same code at the same
JSON Pointer); and the JavaScript check reports what the Python check reports, case by case.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from functools import cache
from typing import Any

import pytest
from manifest_corpus import corpus, schema_issue, vector_manifests
from suite import ROOT

from rlarchive import RlarchiveError, jsonstrict, manifest

#: Codes of step 6 that come after the structure: a manifest the schema passes may still have them.
AFTER_STRUCTURE = {"EXTENSION_UNDECLARED", "EXTENSION_UNSUPPORTED"}
_VERSION = re.compile(r"(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})")

JS = """
import { readFileSync } from 'node:fs';
const [src, path] = process.argv.slice(1);
const { parseJson } = await import(src + '/json.js');
const { checkManifest } = await import(src + '/manifest.js');
const out = [];
for (const line of readFileSync(path, 'utf8').split('\\n')) {
  if (!line) continue;
  let tree;
  try {
    tree = parseJson(Buffer.from(line, 'base64'), { member: 'manifest.json' });
  } catch (e) {
    out.push(['parse', e.code]);
    continue;
  }
  try {
    checkManifest(tree);
    out.push(null);
  } catch (e) {
    out.push([e.code, e.pointer]);
  }
}
process.stdout.write(JSON.stringify(out));
"""


@cache
def _corpus() -> tuple[bytes, ...]:
    return tuple(corpus())


@cache
def _python(text: bytes) -> list[Any] | None:
    """What the Python reader's step 6 says of a manifest's text: ["parse", code] for a text the JSON rules
    refuse, [code, pointer] for a manifest step 6 refuses, None for one it accepts."""
    try:
        obj = jsonstrict.parse(text)
    except RlarchiveError as e:
        return ["parse", e.code]
    try:
        manifest.check(obj)
    except RlarchiveError as e:
        return [e.code, e.pointer]
    return None


def _version_checked(obj: Any) -> bool:
    """Whether ``format`` and ``format_version``, checked before the structure (spec §5.2), pass."""
    if not isinstance(obj, dict) or obj.get("format") != "rlarchive":
        return False
    m = _VERSION.fullmatch(obj["format_version"]) if isinstance(obj.get("format_version"), str) else None
    return m is not None and int(m.group(1)) == manifest.MAJOR


def _disagreement(text: bytes, got: list[Any] | None) -> str | None:
    """How the Python check's answer for ``text`` differs from the schema's verdict, or None."""
    if got is not None and got[0] == "parse":
        return None  # the JSON rules of §6 come first; the schema never sees such a text
    obj = json.loads(text)
    if not _version_checked(obj):
        if got is None or got[0] not in ("MANIFEST_INVALID", "VERSION_UNSUPPORTED"):
            return f"format or format_version is wrong, the check says {got}"
        if got[0] == "MANIFEST_INVALID" and schema_issue(obj) is None:
            return f"the check says {got}, the schema passes the manifest"
        return None
    want = schema_issue(obj)
    if want is None:
        return None if got is None or got[0] in AFTER_STRUCTURE else f"the schema passes it, the check says {got}"
    return None if got == list(want) else f"the schema says {list(want)}, the check says {got}"


def test_every_golden_vectors_manifest_gets_the_schemas_verdict():
    """The manifest of every vector (each one Python's zipfile reads): the Python check says what the schema says,
    and a manifest of a valid vector passes both."""
    texts = vector_manifests()
    assert len(texts) > 300
    wrong = [f"{t[:300]!r}: {why}" for t in texts if (why := _disagreement(t, _python(t))) is not None]
    assert not wrong, f"{len(wrong)} manifests:\n" + "\n".join(wrong[:10])
    passed = [t for t in texts if _python(t) is None]
    assert passed and all(schema_issue(json.loads(t)) is None for t in passed)


def test_the_corpus_reaches_every_rule():
    """The mutations break each rule of §5.1 and §5.3 somewhere: every place the check can name is named."""
    places = set()
    for text in _corpus():
        got = _python(text)
        if got is not None and got[0] != "parse":
            places.add((got[0], re.sub(r"/[0-9]+", "/i", got[1])))
    for place in [
        ("MANIFEST_INVALID", ""),
        ("MANIFEST_INVALID", "/format"),
        ("MANIFEST_INVALID", "/format_version"),
        ("VERSION_UNSUPPORTED", "/format_version"),
        ("MANIFEST_INVALID", "/producer"),
        ("MANIFEST_INVALID", "/producer/zz"),
        ("MANIFEST_INVALID", "/producer/name"),
        ("MANIFEST_INVALID", "/producer/version"),
        ("MANIFEST_INVALID", "/members"),
        ("MANIFEST_INVALID", "/members/i"),
        ("MANIFEST_INVALID", "/members/i/zz"),
        ("MANIFEST_INVALID", "/members/i/name"),
        ("MANIFEST_INVALID", "/members/i/size"),
        ("MANIFEST_INVALID", "/members/i/sha256"),
        ("LIMIT_EXCEEDED", "/members/i"),
        ("MANIFEST_INVALID", "/extensions_used"),
        ("MANIFEST_INVALID", "/extensions_used/i"),
        ("MANIFEST_INVALID", "/extensions_required/i"),
        ("MANIFEST_INVALID", "/extensions"),
        ("MANIFEST_INVALID", "/extensions/"),
        ("MANIFEST_INVALID", "/extensions/bad-name"),
        ("MANIFEST_INVALID", "/metadata"),
        ("MANIFEST_INVALID", "/metadata/zz"),
        ("EXTENSION_UNDECLARED", "/extensions/zz"),
        ("EXTENSION_UNDECLARED", "/extensions_required/i"),
        ("EXTENSION_UNSUPPORTED", "/extensions_required/i"),
    ]:
        assert place in places, place
    assert len(_corpus()) > 10000


def test_the_python_check_gives_the_schemas_verdict_in_the_order_of_11_2():
    wrong = []
    for text in _corpus():
        why = _disagreement(text, _python(text))
        if why is not None:
            wrong.append(f"{text[:300]!r}: {why}")
    assert not wrong, f"{len(wrong)} manifests:\n" + "\n".join(wrong[:10])


def test_the_javascript_check_gives_the_python_checks_answer(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    texts = _corpus()
    lines = tmp_path / "manifests.b64"
    lines.write_text("".join(base64.b64encode(t).decode() + "\n" for t in texts))
    src = os.path.join(ROOT, "reader-js", "src")
    r = subprocess.run(
        [node, "--input-type=module", "-e", JS, "file://" + src, str(lines)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    js = json.loads(r.stdout)
    assert len(js) == len(texts)
    wrong = [(t[:200], p, j) for t, p, j in zip(texts, map(_python, texts), js) if p != j]
    assert not wrong, f"{len(wrong)} manifests (text, Python, JavaScript):\n" + "\n".join(map(str, wrong[:10]))
