"""The canonical dump of spec §13."""

from __future__ import annotations

import dataclasses

from . import checks, jsonstrict
from .values import canonical

DUMP_VERSION = "1.0"


def dump(state: checks.CheckState) -> bytes:
    """The canonical dump of a checked archive, as UTF-8 bytes (no trailing newline).

    ``state`` is the :class:`rlarchive.checks.CheckState` after spec §11.1 step 9
    (:attr:`rlarchive.Archive.state`; :meth:`rlarchive.Archive.dump` gives it).
    Runs the deferred phases first (``integrity`` and ``extensions``, steps 10-11),
    step 10 giving each tensor's digest in its one read of the member's bytes.

    Raises:
        RlarchiveError: the first issue of the state, or of steps 10 and 11.
    """
    state = dataclasses.replace(state, digest_tensors=True)
    for phase in checks.DEFERRED:  # stops at the first failure
        state = checks.run(state, phase)
        if state.issues:
            raise state.issues[0]
    return render(state)


def render(state: checks.CheckState) -> bytes:
    """The canonical dump of a state that has passed every step of spec §11.1, step 10 with ``digest_tensors``
    (the tensors' SHA-256 are the ones step 10 computed: nothing is read here).

    Raises:
        ValueError: a state before step 7 or 10.
    """
    doc = state.document
    if doc is None:
        raise ValueError("the state has not passed step 7 (check_data)")
    if not state.digest_tensors or state.tensor_digests.keys() != state.tensor_headers.keys():
        raise ValueError("the state has not passed step 10 (check_digests) with digest_tensors")
    tensors = {
        group: {
            name: {"dtype": info.dtype, "shape": list(info.shape), "sha256": state.tensor_digests[group][name]}
            for name, info in infos.items()
        }
        for group, infos in state.tensor_headers.items()
    }
    out = {
        "dump_version": DUMP_VERSION,
        "manifest": state.checked_manifest.raw,
        "data": {"data": canonical(doc["data"]), "optimizers": canonical(doc["optimizers"])},
        "tensors": tensors,
    }
    return jsonstrict.canonical(out)
