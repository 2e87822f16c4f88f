#!/usr/bin/env python3
"""Fuzzing the restricted unpickler (python/rlarchive/unpickle/__init__.py).

    .venv/bin/python tests/fuzz/unpickle_fuzz.py --cases 100000 --seed 1        # make fuzz
    .venv/bin/python tests/fuzz/unpickle_fuzz.py --minutes 10 --seed 2
    .venv/bin/python tests/fuzz/unpickle_fuzz.py --seed 1 --replay 4711 --out case.pkl

Each case is a pickle stream: either a real stream (cloudpickle and pickle,
protocols 0 to 5, of gymnasium spaces, old-gym spaces, SB3 schedules and
closures, TrainFreq, class references, NumPy arrays and scalars, containers,
and a few hostile streams) mutated at the opcode level (truncation, opcode
deletion, duplication, swaps and replacement, memo GET/PUT rewiring, BUILD
insertions, argument replacement, splices, memo amplification, byte flips),
or a random opcode program built from the allowed globals (the keys of
``CONSTRUCTORS``), plain names (recorded, never resolved) and malformed names.
Case I of seed S is always the same bytes.

The cases run in a separate worker process (only ``rlarchive`` and NumPy
imported) that calls ``unpickle.decode`` with an ``ImportBudget`` of
``--budget-mib`` and checks, for every case:

- only ``NotNeutral`` or ``RlarchiveError("LIMIT_EXCEEDED")`` escapes;
- no module appears in ``sys.modules`` beyond NumPy's and the codecs'
  (snapshot before, compare after);
- its working directory (an empty temporary folder) stays empty;
- an audit hook saw no import of another module, no ``open`` for writing, no
  process, socket, ``exec``/``compile``, file-system change, or
  ``pickle.find_class`` of the standard unpickler (which imports);
- a neutral value goes through the writer's ``Encoder`` and ``Checker``
  without any error (decode promises values the writer takes);
- the worker's peak resident set (``resource.getrusage``) stays under
  ``--max-rss-mib``, and it answers within ``--timeout`` seconds.

The report gives the number of cases and of outcomes (neutral, not neutral,
limit, failures); each failing case is saved under ``--save-dir``. Exit
status 1 on any failure.
"""

from __future__ import annotations

import argparse
import base64
import collections
import json
import os
import pickle
import pickletools
import random
import resource
import select
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYTHON_DIR = os.path.join(ROOT, "python")
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)

DEFAULT_BUDGET_MIB = 64
DEFAULT_MAX_RSS_MIB = 384
IN_FLIGHT = 8  # cases queued in the worker's pipe
#: Modules a case may import (lazily loaded parts of NumPy, text codecs).
ALLOWED_NEW_MODULES = ("numpy.", "encodings.")
OUTCOMES = ("neutral", "not_neutral", "limit")


# ---------------------------------------------------------------------------
# seeds: real streams
# ---------------------------------------------------------------------------


@dataclass
class Seed:
    name: str
    data: bytes


def _proto(p: int) -> bytes:
    return bytes([0x80, p])


def _s(text: str) -> bytes:
    """SHORT_BINUNICODE (or BINUNICODE) of ``text``."""
    b = text.encode("utf-8", "surrogatepass")
    return (b"\x8c" + bytes([len(b)]) if len(b) < 256 else b"X" + struct.pack("<I", len(b))) + b


def _g(module: str, name: str) -> bytes:
    """STACK_GLOBAL of module.name."""
    return _s(module) + _s(name) + b"\x93"


def hostile_seeds() -> list[Seed]:
    """Streams that attack the unpickler (they must all end NotNeutral or LIMIT_EXCEEDED)."""
    p4 = _proto(4)
    return [
        Seed(
            "build-trainfreq-class",
            p4
            + _g("stable_baselines3.common.type_aliases", "TrainFreq")
            + b"N}"
            + _s("__new__")
            + _g("builtins", "int")
            + b"s\x86b.",
        ),
        Seed(
            "build-builtin-name",
            p4
            + _g("builtins", "float")
            + b"N}("
            + _s("module")
            + _s("os")
            + _s("qualname")
            + _s("system")
            + b"u\x86b.",
        ),
        Seed(
            "build-ctor-defaults",
            p4 + _g("cloudpickle.cloudpickle", "_make_cell") + b"N}" + _s("__defaults__") + b"K\x07\x85s\x86b.",
        ),
        Seed("build-ndarray-name", p4 + _g("numpy", "ndarray") + b"}" + _s("qualname") + _s("system") + b"sb."),
        Seed("reduce-os-system", b"\x80\x02cposix\nsystem\n" + _s("true") + b"\x85R."),
        Seed("reduce-eval", b"\x80\x02cbuiltins\neval\n" + _s("1") + b"\x85R."),
        Seed("getattr-os", b"\x80\x02cbuiltins\ngetattr\ncos\npath\n" + _s("join") + b"\x86R."),
        Seed("name-call", p4 + _g("stable_baselines3.common.buffers", "ReplayBuffer") + b"K\n\x85R."),
        Seed("newobj-name", p4 + _g("torch.nn.modules.activation", "ReLU") + b")\x81."),
        Seed("memo-index-bomb", b"\x80\x02Nr" + struct.pack("<I", 1 << 30) + b"."),
        Seed("bytearray8-size", b"\x80\x05\x96" + struct.pack("<Q", 1 << 40) + b"xyz."),
        Seed("deep-tuple-key", p4 + b"}N" + b"\x85" * 5000 + b"Ns."),
        Seed("shared-tuple-key", p4 + b"}N" + b"\x94h\x00\x86" * 40 + b"Ns."),
        Seed("bigint", b"\x80\x02\x8b" + struct.pack("<i", 2000) + b"\x01" * 2000 + b"."),
        Seed("ext-code", b"\x80\x02\x82\x01."),
        Seed("persid", b"\x80\x02Pfoo\n."),
        Seed("next-buffer", b"\x80\x05\x97."),
        Seed(
            "setattr-via-slots", p4 + _g("numpy.random._pcg64", "PCG64") + b"N}(" + _s("module") + _s("os") + b"u\x86b."
        ),
    ]


