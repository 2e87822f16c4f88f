"""Archives holding one part of an agent: the replay buffer alone, or the VecNormalize statistics alone.

Stable-Baselines3 and the RL Zoo keep these beside the model, as pickles:
``model.save_replay_buffer(path)`` and ``VecNormalize.save(path)``. Their
twins write an archive whose metadata ``part`` names what it holds
(spec/metadata.md §8, Annex B.13):

- ``replay_buffer``: the extension ``RLA_replay_buffer``, and in ``data`` the
  buffer's ``observation_space`` and ``action_space``;
- ``vec_normalize``: the extension ``RLA_vec_normalize``, and in ``data`` the
  wrapper's ``observation_space`` and ``action_space``.

:func:`load_replay_buffer` puts an archive's buffer into an existing model
as ``load_replay_buffer`` does (a new buffer object, the HER environment set,
the last trajectory truncated when asked, the model's device);
:func:`load_vec_normalize` wraps a ``VecEnv`` as ``VecNormalize.load`` does.
Both read the part from a model archive too (saved with
``replay_buffer=True`` or ``vec_normalize=``). Nothing is unpickled.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from .. import metadata as metadata_keys
from ..errors import RlarchiveError
from ..extensions import replay_buffer as replay_buffer_ext
from ..extensions import vec_normalize as vec_normalize_ext
from ..extensions.vec_normalize import Statistics
from . import files as sb3_files
from .keys import META_SOURCE, META_VERSION, LoadWarning

if TYPE_CHECKING:
    from ..reader import Archive

__all__ = [
    "part_metadata",
    "expect_part",
    "save_replay_buffer",
    "load_replay_buffer",
    "save_vec_normalize",
    "load_vec_normalize",
    "vec_normalize_of",
]


def part_metadata(part: str) -> dict[str, str]:
    """The metadata every part archive of the bridge records: ``part``, ``source``, the SB3 version."""
    import stable_baselines3

    return {metadata_keys.PART: part, META_SOURCE: "stable-baselines3", META_VERSION: stable_baselines3.__version__}


def expect_part(ar: Archive, path: Any, parts: tuple[str, ...]) -> str:
    """The archive's part (metadata ``part``), which must be one of ``parts``; else VALUE_UNSUPPORTED saying what it holds."""
    part = metadata_keys.part_of(ar.metadata)
    if part not in parts:
        how = {
            "model": "load it with the algorithm's load (rlarchive.sb3.load)",
            "replay_buffer": "load it into a model with load_replay_buffer",
            "vec_normalize": "load it with VecNormalize.load (rlarchive.sb3.load_vec_normalize)",
            "policy": "load it with the policy class's load (rlarchive.sb3.load_policy)",
        }[part]
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            f"{sb3_files.describe(path)} holds a {part.replace('_', ' ')} (metadata part), not a "
            f"{' or a '.join(p.replace('_', ' ') for p in parts)}: {how}",
        )
    return part


def save_replay_buffer(model: Any, path: Any) -> str:
    """Write ``model``'s replay buffer alone as an archive (part ``replay_buffer``); returns what was written.

    Args:
        model: an off-policy SB3 or sb3-contrib model.
        path: the archive (written as it is, atomically) or a writable binary file object.
    Raises:
        RlarchiveError: VALUE_UNSUPPORTED when the model has no buffer or one the
            extension cannot hold (spec RLA_replay_buffer); nothing is written.
    """
    from ..writer import save
    from . import replay_buffer as buffers

    buffer = getattr(model, "replay_buffer", None)
    if buffer is None:
        raise RlarchiveError("VALUE_UNSUPPORTED", "The replay buffer is not defined")
    value = buffers.capture(buffer)
    data = {"observation_space": buffer.observation_space, "action_space": buffer.action_space}
    buffers.check_value(value, data)
    sb3_files.write(
        path,
        lambda target: save(
            target,
            data,
            metadata=part_metadata("replay_buffer"),
            extension_values={replay_buffer_ext.EXTENSION: value},
        ),
    )
    return buffers.describe(value)


