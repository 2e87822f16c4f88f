"""pytest plugin for the peer runs: ``--rlarchive archives`` runs every test inside ``rlarchive.sb3.use_archives()``.

Loaded by ``tests/peers/run.py`` (``-p rlarchive_peers``) into the pytest run
of Stable-Baselines3's or sb3-contrib's own test files; ``--rlarchive pickle``
runs them unchanged, for the baseline.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--rlarchive",
        choices=("pickle", "archives"),
        default="archives",
        help="archives: every test inside rlarchive.sb3.use_archives(); pickle: SB3's own persistence",
    )


@pytest.fixture(autouse=True)
def _rlarchive_switch(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.config.getoption("--rlarchive") != "archives":
        yield
        return
    import rlarchive.sb3

    with rlarchive.sb3.use_archives():
        yield
