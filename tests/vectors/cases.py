"""Every golden test case: how to build its bytes, what it tests, what a reader must answer.

Valid cases are written by the reference writer (``rlarchive.save``); invalid
cases start from well-formed parts and break exactly one rule, with
:mod:`rawzip` where the reference writer would refuse.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import struct
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from rawzip import Entry, Layout, assemble, sha, standard_entries
from sites import doc

import rlarchive
from rlarchive import jsonstrict
from rlarchive import spaces as sp
from rlarchive.tensors import as_tensor, group_layout
from rlarchive.zipprofile import MEDIA_TYPE


@dataclass
class Case:
    id: str
    description: str
    spec: list
    expect: str  # "dump" or an error code
    build: Callable[[], bytes]
    warnings: list = field(default_factory=list)
    gzip: bool = False
    extensions: list = field(default_factory=list)  # what a reader must support for this outcome (Annex A.3)
    predict: Callable[[], dict] | None = None  # expect "actions": the predict request and the actions (Annex A)
    file_id: str | None = None  # the case whose file this one reads (a predict case reads its dump case's archive)
    sites: list = field(
        default_factory=list
    )  # (check id of spec/checks.json, sites.Site) of each issue a validator reports, in order
    request: Callable[[], bytes] | None = None  # the request line sent instead (Annex A.5), with $SEQ and $FILE
    seq_unreadable: bool = False  # the request's seq cannot be read: the answer's seq is null (Annex A.5)
    request_gzip: bool = False  # the request file is stored gzipped

    @property
    def folder(self) -> str:
        if self.request is not None:  # the folder of the case whose file it reads
            return next(c for c in CASES if c.id == self.file_id).folder
        return "invalid" if self.expect not in ("dump", "actions") else "valid"

    @property
    def file(self) -> str:
        return f"{self.folder}/{self.file_id or self.id}.rlarchive" + (".gz" if self.gzip else "")

    @property
    def request_file(self) -> str:
        return f"requests/{self.id}.request" + (".gz" if self.request_gzip else "")


CASES: list[Case] = []


def case(
    id: str,
    description: str,
    spec,
    expect: str = "dump",
    warnings=(),
    gzip: bool = False,
    extensions=(),
    check=None,
    at=None,
):
    """Register a case; an invalid one names the ``check`` (spec/checks.json) it breaks and its site ``at`` (tests/vectors/sites.py).

    A case whose validation report holds several issues gives lists of checks and sites, in the report's order.
    """
    sections = [spec] if isinstance(spec, str) else list(spec)
    if expect == "dump" and "§13.1" not in sections:
        sections.append("§13.1")  # every valid case checks the dump
    if isinstance(check, str):
        check, at = [check], [at]
    issues = list(zip(check or [], at or []))

    def deco(fn):
        CASES.append(Case(id, description, sections, expect, fn, list(warnings), gzip, list(extensions), sites=issues))
        return fn

    return deco


def saved(data, tensors=None, optimizers=None, **kw) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "a.rlarchive")
        rlarchive.save(p, data, tensors, optimizers, producer=("rlarchive-test-vectors", "1"), **kw)
        with open(p, "rb") as f:
            return f.read()


def unchecked(data, extension_values: dict, tensors=None, **kw) -> bytes:
    """The archive ``saved(data, tensors, extension_values=...)`` writes, byte for byte, without the writer's checks
    of the extension values: for an invalid case whose broken rule the writer would refuse."""
    from rlarchive.extensions import SUPPORTED
    from rlarchive.limits import INLINE_ARRAY_BYTES
    from rlarchive.values import Encoder
    from rlarchive.writer import json_member

    groups = dict(tensors or {})
    members = {}
    for name, value in extension_values.items():
        ext = SUPPORTED[name]
        arrays: dict = {}
        encoded = Encoder(ext.group, arrays, INLINE_ARRAY_BYTES).encode(value, "/" + ext.key)
        if arrays:
            groups[ext.group] = {n: t.array for n, t in arrays.items()}
        members[ext.member] = json_member({ext.key: encoded}, ext.member)
    return saved(data, groups, extensions_used=list(extension_values), extension_members=members, **kw)


def st_group(tensors: dict) -> bytes:
    """A well-formed safetensors member for {name: array}."""
    prefix, order = group_layout({k: as_tensor(v) for k, v in tensors.items()})
    return prefix + b"".join(t.data.tobytes() for t in order)


def st_raw(header, buffer: bytes, pad: bool = True) -> bytes:
    """A safetensors member from an explicit header (dict or raw bytes) and buffer."""
    h = header if isinstance(header, bytes) else json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * ((-(8 + len(h))) % 64)
    return struct.pack("<Q", len(h)) + h + buffer


def archive(data_json, groups=None, layout: Layout = Layout(), **kw) -> bytes:
    """An archive of well-formed parts around a given data.json (a dict or raw bytes)."""
    raw = data_json if isinstance(data_json, bytes) else jsonstrict.dumps(data_json)
    return assemble(standard_entries(raw, groups, **kw), layout)


def with_value(value, groups=None) -> bytes:
    """An archive whose data holds one raw JSON value under the key ``x``."""
    return archive({"data": {"x": value}}, groups)


def entries_edit(edit, groups=None, data=None, layout: Layout = Layout()) -> bytes:
    """Build well-formed entries, let ``edit(entries)`` break them, then assemble."""
    es = standard_entries(jsonstrict.dumps(data or {"data": {"gamma": 0.99}}), groups)
    edit(es)
    return assemble(es, layout)


def by_name(es, name) -> Entry:
    return next(e for e in es if e.name == name)


POLICY = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([0.5, -0.5], np.float32)}


def policy_archive(**kw) -> bytes:
    return saved({"gamma": 0.99}, {"policy": POLICY}, **kw)


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


def nd(dtype: str, shape, raw: bytes) -> dict:
    return {"$type": "ndarray", "dtype": dtype, "shape": list(shape), "base64": b64(raw)}


# ======================================================================= valid


@case("minimal", "The smallest valid archive: mimetype, an empty data map, a manifest.", ["§3", "§4", "§5"])
def _():
    return saved({})


def _all_dtypes() -> dict:
    rng = np.random.default_rng(7)
    out = {}
    for code, d in rlarchive.dtypes.DTYPES.items():
        n = 5
        raw = rng.integers(0, 256, size=n * d.size, dtype=np.uint8)
        if code == "BOOL":
            raw = (raw & 1).astype(np.uint8)
        out[f"t_{code.lower()}"] = rlarchive.RawTensor(code, (n,), raw.view(np.dtype(d.raw)))
    out["zero_d_f64"] = np.array(3.25)
    out["zero_size_f32"] = np.zeros((0, 4), np.float32)
    out["zero_size_i64_3d"] = np.zeros((2, 0, 3), np.int64)
    return out


@case(
    "tensors-every-dtype",
    "One tensor of every dtype of the table, plus 0-d and zero-size tensors, each aligned to its size.",
    ["§10.1", "§10.2", "§12"],
)
def _():
    return saved({}, {"all": _all_dtypes()})


@case(
    "tensors-several-groups",
    "Policy parameters, extra variables and a free-named group, each its own safetensors member.",
    ["§4", "§10"],
)
def _():
    return saved(
        {"ent_coef": "auto"},
        {
            "policy": POLICY,
            "variables": {"log_ent_coef": np.array([-0.1], np.float32)},
            "critic-target_2": {"q.weight": np.ones((3, 2), np.float64)},
        },
    )


def adam_state(n_params: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    state = {}
    for i in range(n_params):
        shape = (3, 2) if i % 2 == 0 else (3,)
        state[i] = {
            "step": np.array(12.0, np.float32),
            "exp_avg": rng.standard_normal(shape).astype(np.float32),
            "exp_avg_sq": rng.random(shape).astype(np.float32),
        }
    groups = [
        {
            "lr": 0.0003,
            "betas": (0.9, 0.999),
            "eps": 1e-08,
            "weight_decay": 0,
            "amsgrad": False,
            "maximize": False,
            "foreach": None,
            "capturable": False,
            "differentiable": False,
            "fused": None,
            "params": list(range(n_params)),
        }
    ]
    return {"state": state, "param_groups": groups}


@case(
    "optimizer-adam",
    "An Adam optimizer state: param groups (with the betas tuple) in data.json, state tensors in optimizer.policy.optimizer.",
    ["§7.9", "§7.5", "§7.6"],
)
def _():
    return saved({"gamma": 0.99}, {"policy": POLICY}, {"policy.optimizer": adam_state(2, 1)})


@case(
    "values-floats",
    "Floats: non-finite, negative zero, subnormal, extremes, and float vs int.",
    ["§7.2", "§7.3", "§13.2"],
)
def _():
    return saved(
        {
            "nan": float("nan"),
            "inf": float("inf"),
            "ninf": float("-inf"),
            "neg_zero": -0.0,
            "zero": 0.0,
            "subnormal": 5e-324,
            "max": 1.7976931348623157e308,
            "tenth": 0.1,
            "e21": 1e21,
            "e20": 1e20,
            "small": 1.5e-7,
            "micro": 1e-6,
            "one_float": 1.0,
            "one_int": 1,
            "third": 1 / 3,
            "list": [1.0, 1, -2.5, 123456789.125],
        }
    )


@case(
    "values-integers",
    "Integers at and beyond ±(2^53-1) and at the int64 and uint64 limits; start_time in nanoseconds.",
    ["§6", "§7.3"],
)
def _():
    return saved(
        {
            "max_safe": 2**53 - 1,
            "min_safe": -(2**53 - 1),
            "two_53": 2**53,
            "neg_two_53": -(2**53),
            "int64_max": 2**63 - 1,
            "int64_min": -(2**63),
            "uint64_max": 2**64 - 1,
            "huge": 10**40,
            "start_time": 1732246000123456789,
            "zero": 0,
        }
    )


@case("values-bytes-tuples", "Byte strings (empty, binary) and tuples (empty, nested, mixed).", ["§7.4"])
def _():
    return saved(
        {
            "empty_bytes": b"",
            "bytes": bytes(range(256)),
            "empty_tuple": (),
            "tuple": (1, 2.5, "a", (None, True), [b"x"]),
        }
    )


@case(
    "values-dict-keys",
    "Maps with non-string keys (int, float, bool, null, bytes, tuple) and a map with a '$type' key.",
    ["§7.5"],
)
def _():
    return saved(
        {
            "int_keys": {0: "a", -1: "b", 2**60: "c"},
            "mixed": {None: 1, True: 2, 2.5: 3, b"k": 4, (1, "x"): 5, "s": 6},
            "dollar": {"$type": "not a tag", "other": 1},
            "empty": {},
        }
    )


@case(
    "values-arrays",
    "Arrays inline (several dtypes, 0-d, zero-size) and by reference to the arrays group (above 1 KiB).",
    ["§7.6", "§7.10", "§12"],
)
def _():
    return saved(
        {
            "small_f32": np.array([[1.5, -2.0], [np.inf, np.nan]], np.float32),
            "small_i64": np.array([-(2**63), 2**63 - 1], np.int64),
            "small_u8": np.arange(10, dtype=np.uint8),
            "bools": np.array([True, False, True]),
            "zero_d": np.array(7, np.int32),
            "zero_size": np.zeros((0,), np.float64),
            "f16": np.array([0.5, 65504.0], np.float16),
            "large": np.linspace(0, 1, 300, dtype=np.float64),
            "nested": {"obs_mean": np.full((20, 20), 0.25, np.float32)},
        }
    )


@case("values-scalars", "NumPy scalars of several dtypes.", ["§7.6"])
def _():
    return saved(
        {"f32": np.float32(0.1), "f64": np.float64(-2.5), "i64": np.int64(-7), "u8": np.uint8(200), "b": np.bool_(True)}
    )


@case("values-class-opaque", "Class references by name and an opaque pickle with its type and note.", ["§7.8", "§11.3"])
def _():
    return saved(
        {
            "policy_class": rlarchive.ClassRef("stable_baselines3.common.policies", "ActorCriticPolicy"),
            "activation_fn": rlarchive.ClassRef("torch.nn.modules.activation", "ReLU"),
            "callback": rlarchive.Opaque(
                b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x2a\x85\x94.", "builtins.tuple", "kept as a pickle"
            ),
            "bare": rlarchive.Opaque(b"\x80\x04N."),
        }
    )


def _every_space() -> dict:
    f32 = np.float32
    return {
        "box_inf": sp.Box(np.full((3,), -np.inf, f32), np.array([np.inf, 1.0, np.inf], f32), (3,), "F32"),
        "box_image": sp.Box(np.zeros((16, 16, 3), np.uint8), np.full((16, 16, 3), 255, np.uint8), (16, 16, 3), "U8"),
        "box_int": sp.Box(np.array([[-3, 0]], np.int64), np.array([[3, 5]], np.int64), (1, 2), "I64"),
        "box_f64_scalar": sp.Box(np.array(-1.0), np.array(1.0), (), "F64"),
        "discrete": sp.Discrete(4),
        "discrete_start": sp.Discrete(3, start=-1, dtype="I32"),
        "multi_discrete": sp.MultiDiscrete(np.array([3, 2, 5], np.int64), np.array([0, 1, -2], np.int64), "I64"),
        "multi_binary": sp.MultiBinary(6),
        "multi_binary_2d": sp.MultiBinary((2, 3)),
        "text": sp.Text(12, 0, "0123456789abcdefé"),
        "dict_nested": sp.Dict(
            (
                ("z_first", sp.Discrete(2)),
                ("image", sp.Box(np.zeros((2, 2), np.float32), np.ones((2, 2), np.float32), (2, 2), "F32")),
                ("inner", sp.Tuple((sp.Discrete(3), sp.Dict((("b", sp.MultiBinary(2)), ("a", sp.Discrete(5))))))),
            )
        ),
        "tuple_nested": sp.Tuple((sp.Tuple(()), sp.Dict(()), sp.Discrete(1))),
    }


@case(
    "spaces-every-kind",
    "Every space kind: Box (±inf bounds, image with referenced bounds, integer, 0-d), Discrete with start, MultiDiscrete, MultiBinary, Text, nested Dict (key order kept) and Tuple.",
    ["§8", "§7.7"],
)
def _():
    return saved(_every_space())


@case("schedules-every-kind", "Constant, linear (with end_fraction) and piecewise (linear and step) schedules.", ["§9"])
def _():
    return saved(
        {
            "constant": rlarchive.Constant(0.0003),
            "constant_int": rlarchive.Constant(4),
            "linear": rlarchive.Linear(1.0, 0.05, 0.1),
            "piecewise": rlarchive.Piecewise(((0.0, 1e-3), (0.5, 5e-4), (1.0, 0.0)), "linear"),
            "steps": rlarchive.Piecewise(((0.0, 64), (0.25, 32)), "step"),
        }
    )


@case(
    "unicode",
    "Unicode keys and strings: accents, CJK, astral-plane emoji, escapes, U+2028, and keys whose UTF-16 order differs from code point order.",
    ["§6", "§12", "§13.3"],
)
def _():
    return saved(
        {
            "café": "naïve",
            "日本": "強化学習",
            "\U0001f600": "astral key",
            "\ue000": "private-use key (sorts after the emoji in UTF-16)",
            "ctrl": 'tab\tnewline\nquote"backslash\\\x01\x1f\x7f',
            "sep": "line\u2028para\u2029",
            "": "empty key",
            "tensor names": "see group",
        },
        {"policy": {"poids.été": np.ones(2, np.float32), "权重": np.zeros(1, np.float32)}},
    )


@case(
    "zip64",
    "ZIP64 records everywhere (end record, locator, local and central extra fields), as a writer may use even when sizes do not need them.",
    ["§2.6"],
)
def _():
    return policy_archive(force_zip64=True)


@case(
    "extension-optional",
    "An archive declaring an optional extension, with manifest data and a member under extensions/.",
    ["§5.4", "§4"],
    warnings=["EXTENSION_UNKNOWN"],
)
def _():
    return saved(
        {"gamma": 0.99},
        extensions_used=["ACME_notes"],
        extensions={"ACME_notes": {"author": "someone", "rating": 4.5}},
        extension_members={"extensions/ACME_notes/notes.txt": b"trained overnight\n"},
    )


@case(
    "future-minor-version",
    "A manifest of format 1.7 with a property 1.0 does not define: read as 1.0, the property ignored with a warning, kept in the dump.",
    ["§5.2", "§5.1"],
    warnings=["MANIFEST_UNKNOWN_PROPERTY"],
)
def _():
    def patch(m):
        m["format_version"] = "1.7"
        m["created_with_care"] = {"by": "a later writer"}

    return archive({"data": {"gamma": 0.99}}, manifest_patch=patch)


@case(
    "metadata-provenance",
    "Every metadata key spec/metadata.md defines, each well formed (environment id, run size, seed, library versions, wrappers, an evaluation, licence, dropped parts), beside a free key: no issue.",
    ["§5.1"],
)
def _():
    evaluation = {
        "env_id": "CartPole-v1",
        "episodes": 2,
        "seeds": [7, 8],
        "deterministic": True,
        "mean": 150.5,
        "std": 49.5,
        "returns": [101.0, 200],
        "lengths": [101, 200],
        "evaluator": {"name": "rlarchive-python", "version": "1"},
        "date": "2026-11-24T12:00:00Z",
        "note": "members an evaluation does not define are allowed",
    }
    wrappers = [
        {"name": "VecTransposeImage"},
        {"name": "VecFrameStack", "n_stack": 4, "channels_order": "first"},
        {"name": "VecNormalize", "norm_obs": True, "norm_reward": False},
        {"name": "SomeOtherWrapper", "anything": [1, 2]},
    ]
    return saved(
        {"gamma": 0.99},
        metadata={
            "env_id": "ALE/Pong-v5",
            "n_envs": "8",
            "num_timesteps": "0",
            "seed": "-12",
            "versions.python": "3.12.3",
            "versions.torch": "2.13.0+cpu",
            "wrappers": json.dumps(wrappers),
            "evaluations": json.dumps([evaluation]),
            "license": "Apache-2.0",
            "dropped": json.dumps(["training", "replay_buffer", "optimizers"]),
            "notes": "free text: \n any key the spec does not define",
        },
    )


_BAD_EVALUATION = {
    "env_id": "CartPole-v1",
    "episodes": 2,
    "seeds": None,
    "deterministic": True,
    "mean": 1.0,
    "std": 0.0,
    "returns": [1.0],
    "lengths": [1, 1],
    "evaluator": {"name": "x", "version": "1"},
    "date": "2026-11-24T12:00:00Z",
}
for _id, _what, _key, _value in (
    ("metadata-invalid-count", "n_envs with a leading zero", "n_envs", "08"),
    ("metadata-invalid-version-name", "a versions key naming no library (upper case)", "versions.Torch", "2.1"),
    (
        "metadata-invalid-evaluation",
        "an evaluation whose returns do not match its episodes",
        "evaluations",
        json.dumps([_BAD_EVALUATION]),
    ),
    (
        "metadata-invalid-zoo-config",
        "zoo.config holding a JSON array where an object is defined",
        "zoo.config",
        '["policy","MlpPolicy"]',
    ),
    ("metadata-invalid-license", "a licence named in words rather than by its identifier", "license", "MIT License"),
    (
        "metadata-invalid-dropped",
        "dropped listing its parts out of the order of spec/metadata.md",
        "dropped",
        '["optimizers","training"]',
    ),
):

    @case(
        _id,
        f"A defined metadata key with a malformed value ({_what}) beside well-formed ones: the warning METADATA_INVALID at its key, the archive read as usual.",
        ["§5.1"],
        warnings=["METADATA_INVALID"],
        check="metadata-value",
        at=doc("/metadata/" + _key, "value", member="manifest.json"),
    )
    def _(key=_key, value=_value):
        def patch(m):
            m["metadata"] = {"env_id": "CartPole-v1", key: value, "seed": "3"}

        return archive({"data": {"gamma": 0.99}}, manifest_patch=patch)


@case(
    "data-unknown-property",
    "A data document with a top-level property 1.0 does not define: ignored with a warning, left out of the dump.",
    ["§7.1"],
    warnings=["DATA_UNKNOWN_PROPERTY"],
)
def _():
    return archive({"data": {"gamma": 0.99}, "comment": "from a later minor version"})


@case(
    "json-whitespace-and-forms",
    "data.json written by another writer: white space, escapes, exponent floats, -0 integer, keys out of order; the dump is the same canonical form.",
    ["§6", "§13.2"],
)
def _():
    raw = '{\n  "optimizers" : {},\n  "data" : {\n    "b" : 1E2, "a" : -0, "c" : "\\u00e9\\ud83d\\ude00", "d": [ 1.50, 2e-3 ]\n  }\n}\n'
    return archive(raw.encode())


@case(
    "bool-tensor-nonzero-byte",
    "A BOOL tensor holding the byte 2: readable (true), reported as a warning by validators.",
    ["§10.1"],
    warnings=["ST_BOOL_VALUE"],
)
def _():
    buf = bytes([0, 1, 2])
    return archive({"data": {}}, {"flags": st_raw({"m": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}}, buf)})


@case(
    "ppo-like-agent",
    "A realistic PPO-like agent: Box observations with infinite bounds, Discrete actions, a linear schedule, start_time beyond 2^53, policy and Adam optimizer state.",
    ["§7", "§8", "§9", "§10"],
)
def _():
    rng = np.random.default_rng(0)
    policy = {
        "mlp_extractor.policy_net.0.weight": rng.standard_normal((64, 8)).astype(np.float32),
        "mlp_extractor.policy_net.0.bias": np.zeros(64, np.float32),
        "action_net.weight": rng.standard_normal((4, 64)).astype(np.float32),
        "action_net.bias": np.zeros(4, np.float32),
        "value_net.weight": rng.standard_normal((1, 64)).astype(np.float32),
        "value_net.bias": np.zeros(1, np.float32),
    }
    data = {
        "policy_class": rlarchive.ClassRef("stable_baselines3.common.policies", "ActorCriticPolicy"),
        "observation_space": sp.Box(np.full(8, -np.inf, np.float32), np.full(8, np.inf, np.float32), (8,), "F32"),
        "action_space": sp.Discrete(4),
        "n_envs": 4,
        "num_timesteps": 20480,
        "_total_timesteps": 20000,
        "seed": None,
        "start_time": 1732246000123456789,
        "learning_rate": 0.0003,
        "lr_schedule": rlarchive.Linear(0.0003, 0.0, 1.0),
        "clip_range": rlarchive.Constant(0.2),
        "gamma": 0.99,
        "gae_lambda": 0.95,
        "n_steps": 2048,
        "batch_size": 64,
        "n_epochs": 10,
        "ent_coef": 0.0,
        "vf_coef": 0.5,
        "max_grad_norm": 0.5,
        "policy_kwargs": {
            "net_arch": {"pi": [64], "vf": [64]},
            "activation_fn": rlarchive.ClassRef("torch.nn.modules.activation", "Tanh"),
        },
        "_last_obs": None,
        "_episode_num": 0,
        "_current_progress_remaining": -0.02400000000000002,
    }
    return saved(
        data,
        {"policy": policy},
        {"policy.optimizer": adam_state(6, 2)},
        metadata={"sb3_version": "2.9.2", "system_info": "OS: Linux\nPython: 3.11.7"},
    )


@case(
    "sac-like-agent",
    "A realistic SAC-like agent: Box actions in [-1, 1], three optimizers, a learned entropy coefficient in variables.",
    ["§7", "§8", "§10"],
)
def _():
    rng = np.random.default_rng(1)
    policy = {}
    for net in (
        "actor.latent_pi.0",
        "actor.mu",
        "actor.log_std",
        "critic.qf0.0",
        "critic.qf1.0",
        "critic_target.qf0.0",
        "critic_target.qf1.0",
    ):
        policy[f"{net}.weight"] = rng.standard_normal((4, 3)).astype(np.float32)
        policy[f"{net}.bias"] = rng.standard_normal(4).astype(np.float32)
    data = {
        "observation_space": sp.Box(np.full(3, -10.0, np.float32), np.full(3, 10.0, np.float32), (3,), "F32"),
        "action_space": sp.Box(-np.ones(2, np.float32), np.ones(2, np.float32), (2,), "F32"),
        "buffer_size": 1000000,
        "learning_starts": 100,
        "tau": 0.005,
        "gamma": 0.99,
        "train_freq": {"frequency": 1, "unit": "step"},
        "ent_coef": "auto",
        "target_entropy": -2.0,
        "lr_schedule": rlarchive.Constant(0.0003),
        "replay_buffer_class": rlarchive.ClassRef("stable_baselines3.common.buffers", "ReplayBuffer"),
    }
    opts = {
        "actor.optimizer": adam_state(6, 3),
        "critic.optimizer": adam_state(8, 4),
        "ent_coef_optimizer": adam_state(1, 5),
    }
    return saved(data, {"policy": policy, "variables": {"log_ent_coef": np.array([-0.5], np.float32)}}, opts)


@case(
    "zip-other-fields-ignored",
    "Members with a modification time, the internal 'text' attribute, host system 3 (Unix, ZIP 3.0 in 'version made by') and the regular-file mode 0o100644: readers give time and internal attributes no meaning and admit this host and mode.",
    "§2.7",
)
def _():
    def edit(es):
        for e in es[1:]:
            e.mtime, e.mdate, e.made_by, e.int_attr, e.ext_attr = 0x6000, 0x5A21, 0x031E, 1, 0o100644 << 16

    return entries_edit(edit)


EXT = "ACME_files"


def ext_archive(members: dict, edit=lambda es: None) -> bytes:
    """An archive declaring the optional extension EXT with the given members under extensions/EXT/."""
    es = standard_entries(
        jsonstrict.dumps({"data": {"gamma": 0.99}}),
        extra_members={f"extensions/{EXT}/{k}": v for k, v in members.items()},
        manifest_patch=lambda m: m.update(extensions_used=[EXT]),
    )
    edit(es)
    return assemble(es)


def ext_member(es, short: str) -> Entry:
    return by_name(es, f"extensions/{EXT}/{short}")


@case(
    "zip-versions-and-attributes-allowed",
    "Every form §2.7 admits, one per member: host 0 with the read-only and archive bits (0x21) and ZIP version 63 in 'version made by'; host 3 with type bits 0 and mode 0o600 (as Python's zipfile writes); host 3 with 0o100444 and the MS-DOS bits 0x8021 (as 7-Zip writes); host 3 with 0o100755 and ZIP version 255; versions needed 0, 10 and 45. Every extraction tool makes a regular file of each.",
    ["§2.7", "§5.4"],
    warnings=["EXTENSION_UNKNOWN"],
)
def _():
    def edit(es):
        d = by_name(es, "data.json")
        d.made_by, d.ext_attr, d.version = 0x003F, 0x21, 10
        a = ext_member(es, "a.txt")
        a.made_by, a.ext_attr, a.version = 0x0314, 0o600 << 16, 0
        b = ext_member(es, "b.txt")
        b.made_by, b.ext_attr, b.version = 0x033F, (0o100444 << 16) | 0x8021, 45
        m = by_name(es, "manifest.json")
        m.made_by, m.ext_attr = 0x03FF, 0o100755 << 16

    return ext_archive({"a.txt": b"first\n", "b.txt": b"second\n"}, edit)


@case(
    "zip-name-prefix-not-a-directory",
    "Member names that begin with another member's name but not with that name and '/' (d, d.bin and dd/f): no file/directory clash.",
    ["§2.2", "§5.4"],
    warnings=["EXTENSION_UNKNOWN"],
)
def _():
    return ext_archive({"d": b"file d\n", "d.bin": b"file d.bin\n", "dd/f": b"file dd/f\n"})


# ======================================================================= invalid: identification and ZIP


def _plain_zip(names=("data.json",)) -> bytes:
    es = [Entry(n, b"{}") for n in names]
    return assemble(es)


@case("not-rlarchive-plain-zip", "A ZIP without the mimetype member first.", "§3", "ARCHIVE_NOT_RLARCHIVE")
def _():
    return _plain_zip()


@case("not-rlarchive-empty-file", "An empty file.", "§3", "ARCHIVE_NOT_RLARCHIVE")
def _():
    return b""


@case("not-rlarchive-wrong-media-type", "A mimetype member naming another media type.", "§3", "ARCHIVE_NOT_RLARCHIVE")
def _():
    return entries_edit(lambda es: setattr(es[0], "data", b"application/vnd.other-format+zip"))


@case(
    "not-rlarchive-prepended-bytes",
    "Bytes prepended before the first local header (a self-extractor stub).",
    ["§2.1", "§3"],
    "ARCHIVE_NOT_RLARCHIVE",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(prefix=b"#!/bin/sh\nexit 0\n"))


@case(
    "not-rlarchive-mimetype-too-long",
    "A mimetype member that begins with the media type but is 30 bytes long.",
    "§3",
    "ARCHIVE_NOT_RLARCHIVE",
)
def _():
    return entries_edit(lambda es: setattr(es[0], "data", MEDIA_TYPE + b"\n"))


@case(
    "zip-eocd-missing-truncated",
    "An archive cut short: no end of central directory record.",
    "§2.1",
    "ZIP_EOCD_NOT_FOUND",
)
def _():
    full = policy_archive()
    return full[: len(full) // 2]


@case("zip-trailing-bytes", "Bytes after the end of central directory record.", "§2.1", "ZIP_TRAILING_DATA")
def _():
    return entries_edit(lambda es: None, layout=Layout(suffix=b"trailing"))


@case("zip-eocd-comment", "An end record with a comment.", "§2.1", "ZIP_TRAILING_DATA")
def _():
    return entries_edit(lambda es: None, layout=Layout(comment=b"hello"))


@case("zip-two-end-records", "Two end of central directory records in a row.", "§2.1", "ZIP_MULTIPLE_EOCD")
def _():
    return entries_edit(lambda es: None, layout=Layout(duplicate_eocd=True))


@case("zip-multi-disk", "An end record naming disk 1.", "§2.1", "ZIP_MULTI_DISK")
def _():
    return entries_edit(lambda es: None, layout=Layout(eocd_disk=1))


@case("zip-member-on-other-disk", "A central record whose disk number start is 1.", "§2.2", "ZIP_MULTI_DISK")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "disk_start", 1))


@case("zip64-bad-record-size", "A ZIP64 end record whose size field is not 44.", "§2.6", "ZIP_ZIP64_INVALID")
def _():
    return entries_edit(lambda es: None, layout=Layout(zip64_eocd=True, z64_record_size=52))


@case(
    "zip64-max-count-without-locator",
    "An end record with the entry count 0xFFFF and no ZIP64 records.",
    "§2.6",
    "ZIP_ZIP64_INVALID",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(eocd_count=0xFFFF, eocd_count_disk=0xFFFF))


@case(
    "zip64-max-disk-without-locator",
    "An end record whose disk numbers hold 0xFFFF without ZIP64 records.",
    "§2.6",
    "ZIP_ZIP64_INVALID",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(eocd_disk=0xFFFF))


@case(
    "zip64-locator-other-disk",
    "A ZIP64 locator placing the ZIP64 end record on disk 1.",
    ["§2.1", "§2.6"],
    "ZIP_MULTI_DISK",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(zip64_eocd=True, z64_locator_disk=1))


@case(
    "zip64-extra-without-max-field",
    "A central record with a ZIP64 extra record although no field holds 0xFFFFFFFF.",
    "§2.6",
    "ZIP_ZIP64_INVALID",
)
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "extra_central", struct.pack("<HHQ", 1, 8, 5)))


@case(
    "zip-directory-past-region", "An end record whose directory size runs into the end record.", "§2.2", "ZIP_TRUNCATED"
)
def _():
    base = standard_entries(jsonstrict.dumps({"data": {}}))
    cd_len = sum(46 + len(e.name) for e in base)
    return assemble(base, Layout(eocd_cd_size=cd_len + 10))


@case("zip-bad-central-signature", "A central directory record with a corrupt signature.", "§2.2", "ZIP_CD_INVALID")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "central_sig", b"PK\x01\x09"))


@case("zip-member-comment", "A member with a file comment.", "§2.2", "ZIP_CD_INVALID")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "comment", b"note"))


@case(
    "zip-entry-count-wrong",
    "An end record counting one entry fewer than the directory holds.",
    "§2.2",
    "ZIP_CD_INVALID",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(eocd_count=2, eocd_count_disk=2))


@case("zip-sizes-differ", "A STORED member whose compressed and uncompressed sizes differ.", "§2.2", "ZIP_CD_INVALID")
def _():
    def edit(es):
        e = by_name(es, "data.json")
        e.central_csize = len(e.data) + 1

    return entries_edit(edit)


@case("zip-encrypted", "A member flagged as encrypted.", "§2.2", "ZIP_ENCRYPTED")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "flags", 1))


@case("zip-data-descriptor", "A member flagged as using a data descriptor.", "§2.2", "ZIP_DATA_DESCRIPTOR")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "flags", 8))


@case("zip-utf8-flag", "A member with general purpose flag bit 11 (UTF-8 names) set.", "§2.2", "ZIP_FLAGS")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "flags", 0x800))


@case("zip-deflated", "A member whose compression method is 8 (deflate).", "§2.2", "ZIP_COMPRESSED")
def _():
    def edit(es):
        e = by_name(es, "data.json")
        e.method = 8

    return entries_edit(edit)


def _extra_member(name: str) -> bytes:
    return entries_edit(lambda es: es.insert(2, Entry(name, b"x")))


@case("zip-name-dotdot", "A member name with a '..' segment.", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("extensions/../../evil")


@case("zip-name-absolute", "An absolute member name.", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("/etc/passwd")


@case("zip-name-backslash", "A member name with a backslash.", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("tensors\\policy.safetensors")


@case("zip-name-directory", "A directory entry (name ending in '/').", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("tensors/")


@case("zip-name-non-ascii", "A member name with a non-ASCII byte.", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("données.json")


@case("zip-name-too-long", "A member name of 256 bytes.", "§2.4", "ZIP_NAME_INVALID")
def _():
    return _extra_member("a" * 256)


@case(
    "zip-extra-unknown-id",
    "A central record carrying an extended-timestamp extra record (0x5455).",
    "§2.5",
    "ZIP_EXTRA_FIELD",
)
def _():
    return entries_edit(
        lambda es: setattr(by_name(es, "data.json"), "extra_central", struct.pack("<HHB", 0x5455, 1, 0))
    )


@case("zip-extra-truncated", "A local extra field that ends inside a record header.", "§2.5", "ZIP_EXTRA_FIELD")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "extra_local", b"\x35\xd9"))


@case(
    "zip-extra-padding-nonzero", "An alignment padding record with a non-zero padding byte.", "§2.5", "ZIP_EXTRA_FIELD"
)
def _():
    return entries_edit(
        lambda es: setattr(by_name(es, "data.json"), "extra_local", struct.pack("<HHHB", 0xD935, 3, 64, 7))
    )


@case("zip-name-duplicate", "Two members named data.json.", "§2.2", "ZIP_NAME_DUPLICATE")
def _():
    return entries_edit(lambda es: es.insert(2, Entry("data.json", b'{"data":{}}')))


@case("zip-name-case-collision", "Members data.json and DATA.json.", "§2.2", "ZIP_NAME_CASE_COLLISION")
def _():
    return entries_edit(lambda es: es.insert(2, Entry("DATA.json", b'{"data":{}}')))


@case("zip-local-signature", "A local header with a corrupt signature.", "§2.3", "ZIP_LOCAL_HEADER_INVALID")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "local_sig", b"PK\x03\x05"))


@case(
    "zip-local-name-differs",
    "A local header naming data.jsoN while the central directory says data.json.",
    "§2.3",
    "ZIP_HEADER_MISMATCH",
)
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "local_name", "data.jsoN"))


@case(
    "zip-local-crc-differs",
    "A local header whose CRC-32 differs from the central directory's.",
    "§2.3",
    "ZIP_HEADER_MISMATCH",
)
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "local_crc", 0x12345678))


@case(
    "zip-hidden-member-overlap",
    "A member whose local header lies inside another member's data (a hidden member).",
    "§2.1",
    "ZIP_OVERLAP",
)
def _():
    hidden = b"{}"
    lh = (
        b"PK\x03\x04"
        + struct.pack("<HHHHHIIIHH", 20, 0, 0, 0, 0x21, zlib.crc32(hidden), 2, 2, 6, 0)
        + b"hidden"
        + hidden
    )

    def edit(es):
        d = by_name(es, "data.json")
        d.data = lh
        # offset of data.json's data: mimetype member (30+8+29) + data.json header (30+9)
        es.insert(2, Entry("hidden", hidden, in_local=False, offset=30 + 8 + 29 + 30 + 9, crc=zlib.crc32(hidden)))

    return entries_edit(edit)


@case(
    "zip-member-runs-into-directory",
    "A last member whose size (in both headers) runs into the central directory.",
    "§2.1",
    "ZIP_OVERLAP",
)
def _():
    def edit(es):
        m = es[-1]
        m.central_csize = m.central_usize = m.local_size = len(m.data) + 10

    return entries_edit(edit)


@case("zip-gap-before-member", "Unaccounted bytes between two members.", "§2.1", "ZIP_GAP")
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "gap_before", b"\0" * 16))


@case(
    "zip-gap-before-directory",
    "Unaccounted bytes between the last member and the central directory.",
    "§2.1",
    "ZIP_GAP",
)
def _():
    def edit(es):
        es.append(Entry("junk", b"ghost", in_central=False))

    return entries_edit(edit)


@case("zip-gap-before-end-record", "Bytes between the central directory and the end record.", "§2.1", "ZIP_GAP")
def _():
    return entries_edit(lambda es: None, layout=Layout(cd_gap=b"\0" * 12))


@case(
    "zip-crc-wrong-data",
    "data.json whose CRC-32 (in both headers) does not match its bytes.",
    "§2.3",
    "ZIP_CRC_MISMATCH",
)
def _():
    return entries_edit(lambda es: setattr(by_name(es, "data.json"), "crc", 0xDEADBEEF))


@case(
    "zip-crc-wrong-tensor",
    "A tensor member with one flipped byte: its CRC-32 no longer matches (a deferred check).",
    ["§2.3", "§11.1"],
    "ZIP_CRC_MISMATCH",
)
def _():
    groups = {"policy": st_group(POLICY)}

    def edit(es):
        e = by_name(es, "tensors/policy.safetensors")
        e.crc = zlib.crc32(e.data)
        b = bytearray(e.data)
        b[-1] ^= 0x40
        e.data = bytes(b)

    return entries_edit(edit, groups)


def _set(e: Entry, **fields) -> None:
    for k, v in fields.items():
        setattr(e, k, v)


S_IFLNK, S_IFDIR, S_IFCHR = 0o120000, 0o040000, 0o020000
LINK_TARGET = b"/etc/passwd"


@case(
    "zip-made-by-host-atari-symlink",
    "A member whose 'version made by' names host 5 (Atari ST) with a symbolic-link mode and an absolute path as its data: Info-ZIP unzip extracts it as a link to that path.",
    "§2.7",
    "ZIP_VERSION_MADE_BY",
)
def _():
    return ext_archive(
        {"link": LINK_TARGET}, lambda es: _set(ext_member(es, "link"), made_by=0x051E, ext_attr=(S_IFLNK | 0o777) << 16)
    )


@case(
    "zip-made-by-host-ntfs-directory",
    "data.json in a record naming host 11 (NTFS to 7-Zip) with the MS-DOS directory bit: 7-Zip extracts it as a directory.",
    "§2.7",
    "ZIP_VERSION_MADE_BY",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), made_by=0x0B3F, ext_attr=0x10))


@case(
    "zip-version-needed-63",
    "data.json needing ZIP version 6.3 to extract (in both headers): Info-ZIP unzip refuses it.",
    "§2.7",
    "ZIP_VERSION_NEEDED",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), version=63))


@case(
    "zip-host-checked-before-version-needed",
    "data.json naming host 11 and needing version 6.3: the host system is checked first.",
    ["§2.2", "§2.7", "§11.1"],
    "ZIP_VERSION_MADE_BY",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), made_by=0x0B3F, version=63))


@case(
    "zip-attributes-unix-symlink",
    "A member with host 3 and a symbolic-link mode whose data is an absolute path: unzip, bsdtar and 7-Zip extract a link to that path.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return ext_archive(
        {"link": LINK_TARGET}, lambda es: _set(ext_member(es, "link"), made_by=0x031E, ext_attr=(S_IFLNK | 0o777) << 16)
    )


@case(
    "zip-attributes-unix-directory",
    "data.json with host 3 and a directory mode: bsdtar and 7-Zip extract a directory.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), made_by=0x031E, ext_attr=(S_IFDIR | 0o755) << 16))


@case(
    "zip-attributes-unix-setuid",
    "A tensor member with host 3 and the mode 0o104755 (set-user-ID): bsdtar run as root keeps the bit.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(
        lambda es: _set(by_name(es, "tensors/policy.safetensors"), made_by=0x031E, ext_attr=0o104755 << 16),
        {"policy": st_group(POLICY)},
    )


@case(
    "zip-attributes-unix-device",
    "An empty member with host 3 and a character-device mode: bsdtar run as root makes a device node.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return ext_archive(
        {"dev": b""}, lambda es: _set(ext_member(es, "dev"), made_by=0x031E, ext_attr=(S_IFCHR | 0o644) << 16)
    )


@case(
    "zip-attributes-unix-not-owner-readable",
    "data.json with host 3 and the mode 0o100044: every tool extracts a file its owner cannot read.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), made_by=0x031E, ext_attr=0o100044 << 16))


@case(
    "zip-attributes-dos-directory",
    "data.json with host 0 and the MS-DOS directory bit 0x10: bsdtar and 7-Zip extract a directory.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), ext_attr=0x10))


@case(
    "zip-attributes-dos-volume-label",
    "data.json with host 0 and the MS-DOS volume-label bit 0x08: Info-ZIP unzip does not extract it.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), ext_attr=0x08))


@case(
    "zip-attributes-dos-reparse-point",
    "data.json with host 0 and the Windows reparse-point bit 0x400: 7-Zip reports an error.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return entries_edit(lambda es: _set(by_name(es, "data.json"), ext_attr=0x400))


@case(
    "zip-attributes-dos-with-unix-symlink-mode",
    "A member with host 0, the read-only bit and a symbolic-link Unix mode (0o120444) in the upper half, its data an absolute path: Info-ZIP unzip and 7-Zip extract a link to that path.",
    "§2.7",
    "ZIP_ATTRIBUTES",
)
def _():
    return ext_archive(
        {"link": LINK_TARGET}, lambda es: _set(ext_member(es, "link"), ext_attr=((S_IFLNK | 0o444) << 16) | 0x01)
    )


@case(
    "zip-name-file-and-directory",
    "Members extensions/ACME_files/d and extensions/ACME_files/d/f: extracted, d would be a file and a directory at once.",
    "§2.2",
    "ZIP_NAME_DIRECTORY_CLASH",
)
def _():
    return ext_archive({"d": b"file\n", "d/f": b"inner\n"})


@case(
    "zip-name-file-and-directory-ignoring-case",
    "Members extensions/ACME_files/D and extensions/ACME_files/d/f: on a file system that ignores case, D would be a file and a directory at once.",
    "§2.2",
    "ZIP_NAME_DIRECTORY_CLASH",
)
def _():
    return ext_archive({"D": b"file\n", "d/f": b"inner\n"})


@case(
    "zip-case-collision-before-directory-clash",
    "Members data.json and DATA.json, and extensions/ACME_files/d beside extensions/ACME_files/d/f: case collisions are checked before file/directory clashes.",
    ["§2.2", "§11.1"],
    "ZIP_NAME_CASE_COLLISION",
)
def _():
    return ext_archive({"d": b"file\n", "d/f": b"inner\n"}, lambda es: es.insert(2, Entry("DATA.json", b'{"data":{}}')))


@case("too-many-members", "An end record announcing 5000 members.", ["§2.2", "§15"], "LIMIT_EXCEEDED")
def _():
    return entries_edit(lambda es: None, layout=Layout(eocd_count=5000, eocd_count_disk=5000))


# ======================================================================= invalid: layout and manifest


@case("member-missing-data-json", "An archive without data.json.", "§4", "MEMBER_REQUIRED_MISSING")
def _():
    def edit(es):
        es.remove(by_name(es, "data.json"))

    return entries_edit(edit)


@case("member-missing-manifest", "An archive without manifest.json.", "§4", "MEMBER_REQUIRED_MISSING")
def _():
    return entries_edit(lambda es: es.pop())


@case("member-unexpected-name", "A member outside the archive layout (notes.txt).", "§4", "MEMBER_UNEXPECTED")
def _():
    return archive({"data": {}}, extra_members={"notes.txt": b"hi"})


@case("member-unexpected-nested-tensor", "A safetensors member in a sub-folder of tensors/.", "§4", "MEMBER_UNEXPECTED")
def _():
    return archive({"data": {}}, extra_members={"tensors/a/b.safetensors": st_group({})})


@case(
    "member-unexpected-dot-group",
    "A tensor member named tensors/..safetensors: its group '.' is not a name segment.",
    ["§4", "§2.4"],
    "MEMBER_UNEXPECTED",
)
def _():
    return archive({"data": {}}, extra_members={"tensors/..safetensors": st_group({})})


@case(
    "member-undeclared-extension",
    "A member under extensions/ for an extension not in extensions_used.",
    ["§4", "§5.4"],
    "MEMBER_UNEXPECTED",
)
def _():
    return archive({"data": {}}, extra_members={"extensions/ACME_x/a.bin": b"x"})


@case("manifest-not-object", "A manifest whose value is an array.", "§5.1", "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_raw=b"[]")


@case("manifest-missing-producer", "A manifest without producer.", "§5.1", "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.pop("producer") and None)


@case("manifest-wrong-format", "A manifest whose format is not 'rlarchive'.", "§5.1", "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.update(format="sb3"))


@case("manifest-bad-version-string", "A format_version that is not MAJOR.MINOR.", "§5.2", "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.update(format_version="1.0.0"))


@case("manifest-member-listed-twice", "A manifest listing data.json twice.", "§5.3", "MANIFEST_INVALID")
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m["members"].append(dict(m["members"][0])))


@case("manifest-lists-mimetype", "A manifest listing the mimetype member.", "§5.3", "MANIFEST_INVALID")
def _():
    return archive(
        {"data": {}},
        manifest_patch=lambda m: m["members"].append({"name": "mimetype", "size": 29, "sha256": sha(MEDIA_TYPE)}),
    )


@case("manifest-digest-uppercase", "A digest written in upper-case hex.", "§5.3", "MANIFEST_INVALID")
def _():
    def patch(m):
        m["members"][0]["sha256"] = m["members"][0]["sha256"].upper()

    return archive({"data": {}}, manifest_patch=patch)


@case(
    "manifest-digest-trailing-newline",
    "A digest followed by a newline (JSON Schema patterns follow ECMA-262: '$' is the very end).",
    "§5.3",
    "MANIFEST_INVALID",
)
def _():
    def patch(m):
        m["members"][0]["sha256"] += "\n"

    return archive({"data": {}}, manifest_patch=patch)


@case(
    "version-from-the-future",
    "Format version 2.0 with a manifest structure 1.0 does not know: rejected by major version before anything else.",
    "§5.2",
    "VERSION_UNSUPPORTED",
)
def _():
    return archive(
        {"data": {}},
        manifest_raw=jsonstrict.dumps({"format": "rlarchive", "format_version": "2.0", "parts": {"anything": True}}),
    )


@case(
    "extension-required-not-used",
    "extensions_required names an extension missing from extensions_used.",
    "§5.4",
    "EXTENSION_UNDECLARED",
)
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.update(extensions_required=["ACME_x"]))


@case(
    "extension-data-not-used",
    "extensions holds data for an extension missing from extensions_used.",
    "§5.4",
    "EXTENSION_UNDECLARED",
)
def _():
    return archive({"data": {}}, manifest_patch=lambda m: m.update(extensions={"ACME_x": {}}))


@case(
    "extension-required-unsupported",
    "A required extension this reader does not support.",
    "§5.4",
    "EXTENSION_UNSUPPORTED",
)
def _():
    return archive(
        {"data": {}},
        manifest_patch=lambda m: m.update(extensions_used=["ACME_magic"], extensions_required=["ACME_magic"]),
    )


@case("member-unlisted", "A tensor member missing from the manifest.", "§5.3", "MEMBER_UNLISTED")
def _():
    return archive({"data": {}}, {"policy": st_group(POLICY)}, unlisted=("tensors/policy.safetensors",))


@case("member-listed-missing", "A manifest listing a tensor member the archive lacks.", "§5.3", "MEMBER_MISSING")
def _():
    return archive(
        {"data": {}},
        manifest_patch=lambda m: m["members"].append(
            {"name": "tensors/ghost.safetensors", "size": 8, "sha256": "0" * 64}
        ),
    )


@case("member-size-mismatch", "A manifest giving data.json the wrong size.", "§5.3", "MEMBER_SIZE_MISMATCH")
def _():
    def patch(m):
        m["members"][0]["size"] += 1

    return archive({"data": {}}, manifest_patch=patch)


@case("member-digest-mismatch-data", "A manifest giving data.json the wrong SHA-256.", "§5.3", "MEMBER_DIGEST_MISMATCH")
def _():
    def patch(m):
        m["members"][0]["sha256"] = "0" * 64

    return archive({"data": {}}, manifest_patch=patch)


@case(
    "member-digest-mismatch-tensor",
    "A tensor member changed after the manifest was written (CRC-32 recomputed): digest mismatch, a deferred check.",
    ["§5.3", "§11.1"],
    "MEMBER_DIGEST_MISMATCH",
)
def _():
    good = st_group(POLICY)
    bad = bytearray(good)
    bad[-1] ^= 0x01

    def patch(m):
        for e in m["members"]:
            if e["name"] == "tensors/policy.safetensors":
                e["sha256"] = sha(good)

    return archive({"data": {}}, {"policy": bytes(bad)}, manifest_patch=patch)


# ======================================================================= invalid: JSON dialect


def _data_raw(raw: bytes) -> bytes:
    return archive(raw)


@case("json-bom", "data.json beginning with a UTF-8 byte order mark.", "§6", "JSON_BOM")
def _():
    return _data_raw(b'\xef\xbb\xbf{"data":{}}')


@case("json-invalid-utf8", "data.json holding the byte 0xFF.", "§6", "JSON_UTF8")
def _():
    return _data_raw(b'{"data":{"x":"\xff"}}')


@case("json-overlong-utf8", "data.json holding an overlong UTF-8 encoding of '/'.", "§6", "JSON_UTF8")
def _():
    return _data_raw(b'{"data":{"x":"\xc0\xaf"}}')


@case("json-encoded-surrogate", "data.json holding a UTF-8-encoded surrogate (CESU-style).", "§6", "JSON_UTF8")
def _():
    return _data_raw(b'{"data":{"x":"\xed\xa0\x80"}}')


@case("json-lone-surrogate-escape", "data.json whose string escapes a lone high surrogate.", "§6", "JSON_UTF8")
def _():
    return _data_raw(b'{"data":{"x":"\\ud800"}}')


@case("json-too-deep", "data.json nested 65 levels deep.", "§6", "JSON_DEPTH")
def _():
    return _data_raw(b'{"data":{"x":' + b"[" * 63 + b"]" * 63 + b"}}")


@case("json-syntax-trailing-comma", "data.json with a trailing comma.", "§6", "JSON_SYNTAX")
def _():
    return _data_raw(b'{"data":{"x":[1,2,]}}')


@case("json-syntax-single-quotes", "data.json with single-quoted strings.", "§6", "JSON_SYNTAX")
def _():
    return _data_raw(b"{'data':{}}")


@case(
    "json-nan-literal", "data.json holding the literal NaN (as Python's json.dumps writes).", "§6", "JSON_NAN_LITERAL"
)
def _():
    return _data_raw(b'{"data":{"x":NaN}}')


@case("json-infinity-literal", "data.json holding the literal -Infinity.", "§6", "JSON_NAN_LITERAL")
def _():
    return _data_raw(b'{"data":{"x":-Infinity}}')


@case("json-duplicate-key", "data.json with a key twice in one object.", "§6", "JSON_DUPLICATE_KEY")
def _():
    return _data_raw(b'{"data":{"gamma":0.9,"gamma":0.99}}')


@case(
    "json-duplicate-key-escaped",
    "Duplicate keys that differ only in escaping ('a' and '\\u0061').",
    "§6",
    "JSON_DUPLICATE_KEY",
)
def _():
    return _data_raw(b'{"data":{"a":1,"\\u0061":2}}')


@case(
    "json-integer-beyond-2-53",
    "A plain integer literal 2^53, which JavaScript would round.",
    "§6",
    "JSON_INTEGER_RANGE",
)
def _():
    return _data_raw(b'{"data":{"start_time":9007199254740993}}')


@case("json-float-overflow", "A float literal that overflows binary64 (1e400).", "§6", "JSON_NUMBER_RANGE")
def _():
    return _data_raw(b'{"data":{"x":1e400}}')


@case(
    "json-too-large",
    "A data.json of 64 MiB plus one byte (stored gzipped in this folder; the harness expands it).",
    ["§6", "§15"],
    "JSON_TOO_LARGE",
    gzip=True,
)
def _():
    body = b'{"data":{}}'
    return _data_raw(body + b" " * (64 * 1024 * 1024 + 1 - len(body)))


@case(
    "manifest-json-duplicate-key",
    "A manifest with a duplicate key: the JSON rules apply to every member.",
    ["§6", "§5"],
    "JSON_DUPLICATE_KEY",
)
def _():
    es = standard_entries(jsonstrict.dumps({"data": {}}))
    m = es[-1]
    m.data = m.data[:-1] + b',"format":"rlarchive"}'
    return assemble(es)


# ======================================================================= invalid: data document and values


@case("data-not-object", "data.json whose value is an array.", "§7.1", "DATA_INVALID")
def _():
    return _data_raw(b"[]")


@case("data-missing-data", "data.json without the data member.", "§7.1", "DATA_INVALID")
def _():
    return _data_raw(b'{"optimizers":{}}')


@case("data-optimizers-not-object", "data.json whose optimizers member is an array.", "§7.1", "DATA_INVALID")
def _():
    return _data_raw(b'{"data":{},"optimizers":[]}')


@case("value-unknown-type", "A tagged value with an unknown $type.", "§7.2", "VALUE_UNKNOWN_TYPE")
def _():
    return with_value({"$type": "complex", "re": 1, "im": 2})


@case("value-type-not-string", "A $type member that is not a string.", "§7.2", "VALUE_UNKNOWN_TYPE")
def _():
    return with_value({"$type": 1})


@case("value-float-finite-tagged", "A float tag holding a finite number.", "§7.3", "VALUE_INVALID")
def _():
    return with_value({"$type": "float", "value": "1.5"})


@case(
    "value-int-tag-in-safe-range", "An int tag for an integer that fits a plain JSON number.", "§7.3", "VALUE_INVALID"
)
def _():
    return with_value({"$type": "int", "value": "42"})


@case("value-int-tag-leading-zero", "An int tag with a leading zero.", "§7.3", "VALUE_INVALID")
def _():
    return with_value({"$type": "int", "value": "09007199254740993"})


@case("value-int-too-many-digits", "An int tag of 4097 digits.", ["§7.3", "§15"], "LIMIT_EXCEEDED")
def _():
    return with_value({"$type": "int", "value": "9" * 4097})


@case(
    "value-bytes-noncanonical-base64",
    "Base64 with non-zero pad bits ('QR==' instead of 'QQ==').",
    "§7.4",
    "VALUE_INVALID",
)
def _():
    return with_value({"$type": "bytes", "base64": "QR=="})


@case("value-bytes-base64-whitespace", "Base64 with a line break.", "§7.4", "VALUE_INVALID")
def _():
    return with_value({"$type": "bytes", "base64": "QUJD\nREVG"})


@case("value-tuple-extra-member", "A tuple tag with a member it does not define.", "§7.4", "VALUE_INVALID")
def _():
    return with_value({"$type": "tuple", "items": [], "len": 0})


@case("value-dict-tag-string-keys", "A dict tag used for a map that plain JSON can carry.", "§7.5", "VALUE_INVALID")
def _():
    return with_value({"$type": "dict", "entries": [["a", 1], ["b", 2]]})


@case("value-dict-key-unhashable", "A dict key that is a list.", "§7.5", "VALUE_INVALID")
def _():
    return with_value({"$type": "dict", "entries": [[[1], "a"]]})


@case("value-dict-key-nan", "A dict key that is NaN.", "§7.5", "VALUE_INVALID")
def _():
    return with_value({"$type": "dict", "entries": [[{"$type": "float", "value": "nan"}, "a"]]})


@case("value-dict-duplicate-int-float", "dict keys 1 and 1.0, equal by numeric value.", "§7.5", "VALUE_DUPLICATE_KEY")
def _():
    return with_value({"$type": "dict", "entries": [[1, "a"], [1.0, "b"]]})


@case("value-dict-duplicate-bool-int", "dict keys true and 1, equal by numeric value.", "§7.5", "VALUE_DUPLICATE_KEY")
def _():
    return with_value({"$type": "dict", "entries": [[True, "a"], [1, "b"]]})


@case("value-ndarray-both-forms", "An ndarray with both base64 and ref.", "§7.6", "VALUE_INVALID")
def _():
    return with_value(
        {"$type": "ndarray", "dtype": "U8", "shape": [1], "base64": "AA==", "ref": {"group": "g", "name": "n"}}
    )


@case("value-ndarray-bad-dtype", "An ndarray with dtype 'float32' (not a dtype code).", "§7.6", "VALUE_INVALID")
def _():
    return with_value({"$type": "ndarray", "dtype": "float32", "shape": [1], "base64": "AAAAAA=="})


@case("value-ndarray-too-many-dims", "An ndarray of 33 dimensions.", ["§7.6", "§15"], "LIMIT_EXCEEDED")
def _():
    return with_value({"$type": "ndarray", "dtype": "U8", "shape": [1] * 33, "base64": "AA=="})


@case("value-ndarray-inline-too-large", "An inline array of 65,537 bytes.", ["§7.6", "§15"], "LIMIT_EXCEEDED")
def _():
    return with_value(nd("U8", [65537], b"\0" * 65537))


@case("array-size-mismatch", "An inline F32 array of shape [3] holding 8 bytes.", "§7.6", "ARRAY_SIZE_MISMATCH")
def _():
    return with_value(nd("F32", [3], b"\0" * 8))


@case("scalar-size-mismatch", "An F64 scalar holding 4 bytes.", "§7.6", "ARRAY_SIZE_MISMATCH")
def _():
    return with_value({"$type": "scalar", "dtype": "F64", "base64": b64(b"\0" * 4)})


@case("value-class-bad-module", "A class reference whose module is not dotted identifiers.", "§7.8", "VALUE_INVALID")
def _():
    return with_value({"$type": "class", "module": "os; import sys", "qualname": "system"})


@case("value-opaque-wrong-format", "An opaque value whose format is not 'pickle'.", "§7.8", "VALUE_INVALID")
def _():
    return with_value({"$type": "opaque", "format": "cloudpickle", "base64": "gARO"})


def _space(**kw) -> dict:
    return {"$type": "space", **kw}


@case("space-missing-member", "A discrete space without start.", "§8", "VALUE_INVALID")
def _():
    return with_value(_space(kind="discrete", n=3, dtype="I64"))


@case("space-unknown-kind", "A space of kind 'graph'.", "§8", "VALUE_INVALID")
def _():
    return with_value(_space(kind="graph", nodes=3))


@case("space-discrete-n-zero", "A discrete space with n = 0.", "§8", "SPACE_INVALID")
def _():
    return with_value(_space(kind="discrete", n=0, start=0, dtype="I64"))


@case("space-box-shape-mismatch", "A box whose low bound has another shape.", "§8", "SPACE_INVALID")
def _():
    return with_value(
        _space(kind="box", dtype="F32", shape=[2], low=nd("F32", [1], b"\0" * 4), high=nd("F32", [2], b"\0" * 8))
    )


@case("space-multi-discrete-nvec-zero", "A multi_discrete space with a zero in nvec.", "§8", "SPACE_INVALID")
def _():
    return with_value(
        _space(
            kind="multi_discrete",
            dtype="I64",
            nvec=nd("I64", [2], np.array([3, 0], "<i8").tobytes()),
            start=nd("I64", [2], b"\0" * 16),
        )
    )


@case("space-text-charset-unsorted", "A text space whose charset is not in ascending order.", "§8", "SPACE_INVALID")
def _():
    return with_value(_space(kind="text", min_length=0, max_length=4, charset="ba"))


@case("space-dict-duplicate-key", "A dict space with a key twice.", "§8", "SPACE_INVALID")
def _():
    d = _space(kind="discrete", n=2, start=0, dtype="I64")
    return with_value(_space(kind="dict", spaces=[["a", d], ["a", d]]))


@case("schedule-linear-end-fraction-zero", "A linear schedule with end_fraction 0.", "§9", "SCHEDULE_INVALID")
def _():
    return with_value({"$type": "schedule", "kind": "linear", "start": 1.0, "end": 0.0, "end_fraction": 0.0})


@case("schedule-piecewise-not-increasing", "A piecewise schedule whose points go backwards.", "§9", "SCHEDULE_INVALID")
def _():
    return with_value(
        {"$type": "schedule", "kind": "piecewise", "points": [[0.5, 1.0], [0.2, 0.0]], "interpolation": "linear"}
    )


@case("schedule-value-tagged", "A constant schedule whose value is a tagged float.", "§9", "VALUE_INVALID")
def _():
    return with_value({"$type": "schedule", "kind": "constant", "value": {"$type": "float", "value": "nan"}})


def _ref(group="arrays", name="a", dtype="F32", shape=(4,)) -> dict:
    return {"$type": "ndarray", "dtype": dtype, "shape": list(shape), "ref": {"group": group, "name": name}}


@case("ref-missing-group", "A reference to a tensor group that does not exist.", "§7.6", "REF_NOT_FOUND")
def _():
    return with_value(_ref(group="nowhere"))


@case("ref-missing-tensor", "A reference to a tensor missing from an existing group.", "§7.6", "REF_NOT_FOUND")
def _():
    return with_value(_ref(name="b"), {"arrays": st_group({"a": np.zeros(4, np.float32)})})


@case("ref-dtype-mismatch", "A reference whose dtype differs from the tensor's.", "§7.6", "REF_MISMATCH")
def _():
    return with_value(_ref(dtype="F64"), {"arrays": st_group({"a": np.zeros(4, np.float32)})})


@case("ref-shape-mismatch", "A reference whose shape differs from the tensor's.", "§7.6", "REF_MISMATCH")
def _():
    return with_value(_ref(shape=(2, 2)), {"arrays": st_group({"a": np.zeros(4, np.float32)})})


# ======================================================================= invalid: safetensors


def _group(member: bytes) -> bytes:
    return archive({"data": {}}, {"policy": member})


def _entry(dtype, shape, begin, end) -> dict:
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


@case("st-shorter-than-8-bytes", "A safetensors member of 4 bytes.", "§10.2", "ST_TRUNCATED")
def _():
    return _group(b"\x10\0\0\0")


@case("st-header-past-member", "A header length larger than the member.", "§10.2", "ST_TRUNCATED")
def _():
    return _group(struct.pack("<Q", 1000) + b"{}")


@case("st-header-too-large", "A header length of 2^40 bytes.", ["§10.2", "§15"], "ST_HEADER_TOO_LARGE")
def _():
    return _group(struct.pack("<Q", 1 << 40) + b"{}")


@case("st-metadata", "A header with __metadata__, which this profile forbids.", "§10.2", "ST_HEADER_INVALID")
def _():
    return _group(st_raw({"__metadata__": {"format": "pt"}}, b""))


@case("st-header-leading-space", "A header that begins with a space.", "§10.2", "ST_HEADER_INVALID")
def _():
    return _group(st_raw(b" {}", b""))


@case("st-header-newline-padding", "A header padded with newlines instead of spaces.", "§10.2", "ST_HEADER_INVALID")
def _():
    h = b"{}" + b"\n" * 54
    return _group(struct.pack("<Q", len(h)) + h)


@case("st-entry-missing-offsets", "A tensor entry without data_offsets.", "§10.2", "ST_HEADER_INVALID")
def _():
    return _group(st_raw({"w": {"dtype": "F32", "shape": [1]}}, b"\0" * 4))


@case("st-name-reserved", "A tensor named '__x'.", "§10.2", "ST_HEADER_INVALID")
def _():
    return _group(st_raw({"__x": _entry("U8", [1], 0, 1)}, b"\0"))


@case("st-header-duplicate-key", "A header naming the same tensor twice.", ["§10.2", "§6"], "JSON_DUPLICATE_KEY")
def _():
    e = json.dumps(_entry("U8", [1], 0, 1))
    return _group(st_raw(f'{{"w":{e},"w":{e}}}'.encode(), b"\0"))


@case("st-dtype-unknown", "A tensor of dtype F4 (sub-byte, not in this profile).", "§10.1", "ST_DTYPE_UNKNOWN")
def _():
    return _group(st_raw({"w": _entry("F4", [2], 0, 1)}, b"\0"))


@case("st-too-many-dims", "A tensor of 33 dimensions.", ["§10.2", "§15"], "LIMIT_EXCEEDED")
def _():
    return _group(st_raw({"w": _entry("U8", [1] * 33, 0, 1)}, b"\0"))


@case("st-offsets-reversed", "A tensor whose end offset precedes its begin.", "§10.2", "ST_OFFSETS_INVALID")
def _():
    return _group(st_raw({"w": _entry("U8", [0], 4, 0)}, b"\0" * 4))


@case("st-offsets-past-buffer", "A tensor ending beyond the data buffer.", "§10.2", "ST_OFFSETS_INVALID")
def _():
    return _group(st_raw({"w": _entry("U8", [8], 0, 8)}, b"\0" * 4))


@case("st-shape-mismatch", "A tensor whose byte range does not hold its shape.", "§10.2", "ST_SHAPE_MISMATCH")
def _():
    return _group(st_raw({"w": _entry("F32", [3], 0, 8)}, b"\0" * 8))


@case("st-hole", "Unused bytes between two tensors.", "§10.2", "ST_HOLE")
def _():
    return _group(st_raw({"a": _entry("F32", [1], 0, 4), "b": _entry("F32", [1], 8, 12)}, b"\0" * 12))


@case("st-hole-at-start", "A first tensor that does not begin at 0.", "§10.2", "ST_HOLE")
def _():
    return _group(st_raw({"a": _entry("F32", [1], 4, 8)}, b"\0" * 8))


@case("st-overlap", "Two tensors sharing bytes.", "§10.2", "ST_OVERLAP")
def _():
    return _group(st_raw({"a": _entry("F32", [2], 0, 8), "b": _entry("F32", [1], 4, 8)}, b"\0" * 8))


@case("st-trailing-bytes", "Bytes after the last tensor.", "§10.2", "ST_TRAILING_BYTES")
def _():
    return _group(st_raw({"a": _entry("F32", [1], 0, 4)}, b"\0" * 8))


@case(
    "st-misaligned",
    "An F64 tensor starting 4 bytes into the buffer (after a U8 tensor): not a multiple of 8 in the file.",
    "§10.2",
    "ST_MISALIGNED",
)
def _():
    return _group(st_raw({"a": _entry("U8", [4], 0, 4), "b": _entry("F64", [1], 4, 12)}, b"\0" * 12))


@case(
    "st-misaligned-header",
    "A header not padded to the alignment, so an F32 tensor starts at an odd offset.",
    "§10.2",
    "ST_MISALIGNED",
)
def _():
    h = json.dumps({"a": _entry("F32", [1], 0, 4)}, separators=(",", ":")).encode()
    h += b" " * ((1 - (8 + len(h))) % 4)  # 8 + N = 1 (mod 4): the tensor starts at an odd offset
    return _group(st_raw(h, b"\0" * 4, pad=False))


def build_bytes(c: Case) -> bytes:
    """The bytes of a case's file as stored (gzipped when the case says so)."""
    raw = c.build()
    return gzip.compress(raw, compresslevel=9, mtime=0) if c.gzip else raw


