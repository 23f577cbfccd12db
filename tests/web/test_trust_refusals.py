"""What ``verify-log`` cannot check it refuses, naming the entry and why: an export whose room id
is missing or not text (the signatures cover it), stubs of the old format 1 in a log of format 2
(they do not say whether the entry was public), and a roll of a seeded room without its ``fair``
record (its faces would be whoever's choice). Each tamper here passed before it was refused.

``test_verify_page.py`` runs the same tampers through ``verify.html``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import astragal
from astragal.cli import main as cli
from astragal.web.chain import redact

from .test_trust import Room, _resign, reseal

Export = dict[str, Any]


def no_room(room: Room) -> Callable[[Export], None]:
    """The export's room left out, and entry 2's faces edited and resealed without the key."""
    def tamper(data: Export) -> None:
        del data["room"]
        choose_a_face(data["entries"], 1)
        reseal(data["entries"], 1)
    return tamper


def room_id_not_text(room: Room) -> Callable[[Export], None]:
    def tamper(data: Export) -> None:
        data["room"]["id"] = 7
        choose_a_face(data["entries"], 1)
        reseal(data["entries"], 1)
    return tamper


def public_rolls_as_old_stubs(room: Room) -> Callable[[Export], None]:
    """The first two public rolls shown as stubs of format 1 (id, prev, hash, redacted)."""
    def tamper(data: Export) -> None:
        for i in (0, 1):
            e = data["entries"][i]
            data["entries"][i] = {"id": e["id"], "prev": e["prev"], "hash": e["hash"],
                                  "redacted": True}
    return tamper


def drop_the_fair_record(room: Room) -> Callable[[Export], None]:
    """The operator (database and key) chooses entry 2's faces and drops its ``fair`` record,
    so no seed can contradict them, and signs the new history with the table's key."""
    def tamper(data: Export) -> None:
        choose_a_face(data["entries"], 1)
        del data["entries"][1]["fair"]
        _resign(room, data["entries"], 1)
    return tamper


def regrind_a_hidden_roll(drop: bool) -> Callable[[Room], Callable[[Export], None]]:
    """The operator gives the GM-only roll (entry 3) another secret of their choosing, or none,
    with the faces the revealed seed and that secret give, and signs with the table's key."""
    def make(room: Room) -> Callable[[Export], None]:
        def tamper(data: Export) -> None:
            from astragal.web.fair import derive
            from astragal.web.room import RecordingSource

            e = data["entries"][2]
            assert e["visibility"] == "gm" and "secret" in e["fair"]
            seed = next(x["seed"] for x in data["entries"] if x.get("kind") == "seed")
            if drop:
                del e["fair"]["secret"], e["fair"]["proof"]
            else:
                e["fair"]["secret"] = "ab" * 32
            faces = derive(seed, e["room"], 1, e["member"], e["fair"]["client"], e["id"],
                           [d[1] for d in e["draws"]], e["fair"].get("secret"))
            source = RecordingSource(astragal.ScriptedSource([faces]))
            e["roll"] = astragal.roll(e["notation"], source=source).to_json(with_steps=False)
            e["draws"], e["outcome"] = source.draws, e["roll"]["outcome"]
            _resign(room, data["entries"], 2)
        return tamper
    return make


def choose_a_face(entries: list[dict[str, Any]], i: int) -> None:
    """Entry ``i + 1`` (a d20 roll) gets a face the seed did not give, its verdict to match."""
    e = entries[i]
    face = 20 if e["draws"][0][2] != 20 else 19
    e["draws"] = [[0, 20, face]]
    e["roll"] = astragal.roll(e["notation"], faces=str(face)).to_json(with_steps=False)
    e["outcome"] = e["roll"]["outcome"]


