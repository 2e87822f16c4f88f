"""A live Stable-Baselines3 model's run state and random state, to and from the extension ``RLA_training``.

:func:`capture` reads what ``learn`` reads when it goes on (counters, the last
observation, the episode statistics, the action noise process, recurrent
states) and the state of every random number generator it draws from
(PyTorch's, CUDA's, NumPy's global one, Python's ``random``, and the model's
spaces' generators), as the extension's value
(``spec/extensions/RLA_training.md``). :func:`restore` puts a decoded value
back into a model built by :func:`rlarchive.interop.sb3.load`: nothing in it
is executed, imported or unpickled; the action noise is rebuilt from its
kind, which names one of SB3's own classes.
"""

from __future__ import annotations

import random
import warnings
from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import RlarchiveError
from ..training_state import BIT_GENERATORS

__all__ = ["capture", "restore", "describe", "pending_seeds", "put_pending_seeds"]


def _array(x: Any) -> np.ndarray | None:
    if x is None:
        return None
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.array(x, order="C", copy=True)


def _observation(obs: Any) -> Any:
    if obs is None:
        return None
    if isinstance(obs, Mapping):
        return {str(k): _array(v) for k, v in obs.items()}
    return _array(obs)


def _deque(d: Any, item: Any) -> dict:
    if d is None:
        return {"maxlen": None, "items": []}
    maxlen = getattr(d, "maxlen", None)
    return {"maxlen": int(maxlen) if maxlen is not None else None, "items": [item(x) for x in d]}


def _make_deque(v: Mapping[str, Any]) -> Any:
    """A deque with its maxlen; without one, a list (ARS keeps a list), or None for no items (nothing learnt yet)."""
    if v["maxlen"] is not None:
        return deque(v["items"], maxlen=int(v["maxlen"]))
    return list(v["items"]) if v["items"] else None


def _info(x: Mapping[str, Any]) -> dict:
    return {str(k): (v.item() if isinstance(v, np.generic) else v) for k, v in x.items()}


def _dtype_code(dtype: Any) -> str:
    code = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64"}.get(np.dtype(dtype))
    if code is None:
        raise RlarchiveError(
            "VALUE_UNSUPPORTED", f"an action noise of dtype {np.dtype(dtype)} (RLA_training holds float32 and float64)"
        )
    return code


def _noise(n: Any) -> dict | None:
    from stable_baselines3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise, VectorizedActionNoise

    if n is None:
        return None
    if type(n) is NormalActionNoise:
        return {"kind": "normal", "mean": _array(n._mu), "sigma": _array(n._sigma), "dtype": _dtype_code(n._dtype)}
    if type(n) is OrnsteinUhlenbeckActionNoise:
        return {
            "kind": "ornstein_uhlenbeck", "mean": _array(n._mu), "sigma": _array(n._sigma), "theta": float(n._theta),
            "dt": float(n._dt), "initial_noise": _array(n.initial_noise), "noise_prev": _array(n.noise_prev),
            "dtype": _dtype_code(n._dtype),
        }  # fmt: skip
    if type(n) is VectorizedActionNoise:
        return {"kind": "vectorized", "base": _noise(n.base_noise), "noises": [_noise(x) for x in n.noises]}
    raise RlarchiveError(
        "VALUE_UNSUPPORTED",
        f"the action noise {type(n).__qualname__} (RLA_training holds SB3's Normal, OrnsteinUhlenbeck and Vectorized noises)",
    )


def _make_noise(v: Mapping[str, Any] | None) -> Any:
    from stable_baselines3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise, VectorizedActionNoise

    if v is None:
        return None
    if v["kind"] == "vectorized":
        vec = VectorizedActionNoise(_make_noise(v["base"]), len(v["noises"]))
        vec.noises = [_make_noise(x) for x in v["noises"]]  # the setter resets each process: their states go in after
        for n, x in zip(vec.noises, v["noises"]):
            if isinstance(n, OrnsteinUhlenbeckActionNoise):
                n.noise_prev = np.array(x["noise_prev"])
        return vec
    dtype = np.float32 if v["dtype"] == "F32" else np.float64
    if v["kind"] == "normal":
        return NormalActionNoise(np.array(v["mean"]), np.array(v["sigma"]), dtype=dtype)
    initial = None if v["initial_noise"] is None else np.array(v["initial_noise"])
    out = OrnsteinUhlenbeckActionNoise(
        np.array(v["mean"]),
        np.array(v["sigma"]),
        theta=float(v["theta"]),
        dt=float(v["dt"]),
        initial_noise=initial,
        dtype=dtype,
    )
    out.noise_prev = np.array(v["noise_prev"])
    return out


