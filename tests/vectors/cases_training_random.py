"""Test cases of RLA_training's generator states (spec/extensions/RLA_training.md §3.6, §3.7, §5): what each generator accepts."""

from __future__ import annotations

import numpy as np
from cases import case, saved, unchecked
from cases_training import _data, _edit, _json, _random, _raw, _set, _state, cuda_state, mt_words, torch_state
from sites import doc

from rlarchive.extensions.training import EXTENSION as TR
from rlarchive.extensions.training import MEMBER as TR_MEMBER

SPEC = ["RLA_training §3.6", "RLA_training §3.7", "RLA_training §5"]
EXT = "extension-document"
R = "/training/random"

#: An MT19937 state whose first word has only its 31 low bits set: the recurrence never reads them, so it is degenerate.
_LOW_BITS_ONLY = [0x7FFFFFFF] + [0] * 623


def _python(words, index: int) -> np.ndarray:
    return np.array(list(words) + [index], np.uint32)


def _with(**random):
    """The run state whose RANDOM has the given members replaced (Python objects for the encoder)."""
    r = _random()
    for k, v in random.items():
        if k in ("key", "pos", "has_gauss", "cached_gaussian"):
            r["numpy"][k] = v
        elif k in ("state", "gauss_next"):
            r["python"][k] = v
        else:
            r[k] = v
    return _state(random=r)


def _invalid(id: str, description: str, build, pointer: str) -> None:
    case(id, description, SPEC, "EXTENSION_INVALID", extensions=[TR], check=EXT, at=doc(pointer, "value", TR_MEMBER))(
        lambda: _raw(build())
    )


def _invalid_random(id: str, description: str, pointer: str, **random) -> None:
    _invalid(id, description, lambda: _json(_with(**random)), pointer)


# ------------------------------------------------------------------------------ valid


@case(
    "training-generators-boundary",
    "Generator states at the edges of what their generators accept: NumPy's key and Python's words are zero but for the top bit of the first word (not degenerate: the recurrence reads that bit), Python's index 0, PyTorch's state with next + left = 625 and both cached normal samples valid, a CUDA offset of 0, the largest counter (2^63 - 1), cached_gaussian the integer literal 0.",
    SPEC + ["RLA_training §3.1"],
    extensions=[TR],
)
def _():
    top = [0x80000000] + [0] * 623
    torch = torch_state(
        7,
        left=600,
        next=25,
        normal_is_valid=1,
        normal_y=-1.25,
        is_next_float_normal_sample_valid=1,
        next_float_normal_sample=0.5,
    )
    state = _with(torch=torch, torch_cuda=[cuda_state(offset=0)], key=np.array(top, np.uint32), cached_gaussian=0)
    state["random"]["python"].update(state=_python(top, 0), gauss_next=-0.5)
    state["counters"]["total_timesteps"] = (1 << 63) - 1
    return saved(_data(), extension_values={TR: state})


# ------------------------------------------------------------------------------ structure (§3.1, §3.6)

_invalid(
    "training-counter-range",
    "num_timesteps is 2^63 (a tagged int): counters are below 2^63.",
    _edit(_set("counters/num_timesteps", {"$type": "int", "value": str(1 << 63)})),
    "/training/counters/num_timesteps",
)
_invalid_random(
    "training-torch-shape",
    "PyTorch's generator state has 5048 bytes (the layout of old PyTorch versions, which today's refuses), not 5056.",
    f"{R}/torch",
    torch=torch_state()[:5048].copy(),
)
_invalid_random(
    "training-cuda-shape",
    "A CUDA generator state has 8 bytes (a seed without its offset), not 16.",
    f"{R}/torch_cuda/0",
    torch_cuda=[cuda_state()[:8].copy()],
)
_invalid(
    "training-numpy-cached-gaussian-nan",
    "NumPy's cached_gaussian is the tagged float nan: a cached normal sample is a finite number.",
    _edit(_set("random/numpy/cached_gaussian", {"$type": "float", "value": "nan"})),
    f"{R}/numpy/cached_gaussian",
)
_invalid(
    "training-python-gauss-next-inf",
    "Python's gauss_next is the tagged float inf: a cached normal sample is a finite number.",
    _edit(_set("random/python/gauss_next", {"$type": "float", "value": "inf"})),
    f"{R}/python/gauss_next",
)
_invalid(
    "training-generator-inc-even",
    "A space's PCG64 increment is even (2): NumPy seeds it odd, and an even one leaves states that never change.",
    _edit(_set("random/action_space/generator/inc", 2)),
    f"{R}/action_space/generator/inc",
)

# ------------------------------------------------------------------------------ contents (§3.7)

