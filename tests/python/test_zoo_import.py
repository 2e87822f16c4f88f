"""rlarchive import-zoo: an RL Zoo run folder into an archive; the restricted YAML reader on hostile files (Annex B.12)."""

import json
import os
import shutil
import subprocess
import sys
from collections import OrderedDict

import numpy as np
import pytest

yaml = pytest.importorskip("yaml")
pytest.importorskip("stable_baselines3")
import torch  # noqa: E402
from stable_baselines3 import PPO, SAC  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402

import rlarchive  # noqa: E402
from rlarchive import metadata as keys  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive import zoo
from rlarchive.errors import RlarchiveError  # noqa: E402
from rlarchive.validate import validate  # noqa: E402
from rlarchive.zoo import yaml_reader as zoo_yaml  # noqa: E402

PYTHON = os.path.join(os.path.dirname(__file__), "..", "..", "python")
ENV = {**os.environ, "PYTHONPATH": os.path.abspath(PYTHON)}


def _dump(path, value):
    """Write a YAML file as the RL Zoo does: PyYAML's default Dumper (Python tags for OrderedDict, tuples, classes)."""
    with open(path, "w") as f:
        yaml.dump(value, f)


def _plain(v):
    """What the restricted reader should give for a value the zoo dumps: tuples as lists, OrderedDicts as dicts."""
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


CONFIG = OrderedDict(
    sorted(
        {
            "n_envs": 2,
            "n_timesteps": 64.0,
            "normalize": True,
            "policy": "MlpPolicy",
            "n_steps": 16,
            "batch_size": 16,
            "n_epochs": 1,
            "learning_rate": "lin_0.001",
            "policy_kwargs": "dict(net_arch=[8])",
        }.items()
    )
)


def _args(env_id, seed, hyperparams=None):
    args = {
        "algo": "ppo",
        "env": env_id,
        "env_kwargs": None,
        "seed": seed,
        "hyperparams": hyperparams,
        "log_folder": "logs",
        "n_timesteps": -1,
        "gym_packages": [],
        "vec_env": "dummy",
        "uuid": False,
        "verbose": 1,
    }
    return OrderedDict(sorted(args.items()))


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory):
    """logs/ppo/CartPole-v1_1 as rl_zoo3 lays it out: CartPole-v1.zip, and CartPole-v1/{config,args}.yml, vecnormalize.pkl."""
    run = tmp_path_factory.mktemp("logs") / "ppo" / "CartPole-v1_1"
    params = run / "CartPole-v1"
    params.mkdir(parents=True)
    venv = VecNormalize(make_vec_env("CartPole-v1", n_envs=2, seed=3))
    model = PPO(
        "MlpPolicy", venv, n_steps=16, batch_size=16, n_epochs=1, policy_kwargs={"net_arch": [8]}, seed=3, device="cpu"
    )
    model.learn(64)
    model.save(run / "CartPole-v1")
    venv.save(params / "vecnormalize.pkl")
    _dump(params / "config.yml", CONFIG)
    # hyperparameters given on the zoo's command line are evaluated Python: a tuple and a class reach args.yml
    _dump(
        params / "args.yml",
        _args("CartPole-v1", 3, {"policy_kwargs": {"activation_fn": torch.nn.ReLU, "net_arch": (8,)}}),
    )
    return run, model, venv


def test_import_records_the_run(ppo_run, tmp_path):
    run, model, venv = ppo_run
    out = tmp_path / "a.rlarchive"
    report = rsb3.import_zoo(run, out)
    assert report.algorithm == "PPO"
    assert validate(out)["valid"]
    with rlarchive.open(out) as ar:
        md = ar.metadata
        assert md["env_id"] == "CartPole-v1" and md["seed"] == "3" and md["n_envs"] == "2"
        assert json.loads(md[keys.ZOO_CONFIG]) == _plain(
            yaml.unsafe_load((run / "CartPole-v1" / "config.yml").read_text())
        )
        assert keys.parsed(md, keys.WRAPPERS) == [
            {"name": "VecNormalize", "norm_obs": venv.norm_obs, "norm_reward": venv.norm_reward}
        ]
        assert keys.check(md) == []
        stats = ar.vec_normalize()
    np.testing.assert_array_equal(np.asarray(stats.obs.mean), venv.obs_rms.mean)
    assert any("config.yml" in n and "vecnormalize.pkl" in n for n in report.notes)


