"""Alias of :mod:`rlarchive.interop.sb3` (kept so that ``import rlarchive.sb3`` works)."""

import sys

from .interop import sb3 as _module

sys.modules[__name__] = _module
