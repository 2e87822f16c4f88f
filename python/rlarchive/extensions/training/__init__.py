"""Extension ``RLA_training``: the run state and the random state a training run goes on from.

An archive written mid-training carries, as values and tensors (no pickle),
what a learning loop reads when it goes on: counters, the last observation,
the episode statistics, the action noise process, recurrent states, and the
state of every random number generator the loop draws from
(``spec/extensions/RLA_training.md``). This module holds the member's
structural checks (:func:`check`, spec §3, ``EXTENSION_INVALID``), the checks
that read the generators' element bytes (:func:`check_content`, spec §3.7, in
:mod:`rlarchive.extensions.training.generator_states`) and :func:`read`, the checked and decoded value of an archive. The conversion
from and to a live Stable-Baselines3 model is
:mod:`rlarchive.sb3.run_state`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...errors import RlarchiveError, esc, members_pointer
from . import generator_states

if TYPE_CHECKING:
    from ...reader import Archive
    from .. import Content

__all__ = ["EXTENSION", "MEMBER", "KEY", "GROUP", "KEYS", "check", "check_content", "check_generators", "read"]

#: The extension's name, its one member, the member's top-level key, and the
#: tensor group that receives its arrays above ``INLINE_ARRAY_BYTES``.
EXTENSION = "RLA_training"
MEMBER = "extensions/RLA_training/training.json"
KEY = "training"
GROUP = "RLA_training"

#: The keys of the value, in the order they are checked (spec §3).
KEYS = (
    "counters", "progress_remaining", "exploration_rate", "last_obs", "last_original_obs", "last_episode_starts",
    "episode_info", "episode_success", "action_noise", "lstm_states", "random",
)  # fmt: skip
COUNTERS = ("num_timesteps", "total_timesteps", "num_timesteps_at_start", "n_updates", "episode_num", "n_calls")
RANDOM_KEYS = ("torch", "torch_cuda", "numpy", "python", "action_space", "observation_space")
NUMPY_KEYS = ("key", "pos", "has_gauss", "cached_gaussian")
PYTHON_KEYS = ("version", "state", "gauss_next")
GENERATOR_KEYS = ("bit_generator", "state", "inc", "has_uint32", "uinteger")
#: Bit generators whose state is the 128-bit ``state`` and ``inc`` (NumPy's ``PCG64`` family).
BIT_GENERATORS = ("PCG64", "PCG64DXSM")
NOISE_KEYS = {
    "normal": ("kind", "mean", "sigma", "dtype"),
    "ornstein_uhlenbeck": ("kind", "mean", "sigma", "theta", "dt", "initial_noise", "noise_prev", "dtype"),
    "vectorized": ("kind", "base", "noises"),
}
NOISE_DTYPES = ("F32", "F64")
_U128 = 1 << 128
#: Counters are below 2^63 (spec §3.1); PyTorch's and CUDA's generator states have these sizes (§3.6, §3.7).
COUNTER_LIMIT = 1 << 63
TORCH_STATE_BYTES = generator_states.TORCH_BYTES
CUDA_STATE_BYTES = generator_states.CUDA_BYTES


def _fail(msg: str, ptr: str) -> RlarchiveError:
    return RlarchiveError("EXTENSION_INVALID", msg, member=MEMBER, pointer=ptr)


def _is_int(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, dict) and v.get("$type") == "int")


def _int_value(v: Any) -> int:
    return int(v["value"]) if isinstance(v, dict) else int(v)


def _is_float(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, (int, float)) or (isinstance(v, dict) and v.get("$type") in ("float", "int"))


def _is_map(v: Any) -> bool:
    return isinstance(v, dict) and "$type" not in v


def _exact(v: Any, ptr: str, keys: Sequence[str], what: str) -> None:
    """A map with exactly ``keys`` (spec §11.2: a missing key locates the map, an extra one itself)."""
    if not _is_map(v):
        raise _fail(f"{what} must be a map", ptr)
    if set(v) != set(keys):
        raise _fail(f"{what} must have exactly the keys {', '.join(keys)}", members_pointer(v, ptr, keys))


def _array(v: Any, ptr: str, what: str, dtypes: Sequence[str] | None = None, ndim: int | None = None) -> list[Any]:
    """Check an ``ndarray`` value (of one of ``dtypes``, of ``ndim`` dimensions) and return its shape."""
    if not (isinstance(v, dict) and v.get("$type") == "ndarray"):
        raise _fail(f"{what} must be an ndarray", ptr)
    if dtypes is not None and v["dtype"] not in dtypes:
        raise _fail(f"{what} must be an ndarray of dtype {' or '.join(dtypes)}, not {v['dtype']}", ptr)
    shape = [int(d) for d in v["shape"]]
    if ndim is not None and len(shape) != ndim:
        raise _fail(f"{what} must have {ndim} dimension(s), not {len(shape)}", ptr)
    return shape


def _counter(v: Any, ptr: str, what: str) -> int:
    if not _is_int(v) or not 0 <= _int_value(v) < COUNTER_LIMIT:
        raise _fail(f"{what} must be an integer in [0, 2^63)", ptr)
    return _int_value(v)


def _finite_literal(v: Any) -> bool:
    """A float or integer literal (a parsed literal is finite; a tagged value is not one)."""
    return type(v) in (int, float)


def _space(data: Mapping[str, Any] | None, key: str) -> dict[str, Any] | None:
    sp = (data or {}).get(key)
    return sp if isinstance(sp, dict) and sp.get("$type") == "space" else None


def _observation(v: Any, ptr: str, space: dict[str, Any] | None) -> None:
    """OBS: null, an ndarray of at least one dimension (the first counts the environments), or a map of key to such ndarrays."""
    if v is None:
        return
    kind = space.get("kind") if space is not None else None
    if _is_map(v):
        if kind not in (None, "dict"):
            raise _fail(f"a map of observations for a {kind} observation space", ptr)
        keys = [k for k, _ in space.get("spaces", [])] if space is not None and kind == "dict" else list(v)
        if list(v) != keys:
            raise _fail(
                f"the observations must be a map with exactly the keys of the observation space {keys}, in order",
                members_pointer(v, ptr, keys),
            )
        for k, x in v.items():
            _observation_array(x, f"{ptr}/{esc(k)}")
        return
    if kind == "dict":
        raise _fail("a Dict observation space needs a map of observations", ptr)
    _observation_array(v, ptr)


def _observation_array(v: Any, ptr: str) -> None:
    if not _array(v, ptr, "an observation"):
        raise _fail("an observation must have a first dimension (the environments)", ptr)


def _first_dims(v: Any) -> list[Any]:
    """The first dimension of every array of a checked OBS, in document order."""
    if v is None:
        return []
    arrays = list(v.values()) if _is_map(v) else [v]
    return [int(a["shape"][0]) for a in arrays]


def _deque(v: Any, ptr: str, what: str, item_is_map: bool) -> None:
    _exact(v, ptr, ("maxlen", "items"), what)
    maxlen = v["maxlen"]
    if maxlen is not None and (not _is_int(maxlen) or _int_value(maxlen) < 1):
        raise _fail(f"{what}'s maxlen must be null or a positive integer", f"{ptr}/maxlen")
    items = v["items"]
    if not isinstance(items, list):
        raise _fail(f"{what}'s items must be a list", f"{ptr}/items")
    for i, x in enumerate(items):
        if item_is_map and not _is_map(x):
            raise _fail("an episode's information must be a map", f"{ptr}/items/{i}")
        if not item_is_map and not isinstance(x, bool):
            raise _fail("an episode's success must be a boolean", f"{ptr}/items/{i}")
    if maxlen is not None and len(items) > _int_value(
        maxlen
    ):  # items, after their own rules, against maxlen before them
        raise _fail(f"{what} holds {len(items)} items, more than its maxlen {_int_value(maxlen)}", f"{ptr}/items")


def _noise(v: Any, ptr: str, nested: bool = False) -> None:
    if v is None and not nested:
        return
    kind = v.get("kind") if _is_map(v) else None
    if not isinstance(kind, str) or kind not in NOISE_KEYS or (nested and kind == "vectorized"):
        kinds = [k for k in NOISE_KEYS if not (nested and k == "vectorized")]
        raise _fail(
            f"an action noise must be a map whose kind is one of {', '.join(kinds)}",
            f"{ptr}/kind" if _is_map(v) and "kind" in v else ptr,
        )
    _exact(v, ptr, NOISE_KEYS[kind], f"a {kind} action noise")
    if kind == "vectorized":
        _noise(v["base"], f"{ptr}/base", nested=True)
        if not isinstance(v["noises"], list) or not v["noises"]:
            raise _fail("a vectorized action noise must have a non-empty list of noises", f"{ptr}/noises")
        for i, n in enumerate(v["noises"]):
            _noise(n, f"{ptr}/noises/{i}", nested=True)
        return
    shape = None
    for k in NOISE_KEYS[kind][1:]:  # the members in the order of the table of §3.4
        if k in ("theta", "dt"):
            if not _is_float(v[k]):
                raise _fail(f"{k} must be a float", f"{ptr}/{k}")
        elif k == "dtype":
            if v[k] not in NOISE_DTYPES:
                raise _fail(f"an action noise's dtype must be one of {', '.join(NOISE_DTYPES)}", f"{ptr}/dtype")
        elif not (k == "initial_noise" and v[k] is None):
            s = _array(v[k], f"{ptr}/{k}", k, ("F32", "F64"))
            if shape is None:
                shape = s
            elif s != shape:
                raise _fail(f"{k} must have the shape of mean {shape}", f"{ptr}/{k}")


def _lstm(v: Any, ptr: str) -> None:
    if v is None:
        return
    _exact(v, ptr, ("pi", "vf"), "the recurrent states")
    shape = None
    for k in ("pi", "vf"):
        pair = v[k]
        if not (isinstance(pair, list) and len(pair) == 2):
            raise _fail("a recurrent state must be a list of two arrays (hidden and cell states)", f"{ptr}/{k}")
        for i, a in enumerate(pair):
            s = _array(a, f"{ptr}/{k}/{i}", "a recurrent state", ("F32",), 3)
            if shape is not None and s != shape:
                raise _fail(f"the recurrent states must have one shape, {shape}", f"{ptr}/{k}/{i}")
            shape = s


def _generator(v: Any, ptr: str) -> None:
    if v is None:
        return
    _exact(v, ptr, GENERATOR_KEYS, "a generator state")
    if v["bit_generator"] not in BIT_GENERATORS:
        raise _fail(f"the bit generator must be one of {', '.join(BIT_GENERATORS)}", f"{ptr}/bit_generator")
    for k in ("state", "inc"):
        if not _is_int(v[k]) or not 0 <= _int_value(v[k]) < _U128:
            raise _fail(f"{k} must be an integer in [0, 2^128)", f"{ptr}/{k}")
    if _int_value(v["inc"]) % 2 == 0:
        raise _fail("inc must be odd (an even increment leaves states that never change)", f"{ptr}/inc")
    if not _is_int(v["has_uint32"]) or _int_value(v["has_uint32"]) not in (0, 1):
        raise _fail("has_uint32 must be 0 or 1", f"{ptr}/has_uint32")
    if not _is_int(v["uinteger"]) or not 0 <= _int_value(v["uinteger"]) < 1 << 32:
        raise _fail("uinteger must be an integer in [0, 2^32)", f"{ptr}/uinteger")


def _space_random(v: Any, ptr: str) -> None:
    if v is None:
        return
    _exact(v, ptr, ("generator", "spaces"), "a space's generators")
    _generator(v["generator"], f"{ptr}/generator")
    if not isinstance(v["spaces"], list):
        raise _fail("spaces must be a list", f"{ptr}/spaces")
    for i, s in enumerate(v["spaces"]):
        if s is None:
            raise _fail("a subspace's generators must be a map", f"{ptr}/spaces/{i}")
        _space_random(s, f"{ptr}/spaces/{i}")


def _random(v: Any, ptr: str) -> None:
    _exact(v, ptr, RANDOM_KEYS, "random")
    if _array(v["torch"], f"{ptr}/torch", "torch", ("U8",), 1) != [TORCH_STATE_BYTES]:
        raise _fail(f"PyTorch's generator state must have shape [{TORCH_STATE_BYTES}]", f"{ptr}/torch")
    cuda = v["torch_cuda"]
    if cuda is not None:
        if not isinstance(cuda, list):
            raise _fail("torch_cuda must be null or a list of arrays", f"{ptr}/torch_cuda")
        for i, a in enumerate(cuda):
            if _array(a, f"{ptr}/torch_cuda/{i}", "a CUDA generator state", ("U8",), 1) != [CUDA_STATE_BYTES]:
                raise _fail(f"a CUDA generator state must have shape [{CUDA_STATE_BYTES}]", f"{ptr}/torch_cuda/{i}")
    n = v["numpy"]
    _exact(n, f"{ptr}/numpy", NUMPY_KEYS, "numpy")
    if _array(n["key"], f"{ptr}/numpy/key", "key", ("U32",), 1) != [624]:
        raise _fail("numpy's key must have shape [624]", f"{ptr}/numpy/key")
    if not _is_int(n["pos"]) or not 0 <= _int_value(n["pos"]) <= 624:
        raise _fail("numpy's pos must be an integer in [0, 624]", f"{ptr}/numpy/pos")
    if not isinstance(n["has_gauss"], bool):
        raise _fail("has_gauss must be a boolean", f"{ptr}/numpy/has_gauss")
    if not _finite_literal(n["cached_gaussian"]):
        raise _fail("cached_gaussian must be a finite number", f"{ptr}/numpy/cached_gaussian")
    p = v["python"]
    _exact(p, f"{ptr}/python", PYTHON_KEYS, "python")
    if not _is_int(p["version"]) or _int_value(p["version"]) != 3:
        raise _fail("python's version must be 3", f"{ptr}/python/version")
    if _array(p["state"], f"{ptr}/python/state", "state", ("U32",), 1) != [625]:
        raise _fail("python's state must have shape [625]", f"{ptr}/python/state")
    if p["gauss_next"] is not None and not _finite_literal(p["gauss_next"]):
        raise _fail("gauss_next must be null or a finite number", f"{ptr}/python/gauss_next")
    for k in ("action_space", "observation_space"):
        _space_random(v[k], f"{ptr}/{k}")


def check(value: Any, data: Mapping[str, Any] | None = None, used: Sequence[str] = ()) -> None:
    """Check the value under ``training`` (spec §3); ``data`` is the archive's raw ``data`` object, ``used`` its extensions.

    Raises:
        RlarchiveError: EXTENSION_INVALID with the JSON Pointer of the offending value.
    """
    base = "/" + KEY
    _exact(value, base, KEYS, "the run state")
    c = value["counters"]
    _exact(c, f"{base}/counters", COUNTERS, "counters")
    for k in COUNTERS:
        if not (k == "n_calls" and c[k] is None):
            _counter(c[k], f"{base}/counters/{k}", k)
    if not _is_float(value["progress_remaining"]):
        raise _fail("progress_remaining must be a float", f"{base}/progress_remaining")
    if value["exploration_rate"] is not None and not _is_float(value["exploration_rate"]):
        raise _fail("exploration_rate must be null or a float", f"{base}/exploration_rate")
    space = _space(data, "observation_space")
    for k in ("last_obs", "last_original_obs"):
        _observation(value[k], f"{base}/{k}", space)
    starts = value["last_episode_starts"]
    if starts is not None:  # its own rules, then against the observations before it
        n_envs = _array(starts, f"{base}/last_episode_starts", "last_episode_starts", ("BOOL",), 1)[0]
        if any(d != n_envs for k in ("last_obs", "last_original_obs") for d in _first_dims(value[k])):
            raise _fail(
                f"the observations' first dimension must be the {n_envs} environment(s) of last_episode_starts",
                f"{base}/last_episode_starts",
            )
    _deque(value["episode_info"], f"{base}/episode_info", "episode_info", True)
    _deque(value["episode_success"], f"{base}/episode_success", "episode_success", False)
    _noise(value["action_noise"], f"{base}/action_noise")
    _lstm(value["lstm_states"], f"{base}/lstm_states")
    _random(value["random"], f"{base}/random")


def check_content(content: Content, value: Any) -> None:
    """Spec §3.7, after :func:`check`: the generators' states accept what their generators accept (element bytes).

    ``content`` (:class:`rlarchive.extensions.Content`) gives the referenced tensors.

    Raises:
        RlarchiveError: EXTENSION_INVALID at the array that breaks a rule (spec §5 step 6).
    """
    from ...values import Decoder

    check_generators(Decoder(content.tensor_array, "neutral").decode(value["random"]))


def check_generators(random: Mapping[str, Any]) -> None:
    """Spec §3.7 on RANDOM (``value["random"]``) checked by :func:`check`, its arrays decoded (NumPy arrays).

    Raises:
        RlarchiveError: EXTENSION_INVALID at the array that breaks a rule (spec §5 step 6).
    """
    generator_states.check_random(random, f"/{KEY}/random", MEMBER)


def read(ar: Archive) -> dict[str, Any] | None:
    """The checked run state of ``ar`` decoded (arrays as NumPy arrays copied out of the file), or None when it has none.

    Raises:
        RlarchiveError: the first broken rule, located in the extension member (spec §5).
    """
    from ...values import Decoder

    raw = ar.extension_document(EXTENSION)
    if raw is None:
        return None
    decoded: dict[str, Any] | None = Decoder(lambda g, n: ar.tensor(g, n).copy(), "neutral").decode(raw)
    return decoded
