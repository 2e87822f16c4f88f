"""An opt-in switch that routes Stable-Baselines3's and sb3-contrib's persistence methods through archives.

:func:`use_archives` replaces, until it is undone, the methods every SB3 or
sb3-contrib script saves and loads with (and so ``CheckpointCallback``,
``EvalCallback``'s best model and the RL Zoo's ``train.py``, which call them):

========================================== ============================================
method                                     twin
========================================== ============================================
``BaseAlgorithm.save``                     :func:`rlarchive.sb3.saving.save` (``exclude``, ``include``)
``BaseAlgorithm.load`` (classmethod)       :func:`rlarchive.sb3.loading.load`
``BaseAlgorithm.set_parameters`` (a path)  the archive's tensor groups and optimizer states
``OffPolicyAlgorithm.save_replay_buffer``  :func:`rlarchive.sb3.parts.save_replay_buffer`
``OffPolicyAlgorithm.load_replay_buffer``  :func:`rlarchive.sb3.parts.load_replay_buffer`
``VecNormalize.save`` / ``.load``          :func:`rlarchive.sb3.parts.save_vec_normalize` / ``load_vec_normalize``
``BaseModel.save`` / ``.load`` (policies)  :func:`rlarchive.sb3.policy_file.save_policy` / ``load_policy``
========================================== ============================================

Paths follow SB3's rules (:mod:`rlarchive.sb3.files`): the same file
names, ``.zip`` / ``.pkl`` added where SB3 adds them, file objects taken. A
file that is not an archive (one SB3 wrote before the switch) is read as
``legacy`` says: ``"import"`` (the default) converts it without running its
pickles (models, replay buffers, VecNormalize statistics; a policy file is a
``torch.save`` pickle, refused), ``"pickle"`` hands it to SB3's own method
(trusted files only), ``"error"`` refuses it.

Nothing happens at import: the switch is a function call, whose handle undoes
it (``undo()``) or works as a context manager.
"""

from __future__ import annotations

import functools
import os
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import RlarchiveError
from . import files as sb3_files

__all__ = ["use_archives", "ArchiveSwitch", "SaveWarning"]

_LEGACY = ("import", "pickle", "error")
_LOCK = threading.Lock()
_STACK: list[ArchiveSwitch] = []


class SaveWarning(UserWarning):
    """A save through the switch kept values as opaque pickles: an archive load leaves them out (they are named)."""


class ArchiveSwitch:
    """The handle :func:`use_archives` returns: ``undo()`` puts SB3's methods back; also a context manager."""

    def __init__(self, opaque: str, allow_classes: tuple[str, ...], training: bool, legacy: str) -> None:
        self.opaque = opaque
        self.allow_classes = allow_classes
        self.training = training
        self.legacy = legacy
        self._saved: list[tuple[type, str, Any]] = []

    @property
    def active(self) -> bool:
        """Whether the switch is on."""
        return bool(self._saved)

    def __enter__(self) -> ArchiveSwitch:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.undo()

    def undo(self) -> None:
        """Put back every method the switch replaced (nothing happens when it is already undone).

        Raises:
            RuntimeError: when a switch turned on after this one is still on
                (undo the later one first).
        """
        with _LOCK:
            if not self._saved:
                return
            if _STACK[-1] is not self:
                raise RuntimeError("a later use_archives() is still on: undo it first")
            for owner, name, original in reversed(self._saved):
                setattr(owner, name, original)
            self._saved.clear()
            _STACK.pop()

    def _patch(self, owner: type, name: str, replacement: Any) -> None:
        self._saved.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, replacement)

    def _install(self) -> None:
        from stable_baselines3.common.base_class import BaseAlgorithm
        from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
        from stable_baselines3.common.policies import BaseModel
        from stable_baselines3.common.vec_env import VecNormalize

        try:  # its ARS has its own set_parameters, found below only once imported
            import sb3_contrib  # noqa: F401
        except ImportError:
            pass
        self._patch(BaseAlgorithm, "save", _model_save(self))
        self._patch(BaseAlgorithm, "load", classmethod(_model_load(self, BaseAlgorithm.__dict__["load"].__func__)))
        for cls in [BaseAlgorithm, *_subclasses(BaseAlgorithm)]:
            if "set_parameters" in cls.__dict__:
                self._patch(cls, "set_parameters", _set_parameters(self, cls.__dict__["set_parameters"]))
        self._patch(OffPolicyAlgorithm, "save_replay_buffer", _save_replay_buffer(self))
        self._patch(
            OffPolicyAlgorithm,
            "load_replay_buffer",
            _load_replay_buffer(self, OffPolicyAlgorithm.__dict__["load_replay_buffer"]),
        )
        self._patch(VecNormalize, "save", _vec_normalize_save)
        self._patch(
            VecNormalize, "load", staticmethod(_vec_normalize_load(self, VecNormalize.__dict__["load"].__func__))
        )
        self._patch(BaseModel, "save", _policy_save)
        self._patch(BaseModel, "load", classmethod(_policy_load(self, BaseModel.__dict__["load"].__func__)))


