"""Import an RL Zoo run folder (Annex B.12): the model zip, its VecNormalize statistics, its YAML files, its replay buffer.

The RL Zoo (``rl_zoo3``) saves a training run as a folder ``logs/ALGO/ENV_N/``
holding the final model ``ENV.zip`` (and ``best_model.zip`` when it evaluated
during training, ``replay_buffer.pkl`` when asked), and a sub-folder ``ENV/``
with ``config.yml`` (the hyperparameters), ``args.yml`` (the command line),
``vecnormalize.pkl`` when it normalised, and ``env_kwargs.yml`` in a run
downloaded from a model hub. A hub repository keeps the same files flat
(``ALGO-ENV.zip``, ``config.yml``, ``vec_normalize.pkl`` ...): both layouts
are read.

:func:`import_zoo` finds those files by listing the folder (no name read from
a file becomes a path), reads the YAML with the restricted reader of
:mod:`rlarchive.interop.zoo_yaml`, the pickles with the restricted unpickler,
and writes the archive through :func:`rlarchive.interop.sb3.import_archive`,
with the metadata of spec/metadata.md: ``env_id`` (from ``args.yml``, else the
folder's name), ``seed`` (``args.yml``), ``wrappers`` (the ``env_wrapper``,
``normalize`` and ``frame_stack`` of the config, in the order the zoo wraps),
``zoo.config`` and ``zoo.env_kwargs`` (the YAML as canonical JSON text). The
environment id is a hint: nothing resolves it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import jsonstrict
from .. import metadata as keys
from ..errors import RlarchiveError
from . import zoo_yaml

__all__ = ["import_zoo", "find_run", "RunFiles", "zoo_metadata"]

#: Most entries listed in a run folder or its parameter folder.
MAX_RUN_ENTRIES = 10_000
_RUN_SUFFIX = re.compile(r"_[0-9]+$")


@dataclass
class RunFiles:
    """The files of an RL Zoo run folder (absolute paths; None where absent)."""

    folder: str
    model: str
    params: str | None = None
    config: str | None = None
    args: str | None = None
    env_kwargs: str | None = None
    vec_normalize: str | None = None
    replay_buffer: str | None = None
    #: The environment's name as the folders spell it (``/`` written ``-``), or None.
    folder_env: str | None = None
    notes: list = field(default_factory=list)


def _entries(folder: str) -> dict[str, os.stat_result]:
    """Names in ``folder`` with their lstat (links are not followed to folders)."""
    out: dict[str, os.stat_result] = {}
    try:
        with os.scandir(folder) as it:
            for i, e in enumerate(it):
                if i >= MAX_RUN_ENTRIES:
                    raise RlarchiveError(
                        "LIMIT_EXCEEDED", f"{folder}: more than {MAX_RUN_ENTRIES} entries (MAX_RUN_ENTRIES)"
                    )
                try:
                    out[e.name] = os.stat(e.path)  # a link to a regular file is read as that file
                except OSError:  # a dangling link, a loop: not one of the run's files
                    continue
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot list {folder}: {e.strerror or e}") from None
    return out


def _file(entries: Mapping[str, os.stat_result], folder: str, name: str) -> str | None:
    st = entries.get(name)
    return os.path.join(folder, name) if st is not None and stat.S_ISREG(st.st_mode) else None


def find_run(folder: str | os.PathLike, best: bool = False) -> RunFiles:
    """The files of the run in ``folder`` (both the training layout and a hub repository's flat one).

    Args:
        folder: the run folder (``logs/ppo/CartPole-v1_1``).
        best: take ``best_model.zip`` rather than the final model.
    Raises:
        RlarchiveError: IO_ERROR when ``folder`` is not a readable folder,
            IMPORT_INVALID when it holds no model zip or is ambiguous.
    """
    top = os.fspath(folder)
    try:
        if not stat.S_ISDIR(os.stat(top).st_mode):
            raise RlarchiveError(
                "IO_ERROR", f"{top} is not a folder (give the run folder, e.g. logs/ppo/CartPole-v1_1)"
            )
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot open {top}: {e.strerror}") from None
    entries = _entries(top)
    # The parameter folder: the one sub-folder holding config.yml or args.yml (the zoo's layout), else the run folder.
    subs = sorted(n for n, st in entries.items() if stat.S_ISDIR(st.st_mode))
    params_names = [
        n
        for n in subs
        if any(_file(_entries(os.path.join(top, n)), os.path.join(top, n), f) for f in ("config.yml", "args.yml"))
    ]
    if len(params_names) > 1:
        raise RlarchiveError(
            "IMPORT_INVALID",
            f"{top}: more than one sub-folder with config.yml or args.yml ({', '.join(params_names[:5])}): give one run",
        )
    files = RunFiles(folder=top, model="")
    if params_names:
        files.params = os.path.join(top, params_names[0])
        files.folder_env = params_names[0]
        pentries = _entries(files.params)
        where, wentries = files.params, pentries
    else:
        where, wentries = top, entries
        stem = _RUN_SUFFIX.sub("", os.path.basename(os.path.normpath(top)))
        files.folder_env = stem or None
    files.config = _file(wentries, where, "config.yml")
    files.args = _file(wentries, where, "args.yml")
    files.env_kwargs = _file(wentries, where, "env_kwargs.yml") or _file(entries, top, "env_kwargs.yml")
    files.vec_normalize = (
        _file(wentries, where, "vecnormalize.pkl")
        or _file(entries, top, "vec_normalize.pkl")
        or _file(entries, top, "vecnormalize.pkl")
    )
    files.replay_buffer = _file(entries, top, "replay_buffer.pkl")
    zips = sorted(n for n in entries if n.endswith(".zip") and _file(entries, top, n))
    final = f"{params_names[0]}.zip" if params_names else None
    checkpoints = [
        n for n in zips if n.startswith("rl_model_") or n == "best_model.zip" or n == "train_eval_metrics.zip"
    ]
    if best:
        if "best_model.zip" not in zips:
            raise RlarchiveError(
                "IMPORT_INVALID", f"{top}: no best_model.zip (the run did not evaluate during training)"
            )
        files.model = os.path.join(top, "best_model.zip")
    elif final is not None and final in zips:
        files.model = os.path.join(top, final)
    else:
        others = [n for n in zips if n not in checkpoints]
        if len(others) == 1:
            files.model = os.path.join(top, others[0])
        elif not others and "best_model.zip" in zips:
            files.model = os.path.join(top, "best_model.zip")
            files.notes.append("no final model: best_model.zip imported")
        else:
            what = f"{len(others)} candidate model zips ({', '.join(others[:5])})" if others else "no model zip"
            raise RlarchiveError("IMPORT_INVALID", f"{top}: not an RL Zoo run folder: {what}")
    return files


def _object(value: Any, what: str) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RlarchiveError("IMPORT_INVALID", f"{what}: expected a mapping, found {type(value).__name__}")
    return value


def _json_text(value: Any, what: str) -> str:
    try:
        text = jsonstrict.canonical(value).decode("utf-8")
    except (ValueError, TypeError) as e:  # not reached: the YAML reader builds only JSON values
        raise RlarchiveError("IMPORT_INVALID", f"{what}: {e}") from None
    return text


def _wrapper_entries(config: Mapping[str, Any], stats: Any) -> list[dict]:
    """The ``wrappers`` of spec/metadata.md §2, in the zoo's order: env_wrapper, VecNormalize, VecFrameStack."""
    out: list[dict] = []
    env_wrapper = config.get("env_wrapper")
    for w in env_wrapper if isinstance(env_wrapper, list) else [env_wrapper] if env_wrapper is not None else []:
        if isinstance(w, str):
            out.append({"name": w})
        elif isinstance(w, dict) and len(w) == 1:
            ((name, kwargs),) = w.items()
            entry: dict = {"name": name}
            if isinstance(kwargs, dict):
                entry.update({k: v for k, v in kwargs.items() if k != "name"})
            out.append(entry)
    normalize = config.get("normalize")
    if stats is not None or (normalize not in (None, False)):
        entry = {"name": "VecNormalize"}
        if stats is not None:
            entry.update(norm_obs=bool(stats.norm_obs), norm_reward=bool(stats.norm_reward))
        elif isinstance(normalize, dict):
            entry.update({k: normalize[k] for k in ("norm_obs", "norm_reward") if isinstance(normalize.get(k), bool)})
        out.append(entry)
    n = config.get("frame_stack")
    if isinstance(n, int) and not isinstance(n, bool) and n >= 1:
        out.append({"name": "VecFrameStack", "n_stack": n, "channels_order": "last"})
    return [w for w in out if keys.check_value(keys.WRAPPERS, jsonstrict.canonical([w]).decode()) is None]


def zoo_metadata(files: RunFiles, stats: Any = None) -> tuple[dict[str, str], list[str]]:
    """The metadata an RL Zoo run gives (spec/metadata.md, Annex B.12), and notes on what was left out."""
    notes: list[str] = []
    out: dict[str, str] = {}
    config = _object(zoo_yaml.load(files.config, "config.yml"), "config.yml") if files.config else None
    args = _object(zoo_yaml.load(files.args, "args.yml"), "args.yml") if files.args else None
    env_kwargs = (
        _object(zoo_yaml.load(files.env_kwargs, "env_kwargs.yml"), "env_kwargs.yml") if files.env_kwargs else None
    )
    if env_kwargs is None and args is not None:
        env_kwargs = args.get("env_kwargs") if isinstance(args.get("env_kwargs"), dict) else None
    env_id = args.get("env") if args is not None else None
    if not (isinstance(env_id, str) and keys.check_value(keys.ENV_ID, env_id) is None):
        if env_id is not None:
            notes.append("args.yml: env is not an environment id (spec/metadata.md §1): the folder's name is used")
        env_id = files.folder_env
    if env_id and keys.check_value(keys.ENV_ID, env_id) is None:
        out[keys.ENV_ID] = env_id
    seed = args.get("seed") if args is not None else None
    if isinstance(seed, int) and not isinstance(seed, bool) and keys.check_value(keys.SEED, str(seed)) is None:
        out[keys.SEED] = str(seed)
    if config is not None:
        out[keys.ZOO_CONFIG] = _json_text(config, "config.yml")
    if env_kwargs:
        out[keys.ZOO_ENV_KWARGS] = _json_text(env_kwargs, "env_kwargs.yml")
    wrappers = _wrapper_entries(config or {}, stats)
    if wrappers:
        out[keys.WRAPPERS] = jsonstrict.canonical(wrappers).decode("utf-8")
    return out, notes


def import_zoo(
    run_folder: str | os.PathLike,
    out_path: str | os.PathLike,
    *,
    best: bool = False,
    replay_buffer: bool = True,
    algorithm: str | None = None,
    budget: int | None = None,
    metadata: Mapping[str, str] | None = None,
) -> Any:
    """Convert an RL Zoo run folder into an rlarchive, running no code from it (Annex B.12).

    Args:
        run_folder: the run's folder (``logs/ALGO/ENV_N``) or a hub repository's files.
        out_path: the rlarchive to write (replaced atomically).
        best: import ``best_model.zip`` rather than the final model.
        replay_buffer: also store ``replay_buffer.pkl`` when the run has one.
        algorithm: as :func:`rlarchive.interop.sb3.import_archive`.
        budget: bytes each import step may allocate (as ``import_archive``).
        metadata: the caller's metadata, over what the run gives.
    Returns:
        The :class:`~rlarchive.interop.sb3.ImportReport`, with notes naming the run's files.
    Raises:
        RlarchiveError: IO_ERROR for a folder that cannot be read, IMPORT_INVALID
            for a folder that is not a run or a file that is not what it should be,
            LIMIT_EXCEEDED beyond a bound of the YAML reader or the budget, and
            what ``import_archive`` raises.
    """
    from . import provenance, vecnormalize
    from . import sb3_import as rsb3

    given = provenance.merged({}, metadata)  # checked before any work
    files = find_run(run_folder, best=best)
    stats = vecnormalize.read(files.vec_normalize, budget=budget) if files.vec_normalize else None
    found, notes = zoo_metadata(files, stats)
    merged = provenance.merged(found, given)
    report = rsb3.import_archive(
        files.model,
        out_path,
        algorithm=algorithm,
        budget=budget,
        vec_normalize=stats,
        replay_buffer=files.replay_buffer if replay_buffer else None,
        metadata=merged,
    )
    used = [
        os.path.relpath(p, files.folder)
        for p in (files.model, files.config, files.args, files.env_kwargs, files.vec_normalize)
        if p
    ]
    if replay_buffer and files.replay_buffer:
        used.append(os.path.relpath(files.replay_buffer, files.folder))
    report.notes[:0] = [f"RL Zoo run: read {', '.join(used)}"] + files.notes + notes
    if files.replay_buffer and not replay_buffer:
        report.notes.append("replay_buffer.pkl left out (asked)")
    return report
