"""The data keys of an SB3 model and what :func:`rlarchive.sb3.load` does with each (Annex B.8).

:data:`LOAD_KEYS` is the table of rules (pass as data, rebuild as a space, a
policy or buffer class, keyword arguments, the caller's value, or drop) and
:func:`load_items` applies it; :data:`ALLOWED_CLASSES` names the classes the
export and the load may import; the ``META_*`` constants are the metadata
keys the bridge writes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Protocol

from ..errors import RlarchiveError
from ..values import ClassRef, Opaque
from .model_zip import unsupported

__all__ = [
    "ALLOWED_CLASSES",
    "LOAD_KEYS",
    "ARCHITECTURE_KEYS",
    "META_VERSION",
    "META_SYSTEM_INFO",
    "META_ALGORITHM",
    "META_ALGORITHM_CLASS",
    "META_TORCH_VALUES",
    "META_SOURCE",
    "LoadWarning",
    "Rebuilds",
    "load_items",
    "shadowed",
    "derived",
    "DERIVED_KEYS",
    "optimizer_left_out",
    "check_load_names",
]


#: Class references that :func:`~rlarchive.sb3.export_archive` and :func:`~rlarchive.sb3.load` may import,
#: by exact (module, class) name: the standard policy, network, extractor and
#: buffer classes of stable-baselines3 and sb3-contrib, torch's activation
#: modules and optimizers. An entry ``"module.*"`` allows any class defined
#: directly in exactly that module (never a submodule's, never a function).
#: Resolution follows :meth:`rlarchive.values.ClassRef.resolve`.
ALLOWED_CLASSES: tuple[str, ...] = (
    # stable-baselines3: policies, networks and feature extractors
    "stable_baselines3.common.policies.ActorCriticPolicy",
    "stable_baselines3.common.policies.ActorCriticCnnPolicy",
    "stable_baselines3.common.policies.MultiInputActorCriticPolicy",
    "stable_baselines3.common.policies.ContinuousCritic",
    "stable_baselines3.common.torch_layers.FlattenExtractor",
    "stable_baselines3.common.torch_layers.NatureCNN",
    "stable_baselines3.common.torch_layers.CombinedExtractor",
    "stable_baselines3.common.torch_layers.MlpExtractor",
    "stable_baselines3.dqn.policies.DQNPolicy",
    "stable_baselines3.dqn.policies.CnnPolicy",
    "stable_baselines3.dqn.policies.MultiInputPolicy",
    "stable_baselines3.dqn.policies.QNetwork",
    "stable_baselines3.sac.policies.SACPolicy",
    "stable_baselines3.sac.policies.CnnPolicy",
    "stable_baselines3.sac.policies.MultiInputPolicy",
    "stable_baselines3.sac.policies.Actor",
    "stable_baselines3.td3.policies.TD3Policy",
    "stable_baselines3.td3.policies.CnnPolicy",
    "stable_baselines3.td3.policies.MultiInputPolicy",
    "stable_baselines3.td3.policies.Actor",
    # stable-baselines3: buffers named by replay_buffer_class / rollout_buffer_class
    "stable_baselines3.common.buffers.ReplayBuffer",
    "stable_baselines3.common.buffers.DictReplayBuffer",
    "stable_baselines3.common.buffers.NStepReplayBuffer",
    "stable_baselines3.common.buffers.RolloutBuffer",
    "stable_baselines3.common.buffers.DictRolloutBuffer",
    "stable_baselines3.her.her_replay_buffer.HerReplayBuffer",
    # sb3-contrib
    "sb3_contrib.ars.policies.ARSPolicy",
    "sb3_contrib.ars.policies.ARSLinearPolicy",
    "sb3_contrib.common.maskable.policies.MaskableActorCriticPolicy",
    "sb3_contrib.common.maskable.policies.MaskableActorCriticCnnPolicy",
    "sb3_contrib.common.maskable.policies.MaskableMultiInputActorCriticPolicy",
    "sb3_contrib.common.maskable.buffers.MaskableRolloutBuffer",
    "sb3_contrib.common.maskable.buffers.MaskableDictRolloutBuffer",
    "sb3_contrib.common.recurrent.policies.RecurrentActorCriticPolicy",
    "sb3_contrib.common.recurrent.policies.RecurrentActorCriticCnnPolicy",
    "sb3_contrib.common.recurrent.policies.RecurrentMultiInputActorCriticPolicy",
    "sb3_contrib.common.recurrent.buffers.RecurrentRolloutBuffer",
    "sb3_contrib.common.recurrent.buffers.RecurrentDictRolloutBuffer",
    "sb3_contrib.crossq.policies.CrossQPolicy",
    "sb3_contrib.crossq.policies.Actor",
    "sb3_contrib.common.torch_layers.BatchRenorm1d",
    "sb3_contrib.qrdqn.policies.QRDQNPolicy",
    "sb3_contrib.qrdqn.policies.CnnPolicy",
    "sb3_contrib.qrdqn.policies.MultiInputPolicy",
    "sb3_contrib.qrdqn.policies.QuantileNetwork",
    "sb3_contrib.tqc.policies.TQCPolicy",
    "sb3_contrib.tqc.policies.CnnPolicy",
    "sb3_contrib.tqc.policies.MultiInputPolicy",
    "sb3_contrib.tqc.policies.Actor",
    # torch: activation modules (policy_kwargs["activation_fn"]) and a few layers
    "torch.nn.modules.activation.*",
    "torch.nn.modules.linear.Identity",
    "torch.nn.modules.flatten.Flatten",
    # optimizers (policy_kwargs["optimizer_class"]; A2C uses RMSprop, RL Zoo's Atari A2C RMSpropTFLike):
    # every torch.optim.Optimizer subclass SB3 ships (sb3-contrib ships none) and torch.optim's own
    "stable_baselines3.common.sb2_compat.rmsprop_tf_like.RMSpropTFLike",
    "torch.optim.Adafactor",  # torch defines Adafactor and Muon under the module name torch.optim
    "torch.optim.Muon",
    "torch.optim.adadelta.Adadelta",
    "torch.optim.adagrad.Adagrad",
    "torch.optim.adam.Adam",
    "torch.optim.adamax.Adamax",
    "torch.optim.adamw.AdamW",
    "torch.optim.asgd.ASGD",
    "torch.optim.lbfgs.LBFGS",
    "torch.optim.nadam.NAdam",
    "torch.optim.radam.RAdam",
    "torch.optim.rmsprop.RMSprop",
    "torch.optim.rprop.Rprop",
    "torch.optim.sgd.SGD",
    "torch.optim.sparse_adam.SparseAdam",
)


_DATA_KEYS = (
    # BaseAlgorithm
    "n_envs",
    "num_timesteps",
    "_total_timesteps",
    "_num_timesteps_at_start",
    "seed",
    "action_noise",
    "start_time",
    "learning_rate",
    "lr_schedule",
    "_last_obs",
    "_last_episode_starts",
    "_last_original_obs",
    "_episode_num",
    "use_sde",
    "sde_sample_freq",
    "_current_progress_remaining",
    "_stats_window_size",
    "ep_info_buffer",
    "ep_success_buffer",
    "_n_updates",
    # on-policy algorithms (A2C, PPO, TRPO, MaskablePPO, RecurrentPPO)
    "n_steps",
    "gamma",
    "gae_lambda",
    "ent_coef",
    "vf_coef",
    "max_grad_norm",
    "batch_size",
    "n_epochs",
    "clip_range",
    "clip_range_vf",
    "normalize_advantage",
    "target_kl",
    "_last_lstm_states",
    "cg_max_steps",
    "cg_damping",
    "line_search_shrinking_factor",
    "line_search_max_iter",
    "n_critic_updates",
    "sub_sampling_factor",
    # off-policy algorithms (DQN, SAC, TD3, DDPG, QRDQN, TQC, CrossQ)
    "buffer_size",
    "learning_starts",
    "tau",
    "train_freq",
    "gradient_steps",
    "optimize_memory_usage",
    "use_sde_at_warmup",
    "target_update_interval",
    "exploration_fraction",
    "exploration_initial_eps",
    "exploration_final_eps",
    "exploration_rate",
    "exploration_schedule",
    "_n_calls",
    "target_entropy",
    "policy_delay",
    "target_policy_noise",
    "target_noise_clip",
    "n_quantiles",
    "top_quantiles_to_drop_per_net",
    "batch_norm_stats",
    "batch_norm_stats_target",
    "actor_batch_norm_stats",
    "actor_batch_norm_stats_target",
    "critic_batch_norm_stats",
    "critic_batch_norm_stats_target",
    # ARS
    "n_delta",
    "n_top",
    "delta_std_schedule",
    "zero_policy",
    "alive_bonus_offset",
    "n_eval_episodes",
    "pop_size",
    "old_count",
    "weights",
    "n_params",
)

#: What :func:`~rlarchive.sb3.load` does with each key of an archive's data before SB3's
#: ``load`` sees it (Annex B.8). SB3's ``load`` makes every data key it is
#: given an attribute of the new model before it builds the networks; so does
#: this load, for every key but those that can reach a path, a network or an
#: import, and those SB3 builds itself:
#:
#: - ``"data"``: passed, rebuilt as for export (numbers, flags, arrays, spaces,
#:   schedules, classes resolved under the allow-list);
#: - ``"space"``: must be a space (rebuilt as a gymnasium space);
#: - ``"policy"``: must be a class reference that resolves to a subclass of
#:   SB3's ``BasePolicy``, or a policy alias of the algorithm (``"MlpPolicy"``);
#: - ``"buffer"``: None, or a class reference that resolves to a subclass of
#:   SB3's ``BaseBuffer``;
#: - ``"kwargs"``: a map of keyword arguments, passed without the entries
#:   named in ``_CALLER_KWARGS`` (``device``, ``env``), its values rebuilt as data;
#: - ``"drop"``: never passed: the model keeps what its constructor sets, and the
#:   caller may give a value as a keyword of :func:`~rlarchive.sb3.load`.
#:
#: A key not listed (a subclass's own attribute) is ``"data"`` too, unless
#: :func:`shadowed` says it would hide a name of the algorithm class.
LOAD_KEYS: Mapping[str, str] = MappingProxyType(
    {
        **{k: "data" for k in _DATA_KEYS},
        "observation_space": "space",
        "action_space": "space",
        "policy_class": "policy",
        "replay_buffer_class": "buffer",
        "rollout_buffer_class": "buffer",
        "policy_kwargs": "kwargs",
        "replay_buffer_kwargs": "kwargs",
        "rollout_buffer_kwargs": "kwargs",
        "verbose": "data",
        # an env id is given to gymnasium.make, which imports the module it names
        "env": "drop",
        "_vec_normalize_env": "drop",
        # a folder that learn() creates and writes to
        "tensorboard_log": "drop",
        "device": "drop",
        # objects SB3 builds itself (it never saves them)
        "policy": "drop",
        "replay_buffer": "drop",
        "rollout_buffer": "drop",
        "_logger": "drop",
        "_custom_logger": "drop",
        "_episode_storage": "drop",
        "processes": "drop",
    }
)
_CALLER_KWARGS = frozenset({"device", "env"})

#: Metadata keys written by :func:`~rlarchive.sb3.import_archive`.
META_VERSION = "sb3.version"
META_SYSTEM_INFO = "sb3.system_info"
META_ALGORITHM = "sb3.algorithm"
META_ALGORITHM_CLASS = "sb3.algorithm_class"
META_TORCH_VALUES = "sb3.torch_values"
META_SOURCE = "source"

#: Data keys that decide the policy's architecture: :func:`~rlarchive.sb3.load` cannot leave them out.
ARCHITECTURE_KEYS = frozenset({"observation_space", "action_space", "policy_class", "policy_kwargs"})


class LoadWarning(UserWarning):
    """:func:`~rlarchive.sb3.load` left out values it could not rebuild without unpickling them (training-only values)."""


class Rebuilds(Protocol):
    """What :func:`load_items` needs of :class:`rlarchive.sb3.values.Rebuilder`."""

    unpickle: bool
    optimizer_left_out: str | None
    not_restored: dict[str, str]

    def top(self, key: str, value: Any) -> Any:
        """The SB3 object for the data key ``key``'s value."""

    def value(self, v: Any, key: str) -> Any:
        """The SB3 object for a value nested under ``key``."""


