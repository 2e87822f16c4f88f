"""torch tensors of every dtype as input (``tensors=`` takes a state_dict), read back as NumPy and as torch.

Every torch dtype with an rlarchive code (bool, the integers, float16,
bfloat16, float32, float64, the float8 types, complex64), any bits, 0-d,
zero-size and non-contiguous (transposed, strided) tensors.
"""

import math
import os

import numpy as np
import pytest
from compare import tensor_bits
from hypothesis import given, settings
from hypothesis import strategies as st
from scale import examples
from strategies import shapes, tensor_names

import rlarchive
from rlarchive.dtypes import DTYPES

torch = pytest.importorskip("torch")

INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def raw_bits(t) -> bytes:
    """The little-endian C-order element bytes of a torch tensor."""
    t = t.contiguous()
    size = t.element_size()
    return t.view(INT_OF_SIZE[size]).numpy().tobytes() if t.numel() else b""


@st.composite
def torch_tensors(draw):
    code = draw(st.sampled_from(sorted(DTYPES)))
    d = DTYPES[code]
    shape = draw(shapes(max_elements=48))
    n = math.prod(shape)
    if code == "BOOL":
        raw = bytes(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    else:
        raw = draw(st.binary(min_size=n * d.size, max_size=n * d.size))
    ints = np.frombuffer(raw, dtype={1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}[d.size]).copy()
    t = torch.from_numpy(ints).view(getattr(torch, d.torch)).reshape(shape)
    how = draw(st.sampled_from(["plain", "transposed", "strided"]))
    if how == "transposed" and t.dim() >= 2:
        t = t.mT.contiguous().mT  # same values, non-contiguous
    elif how == "strided" and t.dim() >= 1:
        big = torch.zeros((t.shape[0] * 2,) + tuple(t.shape[1:]), dtype=t.dtype)
        big[::2] = t
        t = big[::2]
    return code, t


@settings(max_examples=examples(40))
@given(st.dictionaries(tensor_names(), torch_tensors(), min_size=1, max_size=5))
def test_torch_tensors_round_trip(workdir, ts):
    p = os.path.join(workdir, "t.rlarchive")
    rlarchive.save(p, {}, {"policy": {k: t for k, (_, t) in ts.items()}})
    with rlarchive.open(p, spaces="neutral") as ar:
        as_numpy = ar.tensors("policy")
        as_torch = ar.tensors("policy", framework="torch")
        for name, (code, t) in ts.items():
            want = raw_bits(t)
            assert tensor_bits(as_numpy[name]) == (code, tuple(t.shape), want), name
            back = as_torch[name]
            assert back.dtype == t.dtype and tuple(back.shape) == tuple(t.shape) and raw_bits(back) == want, name
    assert rlarchive.validate(p)["issues"] == []
