"""Telling the SB3 / sb3-contrib algorithm from a model's decoded data, and importing algorithm classes by exact name."""

from __future__ import annotations

import sys
import zipfile

import pytest

from rlarchive.errors import RlarchiveError
from rlarchive.sb3 import algorithms
from rlarchive.values import ClassRef

NAMES = []
try:
    import sb_zoo

    NAMES = list(sb_zoo.CATALOGUE)
except ImportError:  # stable_baselines3 / sb3_contrib not installed
    sb_zoo = None

needs_sb3 = pytest.mark.skipif(sb_zoo is None, reason="stable_baselines3 and sb3_contrib are not importable")


def zip_data(path: str) -> dict:
    """The zip's data member through the import's decoding path."""
    from rlarchive.sb3 import model_zip as sb3_zip

    with zipfile.ZipFile(path) as zf:
        doc = sb3_zip.parse_data_json(zf.read("data"))
    return sb3_zip.decode_data(doc, sb3_zip.ImportReport(source="stable-baselines3", output=""))


def archive_data(path: str, tmp_path) -> dict:
    """The data of the rlarchive that import_archive writes, read back."""
    from rlarchive import sb3 as rsb3
    from rlarchive.reader import open_archive

    out = str(tmp_path / "model.rlarchive")
    rsb3.import_archive(path, out)
    with open_archive(out, spaces="neutral") as ar:
        return dict(ar.data)


@pytest.mark.slow
@needs_sb3
@pytest.mark.parametrize("name", NAMES)
def test_identify_every_zoo_model(name, sb3_zoo, tmp_path):
    m = sb3_zoo[name]
    entry = sb_zoo.CATALOGUE[name]
    for data in (zip_data(m.path), archive_data(m.path, tmp_path)):
        assert isinstance(data["policy_class"], ClassRef)
        assert algorithms.identify(data) == entry.algorithm
        assert algorithms.uses_her(data) == (sb_zoo.HER in entry.features)


def _as_of_sb3_2_0(data: dict) -> dict:
    """The keys SB3 2.0 would have written: rollout buffer classes (SB3 2.2) and off-policy n_steps (SB3 2.7) removed."""
    out = dict(data)
    out.pop("rollout_buffer_class", None)
    out.pop("rollout_buffer_kwargs", None)
    if "buffer_size" in out:
        out.pop("n_steps", None)
    return out


@needs_sb3
@pytest.mark.parametrize("name", NAMES)
def test_identify_older_and_custom_policy_data(name, sb3_zoo):
    entry = sb_zoo.CATALOGUE[name]
    data = zip_data(sb3_zoo[name].path)
    assert algorithms.identify(_as_of_sb3_2_0(data)) == entry.algorithm
    # a user's policy class: the keys alone decide; RecurrentPPO holds exactly PPO's keys and no buffer class
    custom = dict(data, policy_class=ClassRef("user_policies", "CustomPolicy"))
    expected = None if entry.algorithm == "RecurrentPPO" else entry.algorithm
    assert algorithms.identify(custom) == expected
    # ... and without a buffer class (SB3 < 2.2) PPO, MaskablePPO and RecurrentPPO cannot be told apart
    older = _as_of_sb3_2_0(custom)
    ppo_family = {"PPO", "MaskablePPO", "RecurrentPPO"}
    assert algorithms.identify(older) == (None if entry.algorithm in ppo_family else entry.algorithm)


@needs_sb3
def test_ddpg_and_td3(sb3_zoo):
    td3 = zip_data(sb3_zoo["td3_action_noise_qf_arch"].path)
    ddpg = zip_data(sb3_zoo["ddpg_pendulum"].path)
    assert (ddpg["policy_delay"], ddpg["target_noise_clip"], ddpg["target_policy_noise"]) == (1, 0.0, 0.1)
    assert algorithms.identify(dict(td3, policy_delay=1)) == "TD3"
    assert algorithms.identify(dict(td3, policy_delay=1, target_noise_clip=0.0)) == "TD3"
    # a TD3 model with all of DDPG's fixed values computes what DDPG computes
    assert algorithms.identify(dict(td3, policy_delay=1, target_noise_clip=0.0, target_policy_noise=0.1)) == "DDPG"
    assert algorithms.identify(dict(ddpg, policy_delay=2)) == "TD3"
    assert algorithms.identify(dict(ddpg, policy_delay=True)) == "TD3"  # a bool is not the number 1


@needs_sb3
def test_contradictions_give_none(sb3_zoo):
    ppo = zip_data(sb3_zoo["ppo_cartpole"].path)
    sac = zip_data(sb3_zoo["sac_pendulum"].path)
    assert algorithms.identify(dict(ppo, cg_max_steps=10)) is None  # PPO keys and TRPO keys
    assert algorithms.identify(dict(sac, policy_delay=2)) is None  # SAC policy with a policy delay
    assert algorithms.identify(dict(sac, policy_class=ppo["policy_class"])) is None  # actor-critic policy, SAC keys
    no_policy = {k: v for k, v in sac.items() if k != "policy_class"}
    assert algorithms.identify(no_policy) == "SAC"


def test_identify_without_evidence():
    assert algorithms.identify({}) is None
    assert (
        algorithms.identify({"policy_class": ClassRef("stable_baselines3.common.policies", "ActorCriticPolicy")})
        is None
    )
    assert algorithms.identify({"gamma": 0.99, "learning_rate": 3e-4}) is None
    assert algorithms.identify(["not", "a", "mapping"]) is None
    assert algorithms.uses_her({}) is False
    assert algorithms.uses_her({"replay_buffer_class": ClassRef("my.buffers", "HerReplayBuffer")}) is False


def test_table_matches_installed_packages():
    sb3 = pytest.importorskip("stable_baselines3")
    contrib = pytest.importorskip("sb3_contrib")
    for name, algo in algorithms.ALGORITHMS.items():
        package = sb3 if algo.package == "stable_baselines3" else contrib
        exported = vars(package)[name]
        cls = algorithms.algorithm_class(name)
        assert cls is exported
        assert (cls.__module__, cls.__qualname__) == (algo.module, algo.class_name)
        assert cls.__module__.split(".")[0] == algo.package
        # the policy classes recorded by the table are exactly those behind the algorithm's policy aliases
        aliased = {f"{p.__module__}.{p.__qualname__}" for p in cls.policy_aliases.values()}
        assert aliased == set(algo.policies), name
    from stable_baselines3.common.base_class import BaseAlgorithm

    exported_algorithms = {
        n
        for pkg in (sb3, contrib)
        for n, v in vars(pkg).items()
        if isinstance(v, type) and issubclass(v, BaseAlgorithm)
    }
    assert exported_algorithms == set(algorithms.ALGORITHMS)


def test_every_policy_class_of_the_table_is_allowed_for_sb3_load():
    from rlarchive import sb3 as rsb3

    for algo in algorithms.ALGORITHMS.values():
        for dotted in algo.policies:
            module, _, qualname = dotted.rpartition(".")
            assert ClassRef(module, qualname).allowed(rsb3.ALLOWED_CLASSES), dotted


def test_algorithm_class_refuses_unknown_names():
    modules_before = set(sys.modules)
    for bad in ("HER", "ppo", "stable_baselines3.PPO", "os.system", "", None, "PPO.__init__"):
        with pytest.raises(RlarchiveError) as e:
            algorithms.algorithm_class(bad)
        assert e.value.code == "IMPORT_NOT_ALLOWED"
    assert set(sys.modules) == modules_before
