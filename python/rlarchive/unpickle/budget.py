"""One memory budget for a whole import (Annex B.7).

An import turns a small file into large objects in several places: a deflated
member expands, a pickle's memo lets one array be referenced thousands of
times, a Box bound given as a scalar is broadcast to its shape, a ``.npy``
header declares its own shape, a torch tensor may view a storage with a
stride of 0. Per-value limits do not bound the product of such steps, so every
importer charges one :class:`ImportBudget` for each of them *before* the bytes
are decompressed, allocated or copied, and fails with ``LIMIT_EXCEEDED`` once
the total would pass the limit.

The limit is :data:`DEFAULT_IMPORT_BUDGET` or :data:`BUDGET_PER_INPUT_BYTE`
times the size of the input file, whichever is larger, unless the caller gives
one (``budget=`` on the importers, ``--budget`` on the command line).
"""

from __future__ import annotations

import os
from typing import BinaryIO, Union

from ..errors import RlarchiveError

__all__ = ["ImportBudget", "DEFAULT_IMPORT_BUDGET", "BUDGET_PER_INPUT_BYTE", "budget_for"]

#: Bytes an import may materialise whatever the input's size (256 MiB).
DEFAULT_IMPORT_BUDGET = 256 * 1024 * 1024
#: For a larger input: this many bytes per byte of the input file.
BUDGET_PER_INPUT_BYTE = 4


class ImportBudget:
    """A byte budget charged by every step of an import that allocates from the input.

    Not thread-safe; one import uses one budget.
    """

    __slots__ = ("limit", "used")

    def __init__(self, limit: int):
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise ValueError("the budget must be a non-negative integer number of bytes")
        self.limit = limit
        self.used = 0

    @property
    def remaining(self) -> int:
        """Bytes still available."""
        return self.limit - self.used

    def fits(self, nbytes: int) -> bool:
        """Whether ``nbytes`` more would stay within the limit (charges nothing)."""
        return nbytes <= self.limit - self.used

    def charge(self, nbytes: int, what: str, member: str | None = None) -> None:
        """Count ``nbytes`` against the budget, before they are allocated.

        Raises:
            RlarchiveError: LIMIT_EXCEEDED naming ``what`` when the total would pass the limit.
        """
        if nbytes < 0:
            raise ValueError("cannot charge a negative size")
        if nbytes > self.limit - self.used:
            raise RlarchiveError(
                "LIMIT_EXCEEDED",
                f"{what} needs {nbytes} bytes, beyond the import budget "
                f"({self.used} of {self.limit} bytes already used); pass a larger budget to import it",
                member=member,
            )
        self.used += nbytes


#: An input file of an import: a path, or a binary file open for reading (as a run folder's files are opened).
Source = Union[str, "os.PathLike[str]", BinaryIO]


def source_name(source: Source) -> str:
    """How messages name an input: its path, or the ``name`` of the open file."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<file>"))


def budget_for(path: Source | None, budget: int | ImportBudget | None = None) -> ImportBudget:
    """The budget for importing ``path`` (a path or an open file): the caller's, or the documented default for its
    size."""
    if isinstance(budget, ImportBudget):
        return budget
    if budget is not None:
        return ImportBudget(budget)
    size = 0
    if path is not None:
        try:
            if isinstance(path, (str, os.PathLike)):
                size = os.stat(os.fspath(path)).st_size
            else:
                size = os.fstat(path.fileno()).st_size
        except (OSError, TypeError, ValueError, AttributeError):
            size = 0
    return ImportBudget(max(DEFAULT_IMPORT_BUDGET, BUDGET_PER_INPUT_BYTE * size))
