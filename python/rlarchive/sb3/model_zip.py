"""Reading a Stable-Baselines model ``.zip`` (SB3 or SB2): its members under limits, its ``data`` JSON, its pickled values.

Shared by :mod:`rlarchive.sb3.importing` and :mod:`rlarchive.sb2`.
Every member is read with its uncompressed size checked and charged to an
:class:`~rlarchive.unpickle.budget.ImportBudget` first; the ``data`` member is
parsed as the JSON Python's json module writes; each ``:serialized:`` value
goes through the restricted unpickler (:mod:`rlarchive.unpickle`),
which gives a neutral value or keeps the pickle opaque. What was decoded and
what was kept opaque goes into an :class:`ImportReport`.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import zipfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..describe import counted
from ..errors import RlarchiveError
from ..filenames import printable
from ..jsonbounds import json_cost
from ..limits import MAX_MEMBERS
from ..unpickle.budget import ImportBudget, Source, source_name
from ..values import Opaque

__all__ = [
    "OpaqueValue",
    "ImportReport",
    "OBJECT_BYTES_PER_BYTE",
    "unsupported",
    "open_zip",
    "read_member",
    "parse_data_json",
    "json_cost",
    "decode_data",
    "decode_pickle",
    "escape_pointer",
    "note_leaves",
]

_TYPE_STR = re.compile(r"^<class '([^']+)'>$")


#: Bytes of Python objects one byte of a pickle can make at most (an empty
#: dict for the byte ``}``, plus its slot in a list); JSON text is counted by
#: :func:`rlarchive.jsonbounds.json_cost`.
OBJECT_BYTES_PER_BYTE = 80


# ---------------------------------------------------------------------------
# The import report
# ---------------------------------------------------------------------------


@dataclass
class OpaqueValue:
    """One value kept as an opaque pickle: where it is, what type it pickles, and why."""

    key: str  # the data key (a JSON Pointer into "data" for nested values)
    type: str | None  # the pickled type, e.g. "builtins.function"
    reason: str


@dataclass
class ImportReport:
    """What :func:`rlarchive.sb3.import_archive` (or :func:`rlarchive.sb2.import_archive`) did.

    Attributes:
        source: ``"stable-baselines3"`` or ``"stable-baselines"``.
        output: the rlarchive written.
        algorithm: the algorithm name recorded in the metadata, or None.
        library_version: the library version the model was saved with, if recorded.
        converted: data keys whose pickled values became neutral values.
        opaque: values kept as opaque pickles (never unpickled by the import).
        torch_values: JSON Pointers (into ``data``) of the arrays that were torch
            tensors in the pickles (kept in the metadata ``sb3.torch_values``;
            the bridge gives tensors back).
        tensor_groups: tensor group -> number of tensors.
        optimizers: optimizer names stored without pickle (spec §7.9).
        skipped_members: input members that were not imported, with the reason.
        policy: ``"written"`` when the archive holds the portable policy
            (extension ``RLA_policy``), else why it does not.
        notes: other remarks.
    """

    source: str
    output: str
    algorithm: str | None = None
    library_version: str | None = None
    converted: list[str] = field(default_factory=list)
    opaque: list[OpaqueValue] = field(default_factory=list)
    tensor_groups: dict[str, int] = field(default_factory=dict)
    optimizers: list[str] = field(default_factory=list)
    skipped_members: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    torch_values: list[str] = field(default_factory=list)
    policy: str | None = None

    @property
    def opaque_keys(self) -> list[str]:
        """The data keys kept opaque."""
        return [o.key for o in self.opaque]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready dict."""
        return asdict(self)

    def __str__(self) -> str:
        lines = [f"imported {self.source} model -> {self.output}"]
        if self.algorithm:
            lines.append(f"  algorithm: {self.algorithm}")
        if self.library_version:
            lines.append(f"  saved with version: {self.library_version}")
        lines.append(f"  decoded from pickles: {', '.join(self.converted) or '(none)'}")
        for g, n in self.tensor_groups.items():
            lines.append(f"  tensor group {g}: {counted(n, 'tensor')}")
        for optimizer in self.optimizers:
            lines.append(f"  optimizer: {optimizer}")
        if self.opaque:
            lines.append("  kept opaque (never unpickled):")
            for o in self.opaque:
                lines.append(f"    {o.key}: {o.type or '?'} ({o.reason})")
        else:
            lines.append("  kept opaque: (none)")
        for m, why in self.skipped_members:
            lines.append(f"  skipped member {m}: {why}")
        if self.policy is not None:
            lines.append(f"  portable policy: {self.policy}")
        for note in self.notes:
            lines.append(f"  note: {note}")
        return "\n".join(printable(line) for line in lines)  # names and keys from the input: one line each


# ---------------------------------------------------------------------------
# Reading the zip and decoding its data
# ---------------------------------------------------------------------------


def unsupported(msg: str, member: str | None = None) -> RlarchiveError:
    """The VALUE_UNSUPPORTED error for ``msg`` (at ``member``), for the caller to raise."""
    return RlarchiveError("VALUE_UNSUPPORTED", msg, member=member)


