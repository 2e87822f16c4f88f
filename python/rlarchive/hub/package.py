"""A folder ready to upload to a model hub (``rlarchive package SOURCE OUTDIR``), spec/metadata.md §6.

``SOURCE`` is an archive or an RL Zoo run folder (``logs/ppo/CartPole-v1_1``, imported as
``rlarchive import-zoo`` does, Annex B.12). The folder holds:

- the archive, inference-only (:func:`rlarchive.strip.strip`: no replay buffer, run state or optimizer moments)
  unless ``keep_training``, under its own file name (a run folder's as ``ALGO-ENV.rlarchive``);
- ``README.md``: the model card (:func:`rlarchive.hub.card.card`), with the package's files listed;
- ``results.json``: the latest recorded evaluation in the form the RL Zoo and ``huggingface_sb3`` upload. The
  package evaluates the agent first (``episodes`` episodes, seeds ``seed``, ``seed + 1``, ...; recorded in the
  package's archive, never in ``SOURCE``) in the environment the caller names, or else in the one the archive
  records when it is registered in the installed gymnasium (:mod:`rlarchive.env_ids`; a note says so);
  without either, or without gymnasium, no evaluation runs and a recorded one is used, if any;
- ``model.onnx``: the portable policy as an ONNX model, when ``onnx`` is installed;
- ``replay.mp4``: one episode of the policy (:func:`rlarchive.video.record_video`), when MoviePy is installed and
  the environment renders;
- ``config.yml`` and ``env_kwargs.yml``: the RL Zoo configuration the archive records (``zoo.config``,
  ``zoo.env_kwargs``), as the Zoo keeps them;
- from a run folder, its training curves: ``training_episodes.csv``, ``training_evaluations.csv`` and the plot
  ``training_curves.svg`` (:mod:`rlarchive.zoo.curves`);
- ``.gitattributes``: Git LFS for the archive, the ONNX model and the video.

Whatever is left out gets a note. The folder is built in a temporary sibling and renamed into place, so
``OUTDIR`` is either absent, the old folder, or the whole new one. An existing non-empty ``OUTDIR`` is refused
unless ``force`` is given. Without an evaluation run (or with ``SOURCE_DATE_EPOCH`` set) and without a video, every
file's bytes depend on the source only, so two runs give identical files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import RlarchiveError
from .package_files import (
    CONFIG_NAME,
    CURVES_PLOT,
    ENV_KWARGS_NAME,
    EPISODES_CSV,
    EVALUATIONS_CSV,
    GITATTRIBUTES_NAME,
    VIDEO_NAME,
    gitattributes,
    yaml_text,
)

__all__ = ["PackageResult", "package", "results_json", "ONNX_NAME", "CARD_NAME", "RESULTS_NAME", "DEFAULT_EPISODES"]

#: The file names of the package, beside the archive's own.
CARD_NAME = "README.md"
ONNX_NAME = "model.onnx"
RESULTS_NAME = "results.json"
#: Episodes of the evaluation a package runs (the RL Zoo's default).
DEFAULT_EPISODES = 10
#: What a run folder's archive is called in its package when its algorithm or environment gives no plain name.
_RUN_ARCHIVE = "agent.rlarchive"
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,120}")

_OWN_NAMES = (
    CARD_NAME,
    ONNX_NAME,
    RESULTS_NAME,
    VIDEO_NAME,
    CONFIG_NAME,
    ENV_KWARGS_NAME,
    CURVES_PLOT,
    EPISODES_CSV,
    EVALUATIONS_CSV,
    GITATTRIBUTES_NAME,
)
_COPY_CHUNK = 1 << 20
_BINARY = getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass
class PackageResult:
    """What :func:`package` wrote: ``folder`` (the package), ``files`` (names in it, sorted), ``notes`` (what was
    left out, and why), the parts the archive's rewrite ``dropped``, the environment id ``evaluated`` in (or None)."""

    folder: str
    files: list[Any] = field(default_factory=list)
    notes: list[Any] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    evaluated: str | None = None


def results_json(evaluation: dict[str, Any]) -> str:
    """An evaluation of spec/metadata.md §3 as the RL Zoo's ``results.json`` (text, ending in a newline).

    The members, in this order: ``mean_reward`` and ``std_reward`` (numbers),
    ``is_deterministic`` (boolean), ``n_eval_episodes`` (integer),
    ``eval_datetime`` (the evaluation's ``date``, ISO 8601 in UTC), and
    ``env_id``.
    """
    data = {
        "mean_reward": float(evaluation["mean"]),
        "std_reward": float(evaluation["std"]),
        "is_deterministic": bool(evaluation["deterministic"]),
        "n_eval_episodes": int(evaluation["episodes"]),
        "eval_datetime": str(evaluation["date"]),
        "env_id": str(evaluation["env_id"]),
    }
    return json.dumps(data, indent=2, ensure_ascii=True, allow_nan=False) + "\n"


