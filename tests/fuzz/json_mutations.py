"""Mutations of a JSON document, as a tree (values, types, tags, members, numbers, strings, duplicate keys,
nesting) and as text (BOM, bad UTF-8, NaN literals, syntax)."""

from __future__ import annotations

import base64
import json
import random
from dataclasses import dataclass, field
from typing import Any

from json_pools import (
    BAD_DTYPES,
    BIG_INT_STRINGS,
    CHARSETS,
    DTYPE_CODES,
    FLOAT_LITS,
    INT_LITS,
    KEY_PAIRS,
    LONG_STRINGS,
    MEMBER_KEYS,
    RAW_STRINGS,
    SCHEDULE_KINDS,
    SPACE_KINDS,
    STRINGS,
    TAGS,
    VALID_TAGGED,
)
from json_tree import JObj, Lit, copy_tree, lit_int, nodes, parse_tree, put, replace


def interesting_number(rng: random.Random) -> Lit:
    return Lit(rng.choice(INT_LITS) if rng.random() < 0.55 else rng.choice(FLOAT_LITS))


def gen_value(rng: random.Random, ctx: Ctx, depth: int = 0) -> Any:
    """A random JSON value: interesting scalars, tagged values (valid, or a valid reference), containers."""
    r = rng.random()
    if r < 0.15:
        return rng.choice([None, True, False])
    if r < 0.35:
        return interesting_number(rng)
    if r < 0.50:
        if rng.random() < 0.02:
            return rng.choice(LONG_STRINGS)
        return rng.choice(STRINGS) if rng.random() < 0.85 else Lit(rng.choice(RAW_STRINGS))
    if r < 0.75:
        k = rng.random()
        if k < 0.12:
            a, b = rng.choice(KEY_PAIRS)
            if rng.random() < 0.5:
                a, b = b, a
            return parse_tree(('{"$type":"dict","entries":[[' + a + ",1],[" + b + ",2]]}").encode())
        if k < 0.2:
            cs = json.dumps(rng.choice(CHARSETS), ensure_ascii=rng.random() < 0.5)
            return parse_tree(
                ('{"$type":"space","kind":"text","min_length":0,"max_length":3,"charset":' + cs + "}").encode()
            )
        return parse_tree(rng.choice(VALID_TAGGED).encode())
    if r < 0.83 and ctx.tensors:
        g, n, dt, shape = rng.choice(ctx.tensors)
        ref = JObj([["group", g], ["name", n]])
        return JObj([["$type", "ndarray"], ["dtype", dt], ["shape", [Lit(str(d)) for d in shape]], ["ref", ref]])
    if depth > 2:
        return Lit("0")
    if r < 0.92:
        return [gen_value(rng, ctx, depth + 1) for _ in range(rng.randint(0, 3))]
    return JObj([[rng.choice(MEMBER_KEYS), gen_value(rng, ctx, depth + 1)] for _ in range(rng.randint(0, 3))])


def tweak_scalar(v: Any, rng: random.Random, ctx: Ctx) -> Any:
    """A neighbouring value of the same kind (numbers off by one, other codes, other base64)."""
    if isinstance(v, Lit):
        n = lit_int(v)
        if n is not None:
            return Lit(
                str(rng.choice([n + 1, n - 1, -n, 0, n * 2, n + 2**53, 1 - n, n + 64, n * 1000003]))
                if rng.random() < 0.85
                else f"{n}.0"
            )
        return interesting_number(rng)
    if isinstance(v, str):
        if v in DTYPE_CODES:
            return rng.choice(DTYPE_CODES + BAD_DTYPES)
        if v in TAGS:
            return rng.choice(TAGS + ["Float", "ndarray ", "pickle"])
        if v in SPACE_KINDS:
            return rng.choice(SPACE_KINDS)
        if v in SCHEDULE_KINDS:
            return rng.choice(SCHEDULE_KINDS)
        if v in ("nan", "inf", "-inf"):
            return rng.choice(["nan", "inf", "-inf", "NaN", "1.5", "+inf", "-nan", ""])
        if _looks_b64(v):
            return _b64_tweak(v, rng)
        if v and v.lstrip("-").isdigit():
            return rng.choice(BIG_INT_STRINGS)
        choice = rng.random()
        if choice < 0.3:
            return v + rng.choice(["x", "é", "\U0001f600", "\x00", "/", " ", "\n"])
        if choice < 0.5:
            return v[:-1]
        if choice < 0.7:
            return v.upper() if v != v.upper() else v.lower()
        return rng.choice(STRINGS)
    return gen_value(rng, ctx)


def _looks_b64(s: str) -> bool:
    if len(s) % 4 or not s:
        return False
    try:
        base64.b64decode(s, validate=True)
        return True
    except Exception:
        return False


