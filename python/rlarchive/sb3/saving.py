"""A live Stable-Baselines3 or sb3-contrib model into an rlarchive (:func:`save`), with no zip written.

The model's attributes are converted exactly as the import converts a saved
zip (:mod:`rlarchive.sb3.importing`), so that the archive equals the
import of ``model.save(...)``'s zip. With ``background=True`` the archive is
written on a thread of its own while training goes on
(:mod:`rlarchive.sb3.background`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ..errors import RlarchiveError
from ..extensions import replay_buffer as replay_buffer_ext
from ..extensions import training as training_state
from ..unpickle.budget import DEFAULT_IMPORT_BUDGET, ImportBudget
from . import files as sb3_files
from .importing import add_state, add_variables, charge_tensors, prepare_import, read_vec_normalize
from .keys import META_SOURCE, META_VERSION
from .model_zip import ImportReport, decode_pickle
from .values import is_json_serializable, map_leaves

__all__ = ["save", "decode_attributes"]


def save(
    model: Any,
    path: str | os.PathLike[str],
    *,
    vec_normalize: Any = None,
    budget: int | ImportBudget | None = None,
    training: bool | None = None,
    replay_buffer: bool = False,
    metadata: Mapping[str, str] | None = None,
    provenance: bool = True,
    exclude: Iterable[str] | None = None,
    include: Iterable[str] | None = None,
    background: bool = False,
) -> Any:
    """Write an rlarchive straight from a live Stable-Baselines3 or sb3-contrib model.

    The model's attributes are taken as SB3's ``save`` takes them (the same
    exclusions, the same state dicts, optimizers and pytorch variables) and
    converted exactly as :func:`~rlarchive.sb3.import_archive` converts a saved zip: values
    JSON can hold stay, every other one goes through the restricted unpickler
    (B.3), so the archive equals the import of ``model.save(...)``'s zip; no
    zip is written. The algorithm is the model's class when it is one of
    :data:`rlarchive.sb3.algorithms.ALGORITHMS`, else told from the data.

    Args:
        model: the SB3 model.
        path: the rlarchive to write (replaced atomically), or a writable
            binary file object (the archive is built in a temporary file,
            then copied into it at its position; it is left open), as SB3's
            ``save`` takes ``str | pathlib.Path | io.BufferedIOBase``.
        vec_normalize: the ``VecNormalize`` wrapper the model was trained in
            (its statistics are read from its attributes), a ``vecnormalize.pkl``
            path, or :class:`rlarchive.extensions.vec_normalize.Statistics`; stored as the
            extension ``RLA_vec_normalize``.
        budget: as for :func:`~rlarchive.sb3.import_archive` (default: 256 MiB or 4 times the parameters' size).
        training: also store the run state and the random state ``learn``
            goes on from (extension ``RLA_training``), taken before anything
            else is read, so that :func:`~rlarchive.sb3.load` with ``force_reset=False`` and
            ``learn(..., reset_num_timesteps=False)`` go on as the model would
            have; by default (None), stored when ``replay_buffer`` is true.
        replay_buffer: also store the model's replay buffer (extension
            ``RLA_replay_buffer``, no pickle), written straight from the
            buffer's arrays (no copy is made). A model without one (an
            on-policy algorithm) or with a buffer the extension cannot hold
            (another class; an info dict of a ``HerReplayBuffer`` with
            ``copy_info_dict=True`` that the value model cannot hold, or
            info dicts beyond ``MAX_JSON_BYTES``) is written without it; the
            report's notes say so. A buffer its reader would refuse (a
            position beyond the size, HER indices out of range, spaces that
            differ from the model's: every rule of spec RLA_replay_buffer
            §4) is refused before anything is written.
        metadata: the caller's manifest metadata (string to string), over what
            save records itself (spec/metadata.md §5): ``env_id`` (the
            ``spec.id`` of the first environment of ``model.get_env()``),
            ``n_envs``, ``num_timesteps``, ``seed``, the installed
            ``versions.*`` and the ``wrappers`` of the model's ``VecEnv``
            chain (frame stacking, image transposition, normalisation). The
            bridge's own keys (``source``, ``sb3.*``) are always save's.
        provenance: record what save finds (above); False records only the
            bridge's keys and ``metadata``, so that the archive does not
            depend on the installed versions of Python, NumPy or gymnasium
            (the test vectors are made so).
        exclude: attribute names to leave out besides those SB3 always
            leaves out (``_excluded_save_params``), as in SB3's ``save``.
        include: attribute names to keep even when excluded (SB3's
            ``include``); the torch state dicts and variables stay out of
            the data either way.
        background: take what the archive holds now and write it on a thread
            of its own, returning at once a
            :class:`~rlarchive.sb3.background.BackgroundSave` (``done()``,
            ``wait()``, ``result()``: the report). The parameters, optimizer
            states, run state and the replay buffer's small arrays are copied
            here; the buffer's large arrays are not (a row that training
            overwrites before it is written is copied first:
            :mod:`rlarchive.sb3.buffer_snapshot`). The archive is the one
            a save without ``background`` would have written at this moment,
            byte for byte, and appears at ``path`` only once complete. One
            save is in flight at a time: every save first waits for the one
            in flight, and raises its error if nobody took it from its handle;
            at exit, the process waits for it and prints an error nobody took.
    Returns:
        The :class:`~rlarchive.sb3.ImportReport` of what was stored: its ``notes`` say
        whether the replay buffer was stored (with its size) or why not, and
        whether the run state and the random state were (``training``). With
        ``background``, the :class:`~rlarchive.sb3.background.BackgroundSave`
        whose ``result()`` it is.
    Raises:
        RlarchiveError: EXTENSION_INVALID (with the pointer the reader would
            give) for a replay buffer its reader would refuse;
            VALUE_UNSUPPORTED for a run state the extension cannot hold (an
            action noise of another class); as :func:`~rlarchive.sb3.import_archive`
            otherwise. The destination is then left as it was.
    """
    import stable_baselines3
    from stable_baselines3.common.save_util import recursive_getattr

    from . import algorithms
    from . import background as background_mod
    from . import provenance as provenance_mod

    background_mod.settle()  # the save in flight first: its error, if nobody took it, is raised here
    if sb3_files.is_file_object(path):
        if background:
            raise ValueError("background=True writes to a path, not to a file object")
        return sb3_files.write(
            path,
            lambda temp: save(
                model,
                temp,
                vec_normalize=vec_normalize,
                budget=budget,
                training=training,
                replay_buffer=replay_buffer,
                metadata=metadata,
                provenance=provenance,
                exclude=exclude,
                include=include,
            ),
        )
    given_metadata = provenance_mod.merged({}, metadata)  # checked before any work
    extra, notes = _extensions(model, training, replay_buffer)
    data, torch_variable_names = _attributes(model, exclude, include)
    params = model.get_parameters()
    size = sum(t.numel() * t.element_size() for sd in params.values() for t in _tensors_in(sd))
    if not isinstance(budget, ImportBudget):
        budget = ImportBudget(budget if budget is not None else max(DEFAULT_IMPORT_BUDGET, 4 * size))
    report = ImportReport(source="stable-baselines3", output=os.fspath(path))
    report.notes.extend(notes)
    decoded = decode_attributes(data, report, budget)
    tensors: dict[str, dict[str, Any]] = {}
    optimizers: dict[str, Any] = {}
    for name, state in params.items():
        charge_tensors(state, budget, name)
        add_state(name, state, name, tensors, optimizers)
    add_variables({n: recursive_getattr(model, n) for n in torch_variable_names}, "pytorch variables", tensors, report)
    metadata = {
        **provenance_mod.merged(provenance_mod.from_model(model, vec_normalize) if provenance else {}, given_metadata),
        META_SOURCE: "stable-baselines3",
        META_VERSION: stable_baselines3.__version__,
    }
    report.library_version = stable_baselines3.__version__
    cls = type(model)
    known = algorithms.ALGORITHMS.get(cls.__name__)
    algorithm = cls.__name__ if known is not None and known.ref.name == f"{cls.__module__}.{cls.__qualname__}" else None
    stats = read_vec_normalize(vec_normalize, budget)
    if not background:
        with _refusals():
            write = prepare_import(
                path, decoded, tensors, optimizers, metadata, report, algorithm, stats, model, extension_values=extra
            )
        return write()
    from . import buffer_snapshot

    tensors, optimizers, stats = _copied(tensors), _copied(optimizers), _copied(stats)
    extra = {k: v if k == replay_buffer_ext.EXTENSION else _copied(v) for k, v in extra.items()}
    held = None
    try:
        if replay_buffer_ext.EXTENSION in extra:
            extra[replay_buffer_ext.EXTENSION], held = buffer_snapshot.take(
                model.replay_buffer, extra[replay_buffer_ext.EXTENSION]
            )
        with _refusals():
            write = prepare_import(
                path, decoded, tensors, optimizers, metadata, report, algorithm, stats, model, extension_values=extra
            )
    except BaseException:
        if held is not None:
            held.close()
        raise
    return background_mod.start(path, write, held.close if held is not None else _nothing)


@contextmanager
def _refusals() -> Iterator[None]:
    """The writer's refusal of the replay buffer or the run state (checked before anything is written, as a
    reader checks them) raised as the reader's error: EXTENSION_INVALID (or a value code) at its pointer."""
    from ..writer import refusal

    try:
        yield
    except RlarchiveError as e:
        found = refusal(e)
        if found is not e and found.member in (replay_buffer_ext.MEMBER, training_state.MEMBER):
            raise found from None
        raise