#: Data keys that SB3's ``_setup_model`` computes again from another key: key -> that key.
DERIVED_KEYS: Mapping[str, str] = MappingProxyType({"lr_schedule": "learning_rate"})


def derived(key: str, left_out: Iterable[str], custom: Mapping[str, Any], data: Mapping[str, Any]) -> bool:
    """Whether leaving out ``key`` changes nothing: SB3 computes it again from a key the model gets
    (:data:`DERIVED_KEYS`: from the caller's ``custom_objects``, or from the archive when not left out)."""
    source = DERIVED_KEYS.get(key)
    return source is not None and (source in custom or (source in data and source not in left_out))


def shadowed(cls: type, key: str) -> str | None:
    """Why the data key ``key`` is not made an attribute of a ``cls`` model, or None when it may be.

    A key that names something of the class itself (a method, a property, a
    class variable) or a special name would hide it on the model.
    """
    if key.startswith("__"):
        return "a special name"
    for klass in cls.__mro__:
        if key in vars(klass):
            what = vars(klass)[key]
            kind = "method" if callable(what) or isinstance(what, (classmethod, staticmethod)) else "class attribute"
            return f"it names a {kind} of {klass.__name__}"
    return None


def load_items(data: Mapping[str, Any], cls: type, rb: Rebuilds, verbose: Any) -> tuple[dict[str, Any], list[str]]:
    """The archive's data keys as :func:`~rlarchive.sb3.load` hands them to SB3, following :data:`LOAD_KEYS`.

    A key the table does not list (a subclass's own attribute) is passed as
    data unless :func:`shadowed` refuses it; one that holds a class outside
    the allow-list is left out. Each key left out that way is in
    ``rb.not_restored`` with why.

    Returns:
        (the items, the keys left out because they are or hold opaque
        values that ``rb`` does not unpickle).
    """
    out: dict[str, Any] = {}
    left_out: list[str] = []
    for key, value in data.items():
        extra = key not in LOAD_KEYS
        rule = LOAD_KEYS.get(key, "data")
        if extra:
            why = shadowed(cls, key)
            if why is not None:
                rb.not_restored[key] = why
                continue
        if rule == "drop":
            continue
        if isinstance(value, Opaque):
            if rb.unpickle:
                out[key] = value.unpickle(trusted=True)
            else:
                left_out.append(key)
            continue
        try:
            out[key] = _rebuilt(key, value, rule, cls, rb)
        except RlarchiveError as e:
            if e.code == "PICKLE_NOT_ALLOWED":
                left_out.append(key)
            elif extra and e.code == "IMPORT_NOT_ALLOWED":
                rb.not_restored[key] = e.message
            else:
                raise
    if "verbose" not in out:  # SB3's load reads data["verbose"] when it is given an env
        out["verbose"] = verbose
    return out, left_out


