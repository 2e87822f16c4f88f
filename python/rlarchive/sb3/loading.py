"""A ready Stable-Baselines3 model built straight from an rlarchive (:func:`load`).

:func:`load` reads the archive's parts (:func:`rlarchive.sb3.values.archive_parts`),
hands SB3 only what :data:`rlarchive.sb3.keys.LOAD_KEYS` lets
through, builds the model as SB3's own ``load`` does (no zip, no pickle, no
weight initialised twice), then restores the replay buffer and the run state
the archive may hold, and can say what it restored (:class:`RestoreReport`).
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import RlarchiveError
from ..extensions import replay_buffer as replay_buffer_ext
from ..extensions import training as training_state
from ..extensions import vec_normalize as vec_normalize_ext
from ..values import ClassRef
from . import files as sb3_files
from . import parts as sb3_parts
from . import restart as sb3_restart
from . import shared_extractor, shared_layers
from .generators import Snapshot
from .keys import (
    ALLOWED_CLASSES,
    ARCHITECTURE_KEYS,
    META_ALGORITHM,
    LoadWarning,
    check_load_names,
    derived,
    load_items,
)
from .model_zip import unsupported
from .values import Rebuilder, archive_parts, buffer_members
from .weights import set_weights

__all__ = ["load", "RestoreReport"]


def _algorithm_class(algorithm: Any, metadata: Mapping[str, str], allow: Iterable[str]) -> Any:
    """The SB3 algorithm class for :func:`load`: the caller's class, a known name, or an exactly allowed dotted name.

    A name (the caller's or the archive's ``sb3.algorithm``) becomes a class
    only through :meth:`ClassRef.resolve`: a key of
    :data:`rlarchive.sb3.algorithms.ALGORITHMS` by its exact module and
    class, anything else only as a dotted name on ``allow`` that is a subclass
    of SB3's ``BaseAlgorithm``.
    """
    from stable_baselines3.common.base_class import BaseAlgorithm

    from . import algorithms

    if algorithm is None:
        algorithm = metadata.get(META_ALGORITHM)
        if algorithm is None:
            raise RlarchiveError("VALUE_UNSUPPORTED", "the archive does not record its SB3 algorithm; pass algorithm=")
    if isinstance(algorithm, type):
        if not issubclass(algorithm, BaseAlgorithm):
            raise TypeError(
                "algorithm must be a Stable-Baselines3 algorithm class (a subclass of BaseAlgorithm) or its name"
            )
        return algorithm
    if not isinstance(algorithm, str):
        raise TypeError("algorithm must be a Stable-Baselines3 algorithm class or its name")
    if algorithm in algorithms.ALGORITHMS:
        return algorithms.algorithm_class(algorithm)
    module, _, qual = algorithm.rpartition(".")
    if not module:
        raise RlarchiveError(
            "IMPORT_NOT_ALLOWED",
            f"unknown algorithm {algorithm!r}; give one of {', '.join(algorithms.ALGORITHMS)}, "
            "an algorithm class, or a dotted class name passed in allow_classes",
        )
    cls = ClassRef(module, qual).resolve(tuple(allow))
    if not issubclass(cls, BaseAlgorithm):
        raise RlarchiveError("IMPORT_NOT_ALLOWED", f"algorithm {algorithm} is not a Stable-Baselines3 algorithm class")
    return cls


@dataclass
class RestoreReport:
    """What :func:`load` restored into the model from the archive, and what it did not (``load(..., report=True)``).

    Items are named by stable words: ``parameters``, ``optimizers``,
    ``replay_buffer``, ``run_state`` (counters, episode statistics,
    exploration rate), ``last_obs`` (the last observations and episode
    starts), ``lstm_states``, ``action_noise``, ``random_state`` (all the
    generators, when the archive records none), ``random_state.torch``,
    ``random_state.torch_cuda``, ``random_state.numpy``,
    ``random_state.python``, ``random_state.action_space``,
    ``random_state.observation_space``, ``vec_normalize``, and ``data.KEY``
    for a data value left out (kept as an opaque pickle). What the
    environment object holds (its own state and generators) is never in the
    archive and stays the caller's (spec RLA_training, "What is restored").

    Attributes:
        restored: the items restored, in the order load restored them.
        not_restored: item -> why it was not restored (each one that is
            also a :class:`~rlarchive.sb3.LoadWarning` is warned about as before).
        details: item -> what it held, in a few words (the replay buffer's
            class and transitions, the run state's counters and generators).
    """

    restored: list[str] = field(default_factory=list)
    not_restored: dict[str, str] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        return asdict(self)

    def __str__(self) -> str:
        lines = []
        for item in self.restored:
            lines.append(f"restored {item}" + (f": {self.details[item]}" if item in self.details else ""))
        for item, why in self.not_restored.items():
            lines.append(f"not restored {item}: {why}")
        return "\n".join(lines)


_INIT_FUNCTIONS = (
    "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
    "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_",
)  # fmt: skip
_INIT_LOCK = threading.Lock()


class _SkipInit:
    """Within it, ``torch.nn.init``'s initialisers leave tensors as they are: every weight is assigned from the archive afterwards.

    The patch is process-wide while it lasts, so one thread at a time holds it.
    """

    def __enter__(self) -> None:
        import torch.nn.init as init

        _INIT_LOCK.acquire()
        self.saved = {n: getattr(init, n) for n in _INIT_FUNCTIONS if hasattr(init, n)}
        for n in self.saved:
            setattr(init, n, _keep)

    def __exit__(self, *exc: Any) -> None:
        import torch.nn.init as init

        for n, fn in self.saved.items():
            setattr(init, n, fn)
        _INIT_LOCK.release()


def _keep(tensor: Any, *args: Any, **kwargs: Any) -> Any:
    return tensor


def _build_model(
    cls: Any,
    data: dict[str, Any],
    params: Mapping[str, Any],
    variables: Mapping[str, Any],
    env: Any,
    device: Any,
    kwargs: dict[str, Any],
    skip_init: bool,
    fresh_optimizers: bool = False,
) -> Any:
    """What SB3's ``load`` does after reading its zip, from objects already rebuilt (no pickle, no zip).

    With ``fresh_optimizers`` the policy's optimizers (``*.optimizer``) keep
    the state they are built with instead of the archive's (their class was left out).
    """
    from stable_baselines3.common.utils import check_for_correct_spaces

    data = _model_data(data, kwargs)
    if env is not None:
        env = cls._wrap_env(env, data.get("verbose", 0))
        check_for_correct_spaces(env, data["observation_space"], data["action_space"])
        if kwargs.pop("force_reset", True):
            data["_last_obs"] = None
        data["n_envs"] = env.num_envs
    kwargs.pop("force_reset", None)
    shared = shared_layers.layout(data.get("policy_kwargs"), params.get("policy"))
    base = data.get("policy_class")
    if shared is not None:  # SB3 < 1.8 with layers shared by the actor and the critic
        data["policy_class"] = shared_layers.policy_class(base, shared)
    model = cls(policy=data["policy_class"], env=env, device=device, _init_setup_model=False)
    model.__dict__.update(data)
    model.__dict__.update(kwargs)
    try:
        if skip_init:
            with _SkipInit():
                model._setup_model()
        else:
            model._setup_model()
    except (
        TypeError,
        ValueError,
        KeyError,
        IndexError,
        AttributeError,
    ) as e:  # SB3's assertions (HER needs an env) pass
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            f"{cls.__name__} cannot build its policy from the archive's data: {type(e).__name__}: {str(e)[:300]}",
        ) from None
    if shared is not None:  # the model records the class SB3 named, as the archive does
        model.policy_class = base
    params = shared_extractor.for_model(model, params)
    set_weights(cls, model, params, variables, device, fresh_optimizers)
    return model


def _model_data(data: dict[str, Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the archive's data as SB3's ``load`` passes it on: ``policy_kwargs`` without ``device`` (and
    ``net_arch`` of SB3 < 1.8 unwrapped), the spaces converted to gymnasium's."""
    from stable_baselines3.common.vec_env.patch_gym import _convert_space

    data = dict(data)
    pk = data.get("policy_kwargs")
    if isinstance(pk, dict):
        pk = {k: v for k, v in pk.items() if k != "device"}
        arch = pk.get("net_arch")
        if arch and isinstance(arch, list) and isinstance(arch[0], dict):  # SB3 < 1.8 wrote [dict(pi=..., vf=...)]
            pk["net_arch"] = arch[0]
        data["policy_kwargs"] = pk
    if "policy_kwargs" in kwargs and kwargs["policy_kwargs"] != data.get("policy_kwargs"):
        raise ValueError(f"the policy_kwargs given differ from the archive's: {data.get('policy_kwargs')}")
    for key in ("observation_space", "action_space"):
        if key not in data:
            raise unsupported(f"the archive's data has no {key}")
        data[key] = _convert_space(data[key])
    return data


def load(
    path: str | os.PathLike[str],
    env: Any = None,
    device: str = "cpu",
    *,
    algorithm: Any = None,
    custom_objects: Mapping[str, Any] | None = None,
    opaque: str = "skip",
    allow_classes: Iterable[str] = (),
    force_reset: bool = True,
    replay_buffer: bool = True,
    verify_replay_buffer: bool = False,
    report: bool = False,
    **kwargs: Any,
) -> Any:
    """Build a ready Stable-Baselines3 model straight from an rlarchive.

    Spaces and schedules are rebuilt from their neutral values, tensors and
    optimizer states are loaded without pickle, and a class reference becomes a
    class only through :meth:`ClassRef.resolve` under :data:`~rlarchive.sb3.ALLOWED_CLASSES`
    (plus ``allow_classes``). Nothing from the archive is unpickled unless
    ``opaque="unpickle"``. Every saved attribute comes back as with SB3's
    own ``load`` (a subclass's own attributes too), following
    :data:`~rlarchive.sb3.LOAD_KEYS` (Annex B.8), but the environment,
    ``tensorboard_log`` and ``device``, which always come from the caller, never
    from the archive, so no string from the archive reaches anything that
    imports, opens or connects. ``path`` may be a binary file object.

    The model is built as SB3's own ``load`` builds it, from the rebuilt values
    directly (no intermediate zip, no pickle): the networks are made without
    initialising their weights (``torch.nn.init`` does nothing meanwhile) and
    every weight is then copied from the archive, whose tensors are read from
    the mapped file. The archive is verified (CRC-32 and SHA-256) first, but
    for the replay buffer's tensors (below), which are not read at all.

    Values the import kept opaque (a lambda learning rate, ``action_noise``,
    ``_last_obs``, a leaf inside ``replay_buffer_kwargs``) are left out by
    default, with one :class:`~rlarchive.sb3.LoadWarning` naming each key: the model then has
    SB3's defaults for them, which changes nothing for prediction and is what a
    model built by the algorithm's constructor would have for further training
    (for example a constant learning rate of the constructor's default instead
    of the lambda). Keys that decide the policy's architecture
    (:data:`~rlarchive.sb3.ARCHITECTURE_KEYS`) are never left out. An optimizer class off
    the allow-list (``policy_kwargs["optimizer_class"]``, training-only) is
    left out the same way, with its ``optimizer_kwargs``: the model gets SB3's
    default optimizer, freshly initialised (:func:`~rlarchive.sb3.optimizer_left_out`).

    A policy with layers shared by actor and critic (SB3 before 1.8, state
    entries ``mlp_extractor.shared_net.*``) is built as those versions built
    it (:mod:`rlarchive.sb3.shared_layers`), so every weight and optimizer
    state loads under its recorded name.

    Args:
        path: the rlarchive.
        env: as for SB3's ``load`` (optional: prediction needs none); SB3's
            ValueError when its spaces differ from the archive's.
        device: torch device for the model (``"cpu"``, ``"cuda"``, ``"auto"``...).
        algorithm: SB3 algorithm class, or a name in
            :data:`rlarchive.sb3.algorithms.ALGORITHMS`, or a dotted class
            name given in ``allow_classes``; defaults to the archive's
            ``sb3.algorithm`` metadata, resolved the same way.
        custom_objects: data key -> object, used instead of the archive's
            value for a key the archive's data holds (as in SB3's own ``load``:
            a key it does not hold adds nothing); the archive's value for such
            a key is not read at all.
        opaque: what to do with opaque values not in ``custom_objects``:
            ``"skip"`` (default) leaves out those of training-only keys with a
            :class:`~rlarchive.sb3.LoadWarning` and refuses those the architecture needs;
            ``"error"`` (strict) raises PICKLE_NOT_ALLOWED naming every one;
            ``"unpickle"`` unpickles them, which runs code from the file: only
            for trusted archives.
        allow_classes: further exact names (``"package.module.Class"``,
            ``"package.module:Outer.Inner"``) or ``"package.module.*"``
            patterns that may be imported: a policy that depends on a user
            class (a custom features extractor) loads only when it is named
            here; otherwise IMPORT_NOT_ALLOWED names the class and this argument.
        force_reset: as for SB3's ``load``: with an ``env``, the next ``learn``
            starts from a reset of it (the default) instead of the last
            observation. When the archive holds a run state (extension
            ``RLA_training``, written by :func:`~rlarchive.sb3.save` with ``training=True``),
            it is restored into the model, random generators included (the
            process's PyTorch, NumPy and ``random`` global generators and the
            model's spaces'), after the model is built; with ``force_reset``
            the last observation, episode starts and recurrent states are left
            as SB3 leaves them (reset).
        replay_buffer: restore the archive's replay buffer (extension
            ``RLA_replay_buffer``) into the model, when it has one. Its arrays
            are copy-on-write views of the archive file: loading copies none
            of them, and training copies a page only when it writes to it.
            The archive file must then not be changed in place while the
            model lives (writers that replace the file, as this package's
            does, are fine). A ``HerReplayBuffer``'s last episode is closed
            when ``force_reset`` (as SB3's ``load_replay_buffer`` does by
            default). A buffer that does not fit the model (another class,
            number of environments or shape) is left out with a
            :class:`~rlarchive.sb3.LoadWarning` saying why. The buffer's tensor member is
            not read by ``load`` (spec §1.2 lets a reader defer the CRC-32
            and digest of a tensor member until its bytes are used; here,
            training reads the rows it samples): a buffer of gigabytes loads
            in the time of the rest of the archive. Its CRC-32 and SHA-256
            are then never checked by ``load``; ``verify_replay_buffer=True``
            (or ``rlarchive verify FILE`` beforehand) checks them.
        verify_replay_buffer: check the replay buffer's CRC-32 and SHA-256
            before restoring it, reading every byte of it.
        report: also return a :class:`RestoreReport` of what was restored
            and what was not (the model itself is left as SB3 makes it:
            nothing is added to it).
        **kwargs: as for SB3's ``load`` (e.g. ``verbose``, ``tensorboard_log``).
    Returns:
        The SB3 model; with ``report``, ``(model, RestoreReport)``.
    Raises:
        RlarchiveError: IMPORT_NOT_ALLOWED naming a class reference or
            algorithm outside the allow-list, PICKLE_NOT_ALLOWED for opaque
            values (above), VALUE_UNSUPPORTED for values SB3 cannot take or
            weights that do not fit the policy, LIMIT_EXCEEDED when SB3 runs
            out of memory building the model.
    """
    if opaque not in ("error", "skip", "unpickle"):
        raise ValueError("opaque must be 'skip', 'error' or 'unpickle'")
    if isinstance(allow_classes, str):
        raise TypeError("allow_classes must be a list of names, not a string")
    from ..reader import open_archive

    before = Snapshot.take()  # building the model seeds the process's generators: a failed load puts them back
    seeds = None
    try:
        allow = ALLOWED_CLASSES + tuple(allow_classes)
        custom = dict(custom_objects or {})
        with open_archive(sb3_files.source(path, ""), spaces="neutral") as ar:
            sb3_parts.expect_part(ar, path, ("model",))
            unverified = () if verify_replay_buffer else buffer_members(ar)
            data, metadata, params, variables = archive_parts(ar, copy=False, unverified=unverified)
            check_load_names(params, variables)
            cls = _algorithm_class(algorithm, metadata, allow)
            rb = Rebuilder("load", allow, data, unpickle=opaque == "unpickle")
            items, left_out = load_items(
                {k: v for k, v in data.items() if k not in custom}, cls, rb, kwargs.get("verbose", 0)
            )
            _refuse_opaque(left_out, opaque)
            run = training_state.read(ar)
            left_out = _left_out(left_out, opaque, run, rb, custom, data)
            items.update({k: v for k, v in custom.items() if k in data})  # as SB3: only keys the archive holds
            done = RestoreReport(restored=["parameters"])
            for key in left_out:
                done.not_restored[f"data.{key}"] = "kept as an opaque pickle: SB3's default is used"
            for key, why in rb.not_restored.items():
                done.not_restored[f"data.{key}"] = why
            buffer_value = _buffer_value(ar, replay_buffer, done)
            if vec_normalize_ext.EXTENSION in ar.manifest.extensions_used:
                done.not_restored["vec_normalize"] = (
                    "load does not wrap the environment: load_vec_normalize(path, venv) gives the VecNormalize"
                )
            if run is not None and not force_reset:
                from . import run_state

                seeds = run_state.pending_seeds(env)
            fresh = rb.optimizer_left_out is not None and "policy_kwargs" not in custom
            model = _built(cls, items, params, variables, env, device, dict(kwargs, force_reset=force_reset), fresh)
        from . import replay_buffer as buffers

        buffers.check_model_buffer(model)
        optimizers = [k for k in params if k.split(".")[-1] == "optimizer"]
        if optimizers and not fresh:
            done.restored.append("optimizers")
        elif fresh:
            done.not_restored["optimizers"] = (
                f"the optimizer class {rb.optimizer_left_out} is not on the allow-list: SB3's default optimizer, freshly initialised"
            )
        if buffer_value is not None:
            _restore_buffer(model, buffer_value, force_reset, bool(unverified), done)
        elif replay_buffer and getattr(model, "replay_buffer", None) is not None:
            done.not_restored["replay_buffer"] = "the archive holds none (save with replay_buffer=True)"
        _restore_run(model, run, env, force_reset, seeds, done)
        sb3_restart.warn_fresh_env(model, env, force_reset)
        return (model, done) if report else model
    except BaseException:
        before.put_back()
        if seeds is not None:  # taken by run_state, already imported
            from . import run_state

            run_state.put_pending_seeds(seeds)
        raise


def _refuse_opaque(left_out: list[str], opaque: str) -> None:
    """PICKLE_NOT_ALLOWED when a key :func:`load` cannot leave out (an architecture key; with ``opaque="error"``, any) is opaque."""
    blocking = [k for k in left_out if k in ARCHITECTURE_KEYS or opaque == "error"]
    if blocking:
        raise RlarchiveError(
            "PICKLE_NOT_ALLOWED",
            f"the archive keeps {blocking} as opaque pickles"
            + (
                " and the policy's architecture depends on them"
                if any(k in ARCHITECTURE_KEYS for k in blocking)
                else ""
            )
            + "; pass custom_objects for them"
            + (", opaque='skip' to leave out the training-only ones" if opaque == "error" else "")
            + ", or opaque='unpickle' for a trusted archive",
        )


def _left_out(
    left_out: list[str],
    opaque: str,
    run: Mapping[str, Any] | None,
    rb: Rebuilder,
    custom: Mapping[str, Any],
    data: Mapping[str, Any],
) -> list[str]:
    """The data keys :func:`load` leaves out (the action noise the run state gives back is not), each warned about.

    A key SB3 computes again from another one the model does get (``lr_schedule``
    from ``learning_rate``, the archive's or the caller's) is not left out in
    effect, and not warned about. Keys that are not made attributes of the model
    (``rb.not_restored``) are warned about, by name. An optimizer class off the
    allow-list is warned about too, or refused (IMPORT_NOT_ALLOWED) with
    ``opaque="error"``. The warnings point at :func:`load`'s caller.
    """
    if run is not None and run["action_noise"] is not None:  # the run state gives it back (run_state.restore)
        left_out = [k for k in left_out if k != "action_noise"]
    left_out = [k for k in left_out if not derived(k, left_out, custom, data)]
    if rb.not_restored:
        warnings.warn(
            "not restored: "
            + "; ".join(f"{k} ({why})" for k, why in rb.not_restored.items())
            + "; the model keeps what its constructor sets for them",
            LoadWarning,
            stacklevel=3,
        )
    if left_out:
        warnings.warn(
            f"left out {', '.join(left_out)}: the archive keeps them as opaque pickles; the model uses "
            "SB3's defaults for them (they matter only to further training); pass custom_objects to give them",
            LoadWarning,
            stacklevel=3,
        )
    if rb.optimizer_left_out is not None and "policy_kwargs" not in custom:
        if opaque == "error":
            raise RlarchiveError(
                "IMPORT_NOT_ALLOWED",
                f"the optimizer class {rb.optimizer_left_out} cannot be restored; pass allow_classes for it, "
                "or opaque='skip' to build the model with SB3's default optimizer",
            )
        warnings.warn(
            f"left out the optimizer class {rb.optimizer_left_out} and the optimizer states: the model uses "
            "SB3's default optimizer, freshly initialised (it matters only to further training); "
            "pass allow_classes to restore it",
            LoadWarning,
            stacklevel=3,
        )
    return left_out


def _buffer_value(ar: Any, replay_buffer: bool, done: RestoreReport) -> Any:
    """The archive's replay buffer value when :func:`load` is to restore it (None otherwise, noted in ``done``)."""
    from . import replay_buffer as buffers

    if replay_buffer:
        return buffers.read_value(ar)
    if replay_buffer_ext.EXTENSION in ar.manifest.extensions_used:
        done.not_restored["replay_buffer"] = "replay_buffer=False"
    return None


def _built(
    cls: Any,
    items: dict[str, Any],
    params: Mapping[str, Any],
    variables: Mapping[str, Any],
    env: Any,
    device: Any,
    kwargs: dict[str, Any],
    fresh: bool,
) -> Any:
    """:func:`_build_model` without initialising weights, its memory and size failures as RlarchiveError."""
    try:
        return _build_model(cls, items, params, variables, env, device, kwargs, skip_init=True, fresh_optimizers=fresh)
    except MemoryError as e:
        raise RlarchiveError("LIMIT_EXCEEDED", f"building the model needs more memory than is available: {e}") from None
    except RuntimeError as e:  # load_state_dict: the weights do not fit the policy built from the data
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            f"the archive's weights do not fit the policy {cls.__name__} builds from its data: {str(e)[:500]}",
        ) from None