def _b64_tweak(s: str, rng: random.Random) -> str:
    raw = base64.b64decode(s)
    r = rng.random()
    if r < 0.1:  # at the length limit of inline base64, in ASCII or in astral characters
        return rng.choice(LONG_STRINGS[:5])
    if r < 0.35:  # another length
        n = max(0, len(raw) + rng.choice([-8, -4, -2, -1, 1, 2, 4, 8]))
        return base64.b64encode((raw * 2 + b"\x01" * 8)[:n]).decode()
    if r < 0.55:  # other bits, same length (a valid change)
        b = bytearray(raw)
        if b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        return base64.b64encode(bytes(b)).decode()
    if r < 0.7 and s.endswith("="):  # non-zero pad bits
        i = len(s.rstrip("=")) - 1
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        return s[:i] + alphabet[(alphabet.index(s[i]) + 1) % 64] + s[i + 1 :]
    if r < 0.8:
        return s.rstrip("=")
    if r < 0.9:
        return s[:2] + rng.choice(["\n", " ", "-", "_", "="]) + s[2:]
    return s + "===="


@dataclass
class Ctx:
    """What the mutators know about the archive: the tensors in it (group, name, dtype, shape)."""

    tensors: list = field(default_factory=list)


def json_tree_op(tree: Any, rng: random.Random, ctx: Ctx, role: str) -> tuple[Any, str]:
    """One random edit of a JSON tree; returns (new tree, description)."""
    all_nodes = nodes(tree)
    container, pos, v = rng.choice(all_nodes)
    where = f"{role}:{type(v).__name__}"

    def set_(new):
        nonlocal tree
        if container is None:
            tree = new
        else:
            replace(container, pos, new)

    r = rng.random()
    if isinstance(v, JObj) and r < 0.45:
        op = rng.choice(
            ["add", "del", "dup", "dup-escaped", "rename", "reorder", "retag", "set-member", "type-key", "clear"]
        )
        if op == "add":
            v.insert(rng.randint(0, len(v)), [rng.choice(MEMBER_KEYS), gen_value(rng, ctx)])
        elif op == "del" and v:
            del v[rng.randrange(len(v))]
        elif op == "dup" and v:
            i = rng.randrange(len(v))
            v.insert(
                rng.randint(0, len(v)), [v[i][0], copy_tree(v[i][1]) if rng.random() < 0.5 else gen_value(rng, ctx)]
            )
        elif op == "dup-escaped" and v:
            i = rng.randrange(len(v))
            k = v[i][0]
            if isinstance(k, str) and k:
                j = rng.randrange(len(k))
                esc = (
                    json.dumps(k[:j])[1:-1]
                    + "".join(
                        f"\\u{ord(c):04x}" if ord(c) < 0x10000 else json.dumps(c, ensure_ascii=True)[1:-1]
                        for c in k[j : j + 1]
                    )
                    + json.dumps(k[j + 1 :])[1:-1]
                )
                v.insert(rng.randint(0, len(v)), [Lit('"' + esc + '"'), gen_value(rng, ctx)])
        elif op == "rename" and v:
            i = rng.randrange(len(v))
            v[i][0] = rng.choice(MEMBER_KEYS) if rng.random() < 0.7 else Lit(rng.choice(RAW_STRINGS))
        elif op == "reorder":
            rng.shuffle(v)
        elif op == "retag":
            put(
                v,
                "$type",
                rng.choice(TAGS + ["complex", "", "Float"])
                if rng.random() < 0.9
                else rng.choice([Lit("1"), None, ["float"]]),
            )
        elif op == "set-member" and v:
            i = rng.randrange(len(v))
            v[i][1] = tweak_scalar(v[i][1], rng, ctx) if rng.random() < 0.6 else gen_value(rng, ctx)
        elif op == "type-key":
            v.insert(
                rng.randint(0, len(v)),
                [
                    "$type",
                    rng.choice(["float", "bogus", "tuple", "dict", "space"])
                    if rng.random() < 0.8
                    else gen_value(rng, ctx),
                ],
            )
        elif op == "clear":
            del v[:]
        return tree, f"{where}.{op}"
    if isinstance(v, list) and not isinstance(v, JObj) and r < 0.45:
        op = rng.choice(["append", "del", "dup", "swap", "clear", "wrap"])
        if op == "append":
            v.insert(
                rng.randint(0, len(v)), gen_value(rng, ctx) if rng.random() < 0.7 or not v else copy_tree(rng.choice(v))
            )
        elif op == "del" and v:
            del v[rng.randrange(len(v))]
        elif op == "dup" and v:
            v.append(copy_tree(rng.choice(v)))
        elif op == "swap" and len(v) > 1:
            i, j = rng.sample(range(len(v)), 2)
            v[i], v[j] = v[j], v[i]
        elif op == "clear":
            del v[:]
        elif op == "wrap" and v:
            i = rng.randrange(len(v))
            v[i] = [v[i]]
        return tree, f"{where}.{op}"
    if r < 0.55:
        set_(tweak_scalar(v, rng, ctx) if not isinstance(v, (list, JObj)) else gen_value(rng, ctx))
        return tree, f"{where}.tweak"
    if r < 0.85:
        set_(gen_value(rng, ctx))
        return tree, f"{where}.replace"
    if r < 0.92:  # wrap in a container or a tagged value
        w = rng.choice(["list", "tuple", "map", "dict"])
        new = {
            "list": lambda: [v],
            "tuple": lambda: JObj([["$type", "tuple"], ["items", [v]]]),
            "map": lambda: JObj([["k", v]]),
            "dict": lambda: JObj([["$type", "dict"], ["entries", [[Lit("1"), v]]]]),
        }[w]()
        set_(new)
        return tree, f"{where}.wrap-{w}"
    # nesting near the depth limit (64): the depth of the text is 1 + the depth above this node + the new value's
    above = _depth_above(tree, v)
    target = rng.choice([62, 63, 64, 65, 66, 80]) - above
    new: Any = Lit("1")
    for _ in range(max(1, target)):
        new = [new] if rng.random() < 0.7 else JObj([["a", new]])
    set_(new)
    return tree, f"{where}.deep{target + above}"


