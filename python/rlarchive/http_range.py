"""One HTTP request for a range of a file's bytes, checked against what it asked for (spec §11.4).

:func:`get_range` sends one GET with a ``Range`` header through an aiohttp
session (the one fsspec's HTTP file system holds) and gives its
:class:`Answer`: a range (206, with its ``Content-Range``), the whole file
(200, from a server that ignores the ``Range`` header, or one that does not
take a suffix range ``bytes=-n``), or the size alone (416 with ``bytes */size``,
or a whole file larger than asked for, whose body is left unread). An answer
that does not match itself (a ``Content-Length`` other than its range, a body
that ends early) raises :class:`RangeAnswerError`; the deadlines are the
session's, given by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Answer", "RangeAnswerError", "get_range"]

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")
_UNSATISFIED = re.compile(r"bytes \*/(\d+)")


class RangeAnswerError(Exception):
    """An answer that is not the range asked for, nor the whole file, nor one that tells the size."""


@dataclass(frozen=True)
class Answer:
    """What one request brought: its ``status``; ``body``, the bytes from ``start`` (None: a whole file
    larger than asked for, not read); ``total``, the file's size when the answer gives it; ``etag``, the
    version of the file the answer names (its ``ETag`` header), if any."""

    status: int
    start: int
    body: bytes | None
    total: int | None
    etag: str | None = None


def _content_length(headers: Mapping[str, str]) -> int | None:
    """The ``Content-Length`` as a number, or None (absent, not a number, or of an encoded body)."""
    text = headers.get("Content-Length", "").strip()
    encoding = headers.get("Content-Encoding", "identity").strip().lower()
    return int(text) if text.isdigit() and encoding in ("", "identity") else None


async def _up_to(response: Any, limit: int) -> bytes | None:
    """The body of unknown length when it has at most ``limit`` bytes, else None (the rest left unread)."""
    chunks: list[bytes] = []
    got = 0
    while got <= limit:
        chunk = await response.content.read(limit + 1 - got)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        got += len(chunk)
    return None


async def get_range(
    session: Any,
    url: Any,
    range_value: str,
    asked: int,
    timeout: Any,
    headers: Mapping[str, str],
    options: Mapping[str, Any],
) -> Answer:
    """One GET of ``url`` with ``Range: range_value`` (``asked``: the bytes it asks for, at most), the
    caller's ``headers`` and request ``options``, within ``timeout`` (an ``aiohttp.ClientTimeout``).

    Raises:
        RangeAnswerError: an HTTP status other than 200, 206 and 416, or an answer that does not match itself.
        aiohttp.ClientError, TimeoutError: the request failed or ran out of time.
    """
    sent = {**headers, "Range": range_value, "Accept-Encoding": "identity"}
    async with session.get(url, headers=sent, timeout=timeout, **options) as r:
        etag = r.headers.get("ETag")
        if r.status == 416:
            m = _UNSATISFIED.fullmatch(r.headers.get("Content-Range", "").strip())
            if m is None:
                raise RangeAnswerError("HTTP status 416 without the file's size")
            return Answer(416, 0, b"", int(m.group(1)), etag)
        if r.status not in (200, 206):
            raise RangeAnswerError(f"HTTP status {r.status}")
        length = _content_length(r.headers)
        if r.status == 206:
            m = _CONTENT_RANGE.fullmatch(r.headers.get("Content-Range", "").strip())
            if m is None:
                raise RangeAnswerError("a partial answer without a usable Content-Range")
            first, last, total = (int(g) for g in m.groups())
            if first > last or last >= total:
                raise RangeAnswerError(f"Content-Range {first}-{last}/{total} is not a range of the file")
            n = last - first + 1
            if length is not None and length != n:
                raise RangeAnswerError(f"the server announced {length} bytes for a range of {n}")
            return Answer(206, first, await r.content.readexactly(n), total, etag)
        if length is not None:  # the whole file: read when it is no more than was asked for
            return Answer(200, 0, await r.content.readexactly(length) if length <= asked else None, length, etag)
        body = await _up_to(r, asked)
        return Answer(200, 0, body, None if body is None else len(body), etag)
