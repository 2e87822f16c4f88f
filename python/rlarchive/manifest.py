"""The manifest (spec §5): building it, and checking it in the order of spec §11.1 step 6."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import metadata as metadata_keys
from .errors import RlarchiveError, esc, members_pointer
from .extensions import NAMES
from .limits import MAX_MEMBERS, MAX_NAME_BYTES

FORMAT = "rlarchive"
#: The format version this implementation reads and writes (spec §5.2).
FORMAT_VERSION = "1.0"
MAJOR, MINOR = map(int, FORMAT_VERSION.split("."))
#: Extensions this implementation supports (spec §5.4 and spec/extensions/).
SUPPORTED_EXTENSIONS: frozenset[str] = frozenset(NAMES)
#: The manifest's properties in the order of the table of spec §5.1, the order they are checked in (spec §11.2).
PROPERTIES = (
    "format",
    "format_version",
    "producer",
    "members",
    "extensions_used",
    "extensions_required",
    "extensions",
    "metadata",
)
REQUIRED = ("format", "format_version", "producer", "members")
KNOWN_PROPERTIES = frozenset(PROPERTIES)
#: The members of ``producer`` (spec §5.1) and of a member entry (spec §5.3), in the order of their tables.
PRODUCER_PROPERTIES = ("name", "version")
ENTRY_PROPERTIES = ("name", "size", "sha256")
#: The longest producer name and version, in characters (spec §5.1).
MAX_PRODUCER_CHARS = 256
#: Names no member entry may have: the two members the manifest does not list (spec §5.3).
UNLISTED = ("mimetype", "manifest.json")
_VERSION = re.compile(r"(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})")
_EXTENSION_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")
_MEMBER_NAME = re.compile(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*")
_SHA256 = re.compile(r"[0-9a-f]{64}")


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


#: An issue of the manifest's structure: (JSON Pointer, message, code).
Issue = tuple[str, str, str]


def _invalid(pointer: str, message: str) -> Issue:
    return (pointer, message, "MANIFEST_INVALID")


def _is_size(x: Any) -> bool:
    """An integer >= 0 as JSON Schema 2020-12 counts them: a number whose value is integral (spec §5.3)."""
    if isinstance(x, bool):
        return False
    return (isinstance(x, int) or (isinstance(x, float) and x.is_integer())) and x >= 0


def _producer_issue(producer: Any, ptr: str) -> Issue | None:
    """``producer``: an object with exactly ``name`` and ``version`` (a missing member at the object, one
    not allowed at it), then ``name`` (1 to 256 characters), ``version`` (at most 256)."""
    if not isinstance(producer, dict) or set(producer) != set(PRODUCER_PROPERTIES):
        where = members_pointer(producer, ptr, PRODUCER_PROPERTIES)
        return _invalid(where, "producer must be an object with exactly the members name and version")
    name, version = producer["name"], producer["version"]
    if not (isinstance(name, str) and 1 <= len(name) <= MAX_PRODUCER_CHARS):
        return _invalid(f"{ptr}/name", f"producer name must be a string of 1 to {MAX_PRODUCER_CHARS} characters")
    if not (isinstance(version, str) and len(version) <= MAX_PRODUCER_CHARS):
        return _invalid(
            f"{ptr}/version", f"producer version must be a string of at most {MAX_PRODUCER_CHARS} characters"
        )
    return None


def _entry_issue(entry: Any, at: str, seen: set[str]) -> Issue | None:
    """One member entry (spec §5.3): an object with exactly its three members, then ``name`` (its pattern,
    then its distinctness from the names in ``seen``), ``size``, ``sha256``."""
    if not isinstance(entry, dict) or set(entry) != set(ENTRY_PROPERTIES):
        where = members_pointer(entry, at, ENTRY_PROPERTIES)
        return _invalid(where, "a member entry must be an object with exactly the members name, size and sha256")
    name = entry["name"]
    if not (
        isinstance(name, str) and len(name) <= MAX_NAME_BYTES and name not in UNLISTED and _MEMBER_NAME.fullmatch(name)
    ):
        return _invalid(f"{at}/name", "invalid member name")
    if name in seen:
        return _invalid(f"{at}/name", f"member {name!r} is listed twice")
    seen.add(name)
    if not _is_size(entry["size"]):
        return _invalid(f"{at}/size", "size must be an integer >= 0")
    sha = entry["sha256"]
    if not (isinstance(sha, str) and _SHA256.fullmatch(sha)):
        return _invalid(f"{at}/sha256", "sha256 must be 64 lower-case hex digits")
    return None


def _members_issue(entries: Any, ptr: str) -> Issue | None:
    """``members``: an array, then entry by entry; more than MAX_MEMBERS entries is LIMIT_EXCEEDED at the
    first entry beyond, in its turn (spec §5.3)."""
    if not isinstance(entries, list):
        return _invalid(ptr, "members must be an array")
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        at = f"{ptr}/{i}"
        if i == MAX_MEMBERS:
            return (at, f"more than {MAX_MEMBERS} member entries", "LIMIT_EXCEEDED")
        issue = _entry_issue(entry, at, seen)
        if issue is not None:
            return issue
    return None


def _extension_list_issue(names: Any, ptr: str) -> Issue | None:
    """``extensions_used``, ``extensions_required``: an array, each element a well-formed extension name
    unequal to the ones before it (both at the element)."""
    if not isinstance(names, list):
        return _invalid(ptr, f"{ptr[1:]} must be an array")
    seen: set[str] = set()
    for i, name in enumerate(names):
        if not (isinstance(name, str) and _EXTENSION_NAME.fullmatch(name)):
            return _invalid(f"{ptr}/{i}", "invalid extension name")
        if name in seen:
            return _invalid(f"{ptr}/{i}", "extension names must be unique")
        seen.add(name)
    return None


def _extensions_issue(extensions: Any, ptr: str) -> Issue | None:
    """``extensions``: an object whose keys, in document order, are well-formed extension names."""
    if not isinstance(extensions, dict):
        return _invalid(ptr, "extensions must be an object")
    bad = next((k for k in extensions if not _EXTENSION_NAME.fullmatch(k)), None)
    return None if bad is None else _invalid(f"{ptr}/{esc(bad)}", "invalid extension name")


def _metadata_issue(metadata: Any, ptr: str) -> Issue | None:
    """``metadata``: an object whose values, in document order, are strings."""
    if not isinstance(metadata, dict):
        return _invalid(ptr, "metadata must be an object")
    bad = next((k for k, v in metadata.items() if not isinstance(v, str)), None)
    return None if bad is None else _invalid(f"{ptr}/{esc(bad)}", "metadata values must be strings")


#: The rules of each property after ``format`` and ``format_version`` (spec §5.1), by name.
_PROPERTY_RULES: dict[str, Callable[[Any, str], Issue | None]] = {
    "producer": _producer_issue,
    "members": _members_issue,
    "extensions_used": _extension_list_issue,
    "extensions_required": _extension_list_issue,
    "extensions": _extensions_issue,
    "metadata": _metadata_issue,
}


def structure_issue(obj: dict[str, Any]) -> Issue | None:
    """The first break of the rules of spec §5.1 and §5.3 in the order of §11.2, or None: a missing
    REQUIRED property (at the manifest), then each property in the order of §5.1's table, depth first.
    ``format`` and ``format_version`` are checked before (spec §5.2); schemas/manifest-1.0.schema.json
    states the same rules (tests hold the two against each other)."""
    missing = next((k for k in REQUIRED if k not in obj), None)
    if missing is not None:
        return _invalid("", f"the manifest needs the member {missing!r}")
    for key in PROPERTIES:
        rule = _PROPERTY_RULES.get(key)
        issue = rule(obj[key], f"/{key}") if rule is not None and key in obj else None
        if issue is not None:
            return issue
    return None


def check(obj: Any, supported: frozenset[Any] = SUPPORTED_EXTENSIONS) -> Manifest:
    """Check a parsed manifest: version first, then its structure, then extensions (spec §5, §11.1 step 6).

    The structure's first issue is the one a reader meets first checking in the order of spec
    §11.2 (depth first, each object's members in the order of its table).
    """
    if not isinstance(obj, dict):
        raise _fail("MANIFEST_INVALID", "the manifest is not a JSON object", "")
    if "format" not in obj:
        raise _fail("MANIFEST_INVALID", "the manifest needs the member 'format'", "")
    if obj["format"] != FORMAT:
        raise _fail("MANIFEST_INVALID", f"format must be {FORMAT!r}", "/format")
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
    issue = structure_issue(obj)
    if issue is not None:
        pointer, message, code = issue
        raise _fail(code, message, pointer)
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
