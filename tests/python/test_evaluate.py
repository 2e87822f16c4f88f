"""rlarchive evaluate: the portable policy in gymnasium agrees with SB3's evaluate_policy on the same seeds."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
import gymnasium as gym  # noqa: E402
from stable_baselines3 import PPO, SAC  # noqa: E402
from stable_baselines3.common.evaluation import evaluate_policy  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecFrameStack, VecNormalize  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.evaluate import evaluate, record  # noqa: E402
from rlarchive.validate import validate  # noqa: E402

PYTHON = os.path.join(os.path.dirname(__file__), "..", "..", "python")
ENV = {**os.environ, "PYTHONPATH": os.path.abspath(PYTHON)}
DICT_ENV = "RlarchiveTestDict-v0"
SEED, EPISODES = 10, 3


class DictEnv(gym.Env):
    """A Dict observation (a box and a discrete), two actions; the reward depends on both, episodes end by time limit or at a threshold."""

    def __init__(self):
        self.observation_space = gym.spaces.Dict(
            {"pos": gym.spaces.Box(-1, 1, (3,), np.float32), "mode": gym.spaces.Discrete(3)}
        )
        self.action_space = gym.spaces.Discrete(2)

    def _obs(self):
        return {"pos": self.np_random.uniform(-1, 1, 3).astype(np.float32), "mode": int(self.np_random.integers(3))}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.total = 0.0
        self.obs = self._obs()
        return self.obs, {}

    def step(self, action):
        r = float(self.obs["pos"][0] * (1 if action == 1 else -1) + 0.1 * self.obs["mode"])
        self.total += r
        self.obs = self._obs()
        return self.obs, r, self.total > 3.0, False, {}


if DICT_ENV not in gym.registry:
    gym.register(DICT_ENV, entry_point=DictEnv, max_episode_steps=25)


def _sb3_returns(model, env_id, wrap=lambda v: v):
    """evaluate_policy, one episode per seed SEED + i, as the evaluator seeds them."""
    returns, lengths = [], []
    for i in range(EPISODES):
        venv = wrap(DummyVecEnv([lambda: Monitor(gym.make(env_id))]))
        venv.seed(SEED + i)
        r, n = evaluate_policy(model, venv, n_eval_episodes=1, deterministic=True, return_episode_rewards=True)
        returns += r
        lengths += n
    return returns, lengths


def _check(path, model, env_id, wrap=lambda v: v):
    ours = evaluate(path, env_id, EPISODES, SEED)
    theirs, lengths = _sb3_returns(model, env_id, wrap)
    assert ours.lengths == lengths
    np.testing.assert_allclose(ours.returns, theirs, rtol=1e-6, atol=2e-6)  # Monitor rounds returns to 6 decimals
    assert ours.seeds == [SEED + i for i in range(EPISODES)]
    return ours


def _model(cls, env_id, policy="MlpPolicy", steps=64, **kw):
    model = cls(policy, env_id, seed=0, device="cpu", policy_kwargs={"net_arch": [16]}, **kw)
    model.learn(steps)
    return model


def test_cartpole(tmp_path):
    model = _model(PPO, "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1)
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p)
    ours = _check(p, model, "CartPole-v1")
    assert ours.mean == pytest.approx(np.mean(ours.returns)) and ours.std == pytest.approx(np.std(ours.returns))


def test_pendulum(tmp_path):
    model = _model(SAC, "Pendulum-v1", learning_starts=16, batch_size=16)
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p)
    _check(p, model, "Pendulum-v1")


@pytest.mark.slow
def test_mountain_car_continuous(tmp_path):
    model = _model(PPO, "MountainCarContinuous-v0", n_steps=32, batch_size=32, n_epochs=1)
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p)
    _check(p, model, "MountainCarContinuous-v0")


def test_dict_environment(tmp_path):
    model = _model(PPO, DICT_ENV, policy="MultiInputPolicy", n_steps=32, batch_size=32, n_epochs=1)
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p)
    ours = _check(p, model, DICT_ENV)
    assert len(set(ours.lengths)) > 1 or len(set(ours.returns)) > 1  # the episodes differ: the seeds matter


def test_frame_stack_and_normalisation_as_recorded(tmp_path):
    train = VecNormalize(VecFrameStack(DummyVecEnv([lambda: gym.make("CartPole-v1")] * 2), n_stack=3))
    model = PPO(
        "MlpPolicy",
        train,
        n_steps=32,
        batch_size=32,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [16]},
    )
    model.learn(64)
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p, vec_normalize=train)

    def wrap(v):
        v = VecNormalize(VecFrameStack(v, n_stack=3), training=False, norm_reward=False)
        v.obs_rms = train.obs_rms
        return v

    _check(p, model, "CartPole-v1", wrap)
    from rlarchive.edit import update_metadata

    unstacked = tmp_path / "u.rlarchive"  # without the recorded stacking the environment does not fit
    update_metadata(p, unset=["wrappers"], out=unstacked)
    with pytest.raises(RlarchiveError) as e:
        evaluate(unstacked, "CartPole-v1", 1, 0)
    assert e.value.code == "ENV_MISMATCH"


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "rlarchive", *args], capture_output=True, text=True, env=ENV, timeout=300
    )


@pytest.mark.slow
def test_cli_record_json_and_bad_environments(tmp_path):
    model = _model(PPO, "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1)
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p)
    r = _cli("evaluate", str(p), "--env", "CartPole-v1", "--episodes", "2", "--seed", "4", "--json")
    assert r.returncode == 0, r.stderr
    printed = json.loads(r.stdout)
    direct = evaluate(p, "CartPole-v1", 2, 4)
    assert printed["returns"] == direct.returns and printed["lengths"] == direct.lengths and printed["seeds"] == [4, 5]
    before = p.read_bytes()
    r = _cli("evaluate", str(p), "--env", "CartPole-v1", "--episodes", "2", "--seed", "4", "--record")
    assert r.returncode == 0, r.stderr
    assert "mean return" in r.stdout and p.read_bytes() != before
    record(p, direct)
    with rlarchive.open(p) as ar:
        ar.verify()
        evaluations = json.loads(ar.metadata["evaluations"])
    assert [e["returns"] for e in evaluations] == [direct.returns, direct.returns]
    e = evaluations[0]
    assert e["env_id"] == "CartPole-v1" and e["episodes"] == 2 and e["deterministic"] is True
    assert e["mean"] == float(np.mean(direct.returns)) and e["evaluator"]["name"] == "rlarchive-python"
    assert validate(p)["issues"] == []
    for seed in ("-1", str(2**53 - 1)):
        r = _cli("evaluate", str(p), "--env", "CartPole-v1", "--episodes", "2", "--seed", seed)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("rlarchive: INPUT_INVALID:"), (
            r.stderr
        )
    for env, code in (
        ("NoSuchEnv-v0", "ENV_NOT_FOUND"),
        ("no_such_module:Env-v0", "ENV_NOT_FOUND"),
        ("Pendulum-v1", "ENV_MISMATCH"),
        ("MountainCar-v0", "ENV_MISMATCH"),
    ):
        r = _cli("evaluate", str(p), "--env", env, "--episodes", "1")
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith(f"rlarchive: {code}:"), r.stderr
        assert "Traceback" not in r.stderr


def test_the_evaluator_imports_neither_torch_nor_sb3(tmp_path):
    model = _model(PPO, "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1)
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p)
    code = (
        "import sys; from rlarchive.evaluate import evaluate; r = evaluate(sys.argv[1], 'CartPole-v1', 1, 0); "
        "bad = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules]; print(bad, r.lengths)"
    )
    r = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, env=ENV, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("[] [")


@pytest.mark.parametrize("shape,order", [((4,), "last"), ((2, 5, 5), "first"), ((5, 5, 2), "last")])
def test_frame_stacking_matches_sb3(shape, order):
    from stable_baselines3.common.vec_env.stacked_observations import StackedObservations

    from rlarchive.evaluate import _FrameStack

    rng = np.random.default_rng(1)
    space = gym.spaces.Box(0, 255, shape, np.uint8)
    theirs = StackedObservations(1, 3, space, order)
    ours = _FrameStack(3, order)
    frames = [rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(6)]
    np.testing.assert_array_equal(ours.reset(frames[0]), theirs.reset(frames[0][None])[0])
    for f in frames[1:]:
        got, _ = theirs.update(f[None], np.array([False]), [{}])
        np.testing.assert_array_equal(ours.step(f), got[0])


IMAGE_ENV = "RlarchiveTestImage-v0"


class ImageEnv(gym.Env):
    """Channels-last uint8 images (as SB3 transposes them), three actions; the reward depends on the image and the action."""

    def __init__(self):
        self.observation_space = gym.spaces.Box(0, 255, (36, 36, 3), np.uint8)
        self.action_space = gym.spaces.Discrete(3)

    def _obs(self):
        return self.np_random.integers(0, 256, (36, 36, 3), dtype=np.uint8)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.obs = self._obs()
        return self.obs, {}

    def step(self, action):
        r = float(self.obs[..., int(action)].mean()) / 255.0
        self.obs = self._obs()
        return self.obs, r, bool(self.np_random.random() < 0.1), False, {}


if IMAGE_ENV not in gym.registry:
    gym.register(IMAGE_ENV, entry_point=ImageEnv, max_episode_steps=30)


def test_image_environment_transposed_as_recorded_and_as_sb3_does(tmp_path):
    model = _model(PPO, IMAGE_ENV, policy="CnnPolicy", steps=16, n_steps=16, batch_size=16, n_epochs=1)
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p)
    with rlarchive.open(p) as ar:
        assert json.loads(ar.metadata["wrappers"]) == [{"name": "VecTransposeImage"}]
    ours = _check(p, model, IMAGE_ENV)
    z = tmp_path / "m.zip"  # imported from a zip, no wrapper is recorded: transposed as SB3 does
    model.save(z)
    imported = tmp_path / "i.rlarchive"
    rsb3.import_archive(z, imported)
    again = evaluate(imported, IMAGE_ENV, EPISODES, SEED)
    assert again.returns == ours.returns and again.lengths == ours.lengths
    assert any("transposed" in n for n in again.notes)


# ------------------------------------------------------------------ the recorded environment id


HOSTILE_IDS = [
    "os:system",  # a module to import
    "gymnasium.envs.classic_control.cartpole:CartPoleEnv",  # a registered environment's module, through the id
    "no_such_module_xyz:CartPole-v1",
    "CartPole",  # no version: make would look for the latest one
    "NoSuchEnv-v0",  # not registered: make would look further
    "CartPole-v1 ",
    "\u202eCartPole-v1",
]


def test_the_recorded_id_is_used_when_registered_and_the_command_says_so(tmp_path):
    model = _model(PPO, "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1)
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p)  # records env_id CartPole-v1
    r = _cli("evaluate", str(p), "--episodes", "2", "--seed", "4", "--json")
    assert r.returncode == 0, r.stderr
    assert "note: environment 'CartPole-v1', as the archive records it" in r.stderr
    assert json.loads(r.stdout)["returns"] == evaluate(p, "CartPole-v1", 2, 4).returns


@pytest.mark.slow
@pytest.mark.parametrize("recorded", HOSTILE_IDS)
def test_a_recorded_id_that_is_not_a_registered_one_is_named_and_never_made(tmp_path, recorded):
    from rlarchive.edit import update_metadata

    model = _model(PPO, "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1)
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p)
    update_metadata(p, {"env_id": recorded})
    # the command, in a process where gymnasium.make fails the test if it is ever called
    code = (
        "import sys, gymnasium\n"
        "def make(*a, **k):\n"
        "    print('MADE', a, file=sys.stderr); raise SystemExit(99)\n"
        "gymnasium.make = make\n"
        "from rlarchive.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, "evaluate", str(p), "--episodes", "1"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert r.returncode == 2 and "MADE" not in r.stderr, r.stderr
    assert r.stderr.startswith("rlarchive: INPUT_INVALID: the archive records the environment ")
    assert "--env ENV_ID" in r.stderr and r.stderr.count("\n") == 1


@pytest.mark.parametrize("recorded", HOSTILE_IDS + ["CartPole-v1", "", 7, None])
def test_looking_a_recorded_id_up_imports_nothing(recorded):
    from rlarchive import env_ids

    env_ids.why_not("CartPole-v1")  # gymnasium itself imported once
    before = set(sys.modules)
    verdict = env_ids.registered(recorded)
    assert set(sys.modules) == before
    assert verdict == ("CartPole-v1" if recorded == "CartPole-v1" else None)


def test_a_registry_that_is_not_a_dictionary_is_not_asked(monkeypatch):
    from rlarchive import env_ids

    class Lookup(dict):
        def __contains__(self, key):
            raise AssertionError("a method of the registry ran")

    monkeypatch.setattr(gym.envs, "registry", Lookup(gym.envs.registry))
    assert env_ids.registered("CartPole-v1") == "CartPole-v1"  # the dictionary's own lookup, not the subclass's


@pytest.mark.slow
def test_evaluate_records_a_video(tmp_path):
    pytest.importorskip("moviepy")
    from test_package import _painted_env

    from rlarchive.conformance import vectors_dir
    from rlarchive.video import record_video

    env = _painted_env()
    src = os.path.join(vectors_dir(), "valid", "policy-ppo-mlp-discrete.rlarchive")
    assert record_video(src, env, tmp_path / "v.mp4", seed=3) == []
    assert (tmp_path / "v.mp4").read_bytes()[4:8] == b"ftyp" and sorted(os.listdir(tmp_path)) == ["v.mp4"]
    with pytest.raises(RlarchiveError) as e:  # the fit is checked as for an evaluation
        record_video(src, "CartPole-v1", tmp_path / "w.mp4")
    assert e.value.code == "ENV_MISMATCH" and sorted(os.listdir(tmp_path)) == ["v.mp4"]
    model = _model(PPO, "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1)
    p = tmp_path / "m.rlarchive"
    rsb3.save(model, p)
    r = _cli("evaluate", str(p), "--env", "CartPole-v1", "--episodes", "1", "--video", str(tmp_path / "c.mp4"))
    assert r.returncode == 0, r.stderr
    try:
        import pygame  # noqa: F401
    except ImportError:
        assert "note: no replay video" in r.stderr and not (tmp_path / "c.mp4").exists()
    else:
        assert (tmp_path / "c.mp4").exists() and "video" in r.stdout
