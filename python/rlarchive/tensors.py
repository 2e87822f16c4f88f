"""Tensor groups: the safetensors profile of spec §10, reading (checks, views) and writing."""

from __future__ import annotations

import hashlib
import math
import operator
import struct
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, fields
from itertools import chain, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from . import checksums, jsonstrict
from .dtypes import DTYPES, DType, code_of_numpy, code_of_torch, numpy_view_dtype
from .errors import RlarchiveError, esc
from .limits import MAX_ELEMENT_BYTES, MAX_NAME_BYTES, MAX_NDIM, MAX_SAFETENSORS_HEADER_BYTES
from .row_snapshot import RowSnapshot
from .sources import Source
from .zipprofile import Member

if TYPE_CHECKING:
    from .values import Ref

ALIGN = 64
_ENTRY_KEYS = {"dtype", "shape", "data_offsets"}
_SIZE = {code: d.size for code, d in DTYPES.items()}
_ALIGNMENT = {code: d.alignment for code, d in DTYPES.items()}


@dataclass(eq=False)
class RawTensor:
    """A tensor whose dtype NumPy lacks (BF16, FP8): its code, shape and raw element bits.

    ``raw`` views the bytes as unsigned integers of the element size.
    """

    dtype: str
    shape: tuple[Any, ...]
    raw: np.ndarray
    scalar: bool = False

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, RawTensor)
            and (self.dtype, self.shape, self.scalar) == (other.dtype, other.shape, other.scalar)
            and self.raw.tobytes() == other.raw.tobytes()
        )

    def __hash__(self) -> int:
        return hash((RawTensor, self.dtype, self.shape, self.scalar, self.raw.tobytes()))

    def to_torch(self) -> Any:
        """The tensor as a torch tensor of its real dtype."""
        import torch

        t = torch.from_numpy(np.array(self.raw, copy=True))
        return t.view(getattr(torch, str(DTYPES[self.dtype].torch))).reshape(self.shape)


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """Where one tensor lives in the file."""

    name: str
    dtype: str
    shape: tuple[Any, ...]
    offset: int  # absolute file offset of the first element byte
    nbytes: int


def _int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def entry_pointer(name: str) -> str:
    """The JSON Pointer (RFC 6901) of tensor ``name``'s entry in its safetensors header."""
    return "/" + esc(name)


def check_shape(shape: Any, ptr: str, fail: Callable[..., RlarchiveError]) -> None:
    """Check a ``shape`` member (spec §7.6, §8): an array, of at most ``MAX_NDIM`` elements, each a
    plain integer >= 0; in that order (the array's own structure before its elements, spec §11.2).

    Located at the shape (not an array: VALUE_INVALID; too many dimensions: LIMIT_EXCEEDED) or at its
    first bad element ``ptr/i`` (VALUE_INVALID).
    """
    if not isinstance(shape, list):
        raise fail("VALUE_INVALID", "shape must be an array of integers >= 0", ptr)
    if len(shape) > MAX_NDIM:
        raise fail("LIMIT_EXCEEDED", f"more than {MAX_NDIM} dimensions", ptr)
    for i, n in enumerate(shape):
        if not (_int(n) and n >= 0):
            raise fail("VALUE_INVALID", "a shape element must be an integer >= 0", f"{ptr}/{i}")


def check_reference(headers: Mapping[str, Mapping[str, TensorInfo]], ref: Ref, member: str = "data.json") -> None:
    """One reference (spec §7.6) against the tensor headers read at step 8 (group -> name -> info).

    Raises:
        RlarchiveError: ``REF_NOT_FOUND`` or ``REF_MISMATCH``, in ``member`` at the reference's pointer.
    """
    info = headers.get(ref.group, {}).get(ref.name)
    if info is None:
        raise RlarchiveError(
            "REF_NOT_FOUND",
            f"no tensor {ref.name!r} in group {ref.group!r}",
            member=member,
            pointer=ref.pointer + "/ref",
        )
    if info.dtype != ref.dtype or list(info.shape) != ref.shape:
        raise RlarchiveError(
            "REF_MISMATCH",
            f"tensor {ref.group}/{ref.name} is {info.dtype}{list(info.shape)}, the reference says {ref.dtype}{ref.shape}",
            member=member,
            pointer=ref.pointer,
        )


