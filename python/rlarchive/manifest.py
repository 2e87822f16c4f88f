"""The manifest (spec §5): building it, and checking it in the order of spec §11.1 step 6."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from . import metadata as metadata_keys
from .errors import RlarchiveError, esc
from .extensions import NAMES
from .limits import MAX_MEMBERS

FORMAT = "rlarchive"
FORMAT_VERSION = "1.0"
MAJOR, MINOR = 1, 0
#: Extensions this implementation supports (spec §5.4 and spec/extensions/).
SUPPORTED_EXTENSIONS: frozenset[str] = frozenset(NAMES)
KNOWN_PROPERTIES = {
    "format",
    "format_version",
    "producer",
    "members",
    "extensions_used",
    "extensions_required",
    "extensions",
    "metadata",
}
_VERSION = re.compile(r"(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})")


@cache
def schema(name: str) -> dict[str, Any]:
    """A JSON Schema of the project by file name (e.g. ``manifest-1.0.schema.json``)."""
    result: dict[str, Any] = json.loads(
        resources.files("rlarchive").joinpath("schemas").joinpath(name).read_text(encoding="utf-8")
    )
    return result


_DOLLAR = re.compile(r"(?<!\\)\$")


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    """``pattern`` with ECMA-262 semantics: ``$`` matches only at the very end.

    (Python's ``$`` also matches before a final newline, which would let
    ``"...\n"`` through where every ECMA-262 engine refuses it.)
    """
    import jsonschema

    if isinstance(instance, str) and not re.search(_DOLLAR.sub(r"\\Z", pattern), instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def validator(name: str) -> Any:
    """A draft 2020-12 validator for one of the project's schemas (ECMA-262 patterns)."""
    import jsonschema

    cls = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _ecma_pattern})
    return cls(schema(name))


@dataclass
class Manifest:
    """A checked manifest."""

    raw: dict[str, Any]
    members: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {name, size, sha256}
    warnings: list[Any] = field(default_factory=list)  # RlarchiveError of severity warning/info

    @property
    def format_version(self) -> str:
        result: str = self.raw["format_version"]
        return result

    @property
    def producer(self) -> dict[str, Any]:
        result: dict[str, Any] = self.raw["producer"]
        return result

    @property
    def metadata(self) -> dict[str, Any]:
        return dict(self.raw.get("metadata", {}))

    @property
    def extensions_used(self) -> list[Any]:
        return list(self.raw.get("extensions_used", []))


def _fail(code: str, msg: str, ptr: str | None = None) -> RlarchiveError:
    return RlarchiveError(code, msg, member="manifest.json", pointer=ptr)


#: The members of the objects §5 defines, in the order of their tables (spec §5.1, §5.3): the order
#: their members are checked in (spec §11.2). Other objects (``extensions``, ``metadata``) are free maps.
TABLE_ORDER = {
    (): (
        "format",
        "format_version",
        "producer",
        "members",
        "extensions_used",
        "extensions_required",
        "extensions",
        "metadata",
    ),
    ("producer",): ("name", "version"),
    ("members", "*"): ("name", "size", "sha256"),
}
#: At most this many member entries (spec §15); the first entry beyond is LIMIT_EXCEEDED (spec §11.2).
MAX_ENTRIES = MAX_MEMBERS


def _schema_error_path(e: Any) -> list[Any]:
    """Where a JSON Schema error is located (spec §11.2): a property that is not allowed, a
    property name that breaks its pattern, or the later of two equal items, rather than the
    object or array holding it."""
    path = list(e.absolute_path)
    if e.validator == "additionalProperties" and e.validator_value is False and isinstance(e.instance, dict):
        known = e.schema.get("properties", {})
        patterns = [re.compile(p) for p in e.schema.get("patternProperties", {})]
        extra = next((k for k in e.instance if k not in known and not any(p.search(k) for p in patterns)), None)
        if extra is not None:
            path.append(extra)
    elif "propertyNames" in e.relative_schema_path and isinstance(e.instance, str):
        path.append(e.instance)  # the name itself is the value at fault
    elif e.validator == "uniqueItems" and isinstance(e.instance, list):
        seen: set[Any] = set()
        for i, item in enumerate(e.instance):
            text = json.dumps(item, sort_keys=True)
            if text in seen:
                path.append(i)
                break
            seen.add(text)
    return path


def _order_key(obj: Any, path: list[Any]) -> list[Any]:
    """The place of a location in the order a reader checks the manifest (spec §11.2): depth first;
    inside an object §5 defines, members not allowed there (in document order) before the members
    of its table, in table order; inside an array or a free map, document order."""
    key: list[Any] = []
    node: Any = obj
    where: tuple[Any, ...] = ()
    for p in path:
        if isinstance(node, dict):
            table = TABLE_ORDER.get(where)
            key.append((1, table.index(p)) if table is not None and p in table else (0, list(node).index(p)))
            where = where + (p,)
        else:
            key.append((0, p))
            where = where + ("*",)
        node = node[p]
    return key


