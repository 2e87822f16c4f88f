"""The tensor API in safetensors' conventions: framework names (``"np"``/``"numpy"``, ``"pt"``/``"torch"``),
a torch ``device``, and partial reads of one tensor (:class:`TensorSlice`, like safetensors' ``get_slice``).

A slice reads only byte ranges of its tensor, planned by :func:`rlarchive.range_plan.plan_ranges` as
spec §11.4 says: the selected elements form runs of consecutive bytes; runs are joined across gaps of at most
``SLICE_REQUEST_BYTES``, smallest gap first, as many as it takes to stay within
``max(SLICE_MAX_REQUESTS, ceil(selected / SLICE_REQUEST_BYTES))`` requests, then more while those
further gaps total at most ``max(selected, SLICE_OVERREAD_BYTES)`` bytes. Both the number of requests
(beyond that bound, one per gap larger than ``SLICE_REQUEST_BYTES``) and the bytes read beyond the
selection (the least a plan within those requests must read, plus that allowance) are bounded. Each
range is read, its selected bytes copied out and dropped before the next is read.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .dtypes import DTYPES, numpy_view_dtype
from .errors import RlarchiveError
from .limits import SLICE_OVERREAD_BYTES
from .range_plan import plan_ranges, request_budget
from .tensors import RawTensor, TensorInfo

#: Accepted framework names, safetensors' short ones included, and what each means.
FRAMEWORKS = {"numpy": "numpy", "np": "numpy", "torch": "torch", "pt": "torch"}

ReadRange = Callable[[int, int], Any]


def framework_of(framework: str, device: Any = None) -> str:
    """The framework ``framework`` names, ``"numpy"`` or ``"torch"``, checked to be usable.

    Raises:
        ValueError: an unknown name, or a ``device`` given for NumPy.
        RlarchiveError: ``FRAMEWORK_UNAVAILABLE`` when torch is asked for and not installed.
    """
    name = FRAMEWORKS.get(framework) if isinstance(framework, str) else None
    if name is None:
        raise ValueError(f"framework must be 'numpy' (or 'np') or 'torch' (or 'pt'), not {framework!r}")
    if name == "torch":
        try:
            import torch  # noqa: F401
        except ImportError:
            raise RlarchiveError(
                "FRAMEWORK_UNAVAILABLE",
                f"torch is not installed (framework={framework!r} needs it; the torch extra brings it)",
            ) from None
    elif device is not None:
        raise ValueError("device= is for framework='torch' ('pt') only")
    return name


def on_device(tensor: Any, device: Any) -> Any:
    """``tensor`` (a torch tensor) moved to ``device``; itself when ``device`` is None or where it already is."""
    return tensor if device is None else tensor.to(device)


def _selection(key: Any, shape: tuple[Any, ...]) -> tuple[list[np.ndarray], list[bool]]:
    """Per dimension of ``shape``, the indices ``key`` selects (in order), and whether it was an integer."""
    parts = list(key) if isinstance(key, tuple) else [key]
    if sum(p is Ellipsis for p in parts) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    explicit = len(parts) - (Ellipsis in parts)
    if explicit > len(shape):
        raise IndexError(f"too many indices: the tensor has {len(shape)} dimensions, {explicit} were indexed")
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        parts[at : at + 1] = [slice(None)] * (len(shape) - explicit)
    parts += [slice(None)] * (len(shape) - len(parts))
    indices, integer = [], []
    for dim, (p, n) in enumerate(zip(parts, shape)):
        if isinstance(p, slice):
            indices.append(np.arange(*p.indices(n), dtype=np.int64))
            integer.append(False)
            continue
        if isinstance(p, (bool, np.bool_)) or p is None:
            raise TypeError("a tensor slice takes integers, slices and '...' only")
        try:
            i = operator.index(p)
        except TypeError:
            raise TypeError(f"a tensor slice takes integers, slices and '...' only, not {type(p).__name__}") from None
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for dimension {dim} of size {n}")
        indices.append(np.array([i % n], dtype=np.int64))
        integer.append(True)
    return indices, integer


class TensorSlice:
    """One tensor of an archive, read in parts: ``shape``, ``dtype`` and ``[...]`` indexing by integers,
    slices (any step) and ``...``, as NumPy's basic indexing. Each indexing reads only the byte ranges its
    selection needs and returns a new array (NumPy, :class:`~rlarchive.tensors.RawTensor` for a dtype NumPy
    lacks, or a torch tensor with ``framework="torch"``).
    """

    def __init__(
        self,
        info: TensorInfo,
        read: ReadRange,
        framework: str = "numpy",
        device: Any = None,
        coalesce: bool = True,
    ) -> None:
        """``read(offset, nbytes)`` gives ``nbytes`` bytes of the file at ``offset`` (a buffer). ``coalesce``:
        plan the reads as spec §11.4 says (default); False reads each run of selected bytes by itself."""
        self.info = info
        self._read = read
        self._framework = framework_of(framework, device)
        self._device = device
        self.coalesce = coalesce

    @property
    def shape(self) -> tuple[Any, ...]:
        """The tensor's shape."""
        return tuple(self.info.shape)

    @property
    def dtype(self) -> str:
        """The tensor's dtype code (``"F32"``, ``"BF16"``...: spec §10)."""
        return self.info.dtype

    def get_shape(self) -> list[Any]:
        """The shape as a list, as safetensors' ``get_shape``."""
        return list(self.info.shape)

    def get_dtype(self) -> str:
        """The dtype code, as safetensors' ``get_dtype``."""
        return self.info.dtype

    def __len__(self) -> int:
        if not self.info.shape:
            raise TypeError("len() of a 0-d tensor")
        return int(self.info.shape[0])

    def __getitem__(self, key: Any) -> Any:
        shape = tuple(int(n) for n in self.info.shape)
        indices, integer = _selection(key, shape)
        # dimensions after the last one not selected whole form contiguous blocks of `block` elements
        whole = [
            len(ix) == n and (n == 0 or (ix[0] == 0 and bool(np.all(np.diff(ix) == 1))))
            for ix, n in zip(indices, shape)
        ]
        split = len(shape)
        while split > 0 and whole[split - 1]:
            split -= 1
        block = int(np.prod(shape[split:], dtype=np.int64))
        counts = [len(ix) for ix in indices]
        np_dtype = numpy_view_dtype(self.info.dtype)
        itemsize = DTYPES[self.info.dtype].size
        if 0 in counts or block == 0:
            out = np.empty(counts, dtype=np_dtype)
        else:
            strides = [int(np.prod(shape[d + 1 : split], dtype=np.int64)) for d in range(split)]  # in blocks
            blocks = np.zeros((1,) * split, dtype=np.int64)
            for d in range(split):
                blocks = blocks + indices[d].reshape([-1 if e == d else 1 for e in range(split)]) * strides[d]
            out = self._gather(blocks.reshape(-1), block, itemsize, np_dtype).reshape(counts)
        out = out.reshape([c for c, i in zip(counts, integer) if not i])
        return self._convert(out)

    def _gather(self, blocks: np.ndarray, block: int, itemsize: int, np_dtype: np.dtype) -> np.ndarray:
        """The blocks ``blocks`` (indices in units of ``block`` elements) as an array ``(len(blocks), block)``,
        read range by range (each range's bytes are dropped once its blocks are copied out)."""
        size = block * itemsize
        starts = np.unique(blocks) * size  # byte offsets in the tensor, sorted
        new = np.ones(len(starts), dtype=bool)
        new[1:] = starts[1:] != starts[:-1] + size
        first = np.flatnonzero(new)
        lo, hi = starts[first], starts[np.append(first[1:], len(starts)) - 1] + size
        if self.coalesce:
            selected = len(starts) * size
            lo, hi = plan_ranges(lo, hi, request_budget(selected), max(selected, SLICE_OVERREAD_BYTES))
        out = np.empty((len(starts), block), dtype=np_dtype)
        for a, b, i, j in zip(lo, hi, np.searchsorted(starts, lo), np.searchsorted(starts, hi)):
            got = np.frombuffer(self._read(self.info.offset + int(a), int(b - a)), dtype=np.uint8)
            out[i:j] = got.view(np_dtype).reshape(-1, block)[(starts[i:j] - a) // size]
        if len(blocks) == len(starts) and bool(np.all(np.diff(blocks) > 0)):
            return out  # the blocks in increasing order: already in place
        rows: np.ndarray = out[np.searchsorted(starts, blocks * size)]
        return rows

    def _convert(self, out: np.ndarray) -> Any:
        raw = DTYPES[self.info.dtype].numpy is None
        value: Any = RawTensor(self.info.dtype, out.shape, out) if raw else out
        if self._framework == "numpy":
            return value
        import torch

        t = value.to_torch() if raw else torch.from_numpy(np.ascontiguousarray(out))
        return on_device(t, self._device)

    def __repr__(self) -> str:
        return f"<rlarchive.TensorSlice {self.info.name!r} {self.dtype} {list(self.shape)}>"
