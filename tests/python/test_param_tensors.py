"""Optimizer parameters named by the policy tensors they are (spec §7.9 ``param_tensors``): written by the SB3
bridge from the model, refused by the writer when wrong, taken out before SB3 sees a state, and used by diff."""

import json
import warnings
import zipfile

import numpy as np
import pytest
from suite import schema_validator

import rlarchive
from rlarchive.cli import main
from rlarchive.diff import diff

#: The member of a parameter group that names its parameters (spec §7.9).
PARAM_TENSORS = "param_tensors"


@pytest.fixture(scope="module")
def sac(tmp_path_factory):
    """A SAC model trained a few steps, saved before and after 20 more, and its own zip of the first."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import SAC

    from rlarchive import sb3 as rsb3

    folder = tmp_path_factory.mktemp("sac")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SAC(
            "MlpPolicy",
            "Pendulum-v1",
            learning_starts=10,
            batch_size=8,
            buffer_size=100,
            seed=0,
            device="cpu",
            policy_kwargs={"net_arch": [8]},
        )
        model.learn(20)
        rsb3.save(model, folder / "0.rlarchive")
        model.save(folder / "0.zip")
        model.learn(20)
        rsb3.save(model, folder / "1.rlarchive")
    return model, folder


def _groups(path, name):
    with rlarchive.open(path) as ar:
        return ar.raw_data["optimizers"][name]["param_groups"]


def test_save_names_each_parameter_by_the_policy_tensor_whose_state_it_is(sac):
    """The state the archive keeps under a name is the live optimizer's state of the parameter of that name."""
    model, folder = sac
    params = dict(model.policy.named_parameters())
    with rlarchive.open(folder / "1.rlarchive") as ar:
        for name in ("actor.optimizer", "critic.optimizer"):
            live = {"actor.optimizer": model.actor.optimizer, "critic.optimizer": model.critic.optimizer}[name]
            state = ar.optimizer(name)
            (group,) = state["param_groups"]
            names = group[PARAM_TENSORS]
            assert len(names) == len(group["params"]) == len(live.param_groups[0]["params"]) and len(set(names)) == len(
                names
            )
            for pid, n in zip(group["params"], names):
                want = live.state[params[n]]
                for entry in ("exp_avg", "exp_avg_sq"):
                    assert np.array_equal(state["state"][pid][entry], want[entry].numpy()), (name, n, entry)
        # the entropy coefficient is no tensor of the policy: its optimizer is written without names
        assert all(PARAM_TENSORS not in g for g in ar.optimizer("ent_coef_optimizer")["param_groups"])
    # SB3's order puts actor.mu before actor.log_std, whose tensors have the same shapes: a guess by shape cannot tell
    assert _groups(folder / "1.rlarchive", "actor.optimizer")[0][PARAM_TENSORS].index("actor.mu.weight") < _groups(
        folder / "1.rlarchive", "actor.optimizer"
    )[0][PARAM_TENSORS].index("actor.log_std.weight")


def test_the_import_of_the_models_zip_names_them_as_save_does(sac, tmp_path):
    from rlarchive import sb3 as rsb3

    _, folder = sac
    rsb3.import_archive(folder / "0.zip", tmp_path / "imported.rlarchive")
    with rlarchive.open(folder / "0.rlarchive") as a, rlarchive.open(tmp_path / "imported.rlarchive") as b:
        assert json.dumps(a.raw_data["optimizers"]) == json.dumps(b.raw_data["optimizers"])
        assert any(PARAM_TENSORS in g for g in a.raw_data["optimizers"]["critic.optimizer"]["param_groups"])


def _named_by_hand(model, src, dest):
    """``src`` written again with param_tensors put in by hand (each optimizer parameter's name in the policy),
    whatever writer made it: what load and export take out does not depend on who wrote the names."""
    by_id = {id(p): n for n, p in model.policy.named_parameters()}
    live = {"actor.optimizer": model.actor.optimizer, "critic.optimizer": model.critic.optimizer}
    with rlarchive.open(src) as ar:
        data, metadata = dict(ar.data), dict(ar.metadata)
        tensors = {g: ar.tensors(g) for g in ar.groups if not g.startswith("optimizer.")}
        optimizers = {n: ar.optimizer(n) for n in ar.optimizer_names}
    for name, opt in live.items():
        (group,) = optimizers[name]["param_groups"]
        group[PARAM_TENSORS] = [by_id[id(p)] for p in opt.param_groups[0]["params"]]
    rlarchive.save(dest, data, tensors, optimizers, metadata=metadata)


