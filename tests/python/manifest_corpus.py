"""Manifests to hold the readers' step-6 checks against schemas/manifest-1.0.schema.json: the manifest of
every test vector, and mutations of them (every node deleted or replaced by values of every kind, members
added, entries repeated, two mutations at once), with the schema's verdict in the order of spec §11.2.

``schema_issue(obj)`` is that verdict: every break of the schema, with the two rules of §5.3 a schema
cannot say (a repeated member name, more than MAX_MEMBERS entries), and of them the one a reader meets
first checking in the order of §11.2 (depth first; inside an object of §5, a member not allowed before
the members of its table, in table order; arrays and free maps in document order).
"""

from __future__ import annotations

import copy
import gzip
import io
import json
import os
import random
import re
import zipfile
from collections.abc import Iterator
from typing import Any

from suite import ROOT

VECTORS = os.path.join(ROOT, "test-vectors")
MAX_ENTRIES = 4096
SHA = "0" * 64

#: The members of the objects §5 defines, in the order of their tables (an oracle of its own: not the readers').
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

#: Values every node is replaced by: each JSON type, and the edges of every rule of §5.1 and §5.3.
REPLACEMENTS: list[Any] = [
    None,
    True,
    0,
    -1,
    29.0,
    1.5,
    "",
    "x" * 255,
    "x" * 256,
    "x" * 257,
    "é" * 256,
    "a\n",
    "mimetype",
    "manifest.json",
    "a/b",
    "a//b",
    "/a",
    "a/",
    "RLA_x",
    "Bad-Name",
    "A" * 64,
    "A" * 65,
    SHA,
    "0" * 63 + "G",
    "A" * 64 + "\n",
    [],
    ["RLA_x", "RLA_x"],
    ["RLA_x", 1],
    {},
    {"k": 1},
    {"k": "v"},
    {"name": "data.json", "size": 1, "sha256": SHA},
]


