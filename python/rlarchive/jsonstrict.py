"""The strict JSON dialect of spec §6, storage serialization (§12) and RFC 8785 (§13.3).

Parsed documents use plain Python types: ``dict`` (insertion-ordered), ``list``,
``str``, ``int`` for integer literals, ``float`` for float literals, ``bool`` and
``None``. The int/float split follows the literal, as the value model needs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from itertools import chain, compress, repeat
from operator import is_
from typing import Any

from .errors import RlarchiveError
from .jsonbounds import nesting_depth, text_shape
from .limits import MAX_JSON_BYTES, MAX_JSON_DEPTH, MAX_SAFE_INTEGER

__all__ = ["parse", "dumps", "canonical", "es6_number", "nesting_depth"]

_BOM = b"\xef\xbb\xbf"
# every digit as "0": 16 of them in a row are where an integer literal beyond ±(2^53-1) can be (2^53 has 16 digits)
_DIGITS_AS_ZERO = bytes(ord("0") if chr(c).isdigit() and c < 128 else c for c in range(256))
_LONG_DIGITS = b"0" * 16
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# the tokens of a JSON text that json.loads accepted (or stopped in at a NaN literal)
_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|-?Infinity|NaN|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|[{}\[\]:,]|true|false|null|\s+'
)


class _Collector:
    """Hooks for :func:`json.loads` that record rule 8-9 problems without raising."""

    def __init__(self) -> None:
        self.int_range: str | None = None
        self.float_range: str | None = None

    def parse_int(self, s: str) -> int:
        # 2**53 has 16 digits: a longer literal is out of range (and may be too long for int())
        if len(s.lstrip("-")) > 16:
            if self.int_range is None:
                self.int_range = s
            return 0
        v = int(s)
        if abs(v) > MAX_SAFE_INTEGER and self.int_range is None:
            self.int_range = s
        return v

    def parse_float(self, s: str) -> float:
        v = float(s)
        if math.isinf(v) and self.float_range is None:
            self.float_range = s
        return v


def _kept_keys(value: Any, objects: int) -> int | None:
    """The keys of the objects of a parsed ``value`` whose text holds ``objects`` objects; None when fewer
    than ``objects`` are in ``value`` (one was the value of a key repeated in its object, which the parse drops).

    The containers are taken a level at a time, each level's by built-in functions mapped over it (no
    Python step per value), down to the level where the last object is found.
    """
    level, found, keys = [value], 0, 0
    while level:
        types = list(map(type, level))
        dicts = list(compress(level, map(is_, types, repeat(dict))))
        found += len(dicts)
        keys += sum(map(len, dicts))
        if found >= objects:
            break
        lists = compress(level, map(is_, types, repeat(list)))
        level = [*chain.from_iterable(map(dict.values, dicts)), *chain.from_iterable(lists)]
    return keys if found == objects else None


def _nan_literal(name: str) -> Any:
    raise _NanLiteral(name)


class _NanLiteral(Exception):
    pass


def _has_surrogate(obj: Any) -> bool:
    if isinstance(obj, str):
        return _SURROGATE.search(obj) is not None
    if isinstance(obj, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in obj.items())
    if isinstance(obj, list):
        return any(_has_surrogate(v) for v in obj)
    return False


def _locate(text: str, rule: str) -> int | None:
    """The character position of the first token, in document order, that breaks ``rule`` (spec §11.2);
    None when none does.

    ``rule`` is one of "surrogate" (a string holding a lone surrogate: its
    opening quote), "duplicate" (a key an earlier key of its object equals: its
    opening quote), "nan" (a NaN or Infinity literal), "int" (an integer literal
    outside ±(2^53-1)) and "float" (a float literal that overflows binary64).
    Called on a text json.loads read, once the rule is known or likely to be broken.
    """
    stack: list[Any] = []  # per open container: the keys seen (an object) or None (an array)
    expect_key = False
    for m in _TOKEN.finditer(text):
        tok, pos = m.group(), m.start()
        c = tok[0]
        if c == '"':
            value = json.loads(tok)
            if rule == "surrogate" and _SURROGATE.search(value):
                return pos
            if expect_key:
                expect_key = False
                if rule == "duplicate" and value in stack[-1]:
                    return pos
                stack[-1].add(value)
        elif c == "{":
            stack.append(set())
            expect_key = True
        elif c == "[":
            stack.append(None)
        elif c in "]}":
            stack.pop()
        elif c == ",":
            expect_key = bool(stack) and stack[-1] is not None
        elif c in "-0123456789NI":
            if rule == "nan" and tok in ("NaN", "Infinity", "-Infinity"):
                return pos
            if (
                rule == "int"
                and not any(ch in tok for ch in ".eEIN")
                and (len(tok.lstrip("-")) > 16 or abs(int(tok)) > MAX_SAFE_INTEGER)
            ):
                return pos
            if rule == "float" and any(ch in tok for ch in ".eE") and math.isinf(float(tok)):
                return pos
    return None


_HEX = frozenset("0123456789abcdefABCDEF")


def _syntax_at(text: str, e: json.JSONDecodeError) -> int:
    """The character position of a JSON_SYNTAX error (spec §11.2): the length of
    the longest prefix of ``text`` that begins some JSON text.

    json.loads stops at the start of the token it could not take; this moves
    on over the part of that token that is still a valid beginning.
    """
    pos, msg, n = e.pos, e.msg, len(text)
    if msg.startswith("Unterminated string"):
        return n
    if msg.startswith("Illegal trailing comma"):  # Python 3.13+ stops at the comma, which a longer text could follow
        return pos + 1
    if msg.startswith("Invalid \\escape"):
        return text.rfind("\\", 0, pos + 1) + 1
    if msg.startswith("Invalid \\uXXXX"):
        k = text.rfind("\\", 0, pos + 1) + 2
        while k < n and k < pos + 6 and text[k] in _HEX:
            k += 1
        return k
    if pos < n and msg.startswith("Expecting value"):
        if text[pos] == "-":
            return pos + 1
        for word in ("true", "false", "null"):
            if text[pos] == word[0]:
                k = 1
                while k < len(word) and pos + k < n and text[pos + k] == word[k]:
                    k += 1
                return pos + k
    start = pos
    while start > 0 and text[start - 1] in "0123456789.eE+-":
        start -= 1
    number = text[start:pos]
    if (
        number[-1:].isdigit()
        and text[pos : pos + 1] in (".", "e", "E")
        and not any(c in number for c in ("." if text[pos] == "." else "") + "eE")
    ):
        # a number json.loads ended early: "1." and "1e+" begin longer numbers
        k = pos + 1
        if text[pos] in "eE" and k < n and text[k] in "+-":
            k += 1
        return k
    return pos


def parse(
    raw: bytes,
    *,
    member: str | None = None,
    offset: int | None = None,
    max_bytes: int = MAX_JSON_BYTES,
    size_code: str = "JSON_TOO_LARGE",
) -> Any:
    """Parse a JSON text under the rules of spec §6, in their order.

    Args:
        raw: the bytes of the text.
        member: the archive member, for error locations.
        offset: the file offset of ``raw[0]``, for error locations.
        max_bytes: the size limit (rule 1).
        size_code: the code raised when ``max_bytes`` is exceeded.
    Raises:
        RlarchiveError: with the code of the first rule broken.
    """

    def fail(code: str, msg: str, at: int | None = None) -> RlarchiveError:
        off = None if offset is None else offset + (at or 0)
        return RlarchiveError(code, msg, member=member, offset=off)

    def fail_at(code: str, msg: str, pos: int) -> RlarchiveError:
        return fail(code, msg, len(text[:pos].encode("utf-8")))

    def located(rule: str) -> int:
        pos = _locate(text, rule)
        if pos is None:  # pragma: no cover - parse() found one
            raise AssertionError(f"no token breaks {rule}")
        return pos

    if len(raw) > max_bytes:
        raise fail(size_code, f"JSON text of {len(raw)} bytes exceeds the limit of {max_bytes}")
    if raw.startswith(_BOM):
        raise fail("JSON_BOM", "JSON text begins with a byte order mark")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise fail("JSON_UTF8", f"JSON text is not well-formed UTF-8 ({e.reason})", e.start) from None
    depth, objects, keys = text_shape(text)
    if depth > MAX_JSON_DEPTH:
        raise fail("JSON_DEPTH", f"JSON nesting exceeds the limit of {MAX_JSON_DEPTH}")
    hooks = _Collector()
    try:
        value = json.loads(
            text,
            # without a run of 16 digits every integer literal is within ±(2^53-1): the decoder's own int() then
            parse_int=hooks.parse_int if _LONG_DIGITS in raw.translate(_DIGITS_AS_ZERO) else None,
            parse_float=hooks.parse_float,
            parse_constant=_nan_literal,
        )
    except _NanLiteral as e:
        raise fail_at("JSON_NAN_LITERAL", f"JSON text holds the literal {e.args[0]}", located("nan")) from None
    except json.JSONDecodeError as e:
        at = len(text[: _syntax_at(text, e)].encode("utf-8"))
        raise fail("JSON_SYNTAX", f"invalid JSON: {e.msg}", at) from None
    except (RecursionError, ValueError) as e:  # ValueError: int too long for str conversion
        raise fail("JSON_SYNTAX", f"invalid JSON: {e}") from None
    # a key repeated in its object is dropped by the parse: fewer keys (or objects) kept than the text holds
    repeated = _kept_keys(value, objects) != keys
    # rule 6 before rule 7: the strings of a dropped key and its value too (found in the text alone)
    if _SURROGATE_ESCAPE.search(text) and (repeated or _has_surrogate(value)):
        pos = _locate(text, "surrogate")
        if pos is not None:
            raise fail_at("JSON_UTF8", "JSON string escapes a lone surrogate", pos)
    if repeated:
        pos = located("duplicate")
        key = json.JSONDecoder().raw_decode(text, pos)[0]
        raise fail_at("JSON_DUPLICATE_KEY", f"JSON object has the key {key!r} twice", pos)
    if hooks.int_range is not None:
        msg = f"integer literal {hooks.int_range[:40]} is outside ±(2^53-1)"
        raise fail_at("JSON_INTEGER_RANGE", msg, located("int"))
    if hooks.float_range is not None:
        raise fail_at(
            "JSON_NUMBER_RANGE", f"float literal {hooks.float_range[:40]} overflows binary64", located("float")
        )
    return value


def dumps(value: Any) -> bytes:
    """Serialize for storage (spec §12): compact, insertion order, literal non-ASCII."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


