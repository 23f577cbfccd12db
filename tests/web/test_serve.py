"""Real servers: ``astragal serve`` keeps its log across restarts, and two instances on one
PostgreSQL share rooms live (LISTEN/NOTIFY; clients catch up by the last id they saw)."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from astragal.cli import main as cli
from astragal.web.chain import verify_export

from .conftest import PG_URL, WEB_EXTRA, ServerProcess, ServerThread, auth

pytest.importorskip("fastapi", reason=WEB_EXTRA)
pytest.importorskip("uvicorn", reason=WEB_EXTRA)

from astragal.web.app import CATCH_UP_SECONDS, create_app  # after the skip: needs the web extra

websockets_sync = pytest.importorskip("websockets.sync.client",
                                      reason="the live tests need the websockets package")


def ws_url(base: str, room: str) -> str:
    return base.replace("http://", "ws://") + f"/api/rooms/{room}/live"


def receive(ws: Any, timeout: float) -> dict[str, Any]:
    """The next message that is not a list of members or the chain's head."""
    while True:
        msg: dict[str, Any] = json.loads(ws.recv(timeout=timeout))
        if msg["type"] not in ("members", "head"):
            return msg


def test_serve_keeps_the_log_across_a_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "table.db")
    with ServerProcess(db) as server:
        made = httpx.post(server.url + "/api/rooms", json={"system": "jc"}).json()
        rid, key = made["room"]["id"], made["key"]
        first = httpx.post(f"{server.url}/api/rooms/{rid}/rolls", json={"text": "d12 vs d8"},
                           headers=auth(key))
        assert first.status_code == 201
        page = httpx.get(server.url + f"/r/{rid}")
        assert page.status_code == 200 and "content-security-policy" in page.headers
    with ServerProcess(db) as server:
        log = httpx.get(f"{server.url}/api/rooms/{rid}/log", headers=auth(key)).json()
        assert log["entries"] == [first.json()]
        export = httpx.get(f"{server.url}/api/rooms/{rid}/export.json", headers=auth(key)).json()
        assert verify_export(export).ok


def test_proxy_headers_are_trusted_only_from_a_trusted_proxy(tmp_path: Path) -> None:
    """Nine players behind one HTTPS proxy all join when the proxy is trusted (each counted at
    the address it names); without --trusted-proxy the header is anyone's to write, so it is
    ignored and the ninth from one address is turned away."""
    def joins(server: ServerProcess) -> list[int]:
        made = httpx.post(server.url + "/api/rooms", json={
            "name": "Behind", "system": "dice", "gm_name": "Mei"}).json()
        return [httpx.post(f"{server.url}/api/rooms/{made['room']['id']}/members",
                           json={"name": f"P{i}"},
                           headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code
                for i in range(1, 10)]

    with ServerProcess(str(tmp_path / "a.db"), args=("--trusted-proxy", "127.0.0.1")) as server:
        assert joins(server) == [201] * 9
    with ServerProcess(str(tmp_path / "b.db")) as server:
        said = joins(server)
        assert said[:8] == [201] * 8 and said[8] == 429, said
    out = subprocess.run([sys.executable, "-m", "astragal.cli", "serve", "--trusted-proxy",
                          "proxy.example"], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2 and "'proxy.example' is not an IP address or network" in out.stderr


def test_a_port_in_use_is_one_clear_error_before_anything_is_written(tmp_path: Path) -> None:
    db = str(tmp_path / "table.db")
    with ServerProcess(db) as server:
        other = tmp_path / "other.db"
        out = subprocess.run([sys.executable, "-m", "astragal.cli", "serve", "--host",
                              "127.0.0.1", "--port", str(server.port), "--db", str(other)],
                             capture_output=True, text=True, timeout=60, check=False)
        assert out.returncode == 2, out.stderr
        assert f"cannot listen on 127.0.0.1:{server.port}: Address already in use" in out.stderr
        assert "Traceback" not in out.stderr and "web table on" not in out.stderr
        assert list(tmp_path.glob("other.db*")) == []  # no database, no key file
        assert httpx.get(server.url + "/").status_code == 200  # the first one serves on


def test_two_instances_on_one_postgresql_share_rooms_live(pg_schema: str) -> None:
    from astragal.web.room import Table
    from astragal.web.signing import Signer
    from astragal.web.store import PostgresStore

    url = f"{PG_URL}?schema={pg_schema}"
    store = PostgresStore(url)
    b = ServerProcess(url)  # both instances sign with the one key of the table (ASTRAGAL_KEY)
    app_a = create_app(store, table=Table(store, signer=Signer.load_or_create(Path(b.key))))
    with ServerThread(app_a) as a, b:
        made = httpx.post(a.url + "/api/rooms", json={"system": "jadeclaw", "gm_name": "Mei"})
        rid, gm = made.json()["room"]["id"], made.json()["key"]
        # Wu joins through instance B: the room exists there too.
        wu = httpx.post(f"{b.url}/api/rooms/{rid}/members", json={"name": "Wu"}).json()["key"]
        with websockets_sync.connect(ws_url(b.url, rid)) as ws:
            ws.send(json.dumps({"key": wu, "after": 0}))
            assert receive(ws, 5)["type"] == "hello"
            posted = httpx.post(f"{a.url}/api/rooms/{rid}/rolls", headers=auth(gm),
                                json={"text": "d12 d8 vs 2d10"}).json()
            # Well inside the catch-up interval: the NOTIFY woke instance B.
            got = receive(ws, CATCH_UP_SECONDS / 3)
            assert got["type"] == "entry" and got["entry"] == posted
            last = got["entry"]["id"]
        # While Wu is away, two more rolls land, one of them hidden from Wu.
        httpx.post(f"{a.url}/api/rooms/{rid}/rolls", headers=auth(gm), json={"text": "d4"})
        httpx.post(f"{a.url}/api/rooms/{rid}/rolls", headers=auth(gm),
                   json={"text": "d6", "visibility": "blind"})
        httpx.post(f"{b.url}/api/rooms/{rid}/rolls", headers=auth(wu), json={"text": "d8"})
        with websockets_sync.connect(ws_url(b.url, rid)) as ws:
            ws.send(json.dumps({"key": wu, "after": last}))
            assert receive(ws, 5)["type"] == "hello"
            caught_up = [receive(ws, 5)["entry"] for _ in range(2)]
            assert [(e["id"], e["notation"]) for e in caught_up] == [(2, "d4"), (4, "d8")]
        # Both instances append to one room at once: one chain, no gaps, no forks.
        li = httpx.post(f"{a.url}/api/rooms/{rid}/members", json={"name": "Li"}).json()["key"]
        bo = httpx.post(f"{b.url}/api/rooms/{rid}/members", json={"name": "Bo"}).json()["key"]

        def post(n: int) -> int:
            base, key = (a.url, li) if n % 2 else (b.url, bo)
            return httpx.post(f"{base}/api/rooms/{rid}/rolls", headers=auth(key),
                              json={"text": "d10"}).status_code

        with ThreadPoolExecutor(8) as pool:
            assert set(pool.map(post, range(8))) == {201}
        export = httpx.get(f"{b.url}/api/rooms/{rid}/export.json", headers=auth(gm)).json()
        report = verify_export(export)
        assert report.ok, report.problems
        assert [e["id"] for e in export["entries"]] == list(range(1, len(export["entries"]) + 1))
    # verify-log reads the room straight from PostgreSQL too.
    assert cli(["verify-log", rid, "--db", url]) == 0
