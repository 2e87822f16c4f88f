"""The canonical dump of spec §13."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import jsonstrict
from .values import canonical

if TYPE_CHECKING:
    from .reader import Archive

DUMP_VERSION = "1.0"


def dump(archive: "Archive") -> bytes:
    """The canonical dump of an open archive, as UTF-8 bytes (no trailing newline).

    Performs the deferred checks and the supported extensions' checks (spec §11.1 steps 10-11) first.
    """
    archive.verify()
    archive.check_extensions()
    doc = archive.raw_data
    tensors = {
        group: {
            name: {"dtype": info.dtype, "shape": list(info.shape), "sha256": archive.tensor_sha256(group, name)}
            for name, info in archive.tensor_info(group).items()
        }
        for group in archive.groups
    }
    out = {
        "dump_version": DUMP_VERSION,
        "manifest": archive.manifest.raw,
        "data": {"data": canonical(doc["data"]), "optimizers": canonical(doc["optimizers"])},
        "tensors": tensors,
    }
    return jsonstrict.canonical(out)
