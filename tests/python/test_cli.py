"""The rlarchive command: validate, inspect and dump on a PPO-like archive and on broken files."""
import json
import os
import subprocess
import sys

import pytest

from cases import CASES
from conftest import ROOT, schema_validator

RLARCHIVE = [sys.executable, "-m", "rlarchive.cli"]


def _run(*args):
    return subprocess.run([*RLARCHIVE, *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def ppo(tmp_path_factory):
    p = tmp_path_factory.mktemp("cli") / "ppo.rlarchive"
    p.write_bytes(next(c for c in CASES if c.id == "ppo-like-agent").build())
    return str(p)


def test_validate_valid_archive(ppo):
    r = _run("validate", ppo)
    assert r.returncode == 0 and "valid (0 errors" in r.stdout


def test_validate_json_report_matches_schema(ppo):
    r = _run("validate", "--json", ppo)
    report = json.loads(r.stdout)
    schema_validator("report-1.0.schema.json").validate(report)
    assert report["valid"] is True


def test_validate_invalid_archives_exit_1_with_codes(tmp_path):
    paths = []
    for cid in ("zip-gap-before-member", "json-nan-literal", "member-digest-mismatch-tensor"):
        p = tmp_path / f"{cid}.rlarchive"
        p.write_bytes(next(c for c in CASES if c.id == cid).build())
        paths.append(str(p))
    r = _run("validate", "--json", *paths)
    assert r.returncode == 1
    reports = json.loads(r.stdout)
    for rep in reports:
        schema_validator("report-1.0.schema.json").validate(rep)
    assert [rep["issues"][0]["code"] for rep in reports] == ["ZIP_GAP", "JSON_NAN_LITERAL", "MEMBER_DIGEST_MISMATCH"]
    human = _run("validate", *paths)
    assert human.returncode == 1 and "ZIP_GAP" in human.stdout and "INVALID" in human.stdout


def test_validate_reports_several_independent_problems(tmp_path):
    import numpy as np

    import rlarchive

    p = tmp_path / "two.rlarchive"
    rlarchive.save(p, {"x": 1}, {"a": {"w": np.ones(4)}, "b": {"w": np.ones(4)}})
    raw = bytearray(p.read_bytes())
    # flip the last element byte of both tensor members
    with rlarchive.open(p) as ar:
        offs = [ar.tensor_info(g)["w"].offset + 31 for g in ("a", "b")]
    for o in offs:
        raw[o] ^= 1
    p.write_bytes(bytes(raw))
    rep = rlarchive.validate(p)
    assert [i["code"] for i in rep["issues"]] == ["ZIP_CRC_MISMATCH", "ZIP_CRC_MISMATCH"]


def test_inspect_shows_the_agent(ppo):
    r = _run("inspect", ppo)
    assert r.returncode == 0
    out = r.stdout
    for needle in ("format version  1.0", "observation_space", "Box(F32, shape=(8,), bounds [-inf, inf])", "Discrete(n=4", "linear schedule", "1732246000123456789", "policy: 6 tensors", "optimizer.policy.optimizer", "ActorCriticPolicy"):
        assert needle in out, needle


def test_dump_is_the_canonical_dump(ppo):
    r = subprocess.run([*RLARCHIVE, "dump", ppo], capture_output=True)
    with open(os.path.join(ROOT, "test-vectors", "valid", "ppo-like-agent.dump.json"), "rb") as f:
        assert r.stdout == f.read() + b"\n"


def test_errors_are_one_line_with_code(tmp_path):
    p = tmp_path / "junk"
    p.write_bytes(b"not an archive")
    r = _run("dump", str(p))
    assert r.returncode == 1 and r.stderr.startswith("rlarchive: ARCHIVE_NOT_RLARCHIVE")
