"""The bridges: the restricted unpickler (unpickle/, the security boundary) stands alone, and the SB3 bridge's facade
keeps its public API. (No import cycle, no private name taken across modules, and what each folder may import, the
unpickler included: test_imports.py, over every module of the package.)"""

from __future__ import annotations

import subprocess
import sys

#: the other bridges, which use the unpickler: it never imports them
OTHER_BRIDGES = ("rlarchive.sb3", "rlarchive.sb2", "rlarchive.zoo")


def test_the_unpickler_loads_no_other_bridge():
    """Importing every module of unpickle/ in a fresh interpreter loads nothing of sb3/, sb2/ or zoo/, nor the CLI."""
    code = (
        "import importlib, pkgutil, sys, rlarchive.unpickle as u\n"
        "names = sorted(m.name for m in pkgutil.iter_modules(u.__path__, 'rlarchive.unpickle.'))\n"
        "for name in names: importlib.import_module(name)\n"
        f"bad = sorted(m for m in sys.modules if m.startswith({OTHER_BRIDGES!r}) or m.startswith('rlarchive.cli'))\n"
        "print(len(names), bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert int(out[0]) >= 9 and out[1].strip() == "[]", out


def test_the_facade_keeps_the_public_api():
    """``rlarchive.sb3`` gives every name of ``__all__``, the same objects as the modules that define them."""
    from rlarchive import sb3
    from rlarchive.sb3 import exporting as sb3_export
    from rlarchive.sb3 import importing as sb3_import
    from rlarchive.sb3 import keys as sb3_keys
    from rlarchive.sb3 import loading as sb3_load
    from rlarchive.sb3 import model_zip as sb3_zip
    from rlarchive.sb3 import parts as sb3_parts
    from rlarchive.sb3 import policy_file as sb3_policy_file
    from rlarchive.sb3 import saving as sb3_save
    from rlarchive.sb3 import switch as sb3_switch

    for name in sb3.__all__:
        assert getattr(sb3, name) is not None, name
    defined = {}
    for mod in (sb3_zip, sb3_keys, sb3_import, sb3_save, sb3_export, sb3_load, sb3_parts, sb3_policy_file, sb3_switch):
        defined.update({n: getattr(mod, n) for n in mod.__all__})
    for name in set(sb3.__all__) - {"import_zoo"}:
        assert getattr(sb3, name) is defined[name], name
    for name in (
        "META_VERSION",
        "META_SYSTEM_INFO",
        "META_ALGORITHM",
        "META_ALGORITHM_CLASS",
        "META_TORCH_VALUES",
        "META_SOURCE",
    ):
        assert getattr(sb3, name) == getattr(sb3_keys, name)
