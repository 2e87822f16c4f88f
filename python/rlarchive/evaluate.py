"""Evaluating an archive's portable policy in a gymnasium environment (``rlarchive evaluate``).

Only NumPy and gymnasium are used: no torch, no Stable-Baselines3. The policy
acts deterministically, on observations passed through the wrappers the
archive records (spec/metadata.md §2: frame stacking, image transposition;
the VecNormalize statistics are applied by the policy itself), exactly as
Stable-Baselines3's ``evaluate_policy`` runs a model in a ``DummyVecEnv`` of
one environment. Episode ``i`` is reset with the seed ``seed + i`` (or
unseeded), so every episode can be reproduced on its own.

The environment id comes from the caller: gymnasium resolves ids through
imports (``module:Env``), so the ``env_id`` an archive records is a hint, which
the command line uses only when :mod:`rlarchive.env_ids` finds it registered in
the installed gymnasium. :mod:`rlarchive.video` records an episode with the
same machinery.
"""

from __future__ import annotations

import datetime
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import metadata as keys
from .errors import RlarchiveError
from .extensions.policy.observations import dict_keys, is_image, kind, subspace
from .version import NAME, VERSION

__all__ = ["Evaluation", "evaluate", "record", "EVALUATOR_NAME"]

EVALUATOR_NAME = NAME
#: The largest episode seed: a JSON integer every reader keeps exactly (2^53 - 1).
_MAX_SEED = (1 << 53) - 1


@dataclass
class Evaluation:
    """The result of :func:`evaluate`; :meth:`to_record` is the structure of spec/metadata.md §3."""

    env_id: str
    seeds: list[Any] | None
    returns: list[Any]
    lengths: list[Any]
    date: str
    notes: list[Any] = field(default_factory=list)

    @property
    def episodes(self) -> int:
        return len(self.returns)

    @property
    def mean(self) -> float:
        return float(np.mean(self.returns))

    @property
    def std(self) -> float:
        return float(np.std(self.returns))

    def to_record(self) -> dict[str, Any]:
        """The evaluation object of spec/metadata.md §3."""
        return {
            "env_id": self.env_id,
            "episodes": self.episodes,
            "seeds": self.seeds,
            "deterministic": True,
            "mean": self.mean,
            "std": self.std,
            "returns": [float(r) for r in self.returns],
            "lengths": [int(n) for n in self.lengths],
            "evaluator": {"name": EVALUATOR_NAME, "version": VERSION},
            "date": self.date,
        }


