"""Mutations of an archive's content: data.json, manifest.json, the tensor members, the member list and
the mimetype."""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable

from archive_parts import BAD_NAMES, Archive, Member
from json_mutations import gen_value, json_text_op, json_tree_op, tweak_scalar
from json_tree import JObj, Lit, Style, copy_tree, get, put
from safetensors_mutations import st_op

MEDIA_TYPE = b"application/vnd.rlarchive+zip"


def mutate_data_json(ar: Archive, rng: random.Random) -> str:
    m = ar.json_member("data.json")
    if m is None or rng.random() < 0.12:
        m = ar.member("data.json")
        if m is None:
            return "data.json-absent"
        m.text_ops.append(_bind_text_op(rng.random()))
        m.changed = True
        return "data.json:text"
    if rng.random() < 0.1:
        m.style = Style(ascii=rng.random() < 0.5, space=rng.choice(["", " "]), newline=rng.random() < 0.5)
    descs = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        m.tree, d = json_tree_op(m.tree, rng, ar.ctx, "data")
        descs.append(d)
    m.changed = True
    return ",".join(descs)


def _bind_text_op(seed: float) -> Callable[[bytes], bytes]:
    rng = random.Random(seed)
    return lambda raw: json_text_op(raw, rng)[0]


def mutate_manifest(ar: Archive, rng: random.Random) -> str:
    m = ar.member("manifest.json")
    if m is None:
        return "manifest-absent"
    if rng.random() < 0.1:
        m.text_ops.append(_bind_text_op(rng.random()))
        return "manifest:text"
    op = rng.choice(["tree", "tree", "version", "members", "extensions", "producer", "unknown", "metadata"])
    seed = rng.random()

    def edit(tree, op=op, seed=seed):
        r = random.Random(seed)
        if not isinstance(tree, JObj):
            return tree
        if op == "tree":
            return json_tree_op(tree, r, ar.ctx, "manifest")[0]
        if op == "version":
            put(
                tree,
                "format_version",
                r.choice(
                    [
                        "1.0",
                        "1.1",
                        "1.999999",
                        "2.0",
                        "0.9",
                        "01.0",
                        "1.01",
                        "1",
                        "1.0.0",
                        "1000000.0",
                        "999999.0",
                        "1.0\n",
                        " 1.0",
                        "",
                        "１.0",
                    ]
                )
                if r.random() < 0.9
                else Lit("1.0"),
            )
            if r.random() < 0.2:
                put(tree, "format", r.choice(["rlarchive ", "RLARCHIVE", "zip", ""]))
        elif op == "members":
            ms = get(tree, "members")
            if isinstance(ms, list) and ms:
                k = r.random()
                i = r.randrange(len(ms))
                if k < 0.2:
                    del ms[i]
                elif k < 0.35:
                    ms.append(copy_tree(ms[i]))
                elif k < 0.5:
                    put(
                        ms[i],
                        "name",
                        r.choice(
                            ["mimetype", "manifest.json", "tensors/missing.safetensors", "DATA.json", "data.json", "x"]
                            + BAD_NAMES[:8]
                        ),
                    )
                elif k < 0.65:
                    put(
                        ms[i],
                        "size",
                        Lit(r.choice(["0", "-1", "1.0", "9007199254740991", "1e3"]))
                        if r.random() < 0.6
                        else tweak_scalar(get(ms[i], "size"), r, ar.ctx),
                    )
                elif k < 0.8:
                    s = get(ms[i], "sha256")
                    put(
                        ms[i],
                        "sha256",
                        r.choice([s.upper() if isinstance(s, str) else "", (s or "")[:-1], "0" * 64, (s or "")[::-1]]),
                    )
                elif k < 0.9:
                    ms[i].append([r.choice(["crc32", "offset", "name"]), Lit("0")])
                else:
                    r.shuffle(ms)
        elif op == "extensions":
            k = r.random()
            names = [
                r.choice(["ACME_notes", "ACME", "x" * 64, "x" * 65, "bad-name", "", "Other"])
                for _ in range(r.randint(1, 2))
            ]
            if k < 0.3:
                put(tree, "extensions_used", names)
            elif k < 0.5:
                put(tree, "extensions_required", names)
            elif k < 0.7:  # used and required: unsupported by these readers
                put(tree, "extensions_used", names)
                put(tree, "extensions_required", names[: r.randint(1, len(names))])
            else:
                put(tree, "extensions", JObj([[n, gen_value(r, ar.ctx)] for n in names]))
        elif op == "producer":
            p = get(tree, "producer")
            if isinstance(p, JObj):
                k = r.random()
                if k < 0.3:
                    put(p, "name", r.choice(["", "x" * 256, "x" * 257, "\U0001f600" * 256, "é"]))
                elif k < 0.5:
                    put(p, "version", r.choice(["", "x" * 257, Lit("1"), None]))
                elif k < 0.7:
                    p.append(["extra", "x"])
                elif p:
                    del p[r.randrange(len(p))]
        elif op == "unknown":
            tree.append([r.choice(["created_with_care", "zz", "\U0001f600", "members2"]), gen_value(r, ar.ctx)])
        elif op == "metadata":
            put(
                tree,
                "metadata",
                r.choice([JObj([["a", "b"]]), JObj([["a", Lit("1")]]), JObj([["\U0001f600", ""]]), [], "x"]),
            )
        return tree

    ar.manifest_ops.append(edit)
    return f"manifest:{op}"


