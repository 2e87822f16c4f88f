"""Package layout: the core never imports a bridge (unpickle/, sb3/, sb2/, zoo/); there is no interop/ any more."""

import os
import subprocess
import sys

from suite import ROOT


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


def test_the_registry_names_the_extensions_without_importing_them():
    """Importing the package, its manifest, checks, reader, writer, validator and command line loads no extension's
    module (the manifest reads the names from the registry); validating an archive that uses RLA_policy then loads
    that one's checks, and only that one's."""
    vector = os.path.join(ROOT, "test-vectors", "valid", "policy-bernoulli-threshold.rlarchive")
    code = (
        "import sys, rlarchive, rlarchive.manifest, rlarchive.checks, rlarchive.reader, rlarchive.writer, rlarchive.cli\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('rlarchive.extensions.'))\n"
        "print(loaded(), sorted(rlarchive.manifest.SUPPORTED_EXTENSIONS))\n"
        "assert rlarchive.validate(sys.argv[1])['valid']\n"
        "print('rlarchive.extensions.policy.description' in loaded(), 'rlarchive.extensions.replay_buffer' in loaded())\n"
    )
    out = subprocess.run([sys.executable, "-c", code, vector], capture_output=True, text=True, check=True).stdout
    names = "['RLA_policy', 'RLA_replay_buffer', 'RLA_training', 'RLA_vec_normalize']"
    assert out.splitlines() == [f"[] {names}", "True False"]


def test_the_registry_entries_are_their_modules():
    from rlarchive import extensions
    from rlarchive.extensions import replay_buffer, training, vec_normalize
    from rlarchive.extensions.policy import description

    assert list(extensions.SUPPORTED) == list(extensions.NAMES) and len(extensions.SUPPORTED) == 4
    for module in (description, vec_normalize, training, replay_buffer):
        ext = extensions.SUPPORTED[module.EXTENSION]
        assert (ext.name, ext.member, ext.key, ext.group, ext.check) == (
            module.EXTENSION,
            module.MEMBER,
            module.KEY,
            module.GROUP,
            module.check,
        )
    for module in (description, vec_normalize, training, replay_buffer):  # the rules that read element bytes
        assert extensions.SUPPORTED[module.EXTENSION].check_content is getattr(module, "check_content", None)
    assert "RLA_sb3" not in extensions.SUPPORTED and extensions.SUPPORTED.get("RLA_sb3") is None


def test_the_registry_refuses_a_module_that_declares_another_extension(monkeypatch):
    import pytest

    from rlarchive import extensions
    from rlarchive.extensions import training

    monkeypatch.setitem(extensions._MODULES, extensions.REPLAY_BUFFER, lambda: training)
    extensions._entry.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="RLA_replay_buffer, its module declares RLA_training"):
            extensions.SUPPORTED[extensions.REPLAY_BUFFER]
    finally:
        extensions._entry.cache_clear()
