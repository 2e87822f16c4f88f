"""Mutations of a safetensors member: header entries re-serialized with tweaks, padding, the length prefix,
the buffer."""

from __future__ import annotations

import random
import struct

from json_mutations import Ctx, gen_value, json_text_op, json_tree_op, tweak_scalar
from json_pools import BAD_DTYPES, DTYPE_CODES
from json_tree import JObj, Lit, copy_tree, get, lit_int, parse_tree, put, tree_bytes


def st_split(data: bytes) -> tuple[int, bytes, bytes] | None:
    if len(data) < 8:
        return None
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        return None
    return n, data[8 : 8 + n], data[8 + n :]


def st_infos(data: bytes) -> list:
    """(name, dtype, shape) of the tensors of a well-formed safetensors member, else []."""
    parts = st_split(data)
    if not parts:
        return []
    try:
        tree = parse_tree(parts[1])
    except Exception:
        return []
    out = []
    if isinstance(tree, JObj):
        for k, e in tree:
            dt, shape = get(e, "dtype"), get(e, "shape")
            if (
                isinstance(k, str)
                and isinstance(dt, str)
                and isinstance(shape, list)
                and all(lit_int(d) is not None for d in shape)
            ):
                out.append((k, dt, [lit_int(d) for d in shape]))
    return out


