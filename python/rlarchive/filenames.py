"""File names as text: the escaped form that prints any name on one line, and
the ``file`` fields of a validation report (spec §14).

A POSIX file name is a sequence of bytes; Python hands it over as ``str``
with each byte that is not UTF-8 turned into a lone surrogate
(``surrogateescape``). Printed as it is, such a name makes invalid UTF-8, and
a name holding a line break makes a second line. Here:

- :func:`escape_name` gives the *escaped form*: the name's text with ``\\``
  written ``\\\\``, each byte that does not begin or continue a well-formed
  UTF-8 sequence written ``\\xHH``, and each character that would break or
  disguise a line written ``\\uHHHH`` (``\\UHHHHHHHH`` beyond U+FFFF): a
  control character (U+0000-U+001F, U+007F-U+009F), a character of the
  Unicode categories Cf (format: bidirectional controls, zero-width
  characters...), Zl, Zp, or Zs other than the space U+0020, and a space that
  begins the name. Hexadecimal digits are lower case. Two names never have the
  same escaped form, and the form is printable text on one line.
- :func:`report_fields` gives ``{"file": NAME}`` for a name that is valid
  UTF-8, else ``{"file": ESCAPED, "file_base64": BYTES}`` (the raw bytes in
  standard base64), so that a JSON report is valid UTF-8 and loses nothing.
- :func:`json_text` writes a JSON value with every character that would
  break or disguise a line written as a JSON escape, so that printed JSON
  holds no raw control or bidirectional character and still parses back to
  the same value.
"""

from __future__ import annotations

import base64
import json
import os
import unicodedata
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:  # a type only: the standalone conformance kit ships this module without report.py
    from .report import FileName

NameInput = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

_DISGUISING = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp", "Zs"})


def name_bytes(name: NameInput) -> bytes:
    """The bytes of a file name (as the operating system has them)."""
    name = os.fspath(name)
    if isinstance(name, bytes):
        return name
    try:
        return os.fsencode(name)
    except UnicodeEncodeError:  # a lone surrogate that does not stand for a byte
        return name.encode("utf-8", "surrogatepass")


def is_utf8_text(name: NameInput) -> bool:
    """Whether the name is well-formed UTF-8 (a ``str`` without lone surrogates)."""
    try:
        name_bytes(name).decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _char_escape(c: str) -> str:
    n = ord(c)
    return f"\\u{n:04x}" if n <= 0xFFFF else f"\\U{n:08x}"


def _plain(text: str) -> bool:
    """Whether ``text`` is printable ASCII (U+0020 to U+007E), which holds no character to escape but the backslash
    and a leading space."""
    return text.isascii() and text.isprintable()


def _needs_escape(c: str) -> bool:
    return c != " " and unicodedata.category(c) in _DISGUISING


def escape_name(name: NameInput) -> str:
    """The escaped form of a file name (see the module's description): one line of printable text."""
    text = name_bytes(name).decode("utf-8", "surrogateescape")
    if _plain(text) and "\\" not in text and not text.startswith(" "):
        return text
    out = []
    for i, c in enumerate(text):
        n = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif 0xDC80 <= n <= 0xDCFF:  # a byte that is not part of well-formed UTF-8
            out.append(f"\\x{n - 0xDC00:02x}")
        elif _needs_escape(c) or (i == 0 and c == " "):
            out.append(_char_escape(c))
        else:
            out.append(c)
    return "".join(out)


def printable(text: str) -> str:
    """``text`` as one line that shows what it holds: the escapes of :func:`escape_name`
    for bytes that are not UTF-8 (lone surrogates) and for characters that would
    break or disguise a line; a backslash is left as it is (for messages and other
    lines that are read, not parsed)."""
    if _plain(text):
        return text
    out = []
    for c in text:
        n = ord(c)
        if 0xDC80 <= n <= 0xDCFF:
            out.append(f"\\x{n - 0xDC00:02x}")
        elif _needs_escape(c):
            out.append(_char_escape(c))
        else:
            out.append(c)
    return "".join(out)


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate escaped (``\\xHH`` for a byte that is not UTF-8), so that it encodes as UTF-8."""
    if text.isascii():
        return text
    return "".join(
        f"\\x{ord(c) - 0xDC00:02x}"
        if 0xDC80 <= ord(c) <= 0xDCFF
        else _char_escape(c)
        if 0xD800 <= ord(c) <= 0xDFFF
        else c
        for c in text
    )


def report_fields(name: NameInput) -> FileName:
    """The ``file`` (and, for a name that is not UTF-8, ``file_base64``) members of a report (spec §14)."""
    raw = name_bytes(name)
    try:
        return {"file": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"file": escape_name(raw), "file_base64": base64.b64encode(raw).decode("ascii")}


def _json_escape(c: str) -> str:
    n = ord(c)
    if n <= 0xFFFF:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"


def json_text(value: Any, indent: int | None = 2) -> str:
    """``value`` as JSON text (UTF-8 characters as they are) in which each character :func:`printable` would escape
    is written as a JSON escape (``\\uHHHH``, a surrogate pair of them beyond U+FFFF): the text holds no raw
    control, format (bidirectional, zero-width) or separator character, nor a lone surrogate, and parses back to
    exactly ``value``. The line breaks of the indentation are the only control characters left."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    if text.isascii() and "\x7f" not in text:
        return text
    return "".join(_json_escape(c) if c != "\n" and _needs_escape(c) else c for c in text)