def _depth_above(tree: Any, target: Any) -> int:
    stack = [(tree, 0)]
    while stack:
        v, d = stack.pop()
        if v is target:
            return d
        if isinstance(v, JObj):
            stack.extend((x, d + 1) for _, x in v)
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return 0


def json_text_op(raw: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One random edit of JSON text at the byte level."""
    b = bytearray(raw)
    op = rng.choice(
        ["bom", "utf8", "nan", "delete", "insert", "truncate", "trail", "bitflip", "control", "digit", "ws"]
    )
    i = rng.randrange(len(b) + 1) if b else 0
    if op == "bom":
        b[0:0] = b"\xef\xbb\xbf"
    elif op == "utf8":
        bad = rng.choice(
            [b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xe2\x82", b"\xff", b"\xf0\x9f\x98", b"\xc3"]
        )
        j = _inside_string(b, rng)
        b[j:j] = bad
    elif op == "nan":
        tok = rng.choice([b"NaN", b"Infinity", b"-Infinity", b"nan", b"-NaN", b"Infinityx", b"infinity"])
        m = _number_span(b, rng)
        if m:
            b[m[0] : m[1]] = tok
        else:
            b[i:i] = tok
    elif op == "delete" and b:
        del b[i : i + rng.randint(1, 3)]
    elif op == "insert":
        b[i:i] = rng.choice([b",", b"]", b"}", b"[", b"{", b'"', b":", b"\\", b",,", b" ", b"\\u", b"0", b"-", b"."])
    elif op == "truncate":
        del b[i:]
    elif op == "trail":
        b += rng.choice([b" ", b"\n", b"x", b"{}", b"\x00", b"\t\r\n", b"  \n"])
    elif op == "bitflip" and b:
        j = rng.randrange(len(b))
        b[j] ^= 1 << rng.randrange(8)
    elif op == "control":
        j = _inside_string(b, rng)
        b[j:j] = bytes([rng.randrange(0, 32)])
    elif op == "digit":
        m = _number_span(b, rng)
        if m:
            b[m[0] : m[1]] = rng.choice([b"01", b"1.", b".5", b"1e", b"-", b"1e+", b"+1", b"0x10", b"1_0", b"\xd9\xa3"])
    elif op == "ws":
        j = _between_tokens(b, rng)
        b[j:j] = rng.choice([b" ", b"\n", b"\t", b"\r\n", b"\x0b", b"\x0c", b"\xc2\xa0"])
    return bytes(b), f"text.{op}"


def _inside_string(b: bytearray, rng: random.Random) -> int:
    quotes = [i for i, c in enumerate(b) if c == 0x22]
    if not quotes:
        return rng.randrange(len(b) + 1) if b else 0
    return rng.choice(quotes) + 1


def _number_span(b: bytearray, rng: random.Random) -> tuple[int, int] | None:
    spans = []
    i, n, in_str = 0, len(b), False
    while i < n:
        c = b[i]
        if in_str:
            if c == 0x5C:
                i += 2
                continue
            if c == 0x22:
                in_str = False
        elif c == 0x22:
            in_str = True
        elif c == 0x2D or 0x30 <= c <= 0x39:
            j = i
            while j < n and b[j] in b"-+.eE0123456789":
                j += 1
            spans.append((i, j))
            i = j
            continue
        i += 1
    return rng.choice(spans) if spans else None


def _between_tokens(b: bytearray, rng: random.Random) -> int:
    cands = [i + 1 for i, c in enumerate(b) if c in b",:[]{}"]
    return rng.choice(cands) if cands else 0