def build_seeds() -> list[Seed]:
    """Real streams, with and without FRAME opcodes, plus the hostile ones."""
    import collections as _c

    import numpy as np

    objs: list[tuple[str, object]] = [
        ("f32", np.arange(6, dtype=np.float32).reshape(2, 3)),
        ("be-i4", np.arange(12, dtype=">i4").reshape(3, 4)),
        ("fortran", np.asfortranarray(np.ones((2, 3)))),
        ("u8-empty", np.zeros((0, 2), np.uint8)),
        ("bool0d", np.array(True)),
        ("big-f32", np.linspace(0, 1, 65536, dtype=np.float32)),
        ("scalar-f32", np.float32(2.5)),
        ("scalar-i64", np.int64(-7)),
        ("ordereddict", _c.OrderedDict(a=1, b=[1.5, float("inf")])),
        ("deque", _c.deque([1, 2, 3], maxlen=5)),
        ("keys", {1: "x", (1, "a"): None, "s": b"bytes", 2.5: bytearray(b"ab")}),
        ("nested", [[1, [2, [3, (4, 5)]]], {"k": (True, None)}]),
        ("bigint", 2**200 - 1),
        ("set", {1, 2, 3}),
        ("frozenset", frozenset({"a", "b"})),
    ]
    try:
        import cloudpickle
    except ImportError:  # pragma: no cover - depends on the environment
        cloudpickle = None
    try:
        import gymnasium as gym

        box = gym.spaces.Box(np.array([0, -1], np.float32), np.array([1, np.inf], np.float32))
        box.sample()
        objs += [
            ("box", box),
            ("box-scalar", gym.spaces.Box(-1.0, 1.0, (3, 4), np.float64)),
            ("box-big", gym.spaces.Box(-np.ones((128, 256), np.float32), np.ones((128, 256), np.float32))),
            ("discrete", gym.spaces.Discrete(5, start=-2)),
            ("multidiscrete", gym.spaces.MultiDiscrete([[2, 3], [4, 5]], dtype=np.int32)),
            ("multibinary", gym.spaces.MultiBinary([2, 3])),
            ("dict", gym.spaces.Dict({"z": gym.spaces.Discrete(2), "a": gym.spaces.Box(0, 1, (2,))})),
            ("tuple-text", gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Text(5, min_length=2, charset="cab")))),
        ]
    except ImportError:  # pragma: no cover
        pass
    try:
        from stable_baselines3.common import utils as sb_utils
        from stable_baselines3.common.buffers import ReplayBuffer
        from stable_baselines3.common.policies import ActorCriticPolicy
        from stable_baselines3.common.type_aliases import TrainFreq, TrainFrequencyUnit

        objs += [
            ("float-linear", sb_utils.FloatSchedule(sb_utils.LinearSchedule(1.0, 0.0, 0.5))),
            ("float-const", sb_utils.FloatSchedule(0.1)),
            ("constant-schedule", sb_utils.ConstantSchedule(3e-4)),
            ("trainfreq", TrainFreq(4, TrainFrequencyUnit.STEP)),
            ("trainfreq-episode", TrainFreq(1, TrainFrequencyUnit.EPISODE)),
            ("classes", [ActorCriticPolicy, ReplayBuffer]),
        ]
        if cloudpickle is not None:
            import warnings

            with warnings.catch_warnings():  # the SB3 1.x closures are deprecated, which is why old files hold them
                warnings.simplefilter("ignore")
                objs += [
                    ("constant-fn", sb_utils.constant_fn(0.5)),
                    ("linear-fn", sb_utils.get_linear_fn(1.0, 0.1, 0.3)),
                ]
    except ImportError:  # pragma: no cover
        pass
    try:
        import torch

        objs += [("torch-classes", {"activation_fn": torch.nn.ReLU, "optimizer_class": torch.optim.Adam})]
    except ImportError:  # pragma: no cover
        pass

    seeds: list[Seed] = []
    for name, obj in objs:
        for proto in (0, 2, 4, 5):
            dumps = cloudpickle.dumps if cloudpickle is not None else pickle.dumps
            try:
                data = dumps(obj, protocol=proto)
            except Exception:
                continue
            seeds.append(Seed(f"{name}-p{proto}", data))
    # old-gym spaces and cloudpickle 1.6 closures, as the SB2 / SB3 1.x fixtures write them
    sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
    try:
        import sb_fixtures as F

        if cloudpickle is not None:
            for name, obj in (
                ("gym-box", F.gym_box(-1.0, 1.0, (3,), style="0.17", rng=True)),
                ("gym-dict", F.gym_dict({"a": F.gym_discrete(3), "b": F.gym_multi_binary(4)})),
                ("gym-tuple", F.gym_tuple([F.gym_multi_discrete([2, 3]), F.gym_discrete(2, style="0.17")])),
            ):
                seeds.append(Seed(name, F.cloudpickle_with(obj)))
        seeds.append(Seed("constant-fn-cp1.6", base64.b64decode("".join(F.CONSTANT_FN_CLOUDPICKLE_1_6))))
        seeds.append(Seed("linear-fn-cp1.6", base64.b64decode("".join(F.LINEAR_FN_CLOUDPICKLE_1_6))))
    except ImportError:  # pragma: no cover
        pass
    finally:
        sys.path.pop(0)
    # amplifiers: what the budget is for
    seeds.append(Seed("refs-to-a-big-array", pickle.dumps([np.zeros(1 << 19, np.uint8)] * 300, protocol=4)))
    seeds.append(Seed("refs-to-a-big-endian-array", pickle.dumps([np.zeros(1 << 14, ">f8")] * 2000, protocol=2)))
    if cloudpickle is not None:
        try:
            import gymnasium as gym

            wide = gym.spaces.Box.__new__(gym.spaces.Box)
            wide.__dict__.update(
                dict(gym.spaces.Box(-1, 1, (2,)).__dict__, _shape=(8192, 8192), low=np.float32(-1), high=np.float32(1))
            )
            seeds.append(Seed("box-broadcast", cloudpickle.dumps(wide, protocol=4)))
        except ImportError:  # pragma: no cover
            pass
    framed = [s for s in seeds if b"\x95" in s.data[:3]]
    seeds = [Seed(s.name, strip_frames(s.data)) for s in seeds] + [
        Seed(s.name + "-framed", s.data) for s in framed[::4]
    ]
    return seeds + hostile_seeds()


