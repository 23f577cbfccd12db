"""The reliability suite's shared parts: the fuzz tally at the end of the run, a real server.

At the end of a run that fuzzed anything, the terminal summary prints how many inputs were tried,
per system and per operation, and the worst input found for time and for memory; the same figures
are written as JSON to ``fuzz-summary.json`` in pytest's temporary directory (its path is printed).
"""

from __future__ import annotations

import json
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

import pytest

from . import harness

_SUMMARY: list[Path] = []


@pytest.fixture(scope="session", autouse=True)
def _fuzz_summary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    if harness.STATS.inputs:
        path = tmp_path_factory.getbasetemp() / "fuzz-summary.json"
        path.write_text(json.dumps(harness.STATS.to_json(), indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")
        _SUMMARY.append(path)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not harness.STATS.inputs:
        return
    terminalreporter.section("astragal reliability: fuzz tally")
    for line in harness.STATS.lines():
        terminalreporter.write_line(line)
    for path in _SUMMARY:
        terminalreporter.write_line(f"fuzz: figures written to {path}")


# ------------------------------------------------------------------------------------------------
# A real server on 127.0.0.1 (for tests that look at the bytes on the wire)


class LiveServer:
    """uvicorn serving ``app`` in a thread on a free port of 127.0.0.1, as ``astragal serve``."""

    def __init__(self, app: Any, **options: Any) -> None:
        import uvicorn

        from astragal.web.server import uvicorn_options

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}"
        # As `astragal serve` (``options`` changes its timeouts and caps for a test).
        config = uvicorn.Config(app, lifespan="on", **uvicorn_options(**options))
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


def test_client(app: Any) -> Any:
    """FastAPI's in-process client (its import warns about its transport: quiet)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    return TestClient(app)


test_client.__test__ = False  # type: ignore[attr-defined]