def test_load_and_export_give_sb3_states_without_the_names(sac, tmp_path):
    import torch

    from rlarchive import sb3 as rsb3

    model, folder = sac
    _named_by_hand(model, folder / "1.rlarchive", tmp_path / "named.rlarchive")
    assert all(PARAM_TENSORS in g for g in _groups(tmp_path / "named.rlarchive", "actor.optimizer"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = rsb3.load(tmp_path / "named.rlarchive")
        rsb3.export_archive(tmp_path / "named.rlarchive", tmp_path / "back.zip")
    for opt in (loaded.actor.optimizer, loaded.critic.optimizer):
        assert all(PARAM_TENSORS not in g for g in opt.param_groups)
        opt.add_param_group({"params": [_new_parameter()]})  # torch refuses a group without names beside named ones
    with zipfile.ZipFile(tmp_path / "back.zip") as zf, zf.open("actor.optimizer.pth") as f:
        sd = torch.load(f, weights_only=True)
    assert all(PARAM_TENSORS not in g for g in sd["param_groups"])


def _new_parameter():
    import torch

    return torch.nn.Parameter(torch.zeros(1))


def _policy():
    return {"net.weight": np.ones((2, 3), np.float32), "net.bias": np.zeros(2, np.float32)}


def _adam(shapes, names=None):
    state = {
        i: {"step": np.array(1.0, np.float32), "exp_avg": np.full(s, float(i), np.float32)}
        for i, s in enumerate(shapes)
    }
    group = {"lr": 0.001, "params": list(range(len(shapes)))}
    if names is not None:
        group[PARAM_TENSORS] = names
    return {"state": state, "param_groups": [group]}


@pytest.mark.parametrize(
    "names, shapes, code",
    [
        (["net.weight", "net.weight"], [(2, 3), (2,)], "VALUE_INVALID"),
        (["net.weight", "nowhere"], [(2, 3), (2,)], "REF_NOT_FOUND"),
        (["net.bias", "net.weight"], [(2, 3), (2,)], "REF_MISMATCH"),
        (["net.weight"], [(2, 3), (2,)], "VALUE_INVALID"),
    ],
)
def test_the_writer_refuses_names_a_reader_would_refuse(tmp_path, names, shapes, code):
    path = tmp_path / "a.rlarchive"
    with pytest.raises(rlarchive.RlarchiveError) as e:
        rlarchive.save(path, {}, {"policy": _policy()}, {"policy.optimizer": _adam(shapes, names)})
    assert e.value.code == "WRITE_INVALID" and f"{code}:" in e.value.message and not path.exists()
    rlarchive.save(path, {}, {"policy": _policy()}, {"policy.optimizer": _adam(shapes, ["net.weight", "net.bias"])})
    assert rlarchive.validate(str(path))["valid"]


def test_diff_names_optimizer_state_by_parameter_recorded_or_guessed(tmp_path, capsys):
    """Recorded names are used as they are; an archive without them gets a guess by shape, marked."""
    for tag, names in (("named", ["net.weight", "net.bias"]), ("old", None)):
        for i, scale in enumerate((1.0, 2.0)):
            opt = _adam([(2, 3), (2,)], names)
            for st in opt["state"].values():
                st["exp_avg"] = st["exp_avg"] * scale + scale
            rlarchive.save(tmp_path / f"{tag}{i}.rlarchive", {}, {"policy": _policy()}, {"policy.optimizer": opt})
        doc = diff(tmp_path / f"{tag}0.rlarchive", tmp_path / f"{tag}1.rlarchive")
        schema_validator("diff-1.0.schema.json").validate(doc)
        got = {d["key"]: d["parameter"] for d in doc["differences"]}
        by = "param_tensors" if names else "shape"
        assert got == {
            "optimizer.policy.optimizer/state/entries/0/1/exp_avg": {
                "group": "policy",
                "name": "net.weight",
                "entry": "exp_avg",
                "by": by,
            },
            "optimizer.policy.optimizer/state/entries/1/1/exp_avg": {
                "group": "policy",
                "name": "net.bias",
                "entry": "exp_avg",
                "by": by,
            },
        }
        status, out, _ = _main(
            capsys, "diff", "--all", str(tmp_path / f"{tag}0.rlarchive"), str(tmp_path / f"{tag}1.rlarchive")
        )
        mark = "" if names else "?"
        assert status == 1 and f"optimizer.policy.optimizer: net.weight{mark} exp_avg: F32[2, 3]" in out
        assert "state/entries" not in out and (("guessed by shape" in out) == (names is None))


def _main(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_diff_summarises_each_group_in_one_line_and_selects_with_only_and_ignore(sac, capsys):
    _, folder = sac
    a, b = str(folder / "0.rlarchive"), str(folder / "1.rlarchive")
    doc = diff(a, b)
    optimizer_tensors = [d for d in doc["differences"] if d["key"].startswith("optimizer.")]
    assert len(optimizer_tensors) > 30
    status, out, _ = _main(capsys, "diff", a, b)
    lines = out.splitlines()
    assert status == 1 and f"{len(doc['differences'])} differences (tensors by group: --all lists each)" in lines
    with rlarchive.open(a) as ar:
        for g in ("policy", "optimizer.actor.optimizer", "optimizer.critic.optimizer"):
            n = len(ar.tensor_info(g))
            (summary,) = [x for x in lines if x.startswith(f"tensors         {g}: ")]
            assert summary.startswith(f"tensors         {g}: {n} of {n} changed"), summary
    assert sum(1 for x in lines if "optimizer." in x) == 3 and len(lines) < 20
    assert "(the state of 6 parameters)" in out and "state/entries" not in out
    # everything but the optimizers' states and the counters that move at every step: the policy and log_ent_coef
    status, out, _ = _main(
        capsys, "diff", "--json", a, b, "--ignore", "tensors/optimizer.*", "--ignore", "hyperparameters"
    )
    kept = json.loads(out)
    schema_validator("diff-1.0.schema.json").validate(kept)
    assert status == 1 and kept["ignore"] == ["tensors/optimizer.*", "hyperparameters"]
    assert {d["section"] for d in kept["differences"]} == {"tensors"}
    assert {d["key"].split("/")[0] for d in kept["differences"]} == {"policy", "variables"}
    status, out, _ = _main(capsys, "diff", a, b, "--only", "metadata")
    assert status == 0 and out.endswith(": the same (in what was compared)\n")
    with pytest.raises(SystemExit) as e:  # a pattern that selects no section: a usage error, before any work
        main(["diff", a, b, "--only", "tensor"])
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == "" and err.startswith("rlarchive: INPUT_INVALID: ") and err.count("\n") == 1


def _without_names(src, dest):
    """``src`` written again without param_tensors, as an older writer wrote it."""
    with rlarchive.open(src) as ar:
        data = dict(ar.data)
        tensors = {g: ar.tensors(g) for g in ar.groups if not g.startswith("optimizer.")}
        optimizers = {n: ar.optimizer(n) for n in ar.optimizer_names}
    for opt in optimizers.values():
        for g in opt["param_groups"]:
            g.pop(PARAM_TENSORS, None)
    rlarchive.save(dest, data, tensors, optimizers)


def test_a_guess_by_shape_would_swap_actor_mu_and_log_std(sac, tmp_path):
    """Why the names are recorded: without them (an archive of an older writer) the guess takes PyTorch's usual
    order of names, which puts log_std before mu; the recorded names are SB3's order."""
    _, folder = sac
    for i in (0, 1):
        _without_names(folder / f"{i}.rlarchive", tmp_path / f"old{i}.rlarchive")

    def names(a, b):
        return {d["key"]: d["parameter"] for d in diff(a, b)["differences"] if d["key"].startswith("optimizer.actor")}

    recorded = names(folder / "0.rlarchive", folder / "1.rlarchive")
    guessed = names(tmp_path / "old0.rlarchive", tmp_path / "old1.rlarchive")
    assert set(guessed) == set(recorded) and {p["by"] for p in guessed.values()} == {"shape"}
    assert {p["by"] for p in recorded.values()} == {"param_tensors"}
    swapped = {k for k in recorded if recorded[k]["name"] != guessed[k]["name"]}
    assert {recorded[k]["name"] for k in swapped} == {
        "actor.mu.weight",
        "actor.mu.bias",
        "actor.log_std.weight",
        "actor.log_std.bias",
    }