# ---------------------------------------------------------------------------
# opcode-level mutations
# ---------------------------------------------------------------------------


def segments(data: bytes) -> list[tuple[str, object, bytes]]:
    """(opcode name, argument, raw bytes) for each opcode; [] if the stream does not parse."""
    out = []
    try:
        ops = list(pickletools.genops(data))
    except Exception:
        return []
    for k, (op, arg, pos) in enumerate(ops):
        end = ops[k + 1][2] if k + 1 < len(ops) else len(data)
        out.append((op.name, arg, data[pos:end]))
    return out


def strip_frames(data: bytes) -> bytes:
    """The stream without its FRAME opcodes (still valid: frames are optional)."""
    segs = segments(data)
    return b"".join(raw for name, _, raw in segs if name != "FRAME") if segs else data


STRINGS = [
    "numpy",
    "dtype",
    "ndarray",
    "numpy.core.multiarray",
    "numpy._core.multiarray",
    "_reconstruct",
    "scalar",
    "numpy._core.numeric",
    "_frombuffer",
    "f4",
    ">i8",
    "<f8",
    "U9",
    "O8",
    "V4",
    "|",
    "<",
    ">",
    "b1",
    "c16",
    "gymnasium.spaces.box",
    "Box",
    "gym.spaces.dict",
    "Dict",
    "Discrete",
    "Text",
    "MultiBinary",
    "stable_baselines3.common.utils",
    "FloatSchedule",
    "LinearSchedule",
    "ConstantSchedule",
    "stable_baselines3.common.type_aliases",
    "TrainFreq",
    "TrainFrequencyUnit",
    "STEP",
    "EPISODE",
    "step",
    "cloudpickle.cloudpickle",
    "_make_function",
    "_builtin_type",
    "CodeType",
    "FunctionType",
    "CellType",
    "_function_setstate",
    "_make_cell",
    "_make_empty_cell",
    "subimport",
    "_fill_function",
    "_make_skel_func",
    "constant_fn.<locals>.func",
    "get_linear_fn.<locals>.func",
    "__closure__",
    "__qualname__",
    "__module__",
    "builtins",
    "__builtin__",
    "copyreg",
    "copy_reg",
    "_reconstructor",
    "object",
    "bytes",
    "float",
    "getattr",
    "bytearray",
    "set",
    "frozenset",
    "collections",
    "OrderedDict",
    "deque",
    "_codecs",
    "encode",
    "latin1",
    "os",
    "posix",
    "system",
    "subprocess",
    "Popen",
    "eval",
    "exec",
    "__import__",
    "importlib",
    "import_module",
    "sys",
    "modules",
    "io",
    "open",
    "socket",
    "ctypes",
    "torch",
    "load",
    "gymnasium",
    "stable_baselines3",
    "stable_baselines3.common.buffers",
    "stable_baselines3.x\n",
    "os.system",
    "ReplayBuffer.__init__",
    "torch.nn.modules.activation",
    "ReLU",
    "torch.optim.adam",
    "Adam",
    "sb3_contrib.x",
    "module",
    "qualname",
    "__new__",
    "__init__",
    "__setstate__",
    "__defaults__",
    "__dict__",
    "__class__",
    "kind",
    "_pickle_name",
    "array",
    "value",
    "low",
    "high",
    "_shape",
    "shape",
    "n",
    "start",
    "nvec",
    "spaces",
    "_char_str",
    "$type",
    "",
    "\udcff",
    "x" * 300,
]


