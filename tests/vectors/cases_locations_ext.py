"""Cases that pin the location of an issue (spec §11.2) in the extensions, and what a validator still checks after a failure."""

from __future__ import annotations

import numpy as np
from cases import archive, case, nd, st_group, st_raw
from cases_extensions import _box, _json_stats, _json_vn, _raw_vn, _spaces
from cases_training import _edit
from cases_training import _raw as _raw_tr
from sites import doc, in_member, site

from rlarchive import jsonstrict
from rlarchive import spaces as sp
from rlarchive.extensions.training import EXTENSION as TR
from rlarchive.extensions.training import MEMBER as TR_MEMBER
from rlarchive.extensions.vec_normalize import EXTENSION as VN
from rlarchive.extensions.vec_normalize import MEMBER as VN_MEMBER

EXT = "extension-document"
VN_SPEC = ["RLA_vec_normalize §3", "RLA_vec_normalize §5", "§11.2"]
TR_SPEC = ["RLA_training §3", "RLA_training §5", "§11.2"]
AFTER = ["§11.1", "§14"]


def _vn_at(pointer: str, by: str):
    return doc(pointer, by, VN_MEMBER)


def _tr_at(pointer: str, by: str):
    return doc(pointer, by, TR_MEMBER)


def _vn_case(id: str, description: str, value, data=None, *, pointer: str, by: str) -> None:
    case(id, description, VN_SPEC, "EXTENSION_INVALID", extensions=[VN], check=EXT, at=_vn_at(pointer, by))(
        lambda: _raw_vn(value, data)
    )


def _dict_space(*keys):
    return _spaces(sp.Dict(tuple((k, _box((2,))) for k in keys)))


# ------------------------------------------------------------------ RLA_vec_normalize (G1-G7)