def test_portable_policy_normalises_as_the_run(ppo_run, tmp_path):
    from rlarchive.extensions.policy.evaluator import act

    run, model, venv = ppo_run
    out = tmp_path / "a.rlarchive"
    rsb3.import_zoo(run, out)
    obs = np.random.default_rng(0).uniform(-1, 1, (5, 4)).astype(np.float32)
    want, _ = model.predict(venv.normalize_obs(obs), deterministic=True)
    with rlarchive.open(out, spaces="neutral") as ar:
        got = act(ar.policy(), list(obs))
    np.testing.assert_array_equal(np.asarray(got).reshape(-1), want.reshape(-1))


def test_hub_layout_env_kwargs_and_wrappers(ppo_run, tmp_path):
    """A hub repository's flat files: ALGO-ENV.zip, config.yml, env_kwargs.yml, vec_normalize.pkl; frame_stack recorded."""
    run, model, venv = ppo_run
    hub = tmp_path / "ppo-CartPole-v1"
    hub.mkdir()
    shutil.copy(run / "CartPole-v1.zip", hub / "ppo-CartPole-v1.zip")
    shutil.copy(run / "CartPole-v1" / "vecnormalize.pkl", hub / "vec_normalize.pkl")
    config = OrderedDict(
        CONFIG, frame_stack=2, env_wrapper=[{"gymnasium.wrappers.TimeLimit": {"max_episode_steps": 50}}]
    )
    _dump(hub / "config.yml", config)
    _dump(hub / "env_kwargs.yml", {"render_mode": None, "sutton_barto_reward": True})
    files = zoo.find_run(hub)
    assert os.path.basename(files.model) == "ppo-CartPole-v1.zip" and files.params is None
    md, _ = zoo.zoo_metadata(files, None)
    assert md["env_id"] == "ppo-CartPole-v1"  # no args.yml: the folder's name, a hint only
    assert json.loads(md[keys.ZOO_ENV_KWARGS]) == {"render_mode": None, "sutton_barto_reward": True}
    wrappers = keys.parsed(md, keys.WRAPPERS)
    assert [w["name"] for w in wrappers] == ["gymnasium.wrappers.TimeLimit", "VecNormalize", "VecFrameStack"]
    assert wrappers[0]["max_episode_steps"] == 50 and wrappers[2]["n_stack"] == 2


def test_off_policy_run_with_replay_buffer_and_best_model(tmp_path):
    run = tmp_path / "sac" / "Pendulum-v1_2"
    (run / "Pendulum-v1").mkdir(parents=True)
    model = SAC(
        "MlpPolicy",
        "Pendulum-v1",
        learning_starts=8,
        batch_size=8,
        buffer_size=64,
        train_freq=4,
        policy_kwargs={"net_arch": [4]},
        seed=1,
        device="cpu",
    )
    model.learn(24)
    model.save(run / "Pendulum-v1")
    model.save(run / "best_model")
    model.save_replay_buffer(run / "replay_buffer.pkl")
    _dump(run / "Pendulum-v1" / "config.yml", OrderedDict([("policy", "MlpPolicy"), ("train_freq", (4, "step"))]))
    _dump(run / "Pendulum-v1" / "args.yml", _args("Pendulum-v1", 1))
    out = tmp_path / "sac.rlarchive"
    report = rsb3.import_zoo(run, out)
    assert validate(out)["valid"]
    with rlarchive.open(out) as ar:
        assert ar.metadata["env_id"] == "Pendulum-v1"
        assert json.loads(ar.metadata[keys.ZOO_CONFIG])["train_freq"] == [4, "step"]
        assert "RLA_replay_buffer" in ar.extensions_used and ar.replay_buffer() is not None
    assert any("replay_buffer.pkl" in n for n in report.notes)
    out2 = tmp_path / "best.rlarchive"
    report = rsb3.import_zoo(run, out2, best=True, replay_buffer=False)
    assert "best_model.zip" in report.notes[0] and "replay_buffer.pkl" not in report.notes[0]


