"""Fight-tracker attacks are checked as rolls are: ``verify-log`` derives each attack's faces from
its ``fair`` record once its epoch's seed is revealed, and runs every fight command again on the
fight before it with the table's own fight commands, so an attack's outcome and damage, and the
fight it leaves, must follow from its faces. Each tamper here passed before (issue 38, item 7).

``test_verify_page.py`` holds ``verify.html`` to the same verdicts (but for the rules' replay).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from astragal.cli import main as cli
from astragal.web.chain import verify_export
from astragal.web.room import RateLimit, RecordingSource
from astragal.web.tabletools import fight_command, parse_command

from .test_trust import Room, _resign, reseal

Export = dict[str, Any]
FIGHT = ["add Wu atk=4 wpn=3 luck=2 hp=8", "add Orc atk=3 wpn=2 armor=1 hp=30",
         "attack Wu Orc berserk", "attack Orc Wu", "spend Wu luck 1", "attack Wu Orc"]


class FightRoom(Room):
    """The rolls of ``Room``, then a fight (two attacks by Wu, one by the Orc the GM plays),
    then the end of epoch 1, then one more attack (epoch 2: its seed not revealed yet)."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        self.table.roll_limit = self.table.address_rolls = RateLimit(100.0, 100)
        for text in FIGHT:
            self.table.fight(self.wu if text.startswith(("attack Wu", "spend")) else self.gm,
                             text)
        self.table.end_epoch(self.gm)
        self.table.fight(self.wu, "attack Wu Orc")


@pytest.fixture
def room(tmp_path: Path) -> FightRoom:
    return FightRoom(tmp_path)


def attacks(data: Export) -> list[int]:
    """Where the attacks of epoch 1 stand in the export's entries."""
    return [i for i, e in enumerate(data["entries"]) if e.get("kind") == "fight"
            and "roll" in e and e["fair"]["epoch"] == 1]


def state_before(entries: list[dict[str, Any]], i: int) -> dict[str, Any] | None:
    return next((e["state"] for e in reversed(entries[:i]) if e.get("kind") == "fight"), None)


def choose_faces(room: Room) -> Callable[[Export], None]:
    """The operator (database and key) runs the last attack of epoch 1 again on faces of their
    choosing (every die a 6), so its verdict, damage and fight all follow from them, and signs
    the new history with the table's key: only the revealed seed can tell."""
    def tamper(data: Export) -> None:
        entries = data["entries"]
        i = attacks(data)[-1]
        e = entries[i]
        sixes = RecordingSource(_Sixes())
        message, state, roll = fight_command(state_before(entries, i),
                                             parse_command("fight", e["text"]), sixes)
        assert roll is not None and sixes.draws != e["draws"]
        e.update(message=message, state=state, roll=roll, outcome=roll["outcome"],
                 draws=sixes.draws)
        later = [x for x in entries[i + 1:] if x.get("kind") == "fight"]
        for x in later:  # the commands after it, run on the fight it now leaves
            again = RecordingSource(_Scripted([d[2] for d in x.get("draws", [])]))
            before = state_before(entries, entries.index(x))
            x["message"], x["state"], x["roll"] = fight_command(
                before, parse_command("fight", x["text"]), again)
            x["outcome"] = x["roll"]["outcome"]
        _resign(room, entries, i)
    return tamper


def edit_faces_only(room: Room) -> Callable[[Export], None]:
    """The operator edits an attack's faces alone (its dice and verdict left) and signs."""
    def tamper(data: Export) -> None:
        e = data["entries"][attacks(data)[0]]
        e["draws"][0][2] = 6 if e["draws"][0][2] != 6 else 1
        _resign(room, data["entries"], attacks(data)[0])
    return tamper


def more_damage(signed: bool) -> Callable[[Room], Callable[[Export], None]]:
    """Wu's first attack does 5 more damage than its dice give, in its verdict and in the fight
    it leaves (and in every fight after it); signed with the table's key (the operator) or
    resealed without it (someone with a copy of the database or the export)."""
    def make(room: Room) -> Callable[[Export], None]:
        def tamper(data: Export) -> None:
            entries = data["entries"]
            i = attacks(data)[0]
            entries[i]["roll"]["result"]["damage"] += 5
            for e in entries[i:]:
                if e.get("kind") == "fight":
                    orc = next(c for c in e["state"]["combatants"] if c["name"] == "Orc")
                    orc["damage"] += 5
            (_resign if signed else lambda r, log, n: reseal(log, n))(room, entries, i)
        return tamper
    return make


