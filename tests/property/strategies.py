"""Reusable Hypothesis strategies for rlarchive.

Everything the Python writer accepts, with the edge values that break readers:

- :func:`values`: the whole value model (spec §7) nested to realistic depth:
  None, bools, integers at and beyond ±(2^53-1) and the int64/uint64 limits,
  floats (±0.0, subnormals, ±inf, NaN with any payload, extremes), Unicode
  strings (astral plane, controls, U+2028, keys whose UTF-16 order differs from
  their code point order), bytes, tuples, lists, maps with string keys
  (including ``'$type'``) and with any hashable keys (int, float, bool, None,
  bytes, tuples), NumPy arrays of every dtype (0-d, zero-size, strided,
  transposed, big-endian inputs; inline or above 1 KiB so they go to the
  ``arrays`` group), NumPy scalars, raw-bit tensors (:class:`rlarchive.RawTensor`)
  for dtypes NumPy lacks, class references, opaque pickles, spaces, schedules;
- :func:`spaces_`: every space kind of spec §8, nested (neutral dataclasses);
- :func:`schedules`: every schedule kind of spec §9;
- :func:`tensors` / :func:`tensor_groups`: every dtype of spec §10.1 with
  random shapes and raw bits;
- :func:`optimizer_states`: dicts shaped like a torch Adam ``state_dict()``
  with NumPy arrays;
- :func:`archives`: whole archives (data, tensors, optimizers, metadata) as an
  :class:`ArchiveInput`, ready for ``rlarchive.save(path, **a.kwargs())``.

Every strategy generates only inputs the format can hold, so that a round trip
must succeed; :func:`wild_values` adds inputs the writer must refuse cleanly.

The functions that build a strategy from hashable arguments build it once
(``functools.cache``): a composite strategy draws them at every example, and
Hypothesis validates a strategy object, a recursive one over its whole tree, the
first time it is drawn from, which took most of the time of a whole archive's
example when each draw built the strategies anew.
"""

from __future__ import annotations

import functools
import math
import string
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

import rlarchive
from rlarchive import spaces as sp
from rlarchive.dtypes import DTYPES, INTEGER_CODES
from rlarchive.tensors import RawTensor

MAX_SAFE = 2**53 - 1

# ----------------------------------------------------------------------------- numbers

EDGE_INTS = [
    0,
    1,
    -1,
    2,
    255,
    256,
    -128,
    65535,
    2**31 - 1,
    -(2**31),
    2**32 - 1,
    2**32,
    MAX_SAFE - 1,
    MAX_SAFE,
    -MAX_SAFE,
    MAX_SAFE + 1,
    -(MAX_SAFE + 1),
    MAX_SAFE + 2,
    -(MAX_SAFE + 2),
    2**63 - 1,
    -(2**63),
    2**63,
    2**64 - 1,
    -(2**64 - 1),
    2**64,
    10**21,
    10**40,
    -(10**100),
    1732246000123456789,
    10**4095,  # 4096 digits: the largest an int tag may hold (MAX_INT_DIGITS)
]


def _f(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


EDGE_FLOATS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.1,
    1 / 3,
    0.5,
    1.5e-7,
    1e-6,
    1e-7,
    1e20,
    1e21,
    1e22,
    123456789.125,
    5e-324,
    -5e-324,  # smallest subnormal
    2.225073858507201e-308,  # largest subnormal
    2.2250738585072014e-308,  # smallest normal
    1.7976931348623157e308,
    -1.7976931348623157e308,
    float(2**53),
    float(2**53 + 2),
    -float(2**63),
    float(2**64),
    math.inf,
    -math.inf,
    math.nan,
    _f(0x7FF8000000000001),  # quiet NaN with a payload
    _f(0xFFF8000000000000),  # negative NaN
    _f(0x7FF0000000000001),  # signalling NaN
    _f(0x000FFFFFFFFFFFFF),
    9007199254740993.0,
    2.5e-8,
    4.35,
    0.000001,
    0.0000001,
]