_vn_case(
    "loc-ext-vn-table-order",
    "clip_obs is a string and training the integer 1: the members are checked in the order of §3's table (clip_obs before training), so EXTENSION_INVALID at /vec_normalize/clip_obs.",
    _json_vn(clip_obs="10", training=1),
    pointer="/vec_normalize/clip_obs",
    by="value",
)
_vn_case(
    "loc-ext-vn-obs-before-ret",
    "The return statistics are 1-dimensional and the observation mean is F32: obs comes before ret in §3's table, so at /vec_normalize/obs/mean.",
    _json_vn(ret=_json_stats((1,)), obs=_json_stats(mean=nd("F32", [3], bytes(12)))),
    pointer="/vec_normalize/obs/mean",
    by="value",
)
_vn_case(
    "loc-ext-vn-obs-null-norm-obs",
    "obs is null while norm_obs is true: obs contradicts norm_obs, listed before it in §3's table, so at /vec_normalize/obs (never /norm_obs).",
    _json_vn(obs=None),
    pointer="/vec_normalize/obs",
    by="contradiction",
)
_vn_case(
    "loc-ext-vn-obs-null-with-keys",
    "obs is null (norm_obs false) but obs_keys is a list: obs_keys contradicts obs, listed before it, so at /vec_normalize/obs_keys.",
    _json_vn(norm_obs=False, obs=None, obs_keys=["a"]),
    pointer="/vec_normalize/obs_keys",
    by="contradiction",
)
_vn_case(
    "loc-ext-vn-stats-order",
    "Observation statistics whose var is F32 and whose count is a string: STATS is checked in the order mean, var, count, so at /vec_normalize/obs/var.",
    _json_vn(obs=_json_stats(var=nd("F32", [3], bytes(12)), count="n")),
    pointer="/vec_normalize/obs/var",
    by="value",
)
_vn_case(
    "loc-ext-vn-box-shape",
    "One set of statistics of shape [4] for a Box observation space of shape [3]: at the statistics' mean, /vec_normalize/obs/mean.",
    _json_vn(obs=_json_stats((4,))),
    pointer="/vec_normalize/obs/mean",
    by="value",
)
_vn_case(
    "loc-ext-vn-dict-space-keys-null",
    "One set of statistics (obs_keys null) for a Dict observation space: at /vec_normalize/obs_keys, the member that must list the keys.",
    _json_vn(obs=_json_stats((2,))),
    _dict_space("a"),
    pointer="/vec_normalize/obs_keys",
    by="value",
)
_vn_case(
    "loc-ext-vn-key-not-in-space",
    "obs_keys [a, c] for a Dict space of keys a and b: the element at fault, /vec_normalize/obs_keys/1 (never the list).",
    _json_vn(obs={"a": _json_stats((2,)), "c": _json_stats((2,))}, obs_keys=["a", "c"]),
    _dict_space("a", "b"),
    pointer="/vec_normalize/obs_keys/1",
    by="element",
)
_vn_case(
    "loc-ext-vn-key-not-string",
    "obs_keys [1]: the element that is not a string, /vec_normalize/obs_keys/0.",
    _json_vn(obs={"a": _json_stats((2,))}, obs_keys=[1]),
    _dict_space("a"),
    pointer="/vec_normalize/obs_keys/0",
    by="element",
)
_vn_case(
    "loc-ext-vn-key-repeated",
    "obs_keys [a, a]: the later of two values that must differ, /vec_normalize/obs_keys/1, before obs is compared with obs_keys.",
    _json_vn(obs={"a": _json_stats((2,))}, obs_keys=["a", "a"]),
    _dict_space("a"),
    pointer="/vec_normalize/obs_keys/1",
    by="later",
)
_vn_case(
    "loc-ext-vn-obs-key-extra",
    "obs_keys [a] and obs with keys a and b: b is a member not allowed in obs, so at /vec_normalize/obs/b.",
    _json_vn(obs={"a": _json_stats((2,)), "b": _json_stats((2,))}, obs_keys=["a"]),
    _dict_space("a", "b"),
    pointer="/vec_normalize/obs/b",
    by="not-allowed",
)
_vn_case(
    "loc-ext-vn-obs-key-missing",
    "obs_keys [a, b] and obs with the key a only: obs lacks a member it needs, so at the map /vec_normalize/obs.",
    _json_vn(obs={"a": _json_stats((2,))}, obs_keys=["a", "b"]),
    _dict_space("a", "b"),
    pointer="/vec_normalize/obs",
    by="missing",
)
_vn_case(
    "loc-ext-vn-stats-before-space",
    "obs_keys [c, a] for a Dict space of keys a and b, the statistics of a malformed (count a string): every key's statistics are checked before the keys are compared with the space, so at /vec_normalize/obs/a/count.",
    _json_vn(obs={"c": _json_stats((2,)), "a": _json_stats((2,), count="n")}, obs_keys=["c", "a"]),
    _dict_space("a", "b"),
    pointer="/vec_normalize/obs/a/count",
    by="value",
)
_vn_case(
    "loc-ext-vn-missing-and-extra",
    "The statistics lack epsilon and have an unknown key: a missing member locates the object (before a member not allowed), /vec_normalize.",
    {**{k: v for k, v in _json_vn().items() if k != "epsilon"}, "shift": 1.0},
    pointer="/vec_normalize",
    by="missing",
)


# ------------------------------------------------------------------ RLA_training (G1-G7)


def _tr_case(id: str, description: str, build, *, pointer: str, by: str) -> None:
    case(id, description, TR_SPEC, "EXTENSION_INVALID", extensions=[TR], check=EXT, at=_tr_at(pointer, by))(
        lambda: _raw_tr(build())
    )


