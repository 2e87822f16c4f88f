"""Run inside an old SB3's virtual environment: 'train DIR' saves tiny models and their actions; 'check DIR' loads exports and compares."""

import json
import os
import sys
import warnings

warnings.simplefilter("ignore")
import numpy as np
import stable_baselines3 as sb3
from stable_baselines3 import A2C, DQN, PPO, SAC, TD3

MODELS = {
    "ppo": (
        PPO,
        "CartPole-v1",
        dict(n_steps=32, batch_size=32, n_epochs=1, learning_rate=lambda p: 3e-4 * p, policy_kwargs=dict(net_arch=[8])),
    ),
    "a2c": (A2C, "CartPole-v1", dict(n_steps=8, policy_kwargs=dict(net_arch=[8]))),
    "dqn": (DQN, "CartPole-v1", dict(learning_starts=8, buffer_size=100, policy_kwargs=dict(net_arch=[8]))),
    "sac": (SAC, "Pendulum-v1", dict(learning_starts=8, buffer_size=100, policy_kwargs=dict(net_arch=[8]))),
    "td3": (TD3, "Pendulum-v1", dict(learning_starts=8, buffer_size=100, policy_kwargs=dict(net_arch=[8]))),
}


def obs_for(env_id):
    rng = np.random.default_rng(0)
    return [rng.uniform(-1, 1, size=(4 if env_id == "CartPole-v1" else 3,)).astype(np.float32) for _ in range(5)]


def actions(model, env_id):
    return [np.asarray(model.predict(o, deterministic=True)[0]).tolist() for o in obs_for(env_id)]


cmd, folder = sys.argv[1], sys.argv[2]
if cmd == "train":
    out = {"version": sb3.__version__, "numpy": np.__version__}
    for name, (cls, env_id, kw) in MODELS.items():
        m = cls("MlpPolicy", env_id, seed=0, device="cpu", **kw).learn(64)
        m.save(os.path.join(folder, f"{name}.zip"))
        out[name] = actions(m, env_id)
    json.dump(out, open(os.path.join(folder, "actions.json"), "w"))
else:
    want = json.load(open(os.path.join(folder, "actions.json")))
    results = {}
    for name, (cls, env_id, _kw) in MODELS.items():
        for suffix in ("export.zip",):
            p = os.path.join(folder, f"{name}.{suffix}")
            if not os.path.exists(p):
                continue
            try:
                m = cls.load(p, device="cpu")
                got = actions(m, env_id)
                ok = all(
                    np.allclose(np.asarray(a, float), np.asarray(b, float), atol=1e-5) for a, b in zip(got, want[name])
                )
                results[name] = "ok" if ok else f"FAIL: actions differ {got[:2]} vs {want[name][:2]}"
            except Exception as e:
                results[name] = f"FAIL: {type(e).__name__}: {str(e)[:200]}"
    print(json.dumps(results))
