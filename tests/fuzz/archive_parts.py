"""A valid archive parsed into its members (:class:`Seed`), and the archive a case edits and assembles
(:class:`Archive`: the manifest's sizes and digests and the CRC-32s fixed up, or left stale)."""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

from json_mutations import Ctx
from json_tree import JObj, Lit, Style, get, parse_tree, put, tree_bytes
from rawzip import Entry, Layout, assemble
from safetensors_mutations import st_infos

# the largest values of the ZIP records' 16-, 32- and 64-bit fields
U16, U32, U64 = 0xFFFF, 0xFFFFFFFF, 2**64 - 1


@dataclass
class Member:
    name: str
    data: bytes
    align: int = 0
    zip64: bool = False
    knobs: dict = field(default_factory=dict)  # rawzip.Entry overrides
    tree: Any = None  # JSON tree when the content is edited as one
    style: Style = field(default_factory=Style)
    text_ops: list = field(default_factory=list)  # byte-level edits applied after serialization
    orig_crc: int = 0
    changed: bool = False

    def content(self) -> bytes:
        raw = tree_bytes(self.tree, self.style) if self.tree is not None else self.data
        for op in self.text_ops:
            raw = op(raw)
        return raw


@dataclass
class Seed:
    name: str
    members: list  # of (name, data, align, zip64)
    zip64_eocd: bool


def parse_archive(raw: bytes, name: str = "?") -> Seed:
    """The members of a valid archive (its data, alignment padding and ZIP64 use)."""
    eocd = len(raw) - 22
    _, _, _, _, n, cd_size, cd_off, _ = struct.unpack("<4sHHHHIIH", raw[eocd:])
    z64 = raw[eocd - 20 : eocd - 16] == b"PK\x06\x07"
    if z64:
        (z_off,) = struct.unpack("<Q", raw[eocd - 12 : eocd - 4])
        n, cd_size, cd_off = struct.unpack("<QQQ", raw[z_off + 32 : z_off + 56])
    members = []
    pos = cd_off
    for _ in range(n):
        f = struct.unpack("<4sHHHHHHIIIHHHHHII", raw[pos : pos + 46])
        nlen, xlen, clen, lh = f[10], f[11], f[12], f[16]
        size = f[9]
        cextra = raw[pos + 46 + nlen : pos + 46 + nlen + xlen]
        mname = raw[pos + 46 : pos + 46 + nlen].decode("ascii")
        if size == U32 or lh == U32:
            vals = list(struct.unpack(f"<{len(cextra[4:]) // 8}Q", cextra[4:]))
            if f[9] == U32:
                size = vals.pop(0)
            if f[8] == U32:
                vals.pop(0)
            if lh == U32:
                lh = vals.pop(0)
        lnlen, lxlen = struct.unpack("<HH", raw[lh + 26 : lh + 30])
        lextra = raw[lh + 30 + lnlen : lh + 30 + lnlen + lxlen]
        align, zip64, p = 0, False, 0
        while p + 4 <= len(lextra):
            hid, ln = struct.unpack("<HH", lextra[p : p + 4])
            if hid == 0xD935:
                (align,) = struct.unpack("<H", lextra[p + 4 : p + 6])
            if hid == 0x0001:
                zip64 = True
            p += 4 + ln
        start = lh + 30 + lnlen + lxlen
        members.append((mname, raw[start : start + size], align, zip64))
        pos += 46 + nlen + xlen + clen
    return Seed(name, members, z64)


BAD_NAMES = [
    "../x",
    "/abs",
    "a//b",
    "tensors/",
    "données",
    "a" * 256,
    "tensors\\p.safetensors",
    "C:x",
    ".",
    "..",
    "a/./b",
    "tensors/x.safetensors",
    "tensors/.safetensors",
    "tensors/a/b.safetensors",
    "tensors/..safetensors",
    "tensors/...safetensors",
    "extensions/ACME_notes/x",
    "extensions/Other/x",
    "extensions/x",
    "Data.json",
    "DATA.JSON",
    "Manifest.json",
    "other.txt",
    "tensors/policy.SAFETENSORS",
    "tensors/POLICY.safetensors",
    "mimetype",
    "data.json",
    "manifest.json",
    "tensors/a b.safetensors",
    "tensors/arrays.safetensors",
    "tensors/" + "g" * 235 + ".safetensors",
    "tensors/" + "g" * 236 + ".safetensors",
    "extensions/ACME_notes/" + "n" * 240,
    "x",
    "data.json/x",
    "Data.json/x",
    "mimetype/x",
    "tensors/policy.safetensors/x",
    "extensions/ACME_notes",
]


