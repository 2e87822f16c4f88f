"""The canonical dump of spec §13."""

from __future__ import annotations

import hashlib

from . import checks, jsonstrict
from .tensors import TensorInfo
from .values import canonical

DUMP_VERSION = "1.0"
_CHUNK = 1 << 24


def _sha256(state: checks.CheckState, info: TensorInfo) -> str:
    """SHA-256 of one tensor's element bytes, read in bounded pieces."""
    h = hashlib.sha256()
    end = info.offset + info.nbytes
    for pos in range(info.offset, end, _CHUNK):
        h.update(state.source.read(pos, min(_CHUNK, end - pos)))
    return h.hexdigest()


def dump(state: checks.CheckState) -> bytes:
    """The canonical dump of a checked archive, as UTF-8 bytes (no trailing newline).

    ``state`` is the :class:`rlarchive.checks.CheckState` after spec §11.1 step 9
    (:attr:`rlarchive.Archive.state`; :meth:`rlarchive.Archive.dump` gives it).
    Performs the deferred checks and the supported extensions' checks (steps 10-11) first.

    Raises:
        RlarchiveError: the first issue of the state, or of steps 10 and 11.
    """
    for step in (checks.check_digests, checks.check_extensions):
        state = step(state)
        if state.issues:
            raise state.issues[0]
    doc = state.document
    if doc is None:
        raise ValueError("the state has not passed step 7 (check_data)")
    tensors = {
        group: {
            name: {"dtype": info.dtype, "shape": list(info.shape), "sha256": _sha256(state, info)}
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