def use_archives(
    *,
    opaque: str = "skip",
    allow_classes: Iterable[str] = (),
    training: bool = True,
    legacy: str = "import",
) -> ArchiveSwitch:
    """Route SB3's and sb3-contrib's persistence methods through archives, until the handle is undone.

    >>> with rlarchive.sb3.use_archives():          # doctest: +SKIP
    ...     model.save("ppo_cartpole")               # an archive, at ppo_cartpole.zip
    ...     model = PPO.load("ppo_cartpole")

    ``switch = rlarchive.sb3.use_archives()`` ... ``switch.undo()`` does the
    same without a ``with`` block. Switches nest (each undone in turn).

    Args:
        opaque: what loads do with values kept as opaque pickles (as
            :func:`rlarchive.sb3.loading.load`): ``"skip"`` (default),
            ``"error"``, or ``"unpickle"`` (trusted archives only).
        allow_classes: further class names loads may import (a user's
            features extractor, a user's algorithm class is taken as given).
        training: model saves also store the run state and the random state
            (extension ``RLA_training``) so that a load with
            ``force_reset=False`` goes on as the run would have (default True).
        legacy: what loads do with a file that is not an archive:
            ``"import"``, ``"pickle"`` or ``"error"`` (see the module).
    Returns:
        The :class:`ArchiveSwitch`.
    Raises:
        ModuleNotFoundError: when stable-baselines3 is not installed.
    """
    if opaque not in ("skip", "error", "unpickle"):
        raise ValueError("opaque must be 'skip', 'error' or 'unpickle'")
    if legacy not in _LEGACY:
        raise ValueError(f"legacy must be one of {', '.join(_LEGACY)}")
    if isinstance(allow_classes, str):
        raise TypeError("allow_classes must be a list of names, not a string")
    switch = ArchiveSwitch(opaque, tuple(allow_classes), bool(training), legacy)
    with _LOCK:
        try:
            switch._install()
        except BaseException:
            for owner, name, original in reversed(switch._saved):
                setattr(owner, name, original)
            switch._saved.clear()
            raise
        _STACK.append(switch)
    return switch


def _subclasses(cls: type) -> list[type]:
    out: list[type] = []
    todo: list[type] = list(cls.__subclasses__())
    while todo:
        c = todo.pop()
        if c not in out:
            out.append(c)
            todo.extend(c.__subclasses__())
    return out


#: Data keys kept as opaque pickles whose value the run state (``training=True``) gives back: not warned about then.
_IN_RUN_STATE = ("action_noise",)


def _warn_opaque(report: Any, what: str, carried: tuple[str, ...] = ()) -> None:
    opaque = [o for o in report.opaque if o.key not in carried]
    if opaque:
        names = ", ".join(f"{o.key} ({o.type or 'a value'}: {o.reason})" for o in opaque)
        warnings.warn(
            f"{what}: kept as opaque pickles, which an archive load leaves out unless trusted: {names}",
            SaveWarning,
            stacklevel=3,
        )


# ---------------------------------------------------------------- models


