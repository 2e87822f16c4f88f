"""Archive.provenance and Archive.evaluations (spec/metadata.md) on the metadata vectors."""

import json
import os

from suite import ROOT

import rlarchive
from rlarchive.metadata import Provenance

VECTORS = os.path.join(ROOT, "test-vectors")
INDEX = json.load(open(os.path.join(VECTORS, "index.json")))
METADATA_CASES = [c for c in INDEX["cases"] if c["id"].startswith("metadata-")]


def test_every_defined_key_as_its_text_says():
    c = next(c for c in METADATA_CASES if c["id"] == "metadata-provenance")
    with rlarchive.open(os.path.join(VECTORS, c["file"])) as ar:
        meta, p, evaluations, warnings = ar.metadata, ar.provenance, ar.evaluations, ar.warnings
    assert p.env_id == meta["env_id"]
    assert (p.n_envs, p.num_timesteps, p.seed) == (int(meta["n_envs"]), int(meta["num_timesteps"]), int(meta["seed"]))
    assert p.versions == {k[len("versions.") :]: v for k, v in meta.items() if k.startswith("versions.")} != {}
    assert p.wrappers == json.loads(meta["wrappers"])
    assert evaluations == json.loads(meta["evaluations"]) != []
    assert warnings == []


def test_malformed_keys_are_none_with_their_warning():
    fields = {
        "env_id": "env_id",
        "n_envs": "n_envs",
        "num_timesteps": "num_timesteps",
        "seed": "seed",
        "wrappers": "wrappers",
    }
    invalid = [c for c in METADATA_CASES if "METADATA_INVALID" in c.get("warnings", [])]
    assert len(invalid) >= 3
    for c in invalid:
        with rlarchive.open(os.path.join(VECTORS, c["file"])) as ar:
            bad = [w.pointer[len("/metadata/") :] for w in ar.warnings if w.code == "METADATA_INVALID"]
            p, evaluations, meta = ar.provenance, ar.evaluations, ar.metadata
        assert bad == [i["pointer"][len("/metadata/") :] for i in c["issues"]], c["id"]
        for key in bad:
            if key == "evaluations":
                assert evaluations == []
            elif key.startswith("versions."):
                assert key[len("versions.") :] not in p.versions
            elif key in fields:
                assert getattr(p, fields[key]) is None, (c["id"], key)
            else:  # a defined key that is not provenance (zoo.config, zoo.env_kwargs)
                assert key not in fields.values() and key in meta, (c["id"], key)
        assert p.env_id == meta["env_id"]  # the well-formed key beside it


def test_no_metadata(tmp_path):
    import numpy as np

    path = tmp_path / "m.rlarchive"
    rlarchive.save(path, {"gamma": 0.99}, tensors={"policy": {"w": np.ones(2, np.float32)}})
    with rlarchive.open(path) as ar:
        assert ar.provenance == Provenance() and ar.evaluations == []
