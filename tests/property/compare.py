"""Bit-exact comparison of what was written with what a reader gives back.

``assert_same(written, read)`` raises AssertionError naming the first place
where they differ. Rules:

- floats compare by their bits, except that every NaN equals every NaN (the
  value model keeps "nan", not the payload): -0.0 differs from 0.0;
- ints, bools, None, str, bytes compare by type and value (True is not 1);
- lists and tuples keep their type; maps keep their key order;
- arrays compare by dtype code, shape and element bytes (little-endian,
  C order), whatever the memory layout or byte order of the input; a
  RawTensor of a dtype NumPy has comes back as a NumPy array with its bits;
- spaces, schedules, class references and opaque values compare field by field.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np

import rlarchive
from rlarchive import spaces as sp
from rlarchive.dtypes import DTYPES, code_of_numpy
from rlarchive.tensors import RawTensor


def _fail(path: str, msg: str) -> None:
    raise AssertionError(f"at {path or '/'}: {msg}")


def float_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def same_float(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return float_bits(a) == float_bits(b)


def tensor_bits(x: Any) -> tuple[str, tuple, bytes]:
    """(dtype code, shape, little-endian C-order element bytes) of an array, RawTensor or NumPy scalar."""
    if isinstance(x, RawTensor):
        return x.dtype, tuple(x.shape), np.ascontiguousarray(x.raw).astype(x.raw.dtype.newbyteorder("<")).tobytes()
    a = np.asarray(x)
    code = code_of_numpy(a.dtype)
    if code is None:
        raise AssertionError(f"no dtype code for {a.dtype}")
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return code, tuple(a.shape), np.ascontiguousarray(a).tobytes()


def _is_array(x: Any) -> bool:
    return isinstance(x, (np.ndarray, RawTensor))


def assert_same(a: Any, b: Any, path: str = "") -> None:
    """Raise AssertionError unless ``b`` (read back) equals ``a`` (written) bit for bit."""
    if isinstance(a, float):
        if not isinstance(b, float) or not same_float(a, b):
            _fail(path, f"float {a!r} came back as {b!r}")
        return
    if isinstance(a, bool) or a is None:
        if type(b) is not type(a) or a != b:
            _fail(path, f"{a!r} came back as {b!r}")
        return
    if isinstance(a, int):
        if type(b) is not int or a != b:
            _fail(path, f"int {a} came back as {b!r}")
        return
    if isinstance(a, (str, bytes)):
        if type(b) is not type(a) or a != b:
            _fail(path, f"{a!r} came back as {b!r}")
        return
    if isinstance(a, np.generic):
        if type(b) is not type(a) or a.tobytes() != b.tobytes():
            _fail(path, f"NumPy scalar {a!r} ({type(a).__name__}) came back as {b!r} ({type(b).__name__})")
        return
    if isinstance(a, RawTensor) and a.scalar:
        if DTYPES[a.dtype].numpy is None:
            if not (
                isinstance(b, RawTensor) and b.scalar and b.dtype == a.dtype and b.raw.tobytes() == a.raw.tobytes()
            ):
                _fail(path, f"raw scalar {a.dtype} came back as {b!r}")
        else:
            if not isinstance(b, np.generic) or tensor_bits(b) != tensor_bits(a):
                _fail(path, f"raw scalar {a.dtype} came back as {b!r}")
        return
    if _is_array(a):
        if isinstance(a, RawTensor) and DTYPES[a.dtype].numpy is None:
            if not isinstance(b, RawTensor):
                _fail(path, f"RawTensor {a.dtype} came back as {type(b).__name__}")
        elif not isinstance(b, np.ndarray):
            _fail(path, f"array came back as {type(b).__name__}")
        if tensor_bits(a) != tensor_bits(b):
            ca, sa, _ = tensor_bits(a)
            cb, sb, _ = tensor_bits(b)
            _fail(path, f"array {ca}{list(sa)} came back as {cb}{list(sb)} or with other bits")
        return
    if isinstance(a, list) or isinstance(a, tuple):
        if type(b) is not type(a) or len(a) != len(b):
            _fail(path, f"{type(a).__name__} of {len(a)} came back as {type(b).__name__} {b!r:.80}")
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}/{i}")
        return
    if isinstance(a, dict):
        if type(b) is not dict or len(a) != len(b):
            _fail(path, f"map of {len(a)} came back as {type(b).__name__} {b!r:.80}")
        for i, ((ka, va), (kb, vb)) in enumerate(zip(a.items(), b.items())):
            assert_same(ka, kb, f"{path}/<key {i}>")
            assert_same(va, vb, f"{path}/{ka!r:.40}")
        return
    if isinstance(a, sp.Box):
        if not isinstance(b, sp.Box) or (tuple(a.shape), a.dtype) != (b.shape, b.dtype):
            _fail(path, f"{a!r:.80} came back as {b!r:.80}")
        assert_same(a.low, b.low, path + "/low")
        assert_same(a.high, b.high, path + "/high")
        return
    if isinstance(a, sp.MultiDiscrete):
        if not isinstance(b, sp.MultiDiscrete) or a.dtype != b.dtype:
            _fail(path, f"{a!r:.80} came back as {b!r:.80}")
        assert_same(a.nvec, b.nvec, path + "/nvec")
        assert_same(a.start, b.start, path + "/start")
        return
    if isinstance(a, (sp.Dict, sp.Tuple)):
        if type(b) is not type(a) or len(a.spaces) != len(b.spaces):
            _fail(path, f"{a!r:.80} came back as {b!r:.80}")
        for i, (x, y) in enumerate(zip(a.spaces, b.spaces)):
            assert_same(x, y, f"{path}/spaces/{i}")
        return
    if isinstance(a, (sp.Discrete, sp.MultiBinary, sp.Text, rlarchive.ClassRef, rlarchive.Opaque)):
        if type(b) is not type(a) or a != b:
            _fail(path, f"{a!r:.80} came back as {b!r:.80}")
        return
    if isinstance(a, rlarchive.Constant):
        if type(b) is not type(a):
            _fail(path, f"{a!r} came back as {b!r}")
        assert_same(a.value, b.value, path + "/value")
        return
    if isinstance(a, rlarchive.Linear):
        if type(b) is not type(a):
            _fail(path, f"{a!r} came back as {b!r}")
        for f in ("start", "end", "end_fraction"):
            assert_same(getattr(a, f), getattr(b, f), f"{path}/{f}")
        return
    if isinstance(a, rlarchive.Piecewise):
        if type(b) is not type(a) or a.interpolation != b.interpolation:
            _fail(path, f"{a!r} came back as {b!r}")
        assert_same(tuple(tuple(p) for p in a.points), b.points, path + "/points")
        return
    raise AssertionError(f"at {path}: no comparison for {type(a).__name__}")
