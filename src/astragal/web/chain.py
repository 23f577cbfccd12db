"""The room log's entry format: canonical JSON, the hash chain, and checking a log end to end.

Each entry is a JSON object: its content (who rolled what, the faces, the verdict, a random
``nonce``), ``commit``, the SHA-256 of the canonical JSON of the content, and a header: ``id``,
``prev`` (the hash of the entry before, ``GENESIS`` for the first), ``visibility``, ``commit``.
Its ``hash`` is the SHA-256 of the canonical JSON of the header, so an entry a reader may not see
can be shown as a stub of its header alone and still be checked, a stub cannot pretend to hide
something else (its commitment is fixed), and a public entry cannot become a stub (its visibility
is in the hash). Editing, removing or reordering an entry breaks every link after it. The nonce
keeps the commitment of a hidden roll from revealing its faces (a d12 has only 12 faces to try).
``sig`` is the table's signature of the room, the id and the hash (``signing.py``): it is outside
the hash, and it vouches for the whole chain up to its entry. Entries written before the header
existed (format 1: the hash of the whole entry) are still read and checked as they were.

Each roll entry also keeps its ``draws``: every face in the order the dice were drawn, with the die
size and the side (stream) it was rolled for. Replaying the draws through the game's rules must give
the stored roll, so a verdict edited together with a recomputed chain is caught as well. A fight
tracker's command (kind ``fight``) is run again on the fight the entry before it left: its
attack's roll and the fight it leaves (damage, stun, counters) must be the stored ones.

Pure: no I/O. Used by the stores (to build entries), the API (to export) and ``verify-log``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._errors import InputError

__all__ = [
    "FORMAT",
    "FORMATS",
    "GENESIS",
    "Report",
    "canonical",
    "commitment",
    "entry_hash",
    "header_hash",
    "redact",
    "rolls_dice",
    "seal",
    "verify_entries",
    "verify_export",
]

GENESIS = "0" * 64
FORMAT = "astragal-log/2"
FORMATS = ("astragal-log/1", FORMAT)  # exports this reads
HEADER = ("id", "prev", "visibility", "commit")
STUB = frozenset(HEADER) | {"hash", "redacted", "sig"}
_OUTSIDE = frozenset(("id", "prev", "commit", "hash", "sig"))  # not part of the content
MAX_PROBLEMS = 1_000  # problems a check reports before it stops reading the log


def canonical(data: Any) -> str:
    """The one JSON text of a value: sorted keys, no spaces, UTF-8 kept as is."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def _sha(data: Any) -> str:
    return hashlib.sha256(canonical(data).encode("utf-8")).hexdigest()


def entry_hash(entry: Mapping[str, Any]) -> str:
    """Format 1: SHA-256 (hex) of the canonical JSON of an entry without its own ``hash``."""
    return _sha({k: v for k, v in entry.items() if k != "hash"})


