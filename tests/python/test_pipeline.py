"""The check pipeline of spec §11.1 (rlarchive.checks): its steps, its state, and who consumes it."""

from __future__ import annotations

import dataclasses
import os
import re

import numpy as np
import pytest
from suite import ROOT

import rlarchive
from rlarchive import checks
from rlarchive.errors import RlarchiveError
from rlarchive.sources import BytesSource

#: the step names both reference readers use (Python snake_case; checks.js has their camelCase)
NAMES = (
    "identify",
    "read_end_records",
    "read_central_directory",
    "read_local_headers",
    "check_layout",
    "check_manifest",
    "check_data",
    "check_tensor_members",
    "check_references",
    "check_digests",
    "check_extensions",
)


def _spec_steps() -> list[str]:
    """The numbered items of spec §11.1, as the spec writes them."""
    with open(os.path.join(ROOT, "spec", "rlarchive.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("### 11.1") : text.index("### 11.2")]
    return re.findall(r"^(\d+)\. ", section, re.M)


def test_steps_are_the_eleven_names_in_order():
    assert tuple(f.__name__ for f in checks.STEPS) == NAMES
    assert [str(i) for i in range(1, len(checks.STEPS) + 1)] == _spec_steps()


def test_each_step_names_its_spec_step_in_its_docstring():
    for i, step in enumerate(checks.STEPS, 1):
        assert (step.__doc__ or "").startswith(f"Step {i}, "), step.__name__


def _archive(tmp_path, **kw) -> bytes:
    p = tmp_path / "a.rlarchive"
    rlarchive.save(p, {"gamma": 0.99, "w": np.ones(3, np.float32)}, {"policy": {"b": np.zeros(2, np.float32)}}, **kw)
    return p.read_bytes()


def _run(raw: bytes, *phases: str) -> checks.CheckState:
    """The state after the named phases (all of them by default)."""
    return checks.run(checks.start(BytesSource(raw)), *(phases or checks.PHASES))


def test_each_step_returns_a_new_state_and_leaves_the_old_one(tmp_path):
    raw = _archive(tmp_path)
    state = checks.start(BytesSource(raw))
    seen = [state]
    for step in checks.STEPS:
        before = (state.end, dict(state.members), state.document, state.issues)
        new = step(state)
        assert (state.end, dict(state.members), state.document, state.issues) == before
        seen.append(new)
        state = new
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.issues = ()  # type: ignore[misc]
    assert state.issues == () and list(state.members)[0] == "mimetype"
    assert list(state.tensor_headers) == ["policy"] and state.document is not None
    assert [m.data_offset for m in seen[3].members.values()] == [-1] * len(state.members)  # step 3: no data offset yet
    assert all(m.data_offset > m.header_offset for m in seen[4].members.values())


def test_steps_8_to_11_collect_instead_of_raising(tmp_path):
    raw = bytearray(_archive(tmp_path))
    state = _run(bytes(raw), *checks.OPEN)
    m = state.members["tensors/policy.safetensors"]
    raw[m.data_offset + m.size - 1] ^= 0xFF  # a tensor byte: found at step 10 only
    state = _run(bytes(raw))
    assert [i.code for i in state.issues] == ["ZIP_CRC_MISMATCH"]
    with pytest.raises(RlarchiveError) as e:
        rlarchive.open(bytes(raw)).verify()
    assert e.value.code == "ZIP_CRC_MISMATCH"


def test_check_extension_runs_step_11_for_one_extension(tmp_path):
    state = _run(_archive(tmp_path), *checks.OPEN)
    assert checks.check_extension(state, "RLA_policy") is state  # not used: nothing to check
    assert checks.check_extension(state, "ACME_unknown") is state


def test_an_archive_is_built_from_the_checked_state(tmp_path):
    raw = _archive(tmp_path)
    with rlarchive.open(raw) as ar:
        assert isinstance(ar.state, checks.CheckState) and ar.state.issues == ()
        assert ar.source is ar.state.source and list(ar.members) == list(ar.state.members)
        assert ar.groups == list(ar.state.tensor_headers)
        m = ar.members["data.json"]
        assert (
            b"".join(bytes(c) for c in ar.member_chunks("data.json")) == ar.read_range(m.data_offset, m.size).tobytes()
        )
        assert ar.read_range(m.data_offset, m.size).tobytes() == ar.source.read(m.data_offset, m.size)
        with pytest.raises(RlarchiveError) as e:
            ar.member_chunks("nothing.json")
        assert e.value.code == "TENSOR_NOT_FOUND"
    state = _run(raw, *checks.OPEN)
    with rlarchive.Archive.from_state(state, spaces="neutral") as ar:
        assert ar.data["gamma"] == 0.99 and ar.dump() == rlarchive.open(raw).dump()
    with pytest.raises(ValueError):
        rlarchive.Archive.from_state(_run(raw, "structure"))


def test_open_raises_the_first_issue_of_steps_8_and_9(tmp_path):
    raw = bytearray(_archive(tmp_path))
    state = _run(bytes(raw), *checks.OPEN)
    m = state.members["tensors/policy.safetensors"]
    raw[m.data_offset : m.data_offset + 8] = (10**9).to_bytes(8, "little")  # the header's length: step 8
    state = _run(bytes(raw), *checks.OPEN)
    assert state.failed_groups == {"policy"} and state.tensor_headers == {}
    with pytest.raises(RlarchiveError) as e:
        rlarchive.open(bytes(raw))
    assert e.value is not None and e.value.code == state.issues[0].code
    assert rlarchive.validate(bytes(raw))["issues"][0]["code"] == state.issues[0].code


def test_detail_is_the_message_without_code_and_location():
    e = RlarchiveError("ZIP_GAP", "3 unaccounted bytes", offset=12)
    assert e.detail == e.message == "3 unaccounted bytes"
    assert str(e) == f"ZIP_GAP: {e.detail} [@12]"


def test_opening_reads_data_json_once(tmp_path):
    """Step 6's digest and step 7's parse share one read of data.json's bytes; the state drops them after step 7."""
    path = tmp_path / "a.rlarchive"
    rlarchive.save(str(path), {"gamma": 0.99, "names": ["x" * 100] * 50})
    raw = path.read_bytes()
    reads: list[tuple[int, int]] = []

    class Counting(BytesSource):
        def read(self, offset: int, length: int) -> bytes:
            reads.append((offset, length))
            return super().read(offset, length)

    with rlarchive.open(Counting(raw)) as ar:
        data = ar.members["data.json"]
        assert ar.state.data_json is None
    overlapping = [r for r in reads if r[0] < data.data_offset + data.size and data.data_offset < r[0] + r[1]]
    assert overlapping == [(data.data_offset, data.size)]
