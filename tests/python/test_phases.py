"""The phases of spec §11.1 by name (rlarchive.checks.PHASES), what the later steps give as their output (the tensors'
digests and ST_BOOL_VALUE from step 10's one read, the checked extension documents from step 11), the extension
accessors checking once, the writer running the reader's rules, and the bridges knowing no extension rule."""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import io
import os
import re

import numpy as np
import pytest
from cases import unchecked
from suite import ROOT

import rlarchive
from rlarchive import checks
from rlarchive.errors import RlarchiveError
from rlarchive.extensions.training import EXTENSION as TRAINING
from rlarchive.extensions.training import MEMBER as TRAINING_MEMBER
from rlarchive.sources import BytesSource, FileObjectSource

VECTORS = os.path.join(ROOT, "test-vectors")


class Counting(FileObjectSource):
    """A source over bytes in a file object (no zero-copy view to read past it) that logs every read (offset,
    length)."""

    def __init__(self, data: bytes):
        super().__init__(io.BytesIO(data))
        self.counted_reads: list[tuple[int, int]] = []

    def _read(self, offset: int, length: int) -> bytes:
        self.counted_reads.append((offset, length))
        return super()._read(offset, length)

    def bytes_within(self, m) -> int:
        """The bytes of the reads that start within member ``m``'s data (the reads of its bytes: a read of the
        file's tail that covers a small archive whole, to find the end records, starts before it)."""
        return sum(n for o, n in self.counted_reads if m.data_offset <= o < m.data_offset + m.size)


def test_the_phases_by_name_hold_the_steps_in_order():
    assert list(checks.PHASES) == ["structure", "data", "tensors", "integrity", "extensions"]
    assert tuple(s for steps in checks.PHASES.values() for s in steps) == checks.STEPS
    assert checks.OPEN + checks.DEFERRED == tuple(checks.PHASES)
    with pytest.raises(KeyError):
        checks.run(checks.start(BytesSource(b"")), "digests")


def _flags_archive(tmp_path) -> bytes:
    p = tmp_path / "flags.rlarchive"
    tensors = {"flags": {"ok": np.arange(3, dtype=np.float32), "b": np.array([True, False, True])}}
    rlarchive.save(p, {"gamma": 0.99}, tensors)
    return p.read_bytes()


def test_the_dump_reads_each_tensor_member_once(tmp_path):
    """Step 10 gives the digests the dump prints from the same read as the member's CRC-32 and SHA-256."""
    raw = _flags_archive(tmp_path)
    src = Counting(raw)
    with rlarchive.open(src) as ar:
        m = ar.members["tensors/flags.safetensors"]
        src.counted_reads.clear()
        text = ar.dump()
    assert src.bytes_within(m) == m.size
    assert text == rlarchive.open(raw).dump()


def _vector(case: str) -> bytes:
    with open(os.path.join(VECTORS, "valid", f"{case}.rlarchive"), "rb") as f:
        return f.read()


def test_validate_reads_each_tensor_member_once():
    """ST_BOOL_VALUE comes out of step 10's one read; the BOOL tensors are not read again."""
    raw = _vector("bool-tensor-nonzero-byte")
    src = Counting(raw)
    assert [i["code"] for i in rlarchive.validate(src)["issues"]] == ["ST_BOOL_VALUE"]
    with rlarchive.open(raw) as ar:
        opened = ar.state
    assert opened.tensor_headers
    for group, infos in opened.tensor_headers.items():
        m = opened.members[checks.member_of(group)]
        first = min(t.offset for t in infos.values())  # step 8 reads the header before it
        reading_elements = [
            (o, n) for o, n in src.counted_reads if m.data_offset <= o < m.data_offset + m.size and o + n > first
        ]
        assert sum(n for _, n in reading_elements) == m.size  # step 10's one pass over the member's bytes


def test_step_10_gives_the_digests_and_the_bool_warnings_as_outputs():
    raw = _vector("bool-tensor-nonzero-byte")
    opened = checks.run(checks.start(BytesSource(raw)), *checks.OPEN)
    assert dict(opened.tensor_digests) == {} and not any(w.code == "ST_BOOL_VALUE" for w in opened.warnings)
    done = checks.run(dataclasses.replace(opened, digest_tensors=True), "integrity")
    assert done.issues == ()
    for group, infos in done.tensor_headers.items():
        for name, t in infos.items():
            assert done.tensor_digests[group][name] == hashlib.sha256(raw[t.offset : t.offset + t.nbytes]).hexdigest()
    assert [w.code for w in done.warnings[len(opened.warnings) :]] == ["ST_BOOL_VALUE"]
    plain = checks.run(opened, "integrity")  # a validator does not ask for the digests
    assert dict(plain.tensor_digests) == {}
    assert [str(w) for w in plain.warnings] == [str(w) for w in done.warnings]


