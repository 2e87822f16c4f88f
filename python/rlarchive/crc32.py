"""The CRC-32 of ZIP members (the ISO 3309 polynomial, as ``zlib.crc32``), at memory speed where it can be.

A save and a verification compute the CRC-32 of every byte of the archive
beside its SHA-256. zlib's table-driven CRC-32 runs at about 2 to 3 GB/s, a
third to a half of the SHA-256's cost; implementations that fold the data
with carry-less multiplication (PCLMULQDQ on x86-64, PMULL on AArch64) run
several times faster. :func:`crc32` is the first of these that is installed:

- ``isal`` (python-isal, bindings of Intel's ISA-L: ``isal_zlib.crc32``), the
  optional extra ``rlarchive[fast]``. Chosen because it is the fastest
  measured here (about 11 GB/s of CPU time against zlib's 2 and zlib-ng's 9.5
  on the same machine), it has binary wheels for CPython 3.10 to 3.14 on
  Linux x86-64 and AArch64, macOS and Windows, it depends on nothing, it
  releases the GIL during the computation (so the CRC-32 runs beside the
  SHA-256 on another thread), and its result is zlib's for every input and
  every starting value (checked here once at import).
- ``zlib.crc32``, the pure fallback: same results, slower.

The choice never changes a byte of an archive, only the time it takes.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

__all__ = ["crc32", "IMPLEMENTATION"]

Crc32 = Callable[[Any, int], int]


def _isal() -> Crc32 | None:
    try:
        from isal import isal_zlib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    fn: Crc32 = isal_zlib.crc32
    sample = bytes(range(256)) * 33
    try:  # a build that disagrees with zlib (never seen) is not used
        agrees = fn(sample, 0) == zlib.crc32(sample) and fn(sample[7:], 0x1234ABCD) == zlib.crc32(
            sample[7:], 0x1234ABCD
        )
    except Exception:  # a broken build: fall back
        return None
    return fn if agrees else None


_FAST = _isal()

#: ``crc32(data, value)``: the CRC-32 of the bytes-like ``data``, continuing from ``value`` (0 to start), as ``zlib.crc32``.
crc32: Crc32 = _FAST if _FAST is not None else zlib.crc32
#: Which implementation :func:`crc32` is: ``"isal"`` or ``"zlib"``.
IMPLEMENTATION = "isal" if _FAST is not None else "zlib"