def _nothing() -> None:
    return None


def _copied(obj: Any) -> Any:
    """``obj`` with every tensor and array in it copied (maps, lists and tuples rebuilt; other values kept):
    what a background save holds while training changes the originals in place."""
    import dataclasses

    import numpy as np
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, Mapping):
        return {k: _copied(v) for k, v in obj.items()}
    if type(obj) in (list, tuple):
        return type(obj)(_copied(v) for v in obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):  # the VecNormalize statistics
        return dataclasses.replace(obj, **{f.name: _copied(getattr(obj, f.name)) for f in dataclasses.fields(obj)})
    return obj


def _extensions(model: Any, training: bool | None, replay_buffer: bool) -> tuple[dict[str, Any], list[str]]:
    """(the run state and replay buffer values to store, as :func:`save` is asked; the report's notes on them).

    The run state is taken first, before anything else is read from the model.
    """
    from . import run_state

    extra: dict[str, Any] = {}
    notes = []
    if training or (training is None and replay_buffer):
        extra[training_state.EXTENSION] = run_state.capture(model)
        notes.append(
            f"run state and random state stored as the extension {training_state.EXTENSION}: {run_state.describe(extra[training_state.EXTENSION])}"
        )
    else:
        notes.append(
            "run state and random state not stored (training=True or replay_buffer=True keeps them, for training to go on)"
        )
    if replay_buffer:
        from . import replay_buffer as buffers

        buffer = getattr(model, "replay_buffer", None)
        try:
            if buffer is None:
                raise RlarchiveError("VALUE_UNSUPPORTED", f"a {type(model).__name__} model has no replay buffer")
            extra[replay_buffer_ext.EXTENSION] = buffers.capture(buffer)
            notes.insert(
                0,
                f"replay buffer stored as the extension {replay_buffer_ext.EXTENSION}: {buffers.describe(extra[replay_buffer_ext.EXTENSION])}",
            )
        except RlarchiveError as e:
            notes.insert(0, f"replay buffer not stored: {e.message}")
    return extra, notes