def _write(folder: str, name: str, data: bytes) -> None:
    with open(os.path.join(folder, name), "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _copy(src: str, folder: str, name: str, empty: bool = False) -> None:
    """Copy the archive into the package with its own permissions less the umask, as ``cp`` does (and readable
    and writable by its new owner): a private archive's copy stays private. ``empty``: create the file with those
    permissions only (a rewrite then replaces it, keeping them)."""
    try:
        with open(src, "rb") as fin:
            mode = (stat.S_IMODE(os.fstat(fin.fileno()).st_mode) & 0o777) | 0o600
            fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, mode)
            with os.fdopen(fd, "wb") as fout:
                if not empty:
                    _copy_bytes(fin, fout)
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot copy {src}: {e.strerror or e}") from None


def _copy_bytes(fin: Any, fout: Any) -> None:
    while chunk := fin.read(_COPY_CHUNK):
        fout.write(chunk)
    fout.flush()
    os.fsync(fout.fileno())


def _sync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _nonempty_dir(path: str) -> bool:
    with os.scandir(path) as it:
        return any(True for _ in it)


def _check_destination(out: str, force: bool) -> None:
    if os.path.islink(out) or (os.path.lexists(out) and not os.path.isdir(out)):
        raise RlarchiveError("IO_ERROR", f"cannot write the package to {out}: it exists and is not a folder")
    if os.path.isdir(out) and not force and _nonempty_dir(out):
        raise RlarchiveError(
            "IO_ERROR", f"cannot write the package to {out}: the folder exists and is not empty (--force replaces it)"
        )


def _has_policy(path: str) -> bool:
    from .. import extensions
    from ..extensions.policy import description as policy_description
    from ..reader import Archive

    with Archive(path, spaces="neutral") as ar:
        return extensions.read_document(ar, policy_description.EXTENSION) is not None


@dataclass
class _Build:
    """A package being built in the temporary folder ``tmp``: its archive's path there, and the files' descriptions."""

    tmp: str
    archive: str
    result: PackageResult
    described: list[tuple[str, str]] = field(default_factory=list)
    run: str | None = None

    def write(self, name: str, data: bytes, what: str | None) -> None:
        _write(self.tmp, name, data)
        if what is not None:
            self.described.append((name, what))


def package(
    path: str | os.PathLike[str],
    outdir: str | os.PathLike[str],
    *,
    force: bool = False,
    onnx: bool = True,
    keep_training: bool = False,
    env_id: str | None = None,
    episodes: int = DEFAULT_EPISODES,
    seed: int | None = 0,
    video: bool = True,
    metadata: Mapping[str, str] | None = None,
) -> PackageResult:
    """Write the hub package of the archive or RL Zoo run folder at ``path`` into the folder ``outdir``
    (spec/metadata.md §6).

    Args:
        force: replace an existing non-empty ``outdir`` (as a whole, by a rename).
        onnx: write ``model.onnx``.
        keep_training: copy the archive as it is (its replay buffer, run state and optimizer moments included).
        env_id: the gymnasium environment to evaluate in and record; None: the one the archive records, when it is
            registered in the installed gymnasium.
        episodes: episodes of the evaluation; 0 runs none (a recorded evaluation is used).
        seed: episode ``i`` of the evaluation is reset with ``seed + i`` (None: unseeded); the video with ``seed``.
        video: record ``replay.mp4``.
        metadata: metadata to put into the package's archive (``license`` among them), over what it records.

    Raises:
        RlarchiveError: the archive's first error when it is invalid, or what importing the run folder raises (no
            package is written); ``METADATA_INVALID`` when a defined metadata key the card or ``results.json``
            needs is malformed; what :func:`rlarchive.evaluate.evaluate` raises for the evaluation; ``IO_ERROR``
            when ``outdir`` exists and is not empty (without ``force``), is not a folder, holds the source (even
            with ``force``), or cannot be written.
    """
    src = os.fspath(path)
    out = os.path.abspath(os.fspath(outdir))
    run = os.path.isdir(src)
    name = _RUN_ARCHIVE if run else os.path.basename(src)
    if not run:
        _check_source(src, name)
    _check_destination(out, force)
    real_out, real_src = os.path.realpath(out), os.path.realpath(src)
    if os.path.commonpath([real_out, real_src]) == real_out:
        raise RlarchiveError(
            "IO_ERROR", f"cannot write the package to {out}: the folder holds {src} (choose another folder)"
        )
    parent = os.path.dirname(out)
    try:
        tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(out)[:100]}.", suffix=".package-tmp", dir=parent)
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot write the package in {parent}: {e.strerror or e}") from None
    result = PackageResult(out)
    try:
        _folder_mode(tmp, out)
        build = _archive_of(src, tmp, name, run, keep_training, metadata, result)
        _contents(build, onnx, env_id, episodes, seed, video)
        _sync_folder(tmp)
        _put_in_place(tmp, out, force)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _sync_folder(parent)
    result.files = sorted(os.listdir(out))
    return result


