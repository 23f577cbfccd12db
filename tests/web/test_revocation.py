"""A removed or re-keyed member loses every live connection, on every instance (issue 38, item 3).

Two app instances on one PostgreSQL, real sockets: the player's live connection is on instance
B, the GM removes them (or gives them a new key) on instance A, then rolls. The connection on B
must end with ``Unauthorized`` before any of those later rolls reaches it (it used to stay open
and receive 20 of 20 later rolls over 40 s). The news travels as the log's does: a NOTIFY sent in
the transaction of the change.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from .conftest import PG_URL, WEB_EXTRA, ServerThread

httpx = pytest.importorskip("httpx", reason=WEB_EXTRA)
websockets = pytest.importorskip("websockets", reason=WEB_EXTRA)

LATER_ROLLS = 5


def _instance(schema: str) -> Any:
    from astragal.web.app import create_app
    from astragal.web.caps import LOOSE
    from astragal.web.room import Table
    from astragal.web.store import PostgresStore

    store = PostgresStore(f"{PG_URL}?schema={schema}")
    return create_app(store, table=Table(store, caps=LOOSE, roll_rate=(1e6, 10**6)),
                      door_rate=(1e6, 10**6))


async def _watch(url: str, room: str, key: str, ready: asyncio.Event) -> list[dict[str, Any]]:
    """Every message the live connection gets until it ends (at most 12 s: the safety net's
    re-read, at 15 s, must not be what ends it)."""
    got: list[dict[str, Any]] = []
    async with websockets.connect(url.replace("http", "ws") + f"/api/rooms/{room}/live") as ws:
        await ws.send(json.dumps({"key": key, "after": 0}))
        deadline = time.monotonic() + 12
        while time.monotonic() < deadline:
            try:
                raw = await asyncio.wait_for(ws.recv(), deadline - time.monotonic())
            except (TimeoutError, websockets.ConnectionClosed):
                break
            got.append(json.loads(raw))
            if got[-1]["type"] == "head":
                ready.set()
            if got[-1]["type"] == "error":
                break
    return got


@pytest.mark.parametrize("change", ["remove", "new key"])
def test_a_removed_or_rekeyed_member_is_cut_off_on_every_instance(pg_schema: str,
                                                                  change: str) -> None:
    with ServerThread(_instance(pg_schema)) as a, ServerThread(_instance(pg_schema)) as b:
        made = httpx.post(a.url + "/api/rooms", json={"system": "dice"}).json()
        room, gm = made["room"]["id"], {"Authorization": f"Bearer {made['key']}"}
        joined = httpx.post(b.url + f"/api/rooms/{room}/members", json={"name": "Wu"}).json()
        wu_id, wu_key = joined["member"]["id"], joined["key"]
        assert httpx.post(a.url + f"/api/rooms/{room}/rolls", json={"text": "d20"},
                          headers=gm).status_code == 201

        async def scene() -> tuple[list[dict[str, Any]], float, list[int]]:
            ready = asyncio.Event()
            watcher = asyncio.create_task(_watch(b.url, room, wu_key, ready))
            await asyncio.wait_for(ready.wait(), 10)  # caught up with roll 1
            async with httpx.AsyncClient(base_url=a.url) as c:
                member_url = f"/api/rooms/{room}/members/{wu_id}"
                r = await (c.delete(member_url, headers=gm) if change == "remove" else
                           c.post(member_url + "/key", headers=gm))
                assert r.status_code == 200, r.text
                done = time.monotonic()
                later = []
                for _ in range(LATER_ROLLS):
                    r = await c.post(f"/api/rooms/{room}/rolls", json={"text": "d20"},
                                     headers=gm)
                    later.append(r.json()["id"])
            got = await watcher
            return got, done, later

        got, _, later = asyncio.run(scene())
        seen = [m["entry"]["id"] for m in got if m["type"] == "entry"]
        assert got[-1]["type"] == "error" and got[-1]["error"] == "Unauthorized", got[-3:]
        assert not set(seen) & set(later), (seen, later)