def commitment(entry: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of an entry's content: everything but its header, hash and signature."""
    return _sha({k: v for k, v in entry.items() if k not in _OUTSIDE})


def header_hash(entry: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of an entry's header: id, prev, visibility and the content's commitment."""
    return _sha({k: entry.get(k) for k in HEADER})


def seal(body: Mapping[str, Any], seq: int, prev: str,
         sign: Callable[[int, str], str] | None = None) -> dict[str, Any]:
    """The stored entry: ``body`` numbered ``seq``, linked to ``prev``, committed and hashed,
    and signed by ``sign(id, hash)`` (the table's key) when given."""
    entry = {**body, "visibility": body.get("visibility", "public")}
    entry.update(id=seq, prev=prev, commit=commitment(entry))
    entry["hash"] = header_hash(entry)
    if sign is not None:
        entry["sig"] = sign(seq, entry["hash"])
    return entry


def redact(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A stub for an entry the reader may not see: its header, hash and signature only."""
    if "commit" not in entry:  # format 1
        return {"id": entry["id"], "prev": entry["prev"], "hash": entry["hash"], "redacted": True}
    return {**{k: entry[k] for k in (*HEADER, "hash", "sig") if k in entry}, "redacted": True}


@dataclass
class Report:
    """What checking a log found: counts, the head hash, and every problem with its entry id."""

    entries: int = 0
    redacted: int = 0
    replayed: int = 0
    signed: int = 0
    receipts: int = 0
    derived: int = 0   # rolls whose faces were derived again from their revealed seed
    pending: int = 0   # rolls of an epoch whose seed is not revealed yet
    fights: int = 0    # fight-tracker commands run again on the fight before them
    key: str | None = None
    key_from_export: bool = False
    head: str = GENESIS
    problems: list[str] = field(default_factory=list)
    stopped: bool = False  # the check stopped reading at MAX_PROBLEMS problems

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        """A human summary, one line each."""
        if self.ok:
            entries = "entry" if self.entries == 1 else "entries"
            out = [f"ok: {self.entries} {entries}, the hash chain is intact; head {self.head}"]
            if self.replayed:
                out.append(f"ok: {self.replayed} roll(s) replayed from their faces give the "
                           "stored verdicts")
            if self.fights:
                out.append(f"ok: {self.fights} fight-tracker command(s) run again on the fight "
                           "before them give the stored fight")
            if self.signed:
                out.append(f"ok: {self.signed} entr{'y' if self.signed == 1 else 'ies'} signed by "
                           f"the table's key {self.key}"
                           + (" (the key given in the export itself: pass --key with the key "
                              "your room shows to know it is your table's)"
                              if self.key_from_export else ""))
            elif self.key is None:
                out.append("note: no signing key was given or found, so no signature was "
                           "checked (pass --key)")
            if self.receipts:
                out.append(f"ok: {self.receipts} receipt(s) match the log")
            if self.derived:
                out.append(f"ok: {self.derived} roll(s) have exactly the faces their revealed "
                           "seed gives")
            if self.pending:
                out.append(f"note: {self.pending} roll(s) wait for their seed epoch to end "
                           "before their faces can be derived")
            if self.redacted:
                out.append(f"note: {self.redacted} hidden "
                           f"{'entry appears' if self.redacted == 1 else 'entries appear'} only as "
                           "links in the chain; their contents could not be checked")
            return out
        return [f"TAMPERED: {p}" for p in self.problems] + [
            f"{len(self.problems)} problem(s) in {self.entries} entries"]


def rolls_dice(entry: Mapping[str, Any]) -> bool:
    """Whether an entry rolled dice: a roll, or a fight-tracker attack (a fight entry holding a
    roll, faces or a ``fair`` record, or whose command is ``attack``: one stripped of all three
    is still one)."""
    kind = entry.get("kind", "roll")
    if kind == "roll":
        return True
    if kind != "fight":
        return False
    if any(k in entry for k in ("roll", "draws", "fair")):
        return True
    from .tabletools import parse_command  # the table's own reading of the command

    try:
        return parse_command("fight", str(entry.get("text", ""))).name == "attack"
    except InputError:
        return False


def _streams(draws: object) -> list[list[int]] | str:
    """The faces of each stream (side), in drawing order, from an entry's ``draws``; else what
    is wrong with them."""
    if not isinstance(draws, list):
        return "its faces (draws) are missing"
    streams: list[list[int]] = []
    for d in draws:
        if (not isinstance(d, list) or len(d) != 3
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in d)
                or not 0 <= d[0] < 64):
            return f"a draw {d!r} is not [side, size, face]"
        while len(streams) <= d[0]:
            streams.append([])
        streams[d[0]].append(d[2])
    return streams


def _replay(entry: Mapping[str, Any], fight: object = None) -> str | None:
    """Re-roll an entry from its recorded draws; None when it matches, else what differs. A
    fight-tracker command (``kind`` fight) is run again on ``fight``, the fight's state the
    entry before it left (None: no fight yet), with the table's own fight commands: its attack's
    roll, and the state it leaves (damage, stun, counters), must be the stored ones."""
    import astragal  # the rules themselves: a verdict must follow from the faces

    fighting = entry.get("kind") == "fight"
    draws = entry.get("draws", [] if fighting and "roll" not in entry else None)
    streams = _streams(draws)
    if isinstance(streams, str):
        return streams
    source = astragal.ScriptedSource(streams)
    what = "attack" if fighting else "roll"
    state: object = None
    try:
        if fighting:
            again_json, state = _fight_again(entry, fight, source)
        else:
            again_json = astragal.roll(str(entry.get("notation", "")), source=source,
                                       default_system=str(entry.get("system", "")) or None
                                       ).to_json()
    except astragal.InputError as exc:
        return f"its {what} cannot be replayed: {exc.message}"
    except astragal.AstragalError as exc:  # a system that is not installed here, say
        return f"its {what} cannot be replayed: {exc}"
    except Exception as exc:  # noqa: BLE001 - a crafted fight state the rules trip on
        return f"its {what} cannot be replayed: {type(exc).__name__}: {exc}"
    stored = entry.get("roll")
    if fighting and stored is None and again_json is None:
        pass  # a fight command that rolls nothing: its state alone follows
    elif not isinstance(stored, Mapping):
        return f"its {what}'s record is missing"
    elif again_json is None or (
            (again_facts := _plain(_facts(again_json))) != _facts(stored)
            and _before_later_fields(again_facts) != _facts(stored)):
        return ("its dice and verdict do not follow from its faces under the game's rules"
                if not fighting else "its attack's dice, verdict and damage do not follow from "
                "its faces under the attack table's rules")
    if fighting and _plain(state) != _plain(entry.get("state")):
        return ("the fight it leaves (damage, stun, counters) does not follow from the fight "
                "before it and its faces under the attack table's rules")
    return None


def _fight_again(entry: Mapping[str, Any], fight: object,
                 source: Any) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """A fight entry's command run again as the table ran it (``tabletools.fight_command``):
    the attack's roll (None for another command) and the state it leaves."""
    import copy

    from astragal.systems.attack.fight import check_fight

    from .tabletools import fight_command, parse_command

    if fight is not None:  # read as a fight file is, so a crafted state is named, not tripped on
        check_fight(copy.deepcopy(fight), "the fight before it")
    command = parse_command("fight", str(entry.get("text", "")))
    _, state, again = fight_command(fight if isinstance(fight, Mapping) else None, command,
                                    source)
    source.finish()  # every face the table drew was used: none added
    return again, state


def _plain(data: Any) -> Any:
    """``data`` as the log stores it (JSON: tuples are lists)."""
    return json.loads(canonical(data))


# Fields a roll's record gained after 0.1.0, which entries stored before then do not hold. None of
# them is read by a verdict: a record without them is the same roll.
# ``repeat``: which roll of `6x 4d6kh3` a die belongs to; ``joined``, ``added``, ``scored``,
# ``label``, ``tone``: the rules' facts about a die (``astragal.dice.Die``), which the page draws
LATER_DIE_FIELDS = ("repeat", "joined", "added", "scored", "label", "tone")


def _facts(roll: Mapping[str, Any]) -> dict[str, Any]:
    """What a replay must reproduce: the system, input, outcome, result and every die. The
    transcript is the game's words for them, and the steps (added after 0.1.0) the roller's
    account of them, which a later version may put better: a log stays verifiable when they
    change."""
    return {k: v for k, v in roll.items() if k not in ("transcript", "steps")}


def _before_later_fields(roll: dict[str, Any]) -> dict[str, Any]:
    """``roll`` as it was recorded before the ``LATER_DIE_FIELDS`` existed."""
    dice = [{k: v for k, v in d.items() if k not in LATER_DIE_FIELDS} for d in roll["dice"]]
    return {**roll, "dice": dice}


def _safe(function: Callable[[Mapping[str, Any]], str], entry: Mapping[str, Any]) -> str | None:
    """``function(entry)``; None when the entry holds what no entry can (NaN, too deep)."""
    try:
        return function(entry)
    except (ValueError, TypeError, RecursionError):
        return None


class _Checker:
    """One pass over a log: each entry's place, hash, content, signature and replay."""

    def __init__(self, report: Report, replay: bool, trust_stubs: bool, room: str | None,
                 key: str | None) -> None:
        self.report, self.replay, self.trust_stubs = report, replay, trust_stubs
        self.room, self.key = room, key
        self.new_format = False
        self.old_stubs: list[str] = []  # where each stub of format 1 stands
        self.unroomed: str | None = None  # the first signed entry checked without a room id
        self.hashes: dict[int, str] = {}
        self.fight: object = None  # the fight tracker's state the last fight entry left
        from .epochs import Epochs  # (it reads fair.py, which uses canonical from here)

        self.epochs = Epochs(room)  # seeds, seeded rolls and reveals (``epochs.py``)

    def entry(self, entry: Mapping[str, Any], where: str) -> None:
        problems = self.report.problems
        stated = entry.get("hash")
        stub = entry.get("redacted") is True
        if "commit" in entry:
            self.new_format = True
            if stub and not set(entry) <= STUB:
                problems.append(f"{where}: a stub that carries content")
            elif _safe(header_hash, entry) != stated or (
                    not stub and _safe(commitment, entry) != entry.get("commit")):
                problems.append(f"{where}: its contents do not match its hash (edited)")
            elif stub:
                self.epochs.header(entry)
                self._stub(entry, where)
            else:
                self.epochs.header(entry)
                self._replay(entry, where)
                if isinstance(entry.get("id"), int):
                    self.epochs.whole(entry)
            self._signature(entry, where)
        elif self.new_format:
            problems.append(f"{where}: an entry of the old format after entries of the new one "
                            "(rewritten)")
        elif stub and set(entry) == {"id", "prev", "hash", "redacted"}:
            self.old_stubs.append(where)
            self._stub(entry, where)
        elif not isinstance(stated, str) or _safe(entry_hash, entry) != stated:
            problems.append(f"{where}: its contents do not match its hash (edited)")
        else:
            self._replay(entry, where)
        if isinstance(entry.get("id"), int) and isinstance(stated, str):
            self.hashes[entry["id"]] = stated

    def _stub(self, entry: Mapping[str, Any], where: str) -> None:
        if not self.trust_stubs:
            self.report.problems.append(f"{where}: only a stub is stored, its contents are gone")
        elif entry.get("visibility", "hidden") == "public":
            self.report.problems.append(f"{where}: a public entry is shown as a stub (hidden "
                                        "after the fact)")
        else:
            self.report.redacted += 1

    def _replay(self, entry: Mapping[str, Any], where: str) -> None:
        if self.replay and entry.get("kind") == "reveal" and isinstance(entry.get("of"), Mapping):
            entry = entry["of"]  # a hidden roll, revealed: its faces must give its verdict too
            where = f"{where} (revealing entry {entry.get('id')})"
        kind = entry.get("kind", "roll")
        if self.replay and kind in ("roll", "fight"):
            why = _replay(entry, self.fight) if kind == "fight" else _replay(entry)
            if kind == "fight":  # the next command runs on the state this one stored
                self.fight = entry.get("state")
                self.report.fights += 1
            if why is not None:
                self.report.problems.append(f"{where}: {why}")
            elif rolls_dice(entry):
                self.report.replayed += 1

    def _signature(self, entry: Mapping[str, Any], where: str) -> None:
        eid = entry.get("id")
        if self.key is None or not isinstance(eid, int) or isinstance(
                eid, bool):  # an entry without a whole-number id is reported by its place
            return
        if self.room is None:  # a signature covers the room's id: without it, none can check
            self.unroomed = self.unroomed or where
            return
        from .signing import check_signature

        if check_signature(self.key, self.room, eid, str(entry.get("hash")), entry.get("sig")):
            self.report.signed += 1
        else:
            self.report.problems.append(f"{where}: its signature is not the table's (forged, "
                                        "resealed or added)")

    def finish(self) -> None:
        """What only the whole log shows: old stubs among new entries, signatures no room
        lets one check."""
        problems = self.report.problems
        if self.new_format:  # a stub of format 1 does not say whether its entry was public
            problems += [f"{where}: a stub in the old format 1 in a log of format 2: it does not "
                         "show whether the entry was public, so it cannot be checked (a public "
                         "roll hidden after the fact looks like this)" for where in self.old_stubs]
        if self.unroomed is not None:
            problems.append(f"{self.unroomed}: its signature cannot be checked, nor any other: "
                            "the export names no room (its \"room\" has no text \"id\"), and "
                            "the table's signatures cover the room's id")

    def receipt(self, receipt: Any, n: int) -> None:
        problems = self.report.problems
        if (not isinstance(receipt, Mapping) or not isinstance(receipt.get("id"), int)
                or isinstance(receipt.get("id"), bool) or not isinstance(receipt.get("hash"), str)):
            problems.append(f"receipt {n} is not a receipt (id, hash, sig)")
            return
        rid, rhash = receipt["id"], receipt["hash"]
        if self.key is not None and self.room is None:
            self.unroomed = self.unroomed or f"receipt {n} (entry {rid})"
        elif self.key is not None and self.room is not None:
            from .signing import check_signature

            if not check_signature(self.key, self.room, rid, rhash, receipt.get("sig")):
                problems.append(f"receipt {n} (entry {rid}): its signature is not the table's")
                return
        last = max(self.hashes, default=0)
        if rid > last:
            problems.append(f"entry {rid}: a receipt shows it, but the log ends at entry {last} "
                            "(entries were cut from the end)")
        elif self.hashes.get(rid) != rhash:
            problems.append(f"entry {rid}: its hash is not the one its receipt shows (the log "
                            "was rewritten)")
        elif (why := self.epochs.receipt(n, receipt)) is not None:
            problems.append(why)
        else:
            self.report.receipts += 1


def verify_entries(entries: Iterable[Mapping[str, Any]], *, replay: bool = True,
                   trust_stubs: bool = True, room: str | None = None, key: str | None = None,
                   receipts: Iterable[Any] = ()) -> Report:
    """Check ids (1, 2, 3…), every hash and link, every commitment, every verdict (``replay``),
    every signature (with the table's public ``key`` and the ``room``'s id) and every receipt.

    Stubs of hidden entries are checked by their header; ``trust_stubs`` False (a database, which
    keeps every entry whole) refuses them.
    """
    report = Report(key=key)
    checker = _Checker(report, replay, trust_stubs, room, key)
    prev = GENESIS
    expected_id = 1
    last: Mapping[str, Any] | None = None  # the last entry object
    for n, entry in enumerate(entries, 1):
        report.entries = n
        if not isinstance(entry, Mapping):
            report.problems.append(f"item {n} is not an entry object")
            continue
        eid = entry.get("id")
        where = f"entry {eid}" if isinstance(eid, int) else f"item {n}"
        if eid != expected_id:
            report.problems.append(f"{where}: expected id {expected_id} (an entry is missing, "
                                   "added or out of order)")
        expected_id = (eid if isinstance(eid, int) else expected_id) + 1
        if entry.get("prev") != prev:
            report.problems.append(f"{where}: its link to the entry before does not match "
                                   "(an earlier entry was edited or removed)")
        checker.entry(entry, where)
        last = entry
        stated = entry.get("hash")
        prev = stated if isinstance(stated, str) else ""
        if len(report.problems) >= MAX_PROBLEMS:  # a log this broken: reading on tells no more
            report.problems.append(f"{where}: the check stopped here, after {MAX_PROBLEMS:,} "
                                   "problems; the rest of the log was not read")
            report.stopped = True
            break
    report.head = prev
    if key is not None and last is not None and "commit" not in last and not report.stopped:
        eid = last.get("id")
        report.problems.append(f"entry {eid if isinstance(eid, int) else report.entries}: the log "
                               "ends in an entry nobody signed (the old format 1), though the "
                               "table signs every entry: a log rewritten without the key looks "
                               "like this")
    checker.epochs.check()
    report.problems += checker.epochs.problems[:MAX_PROBLEMS]
    if len(checker.epochs.problems) > MAX_PROBLEMS:
        report.problems.append(f"and {len(checker.epochs.problems) - MAX_PROBLEMS:,} more "
                               "problems with the rolls' seeds and faces")
    report.derived, report.pending = checker.epochs.derived, checker.epochs.pending
    for n, receipt in enumerate(() if report.stopped else receipts, 1):
        checker.receipt(receipt, n)
    checker.finish()
    return report


def verify_export(data: Any, *, replay: bool = True, key: str | None = None,
                  receipts: Iterable[Any] = ()) -> Report:
    """Check an exported log (``{"format": "astragal-log/2", "entries": [...]}``), with the table's
    public ``key`` (else the one the export states) and a player's ``receipts``."""
    if not isinstance(data, Mapping) or data.get("format") not in FORMATS:
        report = Report()
        report.problems.append(f"not an astragal log export (expected \"format\": \"{FORMAT}\")")
        return report
    entries = data.get("entries")  # a list, or read one at a time (``export_file.Entries``)
    if not isinstance(entries, Iterable) or isinstance(entries, (str, bytes, Mapping)):
        report = Report()
        report.problems.append("the export has no list of entries")
        return report
    room = data.get("room")
    room_id = room.get("id") if isinstance(room, Mapping) else None
    stated_key = data.get("key") if isinstance(data.get("key"), str) else None
    report = verify_entries(entries, replay=replay, room=room_id if isinstance(room_id, str)
                            else None, key=key or stated_key, receipts=receipts)
    report.key_from_export = key is None and stated_key is not None
    if key is not None and stated_key is not None and stated_key != key:
        report.problems.append("the export states another signing key than the one given")
    head = data.get("head")
    if head is not None and head != report.head and not report.stopped:
        report.problems.append("the export's stated head hash does not match its last entry "
                               "(entries were cut from the end)")
    return report