class Archive:
    """A valid archive being mutated: members, rawzip knobs, and what the fixups should do."""

    def __init__(self, seed: Seed) -> None:
        self.members = [Member(n, d, a, z, orig_crc=zlib.crc32(d)) for n, d, a, z in seed.members]
        self.layout: dict = {"zip64_eocd": seed.zip64_eocd}
        self.manifest_fix = "update"  # update | relist | none
        self.crc_fix = True
        self.manifest_ops: list = []  # deferred tree edits of the manifest, after the fixup
        self.ctx = Ctx()
        for m in self.members:
            if m.name.startswith("tensors/") and m.name.endswith(".safetensors"):
                g = m.name[len("tensors/") : -len(".safetensors")]
                self.ctx.tensors += [(g, n, dt, shape) for n, dt, shape in st_infos(m.data)]

    def member(self, name: str) -> Member | None:
        return next((m for m in self.members if m.name == name), None)

    def json_member(self, name: str) -> Member | None:
        m = self.member(name)
        if m is None:
            return None
        if m.tree is None and not m.text_ops:
            try:
                m.tree = parse_tree(m.data)
            except Exception:
                return None
        return m if m.tree is not None else None

    def assemble(self) -> bytes:
        manifest = self.member("manifest.json")
        contents = {}
        for m in self.members:
            if m is not manifest:
                contents[id(m)] = m.content()
        if manifest is not None:
            if manifest.tree is None and not manifest.text_ops:
                try:
                    manifest.tree = parse_tree(manifest.data)
                except Exception:
                    pass
            if manifest.tree is not None:
                self._fix_manifest(manifest.tree, contents)
                for op in self.manifest_ops:
                    manifest.tree = op(manifest.tree)
            contents[id(manifest)] = manifest.content()
        entries = []
        for m in self.members:
            data = contents[id(m)]
            e = Entry(m.name, data, align=m.align, zip64=m.zip64)
            if not self.crc_fix and zlib.crc32(data) != m.orig_crc:
                e.crc = m.orig_crc
            for k, v in m.knobs.items():
                setattr(e, k, v)
            entries.append(e)
        try:
            return assemble(entries, Layout(**self.layout))
        except struct.error:  # a knob too wide for its field (e.g. a 64-bit value without ZIP64): keep its low bits
            for e in entries:
                for k in ("local_size", "central_csize", "central_usize", "offset", "crc", "local_crc"):
                    if getattr(e, k) is not None:
                        setattr(e, k, getattr(e, k) & U32)
            layout = Layout(**self.layout)
            for k, mask in (
                ("eocd_cd_size", U32),
                ("eocd_cd_offset", U32),
                ("eocd_count", U16),
                ("eocd_count_disk", U16),
                ("eocd_disk", U16),
            ):
                if getattr(layout, k) is not None and not layout.zip64_eocd:
                    setattr(layout, k, getattr(layout, k) & mask)
            layout.z64_locator_disks &= U32
            layout.z64_locator_disk &= U32
            layout.z64_record_size &= U64
            try:
                return assemble(entries, layout)
            except struct.error:
                self.layout = {}
                for e in entries:
                    e.version = 20 if e.version > U16 else e.version
                return assemble(entries, Layout())

    def _fix_manifest(self, tree: Any, contents: dict) -> None:
        if self.manifest_fix == "none" or not isinstance(tree, JObj):
            return
        actual = {
            m.name: contents[id(m)]
            for m in self.members
            if m.name not in ("mimetype", "manifest.json") and id(m) in contents
        }
        if self.manifest_fix == "relist":
            entries = [
                JObj([["name", n], ["size", Lit(str(len(d)))], ["sha256", hashlib.sha256(d).hexdigest()]])
                for n, d in sorted(actual.items())
            ]
            put(tree, "members", entries)
            return
        members = get(tree, "members")
        if isinstance(members, list):
            for e in members:
                n = get(e, "name")
                if isinstance(e, JObj) and isinstance(n, str) and n in actual:
                    d = actual[n]
                    put(e, "size", Lit(str(len(d))))
                    put(e, "sha256", hashlib.sha256(d).hexdigest())