def _attributes(
    model: Any, exclude: Iterable[str] | None = None, include: Iterable[str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """(the model's attributes SB3's ``save`` puts in ``data``, with its exclusions, ``exclude`` and ``include``
    applied as SB3 applies them; the names of its pytorch variables)."""
    if isinstance(exclude, str) or isinstance(include, str):
        raise TypeError("exclude and include must be lists of attribute names, not a string")
    data = model.__dict__.copy()
    left_out = set(exclude or ()).union(model._excluded_save_params())
    left_out.difference_update(include or ())
    state_dicts_names, torch_variable_names = model._get_torch_save_params()
    for name in list(state_dicts_names) + list(torch_variable_names):
        left_out.add(name.split(".")[0])
    for name in left_out:
        data.pop(name, None)
    return data, list(torch_variable_names)


def decode_attributes(data: Mapping[str, Any], report: ImportReport, budget: ImportBudget) -> dict[str, Any]:
    """The attributes as the import decodes SB3's ``data``: JSON values as SB3 writes them, others through the restricted unpickler."""
    import cloudpickle

    decoded: dict[str, Any] = {}
    for key, value in data.items():
        if is_json_serializable(value):
            decoded[key] = json.loads(json.dumps(value))  # as SB3's data member holds it
        else:
            decoded[key] = decode_pickle(
                key, cloudpickle.dumps(value), f"{type(value).__module__}.{type(value).__qualname__}", report, budget
            )
    return decoded


def _tensors_in(obj: Any) -> list[Any]:
    """The tensors inside ``obj`` (a state dict, an optimizer state)."""
    out: list[Any] = []
    map_leaves(obj, lambda x: out.append(x) if hasattr(x, "element_size") else None)
    return out