#: How read_group reports a failure: (code, message, tensor name or None) -> the error to raise.
_Fail = Callable[..., RlarchiveError]


def read_group(src: Source, m: Member) -> dict[str, TensorInfo]:
    """Check one safetensors member (spec §10.2, in its order) and list its tensors."""

    def fail(code: str, msg: str, name: str | None = None) -> RlarchiveError:
        # spec §11.2: the member's first byte, and the tensor's entry in the header when one is at fault
        return RlarchiveError(
            code, msg, member=m.name, pointer=None if name is None else entry_pointer(name), offset=m.data_offset
        )

    header, n = _header(src, m, fail)
    buf_start = m.data_offset + 8 + n
    buf_len = m.size - 8 - n
    fast = _valid_infos(header, buf_start, buf_len)
    if fast is not None:
        return fast
    # a rule is broken (or the header is one the columns do not decide): the checks in the spec's order find it
    _check_entries(header, fail)
    _check_layout(header, buf_len, fail)
    out = {}
    for name, e in header.items():
        d = DTYPES[e["dtype"]]
        off = buf_start + e["data_offsets"][0]
        if off % d.alignment:
            raise fail("ST_MISALIGNED", f"tensor {name!r} starts at {off}, not a multiple of {d.alignment}", name)
        out[name] = TensorInfo(name, d.code, tuple(e["shape"]), off, e["data_offsets"][1] - e["data_offsets"][0])
    return out


def _valid_infos(header: dict[str, Any], buf_start: int, buf_len: int) -> dict[str, TensorInfo] | None:
    """Every tensor's info when the header breaks none of the rules of spec §10.2, else None.

    The rules of :func:`_check_entries`, :func:`_check_layout` and the alignment
    check of :func:`read_group`, each over a column of the header at once
    (built-in functions mapped over lists, no Python step per tensor). None says
    only that some rule may be broken: the checks in the spec's order then find
    which (a header whose tensors are out of offset order is sorted first, and
    passes here as there).
    """
    names = list(header)
    entries = list(header.values())
    try:
        if not _names_valid(names) or set(map(len, entries)) - {len(_ENTRY_KEYS)}:
            return None
        # three keys each, all three found: exactly {dtype, shape, data_offsets} (only a dict takes a string key)
        codes, shapes, pairs = (list(map(itemgetter(key), entries)) for key in ("dtype", "shape", "data_offsets"))
        if set(map(type, codes)) - {str} or set(map(type, shapes)) - {list} or set(map(type, pairs)) - {list}:
            return None
        if set(map(len, pairs)) - {2} or max(map(len, shapes), default=0) > MAX_NDIM or not set(codes) <= _SIZE.keys():
            return None
        begins, ends = list(map(itemgetter(0), pairs)), list(map(itemgetter(1), pairs))
        dims = list(chain.from_iterable(shapes))
        if set(map(type, chain(dims, begins, ends))) - {int}:  # type(True) is bool: no boolean passes
            return None
        nbytes = list(map(operator.sub, ends, begins))
        if min(chain(dims, begins, nbytes), default=0) < 0 or max(ends, default=0) > buf_len:
            return None
        if list(map(operator.mul, map(math.prod, shapes), map(_SIZE.__getitem__, codes))) != nbytes:
            return None
        offsets = list(map(operator.add, begins, repeat(buf_start)))
        if not _contiguous(begins, ends, buf_len) or any(
            map(operator.mod, offsets, map(_ALIGNMENT.__getitem__, codes))
        ):
            return None
    except (KeyError, TypeError):  # a key missing, or a value of a type the rules do not take
        return None
    return dict(zip(names, _infos(names, codes, list(map(tuple, shapes)), offsets, nbytes)))


def _infos(*columns: list[Any]) -> list[TensorInfo]:
    """``TensorInfo(*row)`` for each row of ``columns`` (one list per field, in the fields' order), built a
    field at a time: each slot set by its descriptor mapped over the new objects. The same objects as
    the constructor's, whose ``__init__`` (a frozen dataclass's) costs a Python call per object."""
    objects = list(map(object.__new__, repeat(TensorInfo, len(columns[0]))))
    for field, column in zip(fields(TensorInfo), columns):
        deque(map(getattr(TensorInfo, field.name).__set__, objects, column), maxlen=0)
    return objects