def _rebuilt(key: str, value: Any, rule: str, cls: type, rb: Rebuilds) -> Any:
    """The value SB3 gets for ``key`` under ``rule``."""
    if rule == "space":
        return _space(key, value, rb)
    if rule == "policy":
        return _policy_class(key, value, cls, rb)
    if rule == "buffer":
        return _buffer_class(key, value, rb)
    if rule == "kwargs":
        return _kwargs(key, value, rb)
    return rb.top(key, value)


def _space(key: str, value: Any, rb: Rebuilds) -> Any:
    from .. import spaces

    obj = rb.top(key, value)
    if not spaces.is_gymnasium_space(obj):
        raise unsupported(f"data key {key!r} must be a space, not {_describe(value)}")
    return obj


def _policy_class(key: str, value: Any, cls: type, rb: Rebuilds) -> type:
    from stable_baselines3.common.policies import BasePolicy

    if isinstance(value, str):  # a policy alias ("MlpPolicy"), looked up in the algorithm's own table
        aliases = getattr(cls, "policy_aliases", {})
        found: type | None = aliases.get(value) if isinstance(aliases, Mapping) else None
        if found is None:
            raise RlarchiveError(
                "IMPORT_NOT_ALLOWED", f"data key {key!r}: {value!r} is not a policy alias of {cls.__name__}"
            )
        return found
    obj = rb.top(key, value)
    if not (isinstance(obj, type) and issubclass(obj, BasePolicy)):
        raise RlarchiveError("IMPORT_NOT_ALLOWED", f"data key {key!r} must name a policy class, not {_describe(value)}")
    return obj