def _string_op(text: str) -> bytes:
    return _s(text)


def _int_op(n: int) -> bytes:
    if 0 <= n < 256:
        return b"K" + bytes([n])
    if -(2**31) <= n < 2**31:
        return b"J" + struct.pack("<i", n)
    b = pickle.encode_long(n)
    return (b"\x8a" + bytes([len(b)]) if len(b) < 256 else b"\x8b" + struct.pack("<i", len(b))) + b


INTS = [
    0,
    1,
    -1,
    2,
    3,
    7,
    255,
    256,
    2**31 - 1,
    -(2**31),
    2**63,
    -(2**63) - 1,
    2**64,
    4096,
    10**6,
    2**62,
    10**4096 - 1,
    10**4096,
]


def random_value(rng: random.Random) -> bytes:
    """The opcode(s) pushing one random simple value."""
    r = rng.random()
    if r < 0.3:
        return _string_op(rng.choice(STRINGS))
    if r < 0.55:
        return _int_op(rng.choice(INTS) if rng.random() < 0.5 else rng.randint(-300, 70000))
    if r < 0.65:
        return b"G" + struct.pack(">d", rng.choice([0.0, -0.0, 1.5, float("inf"), float("nan"), 1e308]))
    if r < 0.8:
        n = rng.choice([0, 1, 2, 4, 8, 16, 24, 100])
        return b"C" + bytes([n]) + bytes(rng.randrange(256) for _ in range(n))
    return rng.choice([b"N", b"\x88", b"\x89", b")", b"]", b"}", b"\x8f"])


def random_global(rng: random.Random, allowed: list[tuple[str, str]], names: list[tuple[str, str]]) -> bytes:
    r = rng.random()
    if r < 0.6:
        mod, name = rng.choice(allowed)
    elif r < 0.8:
        mod, name = rng.choice(names)
    else:
        mod, name = rng.choice(
            [
                ("os", "system"),
                ("posix", "system"),
                ("builtins", "eval"),
                ("subprocess", "Popen"),
                ("importlib", "import_module"),
                ("builtins", "__import__"),
                ("torch", "load"),
                ("stable_baselines3", "PPO"),
                ("gymnasium.spaces.box", "os.system"),
                ("stable_baselines3.common.utils", "os.system"),
                ("numpy", "load"),
            ]
        )
    if rng.random() < 0.3 and "\n" not in mod + name:
        return b"c" + mod.encode() + b"\n" + name.encode() + b"\n"
    return _g(mod, name)


COMBINATORS = [
    b"\x85",
    b"\x86",
    b"\x87",
    b"R",
    b"\x81",
    b"\x92",
    b"b",
    b"a",
    b"e",
    b"s",
    b"u",
    b"\x90",
    b"\x91",
    b"t",
    b"l",
    b"d",
    b"\x94",
    b"2",
    b"0",
    b"1",
    b"(",
    b"o",
    b"\x93",
]


def random_program(rng: random.Random, allowed: list[tuple[str, str]], names: list[tuple[str, str]]) -> bytes:
    """A random opcode stream built from allowed globals, names, values and combining opcodes."""
    out = [rng.choice([_proto(2), _proto(4), _proto(5), b""])]
    memo = 0
    for _ in range(rng.randint(1, 60)):
        r = rng.random()
        if r < 0.25:
            out.append(random_global(rng, allowed, names))
        elif r < 0.55:
            out.append(random_value(rng))
        elif r < 0.62:
            out.append(b"(")
        elif r < 0.67 and memo:
            out.append(b"h" + bytes([rng.randrange(min(memo, 256))]))
        else:
            op = rng.choice(COMBINATORS)
            memo += op == b"\x94"
            out.append(op)
    out.append(b".")
    return b"".join(out)


BUILD_STATES = [
    b"N}(" + _s("module") + _s("os") + _s("qualname") + _s("system") + b"u\x86",
    b"N}(" + _s("__new__") + _g("builtins", "int") + b"u\x86",
    b"N}(" + _s("__defaults__") + b"K\x01\x85u\x86",
    b"}(" + _s("kind") + _s("box") + _s("array") + b"Nu",
    b"}(" + _s("low") + b"G" + struct.pack(">d", 1.0) + _s("_shape") + _int_op(1 << 20) + _int_op(1 << 20) + b"\x86u",
    b"(K\x01K\x02\x85" + _g("numpy", "dtype") + _s("f8") + b"\x89\x88\x87R\x89C\x10" + b"\x00" * 16 + b"t",
    b"N",
    b"(K\x03" + _s(">") + b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t",
]


