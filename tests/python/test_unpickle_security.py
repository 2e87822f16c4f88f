"""The restricted unpickler against hostile streams (Annex B.5).

Every stream here is written opcode by opcode (or pickled from a plain
stand-in class under a fake module), so the tests need only NumPy. They
cover: process-wide state a stream could rewrite (BUILD on shared stand-ins),
memory amplification through memo references and broadcasts (the import
budget), integers beyond MAX_INT_DIGITS, map keys whose hash recurses or
explodes, and find_class's plain-name rule.
"""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import struct
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

from rlarchive import spaces, unpickle
from rlarchive.errors import RlarchiveError
from rlarchive.limits import MAX_INT_DIGITS
from rlarchive.unpickle.budget import DEFAULT_IMPORT_BUDGET, ImportBudget
from rlarchive.values import ClassRef, Encoder, Opaque

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.join(HERE, "..", "..", "python")
import sb_fixtures as F  # noqa: E402

MiB = 1 << 20


# ---------------------------------------------------------------------------
# writing streams by hand
# ---------------------------------------------------------------------------


def s(text: str) -> bytes:
    """SHORT_BINUNICODE."""
    b = text.encode()
    return b"\x8c" + bytes([len(b)]) + b


def g(module: str, name: str) -> bytes:
    """STACK_GLOBAL module.name."""
    return s(module) + s(name) + b"\x93"


def slot_state(*pairs: bytes) -> bytes:
    """A BUILD state ``(None, {k: v, ...})``: the slot-state form, applied with setattr."""
    return b"N}(" + b"".join(pairs) + b"u\x86"


P4 = b"\x80\x04"

#: The two attacks: TrainFreq's __new__ replaced by a name that refuses calls,
#: and the shared builtins.float name renamed to os.system.
TRAINFREQ_ATTACK = (
    P4
    + g("stable_baselines3.common.type_aliases", "TrainFreq")
    + slot_state(s("__new__"), g("builtins", "int"))
    + b"b."
)
FLOAT_ATTACK = P4 + g("builtins", "float") + slot_state(s("module"), s("os"), s("qualname"), s("system")) + b"b."
#: A constructor's defaults rewritten (cloudpickle's _make_cell would then fill every "empty" cell).
DEFAULTS_ATTACK = P4 + g("cloudpickle.cloudpickle", "_make_cell") + slot_state(s("__defaults__"), b"K\x07\x85") + b"b."
#: The ndarray name every _reconstruct checks against, renamed.
NDARRAY_ATTACK = P4 + g("numpy", "ndarray") + slot_state(s("qualname"), s("matrix")) + b"b."
#: A space class's kind changed (every later Box would be read as a Discrete).
SPACE_CLASS_ATTACK = P4 + g("gymnasium.spaces.box", "Box") + slot_state(s("kind"), s("discrete")) + b"b."
ATTACKS = [TRAINFREQ_ATTACK, FLOAT_ATTACK, DEFAULTS_ATTACK, NDARRAY_ATTACK, SPACE_CLASS_ATTACK]


def benign_streams() -> dict[str, bytes]:
    """Benign streams touching every stand-in the attacks aim at."""
    trainfreq = (
        P4
        + g("stable_baselines3.common.type_aliases", "TrainFreq")
        + b"K\x04"
        + g("stable_baselines3.common.type_aliases", "TrainFrequencyUnit")
        + s("step")
        + b"\x85R\x86\x81."
    )
    box = F.gym_box(np.array([0.0, -1.0]), np.array([1.0, 2.0]), (2,))
    with F.fake_modules({c.__module__: {c.__qualname__: c} for c in F.GYM_CLASSES.values()}):
        box_stream = pickle.dumps(box, protocol=4)
    return {
        "trainfreq": trainfreq,
        "float": pickle.dumps(float, protocol=2),
        "array": pickle.dumps(np.arange(6, dtype=">i4").reshape(2, 3), protocol=2),
        "box": box_stream,
        "closure": base64.b64decode("".join(F.CONSTANT_FN_CLOUDPICKLE_1_6)),
        "classes": pickle.dumps([float, bytes], protocol=4),
    }


CANONICAL = """
import base64, json, sys
from rlarchive import unpickle
from rlarchive.values import Encoder

def canonical(data):
    try:
        value = unpickle.decode(data)
    except unpickle.NotNeutral as e:
        return "not neutral"
    return json.dumps(Encoder("arrays", {}, 1 << 20).encode(value, "/v"), sort_keys=True)

streams = json.load(sys.stdin)
json.dump({k: canonical(base64.b64decode(v)) for k, v in streams.items()}, sys.stdout)
"""


