"""Every golden test case: how to build its bytes, what it tests, what a reader must answer.

Valid cases are written by the reference writer (``rlarchive.save``); invalid
cases start from well-formed parts and break exactly one rule, with
:mod:`rawzip` where the reference writer would refuse.

This module holds the registry (:class:`Case`, :data:`CASES`, :func:`case`) and
the helpers that build well-formed parts; the cases themselves are in one module
per chapter of the specification (``cases_valid``, ``cases_zip``,
``cases_manifest``, ``cases_json``, ``cases_values``, ``cases_safetensors``), then
``cases_found`` and the modules of the extensions. The order in which this
module imports them, at its end, is the order of index.json.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import struct
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from rawzip import Entry, Layout, assemble, standard_entries

import rlarchive
from rlarchive import jsonstrict
from rlarchive.tensors import as_tensor, group_layout


@dataclass
class Case:
    id: str
    description: str
    spec: list
    expect: str  # "dump" or an error code
    build: Callable[[], bytes]
    warnings: list = field(default_factory=list)
    gzip: bool = False
    extensions: list = field(default_factory=list)  # what a reader must support for this outcome (Annex A.3)
    predict: Callable[[], dict] | None = None  # expect "actions": the predict request and the actions (Annex A)
    file_id: str | None = None  # the case whose file this one reads (a predict case reads its dump case's archive)
    sites: list = field(
        default_factory=list
    )  # (check id of spec/checks.json, sites.Site) of each issue a validator reports, in order
    request: Callable[[], bytes] | None = None  # the request line sent instead (Annex A.5), with $SEQ and $FILE
    seq_unreadable: bool = False  # the request's seq cannot be read: the answer's seq is null (Annex A.5)
    request_gzip: bool = False  # the request file is stored gzipped

    @property
    def folder(self) -> str:
        if self.request is not None:  # the folder of the case whose file it reads
            return next(c for c in CASES if c.id == self.file_id).folder
        return "invalid" if self.expect not in ("dump", "actions") else "valid"

    @property
    def file(self) -> str:
        return f"{self.folder}/{self.file_id or self.id}.rlarchive" + (".gz" if self.gzip else "")

    @property
    def request_file(self) -> str:
        return f"requests/{self.id}.request" + (".gz" if self.request_gzip else "")


CASES: list[Case] = []


def case(
    id: str,
    description: str,
    spec,
    expect: str = "dump",
    warnings=(),
    gzip: bool = False,
    extensions=(),
    check=None,
    at=None,
):
    """Register a case; an invalid one names the ``check`` (spec/checks.json) it breaks and its site ``at`` (tests/vectors/sites.py).

    A case whose validation report holds several issues gives lists of checks and sites, in the report's order.
    """
    sections = [spec] if isinstance(spec, str) else list(spec)
    if expect == "dump" and "§13.1" not in sections:
        sections.append("§13.1")  # every valid case checks the dump
    if isinstance(check, str):
        check, at = [check], [at]
    issues = list(zip(check or [], at or []))

    def deco(fn):
        CASES.append(Case(id, description, sections, expect, fn, list(warnings), gzip, list(extensions), sites=issues))
        return fn

    return deco


def saved(data, tensors=None, optimizers=None, **kw) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "a.rlarchive")
        rlarchive.save(p, data, tensors, optimizers, producer=("rlarchive-test-vectors", "1"), **kw)
        with open(p, "rb") as f:
            return f.read()


def st_group(tensors: dict) -> bytes:
    """A well-formed safetensors member for {name: array}."""
    prefix, order = group_layout({k: as_tensor(v) for k, v in tensors.items()})
    return prefix + b"".join(t.data.tobytes() for t in order)


def st_raw(header, buffer: bytes, pad: bool = True) -> bytes:
    """A safetensors member from an explicit header (dict or raw bytes) and buffer."""
    h = header if isinstance(header, bytes) else json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * ((-(8 + len(h))) % 64)
    return struct.pack("<Q", len(h)) + h + buffer


def archive(data_json, groups=None, layout: Layout = Layout(), **kw) -> bytes:
    """An archive of well-formed parts around a given data.json (a dict or raw bytes)."""
    raw = data_json if isinstance(data_json, bytes) else jsonstrict.dumps(data_json)
    return assemble(standard_entries(raw, groups, **kw), layout)


def with_value(value, groups=None) -> bytes:
    """An archive whose data holds one raw JSON value under the key ``x``."""
    return archive({"data": {"x": value}}, groups)


def entries_edit(edit, groups=None, data=None, layout: Layout = Layout()) -> bytes:
    """Build well-formed entries, let ``edit(entries)`` break them, then assemble."""
    es = standard_entries(jsonstrict.dumps(data or {"data": {"gamma": 0.99}}), groups)
    edit(es)
    return assemble(es, layout)


def by_name(es, name) -> Entry:
    return next(e for e in es if e.name == name)


POLICY = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([0.5, -0.5], np.float32)}


def policy_archive(**kw) -> bytes:
    return saved({"gamma": 0.99}, {"policy": POLICY}, **kw)


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


def nd(dtype: str, shape, raw: bytes) -> dict:
    return {"$type": "ndarray", "dtype": dtype, "shape": list(shape), "base64": b64(raw)}


def build_bytes(c: Case) -> bytes:
    """The bytes of a case's file as stored (gzipped when the case says so)."""
    raw = c.build()
    return gzip.compress(raw, compresslevel=9, mtime=0) if c.gzip else raw


