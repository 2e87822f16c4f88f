#!/usr/bin/env python3
"""Generate every copy of the shared tables from spec/tables.json (``make tables``), or check them (``--check``).

spec/tables.json is the one source of the error catalogue (code, severity,
section, meaning), the dtype table (code, element, size, alignment, kind) and
the limits. From it come:

- the tables of the specification: the catalogue in spec/errors.md, the dtype
  table of §10.1 and the limits of §15 in spec/rlarchive.md, each between
  ``<!-- table:NAME -->`` and ``<!-- /table:NAME -->``;
- python/rlarchive/tables.py and reader-js/src/tables.js, which the two
  readers' errors, dtypes and limits modules import;
- the error-code type of reader-js/index.d.ts, between the same markers.

``--check`` regenerates in memory and fails, naming each stale file, when a
committed file differs (part of ``make test``).
"""

from __future__ import annotations

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HEADER = "generated from spec/tables.json by spec/tables.py (make tables): do not edit"


def load() -> dict:
    with open(os.path.join(HERE, "tables.json"), encoding="utf-8") as f:
        return json.load(f)


# -- the specification's tables ----------------------------------------------------------


def errors_md(t: dict) -> str:
    rows = ["| code | severity | section | when |", "| --- | --- | --- | --- |"]
    rows += [f"| `{e['code']}` | {e['severity']} | {e['section']} | {e['when']} |" for e in t["errors"]]
    return "\n".join(rows)


def api_md(t: dict) -> str:
    rows = ["| code | when |", "| --- | --- |"]
    rows += [f"| `{e['code']}` | {e['when']} |" for e in t["api_errors"]]
    return "\n".join(rows)


def dtypes_md(t: dict) -> str:
    rows = ["| code | element | size (bytes) | alignment (bytes) |", "| --- | --- | --- | --- |"]
    rows += [f"| `{d['code']}` | {d['element']} | {d['size']} | {d['alignment']} |" for d in t["dtypes"]]
    return "\n".join(rows)


def _scope(limit: dict) -> str:
    """What a limit of §15 is for, when not for files: `` (writer)``, `` (partial reads)``..."""
    scope = "writer" if limit.get("writer") else limit.get("scope")
    return f" ({scope})" if scope else ""


def limits_md(t: dict) -> str:
    rows = ["| constant | value | applies to |", "| --- | --- | --- |"]
    rows += [f"| `{x['name']}`{_scope(x)} | {x['shown']} | {x['applies']} |" for x in t["limits"]]
    return "\n".join(rows)


def _replace(text: str, name: str, body: str, path: str) -> str:
    pattern = re.compile(rf"(<!-- table:{name} -->\n)(.*?)(\n[^\n]*<!-- /table:{name} -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path}: no <!-- table:{name} --> markers")
    return pattern.sub(lambda m: m.group(1) + body + m.group(3), text)


# -- the languages' constants ---------------------------------------------------------------


def python_module(t: dict) -> str:
    out = [
        f'"""The shared tables of the specification ({HEADER})."""',
        "",
        "#: File error codes (spec/errors.md) and their severity, in the catalogue's order.",
        "CATALOGUE: dict[str, str] = {",
    ]
    out += [f'    "{e["code"]}": "{e["severity"]}",' for e in t["errors"]]
    out += ["}", "", "#: Codes raised for a caller's request rather than for a file.", "API_CODES: tuple[str, ...] = ("]
    out += [f'    "{e["code"]}",' for e in t["api_errors"]]
    out += [
        ")",
        "",
        "#: dtype code -> (size, alignment, kind), in the order of spec §10.1.",
        "DTYPE_TABLE: dict[str, tuple[int, int, str]] = {",
    ]
    out += [f'    "{d["code"]}": ({d["size"]}, {d["alignment"]}, "{d["kind"]}"),' for d in t["dtypes"]]
    out += ["}", "", "# The limits of spec §15."]
    out += [f"{x['name']} = {x['value']}" for x in t["limits"]]
    return "\n".join(out) + "\n"


