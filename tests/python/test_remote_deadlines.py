"""Reading an archive from an http(s) URL has deadlines (spec §11.4): a server
that trickles or stalls fails with IO_TIMEOUT within them, a body shorter than
announced fails at once, and honest servers, large reads included, still work.

The servers (remote_servers.py) listen on 127.0.0.1 only and stop themselves.
Elapsed times are checked only against bounds far below what the misbehaving
server would take without the deadlines (hours), never as speed measurements.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest
from remote_servers import misbehaving_server
from suite import ROOT

import rlarchive
import rlarchive.sources as sources
from rlarchive.errors import RlarchiveError
from rlarchive.sources import DEFAULT_MIN_RATE, DEFAULT_TIMEOUT, open_source

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp", reason="http(s) URLs need aiohttp (the http extra)")

PPO = os.path.join(ROOT, "test-vectors", "valid", "ppo-like-agent.rlarchive")


@pytest.fixture(scope="module")
def body() -> bytes:
    with open(PPO, "rb") as f:
        return f.read()


def failure(fn) -> tuple[str, float]:
    """The code ``fn`` fails with, and the seconds it took."""
    start = time.monotonic()
    with pytest.raises(RlarchiveError) as ei:
        fn()
    return ei.value.code, time.monotonic() - start


def test_the_defaults_are_finite_and_positive():
    assert 0 < DEFAULT_TIMEOUT < math.inf and 0 < DEFAULT_MIN_RATE < math.inf


@pytest.mark.slow
@pytest.mark.parametrize("drip", ["all", "body"])
def test_a_server_dripping_one_byte_every_half_second_times_out(body, drip):
    """Without deadlines this server would take len(body) / 2 seconds (about an hour and a half)."""
    with misbehaving_server(body, drip=drip, interval=0.5) as url:
        code, took = failure(lambda: rlarchive.open(url, spaces="neutral", timeout=1))
    assert code == "IO_TIMEOUT"
    assert took < 10, f"IO_TIMEOUT after {took:.1f} s with timeout=1"


def test_validate_reports_the_timeout_as_an_issue(body):
    with misbehaving_server(body, drip="body", interval=0.5) as url:
        report = rlarchive.validate(url, timeout=1)
    assert not report["valid"] and [i["code"] for i in report["issues"]] == ["IO_TIMEOUT"]


def test_the_default_deadline_applies_when_no_timeout_is_given(body, monkeypatch):
    """open() without a timeout uses DEFAULT_TIMEOUT, looked up when the URL is opened."""
    monkeypatch.setattr(sources, "DEFAULT_TIMEOUT", 0.5)
    with misbehaving_server(body, drip="body", interval=0.4) as url:
        code, took = failure(lambda: rlarchive.open(url, spaces="neutral"))
    assert code == "IO_TIMEOUT" and took < 10


def test_a_body_shorter_than_its_content_length_fails_at_once(body):
    """The server announces 100 bytes more than it sends, then closes: IO_ERROR long before the 30 s default timeout."""
    with misbehaving_server(body, declared_extra=100, stall=False) as url:
        code, took = failure(lambda: open_source(url).read(0, 1000))
    assert code == "IO_ERROR"
    assert took < DEFAULT_TIMEOUT / 3, f"took {took:.1f} s"


def test_a_body_shorter_than_its_content_length_then_a_stall_times_out(body):
    with misbehaving_server(body, declared_extra=100, stall=True) as url:
        code, took = failure(lambda: open_source(url, timeout=1).read(0, 1000))
    assert code == "IO_TIMEOUT" and took < 10


def test_an_honest_server_still_works(body):
    with misbehaving_server(body) as url:
        with rlarchive.open(url, spaces="neutral", timeout=1) as remote, rlarchive.open(PPO, spaces="neutral") as local:
            assert remote.dump() == local.dump()
        assert rlarchive.validate(url, timeout=1)["valid"]


@pytest.mark.slow
def test_the_total_deadline_grows_with_the_bytes_asked_for():
    """A server sending 64 KiB every 0.2 s (320 KiB/s) serves a 1 MiB read in about 3 s: more than
    timeout=1, within timeout + size / min_rate at the default minimum rate; a minimum rate above
    the server's fails."""
    data = os.urandom(1 << 20)
    with misbehaving_server(data, drip="body", interval=0.2, chunk=65536) as url:
        with open_source(url, timeout=1) as src:
            assert src.read(0, len(data)) == data
        code, _ = failure(lambda: open_source(url, timeout=1, min_rate=4 << 20).read(0, len(data)))
    assert code == "IO_TIMEOUT"


def test_a_large_archive_reads_with_a_short_timeout(tmp_path):
    rng = np.random.default_rng(1)
    big = rng.standard_normal((1024, 1024)).astype(np.float32)  # 4 MiB
    p = tmp_path / "big.rlarchive"
    rlarchive.save(p, {"gamma": 0.99}, {"policy": {"w": big}})
    with misbehaving_server(p.read_bytes()) as url:
        with rlarchive.open(url, spaces="neutral", timeout=1) as ar:
            assert np.array_equal(ar.tensor("policy", "w"), big)


@pytest.mark.parametrize(
    "bad",
    [{"timeout": 0}, {"timeout": -1}, {"timeout": math.inf}, {"timeout": math.nan}, {"min_rate": 0}, {"timeout": "5"}],
)
def test_bad_deadlines_are_refused(bad):
    with pytest.raises(ValueError):
        open_source(PPO, **bad)
