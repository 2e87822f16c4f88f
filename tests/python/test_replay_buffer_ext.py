"""Extension RLA_replay_buffer (spec/extensions/RLA_replay_buffer.md): the reader's view, its layouts against
Stable-Baselines3's own buffers, and checking without reading the transitions' bytes."""

from __future__ import annotations

import io

import numpy as np
import pytest
from cases import unchecked

import rlarchive
from rlarchive import spaces as sp
from rlarchive.errors import RlarchiveError
from rlarchive.extensions.replay_buffer import EXTENSION, GROUP, MEMBER
from rlarchive.sources import FileObjectSource, PathSource

gym = pytest.importorskip("gymnasium")
buffers = pytest.importorskip("stable_baselines3.common.buffers")
her_buffer = pytest.importorskip("stable_baselines3.her.her_replay_buffer")

TRANSITIONS = ("observations", "next_observations", "actions", "rewards", "dones", "timeouts")


def _fill(buf, steps: int, seed: int = 0) -> None:
    """Add ``steps`` transitions of random observations and actions to an SB3 buffer."""
    rng = np.random.default_rng(seed)
    osp, asp, n = buf.observation_space, buf.action_space, buf.n_envs
    osp.seed(seed)
    asp.seed(seed)
    for t in range(steps):

        def obs():
            if isinstance(osp, gym.spaces.Dict):
                return {k: np.stack([s.sample() for _ in range(n)]) for k, s in osp.spaces.items()}
            return np.stack([osp.sample() for _ in range(n)])

        done = (rng.random(n) < 0.3) | (t % 4 == 3)
        infos = [{"TimeLimit.truncated": bool(d and t % 2)} for d in done]
        buf.add(
            obs(), obs(), np.stack([asp.sample() for _ in range(n)]), rng.normal(size=n).astype(np.float32), done, infos
        )


def _value(buf) -> dict:
    """The member's value for an SB3 buffer, read from its attributes (the layouts of spec §5, taken as SB3 has them)."""
    cls = type(buf).__name__
    her = None
    if cls == "HerReplayBuffer":
        her = {
            "n_sampled_goal": buf.n_sampled_goal,
            "goal_selection_strategy": buf.goal_selection_strategy.name.lower(),
            "copy_info_dict": buf.copy_info_dict,
            "ep_start": buf.ep_start,
            "ep_length": buf.ep_length,
            "current_ep_start": buf._current_ep_start,
            "infos": [list(row) for row in buf.infos] if buf.copy_info_dict else None,
        }
    nxt = None if buf.optimize_memory_usage else buf.next_observations
    return {
        "class": cls,
        "buffer_size": buf.buffer_size,
        "n_envs": buf.n_envs,
        "pos": buf.pos,
        "full": buf.full,
        "optimize_memory_usage": buf.optimize_memory_usage,
        "handle_timeout_termination": buf.handle_timeout_termination,
        "observation_space": buf.observation_space,
        "action_space": buf.action_space,
        "observations": buf.observations,
        "next_observations": nxt,
        "actions": buf.actions,
        "rewards": buf.rewards,
        "dones": buf.dones,
        "timeouts": buf.timeouts,
        "her": her,
        "n_step": {"n_steps": buf.n_steps, "gamma": buf.gamma} if cls == "NStepReplayBuffer" else None,
    }


def _save(path, value: dict) -> None:
    data = {"observation_space": value["observation_space"], "action_space": value["action_space"]}
    rlarchive.save(path, data, extension_values={EXTENSION: value})


def _box(shape, dtype=np.float32):
    return gym.spaces.Box(-5, 5, shape, dtype)


class _GoalEnv:
    """Just enough of a VecEnv for HerReplayBuffer's constructor (it is never sampled here)."""


def _her(size: int, **kwargs):
    """A HerReplayBuffer of ``size`` rows over 2 environments, goals of 2 and observations of 4 values."""
    spaces = {"observation": _box((4,)), "achieved_goal": _box((2,)), "desired_goal": _box((2,))}
    return her_buffer.HerReplayBuffer(
        size,
        gym.spaces.Dict(spaces),
        _box((2,)),
        _GoalEnv(),
        "cpu",
        n_envs=2,
        goal_selection_strategy="final",
        **kwargs,
    )