_tr_case(
    "loc-ext-tr-starts-after-obs",
    "last_obs has 3 environments, last_episode_starts 2: last_episode_starts is listed after last_obs in §3's table and contradicts it, so at /training/last_episode_starts.",
    _edit(lambda v: None, last_obs=np.zeros((3, 3), np.float32)),
    pointer="/training/last_episode_starts",
    by="contradiction",
)
_tr_case(
    "loc-ext-tr-obs-own-rule-first",
    "last_obs is 0-dimensional and last_episode_starts is F32: last_obs's own rule (a first dimension) is checked in its turn, before last_episode_starts, so at /training/last_obs.",
    _edit(lambda v: None, last_obs=np.array(1.0, np.float32), last_episode_starts=np.zeros(2, np.float32)),
    pointer="/training/last_obs",
    by="value",
)
_tr_case(
    "loc-ext-tr-noise-table-order",
    "A normal action noise whose dtype is 'F16' and whose sigma is I32: the members are checked in the order of §3.4's table (mean, sigma, dtype), so at /training/action_noise/sigma.",
    _edit(lambda v: v["action_noise"].update(dtype="F16", sigma=nd("I32", [1], bytes(4)))),
    pointer="/training/action_noise/sigma",
    by="value",
)
_tr_case(
    "loc-ext-tr-noise-kind",
    "An action noise of the unknown kind 'pink': at the discriminator, /training/action_noise/kind.",
    _edit(lambda v: v["action_noise"].update(kind="pink")),
    pointer="/training/action_noise/kind",
    by="value",
)
_tr_case(
    "loc-ext-tr-window-items-first",
    "episode_success with maxlen 1 and the items [true, 0]: the items' own rules come before their count against maxlen, so at the element /training/episode_success/items/1.",
    _edit(lambda v: v.update(episode_success={"maxlen": 1, "items": [True, 0]})),
    pointer="/training/episode_success/items/1",
    by="element",
)
_tr_case(
    "loc-ext-tr-window-too-many",
    "episode_success with maxlen 1 and two booleans: items contradicts maxlen, listed before it, so at /training/episode_success/items.",
    _edit(lambda v: v.update(episode_success={"maxlen": 1, "items": [True, False]})),
    pointer="/training/episode_success/items",
    by="contradiction",
)
_tr_case(
    "loc-ext-tr-lstm-later-shape",
    "Recurrent states whose vf cell state has another shape than the three before it: at that later element, /training/lstm_states/vf/1.",
    _edit(
        lambda v: None,
        lstm_states={
            "pi": [np.zeros((1, 2, 4), np.float32)] * 2,
            "vf": [np.zeros((1, 2, 4), np.float32), np.zeros((1, 2, 5), np.float32)],
        },
    ),
    pointer="/training/lstm_states/vf/1",
    by="element",
)


# ------------------------------------------------------------------ what is checked after a failure (S1-S3)

VN_GROUP = "tensors/RLA_vec_normalize.safetensors"


def _vn_document(value) -> bytes:
    return jsonstrict.dumps({"vec_normalize": value})


def _vn_manifest(m):
    m.update(extensions_used=[VN])


@case(
    "loc-ext-after-tensor-member-failed",
    "The statistics' observation mean is referenced from the tensor member RLA_vec_normalize, which fails at step 8 (unknown dtype), and clip_obs is a string. The reference into the failed member is not checked (no REF_NOT_FOUND); the extension's other checks run: the report holds the tensor member's ST_DTYPE_UNKNOWN, then EXTENSION_INVALID at /vec_normalize/clip_obs.",
    AFTER + ["RLA_vec_normalize §5"],
    "ST_DTYPE_UNKNOWN",
    extensions=[VN],
    check=["st-dtype", EXT],
    at=[
        site(member=VN_GROUP, pointer="/vec_normalize~1obs~1mean", by="entry", offset=in_member("data", VN_GROUP)),
        _vn_at("/vec_normalize/clip_obs", "value"),
    ],
)
def _():
    mean = {
        "$type": "ndarray",
        "dtype": "F64",
        "shape": [3],
        "ref": {"group": "RLA_vec_normalize", "name": "vec_normalize/obs/mean"},
    }
    value = _json_vn(clip_obs="10", obs=_json_stats(mean=mean))
    group = st_raw({"vec_normalize/obs/mean": {"dtype": "X", "shape": [3], "data_offsets": [0, 24]}}, bytes(24))
    return archive(
        {"data": {"gamma": 0.99}},
        {"RLA_vec_normalize": group},
        extra_members={VN_MEMBER: _vn_document(value)},
        manifest_patch=_vn_manifest,
    )


