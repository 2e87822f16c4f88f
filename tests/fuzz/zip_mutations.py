"""Mutations of the ZIP structure through the knobs of :mod:`rawzip` (flags, methods, ZIP64, extra fields,
gaps, signatures, end-record fields, hidden members)."""

from __future__ import annotations

import random
import struct

from archive_parts import Archive


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
