"""Restarting a run in a new process: telling that an environment was never reset, before ``learn`` fails.

After a job is killed, its last checkpoint is loaded in a new process around
a new environment. ``load(..., force_reset=False)`` keeps the archive's last
observation, so ``learn`` steps the environment without resetting it, and a
new environment refuses (SB3's ``Monitor``: "Tried to step environment that
needs reset"; gymnasium's order check: "Cannot call env.step() before calling
env.reset()"). :func:`fresh_env_note` finds such an environment when the
model is loaded, so the load can say in one line what to do
(Annex B.14, the restart recipe).
"""

from __future__ import annotations

from typing import Any

__all__ = ["needs_reset", "fresh_env_note", "warn_fresh_env"]

_MAX_WRAPPERS = 64  # wrappers followed per environment


def _vec_base(env: Any) -> Any:
    for _ in range(_MAX_WRAPPERS):
        if not hasattr(env, "venv"):
            break
        env = env.venv
    return env


def _env_needs_reset(env: Any) -> bool:
    """Whether one (gymnasium) environment, through its wrappers, still has to be reset before it steps."""
    for _ in range(_MAX_WRAPPERS):
        if env is None:
            return False
        attrs = vars(env) if hasattr(env, "__dict__") else {}
        if attrs.get("needs_reset") is True or attrs.get("_has_reset") is False:
            return True
        env = attrs.get("env")
    return False


def needs_reset(env: Any) -> bool:
    """Whether a VecEnv (through its wrappers) holds an environment that has to be reset before it steps.

    Only environments living in this process (``DummyVecEnv``'s ``envs``) are
    looked at; for others (``SubprocVecEnv``) the answer is False.
    """
    envs = getattr(_vec_base(env), "envs", None)
    return isinstance(envs, list) and any(_env_needs_reset(e) for e in envs)


def fresh_env_note(model: Any, env: Any, force_reset: bool) -> str | None:
    """The one-line advice for a load with ``force_reset=False`` around an environment that was never reset, or None."""
    if force_reset or env is None or getattr(model, "_last_obs", None) is None:
        return None
    if not needs_reset(model.get_env() if hasattr(model, "get_env") else env):
        return None
    return (
        "force_reset=False keeps the archive's last observation, but this environment has not been reset (a new process "
        "or a new environment), so learn would fail with 'Tried to step environment that needs reset': load with "
        "force_reset=True (the default) to start from a reset, or give the environment the run was using "
        "(Annex B.14, restarting a run)"
    )


def warn_fresh_env(model: Any, env: Any, force_reset: bool) -> None:
    """A ``LoadWarning`` (pointing at the caller of ``load``) with :func:`fresh_env_note`'s advice, when it has one."""
    import warnings

    from .keys import LoadWarning

    note = fresh_env_note(model, env, force_reset)
    if note is not None:
        warnings.warn(note, LoadWarning, stacklevel=3)