def st_op(data: bytes, rng: random.Random, ctx: Ctx) -> tuple[bytes, str]:
    """One random edit of a safetensors member (header re-serialized with tweaks, padding, length, buffer)."""
    parts = st_split(data)
    if parts is None:
        b = bytearray(data)
        if b:
            b[rng.randrange(len(b))] ^= 0xFF
        return bytes(b), "st.garbage"
    n, header, buf = parts
    try:
        tree = parse_tree(header)
    except Exception:
        tree = None
    r = rng.random()
    if tree is not None and isinstance(tree, JObj) and r < 0.55:
        op = rng.choice(
            [
                "dtype",
                "dtype",
                "shape",
                "offsets",
                "offsets",
                "rename",
                "add",
                "del",
                "extra",
                "reorder",
                "metadata",
                "json",
            ]
        )
        desc = f"st.{op}"
        entries = [p for p in tree if isinstance(p[1], JObj)]
        if op == "json" or not entries:
            tree, d = json_tree_op(tree, rng, ctx, "st")
            desc = d
        else:
            p = rng.choice(entries)
            e = p[1]
            if op == "dtype":
                old = get(e, "dtype")
                put(
                    e,
                    "dtype",
                    rng.choice(DTYPE_CODES + BAD_DTYPES) if rng.random() < 0.9 else rng.choice([Lit("1"), None]),
                )
                desc += f"({old}->{get(e, 'dtype')})"
            elif op == "shape":
                shape = get(e, "shape")
                if isinstance(shape, list):
                    s = list(shape)
                    k = rng.random()
                    if k < 0.3 and s:
                        i = rng.randrange(len(s))
                        s[i] = tweak_scalar(s[i], rng, ctx)
                    elif k < 0.5:
                        s.append(Lit(rng.choice(["1", "0", "2"])))
                    elif k < 0.65 and s:
                        s.pop()
                    elif k < 0.75:
                        s = [Lit("1")] * rng.choice([32, 33, 40])
                    elif k < 0.85 and len(s) > 1:
                        s.reverse()
                    else:
                        s = [Lit(rng.choice(["-1", "1.0", "9007199254740991", "4294967296"]))] + s
                    put(e, "shape", s)
            elif op == "offsets":
                offs = get(e, "data_offsets")
                if isinstance(offs, list) and len(offs) == 2:
                    o = list(offs)
                    k = rng.random()
                    if k < 0.5:
                        i = rng.randrange(2)
                        o[i] = (
                            tweak_scalar(o[i], rng, ctx)
                            if rng.random() < 0.5
                            else Lit(str(max(0, (lit_int(o[i]) or 0) + rng.choice([-8, -4, -1, 1, 2, 4, 8, 64]))))
                        )
                    elif k < 0.65:
                        o.reverse()
                    elif k < 0.8:  # shift the whole range
                        d = rng.choice([-8, -4, -1, 1, 4, 8])
                        o = [Lit(str(max(0, (lit_int(x) or 0) + d))) for x in o]
                    elif k < 0.9:
                        o = [Lit(str(len(buf))), Lit(str(len(buf) + rng.choice([0, 1, 8])))]
                    else:
                        o.append(Lit("0"))
                    put(e, "data_offsets", o)
            elif op == "rename":
                p[0] = rng.choice(
                    ["", "__x", "__metadata__", "_", "a" * 256, "é" * 128, "\U0001f600" * 64, "w", "b", "x/y", "\ue000"]
                )
            elif op == "add":
                other = copy_tree(rng.choice(entries)[1])
                tree.insert(rng.randint(0, len(tree)), [rng.choice(["new", "w", "b", "zz", "\U0001f600"]), other])
            elif op == "del":
                tree.remove(p)
            elif op == "extra":
                e.append([rng.choice(["extra", "dtype", "offsets"]), gen_value(rng, ctx)])
            elif op == "reorder":
                rng.shuffle(tree)
            elif op == "metadata":
                tree.insert(0, ["__metadata__", JObj([["format", "pt"]])])
        text = tree_bytes(tree)
        pad = rng.random()
        if pad < 0.75:  # the writer's padding: 8 + N a multiple of 64
            text += b" " * ((-(8 + len(text))) % 64)
        elif pad < 0.85:
            text += b" " * rng.randint(0, 9)
        elif pad < 0.95 and len(text) <= n:
            text += b" " * (n - len(text))  # keep the old length when the header did not grow
        return struct.pack("<Q", len(text)) + text + buf, desc
    if r < 0.7:  # padding and prefix
        op = rng.choice(
            ["newline-pad", "leading-space", "strip-pad", "n+1", "n-1", "n-huge", "n-member", "n-zero", "tab-pad"]
        )
        body = header.rstrip(b" ")
        if op == "newline-pad":
            h = body + b"\n" * (len(header) - len(body))
            return struct.pack("<Q", len(h)) + h + buf, "st." + op
        if op == "tab-pad":
            h = body + b" " * max(0, len(header) - len(body) - 1) + b"\t"
            return struct.pack("<Q", len(h)) + h + buf, "st." + op
        if op == "leading-space":
            h = b" " + body + b" " * max(0, len(header) - len(body) - 1)
            return struct.pack("<Q", len(h)) + h + buf, "st." + op
        if op == "strip-pad":
            return struct.pack("<Q", len(body)) + body + buf, "st." + op
        newn = {
            "n+1": n + 1,
            "n-1": max(0, n - 1),
            "n-huge": rng.choice([2**24, 2**24 + 1, 2**40, 2**63, 2**64 - 1, 2**53]),
            "n-member": len(data) - 8 + rng.choice([0, 1, 8]),
            "n-zero": 0,
        }[op]
        return struct.pack("<Q", newn) + header + buf, "st." + op
    if r < 0.85:  # the buffer
        op = rng.choice(["buf-truncate", "buf-extend", "buf-flip", "buf-empty"])
        b = bytearray(buf)
        if op == "buf-truncate" and b:
            del b[rng.randrange(len(b)) :]
        elif op == "buf-extend":
            b += bytes(rng.choice([1, 2, 4, 8, 64]))
        elif op == "buf-flip" and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif op == "buf-empty":
            b = bytearray()
        return struct.pack("<Q", n) + header + bytes(b), "st." + op
    if r < 0.93:
        raw, d = json_text_op(header, rng)
        return struct.pack("<Q", len(raw)) + raw + buf, "st." + d
    return data[: rng.randint(0, min(len(data), 12))], "st.member-truncate"