def _restore_buffer(model: Any, buffer_value: Any, force_reset: bool, unverified: bool, done: RestoreReport) -> None:
    """Put the archive's replay buffer into ``model``; a buffer that does not fit is left out with a :class:`~rlarchive.sb3.LoadWarning`."""
    from . import replay_buffer as buffers

    note = buffers.restore(model, buffer_value, truncate_last_trajectory=force_reset)
    if note.startswith("replay buffer restored"):
        done.restored.append("replay_buffer")
        done.details["replay_buffer"] = buffers.describe(buffer_value) + (
            "; mapped copy-on-write, its CRC-32 and SHA-256 not checked (verify_replay_buffer=True checks them)"
            if unverified
            else ""
        )
    else:
        done.not_restored["replay_buffer"] = note.split(": ", 1)[-1]
        warnings.warn(note, LoadWarning, stacklevel=3)


def _restore_run(
    model: Any, run: Mapping[str, Any] | None, env: Any, force_reset: bool, seeds: Any, done: RestoreReport
) -> None:
    """Put the archive's run state and random state (extension RLA_training) into ``model``, or note that it holds none."""
    if run is None:
        why = "the archive holds none (save with training=True or replay_buffer=True)"
        done.not_restored.update({"run_state": why, "random_state": why})
        return
    from . import run_state

    restored, not_restored = run_state.restore(model, run, keep_last_obs=env is not None and not force_reset)
    done.restored.extend(restored)
    done.not_restored.update(not_restored)
    done.details["run_state"] = run_state.describe(run)
    if not force_reset:
        run_state.put_pending_seeds(seeds)
