"""Package layout: the core never imports the Stable-Baselines bridge; the old module names still work."""

import subprocess
import sys


def test_core_imports_nothing_from_interop():
    code = (
        "import sys, rlarchive, rlarchive.cli, rlarchive.validate, rlarchive.dump\n"
        "bad = sorted(m for m in sys.modules if m.startswith('rlarchive.interop') or m in ('rlarchive.sb3', 'rlarchive.sb2', 'rlarchive.unpickle'))\n"
        "heavy = sorted(m for m in ('torch', 'stable_baselines3', 'gymnasium', 'cloudpickle') if m in sys.modules)\n"
        "print(bad, heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[] []"


def test_old_module_names_alias_the_interop_modules():
    import rlarchive.interop.sb2
    import rlarchive.interop.sb3
    import rlarchive.interop.unpickle
    import rlarchive.sb2
    import rlarchive.sb3
    import rlarchive.unpickle

    assert rlarchive.sb3 is rlarchive.interop.sb3
    assert rlarchive.sb2 is rlarchive.interop.sb2
    assert rlarchive.unpickle is rlarchive.interop.unpickle
