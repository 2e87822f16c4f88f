"""When an environment id read from an archive may be used (spec/metadata.md §1, §6).

An id from a file is a hint: gymnasium's ``make`` imports the module an id
names before its ``:`` (``module:Env``), and the id of an environment that is
not registered leads it to look further. :func:`registered` gives the recorded
id back only when it names an environment already registered in the installed
gymnasium, under exactly that key, with no module part: a lookup in
``gymnasium.envs.registry`` (a dictionary) by the exact string, which imports
nothing and runs nothing of the id. Anything else gives None, and the caller
asks for the id (``--env``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["registered", "why_not"]


def _registry() -> dict[str, Any] | None:
    try:
        import gymnasium
    except ImportError:
        return None
    registry = getattr(gymnasium.envs, "registry", None)
    return registry if isinstance(registry, dict) else None


def why_not(env_id: Any) -> str | None:
    """Why the recorded ``env_id`` may not be used (a phrase), or None when it names a registered environment."""
    if not isinstance(env_id, str) or not env_id:
        return "it is not an environment id"
    if ":" in env_id:
        return "it names a module to import (module:Env)"
    registry = _registry()
    if registry is None:
        return "gymnasium is not installed"
    if not dict.__contains__(registry, env_id):  # the dict's own lookup: no method of a subclass, nothing imported
        return "no environment of that id is registered in the installed gymnasium"
    return None


def registered(env_id: Any) -> str | None:
    """``env_id`` when it names an environment already registered in the installed gymnasium, by exactly that key and
    with no module part; otherwise None (:func:`why_not` says why)."""
    return env_id if why_not(env_id) is None else None
