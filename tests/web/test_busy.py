"""Heavy rolls made at once, and the table's room count (issue 38, item 12)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import astragal
from astragal.web.store import SQLiteStore

from .conftest import WEB_EXTRA, ServerThread

httpx = pytest.importorskip("httpx", reason=WEB_EXTRA)

HEAVY = "cofd: 120 8-again rote"


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
