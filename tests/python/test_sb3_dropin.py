"""rlarchive.sb3.save / load as SB3's save / load: custom_objects, restored attributes, file objects,
exclude and include, a subclass's attributes, old CNN layouts, the RL Zoo's schedules, restarts.

Each test states SB3's behaviour (read from stable-baselines3 2.9.2's
``base_class.load`` and ``save_util``) and checks the bridge does the same.
"""

import io
import os
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from stable_baselines3 import A2C, PPO  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.envs import FakeImageEnv  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402


def _ppo(**kwargs):
    return PPO(
        "MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, n_epochs=1, policy_kwargs=dict(net_arch=[8]), **kwargs
    )


def test_custom_objects_set_only_keys_the_archive_holds(tmp_path):
    """SB3 uses custom_objects only for keys its data holds: a key the file lacks adds no attribute."""
    path = tmp_path / "m.rlarchive"
    rsb3.save(_ppo(), path)
    model = rsb3.load(path, custom_objects={"learning_rate": 2e-5, "dummy": 1.0})
    assert model.learning_rate == 2e-5
    assert not hasattr(model, "dummy")


def test_saved_attributes_come_back(tmp_path):
    """Every attribute SB3 restores comes back (verbose from the file unless the caller gives one) but the
    environment, the tensorboard folder and the device, which can reach a path, a network or an import."""
    model = _ppo(verbose=2, tensorboard_log=str(tmp_path / "tb"))
    model.n_epochs = 3
    path = tmp_path / "m.rlarchive"
    rsb3.save(model, path)
    again = rsb3.load(path)
    assert again.verbose == 2 and again.n_epochs == 3
    assert again.tensorboard_log is None
    assert rsb3.load(path, verbose=1).verbose == 1
    with rlarchive.open(path) as ar:
        assert ar.data["tensorboard_log"] == str(tmp_path / "tb")


def test_file_objects_are_taken(tmp_path):
    """SB3 documents str | pathlib.Path | io.BufferedIOBase for save and load; the file object stays open."""
    model = _ppo()
    buffer = io.BytesIO()
    rsb3.save(model, buffer)
    assert not buffer.closed and buffer.getvalue()[:4] == b"PK\x03\x04"
    again = rsb3.load(buffer)
    obs = np.zeros((2, 4), np.float32)
    assert np.array_equal(again.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0])
    with open(tmp_path / "f.rlarchive", "w+b") as f:
        rsb3.save(model, f)
        f.seek(0)
        assert rsb3.load(f).n_steps == 16
        assert not f.closed


def test_exclude_and_include(tmp_path):
    """SB3's save leaves out exclude (besides its own list) and keeps include even when excluded."""
    model = _ppo(verbose=2)
    rsb3.save(model, tmp_path / "a.rlarchive", exclude=["verbose", "n_epochs"])
    with rlarchive.open(tmp_path / "a.rlarchive") as ar:
        assert "verbose" not in ar.data and "n_epochs" not in ar.data
    rsb3.save(model, tmp_path / "b.rlarchive", exclude=["verbose"], include=["verbose", "replay_buffer"])
    with rlarchive.open(tmp_path / "b.rlarchive") as ar:
        assert ar.data["verbose"] == 2
    assert rsb3.load(tmp_path / "b.rlarchive").verbose == 2
    assert rsb3.load(tmp_path / "a.rlarchive").verbose == 0


class _Extra:
    """An object the value model has no form for."""


class MyPPO(PPO):
    def __init__(self, *args, my_rate=0.5, **kwargs):
        self.my_rate = my_rate
        self.my_tags = ["a", "b"]
        self.my_object = _Extra()
        super().__init__(*args, **kwargs)

    def my_method(self):
        return self.my_rate


def test_subclass_attributes_are_kept_and_those_the_model_cannot_hold_are_named(tmp_path):
    """A user's subclass keeps its own attributes as SB3 does; one the value model cannot hold is named."""
    model = MyPPO("MlpPolicy", "CartPole-v1", n_steps=16, batch_size=16, my_rate=0.25)
    path = tmp_path / "m.rlarchive"
    report = rsb3.save(model, path)
    assert [o.key for o in report.opaque] == ["my_object"]
    with pytest.warns(rsb3.LoadWarning, match="my_object"):
        again = rsb3.load(path, algorithm=MyPPO)
    assert type(again) is MyPPO and again.my_rate == 0.25 and again.my_tags == ["a", "b"]
    assert again.my_method() == 0.25


def test_a_key_naming_a_method_is_not_restored(tmp_path):
    """A data key that would hide a method of the algorithm class stays out, and the warning names it."""
    model = _ppo()
    model.__dict__["learn"] = 3  # an attribute hiding the method: SB3 saves it as any other
    forged = tmp_path / "forged.rlarchive"
    rsb3.save(model, forged)
    with rlarchive.open(forged) as ar:
        assert ar.data["learn"] == 3
    with pytest.warns(rsb3.LoadWarning, match="learn"):
        model = rsb3.load(forged)
    assert callable(model.learn)


def _old_cnn_model(tmp_path):
    """An A2C CNN model whose policy holds one features extractor (no pi_/vf_ names): SB3 before 1.7."""
    env = FakeImageEnv(screen_height=36, screen_width=36, n_channels=1, discrete=False)
    model = A2C(
        "CnnPolicy", env, n_steps=4, policy_kwargs=dict(net_arch=[8], features_extractor_kwargs=dict(features_dim=16))
    )
    obs = np.stack([env.observation_space.sample() for _ in range(4)])
    actions = model.predict(obs, deterministic=True)[0]
    del model.policy.pi_features_extractor
    del model.policy.vf_features_extractor
    zip_path = tmp_path / "old.zip"
    model.save(zip_path)
    return env, zip_path, obs, actions