def _space_random(space: Any) -> dict | None:
    """The generators of a gymnasium space and of its subspaces (Dict in key order, Tuple in order); None for no space."""
    if space is None:
        return None
    gen = getattr(space, "_np_random", None)  # the property would make one from fresh entropy
    g = None
    if gen is not None:
        st = gen.bit_generator.state
        if st["bit_generator"] not in BIT_GENERATORS:
            raise RlarchiveError(
                "VALUE_UNSUPPORTED",
                f"a space's bit generator {st['bit_generator']} (RLA_training holds {', '.join(BIT_GENERATORS)})",
            )
        g = {
            "bit_generator": st["bit_generator"], "state": int(st["state"]["state"]), "inc": int(st["state"]["inc"]),
            "has_uint32": int(st["has_uint32"]), "uinteger": int(st["uinteger"]),
        }  # fmt: skip
    return {"generator": g, "spaces": [_space_random(s) for s in _subspaces(space)]}


def _subspaces(space: Any) -> list:
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return list(space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return list(space.spaces)
    return []


def _restore_space(space: Any, v: Mapping[str, Any] | None, where: str) -> None:
    if v is None or space is None:
        return
    subs = _subspaces(space)
    if len(subs) != len(v["spaces"]):
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            f"the {where}'s generators are for {len(v['spaces'])} subspaces, the model's space has {len(subs)}",
        )
    g = v["generator"]
    if g is None:
        space._np_random = None
    else:
        bitgen = getattr(np.random, g["bit_generator"])()
        bitgen.state = {
            "bit_generator": g["bit_generator"], "state": {"state": int(g["state"]), "inc": int(g["inc"])},
            "has_uint32": int(g["has_uint32"]), "uinteger": int(g["uinteger"]),
        }  # fmt: skip
        space._np_random = np.random.Generator(bitgen)
    for s, sv in zip(subs, v["spaces"]):
        _restore_space(s, sv, where)


def _random_state(model: Any) -> dict:
    import torch

    key_name, key, pos, has_gauss, cached = np.random.get_state()
    version, internal, gauss_next = random.getstate()
    cuda = None
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        cuda = [s.numpy().copy() for s in torch.cuda.get_rng_state_all()]
    return {
        "torch": torch.get_rng_state().numpy().copy(),
        "torch_cuda": cuda,
        "numpy": {
            "key": np.array(key, np.uint32),
            "pos": int(pos),
            "has_gauss": bool(has_gauss),
            "cached_gaussian": float(cached),
        },
        "python": {"version": int(version), "state": np.array(internal, np.uint32), "gauss_next": gauss_next},
        "action_space": _space_random(getattr(model, "action_space", None)),
        "observation_space": _space_random(getattr(model, "observation_space", None)),
    }


def capture(model: Any) -> dict:
    """The value of the extension ``RLA_training`` for ``model`` as it is now (spec RLA_training §3).

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for an action noise or a space's bit generator the extension does not hold.
    """
    lstm = getattr(model, "_last_lstm_states", None)
    n_calls = getattr(model, "_n_calls", None)
    rate = getattr(model, "exploration_rate", None)
    return {
        "counters": {
            "num_timesteps": int(model.num_timesteps),
            "total_timesteps": int(model._total_timesteps),
            "num_timesteps_at_start": int(model._num_timesteps_at_start),
            "n_updates": int(model._n_updates),
            "episode_num": int(model._episode_num),
            "n_calls": int(n_calls) if n_calls is not None else None,
        },
        "progress_remaining": float(model._current_progress_remaining),
        "exploration_rate": float(rate) if rate is not None else None,
        "last_obs": _observation(model._last_obs),
        "last_original_obs": _observation(model._last_original_obs),
        "last_episode_starts": None
        if model._last_episode_starts is None
        else np.array(model._last_episode_starts, dtype=bool),
        "episode_info": _deque(model.ep_info_buffer, _info),
        "episode_success": _deque(model.ep_success_buffer, bool),
        "action_noise": _noise(getattr(model, "action_noise", None)),
        "lstm_states": None
        if lstm is None
        else {"pi": [_array(t) for t in lstm.pi], "vf": [_array(t) for t in lstm.vf]},
        "random": _random_state(model),
    }


