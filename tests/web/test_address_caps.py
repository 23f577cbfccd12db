"""Every way into the log pays the same per-address caps (issue 38, item 8): a reveal, a fight or
turn-order command, a seed epoch ended and a sheet saved count against the address's rate and
its stored bytes as a roll does (a reveal of the same 99 KB roll again and again once stored
990 KiB/s against a cap of 256 KiB/s; turn-order commands went at 18/s against 4/s).

The caps' clocks stand still here, so a bucket refills not at all: the counts are exact."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from astragal.web.caps import Caps
from astragal.web.store import Store

from .conftest import WEB_EXTRA, Room, auth

pytest.importorskip("fastapi", reason=WEB_EXTRA)

BURST = 5


def _client(store: Store, caps: Caps) -> Iterator[tuple[Any, Any]]:
    from astragal.web.app import create_app
    from astragal.web.room import Table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    table = Table(store, caps=caps, roll_rate=(1e6, 10**6))  # no per-member cap: the address's
    table.address_rolls.clock = table.address_bytes.clock = lambda: 0.0
    with TestClient(create_app(store, table=table, own_store=False,
                               door_rate=(1e6, 10**6))) as c:
        yield c, table


def _ways(room: Room, c: Any) -> dict[str, Callable[[int], Any]]:
    """Each way into the log (and the sheet), as a call that writes once (``i``: the how
    manieth), made by the room's members in turn."""
    players = [room.join(f"P{i}") for i in range(3)]
    hidden = [room.roll(room.gm, "d10 vs d8", "gm").json()["id"] for _ in range(2)]
    url = f"/api/rooms/{room.id}"
    macros = {f"m{k}": "d12 d10 d8 vs " + "d6 " * 40 for k in range(10)}
    return {
        "reveal": lambda i: c.post(f"{url}/rolls/{hidden[i % 2]}/reveal", headers=auth(room.gm)),
        "turns": lambda i: c.post(f"{url}/turns", json={"text": f"add N{i} {i}"},
                                  headers=auth(players[i % 3])),
        "fight": lambda i: c.post(f"{url}/fight", json={"text": f"add F{i} atk=3 wpn=2"},
                                  headers=auth(room.gm)),
        "epoch": lambda i: c.post(f"{url}/epoch", headers=auth(room.gm)),
        "sheet": lambda i: c.put(f"{url}/sheet", json={"macros": macros},
                                 headers=auth(players[i % 3])),
        "roll": lambda i: room.roll(players[i % 3], "d12 d8 vs 2d10"),
    }


WAYS = ["reveal", "turns", "fight", "epoch", "sheet", "roll"]


@pytest.mark.parametrize("way", WAYS)
def test_every_way_in_pays_the_address_rate(store: Store, way: str) -> None:
    caps = Caps(rolls_per_address=(1.0, BURST + 2))  # the two hidden rolls, then the burst
    for c, _ in _client(store, caps):
        room = Room(c)
        write = _ways(room, c)[way]
        answers = [write(i) for i in range(BURST + 4)]
        codes = [r.status_code for r in answers]
        assert codes[:BURST] == [codes[0]] * BURST and codes[0] in (200, 201), answers[0].text
        assert codes[BURST:] == [429] * 4, codes
        assert "from this address" in answers[-1].json()["message"]


@pytest.mark.parametrize("way", WAYS)
def test_every_way_in_pays_the_address_bytes(store: Store, way: str) -> None:
    caps = Caps(rolls_per_address=(1e6, 10**6), stored_bytes_per_address=(1.0, 40_000))
    for c, _ in _client(store, caps):
        room = Room(c)
        write = _ways(room, c)[way]
        codes = []
        for i in range(200):  # each write stores at least 500 bytes: 80 at the most
            r = write(i)
            codes.append(r.status_code)
            if r.status_code == 429:
                assert "stored too much" in r.json()["message"], r.text
                break
        assert codes[-1] == 429 and set(codes[:-1]) <= {200, 201}, codes