def mutate(data: bytes, rng: random.Random, others: list[Seed]) -> tuple[bytes, list[str]]:
    """One to three opcode-level mutations of ``data``; returns the bytes and their descriptions."""
    descs: list[str] = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        segs = segments(data)
        kind = rng.choice(
            [
                "truncate",
                "delete",
                "duplicate",
                "swap",
                "opcode",
                "memo",
                "get",
                "build",
                "string",
                "int",
                "bytes",
                "splice",
                "amplify",
                "flip",
            ]
        )
        if not segs and kind not in ("truncate", "flip"):
            kind = "flip"
        n = len(segs)
        raws = [raw for _, _, raw in segs]
        if kind == "truncate":
            cut = rng.randrange(max(1, len(data)))
            data = data[:cut]
            descs.append(f"truncate@{cut}")
            continue
        if kind == "flip":
            if not data:
                continue
            b = bytearray(data)
            i = rng.randrange(len(b))
            b[i] = rng.randrange(256)
            data = bytes(b)
            descs.append(f"flip@{i}")
            continue
        i = rng.randrange(n)
        name, arg, raw = segs[i]
        if kind == "delete":
            del raws[i]
        elif kind == "duplicate":
            raws.insert(i, raw)
        elif kind == "swap":
            j = rng.randrange(n)
            raws[i], raws[j] = raws[j], raws[i]
        elif kind == "opcode":
            raws[i] = rng.choice(COMBINATORS + [b"N", b".", b"b", b"R", b"\x81", b"s", b"a"]) + raw[1:]
        elif kind == "memo":
            memo_ops = [
                k
                for k, (nm, _, _) in enumerate(segs)
                if nm in ("BINGET", "LONG_BINGET", "BINPUT", "LONG_BINPUT", "GET", "PUT")
            ]
            if memo_ops:
                i = rng.choice(memo_ops)
                idx = rng.choice([0, 1, 2, rng.randrange(64), 255, 2**31, 2**32 - 1])
                op = segs[i][2][:1]
                if op in (b"h", b"q") and idx < 256:
                    raws[i] = op + bytes([idx])
                elif op in (b"h", b"j"):
                    raws[i] = b"j" + struct.pack("<I", idx % 2**32)
                elif op in (b"q", b"r"):
                    raws[i] = b"r" + struct.pack("<I", idx % 2**32)
                else:
                    raws[i] = op + str(idx).encode() + b"\n"
            else:
                raws.insert(i, b"\x94")
        elif kind == "get":
            raws.insert(i, rng.choice([b"h" + bytes([rng.randrange(32)]), b"\x94", b"2"]))
        elif kind == "build":
            raws.insert(i, rng.choice(BUILD_STATES) + b"b")
        elif kind == "string":
            strs = [
                k
                for k, (nm, _, _) in enumerate(segs)
                if nm in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "SHORT_BINSTRING", "BINSTRING")
            ]
            if strs:
                i = rng.choice(strs)
            raws[i] = _string_op(rng.choice(STRINGS))
        elif kind == "int":
            ints = [k for k, (nm, _, _) in enumerate(segs) if nm in ("BININT1", "BININT2", "BININT", "LONG1", "INT")]
            if ints:
                i = rng.choice(ints)
            raws[i] = _int_op(rng.choice(INTS) if rng.random() < 0.6 else rng.randint(-5, 70000))
        elif kind == "bytes":
            bs = [
                k
                for k, (nm, _, _) in enumerate(segs)
                if nm in ("SHORT_BINBYTES", "BINBYTES", "BINBYTES8", "BYTEARRAY8", "SHORT_BINSTRING")
            ]
            if bs:
                i = rng.choice(bs)
            m = rng.choice([0, 1, 3, 4, 8, 15, 16, 17, 255, 256, 4096])
            payload = bytes(rng.randrange(256) for _ in range(min(m, 64))) * (1 + m // 64)
            payload = payload[:m]
            raws[i] = (b"C" + bytes([m]) if m < 256 else b"B" + struct.pack("<I", m)) + payload
        elif kind == "splice":
            other = segments(rng.choice(others).data)
            if other:
                a = rng.randrange(len(other))
                b = min(len(other), a + rng.randint(1, 12))
                raws[i:i] = [raw for _, _, raw in other[a:b]]
        elif kind == "amplify":
            # keep the value in the memo and reference it many times in a list
            if raws and raws[-1] == b".":
                count = 30000 if rng.random() < 0.05 else rng.choice([2, 10, 200, 3000])
                slot = struct.pack("<I", 99999)  # a memo index the seed does not use
                raws[-1:] = [b"r" + slot + b"(" + (b"j" + slot) * count + b"l."]
                descs.append(f"amplify x{count}")
                data = b"".join(raws)
                break  # the last mutation: the stream is now long
        descs.append(f"{kind}@{i}:{name}")
        data = b"".join(raws)
    return data, descs


# ---------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------


def case_rng(seed: int, index: int) -> random.Random:
    return random.Random(f"rlarchive-unpickle-fuzz:{seed}:{index}")


def global_names() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(the allow-listed constructors, plain names a stream may record and call)."""
    from rlarchive.unpickle import CONSTRUCTORS

    allowed = sorted(CONSTRUCTORS)
    prefixes = ("stable_baselines3.", "sb3_contrib.", "torch.nn.modules.", "mypkg.", "os.", "builtins.")
    names = [
        (p + tail, cls)
        for p in prefixes
        for tail, cls in (("common.policies", "ActorCriticPolicy"), ("x", "Y"), ("a.b", "C.D"))
    ]
    return allowed, names


class CaseMaker:
    """Builds case I of seed S (always the same bytes)."""

    def __init__(self, seed: int):
        self.seed = seed
        self.seeds = build_seeds()
        self.allowed, self.names = global_names()

    def make(self, index: int) -> tuple[bytes, str]:
        rng = case_rng(self.seed, index)
        r = rng.random()
        if r < 0.05:
            s = rng.choice(self.seeds)
            return s.data, f"seed {s.name}"
        if r < 0.25:
            return random_program(rng, self.allowed, self.names), "random program"
        s = rng.choice(self.seeds)
        data, descs = mutate(s.data, rng, self.seeds)
        return data, f"{s.name}: {', '.join(descs)}"


# ---------------------------------------------------------------------------
# the worker process: runs cases under the checks
# ---------------------------------------------------------------------------

_WATCHED_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "os.fork",
    "os.forkpty",
    "socket.connect",
    "socket.bind",
    "socket.sendto",
    "ctypes.dlopen",
    "ctypes.call_function",
    "os.remove",
    "os.rename",
    "os.mkdir",
    "os.rmdir",
    "os.chmod",
    "os.symlink",
    "os.link",
    "os.truncate",
    "shutil.",
    "exec",
    "compile",
    "pickle.find_class",
    "builtins.input",
    "os.putenv",
    "os.kill",
    "signal.",
)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class Sandbox:
    """Runs one callable per case and reports what it did that a decode must never do."""

    def __init__(self, workdir: str, max_rss_kib: int):
        self.workdir = workdir
        self.max_rss_kib = max_rss_kib
        self.active = False
        self.imported = False
        self.events: list[str] = []
        sys.addaudithook(self._hook)
        self.modules = set(sys.modules)

    def _hook(self, event: str, args: tuple) -> None:
        if not self.active:
            return
        if event == "import":
            name = str(args[0])
            if name.startswith(ALLOWED_NEW_MODULES):
                self.imported = True  # its module code runs next (an "exec" event)
            elif name not in sys.modules:
                self.events.append(f"import {name}")
        elif event == "exec" and self.imported:
            pass
        elif event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writing:
                self.events.append(f"open {str(path)[:100]} for writing")
        elif event.startswith(_WATCHED_EVENTS):
            self.events.append(event)

    def run(self, fn: Callable[[], object]) -> tuple[str, str, object]:
        """(outcome, detail, value): outcome is one of OUTCOMES or ``failure``."""
        from rlarchive.errors import RlarchiveError
        from rlarchive.unpickle import NotNeutral

        self.events = []
        self.imported = False
        value = None
        self.active = True
        try:
            value = fn()
            outcome, detail = "neutral", type(value).__name__
        except NotNeutral as e:
            outcome, detail = "not_neutral", e.reason[:120]
        except RlarchiveError as e:
            outcome, detail = (
                ("limit", e.code)
                if e.code == "LIMIT_EXCEEDED"
                else ("failure", f"RlarchiveError {e.code} escaped: {e}"[:300])
            )
        except BaseException as e:  # noqa: BLE001 - anything else is what the fuzzer looks for
            outcome, detail = "failure", f"{type(e).__name__} escaped: {str(e)[:200]}"
        finally:
            self.active = False
        problems = list(self.events)
        new = set(sys.modules) - self.modules
        bad = sorted(m for m in new if not m.startswith(ALLOWED_NEW_MODULES))
        if bad:
            problems.append(f"new modules {bad[:5]}")
        self.modules |= new
        left = os.listdir(self.workdir)
        if left:
            problems.append(f"files created {left[:5]}")
            for f in left:
                try:
                    os.remove(os.path.join(self.workdir, f))
                except OSError:
                    pass
        if self.rss_kib() > self.max_rss_kib:
            problems.append(f"peak RSS {self.rss_kib() // 1024} MiB over the bound")
        if problems:
            return "failure", "; ".join(problems)[:300] + f" (outcome {outcome}: {detail})", value
        return outcome, detail, value

    @staticmethod
    def rss_kib() -> int:
        """Peak resident set of this process in KiB.

        ``VmHWM`` of /proc/self/status where there is one: ``getrusage``'s
        ``ru_maxrss`` also counts the parent's pages shared before ``exec``.
        """
        try:
            with open("/proc/self/status", "rb") as f:
                for line in f:
                    if line.startswith(b"VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def check_writable(value: object) -> str | None:
    """None if the writer's encoder and checker take the value as a data member; else why not."""
    from rlarchive.errors import RlarchiveError
    from rlarchive.values import Checker, Encoder

    try:
        doc = Encoder("arrays", {}, 1024).encode(value, "/data/v")
        Checker().check(doc, "/data/v")
    except RlarchiveError as e:
        return f"refused {e.code}"
    except BaseException as e:  # noqa: BLE001
        return f"crash {type(e).__name__}: {str(e)[:150]}"
    return None


def worker(budget_mib: int, max_rss_mib: int) -> int:
    """Read length-prefixed cases from stdin, answer one JSON line per case on stdout."""
    import numpy  # noqa: F401 - part of the baseline

    import rlarchive.dtypes  # noqa: F401 - imported lazily by the conversion: part of the baseline
    import rlarchive.schedules  # noqa: F401
    import rlarchive.spaces  # noqa: F401
    import rlarchive.values  # noqa: F401
    from rlarchive import unpickle
    from rlarchive.unpickle.budget import ImportBudget

    workdir = tempfile.mkdtemp(prefix="rlarchive-unpickle-fuzz-cwd-")
    os.chdir(workdir)
    box = Sandbox(workdir, max_rss_mib * 1024)
    stdin, stdout = sys.stdin.buffer, sys.stdout
    try:
        while True:
            head = stdin.read(4)
            if len(head) < 4:
                break
            (size,) = struct.unpack("<I", head)
            data = stdin.read(size)
            budget = ImportBudget(budget_mib << 20)
            outcome, detail, value = box.run(lambda: unpickle.decode(data, budget=budget))
            writer = None
            if outcome == "neutral":
                writer = check_writable(value)
                if writer:  # a neutral value must be one the writer takes
                    outcome, detail = "failure", f"the writer does not take the neutral value: {writer}"
            value = None
            stdout.write(
                json.dumps({"outcome": outcome, "detail": detail, "writer": writer, "rss": box.rss_kib()}) + "\n"
            )
            stdout.flush()
    finally:
        os.chdir("/")
        try:
            os.rmdir(workdir)
        except OSError:
            pass
    return 0


def self_test() -> int:
    """Run misbehaving callables through the sandbox and print what it caught (one JSON line each)."""
    import rlarchive.values  # noqa: F401
    from rlarchive import unpickle  # noqa: F401

    workdir = tempfile.mkdtemp(prefix="rlarchive-unpickle-fuzz-self-")
    os.chdir(workdir)
    box = Sandbox(workdir, 1 << 30)

    def imports():
        import colorsys  # noqa: F401 - a module no decode needs

    def writes():
        with open("created.txt", "w") as f:
            f.write("x")

    def runs():
        os.system("true")

    def raises():
        raise ValueError("raw exception")

    for name, fn in (("import", imports), ("write", writes), ("system", runs), ("raise", raises)):
        outcome, detail, _ = box.run(fn)
        print(json.dumps({"case": name, "outcome": outcome, "detail": detail}))
    os.chdir("/")
    return 0


# ---------------------------------------------------------------------------
# the campaign
# ---------------------------------------------------------------------------


@dataclass
class Summary:
    cases: int = 0
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    failures: list = field(default_factory=list)  # (case index, description, detail)
    reasons: collections.Counter = field(default_factory=collections.Counter)  # NotNeutral reasons (first words)
    hangs: int = 0
    restarts: int = 0
    peak_rss_kib: int = 0
    seconds: float = 0.0

    def report(self) -> str:
        lines = [
            f"cases run:    {self.cases} in {self.seconds:.1f} s ({self.cases / max(self.seconds, 1e-9):.0f} cases/s)",
            f"neutral:      {self.outcomes['neutral']}",
            f"not neutral:  {self.outcomes['not_neutral']}",
            f"limit:        {self.outcomes['limit']} (LIMIT_EXCEEDED)",
            f"failures:     {len(self.failures)} (hangs {self.hangs})",
            f"worker peak RSS: {self.peak_rss_kib / 1024:.1f} MiB; workers started: {self.restarts}",
            "most frequent reasons for not neutral: " + "; ".join(f"{r} ({n})" for r, n in self.reasons.most_common(6)),
        ]
        lines += [f"    case {i}: {d[:120]} -> {det}" for i, d, det in self.failures[:20]]
        return "\n".join(lines)


class Worker:
    """One worker process, restarted after a hang or a death."""

    def __init__(self, budget_mib: int, max_rss_mib: int, timeout: float):
        self.args = [
            sys.executable,
            os.path.abspath(__file__),
            "--worker",
            "--budget-mib",
            str(budget_mib),
            "--max-rss-mib",
            str(max_rss_mib),
        ]
        self.timeout = timeout
        self.proc: subprocess.Popen | None = None
        self.started = 0
        self.buf = b""

    def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=PYTHON_DIR, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        self.proc = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.started += 1
        self.buf = b""

    def stop(self) -> None:
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except Exception:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def send(self, data: bytes) -> bool:
        """Queue one case; False if the worker is gone."""
        if self.proc is None:
            self.start()
        try:
            self.proc.stdin.write(struct.pack("<I", len(data)) + data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            return False
        return True

    def answer(self) -> dict:
        """The answer to the oldest queued case (the worker is killed after a hang and gone after a death)."""
        if self.proc is None:
            return {"outcome": "failure", "detail": "the worker died"}
        deadline = time.monotonic() + self.timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            if not ready:
                self.kill()
                return {"outcome": "failure", "detail": f"no answer within {self.timeout} s (hang)", "hang": True}
            chunk = os.read(fd, 65536)
            if not chunk:
                code = self.proc.wait()
                self.proc = None
                return {"outcome": "failure", "detail": f"the worker died (exit status {code})"}
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)


def run(
    cases: int,
    seed: int = 1,
    *,
    budget_mib: int = DEFAULT_BUDGET_MIB,
    max_rss_mib: int = DEFAULT_MAX_RSS_MIB,
    timeout: float = 20.0,
    minutes: float | None = None,
    save_dir: str | None = None,
    progress: bool = True,
) -> Summary:
    """Run ``cases`` cases (or as many as fit in ``minutes``) through a worker; return the summary."""
    maker = CaseMaker(seed)
    w = Worker(budget_mib, max_rss_mib, timeout)
    s = Summary()
    t0 = last = time.monotonic()
    log = None
    if save_dir:
        os.makedirs(save_dir, exist_ok=True)
    pending: collections.deque = collections.deque()  # (index, data, description) sent, not yet answered
    resend: collections.deque = collections.deque()
    nxt = 0
    try:
        while True:
            # keep a few cases in flight, so that making cases and running them overlap
            while len(pending) < IN_FLIGHT and (
                resend or (nxt < cases and (minutes is None or time.monotonic() - t0 < minutes * 60))
            ):
                if resend:
                    item = resend.popleft()
                else:
                    item = (nxt, *maker.make(nxt))
                    nxt += 1
                pending.append(item)
                if not w.send(item[1]):
                    break
            if not pending:
                break
            i, data, desc = pending.popleft()
            a = w.answer()
            if a["outcome"] == "failure" and w.proc is None:  # a hang or a death: the others go to a new worker
                resend.extend(pending)
                pending.clear()
            s.cases += 1
            s.peak_rss_kib = max(s.peak_rss_kib, a.get("rss", 0))
            outcome = a["outcome"]
            if outcome == "failure":
                s.hangs += bool(a.get("hang"))
                s.failures.append((i, desc, a["detail"]))
                if save_dir and len(s.failures) <= 50:
                    path = os.path.join(save_dir, f"unpickle-s{seed}-c{i}.pkl")
                    with open(path, "wb") as f:
                        f.write(data)
                    if log is None:
                        log = open(os.path.join(save_dir, "unpickle-findings.jsonl"), "a", encoding="utf-8")
                    log.write(
                        json.dumps(
                            {"seed": seed, "case": i, "case_description": desc, "detail": a["detail"], "file": path}
                        )
                        + "\n"
                    )
                    log.flush()
                continue
            s.outcomes[outcome] += 1
            if outcome == "not_neutral":
                s.reasons[" ".join(a["detail"].split()[:5])] += 1
            now = time.monotonic()
            if progress and now - last > 15:
                last = now
                print(
                    f"  ... {s.cases} cases, {len(s.failures)} failures, {s.cases / (now - t0):.0f} cases/s",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        w.stop()
        if log:
            log.close()
    s.restarts = w.started
    s.seconds = time.monotonic() - t0
    return s


def replay(seed: int, index: int, out: str, budget_mib: int) -> int:
    """Rebuild one case, write it to ``out`` and decode it here (no sandbox)."""
    from rlarchive import unpickle
    from rlarchive.errors import RlarchiveError
    from rlarchive.unpickle.budget import ImportBudget

    data, desc = CaseMaker(seed).make(index)
    with open(out, "wb") as f:
        f.write(data)
    print(f"case {index} of seed {seed}: {desc}; {len(data)} bytes written to {out}")
    try:
        print("neutral:", repr(unpickle.decode(data, budget=ImportBudget(budget_mib << 20)))[:500])
    except unpickle.NotNeutral as e:
        print("not neutral:", e.reason)
    except RlarchiveError as e:
        print("RlarchiveError:", e.code, e)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=100000)
    ap.add_argument("--minutes", type=float, help="stop after this long, whatever --cases says")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--budget-mib",
        type=int,
        default=DEFAULT_BUDGET_MIB,
        help=f"import budget per case (default {DEFAULT_BUDGET_MIB} MiB)",
    )
    ap.add_argument(
        "--max-rss-mib",
        type=int,
        default=DEFAULT_MAX_RSS_MIB,
        help=f"bound on the worker's peak RSS (default {DEFAULT_MAX_RSS_MIB} MiB)",
    )
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per case before it counts as a hang")
    ap.add_argument("--save-dir", default=os.path.join(tempfile.gettempdir(), "rlarchive-fuzz-findings"))
    ap.add_argument("--replay", type=int, metavar="I", help="rebuild case I of --seed, write it to --out and decode it")
    ap.add_argument("--out", default="case.pkl")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--self-test", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.budget_mib, args.max_rss_mib)
    if args.self_test:
        return self_test()
    if args.replay is not None:
        return replay(args.seed, args.replay, args.out, args.budget_mib)
    print(
        f"fuzzing the restricted unpickler: {args.cases} cases"
        + (f" or {args.minutes} minutes" if args.minutes else "")
        + f", seed {args.seed}, budget {args.budget_mib} MiB per case, memory bound {args.max_rss_mib} MiB",
        flush=True,
    )
    s = run(
        args.cases,
        args.seed,
        budget_mib=args.budget_mib,
        max_rss_mib=args.max_rss_mib,
        timeout=args.timeout,
        minutes=args.minutes,
        save_dir=args.save_dir,
        progress=not args.quiet,
    )
    print(s.report())
    if s.failures:
        print(f"FAILED: {len(s.failures)} failing cases; saved under {args.save_dir} (unpickle-findings.jsonl)")
        return 1
    print("OK: only NotNeutral or LIMIT_EXCEEDED escaped; nothing imported, written or run; memory bounded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