def _model_save(switch: ArchiveSwitch) -> Callable[..., None]:
    def save(self: Any, path: Any, exclude: Iterable[str] | None = None, include: Iterable[str] | None = None) -> None:
        from .saving import save as save_model

        report = save_model(
            self, sb3_files.sb3_target(path, "zip"), exclude=exclude, include=include, training=switch.training
        )
        _warn_opaque(report, f"{type(self).__name__}.save", _IN_RUN_STATE if switch.training else ())

    return save


def _legacy(switch: ArchiveSwitch, src: Any, what: str) -> None:
    if switch.legacy == "error":
        raise RlarchiveError(
            "ARCHIVE_NOT_RLARCHIVE",
            f"{sb3_files.describe(src)} is not an rlarchive ({what} written without use_archives); "
            "use_archives(legacy='import') converts it without running its pickles",
        )


def _model_load(switch: ArchiveSwitch, original: Callable[..., Any]) -> Callable[..., Any]:
    def load(
        cls: Any,
        path: Any,
        env: Any = None,
        device: Any = "auto",
        custom_objects: dict[str, Any] | None = None,
        print_system_info: bool = False,
        force_reset: bool = True,
        **kwargs: Any,
    ) -> Any:
        from .loading import load as load_model

        if custom_objects is not None and not isinstance(custom_objects, dict):
            raise ValueError("custom_objects argument must be a dict or None")
        src = sb3_files.source(path, "zip")
        args = dict(env=env, device=device, custom_objects=custom_objects, force_reset=force_reset, **kwargs)
        if not sb3_files.is_archive(src):
            _legacy(switch, src, "a model")
            if switch.legacy == "pickle":
                return original(cls, path, print_system_info=print_system_info, **args)
            with tempfile.TemporaryDirectory(prefix="rlarchive-") as tmp:
                converted = _import_model(src, os.path.join(tmp, "model.rlarchive"), cls)
                return load_model(
                    converted, algorithm=cls, opaque=switch.opaque, allow_classes=switch.allow_classes, **args
                )
        if print_system_info:
            _print_system_info(src)
        return load_model(src, algorithm=cls, opaque=switch.opaque, allow_classes=switch.allow_classes, **args)

    return load


def _import_model(src: Any, out: str, cls: Any) -> str:
    """An SB3 zip converted to an archive at ``out`` (nothing from it runs), for a load."""
    from . import algorithms
    from .importing import import_archive

    if sb3_files.is_file_object(src):
        with open(os.path.join(os.path.dirname(out), "model.zip"), "wb") as f:
            src.seek(0)
            f.write(src.read())
        src = f.name
    name = cls.__name__ if cls.__name__ in algorithms.ALGORITHMS else None
    import_archive(src, out, algorithm=name)
    return out


def _print_system_info(src: Any) -> None:
    from stable_baselines3.common.utils import get_system_info

    from ..reader import open_archive

    print("== CURRENT SYSTEM INFO ==")
    get_system_info()
    with open_archive(src) as ar:
        saved = {k: v for k, v in ar.metadata.items() if k.startswith("versions.") or k.startswith("sb3.version")}
    print("== SAVED MODEL SYSTEM INFO ==")
    for k, v in saved.items():
        print(f"- {k}: {v}")