_invalid_random(
    "training-torch-left-zero",
    "PyTorch's generator state has left = 0 (it must be in [1, 624]).",
    f"{R}/torch",
    torch=torch_state(left=0),
)
_invalid_random(
    "training-torch-not-seeded",
    "PyTorch's generator state has seeded = 0 (it must be 1).",
    f"{R}/torch",
    torch=torch_state(seeded=0),
)
_invalid_random(
    "training-torch-next-past-words",
    "PyTorch's generator state has left = 624 and next = 2: the generator would read words past its 624 (next + left must be at most 625).",
    f"{R}/torch",
    torch=torch_state(left=624, next=2),
)
_invalid_random(
    "training-torch-word-wide",
    "Word 5 of PyTorch's generator state is 2^32: its 64-bit words hold 32-bit values.",
    f"{R}/torch",
    torch=torch_state(state=mt_words(5)[:5] + [1 << 32] + mt_words(5)[6:]),
)
_invalid_random(
    "training-torch-degenerate",
    "PyTorch's generator state has zero words but for the 31 low bits of the first, which the recurrence never reads: it makes only zeros.",
    f"{R}/torch",
    torch=torch_state(state=_LOW_BITS_ONLY),
)
_invalid_random(
    "training-torch-normal-flag",
    "PyTorch's normal_is_valid is 2 (it must be 0 or 1).",
    f"{R}/torch",
    torch=torch_state(normal_is_valid=2),
)
_invalid_random(
    "training-torch-normal-nan",
    "PyTorch's cached double normal sample (normal_y) is NaN while normal_is_valid is 1.",
    f"{R}/torch",
    torch=torch_state(normal_is_valid=1, normal_y=float("nan")),
)
_invalid_random(
    "training-torch-float-flag",
    "PyTorch's is_next_float_normal_sample_valid is the byte 7 (it must be 0 or 1).",
    f"{R}/torch",
    torch=torch_state(is_next_float_normal_sample_valid=7),
)
_invalid_random(
    "training-torch-float-inf",
    "PyTorch's cached float normal sample is infinite while its flag is 1.",
    f"{R}/torch",
    torch=torch_state(is_next_float_normal_sample_valid=1, next_float_normal_sample=float("inf")),
)
_invalid_random(
    "training-cuda-offset-unaligned",
    "A CUDA generator's Philox offset is 6, not a multiple of 4.",
    f"{R}/torch_cuda/0",
    torch_cuda=[cuda_state(offset=6)],
)
_invalid_random(
    "training-cuda-offset-negative",
    "A CUDA generator's Philox offset is -4, negative.",
    f"{R}/torch_cuda/0",
    torch_cuda=[cuda_state(offset=-4)],
)
_invalid_random(
    "training-numpy-key-degenerate",
    "NumPy's MT19937 key is zero but for the 31 low bits of its first word, which the recurrence never reads: the legacy normal sampler would never return.",
    f"{R}/numpy/key",
    key=np.array(_LOW_BITS_ONLY, np.uint32),
)
_invalid_random(
    "training-python-index-range",
    "The index of Python's generator state is 625 (it must be in [0, 624]).",
    f"{R}/python/state",
    state=_python(mt_words(1), 625),
)
_invalid_random(
    "training-python-state-zero",
    "Python's generator state is all zeros (index 624): random.normalvariate would never return.",
    f"{R}/python/state",
    state=_python([0] * 624, 624),
)


@case(
    "training-numpy-key-zero",
    "NumPy's MT19937 key is all zeros, referenced from the group RLA_training: after restoring it NumPy's legacy normal sampler never returns. The rule reads the referenced tensor's element bytes.",
    SPEC,
    "EXTENSION_INVALID",
    extensions=[TR],
    check=EXT,
    at=doc(f"{R}/numpy/key", "value", TR_MEMBER),
)
def _():
    return unchecked(_data(), {TR: _with(key=np.zeros(624, np.uint32))})


_invalid(
    "training-generators-structure-first",
    "NumPy's key is degenerate and Python's gauss_next is a string: the structure (§5 step 5) is checked before the generators' contents (step 6), so at gauss_next.",
    lambda: _json(_with(key=np.zeros(624, np.uint32), gauss_next="0.5")),
    f"{R}/python/gauss_next",
)
_invalid(
    "training-generators-content-order",
    "PyTorch's state and NumPy's key are both degenerate: the contents are checked in the order torch, torch_cuda, numpy, python, so at torch.",
    lambda: _json(_with(torch=torch_state(state=[0] * 624), key=np.zeros(624, np.uint32))),
    f"{R}/torch",
)
