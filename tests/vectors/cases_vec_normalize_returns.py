"""Test cases of RLA_vec_normalize's running return, the OPTIONAL key ``returns`` (spec/extensions/RLA_vec_normalize.md §3 rule 5, §5 steps 5.8 and 6)."""

from __future__ import annotations

import numpy as np
from cases import archive, case, nd, saved, st_group, st_raw
from cases_extensions import _box, _json_stats, _json_vn, _raw_vn, _spaces, _stats, _vn
from cases_locations_ext import AFTER, VN_GROUP, _vn_document, _vn_manifest
from sites import doc, in_member, site

from rlarchive.extensions.vec_normalize import EXTENSION as VN
from rlarchive.extensions.vec_normalize import MEMBER as VN_MEMBER

SPEC = ["RLA_vec_normalize §3", "RLA_vec_normalize §5"]
EXT = "extension-document"
R = "/vec_normalize/returns"


def _f64(values) -> dict:
    a = np.asarray(values, np.float64)
    return nd("F64", a.shape, a.tobytes())


def _ref(n: int) -> dict:
    return {
        "$type": "ndarray",
        "dtype": "F64",
        "shape": [n],
        "ref": {"group": "RLA_vec_normalize", "name": "vec_normalize/returns"},
    }


@case(
    "vec-normalize-returns",
    "VecNormalize statistics with the running discounted return of three environments (inline), one at zero (its episode just ended).",
    SPEC,
    extensions=[VN],
)
def _():
    value = _vn(_stats((3,), 1), returns=np.array([-12.5, 0.0, 3.25]))
    return saved(_spaces(_box((3,))), extension_values={VN: value})


@case(
    "vec-normalize-returns-referenced",
    "The running return of 160 environments, above INLINE_ARRAY_BYTES, referenced from the tensor group RLA_vec_normalize: its finiteness is checked on the tensor's element bytes.",
    SPEC + ["§7.6"],
    extensions=[VN],
)
def _():
    returns = np.random.default_rng(5).normal(size=160) * 100.0
    return saved(_spaces(_box((3,))), extension_values={VN: _vn(_stats((3,), 1), returns=returns)})


def _invalid(id: str, description: str, build, pointer: str = R) -> None:
    case(id, description, SPEC, "EXTENSION_INVALID", extensions=[VN], check=EXT, at=doc(pointer, "value", VN_MEMBER))(
        build
    )


_invalid(
    "vec-normalize-returns-not-f64",
    "The running return is an F32 array (it is F64, as VecNormalize keeps it).",
    lambda: _raw_vn(_json_vn(returns=nd("F32", [2], np.zeros(2, np.float32).tobytes()))),
)
_invalid(
    "vec-normalize-returns-list",
    "The running return is a list of numbers, not an ndarray value.",
    lambda: _raw_vn(_json_vn(returns=[0.0, 1.5])),
)
_invalid(
    "vec-normalize-returns-two-dimensional",
    "The running return has shape [2, 1]: it is one number per environment, shape [N].",
    lambda: _raw_vn(_json_vn(returns=_f64(np.zeros((2, 1))))),
)
_invalid(
    "vec-normalize-returns-empty",
    "The running return has shape [0]: a vectorised environment has at least one environment.",
    lambda: _raw_vn(_json_vn(returns=_f64(np.zeros(0)))),
)
_invalid(
    "vec-normalize-returns-nan",
    "The running return of the second of three environments is NaN: every element is finite (a rule that reads element bytes, §5 step 6).",
    lambda: _raw_vn(_json_vn(returns=_f64([1.0, float("nan"), 2.0]))),
)
_invalid(
    "vec-normalize-returns-structure-first",
    "The running return holds an infinity and the return statistics are 1-dimensional: the structure (§5 step 5) is checked before the elements (step 6), so at /vec_normalize/ret/mean.",
    lambda: _raw_vn(_json_vn(ret=_json_stats((1,)), returns=_f64([float("inf")]))),
    "/vec_normalize/ret/mean",
)


@case(
    "vec-normalize-returns-referenced-infinite",
    "The running return is referenced from the tensor group RLA_vec_normalize and its second element is -inf: the rule reads the referenced tensor's element bytes, at /vec_normalize/returns.",
    SPEC + ["§7.6"],
    "EXTENSION_INVALID",
    extensions=[VN],
    check=EXT,
    at=doc(R, "value", VN_MEMBER),
)
def _():
    group = st_group({"vec_normalize/returns": np.array([0.5, -np.inf, 2.0])})
    return archive(
        {"data": {"gamma": 0.99}},
        {"RLA_vec_normalize": group},
        extra_members={VN_MEMBER: _vn_document(_json_vn(returns=_ref(3)))},
        manifest_patch=_vn_manifest,
    )


@case(
    "loc-ext-vn-returns-after-tensor-member-failed",
    "The observation mean is referenced from the tensor member RLA_vec_normalize, which fails at step 8 (unknown dtype), and the inline running return holds a NaN. The reference into the failed member is not checked, nor is the rule that reads element bytes (§5 step 6): the report holds the tensor member's ST_DTYPE_UNKNOWN alone.",
    AFTER + ["RLA_vec_normalize §5"],
    "ST_DTYPE_UNKNOWN",
    extensions=[VN],
    check="st-dtype",
    at=site(member=VN_GROUP, pointer="/vec_normalize~1obs~1mean", by="entry", offset=in_member("data", VN_GROUP)),
)
def _():
    mean = {
        "$type": "ndarray",
        "dtype": "F64",
        "shape": [3],
        "ref": {"group": "RLA_vec_normalize", "name": "vec_normalize/obs/mean"},
    }
    value = _json_vn(obs=_json_stats(mean=mean), returns=_f64([float("nan")]))
    group = st_raw({"vec_normalize/obs/mean": {"dtype": "X", "shape": [3], "data_offsets": [0, 24]}}, bytes(24))
    return archive(
        {"data": {"gamma": 0.99}},
        {"RLA_vec_normalize": group},
        extra_members={VN_MEMBER: _vn_document(value)},
        manifest_patch=_vn_manifest,
    )
