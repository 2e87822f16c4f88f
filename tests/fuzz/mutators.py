"""Mutators for fuzzing rlarchive readers, from the valid golden vectors.

A case starts from a valid archive parsed into its members, applies a few
mutations at several levels, and assembles the bytes:

1. content: data.json and manifest.json as JSON trees (values, types, tags,
   members, numbers, strings, duplicate keys, nesting; order and literal text
   kept), and as text (BOM, bad UTF-8, NaN literals, syntax); safetensors
   members (header entries re-serialized with tweaks, padding, the length
   prefix, the buffer); the member list (reorder, remove, duplicate, rename,
   add); the mimetype;
2. fixups, so that mutations reach deep layers: the manifest's sizes and
   digests recomputed (or the members relisted, or left stale), CRC-32s fresh
   (or stale);
3. ZIP structure through :mod:`rawzip` knobs (flags, methods, ZIP64, extra
   fields, gaps, signatures, end-record fields, hidden members);
4. fields of the assembled ZIP records, parsed and edited meaningfully (sizes
   and offsets set to neighbouring or boundary values, in one header or in
   both so that they agree);
5. raw bytes: bit flips, interesting bytes, truncation, insertion, deletion.

Every mutation is recorded as a short description, so a case can be read and
reproduced (``campaign.py --seed S --replay I``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
import struct
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "vectors"))

from rawzip import Entry, Layout, assemble  # noqa: E402

MEDIA_TYPE = b"application/vnd.rlarchive+zip"
U16, U32, U64 = 0xFFFF, 0xFFFFFFFF, 2**64 - 1

# ============================================================================ JSON trees


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


# ============================================================================ pools of interesting JSON

TAGS = ["float", "int", "bytes", "tuple", "dict", "ndarray", "scalar", "space", "schedule", "class", "opaque"]
DTYPE_CODES = [
    "BOOL",
    "U8",
    "I8",
    "U16",
    "I16",
    "U32",
    "I32",
    "U64",
    "I64",
    "F16",
    "BF16",
    "F32",
    "F64",
    "F8_E4M3",
    "F8_E5M2",
    "F8_E4M3FNUZ",
    "F8_E5M2FNUZ",
    "F8_E8M0",
    "C64",
]
BAD_DTYPES = ["F4", "F6_E2M3", "float32", "f32", "", "I128", "bool", "F8_E4M3FN", "C128"]
SPACE_KINDS = ["box", "discrete", "multi_discrete", "multi_binary", "dict", "tuple", "text", "graph", "sequence"]
SCHEDULE_KINDS = ["constant", "linear", "piecewise", "exponential"]
MEMBER_KEYS = [
    "$type",
    "value",
    "base64",
    "items",
    "entries",
    "dtype",
    "shape",
    "ref",
    "group",
    "name",
    "kind",
    "n",
    "start",
    "low",
    "high",
    "nvec",
    "spaces",
    "min_length",
    "max_length",
    "charset",
    "points",
    "interpolation",
    "end",
    "end_fraction",
    "module",
    "qualname",
    "format",
    "type",
    "note",
    "data",
    "optimizers",
    "extra",
    "__metadata__",
    "data_offsets",
    "size",
    "sha256",
    "members",
    "producer",
    "version",
    "format_version",
    "extensions",
    "extensions_used",
    "extensions_required",
    "metadata",
    "a",
    "",
    "\U0001f600",
    "\ue000",
]
INT_LITS = [
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "8",
    "63",
    "64",
    "65",
    "255",
    "256",
    "4096",
    "4097",
    "65535",
    "65536",
    "65537",
    "2147483647",
    "4294967295",
    "4294967296",
    "9007199254740991",
    "-9007199254740991",
    "9007199254740992",
    "-9007199254740992",
    "9007199254740993",
    "18446744073709551615",
    "100000000000000000000",
    "1" + "0" * 30,
]
FLOAT_LITS = [
    "0.0",
    "-0.0",
    "1.0",
    "-1.0",
    "0.5",
    "1e0",
    "1E2",
    "1e-7",
    "2.5e-3",
    "1.5",
    "0.99",
    "1e308",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "1e309",
    "-1e400",
    "5e-324",
    "2e-324",
    "1e-400",
    "-1e-400",
    "9007199254740993.0",
    "1e21",
    "1e+21",
    "123456789.125",
    "0.1",
    "3.0000000000000004",
    "1.00000000000000000000001",
]
BIG_INT_STRINGS = [
    "9007199254740992",
    "-9007199254740992",
    "9007199254740991",
    "18446744073709551615",
    "-9223372036854775808",
    "0",
    "-0",
    "01",
    "1e20",
    " 9007199254740993",
    "9" * 4096,
    "9" * 4097,
    "-" + "9" * 4096,
    "+9007199254740993",
]
STRINGS = (
    [
        "",
        "a",
        "$type",
        "nan",
        "inf",
        "-inf",
        "NaN",
        "Infinity",
        "-0",
        "1.5",
        "pickle",
        "cloudpickle",
        "linear",
        "step",
        "rlarchive",
        "1.0",
        "1.1",
        "1.7",
        "2.0",
        "0.9",
        "01.0",
        "1",
        "1.0.0",
        "999999.99",
        "1000000.0",
        "1.0\n",
        "application/vnd.rlarchive+zip",
        "data.json",
        "manifest.json",
        "mimetype",
        "tensors/policy.safetensors",
        "tensors/arrays.safetensors",
        "extensions/ACME_notes/notes.txt",
        "ACME_notes",
        "bad-ext",
        "policy",
        "arrays",
        "torch.nn",
        "os; import sys",
        "a.b",
        "_x.y1",
        "1abc",
        "é",
        "\U0001f600",
        "\ue000",
        "\x00",
        "\x7f",
        "\u2028",
        "AAAA",
        "AA==",
        "AAE=",
        "QR==",
        "QQ==",
        "QUJD\nREVG",
        "AAAAAAAAAAA=",
        "A===",
        "====",
        "////",
        "+/+/",
        "0" * 64,
        "F" * 64,
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ]
    + TAGS
    + DTYPE_CODES[::3]
    + BAD_DTYPES[:4]
    + SPACE_KINDS
    + SCHEDULE_KINDS
)
RAW_STRINGS = [
    '"\\ud800"',
    '"\\udc00"',
    '"\\ud83d\\ude00"',
    '"\\ud83d"',
    '"a\\ud800b"',
    '"\\u0000"',
    '"\\/"',
    '"\\u00e9"',
    '"\\uDFFF\\uD800"',
    '"\\ud800\\ud800"',
]

VALID_TAGGED = [
    '{"$type":"float","value":"nan"}',
    '{"$type":"float","value":"-inf"}',
    '{"$type":"int","value":"9007199254740993"}',
    '{"$type":"int","value":"-18446744073709551616"}',
    '{"$type":"bytes","base64":"AAE="}',
    '{"$type":"bytes","base64":""}',
    '{"$type":"tuple","items":[1,2.5,"x",null]}',
    '{"$type":"tuple","items":[]}',
    '{"$type":"dict","entries":[[1,"a"],[null,2],[2.5,[]],[{"$type":"bytes","base64":"AA=="},0]]}',
    '{"$type":"dict","entries":[["$type",1]]}',
    '{"$type":"dict","entries":[[{"$type":"tuple","items":[1,"x"]},true],[false,1]]}',
    '{"$type":"dict","entries":[[{"$type":"float","value":"inf"},1],[{"$type":"int","value":"9007199254740993"},2]]}',
    '{"$type":"ndarray","dtype":"F32","shape":[2],"base64":"AACAPwAAAEA="}',
    '{"$type":"ndarray","dtype":"U8","shape":[0,3],"base64":""}',
    '{"$type":"ndarray","dtype":"F64","shape":[],"base64":"AAAAAAAA8D8="}',
    '{"$type":"ndarray","dtype":"BOOL","shape":[3],"base64":"AQAC"}',
    '{"$type":"ndarray","dtype":"C64","shape":[1],"base64":"AACAPwAAAEA="}',
    '{"$type":"ndarray","dtype":"BF16","shape":[2,1],"base64":"gD8AQA=="}',
    '{"$type":"scalar","dtype":"F16","base64":"ADw="}',
    '{"$type":"scalar","dtype":"I64","base64":"/////////38="}',
    '{"$type":"scalar","dtype":"BOOL","base64":"AQ=="}',
    '{"$type":"space","kind":"discrete","n":3,"start":-1,"dtype":"I64"}',
    '{"$type":"space","kind":"box","dtype":"F32","shape":[1],"low":{"$type":"ndarray","dtype":"F32","shape":[1],"base64":"AACA/w=="},"high":{"$type":"ndarray","dtype":"F32","shape":[1],"base64":"AACAfw=="}}',
    '{"$type":"space","kind":"multi_discrete","dtype":"U8","nvec":{"$type":"ndarray","dtype":"U8","shape":[2],"base64":"AgM="},"start":{"$type":"ndarray","dtype":"U8","shape":[2],"base64":"AAE="}}',
    '{"$type":"space","kind":"multi_binary","n":[2,3]}',
    '{"$type":"space","kind":"multi_binary","n":4}',
    '{"$type":"space","kind":"text","min_length":0,"max_length":5,"charset":"abc\\u00e9\\ud83d\\ude00"}',
    '{"$type":"space","kind":"dict","spaces":[["b",{"$type":"space","kind":"discrete","n":2,"start":0,"dtype":"I8"}],["a",{"$type":"space","kind":"tuple","spaces":[]}]]}',
    '{"$type":"space","kind":"tuple","spaces":[{"$type":"space","kind":"multi_binary","n":1}]}',
    '{"$type":"schedule","kind":"constant","value":-0.0}',
    '{"$type":"schedule","kind":"linear","start":1,"end":0.5,"end_fraction":1}',
    '{"$type":"schedule","kind":"piecewise","points":[[0,1.0],[0.5,2],[1.0,0]],"interpolation":"step"}',
    '{"$type":"class","module":"torch.nn","qualname":"ReLU"}',
    '{"$type":"opaque","format":"pickle","base64":"gARO","type":"x","note":"y"}',
]


#: strings at the length limits (87,384 base64 characters encode MAX_INLINE_ARRAY_BYTES), in ASCII and astral characters
LONG_STRINGS = [
    "A" * 87384,
    "A" * 87388,
    "\U0001f600" * 43693,
    "\U0001f600" * 21846,
    "é" * 87385,
    "9" * 4097,
    "n" * 256,
]


#: dict keys that are equal, or nearly, across types (spec §7.5: numbers by value, tuples element by element)
KEY_PAIRS = [
    ("1", "1.0"),
    ("true", "1"),
    ("false", "-0.0"),
    ("0", "-0.0"),
    ("0", "-0"),
    ("null", "false"),
    ("1e21", '{"$type":"int","value":"1000000000000000000000"}'),
    ("9007199254740992.0", '{"$type":"int","value":"9007199254740992"}'),
    ("9007199254740993.0", '{"$type":"int","value":"9007199254740993"}'),
    ("1.7976931348623157e308", '{"$type":"int","value":"' + str(int(1.7976931348623157e308)) + '"}'),
    ('{"$type":"float","value":"inf"}', '{"$type":"float","value":"inf"}'),
    ('{"$type":"float","value":"inf"}', '{"$type":"float","value":"-inf"}'),
    ('{"$type":"tuple","items":[1,"x"]}', '{"$type":"tuple","items":[1.0,"x"]}'),
    ('{"$type":"tuple","items":[true]}', '{"$type":"tuple","items":[1]}'),
    ('{"$type":"tuple","items":[]}', '{"$type":"tuple","items":[[]]}'),
    ('{"$type":"bytes","base64":"AA=="}', '"AA=="'),
    ('"a"', '"\\u0061"'),
    ("0.1", "0.10000000000000001"),
    ("5e-324", "4.9406564584124654e-324"),
    ('"$type"', '"$type"'),
    ('{"$type":"tuple","items":[{"$type":"float","value":"nan"}]}', "1"),
]
#: text-space charsets: ascending by code point but not by UTF-16 unit, and the reverse
CHARSETS = [
    "\ue000\U0001f600",
    "\U0001f600\ue000",
    "ab\U0010ffff",
    "\x00\x01",
    "aa",
    "ba",
    "é\U0001f600\U0001f601",
    "\uffff\U00010000",
]


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


# ============================================================================ safetensors members


def st_split(data: bytes) -> tuple[int, bytes, bytes] | None:
    if len(data) < 8:
        return None
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        return None
    return n, data[8 : 8 + n], data[8 + n :]


def st_infos(data: bytes) -> list:
    """(name, dtype, shape) of the tensors of a well-formed safetensors member, else []."""
    parts = st_split(data)
    if not parts:
        return []
    try:
        tree = parse_tree(parts[1])
    except Exception:
        return []
    out = []
    if isinstance(tree, JObj):
        for k, e in tree:
            dt, shape = get(e, "dtype"), get(e, "shape")
            if (
                isinstance(k, str)
                and isinstance(dt, str)
                and isinstance(shape, list)
                and all(lit_int(d) is not None for d in shape)
            ):
                out.append((k, dt, [lit_int(d) for d in shape]))
    return out


def st_op(data: bytes, rng: random.Random, ctx: Ctx) -> tuple[bytes, str]:
    """One random edit of a safetensors member (header re-serialized with tweaks, padding, length, buffer)."""
    parts = st_split(data)
    if parts is None:
        b = bytearray(data)
        if b:
            b[rng.randrange(len(b))] ^= 0xFF
        return bytes(b), "st.garbage"
    n, header, buf = parts
    try:
        tree = parse_tree(header)
    except Exception:
        tree = None
    r = rng.random()
    if tree is not None and isinstance(tree, JObj) and r < 0.55:
        op = rng.choice(
            [
                "dtype",
                "dtype",
                "shape",
                "offsets",
                "offsets",
                "rename",
                "add",
                "del",
                "extra",
                "reorder",
                "metadata",
                "json",
            ]
        )
        desc = f"st.{op}"
        entries = [p for p in tree if isinstance(p[1], JObj)]
        if op == "json" or not entries:
            tree, d = json_tree_op(tree, rng, ctx, "st")
            desc = d
        else:
            p = rng.choice(entries)
            e = p[1]
            if op == "dtype":
                old = get(e, "dtype")
                put(
                    e,
                    "dtype",
                    rng.choice(DTYPE_CODES + BAD_DTYPES) if rng.random() < 0.9 else rng.choice([Lit("1"), None]),
                )
                desc += f"({old}->{get(e, 'dtype')})"
            elif op == "shape":
                shape = get(e, "shape")
                if isinstance(shape, list):
                    s = list(shape)
                    k = rng.random()
                    if k < 0.3 and s:
                        i = rng.randrange(len(s))
                        s[i] = tweak_scalar(s[i], rng, ctx)
                    elif k < 0.5:
                        s.append(Lit(rng.choice(["1", "0", "2"])))
                    elif k < 0.65 and s:
                        s.pop()
                    elif k < 0.75:
                        s = [Lit("1")] * rng.choice([32, 33, 40])
                    elif k < 0.85 and len(s) > 1:
                        s.reverse()
                    else:
                        s = [Lit(rng.choice(["-1", "1.0", "9007199254740991", "4294967296"]))] + s
                    put(e, "shape", s)
            elif op == "offsets":
                offs = get(e, "data_offsets")
                if isinstance(offs, list) and len(offs) == 2:
                    o = list(offs)
                    k = rng.random()
                    if k < 0.5:
                        i = rng.randrange(2)
                        o[i] = (
                            tweak_scalar(o[i], rng, ctx)
                            if rng.random() < 0.5
                            else Lit(str(max(0, (lit_int(o[i]) or 0) + rng.choice([-8, -4, -1, 1, 2, 4, 8, 64]))))
                        )
                    elif k < 0.65:
                        o.reverse()
                    elif k < 0.8:  # shift the whole range
                        d = rng.choice([-8, -4, -1, 1, 4, 8])
                        o = [Lit(str(max(0, (lit_int(x) or 0) + d))) for x in o]
                    elif k < 0.9:
                        o = [Lit(str(len(buf))), Lit(str(len(buf) + rng.choice([0, 1, 8])))]
                    else:
                        o.append(Lit("0"))
                    put(e, "data_offsets", o)
            elif op == "rename":
                p[0] = rng.choice(
                    ["", "__x", "__metadata__", "_", "a" * 256, "é" * 128, "\U0001f600" * 64, "w", "b", "x/y", "\ue000"]
                )
            elif op == "add":
                other = copy_tree(rng.choice(entries)[1])
                tree.insert(rng.randint(0, len(tree)), [rng.choice(["new", "w", "b", "zz", "\U0001f600"]), other])
            elif op == "del":
                tree.remove(p)
            elif op == "extra":
                e.append([rng.choice(["extra", "dtype", "offsets"]), gen_value(rng, ctx)])
            elif op == "reorder":
                rng.shuffle(tree)
            elif op == "metadata":
                tree.insert(0, ["__metadata__", JObj([["format", "pt"]])])
        text = tree_bytes(tree)
        pad = rng.random()
        if pad < 0.75:  # the writer's padding: 8 + N a multiple of 64
            text += b" " * ((-(8 + len(text))) % 64)
        elif pad < 0.85:
            text += b" " * rng.randint(0, 9)
        elif pad < 0.95 and len(text) <= n:
            text += b" " * (n - len(text))  # keep the old length when the header did not grow
        return struct.pack("<Q", len(text)) + text + buf, desc
    if r < 0.7:  # padding and prefix
        op = rng.choice(
            ["newline-pad", "leading-space", "strip-pad", "n+1", "n-1", "n-huge", "n-member", "n-zero", "tab-pad"]
        )
        body = header.rstrip(b" ")
        if op == "newline-pad":
            h = body + b"\n" * (len(header) - len(body))
            return struct.pack("<Q", len(h)) + h + buf, "st." + op
        if op == "tab-pad":
            h = body + b" " * max(0, len(header) - len(body) - 1) + b"\t"
            return struct.pack("<Q", len(h)) + h + buf, "st." + op
        if op == "leading-space":
            h = b" " + body + b" " * max(0, len(header) - len(body) - 1)
            return struct.pack("<Q", len(h)) + h + buf, "st." + op
        if op == "strip-pad":
            return struct.pack("<Q", len(body)) + body + buf, "st." + op
        newn = {
            "n+1": n + 1,
            "n-1": max(0, n - 1),
            "n-huge": rng.choice([2**24, 2**24 + 1, 2**40, 2**63, 2**64 - 1, 2**53]),
            "n-member": len(data) - 8 + rng.choice([0, 1, 8]),
            "n-zero": 0,
        }[op]
        return struct.pack("<Q", newn) + header + buf, "st." + op
    if r < 0.85:  # the buffer
        op = rng.choice(["buf-truncate", "buf-extend", "buf-flip", "buf-empty"])
        b = bytearray(buf)
        if op == "buf-truncate" and b:
            del b[rng.randrange(len(b)) :]
        elif op == "buf-extend":
            b += bytes(rng.choice([1, 2, 4, 8, 64]))
        elif op == "buf-flip" and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif op == "buf-empty":
            b = bytearray()
        return struct.pack("<Q", n) + header + bytes(b), "st." + op
    if r < 0.93:
        raw, d = json_text_op(header, rng)
        return struct.pack("<Q", len(raw)) + raw + buf, "st." + d
    return data[: rng.randint(0, min(len(data), 12))], "st.member-truncate"


# ============================================================================ archives


@dataclass
class Member:
    name: str
    data: bytes
    align: int = 0
    zip64: bool = False
    knobs: dict = field(default_factory=dict)  # rawzip.Entry overrides
    tree: Any = None  # JSON tree when the content is edited as one
    style: Style = field(default_factory=Style)
    text_ops: list = field(default_factory=list)  # byte-level edits applied after serialization
    orig_crc: int = 0
    changed: bool = False

    def content(self) -> bytes:
        raw = tree_bytes(self.tree, self.style) if self.tree is not None else self.data
        for op in self.text_ops:
            raw = op(raw)
        return raw


@dataclass
class Seed:
    name: str
    members: list  # of (name, data, align, zip64)
    zip64_eocd: bool


def parse_archive(raw: bytes, name: str = "?") -> Seed:
    """The members of a valid archive (its data, alignment padding and ZIP64 use)."""
    eocd = len(raw) - 22
    _, _, _, _, n, cd_size, cd_off, _ = struct.unpack("<4sHHHHIIH", raw[eocd:])
    z64 = raw[eocd - 20 : eocd - 16] == b"PK\x06\x07"
    if z64:
        (z_off,) = struct.unpack("<Q", raw[eocd - 12 : eocd - 4])
        n, cd_size, cd_off = struct.unpack("<QQQ", raw[z_off + 32 : z_off + 56])
    members = []
    pos = cd_off
    for _ in range(n):
        f = struct.unpack("<4sHHHHHHIIIHHHHHII", raw[pos : pos + 46])
        nlen, xlen, clen, lh = f[10], f[11], f[12], f[16]
        size = f[9]
        cextra = raw[pos + 46 + nlen : pos + 46 + nlen + xlen]
        mname = raw[pos + 46 : pos + 46 + nlen].decode("ascii")
        if size == U32 or lh == U32:
            vals = list(struct.unpack(f"<{len(cextra[4:]) // 8}Q", cextra[4:]))
            if f[9] == U32:
                size = vals.pop(0)
            if f[8] == U32:
                vals.pop(0)
            if lh == U32:
                lh = vals.pop(0)
        lnlen, lxlen = struct.unpack("<HH", raw[lh + 26 : lh + 30])
        lextra = raw[lh + 30 + lnlen : lh + 30 + lnlen + lxlen]
        align, zip64, p = 0, False, 0
        while p + 4 <= len(lextra):
            hid, ln = struct.unpack("<HH", lextra[p : p + 4])
            if hid == 0xD935:
                (align,) = struct.unpack("<H", lextra[p + 4 : p + 6])
            if hid == 0x0001:
                zip64 = True
            p += 4 + ln
        start = lh + 30 + lnlen + lxlen
        members.append((mname, raw[start : start + size], align, zip64))
        pos += 46 + nlen + xlen + clen
    return Seed(name, members, z64)


BAD_NAMES = [
    "../x",
    "/abs",
    "a//b",
    "tensors/",
    "données",
    "a" * 256,
    "tensors\\p.safetensors",
    "C:x",
    ".",
    "..",
    "a/./b",
    "tensors/x.safetensors",
    "tensors/.safetensors",
    "tensors/a/b.safetensors",
    "tensors/..safetensors",
    "tensors/...safetensors",
    "extensions/ACME_notes/x",
    "extensions/Other/x",
    "extensions/x",
    "Data.json",
    "DATA.JSON",
    "Manifest.json",
    "other.txt",
    "tensors/policy.SAFETENSORS",
    "tensors/POLICY.safetensors",
    "mimetype",
    "data.json",
    "manifest.json",
    "tensors/a b.safetensors",
    "tensors/arrays.safetensors",
    "tensors/" + "g" * 235 + ".safetensors",
    "tensors/" + "g" * 236 + ".safetensors",
    "extensions/ACME_notes/" + "n" * 240,
    "x",
    "data.json/x",
    "Data.json/x",
    "mimetype/x",
    "tensors/policy.safetensors/x",
    "extensions/ACME_notes",
]


class Archive:
    """A valid archive being mutated: members, rawzip knobs, and what the fixups should do."""

    def __init__(self, seed: Seed) -> None:
        self.members = [Member(n, d, a, z, orig_crc=zlib.crc32(d)) for n, d, a, z in seed.members]
        self.layout: dict = {"zip64_eocd": seed.zip64_eocd}
        self.manifest_fix = "update"  # update | relist | none
        self.crc_fix = True
        self.manifest_ops: list = []  # deferred tree edits of the manifest, after the fixup
        self.ctx = Ctx()
        for m in self.members:
            if m.name.startswith("tensors/") and m.name.endswith(".safetensors"):
                g = m.name[len("tensors/") : -len(".safetensors")]
                self.ctx.tensors += [(g, n, dt, shape) for n, dt, shape in st_infos(m.data)]

    def member(self, name: str) -> Member | None:
        return next((m for m in self.members if m.name == name), None)

    def json_member(self, name: str) -> Member | None:
        m = self.member(name)
        if m is None:
            return None
        if m.tree is None and not m.text_ops:
            try:
                m.tree = parse_tree(m.data)
            except Exception:
                return None
        return m if m.tree is not None else None

    def assemble(self) -> bytes:
        manifest = self.member("manifest.json")
        contents = {}
        for m in self.members:
            if m is not manifest:
                contents[id(m)] = m.content()
        if manifest is not None:
            if manifest.tree is None and not manifest.text_ops:
                try:
                    manifest.tree = parse_tree(manifest.data)
                except Exception:
                    pass
            if manifest.tree is not None:
                self._fix_manifest(manifest.tree, contents)
                for op in self.manifest_ops:
                    manifest.tree = op(manifest.tree)
            contents[id(manifest)] = manifest.content()
        entries = []
        for m in self.members:
            data = contents[id(m)]
            e = Entry(m.name, data, align=m.align, zip64=m.zip64)
            if not self.crc_fix and zlib.crc32(data) != m.orig_crc:
                e.crc = m.orig_crc
            for k, v in m.knobs.items():
                setattr(e, k, v)
            entries.append(e)
        try:
            return assemble(entries, Layout(**self.layout))
        except struct.error:  # a knob too wide for its field (e.g. a 64-bit value without ZIP64): keep its low bits
            for e in entries:
                for k in ("local_size", "central_csize", "central_usize", "offset", "crc", "local_crc"):
                    if getattr(e, k) is not None:
                        setattr(e, k, getattr(e, k) & U32)
            layout = Layout(**self.layout)
            for k, mask in (
                ("eocd_cd_size", U32),
                ("eocd_cd_offset", U32),
                ("eocd_count", U16),
                ("eocd_count_disk", U16),
                ("eocd_disk", U16),
            ):
                if getattr(layout, k) is not None and not layout.zip64_eocd:
                    setattr(layout, k, getattr(layout, k) & mask)
            layout.z64_locator_disks &= U32
            layout.z64_locator_disk &= U32
            layout.z64_record_size &= U64
            try:
                return assemble(entries, layout)
            except struct.error:
                self.layout = {}
                for e in entries:
                    e.version = 20 if e.version > U16 else e.version
                return assemble(entries, Layout())

    def _fix_manifest(self, tree: Any, contents: dict) -> None:
        if self.manifest_fix == "none" or not isinstance(tree, JObj):
            return
        actual = {
            m.name: contents[id(m)]
            for m in self.members
            if m.name not in ("mimetype", "manifest.json") and id(m) in contents
        }
        if self.manifest_fix == "relist":
            entries = [
                JObj([["name", n], ["size", Lit(str(len(d)))], ["sha256", hashlib.sha256(d).hexdigest()]])
                for n, d in sorted(actual.items())
            ]
            put(tree, "members", entries)
            return
        members = get(tree, "members")
        if isinstance(members, list):
            for e in members:
                n = get(e, "name")
                if isinstance(e, JObj) and isinstance(n, str) and n in actual:
                    d = actual[n]
                    put(e, "size", Lit(str(len(d))))
                    put(e, "sha256", hashlib.sha256(d).hexdigest())


# ============================================================================ content mutations


def mutate_data_json(ar: Archive, rng: random.Random) -> str:
    m = ar.json_member("data.json")
    if m is None or rng.random() < 0.12:
        m = ar.member("data.json")
        if m is None:
            return "data.json-absent"
        m.text_ops.append(_bind_text_op(rng.random()))
        m.changed = True
        return "data.json:text"
    if rng.random() < 0.1:
        m.style = Style(ascii=rng.random() < 0.5, space=rng.choice(["", " "]), newline=rng.random() < 0.5)
    descs = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        m.tree, d = json_tree_op(m.tree, rng, ar.ctx, "data")
        descs.append(d)
    m.changed = True
    return ",".join(descs)


def _bind_text_op(seed: float) -> Callable[[bytes], bytes]:
    rng = random.Random(seed)
    return lambda raw: json_text_op(raw, rng)[0]


def mutate_manifest(ar: Archive, rng: random.Random) -> str:
    m = ar.member("manifest.json")
    if m is None:
        return "manifest-absent"
    if rng.random() < 0.1:
        m.text_ops.append(_bind_text_op(rng.random()))
        return "manifest:text"
    op = rng.choice(["tree", "tree", "version", "members", "extensions", "producer", "unknown", "metadata"])
    seed = rng.random()

    def edit(tree, op=op, seed=seed):
        r = random.Random(seed)
        if not isinstance(tree, JObj):
            return tree
        if op == "tree":
            return json_tree_op(tree, r, ar.ctx, "manifest")[0]
        if op == "version":
            put(
                tree,
                "format_version",
                r.choice(
                    [
                        "1.0",
                        "1.1",
                        "1.999999",
                        "2.0",
                        "0.9",
                        "01.0",
                        "1.01",
                        "1",
                        "1.0.0",
                        "1000000.0",
                        "999999.0",
                        "1.0\n",
                        " 1.0",
                        "",
                        "１.0",
                    ]
                )
                if r.random() < 0.9
                else Lit("1.0"),
            )
            if r.random() < 0.2:
                put(tree, "format", r.choice(["rlarchive ", "RLARCHIVE", "zip", ""]))
        elif op == "members":
            ms = get(tree, "members")
            if isinstance(ms, list) and ms:
                k = r.random()
                i = r.randrange(len(ms))
                if k < 0.2:
                    del ms[i]
                elif k < 0.35:
                    ms.append(copy_tree(ms[i]))
                elif k < 0.5:
                    put(
                        ms[i],
                        "name",
                        r.choice(
                            ["mimetype", "manifest.json", "tensors/missing.safetensors", "DATA.json", "data.json", "x"]
                            + BAD_NAMES[:8]
                        ),
                    )
                elif k < 0.65:
                    put(
                        ms[i],
                        "size",
                        Lit(r.choice(["0", "-1", "1.0", "9007199254740991", "1e3"]))
                        if r.random() < 0.6
                        else tweak_scalar(get(ms[i], "size"), r, ar.ctx),
                    )
                elif k < 0.8:
                    s = get(ms[i], "sha256")
                    put(
                        ms[i],
                        "sha256",
                        r.choice([s.upper() if isinstance(s, str) else "", (s or "")[:-1], "0" * 64, (s or "")[::-1]]),
                    )
                elif k < 0.9:
                    ms[i].append([r.choice(["crc32", "offset", "name"]), Lit("0")])
                else:
                    r.shuffle(ms)
        elif op == "extensions":
            k = r.random()
            names = [
                r.choice(["ACME_notes", "ACME", "x" * 64, "x" * 65, "bad-name", "", "Other"])
                for _ in range(r.randint(1, 2))
            ]
            if k < 0.3:
                put(tree, "extensions_used", names)
            elif k < 0.5:
                put(tree, "extensions_required", names)
            elif k < 0.7:  # used and required: unsupported by these readers
                put(tree, "extensions_used", names)
                put(tree, "extensions_required", names[: r.randint(1, len(names))])
            else:
                put(tree, "extensions", JObj([[n, gen_value(r, ar.ctx)] for n in names]))
        elif op == "producer":
            p = get(tree, "producer")
            if isinstance(p, JObj):
                k = r.random()
                if k < 0.3:
                    put(p, "name", r.choice(["", "x" * 256, "x" * 257, "\U0001f600" * 256, "é"]))
                elif k < 0.5:
                    put(p, "version", r.choice(["", "x" * 257, Lit("1"), None]))
                elif k < 0.7:
                    p.append(["extra", "x"])
                elif p:
                    del p[r.randrange(len(p))]
        elif op == "unknown":
            tree.append([r.choice(["created_with_care", "zz", "\U0001f600", "members2"]), gen_value(r, ar.ctx)])
        elif op == "metadata":
            put(
                tree,
                "metadata",
                r.choice([JObj([["a", "b"]]), JObj([["a", Lit("1")]]), JObj([["\U0001f600", ""]]), [], "x"]),
            )
        return tree

    ar.manifest_ops.append(edit)
    return f"manifest:{op}"


def mutate_tensors(ar: Archive, rng: random.Random) -> str:
    groups = [m for m in ar.members if m.name.startswith("tensors/")]
    if not groups:
        return mutate_data_json(ar, rng)
    m = rng.choice(groups)
    descs = []
    for _ in range(rng.choice([1, 1, 2])):
        m.data, d = st_op(m.data, rng, ar.ctx)
        descs.append(d)
    m.changed = True
    return f"{m.name}:" + ",".join(descs)


def mutate_members(ar: Archive, rng: random.Random) -> str:
    op = rng.choice(
        [
            "reorder",
            "reorder",
            "move",
            "remove",
            "duplicate",
            "case",
            "rename",
            "add",
            "add-group",
            "mimetype",
            "add-ext",
        ]
    )
    ms = ar.members
    if op == "reorder" and len(ms) > 2:
        rest = ms[1:]
        rng.shuffle(rest)
        ms[1:] = rest
    elif op == "move" and len(ms) > 1:
        i, j = rng.randrange(len(ms)), rng.randrange(len(ms))
        ms.insert(j, ms.pop(i))
    elif op == "remove" and ms:
        del ms[rng.randrange(len(ms))]
    elif op == "duplicate" and ms:
        m = rng.choice(ms)
        ms.insert(
            rng.randint(1, len(ms)), Member(m.name, m.content(), m.align, m.zip64, orig_crc=zlib.crc32(m.content()))
        )
    elif op == "case" and ms:
        m = rng.choice(ms)
        name = m.name.upper() if m.name != m.name.upper() else m.name.lower()
        ms.insert(rng.randint(1, len(ms)), Member(name, b"{}", orig_crc=zlib.crc32(b"{}")))
    elif op == "rename" and ms:
        m = rng.choice(ms)
        m.name = rng.choice(BAD_NAMES)
        return f"members.rename->{m.name[:40]}"
    elif op in ("add", "add-group", "add-ext"):
        if op == "add-group":
            src = [x for x in ms if x.name.startswith("tensors/")]
            data = rng.choice(src).content() if src else b"\x08\x00\x00\x00\x00\x00\x00\x00{}      "
            name = (
                "tensors/" + rng.choice(["extra", "Policy", "g.1", "-", "_", "arrays", "optimizer.x"]) + ".safetensors"
            )
            align = rng.choice([64, 64, 0, 8])
        elif op == "add-ext":
            data = rng.choice([b"", b"notes", bytes(100)])
            name = rng.choice(
                [
                    "extensions/ACME_notes/a.txt",
                    "extensions/ACME_notes/d/e",
                    "extensions/Other/a",
                    "extensions/ACME_notes/notes.txt/x",
                    "extensions/ACME_notes/NOTES.txt/x",
                    "extensions/ACME_notes/notes.txt.d/x",
                    "extensions/ACME_notes/d",
                ]
            )
            align = 0
        else:
            data = rng.choice([b"", b"x", b"{}", bytes(range(256))])
            name = rng.choice(BAD_NAMES)
            align = 0
        ms.insert(rng.randint(1, len(ms)), Member(name, data, align, orig_crc=zlib.crc32(data)))
        return f"members.{op}->{name[:40]}"
    elif op == "mimetype":
        m = ar.member("mimetype")
        if m is not None:
            m.data = rng.choice(
                [
                    MEDIA_TYPE + b"\n",
                    b"application/vnd.rlarchive+zi",
                    b"application/vnd.rlarchive+ZIP",
                    b"",
                    b"application/zip",
                ]
            )
    return f"members.{op}"


def mutate_content(ar: Archive, rng: random.Random) -> str:
    r = rng.random()
    if r < 0.45:
        return "data.json:" + mutate_data_json(ar, rng)
    if r < 0.70:
        return mutate_tensors(ar, rng)
    if r < 0.85:
        return mutate_manifest(ar, rng)
    return mutate_members(ar, rng)


# ============================================================================ ZIP structure (rawzip knobs)


def mutate_zip_knobs(ar: Archive, rng: random.Random) -> str:
    ms = ar.members
    m = rng.choice(ms) if ms else None
    op = rng.choice(
        [
            "flags",
            "local_flags",
            "method",
            "crc",
            "local_crc",
            "sizes",
            "offset",
            "extra_local",
            "extra_central",
            "comment",
            "disk_start",
            "version",
            "gap",
            "local_sig",
            "central_sig",
            "ignored",
            "attributes",
            "hidden",
            "zip64",
            "align",
            "layout",
            "layout",
            "layout",
            "zip64_eocd",
        ]
    )
    if m is None or op == "layout":
        k = rng.choice(
            [
                "prefix",
                "suffix",
                "comment",
                "cd_gap",
                "eocd_disk",
                "counts",
                "cd_size",
                "cd_offset",
                "duplicate_eocd",
                "z64_record_size",
                "z64_locator_disks",
                "z64_locator_disk",
            ]
        )
        v = {
            "prefix": lambda: rng.choice([b"#!/bin/sh\n", b"PK\x03\x04", bytes(4)]),
            "suffix": lambda: rng.choice([b"x", bytes(22), b"PK\x05\x06" + bytes(18), b"\n"]),
            "comment": lambda: rng.choice([b"c", b"PK\x05\x06"]),
            "cd_gap": lambda: rng.choice([b"\x00", b"PK\x05\x06" + bytes(18), b"PK\x06\x06", bytes(7)]),
            "eocd_disk": lambda: rng.choice([1, 0xFFFF]),
            "counts": lambda: None,
            "cd_size": lambda: None,
            "cd_offset": lambda: None,
            "duplicate_eocd": lambda: True,
            "z64_record_size": lambda: rng.choice([0, 43, 45, 52, 2**63]),
            "z64_locator_disks": lambda: rng.choice([0, 2, 0xFFFFFFFF]),
            "z64_locator_disk": lambda: rng.choice([1, 0xFFFFFFFF]),
        }[k]()
        if k == "counts":
            n = len([x for x in ms if x.knobs.get("in_central", True)])
            c = rng.choice([n - 1, n + 1, 0, 4097, 0xFFFF, 65536 if ar.layout.get("zip64_eocd") else 0xFFFE])
            ar.layout["eocd_count"] = c
            if rng.random() < 0.8:
                ar.layout["eocd_count_disk"] = c
        elif k == "cd_size":
            ar.layout["eocd_cd_size"] = rng.choice([0, 1, 46, 100, 0xFFFFFFFF, 329 * 3, 2**32])
        elif k == "cd_offset":
            ar.layout["eocd_cd_offset"] = rng.choice([0, 1, 64, 0xFFFFFFFF, 2**32, 2**53 + 1])
        else:
            if k.startswith("z64"):
                ar.layout["zip64_eocd"] = True
            ar.layout[k] = v
        return f"layout.{k}"
    if op == "zip64_eocd":
        ar.layout["zip64_eocd"] = not ar.layout.get("zip64_eocd")
        return "layout.zip64_eocd"
    kn = m.knobs
    if op in ("flags", "local_flags"):
        kn[op] = rng.choice([1, 8, 0x40, 0x800, 2, 4, 0x8000, 0x41, 0x49])
    elif op == "method":
        kn["method"] = rng.choice([8, 12, 14, 93, 99, 1])
    elif op == "crc":
        kn["crc"] = rng.choice([0, 0xFFFFFFFF, m.orig_crc ^ 1])
    elif op == "local_crc":
        kn["local_crc"] = rng.choice([0, 0x12345678])
    elif op == "sizes":
        size = len(m.content())
        which = rng.choice(["local_size", "central_csize", "central_usize", "all"])
        v = max(0, size + rng.choice([-1, 1, 10, -10, 2**31, 2**32 - 1 - size]))
        if which == "all":
            kn["local_size"] = kn["central_csize"] = kn["central_usize"] = v
        else:
            kn[which] = v
    elif op == "offset":
        kn["offset"] = rng.choice([0, 1, 30, 0xFFFFFFFF - 1, 2**31])
    elif op == "extra_local":
        kn["extra_local"] = rng.choice(
            [
                b"\x35\xd9",
                struct.pack("<HHHB", 0xD935, 3, 64, 7),
                struct.pack("<HHB", 0x5455, 1, 0),
                struct.pack("<HHQQ", 1, 16, 0, 0),
                struct.pack("<HHH", 0xD935, 2, 4) * 2,
                struct.pack("<HHQ", 1, 8, 0),
                struct.pack("<HH", 0xD935, 0),
                struct.pack("<HHH", 0xD935, 2, 0),
                struct.pack("<HH", 0xCAFE, 0),
            ]
        )
    elif op == "extra_central":
        kn["extra_central"] = rng.choice(
            [
                struct.pack("<HHQ", 1, 8, 5),
                struct.pack("<HHH", 0xD935, 2, 64),
                struct.pack("<HHB", 0x5455, 1, 0),
                b"\x01\x00",
                struct.pack("<HH", 1, 0),
                struct.pack("<HHQQQ", 1, 24, 0, 0, 0),
            ]
        )
    elif op == "comment":
        kn["comment"] = rng.choice([b"c", b"PK\x01\x02"])
    elif op == "disk_start":
        kn["disk_start"] = rng.choice([1, 0xFFFF])
    elif op == "version":
        kn[rng.choice(["version", "local_version"])] = rng.choice([0, 10, 45, 46, 63, 0x032D, 0xFFFF])
    elif op == "gap":
        kn["gap_before"] = rng.choice([b"\x00", bytes(16), b"PK\x03\x04", b"PK\x05\x06" + bytes(18)])
    elif op == "local_sig":
        kn["local_sig"] = rng.choice([b"PK\x03\x05", b"PK\x01\x02", b"\x00\x00\x00\x00"])
    elif op == "central_sig":
        kn["central_sig"] = rng.choice([b"PK\x01\x09", b"PK\x03\x04", b"\x00\x00\x00\x00"])
    elif op == "ignored":  # fields readers must ignore: still valid
        kn.update(mtime=rng.randrange(65536), mdate=rng.randrange(65536), int_attr=rng.randrange(65536))
    elif op == "attributes":  # host system and external attributes (spec §2.7): allowed and refused forms
        host = rng.choice([0, 0, 3, 3, 1, 5, 10, 11, 19, 255, rng.randrange(256)])
        kn["made_by"] = host << 8 | rng.choice([0, 20, 45, 63, 255, rng.randrange(256)])
        mode = rng.choice(
            [
                0,
                0o600,
                0o644,
                0o100644,
                0o100444,
                0o100400,
                0o100000,
                0o100044,
                0o104755,
                0o102755,
                0o101644,
                0o120777,
                0o040755,
                0o020644,
                0o010644,
                0o140644,
                0o160644,
                rng.randrange(65536),
            ]
        )
        dos = rng.choice(
            [
                0,
                0x01,
                0x20,
                0x21,
                0x8020,
                0x8021,
                0x02,
                0x04,
                0x08,
                0x10,
                0x40,
                0x80,
                0x400,
                0x8000,
                rng.randrange(65536),
            ]
        )
        kn["ext_attr"] = (mode << 16 | dos) if rng.random() < 0.9 else rng.randrange(2**32)
    elif op == "hidden":
        kn[rng.choice(["in_central", "in_local"])] = False
    elif op == "zip64":
        m.zip64 = not m.zip64
    elif op == "align":
        m.align = rng.choice([0, 1, 2, 4, 8, 64, 4096, 0xFFFF])
    return f"zip.{op}({m.name[:30]})"


# ============================================================================ ZIP record fields


@dataclass
class Field:
    offset: int
    width: int
    name: str
    group: str  # which member or record, to pair local/central fields


def zip_fields(raw: bytes) -> list:
    """Every field of the ZIP records that can be found (tolerant of broken archives)."""
    out: list = []
    n = len(raw)

    def add(off, width, name, group):
        if 0 <= off and off + width <= n:
            out.append(Field(off, width, name, group))

    e = n - 22
    if e < 0 or raw[e : e + 4] != b"PK\x05\x06":
        return out
    for off, w, nm in (
        (4, 2, "disk"),
        (6, 2, "cd_disk"),
        (8, 2, "n_disk"),
        (10, 2, "n_total"),
        (12, 4, "cd_size"),
        (16, 4, "cd_offset"),
        (20, 2, "comment_len"),
    ):
        add(e + off, w, "eocd." + nm, "eocd")
    _, _, _, _, count, cd_size, cd_off, _ = struct.unpack("<4sHHHHIIH", raw[e:])
    loc = e - 20
    if loc >= 0 and raw[loc : loc + 4] == b"PK\x06\x07":
        for off, w, nm in ((4, 4, "disk"), (8, 8, "offset"), (16, 4, "disks")):
            add(loc + off, w, "locator." + nm, "locator")
        (z,) = struct.unpack("<Q", raw[loc + 8 : loc + 16])
        if z + 56 <= n and raw[z : z + 4] == b"PK\x06\x06":
            for off, w, nm in (
                (4, 8, "size"),
                (12, 2, "made"),
                (14, 2, "needed"),
                (16, 4, "disk"),
                (20, 4, "cd_disk"),
                (24, 8, "n_disk"),
                (32, 8, "n_total"),
                (40, 8, "cd_size"),
                (48, 8, "cd_offset"),
            ):
                add(z + off, w, "z64." + nm, "z64")
            count, cd_size, cd_off = struct.unpack("<QQQ", raw[z + 32 : z + 56])
    pos = cd_off
    for i in range(min(count, 64)):
        if pos + 46 > n or raw[pos : pos + 4] != b"PK\x01\x02":
            break
        f = struct.unpack("<4sHHHHHHIIIHHHHHII", raw[pos : pos + 46])
        g = f"m{i}"
        for off, w, nm in (
            (4, 2, "made_by"),
            (6, 2, "needed"),
            (8, 2, "flags"),
            (10, 2, "method"),
            (12, 2, "time"),
            (14, 2, "date"),
            (16, 4, "crc"),
            (20, 4, "csize"),
            (24, 4, "usize"),
            (28, 2, "nlen"),
            (30, 2, "xlen"),
            (32, 2, "clen"),
            (34, 2, "disk_start"),
            (36, 2, "int_attr"),
            (38, 4, "ext_attr"),
            (42, 4, "lh_offset"),
        ):
            add(pos + off, w, "central." + nm, g)
        nlen, xlen, clen, lh = f[10], f[11], f[12], f[16]
        for k in range(min(nlen, 3)):
            add(pos + 46 + k, 1, "central.name", g)
        p = pos + 46 + nlen
        end = p + xlen
        while p + 4 <= end and p + 4 <= n:
            hid, ln = struct.unpack("<HH", raw[p : p + 4])
            add(p, 2, "central.extra_id", g)
            add(p + 2, 2, "central.extra_len", g)
            if hid == 1:
                for k in range(ln // 8):
                    add(p + 4 + 8 * k, 8, "central.zip64", g)
                if f[16] == U32 and ln >= 8 and p + 4 + ln <= n:
                    (lh,) = struct.unpack("<Q", raw[p + 4 + ln - 8 : p + 4 + ln])
            p += 4 + ln
        if lh + 30 <= n and raw[lh : lh + 4] == b"PK\x03\x04":
            for off, w, nm in (
                (4, 2, "needed"),
                (6, 2, "flags"),
                (8, 2, "method"),
                (10, 2, "time"),
                (12, 2, "date"),
                (14, 4, "crc"),
                (18, 4, "csize"),
                (22, 4, "usize"),
                (26, 2, "nlen"),
                (28, 2, "xlen"),
            ):
                add(lh + off, w, "local." + nm, g)
            lnlen, lxlen = struct.unpack("<HH", raw[lh + 26 : lh + 30])
            for k in range(min(lnlen, 3)):
                add(lh + 30 + k, 1, "local.name", g)
            p = lh + 30 + lnlen
            end = p + lxlen
            while p + 4 <= end and p + 4 <= n:
                hid, ln = struct.unpack("<HH", raw[p : p + 4])
                add(p, 2, "local.extra_id", g)
                add(p + 2, 2, "local.extra_len", g)
                if hid == 0xD935:
                    add(p + 4, 2, "local.align", g)
                if hid == 1:
                    for k in range(ln // 8):
                        add(p + 4 + 8 * k, 8, "local.zip64", g)
                p += 4 + ln
        pos += 46 + nlen + xlen + clen
    return out


def interesting_values(old: int, width: int, raw_len: int, rng: random.Random) -> int:
    mx = (1 << (8 * width)) - 1
    cands = [
        0,
        1,
        2,
        old + 1,
        old - 1,
        old ^ 1,
        old + rng.randint(-64, 64),
        mx,
        mx - 1,
        1 << (8 * width - 1),
        (1 << (8 * width - 1)) - 1,
        old + 8,
        old - 8,
        old * 2,
        raw_len,
        raw_len - 22,
        raw_len + 1,
        old + 30,
    ]
    if width == 8:
        cands += [
            2**53 - 1,
            2**53,
            2**53 + 1,
            2**63,
            2**64 - 2,
            old + 2**53,
            old + 2**60,
            old + 2**60 + 1,
            2**32,
            2**32 - 1,
        ]
    if width == 1:
        cands += [ord(c) for c in "/\\.A_-é"[:6]] + [0x80, 0x7F, 0x20]
    return rng.choice(cands) & mx


def field_op(raw: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Edit one field of the ZIP records (or the same field in a member's two headers)."""
    fields = zip_fields(raw)
    if not fields:
        return raw, "field.none"
    b = bytearray(raw)
    wide = [f for f in fields if f.width == 8]
    if wide and rng.random() < 0.12:
        # two 64-bit fields of one record set to neighbours above 2^53 (equal once rounded to a double)
        f = rng.choice(wide)
        g = rng.choice([x for x in wide if x.group == f.group])
        x = rng.choice([2**53, 2**60, 2**63, 2**64 - 2, 2**53 + 2])
        d = rng.choice([1, -1, 2])
        b[f.offset : f.offset + 8] = x.to_bytes(8, "little")
        b[g.offset : g.offset + 8] = min(U64, x + d).to_bytes(8, "little")
        if f.group.startswith("m") and rng.random() < 0.5:  # and the same in the other header of the member
            for h in fields:
                if h.group == f.group and h.width == 8 and h.name.split(".")[0] != f.name.split(".")[0]:
                    b[h.offset : h.offset + 8] = x.to_bytes(8, "little")
        return bytes(b), f"field.near-equal[{f.group}]:{f.name}={x},{g.name}={x}+{d}"

    f = rng.choice(fields)
    old = int.from_bytes(b[f.offset : f.offset + f.width], "little")
    new = interesting_values(old, f.width, len(raw), rng)
    targets = [f]
    paired = ""
    if f.name.split(".")[0] in ("local", "central") and rng.random() < 0.5:
        # the same field in both headers of this member (and both sizes), so that they agree
        base = f.name.split(".")[1]
        names = {"csize", "usize"} if base in ("csize", "usize") else {base}
        targets = [
            g
            for g in fields
            if g.group == f.group
            and g.name.split(".")[0] in ("local", "central")
            and g.name.split(".")[1] in names
            and g.width == f.width
        ]
        paired = "+paired"
    for g in targets:
        b[g.offset : g.offset + g.width] = new.to_bytes(g.width, "little")
    return bytes(b), f"field.{f.name}[{f.group}]{paired}:{old}->{new}"


