"""The hash-chained log and ``astragal verify-log``: an intact log passes, every kind of edit fails."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

import astragal
from astragal.cli import main as cli
from astragal.web.chain import (
    FORMAT,
    GENESIS,
    canonical,
    commitment,
    header_hash,
    redact,
    seal,
    verify_entries,
    verify_export,
)
from astragal.web.room import RecordingSource
from astragal.web.signing import Signer
from astragal.web.store import SQLiteStore

ROLLS = ["jc: d12 d8 vs 2d10", "jc: L7 +1b fav vs L8 q=expert:expert", "jc: dmg 2d8 vs soak d6",
         "jc: d6 -2p vs routine", "jc: d4"]


SIGNER = Signer.generate()  # the table's key in these tests


def sign(entry_id: int, entry_hash: str) -> str:
    return SIGNER.sign("r1", entry_id, entry_hash)


def make_log(texts: list[str] = ROLLS, seed: int = 7,
             hidden: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """A log as the table writes it: real rolls with their recorded draws, sealed in order."""
    entries: list[dict[str, Any]] = []
    prev = GENESIS
    for n, text in enumerate(texts, 1):
        source = RecordingSource(astragal.SeededSource(seed + n))
        result = astragal.roll(text, source=source)
        body = {"kind": "roll", "room": "r1", "at": f"2025-01-01T00:00:0{n}Z", "member": "m1",
                "who": "Wu", "role": "player",
                "visibility": "gm" if n in hidden else "public", "text": text,
                "notation": text, "system": result.system, "outcome": result.outcome,
                "verdict": result.transcript[-1], "transcript_text": str(result),
                "roll": result.to_json(with_steps=False), "draws": source.draws,
                "nonce": f"{n:032x}"}
        entry = seal(body, n, prev, sign)
        prev = entry["hash"]
        entries.append(entry)
    return entries


def export(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": FORMAT, "room": {"id": "r1", "name": "x", "system": "jadeclaw"},
            "head": entries[-1]["hash"] if entries else GENESIS, "key": SIGNER.public,
            "entries": entries}


def test_canonical_form_is_order_free_and_compact() -> None:
    assert canonical({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'
    assert canonical({"a": 1, "b": 2}) == canonical({"b": 2, "a": 1})
    with pytest.raises(ValueError):
        canonical({"x": float("nan")})


def test_seal_links_each_entry_to_the_one_before() -> None:
    log = make_log()
    assert log[0]["prev"] == GENESIS
    for before, after in itertools.pairwise(log):
        assert after["prev"] == before["hash"]
    assert all(e["hash"] == header_hash(e) and e["commit"] == commitment(e) for e in log)
    assert len({e["hash"] for e in log}) == len(log)


def test_an_intact_log_verifies_and_every_roll_replays() -> None:
    report = verify_export(export(make_log()))
    assert report.ok, report.problems
    assert report.entries == report.replayed == len(ROLLS)
    assert report.head == make_log()[-1]["hash"]


def test_a_log_stored_before_the_dice_said_their_repeat_still_verifies() -> None:
    """Entries of a repeated roll stored before 0.1.0's records gained a die's ``repeat`` still
    replay; but a die moved to another roll, or a face changed, is still found."""
    def old(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
        prev, out = GENESIS, []
        for i, e in enumerate(log):
            body = {k: v for k, v in e.items() if k not in ("id", "prev", "hash", "commit")}
            out.append(seal(body, i + 1, prev, sign))
            prev = out[-1]["hash"]
        return out

    log = make_log(["3x 2d6!+d4", "2x (1d4)d6"])
    assert {d.get("repeat") for e in log for d in e["roll"]["dice"]} == {1, 2, 3}
    for e in log:
        for d in e["roll"]["dice"]:
            d.pop("repeat")
    report = verify_export(export(old(log)))
    assert report.ok and report.replayed == 2, report.problems
    log = make_log(["2x (1d4)d6"])
    log[0]["roll"]["dice"][0]["repeat"] = 2
    assert not verify_entries(old(log)).ok
    log = make_log(["2x (1d4)d6"])
    log[0]["roll"]["dice"][0].pop("repeat")
    log[0]["roll"]["dice"][0]["face"] += 1
    assert not verify_entries(old(log)).ok


def test_a_log_stored_before_the_dice_carried_their_facts_still_verifies() -> None:
    """Entries stored before a die's record said what it scored, how its faces join and why it
    was added still replay; a changed fact on a new entry is still found."""
    def resealed(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
        prev, out = GENESIS, []
        for i, e in enumerate(log):
            body = {k: v for k, v in e.items() if k not in ("id", "prev", "hash", "commit")}
            out.append(seal(body, i + 1, prev, sign))
            prev = out[-1]["hash"]
        return out

    rolls = ["dice: 3d6!!", "dice: 6d6!p", "dice: 10d10>=8f1", "dice: 4dF", "cofd: 6"]
    log = make_log(rolls)
    facts = ("joined", "added", "scored", "label", "tone")
    assert {k for e in log for d in e["roll"]["dice"] for k in d} & set(facts)
    for e in log:
        for d in e["roll"]["dice"]:
            for k in facts:
                d.pop(k, None)
    report = verify_entries(resealed(log))
    assert report.ok and report.replayed == len(rolls), report.problems
    log = make_log(["dice: 10d10>=8f1"])
    log[0]["roll"]["dice"][0]["scored"] = 5
    assert not verify_entries(resealed(log)).ok


def test_a_roll_worded_otherwise_still_verifies_but_not_another_result() -> None:
    """The replay holds a roll to its dice and verdict, not to the wording of its transcript
    (a later version may word it better); a changed result is still found."""
    def resealed(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
        prev, out = GENESIS, []
        for i, e in enumerate(log):
            body = {k: v for k, v in e.items() if k not in ("id", "prev", "hash", "commit")}
            out.append(seal(body, i + 1, prev, sign))
            prev = out[-1]["hash"]
        return out

    log = make_log()
    log[0]["roll"]["transcript"][-1] = "worded by an older astragal"
    report = verify_entries(resealed(log))
    assert report.ok and report.replayed == len(ROLLS), report.problems
    log = make_log()
    log[0]["roll"]["result"]["margin"] = 99
    assert not verify_entries(resealed(log)).ok


def test_a_rolls_steps_are_not_logged_and_a_log_holding_them_verifies() -> None:
    """A roll's steps (added after 0.1.0) are the roller's account of its dice: the table logs
    a roll without them (older versions' verify-log compare every field of the record, and an
    entry's size is capped), and a log that holds them, worded otherwise or not, still
    verifies; a changed die does not."""
    def old(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
        prev, out = GENESIS, []
        for i, e in enumerate(log):
            body = {k: v for k, v in e.items() if k not in ("id", "prev", "hash", "commit")}
            out.append(seal(body, i + 1, prev, sign))
            prev = out[-1]["hash"]
        return out

    texts = ["cofd: 5 9-again rote vs 3", "cofd: 3 target 4"]
    log = make_log(texts)
    assert not any("steps" in e["roll"] for e in log)
    report = verify_export(export(log))
    assert report.ok and report.replayed == 2, report.problems
    log = make_log(texts)
    for e, text in zip(log, texts):
        e["roll"]["steps"] = astragal.roll(text, faces=None, seed=0).to_json()["steps"]
    log[0]["roll"]["steps"][-1]["rule"] = "recorded otherwise"
    report = verify_export(export(old(log)))
    assert report.ok and report.replayed == 2, report.problems
    log = make_log(texts)
    log[0]["roll"]["dice"][0]["face"] = 11
    assert not verify_entries(old(log)).ok


def _edit_face(log: list[dict[str, Any]]) -> None:
    log[1]["roll"]["dice"][0]["face"] = 12


def _edit_verdict_and_rehash(log: list[dict[str, Any]]) -> None:
    # A careful forger: change the verdict and recompute the whole chain after it.
    log[0]["outcome"] = "overwhelming_success"
    log[0]["roll"]["outcome"] = "overwhelming_success"
    prev = GENESIS
    for i, e in enumerate(log):
        body = {k: v for k, v in e.items() if k not in ("id", "prev", "hash")}
        log[i] = seal(body, i + 1, prev)
        prev = log[i]["hash"]


def _edit_draws_and_rehash(log: list[dict[str, Any]]) -> None:
    log[0]["draws"][0][2] = 1 if log[0]["draws"][0][2] != 1 else 2
    prev = GENESIS
    for i, e in enumerate(log):
        body = {k: v for k, v in e.items() if k not in ("id", "prev", "hash")}
        log[i] = seal(body, i + 1, prev)
        prev = log[i]["hash"]


@pytest.mark.parametrize("tamper, expect", [
    (_edit_face, "entry 2: its contents do not match its hash"),
    (lambda log: log.pop(1), "entry 3: expected id 2"),
    (lambda log: log.insert(0, log.pop(2)), "entry 3: expected id 1"),
    (lambda log: log[2].update(who="Mei"), "entry 3: its contents do not match its hash"),
    (lambda log: log[3].update(prev="f" * 64), "entry 4: its link to the entry before"),
    (_edit_verdict_and_rehash, "entry 1: its dice and verdict do not follow from its faces"),
    (_edit_draws_and_rehash, "entry 1: its dice and verdict do not follow from its faces"),
    (lambda log: log[0].pop("draws"), "entry 1: its contents do not match its hash"),
])
def test_every_kind_of_edit_is_found(tamper: Any, expect: str) -> None:
    log = make_log()
    tamper(log)
    report = verify_entries(log)
    assert not report.ok
    assert any(p.startswith(expect) for p in report.problems), report.problems


def test_cutting_entries_from_the_end_is_found_by_the_stated_head() -> None:
    log = make_log()
    data = export(log)
    data["entries"] = log[:-1]
    report = verify_export(data)
    assert not report.ok and "head hash" in report.problems[-1]


def test_redacted_entries_keep_the_chain_checkable() -> None:
    log = make_log(hidden=(3,))
    log[2] = redact(log[2])
    report = verify_export(export(log))
    assert report.ok and report.redacted == 1 and report.replayed == len(ROLLS) - 1
    # A redacted placeholder is not a hiding place: edits to neighbours still show.
    log[3]["verdict"] = "x"
    assert not verify_export(export(log)).ok


@pytest.mark.parametrize("data, expect", [
    ([], "not an astragal log export"),
    ({"format": "other"}, "not an astragal log export"),
    ({"format": FORMAT, "entries": "no"}, "no list of entries"),
    ({"format": FORMAT, "entries": [3]}, "item 1 is not an entry object"),
])
def test_malformed_exports_are_reported_not_crashed_on(data: Any, expect: str) -> None:
    report = verify_export(data)
    assert not report.ok and expect in report.problems[0]


# ------------------------------------------------------------------------------------------------
# The CLI: astragal verify-log FILE | ROOM --db


def test_verify_log_cli_on_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(export(make_log())), encoding="utf-8")
    assert cli(["verify-log", str(good)]) == 0
    out = capsys.readouterr().out
    assert "ok: 5 entries" in out and "replayed" in out

    bad_log = make_log()
    bad_log[4]["text"] = "jc: d12"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(export(bad_log)), encoding="utf-8")
    assert cli(["verify-log", str(bad)]) == 1
    assert "TAMPERED: entry 5" in capsys.readouterr().err

    junk = tmp_path / "junk.json"
    junk.write_text("{not json", encoding="utf-8")
    assert cli(["verify-log", str(junk)]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_verify_log_cli_on_a_room_in_the_database(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "t.db"
    store = SQLiteStore(db)
    store.create_room({"id": "room1", "name": "x", "system": "jadeclaw", "created": "now"},
                      {"id": "gm1", "room": "room1", "name": "Mei", "role": "gm",
                       "key_hash": "h", "created": "now"})
    for e in make_log():
        store.append("room1", {k: v for k, v in e.items() if k not in ("id", "prev", "hash")})
    store.close()
    assert cli(["verify-log", "room1", "--db", str(db)]) == 0
    assert "ok: 5 entries" in capsys.readouterr().out

    import sqlite3

    with sqlite3.connect(db) as conn:  # someone edits the database behind the table's back
        body = json.loads(conn.execute("SELECT body FROM astragal_log WHERE seq = 2").fetchone()[0])
        body["who"] = "Mei"
        conn.execute("UPDATE astragal_log SET body = ? WHERE seq = 2", (canonical(body),))
    assert cli(["verify-log", "room1", "--db", str(db)]) == 1
    assert "TAMPERED: entry 2" in capsys.readouterr().err

    assert cli(["verify-log", "nosuchroom", "--db", str(db)]) == 2
    assert "no room 'nosuchroom'" in capsys.readouterr().err
    assert cli(["verify-log", "room1", "--db", str(tmp_path / "missing.db")]) == 2
    assert "no database" in capsys.readouterr().err
    # the database given where an exported log goes: the error says how to name the room
    assert cli(["verify-log", str(db)]) == 2
    assert f"astragal verify-log --db {db} ROOM_ID" in capsys.readouterr().err


def test_export_is_independent_of_key_order() -> None:
    log = make_log()
    shuffled = [dict(reversed(list(copy.deepcopy(e).items()))) for e in log]
    assert verify_entries(shuffled).ok
