"""Random SB3 replay buffers through the archive: Python reads back exactly what was written, and the
JavaScript reader's dump equals Python's (extension RLA_replay_buffer).

Each example builds a real Stable-Baselines3 buffer (ReplayBuffer or DictReplayBuffer) over random
spaces, fills a random number of transitions drawn from a seeded generator (so it may be empty,
partly filled, or have wrapped around), stores it with the bridge's ``capture`` and reads it back.
"""

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scale import examples
from test_crosslang import first_difference, js_outcome

import rlarchive

gym = pytest.importorskip("gymnasium")
buffers = pytest.importorskip("stable_baselines3.common.buffers")
from rlarchive.sb3.replay_buffer import capture  # noqa: E402  (needs stable-baselines3 above)

EXTENSION = "RLA_replay_buffer"


@st.composite
def leaf_spaces(draw):
    kind = draw(st.sampled_from(["box", "discrete", "multi_discrete", "multi_binary"]))
    if kind == "box":
        dtype = draw(st.sampled_from([np.float32, np.float64, np.uint8, np.int64]))
        shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
        if np.issubdtype(dtype, np.integer):
            return gym.spaces.Box(0, 9, shape, dtype)
        return gym.spaces.Box(-2.0, 2.0, shape, dtype)
    if kind == "discrete":
        return gym.spaces.Discrete(draw(st.integers(1, 6)))
    if kind == "multi_discrete":
        return gym.spaces.MultiDiscrete(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    return gym.spaces.MultiBinary(draw(st.integers(1, 4)))


@st.composite
def filled_buffers(draw):
    dict_obs = draw(st.booleans())
    if dict_obs:
        keys = draw(st.lists(st.sampled_from(["a", "b", "img", "mode"]), min_size=1, max_size=3, unique=True))
        obs_space = gym.spaces.Dict({k: draw(leaf_spaces()) for k in keys})
    else:
        obs_space = draw(leaf_spaces())
    act_space = draw(
        leaf_spaces().filter(lambda s: not (isinstance(s, gym.spaces.Box) and np.issubdtype(s.dtype, np.integer)))
    )
    size = draw(st.integers(1, 9))
    n_envs = draw(st.integers(1, 3))
    optimize = not dict_obs and draw(st.booleans())
    kwargs = dict(n_envs=n_envs)
    if optimize:
        kwargs.update(optimize_memory_usage=True, handle_timeout_termination=False)
    cls = buffers.DictReplayBuffer if dict_obs else buffers.ReplayBuffer
    buf = cls(size * n_envs, obs_space, act_space, "cpu", **kwargs)
    seed = draw(st.integers(0, 2**16))
    obs_space.seed(seed)
    act_space.seed(seed + 1)
    rng = np.random.default_rng(seed)

    def batch(space):
        samples = [space.sample() for _ in range(n_envs)]
        if isinstance(space, gym.spaces.Dict):
            return {k: np.stack([s[k] for s in samples]) for k in space.spaces}
        return np.stack([np.asarray(s) for s in samples])

    for _ in range(draw(st.integers(0, 2 * size + 1))):
        infos = [{"TimeLimit.truncated": bool(t)} for t in rng.integers(0, 2, n_envs)]
        buf.add(
            batch(obs_space),
            batch(obs_space),
            batch(act_space),
            rng.standard_normal(n_envs).astype(np.float32),
            rng.integers(0, 2, n_envs).astype(bool),
            infos,
        )
    return buf


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@settings(max_examples=examples(60))
@given(filled_buffers())
def test_random_buffers_round_trip_and_read_alike(workdir, js_reader, buf):
    path = os.path.join(workdir, "buffer.rlarchive")
    value = capture(buf)
    rlarchive.save(
        path,
        {"observation_space": buf.observation_space, "action_space": buf.action_space},
        extension_values={EXTENSION: value},
    )
    with rlarchive.open(path, spaces="neutral") as ar:
        got = ar.replay_buffer()
        assert got is not None
        assert (got.buffer_size, got.n_envs, got.pos, got.full) == (buf.buffer_size, buf.n_envs, buf.pos, buf.full)
        observations = (
            {k: np.asarray(v) for k, v in got.observations.items()}
            if isinstance(buf.observations, dict)
            else np.asarray(got.observations)
        )
        assert _same(buf.observations, observations)
        if buf.optimize_memory_usage:
            assert got.next_observations is None
        else:
            nxt = (
                {k: np.asarray(v) for k, v in got.next_observations.items()}
                if isinstance(buf.next_observations, dict)
                else np.asarray(got.next_observations)
            )
            assert _same(buf.next_observations, nxt)
        for name in ("actions", "rewards", "dones", "timeouts"):
            assert _same(getattr(buf, name), np.asarray(getattr(got, name))), name
        want = ar.dump()
    kind, dumped = js_outcome(js_reader, path)
    assert kind == "dump", f"JavaScript rejects a valid buffer archive: {dumped.decode()}"
    assert dumped == want, first_difference(want, dumped)