def drop_fair(strip: bool) -> Callable[[Room], Callable[[Export], None]]:
    """The operator drops the first attack's ``fair`` record (and, ``strip``, its roll and faces
    too, so it reads as a command that rolled nothing), and signs with the table's key."""
    def make(room: Room) -> Callable[[Export], None]:
        def tamper(data: Export) -> None:
            i = attacks(data)[0]
            for k in ("fair", *(("roll", "draws", "outcome") if strip else ())):
                del data["entries"][i][k]
            _resign(room, data["entries"], i)
        return tamper
    return make


class _Sixes:
    def face(self, size: int, stream: int = 0) -> int:
        return size

    def finish(self) -> None:
        pass


class _Scripted(_Sixes):
    def __init__(self, faces: list[int]) -> None:
        self.faces = list(faces)

    def face(self, size: int, stream: int = 0) -> int:
        return self.faces.pop(0) if self.faces else size


# (name, tamper, what verify-log says first, whether only the rules' replay can tell)
ATTACK_TAMPERS: list[tuple[str, Callable[[Room], Callable[[Export], None]], str, bool]] = [
    ("an attack's faces chosen by the operator", choose_faces,
     "its faces are not the ones epoch 1's seed gives (forged)", False),
    ("an attack's faces edited alone", edit_faces_only,
     "its faces are not the ones epoch 1's seed gives (forged)", False),
    ("an attack's damage raised and resealed", more_damage(False),
     "its signature is not the table's", False),
    ("an attack's damage raised and signed by the operator", more_damage(True),
     "its attack's dice, verdict and damage do not follow from its faces", True),
    ("an attack's fair record dropped", drop_fair(False),
     "a roll without its fair record", False),
    ("an attack stripped of its fair record, roll and faces", drop_fair(True),
     "a roll without its fair record", False),
]


def test_an_export_with_attacks_verifies_every_attack(room: FightRoom, tmp_path: Path,
                                                      capsys: Any) -> None:
    data = room.table.export(room.gm)
    report = verify_export(data, key=room.key)
    assert report.ok, report.problems
    n_attacks = len(attacks(data))
    assert n_attacks == 3
    assert report.fights == len(FIGHT) + 1
    assert report.derived == 9 + n_attacks and report.pending == 1  # the last attack: epoch 2
    assert report.replayed == 9 + n_attacks + 1
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert cli(["verify-log", str(path), "--key", room.key]) == 0
    out = capsys.readouterr().out
    assert "7 fight-tracker command(s) run again on the fight before them" in out
    assert "12 roll(s) have exactly the faces their revealed seed gives" in out
    players = verify_export(room.table.export(room.wu), key=room.key)
    assert players.ok and players.derived == 8 + n_attacks  # the GM-only roll: a stub


@pytest.mark.parametrize("name, make, said, replay_only", ATTACK_TAMPERS,
                         ids=[t[0] for t in ATTACK_TAMPERS])
def test_every_tamper_of_an_attack_is_caught(room: FightRoom, tmp_path: Path, name: str,
                                             make: Any, said: str, replay_only: bool,
                                             capsys: Any) -> None:
    data = room.table.export(room.gm)
    first = data["entries"][attacks(data)[-1 if make is choose_faces else 0]]["id"]
    make(room)(data)
    data["head"] = data["entries"][-1]["hash"]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert cli(["verify-log", str(path), "--key", room.key]) == 1
    err = capsys.readouterr().err
    assert f"TAMPERED: entry {first}: {said}" in err, err


def test_a_tampered_attack_in_the_database_is_caught(room: FightRoom) -> None:
    from astragal.web.verify import verify_source

    entries = room.rows()
    i = next(n for n, e in enumerate(entries) if e.get("kind") == "fight" and "roll" in e)
    entries[i]["roll"]["result"]["damage"] += 5
    _resign(room, entries, i)
    room.write(entries)
    report = verify_source(room.id, room.db)
    assert any(p.startswith(f"entry {i + 1}: its attack's dice, verdict and damage do not follow")
               for p in report.problems), report.problems


@pytest.mark.parametrize("state", [[1, 2], {"format": "astragal fight"}, "not a fight", 7])
def test_a_crafted_fight_state_is_named_not_tripped_on(room: FightRoom, state: Any) -> None:
    """A fight entry whose state is no fight (resealed without the key): the next command's
    replay says so, with no traceback."""
    data = room.table.export(room.gm)
    i = attacks(data)[0] - 1  # the command before the first attack
    data["entries"][i]["state"] = copy.deepcopy(state)
    reseal(data["entries"], i)
    report = verify_export(data, key=room.key)
    eid = data["entries"][i + 1]["id"]
    assert any(p.startswith(f"entry {eid}: its attack cannot be replayed") for p in
               report.problems), report.problems