def _names_valid(names: list[str]) -> bool:
    """Whether no tensor name is empty, begins with ``__`` or has more than MAX_NAME_BYTES bytes of UTF-8."""
    if "" in names or any(map(str.startswith, names, repeat("__"))):
        return False
    # a character takes at most 4 bytes: the names are encoded only when that bound is not enough
    return (
        max(map(len, names), default=0) * 4 <= MAX_NAME_BYTES or max(map(len, map(str.encode, names))) <= MAX_NAME_BYTES
    )


def _contiguous(begins: list[int], ends: list[int], buf_len: int) -> bool:
    """Whether the byte ranges [begins[i], ends[i]) (each begins <= ends) tile [0, buf_len) with no hole
    and no overlap, taken in the order of (begin, end) as :func:`_check_layout` takes them."""
    if not all(map(operator.le, begins, begins[1:])):
        pairs = sorted(zip(begins, ends))
        begins, ends = [b for b, _ in pairs], [e for _, e in pairs]
    # in order of begins, each range ending where the next begins: that order is the order of (begin, end)
    return [0, *ends] == [*begins, buf_len]


def _header(src: Source, m: Member, fail: _Fail) -> tuple[dict[str, Any], int]:
    """The member's header (a JSON object) and its length in bytes: the 8-byte length, the text, its form."""
    if m.size < 8:
        raise fail("ST_TRUNCATED", "safetensors member shorter than 8 bytes")
    (n,) = struct.unpack("<Q", src.read(m.data_offset, 8))
    if n > MAX_SAFETENSORS_HEADER_BYTES:
        raise fail("ST_HEADER_TOO_LARGE", f"header of {n} bytes exceeds {MAX_SAFETENSORS_HEADER_BYTES}")
    if n > m.size - 8:
        raise fail("ST_TRUNCATED", "header runs past the end of the member")
    raw = src.read(m.data_offset + 8, n)
    header = jsonstrict.parse(
        raw,
        member=m.name,
        offset=m.data_offset + 8,
        max_bytes=MAX_SAFETENSORS_HEADER_BYTES,
        size_code="ST_HEADER_TOO_LARGE",
    )
    if not raw.startswith(b"{") or not raw.rstrip(b" ").endswith(b"}"):
        raise fail("ST_HEADER_INVALID", "header must start with '{' and be padded only with spaces")
    if not isinstance(header, dict):
        raise fail("ST_HEADER_INVALID", "header is not a JSON object")
    return header, n


def _check_entries(header: dict[str, Any], fail: _Fail) -> None:
    """Each entry of the header: its name, its members and their types, its dtype, its number of dimensions."""
    for name, e in header.items():
        if name == "__metadata__":
            raise fail("ST_HEADER_INVALID", "__metadata__ is not permitted in this profile", name)
        if not name or name.startswith("__") or len(name.encode("utf-8")) > MAX_NAME_BYTES:
            raise fail("ST_HEADER_INVALID", f"invalid tensor name {name[:60]!r}", name)
        if not (
            isinstance(e, dict)
            and set(e) == _ENTRY_KEYS
            and isinstance(e["dtype"], str)
            and isinstance(e["shape"], list)
            and all(_int(d) and d >= 0 for d in e["shape"])
            and isinstance(e["data_offsets"], list)
            and len(e["data_offsets"]) == 2
            and all(_int(o) and o >= 0 for o in e["data_offsets"])
        ):
            raise fail(
                "ST_HEADER_INVALID",
                f"tensor {name!r} entry must be {{dtype, shape, data_offsets}} of the right types",
                name,
            )
    for name, e in header.items():
        if e["dtype"] not in DTYPES:
            raise fail("ST_DTYPE_UNKNOWN", f"tensor {name!r} has unknown dtype {e['dtype'][:40]!r}", name)
    for name, e in header.items():
        if len(e["shape"]) > MAX_NDIM:
            raise fail("LIMIT_EXCEEDED", f"tensor {name!r} has more than {MAX_NDIM} dimensions", name)


