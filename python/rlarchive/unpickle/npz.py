"""Reading a NumPy ``.npz`` file from a downloaded model or run without executing or over-allocating anything.

An ``.npz`` is a ZIP of ``.npy`` members. :func:`read_npz` reads the arrays it is asked for: each member's
``.npy`` header is read and checked first (format 1.0 or 2.0, a header of at most ``MAX_NPY_HEADER`` bytes, a
dtype rlarchive has, never an object dtype: nothing is unpickled), the bytes the array will take are charged to
the import budget before they are read, and the array comes back little-endian in C order.
"""

from __future__ import annotations

import io
import math
import struct
import zipfile
from typing import IO

import numpy as np

from ..errors import RlarchiveError
from .budget import ImportBudget

__all__ = ["read_npz", "MAX_NPY_HEADER"]

MAX_NPY_HEADER = 65535  # bytes: a version 1 header's largest; NumPy itself refuses more than 10,000


def _header(f: IO[bytes], name: str, item: str, member: str | None) -> tuple[tuple[int, ...], bool, np.dtype]:
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(f)
    if version == (2, 0):
        # NumPy reads a version 2 header of any declared length before it checks the length
        prefix = f.read(4)
        if len(prefix) == 4 and struct.unpack("<I", prefix)[0] > MAX_NPY_HEADER:
            raise ValueError(f"its header declares {struct.unpack('<I', prefix)[0]} bytes")
        header = io.BytesIO(prefix + f.read(struct.unpack("<I", prefix)[0] if len(prefix) == 4 else 0))
        return np.lib.format.read_array_header_2_0(header)
    raise ValueError(f"unsupported .npy format version {version}")


def _array(
    inner: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, budget: ImportBudget, item: str, member: str | None
) -> np.ndarray:
    from ..dtypes import code_of_numpy

    try:
        with inner.open(info) as f:
            shape, fortran, dtype = _header(f, name, item, member)
            if dtype.hasobject or code_of_numpy(dtype) is None:
                raise RlarchiveError("VALUE_UNSUPPORTED", f"{item} {name!r} has dtype {dtype}", member=member)
            nbytes = math.prod(shape) * dtype.itemsize
            budget.charge(nbytes, f"{item} {name!r} (shape {shape})", member=member)
            buf = f.read(nbytes)
    except RlarchiveError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, RuntimeError, NotImplementedError) as e:
        raise RlarchiveError(
            "IMPORT_INVALID", f"{item} {name!r} is not a readable .npy array: {e}", member=member
        ) from None
    if len(buf) != nbytes:
        raise RlarchiveError("IMPORT_INVALID", f"{item} {name!r} is shorter than its header says", member=member)
    arr = np.frombuffer(buf, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    little = dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype
    if little != dtype or not arr.flags.c_contiguous:  # one copy, little-endian and in C order
        budget.charge(nbytes, f"a little-endian C-order copy of {item} {name!r}", member=member)
    return np.require(arr, dtype=little, requirements="C")  # keeps a 0-d array 0-d


def read_npz(
    raw: bytes, names: list[str], budget: ImportBudget, *, container: str, item: str, member: str | None = None
) -> tuple[dict[str, np.ndarray], list[str]]:
    """The arrays ``names`` lists from the ``.npz`` bytes ``raw``; returns them by name and the sorted names of the
    other arrays the file holds.

    ``container`` names the file and ``item`` an array in messages; ``member`` is where errors point.

    Raises:
        RlarchiveError: IMPORT_INVALID for a file that is not an ``.npz``, an array named and missing, or one that is
            not a readable ``.npy``; VALUE_UNSUPPORTED for an object or unknown dtype; LIMIT_EXCEEDED beyond the budget.
    """
    try:
        inner = zipfile.ZipFile(io.BytesIO(raw))
        members = {i.filename[: -len(".npy")]: i for i in inner.infolist() if i.filename.endswith(".npy")}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise RlarchiveError("IMPORT_INVALID", f"{container} is not a NumPy .npz archive: {e}", member=member) from None
    params: dict[str, np.ndarray] = {}
    with inner:
        for name in names:
            info = members.get(name)
            if info is None:
                raise RlarchiveError("IMPORT_INVALID", f"{item} {name!r} is listed but missing", member=member)
            params[name] = _array(inner, info, name, budget, item, member)
    return params, sorted(set(members) - set(names))