# ======================================================================= found by the property tests and the fuzzing campaign (tests/fuzz)


@case(
    "data-property-named-type",
    "data and optimizers are maps of names to values, not values: properties named '$type', 'kind' or 'value' are plain names there (the Python reader used to check the data map itself as a tagged value).",
    ["§7.1", "§7.2"],
)
def _():
    return archive(
        {
            "data": {"$type": "space", "kind": "graph", "value": {"$type": "float", "value": "nan"}},
            "optimizers": {"$type": "opaque"},
        }
    )


@case(
    "json-lone-surrogate-in-dropped-duplicate",
    "A lone surrogate escaped in the first of two duplicate keys' values: rule 6 (JSON_UTF8) comes before rule 7 (JSON_DUPLICATE_KEY) even though a parser keeping the last duplicate drops that value.",
    "§6",
    "JSON_UTF8",
)
def _():
    return _data_raw(b'{"data":{"a":"\\ud800","a":1}}')


def _past_end(edit_more=None) -> bytes:
    def edit(es):
        m = by_name(es, "data.json")
        m.central_csize = m.central_usize = m.local_size = (
            len(m.data) + 4096
        )  # both headers agree; the data would end past the file
        if edit_more:
            edit_more(es)

    return entries_edit(edit)


@case(
    "zip-member-data-past-end-of-file",
    "A member whose size (in both headers) runs past the end of the file: the layout check reports it as ZIP_OVERLAP (it runs into the central directory), not ZIP_TRUNCATED.",
    ["§2.1", "§11.1"],
    "ZIP_OVERLAP",
)
def _():
    return _past_end()


