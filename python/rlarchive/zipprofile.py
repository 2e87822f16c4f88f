"""The strict ZIP profile of spec §2-§3: its constants, records, and the rules on one field.

What both sides share: the record layouts and signatures, the checked
:class:`Member`, and the rules that judge a name, external attributes or an
extra field on their own. Reading the directory in the order of spec §11.1
steps 1-4 is :mod:`rlarchive.zipread`; writing is :mod:`rlarchive.zipwrite`.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from .errors import RlarchiveError
from .limits import MAX_NAME_BYTES

MEDIA_TYPE = b"application/vnd.rlarchive+zip"
#: bytes 26..66 of every archive (spec §3)
IDENTIFICATION = b"\x08\x00\x00\x00mimetype" + MEDIA_TYPE
IDENT_END = 26 + len(IDENTIFICATION)

SIG_LOCAL = b"PK\x03\x04"
SIG_CENTRAL = b"PK\x01\x02"
SIG_EOCD = b"PK\x05\x06"
SIG_Z64_EOCD = b"PK\x06\x06"
SIG_Z64_LOCATOR = b"PK\x06\x07"

ID_ZIP64 = 0x0001
ID_ALIGN = 0xD935
U16_MAX = 0xFFFF
U32_MAX = 0xFFFFFFFF
EOCD_SIZE = 22
EOCD_SEARCH = EOCD_SIZE + 65535
#: longest central record this profile admits: fixed part + name + ZIP64 extra
MAX_CD_RECORD = 46 + MAX_NAME_BYTES + 28

#: the fixed parts of the records (spec §2): local header, central record, end records
LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")  # 30 bytes
CENTRAL_RECORD = struct.Struct("<4sHHHHHHIIIHHHHHII")  # 46 bytes
EOCD_RECORD = struct.Struct("<4sHHHHIIH")  # 22 bytes
ZIP64_EOCD_RECORD = struct.Struct("<4sQHHIIQQQQ")  # 56 bytes
ZIP64_LOCATOR = struct.Struct("<4sIQI")  # 20 bytes
_SEGMENT = re.compile(rb"[A-Za-z0-9._-]+")

VERSION_MADE_BY = 45  # host system 0 (MS-DOS), ZIP 4.5
VERSION_NEEDED = 20
VERSION_NEEDED_ZIP64 = 45
#: host systems (upper byte of "version made by") a record may name (spec §2.7)
HOST_MSDOS = 0
HOST_UNIX = 3
#: largest "version needed to extract" (spec §2.7)
MAX_VERSION_NEEDED = 45
#: MS-DOS attribute bits a regular file may carry: read-only, archive (spec §2.7)
DOS_FILE_BITS = 0x0021
#: the mark some tools add to a Unix record's MS-DOS half (spec §2.7)
UNIX_MODE_MARK = 0x8000
S_IFMT = 0o170000
S_IFREG = 0o100000
DOS_DATE = 0x0021  # 1980-01-01
DOS_TIME = 0


@dataclass(frozen=True)
class Member:
    """One archive member as the checked directory describes it.

    A central record read at step 3 gives every field but ``data_offset``
    (-1 until its local header is read at step 4); ``record_offset`` is the
    central record's first byte, ``version_needed``, ``dos_time`` and
    ``dos_date`` its fields that the local header must repeat.
    """

    name: str
    header_offset: int
    data_offset: int
    size: int
    crc32: int
    index: int
    record_offset: int = 0
    version_needed: int = 0
    dos_time: int = 0
    dos_date: int = 0


def zip_error(code: str, msg: str, member: str | None = None, offset: int | None = None) -> RlarchiveError:
    """An error of the ZIP profile: a member (when known) and an offset, never a pointer (spec §11.2)."""
    return RlarchiveError(code, msg, member=member, offset=offset)


def check_name(raw: bytes) -> str | None:
    """Why a member name breaks spec §2.4, or None when it is valid."""
    if not raw:
        return "empty name"
    if len(raw) > MAX_NAME_BYTES:
        return f"name longer than {MAX_NAME_BYTES} bytes"
    for seg in raw.split(b"/"):
        if not seg:
            return "empty segment (absolute name, directory entry or '//')"
        if seg in (b".", b".."):
            return "'.' or '..' segment"
        if not _SEGMENT.fullmatch(seg):
            return "character outside [A-Za-z0-9._-/]"
    return None


def check_attributes(host: int, attributes: int) -> str | None:
    """Why external attributes break spec §2.7 for a host system (0 or 3), or None."""
    mode, dos = attributes >> 16, attributes & 0xFFFF
    if host == HOST_MSDOS:
        if mode:
            return f"a Unix mode (0o{mode:o}) in the upper half of an MS-DOS record"
        allowed = DOS_FILE_BITS
    else:
        kind = mode & S_IFMT
        if kind not in (0, S_IFREG):
            return f"file type 0o{kind:o} in the Unix mode (not a regular file)"
        if mode & 0o7000:
            return f"set-user-ID, set-group-ID or sticky bit in the Unix mode 0o{mode:o}"
        if not mode & 0o400:
            return f"Unix mode 0o{mode:o} without the owner-read bit"
        allowed = DOS_FILE_BITS | UNIX_MODE_MARK
    if dos & ~allowed:
        return f"MS-DOS attribute bits 0x{dos & ~allowed:04X} (only read-only and archive are allowed)"
    return None


def directory_clash(names: list[str]) -> str | None:
    """The first name that, followed by '/', begins another name ignoring ASCII case (spec §2.2)."""
    dirs: set[str] = set()
    for name in names:
        low = name.lower()
        cut = low.find("/")
        while cut >= 0:
            dirs.add(low[:cut])
            cut = low.find("/", cut + 1)
    return next((n for n in names if n.lower() in dirs), None)


def parse_extra(data: bytes, allowed: tuple[int, ...], member: str | None, offset: int) -> dict[int, bytes]:
    """The records of an extra field (spec §2.5); errors are located at ``offset``, the
    header (central or local) that holds the field (spec §11.2)."""
    fields: dict[int, bytes] = {}
    pos = 0
    while pos < len(data):
        if pos + 4 > len(data):
            raise zip_error("ZIP_EXTRA_FIELD", "extra field ends inside a record header", member, offset)
        hid, n = struct.unpack_from("<HH", data, pos)
        if pos + 4 + n > len(data):
            raise zip_error("ZIP_EXTRA_FIELD", "extra record runs past the extra field", member, offset)
        if hid not in allowed:
            raise zip_error("ZIP_EXTRA_FIELD", f"extra record 0x{hid:04X} is not permitted here", member, offset)
        if hid in fields:
            raise zip_error("ZIP_EXTRA_FIELD", f"extra record 0x{hid:04X} appears twice", member, offset)
        fields[hid] = data[pos + 4 : pos + 4 + n]
        pos += 4 + n
    if ID_ALIGN in fields:
        pad = fields[ID_ALIGN]
        if len(pad) < 2 or any(pad[2:]):
            raise zip_error("ZIP_EXTRA_FIELD", "alignment record is short or has non-zero padding", member, offset)
    return fields