def open_zip(path: Source) -> zipfile.ZipFile:
    """The ZIP at ``path`` (or in the open file): IMPORT_INVALID when it is none, LIMIT_EXCEEDED above ``MAX_MEMBERS``
    members."""
    try:
        zf = zipfile.ZipFile(os.fspath(path) if isinstance(path, (str, os.PathLike)) else path)
    except (OSError, zipfile.BadZipFile) as e:
        raise RlarchiveError("IMPORT_INVALID", f"cannot read {source_name(path)} as a ZIP file: {e}") from None
    if len(zf.infolist()) > MAX_MEMBERS:
        zf.close()
        raise RlarchiveError("LIMIT_EXCEEDED", f"the ZIP has more than {MAX_MEMBERS} members")
    return zf


def read_member(zf: zipfile.ZipFile, name: str, limit: int, budget: ImportBudget | None = None) -> bytes:
    """A member's bytes, its uncompressed size (from its header) checked against ``limit`` and charged to ``budget`` first."""
    info = zf.getinfo(name)
    if info.file_size > limit:
        raise RlarchiveError("LIMIT_EXCEEDED", f"member {name} is {info.file_size} bytes, above {limit}", member=name)
    if budget is not None:
        budget.charge(info.file_size, f"member {name}", member=name)
    try:
        return zf.read(name)  # zipfile never returns more than file_size bytes and checks the CRC
    except (OSError, zipfile.BadZipFile, RuntimeError, NotImplementedError) as e:
        raise RlarchiveError("IMPORT_INVALID", f"cannot read member {name}: {e}", member=name) from None


def parse_data_json(raw: bytes, member: str = "data", budget: ImportBudget | None = None) -> dict[str, Any]:
    """The SB ``data`` member: JSON as Python's json module writes it (NaN/Infinity allowed).

    With a ``budget``, what parsing may allocate (:func:`json_cost`) is charged first.
    """
    if budget is not None:
        budget.charge(json_cost(raw), f"the objects parsed from the {member} member", member=member)
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise RlarchiveError("IMPORT_INVALID", f"the {member} member is not valid JSON: {e}", member=member) from None
    if not isinstance(doc, dict):
        raise RlarchiveError("IMPORT_INVALID", f"the {member} member is not a JSON object", member=member)
    return doc


def _type_name(sb_type: Any) -> str | None:
    """``"<class 'collections.deque'>"`` -> ``"collections.deque"``."""
    if not isinstance(sb_type, str):
        return None
    m = _TYPE_STR.match(sb_type)
    return m.group(1) if m else sb_type


def decode_data(doc: Mapping[str, Any], report: ImportReport, budget: ImportBudget | None = None) -> dict[str, Any]:
    """Decode an SB/SB3 data object: plain JSON stays, ``:serialized:`` values go through the restricted unpickler."""
    out: dict[str, Any] = {}
    for key, item in doc.items():
        if isinstance(item, dict) and ":serialized:" in item:
            tname = _type_name(item.get(":type:"))
            try:
                raw = base64.b64decode(str(item[":serialized:"]).encode("ascii"), validate=True)
            except (binascii.Error, ValueError, UnicodeEncodeError):
                raise RlarchiveError(
                    "IMPORT_INVALID", f"data key {key!r}: ':serialized:' is not base64", member="data"
                ) from None
            out[key] = decode_pickle(key, raw, tname, report, budget)
        else:
            out[key] = item
    return out


def decode_pickle(key: str, raw: bytes, tname: str | None, report: ImportReport, budget: ImportBudget | None) -> Any:
    """One pickled data value: its neutral value (opaque leaves reported), or the whole value opaque."""
    from .. import unpickle

    try:
        value = note_leaves(unpickle.decode(raw, budget=budget), "/" + escape_pointer(key), report)
        report.converted.append(key)
        return value
    except unpickle.NotNeutral as e:
        if tname is None:
            tname = unpickle.pickled_type_name(raw)
        report.opaque.append(OpaqueValue(key, tname, e.reason))
        return Opaque(raw, tname, e.reason)


def escape_pointer(key: str) -> str:
    """``key`` as one reference token of a JSON Pointer (RFC 6901: ``~`` as ``~0``, ``/`` as ``~1``)."""
    return key.replace("~", "~0").replace("/", "~1")


def note_leaves(value: Any, ptr: str, report: ImportReport) -> Any:
    """``value`` with its torch arrays made plain (their pointers noted) and its opaque leaves reported."""
    from ..unpickle.recorded import TorchArray

    if isinstance(value, TorchArray):
        report.torch_values.append(ptr)
        return value.view(np.ndarray)
    if isinstance(value, Opaque):
        report.opaque.append(OpaqueValue(ptr.lstrip("/"), value.type, value.note or ""))
        return value
    if isinstance(value, list):
        return [note_leaves(v, f"{ptr}/{i}", report) for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return tuple(note_leaves(v, f"{ptr}/{i}", report) for i, v in enumerate(value))
    if isinstance(value, dict):
        return {
            k: note_leaves(v, f"{ptr}/{escape_pointer(k) if isinstance(k, str) else k}", report)
            for k, v in value.items()
        }
    return value