def load_replay_buffer(model: Any, path: Any, truncate_last_traj: bool = True) -> Any:
    """Put the replay buffer of an archive into ``model`` as SB3's ``load_replay_buffer`` does; returns the buffer.

    A new buffer object of the recorded class replaces the model's; a
    ``HerReplayBuffer`` gets the model's environment and, with
    ``truncate_last_traj``, its open episodes are closed (SB3's warning
    included); the buffer's device becomes the model's. Its arrays are
    copy-on-write views of the archive file when ``path`` is a local file.

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for an archive without a replay buffer,
            and what opening and checking the archive raises.
    """
    from ..reader import open_archive
    from . import replay_buffer as buffers

    with open_archive(sb3_files.source(path, "pkl"), spaces="neutral") as ar:
        expect_part(ar, path, ("replay_buffer", "model"))
        ar.verify()
        ar.check_extensions()
        value = buffers.read_value(ar)
    if value is None:
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            f"{sb3_files.describe(path)} holds no replay buffer (extension {replay_buffer_ext.EXTENSION})",
        )
    buffer = buffers.build_buffer(value, device=str(getattr(model, "device", "cpu")))
    model.replay_buffer = buffer
    if value.get("her") is not None:
        assert model.env is not None, "You must pass an environment at load time when using `HerReplayBuffer`"
        buffer.set_env(model.env)
        if truncate_last_traj:
            buffer.truncate_last_trajectory()
    buffer.device = model.device
    return buffer


def save_vec_normalize(wrapper: Any, path: Any) -> None:
    """Write a ``VecNormalize``'s statistics and settings alone as an archive (part ``vec_normalize``).

    The live wrapper's attributes are read (nothing is pickled); its spaces
    go to ``data`` so that loading can check the environment it wraps.
    """
    from ..writer import save
    from . import vec_normalize as vecnormalize

    stats = vecnormalize.from_wrapper(wrapper)
    data = {"observation_space": wrapper.observation_space, "action_space": wrapper.action_space}
    sb3_files.write(
        path,
        lambda target: save(
            target,
            data,
            metadata=part_metadata("vec_normalize"),
            extension_values={vec_normalize_ext.EXTENSION: vec_normalize_ext.to_value(stats)},
        ),
    )


def vec_normalize_of(ar: Archive, path: Any) -> Statistics:
    """The VecNormalize statistics an open archive holds; VALUE_UNSUPPORTED when it holds none."""
    stats = ar.vec_normalize()
    if stats is None:
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            f"{sb3_files.describe(path)} holds no VecNormalize statistics (extension {vec_normalize_ext.EXTENSION})",
        )
    return stats


def load_vec_normalize(path: Any, venv: Any, *, training: bool = True) -> Any:
    """A ``VecNormalize`` around ``venv`` with an archive's statistics, as ``VecNormalize.load(path, venv)`` gives it.

    The archive may be a ``vec_normalize`` part or a model archive holding
    the statistics (``rlarchive.sb3.save(..., vec_normalize=)``). ``training``
    True (the default) gives the wrapper as ``VecNormalize.load`` does, with
    the recorded ``training`` and ``norm_reward`` flags; False sets it up for
    evaluation (``training`` and ``norm_reward`` false, as SB3's documentation
    and RL Zoo do). For a ``vec_normalize`` part, the environment's
    observation space must have the recorded one's shape (SB3's check in
    ``set_venv``, an AssertionError). The running discounted return is the
    archive's when it holds one for as many environments as ``venv`` has
    (spec RLA_vec_normalize §4.1); else it starts at zero, with a
    ``LoadWarning`` when ``training``.
    """
    from stable_baselines3.common import utils

    from ..reader import open_archive
    from . import vec_normalize as vecnormalize

    with open_archive(sb3_files.source(path, ""), spaces="gymnasium") as ar:
        part = expect_part(ar, path, ("vec_normalize", "model"))
        stats = vec_normalize_of(ar, sb3_files.describe(path))
        space = ar.data.get("observation_space") if part == "vec_normalize" else None
    if space is not None:
        utils.check_shape_equal(space, venv.observation_space)
    wrapper = vecnormalize.wrap(stats, venv)
    note = vecnormalize.returns_note(stats, wrapper.num_envs)
    if training and note is not None:  # the running return starts at zero (spec RLA_vec_normalize §4.1)
        warnings.warn(note, LoadWarning, stacklevel=2)
    if not training:
        wrapper.training = False
        wrapper.norm_reward = False
    return wrapper