# ============================================================================ raw bytes


def byte_op(raw: bytes, rng: random.Random) -> tuple[bytes, str]:
    b = bytearray(raw)
    n = len(b)
    op = rng.choice(
        ["flip", "flip", "flip", "byte", "truncate", "truncate-end", "insert", "delete", "duplicate", "append", "zero"]
    )

    def pos() -> int:
        # biased toward the records: the first local header, the central directory and end records
        r = rng.random()
        if n == 0:
            return 0
        if r < 0.25:
            return rng.randrange(min(n, 100))
        if r < 0.6:
            return n - 1 - rng.randrange(min(n, 600))
        return rng.randrange(n)

    if op == "flip" and n:
        for _ in range(rng.randint(1, 4)):
            i = pos()
            b[i] ^= 1 << rng.randrange(8)
    elif op == "byte" and n:
        b[pos()] = rng.choice([0, 0xFF, 0x7F, 0x80, 0x50, 0x4B, 1, 0x20])
    elif op == "truncate":
        del b[rng.randrange(n + 1) :]
    elif op == "truncate-end":
        del b[max(0, n - rng.randint(1, 64)) :]
    elif op == "insert":
        i = pos()
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 2, 4, 22, 46])))
    elif op == "delete" and n:
        i = pos()
        del b[i : i + rng.choice([1, 2, 4, 22, 46])]
    elif op == "duplicate" and n:
        i = pos()
        b[i:i] = b[i : i + rng.choice([4, 22, 46, 100])]
    elif op == "append":
        b += rng.choice([b"\x00", b"PK\x05\x06" + bytes(18), bytes(65536), b"PK"])
    elif op == "zero" and n:
        i = pos()
        b[i : i + 8] = bytes(len(b[i : i + 8]))
    return bytes(b), f"bytes.{op}"


