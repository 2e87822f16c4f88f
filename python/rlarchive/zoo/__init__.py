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
a file becomes a path) without leaving it (:mod:`rlarchive.zoo.run_folder`:
a link that leads out of the folder is not followed, a FIFO or a device is
not read, and the report says which entries were skipped), opens each file
without following links, reads the YAML with the restricted reader of
:mod:`rlarchive.zoo.yaml_reader`, the pickles with the restricted unpickler,
and writes the archive through :func:`rlarchive.sb3.import_archive`,
with the metadata of spec/metadata.md: ``env_id`` (from ``args.yml``, else the
folder's name), ``seed`` (``args.yml``), ``wrappers`` (the ``env_wrapper``,
``normalize`` and ``frame_stack`` of the config, in the order the zoo wraps),
``zoo.config`` and ``zoo.env_kwargs`` (the YAML as canonical JSON text). The
environment id is a hint: nothing resolves it.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from .. import jsonstrict
from .. import metadata as keys
from ..errors import RlarchiveError
from ..filenames import escape_name
from . import yaml_reader as zoo_yaml
from .run_folder import MAX_RUN_ENTRIES, Entry, entries, open_file

__all__ = ["import_zoo", "find_run", "RunFiles", "zoo_metadata", "MAX_RUN_ENTRIES"]

_RUN_SUFFIX = re.compile(r"_[0-9]+$")
#: Most notes on skipped entries a report lists (then how many more).
_MAX_SKIP_NOTES = 20


@dataclass
class RunFiles:
    """The files of an RL Zoo run folder (paths inside ``folder``, links resolved; None where absent)."""

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
    #: The best model ``EvalCallback`` saved (``best_model.zip``), or None.
    best_model: str | None = None
    notes: list[str] = field(default_factory=list)

    def open(self, path: str) -> BinaryIO:
        """One of the run's files, opened without following links (:func:`rlarchive.zoo.run_folder.open_file`)."""
        return open_file(self.folder, os.path.relpath(path, self.folder))


def _file(listed: Mapping[str, Entry], top: str, name: str) -> str | None:
    e = listed.get(name)
    return os.path.join(top, e.rel) if e is not None and e.kind == "file" else None


def _skip_notes(notes: list[str]) -> list[str]:
    if len(notes) <= _MAX_SKIP_NOTES:
        return notes
    return notes[:_MAX_SKIP_NOTES] + [f"and {len(notes) - _MAX_SKIP_NOTES} more entries skipped"]


def _top(folder: str | os.PathLike[str]) -> str:
    top = os.fspath(folder)
    try:
        if not stat.S_ISDIR(os.stat(top).st_mode):
            raise RlarchiveError(
                "IO_ERROR", f"{escape_name(top)} is not a folder (give the run folder, e.g. logs/ppo/CartPole-v1_1)"
            )
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot open {escape_name(top)}: {e.strerror}") from None
    return top


def _params(top: str, listed: Mapping[str, Entry], skipped: list[str]) -> tuple[str | None, dict[str, Entry]]:
    """The parameter folder: the one sub-folder holding config.yml or args.yml (the zoo's layout), and its entries."""
    found: list[tuple[str, str, dict[str, Entry]]] = []
    for name, e in listed.items():
        if e.kind != "folder":
            continue
        inner, notes = entries(top, e.rel)
        if any(_file(inner, top, f) for f in ("config.yml", "args.yml")):
            found.append((name, e.rel, inner))
            skipped += notes
    if len(found) > 1:
        names = ", ".join(escape_name(n) for n, _, _ in found[:5])
        raise RlarchiveError(
            "IMPORT_INVALID",
            f"{escape_name(top)}: more than one sub-folder with config.yml or args.yml ({names}): give one run",
        )
    return (found[0][0], found[0][2]) if found else (None, {})


def find_run(folder: str | os.PathLike[str], best: bool = False) -> RunFiles:
    """The files of the run in ``folder`` (both the training layout and a hub repository's flat one).

    Args:
        folder: the run folder (``logs/ppo/CartPole-v1_1``).
        best: take ``best_model.zip`` rather than the final model.
    Raises:
        RlarchiveError: IO_ERROR when ``folder`` is not a readable folder,
            IMPORT_INVALID when it holds no model zip or is ambiguous.
    """
    top = _top(folder)
    listed, skipped = entries(top)
    params_name, plisted = _params(top, listed, skipped)
    files = RunFiles(folder=top, model="")
    if params_name is not None:
        files.params = os.path.join(top, listed[params_name].rel)
        files.folder_env = params_name
        where = plisted
    else:
        where = listed
        stem = _RUN_SUFFIX.sub("", os.path.basename(os.path.normpath(top)))
        files.folder_env = stem or None
    files.config = _file(where, top, "config.yml")
    files.args = _file(where, top, "args.yml")
    files.env_kwargs = _file(where, top, "env_kwargs.yml") or _file(listed, top, "env_kwargs.yml")
    files.vec_normalize = (
        _file(where, top, "vecnormalize.pkl")
        or _file(listed, top, "vec_normalize.pkl")
        or _file(listed, top, "vecnormalize.pkl")
    )
    files.replay_buffer = _file(listed, top, "replay_buffer.pkl")
    files.model = _model(top, listed, params_name, best, files.notes)
    files.best_model = _file(listed, top, "best_model.zip")
    files.notes[:0] = _skip_notes(skipped)
    return files


