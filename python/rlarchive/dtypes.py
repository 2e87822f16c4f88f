"""The dtype table of spec §10.1 (from spec/tables.json) and its NumPy / PyTorch equivalents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .tables import DTYPE_TABLE


@dataclass(frozen=True)
class DType:
    """One tensor dtype: its code, size and alignment in bytes, NumPy and torch names."""

    code: str
    size: int
    alignment: int
    numpy: str | None  # NumPy dtype string, or None when NumPy has no such type
    raw: str  # NumPy dtype used to view the bytes when ``numpy`` is None
    torch: str | None  # attribute of the torch module, or None
    kind: str  # "bool", "int", "uint", "float", "complex"


#: code -> (NumPy dtype or None, NumPy dtype viewing the raw bytes, torch attribute): how this
#: language holds each dtype of spec/tables.json (whose sizes, alignments and kinds it takes).
_FRAMEWORKS: dict[str, tuple[str | None, str, str | None]] = {
    "BOOL": ("bool", "u1", "bool"),
    "U8": ("<u1", "u1", "uint8"),
    "I8": ("<i1", "i1", "int8"),
    "U16": ("<u2", "<u2", "uint16"),
    "I16": ("<i2", "<i2", "int16"),
    "U32": ("<u4", "<u4", "uint32"),
    "I32": ("<i4", "<i4", "int32"),
    "U64": ("<u8", "<u8", "uint64"),
    "I64": ("<i8", "<i8", "int64"),
    "F16": ("<f2", "<u2", "float16"),
    "BF16": (None, "<u2", "bfloat16"),
    "F32": ("<f4", "<u4", "float32"),
    "F64": ("<f8", "<u8", "float64"),
    "F8_E4M3": (None, "u1", "float8_e4m3fn"),
    "F8_E5M2": (None, "u1", "float8_e5m2"),
    "F8_E4M3FNUZ": (None, "u1", "float8_e4m3fnuz"),
    "F8_E5M2FNUZ": (None, "u1", "float8_e5m2fnuz"),
    "F8_E8M0": (None, "u1", "float8_e8m0fnu"),
    "C64": ("<c8", "<u8", "complex64"),
}
if list(_FRAMEWORKS) != list(DTYPE_TABLE):
    raise ImportError("spec/tables.json and rlarchive.dtypes list different dtypes")

_TABLE = [
    DType(code, size, alignment, *_FRAMEWORKS[code], kind) for code, (size, alignment, kind) in DTYPE_TABLE.items()
]

#: dtype code -> DType
DTYPES: dict[str, DType] = {d.code: d for d in _TABLE}

INTEGER_CODES = frozenset(d.code for d in _TABLE if d.kind in ("int", "uint"))

_FROM_NUMPY: dict[np.dtype, str] = {
    np.dtype(d.numpy).newbyteorder("<") if d.numpy != "bool" else np.dtype(bool): d.code
    for d in _TABLE
    if d.numpy is not None
}


def code_of_numpy(dtype: np.dtype) -> str | None:
    """The dtype code of a NumPy dtype, or None if the format has none for it."""
    dt = np.dtype(dtype)
    if dt == np.dtype(bool):
        return "BOOL"
    return _FROM_NUMPY.get(dt.newbyteorder("<"))


def numpy_view_dtype(code: str) -> np.dtype:
    """The NumPy dtype used to view elements of ``code`` (raw unsigned for exotic types)."""
    d = DTYPES[code]
    return np.dtype(d.numpy if d.numpy is not None else d.raw)


def code_of_torch(dtype: Any) -> str | None:
    """The dtype code of a torch dtype, or None."""
    name = str(dtype).replace("torch.", "")
    for d in _TABLE:
        if d.torch == name:
            return d.code
    return None