def canonical(data: bytes) -> str:
    try:
        value = unpickle.decode(data)
    except unpickle.NotNeutral:
        return "not neutral"
    return json.dumps(Encoder("arrays", {}, 1 << 20).encode(value, "/v"), sort_keys=True)


def run_python(code: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(PYTHON_DIR))
    return subprocess.run(
        [sys.executable, "-c", code], input=stdin, capture_output=True, text=True, env=env, timeout=300
    )


# ---------------------------------------------------------------------------
# 1. no process-wide state a stream can rewrite
# ---------------------------------------------------------------------------


def test_hostile_streams_then_benign_ones_give_what_a_fresh_process_gives():
    streams = benign_streams()
    r = run_python(CANONICAL, json.dumps({k: base64.b64encode(v).decode() for k, v in streams.items()}))
    assert r.returncode == 0, r.stderr
    fresh = json.loads(r.stdout)
    assert all(v != "not neutral" for v in fresh.values()), fresh
    refused = []
    for attack in ATTACKS:
        for load in (unpickle.decode, unpickle.restricted_loads):  # converted or not
            try:
                load(attack)
            except unpickle.NotNeutral:
                refused.append(attack)
    here = {k: canonical(v) for k, v in streams.items()}
    assert here == fresh
    assert len(refused) == 2 * len(ATTACKS)
    assert json.loads(here["trainfreq"]) == {"$type": "tuple", "items": [4, "step"]}
    assert json.loads(here["float"]) == {"$type": "class", "module": "builtins", "qualname": "float"}


def test_build_is_refused_on_every_allow_listed_global():
    states = [
        slot_state(s("module"), s("os")),  # slot state: setattr
        b"}" + s("module") + s("os") + b"s",  # dict state: __dict__ update
        s("anything"),  # a __setstate__ argument
    ]
    for module, name in unpickle.CONSTRUCTORS:
        for state in states:
            with pytest.raises(unpickle.NotNeutral, match="sets the state"):
                unpickle.restricted_loads(P4 + g(module, name) + state + b"b.")
    # and on a recorded name, and on what calls return
    with pytest.raises(unpickle.NotNeutral):
        unpickle.restricted_loads(P4 + g("stable_baselines3.common.utils", "Schedule") + states[0] + b"b.")
    cell = P4 + g("cloudpickle.cloudpickle", "_make_empty_cell") + b")R"
    with pytest.raises(unpickle.NotNeutral):
        unpickle.restricted_loads(cell + slot_state(s("value"), s("x")) + b"b.")


def test_filling_a_closure_sets_cells_only():
    """cloudpickle's old ``_fill_function`` fills the cells of a closure; a closure built by ``_make_function`` holds
    whatever the stream put in it, and filling it must not rewrite a stand-in that is not a cell (here the shared
    TrainFrequencyUnit, whose value would become a raw stand-in, returned as it is)."""
    cp = "cloudpickle.cloudpickle"
    unit = g("stable_baselines3.common.type_aliases", "TrainFrequencyUnit") + s("step") + b"\x85R\x94" + b"0"
    code = g(cp, "_builtin_type") + s("CodeType") + b"\x85R" + b"(" + b"K\x00" * 12 + s("x") + b"\x85)tR"
    func = g(cp, "_make_function") + b"(" + code + b"NNN" + b"h\x00\x85" + b"tR"  # closure: (the unit,)
    fill = g(cp, "_fill_function") + func + b"}" + s("closure_values") + g("os", "system") + b"\x85s\x86R0"
    with pytest.raises(unpickle.NotNeutral, match="malformed function closure"):
        unpickle.decode(P4 + unit + fill + b"h\x00.")
    assert unpickle.decode(P4 + unit + b"h\x00.") == "step"


def test_stand_ins_are_immutable():
    with pytest.raises(TypeError):
        unpickle.CONSTRUCTORS[("os", "system")] = unpickle.GlobalName("os", "system")  # type: ignore[index]
    for _key, entry in unpickle.CONSTRUCTORS.items():
        for attr in ("module", "qualname", "__defaults__", "__new__", "kind", "_fn"):
            with pytest.raises(AttributeError):
                setattr(entry, attr, "os")
        with pytest.raises(AttributeError):
            del entry.module
    name = unpickle.GlobalName("stable_baselines3.common.buffers", "ReplayBuffer")
    with pytest.raises(AttributeError):
        name.module = "os"
    assert not hasattr(name, "__dict__")


