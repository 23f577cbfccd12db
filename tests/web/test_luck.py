"""The room's Luck panel: each roll placed in its own exact odds, as ``astragal.luck`` places it,
each member's and session's luck as ``astragal luck export.json`` reports it, hidden rolls kept
hidden, and odds the table refuses or cannot afford shown as such, never an error."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

import astragal
from astragal.luck import luck, report
from astragal.luck_report import lucks_of_export
from astragal.web.caps import Caps
from astragal.web.room import Member, RateLimit, Table
from astragal.web.store import SQLiteStore

from .conftest import Room, auth

ROLLS = ["d20", "3d6", "4d6kh3+2", "2d20kh1", "jc: d12 d8 vs 2d10", "cofd: 5", "d20+3"]


@pytest.fixture
def room(client: Any) -> Room:
    """A room whose rolls are read as general notation unless they name their game (these tests
    roll faster than a person)."""
    table = client.app.state.table
    table.roll_limit = table.odds_limit = RateLimit(100.0, 100)
    table.address_rolls = RateLimit(100.0, 100)
    return Room(client, system="dice")


def _table(tmp_path: Path, caps: Caps | None = None) -> tuple[Table, str, Member, Member]:
    table = Table(SQLiteStore(tmp_path / "t.db"), caps=caps)
    table.roll_limit = table.odds_limit = table.address_rolls = RateLimit(100.0, 100)
    made = table.create_room("Luck", "dice", "Mei")
    room = made["room"]["id"]
    gm = table.member(room, made["key"])
    wu = table.member(room, table.join(room, "Wu")["key"])
    return table, room, gm, wu


def test_each_roll_is_placed_as_the_library_places_it(room: Room) -> None:
    wu = room.join("Wu")
    for n, text in enumerate(ROLLS * 2):
        assert room.roll(wu if n % 2 else room.gm, text).status_code == 201
    got = room.client.get(f"/api/rooms/{room.id}/luck", headers=auth(wu))
    assert got.status_code == 200, got.text
    panel = got.json()
    entries = [e for e in room.log(wu).json()["entries"] if e["kind"] == "roll"]
    assert len(entries) == len(ROLLS) * 2 and panel["pending"] == 0
    for e in entries:
        rolled = astragal.Roll(e["system"], e["notation"], e["outcome"], e["roll"]["result"], (),
                               ())
        expected = luck(rolled, astragal.odds(e["notation"], default_system=e["system"]))
        shown = panel["entries"][str(e["id"])]
        if expected is None:  # a contest's outcome without a number to place: said so
            assert "none" in shown
        else:
            assert shown["percentile"] == expected.percentile and shown["value"] == expected.value


def test_the_panel_reports_what_the_command_line_reports_on_the_export(room: Room) -> None:
    wu = room.join("Wu")
    for n, text in enumerate(ROLLS * 3):
        room.roll(wu if n % 3 else room.gm, text)
    panel = room.client.get(f"/api/rooms/{room.id}/luck", headers=auth(room.gm)).json()
    export = room.client.get(f"/api/rooms/{room.id}/export.json", headers=auth(room.gm)).json()
    by_member, _ = lucks_of_export(export)
    seed = _seed(room.id)
    expected = report(by_member, seed)
    assert panel["session"] == expected["session"]
    assert panel["members"] == expected["members"]
    assert panel["session"]["rolls"] == sum(len(v) for v in by_member.values()) > 0
    assert sum(panel["session"]["histogram"]) == panel["session"]["rolls"]


def _seed(room_id: str) -> int:
    import hashlib

    return int.from_bytes(hashlib.sha256(room_id.encode()).digest()[:4], "big")


def test_a_hidden_roll_has_no_luck_until_it_is_revealed(room: Room) -> None:
    wu = room.join("Wu")
    room.roll(wu, "d20")
    secret = room.roll(room.gm, "d20+5", "gm").json()
    url = f"/api/rooms/{room.id}/luck"
    seen = room.client.get(url, headers=auth(wu)).json()
    assert str(secret["id"]) not in seen["entries"] and seen["session"]["rolls"] == 1
    assert str(secret["id"]) in room.client.get(url, headers=auth(room.gm)).json()["entries"]
    shown = room.client.post(f"/api/rooms/{room.id}/rolls/{secret['id']}/reveal",
                             headers=auth(room.gm))
    assert shown.status_code == 201, shown.text
    after = room.client.get(url, headers=auth(wu)).json()
    assert after["session"]["rolls"] == 2  # the reveal's roll is placed like any other


def test_a_roll_whose_odds_the_table_refuses_says_so(tmp_path: Path) -> None:
    table, _, gm, wu = _table(tmp_path)
    table.roll(wu, "d20")
    costly = table.roll(gm, "d60000ro<59999")  # its odds are refused for their size
    panel = table.luck(wu)
    said = panel["entries"][str(costly["id"])]
    assert said["none"].startswith("luck not computed:"), said
    assert panel["session"]["rolls"] == 1  # the d20 is still placed


def test_when_the_rooms_share_of_time_is_used_up_the_rest_waits(tmp_path: Path) -> None:
    # a share of almost nothing: the first odds spend it, the others wait for a later look
    table, _, _, wu = _table(tmp_path, Caps(odds_cpu_per_address=(1e-6, 1e-6)))
    for text in ("d20", "3d6", "2d6+1", "d12"):
        table.roll(wu, text)
    start = time.monotonic()
    panel = table.luck(wu)
    assert time.monotonic() - start < 30
    assert panel["pending"] >= 2 and len(panel["entries"]) + panel["pending"] == 4
    # what was placed is remembered: the next look does not compute it again
    placed = dict(panel["entries"])
    again = table.luck(wu)
    assert all(again["entries"][k] == v for k, v in placed.items())


def test_the_endpoint_needs_a_key(room: Room) -> None:
    got = room.client.get(f"/api/rooms/{room.id}/luck")
    assert got.status_code in (401, 403) and "error" in got.json()
    assert json.loads(got.text)["message"]



def test_one_address_with_many_rooms_gets_one_share_of_odds(tmp_path: Path) -> None:
    """Issue 38, item 9: the Luck panel's odds are charged to the room and to the address that
    asks. One address with several rooms once held both odds workers (a share per room); now its
    second room's odds wait, while another address's room is still served. The budget's clock
    stands still, so each share is exactly one computation."""
    import warnings

    from astragal.web.app import create_app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    store = SQLiteStore(tmp_path / "t.db")
    table = Table(store, caps=Caps(odds_cpu_per_address=(1e-9, 1e-9)), roll_rate=(1e6, 10**6))
    table.odds_cpu.clock = lambda: 0.0
    app = create_app(store, table=table, door_rate=(1e6, 10**6))

    def room_with_a_roll(c: Any, text: str) -> Room:
        made = Room(c, system="dice")
        assert made.roll(made.gm, text).status_code == 201
        return made

    def pending(made: Room) -> int:
        panel = made.client.get(f"/api/rooms/{made.id}/luck", headers=auth(made.gm))
        assert panel.status_code == 200, panel.text
        return int(panel.json()["pending"])

    with TestClient(app, client=("10.0.0.1", 5000)) as one, \
            TestClient(app, client=("10.0.0.2", 5000)) as other:
        first, second = room_with_a_roll(one, "d20+1"), room_with_a_roll(one, "d20+2")
        elsewhere = room_with_a_roll(other, "d20+3")
        assert pending(first) == 0  # the address's share: spent on this room's roll
        assert pending(second) == 1  # the same address, another room: it waits
        assert pending(elsewhere) == 0  # another address is served
