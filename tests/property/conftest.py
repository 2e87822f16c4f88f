"""Shared set-up of the property tests: import paths, Hypothesis profiles, the JavaScript reader.

Profiles (``RLARCHIVE_HYPOTHESIS_PROFILE``): ``default`` (``make test``: a few
minutes at most on 2 cores) and ``long`` (ten times the examples).
"""

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

# One thread per process for PyTorch's and OpenBLAS's pools, in this process and every process it starts: the tests
# run in one process per core, and tiny networks on threads that wait for each other's work took twice the time.
os.environ.setdefault("OMP_NUM_THREADS", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

_common = dict(
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile("default", **_common)
settings.register_profile("long", max_examples=2000, **_common)
settings.load_profile(os.environ.get("RLARCHIVE_HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def workdir():
    """A folder for archives, in tmpfs when there is one; file names are reused."""
    root = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    d = tempfile.mkdtemp(prefix="rlarchive-property-", dir=root)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def js_reader():
    """ONE long-lived JavaScript conformance testee (node reader-js/bin/conformance.mjs) for the session."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    from readers import OFFICIAL, ReaderProcess

    r = ReaderProcess("javascript", OFFICIAL["javascript"], timeout=60.0)
    r.start()
    yield r
    r.stop()
