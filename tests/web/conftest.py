"""Fixtures for the web table: both stores, an in-process client, real servers on free ports.

PostgreSQL: ASTRAGAL_TEST_PG (default postgresql://postgres@127.0.0.1:5432/test). Each test gets
its own schema (``astragal_t_<random>``), dropped afterwards, so parallel runs never collide. When
the server cannot be reached, the PostgreSQL tests skip and say so.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

import pytest

from astragal.web.store import PostgresStore, SQLiteStore, Store

WEB_EXTRA = "the web table needs the web extra: pip install 'astragal[web]'"

PG_URL = os.environ.get("ASTRAGAL_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
_pg_reason: list[str] = []


def pg_available() -> str | None:
    """None when PostgreSQL answers; else why not (cached for the run)."""
    if _pg_reason:
        return _pg_reason[0] or None
    try:
        import psycopg
    except ImportError:
        _pg_reason.append("psycopg is not installed (pip install 'astragal[web]')")
        return _pg_reason[0]
    try:
        with psycopg.connect(PG_URL, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        _pg_reason.append("")
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        _pg_reason.append(f"PostgreSQL is not reachable at {PG_URL} ({first}); "
                          "set ASTRAGAL_TEST_PG to a server to run these tests")
    return _pg_reason[0] or None


def new_schema() -> str:
    return f"astragal_t_{secrets.token_hex(5)}"


@pytest.fixture
def pg_schema() -> Iterator[str]:
    """A fresh schema name for one test, dropped at the end (whatever created it)."""
    reason = pg_available()
    if reason:
        pytest.skip(reason)
    schema = new_schema()
    yield schema
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Each store backend in turn (PostgreSQL skips with the reason when unreachable)."""
    if request.param == "sqlite":
        s: Any = SQLiteStore(tmp_path / "table.db")
        yield s
        s.close()
        return
    reason = pg_available()
    if reason:
        pytest.skip(reason)
    s = PostgresStore(PG_URL, schema=new_schema())
    yield s
    s.drop_schema()
    s.close()


@pytest.fixture
def loose_client(store: Store) -> Iterator[Any]:
    """The real app with no per-address or per-member rate limits (many commands, one test)."""
    from astragal.web.app import create_app
    from astragal.web.caps import LOOSE
    from astragal.web.room import Table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    table = Table(store, caps=LOOSE, roll_rate=(1e6, 10**6))
    with TestClient(create_app(store, table=table, own_store=False,
                               door_rate=(1e6, 10**6))) as c:
        yield c


@pytest.fixture
def client(store: Store) -> Iterator[Any]:
    """An in-process HTTP + WebSocket client of an app over ``store``."""
    from astragal.web.app import create_app

    with warnings.catch_warnings():  # starlette's note about its httpx transport
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    from astragal.web.caps import Caps
    from astragal.web.room import Table

    # every request of a test comes from one address: its reads and pings are not capped here
    # (tests/web/test_address_caps.py checks those caps)
    table = Table(store, caps=Caps(reads_per_address=(1e6, 10**6),
                                   pings_per_address=(1e6, 10**6)))
    app = create_app(store, table=table, own_store=False, door_rate=(1000.0, 1000))
    with TestClient(app) as c:
        yield c


class Room:
    """A room made through the API: its id, the GM's key, and helpers to act as members."""

    def __init__(self, client: Any, system: str = "jadeclaw", name: str = "The Jade Court") -> None:
        self.client = client
        made = client.post("/api/rooms", json={"name": name, "system": system,
                                               "gm_name": "Mei"})
        assert made.status_code == 201, made.text
        self.data = made.json()
        self.id: str = self.data["room"]["id"]
        self.gm: str = self.data["key"]

    def join(self, name: str) -> str:
        r = self.client.post(f"/api/rooms/{self.id}/members", json={"name": name})
        assert r.status_code == 201, r.text
        return str(r.json()["key"])

    def roll(self, key: str, text: str, visibility: str = "public") -> Any:
        return self.client.post(f"/api/rooms/{self.id}/rolls",
                                json={"text": text, "visibility": visibility}, headers=auth(key))

    def log(self, key: str, after: int = 0) -> Any:
        return self.client.get(f"/api/rooms/{self.id}/log", params={"after": after},
                               headers=auth(key))


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def room(client: Any) -> Room:
    return Room(client)


# ------------------------------------------------------------------------------------------------
# Real servers


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


class ServerThread:
    """uvicorn serving ``app`` in a thread on a free port of 127.0.0.1."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        from astragal.web.app import MAX_BODY

        self.sock = free_socket()
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="warning", ws_max_size=MAX_BODY, lifespan="on")
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


class ServerProcess:
    """``astragal serve`` in a subprocess on a free port (a separate app instance)."""

    def __init__(self, db: str, key: str | None = None, args: tuple[str, ...] = ()) -> None:
        self.args = args  # more options of astragal serve
        sock = free_socket()
        self.port = sock.getsockname()[1]
        sock.close()
        self.url = f"http://127.0.0.1:{self.port}"
        self.db = db
        # the table's signing key: beside an SQLite file as `astragal serve` keeps it (so a
        # restart keeps it); for PostgreSQL a temporary file, never the working folder
        if key is None and db.startswith("postgres"):
            key = os.path.join(tempfile.mkdtemp(prefix="astragal-key-"), "server.key")
        self.key = key or db + ".key"
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        import httpx

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "astragal.cli", "serve", "--host", "127.0.0.1",
             "--port", str(self.port), "--db", self.db, *self.args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**os.environ, "ASTRAGAL_KEY": self.key})
        deadline = time.monotonic() + 20
        while True:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"astragal serve exited: {err}")
            try:
                if httpx.get(self.url + "/api/systems", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("astragal serve did not start")
            time.sleep(0.1)

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stderr:
                self.proc.stderr.close()
