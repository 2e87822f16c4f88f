"""Stable-Baselines3 training callbacks that write archives: ``CheckpointCallback`` and ``EvalCallback``'s best model.

:class:`CheckpointCallback` takes SB3's arguments and writes, every
``save_freq`` calls, one archive ``{name_prefix}_{num_timesteps}_steps.rlarchive``
holding the model, its run state (so that a load with ``force_reset=False``
goes on as the run would have), and when asked the replay buffer and the
VecNormalize statistics; ``keep_last`` keeps only the newest N of them.
With the replay buffer, the checkpoint is by default a background save
(:mod:`rlarchive.sb3.background`): training goes on while the archive is
written. :class:`EvalCallback` is SB3's, writing the best model as
``best_model.rlarchive``. Both write through :func:`write_checkpoint`, one
function, each archive complete when it appears (the writer's atomic
replace). stable-baselines3 is imported with this module.
"""

from __future__ import annotations

import os
import re
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.callbacks import EvalCallback as _SB3EvalCallback

from . import background as background_saves
from .saving import save

__all__ = ["write_checkpoint", "CheckpointCallback", "EvalCallback", "SUFFIX"]

#: The file name extension of the archives the callbacks write.
SUFFIX = ".rlarchive"


def write_checkpoint(
    model: Any, path: str, *, replay_buffer: bool = False, vec_normalize: Any = None, background: bool = False
) -> Any:
    """Write one checkpoint archive of ``model`` at ``path`` (the run state always; the buffer, the statistics when given).

    Every archive the callbacks write goes through this function. Returns the
    :class:`~rlarchive.sb3.ImportReport`, or with ``background`` the
    :class:`~rlarchive.sb3.background.BackgroundSave` writing it.
    """
    return save(
        model, path, training=True, replay_buffer=replay_buffer, vec_normalize=vec_normalize, background=background
    )


