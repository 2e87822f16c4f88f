"""Alias of :mod:`rlarchive.interop.sb2` (kept so that ``import rlarchive.sb2`` works)."""

import sys

from .interop import sb2 as _module

sys.modules[__name__] = _module
