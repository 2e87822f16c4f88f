"""Fixtures of the Python test suite; shared helpers live in suite.py."""

import collections
import os

import pytest
from suite import ROOT

# One thread per process for PyTorch's and OpenBLAS's pools, in this process and every process it starts: the tests
# run in one process per core, and tiny networks on threads that wait for each other's work took twice the time.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(session, config, items):
    """The files with the most tests marked ``slow`` run first, each file's tests in their order: with the files
    spread over processes (pytest-xdist, ``--dist loadfile``), a long file then starts early instead of ending the
    run alone."""
    weight = collections.Counter(item.path for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -weight[item.path])


def pytest_runtest_setup(item):
    """A test marked ``stage(NAME)`` does what the stage NAME of ``make test`` does (the conformance run, the
    vectors regenerated, the API reference built): it is skipped when that stage runs in the same ``make test``,
    which names its stages in RLARCHIVE_STAGES (tools/test_stages.py), so that each runs once."""
    stages = os.environ.get("RLARCHIVE_STAGES", "").split(",")
    for mark in item.iter_markers("stage"):
        if mark.args[0] in stages:
            pytest.skip(f"make test runs it as its stage {mark.args[0]}")


@pytest.fixture
def root():
    return ROOT


@pytest.fixture(scope="session")
def sb3_zoo(tmp_path_factory):
    """The tiny SB3 / sb3-contrib models of sb_zoo.py: each built on first use, once per test run."""
    pytest.importorskip("sb3_contrib")
    import sb_zoo

    return sb_zoo.Zoo(tmp_path_factory.mktemp("sb3_zoo"))


@pytest.fixture(scope="session", autouse=True)
def _sb3_log_folder(tmp_path_factory):
    """SB3's logger makes a folder per ``learn`` in the system's temporary folder unless SB3_LOGDIR
    names one: keep them inside the test run's own temporary folder."""
    old = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3_logs"))
    yield
    if old is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = old