def test_the_standard_unpickler_cannot_rewrite_stand_ins_either():
    """Even a C ``pickle.Unpickler`` handed the stand-ins directly cannot change them through BUILD."""

    class Plain(pickle.Unpickler):
        def find_class(self, module, name):
            return unpickle.CONSTRUCTORS[(module, name)]

    for attack in ATTACKS:
        with pytest.raises((unpickle.NotNeutral, AttributeError, TypeError)):
            Plain(io.BytesIO(attack)).load()
    assert unpickle.CONSTRUCTORS[("builtins", "float")] == unpickle.GlobalName("builtins", "float")
    assert unpickle.CONSTRUCTORS[("numpy", "ndarray")].qualname == "ndarray"
    assert unpickle.CONSTRUCTORS[("gymnasium.spaces.box", "Box")].kind == "box"


def test_calls_and_containers_are_limited_to_stand_ins():
    cases = {
        "call a string": P4 + s("abc") + b")R.",
        "call a dict": P4 + b"})R.",
        "NEWOBJ a name": P4 + g("torch.nn.modules.activation", "ReLU") + b")\x81.",
        "NEWOBJ a constructor": P4 + g("collections", "deque") + b")\x81.",
        "append to a tuple": P4 + b")K\x01a.",
        "setitem on a constructor's result": P4 + g("numpy", "dtype") + s("f4") + b"\x85R" + s("k") + b"K\x01s.",
        "extension code": b"\x80\x02\x82\x01.",
        "persistent id": b"\x80\x02Pfoo\n.",
        "out-of-band buffer": b"\x80\x05\x97.",
    }
    for what, stream in cases.items():
        with pytest.raises(unpickle.NotNeutral):
            unpickle.decode(stream)
            pytest.fail(what)


# ---------------------------------------------------------------------------
# 2. memory amplification is charged to the budget before it happens
# ---------------------------------------------------------------------------


def peak_bytes(fn) -> tuple[object, int]:
    """(what ``fn`` returned or raised, the peak of traced allocations while it ran)."""
    tracemalloc.start()
    try:
        try:
            out: object = fn()
        except (RlarchiveError, unpickle.NotNeutral) as e:
            out = e
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_box_shared_in_a_dict_space_converts_once_and_is_charged_per_reference():
    box = F.gym_box(-np.ones(32768, np.float32), np.ones(32768, np.float32), (32768,))  # 128 KiB per bound
    space = F.gym_dict({f"k{i}": box for i in range(40)})
    with F.fake_modules({c.__module__: {c.__qualname__: c} for c in F.GYM_CLASSES.values()}):
        data = pickle.dumps(space, protocol=4)
    assert len(data) < 400_000  # the box is in the stream once (40 copies would take 13 MB)
    budget = ImportBudget(64 * MiB)
    d = unpickle.decode(data, budget=budget)
    boxes = [sp for _, sp in d.spaces]
    assert all(b is boxes[0] for b in boxes) and isinstance(boxes[0], spaces.Box)
    per_box = boxes[0].low.nbytes + boxes[0].high.nbytes
    assert budget.used >= 40 * per_box
    out, peak = peak_bytes(lambda: unpickle.decode(data, budget=ImportBudget(20 * per_box)))
    assert isinstance(out, RlarchiveError) and out.code == "LIMIT_EXCEEDED"
    assert peak < 8 * per_box


def test_a_big_endian_array_referenced_thousands_of_times_is_swapped_once_and_charged_each_time():
    arr = np.arange(4096, dtype=">f8")  # 32 KiB
    data = pickle.dumps([arr] * 3000, protocol=2)
    budget = ImportBudget(DEFAULT_IMPORT_BUDGET)
    out = unpickle.decode(data, budget=budget)
    assert out[0] is out[-1] and out[0].dtype == np.dtype("<f8") and np.array_equal(out[0], arr)
    assert budget.used >= 3000 * arr.nbytes
    out, peak = peak_bytes(lambda: unpickle.decode(data, budget=ImportBudget(1000 * arr.nbytes)))
    assert isinstance(out, RlarchiveError) and out.code == "LIMIT_EXCEEDED"
    assert peak < 20 * arr.nbytes


