"""What differs between two archives: :func:`diff`, and the ``rlarchive diff`` command's document.

The comparison goes section by section, each in a fixed order (the first
archive's order, then what only the second has):

- ``format_version`` and ``producer`` (the manifest's);
- ``metadata``: each key of the manifest's metadata;
- ``hyperparameters``: each key of ``data`` whose value is not a space, its
  typed JSON value compared in its canonical form (spec §13: every float as a
  float tag, RFC 8785), so ``0.5`` and ``5e-1`` are equal and ``1`` and ``1.0``
  are not;
- ``spaces``: each key of ``data`` whose value is a space, compared the same way;
- ``optimizers``: each optimizer's JSON (its parameter groups and state entries;
  the state's tensors are compared in ``tensors``);
- ``extensions``: each extension used, with its settings and the SHA-256 of its members;
- ``tensors``: each tensor of each group by dtype, shape and the SHA-256 of its
  bytes; two tensors of the same shape and dtype that differ also get the
  largest absolute difference of their elements (``max_abs_diff``, computed in
  binary64 over the elements finite in both, in chunks of
  :data:`CHUNK_ELEMENTS` so that memory stays bounded) and the number of
  elements that differ where one side is not finite (``nonfinite_differ``).

A tensor of an optimizer's state (group ``optimizer.NAME``) is also named by
the parameter it belongs to (``parameter``): as the archive records it
(``param_tensors``, spec §7.9), else guessed by the shape of its state (an
archive of an older writer), and marked so (``"by": "shape"``).

``only`` and ``ignore`` select differences by pattern (:func:`selects`): a
section name, or a shell-style pattern over ``SECTION/KEY`` (a tensor's key
is ``GROUP/NAME``): ``tensors/optimizer.*`` is every optimizer's state.

Both archives are read completely first (every digest checked, as for the
canonical dump): a damaged archive is an error, not a difference.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from . import jsonstrict, param_tensors
from .errors import RlarchiveError
from .filenames import report_fields
from .report import FileName
from .values import canonical

__all__ = ["diff", "compare_archives", "selects", "check_patterns", "DIFF_VERSION", "SECTIONS"]

DIFF_VERSION = "1.0"
SECTIONS = (
    "format_version",
    "producer",
    "metadata",
    "hyperparameters",
    "spaces",
    "optimizers",
    "extensions",
    "tensors",
)
#: Elements compared at once for ``max_abs_diff`` (8 MiB of binary64 per side).
CHUNK_ELEMENTS = 1 << 20
_SPACE_TAG = "space"

Source = Union[str, "os.PathLike[str]"]


def _is_space(raw: Any) -> bool:
    """Whether a typed JSON value of ``data`` is a space (spec §7: an object whose ``$type`` is ``space``)."""
    return isinstance(raw, dict) and raw.get("$type") == _SPACE_TAG


def _keys(a: Iterable[str], b: Iterable[str]) -> list[Any]:
    """The keys of ``a`` in order, then those only ``b`` has, in its order."""
    first = list(a)
    seen = set(first)
    return first + [k for k in b if k not in seen]


def _change(section: str, key: str, a: Any, b: Any, missing: Any = None) -> dict[str, Any] | None:
    """The difference of one item (``missing`` stands for an absent side), or None when both sides are equal."""
    if a is missing and b is missing:
        return None
    if a is not missing and b is not missing:
        if jsonstrict.canonical(a) == jsonstrict.canonical(b):
            return None
        return {"section": section, "key": key, "change": "changed", "a": a, "b": b}
    if a is missing:
        return {"section": section, "key": key, "change": "added", "b": b}
    return {"section": section, "key": key, "change": "removed", "a": a}


class _Absent:
    """The side of an item that one archive does not have."""


_ABSENT = _Absent()


def _compare_maps(section: str, a: dict[str, Any], b: dict[str, Any]) -> list[Any]:
    out = [_change(section, k, a.get(k, _ABSENT), b.get(k, _ABSENT), _ABSENT) for k in _keys(a, b)]
    return [d for d in out if d is not None]


def _data_sections(x: Any, y: Any) -> list[Any]:
    """The differences of ``data`` (hyperparameters and spaces) and of the optimizers' JSON."""
    da, db = x.raw_data["data"], y.raw_data["data"]
    out = []
    for section, wanted in (("hyperparameters", False), ("spaces", True)):
        a = {k: canonical(v) for k, v in da.items() if _is_space(v) == wanted}
        b = {k: canonical(v) for k, v in db.items() if _is_space(v) == wanted}
        out += _compare_maps(section, a, b)
    oa = {k: canonical(v) for k, v in x.raw_data["optimizers"].items()}
    ob = {k: canonical(v) for k, v in y.raw_data["optimizers"].items()}
    return out + _compare_maps("optimizers", oa, ob)


