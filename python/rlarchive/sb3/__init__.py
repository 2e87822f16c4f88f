"""Stable-Baselines3 interoperability: import SB3 ``.zip`` models, export them back, load models.

An SB3 model file is a ZIP holding:

- ``data``: a JSON object of the algorithm's attributes; every value JSON cannot
  carry is a ``{":type:": ..., ":serialized:": BASE64-CLOUDPICKLE, ...}`` object;
- ``policy.pth`` and one ``*.pth`` per optimizer (``policy.optimizer.pth``,
  ``actor.optimizer.pth``, ...): ``torch.save`` state dicts;
- ``pytorch_variables.pth``: extra tensors (SAC's ``log_ent_coef``, ...);
- ``_stable_baselines3_version`` and ``system_info.txt``: plain text.

:func:`import_archive` turns that into an rlarchive *without running any code
from the file*: pickled values go through :mod:`rlarchive.unpickle` (an
allow-listed restricted unpickler that rebuilds spaces, arrays, schedules and
class names as neutral values, and keeps anything else as an opaque pickle,
listed in the returned :class:`ImportReport`), and ``.pth`` members are read
with ``torch.load(weights_only=True)``.

:func:`export_archive` writes an SB3 ``.zip`` that ``stable_baselines3``'s own
``load`` accepts, and :func:`load` builds a ready SB3 model straight from an
rlarchive. Both rebuild real gymnasium spaces and SB3 schedule objects from
the neutral values; class references are resolved only for the exact names
of :data:`ALLOWED_CLASSES` (plus any the caller adds), through
:meth:`rlarchive.values.ClassRef.resolve`, and :func:`load` hands SB3 only the
data keys :data:`LOAD_KEYS` lets through. Imports are bounded by one
:class:`~rlarchive.unpickle.budget.ImportBudget`. See
``spec/annex-b-stable-baselines.md`` for the full mapping.

stable_baselines3, torch, gymnasium and cloudpickle are imported only by the
functions that need them.

The bridge is split along its seams; this module gathers its public API:

- :mod:`~rlarchive.sb3.model_zip`: reading an SB3 (or SB2) zip and decoding its ``data``, the :class:`ImportReport`;
- :mod:`~rlarchive.sb3.keys`: the data-key table and load rules, the allow-list, the metadata keys;
- :mod:`~rlarchive.sb3.importing`: SB3 zip -> rlarchive (:func:`import_archive`);
- :mod:`~rlarchive.sb3.saving`: live model -> rlarchive (:func:`save`);
- :mod:`~rlarchive.sb3.values`: neutral values -> SB3 objects, an archive's parts;
- :mod:`~rlarchive.sb3.exporting`: rlarchive -> SB3 zip (:func:`export_archive`);
- :mod:`~rlarchive.sb3.loading`: rlarchive -> live model (:func:`load`);
- :mod:`~rlarchive.sb3.parts`, :mod:`~rlarchive.sb3.policy_file`: archives holding one part
  (a replay buffer, VecNormalize statistics, a policy): the twins of ``save_replay_buffer``,
  ``VecNormalize.save`` and ``policy.save`` and their loads;
- :mod:`~rlarchive.sb3.switch`: :func:`use_archives`, which routes SB3's own persistence methods
  through these; :mod:`~rlarchive.sb3.callbacks`: ``CheckpointCallback`` and ``EvalCallback`` writing archives.
"""

from __future__ import annotations

import os
from typing import Any

from .exporting import ExportWarning, export_archive
from .importing import import_archive, infer_algorithm
from .keys import (
    ALLOWED_CLASSES,
    ARCHITECTURE_KEYS,
    LOAD_KEYS,
    LoadWarning,
    optimizer_left_out,
)
from .keys import (
    # the metadata keys the bridge writes, importable here as before
    META_ALGORITHM as META_ALGORITHM,
)
from .keys import (
    META_ALGORITHM_CLASS as META_ALGORITHM_CLASS,
)
from .keys import (
    META_SOURCE as META_SOURCE,
)
from .keys import (
    META_SYSTEM_INFO as META_SYSTEM_INFO,
)
from .keys import (
    META_TORCH_VALUES as META_TORCH_VALUES,
)
from .keys import (
    META_VERSION as META_VERSION,
)
from .loading import RestoreReport, load
from .model_zip import ImportReport, OpaqueValue
from .parts import load_replay_buffer, load_vec_normalize, save_replay_buffer, save_vec_normalize
from .policy_file import load_policy, save_policy
from .saving import save
from .switch import ArchiveSwitch, SaveWarning, use_archives

__all__ = [
    "ImportReport",
    "OpaqueValue",
    "ALLOWED_CLASSES",
    "LOAD_KEYS",
    "import_archive",
    "import_zoo",
    "export_archive",
    "load",
    "load_vec_normalize",
    "save",
    "infer_algorithm",
    "ARCHITECTURE_KEYS",
    "LoadWarning",
    "RestoreReport",
    "ExportWarning",
    "optimizer_left_out",
    "use_archives",
    "ArchiveSwitch",
    "SaveWarning",
    "save_replay_buffer",
    "load_replay_buffer",
    "save_vec_normalize",
    "save_policy",
    "load_policy",
]


def __getattr__(name: str) -> Any:
    """The callback twins (:mod:`rlarchive.sb3.callbacks`), imported with stable-baselines3 on first use."""
    if name in ("CheckpointCallback", "EvalCallback"):
        from . import callbacks as sb3_callbacks

        return getattr(sb3_callbacks, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def import_zoo(run_folder: str | os.PathLike[str], out_path: str | os.PathLike[str], **kwargs: Any) -> ImportReport:
    """Convert an RL Zoo run folder into an rlarchive (Annex B.12): :func:`rlarchive.zoo.import_zoo`."""
    from ..zoo import import_zoo as run

    report: ImportReport = run(run_folder, out_path, **kwargs)
    return report
