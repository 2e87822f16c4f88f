"""Optimizer parameters named by the tensors they are: ``param_tensors`` (spec §7.9), valid and broken."""

from __future__ import annotations

import numpy as np
from cases import archive, case, saved, st_group, st_raw
from sites import doc, in_member, site

SPEC = ["§7.9", "§11.1"]
FORM = "param-tensors-form"
#: The policy: a weight (2, 3), its bias (2,), a log_std (3,).
POLICY = {
    "net.0.weight": np.arange(6, dtype=np.float32).reshape(2, 3),
    "net.0.bias": np.array([0.5, -0.5], np.float32),
    "log_std": np.zeros(3, np.float32),
}
AT = "/optimizers/policy.optimizer/param_groups/0/param_tensors"


def _state(shapes: dict) -> dict:
    """An Adam state over parameters id -> shape (a 0-d ``step``, moments of that shape)."""
    rng = np.random.default_rng(len(shapes))
    return {
        pid: {
            "step": np.array(3.0, np.float32),
            "exp_avg": rng.standard_normal(shape).astype(np.float32),
            "exp_avg_sq": rng.random(shape).astype(np.float32),
        }
        for pid, shape in shapes.items()
    }


def _group(params: list, names, **extra) -> dict:
    return {"lr": 0.001, "betas": (0.9, 0.999), **extra, "params": params, "param_tensors": names}


@case(
    "optimizer-param-tensors",
    "An Adam state whose two parameter groups name their parameters by the policy's tensors (param_tensors); the ids are not positions (params [7, 2] and [5]) and the state lists them in another order, so a reader must find each parameter's state by its id; an Adafactor-like factored moment of shape [2, 1] fits the weight [2, 3] (a dimension 1), the 0-d step fits any.",
    SPEC,
)
def _():
    state = _state({5: (3,), 2: (2,), 7: (2, 3)})
    state[7]["row_var"] = np.ones((2, 1), np.float32)
    opt = {
        "state": state,
        "param_groups": [_group([7, 2], ["net.0.weight", "net.0.bias"]), _group([5], ["log_std"], lr=0.01)],
    }
    return saved({"gamma": 0.99}, {"policy": POLICY}, {"policy.optimizer": opt})


@case(
    "optimizer-param-names-unchecked",
    "A parameter group holding PyTorch's own param_names (names relative to another module, here not tensors of the policy) and no param_tensors: a plain value, not checked.",
    SPEC,
)
def _():
    opt = {"state": _state({0: (4, 4)}), "param_groups": [{"lr": 0.1, "params": [0], "param_names": ["0.weight"]}]}
    return saved({}, {"policy": POLICY}, {"policy.optimizer": opt})


def _raw(groups: list, state_entries: list | None = None, policy: bytes | None = None, data: dict | None = None):
    """An archive whose policy.optimizer has the raw JSON ``groups`` and a state of references into its group."""
    entries, tensors = [], {}
    for pid, shape in state_entries or []:
        name = f"state/entries/{len(entries)}/1/exp_avg"
        tensors[name] = np.zeros(shape, np.float32)
        ref = {
            "$type": "ndarray",
            "dtype": "F32",
            "shape": list(shape),
            "ref": {"group": "optimizer.policy.optimizer", "name": name},
        }
        entries.append([pid, {"exp_avg": ref}])
    opt: dict = {"state": {"$type": "dict", "entries": entries} if entries else {}, "param_groups": groups}
    groups_members = {"policy": policy if policy is not None else st_group(POLICY)}
    if tensors:
        groups_members["optimizer.policy.optimizer"] = st_group(tensors)
    return archive({"data": data or {}, "optimizers": {"policy.optimizer": opt}}, groups_members)


def _broken(id: str, description: str, code: str, groups: list, check: str, pointer: str, by: str, entries=None):
    case(id, description, SPEC, code, check=check, at=doc(pointer, by))(lambda: _raw(groups, entries))


