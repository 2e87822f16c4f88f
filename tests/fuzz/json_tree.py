"""JSON trees for the fuzz mutators: parsed with order, duplicates and literal text kept, and written back
in any style (:class:`Lit` numbers and raw text, :class:`JObj` objects)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


class Lit:
    """A literal JSON token kept as text: numbers, and raw injected text (NaN, escapes, junk)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Lit({self.text!r})"


class JObj(list):
    """A JSON object as a list of [key, value] pairs: order and duplicates kept. Keys are str or Lit."""


def parse_tree(raw: bytes) -> Any:
    """A JSON text as a tree (JObj, list, str, Lit numbers, True/False/None); raises ValueError."""
    return json.loads(
        raw.decode("utf-8"),
        object_pairs_hook=lambda pairs: JObj([list(p) for p in pairs]),
        parse_int=Lit,
        parse_float=Lit,
        parse_constant=Lit,
    )


@dataclass
class Style:
    ascii: bool = False
    space: str = ""  # after ',' and ':'
    newline: bool = False


def ser(v: Any, style: Style = Style(), depth: int = 0) -> str:
    if isinstance(v, Lit):
        return v.text
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=style.ascii)
    if isinstance(v, (int, float)):
        return json.dumps(v)
    nl = ("\n" + " " * (depth + 1)) if style.newline else ""
    if isinstance(v, JObj):
        parts = [
            (k.text if isinstance(k, Lit) else json.dumps(k, ensure_ascii=style.ascii))
            + ":"
            + style.space
            + ser(x, style, depth + 1)
            for k, x in v
        ]
        return "{" + nl + ("," + style.space + nl).join(parts) + "}"
    if isinstance(v, list):
        return "[" + nl + ("," + style.space + nl).join(ser(x, style, depth + 1) for x in v) + "]"
    raise TypeError(type(v))


def tree_bytes(v: Any, style: Style = Style()) -> bytes:
    return ser(v, style).encode("utf-8", "surrogatepass")


def get(obj: Any, key: str) -> Any:
    if isinstance(obj, JObj):
        for k, x in obj:
            if k == key:
                return x
    return None


def put(obj: JObj, key: str, value: Any) -> None:
    if not isinstance(obj, JObj):
        return
    for p in obj:
        if p[0] == key:
            p[1] = value
            return
    obj.append([key, value])


def lit_int(x: Any) -> int | None:
    if isinstance(x, Lit):
        try:
            return int(x.text)
        except ValueError:
            return None
    return None


def nodes(tree: Any) -> list:
    """Every node as (container, index or key position, value); the root has container None."""
    out = [(None, None, tree)]
    stack = [tree]
    while stack:
        v = stack.pop()
        if isinstance(v, JObj):
            for i, p in enumerate(v):
                out.append((v, i, p[1]))
                stack.append(p[1])
        elif isinstance(v, list):
            for i, x in enumerate(v):
                out.append((v, i, x))
                stack.append(x)
    return out


def replace(container: Any, pos: Any, value: Any) -> None:
    if isinstance(container, JObj):
        container[pos][1] = value
    else:
        container[pos] = value


def depth_of(v: Any) -> int:
    if isinstance(v, JObj):
        return 1 + max((depth_of(x) for _, x in v), default=0)
    if isinstance(v, list):
        return 1 + max((depth_of(x) for x in v), default=0)
    return 0


def copy_tree(v: Any) -> Any:
    if isinstance(v, JObj):
        return JObj([[k, copy_tree(x)] for k, x in v])
    if isinstance(v, list):
        return [copy_tree(x) for x in v]
    return v
