"""The portable policy computes Stable-Baselines3's deterministic actions for every standard zoo model.

Each model's policy is described (:func:`rlarchive.interop.sb3_policy.describe`)
and evaluated with NumPy alone (:class:`rlarchive.policy.Policy`) on the zoo's
sample observations, carrying recurrent state and action masks as SB3 does;
integer actions must be equal, float actions within 1e-4 (absolute or relative).
"""
from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import sb_zoo  # noqa: E402
from rlarchive.interop import sb3_policy  # noqa: E402
from rlarchive.policy import Policy  # noqa: E402

NAMES = list(sb_zoo.CATALOGUE)


def same_action(got: np.ndarray, want: np.ndarray) -> bool:
    """Spec RLA_policy: integer actions exactly, float actions within 1e-4 absolute or relative."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind == "f":
        return bool(np.all(np.abs(got - want) <= np.maximum(1e-4, 1e-4 * np.abs(want))))
    return bool(np.array_equal(got, want))


@pytest.mark.parametrize("name", NAMES)
def test_numpy_policy_acts_like_sb3(name, sb3_zoo):
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    m, entry = sb3_zoo[name], sb_zoo.CATALOGUE[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        venv = DummyVecEnv([entry.env])
        model = entry.algo.load(m.path, env=venv, device="cpu")
    if sb_zoo.USER_CLASS in entry.features:
        with pytest.raises(sb3_policy.Unsupported, match="user class"):
            sb3_policy.describe(model)
        return
    policy = Policy(sb3_policy.resolve(sb3_policy.describe(model), lambda w: w.array))
    norm = VecNormalize.load(m.vecnormalize, venv) if m.vecnormalize else None
    state = None
    for i, obs in enumerate(m.observations):
        if norm is not None:
            obs = norm.normalize_obs(obs)
        masks = m.action_masks[i] if m.action_masks is not None else None
        starts = [m.episode_starts[i]] if m.episode_starts is not None else None
        action, state = policy.predict(obs, state=state, episode_start=starts, action_masks=masks)
        assert same_action(action, m.actions[i]), (i, action, m.actions[i])


def test_the_evaluator_needs_numpy_only():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'stable_baselines3', 'sb3_contrib', 'gymnasium'):\n"
        "            raise ImportError(name + ' is blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import numpy as np\n"
        "from rlarchive.policy import Policy\n"
        "from rlarchive import spaces\n"
        "w = np.array([[1, -1], [0.5, 2]], np.float32)\n"
        "desc = {'observation_space': spaces.Box(np.full(2, -1, np.float32), np.full(2, 1, np.float32), (2,), 'F32'),\n"
        "        'action_space': spaces.Discrete(2), 'nodes': [{'op': 'linear', 'in': ['obs'], 'out': 'q', 'weight': w, 'bias': None}],\n"
        "        'action': {'op': 'argmax', 'in': 'q'}}\n"
        "print(int(Policy(desc).predict(np.array([0.2, 0.9], np.float32))[0]))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"