_broken(
    "param-tensors-not-list",
    "param_tensors is a string, not a list: VALUE_INVALID at param_tensors.",
    "VALUE_INVALID",
    [{"lr": 0.1, "params": [0], "param_tensors": "net.0.weight"}],
    FORM,
    AT,
    "value",
)
_broken(
    "param-tensors-not-string",
    "param_tensors holds an integer as its second name: VALUE_INVALID at that element.",
    "VALUE_INVALID",
    [{"lr": 0.1, "params": [0, 1], "param_tensors": ["net.0.weight", 1]}],
    FORM,
    AT + "/1",
    "element",
)
_broken(
    "param-tensors-length",
    "param_tensors names one parameter, params lists two: VALUE_INVALID at param_tensors, which contradicts params.",
    "VALUE_INVALID",
    [{"lr": 0.1, "params": [0, 1], "param_tensors": ["net.0.weight"]}],
    FORM,
    AT,
    "contradiction",
)
_broken(
    "param-tensors-params-not-integers",
    "params holds a float id beside param_tensors: VALUE_INVALID at param_tensors (params must be plain integers as long as it).",
    "VALUE_INVALID",
    [{"lr": 0.1, "params": [0.0], "param_tensors": ["net.0.weight"]}],
    FORM,
    AT,
    "contradiction",
)
_broken(
    "param-tensors-duplicate",
    "The second parameter group names net.0.bias, which the first already names: VALUE_INVALID at the later name (names are distinct across the groups of a state).",
    "VALUE_INVALID",
    [
        {"lr": 0.1, "params": [0], "param_tensors": ["net.0.bias"]},
        {"lr": 0.2, "params": [1], "param_tensors": ["net.0.bias"]},
    ],
    FORM,
    "/optimizers/policy.optimizer/param_groups/1/param_tensors/0",
    "later",
)
_broken(
    "param-tensors-not-found",
    "param_tensors names net.9.weight, which the group policy does not hold: REF_NOT_FOUND at the name.",
    "REF_NOT_FOUND",
    [{"lr": 0.1, "params": [0, 1], "param_tensors": ["net.0.weight", "net.9.weight"]}],
    "param-tensors-not-found",
    AT + "/1",
    "param-tensor",
)
_broken(
    "param-tensors-shape-mismatch",
    "param_tensors names net.0.weight [2, 3] for a parameter whose exp_avg is [3, 2]: REF_MISMATCH at the name.",
    "REF_MISMATCH",
    [{"lr": 0.1, "params": [4], "param_tensors": ["net.0.weight"]}],
    "param-tensors-mismatch",
    AT + "/0",
    "param-tensor",
    entries=[(4, (3, 2))],
)
_broken(
    "param-tensors-rank-mismatch",
    "param_tensors names net.0.bias [2] for a parameter whose exp_avg is [2, 1]: the dimension 1 fits only in the tensor's own rank: REF_MISMATCH at the name.",
    "REF_MISMATCH",
    [{"lr": 0.1, "params": [0], "param_tensors": ["net.0.bias"]}],
    "param-tensors-mismatch",
    AT + "/0",
    "param-tensor",
    entries=[(0, (2, 1))],
)


@case(
    "param-tensors-no-policy-group",
    "param_tensors in an archive without the tensor group policy: REF_NOT_FOUND at the first name.",
    SPEC,
    "REF_NOT_FOUND",
    check="param-tensors-not-found",
    at=doc(AT + "/0", "param-tensor"),
)
def _():
    opt = {"state": {}, "param_groups": [{"lr": 0.1, "params": [0], "param_tensors": ["net.0.weight"]}]}
    return archive({"data": {}, "optimizers": {"policy.optimizer": opt}})


@case(
    "param-tensors-after-references",
    "A reference of data to a missing tensor and a param_tensors name the policy lacks: step 9 reports the first broken reference (REF_NOT_FOUND at its ref), then the first broken name (REF_NOT_FOUND at the name).",
    SPEC + ["§7.6"],
    "REF_NOT_FOUND",
    check=["ref-not-found", "param-tensors-not-found"],
    at=[doc("/data/x/ref", "ref"), doc(AT + "/0", "param-tensor")],
)
def _():
    ref = {"$type": "ndarray", "dtype": "F32", "shape": [2], "ref": {"group": "policy", "name": "absent"}}
    return _raw([{"lr": 0.1, "params": [0], "param_tensors": ["nowhere"]}], data={"x": ref})


@case(
    "param-tensors-policy-member-failed",
    "The member of the group policy fails at step 8 (an unknown dtype); a param_tensors names a tensor twice and names one no member holds. The names are not checked against the failed member (no REF_NOT_FOUND), their own rules are: ST_DTYPE_UNKNOWN, then VALUE_INVALID at the repeated name.",
    SPEC + ["§14"],
    "ST_DTYPE_UNKNOWN",
    check=["st-dtype", FORM],
    at=[
        site(
            member="tensors/policy.safetensors",
            pointer="/w",
            by="entry",
            offset=in_member("data", "tensors/policy.safetensors"),
        ),
        doc(AT + "/2", "later"),
    ],
)
def _():
    bad = st_raw({"w": {"dtype": "X9", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8)
    return _raw([{"lr": 0.1, "params": [0, 1, 2], "param_tensors": ["absent", "w", "w"]}], policy=bad)
