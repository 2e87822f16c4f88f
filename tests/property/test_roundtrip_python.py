"""Round trips through the Python writer and reader, on generated inputs.

For every generated archive: ``save`` then ``open`` gives the same values
(bit-exact floats, NaN payload-insensitive, -0.0 kept), bit-identical tensors
and optimizer states; saving what ``open`` returned gives a byte-identical
file; ``validate`` reports no issue at all. Inputs the format cannot hold are
refused with an RlarchiveError, never written as an invalid archive.
"""

import os

import pytest
from compare import assert_same
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scale import examples
from strategies import ArchiveInput, archives, schedules, spaces_, values, wild_values

import rlarchive

AUTO_GROUPS = ("arrays",)  # created by the writer from data; optimizer.NAME groups come from optimizers


def save_and_read_back(path: str, a: ArchiveInput) -> bytes:
    """Save ``a``, check everything read back equals it, save that again: same bytes. Returns the file."""
    rlarchive.save(path, **a.kwargs())
    with open(path, "rb") as f:
        first = f.read()
    with rlarchive.open(path, spaces="neutral") as ar:
        assert_same(a.data, ar.data)
        assert sorted(ar.optimizer_names) == sorted(a.optimizers)
        for name, state in a.optimizers.items():
            assert_same(state, ar.optimizer(name), f"/optimizers/{name}")
        expected_groups = set(a.tensors) | {f"optimizer.{n}" for n in a.optimizers}
        assert expected_groups <= set(ar.groups) <= expected_groups | set(AUTO_GROUPS)
        for g, ts in a.tensors.items():
            got = ar.tensors(g)
            assert set(got) == set(ts), g
            for name, t in ts.items():
                assert_same(t, got[name], f"tensors/{g}/{name}")
        # what open returned, saved again
        again = path + ".again"
        rlarchive.save(
            again,
            ar.data,
            {g: ar.tensors(g) for g in ar.groups if g not in AUTO_GROUPS and not g.startswith("optimizer.")},
            {n: ar.optimizer(n) for n in ar.optimizer_names},
            metadata=ar.metadata,
            producer=(ar.producer["name"], ar.producer["version"]),
        )
    with open(again, "rb") as f:
        assert f.read() == first, "saving what open returned gives other bytes"
    report = rlarchive.validate(path)
    assert report["valid"] and report["issues"] == [], report["issues"]
    return first


@pytest.mark.slow
@settings(max_examples=examples(150))
@given(archives())
def test_archive_round_trip(workdir, a):
    first = save_and_read_back(os.path.join(workdir, "a.rlarchive"), a)
    # deterministic: the same input gives the same bytes
    p = os.path.join(workdir, "b.rlarchive")
    rlarchive.save(p, **a.kwargs())
    with open(p, "rb") as f:
        assert f.read() == first


@settings(max_examples=examples(60))
@given(values(max_leaves=40))
def test_value_round_trip(workdir, v):
    save_and_read_back(os.path.join(workdir, "v.rlarchive"), ArchiveInput({"v": v}))


@settings(max_examples=examples(40))
@given(st.dictionaries(st.sampled_from(["obs", "act", "$type", ""]), spaces_(max_leaves=10), min_size=1))
def test_space_round_trip(workdir, d):
    save_and_read_back(os.path.join(workdir, "s.rlarchive"), ArchiveInput(d))


PROGRESS = [1.0, 0.999, 0.75, 0.5, 0.3333333333333333, 0.1, 1e-300, 0.0, -0.5, 1.5]


@settings(max_examples=examples(40))
@given(schedules())
def test_schedule_round_trip_and_values(workdir, s):
    p = os.path.join(workdir, "sched.rlarchive")
    save_and_read_back(p, ArchiveInput({"s": s}))
    with rlarchive.open(p, spaces="neutral") as ar:
        back = ar.data["s"]
    for x in PROGRESS:
        a, b = s(x), back(x)
        assert_same(a, b, f"value at {x}")


@settings(max_examples=examples(80))
@given(wild_values())
@example(__import__("strategies")._nest(70))
def test_writer_refuses_or_writes_a_valid_archive(workdir, v):
    """Whatever the value, the writer writes an archive both valid and equal, or refuses with an RlarchiveError."""
    p = os.path.join(workdir, "w.rlarchive")
    try:
        rlarchive.save(p, {"v": v})
    except rlarchive.RlarchiveError as e:
        assert e.code in ("WRITE_INVALID", "VALUE_UNSUPPORTED"), e
        return
    report = rlarchive.validate(p)
    assert report["valid"], report["issues"]
    with rlarchive.open(p, spaces="neutral") as ar:
        ar.dump()
        assert_same(v, ar.data["v"])


_A = __import__("numpy").arange(3, dtype="float32")
_B = __import__("numpy").full(3, 7, dtype="float32")


@settings(max_examples=examples(40))
@given(
    st.dictionaries(
        st.sampled_from(["o", "policy.optimizer", "critic-1"]), values(max_leaves=12), min_size=1, max_size=2
    )
)
@example({"o": {"": {"x": _A}, "x": _B}})  # tensor names "/x" and "x", not "x" twice
@example({"o": {"a": {"": _A}, "/": _B, "~": _A}})
@example({"o": {"": _A}})  # the name would be "": refused
def test_optimizer_state_of_any_structure_round_trips(workdir, opts):
    """Optimizer states of any structure: every array goes to optimizer.NAME, named by its JSON Pointer.

    The one refusal allowed: a pointer that makes an invalid tensor name ("" or
    beginning with "__", spec §10.2), for an array directly under a key "" or "__...".
    """
    try:
        save_and_read_back(os.path.join(workdir, "o.rlarchive"), ArchiveInput({}, optimizers=opts))
    except rlarchive.RlarchiveError as e:
        assert e.code == "WRITE_INVALID" and (
            "invalid tensor name ''" in str(e) or "invalid tensor name '__" in str(e)
        ), e
