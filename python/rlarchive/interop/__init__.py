"""Bridges to other libraries' model files: Stable-Baselines3 and Stable-Baselines (SB2).

The core package (reader, writer, validator) imports nothing from here; these
modules need torch, stable-baselines3 or gymnasium only inside the functions
that use them. ``rlarchive.sb3``, ``rlarchive.sb2`` and ``rlarchive.unpickle``
are aliases of the modules in this package.
"""
