"""The training curves of an RL Zoo run folder (Annex B.12): its Monitor CSVs and ``evaluations.npz``.

Stable-Baselines3's ``Monitor`` writes one ``N.monitor.csv`` per environment into the run folder (a first line
``#{...}``, then ``r,l,t`` and one row per episode: return, length, seconds since the start), and its
``EvalCallback`` writes ``evaluations.npz`` (``timesteps``: the step of each evaluation; ``results`` and
``ep_lengths``: one row of episode returns and lengths per evaluation). :func:`read_curves` reads them through
:mod:`rlarchive.zoo.run_folder` (never leaving the folder, never following a link out of it), each file at
most :data:`MAX_CURVE_BYTES`, the ``.npz`` with the bounded reader of :mod:`rlarchive.unpickle.npz` (no pickle).
Curves are a nicety of a package: a file that is not what it should be is skipped with a note, never an error.

The episodes of all environments are merged in the order they ended (as SB3's ``load_results`` does) and
numbered by the environment steps taken when each ended (the running sum of the lengths).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import RlarchiveError
from ..filenames import escape_name
from ..unpickle.budget import ImportBudget
from ..unpickle.npz import read_npz
from .run_folder import entries, open_file

__all__ = ["Curves", "read_curves", "episodes_csv", "evaluations_csv", "MAX_CURVE_BYTES", "MAX_MONITOR_FILES"]

#: The most bytes read of one Monitor CSV or ``evaluations.npz``.
MAX_CURVE_BYTES = 64 << 20
#: The most Monitor CSVs read (one per environment).
MAX_MONITOR_FILES = 1024
_MONITOR = re.compile(r"(?:[0-9]+\.)?monitor\.csv")


@dataclass
class Curves:
    """``episodes``: (timesteps, return, length, seconds) per training episode; ``evaluations``: (timesteps, mean
    return, std, mean length, episodes) per evaluation; the files read; notes on what was skipped."""

    episodes: list[tuple[int, float, int, float]] = field(default_factory=list)
    evaluations: list[tuple[int, float, float, float, int]] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _bytes(top: str, rel: str) -> bytes:
    with open_file(top, rel) as f:
        raw = f.read(MAX_CURVE_BYTES + 1)
    if len(raw) > MAX_CURVE_BYTES:
        raise ValueError(f"more than {MAX_CURVE_BYTES} bytes")
    return raw


def _number(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(f"{text!r} is not a finite number")
    return x


def _monitor_rows(raw: bytes) -> list[tuple[float, int, float]]:
    """(return, length, seconds) of each row of a Monitor CSV."""
    lines = raw.decode("utf-8").splitlines()
    if lines and lines[0].startswith("#"):
        lines = lines[1:]
    if not lines:
        raise ValueError("no header line")
    header = lines[0].split(",")
    if header[:3] != ["r", "l", "t"]:
        raise ValueError("the header is not r,l,t")
    rows = []
    for n, line in enumerate(lines[1:], start=3):
        cells = line.split(",")
        if len(cells) < 3:
            raise ValueError(f"line {n} has fewer than 3 columns")
        length = _number(cells[1])
        if length < 0 or length != int(length):
            raise ValueError(f"line {n}: the length is not a count")
        rows.append((_number(cells[0]), int(length), _number(cells[2])))
    return rows


def _episodes(top: str, names: list[str], curves: Curves) -> None:
    rows: list[tuple[float, int, float]] = []
    for name in names[:MAX_MONITOR_FILES]:
        try:
            rows += _monitor_rows(_bytes(top, name))
            curves.read.append(name)
        except (ValueError, UnicodeDecodeError, RlarchiveError) as e:
            curves.notes.append(f"skipped {escape_name(name)}: not a Monitor CSV ({e})")
    if len(names) > MAX_MONITOR_FILES:
        curves.notes.append(f"read the first {MAX_MONITOR_FILES} Monitor CSVs only")
    steps = 0
    for r, length, t in sorted(rows, key=lambda row: row[2]):
        steps += length
        curves.episodes.append((steps, r, length, t))


def _evaluations(top: str, rel: str, curves: Curves) -> None:
    try:
        arrays, _ = read_npz(
            _bytes(top, rel),
            ["timesteps", "results", "ep_lengths"],
            ImportBudget(4 * MAX_CURVE_BYTES),
            container="evaluations.npz",
            item="array",
        )
    except (ValueError, RlarchiveError) as e:
        curves.notes.append(f"skipped evaluations.npz: {e}")
        return
    steps, results, lengths = arrays["timesteps"], arrays["results"], arrays["ep_lengths"]
    n = steps.shape[0] if steps.ndim == 1 else -1
    if n < 0 or results.ndim != 2 or results.shape[0] != n or lengths.shape != results.shape or results.shape[1] < 1:
        curves.notes.append("skipped evaluations.npz: its arrays do not have EvalCallback's shapes")
        return
    if not (np.issubdtype(steps.dtype, np.integer) and np.isfinite(results).all() and np.isfinite(lengths).all()):
        curves.notes.append("skipped evaluations.npz: its values are not EvalCallback's numbers")
        return
    curves.read.append("evaluations.npz")
    for i in range(n):
        row = results[i].astype(np.float64)
        curves.evaluations.append(
            (int(steps[i]), float(row.mean()), float(row.std()), float(lengths[i].mean()), int(row.size))
        )


def read_curves(top: str) -> Curves:
    """The training curves of the run folder ``top`` (empty when it has neither kind of file)."""
    listed, _ = entries(top)
    curves = Curves()
    monitors = sorted(
        (e.rel for name, e in listed.items() if e.kind == "file" and _MONITOR.fullmatch(name)),
        key=lambda n: (len(n), n),
    )
    _episodes(top, monitors, curves)
    e = listed.get("evaluations.npz")
    if e is not None and e.kind == "file":
        _evaluations(top, e.rel, curves)
    return curves


def episodes_csv(curves: Curves) -> str:
    """The training episodes as CSV: ``timesteps,return,length,seconds``, one row per episode in the order they ended."""
    rows = ["timesteps,return,length,seconds"]
    rows += [f"{s},{r!r},{n},{t!r}" for s, r, n, t in curves.episodes]
    return "\n".join(rows) + "\n"


def evaluations_csv(curves: Curves) -> str:
    """The evaluations as CSV: ``timesteps,mean_return,std_return,mean_length,episodes``, one row per evaluation."""
    rows = ["timesteps,mean_return,std_return,mean_length,episodes"]
    rows += [f"{s},{m!r},{sd!r},{n!r},{e}" for s, m, sd, n, e in curves.evaluations]
    return "\n".join(rows) + "\n"
