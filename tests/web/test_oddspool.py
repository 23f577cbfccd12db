"""The odds workers' pool as a busy server runs it."""

from __future__ import annotations

import contextlib
import os
import resource

import pytest

from astragal import Limits
from astragal.web.oddspool import OddsPool


def test_odds_are_answered_when_the_server_holds_over_a_thousand_connections() -> None:
    # Each live connection is a file descriptor: a server with ~1,020 of them gives a new
    # worker's pipe a descriptor past 1024, which select.select cannot wait on (every odds
    # request was a 500).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the hard limit of open files is {hard}: a server cannot hold 1,100")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held: list[int] = []
    pool = OddsPool(workers=1, seconds=60.0, wait=60.0)
    try:
        while len(held) < 1100:  # as many as a busy server's connections
            held.append(os.open(os.devnull, os.O_RDONLY))
        outcome = pool.run("2d6", None, Limits())
        assert outcome is not None and outcome.kind == "ok", outcome
        assert outcome.value["odds"]["distribution"]["7"] == pytest.approx(6 / 36)
    finally:
        pool.close()
        for fd in held:
            with contextlib.suppress(OSError):
                os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
