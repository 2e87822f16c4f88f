"""Hostile run states of RLA_training (spec/extensions/RLA_training.md §3.7, §4): generators that would never return, and loads that fail.

A run state whose generator states pass the structural rules can still be
degenerate: an all-zero MT19937 key makes NumPy's legacy normal sampler (and
so SB3's action noise) and Python's ``random.normalvariate`` loop for ever in
C code, and a PCG64 state with an even increment makes a space's bounded
integers loop. Each such archive is loaded in a child process with a time
limit, so that a hang fails the test instead of the run. A load that fails,
wherever it fails, leaves the process's generators as they were.
"""

import os
import random
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from stable_baselines3 import DQN, TD3  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.envs import IdentityEnv  # noqa: E402
from stable_baselines3.common.noise import NormalActionNoise  # noqa: E402

from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.extensions import training as training_state  # noqa: E402
from rlarchive.sb3 import run_state  # noqa: E402

#: Seconds a child process has to load an archive and draw from every generator (a few, where nothing hangs).
CHILD_SECONDS = 120


def _pendulum():
    return make_vec_env("Pendulum-v1", n_envs=1, seed=0)


def _identity():
    return make_vec_env(lambda: IdentityEnv(dim=3, ep_length=7), n_envs=1, seed=0)


def _td3():
    noise = NormalActionNoise(np.zeros(1), 0.2 * np.ones(1))
    model = TD3("MlpPolicy", _pendulum(), buffer_size=200, batch_size=8, learning_starts=5, action_noise=noise,
                policy_kwargs=dict(net_arch=[8]), seed=0, device="cpu")  # fmt: skip
    model.learn(8)
    return model


def _dqn():
    model = DQN("MlpPolicy", _identity(), buffer_size=200, batch_size=8, learning_starts=50,
                policy_kwargs=dict(net_arch=[8]), seed=0, device="cpu")  # fmt: skip
    model.learn(8)
    return model


def save_with_state(model, path, state, monkeypatch, **kwargs):
    """Save ``model`` with the run state ``state`` as another writer could: without the writer's checks of RANDOM."""
    with monkeypatch.context() as m:
        m.setattr(run_state, "capture", lambda _model: state)
        m.setattr(training_state, "check_generators", lambda _random: None, raising=False)
        m.setattr(training_state, "_random", lambda _value, _ptr: None)
        rsb3.save(model, path, training=True, **kwargs)


def _zero_numpy_key(r):
    r["numpy"]["key"] = np.zeros(624, np.uint32)


def _low_bits_numpy_key(r):
    r["numpy"]["key"] = np.array([0x7FFFFFFF] + [0] * 623, np.uint32)


def _zero_python_state(r):
    r["python"]["state"] = np.array([0] * 624 + [624], np.uint32)


def _even_space_increment(r):
    r["action_space"]["generator"].update(state=0, inc=0)


#: name -> (model factory, mutation of RANDOM, what the child draws after the load, the pointer of the refusal)
HANGS = {
    "numpy-normal": (_td3, _zero_numpy_key, "np.random.normal()", "/training/random/numpy/key"),
    "python-normalvariate": (_td3, _zero_python_state, "random.normalvariate(0, 1)", "/training/random/python/state"),
    "td3-action-noise": (_td3, _low_bits_numpy_key, "model.learn(4)", "/training/random/numpy/key"),
    "space-integers": (_dqn, _even_space_increment, "model.action_space.sample()",
                       "/training/random/action_space/generator/inc"),
}  # fmt: skip

_CHILD = """
import random, sys, warnings
import numpy as np
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.envs import IdentityEnv
from rlarchive.errors import RlarchiveError
from rlarchive import sb3 as rsb3
warnings.simplefilter("ignore")
env = make_vec_env({env}, n_envs=1, seed=0)
try:
    model = rsb3.load({path!r}, env=env, force_reset=False)
except RlarchiveError as e:
    print("refused", e.code, e.pointer)
    sys.exit(0)
print("loaded", flush=True)
{draw}
print("drew")
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HANGS))
def test_a_degenerate_generator_state_is_refused_before_it_can_hang(name, tmp_path, monkeypatch):
    """Old behaviour: the archive loads, and the first draw loops for ever in NumPy's or Python's C code."""
    make, mutate, draw, pointer = HANGS[name]
    model = make()
    state = run_state.capture(model)
    mutate(state["random"])
    path = str(tmp_path / "hostile.rlarchive")
    save_with_state(model, path, state, monkeypatch)
    env = "lambda: IdentityEnv(dim=3, ep_length=7)" if make is _dqn else '"Pendulum-v1"'
    code = textwrap.dedent(_CHILD).format(env=env, path=path, draw=draw)
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=CHILD_SECONDS)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the child did not return within {CHILD_SECONDS} s (it hangs): {e.stdout!r}")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["refused", "EXTENSION_INVALID", pointer], out.stdout


def _generators():
    """The process-wide generators' states, comparable with ==."""
    key_name, key, pos, has_gauss, cached = np.random.get_state()
    return (key_name, key.tobytes(), pos, has_gauss, cached), random.getstate(), torch.get_rng_state().numpy().tobytes()


