"""Mutations of the assembled bytes: fields of the ZIP records, parsed and set to neighbouring or boundary
values (in one header or in both, so that they agree), and raw bytes (bit flips, interesting bytes,
truncation, insertion, deletion)."""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass

from archive_parts import U32, U64


@dataclass
class Field:
    offset: int
    width: int
    name: str
    group: str  # which member or record, to pair local/central fields


# (offset, width, name) of the fields of each ZIP record
EOCD_FIELDS = (
    (4, 2, "disk"),
    (6, 2, "cd_disk"),
    (8, 2, "n_disk"),
    (10, 2, "n_total"),
    (12, 4, "cd_size"),
    (16, 4, "cd_offset"),
    (20, 2, "comment_len"),
)
LOCATOR_FIELDS = ((4, 4, "disk"), (8, 8, "offset"), (16, 4, "disks"))
ZIP64_END_FIELDS = (
    (4, 8, "size"),
    (12, 2, "made"),
    (14, 2, "needed"),
    (16, 4, "disk"),
    (20, 4, "cd_disk"),
    (24, 8, "n_disk"),
    (32, 8, "n_total"),
    (40, 8, "cd_size"),
    (48, 8, "cd_offset"),
)
CENTRAL_FIELDS = (
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
)
LOCAL_FIELDS = (
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
)


def zip_fields(raw: bytes) -> list:
    """Every field of the ZIP records that can be found (tolerant of broken archives)."""
    out: list = []
    n = len(raw)

    def add(off, width, name, group):
        if 0 <= off and off + width <= n:
            out.append(Field(off, width, name, group))

    def record(base, fields, kind, group):
        for off, w, nm in fields:
            add(base + off, w, f"{kind}.{nm}", group)

    def extras(p, end, kind, group) -> list:
        """The extra records from ``p`` to ``end``: their fields added, (offset, id, length) returned."""
        found = []
        while p + 4 <= end and p + 4 <= n:
            hid, ln = struct.unpack("<HH", raw[p : p + 4])
            add(p, 2, f"{kind}.extra_id", group)
            add(p + 2, 2, f"{kind}.extra_len", group)
            if hid == 0xD935 and kind == "local":
                add(p + 4, 2, "local.align", group)
            if hid == 1:
                for k in range(ln // 8):
                    add(p + 4 + 8 * k, 8, f"{kind}.zip64", group)
            found.append((p, hid, ln))
            p += 4 + ln
        return found

    e = n - 22
    if e < 0 or raw[e : e + 4] != b"PK\x05\x06":
        return out
    record(e, EOCD_FIELDS, "eocd", "eocd")
    _, _, _, _, count, cd_size, cd_off, _ = struct.unpack("<4sHHHHIIH", raw[e:])
    loc = e - 20
    if loc >= 0 and raw[loc : loc + 4] == b"PK\x06\x07":
        record(loc, LOCATOR_FIELDS, "locator", "locator")
        (z,) = struct.unpack("<Q", raw[loc + 8 : loc + 16])
        if z + 56 <= n and raw[z : z + 4] == b"PK\x06\x06":
            record(z, ZIP64_END_FIELDS, "z64", "z64")
            count, cd_size, cd_off = struct.unpack("<QQQ", raw[z + 32 : z + 56])
    pos = cd_off
    for i in range(min(count, 64)):
        if pos + 46 > n or raw[pos : pos + 4] != b"PK\x01\x02":
            break
        f = struct.unpack("<4sHHHHHHIIIHHHHHII", raw[pos : pos + 46])
        g = f"m{i}"
        record(pos, CENTRAL_FIELDS, "central", g)
        nlen, xlen, clen, lh = f[10], f[11], f[12], f[16]
        for k in range(min(nlen, 3)):
            add(pos + 46 + k, 1, "central.name", g)
        for p, hid, ln in extras(pos + 46 + nlen, pos + 46 + nlen + xlen, "central", g):
            if hid == 1 and f[16] == U32 and ln >= 8 and p + 4 + ln <= n:
                (lh,) = struct.unpack("<Q", raw[p + 4 + ln - 8 : p + 4 + ln])
        if lh + 30 <= n and raw[lh : lh + 4] == b"PK\x03\x04":
            record(lh, LOCAL_FIELDS, "local", g)
            lnlen, lxlen = struct.unpack("<HH", raw[lh + 26 : lh + 30])
            for k in range(min(lnlen, 3)):
                add(lh + 30 + k, 1, "local.name", g)
            extras(lh + 30 + lnlen, lh + 30 + lnlen + lxlen, "local", g)
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
