"""The valid golden cases: archives the reference writer makes, one per feature the dump must show."""

from __future__ import annotations

import json

import numpy as np
from cases import POLICY, archive, by_name, case, entries_edit, ext_archive, ext_member, policy_archive, saved, st_raw
from sites import doc

import rlarchive
from rlarchive import spaces as sp


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
