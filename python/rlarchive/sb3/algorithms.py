"""The Stable-Baselines3 and sb3-contrib algorithms, as data, and telling them apart from a model's data.

An SB3 ``.zip`` does not record which algorithm wrote it. :func:`identify`
tells it from the decoded ``data`` (neutral values, as
:func:`rlarchive.sb3.import_archive` produces them): first the
recorded ``policy_class`` (a :class:`~rlarchive.values.ClassRef`), which names
a policy class that belongs to one algorithm family, then the data keys each
algorithm's constructor always sets (and those it never sets), checked against
the sources of stable-baselines3 and sb3-contrib 2.0 to 2.9:

- A2C, PPO and TRPO share SB3's actor-critic policies: PPO holds ``n_epochs``
  and ``clip_range``, TRPO ``cg_max_steps``, ``cg_damping``,
  ``line_search_*``, ``n_critic_updates`` and ``sub_sampling_factor``, A2C
  none of these (and no ``batch_size``);
- DDPG is TD3 with ``policy_delay=1``, ``target_noise_clip=0.0`` and
  ``target_policy_noise=0.1``, values DDPG's constructor always passes (a TD3
  model trained with exactly these values computes what DDPG computes and is
  reported as DDPG);
- CrossQ has ``policy_delay`` and no target network (no
  ``target_update_interval``), SAC the opposite, TQC adds
  ``top_quantiles_to_drop_per_net``; QR-DQN adds ``n_quantiles`` to DQN's keys;
  ARS holds ``n_delta`` and ``n_top``;
- MaskablePPO and RecurrentPPO hold PPO's keys and are told by their policy
  classes (or MaskablePPO by its rollout buffer class).

Hindsight Experience Replay is not an algorithm of its own since SB3 1.1: an
off-policy algorithm records ``replay_buffer_class`` = ``HerReplayBuffer``
(:func:`uses_her`), and :func:`identify` names that algorithm.

A policy class not in the table (a user's subclass, or one kept opaque) makes
:func:`identify` rely on the keys alone; it returns None whenever more than one
algorithm (or none) fits. :func:`algorithm_class` imports an algorithm class
only by its exact (module, class) through
:meth:`rlarchive.values.ClassRef.resolve`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import RlarchiveError
from ..values import ClassRef

__all__ = ["Algorithm", "ALGORITHMS", "HER_REPLAY_BUFFER", "identify", "algorithm_class", "uses_her"]

_SB3 = "stable_baselines3"
_CONTRIB = "sb3_contrib"
_AC = "stable_baselines3.common.policies."
_ACTOR_CRITIC = (_AC + "ActorCriticPolicy", _AC + "ActorCriticCnnPolicy", _AC + "MultiInputActorCriticPolicy")
_PPO_KEYS = frozenset({"n_steps", "batch_size", "n_epochs", "clip_range"})
_TRPO_KEYS = frozenset(
    {
        "cg_max_steps",
        "cg_damping",
        "line_search_shrinking_factor",
        "line_search_max_iter",
        "n_critic_updates",
        "sub_sampling_factor",
    }
)
_DQN_KEYS = frozenset(
    {"exploration_initial_eps", "exploration_final_eps", "exploration_fraction", "target_update_interval"}
)
_ENTROPY_KEYS = frozenset({"ent_coef", "target_entropy"})
_TD3_KEYS = frozenset({"policy_delay", "target_policy_noise", "target_noise_clip"})

#: The replay buffer class that marks a model trained with Hindsight Experience Replay.
HER_REPLAY_BUFFER = ClassRef("stable_baselines3.her.her_replay_buffer", "HerReplayBuffer")


def _policies(module: str, *names: str) -> tuple[str, ...]:
    return tuple(f"{module}.{n}" for n in names)


@dataclass(frozen=True)
class Algorithm:
    """One algorithm of stable-baselines3 or sb3-contrib.

    Attributes:
        name: the class name, e.g. ``"PPO"``.
        package: ``"stable_baselines3"`` or ``"sb3_contrib"``.
        module: the module that defines the class.
        class_name: the class's qualified name in that module.
        policies: dotted names of the policy classes its models record as
            ``policy_class`` (the classes behind its policy aliases).
        keys: data keys every model of it holds.
        absent: data keys no model of it holds.
        fixed: ``(key, value)`` pairs: data values its constructor always sets.
        buffers: dotted names of the buffer classes it records by default
            (``rollout_buffer_class`` or ``replay_buffer_class``), used only to
            tell apart algorithms that share keys when the policy class is unknown.
    """

    name: str
    package: str
    module: str
    class_name: str
    policies: tuple[str, ...]
    keys: frozenset[str]
    absent: frozenset[str] = frozenset()
    fixed: tuple[tuple[str, Any], ...] = ()
    buffers: tuple[str, ...] = ()

    @property
    def ref(self) -> ClassRef:
        """The algorithm class as a class reference."""
        return ClassRef(self.module, self.class_name)

    def fits(self, data: Mapping[str, Any]) -> bool:
        """Whether ``data`` holds every key of :attr:`keys`, none of :attr:`absent`, and the :attr:`fixed` values."""
        if not self.keys.issubset(data.keys()) or not self.absent.isdisjoint(data.keys()):
            return False
        return all(_same_number(data.get(k), v) for k, v in self.fixed)


def _same_number(value: Any, expected: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == expected


_ALGORITHM_LIST = (
    Algorithm(
        "A2C",
        _SB3,
        "stable_baselines3.a2c.a2c",
        "A2C",
        _ACTOR_CRITIC,
        keys=frozenset({"n_steps", "gae_lambda", "vf_coef"}),
        absent=frozenset({"n_epochs", "clip_range", "batch_size"}) | _TRPO_KEYS,
        buffers=_policies("stable_baselines3.common.buffers", "RolloutBuffer", "DictRolloutBuffer"),
    ),
    Algorithm(
        "PPO",
        _SB3,
        "stable_baselines3.ppo.ppo",
        "PPO",
        _ACTOR_CRITIC,
        keys=_PPO_KEYS,
        absent=_TRPO_KEYS,
        buffers=_policies("stable_baselines3.common.buffers", "RolloutBuffer", "DictRolloutBuffer"),
    ),
    Algorithm(
        "DQN",
        _SB3,
        "stable_baselines3.dqn.dqn",
        "DQN",
        _policies("stable_baselines3.dqn.policies", "DQNPolicy", "CnnPolicy", "MultiInputPolicy"),
        keys=_DQN_KEYS,
        absent=frozenset({"n_quantiles"}) | _ENTROPY_KEYS | _TD3_KEYS,
    ),
    Algorithm(
        "SAC",
        _SB3,
        "stable_baselines3.sac.sac",
        "SAC",
        _policies("stable_baselines3.sac.policies", "SACPolicy", "CnnPolicy", "MultiInputPolicy"),
        keys=_ENTROPY_KEYS | {"target_update_interval"},
        absent=frozenset({"top_quantiles_to_drop_per_net", "policy_delay", "exploration_fraction"}),
    ),
    Algorithm(
        "TD3",
        _SB3,
        "stable_baselines3.td3.td3",
        "TD3",
        _policies("stable_baselines3.td3.policies", "TD3Policy", "CnnPolicy", "MultiInputPolicy"),
        keys=_TD3_KEYS,
        absent=_ENTROPY_KEYS,
    ),
    Algorithm(
        "DDPG",
        _SB3,
        "stable_baselines3.ddpg.ddpg",
        "DDPG",
        _policies("stable_baselines3.td3.policies", "TD3Policy", "CnnPolicy", "MultiInputPolicy"),
        keys=_TD3_KEYS,
        absent=_ENTROPY_KEYS,
        fixed=(("policy_delay", 1), ("target_noise_clip", 0.0), ("target_policy_noise", 0.1)),
    ),
    Algorithm(
        "ARS",
        _CONTRIB,
        "sb3_contrib.ars.ars",
        "ARS",
        _policies("sb3_contrib.ars.policies", "ARSPolicy", "ARSLinearPolicy"),
        keys=frozenset({"n_delta", "n_top", "pop_size"}),
    ),
    Algorithm(
        "CrossQ",
        _CONTRIB,
        "sb3_contrib.crossq.crossq",
        "CrossQ",
        _policies("sb3_contrib.crossq.policies", "CrossQPolicy"),
        keys=_ENTROPY_KEYS | {"policy_delay"},
        absent=frozenset({"target_update_interval", "target_policy_noise", "top_quantiles_to_drop_per_net"}),
    ),
    Algorithm(
        "MaskablePPO",
        _CONTRIB,
        "sb3_contrib.ppo_mask.ppo_mask",
        "MaskablePPO",
        _policies(
            "sb3_contrib.common.maskable.policies",
            "MaskableActorCriticPolicy",
            "MaskableActorCriticCnnPolicy",
            "MaskableMultiInputActorCriticPolicy",
        ),
        keys=_PPO_KEYS,
        absent=_TRPO_KEYS,
        buffers=_policies("sb3_contrib.common.maskable.buffers", "MaskableRolloutBuffer", "MaskableDictRolloutBuffer"),
    ),
    Algorithm(
        "QRDQN",
        _CONTRIB,
        "sb3_contrib.qrdqn.qrdqn",
        "QRDQN",
        _policies("sb3_contrib.qrdqn.policies", "QRDQNPolicy", "CnnPolicy", "MultiInputPolicy"),
        keys=_DQN_KEYS | {"n_quantiles"},
        absent=_ENTROPY_KEYS | _TD3_KEYS,
    ),
    Algorithm(
        "RecurrentPPO",
        _CONTRIB,
        "sb3_contrib.ppo_recurrent.ppo_recurrent",
        "RecurrentPPO",
        _policies(
            "sb3_contrib.common.recurrent.policies",
            "RecurrentActorCriticPolicy",
            "RecurrentActorCriticCnnPolicy",
            "RecurrentMultiInputActorCriticPolicy",
        ),
        keys=_PPO_KEYS,
        absent=_TRPO_KEYS,
    ),
    Algorithm(
        "TQC",
        _CONTRIB,
        "sb3_contrib.tqc.tqc",
        "TQC",
        _policies("sb3_contrib.tqc.policies", "TQCPolicy", "CnnPolicy", "MultiInputPolicy"),
        keys=_ENTROPY_KEYS | {"target_update_interval", "top_quantiles_to_drop_per_net"},
        absent=frozenset({"policy_delay"}),
    ),
    Algorithm(
        "TRPO",
        _CONTRIB,
        "sb3_contrib.trpo.trpo",
        "TRPO",
        _ACTOR_CRITIC,
        keys=_TRPO_KEYS | {"n_steps", "batch_size"},
        absent=frozenset({"n_epochs", "clip_range"}),
        buffers=_policies("stable_baselines3.common.buffers", "RolloutBuffer", "DictRolloutBuffer"),
    ),
)

#: Every algorithm of stable-baselines3 and sb3-contrib, by name.
ALGORITHMS: Mapping[str, Algorithm] = {a.name: a for a in _ALGORITHM_LIST}


def _buffer_name(data: Mapping[str, Any]) -> str | None:
    for key in ("rollout_buffer_class", "replay_buffer_class"):
        ref = data.get(key)
        if isinstance(ref, ClassRef):
            return ref.name
    return None


def identify(data: Mapping[str, Any]) -> str | None:
    """The name of the algorithm that saved an SB3 model, told from its decoded data, or None.

    Args:
        data: the decoded ``data`` member: plain values, with ``policy_class``
            (and buffer classes) as :class:`~rlarchive.values.ClassRef`.
    Returns:
        A key of :data:`ALGORITHMS`, or None when the data fit no algorithm or
        more than one.
    """
    if not isinstance(data, Mapping):
        return None
    pc = data.get("policy_class")
    by_policy = [a for a in _ALGORITHM_LIST if isinstance(pc, ClassRef) and pc.name in a.policies]
    fitting = [a for a in (by_policy or _ALGORITHM_LIST) if a.fits(data)]
    if len(fitting) > 1:
        # the algorithms whose fixed values matched are more specific (DDPG over TD3)
        specific = [a for a in fitting if a.fixed]
        fitting = specific or fitting
    if len(fitting) > 1:
        buffer = _buffer_name(data)
        by_buffer = [a for a in fitting if buffer is not None and buffer in a.buffers]
        fitting = by_buffer or fitting
    return fitting[0].name if len(fitting) == 1 else None


def uses_her(data: Mapping[str, Any]) -> bool:
    """Whether the model was trained with Hindsight Experience Replay (``replay_buffer_class`` is HerReplayBuffer)."""
    return isinstance(data, Mapping) and data.get("replay_buffer_class") == HER_REPLAY_BUFFER


def algorithm_class(name: str) -> type:
    """Import the algorithm class named ``name`` (a key of :data:`ALGORITHMS`) by its exact module and class.

    Raises:
        RlarchiveError: IMPORT_NOT_ALLOWED when ``name`` is not in the table, or
            when its package is not installed or does not define the class there.
    """
    algo = ALGORITHMS.get(name) if isinstance(name, str) else None
    if algo is None:
        raise RlarchiveError("IMPORT_NOT_ALLOWED", f"unknown algorithm {name!r}; known: {', '.join(ALGORITHMS)}")
    cls: type = algo.ref.resolve((algo.ref.name,))
    return cls