def test_old_shared_cnn_extractor_loads_imports_exports(tmp_path):
    """A state dict without pi_features_extractor.* (SB3 < 1.7) loads with a warning, as in SB3, and imports,
    exports and gives a portable policy: the layout the weights describe."""
    env, zip_path, obs, actions = _old_cnn_model(tmp_path)
    out = tmp_path / "old.rlarchive"
    report = rsb3.import_archive(zip_path, out)
    assert report.policy == "written"
    with pytest.warns(rsb3.LoadWarning, match="shared by actor and critic"):
        model = rsb3.load(out, env=env)
    assert np.array_equal(model.predict(obs, deterministic=True)[0], actions)
    with rlarchive.open(out) as ar:
        assert np.allclose(ar.policy().predict(obs)[0], actions, atol=1e-5)
    with pytest.warns(rsb3.ExportWarning):
        rsb3.export_archive(out, tmp_path / "export.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SB3 loads the export with its exact match: no warning
        exported = A2C.load(tmp_path / "export.zip", env=env)
    assert np.array_equal(exported.predict(obs, deterministic=True)[0], actions)
    model.learn(8)


def _zoo_schedule_zip(tmp_path, zoo_closure):
    """A PPO zip whose learning_rate is the RL Zoo's lin_0.001, as the zoo pickles it (a class, or a closure before 2025)."""
    sys.path.insert(0, os.path.dirname(__file__))
    from sb_fixtures import fake_modules

    if zoo_closure:

        def linear_schedule(initial_value):
            initial_value_ = float(initial_value)

            def func(progress_remaining):
                return progress_remaining * initial_value_

            func.__module__ = "rl_zoo3.utils"
            func.__qualname__ = "linear_schedule.<locals>.func"
            return func

        schedule = linear_schedule(0.001)
        modules = {}
    else:

        class SimpleLinearSchedule:
            def __init__(self, initial_value):
                self.initial_value = float(initial_value)

            def __call__(self, progress_remaining):
                return progress_remaining * self.initial_value

        SimpleLinearSchedule.__module__ = "rl_zoo3.utils"
        SimpleLinearSchedule.__qualname__ = "SimpleLinearSchedule"
        schedule = SimpleLinearSchedule(0.001)
        modules = {"rl_zoo3.utils": {"SimpleLinearSchedule": SimpleLinearSchedule}}
    with fake_modules(modules):
        model = _ppo(learning_rate=schedule)
        model.save(tmp_path / "zoo.zip")
    return tmp_path / "zoo.zip"


@pytest.mark.parametrize("zoo_closure", [False, True], ids=["SimpleLinearSchedule", "linear_schedule-closure"])
def test_zoo_linear_schedule_is_a_neutral_schedule(tmp_path, zoo_closure):
    """import-zoo/import-sb3 keep the zoo's lin_0.001 as linear(0.001 -> 0), so a resumed run trains with it."""
    zip_path = _zoo_schedule_zip(tmp_path, zoo_closure)
    report = rsb3.import_archive(zip_path, tmp_path / "zoo.rlarchive")
    assert report.opaque == []
    with rlarchive.open(tmp_path / "zoo.rlarchive") as ar:
        assert ar.data["learning_rate"] == rlarchive.Linear(0.001, 0.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.LoadWarning)
        model = rsb3.load(tmp_path / "zoo.rlarchive")
    for p in (1.0, 0.5, 0.25):
        assert model.lr_schedule(p) == pytest.approx(p * 0.001, rel=1e-12)


def test_a_schedule_given_in_custom_objects_is_not_said_left_out(tmp_path):
    """A lambda learning rate is opaque; with custom_objects giving learning_rate, lr_schedule (which SB3
    computes from it) is not reported left out."""
    path = tmp_path / "m.rlarchive"
    rsb3.save(_ppo(learning_rate=lambda p: 1e-3 * p), path)
    with pytest.warns(rsb3.LoadWarning, match="lr_schedule"):
        rsb3.load(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.LoadWarning)
        model = rsb3.load(path, custom_objects={"learning_rate": 3e-4})
    assert model.lr_schedule(0.5) == 3e-4


def test_restart_with_a_new_env_and_force_reset_false_says_what_to_do(tmp_path):
    """In a new process the env is new: force_reset=False would step it unreset; the load says so in one line."""
    model = PPO("MlpPolicy", make_vec_env("CartPole-v1", 1), n_steps=16, batch_size=16, n_epochs=1, seed=0)
    model.learn(16)
    path = tmp_path / "m.rlarchive"
    rsb3.save(model, path, training=True)
    with pytest.warns(rsb3.LoadWarning, match="force_reset=True") as record:
        rsb3.load(path, env=make_vec_env("CartPole-v1", 1), force_reset=False)
    assert len([w for w in record if "force_reset=True" in str(w.message)]) == 1
    assert "\n" not in str(record[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rsb3.LoadWarning)
        rsb3.load(path, env=model.get_env(), force_reset=False)  # the same env object: no warning
        rsb3.load(path, env=make_vec_env("CartPole-v1", 1))  # force_reset (the default): no warning