def _buffer_class(key: str, value: Any, rb: Rebuilds) -> type | None:
    from stable_baselines3.common.buffers import BaseBuffer

    if value is None:
        return None
    obj = rb.top(key, value)
    if not (isinstance(obj, type) and issubclass(obj, BaseBuffer)):
        raise RlarchiveError("IMPORT_NOT_ALLOWED", f"data key {key!r} must name a buffer class, not {_describe(value)}")
    return obj


def _kwargs(key: str, value: Any, rb: Rebuilds) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise unsupported(f"data key {key!r} must be a map of keyword arguments, not {_describe(value)}")
    out = {}
    for k, v in value.items():
        if k in _CALLER_KWARGS:
            continue
        if key == "policy_kwargs" and k == "optimizer_class":
            try:
                out[k] = rb.value(v, f"{key}/{k}")
            except RlarchiveError as e:
                if e.code not in ("IMPORT_NOT_ALLOWED", "PICKLE_NOT_ALLOWED"):
                    raise
                rb.optimizer_left_out = _describe_optimizer(v)
            continue
        out[k] = rb.value(v, f"{key}/{k}")
    if rb.optimizer_left_out is not None:  # its keyword arguments belong to the optimizer left out
        out.pop("optimizer_kwargs", None)
    return out


def _describe_optimizer(value: Any) -> str:
    if isinstance(value, ClassRef):
        return value.name
    if isinstance(value, Opaque):
        return f"an opaque {value.type or 'value'}"
    return f"a {type(value).__name__}"


