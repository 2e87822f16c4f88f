"""Package layout: the core never imports a bridge (unpickle/, sb3/, sb2/, zoo/); there is no interop/ any more."""

import subprocess
import sys


def test_core_imports_no_bridge():
    code = (
        "import sys, rlarchive, rlarchive.cli, rlarchive.validate, rlarchive.dump\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[:2] in (['rlarchive', 'sb3'], ['rlarchive', 'sb2'], ['rlarchive', 'unpickle'], ['rlarchive', 'zoo']))\n"
        "heavy = sorted(m for m in ('torch', 'stable_baselines3', 'gymnasium', 'cloudpickle') if m in sys.modules)\n"
        "print(bad, heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[] []"


def test_the_bridges_are_packages_and_interop_is_gone():
    import importlib
    import os
    from importlib.machinery import PathFinder

    import rlarchive

    for name in ("rlarchive.sb3", "rlarchive.sb2", "rlarchive.unpickle", "rlarchive.zoo"):
        module = importlib.import_module(name)
        assert module.__name__ == name, name  # the package itself, no alias of another module
        assert module.__file__.endswith(os.path.join(name.split(".")[1], "__init__.py")), module.__file__
    for name in ("interop", "sb3_zip", "policy_ops"):  # no folder nor module of the old layout in the package
        assert PathFinder.find_spec(f"rlarchive.{name}", rlarchive.__path__) is None, name