def _now() -> str:
    """UTC now, or the time ``SOURCE_DATE_EPOCH`` gives (reproducible builds)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    t = (
        datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc)
        if epoch.isdigit()
        else datetime.datetime.now(datetime.timezone.utc)
    )
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


# -- spaces as signatures: what must agree between the environment and the policy


def _channels_first(space: Any) -> bool:
    shape = tuple(space.shape)
    return int(np.argmin(shape)) == 0


def _signature(space: Any) -> Any:
    k = kind(space)
    if k == "box":
        return ("box", tuple(int(d) for d in space.shape))
    if k == "discrete":
        return ("discrete", int(space.n))
    if k == "multi_discrete":
        return ("multi_discrete", tuple(int(n) for n in np.asarray(space.nvec).ravel()))
    if k == "multi_binary":
        n = space.n
        return ("multi_binary", tuple(int(d) for d in n) if isinstance(n, (tuple, list)) else (int(n),))
    if k == "dict":
        return ("dict", tuple((key, _signature(subspace(space, key))) for key in dict_keys(space)))
    return (k or type(space).__name__,)


class _Stage:
    """One observation transformation: its effect on a space signature, and on observations."""

    def sig(self, s: Any) -> Any:
        raise NotImplementedError

    def reset(self, obs: Any) -> Any:
        return self.step(obs)

    def step(self, obs: Any) -> Any:
        raise NotImplementedError


class _Transpose(_Stage):
    """VecTransposeImage: height × width × channels to channels × height × width, for the image boxes ``keys`` names."""

    def __init__(self, keys_: set[Any] | None) -> None:
        self.keys = keys_  # None: the observation is one image box

    def sig(self, s: Any) -> Any:
        if self.keys is None:
            h, w, c = s[1]
            return ("box", (c, h, w))
        return ("dict", tuple((k, self.sig(v) if k in self.keys else v) for k, v in s[1]))

    def step(self, obs: Any) -> Any:
        if self.keys is None:
            return np.transpose(np.asarray(obs), (2, 0, 1))
        return {k: (np.transpose(np.asarray(v), (2, 0, 1)) if k in self.keys else v) for k, v in obs.items()}


class _FrameStack(_Stage):
    """VecFrameStack: the last ``n`` observations along the first or last axis, oldest first, zeros at an episode's start."""

    def __init__(self, n: int, order: Any) -> None:
        self.n, self.order = n, order
        self.stack: Any = None

    def _first(self, key: str | None) -> bool:
        o = self.order if key is None or not isinstance(self.order, dict) else self.order.get(key, "last")
        return bool(o == "first")

    def _sig1(self, s: Any, key: str | None) -> Any:
        if s[0] != "box" or not s[1]:
            raise RlarchiveError(
                "ENV_MISMATCH", "frame stacking is recorded, but the observation is not a box of rank 1 or more"
            )
        shape = list(s[1])
        axis = 0 if self._first(key) else -1
        shape[axis] *= self.n
        return ("box", tuple(shape))

    def sig(self, s: Any) -> Any:
        if s[0] == "dict":
            return ("dict", tuple((k, self._sig1(v, k)) for k, v in s[1]))
        return self._sig1(s, None)

    def _new(self, obs: np.ndarray, key: str | None) -> np.ndarray:
        axis = 0 if self._first(key) else obs.ndim - 1
        shape = list(obs.shape)
        shape[axis] *= self.n
        out = np.zeros(shape, dtype=obs.dtype)
        return self._put(out, obs, key)

    def _put(self, stack: np.ndarray, obs: np.ndarray, key: str | None) -> np.ndarray:
        axis = 0 if self._first(key) else obs.ndim - 1
        width = obs.shape[axis]
        stack = np.roll(stack, -width, axis=axis)
        index = [slice(None)] * obs.ndim
        index[axis] = slice(stack.shape[axis] - width, None)
        stack[tuple(index)] = obs
        return stack

    def reset(self, obs: Any) -> Any:
        if isinstance(obs, dict):
            self.stack = {k: self._new(np.asarray(v), k) for k, v in obs.items()}
            return {k: v.copy() for k, v in self.stack.items()}
        self.stack = self._new(np.asarray(obs), None)
        return self.stack.copy()

    def step(self, obs: Any) -> Any:
        if isinstance(obs, dict):
            self.stack = {k: self._put(self.stack[k], np.asarray(v), k) for k, v in obs.items()}
            return {k: v.copy() for k, v in self.stack.items()}
        self.stack = self._put(self.stack, np.asarray(obs), None)
        return self.stack.copy()


def _transpose_for(space: Any) -> _Transpose | None:
    """The transposition SB3 applies to ``space`` (image boxes not channels-first), or None."""
    if kind(space) == "dict":
        names = {
            k for k in dict_keys(space) if is_image(subspace(space, k)) and not _channels_first(subspace(space, k))
        }
        return _Transpose(names) if names else None
    if is_image(space) and not _channels_first(space):
        return _Transpose(None)
    return None


