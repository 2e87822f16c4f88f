"""Text from an archive written into another language: YAML, Markdown, Python, JavaScript, the POSIX shell.

A model card (spec/metadata.md §6) puts the archive's strings and its file
name into YAML front matter, Markdown text and code examples that people copy
and run. Each function here gives the one form of a text that is safe in one
context: read back by that language's parser it is exactly the text (or, for
Markdown, renders as the text in shown form), and nothing in it can end the
string, start markup or reach a terminal as a control. A text that has no
safe form in a context gets None (:func:`shell_word`), and the caller leaves
it out.
"""

from __future__ import annotations

import json
import re
import string

from ..filenames import printable

__all__ = ["yaml_string", "markdown_text", "python_string", "js_string", "shell_word"]

#: Escaped in Markdown: every ASCII punctuation character but ``-`` (which is markup only at the start of a line,
#: where no archive text stands, and is common in environment ids and versions).
_MARKDOWN_ESCAPED = frozenset(string.punctuation) - {"-"}
#: A shell word that needs no quotes in sh, bash, zsh or fish (no glob, expansion or option character first).
_BARE_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./:@+-]*")
_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]+")


def yaml_string(text: str) -> str:
    """``text`` as a double-quoted YAML scalar in printable ASCII: ``"`` and ``\\`` escaped with a backslash, every
    other character outside U+0020-U+007E written ``\\uHHHH``, or ``\\UHHHHHHHH`` above U+FFFF (never as a
    surrogate pair, which YAML reads as two characters)."""
    out = ['"']
    for c in text:
        n = ord(c)
        if c in '"\\':
            out.append("\\" + c)
        elif 0x20 <= n <= 0x7E:
            out.append(c)
        elif n <= 0xFFFF:
            out.append(f"\\u{n:04x}")
        else:
            out.append(f"\\U{n:08x}")
    out.append('"')
    return "".join(out)


def markdown_text(text: str) -> str:
    """``text`` as Markdown (CommonMark and GitHub's extensions) that renders as its shown form: the escapes of
    :func:`rlarchive.filenames.printable` for controls, format (bidirectional, zero-width) and separator
    characters, then a backslash before every ASCII punctuation character but ``-``, so no tag, entity, link,
    autolink, emphasis, code span, table cell or line break can come from it (the caller never begins a line with
    it)."""
    return "".join("\\" + c if c in _MARKDOWN_ESCAPED else c for c in printable(text))


def python_string(text: str) -> str:
    """``text`` as a Python string literal in printable ASCII (``ascii()``: ``\\x``, ``\\u`` and ``\\U`` escapes)."""
    return ascii(text)


def js_string(text: str) -> str:
    """``text`` as a JavaScript string literal in printable ASCII (a JSON string: ``\\uHHHH`` escapes, surrogate
    pairs beyond U+FFFF as JavaScript strings hold them)."""
    return json.dumps(text, ensure_ascii=True)


def shell_word(text: str) -> str | None:
    """``text`` as one word of the POSIX shell (read the same by sh, bash, zsh and fish), or None when it has no
    safe form: an empty text, or one holding a character outside printable ASCII (U+0020-U+007E), which could act
    on a terminal when pasted or be shown in another order than the shell reads it.

    The word is ``text`` itself when it is letters, digits and ``_./:@+-`` and begins with a letter, digit or
    ``_``; otherwise runs of characters in single quotes, with each ``'`` and ``\\`` written ``\\'`` and ``\\\\``
    outside them (inside single quotes fish reads a backslash as an escape; the other shells read it as itself).
    """
    if not _PRINTABLE_ASCII.fullmatch(text):
        return None
    if _BARE_WORD.fullmatch(text):
        return text
    out: list[str] = []
    for part in re.split(r"(['\\])", text):
        if part in ("'", "\\"):
            out.append("\\" + part)
        elif part:
            out.append("'" + part + "'")
    return "".join(out)