def test_box_bounds_broadcast_from_a_scalar_are_charged_before_the_copy():
    box = F.gym_box(-1.0, 1.0, (2,))
    box.__dict__.update(_shape=(4096, 4096), low=np.float64(-1.0), high=np.float64(1.0), dtype=np.dtype(np.float64))
    with F.fake_modules({c.__module__: {c.__qualname__: c} for c in F.GYM_CLASSES.values()}):
        data = pickle.dumps(box, protocol=4)
    out, peak = peak_bytes(lambda: unpickle.decode(data, budget=ImportBudget(64 * MiB)))  # one bound is 128 MiB
    assert isinstance(out, RlarchiveError) and out.code == "LIMIT_EXCEEDED"
    assert peak < 4 * MiB
    small = F.gym_box(-1.0, 1.0, (2,))
    small.__dict__.update(_shape=(64, 64), low=np.float32(-1.0), high=np.float32(1.0))
    with F.fake_modules({c.__module__: {c.__qualname__: c} for c in F.GYM_CLASSES.values()}):
        got = unpickle.decode(pickle.dumps(small, protocol=4))
    assert got == spaces.Box(np.full((64, 64), -1, np.float32), np.ones((64, 64), np.float32), (64, 64), "F32")


def test_without_a_budget_the_default_one_applies_and_the_limit_fails_the_whole_decode():
    arr = np.zeros(MiB, np.uint8)
    data = pickle.dumps([arr] * 300, protocol=4)  # 300 MiB written out, from a 1 MiB stream
    out, peak = peak_bytes(lambda: unpickle.decode(data))
    assert isinstance(out, RlarchiveError) and not isinstance(out, unpickle.NotNeutral)
    assert out.code == "LIMIT_EXCEEDED" and DEFAULT_IMPORT_BUDGET < 300 * MiB
    assert peak < 16 * MiB
    assert len(unpickle.decode(pickle.dumps([arr] * 100, protocol=4))) == 100


def test_many_small_objects_are_charged_per_part():
    data = pickle.dumps(list(range(100_000)), protocol=4)
    budget = ImportBudget(DEFAULT_IMPORT_BUDGET)
    assert unpickle.decode(data, budget=budget) == list(range(100_000))
    assert budget.used >= 64 * 100_000
    with pytest.raises(RlarchiveError) as e:
        unpickle.decode(data, budget=ImportBudget(MiB))
    assert e.value.code == "LIMIT_EXCEEDED"


def test_declared_sizes_and_memo_indices_allocate_nothing():
    cases = [
        (b"\x80\x02Nr" + struct.pack("<I", 1 << 30) + b".", None),  # LONG_BINPUT far away: the memo is a dict
        (
            b"\x80\x05\x96" + struct.pack("<Q", 1 << 40) + b"abc.",
            unpickle.NotNeutral,
        ),  # BYTEARRAY8 of 1 TiB, 3 bytes given
        (b"\x80\x04\x8e" + struct.pack("<Q", 1 << 40) + b"abc.", unpickle.NotNeutral),  # BINBYTES8
    ]
    for data, raises in cases:
        out, peak = peak_bytes(lambda: unpickle.decode(data))
        assert (out is None) if raises is None else isinstance(out, raises), out
        assert peak < MiB


# ---------------------------------------------------------------------------
# 3. integers beyond MAX_INT_DIGITS, and other raw exceptions
# ---------------------------------------------------------------------------


def test_integers_of_more_than_max_int_digits_are_not_neutral():
    largest = 10**MAX_INT_DIGITS - 1
    for n in (largest, -largest, 2**64):
        assert unpickle.decode(pickle.dumps(n, protocol=2)) == n
        Encoder("arrays", {}, 1024).encode(unpickle.decode(pickle.dumps(n)), "/v")  # the writer takes it
    for n in (largest + 1, -(largest + 1), 2**20000, 1 << 200_000):  # 4097 digits and up, past Python's str limit
        with pytest.raises(unpickle.NotNeutral, match="decimal digits"):
            unpickle.decode(pickle.dumps(n, protocol=2))
    huge_n = F.gym_discrete(3)
    huge_n.__dict__["n"] = 10**5000
    with F.fake_modules({c.__module__: {c.__qualname__: c} for c in F.GYM_CLASSES.values()}):
        data = pickle.dumps(huge_n, protocol=4)
    with pytest.raises(unpickle.NotNeutral):
        unpickle.decode(data)
    # a decimal literal in a protocol 0 stream past Python's limit is refused while reading
    with pytest.raises(unpickle.NotNeutral):
        unpickle.decode(b"L" + b"9" * 5000 + b"L\n.")