EXT = "ACME_files"


def ext_archive(members: dict, edit=lambda es: None) -> bytes:
    """An archive declaring the optional extension EXT with the given members under extensions/EXT/."""
    es = standard_entries(
        jsonstrict.dumps({"data": {"gamma": 0.99}}),
        extra_members={f"extensions/{EXT}/{k}": v for k, v in members.items()},
        manifest_patch=lambda m: m.update(extensions_used=[EXT]),
    )
    edit(es)
    return assemble(es)


def ext_member(es, short: str) -> Entry:
    return by_name(es, f"extensions/{EXT}/{short}")


def _data_raw(raw: bytes) -> bytes:
    return archive(raw)


def _group(member: bytes) -> bytes:
    return archive({"data": {}}, {"policy": member})


# ======================================================================= the cases, chapter by chapter, then the extensions

# the order of these imports registers the cases: it is the order of index.json
# isort: off
import cases_valid  # noqa: E402,F401
import cases_zip  # noqa: E402,F401
import cases_manifest  # noqa: E402,F401
import cases_json  # noqa: E402,F401
import cases_values  # noqa: E402,F401
import cases_safetensors  # noqa: E402,F401
import cases_found  # noqa: E402,F401
import cases_decisions  # noqa: E402,F401  (registers its cases after these)
import cases_from_reader_js  # noqa: E402,F401
import cases_extensions  # noqa: E402,F401
import cases_locations  # noqa: E402,F401
import cases_locations_zip  # noqa: E402,F401
import cases_locations_docs  # noqa: E402,F401
import cases_locations_ext  # noqa: E402,F401
import cases_locations_policy  # noqa: E402,F401
import cases_policy  # noqa: E402,F401
import cases_policy_limits  # noqa: E402,F401
import cases_policy_numerics  # noqa: E402,F401
import cases_training  # noqa: E402,F401
import cases_training_random  # noqa: E402,F401
import cases_replay_buffer  # noqa: E402,F401
import cases_requests  # noqa: E402,F401
import cases_vec_normalize_returns  # noqa: E402,F401
import cases_parts  # noqa: E402,F401
import cases_param_tensors  # noqa: E402,F401
# isort: on

from cases_valid import _all_dtypes, _every_space  # noqa: E402,F401  (tests/python/test_roundtrip.py)
