"""A Stable-Baselines3 policy alone as an archive: the twin of ``policy.save(path)`` and ``PolicyClass.load(path)``.

SB3's ``BaseModel.save`` writes ``torch.save({"state_dict": ..., "data":
policy._get_constructor_parameters()})`` and ``load`` calls the class with
that data. :func:`save_policy` writes an archive of part ``policy``
(spec/metadata.md §8, Annex B.13): in ``data`` each constructor parameter as
a value (spaces, numbers, class references; the policy's own class as
``policy_class``) and in the tensor group ``policy`` the state dict.
A parameter that is a module (the ``features_extractor`` SB3 hands to an
``Actor``, a ``QNetwork`` or a ``QuantileNetwork``) is written as the map
``{"class": CLASS, "kwargs": {...}}`` for the extractors of SB3
(``FlattenExtractor``, ``NatureCNN``, ``CombinedExtractor``), and rebuilt
around the policy's observation space. :func:`load_policy` builds the
caller's class from those values (classes resolved under the allow-list, no
pickle) and loads the state dict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import RlarchiveError
from ..unpickle.budget import DEFAULT_IMPORT_BUDGET, ImportBudget
from . import files as sb3_files
from .keys import ALLOWED_CLASSES
from .model_zip import ImportReport

__all__ = ["save_policy", "load_policy"]

_EXTRACTOR = "features_extractor"
# the data key naming the saved policy's class (not a constructor parameter)
_CLASS = "policy_class"
# a schedule SB3 passes only so that the optimizer can be built: the loading class gives its own
_SCHEDULE = "lr_schedule"


def _extractor_value(module: Any, observation_space: Any) -> dict[str, Any]:
    """The ``{"class", "kwargs"}`` map of one of SB3's features extractors (VALUE_UNSUPPORTED for another module)."""
    from stable_baselines3.common.preprocessing import is_image_space
    from stable_baselines3.common.torch_layers import CombinedExtractor, FlattenExtractor, NatureCNN

    cls = type(module)
    if cls is FlattenExtractor:
        return {"class": cls, "kwargs": {}}
    if cls is NatureCNN:
        raw = is_image_space(observation_space, check_channels=False, normalized_image=False)
        return {"class": cls, "kwargs": {"features_dim": int(module.features_dim), "normalized_image": not raw}}
    if cls is CombinedExtractor:
        cnns = {k: m for k, m in module.extractors.items() if isinstance(m, NatureCNN)}
        normalized = any(not is_image_space(observation_space[k], normalized_image=False) for k in cnns)
        dim = next(iter(cnns.values())).features_dim if cnns else 256
        return {"class": cls, "kwargs": {"cnn_output_dim": int(dim), "normalized_image": normalized}}
    raise RlarchiveError(
        "VALUE_UNSUPPORTED",
        f"the policy's features extractor {cls.__module__}.{cls.__qualname__} is not one of Stable-Baselines3's "
        "(FlattenExtractor, NatureCNN, CombinedExtractor): an archive cannot say how to build it",
    )


def save_policy(policy: Any, path: Any) -> ImportReport:
    """Write an SB3 policy (any ``BaseModel``: a policy, an actor, a Q-network) alone as an archive (part ``policy``).

    Args:
        policy: the module.
        path: the archive (written as it is, atomically) or a writable binary file object.
    Returns:
        The report of what was stored (``opaque`` lists any parameter kept as an opaque pickle).
    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for a features extractor of another class.
    """
    from ..writer import save
    from .importing import add_state
    from .parts import part_metadata
    from .saving import decode_attributes

    params = dict(policy._get_constructor_parameters())
    if isinstance(params.get(_EXTRACTOR), _torch_module()):
        params[_EXTRACTOR] = _extractor_value(params[_EXTRACTOR], params.get("observation_space"))
    params[_CLASS] = type(policy)
    report = ImportReport(source="stable-baselines3", output=sb3_files.describe(path))
    data = decode_attributes(
        {k: v for k, v in params.items() if not _plain(v)}, report, ImportBudget(DEFAULT_IMPORT_BUDGET)
    )
    data = {k: (data[k] if k in data else params[k]) for k in params}
    tensors: dict[str, dict[str, Any]] = {}
    add_state("policy", policy.state_dict(), "policy", tensors, {})
    report.tensor_groups = {g: len(t) for g, t in tensors.items()}
    sb3_files.write(path, lambda target: save(target, data, tensors, metadata=part_metadata("policy")))
    return report


def _torch_module() -> type:
    import torch

    return torch.nn.Module


def _plain(v: Any) -> bool:
    """Whether SB3 would keep ``v`` in JSON (and so the writer takes it as it is)."""
    from .values import is_json_serializable

    return is_json_serializable(v)


def load_policy(cls: type, path: Any, device: Any = "auto", *, allow_classes: Iterable[str] = ()) -> Any:
    """Build ``cls`` (an SB3 ``BaseModel`` subclass) from a policy archive and load its weights, as ``cls.load(path)`` does.

    Class references are resolved under :data:`~rlarchive.sb3.ALLOWED_CLASSES`
    plus ``allow_classes``; ``lr_schedule`` (SB3 saves a placeholder) is the
    class's own ``_dummy_schedule`` when it has one. Nothing is unpickled.

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for an archive that is not a policy
            part or whose weights do not fit the class; IMPORT_NOT_ALLOWED for
            a class off the allow-list; PICKLE_NOT_ALLOWED for a parameter kept
            as an opaque pickle.
    """
    from stable_baselines3.common.utils import get_device

    from ..reader import open_archive
    from .parts import expect_part
    from .values import Rebuilder, archive_parts

    with open_archive(sb3_files.source(path, ""), spaces="neutral") as ar:
        expect_part(ar, path, ("policy",))
        data, _, params, _ = archive_parts(ar, copy=True)
    rb = Rebuilder("load", ALLOWED_CLASSES + tuple(allow_classes), data)
    kwargs = {k: _parameter(k, v, rb, cls, data) for k, v in data.items() if k != _CLASS}
    try:
        policy = cls(**kwargs)
    except (TypeError, ValueError, AssertionError) as e:
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            f"{cls.__name__} cannot be built from the archive's parameters: {type(e).__name__}: {e}",
        ) from None
    try:
        policy.load_state_dict(params.get("policy", {}))
    except RuntimeError as e:
        raise RlarchiveError(
            "VALUE_UNSUPPORTED", f"the archive's weights do not fit {cls.__name__}: {str(e)[:500]}"
        ) from None
    return policy.to(get_device(device))


def _parameter(key: str, value: Any, rb: Any, cls: type, data: Mapping[str, Any]) -> Any:
    """The object ``cls`` gets for the constructor parameter ``key``."""
    if key == _SCHEDULE and hasattr(cls, "_dummy_schedule"):
        return cls._dummy_schedule
    if key == _EXTRACTOR and isinstance(value, dict) and set(value) == {"class", "kwargs"}:
        extractor = rb.value(value["class"], key)
        space = rb.value(data.get("observation_space"), "observation_space")
        return extractor(space, **rb.value(value["kwargs"], key))
    return rb.top(key, value)
