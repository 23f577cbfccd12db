"""Seed epochs held to their commitments: what the server's operator (the database and the key)
could try with the seeds, and how ``verify-log`` names the entry it shows in.

The operator can sign anything, so these forgeries carry valid signatures; they are caught by
the commitments (announced in the log before the rolls), by the reveals' own commitments, and by
the players' receipts of their own rolls (the client seed they sent, the commitment they saw).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from astragal.web.chain import redact
from astragal.web.fair import new_seed
from astragal.web.room import RateLimit
from astragal.web.verify import verify_source

from .test_trust import Room, _resign


@pytest.fixture
def room(tmp_path: Path) -> Room:
    made = Room(tmp_path)
    made.table.roll_limit = RateLimit(100.0, 100)  # these tests roll faster than a person
    made.table.address_rolls = RateLimit(100.0, 100)  # (and a reveal or an epoch is a write)
    return made


def swap_seed(room: Room, epoch: int) -> str:
    """The operator replaces the secret seed of ``epoch`` in the database (after its commitment
    was shown): the table goes on rolling with the new one."""
    seed = new_seed()
    with sqlite3.connect(room.db) as conn:
        conn.execute("UPDATE astragal_seeds SET seed = ? WHERE room_id = ? AND epoch = ?",
                     (seed, room.id, epoch))
    return seed


def problems(room: Room, **kw: Any) -> list[str]:
    report = verify_source(room.id, room.db, **kw)
    return report.problems


def test_an_epoch_whose_seed_was_swapped_after_it_was_announced_is_caught(room: Room) -> None:
    ended = room.table.end_epoch(room.gm)  # announces epoch 2's commitment, in the signed log
    swap_seed(room, 2)
    rolled = room.table.roll(room.wu, "d20")
    assert rolled["fair"]["commitment"] != ended["next_commitment"]
    second = room.table.end_epoch(room.gm)  # reveals the swapped seed: it matches the rolls
    found = problems(room)
    assert f"entry {rolled['id']}: rolled under another commitment than the one entry " \
           f"{ended['id']} announced for epoch 2" in found, found
    assert f"entry {second['id']}: epoch 2's commitment is not the one entry {ended['id']} " \
           "announced when epoch 1 ended" in found, found


def test_a_seed_swapped_in_the_middle_of_an_epoch_shows_before_the_reveal(room: Room) -> None:
    swap_seed(room, 1)
    rolled = room.table.roll(room.wu, "d20")
    found = problems(room)
    assert found == [(f"entry {rolled['id']}: rolled under another commitment than epoch 1's "
                      "first roll (entry 1)")], found


def test_a_roll_under_an_epoch_that_is_not_current_is_caught(room: Room) -> None:
    room.table.end_epoch(room.gm)
    entries = room.rows()
    entries[2]["fair"]["epoch"] = 2  # entry 3 was rolled in epoch 1
    _resign(room, entries, 2)
    room.write(entries)
    assert "entry 3: rolled under epoch 2, but epoch 1 was current at its place in the log" \
        in problems(room)


def test_seed_entries_end_epochs_in_turn(room: Room) -> None:
    room.table.end_epoch(room.gm)
    entries = room.rows()
    replayed = {**entries[-1], "id": len(entries) + 1}  # the same reveal again: epoch 1 twice
    entries.append(replayed)
    _resign(room, entries, len(entries) - 1)
    room.write(entries)
    assert any(p.startswith(f"entry {len(entries)}: it ends epoch 1 and starts 2, but epoch 2 "
                            "was current") for p in problems(room))


def hide_and_reveal(room: Room) -> tuple[int, int]:
    hidden = room.table.roll(room.gm, "d20", "gm")
    shown = room.table.reveal(room.gm, hidden["id"])
    return hidden["id"], shown["id"]


def test_a_reveal_that_shows_something_else_than_the_hidden_roll_is_caught(room: Room,
                                                                           tmp_path: Path) -> None:
    hidden, shown = hide_and_reveal(room)
    room.table.end_epoch(room.gm)
    assert problems(room) == []
    entries = room.rows()
    of = entries[shown - 1]["of"]
    of["roll"]["dice"][0]["face"] = of["draws"][0][2] = 21 - of["draws"][0][2]
    _resign(room, entries, shown - 1)
    room.write(entries)
    expect = f"entry {shown}: what it reveals is not what entry {hidden} committed to"
    assert any(p.startswith(expect) for p in problems(room)), problems(room)
    data = room.table.export(room.wu)  # the player sees the hidden roll as a stub only
    assert data["entries"][hidden - 1] == redact(entries[hidden - 1])
    path = tmp_path / "wu.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert any(p.startswith(expect) for p in verify_source(str(path), key=room.key).problems)


def test_a_revealed_hidden_roll_is_derived_from_its_seed(room: Room, tmp_path: Path) -> None:
    hide_and_reveal(room)
    room.table.end_epoch(room.gm)
    path = tmp_path / "wu.json"
    path.write_text(json.dumps(room.table.export(room.wu)), encoding="utf-8")
    report = verify_source(str(path), key=room.key)
    # every roll the player sees whole, plus the hidden one through its reveal
    shown = sum(1 for e in room.rows() if e["kind"] == "roll" and e["visibility"] == "public")
    assert report.ok and report.derived == shown + 1, report.problems


def receipt(entry: dict[str, Any], client: str, shown: str) -> dict[str, Any]:
    """What a page keeps for its own roll: the signed entry, the client seed it sent and the
    commitment it showed before rolling."""
    return {"id": entry["id"], "hash": entry["hash"], "sig": entry["sig"], "client": client,
            "commitment": shown}


def write_receipts(room: Room, path: Path, receipts: list[dict[str, Any]],
                   room_id: str | None = None) -> str:
    path.write_text(json.dumps({"format": "astragal-receipts/1", "room": room_id or room.id,
                                "key": room.key, "receipts": receipts}), encoding="utf-8")
    return str(path)


def test_receipts_catch_a_first_epoch_ground_after_the_page_showed_it(room: Room,
                                                                       tmp_path: Path) -> None:
    """Epoch 1's commitment is announced by no earlier entry: the page that showed it keeps it."""
    made = room.table.create_room("Another table", "dice", "Mei")
    gm = room.table.member(made["room"]["id"], made["key"])
    shown = room.table.fairness(gm.room)["commitment"]  # the page shows it on opening the room
    with sqlite3.connect(room.db) as conn:  # the operator's new seed, before the first roll
        conn.execute("UPDATE astragal_seeds SET seed = ? WHERE room_id = ?", (new_seed(), gm.room))
    rolled = room.table.roll(gm, "d20", client_seed="mei's seed")
    honest = [receipt(rolled, "mei's seed", rolled["fair"]["commitment"])]
    assert verify_source(gm.room, room.db, receipts=write_receipts(
        room, tmp_path / "ok.json", honest, gm.room)).ok  # the log alone cannot tell
    kept = write_receipts(room, tmp_path / "bad.json", [receipt(rolled, "mei's seed", shown)],
                          gm.room)
    assert verify_source(gm.room, room.db, receipts=kept).problems == [
        (f"entry {rolled['id']}: rolled with another seed commitment than the one the player's "
         "page showed before the roll (receipt 1)")]


