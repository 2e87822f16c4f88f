"""Helpers that build Stable-Baselines (SB2) and Stable-Baselines3 fixtures for the tests.

Nothing here downloads anything. SB3 models are trained for a few steps with
the installed stable_baselines3; archives of the old formats are written in
their documented layouts:

- pickles "made from the old gym package" (SB2 and SB3 1.x archives) are
  produced by cloudpickle from stand-in classes whose ``__module__`` and
  ``__qualname__`` are gym's (``gym.spaces.box.Box``, ...) and whose instance
  state copies the attributes gym 0.17.3 / gym 0.21 set, so the bytes name gym
  exactly as real ones do. The stand-in modules live in ``sys.modules`` only
  while pickling (:func:`fake_modules`);
- SB2 zips hold ``data`` (SB's data_to_json), ``parameters`` (``numpy.savez``)
  and ``parameter_list`` (JSON list of TensorFlow variable names).
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import sys
import types
import zipfile
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

# ---------------------------------------------------------------------------
# stand-in modules and classes
# ---------------------------------------------------------------------------


@contextlib.contextmanager
def fake_modules(members: Mapping[str, Mapping[str, Any]]) -> Iterator[None]:
    """Install modules ``{dotted name: {attr: obj}}`` (and their parents) in sys.modules for a while."""
    added = []
    try:
        for modname, attrs in members.items():
            parts = modname.split(".")
            for i in range(1, len(parts) + 1):
                name = ".".join(parts[:i])
                if name not in sys.modules:
                    sys.modules[name] = types.ModuleType(name)
                    added.append(name)
                    if i > 1:
                        setattr(sys.modules[".".join(parts[: i - 1])], parts[i - 1], sys.modules[name])
            for k, v in attrs.items():
                setattr(sys.modules[modname], k, v)
        yield
    finally:
        for name in reversed(added):
            sys.modules.pop(name, None)


def _standin_class(module: str, name: str) -> type:
    cls = type(name, (), {})
    cls.__module__ = module
    cls.__qualname__ = name
    return cls


GYM_CLASSES = {
    "Box": _standin_class("gym.spaces.box", "Box"),
    "Discrete": _standin_class("gym.spaces.discrete", "Discrete"),
    "MultiDiscrete": _standin_class("gym.spaces.multi_discrete", "MultiDiscrete"),
    "MultiBinary": _standin_class("gym.spaces.multi_binary", "MultiBinary"),
    "Dict": _standin_class("gym.spaces.dict", "Dict"),
    "Tuple": _standin_class("gym.spaces.tuple", "Tuple"),
}


def _gym_modules() -> dict:
    return {cls.__module__: {cls.__qualname__: cls} for cls in GYM_CLASSES.values()}


def _make(cls_name: str, state: dict) -> Any:
    obj = GYM_CLASSES[cls_name].__new__(GYM_CLASSES[cls_name])
    obj.__dict__.update(state)
    return obj


def _shape_state(shape, dtype, style: str, rng: bool) -> dict:
    """The Space base attributes: gym 0.17 ('shape', '_np_random') or gym 0.21 ('_shape', '_np_random')."""
    st = {"shape" if style == "0.17" else "_shape": None if shape is None else tuple(shape)}
    st["dtype"] = None if dtype is None else np.dtype(dtype)
    st["_np_random"] = np.random.RandomState(0) if rng else None
    return st


def gym_box(low, high, shape, dtype=np.float32, style: str = "0.21", rng: bool = False) -> Any:
    """An old gym Box (attributes as gym 0.17.3 / 0.21 set them)."""
    dt = np.dtype(dtype)
    low = np.full(shape, low, dtype=dt) if np.isscalar(low) else np.asarray(low, dtype=dt)
    high = np.full(shape, high, dtype=dt) if np.isscalar(high) else np.asarray(high, dtype=dt)
    st = {"dtype": dt}
    st.update(_shape_state(shape, dt, style, rng))
    st.update(low=low, high=high, bounded_below=-np.inf < low, bounded_above=np.inf > high)
    return _make("Box", st)


def gym_discrete(n: int, style: str = "0.21", rng: bool = False) -> Any:
    st = {"n": int(n)}
    st.update(_shape_state((), np.int64, style, rng))
    return _make("Discrete", st)


def gym_multi_discrete(nvec, style: str = "0.21") -> Any:
    nvec = np.asarray(nvec, dtype=np.int64)
    st = {"nvec": nvec}
    st.update(_shape_state(nvec.shape, np.int64, style, False))
    return _make("MultiDiscrete", st)


def gym_multi_binary(n, style: str = "0.21") -> Any:
    st = {"n": n}
    st.update(_shape_state((n,) if isinstance(n, int) else tuple(n), np.int8, style, False))
    return _make("MultiBinary", st)


def gym_dict(spaces: Mapping[str, Any], style: str = "0.21") -> Any:
    st = {"spaces": OrderedDict(spaces)}
    st.update(_shape_state(None, None, style, False))
    return _make("Dict", st)


def gym_tuple(spaces, style: str = "0.21") -> Any:
    st = {"spaces": tuple(spaces)}
    st.update(_shape_state(None, None, style, False))
    return _make("Tuple", st)


def sb2_policy_class(module: str = "stable_baselines.common.policies", name: str = "MlpPolicy") -> type:
    return _standin_class(module, name)


def tf_function(module: str = "tensorflow.python.ops.gen_nn_ops", name: str = "relu"):
    def f(*args, **kwargs):  # pragma: no cover - never called
        raise AssertionError("stand-in")

    f.__module__ = module
    f.__qualname__ = name
    f.__name__ = name
    return f


def cloudpickle_with(obj: Any, modules: Mapping[str, Mapping[str, Any]] | None = None) -> bytes:
    """cloudpickle ``obj`` while the stand-in modules (gym's by default) are importable."""
    import cloudpickle

    mods = dict(_gym_modules())
    mods.update(modules or {})
    with fake_modules(mods):
        return cloudpickle.dumps(obj)


# ---------------------------------------------------------------------------
# SB data JSON and zips
# ---------------------------------------------------------------------------


def serialized_entry(raw: bytes, type_str: str) -> dict:
    return {":type:": type_str, ":serialized:": base64.b64encode(raw).decode()}


def sb_data_json(data: Mapping[str, Any], modules: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """SB's ``data_to_json`` (identical in SB2 and SB3), with stand-in modules importable."""
    out = {}
    for k, v in data.items():
        if isinstance(v, dict) and ":serialized:" in v:
            out[k] = v
            continue
        try:
            json.dumps(v)
            out[k] = v
        except TypeError:
            entry = serialized_entry(cloudpickle_with(v, modules), str(type(v)))
            if hasattr(v, "__dict__") or isinstance(v, dict):
                items = v.items() if isinstance(v, dict) else v.__dict__.items()
                for name, item in items:
                    try:
                        json.dumps(item)
                        entry[name] = item
                    except TypeError:
                        entry[name] = str(item)
            out[k] = entry
    return json.dumps(out, indent=4)


def write_sb2_zip(path: str, data_json: str, params: OrderedDict[str, np.ndarray]) -> None:
    """SB2's ``_save_to_file_zip``: data, parameters (numpy.savez), parameter_list."""
    buf = io.BytesIO()
    np.savez(buf, **params)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", data_json)
        z.writestr("parameters", buf.getvalue())
        z.writestr("parameter_list", json.dumps(list(params.keys()), indent=4))


def sb2_ppo2_params(
    obs_dim: int = 4, n_actions: int = 2, hidden: int = 8, seed: int = 0
) -> OrderedDict[str, np.ndarray]:
    """Parameters named as SB2's PPO2 MlpPolicy names its TensorFlow variables."""
    rng = np.random.default_rng(seed)
    p: OrderedDict[str, np.ndarray] = OrderedDict()

    def dense(name, i, o):
        p[f"model/{name}/w:0"] = rng.standard_normal((i, o)).astype(np.float32)
        p[f"model/{name}/b:0"] = rng.standard_normal((o,)).astype(np.float32)

    dense("pi_fc0", obs_dim, hidden)
    dense("vf_fc0", obs_dim, hidden)
    dense("pi_fc1", hidden, hidden)
    dense("vf_fc1", hidden, hidden)
    dense("vf", hidden, 1)
    dense("pi", hidden, n_actions)
    dense("q", hidden, n_actions)
    return p


def sb2_ppo2_data(learning_rate: Any = 2.5e-4, style: str = "0.17") -> dict:
    """The data dict SB2's PPO2.save writes, with old-gym spaces and TF class names."""
    return {
        "gamma": 0.99,
        "n_steps": 128,
        "vf_coef": 0.5,
        "ent_coef": 0.01,
        "max_grad_norm": 0.5,
        "learning_rate": learning_rate,
        "lam": 0.95,
        "nminibatches": 4,
        "noptepochs": 4,
        "cliprange": 0.2,
        "cliprange_vf": None,
        "verbose": 0,
        "policy": sb2_policy_class(),
        "observation_space": gym_box(
            np.array([-4.8, -np.inf, -0.42, -np.inf], np.float32),
            np.array([4.8, np.inf, 0.42, np.inf], np.float32),
            (4,),
            style=style,
            rng=True,
        ),
        "action_space": gym_discrete(2, style=style, rng=True),
        "n_envs": 1,
        "n_cpu_tf_sess": None,
        "seed": None,
        "_vectorize_action": False,
        "policy_kwargs": {"act_fun": tf_function(), "net_arch": [8, 8]},
    }


def sb2_modules_for(data: Mapping[str, Any]) -> dict:
    """The stand-in modules needed to pickle ``data`` (policy classes and TF functions by reference)."""
    mods: dict = {}

    def walk(v):
        if isinstance(v, type) and v.__module__.startswith("stable_baselines."):
            mods.setdefault(v.__module__, {})[v.__qualname__] = v
        elif callable(v) and getattr(v, "__module__", "").startswith("tensorflow."):
            mods.setdefault(v.__module__, {})[v.__qualname__] = v
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)

    walk(dict(data))
    return mods


def write_sb2_ppo2(
    path: str, learning_rate: Any = 2.5e-4, style: str = "0.17", extra: Mapping[str, Any] | None = None
) -> OrderedDict[str, np.ndarray]:
    """A complete SB2 PPO2 zip; returns its parameters."""
    data = sb2_ppo2_data(learning_rate, style)
    data.update(extra or {})
    params = sb2_ppo2_params()
    write_sb2_zip(path, sb_data_json(data, sb2_modules_for(data)), params)
    return params


# ---------------------------------------------------------------------------
# Editing SB3 zips
# ---------------------------------------------------------------------------


def rewrite_sb3_zip(src: str, dst: str, changes: Mapping[str, Any]) -> None:
    """Copy an SB3 zip, replacing data keys: a value is plain JSON, or ``("pickle", bytes, type_str)``."""
    with zipfile.ZipFile(src) as zin:
        data = json.loads(zin.read("data"))
        for k, v in changes.items():
            if isinstance(v, tuple) and v and v[0] == "pickle":
                data[k] = serialized_entry(v[1], v[2])
            else:
                data[k] = v
        with zipfile.ZipFile(dst, "w") as zout:
            for info in zin.infolist():
                if info.filename == "data":
                    zout.writestr("data", json.dumps(data, indent=4))
                else:
                    zout.writestr(info, zin.read(info.filename))


class RunsCommand:
    """Unpickling this runs ``os.system(cmd)`` (a real pickle would)."""

    def __init__(self, cmd: str):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


class WritesMarker:
    """Unpickling this writes a marker file via ``builtins.exec``."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        import builtins

        return (builtins.exec, (f"open({self.path!r}, 'w').write('pwned')",))


class BoxWithPayload:
    """Looks like a gymnasium Box to the pickle, but its state runs a command when rebuilt."""

    def __init__(self, cmd: str):
        self.cmd = cmd

    def __reduce__(self):
        import gymnasium.spaces as gs

        return (gs.Box, (-1.0, 1.0, (2,)), {"low": RunsCommand(self.cmd)})


# ---------------------------------------------------------------------------
# A tiny environment with any spaces
# ---------------------------------------------------------------------------


def tiny_env(observation_space, action_space, episode_length: int = 8):
    """A gymnasium env that returns seeded samples of its observation space."""
    import gymnasium as gym

    class TinyEnv(gym.Env):
        metadata: dict = {"render_modes": []}

        def __init__(self):
            self.observation_space = observation_space
            self.action_space = action_space
            self.t = 0

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.observation_space.seed(seed if seed is not None else 0)
            self.t = 0
            return self.observation_space.sample(), {}

        def step(self, action):
            self.t += 1
            return self.observation_space.sample(), float(self.t % 3) - 1.0, self.t >= episode_length, False, {}

    return TinyEnv()


# ---------------------------------------------------------------------------
# Stored pickles of SB3 1.x schedule closures, made by cloudpickle 1.6.0 (which
# builds functions with _builtin_type("LambdaType") and cloudpickle_fast's
# _function_setstate): constant_fn(0.5) and get_linear_fn(1.0, 0.1, 0.3).
# ---------------------------------------------------------------------------

CONSTANT_FN_CLOUDPICKLE_1_6 = (
    "gAWVyQIAAAAAAACMF2Nsb3VkcGlja2xlLmNsb3VkcGlja2xllIwNX2J1aWx0aW5fdHlwZZSTlIwK"
    "TGFtYmRhVHlwZZSFlFKUKGgCjAhDb2RlVHlwZZSFlFKUKEsBSwBLAEsBSwFLE0MIlQGXAIkBUwCU"
    "ToWUKYwBX5SFlIxKL3RtcC9zYnZlbnYvbGliL3B5dGhvbjMuMTEvc2l0ZS1wYWNrYWdlcy9zdGFi"
    "bGVfYmFzZWxpbmVzMy9jb21tb24vdXRpbHMucHmUjARmdW5jlEvWQwIEAZSMA3ZhbJSFlCl0lFKU"
    "fZQojAtfX3BhY2thZ2VfX5SMGHN0YWJsZV9iYXNlbGluZXMzLmNvbW1vbpSMCF9fbmFtZV9flIwe"
    "c3RhYmxlX2Jhc2VsaW5lczMuY29tbW9uLnV0aWxzlIwIX19maWxlX1+UjEovdG1wL3NidmVudi9s"
    "aWIvcHl0aG9uMy4xMS9zaXRlLXBhY2thZ2VzL3N0YWJsZV9iYXNlbGluZXMzL2NvbW1vbi91dGls"
    "cy5weZR1Tk5oAIwQX21ha2VfZW1wdHlfY2VsbJSTlClSlIWUdJRSlIwcY2xvdWRwaWNrbGUuY2xv"
    "dWRwaWNrbGVfZmFzdJSMEl9mdW5jdGlvbl9zZXRzdGF0ZZSTlGggfZR9lChoF2gOjAxfX3F1YWxu"
    "YW1lX1+UjBljb25zdGFudF9mbi48bG9jYWxzPi5mdW5jlIwPX19hbm5vdGF0aW9uc19flH2UjA5f"
    "X2t3ZGVmYXVsdHNfX5ROjAxfX2RlZmF1bHRzX1+UTowKX19tb2R1bGVfX5RoGIwHX19kb2NfX5RO"
    "jAtfX2Nsb3N1cmVfX5RoAIwKX21ha2VfY2VsbJSTlEc/4AAAAAAAAIWUUpSFlIwXX2Nsb3VkcGlj"
    "a2xlX3N1Ym1vZHVsZXOUXZSMC19fZ2xvYmFsc19flH2UdYaUhlIwLg=="
)
LINEAR_FN_CLOUDPICKLE_1_6 = (
    "gAWVeQMAAAAAAACMF2Nsb3VkcGlja2xlLmNsb3VkcGlja2xllIwNX2J1aWx0aW5fdHlwZZSTlIwK"
    "TGFtYmRhVHlwZZSFlFKUKGgCjAhDb2RlVHlwZZSFlFKUKEsBSwBLAEsBSwRLE0M8lQOXAGQBfAB6"
    "CgAAiQJrBAAAAAByAokBUwCJA2QBfAB6CgAAiQGJA3oKAAB6BQAAiQJ6CwAAegAAAFMAlE5LAYaU"
    "KYwScHJvZ3Jlc3NfcmVtYWluaW5nlIWUjEovdG1wL3NidmVudi9saWIvcHl0aG9uMy4xMS9zaXRl"
    "LXBhY2thZ2VzL3N0YWJsZV9iYXNlbGluZXMzL2NvbW1vbi91dGlscy5weZSMBGZ1bmOUS8NDBgQB"
    "EgEEApSMA2VuZJSMDGVuZF9mcmFjdGlvbpSMBXN0YXJ0lIeUKXSUUpR9lCiMC19fcGFja2FnZV9f"
    "lIwYc3RhYmxlX2Jhc2VsaW5lczMuY29tbW9ulIwIX19uYW1lX1+UjB5zdGFibGVfYmFzZWxpbmVz"
    "My5jb21tb24udXRpbHOUjAhfX2ZpbGVfX5SMSi90bXAvc2J2ZW52L2xpYi9weXRob24zLjExL3Np"
    "dGUtcGFja2FnZXMvc3RhYmxlX2Jhc2VsaW5lczMvY29tbW9uL3V0aWxzLnB5lHVOTmgAjBBfbWFr"
    "ZV9lbXB0eV9jZWxslJOUKVKUaB4pUpRoHilSlIeUdJRSlIwcY2xvdWRwaWNrbGUuY2xvdWRwaWNr"
    "bGVfZmFzdJSMEl9mdW5jdGlvbl9zZXRzdGF0ZZSTlGgkfZR9lChoGWgOjAxfX3F1YWxuYW1lX1+U"
    "jBtnZXRfbGluZWFyX2ZuLjxsb2NhbHM+LmZ1bmOUjA9fX2Fubm90YXRpb25zX1+UfZQoaAuMCGJ1"
    "aWx0aW5zlIwFZmxvYXSUk5SMBnJldHVybpRoMHWMDl9fa3dkZWZhdWx0c19flE6MDF9fZGVmYXVs"
    "dHNfX5ROjApfX21vZHVsZV9flGgajAdfX2RvY19flE6MC19fY2xvc3VyZV9flGgAjApfbWFrZV9j"
    "ZWxslJOURz+5mZmZmZmahZRSlGg4Rz/TMzMzMzMzhZRSlGg4Rz/wAAAAAAAAhZRSlIeUjBdfY2xv"
    "dWRwaWNrbGVfc3VibW9kdWxlc5RdlIwLX19nbG9iYWxzX1+UfZR1hpSGUjAu"
)


def assert_ppo2_cartpole_values(d) -> None:
    """The neutral values every SB2 PPO2 CartPole fixture must import to: policy, policy_kwargs and spaces."""
    import numpy as np

    from rlarchive import spaces
    from rlarchive.values import ClassRef

    assert d["policy"] == ClassRef("stable_baselines.common.policies", "MlpPolicy")
    assert d["policy_kwargs"] == {"act_fun": ClassRef("tensorflow.python.ops.gen_nn_ops", "relu"), "net_arch": [8, 8]}
    inf = np.inf
    assert d["observation_space"] == spaces.Box(
        np.array([-4.8, -inf, -0.42, -inf], np.float32), np.array([4.8, inf, 0.42, inf], np.float32), (4,), "F32"
    )
    assert d["action_space"] == spaces.Discrete(2, 0, "I64")
