"""What opening an archive reads, announced to a remote source before the checks read it (spec §11.4).

Steps 1-8 of spec §11.1 read small pieces all over the file: the
identification bytes, the end records, the central directory, every member's
local header, ``manifest.json`` and ``data.json``, and every tensor member's
safetensors header. Over HTTP, each read is a request. A remote source holds
the end of the file from the moment it is opened
(:data:`rlarchive.sources.TAIL_BYTES`); :func:`prefetch_opening` reads the end
records and the central directory from the bytes it holds (never making a
request itself) and announces what the checks will read, in three rounds
(``Source.prefetch``, each fetched by :func:`rlarchive.range_plan.read_ahead_plan`):

1. the part of the central directory the source does not hold yet;
2. the identification bytes and, for every member the directory names, its
   local header (its extent from the layout of spec §2.1: the member's data
   ends where the next member begins), then ``manifest.json``'s and
   ``data.json``'s data whole, and the first ``OPEN_READAHEAD_BYTES`` of
   every ``.safetensors`` member's data (its safetensors header, in most
   archives);
3. the rest of every safetensors header longer than that, its length read
   from the bytes of round 2.

The checks then find what they read already held; where the file is not as
its directory says (a layout the plan did not foresee, a broken record), a
read is one request of exactly its bytes, as without a plan. The plan never
decides anything about the file: every rule is the checks'.

Bounds: round 1 asks for at most the directory's size, which step 2 bounds
(``MAX_MEMBERS`` records of at most ``MAX_CD_RECORD`` bytes). Rounds 2 and 3
together ask for at most ``OPEN_READAHEAD_TOTAL_BYTES``, whatever the
directory says (a member's local header, extent and name, a JSON member's
size, a safetensors header's length): their ranges are taken in order, the
local headers first, each while it fits in what is left, and the others are
left to the checks' own reads. A source makes at most one request per range of
a round, fewer where they lie close.
"""

from __future__ import annotations

import struct

from .errors import RlarchiveError
from .limits import MAX_JSON_BYTES, MAX_SAFETENSORS_HEADER_BYTES, OPEN_READAHEAD_BYTES, OPEN_READAHEAD_TOTAL_BYTES
from .sources import Source
from .zipprofile import IDENT_END, LOCAL_HEADER, U16_MAX, Member
from .zipread import (
    EndRecords,
    check_end_records,
    find_end_record,
    read_central_record,
    read_local_header,
    read_zip64_end_records,
)

__all__ = ["prefetch_opening"]

#: the members whose data the checks read whole when opening (spec §11.1 steps 6 and 7)
JSON_MEMBERS = ("manifest.json", "data.json")
#: the members whose data begins with a safetensors header (spec §10.2)
SAFETENSORS_SUFFIX = ".safetensors"


class _NotHeld(Exception):
    """A read of bytes the source does not hold."""


class _Held(Source):
    """The bytes a source holds, read without a request: a read of bytes it does not hold raises
    :class:`_NotHeld`."""

    def __init__(self, src: Source) -> None:
        super().__init__(src.size)
        self._src = src

    def _read(self, offset: int, length: int) -> bytes:
        data = self._src.peek(offset, length)
        if data is None:
            raise _NotHeld
        return data


def prefetch_opening(src: Source, budget: int = OPEN_READAHEAD_TOTAL_BYTES) -> None:
    """Announces to ``src`` what spec §11.1 steps 1-8 read (see the module's description), rounds 2 and 3 within
    ``budget`` bytes; nothing when ``src`` holds no bytes it has not been asked for (a local source) or its end
    records are broken."""
    held = _Held(src)
    try:
        eocd = find_end_record(held)
        end = check_end_records(eocd, read_zip64_end_records(held, eocd))
    except (RlarchiveError, _NotHeld):
        return
    src.prefetch([(end.cd_offset, end.cd_size)])
    members = _directory(held, end)
    headers, data = _heads(members, end.cd_offset)
    round2, budget = _within([(0, IDENT_END), *headers, *data], budget)
    src.prefetch(round2)
    src.prefetch(_within(_header_rests(held, members), budget)[0])


def _within(ranges: list[tuple[int, int]], budget: int) -> tuple[list[tuple[int, int]], int]:
    """The ranges, in order, each while it fits in what is left of ``budget`` bytes, and what is left."""
    out = []
    for offset, length in ranges:
        if length <= budget:
            out.append((offset, length))
            budget -= length
    return out, budget


def _directory(held: _Held, end: EndRecords) -> list[Member]:
    """The members of the central directory's records, up to the first broken one."""
    members: list[Member] = []
    try:
        cd = held.read(end.cd_offset, end.cd_size)
        pos = 0
        for index in range(end.count):
            member, pos = read_central_record(cd, pos, end.cd_offset, index)
            members.append(member)
    except (RlarchiveError, _NotHeld):
        pass
    return members


def _ahead(m: Member) -> int:
    """The bytes of ``m``'s data that opening reads (from its start): the JSON members whole, the first
    ``OPEN_READAHEAD_BYTES`` of a safetensors member, nothing of the others."""
    if m.name in JSON_MEMBERS:
        return m.size if m.size <= MAX_JSON_BYTES else 0
    return min(m.size, OPEN_READAHEAD_BYTES) if m.name.endswith(SAFETENSORS_SUFFIX) else 0


def _heads(members: list[Member], cd_offset: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Round 2: each member's local header, then the bytes of its data that opening reads (the ranges of both
    lists touch, so a source fetches a member's two in one request). A member's data starts where its size
    before the next member (or the directory) says, in the layout of spec §2.1; otherwise, the header's fixed
    part and name only (the checks read the rest)."""
    ordered = sorted(members, key=lambda m: m.header_offset)
    nexts = [m.header_offset for m in ordered[1:]] + [cd_offset]
    headers, data = [], []
    for m, nxt in zip(ordered, nexts):
        fixed = m.header_offset + LOCAL_HEADER.size + len(m.name)
        start = nxt - m.size
        if not fixed <= start <= fixed + U16_MAX:
            start = fixed
        headers.append((m.header_offset, start - m.header_offset))
        if _ahead(m):
            data.append((start, _ahead(m)))
    return headers, data


def _header_rests(held: _Held, members: list[Member]) -> list[tuple[int, int]]:
    """Round 3: the rest of each safetensors header longer than round 2 read, within its member and
    ``MAX_SAFETENSORS_HEADER_BYTES``; its length read from the held bytes (none for a header not held)."""
    out = []
    for m in members:
        if not m.name.endswith(SAFETENSORS_SUFFIX) or m.size <= OPEN_READAHEAD_BYTES:
            continue
        try:
            data = read_local_header(held, m).data_offset
            (n,) = struct.unpack("<Q", held.read(data, 8))
        except (RlarchiveError, _NotHeld):
            continue
        if OPEN_READAHEAD_BYTES < 8 + n <= min(m.size, 8 + MAX_SAFETENSORS_HEADER_BYTES):
            out.append((data + OPEN_READAHEAD_BYTES, 8 + n - OPEN_READAHEAD_BYTES))
    return out