def _stages(env_space: Any, policy_space: Any, wrappers: list[Any], notes: list[Any]) -> list[Any]:
    """The observation stages from the recorded wrappers (or SB3's automatic image transposition)."""
    stages: list[Any] = []
    sig = _signature(env_space)
    transposed = False
    for w in wrappers:
        name = w["name"]
        if name == "VecFrameStack":
            stage: _Stage = _FrameStack(int(w["n_stack"]), w["channels_order"])
        elif name == "VecTransposeImage":
            t = _transpose_for(env_space)
            if t is None:
                continue
            stage, transposed = t, True
        elif name == "VecNormalize":
            continue  # applied by the policy, from RLA_vec_normalize
        else:
            notes.append(f"recorded wrapper {name!r} is not one this evaluator applies; evaluated without it")
            continue
        sig = stage.sig(sig)
        stages.append(stage)
    want = _signature(policy_space)
    if (
        sig != want and not transposed
    ):  # SB3 transposes channels-last images itself (VecTransposeImage), recorded or not
        t = _transpose_for(env_space)
        if t is not None and t.sig(sig) == want:
            stages.append(t)  # outermost, where SB3 puts it
            sig = want
            notes.append("images transposed to channels first, as Stable-Baselines3 does")
    if sig != want:
        raise RlarchiveError(
            "ENV_MISMATCH",
            f"the environment's observations {_shown(sig)} (after the recorded wrappers) do not fit the policy's {_shown(want)}",
        )
    return stages


def _shown(sig: Any) -> str:
    if sig[0] == "dict":
        return "Dict(" + ", ".join(f"{k}: {_shown(v)}" for k, v in sig[1]) + ")"
    return f"{sig[0]}{list(sig[1]) if len(sig) > 1 and isinstance(sig[1], tuple) else (sig[1] if len(sig) > 1 else '')}"


def make_env(env_id: str, **kwargs: Any) -> Any:
    import gymnasium

    try:
        return gymnasium.make(env_id, **kwargs)
    except gymnasium.error.Error as e:
        raise RlarchiveError("ENV_NOT_FOUND", f"gymnasium cannot make the environment {env_id!r}: {e}") from None
    except (ModuleNotFoundError, ImportError, AttributeError, TypeError, ValueError) as e:
        raise RlarchiveError(
            "ENV_NOT_FOUND", f"gymnasium cannot make the environment {env_id!r}: {type(e).__name__}: {e}"
        ) from None


def evaluate(
    path: str | os.PathLike[str],
    env_id: str,
    episodes: int,
    seed: int | None = None,
    *,
    max_episode_steps: int | None = None,
) -> Evaluation:
    """Run the archive's portable policy for ``episodes`` episodes of gymnasium environment ``env_id``.

    Args:
        path: the archive (it must hold a portable policy, extension ``RLA_policy``).
        env_id: the gymnasium id, from the caller (never from the archive).
        episodes: how many episodes, at least 1.
        seed: episode ``i`` is reset with ``seed + i`` (0 to 2^53 - 1); None leaves the environment unseeded.
        max_episode_steps: end an episode after this many steps (as a time limit would), or None.
    Returns:
        The :class:`Evaluation`: per-episode returns (the environment's own
        rewards, summed) and lengths.
    Raises:
        RlarchiveError: INPUT_INVALID (no portable policy, a bad episode count or seed),
            METADATA_INVALID (the recorded wrappers are malformed),
            ENV_NOT_FOUND (gymnasium cannot make ``env_id``), ENV_MISMATCH
            (its spaces do not fit the policy, or it returns observations
            that do not), or the archive's own error.
    """
    if not 1 <= episodes <= keys.MAX_EPISODES:
        raise RlarchiveError("INPUT_INVALID", f"episodes must be from 1 to {keys.MAX_EPISODES}, not {episodes}")
    if seed is not None and not 0 <= seed <= _MAX_SEED - (episodes - 1):
        raise RlarchiveError(
            "INPUT_INVALID",
            f"the seed must be from 0 to {_MAX_SEED - (episodes - 1)} (each episode's seed is recorded as a JSON integer), not {seed}",
        )
    policy, wrappers = policy_of(path)
    env = make_env(env_id)
    notes: list[Any] = []
    try:
        stages = fit_policy(env, env_id, policy, wrappers, notes)
        returns, lengths = [], []
        for i in range(episodes):
            total, steps = run_episode(
                env, env_id, policy, stages, None if seed is None else seed + i, max_episode_steps
            )
            returns.append(total)
            lengths.append(steps)
    finally:
        env.close()
    return Evaluation(
        env_id, None if seed is None else [seed + i for i in range(episodes)], returns, lengths, _now(), notes
    )


