"""Opening an archive of many tensors: the same checks and results, without a Python step per tensor or per token.

The nesting depth of a JSON text (spec §6 rule 4) is compared with a plain
token-by-token scan of the rule over random texts; the safetensors header
checks (spec §10.2) taken a column at a time are compared, on every member of
every test vector and on random headers, with the checks in the spec's order
(the same infos, or the same error at the same location). The cost is counted,
not timed: the Python lines run by ``nesting_depth`` and by ``read_group`` are
the same for a header of 10 tensors and one of 2,000.
"""

from __future__ import annotations

import json
import os
import random
import struct
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import rlarchive
from rlarchive import checks, jsonbounds, jsonstrict, tensors
from rlarchive.errors import RlarchiveError
from rlarchive.sources import open_source
from rlarchive.zipprofile import Member

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = os.path.join(ROOT, "test-vectors")


def _outside_strings(text: str):
    """The characters of a text read literally that stand outside its strings (the quotes themselves excluded)."""
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        else:
            yield c


def reference_depth(text: str) -> int:
    """Spec §6 rule 4 read literally: one token at a time, brackets counted outside strings only."""
    depth = peak = 0
    for c in _outside_strings(text):
        if c in "[{":
            depth += 1
            peak = max(peak, depth)
        elif c in "]}":
            depth -= 1
    return peak


def reference_counts(text: str) -> tuple[int, int]:
    """The objects and the keys of a text read literally: the ``{`` and the ``:`` outside strings."""
    objects = keys = 0
    for c in _outside_strings(text):
        objects += c == "{"
        keys += c == ":"
    return objects, keys


def random_text(rng: random.Random) -> str:
    alphabet = ['"', "\\", "[", "]", "{", "}", "a", " ", "\n", ":", ",", "é", "\U0001f600", "1"]
    weights = [3, 2, 4, 4, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1]
    return "".join(rng.choices(alphabet, weights, k=rng.randrange(0, 60)))


def test_depth_is_the_rule_on_random_texts(monkeypatch):
    rng = random.Random(20240611)
    texts = [random_text(rng) for _ in range(20000)]
    texts += ['"\\', '"\\"', '"a\\\\"[', "\\[", '["]"]', "]]][[[", "[" * 70 + '"' + "]" * 70]
    for text in texts:
        assert jsonstrict.nesting_depth(text) == reference_depth(text), text
    monkeypatch.setattr(jsonbounds, "_DEPTH_BLOCK", 3)  # the running depth carried from block to block
    for text in texts[:3000]:
        assert jsonstrict.nesting_depth(text) == reference_depth(text), text
    for text in texts[:3000]:
        assert jsonbounds.text_shape(text) == (reference_depth(text), *reference_counts(text)), text


def test_depth_without_numpy_is_the_rule(monkeypatch):
    """The standalone conformance kit runs without NumPy: the step-per-bracket path gives the same depths."""
    import builtins

    real = builtins.__import__

    def no_numpy(name, *args, **kwargs):
        if name == "numpy":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_numpy)
    rng = random.Random(20240612)
    texts = [random_text(rng) for _ in range(3000)] + ["[" * 70 + '"' + "]" * 70, '"\\', "]]][[["]
    for text in texts:
        assert jsonbounds.text_shape(text) == (reference_depth(text), *reference_counts(text)), text