@functools.cache
def ints(max_digits: int = 60) -> st.SearchStrategy[int]:
    """Integers: edge values, the neighbourhood of ±2^53 and 2^63/2^64, and arbitrary big ones."""
    return st.one_of(
        st.sampled_from(EDGE_INTS),
        st.integers(-MAX_SAFE, MAX_SAFE),
        st.integers(MAX_SAFE - 3, MAX_SAFE + 3),
        st.integers(-(2**64), 2**64),
        st.integers(1, max_digits).flatmap(lambda n: st.integers(-(10**n), 10**n)),
    )


@functools.cache
def safe_ints() -> st.SearchStrategy[int]:
    """Integers a plain JSON number holds (±(2^53-1)), edges included."""
    return st.one_of(
        st.sampled_from([0, 1, -1, MAX_SAFE, -MAX_SAFE, 2**31, 2**32 - 1]), st.integers(-MAX_SAFE, MAX_SAFE)
    )


@functools.cache
def floats(finite: bool = False) -> st.SearchStrategy[float]:
    """Floats: edge values, arbitrary bit patterns (NaN payloads, subnormals), ordinary values."""
    edge = [x for x in EDGE_FLOATS if math.isfinite(x)] if finite else EDGE_FLOATS
    bits = st.integers(0, 2**64 - 1).map(_f)
    if finite:
        bits = bits.filter(math.isfinite)
    return st.one_of(
        st.sampled_from(edge),
        bits,
        st.floats(allow_nan=not finite, allow_infinity=not finite, allow_subnormal=True),
    )


# ----------------------------------------------------------------------------- strings

#: Keys whose UTF-16 order differs from their code point order (the dump sorts by UTF-16 units).
UTF16_ORDER_KEYS = ["\ue000", "\U0001f600", "\uffff", "\U00010000", "\ud7ff", "\uff61", "\U0010ffff", "z", "A"]
EDGE_STRINGS = [
    "",
    "$type",
    "é",
    "naïve",
    "日本語",
    "\U0001f600",
    "\ue000",
    "\uffff",
    "\U0010ffff",
    "\x00",
    "\x01\x1f\x7f",
    'tab\tnl\ncr\rq"bs\\',
    "\u2028\u2029",
    "~0~1/",
    "a/b",
    "__x",
    " ",
    "\ufeff",
    "null",
    "1.0",
    "nan",
    "inf",
    "-0",
    "float",
    "int",
    "bytes",
    "tuple",
    "dict",
    "ndarray",
    "scalar",
    "space",
    "schedule",
    "class",
    "opaque",
] + UTF16_ORDER_KEYS


@functools.cache
def texts(max_size: int = 12) -> st.SearchStrategy[str]:
    """Unicode strings (every plane, no lone surrogates) and edge strings."""
    return st.one_of(
        st.sampled_from(EDGE_STRINGS), st.text(max_size=max_size), st.text(string.printable, max_size=max_size)
    )


@functools.cache
def keys(max_size: int = 6) -> st.SearchStrategy[str]:
    """Map keys: short Unicode strings, '$type', empty, UTF-16-order traps."""
    return st.one_of(st.sampled_from(EDGE_STRINGS), st.text(max_size=max_size))


# ----------------------------------------------------------------------------- dtypes, arrays, tensors

ALL_CODES = list(DTYPES)
NUMPY_CODES = [c for c, d in DTYPES.items() if d.numpy is not None]
RAW_ONLY_CODES = [c for c, d in DTYPES.items() if d.numpy is None]
BOX_CODES = [c for c, d in DTYPES.items() if d.kind in ("int", "uint", "float", "bool")]
INT_CODES = sorted(INTEGER_CODES)


@functools.cache
def shapes(max_dims: int = 3, max_side: int = 4, max_elements: int = 64) -> st.SearchStrategy[tuple]:
    """Shapes: 0-d, zero-size, small n-d."""
    return (
        st.lists(st.integers(0, max_side), max_size=max_dims).map(tuple).filter(lambda s: math.prod(s) <= max_elements)
    )