def test_map_keys_that_would_hash_recursively_or_exponentially_are_refused():
    """A 100,000-deep tuple as a dict key crashes CPython's hash; a shared one takes 2^40 steps."""
    code = textwrap.dedent(
        """
        import struct
        from rlarchive import unpickle
        streams = {
            "deep key": b"\\x80\\x04}N" + b"\\x85" * 100000 + b"Ns.",
            "shared key": b"\\x80\\x04}N" + b"\\x94h\\x00\\x86" * 40 + b"Ns.",
            "deep set item": b"\\x80\\x04\\x8f(N" + b"\\x85" * 100000 + b"\\x90.",
            "deep frozenset": b"\\x80\\x04(N" + b"\\x85" * 100000 + b"\\x91.",
            "deep nesting": b"\\x80\\x04N" + b"\\x85" * 100000 + b".",
        }
        for name, data in streams.items():
            try:
                unpickle.decode(data)
                print(name, "neutral")
            except unpickle.NotNeutral as e:
                print(name, "not neutral")
        """
    )
    r = run_python(code)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.split("\n")[:5] == [
        f"{n} not neutral" for n in ("deep key", "shared key", "deep set item", "deep frozenset", "deep nesting")
    ]


def test_nesting_is_bounded_by_the_writer_depth_limit():
    """A neutral value always fits MAX_JSON_DEPTH as a data member (tuples take two JSON levels)."""
    from rlarchive.writer import save  # noqa: F401 - the writer's checks are what this guards

    ok = ()
    for _ in range(25):
        ok = (ok,)
    value = unpickle.decode(pickle.dumps(ok, protocol=4))
    Encoder("arrays", {}, 1024).encode(value, "/data/v")
    deep = ok
    for _ in range(10):
        deep = (deep,)
    with pytest.raises(unpickle.NotNeutral, match="nests too deeply"):
        unpickle.decode(pickle.dumps(deep, protocol=4))


def test_spaces_the_writer_would_refuse_are_not_neutral():
    """A space breaking a rule of spec §8 stays opaque instead of failing the whole import later."""
    gym = {c.__module__: {c.__qualname__: c} for c in F.GYM_CLASSES.values()}
    bad = [F.gym_discrete(0), F.gym_multi_discrete([2, 0]), F.gym_multi_binary(0)]
    good = [F.gym_discrete(1), F.gym_multi_discrete([2, 1]), F.gym_multi_binary(1)]
    with F.fake_modules(gym):
        bad_streams = [pickle.dumps(sp, protocol=4) for sp in bad]
        good_streams = [pickle.dumps(sp, protocol=4) for sp in good]
    for data in good_streams:
        unpickle.decode(data)
    for data in bad_streams:
        with pytest.raises(unpickle.NotNeutral, match="spec §8"):
            unpickle.decode(data)


def test_a_multibinary_size_that_is_not_an_integer_is_not_neutral():
    """``n`` of 2.5 would be written as 2: refused, like a Discrete's float ``n`` (and a whole float, as gym stores
    an int); a NumPy integer is taken as an int."""
    gym = {c.__module__: {c.__qualname__: c} for c in F.GYM_CLASSES.values()}
    streams = {}
    for n in (2.5, 2.0, (2, 2.5), np.int64(3)):
        sp = F.gym_multi_binary(2)
        sp.__dict__["n"] = n
        with F.fake_modules(gym):
            streams[repr(n)] = pickle.dumps(sp, protocol=4)
    for n in ("2.5", "2.0", "(2, 2.5)"):
        with pytest.raises(unpickle.NotNeutral, match="integer|spec §8"):
            unpickle.decode(streams[n])
    assert unpickle.decode(streams[repr(np.int64(3))]) == spaces.MultiBinary(3)


# ---------------------------------------------------------------------------
# 4. find_class: plain names under the prefixes, never an import
# ---------------------------------------------------------------------------