@case(
    "loc-ext-after-data-failed",
    "data.json fails at step 7 (a value of the unknown type 'bogus'); the RLA_vec_normalize member, whose checks read data.json's spaces, is then not checked at all: its string clip_obs and its reference to a tensor that does not exist have no issue. The report holds data.json's issue alone.",
    AFTER + ["RLA_vec_normalize §5"],
    "VALUE_UNKNOWN_TYPE",
    extensions=[VN],
    check="value-unknown-type",
    at=doc("/data/x/$type", "value"),
)
def _():
    mean = {"$type": "ndarray", "dtype": "F64", "shape": [3], "ref": {"group": "RLA_vec_normalize", "name": "absent"}}
    value = _json_vn(clip_obs="10", obs=_json_stats(mean=mean))
    return archive(
        {"data": {"x": {"$type": "bogus"}}}, extra_members={VN_MEMBER: _vn_document(value)}, manifest_patch=_vn_manifest
    )


@case(
    "loc-ext-refs-after-tensor-member-failed",
    "data.json references the tensor a of the member tensors/bad.safetensors, which fails at step 8 (unknown dtype), and a tensor missing from tensors/good.safetensors. The reference into the failed member is not checked; the other is: ST_DTYPE_UNKNOWN, then REF_NOT_FOUND at /data/b/ref.",
    AFTER + ["§7.6"],
    "ST_DTYPE_UNKNOWN",
    check=["st-dtype", "ref-not-found"],
    at=[
        site(
            member="tensors/bad.safetensors",
            pointer="/a",
            by="entry",
            offset=in_member("data", "tensors/bad.safetensors"),
        ),
        doc("/data/b/ref", "ref"),
    ],
)
def _():
    ref_a = {"$type": "ndarray", "dtype": "F32", "shape": [2], "ref": {"group": "bad", "name": "a"}}
    ref_b = {"$type": "ndarray", "dtype": "F32", "shape": [2], "ref": {"group": "good", "name": "absent"}}
    bad = st_raw({"a": {"dtype": "X", "shape": [2], "data_offsets": [0, 8]}}, bytes(8))
    good = st_group({"w": np.zeros(2, np.float32)})
    return archive({"data": {"a": ref_a, "b": ref_b}}, {"bad": bad, "good": good})


# ------------------------------------------------------------------ RLA_replay_buffer (G1-G7)

from cases_replay_buffer import _bad, _both, _her, _her_buffer, _nd  # noqa: E402
from cases_replay_buffer import _json as _rb_json
from cases_replay_buffer import _set as _rb_set

from rlarchive.extensions.replay_buffer import EXTENSION as RB  # noqa: E402
from rlarchive.extensions.replay_buffer import MEMBER as RB_MEMBER

RB_SPEC = ["RLA_replay_buffer §4", "RLA_replay_buffer §6", "§11.2"]


def _rb_case(id: str, description: str, build, *, pointer: str, by: str) -> None:
    case(id, description, RB_SPEC, "EXTENSION_INVALID", extensions=[RB], check=EXT, at=doc(pointer, by, RB_MEMBER))(
        build
    )