def _scramble():
    """Put every process-wide generator in a state of its own (not the model's seed), and return it."""
    np.random.seed(12345)
    random.seed(54321)
    torch.manual_seed(999)
    np.random.normal()
    return _generators()


def _fail_once(monkeypatch):
    """PyTorch's CPU generator, the last one set, refuses the next state it is given (then takes states again)."""
    real = torch.set_rng_state
    calls = []

    def set_rng_state(state):
        calls.append(state)
        if len(calls) == 1:
            raise RuntimeError("injected: the generator refuses this state")
        real(state)

    monkeypatch.setattr(torch, "set_rng_state", set_rng_state)
    return calls


@pytest.fixture
def td3_archive(tmp_path):
    model = _td3()
    path = tmp_path / "m.rlarchive"
    rsb3.save(model, path, replay_buffer=True)
    return model, path


def test_a_failure_in_the_last_generator_leaves_every_generator_as_it_was(td3_archive, monkeypatch):
    """PyTorch's generator, set last, refuses its state: NumPy's and Python's (set before it) are as before the load."""
    model, path = td3_archive
    _fail_once(monkeypatch)
    before = _scramble()
    with pytest.raises(RlarchiveError) as e, warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        rsb3.load(path, env=model.get_env(), force_reset=False)
    monkeypatch.undo()
    assert e.value.code == "VALUE_UNSUPPORTED" and "PyTorch generator state" in e.value.message
    assert _generators() == before


def test_restore_checks_all_then_sets_all(td3_archive, monkeypatch):
    """run_state.restore itself: with the last generator failing, NumPy's and Python's states are not changed."""
    model, _ = td3_archive
    state = run_state.capture(model)
    _fail_once(monkeypatch)
    before = _scramble()  # the archive's states differ from the process's
    with pytest.raises(RlarchiveError) as e:
        run_state.restore(model, state)
    monkeypatch.undo()
    assert e.value.code == "VALUE_UNSUPPORTED"
    assert _generators() == before


@pytest.mark.parametrize(
    "name, mutate, pointer",
    [
        ("torch-length", lambda r: r.update(torch=r["torch"][:5048].copy()), "/training/random/torch"),
        ("python-index", lambda r: r["python"]["state"].__setitem__(624, 625), "/training/random/python/state"),
    ],
)
def test_a_state_its_generator_refuses_fails_with_a_code_and_changes_nothing(
    name, mutate, pointer, tmp_path, monkeypatch
):
    """Old behaviour: NumPy's state was set, then a bare RuntimeError (PyTorch) or ValueError (Python's index)."""
    model = _td3()
    state = run_state.capture(model)
    mutate(state["random"])
    path = tmp_path / "m.rlarchive"
    save_with_state(model, path, state, monkeypatch)
    before = _scramble()
    with pytest.raises(RlarchiveError) as e, warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        rsb3.load(path, env=model.get_env(), force_reset=False)
    assert (e.value.code, e.value.pointer) == ("EXTENSION_INVALID", pointer)
    assert _generators() == before


def test_a_load_that_fails_after_the_model_is_built_puts_the_generators_back(tmp_path):
    """Building the model seeds the process's generators: a failure after it (an optimizer state that does not fit) undoes that."""
    model = _td3()
    p = model.actor.optimizer.param_groups[0]["params"][0]
    model.actor.optimizer.state[p]["exp_avg"] = torch.zeros(7)
    rsb3.save(model, tmp_path / "m.rlarchive", training=True)
    before = _scramble()
    with pytest.raises(RlarchiveError) as e, warnings.catch_warnings():
        warnings.simplefilter("ignore", rsb3.LoadWarning)
        rsb3.load(tmp_path / "m.rlarchive", env=model.get_env())
    assert e.value.code == "VALUE_UNSUPPORTED"
    assert _generators() == before


def test_save_refuses_a_degenerate_generator_state(tmp_path):
    """The writer runs the reader's generator checks: a process whose NumPy generator is degenerate is not saved."""
    model = _td3()
    saved = np.random.get_state()
    np.random.set_state(("MT19937", np.zeros(624, np.uint32), 624, 0, 0.0))
    try:
        with pytest.raises(RlarchiveError) as e:
            rsb3.save(model, tmp_path / "m.rlarchive", training=True)
    finally:
        np.random.set_state(saved)
    assert (e.value.code, e.value.pointer) == ("EXTENSION_INVALID", "/training/random/numpy/key")
    assert not os.path.exists(tmp_path / "m.rlarchive")