@case(
    "zip-member-past-end-then-bad-local-header",
    "A member running past the end of the file, and a later member's local header with a bad signature: every local header is checked before the layout.",
    ["§2.3", "§11.1"],
    "ZIP_LOCAL_HEADER_INVALID",
)
def _():
    return _past_end(lambda es: setattr(es[-1], "local_sig", b"PK\x03\x05"))


@case(
    "zip64-entry-counts-differ-above-2-53",
    "A ZIP64 end record whose per-disk and total entry counts are 2^60 and 2^60 + 1: they differ (ZIP_MULTI_DISK, checked before MAX_MEMBERS) although they are equal once rounded to binary64.",
    ["§2.1", "§2.6", "§11.1"],
    "ZIP_MULTI_DISK",
)
def _():
    return entries_edit(lambda es: None, layout=Layout(zip64_eocd=True, eocd_count_disk=2**60, eocd_count=2**60 + 1))


@case(
    "zip64-sizes-differ-above-2-53",
    "A central record whose ZIP64 uncompressed and compressed sizes are 2^60 and 2^60 + 1: they differ (ZIP_CD_INVALID) although they are equal once rounded to binary64.",
    ["§2.2", "§2.6"],
    "ZIP_CD_INVALID",
)
def _():
    def edit(es):
        m = by_name(es, "data.json")
        m.zip64 = True
        m.central_usize, m.central_csize = 2**60, 2**60 + 1

    return entries_edit(edit)