def _model(top: str, listed: Mapping[str, Entry], params_name: str | None, best: bool, notes: list[str]) -> str:
    """The model zip of the run: best_model.zip when asked, else the final model (named after the parameter folder,
    else the only zip that is not a checkpoint)."""
    zips = sorted(n for n in listed if n.endswith(".zip") and _file(listed, top, n))
    final = f"{params_name}.zip" if params_name is not None else None
    checkpoints = [
        n for n in zips if n.startswith("rl_model_") or n == "best_model.zip" or n == "train_eval_metrics.zip"
    ]
    if best:
        if "best_model.zip" not in zips:
            raise RlarchiveError(
                "IMPORT_INVALID", f"{escape_name(top)}: no best_model.zip (the run did not evaluate during training)"
            )
        return os.path.join(top, listed["best_model.zip"].rel)
    if final is not None and final in zips:
        return os.path.join(top, listed[final].rel)
    others = [n for n in zips if n not in checkpoints]
    if len(others) == 1:
        return os.path.join(top, listed[others[0]].rel)
    if not others and "best_model.zip" in zips:
        notes.append("no final model: best_model.zip imported")
        return os.path.join(top, listed["best_model.zip"].rel)
    shown = ", ".join(escape_name(n) for n in others[:5])
    what = f"{len(others)} candidate model zips ({shown})" if others else "no model zip"
    raise RlarchiveError("IMPORT_INVALID", f"{escape_name(top)}: not an RL Zoo run folder: {what}")


def _object(value: Any, what: str) -> dict[str, Any] | None:
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


def _wrapper_entries(config: Mapping[str, Any], stats: Any) -> list[dict[str, Any]]:
    """The ``wrappers`` of spec/metadata.md §2, in the zoo's order: env_wrapper, VecNormalize, VecFrameStack."""
    out: list[dict[str, Any]] = []
    env_wrapper = config.get("env_wrapper")
    for w in env_wrapper if isinstance(env_wrapper, list) else [env_wrapper] if env_wrapper is not None else []:
        if isinstance(w, str):
            out.append({"name": w})
        elif isinstance(w, dict) and len(w) == 1:
            ((name, kwargs),) = w.items()
            entry: dict[str, Any] = {"name": name}
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


def _yaml(files: RunFiles, path: str | None, what: str) -> Any:
    """The YAML file ``path`` of the run (None: absent), read without following links, at most MAX_YAML_BYTES."""
    if path is None:
        return None
    with files.open(path) as f:
        try:
            raw = f.read(zoo_yaml.MAX_YAML_BYTES + 1)
        except OSError as e:
            raise RlarchiveError("IO_ERROR", f"cannot read {f.name}: {e.strerror or e}") from None
    return zoo_yaml.loads(raw, what)


def zoo_metadata(files: RunFiles, stats: Any = None) -> tuple[dict[str, str], list[str]]:
    """The metadata an RL Zoo run gives (spec/metadata.md, Annex B.12), and notes on what was left out."""
    notes: list[str] = []
    out: dict[str, str] = {}
    config = _object(_yaml(files, files.config, "config.yml"), "config.yml")
    args = _object(_yaml(files, files.args, "args.yml"), "args.yml")
    env_kwargs = _object(_yaml(files, files.env_kwargs, "env_kwargs.yml"), "env_kwargs.yml")
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
    run_folder: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
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
        algorithm: as :func:`rlarchive.sb3.import_archive`.
        budget: bytes each import step may allocate (as ``import_archive``).
        metadata: the caller's metadata, over what the run gives.
    Returns:
        The :class:`~rlarchive.sb3.ImportReport`, with notes naming the run's files.
    Raises:
        RlarchiveError: IO_ERROR for a folder that cannot be read, IMPORT_INVALID
            for a folder that is not a run or a file that is not what it should be,
            LIMIT_EXCEEDED beyond a bound of the YAML reader or the budget, and
            what ``import_archive`` raises.
    """
    from ..sb3 import importing as rsb3
    from ..sb3 import provenance
    from ..sb3 import vec_normalize as vecnormalize

    given = provenance.merged({}, metadata)  # checked before any work
    files = find_run(run_folder, best=best)
    with contextlib.ExitStack() as opened:
        stats = (
            vecnormalize.read(opened.enter_context(files.open(files.vec_normalize)), budget=budget)
            if files.vec_normalize
            else None
        )
        found, notes = zoo_metadata(files, stats)
        merged = provenance.merged(found, given)
        report = rsb3.import_archive(
            opened.enter_context(files.open(files.model)),
            out_path,
            algorithm=algorithm,
            budget=budget,
            vec_normalize=stats,
            replay_buffer=opened.enter_context(files.open(files.replay_buffer))
            if replay_buffer and files.replay_buffer
            else None,
            metadata=merged,
        )
    used = [
        escape_name(os.path.relpath(p, files.folder))
        for p in (files.model, files.config, files.args, files.env_kwargs, files.vec_normalize)
        if p
    ]
    if replay_buffer and files.replay_buffer:
        used.append(escape_name(os.path.relpath(files.replay_buffer, files.folder)))
    report.notes[:0] = [f"RL Zoo run: read {', '.join(used)}"] + files.notes + notes
    if files.replay_buffer and not replay_buffer:
        report.notes.append("replay_buffer.pkl left out (asked)")
    return report
