"""The generated conformance cases (spec Annex A.6): archives that no file holds, made afresh for each run.

From one seed, the reference writer makes archives of random content (values
of every kind of §7, tensors of every dtype NumPy has, optimizer states,
metadata) and random portable policies (``RLA_policy``). Each archive gives
cases a conforming reader must answer as Annex A.6 says:

- the archive itself: the reference reader's dump;
- one byte changed inside a member, where the specification alone gives the
  code (no reader is asked): in the ``mimetype`` content
  ``ARCHIVE_NOT_RLARCHIVE`` (§3), in ``manifest.json`` ``ZIP_CRC_MISMATCH``
  (§11.1 step 6 checks its CRC-32 before reading it), in ``data.json``
  ``MEMBER_DIGEST_MISMATCH`` (step 6 checks its digest before step 7 reads
  it), in the element bytes of a tensor member ``ZIP_CRC_MISMATCH`` (nothing
  before step 10 reads them);
- random edits (bytes changed, the file cut short or lengthened): the
  reference reader's answer;

and each policy a ``predict`` case with random observations, judged on the
reference reader's actions. A testee that recognises the golden vectors by
their bytes passes none of these: it has to read the archive. Case I of seed
S is always the same bytes.
"""

from __future__ import annotations

import io
import math
import os
import random
import struct
import tempfile
import zipfile
from typing import Any

import numpy as np

from .. import spaces as sp
from ..errors import RlarchiveError
from ..reader import Archive
from ..validate import validate
from ..writer import save
from .policies import PRODUCER, random_policy_case

#: Archives of random content (each gives six cases) and random portable policies (each a predict case)
#: generated per run by default.
DEFAULT_COUNT = 4

_DTYPES = (
    "float32",
    "float64",
    "float16",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "bool",
)
# code points drawn for text: ASCII, escapes, controls, Latin-1, CJK, astral (never a surrogate)
_RANGES = ((0x20, 0x7E), (0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C), (0xA0, 0x17F), (0x4E00, 0x4E40), (0x1F600, 0x1F640))
_SPECIAL_FLOATS = (0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, 1.7976931348623157e308, 0.1, 1e21, 1.5e-7, 1e-7)


def _text(rng: random.Random, at_most: int = 12) -> str:
    out = []
    for _ in range(rng.randint(0, at_most)):
        lo, hi = rng.choice(_RANGES)
        out.append(chr(rng.randint(lo, hi)))
    return "".join(out)


def _float(rng: random.Random) -> float:
    pick = rng.random()
    if pick < 0.3:
        return rng.choice(_SPECIAL_FLOATS)
    if pick < 0.6:  # any finite binary64, from its bits
        while True:
            x: float = struct.unpack("<d", rng.randbytes(8))[0]
            if math.isfinite(x):
                return x
    return rng.uniform(-1e6, 1e6)


def _array(rng: random.Random, big: bool = False) -> np.ndarray:
    """An array of a random dtype and shape: small enough to stay inline, or (``big``) a tensor's worth."""
    dtype = np.dtype(rng.choice(_DTYPES))
    shape = [rng.randint(0, 4) for _ in range(rng.randint(0, 3))]
    if big:
        shape = [rng.randint(1, 40), rng.randint(8, 40)]
    size = int(np.prod(shape, dtype=np.int64))
    raw = bytes(rng.getrandbits(1) for _ in range(size)) if dtype == np.bool_ else rng.randbytes(size * dtype.itemsize)
    out: np.ndarray = np.frombuffer(raw, dtype).reshape(shape).copy()
    return out


def _space(rng: random.Random) -> Any:
    kind = rng.randrange(3)
    if kind == 0:
        return sp.Discrete(rng.randint(1, 9), rng.randint(-3, 3))
    if kind == 1:
        return sp.MultiBinary(rng.randint(1, 6))
    n = rng.randint(1, 4)
    low = np.array([rng.uniform(-5, 0) for _ in range(n)], np.float32)
    return sp.Box(low, low + np.float32(rng.uniform(0.5, 5)), (n,), "F32")