# (name, the tamper given the room, what the report must say, naming the entry)
REFUSALS: list[tuple[str, Callable[[Room], Callable[[Export], None]], str]] = [
    ("an export without its room", no_room,
     'entry 1: its signature cannot be checked, nor any other: the export names no room'),
    ("a room id that is not text", room_id_not_text,
     'entry 1: its signature cannot be checked, nor any other: the export names no room'),
    ("public rolls turned into old-format stubs", public_rolls_as_old_stubs,
     "entry 1: a stub in the old format 1 in a log of format 2"),
    ("a fair record dropped and re-signed", drop_the_fair_record,
     "entry 2: a roll without its fair record, in a room whose faces come from its seed"),
    ("a hidden roll's secret chosen after the fact", regrind_a_hidden_roll(drop=False),
     "entry 3: its secret is not the one its epoch's seed committed to for its entry"),
    ("a hidden roll without its secret", regrind_a_hidden_roll(drop=True),
     "entry 3: a hidden roll without a secret of its own"),
]


@pytest.fixture
def room(tmp_path: Path) -> Room:
    made = Room(tmp_path)
    made.table.end_epoch(made.gm)  # the seed revealed: a face it did not give would show
    return made


@pytest.mark.parametrize("name, tamper, expect", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_verify_log_refuses_what_it_cannot_check(room: Room, tmp_path: Path, name: str,
                                                tamper: Any, expect: str, capsys: Any) -> None:
    receipts = room.receipts(room.wu, tmp_path / "wu.json")
    data = room.table.export(room.gm)
    tamper(room)(data)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert cli(["verify-log", str(path), "--key", room.key, "--receipts", receipts]) == 1
    err = capsys.readouterr().err
    assert f"TAMPERED: {expect}" in err, err


def test_old_stubs_are_refused_in_a_players_export_too(room: Room, tmp_path: Path) -> None:
    """Wu's own export: the GM-only roll is a stub of format 2 (checked, not refused); the public
    rolls before it turned into stubs of format 1 are refused."""
    from astragal.web.verify import verify_source

    data = room.table.export(room.wu)
    assert [e["id"] for e in data["entries"] if e.get("redacted")] == [3]
    path = tmp_path / "wu.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert verify_source(str(path), key=room.key).ok
    public_rolls_as_old_stubs(room)(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    assert verify_source(str(path), key=room.key).problems == [
        f"entry {n}: a stub in the old format 1 in a log of format 2: it does not show whether "
        "the entry was public, so it cannot be checked (a public roll hidden after the fact "
        "looks like this)" for n in (1, 2)]


def test_a_receipt_of_a_roll_shown_without_its_fair_record_says_so(room: Room,
                                                                   tmp_path: Path) -> None:
    from astragal.web.verify import verify_source

    rolled = room.table.roll(room.wu, "d20", client_seed="wu's seed")
    data = room.table.export(room.gm)
    i = rolled["id"] - 1
    del data["entries"][i]["fair"]
    _resign(room, data["entries"], i)
    path, kept = tmp_path / "export.json", tmp_path / "wu.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    kept.write_text(json.dumps([{"id": rolled["id"], "hash": data["entries"][i]["hash"],
                                 "sig": data["entries"][i]["sig"], "client": "wu's seed"}]))
    found = verify_source(str(path), key=room.key, receipts=str(kept)).problems
    assert (f"entry {rolled['id']}: the player's page sent a client seed for it, but the log "
            "shows it without its fair record (receipt 1)") in found, found


def test_a_log_of_a_room_without_seeds_still_verifies(tmp_path: Path) -> None:
    """A table given a source of its own (no seed epochs, as in older logs) writes no ``fair``
    records: nothing to hold the rolls to, nothing refused."""
    from astragal.web.chain import verify_export
    from astragal.web.room import Table
    from astragal.web.store import SQLiteStore

    table = Table(SQLiteStore(tmp_path / "t.db"), source=lambda: astragal.SeededSource(3))
    made = table.create_room("A table", "dice", "Mei")
    gm = table.member(made["room"]["id"], made["key"])
    table.roll(gm, "d20")
    table.roll(gm, "3d6", "gm")
    data = table.export(gm)
    assert "fair" not in data["entries"][0]
    assert verify_export(data).ok
    data["entries"][1] = redact(data["entries"][1])
    assert verify_export(data).ok
