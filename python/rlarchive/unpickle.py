"""Alias of :mod:`rlarchive.interop.unpickle` (kept so that ``import rlarchive.unpickle`` works)."""

import sys

from .interop import unpickle as _module

sys.modules[__name__] = _module
