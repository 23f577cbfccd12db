"""Heavy rolls made at once, and the table's room count (issue 38, item 12)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import astragal
from astragal.web.caps import Caps
from astragal.web.store import SQLiteStore, Store

from .conftest import WEB_EXTRA, Room, ServerThread

httpx = pytest.importorskip("httpx", reason=WEB_EXTRA)

HEAVY = "cofd: 120 8-again rote"


@pytest.fixture
def client_store(store: Store) -> Iterator[Callable[..., tuple[Any, Any]]]:
    """Make the real app over ``store`` with the given caps (and archive folder)."""
    import warnings

    from astragal.web.app import create_app
    from astragal.web.room import Table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    open_clients: list[Any] = []

    def make(caps: Caps, archive: Path | None = None) -> tuple[Any, Any]:
        table = Table(store, caps=caps, roll_rate=(1e6, 10**6), archive=archive)
        c = TestClient(create_app(store, table=table, own_store=False, door_rate=(1e6, 10**6)))
        open_clients.append(c.__enter__())
        return c, table

    yield make
    for c in open_clients:
        c.__exit__(None, None, None)


def test_eight_members_rolling_heavy_rolls_at_once_are_each_rolled_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """8 members of one room roll a heavy roll at the same moment: every roll is stored (no 503
    Busy: 20 % were refused) and each is rolled once (each refused roll was computed up to 8
    times, as each found its entry id taken by another)."""
    from astragal.web.app import create_app
    from astragal.web.caps import LOOSE
    from astragal.web.room import Table

    rolled = []
    real_roll = astragal.roll

    def counting(*args: Any, **kwargs: Any) -> Any:
        rolled.append(args[0])
        return real_roll(*args, **kwargs)

    store = SQLiteStore(tmp_path / "t.db")
    table = Table(store, caps=LOOSE, roll_rate=(1e6, 10**6))
    with ServerThread(create_app(store, table=table, door_rate=(1e6, 10**6))) as server:
        made = httpx.post(server.url + "/api/rooms", json={"system": "cofd"}).json()
        room = made["room"]["id"]
        keys = [made["key"]] + [httpx.post(server.url + f"/api/rooms/{room}/members",
                                           json={"name": f"P{i}"}).json()["key"]
                                for i in range(7)]
        monkeypatch.setattr(astragal, "roll", counting)

        def roll(key: str) -> int:
            return httpx.post(server.url + f"/api/rooms/{room}/rolls", json={"text": HEAVY},
                              headers={"Authorization": f"Bearer {key}"},
                              timeout=120).status_code

        with ThreadPoolExecutor(len(keys)) as pool:
            codes = list(pool.map(roll, keys))
    assert codes == [201] * len(keys)
    assert len(rolled) == len(keys), f"{len(rolled)} rolls computed for {len(keys)} stored"


def test_the_table_holds_at_most_its_rooms(client_store: Any) -> None:
    """Rooms from anywhere count against one cap of the table (317 rooms from 10 addresses in
    3.5 s were all kept): past it, 507."""
    client, _ = client_store(Caps(rooms=3))
    made = [client.post("/api/rooms", json={"system": "dice"}) for _ in range(4)]
    assert [r.status_code for r in made] == [201, 201, 201, 507]
    assert made[-1].json()["error"] == "TableFull"


def test_an_idle_room_is_exported_then_deleted(client_store: Any, tmp_path: Path) -> None:
    """A room with nothing new for ``idle_room_days`` is written whole to the archive folder
    (an export that verifies, with its hidden rolls), then deleted; a busy room stays."""
    from astragal.web.basics import _now
    from astragal.web.chain import verify_export

    client, table = client_store(Caps(idle_room_days=1.0), tmp_path / "archive")
    old = Room(client, system="dice")
    table.wall = lambda: "2000-01-01T00:00:00.000Z"  # its rolls: long ago
    assert old.roll(old.gm, "d20", "blind").status_code == 201
    assert old.roll(old.gm, "d6").status_code == 201
    table.wall = _now
    fresh = Room(client, system="dice")
    assert fresh.roll(fresh.gm, "d20").status_code == 201
    table._swept = float("-inf")  # the next opening of a room looks for idle ones
    Room(client, system="dice")
    assert client.get(f"/api/rooms/{old.id}").status_code == 404
    assert client.get(f"/api/rooms/{fresh.id}").status_code == 200
    kept = json.loads((tmp_path / "archive" / f"{old.id}.json").read_text(encoding="utf-8"))
    assert verify_export(kept).ok and [e["id"] for e in kept["entries"]] == [1, 2]
    assert "roll" in kept["entries"][0]  # whole: the blind roll too
    assert not (tmp_path / "archive" / f"{fresh.id}.json").exists()