def _raw_bytes(draw, code: str, n: int) -> bytes:
    d = DTYPES[code]
    if code == "BOOL":
        return bytes(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    if n * d.size <= 64:
        return draw(st.binary(min_size=n * d.size, max_size=n * d.size))
    # larger arrays: a seeded generator (Hypothesis would spend its whole budget on the bytes)
    seed = draw(st.integers(0, 2**32 - 1))
    return np.random.default_rng(seed).integers(0, 256, n * d.size, dtype=np.uint8).tobytes()


def _layout(draw, a: np.ndarray) -> np.ndarray:
    """The same logical array, given as a strided, transposed, Fortran-ordered or big-endian input."""
    how = draw(st.sampled_from(["c", "c", "fortran", "strided", "reversed", "transposed", "big-endian", "readonly"]))
    if how == "fortran" and a.ndim:  # (asfortranarray makes a 0-d array 1-d)
        return np.asfortranarray(a)
    if how == "strided" and a.ndim:
        big = np.zeros((a.shape[0] * 2,) + a.shape[1:], a.dtype)
        big[::2] = a
        return big[::2]
    if how == "reversed" and a.ndim:
        return np.ascontiguousarray(a[::-1])[::-1]
    if how == "transposed" and a.ndim >= 2:
        return np.ascontiguousarray(a.T).T
    if how == "big-endian" and a.dtype.itemsize > 1 and a.dtype.kind != "b":
        return a.astype(a.dtype.newbyteorder(">"))
    if how == "readonly":
        a = a.copy()
        a.setflags(write=False)
    return a


@st.composite
def numpy_arrays(draw, codes=None, shape=None, big: bool = False, layouts: bool = True) -> np.ndarray:
    """A NumPy array of a dtype NumPy has, any bits, any shape (optionally above 1 KiB)."""
    code = draw(st.sampled_from(codes or NUMPY_CODES))
    if shape is None:
        shape = draw(
            shapes(max_elements=64) if not big else st.sampled_from([(200,), (33, 17), (3, 100), (1100,), (2, 0, 5)])
        )
    n = math.prod(shape)
    a = np.frombuffer(_raw_bytes(draw, code, n), dtype=np.dtype(DTYPES[code].numpy)).reshape(shape).copy()
    return _layout(draw, a) if layouts else a


@st.composite
def raw_tensors(draw, codes=None, shape=None, big: bool = False) -> RawTensor:
    """A RawTensor: raw element bits of any dtype (including BF16 and the FP8 types)."""
    code = draw(st.sampled_from(codes or ALL_CODES))
    if shape is None:
        shape = draw(shapes() if not big else st.sampled_from([(600,), (40, 40)]))
    n = math.prod(shape)
    raw = np.frombuffer(_raw_bytes(draw, code, n), dtype=np.dtype(DTYPES[code].raw)).reshape(shape).copy()
    return RawTensor(code, tuple(shape), raw)


@functools.cache
def arrays(big_probability: bool = True) -> st.SearchStrategy:
    """Arrays as values: NumPy arrays or RawTensors, inline-sized or (sometimes) above 1 KiB."""
    small = st.one_of(numpy_arrays(), raw_tensors(codes=RAW_ONLY_CODES), raw_tensors())
    if not big_probability:
        return small
    return st.one_of(small, small, small, numpy_arrays(big=True), raw_tensors(big=True))


@functools.cache
def tensors() -> st.SearchStrategy:
    """Tensors for a group: any dtype, shape and bits; inputs in any memory layout."""
    return st.one_of(numpy_arrays(), raw_tensors(), numpy_arrays(big=True), raw_tensors(big=True))


@st.composite
def numpy_scalars(draw):
    """NumPy scalars of every NumPy dtype (any bits), and raw-bit scalars for the others."""
    code = draw(st.sampled_from(ALL_CODES))
    raw = _raw_bytes(draw, code, 1)
    d = DTYPES[code]
    if d.numpy is None:
        return RawTensor(code, (), np.frombuffer(raw, dtype=np.dtype(d.raw)).reshape(()).copy(), scalar=True)
    if code == "BOOL":
        return np.bool_(raw[0])
    return np.frombuffer(raw, dtype=np.dtype(d.numpy))[0]


# ----------------------------------------------------------------------------- names

IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
DOTTED = st.lists(IDENT, min_size=1, max_size=4).map(".".join)
SEGMENT_ALPHABET = string.ascii_letters + string.digits + "._-"


@functools.cache
def group_names() -> st.SearchStrategy[str]:
    """Tensor group names: one member-name segment (never '.' or '..'), never the writer's own groups."""
    return st.text(SEGMENT_ALPHABET, min_size=1, max_size=12).filter(
        lambda s: s not in (".", "..") and s.lower() != "arrays" and not s.lower().startswith("optimizer.")
    )


@functools.cache
def tensor_names() -> st.SearchStrategy[str]:
    """Tensor names: non-empty Unicode strings of at most 255 UTF-8 bytes, not starting with '__'."""
    return st.one_of(
        st.sampled_from(
            ["w", "b", "mlp.0.weight", "poids.été", "权重", "\U0001f600", "\ue000", "_x", "a/b", "$type", " "]
        ),
        st.text(min_size=1, max_size=16),
    ).filter(lambda s: not s.startswith("__") and len(s.encode("utf-8")) <= 255)


def _unique_ci(names: list) -> bool:
    low = [n.lower() for n in names]
    return len(set(low)) == len(low)


# ----------------------------------------------------------------------------- schedules, classes, opaque


@functools.cache
def schedule_numbers() -> st.SearchStrategy:
    """Schedule parameters: plain numbers (finite floats incl. -0.0 and subnormals, safe integers)."""
    return st.one_of(floats(finite=True), safe_ints())


@st.composite
def piecewise(draw):
    n = draw(st.integers(1, 5))
    ts = sorted(
        set(
            draw(
                st.lists(
                    st.one_of(st.floats(0, 1), st.sampled_from([0, 1, 0.0, 1.0, 5e-324, 0.5])), min_size=n, max_size=n
                )
            )
        )
    )
    # strictly increasing by value: 0 and 0.0 are one point
    out, last = [], None
    for t in ts:
        if last is None or t > last:
            out.append(t)
            last = t
    points = tuple((t, draw(schedule_numbers())) for t in out)
    return rlarchive.Piecewise(points, draw(st.sampled_from(["linear", "step"])))


@functools.cache
def schedules() -> st.SearchStrategy:
    """Every schedule kind of spec §9 with valid parameters."""
    frac = st.one_of(st.floats(0, 1, exclude_min=True), st.sampled_from([1, 1.0, 5e-324, 0.1]))
    return st.one_of(
        st.builds(rlarchive.Constant, schedule_numbers()),
        st.builds(rlarchive.Linear, schedule_numbers(), schedule_numbers(), frac),
        piecewise(),
    )


@functools.cache
def class_refs() -> st.SearchStrategy:
    return st.builds(rlarchive.ClassRef, DOTTED, DOTTED)


@functools.cache
def opaques() -> st.SearchStrategy:
    return st.builds(rlarchive.Opaque, st.binary(max_size=40), st.none() | texts(), st.none() | texts())


# ----------------------------------------------------------------------------- spaces


@st.composite
def _box(draw):
    code = draw(st.sampled_from(BOX_CODES))
    shape = draw(st.one_of(shapes(max_elements=24), st.just((20, 20))))  # (20, 20) F32 bounds are referenced
    if DTYPES[code].numpy is None:
        low, high = draw(raw_tensors(codes=[code], shape=shape)), draw(raw_tensors(codes=[code], shape=shape))
    else:
        low, high = draw(numpy_arrays(codes=[code], shape=shape)), draw(numpy_arrays(codes=[code], shape=shape))
    return sp.Box(low, high, tuple(shape), code)


@st.composite
def _multi_discrete(draw):
    code = draw(st.sampled_from(INT_CODES))
    shape = draw(shapes(max_dims=2, max_elements=12))
    nvec = draw(numpy_arrays(codes=[code], shape=shape, layouts=False))
    nvec = np.where(nvec >= 1, nvec, np.ones_like(nvec))  # every element >= 1
    start = draw(numpy_arrays(codes=[code], shape=shape))
    return sp.MultiDiscrete(nvec, start, code)


@functools.cache
def _leaf_spaces() -> st.SearchStrategy:
    pos = st.one_of(st.sampled_from([1, 2, MAX_SAFE]), st.integers(1, MAX_SAFE))
    text = st.builds(
        lambda lo, extra, cs: sp.Text(lo + extra, lo, "".join(sorted(set(cs)))),
        st.integers(0, 2**40),
        st.integers(0, 2**40),
        st.text(min_size=1, max_size=12),
    )
    return st.one_of(
        _box(),
        st.builds(sp.Discrete, pos, safe_ints(), st.sampled_from(INT_CODES)),
        _multi_discrete(),
        st.builds(sp.MultiBinary, st.one_of(pos, st.lists(pos, min_size=1, max_size=3).map(tuple))),
        text,
    )


@functools.cache
def spaces_(max_leaves: int = 8) -> st.SearchStrategy:
    """Every space kind of spec §8, Dict and Tuple nested (neutral dataclasses)."""

    def extend(children):
        return st.one_of(
            st.lists(children, max_size=3).map(lambda xs: sp.Tuple(tuple(xs))),
            st.lists(st.tuples(keys(), children), max_size=3, unique_by=lambda kv: kv[0]).map(
                lambda kvs: sp.Dict(tuple(kvs))
            ),
        )

    return st.recursive(_leaf_spaces(), extend, max_leaves=max_leaves)


# ----------------------------------------------------------------------------- values


@functools.cache
def hashable_keys() -> st.SearchStrategy:
    """Keys of a `dict` value: null, bool, int, float (not NaN), string, bytes, tuples of those."""
    scalar = st.one_of(
        st.none(), st.booleans(), ints(), floats().filter(lambda x: not math.isnan(x)), keys(), st.binary(max_size=6)
    )
    return st.recursive(scalar, lambda k: st.lists(k, max_size=3).map(tuple), max_leaves=4)


@functools.cache
def leaves(big_arrays: bool = True) -> st.SearchStrategy:
    return st.one_of(
        st.none(),
        st.booleans(),
        ints(),
        floats(),
        texts(),
        st.binary(max_size=24),
        arrays(big_arrays),
        numpy_scalars(),
        class_refs(),
        opaques(),
        schedules(),
        spaces_(max_leaves=4),
    )


@functools.cache
def values(max_leaves: int = 24, big_arrays: bool = True) -> st.SearchStrategy:
    """Any value of the value model, nested: lists, tuples, string-keyed maps, any-keyed maps."""

    def extend(children):
        return st.one_of(
            st.lists(children, max_size=4),
            st.lists(children, max_size=4).map(tuple),
            st.dictionaries(keys(), children, max_size=4),
            st.dictionaries(hashable_keys(), children, max_size=4),
        )

    return st.recursive(leaves(big_arrays), extend, max_leaves=max_leaves)


@functools.cache
def data_maps(max_keys: int = 8, max_leaves: int = 24) -> st.SearchStrategy[dict]:
    """The ``data`` argument of save: string keys (including '$type' and '') to values."""
    return st.dictionaries(keys(), values(max_leaves=max_leaves), max_size=max_keys)


# ----------------------------------------------------------------------------- optimizers


@st.composite
def optimizer_states(draw) -> dict:
    """A dict shaped like torch Adam's state_dict(), with NumPy arrays (spec §7.9)."""
    n = draw(st.integers(0, 4))
    state = {}
    for i in range(n):
        shape = draw(shapes(max_dims=2, max_side=5, max_elements=30))
        code = draw(st.sampled_from(["F32", "F32", "F64", "F16"]))
        entry = {
            "step": draw(st.sampled_from([np.array(12.0, np.float32), np.array(3.0), np.array(7, np.int64)])),
            "exp_avg": draw(numpy_arrays(codes=[code], shape=shape)),
            "exp_avg_sq": draw(numpy_arrays(codes=[code], shape=shape)),
        }
        if draw(st.booleans()):
            entry["max_exp_avg_sq"] = draw(numpy_arrays(codes=[code], shape=shape))
        state[i] = entry
    group = {
        "lr": draw(floats(finite=True)),
        "betas": (draw(floats()), draw(floats())),
        "eps": 1e-08,
        "weight_decay": draw(st.sampled_from([0, 0.0, 0.01])),
        "amsgrad": draw(st.booleans()),
        "maximize": False,
        "foreach": None,
        "capturable": False,
        "differentiable": False,
        "fused": None,
        "params": list(range(n)),
    }
    out = {"state": state, "param_groups": [group]}
    if draw(st.booleans()):  # something extra, as a scheduler or a custom optimizer would add
        out["extra"] = draw(values(max_leaves=4, big_arrays=False))
    return out


@functools.cache
def optimizer_names() -> st.SearchStrategy[str]:
    return st.text(SEGMENT_ALPHABET, min_size=1, max_size=10).filter(lambda s: s not in (".", ".."))


# ----------------------------------------------------------------------------- archives


@dataclass
class ArchiveInput:
    """Everything one ``rlarchive.save`` call takes."""

    data: dict
    tensors: dict = field(default_factory=dict)
    optimizers: dict = field(default_factory=dict)
    metadata: dict | None = None

    def kwargs(self) -> dict:
        return {"data": self.data, "tensors": self.tensors, "optimizers": self.optimizers, "metadata": self.metadata}


@st.composite
def tensor_groups(draw, max_groups: int = 3) -> dict:
    """{group: {tensor name: tensor}}: groups named like member-name segments, distinct ignoring case."""
    names = draw(st.lists(group_names(), max_size=max_groups).filter(_unique_ci))
    return {g: draw(st.dictionaries(tensor_names(), tensors(), max_size=4)) for g in names}


@st.composite
def archives(draw, max_leaves: int = 24) -> ArchiveInput:
    """A whole archive: data (every value type), tensor groups, optimizer states, metadata."""
    data = draw(data_maps(max_leaves=max_leaves))
    groups = draw(tensor_groups())
    opt_names = draw(st.lists(optimizer_names(), max_size=2))
    taken = {g.lower() for g in groups}
    opts = {}
    for n in opt_names:
        if ("optimizer." + n).lower() not in taken:
            taken.add(("optimizer." + n).lower())
            opts[n] = draw(optimizer_states())
    metadata = draw(st.none() | st.dictionaries(texts(), texts(), max_size=3))
    return ArchiveInput(data, groups, opts, metadata)


# ----------------------------------------------------------------------------- inputs the writer must refuse or handle


@functools.cache
def wild_values() -> st.SearchStrategy:
    """Values at and beyond the format's limits: the writer must write a valid archive or raise RlarchiveError."""
    deep = st.integers(55, 70).map(lambda d: _nest(d))
    return st.one_of(
        values(max_leaves=8),
        deep,
        st.builds(sp.Discrete, st.integers(-(2**60), 2**60), st.integers(-(2**60), 2**60), st.sampled_from(ALL_CODES)),
        st.builds(sp.MultiBinary, st.integers(-3, 2**60)),
        st.builds(sp.Text, st.integers(-3, 2**60), st.integers(-3, 2**60), st.text(max_size=5)),
        st.builds(rlarchive.Constant, st.one_of(floats(), ints(), st.booleans())),
        st.builds(rlarchive.Linear, floats(), floats(), floats()),
        st.builds(rlarchive.ClassRef, st.text(max_size=8), st.text(max_size=8)),
        st.dictionaries(st.text(min_size=200, max_size=300), arrays(), min_size=1, max_size=1),
        st.dictionaries(
            st.sampled_from(["__x", "", "/", "//", "~"]),
            st.one_of(numpy_arrays(big=True), values(max_leaves=3)),
            max_size=2,
        ),
        st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=2),
        st.just(np.zeros(3, np.complex128)),
        st.builds(
            RawTensor,
            st.sampled_from(ALL_CODES + ["F4", "float32"]),
            shapes(),
            st.sampled_from(
                [np.zeros(3, np.uint8), np.zeros((2, 2), np.uint32), np.zeros(4, np.uint16), np.zeros((), np.uint64)]
            ),
        ),
        st.builds(
            sp.Box,
            numpy_arrays(codes=["F32"]),
            numpy_arrays(codes=["F32", "F64"]),
            shapes(),
            st.sampled_from(ALL_CODES),
        ),
        st.builds(
            sp.MultiDiscrete,
            numpy_arrays(codes=INT_CODES + ["F32"]),
            numpy_arrays(codes=INT_CODES),
            st.sampled_from(ALL_CODES),
        ),
        st.builds(
            sp.MultiDiscrete, st.just(np.ones(9000, np.int64)), st.just(np.zeros(9000, np.int64)), st.just("I64")
        ),
        st.just(np.zeros((1,) * 33, np.uint8)),
    )


def _nest(depth: int) -> Any:
    v: Any = 1
    for _ in range(depth):
        v = [v]
    return v
