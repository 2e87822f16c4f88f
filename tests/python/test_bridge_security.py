"""``rlarchive.sb3.load`` and ``export_archive`` on hostile archives: no code runs, no module named by the file loads.

Archives are written with ``rlarchive.save`` from a real tiny model, then
edited: class references that reach module attributes, real classes off the
allow-list, functions, builtins; algorithm names in the metadata; data keys
that SB3 would hand to ``gymnasium.make``, open as a folder or call. Every
case runs in one child process, after a first ordinary load (so that the
libraries' own lazy imports are done), under a ``sys.addaudithook`` that
records imports, code compiled or executed, processes started, files opened
for writing (or any file of the hostile package), folders made and
connections, and every module that appears in ``sys.modules``; the hook is
shown to work by a control at the end that imports the hostile module on
purpose, as ``gymnasium.make`` would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import warnings

import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason="stable_baselines3 is needed to build and load models")
torch = pytest.importorskip("torch")

import rlarchive  # noqa: E402
from rlarchive import sb3 as rsb3  # noqa: E402
from rlarchive.values import ClassRef  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.abspath(os.path.join(HERE, "..", "..", "python"))

ENV_ID = "mypkg.evil:Env"  # gymnasium.make would import mypkg.evil


def _copy(v):
    if isinstance(v, np.ndarray):
        return np.array(v)
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_copy(x) for x in v)
    return v


def _variant(src: str, dst: str, edit=None, metadata=None, rename_group=None) -> str:
    """Write ``dst``: the archive ``src`` with its data edited by ``edit(data)``, metadata updated, a group renamed."""
    with rlarchive.open(src, spaces="neutral") as ar:
        data = {k: _copy(v) for k, v in ar.data.items()}
        tensors = {
            g: {k: np.array(v) for k, v in ar.tensors(g).items()}
            for g in ar.groups
            if g != "arrays" and not g.startswith("optimizer.")
        }
        optimizers = {n: _copy(ar.optimizer(n)) for n in ar.optimizer_names}
        meta = dict(ar.metadata)
    if edit is not None:
        edit(data)
    meta.update(metadata or {})
    if rename_group:
        old, new = rename_group
        tensors[new] = tensors.pop(old)
        # the optimizers name their parameters in the old group (param_tensors): an archive may leave them out
        for state in optimizers.values():
            for group in state.get("param_groups", []):
                group.pop("param_tensors", None)
    rlarchive.save(dst, data, tensors, optimizers, metadata=meta)
    return dst


def _set(path: str, value):
    """An edit that sets ``data[a][b]...`` (``path`` is ``"a/b"``) to ``value``."""

    def edit(data):
        *parents, last = path.split("/")
        target = data
        for p in parents:
            target = target[p]
        target[last] = value

    return edit


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    """Tiny PPO and DQN models (never trained), imported into rlarchives."""
    from stable_baselines3 import DQN, PPO

    folder = tmp_path_factory.mktemp("bridge")
    torch.set_num_threads(1)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = {
            "ppo": PPO(
                "MlpPolicy",
                "CartPole-v1",
                n_steps=16,
                batch_size=16,
                n_epochs=1,
                seed=1,
                device="cpu",
                policy_kwargs={"net_arch": [4]},
            ),
            "dqn": DQN(
                "MlpPolicy",
                "CartPole-v1",
                buffer_size=64,
                learning_starts=8,
                seed=1,
                device="cpu",
                policy_kwargs={"net_arch": [4]},
            ),
        }
        for name, model in models.items():
            model.save(str(folder / f"{name}.zip"))
            rsb3.import_archive(str(folder / f"{name}.zip"), str(folder / f"{name}.rlarchive"))
            out[name] = str(folder / f"{name}.rlarchive")
    return out


# (case name, base, edit, metadata, load keywords, expected code, text the message names)
CLASS_CASES = [
    (
        "module attribute under an allowed package",
        "ppo",
        _set("policy_kwargs/features_extractor_class", ClassRef("stable_baselines3.common.utils", "os.system")),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "stable_baselines3.common.utils.os.system",
    ),
    (
        "module attribute, the module allowed by the caller",
        "ppo",
        _set("policy_kwargs/features_extractor_class", ClassRef("stable_baselines3.common.utils", "os.system")),
        None,
        {"allow_classes": ["stable_baselines3.common.utils.*"]},
        "IMPORT_NOT_ALLOWED",
        "stable_baselines3.common.utils.os.system",
    ),
    (
        "a real class that is not on the list",
        "ppo",
        _set(
            "policy_kwargs/features_extractor_class",
            ClassRef("stable_baselines3.common.vec_env.subproc_vec_env", "SubprocVecEnv"),
        ),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "SubprocVecEnv",
    ),
    (
        "builtins.eval",
        "ppo",
        _set("policy_kwargs/activation_fn", ClassRef("builtins", "eval")),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "builtins.eval",
    ),
    # an optimizer is for training only: a name that is not allowed loads the model with SB3's default optimizer and a warning
    (
        "subprocess.Popen as optimizer",
        "ppo",
        _set("policy_kwargs/optimizer_class", ClassRef("subprocess", "Popen")),
        None,
        {},
        None,
        "subprocess.Popen",
    ),
    (
        "pickle.loads",
        "ppo",
        _set("policy_kwargs/features_extractor_class", ClassRef("pickle", "loads")),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "pickle.loads",
    ),
    (
        "a function reached through an allowed module",
        "ppo",
        _set("policy_kwargs/activation_fn", ClassRef("torch.nn.modules.activation", "F.relu")),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "torch.nn.modules.activation.F.relu",
    ),
    (
        "a module in an allowed module",
        "ppo",
        _set("policy_kwargs/activation_fn", ClassRef("torch.nn.modules.activation", "F")),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "torch.nn.modules.activation.F",
    ),
    (
        "a class re-exported by an allowed module",
        "ppo",
        _set("policy_kwargs/activation_fn", ClassRef("torch.nn.modules.activation", "Tensor")),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "torch.nn.modules.activation.Tensor",
    ),
    (
        "nested in features_extractor_kwargs",
        "ppo",
        _set("policy_kwargs/features_extractor_kwargs", {"fn": ClassRef("os", "system")}),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "os.system",
    ),
    (
        "policy_class off the list",
        "ppo",
        _set("policy_class", ClassRef("subprocess", "Popen")),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "subprocess.Popen",
    ),
    (
        "policy_class an allowed class that is not a policy",
        "ppo",
        _set("policy_class", ClassRef("torch.nn.modules.activation", "ReLU")),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "policy_class",
    ),
    (
        "policy_class given as a string",
        "ppo",
        _set("policy_class", "os.system"),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "os.system",
    ),
    (
        "rollout_buffer_class through a module attribute",
        "ppo",
        _set("rollout_buffer_class", ClassRef("stable_baselines3.common.utils", "os.system")),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "stable_baselines3.common.utils.os.system",
    ),
    (
        "rollout_buffer_class an allowed class that is not a buffer",
        "ppo",
        _set("rollout_buffer_class", ClassRef("torch.optim.adam", "Adam")),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "rollout_buffer_class",
    ),
    (
        "replay_buffer_class off the list",
        "dqn",
        _set("replay_buffer_class", ClassRef("subprocess", "Popen")),
        None,
        {},
        "IMPORT_NOT_ALLOWED",
        "subprocess.Popen",
    ),
    (
        "algorithm subprocess.Popen",
        "ppo",
        None,
        {"sb3.algorithm": "subprocess.Popen"},
        {},
        "IMPORT_NOT_ALLOWED",
        "subprocess.Popen",
    ),
    (
        "algorithm through a module attribute",
        "ppo",
        None,
        {"sb3.algorithm": "stable_baselines3.common.utils.os.system"},
        {},
        "IMPORT_NOT_ALLOWED",
        "os.system",
    ),
    (
        "algorithm an allowed class that is not an algorithm",
        "ppo",
        None,
        {"sb3.algorithm": "torch.optim.adam.Adam"},
        {},
        "IMPORT_NOT_ALLOWED",
        "torch.optim.adam.Adam",
    ),
    (
        "algorithm naming the hostile module",
        "ppo",
        None,
        {"sb3.algorithm": "mypkg.evil.Env"},
        {},
        "IMPORT_NOT_ALLOWED",
        "mypkg.evil.Env",
    ),
]

# Keys whose value SB3 would import, open or call: load drops or replaces them and succeeds.
# (case name, base, edit, load keywords, {attribute of the loaded model: expected value})
KEY_CASES = [
    ("env id naming a module", "ppo", _set("env", ENV_ID), {}, {"env": None}),
    ("_vec_normalize_env", "ppo", _set("_vec_normalize_env", ENV_ID), {}, {"_vec_normalize_env": None}),
    (
        "tensorboard_log outside the temporary folder",
        "ppo",
        _set("tensorboard_log", "@OUTSIDE@"),
        {"learn": True},
        {"tensorboard_log": None},
    ),
    ("device", "ppo", _set("device", "meta"), {}, {"device": "cpu"}),
    ("verbose is data SB3 restores", "ppo", _set("verbose", 2), {}, {"verbose": 2}),
    ("a method name as data key", "ppo", _set("_setup_model", ClassRef("subprocess", "Popen")), {}, {}),
    ("an unknown key", "ppo", _set("set_parameters", ENV_ID), {}, {}),
    (
        "replay_buffer_kwargs env and device",
        "dqn",
        _set("replay_buffer_kwargs", {"env": ENV_ID, "device": "meta"}),
        {},
        {"replay_buffer_kwargs": {}},
    ),
    ("policy_kwargs device", "ppo", _set("policy_kwargs/device", "meta"), {}, {}),
    (
        "a class under a dropped key is never resolved",
        "ppo",
        _set("env", ClassRef("subprocess", "Popen")),
        {},
        {"env": None},
    ),
    ("the seed is data", "ppo", _set("seed", 123), {}, {"seed": 123}),
    ("the policy class given by its alias", "ppo", _set("policy_class", "MlpPolicy"), {}, {}),
]

OTHER_CASES = [
    ("a tensor group that is not a public attribute path", "ppo", None, {}, ("policy", "_policy"), "VALUE_UNSUPPORTED"),
    ("a train frequency unit that is not one", "dqn", _set("train_freq", (4, ENV_ID)), {}, None, "VALUE_UNSUPPORTED"),
    ("an observation space that is a string", "ppo", _set("observation_space", ENV_ID), {}, None, "VALUE_UNSUPPORTED"),
]

CHILD = textwrap.dedent(
    r"""
    import json, os, sys, warnings
    warnings.simplefilter("ignore")
    import torch
    torch.set_num_threads(1)
    import gymnasium as gym
    from rlarchive.errors import RlarchiveError
    from rlarchive import sb3 as rsb3

    plan = json.load(open(sys.argv[1]))
    marker = plan["marker"]

    def fresh_env():
        return gym.make("CartPole-v1")

    # the libraries' own lazy imports happen here, before the hook
    for base in plan["bases"]:
        m = rsb3.load(base, env=fresh_env())
        m.learn(16)
        rsb3.export_archive(base, base + ".zip")

    WATCHED = ("import", "exec", "compile", "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
               "os.fork", "os.forkpty", "socket.connect", "socket.getaddrinfo", "os.mkdir", "os.remove", "os.rename",
               "shutil.rmtree", "shutil.move", "ctypes.dlopen")
    events = []

    def hook(event, args):
        if event in WATCHED:
            events.append([event, str(args[0])[:200] if args else ""])
        elif event == "open":
            path, mode, flags = (list(args) + [None, None, None])[:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            if writes or "mypkg" in str(path) or "outside" in str(path):
                events.append(["open", str(path)[:200]])

    sys.addaudithook(hook)
    results = {}
    def new_modules(before):
        return sorted(set(sys.modules) - before)

    for case in plan["cases"]:
        events.clear()
        before = set(sys.modules)
        out = {"code": None, "message": None, "attrs": {}}
        try:
            kwargs = dict(case["kwargs"])
            learn = kwargs.pop("learn", False)
            if learn:
                kwargs["env"] = fresh_env()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                m = rsb3.load(case["path"], **kwargs)
            out["warnings"] = [str(w.message) for w in caught]
            for name in case["attrs"]:
                v = getattr(m, name, "<missing>")
                out["attrs"][name] = str(v) if name == "device" else v if isinstance(v, (int, str, dict, type(None))) else repr(v)
            if learn:
                m.learn(16)
        except RlarchiveError as e:
            out["code"], out["message"] = e.code, str(e)
        out["load_events"] = list(events) + [["new module", n] for n in new_modules(before)]
        events.clear()
        before = set(sys.modules)
        if case.get("export"):
            try:
                rsb3.export_archive(case["path"], case["path"] + ".zip", **{k: v for k, v in case["kwargs"].items() if k == "allow_classes"})
                out["export_code"] = None
            except RlarchiveError as e:
                out["export_code"] = e.code
            out["export_events"] = list(events) + [["new module", n] for n in new_modules(before)]
        out["marker"] = os.path.exists(marker)
        results[case["name"]] = out
    # the control: importing the hostile module on purpose, as gymnasium.make would, is seen and writes the marker
    events.clear()
    before = set(sys.modules)
    import importlib
    importlib.import_module("mypkg.evil")
    results["control"] = {"events": list(events) + [["new module", n] for n in new_modules(before)], "marker": os.path.exists(marker)}
    print(json.dumps(results))
    """
)


@pytest.mark.slow
def test_hostile_names_and_keys_reach_nothing(bases, tmp_path):
    site = tmp_path / "site"
    (site / "mypkg").mkdir(parents=True)
    marker = tmp_path / "imported-mypkg-evil"
    (site / "mypkg" / "__init__.py").write_text("")
    (site / "mypkg" / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('imported')\nclass Env: pass\n")
    outside = tmp_path / "outside" / "tb"

    cases = []
    for i, (name, base, edit, meta, kwargs, _, _) in enumerate(CLASS_CASES):
        path = _variant(bases[base], str(tmp_path / f"class{i}.rlarchive"), edit, meta)
        cases.append({"name": name, "path": path, "kwargs": kwargs, "attrs": [], "export": True})
    for i, (name, base, edit, kwargs, attrs) in enumerate(KEY_CASES):

        def edit_outside(data, edit=edit):
            edit(data)
            for k, v in data.items():
                if v == "@OUTSIDE@":
                    data[k] = str(outside)

        path = _variant(bases[base], str(tmp_path / f"key{i}.rlarchive"), edit_outside)
        cases.append({"name": name, "path": path, "kwargs": kwargs, "attrs": list(attrs)})
    for i, (name, base, edit, kwargs, rename, _) in enumerate(OTHER_CASES):
        path = _variant(bases[base], str(tmp_path / f"other{i}.rlarchive"), edit, None, rename)
        cases.append({"name": name, "path": path, "kwargs": kwargs, "attrs": []})

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"bases": list(bases.values()), "cases": cases, "marker": str(marker)}))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, str(site)]))
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(plan)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=str(tmp_path),
    )
    assert r.returncode == 0, r.stderr[-3000:]
    results = json.loads(r.stdout.strip().splitlines()[-1])

    for name, _, _, _, _, code, named in CLASS_CASES:
        got = results[name]
        assert got["code"] == code, (name, got)
        assert named in (got["message"] if code else " ".join(got["warnings"])), (name, got)
        assert got["load_events"] == [], (name, got["load_events"])
        # the export writes its own output (a temporary file, by name then by descriptor, renamed into place), and nothing else
        output = f"class{CLASS_CASES.index(next(c for c in CLASS_CASES if c[0] == name))}.rlarchive.zip"
        others = [
            ev
            for ev in got["export_events"]
            if not (ev[0] in ("open", "os.rename", "os.remove") and (output in ev[1] or ev[1].isdigit()))
        ]
        assert others == [], (name, others)
    for name, _, _, kwargs, attrs in KEY_CASES:
        got = results[name]
        assert got["code"] is None, (name, got)
        events = got["load_events"]
        if kwargs.get(
            "learn"
        ):  # learn() makes SB3's own log folder ($SB3_LOGDIR, else tempdir/SB3-<time>), whatever the archive says
            events = [
                ev
                for ev in events
                if not (
                    ev[0] == "os.mkdir"
                    and (
                        ev[1] == os.environ.get("SB3_LOGDIR")
                        or (
                            os.path.dirname(ev[1]) == tempfile.gettempdir()
                            and os.path.basename(ev[1]).startswith("SB3-")
                        )
                    )
                )
            ]
        assert events == [], (name, events)
        assert got["attrs"] == attrs, (name, got["attrs"])
    for name, _, _, _, _, code in OTHER_CASES:
        got = results[name]
        assert got["code"] == code, (name, got)
        assert got["load_events"] == [], (name, got["load_events"])
    assert not outside.exists() and not (tmp_path / "outside").exists()
    assert not any(got["marker"] for got in results.values() if "marker" in got and got is not results["control"])

    # the hook sees an import of the hostile module, and that import writes the marker
    control = results["control"]
    assert ["new module", "mypkg.evil"] in control["events"], control
    assert any(ev[0] == "open" and ev[1].endswith(os.path.join("mypkg", "evil.py")) for ev in control["events"]), (
        control
    )
    assert control["marker"], control


def test_export_writes_refused_names_by_name_and_resolves_allowed_ones_exactly(bases, tmp_path):
    """Export resolves only exactly allowed classes; any other name is written by name, never imported."""
    import base64
    import zipfile

    from rlarchive import unpickle
    from rlarchive.errors import RlarchiveError

    src = _variant(
        bases["ppo"],
        str(tmp_path / "a.rlarchive"),
        _set("policy_kwargs/features_extractor_class", ClassRef("subprocess", "Popen")),
    )
    out = str(tmp_path / "a.zip")
    rsb3.export_archive(src, out)
    raw = base64.b64decode(json.loads(zipfile.ZipFile(out).read("data"))["policy_kwargs"][":serialized:"])
    # a bare global, found by name when SB3 loads the file; writing it looked nothing up
    assert unpickle.describe_globals(raw) == [("subprocess", "Popen")]
    assert unpickle.decode(raw)["features_extractor_class"] == ClassRef("subprocess", "Popen")
    # a name the allow-list matches but that is no class defined there is refused, not written by name
    bad = _variant(
        bases["ppo"],
        str(tmp_path / "b.rlarchive"),
        _set("policy_kwargs/activation_fn", ClassRef("torch.nn.modules.activation", "F.relu")),
    )
    with pytest.raises(RlarchiveError) as e:
        rsb3.export_archive(bad, str(tmp_path / "b.zip"))
    assert e.value.code == "IMPORT_NOT_ALLOWED" and "F.relu" in e.value.message
    assert not os.path.exists(tmp_path / "b.zip")


def test_load_key_table_covers_what_sb3_saves(bases):
    """Every key SB3 saves for these models has a decision, and the decisions are the documented ones."""
    with rlarchive.open(bases["ppo"], spaces="neutral") as a, rlarchive.open(bases["dqn"], spaces="neutral") as b:
        saved = set(a.data) | set(b.data)
    assert saved <= set(rsb3.LOAD_KEYS), sorted(saved - set(rsb3.LOAD_KEYS))
    assert set(rsb3.LOAD_KEYS.values()) == {"data", "space", "policy", "buffer", "kwargs", "drop"}
    for key in ("env", "_vec_normalize_env", "tensorboard_log", "device"):
        assert rsb3.LOAD_KEYS[key] == "drop"
    assert rsb3.LOAD_KEYS["verbose"] == "data"  # SB3 restores it; the caller's verbose= goes over it


def test_the_algorithm_argument(bases):
    from stable_baselines3 import PPO

    from rlarchive.errors import RlarchiveError

    assert type(rsb3.load(bases["ppo"], algorithm="PPO")) is PPO
    assert type(rsb3.load(bases["ppo"], algorithm=PPO)) is PPO
    # a dotted name works only when the caller allows exactly it, and only for an algorithm class
    with pytest.raises(RlarchiveError) as e:
        rsb3.load(bases["ppo"], algorithm="stable_baselines3.ppo.ppo.PPO")
    assert e.value.code == "IMPORT_NOT_ALLOWED"
    assert (
        type(
            rsb3.load(
                bases["ppo"], algorithm="stable_baselines3.ppo.ppo.PPO", allow_classes=["stable_baselines3.ppo.ppo.PPO"]
            )
        )
        is PPO
    )
    with pytest.raises(RlarchiveError) as e:
        rsb3.load(bases["ppo"], algorithm="stable_baselines3.PPO", allow_classes=["stable_baselines3.*"])  # re-exported
    assert e.value.code == "IMPORT_NOT_ALLOWED"
    with pytest.raises(TypeError):
        rsb3.load(bases["ppo"], algorithm=dict)
    with pytest.raises(TypeError):
        rsb3.load(bases["ppo"], allow_classes="stable_baselines3.ppo.ppo.PPO")


def _annex_b8_rows() -> list:
    """(keys, what load passes) of each row of the table in Annex B.8."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "spec", "annex-b-stable-baselines.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    section = text.split("## B.8 ")[1].split("\n## ")[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if (
            line.startswith("| ")
            and len(cells) == 3
            and not cells[0].startswith("data key")
            and not set(cells[0]) <= {"-", " "}
        ):
            rows.append((re.findall(r"`([^`]+)`", cells[0]), cells[1]))
    return rows


def test_annex_b8_table_agrees_with_load_keys():
    """Annex B.8 and rsb3.LOAD_KEYS say the same for every key the annex names, and the annex names every key not passed as data."""
    named = {}
    for keys, passes in _annex_b8_rows():
        if passes.startswith("nothing"):
            rule = "drop"
        elif passes.startswith("the archive's value"):
            rule = "data"
        elif passes.startswith("the gymnasium space"):
            rule = "space"
        elif "`BasePolicy`" in passes:
            rule = "policy"
        elif "`BaseBuffer`" in passes:
            rule = "buffer"
        elif passes.startswith("a map with string keys"):
            rule = "kwargs"
        elif passes.startswith("the value rebuilt"):
            continue  # the row of the "data" entries, which it names by reference
        else:
            raise AssertionError(f"Annex B.8 row not understood: {keys} {passes}")
        for key in keys:
            if key in rsb3.LOAD_KEYS or not key.isidentifier() or key in ("BasePolicy", "BaseBuffer"):
                named[key] = rule
    for key, rule in named.items():
        assert rsb3.LOAD_KEYS.get(key) == rule, (key, rule, rsb3.LOAD_KEYS.get(key))
    assert {k for k, v in rsb3.LOAD_KEYS.items() if v != "data"} == {k for k, v in named.items() if v != "data"}, (
        "Annex B.8 omits or adds a key that is not passed as data"
    )
