"""``python -m rlarchive``: the ``rlarchive`` command (see :mod:`rlarchive.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