def _leaf(rng: random.Random) -> Any:
    kind = rng.randrange(10)
    if kind == 0:
        return rng.choice((None, True, False))
    if kind == 1:
        return rng.randint(-(2**53) + 1, 2**53 - 1)
    if kind == 2:
        return rng.randint(-(10**30), 10**30)  # beyond 2^53: a tagged integer
    if kind in (3, 4):
        return _float(rng)
    if kind == 5:
        return _text(rng)
    if kind == 6:
        return rng.randbytes(rng.randint(0, 16))
    if kind == 7:
        return np.dtype(rng.choice(_DTYPES[:-1])).type(rng.randint(0, 100))  # a NumPy scalar
    if kind == 8:
        return _array(rng, big=rng.random() < 0.2)
    return _space(rng)


def _value(rng: random.Random, depth: int = 0) -> Any:
    if depth >= 3 or rng.random() < 0.55:
        return _leaf(rng)
    kind = rng.randrange(4)
    items = [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if kind == 0:
        return items
    if kind == 1:
        return tuple(items)
    if kind == 2:
        return {_text(rng, 6): v for v in items}
    return {rng.choice((rng.randint(-9, 9), _text(rng, 3), (rng.randint(0, 3),))): v for v in items}  # any keys


def _archive(rng: random.Random, path: str) -> None:
    """An archive of random content, written by the reference writer."""
    data = {_text(rng, 8) or "x": _value(rng) for _ in range(rng.randint(1, 6))}
    tensors = {
        "policy": {
            "weight": np.frombuffer(rng.randbytes(4 * 24), np.float32).reshape(4, 6).copy(),  # element bytes, always
            **{f"t{i}.{_text(rng, 4)}": _array(rng, big=rng.random() < 0.3) for i in range(rng.randint(0, 4))},
        }
    }
    optimizers = None
    if rng.random() < 0.5:
        state = {0: {"step": np.float32(rng.randint(1, 99)), "exp_avg": _array(rng)}}
        optimizers = {"adam": {"state": state, "param_groups": [{"lr": _float(rng), "params": [0]}]}}
    metadata = {"env_id": f"Generated{rng.randint(0, 999)}-v{rng.randint(0, 9)}", "notes": _text(rng).strip() or "-"}
    save(path, data, tensors, optimizers, metadata=metadata, producer=PRODUCER)


def _members(raw: bytes) -> dict[str, tuple[int, int]]:
    """member name -> (offset of its data, size), from the ZIP records (STORED members)."""
    out = {}
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        for info in z.infolist():
            at = info.header_offset
            name_len, extra_len = struct.unpack_from("<HH", raw, at + 26)
            out[info.filename] = (at + 30 + name_len + extra_len, info.file_size)
    return out


def _changed(raw: bytes, at: int, rng: random.Random) -> bytes:
    """``raw`` with the byte at ``at`` replaced by another."""
    return raw[:at] + bytes([raw[at] ^ rng.randint(1, 255)]) + raw[at + 1 :]


def _byte_cases(raw: bytes, rng: random.Random) -> list[tuple[str, bytes, str, str]]:
    """(kind, bytes, code, why) of one byte changed inside each kind of member, where the spec gives the code."""
    members = _members(raw)
    out = []
    start, size = members["mimetype"]
    out.append(
        (
            "mimetype-byte",
            _changed(raw, start + rng.randrange(size), rng),
            "ARCHIVE_NOT_RLARCHIVE",
            "a byte of the mimetype member's content changed (§3)",
        )
    )
    start, size = members["manifest.json"]
    out.append(
        (
            "manifest-byte",
            _changed(raw, start + rng.randrange(size), rng),
            "ZIP_CRC_MISMATCH",
            "a byte of manifest.json changed: its CRC-32 is checked before it is read (§11.1 step 6)",
        )
    )
    start, size = members["data.json"]
    out.append(
        (
            "data-byte",
            _changed(raw, start + rng.randrange(size), rng),
            "MEMBER_DIGEST_MISMATCH",
            "a byte of data.json changed: its digest is checked at §11.1 step 6, before step 7 reads it",
        )
    )
    tensor_members = []
    for name, (start, size) in members.items():
        if name.endswith(".safetensors"):
            header = 8 + struct.unpack_from("<Q", raw, start)[0]
            if size > header:
                tensor_members.append((name, start + header, size - header))
    name, start, size = rng.choice(tensor_members)
    out.append(
        (
            "tensor-byte",
            _changed(raw, start + rng.randrange(size), rng),
            "ZIP_CRC_MISMATCH",
            f"a byte of the element bytes of {name} changed: nothing before §11.1 step 10 reads them",
        )
    )
    return out


def _edited(raw: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Random edits of a file (bytes changed, the file cut short or lengthened) and what they were."""
    kind = rng.choices(range(3), (3, 1, 1))[0]
    if kind == 0:
        out = raw
        spots = sorted(rng.randrange(len(raw)) for _ in range(rng.randint(1, 3)))
        for at in spots:
            out = _changed(out, at, rng)
        return out, f"bytes changed at offsets {spots}"
    if kind == 1:
        cut = rng.randrange(len(raw))
        return raw[:cut], f"cut short to {cut} bytes"
    return raw + rng.randbytes(rng.randint(1, 64)), "random bytes appended"


class _Writer:
    """Writes the generated cases' files into a folder and builds their entries (as in ``index.json``)."""

    def __init__(self, out: str) -> None:
        self.out = out
        self.cases: list[dict[str, Any]] = []

    def file(self, name: str, data: bytes) -> str:
        with open(os.path.join(self.out, name), "wb") as f:
            f.write(data)
        return name

    def case(self, case_id: str, description: str, spec: list[str], raw: bytes, code: str | None = None) -> None:
        """A dump/error case: ``code`` given by the spec, or (None) the reference reader's answer."""
        name = self.file(case_id + ".rlarchive", raw)
        path = os.path.join(self.out, name)
        expect: dict[str, Any] = {"result": "error", "code": code}
        if code is None:
            try:
                with Archive(path, spaces="neutral") as ar:
                    expect = {"result": "dump", "dump_file": self.file(case_id + ".dump.json", ar.dump())}
            except RlarchiveError as e:
                expect = {"result": "error", "code": e.code}
        issues = [
            {k: i[k] for k in ("code", "severity", "member", "pointer", "offset") if k in i}
            for i in validate(path)["issues"]
        ]
        self.cases.append(
            {
                "id": case_id,
                "description": description,
                "spec": spec,
                "file": name,
                "issues": issues,
                "expect": expect,
                "section": "generated",
                "root": self.out,
            }
        )


def generated_cases(seed: int, out: str, count: int = DEFAULT_COUNT) -> list[dict[str, Any]]:
    """The generated cases of ``seed`` (entries as in ``index.json``, with ``root`` = ``out``, where their
    files are written): ``count`` archives, each giving its dump, four one-byte changes and a random edit,
    and ``count`` policies, each giving a predict case."""
    w = _Writer(out)
    for i in range(1, count + 1):
        rng = random.Random(f"{seed}/archive/{i}")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "a.rlarchive")
            _archive(rng, path)
            with open(path, "rb") as f:
                raw = f.read()
        base = f"generated-{i}"
        w.case(base, "An archive of random content from the reference writer: its dump.", ["§13.1"], raw)
        for kind, data, code, why in _byte_cases(raw, rng):
            w.case(f"{base}-{kind}", f"The archive {base} with {why}: {code}.", ["§11.1"], data, code)
        edited, what = _edited(raw, rng)
        w.case(f"{base}-edit", f"The archive {base}, {what}: the reference reader's answer.", ["§11.1"], edited)
    for j in range(1, count + 1):
        w.cases.append(random_policy_case(random.Random(f"{seed}/policy/{j}"), f"generated-policy-{j}", out))
    return w.cases
