"""Fixtures of the Python test suite; shared helpers live in suite.py."""
import pytest

from suite import ROOT


@pytest.fixture
def root():
    return ROOT


@pytest.fixture(scope="session")
def sb3_zoo(tmp_path_factory):
    """The tiny SB3 / sb3-contrib models of sb_zoo.py: each built on first use, once per test run."""
    pytest.importorskip("sb3_contrib")
    import sb_zoo

    return sb_zoo.Zoo(tmp_path_factory.mktemp("sb3_zoo"))