def _check_layout(header: dict[str, Any], buf_len: int, fail: _Fail) -> None:
    """The tensors' bytes in the buffer: offsets inside it, sizes matching shapes, no hole, no overlap, no tail."""
    for name, e in header.items():
        b, en = e["data_offsets"]
        if not b <= en <= buf_len:
            raise fail(
                "ST_OFFSETS_INVALID", f"tensor {name!r} offsets [{b}, {en}] are reversed or outside the buffer", name
            )
    for name, e in header.items():
        b, en = e["data_offsets"]
        if math.prod(e["shape"]) * DTYPES[e["dtype"]].size != en - b:
            raise fail(
                "ST_SHAPE_MISMATCH",
                f"tensor {name!r}: {en - b} bytes do not hold shape {e['shape']} of {e['dtype']}",
                name,
            )
    prev = 0
    for name, e in sorted(header.items(), key=lambda kv: tuple(kv[1]["data_offsets"])):
        b, en = e["data_offsets"]
        if b > prev:
            raise fail("ST_HOLE", f"{b - prev} unused bytes before tensor {name!r}", name)
        if b < prev:
            raise fail("ST_OVERLAP", f"tensor {name!r} overlaps the tensor before it", name)
        prev = en
    if prev != buf_len:
        raise fail("ST_TRAILING_BYTES", f"{buf_len - prev} bytes after the last tensor")


def view_numpy(buf: Any, info: TensorInfo) -> Any:
    """A zero-copy NumPy view of a tensor in ``buf`` (RawTensor for dtypes NumPy lacks)."""
    dt = numpy_view_dtype(info.dtype)
    count = info.nbytes // DTYPES[info.dtype].size
    a = np.frombuffer(buf, dtype=dt, count=count, offset=info.offset).reshape(info.shape)
    if DTYPES[info.dtype].numpy is None:
        return RawTensor(info.dtype, info.shape, a)
    return a


class TensorPass:
    """What one pass over a tensor member's bytes gives besides its own digests (spec §11.1 step 10): each
    tensor's SHA-256 when ``digest`` (the dump's, spec §13.1), and which ``BOOL`` tensors hold a byte other than
    0 and 1 (``ST_BOOL_VALUE``, spec §10.1). :meth:`feed` passes the member's chunks on unchanged."""

    def __init__(self, start: int, infos: Iterable[TensorInfo], digest: bool) -> None:
        self.infos = list(infos)  # header order
        self._order = sorted(range(len(self.infos)), key=lambda i: self.infos[i].offset)
        self._pos = start
        self._sha = [hashlib.sha256() for _ in self.infos] if digest else None
        self._bad = [False] * len(self.infos)

    def feed(self, chunks: Iterable[Any]) -> Iterator[Any]:
        """``chunks`` (the member's bytes in order, from its first), each seen on its way."""
        first = 0  # the first tensor (by offset) not yet wholly seen
        for chunk in chunks:
            view = memoryview(chunk).cast("B")
            lo, hi = self._pos, self._pos + len(view)
            while first < len(self._order) and self._end(self._order[first]) <= lo:
                first += 1
            for i in self._order[first:]:
                info = self.infos[i]
                if info.offset >= hi:
                    break
                part = view[max(lo, info.offset) - lo : min(hi, self._end(i)) - lo]
                if self._sha is not None:
                    self._sha[i].update(part)
                if info.dtype == "BOOL" and len(part) and not self._bad[i]:
                    self._bad[i] = bool(np.frombuffer(part, np.uint8).max() > 1)
            self._pos = hi
            yield chunk

    def _end(self, i: int) -> int:
        return self.infos[i].offset + self.infos[i].nbytes

    def digests(self) -> Mapping[str, str]:
        """Tensor name -> the SHA-256 (hex) of its element bytes, in header order ({} unless ``digest``)."""
        return {} if self._sha is None else {t.name: h.hexdigest() for t, h in zip(self.infos, self._sha)}

    def bad_bools(self) -> list[TensorInfo]:
        """The BOOL tensors holding a byte other than 0 and 1, in header order."""
        return [t for t, bad in zip(self.infos, self._bad) if bad]