def _set_parameters(switch: ArchiveSwitch, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def set_parameters(self: Any, load_path_or_dict: Any, exact_match: bool = True, device: Any = "auto") -> None:
        if not isinstance(load_path_or_dict, dict):
            load_path_or_dict = _parameters(switch, load_path_or_dict)
        original(self, load_path_or_dict, exact_match=exact_match, device=device)

    return set_parameters


def _parameters(switch: ArchiveSwitch, path: Any) -> dict[str, Any]:
    """The state dicts and optimizer states an archive holds, by name (what ``set_parameters`` loads)."""
    from ..reader import open_archive
    from .values import archive_parts

    src = sb3_files.source(path, "zip")
    if not sb3_files.is_archive(src):
        _legacy(switch, src, "a model")
        with tempfile.TemporaryDirectory(prefix="rlarchive-") as tmp:
            converted = _import_model(src, os.path.join(tmp, "model.rlarchive"), type(None))
            with open_archive(converted, spaces="neutral") as ar:
                return archive_parts(ar, copy=True)[2]
    with open_archive(src, spaces="neutral") as ar:
        return archive_parts(ar, copy=True)[2]


# ---------------------------------------------------------------- replay buffers


def _save_replay_buffer(switch: ArchiveSwitch) -> Callable[..., None]:
    def save_replay_buffer(self: Any, path: Any) -> None:
        from .parts import save_replay_buffer as save_part

        assert self.replay_buffer is not None, "The replay buffer is not defined"
        save_part(self, sb3_files.sb3_target(path, "pkl"))

    return save_replay_buffer


def _load_replay_buffer(switch: ArchiveSwitch, original: Callable[..., Any]) -> Callable[..., None]:
    def load_replay_buffer(self: Any, path: Any, truncate_last_traj: bool = True) -> None:
        from .parts import load_replay_buffer as load_part

        src = sb3_files.source(path, "pkl")
        if sb3_files.is_archive(src):
            load_part(self, src, truncate_last_traj)
            return
        _legacy(switch, src, "a replay buffer")
        if switch.legacy == "pickle":
            original(self, path, truncate_last_traj)
            return
        load_part(self, _imported_buffer(src), truncate_last_traj)

    return load_replay_buffer


def _imported_buffer(src: Any) -> str:
    """A replay buffer pickle converted (restricted unpickler) to a part archive in a temporary file, for a load.

    The file is removed once opened: the buffer's arrays map it for as long as they live.
    """
    from ..extensions import replay_buffer as replay_buffer_ext
    from ..writer import save
    from . import replay_buffer as buffers
    from .parts import part_metadata

    if sb3_files.is_file_object(src):
        src.seek(0)
        raw = src.read()
        with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as f:
            f.write(raw)
        src = f.name
    value = buffers.read_pickle(src)
    fd, out = tempfile.mkstemp(suffix=".rlarchive")
    os.close(fd)
    data = {"observation_space": value["observation_space"], "action_space": value["action_space"]}
    save(out, data, metadata=part_metadata("replay_buffer"), extension_values={replay_buffer_ext.EXTENSION: value})
    return out


# ---------------------------------------------------------------- VecNormalize and policies


def _vec_normalize_save(self: Any, save_path: Any) -> None:
    from .parts import save_vec_normalize

    save_vec_normalize(self, save_path)


def _vec_normalize_load(switch: ArchiveSwitch, original: Callable[..., Any]) -> Callable[..., Any]:
    def load(load_path: Any, venv: Any) -> Any:
        from . import vec_normalize as vecnormalize
        from .parts import load_vec_normalize

        src = sb3_files.source(load_path, "")
        if sb3_files.is_archive(src):
            return load_vec_normalize(src, venv)
        _legacy(switch, src, "VecNormalize statistics")
        if switch.legacy == "pickle":
            return original(load_path, venv)
        if sb3_files.is_file_object(src):
            src.seek(0)
            src = src.read()
        return vecnormalize.wrap(vecnormalize.read(src), venv)

    return load


def _policy_save(self: Any, path: Any) -> None:
    from .policy_file import save_policy

    report = save_policy(self, path)
    _warn_opaque(report, f"{type(self).__name__}.save")


def _policy_load(switch: ArchiveSwitch, original: Callable[..., Any]) -> Callable[..., Any]:
    def load(cls: Any, path: Any, device: Any = "auto") -> Any:
        from .policy_file import load_policy

        src = sb3_files.source(path, "")
        if not sb3_files.is_archive(src):
            if switch.legacy == "pickle":
                return original(cls, path, device)
            raise RlarchiveError(
                "ARCHIVE_NOT_RLARCHIVE",
                f"{sb3_files.describe(src)} is not an rlarchive: a policy SB3 saved is a torch.save pickle, which only "
                "use_archives(legacy='pickle') loads (trusted files only)",
            )
        return load_policy(cls, src, device, allow_classes=switch.allow_classes)

    return load
