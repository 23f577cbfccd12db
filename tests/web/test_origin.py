"""The live connection checks the page it comes from (issue 38, item 13): a WebSocket upgrade
whose ``Origin`` is neither the table's own site nor one it was told to allow is answered 403
and never opened (a browser on another site would otherwise connect with whatever key it got).
A client that is no browser sends no ``Origin`` and connects. Real sockets, a real server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from astragal.web.store import SQLiteStore

from .conftest import WEB_EXTRA, ServerThread

httpx = pytest.importorskip("httpx", reason=WEB_EXTRA)
websockets = pytest.importorskip("websockets", reason=WEB_EXTRA)


async def _open(url: str, room: str, key: str, origin: str | None) -> str:
    """The first message the live connection sends, or the HTTP status it was refused with."""
    ws_url = url.replace("http", "ws") + f"/api/rooms/{room}/live"
    try:
        async with websockets.connect(ws_url, origin=origin) as ws:  # type: ignore[arg-type]
            await ws.send(json.dumps({"key": key, "after": 0}))
            return str(json.loads(await ws.recv())["type"])
    except websockets.InvalidStatus as exc:
        return f"HTTP {exc.response.status_code}"


def test_the_live_connection_checks_its_origin(tmp_path: Path) -> None:
    from astragal.web.app import create_app

    store = SQLiteStore(tmp_path / "t.db")
    app = create_app(store, origins=["https://Table.Example.org/"])
    with ServerThread(app) as server:
        made = httpx.post(server.url + "/api/rooms", json={"system": "dice"}).json()
        room, key = made["room"]["id"], made["key"]
        own = f"http://127.0.0.1:{server.port}"

        def open_(origin: str | None) -> str:
            return asyncio.run(_open(server.url, room, key, origin))

        assert open_(own) == "hello"  # the table's own page
        assert open_(None) == "hello"  # no browser: a script, the command line
        assert open_("https://table.example.org") == "hello"  # allowed by the operator
        for other in ("https://evil.example", f"http://127.0.0.1:{server.port + 1}",
                      f"http://127.0.0.1.evil.example:{server.port}", "null",
                      f"file://127.0.0.1:{server.port}"):
            assert open_(other) == "HTTP 403", other