def view_torch(buf: Any, info: TensorInfo) -> Any:
    """A torch tensor sharing ``buf``'s memory (read-only by contract)."""
    import torch

    dt = getattr(torch, str(DTYPES[info.dtype].torch))
    count = info.nbytes // DTYPES[info.dtype].size
    if count == 0:
        return torch.empty(info.shape, dtype=dt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # read-only buffer: documented as read-only
        t = torch.frombuffer(buf, dtype=dt, count=count, offset=info.offset)
    return t.reshape(info.shape)


# ---------------------------------------------------------------- writing


def _little_endian_c_order(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous little-endian array: ``a`` itself when it is one, else a copy."""
    if a.dtype.byteorder == ">":
        return np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
    return np.ascontiguousarray(a)


@dataclass
class TensorData:
    """A tensor ready to write: dtype code, shape and its elements, in whatever memory layout the caller gave.

    With ``source`` (a :class:`~rlarchive.row_snapshot.RowSnapshot` of ``array``), the
    elements are the snapshot's, read once, as the tensor is written.
    """

    dtype: str
    shape: tuple[Any, ...]
    array: np.ndarray  # the elements; converted to little-endian C order only as they are written
    source: RowSnapshot | None = None

    @property
    def nbytes(self) -> int:
        return int(self.array.nbytes)

    @property
    def data(self) -> np.ndarray:
        """The little-endian element bytes in C order, as 1-D uint8 (a copy only when the array is laid out otherwise)."""
        if self.source is not None:
            raise RlarchiveError("WRITE_INVALID", "the elements of a row snapshot are read once, as they are written")
        return _little_endian_c_order(self.array).reshape(-1).view(np.uint8)

    def chunks(self, size: int = 1 << 24) -> Iterator[memoryview]:
        """The element bytes in pieces of about ``size`` bytes: views of a C-contiguous
        little-endian array, else converted a bounded piece at a time (never the whole array at once)."""
        if self.source is not None:  # in pieces of the digests' size: a row being read is waited for, not copied
            yield from self.source.chunks(min(size, checksums.PIECE_BYTES))
            return
        a = self.array
        if a.dtype.byteorder != ">" and a.flags.c_contiguous:
            mv = _bytes_of(a)
            for i in range(0, len(mv), size):
                yield mv[i : i + size]
            return
        yield from _converted_pieces(a, size)


def _bytes_of(a: np.ndarray) -> memoryview:
    """The bytes of a C-contiguous array, without a copy."""
    return memoryview(a.reshape(-1).view(np.uint8))  # type: ignore[arg-type]  # NumPy arrays are buffers


def _converted_pieces(a: np.ndarray, size: int) -> Iterator[memoryview]:
    if a.ndim == 0 or a.nbytes <= size:
        yield _bytes_of(_little_endian_c_order(a))
        return
    row = a[0].nbytes
    if a.ndim == 1 or row <= size:
        step = max(1, size // max(row, 1))
        for i in range(0, a.shape[0], step):
            yield _bytes_of(_little_endian_c_order(a[i : i + step]))
        return
    for i in range(a.shape[0]):  # rows larger than a piece: each row in pieces
        yield from _converted_pieces(a[i], size)


def _torch_to_numpy(t: Any) -> tuple[str, np.ndarray]:
    import torch

    code = code_of_torch(t.dtype)
    if code is None:
        raise RlarchiveError("VALUE_UNSUPPORTED", f"torch dtype {t.dtype} has no rlarchive dtype")
    t = t.detach().to("cpu").contiguous()
    d = DTYPES[code]
    if d.numpy is None or code in ("U16", "U32", "U64"):
        raw = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[d.size]
        a = t.view(raw).numpy().view(np.dtype(d.raw))
    else:
        a = t.numpy()
    return code, a


def as_tensor(obj: Any) -> TensorData:
    """Convert a NumPy array, NumPy scalar, torch tensor or RawTensor to TensorData.

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for anything else or an unsupported dtype.
    """
    if isinstance(obj, RawTensor):
        code, a = obj.dtype, np.asarray(obj.raw)
        d = DTYPES.get(code) if isinstance(code, str) else None
        if d is None or a.dtype.itemsize != d.size or a.size != math.prod(obj.shape):
            raise RlarchiveError(
                "WRITE_INVALID",
                f"RawTensor {str(code)[:20]!r} of shape {tuple(obj.shape)} does not match its raw array ({a.dtype}, shape {a.shape})",
            )
        a = a.reshape(tuple(obj.shape))
    elif isinstance(obj, (np.ndarray, np.generic)):
        a = np.asarray(obj)
        found = code_of_numpy(a.dtype)
        if found is None:
            raise RlarchiveError("VALUE_UNSUPPORTED", f"NumPy dtype {a.dtype} has no rlarchive dtype")
        code = found
    elif _is_torch_tensor(obj):
        code, a = _torch_to_numpy(obj)
    elif isinstance(obj, RowSnapshot):
        found = code_of_numpy(obj.dtype)
        if found is None:
            raise RlarchiveError("VALUE_UNSUPPORTED", f"NumPy dtype {obj.dtype} has no rlarchive dtype")
        return TensorData(found, obj.shape, obj.array, obj)
    else:
        raise RlarchiveError("VALUE_UNSUPPORTED", f"not a tensor: {type(obj).__name__}")
    shape = tuple(int(d) for d in a.shape)
    if len(shape) > MAX_NDIM:
        raise RlarchiveError("WRITE_INVALID", f"tensor has more than {MAX_NDIM} dimensions")
    if a.nbytes > MAX_ELEMENT_BYTES:
        raise RlarchiveError("WRITE_INVALID", "tensor larger than MAX_ELEMENT_BYTES")
    return TensorData(code, shape, a)  # a strided or big-endian array is converted piece by piece as it is written


def _is_torch_tensor(obj: Any) -> bool:
    return any(c.__module__ == "torch" and c.__name__ == "Tensor" for c in type(obj).__mro__)


def is_tensor(obj: Any) -> bool:
    """True for the objects :func:`as_tensor` accepts as arrays (not NumPy scalars)."""
    return isinstance(obj, (np.ndarray, RawTensor, RowSnapshot)) or _is_torch_tensor(obj)


def group_layout(tensors: Mapping[str, TensorData]) -> tuple[bytes, list[TensorData]]:
    """The header (length prefix included) and tensor order of a group (spec §12)."""
    order = sorted(tensors.items(), key=lambda kv: (-DTYPES[kv[1].dtype].alignment, kv[0].encode("utf-8")))
    header: dict[str, Any] = {}
    pos = 0
    for name, t in order:
        header[name] = {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": [pos, pos + t.nbytes]}
        pos += t.nbytes
    text = jsonstrict.dumps(header)
    pad = (-(8 + len(text))) % ALIGN
    text += b" " * pad
    return struct.pack("<Q", len(text)) + text, [t for _, t in order]


def group_chunks(prefix: bytes, order: list[TensorData], chunk: int = 1 << 24) -> Iterator[memoryview]:
    """The bytes of a group member, as chunks that reference the tensors' own memory (see :meth:`TensorData.chunks`)."""
    yield memoryview(prefix)
    for t in order:
        yield from t.chunks(chunk)


def group_progress(prefix: bytes, order: list[TensorData]) -> Callable[[int], None] | None:
    """What tells the row snapshots of a group member (:func:`group_chunks`) how far its bytes are
    digested and written (``progress(done)``, ``done`` counted from the member's first byte); None without one."""
    spans, pos = [], len(prefix)
    for t in order:
        if t.source is not None:
            spans.append((pos, t.nbytes, t.source))
        pos += t.nbytes
    if not spans:
        return None

    def progress(done: int) -> None:
        for start, nbytes, source in spans:
            if done > start:
                source.progress(min(done - start, nbytes))

    return progress


def check_tensor_name(name: Any) -> None:
    """Raise WRITE_INVALID unless ``name`` is a valid tensor name (spec §10.2)."""
    try:
        size = len(name.encode("utf-8")) if isinstance(name, str) else 0
    except UnicodeEncodeError:  # a lone surrogate: not Unicode text
        size = MAX_NAME_BYTES + 1
    if not isinstance(name, str) or not name or name.startswith("__") or size > MAX_NAME_BYTES:
        raise RlarchiveError("WRITE_INVALID", f"invalid tensor name {name[:80] if isinstance(name, str) else name!r}")


__all__ = [
    "RawTensor",
    "TensorInfo",
    "TensorPass",
    "TensorData",
    "read_group",
    "view_numpy",
    "view_torch",
    "as_tensor",
    "group_layout",
    "group_chunks",
    "group_progress",
    "DType",
]
