#!/usr/bin/env python3
"""Generate every copy of the portable-policy registry from spec/policy_ops.json (``make tables``), or check them (``--check``).

spec/policy_ops.json is the one source of the operations, activation
functions and heads of the extension RLA_policy (their parameters, cost and
workspace) and of the policy limits. From it come:

- the tables of spec/extensions/RLA_policy.md, each between
  ``<!-- table:NAME -->`` and ``<!-- /table:NAME -->`` (policy-limits,
  policy-operations, policy-activations, policy-heads);
- python/rlarchive/extensions/policy/ops.py and reader-js/src/extensions/policy/ops.js, which the
  description checkers, the evaluators of both readers and the ONNX exporter
  import: the tables, the limits and constants, and ``implementations``, which
  checks each table of implementations against the registry's names.

``--check`` regenerates in memory and fails, naming each stale file, when a
committed file differs (part of ``make test``).
"""

from __future__ import annotations

import json
import os
import pprint
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from tables import _replace, write_outputs  # noqa: E402  (the same markers and writing as spec/tables.py)

HEADER = "generated from spec/policy_ops.json by spec/policy_ops.py (make tables): do not edit"
SPEC = "spec/extensions/RLA_policy.md"


def load() -> dict:
    with open(os.path.join(HERE, "policy_ops.json"), encoding="utf-8") as f:
        return json.load(f)


# -- the specification's tables ----------------------------------------------------------


def _terms(terms: list, unit: str = "") -> str:
    """A formula as the spec writes it: ``2·out + out·width``."""
    if not terms:
        return "0"
    parts = []
    for t in terms:
        k = t["k"]
        factors = ([] if k == 1 else [f"the activation's {unit}" if k == "activation" else str(k)]) + list(t["of"])
        parts.append("·".join(factors))
    return " + ".join(parts)


def _param(p: dict) -> str:
    kind = {
        "ndarray": f"F32 {p.get('shape', '')}".strip(),
        "float": "float",
        "int": "integer",
        "int_pair": f"two integers ≥ {p.get('least')}",
        "int_list": "list of integers",
        "activation": "an activation name (§5, item 5)",
        "lstm_layers": "list of layer maps",
    }.get(p["type"])
    if p["type"] == "enum":
        kind = " or ".join(f'`"{v}"`' for v in p["values"])
    if p.get("least") is not None and p["type"] == "int":
        kind += f" ≥ {p['least']}"
    if p.get("nullable"):
        kind += " or null"
    if "default" in p:
        kind += f", default {json.dumps(p['default'])}"
    if p.get("nonzero"):
        kind += ", not 0"
    return f"`{p['name']}` ({kind})"


def limits_md(r: dict) -> str:
    rows = ["| constant | value | applies to |", "| --- | --- | --- |"]
    rows += [f"| `{x['name']}` | {x['shown']} | {x['applies']} |" for x in r["limits"]]
    return "\n".join(rows)


def quantities_md(r: dict) -> str:
    rows = ["| quantity | means |", "| --- | --- |"]
    rows += [f"| `{q['name']}` | {q['means']} |" for q in r["quantities"]]
    return "\n".join(rows)


