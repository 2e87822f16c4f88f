"""The replay buffer between Stable-Baselines3 and an archive (extension RLA_replay_buffer), without pickle."""

from __future__ import annotations

import glob
import os
import pickle
import struct
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3 import DQN, SAC  # noqa: E402
from stable_baselines3.common.buffers import DictReplayBuffer, NStepReplayBuffer, ReplayBuffer  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.envs import BitFlippingEnv, SimpleMultiObsEnv  # noqa: E402
from stable_baselines3.her.her_replay_buffer import HerReplayBuffer  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import sb3 as rsb3
from rlarchive.cli import main  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.reader import open_archive  # noqa: E402
from rlarchive.sb3 import replay_buffer as buffers  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(ROOT, "python")

ARRAYS = ("observations", "next_observations", "actions", "rewards", "dones", "timeouts")
HER_ARRAYS = ("ep_start", "ep_length", "_current_ep_start")


def _sac(n_envs: int = 1, **kw):
    env = make_vec_env("Pendulum-v1", n_envs=n_envs, seed=0)
    return SAC("MlpPolicy", env, buffer_size=300, learning_starts=10_000, seed=0, device="cpu", **kw)


def _dqn_her(copy_info_dict: bool = False, buffer_size: int = 200):
    env = make_vec_env(lambda: BitFlippingEnv(n_bits=4, continuous=False, max_steps=5), n_envs=2, seed=0)
    return DQN(
        "MultiInputPolicy", env, buffer_size=buffer_size, learning_starts=10_000, seed=0, device="cpu", replay_buffer_class=HerReplayBuffer,
        replay_buffer_kwargs={"n_sampled_goal": 2, "goal_selection_strategy": "final", "copy_info_dict": copy_info_dict},
    )  # fmt: skip


def _dqn_dict():
    env = make_vec_env(lambda: SimpleMultiObsEnv(random_start=True), n_envs=1, seed=0)
    return DQN("MultiInputPolicy", env, buffer_size=200, learning_starts=10_000, seed=0, device="cpu")