def _extension(ar: Any, name: str) -> dict[str, Any]:
    """What an archive holds of one extension: its settings in the manifest and the digests of its members."""
    prefix = f"extensions/{name}/"
    members = {m: e["sha256"] for m, e in ar.manifest.members.items() if m.startswith(prefix)}
    out: dict[str, Any] = {"members": dict(sorted(members.items()))}
    settings = ar.manifest.raw.get("extensions", {}).get(name)
    if settings is not None:
        out["settings"] = settings
    return out


def _extensions(x: Any, y: Any) -> list[Any]:
    a = {n: _extension(x, n) for n in x.extensions_used}
    b = {n: _extension(y, n) for n in y.extensions_used}
    return _compare_maps("extensions", a, b)


def max_abs_diff(a: Any, b: Any, chunk: int = CHUNK_ELEMENTS) -> tuple[Any, ...]:
    """(the largest ``|a - b|`` over the elements finite in both, or None for no such element; the number of elements
    that differ where one side is not finite) for two NumPy arrays of the same shape, read ``chunk`` elements at a time."""
    import numpy as np

    fa, fb = a.reshape(-1), b.reshape(-1)
    best: float | None = None
    nonfinite = 0
    with np.errstate(all="ignore"):
        for start in range(0, fa.size, chunk):
            xa = fa[start : start + chunk].astype(np.float64)
            xb = fb[start : start + chunk].astype(np.float64)
            finite = np.isfinite(xa) & np.isfinite(xb)
            same = (xa == xb) | (np.isnan(xa) & np.isnan(xb))
            nonfinite += int(np.count_nonzero(~finite & ~same))
            if finite.any():
                m = float(np.max(np.abs(xa[finite] - xb[finite])))
                best = m if best is None else max(best, m)
    return best, nonfinite


def _tensor_side(ar: Any, infos: Mapping[str, Any], group: str, name: str) -> dict[str, Any] | None:
    """What the diff shows of one tensor of one archive (None when that archive does not have it)."""
    info = infos.get(name)
    if info is None:
        return None
    return {"dtype": info.dtype, "shape": list(info.shape), "sha256": ar.tensor_sha256(group, name)}


def _tensor_change(
    x: Any, y: Any, group: str, name: str, infos: tuple[Mapping[str, Any], ...]
) -> dict[str, Any] | None:
    import numpy as np

    a, b = _tensor_side(x, infos[0], group, name), _tensor_side(y, infos[1], group, name)
    d = _change("tensors", f"{group}/{name}", a, b)
    if d is None or a is None or b is None or (a["dtype"], a["shape"]) != (b["dtype"], b["shape"]):
        return d
    va, vb = x.tensor(group, name), y.tensor(group, name)
    if isinstance(va, np.ndarray) and isinstance(vb, np.ndarray) and va.dtype.kind in "biuf":
        d["max_abs_diff"], d["nonfinite_differ"] = max_abs_diff(va, vb)
    else:  # a dtype NumPy has no arithmetic for (e.g. BF16, FP8): compared by digest only
        d["max_abs_diff"] = None
    return d


def _parameters(ar: Any) -> dict[str, dict[str, param_tensors.Parameter]]:
    """Optimizer group -> {tensor name -> the parameter it belongs to} (:func:`rlarchive.param_tensors.state_parameters`)."""
    infos = {g: {n: i.shape for n, i in ar.tensor_info(g).items()} for g in ("policy", "variables") if g in ar.groups}
    return {
        "optimizer." + name: param_tensors.state_parameters(name, opt, infos)
        for name, opt in ar.raw_data["optimizers"].items()
    }


def _parameter(p: param_tensors.Parameter) -> dict[str, Any]:
    return {"group": p.group, "name": p.name, "entry": p.entry, "by": "param_tensors" if p.recorded else "shape"}


def _tensors(x: Any, y: Any) -> list[Any]:
    """The tensor differences, group by group: each group's headers are looked up once (linear in the tensors)."""
    out = []
    named = (_parameters(x), _parameters(y))
    groups = (set(x.groups), set(y.groups))
    for g in _keys(x.groups, y.groups):
        infos = tuple(ar.tensor_info(g) if g in have else {} for ar, have in zip((x, y), groups))
        for n in _keys(*infos):
            d = _tensor_change(x, y, g, n, infos)
            if d is None:
                continue
            p = named[0].get(g, {}).get(n) or named[1].get(g, {}).get(n)
            if p is not None:
                d["parameter"] = _parameter(p)
            out.append(d)
    return out