def optimizer_left_out(data: Mapping[str, Any], allow: Iterable[str] = ()) -> str | None:
    """The optimizer class :func:`~rlarchive.sb3.load` cannot restore from ``data`` (decoded values), or None.

    ``policy_kwargs["optimizer_class"]`` names the class SB3 builds the
    policy's optimizers from. It matters only to training: when it is outside
    :data:`ALLOWED_CLASSES` (plus ``allow``) or kept opaque, :func:`~rlarchive.sb3.load`
    builds the model with SB3's default optimizer and without the recorded
    optimizer states (Annex B.4), and the portable policy is written all the same.
    """
    pk = data.get("policy_kwargs")
    if not isinstance(pk, Mapping) or "optimizer_class" not in pk:
        return None
    v = pk["optimizer_class"]
    if isinstance(v, ClassRef) and v.allowed(tuple(ALLOWED_CLASSES) + tuple(allow)):
        return None
    return _describe_optimizer(v)


def _describe(value: Any) -> str:
    return value.name if isinstance(value, ClassRef) else f"a {type(value).__name__}"


_PARAM_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*")
_VARIABLE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def check_load_names(params: Mapping[str, Any], variables: Mapping[str, Any]) -> None:
    """Refuse tensor group and variable names SB3 would look up as anything but a public attribute path.

    SB3's ``set_parameters`` calls ``getattr`` along each group name, and its
    ``load`` calls ``setattr`` with each variable name.
    """
    for name in params:
        if not _PARAM_NAME.fullmatch(name):
            raise unsupported(f"tensor group {name!r} is not a public attribute path of an SB3 model")
    for name in variables:
        if not _VARIABLE_NAME.fullmatch(name):
            raise unsupported(
                f"variable {name!r} (tensor group 'variables') is not a public attribute name of an SB3 model"
            )