# name -> (model factory, steps, expected buffer class)
CASES = {
    "replay": (lambda: _sac(), 130, ReplayBuffer),
    "replay-3-envs": (lambda: _sac(3), 150, ReplayBuffer),
    "full": (lambda: _sac(), 420, ReplayBuffer),
    "optimize-memory": (
        lambda: _sac(2, optimize_memory_usage=True, replay_buffer_kwargs={"handle_timeout_termination": False}),
        100,
        ReplayBuffer,
    ),
    "dict": (_dqn_dict, 90, DictReplayBuffer),
    "her": (_dqn_her, 47, HerReplayBuffer),
    "her-infos": (lambda: _dqn_her(copy_info_dict=True), 47, HerReplayBuffer),
    "n-step": (
        lambda: _sac(replay_buffer_class=NStepReplayBuffer, replay_buffer_kwargs={"n_steps": 4, "gamma": 0.9}),
        80,
        NStepReplayBuffer,
    ),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def trained(request):
    make, steps, cls = CASES[request.param]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make()
        model.learn(steps)
    assert type(model.replay_buffer) is cls
    return request.param, model


def _arrays(buf) -> dict:
    out = {}
    for k in ARRAYS + (HER_ARRAYS if isinstance(buf, HerReplayBuffer) else ()):
        v = getattr(buf, k, None)
        if isinstance(v, dict):
            out.update({f"{k}/{key}": a for key, a in v.items()})
        elif v is not None:
            out[k] = v
    return out


def _canon(x):
    """An info's content: maps by their items in order (dict and OrderedDict alike), arrays and NumPy scalars by type, dtype and bytes."""
    if isinstance(x, dict):
        return ("map", tuple((k, _canon(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_canon(v) for v in x))
    if isinstance(x, (np.ndarray, np.generic)):
        return (type(x).__name__, str(x.dtype), np.shape(x), np.ascontiguousarray(x).tobytes())
    return (type(x).__name__, repr(x))


def _infos(buf):
    return [_canon(buf.infos[i]) for i in np.ndindex(buf.infos.shape)]


def _assert_same(buf, ref) -> None:
    assert type(buf) is type(ref)
    assert (buf.pos, buf.full, buf.n_envs, buf.buffer_size) == (ref.pos, ref.full, ref.n_envs, ref.buffer_size)
    assert buf.optimize_memory_usage == ref.optimize_memory_usage
    assert buf.handle_timeout_termination == ref.handle_timeout_termination
    mine, theirs = _arrays(buf), _arrays(ref)
    assert sorted(mine) == sorted(theirs)
    for k in mine:
        assert mine[k].dtype == theirs[k].dtype and mine[k].shape == theirs[k].shape, k
        np.testing.assert_array_equal(mine[k], theirs[k], err_msg=k)
    if isinstance(ref, HerReplayBuffer):
        assert (buf.n_sampled_goal, buf.goal_selection_strategy, buf.copy_info_dict) == (
            ref.n_sampled_goal,
            ref.goal_selection_strategy,
            ref.copy_info_dict,
        )
        assert buf.infos.shape == ref.infos.shape and buf.infos.dtype == object
        if ref.copy_info_dict:
            assert _infos(buf) == _infos(ref)
    if isinstance(ref, NStepReplayBuffer):
        assert (buf.n_steps, buf.gamma) == (ref.n_steps, ref.gamma)


def test_save_load_round_trip(trained, tmp_path):
    name, model = trained
    path = tmp_path / "m.rlarchive"
    report = rsb3.save(model, path, replay_buffer=True)
    assert any(n.startswith("replay buffer stored") for n in report.notes), report.notes
    assert rlarchive.validate(str(path))["summary"]["errors"] == 0  # every rule of the extension, spaces included
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.LoadWarning)  # a buffer left out would warn
        loaded = rsb3.load(path, env=model.get_env(), force_reset=False)
    buf = loaded.replay_buffer
    _assert_same(buf, model.replay_buffer)
    # copy-on-write views of the archive: writable, and writing leaves the file as it was
    big = max(_arrays(buf).values(), key=lambda a: a.nbytes)
    assert big.nbytes > 1024 and big.flags.writeable and not big.flags.owndata
    before = path.read_bytes()
    big.reshape(-1)[:4] = 7
    assert path.read_bytes() == before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded.learn(5)  # training goes on writing into the restored buffer
    assert loaded.replay_buffer is buf


def test_default_save_has_no_buffer(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _sac()
        model.learn(20)
    rsb3.save(model, tmp_path / "m.rlarchive")
    with open_archive(str(tmp_path / "m.rlarchive")) as ar:
        assert "RLA_replay_buffer" not in ar.extensions_used
    fresh = rsb3.load(tmp_path / "m.rlarchive")
    assert fresh.replay_buffer.pos == 0


def test_load_can_leave_the_buffer_out(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _sac()
        model.learn(20)
    rsb3.save(model, tmp_path / "m.rlarchive", replay_buffer=True)
    assert rsb3.load(tmp_path / "m.rlarchive", replay_buffer=False).replay_buffer.pos == 0
    assert rsb3.load(tmp_path / "m.rlarchive").replay_buffer.pos == 20


def test_her_load_closes_the_last_episode_as_sb3_does(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _dqn_her()
        model.learn(47)
        rsb3.save(model, tmp_path / "m.rlarchive", replay_buffer=True)
        model.save_replay_buffer(tmp_path / "rb.pkl")
        ours = rsb3.load(tmp_path / "m.rlarchive", env=model.get_env())  # force_reset=True
        theirs = _dqn_her()
        theirs.load_replay_buffer(tmp_path / "rb.pkl")  # truncate_last_traj=True
    assert (model.replay_buffer._current_ep_start != model.replay_buffer.pos).any()  # an episode was open
    _assert_same(ours.replay_buffer, theirs.replay_buffer)


def test_buffer_that_does_not_fit_is_left_out_with_a_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _sac(3)
        model.learn(30)
    rsb3.save(model, tmp_path / "m.rlarchive", replay_buffer=True)
    with pytest.warns(rsb3.LoadWarning, match="replay buffer not restored: its n_envs is 3, the model's is 1"):
        loaded = rsb3.load(tmp_path / "m.rlarchive", env=make_vec_env("Pendulum-v1", n_envs=1))
    assert loaded.replay_buffer.pos == 0


def test_on_policy_model_is_saved_without_buffer(tmp_path):
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", "CartPole-v1", n_steps=32, batch_size=32, device="cpu")
    report = rsb3.save(model, tmp_path / "m.rlarchive", replay_buffer=True)
    assert "replay buffer not stored: a PPO model has no replay buffer" in report.notes


def test_sb3_pickle_import_and_export(trained, tmp_path):
    name, model = trained
    model.save(tmp_path / "model.zip")
    model.save_replay_buffer(tmp_path / "rb.pkl")
    report = rsb3.import_archive(tmp_path / "model.zip", tmp_path / "m.rlarchive", replay_buffer=tmp_path / "rb.pkl")
    assert any(n.startswith("replay buffer stored") for n in report.notes)
    assert rlarchive.validate(str(tmp_path / "m.rlarchive"))["summary"]["errors"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.LoadWarning)
        loaded = rsb3.load(tmp_path / "m.rlarchive", env=model.get_env(), force_reset=False)
    _assert_same(loaded.replay_buffer, model.replay_buffer)
    # and back: a pickle load_replay_buffer accepts, with the same arrays
    rsb3.export_archive(tmp_path / "m.rlarchive", tmp_path / "back.zip", replay_buffer_out=tmp_path / "back.pkl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = type(model).load(tmp_path / "back.zip", env=model.get_env())
        again.load_replay_buffer(tmp_path / "back.pkl", truncate_last_traj=False)
    _assert_same(again.replay_buffer, model.replay_buffer)
    assert all(a.flags.writeable for a in _arrays(again.replay_buffer).values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again.learn(3)


def test_cli_import_export(tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _sac(2)
        model.learn(60)
    model.save(tmp_path / "model.zip")
    model.save_replay_buffer(tmp_path / "rb.pkl")
    out = tmp_path / "m.rlarchive"
    assert main(["import-sb3", str(tmp_path / "model.zip"), str(out), "--replay-buffer", str(tmp_path / "rb.pkl")]) == 0
    assert (
        "replay buffer stored as the extension RLA_replay_buffer: ReplayBuffer, 30 of 150 rows filled in each of 2 environments"
        in capsys.readouterr().out
    )
    assert main(["export-sb3", str(out), str(tmp_path / "b.zip"), "--replay-buffer-out", str(tmp_path / "b.pkl")]) == 0
    assert "b.pkl" in capsys.readouterr().out
    fresh = _sac(2)
    fresh.load_replay_buffer(tmp_path / "b.pkl")
    _assert_same(fresh.replay_buffer, model.replay_buffer)


def test_export_without_buffer_is_refused(tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _sac()
    rsb3.save(model, tmp_path / "m.rlarchive")
    assert (
        main(
            [
                "export-sb3",
                str(tmp_path / "m.rlarchive"),
                str(tmp_path / "b.zip"),
                "--replay-buffer-out",
                str(tmp_path / "b.pkl"),
            ]
        )
        == 2  # the request names a part the archive does not hold
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "INPUT_INVALID" in err[0] and "holds no replay buffer" in err[0]
    assert not (tmp_path / "b.pkl").exists()


# ---------------------------------------------------------------- bad input


@pytest.fixture(scope="module")
def sb3_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("rb")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _sac()
        model.learn(40)
    model.save(d / "model.zip")
    model.save_replay_buffer(d / "rb.pkl")
    return d, model


def test_a_buffer_of_sb3_before_1_1_imports_as_sb3_loads_it(sb3_files, tmp_path):
    """SB3 1.1 added handle_timeout_termination and timeouts to its buffers, and replay_buffer_kwargs to its
    models; load_replay_buffer gives an older buffer the flag False and timeouts of zeros. So does the import
    (it was refused: "has no ..."), and a model of SB3 < 1.1 is built for that buffer; a model that has
    replay_buffer_kwargs decides, and its load leaves a buffer that differs out, as for any other file."""
    import copy
    import json
    import zipfile

    d, model = sb3_files
    old = copy.copy(model.replay_buffer)
    del old.handle_timeout_termination, old.timeouts
    with open(tmp_path / "old.pkl", "wb") as f:
        pickle.dump(old, f)
    with zipfile.ZipFile(d / "model.zip") as zin, zipfile.ZipFile(tmp_path / "old.zip", "w") as zout:
        for info in zin.infolist():
            raw = zin.read(info)
            if info.filename == "data":  # as SB3 < 1.1 saved its models: no replay_buffer_kwargs
                data = json.loads(raw)
                del data["replay_buffer_kwargs"]
                raw = json.dumps(data).encode()
            zout.writestr(info, raw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = SAC.load(tmp_path / "old.zip", device="cpu")
        ref.load_replay_buffer(tmp_path / "old.pkl", truncate_last_traj=False)
    assert ref.replay_buffer.handle_timeout_termination is False and not ref.replay_buffer.timeouts.any()
    out = tmp_path / "m.rlarchive"
    report = rsb3.import_archive(tmp_path / "old.zip", out, replay_buffer=tmp_path / "old.pkl")
    assert any("< 1.1" in n for n in report.notes), report.notes
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.LoadWarning)
        loaded = rsb3.load(out, env=model.get_env(), force_reset=False)
    _assert_same(loaded.replay_buffer, ref.replay_buffer)

    newer = tmp_path / "newer.rlarchive"  # the model of SB3 2.x says True: it decides
    rsb3.import_archive(d / "model.zip", newer, replay_buffer=tmp_path / "old.pkl")
    with pytest.warns(rsb3.LoadWarning, match="handle_timeout_termination is False, the model's is True"):
        rsb3.load(newer, env=model.get_env(), force_reset=False)


def _hostile(tmp_path, name: str, payload: bytes):
    p = tmp_path / name
    p.write_bytes(payload)
    return p


def _broken_buffer(model, tmp_path, **changes):
    buf = model.replay_buffer
    saved = {k: getattr(buf, k) for k in changes}
    try:
        for k, v in changes.items():
            setattr(buf, k, v)
        model.save_replay_buffer(tmp_path / "bad.pkl")
    finally:
        for k, v in saved.items():
            setattr(buf, k, v)
    return tmp_path / "bad.pkl"


BAD = {  # case -> (code, what the message says, the file)
    "truncated": (
        "IMPORT_INVALID",
        "truncated",
        lambda d, m, t: _hostile(t, "cut.pkl", (d / "rb.pkl").read_bytes()[:3000]),
    ),
    "pos-beyond-size": (
        "IMPORT_INVALID",
        "pos 10000 is not below buffer_size 300",
        lambda d, m, t: _broken_buffer(m, t, pos=10_000),
    ),
    "rewards-short": (
        "IMPORT_INVALID",
        "rewards has shape [5, 1]",
        lambda d, m, t: _broken_buffer(m, t, rewards=np.zeros((5, 1), np.float32)),
    ),
    "rewards-float64": (
        "IMPORT_INVALID",
        "rewards is float64",
        lambda d, m, t: _broken_buffer(m, t, rewards=np.zeros((300, 1), np.float64)),
    ),
    "os-system": (
        "IMPORT_INVALID",
        "it holds os.system",
        lambda d, m, t: _hostile(t, "sys.pkl", b"cos\nsystem\n(S'touch " + str(t / "pwned").encode() + b"'\ntR."),
    ),
    "unknown-class": (
        "IMPORT_INVALID",
        "it holds stable_baselines3.common.evilbuf.ReplayBuffer",
        lambda d, m, t: _hostile(
            t,
            "cls.pkl",
            (d / "rb.pkl")
            .read_bytes()
            .replace(b"stable_baselines3.common.buffers", b"stable_baselines3.common.evilbuf"),
        ),
    ),
    "huge-bytearray": (
        "LIMIT_EXCEEDED",
        "import budget",
        lambda d, m, t: _hostile(t, "huge.pkl", b"\x80\x05\x96" + struct.pack("<Q", 1 << 40) + b"x" * 16 + b"."),
    ),
    "huge-bytes": (
        "LIMIT_EXCEEDED",
        "import budget",
        lambda d, m, t: _hostile(t, "huge.pkl", b"\x80\x05\x8e" + struct.pack("<Q", 1 << 40) + b"x" * 16 + b"."),
    ),
    "declared-beyond-file": (
        "IMPORT_INVALID",
        "truncated",
        lambda d, m, t: _hostile(t, "long.pkl", b"\x80\x05\x96" + struct.pack("<Q", 1 << 20) + b"x" * 16 + b"."),
    ),
    "not-a-pickle": (
        "IMPORT_INVALID",
        "cannot be read safely",
        lambda d, m, t: _hostile(t, "text.pkl", b"hello world\n"),
    ),
    "a-list": ("IMPORT_INVALID", "it holds a list", lambda d, m, t: _hostile(t, "list.pkl", pickle.dumps([1, 2, 3]))),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_buffer_pickle(case, sb3_files, tmp_path, capsys):
    d, model = sb3_files
    code, says, make = BAD[case]
    bad = make(d, model, tmp_path)
    out = tmp_path / "out.rlarchive"
    with pytest.raises(RlarchiveError) as e:
        rsb3.import_archive(d / "model.zip", out, replay_buffer=bad)
    assert e.value.code == code and says in e.value.message, e.value
    assert main(["import-sb3", str(d / "model.zip"), str(out), "--replay-buffer", str(bad)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and code in err[0] and "Traceback" not in err[0], err
    assert not out.exists() and not glob.glob(str(tmp_path / ".out.rlarchive.*"))  # no partial archive
    assert not (tmp_path / "pwned").exists()


def test_a_small_budget_refuses_the_buffer(sb3_files, tmp_path):
    d, _ = sb3_files
    with pytest.raises(RlarchiveError) as e:
        buffers.read_pickle(d / "rb.pkl", budget=1000)
    assert e.value.code == "LIMIT_EXCEEDED"


def test_budget_grows_with_the_file(sb3_files):
    from rlarchive.unpickle.budget import DEFAULT_IMPORT_BUDGET, budget_for

    d, _ = sb3_files
    size = os.path.getsize(d / "rb.pkl")
    assert budget_for(d / "rb.pkl").limit == max(DEFAULT_IMPORT_BUDGET, 4 * size)


@pytest.fixture(scope="module")
def her_infos():
    """A DQN with a HerReplayBuffer that keeps the info dicts (copy_info_dict=True), after a few episodes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _dqn_her(copy_info_dict=True, buffer_size=60)
        model.learn(24)
    assert any("terminal_observation" in i for i in model.replay_buffer.infos.ravel())
    return model


def _with_info(model, row: int, env: int, info):
    """The model's buffer with one info dict replaced; gives the old one back."""
    old = model.replay_buffer.infos[row, env]
    model.replay_buffer.infos[row, env] = info
    return old


UNHELD = {  # what the value model cannot hold, in an info dict
    "a-set": {1, 2},
    "a-complex": 1 + 2j,
}


@pytest.mark.parametrize("kind", sorted(UNHELD))
def test_info_the_value_model_cannot_hold(her_infos, kind, tmp_path):
    """Refused with VALUE_UNSUPPORTED naming the row, the environment and the key: save writes the archive without the buffer, the import refuses."""
    old = _with_info(her_infos, 3, 1, {"is_success": False, "odd": UNHELD[kind]})
    try:
        with pytest.raises(RlarchiveError) as e:
            buffers.capture(her_infos.replay_buffer)
        report = rsb3.save(her_infos, tmp_path / "m.rlarchive", replay_buffer=True)
        her_infos.save(tmp_path / "model.zip")
        her_infos.save_replay_buffer(tmp_path / "rb.pkl")
    finally:
        _with_info(her_infos, 3, 1, old)
    where = "the info dict of row 3, environment 1, key 'odd' cannot be stored"
    assert e.value.code == "VALUE_UNSUPPORTED" and where in e.value.message, e.value
    assert any(n.startswith("replay buffer not stored: " + where) for n in report.notes), report.notes
    with open_archive(str(tmp_path / "m.rlarchive")) as ar:
        assert ar.replay_buffer() is None
    with pytest.raises(RlarchiveError) as e:
        rsb3.import_archive(tmp_path / "model.zip", tmp_path / "out.rlarchive", replay_buffer=tmp_path / "rb.pkl")
    assert e.value.code == "VALUE_UNSUPPORTED" and where in e.value.message, e.value
    assert not (tmp_path / "out.rlarchive").exists()


def test_infos_beyond_the_json_limit(her_infos, tmp_path, monkeypatch):
    """The info dicts are JSON in the member: past MAX_JSON_BYTES they are refused with LIMIT_EXCEEDED, naming where, before more is converted."""
    import rlarchive.limits

    her_infos.save(tmp_path / "model.zip")
    her_infos.save_replay_buffer(tmp_path / "rb.pkl")
    monkeypatch.setattr(rlarchive.limits, "MAX_JSON_BYTES", 8000)
    with pytest.raises(RlarchiveError) as e:
        buffers.capture(her_infos.replay_buffer)
    assert (
        e.value.code == "LIMIT_EXCEEDED"
        and "MAX_JSON_BYTES" in e.value.message
        and "the info dict of row" in e.value.message
    ), e.value
    with pytest.raises(RlarchiveError) as e:
        rsb3.import_archive(tmp_path / "model.zip", tmp_path / "out.rlarchive", replay_buffer=tmp_path / "rb.pkl")
    assert e.value.code == "LIMIT_EXCEEDED" and "the info dict of row" in e.value.message, e.value
    assert not (tmp_path / "out.rlarchive").exists()
    monkeypatch.setattr(rlarchive.limits, "MAX_JSON_BYTES", 400)  # not even the empty dicts fit
    with pytest.raises(RlarchiveError) as e:
        buffers.capture(her_infos.replay_buffer)
    rb = her_infos.replay_buffer
    assert (
        e.value.code == "LIMIT_EXCEEDED"
        and f"the info dicts of {rb.buffer_size} rows of {rb.n_envs} environments" in e.value.message
    ), e.value


def test_infos_nested_too_deeply(her_infos):
    deep: dict = {}
    for _ in range(70):
        deep = {"d": deep}
    old = _with_info(her_infos, 0, 0, deep)
    try:
        with pytest.raises(RlarchiveError) as e:
            buffers.capture(her_infos.replay_buffer)
    finally:
        _with_info(her_infos, 0, 0, old)
    assert e.value.code == "LIMIT_EXCEEDED" and "row 0, environment 0" in e.value.message, e.value


def test_cli_round_trip_with_infos(her_infos, tmp_path, capsys):
    her_infos.save(tmp_path / "model.zip")
    her_infos.save_replay_buffer(tmp_path / "rb.pkl")
    out = tmp_path / "m.rlarchive"
    assert main(["import-sb3", str(tmp_path / "model.zip"), str(out), "--replay-buffer", str(tmp_path / "rb.pkl")]) == 0
    rb = her_infos.replay_buffer
    n = (rb.buffer_size if rb.full else rb.pos) * rb.n_envs
    assert (
        f"replay buffer: yes, HerReplayBuffer, {rb.buffer_size if rb.full else rb.pos} of {rb.buffer_size} rows"
        in capsys.readouterr().out
    )
    assert main(["export-sb3", str(out), str(tmp_path / "b.zip"), "--replay-buffer-out", str(tmp_path / "b.pkl")]) == 0
    printed = capsys.readouterr().out
    assert f"({n} transitions, with the info dicts) -> {tmp_path / 'b.pkl'}" in printed, printed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = DQN.load(tmp_path / "b.zip", env=her_infos.get_env())
        again.load_replay_buffer(tmp_path / "b.pkl", truncate_last_traj=False)
    _assert_same(again.replay_buffer, rb)


# ---------------------------------------------------------------- the writer runs the reader's checks


def test_save_refuses_a_position_beyond_the_size(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _sac()
        model.learn(20)
    model.replay_buffer.pos = model.replay_buffer.buffer_size + 5
    with pytest.raises(RlarchiveError) as e:
        rsb3.save(model, tmp_path / "m.rlarchive", replay_buffer=True)
    assert e.value.code == "EXTENSION_INVALID" and e.value.pointer == "/replay_buffer/pos", e.value
    assert e.value.member == "extensions/RLA_replay_buffer/replay_buffer.json"
    assert not (tmp_path / "m.rlarchive").exists() and not glob.glob(str(tmp_path / ".m.rlarchive.*"))


@pytest.mark.parametrize("key, row, bad", [("ep_start", 7, 200), ("ep_length", 3, -1), ("_current_ep_start", 1, 500)])
def test_her_indices_out_of_range_are_refused(key, row, bad, tmp_path):
    """Rule 9 (read from element bytes): refused at save (EXTENSION_INVALID) and at the import of SB3's pickle (IMPORT_INVALID), no file left."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _dqn_her()
        model.learn(30)
    a = getattr(model.replay_buffer, key)
    good = a.copy()
    a.reshape(-1)[row] = bad
    try:
        with pytest.raises(RlarchiveError) as e:
            rsb3.save(model, tmp_path / "m.rlarchive", replay_buffer=True)
        model.save(tmp_path / "model.zip")
        model.save_replay_buffer(tmp_path / "rb.pkl")
    finally:
        a[...] = good
    ptr = "/replay_buffer/her/" + key.lstrip("_")
    assert (
        e.value.code == "EXTENSION_INVALID" and e.value.pointer == ptr and f"= {bad} is outside" in e.value.message
    ), e.value
    assert not (tmp_path / "m.rlarchive").exists()
    with pytest.raises(RlarchiveError) as e:
        rsb3.import_archive(tmp_path / "model.zip", tmp_path / "out.rlarchive", replay_buffer=tmp_path / "rb.pkl")
    assert e.value.code == "IMPORT_INVALID" and f"= {bad} is outside" in e.value.message and ptr in e.value.message, (
        e.value
    )
    assert not (tmp_path / "out.rlarchive").exists()


# ---------------------------------------------------------------- memory (measured, reported; a bound, never a time)

_MEMORY_SCRIPT = textwrap.dedent(
    """
    import json, os, sys, warnings
    warnings.simplefilter("ignore")
    import numpy as np
    import gymnasium as gym
    from stable_baselines3 import SAC
    from rlarchive import sb3 as rsb3

    def status(key):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024

    class Wide(gym.Env):
        observation_space = gym.spaces.Box(-1, 1, (1000,), np.float32)
        action_space = gym.spaces.Box(-1, 1, (2,), np.float32)
        def reset(self, seed=None, options=None):
            return np.zeros(1000, np.float32), {}
        def step(self, a):
            return np.zeros(1000, np.float32), 0.0, False, False, {}

    model = SAC("MlpPolicy", Wide(), buffer_size=25_000, learning_starts=10**9, device="cpu", policy_kwargs={"net_arch": [8]})
    buf = model.replay_buffer
    rng = np.random.default_rng(0)
    for a in (buf.observations, buf.next_observations):
        a[:] = rng.standard_normal(a.shape, dtype=np.float32)
    buf.pos, buf.full = 0, True
    out = sys.argv[1]
    buffer_bytes = sum(a.nbytes for a in (buf.observations, buf.next_observations, buf.actions, buf.rewards, buf.dones, buf.timeouts))
    before = status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:  # resets VmHWM to the current RSS
        f.write("5")
    hwm_reset = status("VmHWM")
    rsb3.save(model, out, replay_buffer=True)
    peak = status("VmHWM")
    del model, buf
    import gc; gc.collect()
    anon0 = status("RssAnon")
    loaded = rsb3.load(out)
    anon1 = status("RssAnon")
    rb = loaded.replay_buffer
    assert rb.full and rb.observations.shape == (25_000, 1, 1000)
    rb.observations[:100] = 1.0  # touches ~400 kB of copy-on-write pages
    anon2 = status("RssAnon")
    pkl, zip_path = out + ".pkl", out + ".zip"
    loaded.save_replay_buffer(pkl)
    loaded.save(zip_path)
    del loaded, rb
    gc.collect()
    before_import = status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    rsb3.import_archive(zip_path, out + ".2", replay_buffer=pkl)
    import_peak = status("VmHWM")
    print(json.dumps({"rss_before_import": before_import, "peak_during_import": import_peak, "pickle_bytes": os.path.getsize(pkl),"buffer_bytes": buffer_bytes, "rss_before_save": before, "hwm_after_reset": hwm_reset,
                      "peak_during_save": peak, "rss_anon_before_load": anon0, "rss_anon_after_load": anon1,
                      "rss_anon_after_writes": anon2, "archive_bytes": os.path.getsize(out)}))
    """
)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux /proc")
def test_save_streams_and_load_maps(tmp_path):
    import json

    env = dict(os.environ, PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-c", _MEMORY_SCRIPT, str(tmp_path / "big.rlarchive")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    m = json.loads(done.stdout.strip().splitlines()[-1])
    print(m)
    assert m["buffer_bytes"] > 190 * 2**20
    assert m["peak_during_save"] - m["hwm_after_reset"] < min(
        256 * 2**20, m["buffer_bytes"] // 2
    )  # written from the buffer, not copied
    assert m["peak_during_import"] - m["rss_before_import"] < 1.5 * m["buffer_bytes"]  # the arrays are held once
    assert m["rss_anon_after_load"] - m["rss_anon_before_load"] < m["buffer_bytes"] // 4  # mapped, not read into memory


def test_buffer_of_another_model_is_refused(sb3_files, tmp_path, capsys):
    d, _ = sb3_files
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other = _dqn_dict()
        other.learn(10)
    other.save_replay_buffer(tmp_path / "other.pkl")
    assert (
        main(
            [
                "import-sb3",
                str(d / "model.zip"),
                str(tmp_path / "out.rlarchive"),
                "--replay-buffer",
                str(tmp_path / "other.pkl"),
            ]
        )
        != 0
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1
        and "IMPORT_INVALID" in err[0]
        and "observation_space differs from the data's observation_space" in err[0]
    ), err
    assert not (tmp_path / "out.rlarchive").exists()


def test_buffer_dtype_the_space_does_not_store_is_refused(sb3_files, tmp_path):
    d, model = sb3_files
    bad = _broken_buffer(model, tmp_path, observations=np.zeros((300, 1, 3), np.float64))
    with pytest.raises(RlarchiveError) as e:
        buffers.read_pickle(bad)
    assert e.value.code == "IMPORT_INVALID" and "observations has dtype F64" in e.value.message, e.value


def test_load_maps_the_buffer_without_reading_it_unless_asked(tmp_path, monkeypatch):
    """Spec §1.2: the buffer's CRC-32 and digest wait until asked for; the rest of the archive is checked as always."""
    from rlarchive.reader import Archive, member_of

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = _sac()
        model.learn(20)
    path = tmp_path / "m.rlarchive"
    rsb3.save(model, path, replay_buffer=True)
    member = member_of("RLA_replay_buffer")
    checked: list = []
    real = Archive.member_chunks  # step 10 reads each member it checks through it
    monkeypatch.setattr(
        Archive, "member_chunks", lambda self, name, *a: (checked.append(name), real(self, name, *a))[1]
    )
    _, report = rsb3.load(path, report=True)
    assert member not in checked and "tensors/policy.safetensors" in checked
    assert "not checked" in report.details["replay_buffer"]
    checked.clear()
    _, report = rsb3.load(path, report=True, verify_replay_buffer=True)
    assert member in checked and "not checked" not in report.details["replay_buffer"]

    with open_archive(str(path)) as ar:  # one byte of the transitions changed: found only when asked for
        m = ar.members[member]
        at = m.data_offset + m.size // 2
    raw = bytearray(path.read_bytes())
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
    assert rsb3.load(path).replay_buffer.pos == 20
    with pytest.raises(RlarchiveError) as e:
        rsb3.load(path, verify_replay_buffer=True)
    assert e.value.code in ("ZIP_CRC_MISMATCH", "MEMBER_DIGEST_MISMATCH") and e.value.member == member