def describe(state: Mapping[str, Any]) -> str:
    """What a run state value holds, in a few words (for reports)."""
    parts = [f"num_timesteps {int(state['counters']['num_timesteps'])}"]
    if state["last_obs"] is not None:
        parts.append("the last observation")
    if state["action_noise"] is not None:
        parts.append("the action noise")
    if state["lstm_states"] is not None:
        parts.append("the LSTM states")
    r = state["random"]
    gens = ["torch"] + (["torch CUDA"] if r["torch_cuda"] else []) + ["numpy", "python"]
    gens += [k.replace("_", " ") for k in ("action_space", "observation_space") if r[k] is not None]
    return ", ".join(parts) + "; generators: " + ", ".join(gens)


#: The items :func:`restore` reports, in its order (``rlarchive.sb3.RestoreReport`` names them so).
RANDOM_ITEMS = (
    "random_state.action_space", "random_state.observation_space", "random_state.numpy",
    "random_state.python", "random_state.torch", "random_state.torch_cuda",
)  # fmt: skip


def restore(model: Any, state: Mapping[str, Any], keep_last_obs: bool = True) -> tuple[list, dict]:
    """Put a decoded ``RLA_training`` value into ``model`` (built by :func:`rlarchive.interop.sb3.load`), random state last.

    Without ``keep_last_obs`` (SB3's ``force_reset``) the last observation,
    the episode starts and the recurrent states are left as the model has
    them, so that the next ``learn`` resets the environment.

    The CUDA generators are restored when this machine has as many CUDA
    devices as were recorded; otherwise they are left as they are, with a
    :class:`rlarchive.interop.sb3.LoadWarning` (the CPU generators are still restored).

    Returns:
        ``(restored, not_restored)``: the items restored (``"run_state"``,
        ``"last_obs"``, ``"action_noise"``, ``"lstm_states"``, and the
        :data:`RANDOM_ITEMS` the archive records), and item -> why not for
        those the archive holds that were left as the model has them.
    """
    restored, not_restored = _items(state, keep_last_obs)
    _restore_run(model, state, keep_last_obs)
    _restore_random(model, state["random"], keep_last_obs, restored, not_restored)
    return restored, not_restored


def _items(state: Mapping[str, Any], keep_last_obs: bool) -> tuple[list, dict]:
    """The items of the run (not its generators) that :func:`restore` restores, and those it leaves, with why."""
    restored: list = ["run_state"]
    not_restored: dict = {}
    held = {
        "last_obs": state["last_obs"] is not None,
        "action_noise": state["action_noise"] is not None,
        "lstm_states": state["lstm_states"] is not None,
    }
    for item in ("last_obs", "lstm_states"):
        if held[item]:
            if keep_last_obs:
                restored.append(item)
            else:
                not_restored[item] = (
                    "force_reset (or no env): the next learn starts from a reset of the environment, as with SB3's load"
                )
    if held["action_noise"]:
        restored.append("action_noise")
    return restored, not_restored