def js_module(t: dict) -> str:
    out = [
        f"// The shared tables of the specification ({HEADER}).",
        "",
        "/** File error codes (spec/errors.md) and their severity, in the catalogue's order. */",
        "export const CATALOGUE = Object.freeze({",
    ]
    out += [f"  {e['code']}: '{e['severity']}'," for e in t["errors"]]
    out += [
        "});",
        "",
        "/** Codes raised for a caller's request rather than for a file. */",
        "export const API_CODES = Object.freeze([",
    ]
    out += [f"  '{e['code']}'," for e in t["api_errors"]]
    out += [
        "]);",
        "",
        "/** dtype code -> [size, alignment, kind], in the order of spec §10.1. */",
        "export const DTYPE_TABLE = Object.freeze({",
    ]
    out += [f"  {d['code']}: Object.freeze([{d['size']}, {d['alignment']}, '{d['kind']}'])," for d in t["dtypes"]]
    out += ["});", "", "// The limits of spec §15."]
    out += [f"export const {x['name']} = {x['value']};" for x in t["limits"]]
    return "\n".join(out) + "\n"


def dts_codes(t: dict) -> str:
    codes = " | ".join(f"'{e['code']}'" for e in t["errors"] + t["api_errors"])
    return f"/** Every stable error code (spec/errors.md; {HEADER}). */\nexport type ErrorCode = {codes};"


def load_checks() -> dict:
    with open(os.path.join(HERE, "checks.json"), encoding="utf-8") as f:
        return json.load(f)


def _anchors(kind: str, names) -> str:
    if not names:
        return "—"
    return " or ".join(f"`{n}`" if n else "(none)" for n in ([names] if isinstance(names, str) else names))


def checks_md(c: dict) -> str:
    """The location table: every check in the order of §11.1, its code and where its issue is."""
    rows = [
        "| step | check | section | code | member | pointer | offset | located at |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for x in c["checks"]:
        member = "—" if x["member"] == "none" else f"`{x['member']}`"
        rows.append(
            f"| {x['step']} | `{x['id']}` | {x['section']} | `{x['code']}` | {member} | {_anchors('pointer', x['pointer'])} | {_anchors('offset', x['offset'])} | {x['where']} |"
        )
    return "\n".join(rows)


def anchors_md(c: dict) -> str:
    """The anchors the location table names, with their meaning."""
    rows = ["| field | anchor | meaning |", "| --- | --- | --- |"]
    for field in ("member", "pointer", "offset"):
        rows += [f"| {field} | `{name}` | {text} |" for name, text in c["anchors"][field].items()]
    return "\n".join(rows)


def outputs(t: dict) -> dict:
    """path (relative to the repository) -> its generated content."""
    files: dict[str, str] = {
        "python/rlarchive/tables.py": python_module(t),
        "reader-js/src/tables.js": js_module(t),
    }
    for path, tables in (
        (
            "spec/errors.md",
            {
                "errors": errors_md(t),
                "api-errors": api_md(t),
                "checks": checks_md(load_checks()),
                "anchors": anchors_md(load_checks()),
            },
        ),
        ("spec/rlarchive.md", {"dtypes": dtypes_md(t), "limits": limits_md(t)}),
        ("reader-js/index.d.ts", {"error-codes": dts_codes(t)}),
    ):
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        for name, body in tables.items():
            text = _replace(text, name, body, path)
        files[path] = text
    return files


def write_outputs(files: dict, check: bool) -> int:
    """Write each generated file that differs (or, with ``check``, name it as stale); 1 when any was stale."""
    stale = []
    for rel, content in files.items():
        path = os.path.join(ROOT, rel)
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if current == content:
            continue
        if check:
            stale.append(rel)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(content)
            print(f"wrote {rel}")
    for rel in stale:
        print(f"stale: {rel} (run make tables)")
    return 1 if stale else 0


def main() -> int:
    return write_outputs(outputs(load()), "--check" in sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