def _check_source(src: str, name: str) -> None:
    if not name or name in (".", ".."):
        raise RlarchiveError("IO_ERROR", f"cannot package {src}: not a file name")
    if not os.path.isfile(src):
        raise RlarchiveError("IO_ERROR", f"cannot package {src}: not a file or a run folder")
    if name in _OWN_NAMES:
        raise RlarchiveError(
            "IO_ERROR", f"cannot package {src}: its name is one of the package's own files ({', '.join(_OWN_NAMES)})"
        )


def _archive_of(
    src: str,
    tmp: str,
    name: str,
    run: bool,
    keep_training: bool,
    metadata: Mapping[str, str] | None,
    result: PackageResult,
) -> _Build:
    """Put the package's archive into ``tmp``: the run folder imported, or the archive copied or rewritten without
    its training-only parts; then the caller's metadata."""
    from ..edit import update_metadata
    from ..strip import strip

    if run:
        name = _import_run(src, tmp, keep_training, result)
    copy = os.path.join(tmp, name)
    if not run and keep_training:
        _copy(src, tmp, name)
    elif not run:
        _copy(src, tmp, name, empty=True)  # the file the rewrite replaces, with the archive's permissions
        result.dropped = strip(src, copy).dropped
    else:
        result.dropped = [] if keep_training else strip(copy).dropped
    if metadata:
        update_metadata(copy, metadata)
    what = "the agent (rlarchive)" + ("" if keep_training else ", inference-only")
    return _Build(tmp, copy, result, [(name, what)], src if run else None)


def _import_run(src: str, tmp: str, keep_training: bool, result: PackageResult) -> str:
    """Import the RL Zoo run folder ``src`` into ``tmp`` (its replay buffer only with ``keep_training``); the name."""
    from .. import metadata as keys
    from ..reader import Archive
    from ..zoo import import_zoo

    staged = os.path.join(tmp, _RUN_ARCHIVE)
    report = import_zoo(src, staged, replay_buffer=keep_training)
    result.notes += [
        "replay_buffer.pkl left out: the package is inference-only (--keep-training keeps it)"
        if n == "replay_buffer.pkl left out (asked)"
        else n
        for n in report.notes
        if not n.startswith("RL Zoo run: read")
    ]
    with Archive(staged, spaces="neutral") as ar:
        env = keys.provenance(ar.metadata).env_id
    stem = "-".join(x for x in ((report.algorithm or "").lower(), (env or "").replace("/", "-")) if x)
    name = f"{stem}.rlarchive" if _PLAIN.fullmatch(stem) and f"{stem}.rlarchive" not in _OWN_NAMES else _RUN_ARCHIVE
    if name != _RUN_ARCHIVE:
        os.rename(staged, os.path.join(tmp, name))
    return name


def _contents(build: _Build, onnx: bool, env_id: str | None, episodes: int, seed: int | None, video: bool) -> None:
    """Every file of the package beside the archive, the card last (it lists the others)."""
    from .. import metadata as keys
    from ..reader import Archive
    from .card import card

    env = _evaluation(build, env_id, episodes, seed)
    if onnx:
        _add_onnx(build)
    if video:
        _add_video(build, env, seed)
    with Archive(build.archive, spaces="neutral") as ar:
        evaluations: list[Any] = keys.parsed(ar.metadata, keys.EVALUATIONS) or []
        zoo = (keys.parsed(ar.metadata, keys.ZOO_CONFIG), keys.parsed(ar.metadata, keys.ZOO_ENV_KWARGS))
    _add_zoo_files(build, *zoo)
    if build.run is not None:
        _add_curves(build)
    if evaluations:
        build.write(RESULTS_NAME, results_json(evaluations[-1]).encode("ascii"), "the latest evaluation (RL Zoo form)")
    else:
        build.result.notes.append(
            f"no evaluation recorded: no {RESULTS_NAME} (give --env ENV_ID, or run: rlarchive evaluate FILE --env ENV_ID --record)"
        )
    text, notes = gitattributes([os.path.basename(build.archive)])
    build.result.notes += notes
    build.write(GITATTRIBUTES_NAME, text.encode("ascii"), "Git LFS for the large files")
    build.write(CARD_NAME, card(build.archive, build.described).encode("utf-8"), None)