def mutate_tensors(ar: Archive, rng: random.Random) -> str:
    groups = [m for m in ar.members if m.name.startswith("tensors/")]
    if not groups:
        return mutate_data_json(ar, rng)
    m = rng.choice(groups)
    descs = []
    for _ in range(rng.choice([1, 1, 2])):
        m.data, d = st_op(m.data, rng, ar.ctx)
        descs.append(d)
    m.changed = True
    return f"{m.name}:" + ",".join(descs)


def mutate_members(ar: Archive, rng: random.Random) -> str:
    op = rng.choice(
        [
            "reorder",
            "reorder",
            "move",
            "remove",
            "duplicate",
            "case",
            "rename",
            "add",
            "add-group",
            "mimetype",
            "add-ext",
        ]
    )
    ms = ar.members
    if op == "reorder" and len(ms) > 2:
        rest = ms[1:]
        rng.shuffle(rest)
        ms[1:] = rest
    elif op == "move" and len(ms) > 1:
        i, j = rng.randrange(len(ms)), rng.randrange(len(ms))
        ms.insert(j, ms.pop(i))
    elif op == "remove" and ms:
        del ms[rng.randrange(len(ms))]
    elif op == "duplicate" and ms:
        m = rng.choice(ms)
        ms.insert(
            rng.randint(1, len(ms)), Member(m.name, m.content(), m.align, m.zip64, orig_crc=zlib.crc32(m.content()))
        )
    elif op == "case" and ms:
        m = rng.choice(ms)
        name = m.name.upper() if m.name != m.name.upper() else m.name.lower()
        ms.insert(rng.randint(1, len(ms)), Member(name, b"{}", orig_crc=zlib.crc32(b"{}")))
    elif op == "rename" and ms:
        m = rng.choice(ms)
        m.name = rng.choice(BAD_NAMES)
        return f"members.rename->{m.name[:40]}"
    elif op in ("add", "add-group", "add-ext"):
        if op == "add-group":
            src = [x for x in ms if x.name.startswith("tensors/")]
            data = rng.choice(src).content() if src else b"\x08\x00\x00\x00\x00\x00\x00\x00{}      "
            name = (
                "tensors/" + rng.choice(["extra", "Policy", "g.1", "-", "_", "arrays", "optimizer.x"]) + ".safetensors"
            )
            align = rng.choice([64, 64, 0, 8])
        elif op == "add-ext":
            data = rng.choice([b"", b"notes", bytes(100)])
            name = rng.choice(
                [
                    "extensions/ACME_notes/a.txt",
                    "extensions/ACME_notes/d/e",
                    "extensions/Other/a",
                    "extensions/ACME_notes/notes.txt/x",
                    "extensions/ACME_notes/NOTES.txt/x",
                    "extensions/ACME_notes/notes.txt.d/x",
                    "extensions/ACME_notes/d",
                ]
            )
            align = 0
        else:
            data = rng.choice([b"", b"x", b"{}", bytes(range(256))])
            name = rng.choice(BAD_NAMES)
            align = 0
        ms.insert(rng.randint(1, len(ms)), Member(name, data, align, orig_crc=zlib.crc32(data)))
        return f"members.{op}->{name[:40]}"
    elif op == "mimetype":
        m = ar.member("mimetype")
        if m is not None:
            m.data = rng.choice(
                [
                    MEDIA_TYPE + b"\n",
                    b"application/vnd.rlarchive+zi",
                    b"application/vnd.rlarchive+ZIP",
                    b"",
                    b"application/zip",
                ]
            )
    return f"members.{op}"


def mutate_content(ar: Archive, rng: random.Random) -> str:
    r = rng.random()
    if r < 0.45:
        return "data.json:" + mutate_data_json(ar, rng)
    if r < 0.70:
        return mutate_tensors(ar, rng)
    if r < 0.85:
        return mutate_manifest(ar, rng)
    return mutate_members(ar, rng)
