"""A live Stable-Baselines3 model's run state and random state, to and from the extension ``RLA_training``.

:func:`capture` reads what ``learn`` reads when it goes on (counters, the last
observation, the episode statistics, the action noise process, recurrent
states) and the state of every random number generator it draws from
(PyTorch's, CUDA's, NumPy's global one, Python's ``random``, and the model's
spaces' generators), as the extension's value
(``spec/extensions/RLA_training.md``). :func:`restore` puts a decoded value
back into a model built by :func:`rlarchive.sb3.load`: nothing in it
is executed, imported or unpickled; the action noise is rebuilt from its
kind, which names one of SB3's own classes.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import RlarchiveError
from . import generators

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


def _deque(d: Any, item: Any) -> dict[str, Any]:
    if d is None:
        return {"maxlen": None, "items": []}
    maxlen = getattr(d, "maxlen", None)
    return {"maxlen": int(maxlen) if maxlen is not None else None, "items": [item(x) for x in d]}


def _make_deque(v: Mapping[str, Any]) -> Any:
    """A deque with its maxlen; without one, a list (ARS keeps a list), or None for no items (nothing learnt yet)."""
    if v["maxlen"] is not None:
        return deque(v["items"], maxlen=int(v["maxlen"]))
    return list(v["items"]) if v["items"] else None


def _info(x: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): (v.item() if isinstance(v, np.generic) else v) for k, v in x.items()}


def _dtype_code(dtype: Any) -> str:
    code = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64"}.get(np.dtype(dtype))
    if code is None:
        raise RlarchiveError(
            "VALUE_UNSUPPORTED", f"an action noise of dtype {np.dtype(dtype)} (RLA_training holds float32 and float64)"
        )
    return code


def _noise(n: Any) -> dict[str, Any] | None:
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


def _random_state(model: Any) -> dict[str, Any]:
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
        "action_space": generators.space_state(getattr(model, "action_space", None)),
        "observation_space": generators.space_state(getattr(model, "observation_space", None)),
    }


def capture(model: Any) -> dict[str, Any]:
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


def restore(model: Any, state: Mapping[str, Any], keep_last_obs: bool = True) -> tuple[list[str], dict[str, str]]:
    """Put a decoded ``RLA_training`` value into ``model`` (built by :func:`rlarchive.sb3.load`), random state last.

    Everything is checked and made before anything is set: the values against
    the model built (its number of environments, observation and action
    spaces, recurrent states, statistics window), the generators' states
    against the extension's rules and against what each generator accepts
    (:func:`rlarchive.sb3.generators.prepare`). Then the model's
    attributes and the generators are set; a generator that refuses its state
    then leaves every process-wide generator as it was.

    Without ``keep_last_obs`` (SB3's ``force_reset``) the last observation,
    the episode starts and the recurrent states are left as the model has
    them, so that the next ``learn`` resets the environment.

    The CUDA generators are restored when this machine has as many CUDA
    devices as were recorded; otherwise they are left as they are, with a
    :class:`rlarchive.sb3.LoadWarning` (the CPU generators are still restored).

    Returns:
        ``(restored, not_restored)``: the items restored (``"run_state"``,
        ``"last_obs"``, ``"action_noise"``, ``"lstm_states"``, and the
        :data:`RANDOM_ITEMS` the archive records), and item -> why not for
        those the archive holds that were left as the model has them.
    Raises:
        RlarchiveError: EXTENSION_INVALID for a generator state that breaks
            the extension's rules, VALUE_UNSUPPORTED (naming the item) for a
            value that does not fit the model or that its generator refuses.
    """
    restored, not_restored = _items(state, keep_last_obs)
    attributes = _prepared_run(model, state, keep_last_obs)
    plan = generators.prepare(model, state["random"], keep_last_obs)
    for name, value in attributes.items():
        setattr(model, name, value)
    if hasattr(model, "weights") and hasattr(model, "n_params"):  # ARS keeps its policy's parameters as one vector too
        import torch

        model.weights = torch.nn.utils.parameters_to_vector(model.policy.parameters()).detach()
    generators.install(model, plan)
    restored.extend(plan.restored)
    not_restored.update(plan.not_restored)
    return restored, not_restored


def _items(state: Mapping[str, Any], keep_last_obs: bool) -> tuple[list[str], dict[str, str]]:
    """The items of the run (not its generators) that :func:`restore` restores, and those it leaves, with why."""
    restored: list[str] = ["run_state"]
    not_restored: dict[str, str] = {}
    for item in ("last_obs", "lstm_states"):
        if state[item] is not None:
            if keep_last_obs:
                restored.append(item)
            else:
                not_restored[item] = (
                    "force_reset (or no env): the next learn starts from a reset of the environment, as with SB3's load"
                )
    if state["action_noise"] is not None:
        restored.append("action_noise")
    return restored, not_restored


def _misfit(msg: str) -> RlarchiveError:
    return RlarchiveError("VALUE_UNSUPPORTED", f"the archive's run state does not fit the model: {msg}")


def _number(v: Any, what: str) -> float:
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        raise _misfit(f"{what} is not a number binary64 holds") from None


def _prepared_run(model: Any, state: Mapping[str, Any], keep_last_obs: bool) -> dict[str, Any]:
    """Model attribute -> value for the counters, observations, episode windows, action noise and LSTM states, each checked against the model."""
    c = state["counters"]
    out: dict[str, Any] = {
        "num_timesteps": int(c["num_timesteps"]),
        "_total_timesteps": int(c["total_timesteps"]),
        "_num_timesteps_at_start": int(c["num_timesteps_at_start"]),
        "_n_updates": int(c["n_updates"]),
        "_episode_num": int(c["episode_num"]),
        "_current_progress_remaining": _number(state["progress_remaining"], "progress_remaining"),
    }
    if c["n_calls"] is not None:
        out["_n_calls"] = int(c["n_calls"])
    if state["exploration_rate"] is not None:
        out["exploration_rate"] = _number(state["exploration_rate"], "exploration_rate")
    if keep_last_obs:
        n_envs = _check_observations(model, state)
        out["_last_obs"] = state["last_obs"]
        out["_last_original_obs"] = state["last_original_obs"]
        starts = state["last_episode_starts"]
        out["_last_episode_starts"] = None if starts is None else np.array(starts, dtype=bool)
        if state["lstm_states"] is not None:
            out["_last_lstm_states"] = _lstm_states(model, state["lstm_states"], n_envs)
    for key, attr in (("episode_info", "ep_info_buffer"), ("episode_success", "ep_success_buffer")):
        size = getattr(model, "_stats_window_size", None)
        maxlen = state[key]["maxlen"]
        if maxlen is not None and size is not None and int(maxlen) != int(size):
            raise _misfit(f"{key} keeps the last {int(maxlen)} episodes, the model's stats_window_size is {int(size)}")
        out[attr] = _make_deque(state[key])
    if state["action_noise"] is not None:
        _check_noise(model, state["action_noise"])
        try:
            out["action_noise"] = _make_noise(state["action_noise"])
        except (TypeError, ValueError, OverflowError) as e:
            raise _misfit(f"its action noise cannot be rebuilt: {type(e).__name__}: {str(e)[:200]}") from None
    return out


def _check_observations(model: Any, state: Mapping[str, Any]) -> int:
    """The model's number of environments, once the observations and episode starts fit it and its observation space."""
    n_envs = int(model.n_envs)
    starts = state["last_episode_starts"]
    if starts is not None and np.shape(starts) != (n_envs,):
        raise _misfit(f"last_episode_starts has shape {list(np.shape(starts))}, the model has {n_envs} environment(s)")
    space = model.observation_space
    for key in ("last_obs", "last_original_obs"):
        obs = state[key]
        if obs is None:
            continue
        items = list(obs.items()) if isinstance(obs, Mapping) else [(None, obs)]
        for k, a in items:
            sub = space if k is None else getattr(space, "spaces", {}).get(k)
            if sub is None:
                raise _misfit(f"{key} has the key {k!r}, which the observation space does not")
            shape = getattr(sub, "shape", None)
            want = None if shape is None else (n_envs, *shape)
            if want is not None and np.shape(a) != want:
                where = key if k is None else f"{key}[{k!r}]"
                raise _misfit(
                    f"{where} has shape {list(np.shape(a))}, the model's {n_envs} environment(s) and observation space need {list(want)}"
                )
    return n_envs


def _lstm_states(model: Any, lstm: Mapping[str, Any], n_envs: int) -> Any:
    """The recurrent states as the policy keeps them, once their shape is the policy's for ``n_envs`` environments."""
    import torch

    shape = getattr(getattr(model, "policy", None), "lstm_hidden_state_shape", None)
    if shape is None:
        raise _misfit("it holds recurrent states and the model's policy has none")
    want = (int(shape[0]), n_envs, int(shape[-1]))
    for k in ("pi", "vf"):
        for i, a in enumerate(lstm[k]):
            if np.shape(a) != want:
                raise _misfit(f"lstm_states/{k}/{i} has shape {list(np.shape(a))}, the policy's is {list(want)}")
    from sb3_contrib.common.recurrent.type_aliases import RNNStates

    def t(a: Any) -> Any:
        return torch.as_tensor(np.array(a)).to(model.device)

    return RNNStates(pi=tuple(t(a) for a in lstm["pi"]), vf=tuple(t(a) for a in lstm["vf"]))


def _check_noise(model: Any, v: Mapping[str, Any]) -> None:
    """An action noise of the action space's shape (one it broadcasts to), and for a vectorized one a process per environment."""
    shape = tuple(getattr(model.action_space, "shape", None) or ())
    noises = [v]
    if v["kind"] == "vectorized":
        if len(v["noises"]) != int(model.n_envs):
            raise _misfit(
                f"its action noise has {len(v['noises'])} processes, the model {int(model.n_envs)} environment(s)"
            )
        noises = [v["base"], *v["noises"]]
    for x in noises:
        mean = np.shape(x["mean"])
        try:
            fits = np.broadcast_shapes(mean, shape) == shape
        except ValueError:
            fits = False
        if not fits:
            raise _misfit(f"its action noise has shape {list(mean)}, the action space {list(shape)}")


def pending_seeds(env: Any) -> tuple[Any, list[Any]] | None:
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


def put_pending_seeds(saved: tuple[Any, list[Any]] | None) -> None:
    """Undo what building a model did to its environment's pending reset seeds (see :func:`pending_seeds`)."""
    if saved is not None:
        env, seeds = saved
        env._seeds = seeds