def _restore_run(model: Any, state: Mapping[str, Any], keep_last_obs: bool) -> None:
    """Put the counters, the last observation, the episode buffers, the action noise and the LSTM states into ``model``."""
    import torch

    c = state["counters"]
    model.num_timesteps = int(c["num_timesteps"])
    model._total_timesteps = int(c["total_timesteps"])
    model._num_timesteps_at_start = int(c["num_timesteps_at_start"])
    model._n_updates = int(c["n_updates"])
    model._episode_num = int(c["episode_num"])
    if c["n_calls"] is not None:
        model._n_calls = int(c["n_calls"])
    model._current_progress_remaining = float(state["progress_remaining"])
    if state["exploration_rate"] is not None:
        model.exploration_rate = float(state["exploration_rate"])
    if keep_last_obs:
        model._last_obs = state["last_obs"]
        model._last_original_obs = state["last_original_obs"]
        starts = state["last_episode_starts"]
        model._last_episode_starts = None if starts is None else np.array(starts, dtype=bool)
    model.ep_info_buffer = _make_deque(state["episode_info"])
    model.ep_success_buffer = _make_deque(state["episode_success"])
    if state["action_noise"] is not None:
        model.action_noise = _make_noise(state["action_noise"])
    lstm = state["lstm_states"]
    if lstm is not None and keep_last_obs:
        from sb3_contrib.common.recurrent.type_aliases import RNNStates

        def t(a: Any) -> Any:
            return torch.as_tensor(np.array(a)).to(model.device)

        model._last_lstm_states = RNNStates(pi=tuple(t(a) for a in lstm["pi"]), vf=tuple(t(a) for a in lstm["vf"]))
    if hasattr(model, "weights") and hasattr(model, "n_params"):  # ARS keeps its policy's parameters as one vector too
        model.weights = torch.nn.utils.parameters_to_vector(model.policy.parameters()).detach()


def _restore_random(model: Any, r: Mapping[str, Any], keep_last_obs: bool, restored: list, not_restored: dict) -> None:
    """Put the recorded generators back (the spaces', NumPy's, Python's, torch's, CUDA's when the devices match), adding to the items."""
    import torch

    for key in ("action_space", "observation_space"):
        env_space = getattr(getattr(model, "env", None), key, None) if keep_last_obs else None
        if env_space is not None and r[key] is not None and _space_random(env_space) == r[key]:
            setattr(model, key, env_space)  # one object, as in a model built on this environment (see the spec)
        else:
            _restore_space(getattr(model, key, None), r[key], key.replace("_", " "))
        if r[key] is not None:
            if getattr(model, key, None) is not None:
                restored.append(f"random_state.{key}")
            else:
                not_restored[f"random_state.{key}"] = f"the model has no {key}"
    n = r["numpy"]
    np.random.set_state(
        ("MT19937", np.array(n["key"], np.uint32), int(n["pos"]), int(n["has_gauss"]), float(n["cached_gaussian"]))
    )
    p = r["python"]
    random.setstate((int(p["version"]), tuple(int(x) for x in np.array(p["state"]).tolist()), p["gauss_next"]))
    torch.set_rng_state(torch.as_tensor(np.array(r["torch"], np.uint8)))
    restored.extend(["random_state.numpy", "random_state.python", "random_state.torch"])
    cuda = r["torch_cuda"]
    if cuda:
        if torch.cuda.is_available() and torch.cuda.device_count() == len(cuda):
            torch.cuda.set_rng_state_all([torch.as_tensor(np.array(a, np.uint8)) for a in cuda])
            restored.append("random_state.torch_cuda")
        else:
            from .sb3_keys import LoadWarning

            not_restored["random_state.torch_cuda"] = (
                f"the archive records {len(cuda)} CUDA device(s), this machine has {torch.cuda.device_count() if torch.cuda.is_available() else 0}"
            )
            warnings.warn(
                f"the archive records the generators of {len(cuda)} CUDA device(s) and this machine has "
                f"{torch.cuda.device_count() if torch.cuda.is_available() else 0}: they are left as they are, "
                "so draws made on CUDA will differ from the recorded run's",
                LoadWarning,
                stacklevel=4,
            )


def pending_seeds(env: Any) -> tuple | None:
    """The seeds a VecEnv will pass to its next reset (SB3 keeps them in ``_seeds``), to be put back by :func:`put_pending_seeds`.

    Building a model seeds its environment (SB3's ``set_random_seed``); a
    run that goes on without a reset must find its environment as it was.
    None when ``env`` is not a VecEnv (SB3 then wraps it in a new one).
    """
    from stable_baselines3.common.vec_env import VecEnv

    while hasattr(env, "venv"):  # VecEnvWrapper
        env = env.venv
    if not isinstance(env, VecEnv) or not hasattr(env, "_seeds"):
        return None
    return env, list(env._seeds)


def put_pending_seeds(saved: tuple | None) -> None:
    """Undo what building a model did to its environment's pending reset seeds (see :func:`pending_seeds`)."""
    if saved is not None:
        env, seeds = saved
        env._seeds = seeds