def test_receipts_catch_a_client_seed_the_table_replaced(room: Room, tmp_path: Path) -> None:
    rolled = room.table.roll(room.wu, "d20", client_seed="chosen by the table")
    kept = write_receipts(room, tmp_path / "r.json",
                          [receipt(rolled, "wu's own seed", rolled["fair"]["commitment"])])
    assert problems(room, receipts=kept) == [
        (f"entry {rolled['id']}: rolled with another client seed than the one the player's page "
         "sent (receipt 1)")]


def test_an_epoch_ends_by_itself_after_its_hours_and_verifies(tmp_path: Path) -> None:
    from astragal.web.caps import Caps
    from astragal.web.room import Table
    from astragal.web.signing import Signer, default_key_path
    from astragal.web.store import SQLiteStore

    db = str(tmp_path / "t.db")
    store = SQLiteStore(db)
    table = Table(store, signer=Signer.load_or_create(default_key_path(db)),
                  caps=Caps(epoch_hours=2.0))
    now = [1000.0]
    table.clock = lambda: now[0]
    made = table.create_room("A long campaign", "dice", "Mei")
    wu = table.member(made["room"]["id"], table.join(made["room"]["id"], "Wu")["key"])
    first = table.roll(wu, "d20")
    now[0] += 3600  # an hour later: the same epoch
    assert table.roll(wu, "d20")["fair"]["epoch"] == first["fair"]["epoch"] == 1
    now[0] += 2 * 3600  # past two hours since its first roll: it ends before the next roll
    later = table.roll(wu, "d20")
    assert later["fair"]["epoch"] == 2
    log = table.log(wu)["entries"]
    ended = [e for e in log if e["kind"] == "seed"]
    assert len(ended) == 1 and ended[0]["epoch"] == 1 and ended[0]["who"].startswith("the table")
    assert ended[0]["id"] == later["id"] - 1  # revealed just before the roll that found it stale
    # and every face of the ended epoch checks out, signatures and all
    assert verify_source(made["room"]["id"], db).problems == []
    store.close()