def test_find_class_records_plain_names_and_refuses_malformed_ones():
    good = unpickle.decode(P4 + g("stable_baselines3.common.policies", "ActorCriticPolicy") + b".")
    assert good == ClassRef("stable_baselines3.common.policies", "ActorCriticPolicy")
    nested = unpickle.decode(P4 + g("sb3_contrib.common.x", "Outer.Inner") + b".")
    assert nested == ClassRef("sb3_contrib.common.x", "Outer.Inner")
    # any plain identifier path is only a name: recorded, never imported
    for module, name in [
        ("stable_baselines3", "PPO"),
        ("mypkg.extractors", "Custom"),
        ("os", "system"),
        ("builtins", "eval"),
    ]:
        assert unpickle.decode(P4 + g(module, name) + b".") == ClassRef(module, name)
    for module, name in [
        ("stable_baselines3.common\n", "X"),
        ("stable_baselines3.common", "X\n"),
        ("stable_baselines3.a-b", "C"),
        ("stable_baselines3.x", "y z"),
        ("stable_baselines3.x", ""),
        ("stable_baselines3.x", "a..b"),
        ("stable_baselines3.", "X"),
        ("", "X"),
    ]:
        with pytest.raises(unpickle.NotNeutral):
            unpickle.decode(P4 + g(module, name) + b".")
            pytest.fail(f"{module!r} {name!r}")


_CALLED: list = []


def _record_call(*args):  # what a pickle below names; it must never run
    _CALLED.append(args)


def test_a_call_of_a_name_is_recorded_never_made():
    here = __name__
    never = P4 + g(here, "_record_call") + b"\x8c\x04true\x85R."
    with pytest.raises(unpickle.NotNeutral):
        unpickle.decode(never)
    assert pickle.loads(never) is None and _CALLED == [("true",)]  # the plain unpickler does run it
    _CALLED.clear()
    # os.system("true") at the top: the whole value stays opaque (its original bytes)
    call = P4 + g("os", "system") + b"\x8c\x04true\x85R."
    with pytest.raises(unpickle.NotNeutral) as e:
        unpickle.decode(call)
    assert "os.system" in e.value.reason
    # inside a list: only that element becomes an opaque leaf, a pickle of exactly the call
    value = unpickle.decode(P4 + b"]\x94(K\x01" + g("os", "system") + b"\x8c\x04true\x85Re.")
    assert value[0] == 1 and isinstance(value[1], Opaque)
    assert value[1].type == "os.system"
    assert unpickle.describe_globals(value[1].data) == [("os", "system")]
    inner = unpickle.decode(P4 + b"]\x94(K\x01" + g(here, "_record_call") + b"\x8c\x04true\x85Re.")
    assert isinstance(inner[1], Opaque) and _CALLED == []
    pickle.loads(inner[1].data)  # the leaf makes exactly the recorded call
    assert _CALLED == [("true",)]


def test_a_recorded_dotted_name_never_traverses_a_module():
    ref = unpickle.decode(P4 + g("stable_baselines3.common.utils", "os.system") + b".")
    assert ref == ClassRef("stable_baselines3.common.utils", "os.system")
    with pytest.raises(RlarchiveError) as e:
        ref.resolve(["stable_baselines3.common.utils:os.system"])
    assert e.value.code == "IMPORT_NOT_ALLOWED"


def test_decoding_imports_nothing_the_stream_names():
    names = [
        ("gymnasium.spaces.box", "Box"),
        ("stable_baselines3.common.utils", "FloatSchedule"),
        ("torch.nn.modules.activation", "ReLU"),
        ("sb3_contrib.ppo_mask", "MaskablePPO"),
        ("rlarchive_absent_package.sub", "X"),
        ("stable_baselines3.rlarchive_absent", "Y"),
        ("cloudpickle.cloudpickle", "subimport"),
        ("os", "system"),
    ]
    streams = [P4 + g(m, n) + b"." for m, n in names]
    streams.append(P4 + g("cloudpickle.cloudpickle", "subimport") + s("rlarchive_absent_package") + b"\x85R.")
    code = textwrap.dedent(
        f"""
        import sys
        from rlarchive import unpickle
        seen = []
        active = [False]
        sys.addaudithook(lambda event, args: seen.append(str(args[0])) if active[0] and event == "import" else None)
        before = set(sys.modules)
        for data in {streams!r}:
            active[0] = True
            try:
                unpickle.decode(data)
            except unpickle.NotNeutral:
                pass
            active[0] = False
        new = sorted(m for m in set(sys.modules) - before if not m.startswith(("numpy.", "encodings.")))
        print(new, [m for m in seen if not m.startswith(("numpy", "encodings"))])
        """
    )
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[] []"
