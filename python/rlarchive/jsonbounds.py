"""JSON within bounds: the nesting depth and the memory a parse may take, both known before parsing.

Python's :func:`json.loads` recurses once per level of nesting (a deep text
raises ``RecursionError``) and builds objects that take many times the text's
size (an empty list for the 3 bytes ``[],``). :func:`loads` checks both first:

- :func:`nesting_depth` measures the depth on the raw text without recursion
  (spec §6 rule 4);
- :func:`json_cost` is an upper bound of the memory a text and its parse by
  ``json.loads`` take (the text, its decoded copy, every object the parse
  makes, the parser's own tables), counted from a few byte counts:
  :data:`BASE_COST`; :data:`PLAIN_BYTE_COST` bytes per byte of a text of ASCII
  characters without a backslash, :data:`BYTE_COST` per byte of any other;
  :data:`VALUE_COST` per value (at most one per ``,``, ``:``, ``[``, ``{``,
  plus one); :data:`KEY_COST` more per key, :data:`OBJECT_COST` more per
  object and :data:`ARRAY_COST` more per array. A text whose bound exceeds the
  caller's limit is refused unparsed, so the limit bounds memory, not only
  bytes.

Standard library only: this module also ships beside ``run.py`` in the
standalone conformance kit.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "BASE_COST",
    "PLAIN_BYTE_COST",
    "BYTE_COST",
    "VALUE_COST",
    "KEY_COST",
    "OBJECT_COST",
    "ARRAY_COST",
    "JSONBoundsError",
    "json_cost",
    "loads",
    "nesting_depth",
    "text_shape",
]

#: Bytes per byte of a text of ASCII characters without a backslash: the text itself, its decoded copy,
#: and its strings, which are copies of parts of it.
PLAIN_BYTE_COST = 3
#: Bytes per byte of any other text: the text itself, and its decoded copy and its strings, which take up
#: to 4 bytes a byte (one character beyond Latin-1 makes a whole string 2 or 4 bytes a character), a string
#: with escapes being built in a buffer that grows and may widen while the narrower one is still held.
BYTE_COST = 17
#: Bytes for the fixed parts of the decoded text and of the parser.
BASE_COST = 4096
#: Bytes per value: the largest fixed part of a number, string or container, and its slot in a list (grown in steps).
VALUE_COST = 80
#: Bytes more per object key: its entry in the object and in the parser's table of keys met.
KEY_COST = 80
#: Bytes more per object: a dict with its first entries.
OBJECT_COST = 200
#: Bytes more per array: a list with its first slots.
ARRAY_COST = 48

# a string: a quote, then characters that are neither a quote nor a backslash, or a backslash and the
# character after it (any, a line break too), then the closing quote unless the text ends first
_STRING = re.compile(r'"[^"\\]*(?:\\[\s\S][^"\\]*)*"?')
_NOT_TOKENS = bytes(c for c in range(256) if c not in b'"[]{}:')
_QUOTE, _BRACE, _COLON = ord('"'), ord("{"), ord(":")
_OPENING = frozenset(b"[{")
_DEPTH_BLOCK = 1 << 20


class JSONBoundsError(ValueError):
    """A text beyond a bound (its depth, or the memory its parse may take)."""


def nesting_depth(text: str) -> int:
    """Maximum nesting depth, measured on the raw text as spec §6 rule 4 defines (no recursion).

    A bracket counts outside strings only; a string runs from a quote to the
    next quote that no backslash escapes (or to the end of the text), and a
    backslash inside it takes the character after it (a backslash outside a
    string is a syntax error found later). :func:`text_shape` measures it.
    """
    return text_shape(text)[0]


def text_shape(text: str) -> tuple[int, int, int]:
    """(the nesting depth of :func:`nesting_depth`, the objects, the keys) of a text, measured on the raw
    text without recursion: the objects are the ``{`` outside strings, the keys the ``:`` outside strings
    (in a text that is JSON, one per member of an object, a repeated key included).

    With a backslash in the text, the strings are removed by a regular
    expression first. Then only the quotes, brackets and colons are kept, in
    order: one is inside a string when an odd number of quotes comes before
    it. The depth is the running sum of +1 for ``[``/``{`` and -1 for
    ``]``/``}`` over the brackets outside strings: with NumPy in blocks of
    ``_DEPTH_BLOCK`` (its memory bounded by the block, no object per token),
    without it (the standalone conformance kit) a step per token.
    """
    data = text.encode("utf-8", "surrogatepass")  # brackets and quotes are ASCII, never part of a longer sequence
    if b"\\" in data:
        data = _STRING.sub("", text).encode("utf-8", "surrogatepass")
    tokens = data.translate(None, _NOT_TOKENS)
    del data
    try:
        import numpy as np
    except ImportError:
        depth = peak = objects = keys = 0
        in_string = False
        for b in tokens:
            if b == _QUOTE:
                in_string = not in_string
            elif in_string:
                continue
            elif b == _COLON:
                keys += 1
            else:
                objects += b == _BRACE
                depth += 1 if b in _OPENING else -1
                peak = max(peak, depth)
        return peak, objects, keys
    steps = np.zeros(256, np.int8)  # byte -> its step of the nesting depth
    steps[list(_OPENING)] = 1
    steps[[ord("]"), ord("}")]] = -1
    depth = peak = quotes = objects = keys = 0
    for start in range(0, len(tokens), _DEPTH_BLOCK):
        block = np.frombuffer(tokens, np.uint8, min(_DEPTH_BLOCK, len(tokens) - start), start)
        is_quote = block == _QUOTE
        # the parity of the quotes up to each token (those of the blocks before included): 0 outside strings
        outside = np.bitwise_xor.accumulate(is_quote.view(np.uint8)) == quotes & 1
        running = np.cumsum(steps.take(block) * outside, dtype=np.int32)
        peak = max(peak, depth + int(running.max()))
        depth += int(running[-1])
        quotes += int(np.count_nonzero(is_quote))
        objects += int(np.count_nonzero(outside & (block == _BRACE)))
        keys += int(np.count_nonzero(outside & (block == _COLON)))
    return peak, objects, keys


def json_cost(raw: bytes) -> int:
    """An upper bound of the bytes the text ``raw`` and ``json.loads`` of it take (the module's description
    says how it is counted; a test measures it against the peak for texts built to take the most)."""
    keys, objects, arrays = raw.count(b":"), raw.count(b"{"), raw.count(b"[")
    values = 1 + raw.count(b",") + keys + arrays + objects
    per_byte = PLAIN_BYTE_COST if raw.isascii() and b"\\" not in raw else BYTE_COST
    return (
        BASE_COST
        + per_byte * len(raw)
        + VALUE_COST * values
        + KEY_COST * keys
        + OBJECT_COST * objects
        + ARRAY_COST * arrays
    )


def loads(raw: bytes, *, max_depth: int, max_memory: int) -> Any:
    """The JSON text ``raw`` (UTF-8) parsed as :func:`json.loads` does, once it is known to nest at most
    ``max_depth`` levels and to take at most ``max_memory`` bytes to parse (:func:`json_cost`).

    Raises:
        JSONBoundsError: a bound is exceeded (nothing was parsed).
        ValueError: not UTF-8, or not JSON (``json.JSONDecodeError``).
    """
    cost = json_cost(raw)
    if cost > max_memory:
        raise JSONBoundsError(
            f"{len(raw)} bytes of JSON may take up to {cost} bytes of memory to parse, above the limit of {max_memory}"
        )
    text = raw.decode("utf-8")
    depth = nesting_depth(text)
    if depth > max_depth:
        raise JSONBoundsError(f"JSON nested {depth} levels deep, above the limit of {max_depth}")
    return json.loads(text)
