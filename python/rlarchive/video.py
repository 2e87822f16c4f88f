"""A replay video of an archive's portable policy (``rlarchive evaluate --video``, ``rlarchive package``).

The environment is made with ``render_mode="rgb_array"`` and wrapped in
gymnasium's ``RecordVideo``, which writes MP4 through MoviePy (the extra
``rlarchive[video]``); the policy acts as in :func:`rlarchive.evaluate.evaluate`
(deterministic actions, the recorded wrappers) for one episode, reset with the
given seed, of at most ``max_steps`` steps. A video is a nicety: when it
cannot be made (MoviePy missing, an environment without ``rgb_array``
rendering, or one whose renderer fails or needs a package that is missing) no
file is written and a note says why; only errors of the archive or of the
environment's fit to the policy are raised.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from typing import Any

from .errors import RlarchiveError

__all__ = ["record_video", "MAX_VIDEO_STEPS"]

#: The most steps a replay video shows (the RL Zoo's default video length).
MAX_VIDEO_STEPS = 1000
#: What rendering and encoding can raise that means "no video here", beyond gymnasium's own errors.
_RENDER_ERRORS = (ImportError, OSError, RuntimeError, ValueError, TypeError, AttributeError, NotImplementedError)


def _renders(env: Any) -> bool:
    modes = (getattr(env, "metadata", None) or {}).get("render_modes") or []
    return "rgb_array" in modes and getattr(env, "render_mode", None) == "rgb_array"


def record_video(
    path: str | os.PathLike[str],
    env_id: str,
    out: str | os.PathLike[str],
    *,
    seed: int | None = None,
    max_steps: int = MAX_VIDEO_STEPS,
) -> list[str]:
    """Record one episode of the archive's portable policy in ``env_id`` as the MP4 file ``out``.

    Returns:
        Notes: empty when ``out`` was written, else why there is no video.
    Raises:
        RlarchiveError: what :func:`rlarchive.evaluate.evaluate` raises for the archive, the id or the fit of the
            environment to the policy.
    """
    import gymnasium

    from .evaluate import policy_of

    try:
        import moviepy  # noqa: F401
    except ImportError:
        return ["no replay video: the package moviepy is not installed (pip install 'rlarchive[video]')"]
    policy, wrappers = policy_of(path)
    with warnings.catch_warnings():  # gymnasium's warnings about rendering: the notes say what matters
        warnings.simplefilter("ignore")
        return _record(gymnasium, env_id, os.fspath(out), policy, wrappers, seed, max_steps)


def _record(
    gymnasium: Any, env_id: str, target: str, policy: Any, wrappers: list[Any], seed: int | None, max_steps: int
) -> list[str]:
    from .evaluate import fit_policy, make_env, run_episode

    folder = tempfile.mkdtemp(prefix=".video-", dir=os.path.dirname(os.path.abspath(target)))
    try:
        env = make_env(env_id, render_mode="rgb_array")
        if not _renders(env):
            env.close()
            return [f"no replay video: the environment {env_id!r} does not render rgb_array frames"]
        notes: list[str] = []
        try:
            stages = fit_policy(env, env_id, policy, wrappers, notes)
        except RlarchiveError:
            env.close()
            raise
        recorder = gymnasium.wrappers.RecordVideo(
            env,
            os.path.join(
                folder, "frames"
            ),  # a folder that does not exist yet: gymnasium warns of one that does episode_trigger=lambda i: i == 0, name_prefix="replay", disable_logger=True
        )
        try:
            run_episode(recorder, env_id, policy, stages, seed, max_steps)
        except (gymnasium.error.Error, *_RENDER_ERRORS) as e:
            return [f"no replay video: the environment {env_id!r} cannot render: {type(e).__name__}: {e}"]
        finally:
            try:
                recorder.close()  # writes the video
            except (gymnasium.error.Error, *_RENDER_ERRORS) as e:
                notes.append(f"no replay video: it could not be encoded: {type(e).__name__}: {e}")
        written = os.path.join(folder, "frames")
        made = [n for n in os.listdir(written) if n.endswith(".mp4")] if os.path.isdir(written) else []
        if notes or len(made) != 1:
            return notes or ["no replay video: the recorder wrote no frames"]
        os.replace(os.path.join(written, made[0]), target)
        return []
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot write the video {target}: {e.strerror or e}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