def policy_of(path: str | os.PathLike[str]) -> tuple[Any, list[Any]]:
    """The archive's portable policy and its recorded wrappers.

    Raises:
        RlarchiveError: INPUT_INVALID without a portable policy, METADATA_INVALID for malformed wrappers.
    """
    from .reader import Archive

    with Archive(path, spaces="neutral") as ar:
        policy = ar.policy()
        wrappers = keys.parsed(ar.metadata, keys.WRAPPERS) or []
    if policy is None:
        raise RlarchiveError(
            "INPUT_INVALID",
            f"{os.fspath(path)} has no portable policy (extension RLA_policy); import it again with SB3 installed",
        )
    return policy, wrappers


def fit_policy(env: Any, env_id: str, policy: Any, wrappers: list[Any], notes: list[Any]) -> list[Any]:
    """The observation stages between ``env`` and ``policy``, once their spaces are found to fit (else ENV_MISMATCH)."""
    from . import spaces as neutral

    try:
        env_obs, env_act = neutral.from_gymnasium(env.observation_space), neutral.from_gymnasium(env.action_space)
    except TypeError as e:
        raise RlarchiveError("ENV_MISMATCH", f"environment {env_id!r}: {e}") from None
    if _signature(env_act) != _signature(policy.action_space):
        raise RlarchiveError(
            "ENV_MISMATCH",
            f"the environment's actions {_shown(_signature(env_act))} do not fit the policy's {_shown(_signature(policy.action_space))}",
        )
    return _stages(env_obs, policy.observation_space, wrappers, notes)


def run_episode(
    env: Any, env_id: str, policy: Any, stages: list[Any], seed: int | None, max_steps: int | None
) -> tuple[float, int]:
    """One episode of ``policy`` in ``env`` (reset with ``seed``): its return and its length."""
    obs, _ = env.reset(seed=seed)
    for s in stages:
        obs = s.reset(obs)
    state, start, total, steps = None, True, 0.0, 0
    while True:
        try:
            action, state = policy.predict(obs, state=state, episode_start=np.array([start]))
        except (ValueError, TypeError, IndexError, KeyError) as e:
            raise RlarchiveError(
                "ENV_MISMATCH", f"environment {env_id!r} gave an observation the policy cannot take: {e}"
            ) from None
        start = False
        obs, reward, terminated, truncated, _ = env.step(action)
        total += float(reward)
        steps += 1
        if terminated or truncated or (max_steps is not None and steps >= max_steps):
            return total, steps
        for s in stages:
            obs = s.step(obs)


def record(path: str | os.PathLike[str], evaluation: Evaluation) -> dict[str, Any]:
    """Append ``evaluation`` to the archive's ``evaluations`` metadata (spec/metadata.md §3), rewriting it atomically.

    Raises:
        RlarchiveError: INPUT_INVALID for a non-finite return (JSON cannot hold
            it), METADATA_INVALID when the recorded evaluations are malformed,
            and what :func:`rlarchive.edit.rewrite` raises.
    """
    from . import jsonstrict
    from .edit import rewrite

    rec = evaluation.to_record()
    if not all(math.isfinite(x) for x in [rec["mean"], rec["std"], *rec["returns"]]):
        raise RlarchiveError("INPUT_INVALID", "a return is not finite: the evaluation cannot be recorded")

    def change(current: dict[str, Any]) -> dict[str, Any]:
        previous = keys.parsed(current, keys.EVALUATIONS) or []
        if len(previous) >= keys.MAX_EVALUATIONS:
            raise RlarchiveError("INPUT_INVALID", f"the archive already records {keys.MAX_EVALUATIONS} evaluations")
        return {**current, keys.EVALUATIONS: jsonstrict.dumps([*previous, rec]).decode("utf-8")}

    return rewrite(path, change)


def to_json(evaluation: Evaluation) -> str:
    """The evaluation as the JSON ``rlarchive evaluate --json`` prints (the record plus notes)."""
    return json.dumps({**evaluation.to_record(), "notes": evaluation.notes}, indent=2)