SB3_BUFFERS = {
    "plain-box": lambda: buffers.ReplayBuffer(48, _box((3,)), _box((2,), np.float64), "cpu", n_envs=2),
    "discrete-both": lambda: buffers.ReplayBuffer(10, gym.spaces.Discrete(5), gym.spaces.Discrete(3), "cpu"),
    "multi": lambda: buffers.ReplayBuffer(
        8, gym.spaces.MultiBinary(4), gym.spaces.MultiDiscrete([3, 2]), "cpu", n_envs=2
    ),
    "optimize": lambda: buffers.ReplayBuffer(
        16, _box((2, 2)), _box((1,)), "cpu", optimize_memory_usage=True, handle_timeout_termination=False
    ),
    "dict": lambda: buffers.DictReplayBuffer(
        12,
        gym.spaces.Dict({"img": gym.spaces.Box(0, 255, (3, 4), np.uint8), "mode": gym.spaces.Discrete(3)}),
        gym.spaces.MultiBinary(2),
        "cpu",
        n_envs=3,
    ),
    "her": lambda: _her(10, copy_info_dict=True),
    "nstep": lambda: buffers.NStepReplayBuffer(
        20, _box((3,)), gym.spaces.Discrete(2), "cpu", n_envs=4, n_steps=5, gamma=0.9
    ),
}


@pytest.mark.parametrize("name", sorted(SB3_BUFFERS))
def test_sb3_buffers_are_stored_and_read_back(tmp_path, name):
    """Every SB3 buffer class, filled past wrapping or not: the archive holds its arrays as SB3 keeps them (the layouts of §5), the view gives them back."""
    buf = SB3_BUFFERS[name]()
    _fill(buf, steps=13, seed=len(name))
    value = _value(buf)
    p = tmp_path / "rb.rlarchive"
    _save(p, value)  # the writer runs the reader's structural checks
    with rlarchive.open(p) as ar:
        ar.dump()  # every check, the content rules included
        rb = ar.replay_buffer()
        assert rb.class_name == type(buf).__name__
        assert (rb.buffer_size, rb.n_envs, rb.pos, rb.full) == (buf.buffer_size, buf.n_envs, buf.pos, buf.full)
        assert rb.size == buf.size()
        assert rb.observation_space == buf.observation_space and rb.action_space == buf.action_space
        for key in TRANSITIONS:
            want, got = value[key], getattr(rb, key)
            if want is None:
                assert got is None
            elif isinstance(want, dict):
                assert list(got) == list(want)
                for k in want:
                    assert got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k]), (key, k)
            else:
                assert got.dtype == want.dtype and np.array_equal(got, want), key
        if rb.her is not None:
            assert rb.her.goal_selection_strategy == "final" and rb.her.n_sampled_goal == buf.n_sampled_goal
            for k in ("ep_start", "ep_length"):
                assert np.array_equal(getattr(rb.her, k), getattr(buf, k))
            assert np.array_equal(rb.her.current_ep_start, buf._current_ep_start)
            assert rb.her.infos == [list(row) for row in buf.infos]
        if rb.n_step is not None:
            assert (rb.n_step.n_steps, rb.n_step.gamma) == (5, 0.9)


def test_referenced_arrays_are_zero_copy_views(tmp_path):
    buf = buffers.ReplayBuffer(400, _box((3,)), _box((2,)), "cpu", n_envs=2)  # every array above INLINE_ARRAY_BYTES
    _fill(buf, 30)
    p = tmp_path / "rb.rlarchive"
    _save(p, _value(buf))
    with rlarchive.open(p) as ar:
        assert "replay_buffer/observations" in ar.tensor_info(GROUP)  # named by their JSON Pointer in the member
        rb = ar.replay_buffer()
        mapped = np.frombuffer(ar._buffer(), np.uint8)
        for key in TRANSITIONS:
            a = getattr(rb, key)
            assert not a.flags.writeable and np.shares_memory(a, mapped), key


def _big(path, rows: int = 46_000) -> int:
    """A ReplayBuffer of about 20 MB of transitions; returns their byte count."""
    b, n = rows, 2
    rng = np.random.default_rng(1)
    value = {
        "class": "ReplayBuffer", "buffer_size": b, "n_envs": n, "pos": 7, "full": True,
        "optimize_memory_usage": False, "handle_timeout_termination": True,
        "observation_space": sp.Box(np.full(24, -1, np.float32), np.full(24, 1, np.float32), (24,), "F32"),
        "action_space": sp.Box(np.full(4, -1, np.float32), np.full(4, 1, np.float32), (4,), "F32"),
        "observations": rng.random((b, n, 24), np.float32), "next_observations": rng.random((b, n, 24), np.float32),
        "actions": rng.random((b, n, 4), np.float32), "rewards": rng.random((b, n), np.float32),
        "dones": np.zeros((b, n), np.float32), "timeouts": np.zeros((b, n), np.float32), "her": None, "n_step": None,
    }  # fmt: skip
    _save(path, value)
    return sum(value[k].nbytes for k in TRANSITIONS)