@pytest.mark.parametrize(
    "case, accessor, name",
    [
        ("vec-normalize-box", "vec_normalize", "RLA_vec_normalize"),
        ("replay-buffer-her", "replay_buffer", "RLA_replay_buffer"),
    ],
)
def test_an_accessor_checks_its_member_once(case, accessor, name):
    src = Counting(_vector(case))
    with rlarchive.open(src, spaces="neutral") as ar:
        m = ar.members[f"extensions/{name}/{name[4:]}.json"]
        assert src.bytes_within(m) == 0
        getattr(ar, accessor)()
        assert src.bytes_within(m) == m.size
        first = ar.extension_document(name)
        getattr(ar, accessor)()
        ar.check_extensions()
        assert src.bytes_within(m) == m.size  # the kept value: neither read nor checked again
        assert ar.extension_document(name) is first
        ar.dump()
        assert src.bytes_within(m) == 2 * m.size  # once more for step 10's digest, not for step 11


def test_the_writer_refuses_a_content_rule_with_the_readers_error(tmp_path):
    """The writer runs step 11's rules over the member it is about to write, content rules included."""
    from cases_training import _data
    from cases_training_random import _with

    data, value = _data(), _with(key=np.zeros(624, np.uint32))  # NumPy's MT19937 key all zeros (RLA_training §3.7)
    p = tmp_path / "a.rlarchive"
    with pytest.raises(RlarchiveError) as refused:
        rlarchive.save(p, data, extension_values={TRAINING: value})
    assert not p.exists()
    cause = refused.value.__cause__
    assert refused.value.code == "WRITE_INVALID" and isinstance(cause, RlarchiveError)
    with rlarchive.open(unchecked(data, {TRAINING: value}), spaces="neutral") as ar:
        with pytest.raises(RlarchiveError) as read:
            ar.check_extensions()
    found = (read.value.code, read.value.member, read.value.pointer)
    assert found == ("EXTENSION_INVALID", TRAINING_MEMBER, "/training/random/numpy/key")
    assert (cause.code, cause.member, cause.pointer) == found


def _files(*roots: str, ext: tuple[str, ...]) -> list[str]:
    out = []
    for root in roots:
        for d, dirs, names in os.walk(os.path.join(ROOT, root)):
            dirs[:] = [x for x in dirs if x not in ("node_modules", "__pycache__", "dist")]
            out += [os.path.join(d, n) for n in names if n.endswith(ext)]
    return out


def test_lint_no_step_is_chosen_by_its_position():
    """Both readers choose steps by phase name (checks.run, runPhases): no subscript or slice of STEPS."""
    positional = re.compile(r"\bSTEPS\s*(\[|\.slice\s*\(|\.at\s*\()")
    files = _files("python", "tests", "tools", ext=(".py",)) + _files(
        "reader-js/src", "reader-js/test", "reader-js/bin", ext=(".js", ".mjs", ".ts")
    )
    assert len(files) > 50
    found = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            found += [f"{os.path.relpath(path, ROOT)}:{m.group(0)}" for m in positional.finditer(f.read())]
    assert found == []


#: The modules whose functions are the format's rules: a bridge gets them through the writer and the reader.
_RULE_MODULES = re.compile(r"^(rlarchive\.)?(\.\.)?(extensions(\.\w+)*|values|value_check|checks|generator_states)$")


def test_lint_the_sb3_bridge_holds_no_extension_rule():
    """python/rlarchive/sb3 checks a value through the writer (prepare) and reads through the reader: it imports no
    check of an extension or of the value rules, nor calls one through a module it imported."""
    found = []
    for path in _files("python/rlarchive/sb3", ext=(".py",)):
        tree = ast.parse(open(path, encoding="utf-8").read())
        rule_aliases = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                if _RULE_MODULES.match(module) or _RULE_MODULES.match(module.lstrip(".")):
                    for a in node.names:
                        if a.name.startswith("check") or a.name in ("Checker",):
                            found.append(f"{path}: imports {a.name}")
                        rule_aliases.add(a.asname or a.name)
            if isinstance(node, ast.Attribute) and node.attr.startswith("check"):
                if isinstance(node.value, ast.Name) and node.value.id in rule_aliases:
                    found.append(f"{path}: calls {node.value.id}.{node.attr}")
            if isinstance(node, ast.Name) and node.id == "check_value":
                found.append(f"{path}: names check_value")
    assert found == []