def _counts(x: Any, y: Any) -> dict[str, tuple[int, int, int]]:
    """Tensor group -> (tensors in A, tensors in B, tensors in both)."""
    out = {}
    for g in _keys(x.groups, y.groups):
        a = set(x.tensor_info(g)) if g in x.groups else set()
        b = set(y.tensor_info(g)) if g in y.groups else set()
        out[g] = (len(a), len(b), len(a & b))
    return out


def compare(x: Any, y: Any) -> list[Any]:
    """The differences between two open archives, section by section (:data:`SECTIONS`)."""
    out = [
        d
        for d in (
            _change("format_version", "format_version", x.format_version, y.format_version),
            _change("producer", "producer", x.producer, y.producer),
        )
        if d is not None
    ]
    out += _compare_maps("metadata", x.metadata, y.metadata)
    out += _data_sections(x, y)
    out += _extensions(x, y)
    return out + _tensors(x, y)


def _side(path: Any) -> FileName:
    return report_fields(path) if isinstance(path, (str, bytes, os.PathLike)) else {"file": f"<{type(path).__name__}>"}


def check_patterns(patterns: Iterable[str]) -> None:
    """Refuse a pattern of ``only``/``ignore`` whose section part (before the first ``/``) names no section.

    Raises:
        RlarchiveError: INPUT_INVALID naming the pattern and the sections.
    """
    for p in patterns:
        head = p.split("/", 1)[0]
        if not any(fnmatch.fnmatchcase(s, head) for s in SECTIONS):
            raise RlarchiveError(
                "INPUT_INVALID",
                f"{p!r} selects no section: a pattern is SECTION or SECTION/KEY (a tensor's key is GROUP/NAME), "
                f"with the sections {', '.join(SECTIONS)}",
            )


def selects(pattern: str, d: dict[str, Any]) -> bool:
    """Whether ``pattern`` selects the difference ``d``: it matches (shell-style, case-sensitive) its section, or
    ``SECTION/KEY`` (``tensors/policy/*``, ``hyperparameters/start_time``, ``tensors/optimizer.*``)."""
    return fnmatch.fnmatchcase(d["section"], pattern) or fnmatch.fnmatchcase(f"{d['section']}/{d['key']}", pattern)


def _kept(d: dict[str, Any], only: Sequence[str], ignore: Sequence[str]) -> bool:
    return (not only or any(selects(p, d) for p in only)) and not any(selects(p, d) for p in ignore)


def compare_archives(
    a: Source, b: Source, only: Sequence[str] = (), ignore: Sequence[str] = ()
) -> tuple[dict[str, Any], dict[str, tuple[int, int, int]]]:
    """(:func:`diff`'s document, tensor group -> (tensors in A, in B, in both)): the counts let a summary say
    how many of a group's tensors differ."""
    from .reader import open_archive

    check_patterns([*only, *ignore])
    with open_archive(a, spaces="neutral") as x, open_archive(b, spaces="neutral") as y:
        for ar in (x, y):
            ar.verify()
            ar.check_extensions()
        differences = [d for d in compare(x, y) if _kept(d, only, ignore)]
        counts = _counts(x, y)
    doc: dict[str, Any] = {
        "diff_version": DIFF_VERSION,
        "a": _side(a),
        "b": _side(b),
        "equal": not differences,
        "differences": differences,
    }
    if only:
        doc["only"] = list(only)
    if ignore:
        doc["ignore"] = list(ignore)
    return doc, counts


def diff(a: Source, b: Source, only: Sequence[str] = (), ignore: Sequence[str] = ()) -> dict[str, Any]:
    """What differs between the archives ``a`` and ``b`` (anything :func:`rlarchive.open` takes).

    Returns the document of ``schemas/diff-1.0.schema.json``: ``{"diff_version", "a", "b", "equal", "differences"}``,
    each difference ``{"section", "key", "change": "added" | "removed" | "changed", "a", "b"}`` (the side an item
    is absent from left out), tensors with ``max_abs_diff`` when their shapes and dtypes agree, and a tensor of an
    optimizer's state with the ``parameter`` it belongs to. With ``only`` (keep what one of these patterns
    selects) and ``ignore`` (leave out what one selects; :func:`selects`), ``equal`` and ``differences`` are
    about what is kept, and the document repeats the patterns.

    Raises:
        RlarchiveError: an archive that cannot be read (its code: a damaged archive is not a difference);
            INPUT_INVALID for a pattern that selects no section.
    """
    return compare_archives(a, b, only, ignore)[0]