def vector_manifests() -> list[bytes]:
    """The manifest.json of every vector whose ZIP Python's zipfile can read, once each."""
    with open(os.path.join(VECTORS, "index.json"), encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    seen: dict[bytes, None] = {}
    for c in cases:
        path = os.path.join(VECTORS, c["file"])
        with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
            raw = f.read()
        try:
            with zipfile.ZipFile(io.BytesIO(raw)) as z:
                text = z.read("manifest.json")
        except Exception:  # a vector whose ZIP or manifest member is broken on purpose
            continue
        seen.setdefault(text, None)
    return list(seen)


def _parse(text: bytes) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _paths(node: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, at + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):  # the first entries: the rest repeat them
            yield from _paths(v, at + (i,))


def _replaced(obj: Any, path: tuple[Any, ...], value: Any, delete: bool = False) -> Any:
    out = copy.deepcopy(obj)
    if not path:
        return value
    parent = out
    for p in path[:-1]:
        parent = parent[p]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(value)
    return out


def _node(obj: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        obj = obj[p]
    return obj


def _edits(obj: Any) -> list[tuple[tuple[Any, ...], str, Any]]:
    """The single mutations of ``obj`` as (path, edit, value): each node deleted (from an object) or replaced
    by each of REPLACEMENTS; each object given a member before and after its own, or its members reversed;
    each array's first element repeated."""
    out: list[tuple[tuple[Any, ...], str, Any]] = []
    for path in _paths(obj):
        node = _node(obj, path)
        if path and isinstance(_node(obj, path[:-1]), dict):
            out.append((path, "delete", None))
        out += [(path, "replace", v) for v in REPLACEMENTS]
        if isinstance(node, dict):
            out += [(path, "prepend", None), (path, "append", None), (path, "reverse", None)]
        if isinstance(node, list) and node:
            out.append((path, "repeat", None))
    return out


def _apply(obj: Any, edit: tuple[tuple[Any, ...], str, Any]) -> Any:
    path, kind, value = edit
    if kind in ("delete", "replace"):
        return _replaced(obj, path, value, delete=kind == "delete")
    node = _node(obj, path)
    new = {
        "prepend": lambda: {"zz": 1, **node},
        "append": lambda: {**node, "": "x"},
        "reverse": lambda: dict(reversed(list(node.items()))),
        "repeat": lambda: node + [node[0]],
    }[kind]()
    return _replaced(obj, path, new)


def single_mutations(obj: Any) -> Iterator[Any]:
    """Every single mutation of ``obj`` (``_edits``)."""
    for edit in _edits(obj):
        yield _apply(obj, edit)


def double_mutations(bases: list[Any], count: int, seed: int) -> Iterator[Any]:
    """``count`` manifests with two mutations each (two issues: which one comes first), from a seeded RNG."""
    rng = random.Random(seed)
    for _ in range(count):
        obj = rng.choice(bases)
        for _ in range(2):
            obj = _apply(obj, rng.choice(_edits(obj)))
        yield obj


def _entries(n: int) -> list[dict[str, Any]]:
    return [{"name": f"z/{i}", "size": 0, "sha256": SHA} for i in range(n)]


def count_limit_manifests() -> list[Any]:
    """At and beyond MAX_MEMBERS entries, with an issue before the limit, after it, and a repeated name."""

    def m(members: list[Any]) -> dict[str, Any]:
        return {
            "format": "rlarchive",
            "format_version": "1.0",
            "producer": {"name": "p", "version": "1"},
            "members": members,
        }

    many = _entries(MAX_ENTRIES + 1)
    bad_early = _entries(MAX_ENTRIES + 1)
    bad_early[7]["size"] = -1
    bad_late = _entries(MAX_ENTRIES + 2)
    bad_late[MAX_ENTRIES + 1]["size"] = -1
    repeated = _entries(MAX_ENTRIES + 1)
    repeated[MAX_ENTRIES]["name"] = "z/0"
    return [m(_entries(MAX_ENTRIES)), m(many), m(bad_early), m(bad_late), m(repeated)]


def corpus(doubles: int = 1500, seed: int = 20240611) -> list[bytes]:
    """Every vector's manifest, every single mutation of the distinct shapes among them, ``doubles``
    double mutations, and the count-limit manifests: JSON texts, each once, in a fixed order."""
    texts = vector_manifests()
    parsed = [o for o in (_parse(t) for t in texts) if isinstance(o, dict)]
    shapes: dict[str, Any] = {}
    for o in parsed:  # one base per shape: which members, how many entries (up to 3), which objects
        key = json.dumps(_shape(o), sort_keys=True)
        shapes.setdefault(key, o)
    out: dict[bytes, None] = dict.fromkeys(texts)
    for base in shapes.values():
        for obj in single_mutations(base):
            out.setdefault(json.dumps(obj).encode(), None)
    for obj in double_mutations(list(shapes.values()), doubles, seed):
        out.setdefault(json.dumps(obj).encode(), None)
    for obj in count_limit_manifests():
        out.setdefault(json.dumps(obj).encode(), None)
    return list(out)


def _shape(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: _shape(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_shape(v) for v in o[:3]]
    return type(o).__name__


# -- the schema's verdict, in the order of §11.2 ------------------------------------------------------------


def _schema_error_path(e: Any) -> list[Any]:
    """Where a schema error is located (spec §11.2): a member not allowed, a property name that breaks its
    pattern, or the later of two equal items, rather than the object or array holding it."""
    path = list(e.absolute_path)
    if e.validator == "additionalProperties" and e.validator_value is False and isinstance(e.instance, dict):
        known = e.schema.get("properties", {})
        extra = next((k for k in e.instance if k not in known), None)
        if extra is not None:
            path.append(extra)
    elif "propertyNames" in e.relative_schema_path and isinstance(e.instance, str):
        path.append(e.instance)
    elif e.validator == "uniqueItems" and isinstance(e.instance, list):
        seen: set[str] = set()
        for i, item in enumerate(e.instance):
            text = json.dumps(item, sort_keys=True)
            if text in seen:
                path.append(i)
                break
            seen.add(text)
    return path


def _order_key(obj: Any, path: list[Any]) -> list[Any]:
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


_DOLLAR = re.compile(r"(?<!\\)\$")


def _validator() -> Any:
    """The manifest schema's draft 2020-12 validator, its patterns with ECMA-262's ``$`` (only at the very end)."""
    import jsonschema

    def ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
        if isinstance(instance, str) and not re.search(_DOLLAR.sub(r"\\Z", pattern), instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")

    with open(os.path.join(ROOT, "schemas", "manifest-1.0.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": ecma_pattern})(schema)


_VALIDATOR: list[Any] = []


def schema_issue(obj: Any) -> tuple[str, str] | None:
    """(code, JSON Pointer) of the first issue of the schema and the two rules of §5.3 it cannot say, in the
    order of §11.2; None when the manifest satisfies them all."""
    if not _VALIDATOR:
        _VALIDATOR.append(_validator())
    found: list[tuple[list[Any], str]] = []
    for e in _VALIDATOR[0].iter_errors(obj):
        if e.validator == "maxItems" and list(e.absolute_path) == ["members"]:
            continue  # the count limit, below
        found.append((_schema_error_path(e), "MANIFEST_INVALID"))
    entries = obj.get("members") if isinstance(obj, dict) else None
    if isinstance(entries, list):
        if len(entries) > MAX_ENTRIES:
            found.append((["members", MAX_ENTRIES], "LIMIT_EXCEEDED"))
        names: set[Any] = set()
        for i, entry in enumerate(entries[:MAX_ENTRIES]):
            name = entry.get("name") if isinstance(entry, dict) else None
            if isinstance(name, str):
                if name in names:
                    found.append((["members", i, "name"], "MANIFEST_INVALID"))
                names.add(name)
    if not found:
        return None
    path, code = min(found, key=lambda f: _order_key(obj, f[0]))
    return code, "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
