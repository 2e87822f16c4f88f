"""Mutators for fuzzing rlarchive readers, from the valid golden vectors.

A case starts from a valid archive parsed into its members, applies a few
mutations at several levels, and assembles the bytes:

1. content: data.json and manifest.json as JSON trees (values, types, tags,
   members, numbers, strings, duplicate keys, nesting; order and literal text
   kept), and as text (BOM, bad UTF-8, NaN literals, syntax); safetensors
   members (header entries re-serialized with tweaks, padding, the length
   prefix, the buffer); the member list (reorder, remove, duplicate, rename,
   add); the mimetype;
2. fixups, so that mutations reach deep layers: the manifest's sizes and
   digests recomputed (or the members relisted, or left stale), CRC-32s fresh
   (or stale);
3. ZIP structure through :mod:`rawzip` knobs (flags, methods, ZIP64, extra
   fields, gaps, signatures, end-record fields, hidden members);
4. fields of the assembled ZIP records, parsed and edited meaningfully (sizes
   and offsets set to neighbouring or boundary values, in one header or in
   both so that they agree);
5. raw bytes: bit flips, interesting bytes, truncation, insertion, deletion.

Every mutation is recorded as a short description, so a case can be read and
reproduced (``campaign.py --seed S --replay I``).
"""

from __future__ import annotations

import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "vectors"))  # rawzip, for the modules below

from archive_parts import Archive, Seed, parse_archive  # noqa: E402
from content_mutations import mutate_content  # noqa: E402
from record_mutations import byte_op, field_op  # noqa: E402
from zip_mutations import mutate_zip_knobs  # noqa: E402


def mutate(seed: Seed, rng: random.Random) -> tuple[bytes, list]:
    """A mutated archive from a seed, and the list of mutations applied."""
    ar = Archive(seed)
    descs: list = []
    profile = rng.random()
    if profile < 0.45:  # deep: content edits with every fixup, so they reach the value and tensor layers
        for _ in range(rng.choice([1, 1, 2, 3])):
            descs.append(mutate_content(ar, rng))
    elif profile < 0.65:  # content edits with some consistency left broken, maybe stacked with ZIP edits
        for _ in range(rng.choice([1, 2])):
            descs.append(mutate_content(ar, rng))
        ar.manifest_fix = rng.choice(["update", "relist", "none"])
        ar.crc_fix = rng.random() < 0.6
        descs.append(f"fix:{ar.manifest_fix},crc={'fresh' if ar.crc_fix else 'stale'}")
        if rng.random() < 0.3:
            descs.append(mutate_zip_knobs(ar, rng))
    elif profile < 0.85:  # ZIP structure
        if rng.random() < 0.3:
            descs.append(mutate_content(ar, rng))
        for _ in range(rng.choice([1, 1, 2])):
            descs.append(mutate_zip_knobs(ar, rng))
    raw = ar.assemble()
    if 0.65 <= profile < 1.0 and rng.random() < (0.5 if profile < 0.85 else 0.6):
        for _ in range(rng.choice([1, 1, 2])):
            raw, d = field_op(raw, rng)
            descs.append(d)
    if profile >= 0.85 and (rng.random() < 0.6 or not descs):
        for _ in range(rng.choice([1, 1, 2, 3])):
            raw, d = byte_op(raw, rng)
            descs.append(d)
    return raw, descs


def load_seeds(vectors: str) -> list:
    """The valid golden vectors (index.json), parsed."""
    with open(os.path.join(vectors, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    seeds = []
    for c in index["cases"]:
        if c["expect"]["result"] == "dump" and not c["file"].endswith(".gz"):
            with open(os.path.join(vectors, c["file"]), "rb") as f:
                seeds.append(parse_archive(f.read(), c["id"]))
    return seeds