def test_checking_reads_none_of_the_transitions(tmp_path):
    """Spec §6: opening and checking the extension reads the member and the headers, not the buffer."""
    p = tmp_path / "big.rlarchive"
    total = _big(p)
    assert total > 20_000_000
    src = PathSource(p)
    src.log = []
    with rlarchive.open(src) as ar:
        ar.check_extensions()
        rb = ar.replay_buffer()
        regions = [(i.offset, i.offset + i.nbytes) for i in ar.tensor_info(GROUP).values()]
        assert all(off + n <= a or off >= b for off, n in src.log for a, b in regions)
        assert ar.bytes_read < 100_000
        assert rb.observations.shape == (46_000, 2, 24)  # a view on the map: still no read
        assert all(off + n <= a or off >= b for off, n in src.log for a, b in regions)


def test_an_unmapped_source_fetches_only_the_array_asked_for(tmp_path):
    """From a source that is not mapped (a file object, as a remote one), checking fetches no transition; one tensor costs its own bytes."""
    p = tmp_path / "big.rlarchive"
    _big(p)
    with open(p, "rb") as f:
        ar = rlarchive.open(FileObjectSource(io.BytesIO(f.read())))
    ar.check_extensions()
    before = ar.bytes_read
    assert before < 100_000
    rewards = ar.tensor(GROUP, "replay_buffer/rewards")
    assert ar.bytes_read - before == rewards.nbytes == 46_000 * 2 * 4
    ar.close()


def test_no_extension_gives_none(tmp_path):
    p = tmp_path / "plain.rlarchive"
    rlarchive.save(p, {"gamma": 0.99})
    with rlarchive.open(p) as ar:
        assert ar.replay_buffer() is None


def test_the_accessor_reports_a_malformed_member(tmp_path):
    buf = SB3_BUFFERS["her"]()
    _fill(buf, 6)
    value = _value(buf)
    value["her"]["ep_start"] = np.where(np.arange(10).reshape(5, 2) == 3, 5, 0).astype(
        np.int64
    )  # buffer_size is 10 // 2
    broken = ("EXTENSION_INVALID", MEMBER, "/replay_buffer/her/ep_start")
    p = tmp_path / "bad.rlarchive"
    with pytest.raises(RlarchiveError) as refused:  # the writer runs the reader's rules, content rules included
        _save(p, value)
    cause = refused.value.__cause__
    assert refused.value.code == "WRITE_INVALID" and isinstance(cause, RlarchiveError)
    assert (cause.code, cause.member, cause.pointer) == broken
    assert not p.exists()
    data = {"observation_space": value["observation_space"], "action_space": value["action_space"]}
    p.write_bytes(unchecked(data, {EXTENSION: value}))  # the same bytes without the writer's checks
    with rlarchive.open(p) as ar:
        with pytest.raises(RlarchiveError) as e:
            ar.replay_buffer()
    assert (e.value.code, e.value.member, e.value.pointer) == broken


def test_writing_checks_the_her_indices_where_they_are(monkeypatch):
    """The HER indices a writer checks (spec §4 rule 9) are read in the buffer's own memory: no copy of them."""
    import rlarchive.writer as writer

    buf = _her(200)  # ep_start and ep_length: 100 rows x 2 environments of int64 each, tensors of their own
    _fill(buf, steps=13)
    seen = []
    view = writer.view_numpy

    def spy(elements, info):
        a = view(elements, info)
        seen.append(a)
        return a

    monkeypatch.setattr(writer, "view_numpy", spy)
    value = _value(buf)
    data = {"observation_space": value["observation_space"], "action_space": value["action_space"]}
    rlarchive.writer.prepare(data, extension_values={EXTENSION: value})
    checked = [a for a in seen if a.shape == buf.ep_start.shape]
    assert len(checked) == 2
    assert all(np.shares_memory(a, buf.ep_start) or np.shares_memory(a, buf.ep_length) for a in checked)
    assert not any(a.flags.writeable for a in checked)