_rb_case(
    "loc-ext-rb-pos-before-shapes",
    "pos equals buffer_size (6) and rewards have the shape [5, 1]: pos comes before rewards in §3's table and is checked against buffer_size in its turn, so at /replay_buffer/pos.",
    _bad(_both(_rb_set("pos", 6), _rb_set("rewards", _nd("F32", [5, 1])))),
    pointer="/replay_buffer/pos",
    by="contradiction",
)
_rb_case(
    "loc-ext-rb-member-before-class",
    "A ReplayBuffer with HER's bookkeeping whose actions have the shape [6, 1, 3]: actions come before her in §3's table, so at /replay_buffer/actions (never /her first).",
    _bad(_both(_rb_set("her", _rb_json({"h": _her(6, 1)})["h"]), _rb_set("actions", _nd("F32", [6, 1, 3])))),
    pointer="/replay_buffer/actions",
    by="value",
)
_rb_case(
    "loc-ext-rb-dtype-in-turn",
    "actions of dtype F64 (the Box action space stores F32) and rewards of shape [5, 1]: each array's shape and dtype are checked in its turn, so at /replay_buffer/actions.",
    _bad(_both(_rb_set("actions", _nd("F64", [6, 1, 2])), _rb_set("rewards", _nd("F32", [5, 1])))),
    pointer="/replay_buffer/actions",
    by="value",
)
_rb_case(
    "loc-ext-rb-infos-row",
    "HER's infos whose first row is a map, not a list: at that element, /replay_buffer/her/infos/0.",
    _bad(_rb_set("her/infos", [{}] + [[{}, {}]] * 5), _her_buffer(copy_info=True)),
    pointer="/replay_buffer/her/infos/0",
    by="element",
)
_rb_case(
    "loc-ext-rb-infos-rows-count",
    "HER's infos has 5 rows for a buffer_size of 6: infos contradicts buffer_size, so at /replay_buffer/her/infos.",
    _bad(_rb_set("her/infos", [[{}, {}]] * 5), _her_buffer(copy_info=True)),
    pointer="/replay_buffer/her/infos",
    by="contradiction",
)
_rb_case(
    "loc-ext-rb-space-kind",
    "A Text observation space, which a replay buffer does not store: at the space's kind, /replay_buffer/observation_space/kind.",
    _bad(_rb_set("observation_space", _rb_json({"s": sp.Text(4, 1, "abc")})["s"])),
    pointer="/replay_buffer/observation_space/kind",
    by="value",
)
_rb_case(
    "loc-ext-rb-nvec",
    "A MultiDiscrete action space whose nvec has the shape [2, 2]: at /replay_buffer/action_space/nvec, the value whose shape breaks the rule.",
    _bad(
        _rb_set(
            "action_space",
            _rb_json({"s": sp.MultiDiscrete(np.full((2, 2), 3, np.int64), np.zeros((2, 2), np.int64))})["s"],
        )
    ),
    pointer="/replay_buffer/action_space/nvec",
    by="value",
)
_rb_case(
    "loc-ext-rb-her-own-rules-first",
    "A ReplayBuffer (not HER) whose her lacks the key infos: her's own rules come before its agreement with class, so at the map /replay_buffer/her.",
    _bad(_rb_set("her", {k: v for k, v in _rb_json({"h": _her(6, 1)})["h"].items() if k != "infos"})),
    pointer="/replay_buffer/her",
    by="missing",
)


RB_GROUP = "tensors/RLA_replay_buffer.safetensors"


@case(
    "loc-ext-rb-content-after-tensor-member-failed",
    "A HerReplayBuffer whose ep_start is referenced from the tensor member RLA_replay_buffer, which fails at step 8 (unknown dtype), and whose inline ep_length holds 99, outside [0, buffer_size]. The reference into the failed member is not checked, nor are rules 8 and 9, which read element bytes: the report holds the tensor member's ST_DTYPE_UNKNOWN alone.",
    AFTER + ["RLA_replay_buffer §6"],
    "ST_DTYPE_UNKNOWN",
    extensions=[RB],
    check="st-dtype",
    at=site(member=RB_GROUP, pointer="/replay_buffer~1her~1ep_start", by="entry", offset=in_member("data", RB_GROUP)),
)
def _():
    v = _rb_json(_her_buffer()())
    v["her"]["ep_start"] = {
        "$type": "ndarray",
        "dtype": "I64",
        "shape": [6, 2],
        "ref": {"group": "RLA_replay_buffer", "name": "replay_buffer/her/ep_start"},
    }
    v["her"]["ep_length"] = _nd("I64", [6, 2], 99)
    group = st_raw({"replay_buffer/her/ep_start": {"dtype": "X", "shape": [6, 2], "data_offsets": [0, 96]}}, bytes(96))
    return archive(
        {"data": {"gamma": 0.99}},
        {"RLA_replay_buffer": group},
        extra_members={RB_MEMBER: jsonstrict.dumps({"replay_buffer": v})},
        manifest_patch=lambda m: m.update(extensions_used=[RB]),
    )
