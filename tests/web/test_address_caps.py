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


def _two_addresses(store: Store) -> Iterator[tuple[Any, Any, Any]]:
    """The real app with production caps, the read and ping buckets' clocks stopped, and two
    clients at two addresses."""
    from astragal.web.app import create_app
    from astragal.web.room import Table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    table = Table(store)
    table.address_reads.clock = table.address_pings.clock = lambda: 0.0
    app = create_app(store, table=table, own_store=False)
    with TestClient(app, client=("10.0.0.1", 5000)) as flood, \
            TestClient(app, client=("10.0.0.2", 5000)) as calm:
        yield flood, calm, table


def test_reads_from_one_address_are_capped_not_anothers(store: Store) -> None:
    """Issue 38, item 11: 110 reads/s from one address raised another's roll from ~25 ms to
    300-600 ms. Reads (the room, /me, log pages) pay a rate per address: past the burst one
    address gets 429, and another address still reads and rolls."""
    for flood, calm, table in _two_addresses(store):
        room = Room(flood, system="dice")
        key = room.join("Calm")
        burst = table.caps.reads_per_address[1]
        reads = [f"/api/rooms/{room.id}", f"/api/rooms/{room.id}/me",
                 f"/api/rooms/{room.id}/log", "/api/systems"]
        codes = [flood.get(reads[i % 4], headers=auth(room.gm)).status_code
                 for i in range(burst + 3)]
        assert codes == [200] * burst + [429] * 3, codes
        said = flood.get(reads[2], headers=auth(room.gm))
        assert said.status_code == 429 and "reads from this address" in said.json()["message"]
        assert calm.get(reads[2], headers=auth(key)).status_code == 200
        assert calm.post(f"/api/rooms/{room.id}/rolls", json={"text": "d20"},
                         headers=auth(key)).status_code == 201


def test_pings_from_one_address_are_capped_not_anothers(store: Store) -> None:
    """Issue 38, item 11: 5,200 pings/s from one address slowed another's rolls. Past its burst
    of pings an address's live connection ends (4429); another address's still answers."""
    from starlette.websockets import WebSocketDisconnect

    for flood, calm, table in _two_addresses(store):
        room = Room(flood, system="dice")
        key = room.join("Calm")
        burst = table.caps.pings_per_address[1]
        with flood.websocket_connect(f"/api/rooms/{room.id}/live") as ws:
            ws.send_json({"key": room.gm, "after": 0})
            assert ws.receive_json()["type"] == "hello"
            assert ws.receive_json()["type"] == "members"
            for _ in range(burst):  # the connection took one of the burst
                ws.send_text("ping")
            got = [ws.receive_json() for _ in range(burst)]
        assert [m["type"] for m in got] == ["pong"] * (burst - 1) + ["error"], got[-2:]
        assert got[-1]["error"] == "RateLimited" and "pings" in got[-1]["message"]
        # nor does a new connection get round it: refused before it opens
        with pytest.raises(WebSocketDisconnect) as refused, \
                flood.websocket_connect(f"/api/rooms/{room.id}/live"):
            pass
        assert refused.value.code == 4429
        with calm.websocket_connect(f"/api/rooms/{room.id}/live") as ws:
            ws.send_json({"key": key, "after": 0})
            assert ws.receive_json()["type"] == "hello"
            assert ws.receive_json()["type"] == "members"
            ws.send_text("ping")
            assert ws.receive_json() == {"type": "pong"}