# ============================================================================ one case


def mutate(seed: Seed, rng: random.Random) -> tuple[bytes, list]:
    """A mutated archive from a seed, and the list of mutations applied."""
    ar = Archive(seed)
    descs: list = []
    profile = rng.random()
    if profile < 0.45:  # deep: content edits with every fixup, so they reach the value and tensor layers
        for _ in range(rng.choice([1, 1, 2, 3])):
            descs.append(mutate_content(ar, rng))
    elif profile < 0.65:  # content edits with some consistency left broken, maybe stacked with ZIP edits
        for _ in range(rng.choice([1, 2])):
            descs.append(mutate_content(ar, rng))
        ar.manifest_fix = rng.choice(["update", "relist", "none"])
        ar.crc_fix = rng.random() < 0.6
        descs.append(f"fix:{ar.manifest_fix},crc={'fresh' if ar.crc_fix else 'stale'}")
        if rng.random() < 0.3:
            descs.append(mutate_zip_knobs(ar, rng))
    elif profile < 0.85:  # ZIP structure
        if rng.random() < 0.3:
            descs.append(mutate_content(ar, rng))
        for _ in range(rng.choice([1, 1, 2])):
            descs.append(mutate_zip_knobs(ar, rng))
    raw = ar.assemble()
    if 0.65 <= profile < 1.0 and rng.random() < (0.5 if profile < 0.85 else 0.6):
        for _ in range(rng.choice([1, 1, 2])):
            raw, d = field_op(raw, rng)
            descs.append(d)
    if profile >= 0.85 and (rng.random() < 0.6 or not descs):
        for _ in range(rng.choice([1, 1, 2, 3])):
            raw, d = byte_op(raw, rng)
            descs.append(d)
    return raw, descs


def load_seeds(vectors: str) -> list:
    """The valid golden vectors (index.json), parsed."""
    with open(os.path.join(vectors, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    seeds = []
    for c in index["cases"]:
        if c["expect"]["result"] == "dump" and not c["file"].endswith(".gz"):
            with open(os.path.join(vectors, c["file"]), "rb") as f:
                seeds.append(parse_archive(f.read(), c["id"]))
    return seeds