class CheckpointCallback(BaseCallback):
    """Save the model as an archive every ``save_freq`` calls (SB3's ``CheckpointCallback``, without pickle).

    Args:
        save_freq: save every ``save_freq`` calls of the callback (with ``n_envs``
            environments, ``save_freq * n_envs`` steps, as SB3 counts).
        save_path: the folder of the checkpoints (made when missing).
        name_prefix: the file names' prefix: ``{name_prefix}_{num_timesteps}_steps.rlarchive``.
        save_replay_buffer: also store the replay buffer in each archive (off-policy models).
        save_vecnormalize: also store the VecNormalize statistics of the model's
            environment in each archive, when it has them.
        keep_last: keep only the newest ``keep_last`` checkpoints of this prefix in
            ``save_path`` (None: keep all); a checkpoint is counted once it is written.
        background: write each checkpoint on a thread of its own while training goes
            on (``rlarchive.sb3.save(..., background=True)``: the archive holds the
            model and buffer as they were at the checkpoint). None (the default):
            when ``save_replay_buffer`` is set, whose buffer makes a checkpoint
            long. A checkpoint that failed raises its error at the next checkpoint
            (or the next ``rlarchive.sb3.save``), or when training ends, where the
            callback waits for the last one to be written; a process that stops
            otherwise waits for it at exit and prints an error nobody took.
        verbose: 2 prints each path written.
    """

    def __init__(
        self,
        save_freq: int,
        save_path: str,
        name_prefix: str = "rl_model",
        save_replay_buffer: bool = False,
        save_vecnormalize: bool = False,
        keep_last: int | None = None,
        background: bool | None = None,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        if keep_last is not None and keep_last < 1:
            raise ValueError("keep_last must be at least 1 (or None to keep every checkpoint)")
        self.save_freq = save_freq
        self.save_path = save_path
        self.name_prefix = name_prefix
        self.save_replay_buffer = save_replay_buffer
        self.save_vecnormalize = save_vecnormalize
        self.keep_last = keep_last
        self.background = save_replay_buffer if background is None else background
        self.written: list[str] = []
        self._pending: background_saves.BackgroundSave | None = None

    def _init_callback(self) -> None:
        os.makedirs(self.save_path, exist_ok=True)

    def checkpoint_path(self, num_timesteps: int | None = None) -> str:
        """The archive written when the model has taken the given number of steps (default: its count now)."""
        steps = self.num_timesteps if num_timesteps is None else num_timesteps
        return os.path.join(self.save_path, f"{self.name_prefix}_{steps}_steps{SUFFIX}")

    def _on_step(self) -> bool:
        if self.n_calls % self.save_freq == 0:
            self._settle()
            path = self.checkpoint_path()
            buffer = self.save_replay_buffer and getattr(self.model, "replay_buffer", None) is not None
            stats = self.model.get_vec_normalize_env() if self.save_vecnormalize else None
            done = write_checkpoint(
                self.model, path, replay_buffer=buffer, vec_normalize=stats, background=self.background
            )
            self.written.append(path)
            if self.verbose >= 2:
                print(f"Saving model checkpoint to {path}")
            if self.background:
                self._pending = done
            else:
                self._prune()
        return True

    def _on_training_end(self) -> None:
        self._settle()

    def _settle(self) -> None:
        """Wait for the checkpoint in flight, raise its error (naming it) unless already raised, then prune."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        pending.wait()
        background_saves.settle()  # raises the error of a save nobody took (a later save may have taken it)
        if pending.exception() is None:
            self._prune()

    def checkpoints(self) -> list[str]:
        """The checkpoint archives of this prefix in ``save_path``, oldest first (by their step count)."""
        pattern = re.compile(re.escape(self.name_prefix) + r"_([0-9]+)_steps" + re.escape(SUFFIX) + "$")
        found = []
        for name in os.listdir(self.save_path):
            m = pattern.match(name)
            if m is not None:
                found.append((int(m.group(1)), os.path.join(self.save_path, name)))
        return [p for _, p in sorted(found)]

    def _prune(self) -> None:
        if self.keep_last is None:
            return
        for path in self.checkpoints()[: -self.keep_last]:
            try:
                os.remove(path)
            except FileNotFoundError:
                pass


class _SaveBest(BaseCallback):
    """Called by :class:`EvalCallback` on a new best mean reward: writes the best model, then the caller's callback."""

    def __init__(self, folder: str, save_vecnormalize: bool, then: BaseCallback | None) -> None:
        super().__init__()
        self.folder = folder
        self.save_vecnormalize = save_vecnormalize
        self.then = then

    def _init_callback(self) -> None:
        if self.then is not None:
            self.then.init_callback(self.model)

    def _on_step(self) -> bool:
        stats = self.model.get_vec_normalize_env() if self.save_vecnormalize else None
        write_checkpoint(self.model, os.path.join(self.folder, "best_model" + SUFFIX), vec_normalize=stats)
        return self.then.on_step() if self.then is not None else True


class EvalCallback(_SB3EvalCallback):
    """SB3's ``EvalCallback`` writing its best model as the archive ``best_model.rlarchive`` in the folder its
    argument best_model_save_path names.

    Takes SB3's arguments (by keyword, after the evaluation environment), and ``save_vecnormalize`` (store the training
    environment's VecNormalize statistics in the best model's archive too).
    A callback given as callback_on_new_best runs after the archive is written.
    """

    def __init__(self, eval_env: Any, *, save_vecnormalize: bool = False, **kwargs: Any) -> None:
        folder = kwargs.pop("best_model_save_path", None)
        then = kwargs.pop("callback_on_new_best", None)
        saver = _SaveBest(folder, save_vecnormalize, then) if folder is not None else then
        super().__init__(eval_env, callback_on_new_best=saver, best_model_save_path=None, **kwargs)
        self.best_archive_folder = folder
        if then is not None:
            then.parent = self

    def _init_callback(self) -> None:
        super()._init_callback()
        if self.best_archive_folder is not None:
            os.makedirs(self.best_archive_folder, exist_ok=True)