# ---------------------------------------------------------------- RFC 8785 (JCS)


def es6_number(x: float) -> str:
    """ECMAScript Number::toString of a finite binary64 (RFC 8785 §3.2.2.3)."""
    if x == 0:
        return "0"
    if not math.isfinite(x):
        raise ValueError("non-finite number in canonical JSON")
    sign = "-" if x < 0 else ""
    r = repr(abs(x))
    mant, _, exp = r.partition("e")
    ip, _, fp = mant.partition(".")
    digits = (ip + fp).lstrip("0")
    e10 = (int(exp) if exp else 0) - len(fp)
    stripped = digits.rstrip("0")
    e10 += len(digits) - len(stripped)
    s = stripped
    k = len(s)
    n = k + e10
    if k <= n <= 21:
        out = s + "0" * (n - k)
    elif 0 < n <= 21:
        out = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + s
    else:
        e = n - 1
        es = ("+" if e >= 0 else "-") + str(abs(e))
        out = (s if k == 1 else s[0] + "." + s[1:]) + "e" + es
    return sign + out


#: A string as a JSON string literal: the escapes of ``json.dumps(s, ensure_ascii=False)`` (which calls it), without
#: building an encoder per string.
_string: Callable[[str], str] = json.encoder.encode_basestring


def _jcs(value: Any, out: list[Any]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError("integer beyond 2^53 in canonical JSON")
        out.append(str(value))
    elif isinstance(value, float):
        out.append(es6_number(value))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, v in enumerate(value):
            if i:
                out.append(",")
            _jcs(v, out)
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        for i, k in enumerate(sorted(value, key=lambda s: s.encode("utf-16-be"))):
            if i:
                out.append(",")
            out.append(_string(k))
            out.append(":")
            _jcs(value[k], out)
        out.append("}")
    else:
        raise TypeError(f"cannot canonicalize {type(value).__name__}")


def canonical(value: Any) -> bytes:
    """RFC 8785 serialization of a JSON value as UTF-8 bytes."""
    out: list[Any] = []
    _jcs(value, out)
    return "".join(out).encode("utf-8")