def _structure_errors(obj: dict[str, Any]) -> list[Any]:
    """Every break of the manifest's schema (spec §5.1, §5.3), with the duplicate member names and
    the count limit, as (path, code, message)."""
    out = []
    for e in validator("manifest-1.0.schema.json").iter_errors(obj):
        if e.validator == "maxItems" and list(e.absolute_path) == ["members"]:
            continue  # the count limit, below
        out.append((_schema_error_path(e), "MANIFEST_INVALID", e.message))
    entries = obj.get("members")
    if isinstance(entries, list):
        if len(entries) > MAX_ENTRIES:
            out.append((["members", MAX_ENTRIES], "LIMIT_EXCEEDED", f"more than {MAX_ENTRIES} member entries"))
        seen: set[Any] = set()
        for i, entry in enumerate(entries[:MAX_ENTRIES]):
            name = entry.get("name") if isinstance(entry, dict) else None
            if isinstance(name, str):
                if name in seen:
                    out.append((["members", i, "name"], "MANIFEST_INVALID", f"member {name!r} is listed twice"))
                seen.add(name)
    return out


def check(obj: Any, supported: frozenset[Any] = SUPPORTED_EXTENSIONS) -> Manifest:
    """Check a parsed manifest: version first, then its structure, then extensions (spec §5, §11.1 step 6).

    The structure's first issue is the one a reader meets first checking in the order of spec
    §11.2 (depth first, each object's members in the order of its table), whatever order the
    schema validator finds them in.
    """
    if not isinstance(obj, dict):
        raise _fail("MANIFEST_INVALID", "the manifest is not a JSON object", "")
    if "format" not in obj:
        raise _fail("MANIFEST_INVALID", "the manifest needs the member 'format'", "")
    if obj["format"] != FORMAT:
        raise _fail("MANIFEST_INVALID", "format must be 'rlarchive'", "/format")
    if "format_version" not in obj:
        raise _fail("MANIFEST_INVALID", "the manifest needs the member 'format_version'", "")
    ver = obj["format_version"]
    m = _VERSION.fullmatch(ver) if isinstance(ver, str) else None
    if m is None:
        raise _fail("MANIFEST_INVALID", "format_version must be a string MAJOR.MINOR", "/format_version")
    if int(m.group(1)) != MAJOR:
        raise _fail(
            "VERSION_UNSUPPORTED",
            f"format version {ver} is not supported (this reader reads {MAJOR}.x)",
            "/format_version",
        )
    errors = _structure_errors(obj)
    if errors:
        path, code, message = min(errors, key=lambda e: _order_key(obj, e[0]))
        raise _fail(code, message[:300], "".join(f"/{esc(str(p))}" for p in path))
    members: dict[str, dict[str, Any]] = {entry["name"]: entry for entry in obj["members"]}
    used = obj.get("extensions_used", [])
    for i, ext in enumerate(obj.get("extensions_required", [])):
        if ext not in used:
            raise _fail(
                "EXTENSION_UNDECLARED",
                f"required extension {ext} is not in extensions_used",
                f"/extensions_required/{i}",
            )
    for ext in obj.get("extensions", {}):
        if ext not in used:
            raise _fail(
                "EXTENSION_UNDECLARED",
                f"extension data for {ext}, which is not in extensions_used",
                f"/extensions/{esc(ext)}",
            )
    for i, ext in enumerate(obj.get("extensions_required", [])):
        if ext not in supported:
            raise _fail(
                "EXTENSION_UNSUPPORTED", f"required extension {ext} is not supported", f"/extensions_required/{i}"
            )
    out = Manifest(obj, members)
    for k in obj:
        if k not in KNOWN_PROPERTIES:
            out.warnings.append(
                _fail("MANIFEST_UNKNOWN_PROPERTY", f"unknown manifest property {k!r} ignored", "/" + esc(k))
            )
    out.warnings.extend(metadata_keys.check(obj.get("metadata", {})))
    for i, ext in enumerate(used):
        if ext not in supported:
            out.warnings.append(
                _fail(
                    "EXTENSION_UNKNOWN", f"extension {ext} is used but not supported; ignored", f"/extensions_used/{i}"
                )
            )
    return out


def build(
    entries: list[dict[str, Any]],
    producer: tuple[str, str],
    *,
    metadata: Mapping[str, str] | None = None,
    extensions_used: list[Any] | None = None,
    extensions_required: list[Any] | None = None,
    extensions: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest object for a writer (member entries sorted by name, spec §12)."""
    out: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "producer": {"name": producer[0], "version": producer[1]},
        "members": sorted(entries, key=lambda e: e["name"].encode("ascii")),
    }
    if extensions_used:
        out["extensions_used"] = list(extensions_used)
    if extensions_required:
        out["extensions_required"] = list(extensions_required)
    if extensions:
        out["extensions"] = dict(extensions)
    if metadata:
        out["metadata"] = {str(k): str(v) for k, v in metadata.items()}
    return out
