"""Python to JavaScript: the same archives through both readers give the same canonical dump.

One long-lived JavaScript conformance testee (``node reader-js/bin/conformance.mjs``,
spec Annex A) serves the whole session (fixture ``js_reader`` in conftest.py).
"""

import os

import json_pools  # tests/fuzz: the numbers, tagged values and raw strings the fuzz mutators use
import json_tree  # tests/fuzz: JSON trees written with any literal text
import pytest
from cases import archive as raw_archive  # tests/vectors: an archive around a given data.json
from hypothesis import given, settings
from hypothesis import strategies as st
from scale import examples
from strategies import EDGE_STRINGS, archives, keys

import rlarchive


def python_outcome(path: str) -> tuple[str, bytes]:
    try:
        with rlarchive.open(path, spaces="neutral") as ar:
            return "dump", ar.dump()
    except rlarchive.RlarchiveError as e:
        return "error", e.code.encode()


def js_outcome(js_reader, path: str) -> tuple[str, bytes]:
    reply = js_reader.dump(path)
    if reply.get("result") == "dump":
        return "dump", reply["dump"].encode("utf-8")
    if reply.get("result") == "error":
        return "error", reply["code"].encode()
    raise AssertionError(f"the JavaScript reader did not answer: {reply}")


def first_difference(a: bytes, b: bytes) -> str:
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    return f"at byte {i}: python {a[max(0, i - 60) : i + 60]!r}, javascript {b[max(0, i - 60) : i + 60]!r}"


@pytest.mark.slow
@settings(max_examples=examples(200))
@given(archives())
def test_javascript_dump_equals_python_dump(workdir, js_reader, a):
    p = os.path.join(workdir, "x.rlarchive")
    rlarchive.save(p, **a.kwargs())
    with rlarchive.open(p, spaces="neutral") as ar:
        want = ar.dump()
    kind, got = js_outcome(js_reader, p)
    assert kind == "dump", f"JavaScript rejects a valid archive: {got.decode()}"
    assert got == want, first_difference(want, got)


# ---------------------------------------------------------------- data.json written by another writer

NUMBER = st.from_regex(r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,3})?", fullmatch=True)
NUMBER_EDGE = st.sampled_from(
    json_pools.INT_LITS
    + json_pools.FLOAT_LITS
    + [
        "1" + "0" * 400 + ".5",
        "0." + "0" * 300 + "1",
        "4.9406564584124654e-324",
        "2.4703282292062328e-324",
        "2.4703282292062327e-324",
    ]
)


def _string_literal(s: str, ascii_: bool) -> json_tree.Lit:
    import json

    return json_tree.Lit(json.dumps(s, ensure_ascii=ascii_))


json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.one_of(NUMBER, NUMBER_EDGE).map(json_tree.Lit),
    st.builds(_string_literal, st.one_of(st.sampled_from(EDGE_STRINGS), st.text(max_size=8)), st.booleans()),
    st.sampled_from(json_pools.VALID_TAGGED).map(lambda t: json_tree.parse_tree(t.encode())),
    st.sampled_from(json_pools.RAW_STRINGS).map(json_tree.Lit),
)
json_values = st.recursive(
    json_leaves,
    lambda c: st.one_of(
        st.lists(c, max_size=4),
        st.lists(st.tuples(keys(), c), max_size=4).map(lambda kv: json_tree.JObj([list(p) for p in kv])),
    ),
    max_leaves=16,
)


@pytest.mark.slow
@settings(max_examples=examples(150))
@given(
    st.lists(st.tuples(keys(), json_values), max_size=6),
    st.builds(json_tree.Style, st.booleans(), st.sampled_from(["", " "]), st.booleans()),
)
def test_any_data_json_gets_the_same_answer(workdir, js_reader, pairs, style):
    """data.json texts with any number literals, escapes and white space: the same dump, or the same error."""
    doc = json_tree.JObj([["data", json_tree.JObj([list(p) for p in pairs])]])
    p = os.path.join(workdir, "j.rlarchive")
    with open(p, "wb") as f:
        f.write(raw_archive(json_tree.tree_bytes(doc, style)))
    want = python_outcome(p)
    got = js_outcome(js_reader, p)
    assert got[0] == want[0] and got[1] == want[1], (
        f"python {want[0]} {want[1][:80]!r}, javascript {got[0]} {got[1][:80]!r}"
        if want[0] != "dump" or got[0] != "dump"
        else first_difference(want[1], got[1])
    )


def _issues(report: dict) -> list:
    return [(i["code"], i["severity"], i.get("member"), i.get("pointer"), i.get("offset")) for i in report["issues"]]


@pytest.mark.slow
@settings(max_examples=examples(150))
@given(
    st.lists(st.tuples(keys(), json_values), max_size=4),
    st.builds(json_tree.Style, st.booleans(), st.sampled_from(["", " "]), st.booleans()),
    st.data(),
)
def test_broken_data_json_is_located_alike(workdir, js_reader, pairs, style, data):
    """A data.json text cut short, or with a byte put in or changed: both validators report the same
    issues at the same locations (spec §11.2: code, severity, member, pointer and offset)."""
    text = json_tree.tree_bytes(json_tree.JObj([["data", json_tree.JObj([list(p) for p in pairs])]]), style)
    at = data.draw(st.integers(0, len(text)))
    how = data.draw(st.sampled_from(["cut", "insert", "replace"]))
    byte = bytes([data.draw(st.sampled_from(list(b'"\\{}[]:,-.0123456789eEtfnuNI \t\x00\x7f') + [0xC3, 0xED, 0xFF]))])
    if how == "cut":
        text = text[:at]
    elif how == "insert":
        text = text[:at] + byte + text[at:]
    else:
        text = text[:at] + byte + text[at + 1 :]
    p = os.path.join(workdir, "loc.rlarchive")
    with open(p, "wb") as f:
        f.write(raw_archive(text))
    want = _issues(rlarchive.validate(p))
    reply = js_reader.request("validate", p)
    assert reply.get("result") == "report", reply
    assert _issues(reply["report"]) == want, (text, want, _issues(reply["report"]))


_SEEDS = sorted(
    os.path.join(root, f)
    for root, _, fs in os.walk(
        os.path.join(
            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "test-vectors", "valid"
        )
    )
    for f in fs
    if f.endswith(".rlarchive")
)


@settings(max_examples=examples(150))
@given(
    st.sampled_from(_SEEDS),
    st.lists(
        st.tuples(
            st.floats(0, 1, exclude_max=True), st.integers(0, 255), st.sampled_from(["replace", "insert", "delete"])
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_broken_archives_are_located_alike(workdir, js_reader, seed, edits):
    """A valid vector with a few bytes replaced, inserted or deleted anywhere (ZIP records, JSON,
    safetensors headers, tensor data): both validators give the same issues at the same locations."""
    with open(seed, "rb") as f:
        raw = bytearray(f.read())
    for where, byte, how in edits:
        at = int(where * len(raw))
        if how == "replace":
            raw[at] = byte
        elif how == "insert":
            raw[at:at] = bytes([byte])
        elif len(raw) > 1:
            del raw[at]
    p = os.path.join(workdir, "edit.rlarchive")
    with open(p, "wb") as f:
        f.write(raw)
    want = _issues(rlarchive.validate(p))
    reply = js_reader.request("validate", p)
    assert reply.get("result") == "report", reply
    assert _issues(reply["report"]) == want, (os.path.basename(seed), edits, want, _issues(reply["report"]))