@case(
    "value-ndarray-base64-astral-characters",
    "An inline base64 string of 43,693 astral characters: 43,693 code points (87,386 UTF-16 units, 174,772 UTF-8 bytes), within the 87,384 the length check allows, so the error is the base64 form (VALUE_INVALID), not LIMIT_EXCEEDED (stored gzipped in this folder).",
    ["§7.6", "§15"],
    "VALUE_INVALID",
    gzip=True,
)
def _():
    return with_value({"$type": "ndarray", "dtype": "U8", "shape": [1], "base64": "\U0001f600" * 43693})


# ======================================================================= the extensions this specification defines

# the order of these imports registers the cases: it is the order of index.json
# isort: off
import cases_decisions  # noqa: E402,F401  (registers its cases after these)
import cases_from_reader_js  # noqa: E402,F401
import cases_extensions  # noqa: E402,F401
import cases_locations  # noqa: E402,F401
import cases_locations_zip  # noqa: E402,F401
import cases_locations_docs  # noqa: E402,F401
import cases_locations_ext  # noqa: E402,F401
import cases_locations_policy  # noqa: E402,F401
import cases_policy  # noqa: E402,F401
import cases_policy_limits  # noqa: E402,F401
import cases_policy_numerics  # noqa: E402,F401
import cases_training  # noqa: E402,F401
import cases_training_random  # noqa: E402,F401
import cases_replay_buffer  # noqa: E402,F401
import cases_requests  # noqa: E402,F401
import cases_vec_normalize_returns  # noqa: E402,F401
import cases_parts  # noqa: E402,F401
import cases_param_tensors  # noqa: E402,F401
# isort: on