def line_count(fn: Callable[[], Any], module: Any) -> int:
    """How many Python lines of ``module`` run while ``fn()`` runs."""
    count = 0
    filename = module.__file__

    def trace(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename != filename:
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


def header_text(n: int) -> bytes:
    entries = {f"layer{i}.w": {"dtype": "F32", "shape": [2], "data_offsets": [8 * i, 8 * i + 8]} for i in range(n)}
    return json.dumps(entries, separators=(",", ":")).encode()


def test_depth_runs_no_python_step_per_token():
    small, large = (header_text(n).decode() for n in (10, 2000))
    assert line_count(lambda: jsonstrict.nesting_depth(small), jsonbounds) == line_count(
        lambda: jsonstrict.nesting_depth(large), jsonbounds
    )


def test_parse_runs_no_python_step_per_object():
    """A header of 2,000 entries runs the same Python lines of jsonstrict as one of 10 (no hook per object)."""
    small, large = header_text(10), header_text(2000)
    assert line_count(lambda: jsonstrict.parse(small), jsonstrict) == line_count(
        lambda: jsonstrict.parse(large), jsonstrict
    )


def reference_duplicate(text: str) -> bool:
    """Whether some object of the text (a dropped value's too) has a key twice: a hook on every object."""
    found = False

    def pairs(items: list[Any]) -> dict[str, Any]:
        nonlocal found
        found = found or len({k for k, _ in items}) < len(items)
        return dict(items)

    json.loads(text, object_pairs_hook=pairs)
    return found


def random_document(rng: random.Random, depth: int = 0) -> str:
    """A JSON text of objects and arrays whose keys are drawn from three, so that some repeat."""
    kind = rng.randrange(4 if depth < 4 else 1)
    if kind == 0:
        return rng.choice(["1", '"s"', "null", '":{["', "2.5"])
    if kind == 1:
        return "[" + ",".join(random_document(rng, depth + 1) for _ in range(rng.randrange(4))) + "]"
    members = [f'"{rng.choice("ab:")}":{random_document(rng, depth + 1)}' for _ in range(rng.randrange(4))]
    return "{" + ",".join(members) + "}"


def test_repeated_keys_found_by_counting_are_the_ones_a_hook_finds():
    """The keys the text holds against the keys the parse kept: a repeated key anywhere (in a value a
    repeated key drops too) is JSON_DUPLICATE_KEY at the first repeated key in document order."""
    rng = random.Random(20240613)
    repeated = 0
    for _ in range(4000):
        text = random_document(rng)
        try:
            value = jsonstrict.parse(text.encode(), offset=0)
        except RlarchiveError as e:
            assert e.code == "JSON_DUPLICATE_KEY" and reference_duplicate(text), text
            assert e.offset == jsonstrict._locate(text, "duplicate"), text  # an ASCII text: bytes are characters
            repeated += 1
        else:
            assert not reference_duplicate(text) and value == json.loads(text), text
    assert 500 < repeated < 3500


@pytest.mark.parametrize(
    "text, code",
    [
        ("[9007199254740991,-9007199254740991]", None),  # 16 digits, within ±(2^53-1)
        ("[9007199254740992]", "JSON_INTEGER_RANGE"),
        ("[-9007199254740992]", "JSON_INTEGER_RANGE"),
        ("[123456789012345678901234567890]", "JSON_INTEGER_RANGE"),
        ('["12345678901234567", 1]', None),  # a long run of digits in a string
        ("[" + "9" * 5000 + "]", "JSON_INTEGER_RANGE"),  # longer than int() converts
        ("[123456789012345]", None),
    ],
)
def test_integer_range_with_and_without_long_digit_runs(text, code):
    try:
        value = jsonstrict.parse(text.encode())
        assert code is None and value == json.loads(text)
    except RlarchiveError as e:
        assert e.code == code


# -- the safetensors header checks -------------------------------------------------------


def outcome(read: Callable[[], Any]) -> Any:
    try:
        return read()
    except RlarchiveError as e:
        return (e.code, e.message, e.member, e.pointer, e.offset)


def tensor_members(path: str) -> list[tuple[Any, Any]]:
    """(source, member) for each tensor member of the file, when its steps 1-6 pass."""
    src = open_source(path)
    state = checks.start(src)
    try:
        state = checks.run(state, "structure")
    except RlarchiveError:
        return []
    return [(src, m) for m in state.members.values() if checks.group_of(m.name) is not None]


def vector_files() -> list[str]:
    with open(os.path.join(VECTORS, "index.json")) as f:
        return sorted({os.path.join(VECTORS, case["file"]) for case in json.load(f)["cases"] if "file" in case})


def test_every_vector_member_gives_what_the_ordered_checks_give(monkeypatch):
    fast = ordered = 0
    for path in vector_files():
        for src, m in tensor_members(path):
            got = outcome(lambda src=src, m=m: tensors.read_group(src, m))
            with monkeypatch.context() as mp:
                mp.setattr(tensors, "_valid_infos", lambda *a: None)
                want = outcome(lambda src=src, m=m: tensors.read_group(src, m))
            assert got == want, (path, m.name)
            if isinstance(want, dict):
                fast += 1
            else:
                ordered += 1
    assert fast > 100 and ordered >= 20  # both sides met: members that pass, and every ST_ code


def test_columns_never_pass_a_broken_header_of_a_vector():
    """Every tensor member that breaks a rule of §10.2 is one the column checks refuse (None)."""
    refused = 0
    for path in vector_files():
        for src, m in tensor_members(path):
            try:  # the header's own form (its length, text and JSON) is read before any column
                header, n = tensors._header(src, m, lambda code, msg, name=None: RlarchiveError(code, msg))
            except RlarchiveError:
                continue
            try:
                tensors.read_group(src, m)
            except RlarchiveError:
                assert tensors._valid_infos(header, m.data_offset + 8 + n, m.size - 8 - n) is None, path
                refused += 1
    assert refused >= 12


def random_header(rng: random.Random) -> tuple[dict[str, Any], int]:
    """A header of random tensors laid out as the profile asks (in a random order), and its buffer's length."""
    codes = list(tensors.DTYPES)
    items = []
    pos = 0
    for i in range(rng.randrange(0, 12)):
        code = rng.choice(codes)
        d = tensors.DTYPES[code]
        pos += -pos % d.alignment
        shape = [rng.randrange(0, 4) for _ in range(rng.randrange(0, 4))]
        nbytes = int(np.prod(shape, dtype=np.int64)) * d.size
        items.append((f"t{i}", {"dtype": code, "shape": shape, "data_offsets": [pos, pos + nbytes]}))
        pos += nbytes
    rng.shuffle(items)
    return dict(items), pos


BREAKS: list[Callable[[dict[str, Any], random.Random], None]] = [
    lambda e, r: e.update(dtype="F33"),
    lambda e, r: e.update(dtype=4),
    lambda e, r: e.update(shape=[*e["shape"], 2]),
    lambda e, r: e.update(shape=[True] * len(e["shape"]) or [True]),
    lambda e, r: e.update(shape=[1] * 9),
    lambda e, r: e.update(shape=[-1]),
    lambda e, r: e.update(shape=[1.0]),
    lambda e, r: e.update(shape="4"),
    lambda e, r: e.update(data_offsets=[e["data_offsets"][0] + 1, e["data_offsets"][1] + 1]),
    lambda e, r: e.update(data_offsets=e["data_offsets"][::-1]),
    lambda e, r: e.update(data_offsets=[*e["data_offsets"], 0]),
    lambda e, r: e.update(data_offsets=[e["data_offsets"][0], True]),
    lambda e, r: e.update(extra=1),
    lambda e, r: e.pop("shape"),
]


def test_random_headers_give_what_the_ordered_checks_give(monkeypatch):
    rng = random.Random(7)
    for trial in range(3000):
        header, size = random_header(rng)
        if header and trial % 2:
            name = rng.choice(list(header))
            if trial % 5 == 0:
                header[rng.choice(["", "__x", "\u00e9" * 300])] = header.pop(name)
            else:
                rng.choice(BREAKS)(header[name], rng)
        raw = json.dumps(header, separators=(",", ":")).encode()
        raw += b" " * (-(8 + len(raw)) % 64)
        start = rng.choice([64, 56])  # a member whose tensors are aligned, or one whose tensors are not
        tail = rng.choice([0, 0, 0, 1, 8])  # bytes after the last tensor
        blob = bytes(start) + struct.pack("<Q", len(raw)) + raw + bytes(size + tail)
        m = Member(
            name="tensors/g.safetensors", header_offset=0, data_offset=start, size=len(blob) - start, crc32=0, index=0
        )
        src = open_source(blob)
        got = outcome(lambda: tensors.read_group(src, m))
        with monkeypatch.context() as mp:
            mp.setattr(tensors, "_valid_infos", lambda *a: None)
            want = outcome(lambda: tensors.read_group(src, m))
        assert got == want, header


def test_a_valid_header_is_checked_without_a_python_step_per_tensor(tmp_path):
    counts = []
    for n in (10, 2000):
        path = str(tmp_path / f"{n}.rlarchive")
        rlarchive.save(path, {}, tensors={"g": {f"w{i}": np.zeros(2, np.float32) for i in range(n)}})
        [(src, m)] = tensor_members(path)
        counts.append(line_count(lambda src=src, m=m: tensors.read_group(src, m), tensors))
        assert len(tensors.read_group(src, m)) == n
    assert counts[0] == counts[1]
