"""Writing a ZIP in the strict profile of spec §2-§3 and the deterministic layout of spec §12."""

from __future__ import annotations

import io
import os
import stat
import struct
from collections.abc import Iterable
from typing import Any, BinaryIO

from .checksums import Progress, digest_and_write
from .errors import RlarchiveError
from .zipprofile import (
    CENTRAL_RECORD,
    DOS_DATE,
    DOS_TIME,
    EOCD_RECORD,
    ID_ALIGN,
    ID_ZIP64,
    LOCAL_HEADER,
    SIG_CENTRAL,
    SIG_EOCD,
    SIG_LOCAL,
    SIG_Z64_EOCD,
    SIG_Z64_LOCATOR,
    U16_MAX,
    U32_MAX,
    VERSION_MADE_BY,
    VERSION_NEEDED,
    VERSION_NEEDED_ZIP64,
    ZIP64_EOCD_RECORD,
    ZIP64_LOCATOR,
)

__all__ = ["ZipWriter"]


def _positional_fd(f: BinaryIO) -> int | None:
    """The descriptor of ``f`` when it is a regular file that ``os.pwrite`` can write, else None."""
    if not hasattr(os, "pwrite") or not isinstance(f, (io.BufferedRandom, io.BufferedWriter, io.FileIO)):
        return None
    try:
        fd = f.fileno()
        return fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except (OSError, ValueError):
        return None


class ZipWriter:
    """Writes members in the deterministic layout of spec §12 to a seekable file."""

    def __init__(self, f: BinaryIO, *, force_zip64: bool = False) -> None:
        self._f = f
        self._force = force_zip64
        self._fd = _positional_fd(f)
        self._pos = 0
        self._entries: list[tuple[bytes, int, int, int, bool]] = []  # name, offset, size, crc, zip64-extra

    def add(
        self, name: str, chunks: Iterable[Any], size: int, *, align: int = 0, progress: Progress | None = None
    ) -> tuple[int, str]:
        """Write one member from an iterable of byte chunks totalling ``size``.

        The digests are computed while writing, on two threads (see
        :func:`rlarchive.checksums.digest_and_write`); to a file with a
        descriptor the data is written by position, by both threads.

        Args:
            align: when non-zero, pad the local header so the data starts at a
                multiple of ``align`` (alignment extra record 0xD935).
            progress: told how many leading bytes of the data are digested and
                written (see :func:`rlarchive.checksums.digest_and_write`).
        Returns:
            the CRC-32 and the SHA-256 (hex) of the data.
        """
        raw = name.encode("ascii")
        offset = self._pos
        first = not self._entries
        local_z64 = not first and (self._force or size >= U32_MAX)
        central_z64 = not first and (self._force or size >= U32_MAX or offset >= U32_MAX)
        extra = b""
        if local_z64:
            extra += struct.pack("<HHQQ", ID_ZIP64, 16, size, size)
        if align:
            base = offset + 30 + len(raw) + len(extra) + 6
            extra += struct.pack("<HHH", ID_ALIGN, 2 + (-base) % align, align) + b"\0" * ((-base) % align)
        needed = VERSION_NEEDED_ZIP64 if central_z64 else VERSION_NEEDED
        field = U32_MAX if local_z64 else size
        header = (
            LOCAL_HEADER.pack(SIG_LOCAL, needed, 0, 0, DOS_TIME, DOS_DATE, 0, field, field, len(raw), len(extra))
            + raw
            + extra
        )
        f = self._f
        f.write(header)
        start = offset + len(header)
        fd = self._fd
        if fd is None:
            crc, digest, written = digest_and_write(chunks, write=f.write, progress=progress)
        else:
            f.flush()  # the data goes to the descriptor, after the header

            def pwrite(piece: memoryview, at: int) -> None:
                at += start
                while piece:
                    n = os.pwrite(fd, piece, at)
                    piece, at = piece[n:], at + n

            crc, digest, written = digest_and_write(chunks, pwrite=pwrite, progress=progress)
        if written != size:
            raise RlarchiveError("WRITE_INVALID", f"member {name} produced {written} bytes, not {size}")
        f.seek(offset + 14)
        f.write(struct.pack("<I", crc))
        f.seek(start + size)
        self._pos = offset + len(header) + size
        self._entries.append((raw, offset, size, crc, central_z64))
        return crc, digest

    def finish(self) -> None:
        """Write the central directory and end records."""
        f = self._f
        cd_offset = self._pos
        parts = []
        for raw, offset, size, crc, z64 in self._entries:
            if z64:
                extra = struct.pack("<HHQQQ", ID_ZIP64, 24, size, size, offset)
                s32 = o32 = U32_MAX
            else:
                extra, s32, o32 = b"", size, offset
            needed = VERSION_NEEDED_ZIP64 if z64 else VERSION_NEEDED
            parts.append(
                CENTRAL_RECORD.pack(
                    SIG_CENTRAL,
                    VERSION_MADE_BY,
                    needed,
                    0,
                    0,
                    DOS_TIME,
                    DOS_DATE,
                    crc,
                    s32,
                    s32,
                    len(raw),
                    len(extra),
                    0,
                    0,
                    0,
                    0,
                    o32,
                )
                + raw
                + extra
            )
        cd = b"".join(parts)
        f.write(cd)
        n = len(self._entries)
        end = cd_offset + len(cd)
        if self._force or n >= U16_MAX or len(cd) >= U32_MAX or cd_offset >= U32_MAX:
            f.write(
                ZIP64_EOCD_RECORD.pack(
                    SIG_Z64_EOCD, 44, VERSION_MADE_BY, VERSION_NEEDED_ZIP64, 0, 0, n, n, len(cd), cd_offset
                )
            )
            f.write(ZIP64_LOCATOR.pack(SIG_Z64_LOCATOR, 0, end, 1))
            f.write(EOCD_RECORD.pack(SIG_EOCD, 0, 0, U16_MAX, U16_MAX, U32_MAX, U32_MAX, 0))
        else:
            f.write(EOCD_RECORD.pack(SIG_EOCD, 0, 0, n, n, len(cd), cd_offset, 0))