def operations_md(r: dict) -> str:
    rows = [
        "| `op` | parameters | inputs | outputs | cost (operations) | workspace (bytes) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for o in r["operations"]:
        params = ", ".join(_param(p) for p in o["parameters"]) or "none"
        rows.append(
            f"| `{o['name']}` | {params} | {o['inputs']}: {o['input']} | {o['outputs']}: {o['output']} | "
            f"POLICY_NODE_COST + {_terms(o['cost'], 'cost')} | {_terms(o['workspace'], 'workspace')} |"
        )
    return "\n".join(rows)


def activations_md(r: dict) -> str:
    rows = [
        "| `fn` | parameters | y | cost per element | workspace per element (bytes) | NaN | +inf | −inf |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for a in r["activations"]:
        params = ", ".join(_param(p) for p in a["parameters"]) or "none"
        formula = a["formula"].replace("|", "\\|")  # |x| inside a table cell
        rows.append(
            f"| `{a['name']}` | {params} | {formula} | {a['cost']} | {a['workspace']} | {a['nan']} | {a['pos_inf']} | {a['neg_inf']} |"
        )
    return "\n".join(rows)


def heads_md(r: dict) -> str:
    rows = [
        "| `op` | parameters | action space | W | cost (operations) | workspace (bytes) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for h in r["heads"]:
        params = ", ".join(_param(p) for p in h["parameters"]) or "none"
        spaces = " or ".join(f"`{s}`" for s in h["spaces"])
        rows.append(
            f"| `{h['name']}` | {params} | {spaces} | {h['width']} | POLICY_NODE_COST + {_terms(h['cost'])} | {_terms(h['workspace'])} |"
        )
    return "\n".join(rows)


# -- the languages' modules -----------------------------------------------------------------


def _by_name(items: list) -> dict:
    return {x["name"]: {k: v for k, v in x.items() if k != "name"} for x in items}


def _defaults(r: dict) -> dict:
    return {a["name"]: {p["name"]: p["default"] for p in a["parameters"]} for a in r["activations"]}


def python_module(r: dict) -> str:
    def lit(v: object) -> str:
        return pprint.pformat(v, width=140, sort_dicts=False)

    out = [
        f'"""The operation registry of the portable policy, extension RLA_policy ({HEADER})."""',
        "from types import MappingProxyType",
        "from typing import Any, Mapping, TypeVar",
        "",
        "# The policy limits (RLA_policy §5.11).",
    ]
    out += [f"{x['name']} = {x['value']}" for x in r["limits"]]
    out += ["", "# Constants of the heads (RLA_policy §6)."]
    out += [f"#: {x['means']}\n{x['name']} = {x['value']!r}" for x in r["constants"]]
    out += [
        "",
        "#: Quantities the cost and workspace formulas name (RLA_policy §5.11).",
        f"QUANTITIES: tuple[str, ...] = {tuple(q['name'] for q in r['quantities'])!r}",
        "",
        "#: Operations (RLA_policy §5): parameters, inputs, outputs, cost and workspace formulas.",
        f"OPERATIONS: dict[str, dict[str, Any]] = {lit(_by_name(r['operations']))}",
        "",
        "#: Activation functions (RLA_policy §5.5): parameters, formula, cost and workspace per element, values at NaN and infinities.",
        f"ACTIVATIONS: dict[str, dict[str, Any]] = {lit(_by_name(r['activations']))}",
        "",
        "#: Activation function -> {parameter: default}.",
        f"ACTIVATION_DEFAULTS: dict[str, dict[str, Any]] = {lit(_defaults(r))}",
        "",
        "#: Heads (RLA_policy §6): parameters, action space kinds, cost and workspace formulas.",
        f"HEADS: dict[str, dict[str, Any]] = {lit(_by_name(r['heads']))}",
        "",
        '_T = TypeVar("_T")',
        "",
        "",
        "def implementations(table: Mapping[str, Any], functions: Mapping[str, _T], what: str) -> Mapping[str, _T]:",
        '    """``functions`` (name -> implementation), checked to implement exactly the names of ``table`` (OPERATIONS, ACTIVATIONS or HEADS).',
        "",
        "    The registry is the one source of the names: a table of implementations that",
        "    lacks one of them, or has one the registry does not, fails when its module is",
        "    imported (RuntimeError), before anything runs.",
        '    """',
        "    missing, extra = sorted(set(table) - set(functions)), sorted(set(functions) - set(table))",
        "    if missing or extra:",
        '        raise RuntimeError(f"the {what} differ from the registry: {missing} lack an implementation, {extra} are not in it")',
        "    return MappingProxyType(dict(functions))",
    ]
    return "\n".join(out) + "\n"


def js_module(r: dict) -> str:
    def lit(v: object) -> str:
        return json.dumps(v, indent=2, ensure_ascii=False)

    out = [
        f"// The operation registry of the portable policy, extension RLA_policy ({HEADER}).",
        "",
        "/**",
        " * A term of a cost or workspace formula: k (for an activation node, 'activation': the activation's own cost or",
        " * workspace per element) times the product of the quantities named in `of`.",
        " * @typedef {{k: number | 'activation', of: string[]}} Term",
        " */",
        "/**",
        " * A parameter of an operation, an activation function or a head.",
        " * @typedef {{name: string, type: string, shape?: string, required?: boolean, nullable?: boolean, least?: number,",
        " *   values?: string[], default?: number | string, nonzero?: boolean}} Parameter",
        " */",
        "/**",
        " * An operation: its input ranks (least, most or null), its inputs (a number, or '1 or more'), its outputs,",
        " * parameters, cost and workspace.",
        " * @typedef {{input_rank: (number | null)[], inputs: number | string, outputs: number, parameters: Parameter[],",
        " *   input: string, output: string, cost: Term[], workspace: Term[], workspace_means: string}} Operation",
        " */",
        "/**",
        " * An activation function: its parameters, formula, cost and workspace per element, values at NaN and infinities.",
        " * @typedef {{parameters: Parameter[], formula: string, constants?: Record<string, number>, ordered?: string[],",
        " *   cost: number, workspace: number, nan: string, pos_inf: string, neg_inf: string}} Activation",
        " */",
        "/**",
        " * A head: its parameters, the action space kinds it acts in, its width, cost and workspace.",
        " * @typedef {{parameters: Parameter[], spaces: string[], width: string, cost: Term[], workspace: Term[]}} Head",
        " */",
        "",
        "/**",
        " * @template T",
        " * @param {T} v",
        " * @returns {T}",
        " */",
        "const deepFreeze = (v) => {",
        "  if (v !== null && typeof v === 'object') {",
        "    Object.values(v).forEach(deepFreeze);",
        "    Object.freeze(v);",
        "  }",
        "  return v;",
        "};",
        "",
        "// The policy limits (RLA_policy §5.11).",
    ]
    out += [f"export const {x['name']} = {x['value']};" for x in r["limits"]]
    out += ["", "// Constants of the heads (RLA_policy §6)."]
    out += [f"/** {x['means']} */\nexport const {x['name']} = {json.dumps(x['value'])};" for x in r["constants"]]
    out += [
        "",
        "/**",
        " * Quantities the cost and workspace formulas name (RLA_policy §5.11).",
        " * @type {readonly string[]}",
        " */",
        f"export const QUANTITIES = deepFreeze({json.dumps([q['name'] for q in r['quantities']])});",
        "",
        "/**",
        " * Operations (RLA_policy §5): parameters, inputs, outputs, cost and workspace formulas.",
        " * @type {Readonly<Record<string, Operation>>}",
        " */",
        f"export const OPERATIONS = deepFreeze({lit(_by_name(r['operations']))});",
        "",
        "/**",
        " * Activation functions (RLA_policy §5.5): parameters, formula, cost and workspace per element, values at NaN and infinities.",
        " * @type {Readonly<Record<string, Activation>>}",
        " */",
        f"export const ACTIVATIONS = deepFreeze({lit(_by_name(r['activations']))});",
        "",
        "/**",
        " * Activation function -> {parameter: default}.",
        " * @type {Readonly<Record<string, Readonly<Record<string, number | string>>>>}",
        " */",
        f"export const ACTIVATION_DEFAULTS = deepFreeze({lit(_defaults(r))});",
        "",
        "/**",
        " * Heads (RLA_policy §6): parameters, action space kinds, cost and workspace formulas.",
        " * @type {Readonly<Record<string, Head>>}",
        " */",
        f"export const HEADS = deepFreeze({lit(_by_name(r['heads']))});",
        "",
        "/**",
        " * `functions` (name -> implementation), checked to implement exactly the names of `table` (OPERATIONS,",
        " * ACTIVATIONS or HEADS): the registry is the one source of the names, so a table of implementations that",
        " * lacks one of them, or has one the registry does not, throws when its module loads, before anything runs.",
        " * @template T",
        " * @param {Record<string, unknown>} table",
        " * @param {Record<string, T>} functions",
        " * @param {string} what",
        " * @returns {Readonly<Record<string, T>>}",
        " */",
        "export function implementations(table, functions, what) {",
        "  const missing = Object.keys(table).filter((k) => !Object.hasOwn(functions, k)).sort();",
        "  const extra = Object.keys(functions).filter((k) => !Object.hasOwn(table, k)).sort();",
        "  if (missing.length || extra.length) throw new Error(`the ${what} differ from the registry: ${JSON.stringify(missing)} lack an implementation, ${JSON.stringify(extra)} are not in it`);",
        "  return Object.freeze({ ...functions });",
        "}",
    ]
    return "\n".join(out) + "\n"


def outputs(r: dict) -> dict:
    """path (relative to the repository) -> its generated content."""
    files: dict[str, str] = {
        "python/rlarchive/extensions/policy/ops.py": python_module(r),
        "reader-js/src/extensions/policy/ops.js": js_module(r),
    }
    tables = {
        "policy-limits": limits_md(r),
        "policy-quantities": quantities_md(r),
        "policy-operations": operations_md(r),
        "policy-activations": activations_md(r),
        "policy-heads": heads_md(r),
    }
    with open(os.path.join(ROOT, SPEC), encoding="utf-8") as f:
        text = f.read()
    for name, body in tables.items():
        text = _replace(text, name, body, SPEC)
    files[SPEC] = text
    return files


def main() -> int:
    return write_outputs(outputs(load()), "--check" in sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