@pytest.mark.slow
def test_cli(ppo_run, tmp_path):
    run, _, _ = ppo_run
    out = tmp_path / "c.rlarchive"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlarchive",
            "import-zoo",
            str(run),
            str(out),
            "--metadata",
            "env_id=CartPole-v1",
            "--json",
        ],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["algorithm"] == "PPO"
    for folder, code in ((tmp_path / "missing", "IO_ERROR"), (tmp_path, "IMPORT_INVALID")):
        r = subprocess.run(
            [sys.executable, "-m", "rlarchive", "import-zoo", str(folder), str(tmp_path / "x.rlarchive")],
            env=ENV,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode != 0 and r.stderr.startswith(f"rlarchive: {code}:") and r.stderr.count("\n") == 1, r.stderr


def test_hostile_config_refused_in_one_line(ppo_run, tmp_path):
    run, _, _ = ppo_run
    bad = tmp_path / "bad_1"
    shutil.copytree(run, bad)
    (bad / "CartPole-v1" / "config.yml").write_text("[" * 100 + "]" * 100)
    r = subprocess.run(
        [sys.executable, "-m", "rlarchive", "import-zoo", str(bad), str(tmp_path / "x.rlarchive")],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 1 and r.stderr.startswith("rlarchive: LIMIT_EXCEEDED:") and r.stderr.count("\n") == 1, (
        r.stderr
    )
    assert not (tmp_path / "x.rlarchive").exists()


# ---------------------------------------------------------------- the restricted YAML reader

SENTINEL = "rlarchive_zoo_sentinel"


@pytest.fixture
def sentinel(tmp_path, monkeypatch):
    """A module that records being imported and having its function called; and an audit hook that records
    every process start and ``os.system`` while the test runs."""
    (tmp_path / f"{SENTINEL}.py").write_text(
        "import os\nfired = []\nos.environ['RLARCHIVE_ZOO_SENTINEL'] = 'imported'\n"
        "def boom(*a, **k):\n    os.environ['RLARCHIVE_ZOO_SENTINEL'] = 'called'\n    return 0\n"
        "class Boom:\n    def __init__(self, *a, **k):\n        boom()\n    def __setstate__(self, s):\n        boom()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("RLARCHIVE_ZOO_SENTINEL", raising=False)
    sys.modules.pop(SENTINEL, None)
    events = []
    _AUDIT["sink"] = events
    yield events
    _AUDIT["sink"] = None
    sys.modules.pop(SENTINEL, None)


_AUDIT: dict = {"sink": None}


def _hook(event, args):
    sink = _AUDIT["sink"]
    if (
        sink is not None
        and event in ("os.system", "subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn")
        or (sink is not None and event == "import" and args and str(args[0]).startswith(SENTINEL))
    ):
        sink.append(event)


sys.addaudithook(_hook)

HOSTILE = [
    f"!!python/object/apply:{SENTINEL}.boom ['x']",
    "!!python/object/apply:os.system ['echo owned']",
    f"a: !!python/name:{SENTINEL}.boom ''",
    f"a: !!python/module:{SENTINEL} ''",
    f"!!python/object/new:{SENTINEL}.Boom {{args: [1]}}",
    f"!!python/object:{SENTINEL}.Boom {{x: 1}}",
    f"!!python/object/apply:{SENTINEL}.boom {{args: [1], kwds: {{a: 2}}, state: {{s: 1}}}}",
    f"!!python/object/apply:collections.OrderedDict [[[k, !!python/object/apply:{SENTINEL}.boom []]]]",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_python_tags_become_names_never_objects(sentinel, text):
    value = zoo_yaml.loads(text)
    assert "RLARCHIVE_ZOO_SENTINEL" not in os.environ and SENTINEL not in sys.modules and sentinel == []

    def tags(v):
        if isinstance(v, dict):
            return [k for k in v if k.startswith("!!python/")] + [t for x in v.values() for t in tags(x)]
        return [t for x in v for t in tags(x)] if isinstance(v, list) else []

    found = tags(value)
    assert found and all(t.split(":", 1)[1].split(".")[0] in (SENTINEL, "os") for t in found), value
    json.dumps(value)  # plain values only


def test_the_sentinel_would_fire(sentinel):
    """The check above can fail: PyYAML's unsafe loader runs the same text."""
    yaml.unsafe_load(HOSTILE[0])
    assert os.environ.get("RLARCHIVE_ZOO_SENTINEL") == "called" and "import" in sentinel


def _bomb(levels, width=10):
    lines = ["a0: &a0 [" + ",".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "text, what",
    [
        (_bomb(9), "MAX_YAML_NODES"),  # a billion laughs: 10^9 leaves once expanded, a few hundred bytes on disk
        ("a: &s " + "x" * 200_000 + "\n" + "".join(f"b{i}: *s\n" for i in range(40)), "MAX_YAML_CHARS"),
        ("[" * (zoo_yaml.MAX_YAML_DEPTH + 1) + "]" * (zoo_yaml.MAX_YAML_DEPTH + 1), "MAX_YAML_DEPTH"),
        ("- " * 10_000 + "x", "MAX_YAML_DEPTH"),
        ("[" * 1_000_000, "MAX_YAML_DEPTH"),
        ("{a: " * 200_000, "MAX_YAML_DEPTH"),
        ("a: &a [*a]", "MAX_YAML_DEPTH"),  # a cycle: followed, it never ends
        ("x: " + "y" * (zoo_yaml.MAX_YAML_BYTES + 1), "MAX_YAML_BYTES"),
    ],
)
def test_limits(text, what):
    with pytest.raises(RlarchiveError) as e:
        zoo_yaml.loads(text)
    assert e.value.code == "LIMIT_EXCEEDED" and what in e.value.message


def test_within_limits_passes():
    """The bounds are not met early: a bomb one level short expands, a file nested to the bound reads."""
    assert len(zoo_yaml.loads(_bomb(4))["a3"]) == 10
    depth = zoo_yaml.MAX_YAML_DEPTH
    assert zoo_yaml.loads("[" * depth + "]" * depth) is not None


@pytest.mark.parametrize("text", ["a: [1, 2", "a: 1\na: 2", "<<: {a: 1}", "? [1]\n: 2", "--- 1\n--- 2", "a: !!int x"])
def test_invalid(text):
    with pytest.raises(RlarchiveError) as e:
        zoo_yaml.loads(text)
    assert e.value.code == "IMPORT_INVALID"


def test_values_stay_json():
    v = zoo_yaml.loads(
        "a: .inf\nb: 123456789012345678901\nc: !!binary aGk=\nd: 2001-12-14\ne: !!python/tuple [1, 2]\nf: !!python/str s"
    )
    assert v == {
        "a": {"!!float": ".inf"},
        "b": {"!!int": "123456789012345678901"},
        "c": {"!!binary": "aGk="},
        "d": "2001-12-14",
        "e": [1, 2],
        "f": "s",
    }


def test_odd_folder_entries(ppo_run, tmp_path):
    """A dangling link and a FIFO named like a run file are not the run's files; a FIFO given to the reader does not block."""
    run, _, _ = ppo_run
    odd = tmp_path / "odd_1"
    shutil.copytree(run, odd)
    os.remove(odd / "CartPole-v1" / "args.yml")
    os.mkfifo(odd / "CartPole-v1" / "args.yml")
    os.symlink(tmp_path / "nowhere", odd / "replay_buffer.pkl")
    files = zoo.find_run(odd)
    assert files.args is None and files.replay_buffer is None and files.config is not None
    with pytest.raises(RlarchiveError) as e:
        zoo_yaml.load(odd / "CartPole-v1" / "args.yml")
    assert e.value.code == "IO_ERROR"


def test_hostile_tags_in_a_run_are_kept_as_names(ppo_run, tmp_path, sentinel):
    run, _, _ = ppo_run
    bad = tmp_path / "tagged_1"
    shutil.copytree(run, bad)
    (bad / "CartPole-v1" / "config.yml").write_text(
        "!!python/object/apply:collections.OrderedDict\n- - - callback\n"
        f"    - !!python/object/apply:{SENTINEL}.boom [x]\n  - - policy\n    - !!python/name:{SENTINEL}.Boom ''\n"
    )
    out = tmp_path / "t.rlarchive"
    rsb3.import_zoo(bad, out)
    assert "RLARCHIVE_ZOO_SENTINEL" not in os.environ and SENTINEL not in sys.modules and sentinel == []
    with rlarchive.open(out) as ar:
        assert json.loads(ar.metadata[keys.ZOO_CONFIG]) == {
            "callback": {f"!!python/object/apply:{SENTINEL}.boom": ["x"]},
            "policy": {f"!!python/name:{SENTINEL}.Boom": ""},
        }
