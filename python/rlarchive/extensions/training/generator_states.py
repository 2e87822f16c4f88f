"""What the random generators of the extension ``RLA_training`` accept: the rules of its §3.7, on element bytes.

A generator state outside these rules is refused by its generator, makes it
read outside its state, or is degenerate: an MT19937 whose recurrence makes
only zero words, so that a sampler that rejects draws until one fits (NumPy's
legacy normal sampler, Python's ``random.normalvariate``) never returns.
:func:`check_random` takes RANDOM with its arrays decoded (NumPy arrays): the
reader checks an archive's with it (:func:`rlarchive.extensions.training.check_content`),
the writer the state it is about to write, and the loader the state it is
about to restore, before it sets any generator.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import RlarchiveError

__all__ = ["MT_WORDS", "TORCH_LAYOUT", "mt_degenerate", "check_random", "check_torch", "check_cuda"]

#: Words of an MT19937 state (PyTorch's, NumPy's and Python's generators), and the bytes of PyTorch's and CUDA's states.
MT_WORDS = 624
TORCH_BYTES = 5056
CUDA_BYTES = 16
#: PyTorch's ``CPUGeneratorImplState`` on a 64-bit little-endian machine (spec §3.7): field -> (offset, struct format).
TORCH_LAYOUT: Mapping[str, tuple[int, str]] = {
    "the_initial_seed": (0, "<Q"),
    "left": (8, "<i"),
    "seeded": (12, "<i"),
    "next": (16, "<Q"),
    "state": (24, f"<{MT_WORDS}Q"),
    "normal_x": (5016, "<d"),
    "normal_y": (5024, "<d"),
    "normal_rho": (5032, "<d"),
    "normal_is_valid": (5040, "<i"),
    "next_float_normal_sample": (5048, "<f"),
    "is_next_float_normal_sample_valid": (5052, "<B"),
}
_TOP_BIT = 0x80000000


def _fail(msg: str, ptr: str, member: str) -> RlarchiveError:
    return RlarchiveError("EXTENSION_INVALID", msg, member=member, pointer=ptr)


def mt_degenerate(words: Any) -> bool:
    """True for an MT19937 state whose recurrence makes only zeros: the first word's top bit and the 623 others all 0."""
    w = np.asarray(words)
    return not int(w[0]) & _TOP_BIT and not bool(np.any(w[1:]))


def _field(raw: bytes, name: str) -> Any:
    offset, fmt = TORCH_LAYOUT[name]
    values = struct.unpack_from(fmt, raw, offset)
    return values if len(values) > 1 else values[0]


def check_torch(raw: bytes, ptr: str, member: str) -> None:
    """PyTorch's CPU generator state (5056 bytes), its fields in the order of spec §5 step 6."""
    left, seeded, nxt = _field(raw, "left"), _field(raw, "seeded"), _field(raw, "next")
    if not 1 <= left <= MT_WORDS:
        raise _fail(f"PyTorch's generator state has left = {left}, outside [1, 624]", ptr, member)
    if seeded != 1:
        raise _fail(f"PyTorch's generator state has seeded = {seeded}, not 1", ptr, member)
    if nxt + left > MT_WORDS + 1:
        raise _fail(
            f"PyTorch's generator state has next + left = {nxt + left}, above 625: it would read past its words",
            ptr,
            member,
        )
    words = _field(raw, "state")
    wide = next((i for i, w in enumerate(words) if w >= 1 << 32), None)
    if wide is not None:
        raise _fail(f"word {wide} of PyTorch's generator state is not below 2^32", ptr, member)
    if mt_degenerate(np.array(words, dtype=np.uint64)):
        raise _fail("PyTorch's generator state is degenerate (its MT19937 words make only zeros)", ptr, member)
    for flag, sample in (
        ("normal_is_valid", "normal_y"),
        ("is_next_float_normal_sample_valid", "next_float_normal_sample"),
    ):
        valid = _field(raw, flag)
        if valid not in (0, 1):
            raise _fail(f"{flag} of PyTorch's generator state is {valid}, not 0 or 1", ptr, member)
        if valid and not math.isfinite(_field(raw, sample)):
            raise _fail(f"{sample} of PyTorch's generator state is not finite", ptr, member)


def check_cuda(raw: bytes, ptr: str, member: str) -> None:
    """A CUDA generator's state (16 bytes): its Philox offset a non-negative multiple of 4."""
    (offset,) = struct.unpack_from("<q", raw, 8)
    if offset < 0 or offset % 4:
        raise _fail(f"the CUDA generator's Philox offset {offset} is not a non-negative multiple of 4", ptr, member)


def check_random(r: Mapping[str, Any], ptr: str, member: str) -> None:
    """Spec RLA_training §3.7 on a structurally checked RANDOM whose arrays are decoded (NumPy arrays).

    ``ptr`` is RANDOM's JSON Pointer and ``member`` the extension member, where an issue is located.

    Raises:
        RlarchiveError: EXTENSION_INVALID at the array that breaks a rule, in the order of spec §5 step 6.
    """
    arrays = [("torch", r["torch"], TORCH_BYTES), ("numpy/key", r["numpy"]["key"], MT_WORDS)]
    arrays += [("python/state", r["python"]["state"], MT_WORDS + 1)]
    arrays += [(f"torch_cuda/{i}", a, CUDA_BYTES) for i, a in enumerate(r["torch_cuda"] or [])]
    for at, a, size in arrays:  # a state taken from a live process is checked before its structure is
        if np.shape(a) != (size,):
            raise _fail(f"{at} must have shape [{size}], not {list(np.shape(a))}", f"{ptr}/{at}", member)
    check_torch(np.ascontiguousarray(r["torch"], dtype=np.uint8).tobytes(), f"{ptr}/torch", member)
    for i, a in enumerate(r["torch_cuda"] or []):
        check_cuda(np.ascontiguousarray(a, dtype=np.uint8).tobytes(), f"{ptr}/torch_cuda/{i}", member)
    if mt_degenerate(r["numpy"]["key"]):
        raise _fail("NumPy's MT19937 key is degenerate (it makes only zeros)", f"{ptr}/numpy/key", member)
    state = np.asarray(r["python"]["state"])
    if int(state[MT_WORDS]) > MT_WORDS:
        raise _fail(
            f"the index of Python's generator state is {int(state[MT_WORDS])}, outside [0, 624]",
            f"{ptr}/python/state",
            member,
        )
    if mt_degenerate(state[:MT_WORDS]):
        raise _fail("Python's MT19937 state is degenerate (it makes only zeros)", f"{ptr}/python/state", member)