def _evaluation(build: _Build, env_id: str | None, episodes: int, seed: int | None) -> str | None:
    """Evaluate and record in the package's archive; the environment id used (None: none)."""
    from .. import env_ids
    from .. import metadata as keys
    from ..evaluate import evaluate, record
    from ..reader import Archive

    with Archive(build.archive, spaces="neutral") as ar:
        recorded = keys.provenance(ar.metadata).env_id
        has_policy = ar.policy() is not None
    if env_id is None and recorded is not None:
        why = env_ids.why_not(recorded)
        if why is None:
            env_id = recorded
            build.result.notes.append(
                f"environment: {recorded!r}, as the archive records it (registered in the installed gymnasium)"
            )
        else:
            build.result.notes.append(f"the archive records the environment {recorded!r}, not used: {why}")
    if env_id is None or not has_policy:
        if not has_policy:
            build.result.notes.append("the archive has no portable policy (RLA_policy): no evaluation, no video")
        return None
    if episodes > 0:
        result = evaluate(build.archive, env_id, episodes, seed)
        build.result.notes += result.notes
        record(build.archive, result)
        build.result.evaluated = env_id
    return env_id


def _add_onnx(build: _Build) -> None:
    try:
        import onnx  # noqa: F401
    except ImportError:
        build.result.notes.append(f"the package onnx is not installed: no {ONNX_NAME} (pip install 'rlarchive[onnx]')")
        return
    if not _has_policy(build.archive):
        build.result.notes.append(f"the archive has no portable policy (RLA_policy): no {ONNX_NAME}")
        return
    from ..extensions.policy.onnx_export import export_onnx

    export_onnx(build.archive, os.path.join(build.tmp, ONNX_NAME))
    build.described.append((ONNX_NAME, "the portable policy as an ONNX model"))


def _add_video(build: _Build, env: str | None, seed: int | None) -> None:
    from ..video import record_video

    if env is None:
        build.result.notes.append(f"no {VIDEO_NAME}: no environment to record (give --env ENV_ID)")
        return
    notes = record_video(build.archive, env, os.path.join(build.tmp, VIDEO_NAME), seed=seed)
    build.result.notes += notes
    if not notes:
        build.described.append((VIDEO_NAME, "a replay of one episode" + ("" if seed is None else f" (seed {seed})")))


def _add_zoo_files(build: _Build, config: Mapping[str, Any] | None, env_kwargs: Mapping[str, Any] | None) -> None:
    if config is None:
        return
    build.write(CONFIG_NAME, yaml_text(config).encode("ascii"), "the RL Zoo hyperparameters")
    build.write(ENV_KWARGS_NAME, yaml_text(env_kwargs or {}).encode("ascii"), "the RL Zoo environment arguments")


def _add_curves(build: _Build) -> None:
    from ..zoo.curves import episodes_csv, evaluations_csv, read_curves
    from .plot_svg import curves_svg

    assert build.run is not None
    curves = read_curves(build.run)
    build.result.notes += curves.notes
    if not curves.episodes and not curves.evaluations:
        build.result.notes.append("no training curves: the run folder has no Monitor CSV nor evaluations.npz")
        return
    if curves.episodes:
        build.write(EPISODES_CSV, episodes_csv(curves).encode("ascii"), "the training episodes (Monitor CSVs)")
    if curves.evaluations:
        build.write(EVALUATIONS_CSV, evaluations_csv(curves).encode("ascii"), "the evaluations during training")
    svg = curves_svg([(s, r) for s, r, _, _ in curves.episodes], [(s, m, sd) for s, m, sd, _, _ in curves.evaluations])
    build.write(CURVES_PLOT, svg.encode("ascii"), "the training curves")


def _folder_mode(tmp: str, out: str) -> None:
    """The new folder's permissions: those of the folder it replaces (with its owner and group where this process
    may, spec §12), else what ``mkdir`` gives (0777 less the umask)."""
    try:
        old = os.stat(out)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        return
    from ..writer import take_over

    fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        take_over(fd, tmp, old)
    finally:
        os.close(fd)


def _put_in_place(tmp: str, out: str, force: bool) -> None:
    """Rename the finished folder ``tmp`` to ``out``; with ``force``, an existing ``out`` is moved aside first and removed after."""
    _check_destination(out, force)  # again: the folder may have appeared while the package was built
    old: str | None = None
    if os.path.isdir(out) and _nonempty_dir(out):
        old = tempfile.mkdtemp(
            prefix=f".{os.path.basename(out)[:100]}.", suffix=".package-old", dir=os.path.dirname(out)
        )
        os.rmdir(old)
        try:
            os.rename(out, old)
        except OSError as e:
            raise RlarchiveError("IO_ERROR", f"cannot replace {out}: {e.strerror or e}") from None
    try:
        os.rename(tmp, out)  # over an empty folder, or where nothing is
    except OSError as e:
        if old is not None:
            os.rename(old, out)
        raise RlarchiveError("IO_ERROR", f"cannot write the package to {out}: {e.strerror or e}") from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
