"""The dtype table of spec §10.1 and its NumPy / PyTorch equivalents."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np


@dataclass(frozen=True)
class DType:
    """One tensor dtype: its code, size and alignment in bytes, NumPy and torch names."""

    code: str
    size: int
    alignment: int
    numpy: Optional[str]  # NumPy dtype string, or None when NumPy has no such type
    raw: str  # NumPy dtype used to view the bytes when ``numpy`` is None
    torch: Optional[str]  # attribute of the torch module, or None
    kind: str  # "bool", "int", "uint", "float", "complex"


_TABLE = [
    DType("BOOL", 1, 1, "bool", "u1", "bool", "bool"),
    DType("U8", 1, 1, "<u1", "u1", "uint8", "uint"),
    DType("I8", 1, 1, "<i1", "i1", "int8", "int"),
    DType("U16", 2, 2, "<u2", "<u2", "uint16", "uint"),
    DType("I16", 2, 2, "<i2", "<i2", "int16", "int"),
    DType("U32", 4, 4, "<u4", "<u4", "uint32", "uint"),
    DType("I32", 4, 4, "<i4", "<i4", "int32", "int"),
    DType("U64", 8, 8, "<u8", "<u8", "uint64", "uint"),
    DType("I64", 8, 8, "<i8", "<i8", "int64", "int"),
    DType("F16", 2, 2, "<f2", "<u2", "float16", "float"),
    DType("BF16", 2, 2, None, "<u2", "bfloat16", "float"),
    DType("F32", 4, 4, "<f4", "<u4", "float32", "float"),
    DType("F64", 8, 8, "<f8", "<u8", "float64", "float"),
    DType("F8_E4M3", 1, 1, None, "u1", "float8_e4m3fn", "float"),
    DType("F8_E5M2", 1, 1, None, "u1", "float8_e5m2", "float"),
    DType("F8_E4M3FNUZ", 1, 1, None, "u1", "float8_e4m3fnuz", "float"),
    DType("F8_E5M2FNUZ", 1, 1, None, "u1", "float8_e5m2fnuz", "float"),
    DType("F8_E8M0", 1, 1, None, "u1", "float8_e8m0fnu", "float"),
    DType("C64", 8, 4, "<c8", "<u8", "complex64", "complex"),
]

#: dtype code -> DType
DTYPES: dict[str, DType] = {d.code: d for d in _TABLE}

INTEGER_CODES = frozenset(d.code for d in _TABLE if d.kind in ("int", "uint"))

_FROM_NUMPY: dict[np.dtype, str] = {
    np.dtype(d.numpy).newbyteorder("<") if d.numpy != "bool" else np.dtype(bool): d.code
    for d in _TABLE
    if d.numpy is not None
}


def code_of_numpy(dtype: np.dtype) -> Optional[str]:
    """The dtype code of a NumPy dtype, or None if the format has none for it."""
    dt = np.dtype(dtype)
    if dt == np.dtype(bool):
        return "BOOL"
    return _FROM_NUMPY.get(dt.newbyteorder("<"))


def numpy_view_dtype(code: str) -> np.dtype:
    """The NumPy dtype used to view elements of ``code`` (raw unsigned for exotic types)."""
    d = DTYPES[code]
    return np.dtype(d.numpy if d.numpy is not None else d.raw)


def code_of_torch(dtype) -> Optional[str]:
    """The dtype code of a torch dtype, or None."""
    name = str(dtype).replace("torch.", "")
    for d in _TABLE:
        if d.torch == name:
            return d.code
    return None
