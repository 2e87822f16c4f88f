"""inspect (a one-screen summary, --all, --json), dump --indent, and diff (rlarchive.diff)."""

import json
import os

import numpy as np
import pytest
from suite import ROOT, schema_validator

import rlarchive
from rlarchive.cli import main
from rlarchive.describe import counted
from rlarchive.diff import diff, max_abs_diff

VALID = os.path.join(ROOT, "test-vectors", "valid")
ARCHIVES = sorted(os.path.join(VALID, f) for f in os.listdir(VALID) if f.endswith(".rlarchive"))
MINIMAL = os.path.join(VALID, "minimal.rlarchive")
PPO = os.path.join(VALID, "ppo-like-agent.rlarchive")
#: Rows of a terminal: the summary fits one screen.
SCREEN = 40


def _main(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_the_summary_fits_one_screen_and_all_lists_every_tensor(capsys):
    assert len(ARCHIVES) >= 20
    longest = 0
    for path in ARCHIVES:
        status, out, err = _main(capsys, "inspect", path)
        assert status == 0 and err == "", (path, err)
        longest = max(longest, len(out.splitlines()))
        status, full, _ = _main(capsys, "inspect", "--all", path)
        with rlarchive.open(path, spaces="neutral") as ar:
            names = [n for g in ar.groups for n in ar.tensor_info(g)]
            sizes = {g: sum(i.nbytes for i in ar.tensor_info(g).values()) for g in ar.groups}

        def tensor_lines(text):
            return sum(1 for line in text.splitlines() if line.startswith("    ") and line.endswith(" B"))

        assert tensor_lines(full) == len(names) and tensor_lines(out) == 0, (
            path
        )  # --all: one line per tensor; the summary: none
        with rlarchive.open(path, spaces="neutral") as ar:
            for g, nbytes in sizes.items():  # the summary names every group with its tensor count and bytes
                assert (
                    f"  {g}: {counted(len(ar.tensor_info(g)), 'tensor')}, {counted(nbytes, 'byte')}" in out.splitlines()
                )
    assert longest <= SCREEN


def test_the_summary_outlines_the_policy(capsys):
    path = os.path.join(VALID, "policy-dqn-nature-cnn.rlarchive")
    status, out, _ = _main(capsys, "inspect", path)
    with rlarchive.open(path, spaces="neutral") as ar:
        policy = ar.policy()
        groups = ar.groups
    lines = out.splitlines()
    layers = " ".join(
        line[18:] for line in lines[lines.index("policy") :] if line.startswith(("  layers", " " * 18))
    ).split(" -> ")
    assert len(layers) == len(policy.nodes) and [x.split()[0] for x in layers] == [
        n.get("fn", n["op"]) for n in policy.nodes
    ]
    assert f"  head            {policy.action['op']}" in lines and "  preprocessing   images / 255" in lines
    tensor_lines = lines[lines.index("tensor groups") + 1 :]
    assert tensor_lines[0].startswith("  policy: ") and "policy" in groups and groups[0] != "policy"  # policy first


@pytest.mark.parametrize("name", [os.path.basename(p) for p in ARCHIVES])
def test_inspect_json_matches_its_schema_and_the_archive(name, capsys):
    path = os.path.join(VALID, name)
    status, out, err = _main(capsys, "inspect", "--json", path)
    assert status == 0, err
    doc = json.loads(out)
    schema_validator("inspect-1.0.schema.json").validate(doc)
    with rlarchive.open(path, spaces="neutral") as ar:
        assert doc["format_version"] == ar.format_version and doc["metadata"] == ar.metadata
        assert {g["name"]: g["bytes"] for g in doc["groups"]} == {
            g: sum(i.nbytes for i in ar.tensor_info(g).values()) for g in ar.groups
        }
        assert set(doc["spaces"]) | set(doc["hyperparameters"]) == set(ar.raw_data["data"])
        policy = ar.policy() if "RLA_policy" in ar.extensions_used else None
        assert (doc["policy"] is None) == (policy is None)
        if policy is not None:
            assert len(doc["policy"]["layers"]) == len(policy.nodes)
    assert doc["checked"] == "structure"
    assert json.loads(_main(capsys, "inspect", "--json", "--verify", path)[1])["checked"] == "all"


def test_dump_indent_is_the_canonical_dump_indented(capsys):
    status, canonical, _ = _main(capsys, "dump", PPO)
    with open(os.path.join(VALID, "ppo-like-agent.dump.json"), encoding="utf-8") as f:
        assert canonical == f.read()  # the default stays the canonical dump, byte for byte (no trailing newline)
    status, indented, _ = _main(capsys, "dump", "--indent", "2", PPO)
    assert status == 0 and json.loads(indented) == json.loads(canonical) and indented.splitlines()[1].startswith('  "')
    assert indented.endswith("}\n")  # text for people ends with a line break
    assert len(indented.splitlines()) > len(canonical.splitlines())


# ---------------------------------------------------------------- diff


def test_an_archive_equals_itself(capsys):
    for path in (MINIMAL, PPO):
        status, out, err = _main(capsys, "diff", path, path)
        assert status == 0 and out.endswith(": the same\n") and err == ""
        doc = diff(path, path)
        schema_validator("diff-1.0.schema.json").validate(doc)
        assert doc["equal"] and doc["differences"] == []


def test_two_vectors_differ_section_by_section(capsys):
    status, out, _ = _main(capsys, "diff", "--json", PPO, MINIMAL)
    doc = json.loads(out)
    schema_validator("diff-1.0.schema.json").validate(doc)
    with rlarchive.open(PPO, spaces="neutral") as a, rlarchive.open(MINIMAL, spaces="neutral") as b:
        only_a = [k for k in a.raw_data["data"] if k not in b.raw_data["data"]]
        groups = [g for g in a.groups if g not in b.groups]
        a_tensors = sum(len(a.tensor_info(g)) for g in groups)
    removed = [
        d["key"]
        for d in doc["differences"]
        if d["change"] == "removed" and d["section"] in ("hyperparameters", "spaces")
    ]
    assert status == 1 and not doc["equal"] and sorted(removed) == sorted(only_a)
    assert sum(1 for d in doc["differences"] if d["section"] == "tensors" and d["change"] == "removed") >= a_tensors
    status, text, _ = _main(capsys, "diff", "--all", PPO, MINIMAL)
    assert status == 1 and text.splitlines()[-1] == f"{len(doc['differences'])} differences"


def test_diff_errors_exit_2_on_one_line(tmp_path, capsys):
    junk = tmp_path / "junk.rlarchive"
    junk.write_bytes(b"not an archive")
    for argv, code in (
        (["diff", MINIMAL, str(tmp_path / "missing")], "IO_ERROR"),
        (["diff", str(junk), MINIMAL], "ARCHIVE_NOT_RLARCHIVE"),
    ):
        status, out, err = _main(capsys, *argv)
        assert status == 2 and out == "" and err.startswith(f"rlarchive: {code}: ") and err.count("\n") == 1


def test_tensors_of_another_shape_are_compared_by_digest(tmp_path):
    a, b = tmp_path / "a.rlarchive", tmp_path / "b.rlarchive"
    rlarchive.save(a, {"gamma": 0.99}, tensors={"policy": {"w": np.ones((2, 3), np.float32), "same": np.zeros(2)}})
    rlarchive.save(b, {"gamma": 0.9}, tensors={"policy": {"w": np.ones((3, 2), np.float32), "same": np.zeros(2)}})
    doc = diff(a, b)
    schema_validator("diff-1.0.schema.json").validate(doc)
    (gamma,) = [d for d in doc["differences"] if d["section"] == "hyperparameters"]
    (w,) = [d for d in doc["differences"] if d["section"] == "tensors"]
    assert gamma["key"] == "gamma" and gamma["change"] == "changed"
    assert (
        w["key"] == "policy/w" and w["a"]["shape"] == [2, 3] and w["b"]["shape"] == [3, 2] and "max_abs_diff" not in w
    )


def test_max_abs_diff_reads_in_chunks_and_counts_non_finite_elements():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(1000).astype(np.float32)
    b = a + rng.standard_normal(1000).astype(np.float32)
    a[[3, 500]], b[[3, 500, 7]] = [np.nan, np.inf], [np.nan, 1.0, -np.inf]
    finite = np.isfinite(a) & np.isfinite(b)
    want = float(np.max(np.abs(a[finite].astype(np.float64) - b[finite].astype(np.float64))))
    for chunk in (1, 7, 1000, 1 << 20):
        assert max_abs_diff(a, b, chunk) == (want, 2)  # index 3: NaN in both is no difference
    assert max_abs_diff(np.zeros(0), np.zeros(0)) == (None, 0)


def test_two_saves_of_a_model_trained_0_and_1_step(tmp_path, capsys):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO as SB3PPO

    from rlarchive import sb3 as rsb3

    model = SB3PPO(
        "MlpPolicy",
        "CartPole-v1",
        n_steps=8,
        batch_size=8,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [4]},
    )
    before, after = tmp_path / "0.rlarchive", tmp_path / "1.rlarchive"
    rsb3.save(model, before)
    model.learn(8)
    rsb3.save(model, after)
    status, out, _ = _main(capsys, "diff", "--json", str(before), str(after))
    doc = json.loads(out)
    schema_validator("diff-1.0.schema.json").validate(doc)
    assert status == 1
    changed = {(d["section"], d["key"]): d for d in doc["differences"]}
    assert ("hyperparameters", "num_timesteps") in changed
    with rlarchive.open(before) as a, rlarchive.open(after) as b:
        for name, x in a.tensors("policy").items():
            y = b.tensors("policy")[name]
            d = changed.get(("tensors", f"policy/{name}"))
            if np.array_equal(x, y):
                assert d is None
            else:
                assert d["max_abs_diff"] == float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))) > 0
    assert any(k[0] == "tensors" and k[1].startswith("policy/") for k in changed)
    status, text, _ = _main(capsys, "diff", "--all", str(before), str(after))
    assert status == 1 and "max |a-b|" in text and "num_timesteps" in text


def test_hyperparameters_compare_as_canonical_json(tmp_path):
    """The integer 1 and the float 1.0 are different values (spec §7); the same float written twice is equal."""
    paths = []
    for i, value in enumerate((1, 1.0, 1.0)):
        p = tmp_path / f"{i}.rlarchive"
        rlarchive.save(p, {"n": value, "gamma": 0.99})
        paths.append(p)
    (d,) = diff(paths[0], paths[1])["differences"]
    assert (d["section"], d["key"], d["change"]) == ("hyperparameters", "n", "changed") and d["a"] != d["b"]
    assert diff(paths[1], paths[2])["equal"]
