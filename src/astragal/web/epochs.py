"""Checking a log's seed epochs: every seeded roll's faces against the seed it was committed to.

Part of ``verify-log`` (``chain.verify_entries`` feeds it every whole entry and the header of
every stub). What it holds a log to, in log order (``docs/trust.md``):

- the seed entries end epochs 1, 2, 3… in turn, each names the next epoch, each revealed seed
  hashes to its commitment, and each epoch's commitment is the one the entry ending the epoch
  before announced;
- every seeded roll was made in the epoch current at its place in the log, under that epoch's
  commitment (the same in all its rolls, before the reveal as after), with its own entry number
  as its nonce;
- once the epoch's seed is revealed, the roll's faces are the ones the seed gives (``fair.py``);
  a fight-tracker attack is a roll here too (``chain.rolls_dice``);
- in an epoch whose seed commits to secrets (its seed entry has a ``root``), a hidden roll
  carries its own secret, whose path leads to that root, and its faces follow from both;
- in a room whose faces come from its seed, every roll carries its ``fair`` record;
- a reveal of a hidden roll carries the roll's whole content, whose commitment is the one the
  hidden entry's header carries (so the reveal shows exactly what was rolled then), and a roll
  revealed is replayed and derived like any other;
- a player's receipts of their own rolls name the client seed they sent and the commitment they
  were shown: the log's roll must carry both.

Pure: no I/O.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Mapping
from typing import Any

from .._errors import InputError
from .fair import DEPTH, derive, proof_root, seed_commitment

__all__ = ["MAX_FACES", "Epochs"]

MAX_FACES = 4_000_000  # faces of seeded rolls a check holds until the log is read (16 bytes each)
FAIR_FIELDS = ("epoch", "commitment", "client", "nonce", "secret", "proof")


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Epochs:
    """The seeds, rolls and reveals of one log, checked once the whole log is read."""

    def __init__(self, room: str | None) -> None:
        self.room = room
        self.problems: list[str] = []
        self.derived = 0
        self.pending = 0
        self.commits: dict[int, str] = {}                     # entry id → its commitment
        self.ends: list[int] = []                             # ids of the seed entries, in order
        self.seeds: dict[int, tuple[int, str, str | None]] = {}  # epoch → (id, seed, root)
        self.announced: dict[int, tuple[int, object]] = {1: (0, None)}  # epoch → (by, commitment)
        self.rolls: dict[int, Mapping[str, Any]] = {}         # entry id → the seeded roll
        self.unseeded: set[int] = set()                       # ids of rolls without ``fair``
        self.faces = 0                                        # faces in the rolls kept
        self._texts: dict[str, str] = {}

    def header(self, entry: Mapping[str, Any]) -> None:
        """Any entry of format 2, whole or a stub: remember a hidden one's commitment (what
        its reveal must show; a public entry has nothing to reveal)."""
        if _int(entry.get("id")) and isinstance(entry.get("commit"), str) and \
                entry.get("visibility") != "public":
            self.commits[entry["id"]] = entry["commit"]

    def whole(self, entry: Mapping[str, Any]) -> None:
        """A whole entry whose hash and commitment checked."""
        eid = entry["id"]
        if entry.get("kind") == "seed":
            self._seed(eid, entry)
        elif entry.get("kind") == "reveal":
            self._reveal(eid, entry)
        else:
            self._roll(eid, entry)

    def _roll(self, eid: int, entry: Mapping[str, Any]) -> None:
        """A roll shown whole (or revealed): seeded, or one more roll without ``fair``."""
        from .chain import rolls_dice  # a roll, or a fight-tracker attack

        if not rolls_dice(entry):
            return
        if isinstance(entry.get("fair"), Mapping):
            if eid not in self.rolls:
                self.rolls[eid] = self._kept(entry)
        else:
            self.unseeded.add(eid)

    def _kept(self, roll: Mapping[str, Any]) -> dict[str, Any]:
        """What checking a seeded roll reads, and no more: its ``fair`` record's fields, who
        rolled it where, and its draws as one array of whole numbers (sizes, faces; None when
        they are not all whole numbers), 16 bytes a face, held until the log is read."""
        draws = roll.get("draws")
        fair = roll["fair"]
        kept: dict[str, Any] = {k: self._same(roll[k]) for k in ("room", "member", "visibility")
                                if k in roll}
        kept["fair"] = {k: self._same(fair[k]) for k in FAIR_FIELDS if k in fair}
        kept["draws"] = None
        if isinstance(draws, list) and all(isinstance(d, list) and len(d) == 3 for d in draws):
            sizes, faces = [d[1] for d in draws], [d[2] for d in draws]
            if all(type(x) is int and -1 << 63 <= x < 1 << 63 for x in sizes + faces):
                kept["draws"] = array("q", sizes + faces)  # the sizes, then the faces
        self.faces += len(draws) if isinstance(draws, list) else 0
        if self.faces > MAX_FACES:
            raise InputError(f"the log's seeded rolls hold more than {MAX_FACES:,} faces, more "
                             "than this checks (a room's whole log, at its 64 MiB cap, holds "
                             "under 2.5 million)")
        return kept

    def _same(self, value: object) -> object:
        """One copy of a short text many rolls repeat (a member, a commitment, a client seed):
        each entry read brings its own."""
        if not isinstance(value, str) or len(value) > 128 or len(self._texts) > 10_000:
            return value
        return self._texts.setdefault(value, value)

    def _seed(self, eid: int, entry: Mapping[str, Any]) -> None:
        epoch, seed = entry.get("epoch"), entry.get("seed")
        current = len(self.ends) + 1
        self.ends.append(eid)
        where = f"entry {eid}"
        if epoch != current or entry.get("next") != current + 1:
            self.problems.append(f"{where}: it ends epoch {epoch!r} and starts "
                                 f"{entry.get('next')!r}, but epoch {current} was current "
                                 "(epochs end in turn: 1, 2, 3…)")
            return
        root = entry.get("root")  # the hidden rolls' secrets' root, in epochs that have them
        try:
            kept = isinstance(seed, str) and (root is None or isinstance(root, str)) and \
                seed_commitment(seed, root) == entry.get("commitment")
        except ValueError:
            kept = False
        if not kept:
            self.problems.append(f"{where}: the revealed seed does not match its commitment")
        by, announced = self.announced[current]
        if announced is not None and entry.get("commitment") != announced:
            self.problems.append(f"{where}: epoch {current}'s commitment is not the one entry "
                                 f"{by} announced when epoch {current - 1} ended")
        self.seeds[current] = (eid, seed if isinstance(seed, str) else "",
                               root if isinstance(root, str) else None)
        self.announced[current + 1] = (eid, entry.get("next_commitment"))

    def _reveal(self, eid: int, entry: Mapping[str, Any]) -> None:
        of = entry.get("of")
        where = f"entry {eid}"
        if not isinstance(of, Mapping) or not _int(of.get("id")) or of["id"] >= eid or \
                entry.get("reveals") != of["id"]:
            self.problems.append(f"{where}: it reveals no earlier entry")
            return
        hidden = self.commits.get(of["id"])
        from .chain import commitment

        try:
            same = hidden is not None and commitment(of) == hidden
        except (ValueError, TypeError, RecursionError):
            same = False
        if not same:
            self.problems.append(f"{where}: what it reveals is not what entry {of['id']} "
                                 "committed to when it was rolled")
            return
        self._roll(of["id"], of)

    def fair_of(self, eid: int) -> Mapping[str, Any] | None:
        """The ``fair`` record of roll ``eid`` if the log shows it (whole or revealed)."""
        roll = self.rolls.get(eid)
        return roll["fair"] if roll is not None else None

    def check(self) -> None:
        """Every seeded roll against its epoch (call once the whole log is read)."""
        if self.rolls or self.ends:  # the room's faces come from its seed: every roll's do
            self.problems += [f"entry {eid}: a roll without its fair record, in a room whose "
                              "faces come from its seed (its faces could be anyone's choice)"
                              for eid in sorted(self.unseeded)]
        first: dict[int, tuple[int, object]] = {}  # epoch → (first roll's id, its commitment)
        for eid in sorted(self.rolls):
            roll = self.rolls[eid]
            fair, where = roll["fair"], f"entry {eid}"
            epoch = fair.get("epoch")
            current = bisect.bisect_left(self.ends, eid) + 1  # seed entries before it, plus 1
            if fair.get("nonce") != eid:
                self.problems.append(f"{where}: its nonce is not its number in the log (a roll "
                                     "tried again)")
                continue
            if epoch != current:
                self.problems.append(f"{where}: rolled under epoch {epoch!r}, but epoch "
                                     f"{current} was current at its place in the log")
                continue
            by, announced = self.announced.get(current, (0, None))
            if announced is not None:
                if fair.get("commitment") != announced:
                    self.problems.append(f"{where}: rolled under another commitment than the "
                                         f"one entry {by} announced for epoch {current}")
                    continue
            elif fair.get("commitment") != (seen := first.setdefault(
                    current, (eid, fair.get("commitment"))))[1]:
                self.problems.append(f"{where}: rolled under another commitment than epoch "
                                     f"{current}'s first roll (entry {seen[0]})")
                continue
            self._faces(eid, roll, current)

    def _faces(self, eid: int, roll: Mapping[str, Any], epoch: int) -> None:
        revealed = self.seeds.get(epoch)
        if revealed is None:
            self.pending += 1
            return
        fair, where = roll["fair"], f"entry {eid}"
        _, seed, root = revealed
        draws = roll["draws"] if roll["draws"] is not None else [0, 0]  # none: size 0, refused
        half = len(draws) // 2
        try:
            published = seed_commitment(seed, root) == fair.get("commitment")
        except ValueError:
            published = False
        secret = fair.get("secret")
        if published and (why := self._secret(roll, root, eid)) is not None:
            self.problems.append(f"{where}: {why}")
            return
        try:
            sizes = list(draws[:half])
            if not all(1 <= s <= 1 << 32 for s in sizes):
                raise ValueError("a die size out of range")
            faces = derive(seed, str(roll.get("room", self.room)), epoch,
                           str(roll.get("member")), str(fair.get("client", "")), eid, sizes,
                           secret if isinstance(secret, str) else None)
            stated = list(draws[half:])
        except (ValueError, TypeError, IndexError, KeyError):
            faces, stated = [], [None]
        if not published:
            self.problems.append(f"{where}: it was rolled under another commitment than epoch "
                                 f"{epoch}'s revealed seed")
        elif faces != stated:
            self.problems.append(f"{where}: its faces are not the ones epoch {epoch}'s seed "
                                 "gives (forged)")
        else:
            self.derived += 1

    @staticmethod
    def _secret(roll: Mapping[str, Any], root: str | None, eid: int) -> str | None:
        """What is wrong with a roll's own secret (a hidden roll's), or None."""
        fair = roll["fair"]
        secret, proof = fair.get("secret"), fair.get("proof")
        if secret is None:
            if root is not None and roll.get("visibility", "public") != "public":
                return ("a hidden roll without a secret of its own, in an epoch whose seed "
                        "commits to them: its faces follow from the revealed seed alone")
            return None
        try:
            kept = root is not None and isinstance(secret, str) and isinstance(proof, list) and \
                len(proof) == DEPTH and all(isinstance(p, str) for p in proof) and \
                proof_root(secret, eid, proof) == root
        except (ValueError, TypeError):
            kept = False
        return None if kept else ("its secret is not the one its epoch's seed committed to "
                                  "for its entry (chosen after the fact)")

    def receipt(self, n: int, receipt: Mapping[str, Any]) -> str | None:
        """A problem with a receipt of the holder's own roll (the client seed they sent, the
        commitment they were shown), or None."""
        if "client" not in receipt and "commitment" not in receipt:
            return None
        rid = receipt["id"]
        fair = self.fair_of(rid)
        if fair is None and rid in self.unseeded:
            return (f"entry {rid}: the player's page sent a client seed for it, but the log shows "
                    f"it without its fair record (receipt {n})")
        if fair is None:
            return None  # a stub the log does not show: checked once it is revealed
        for field, what in (("client", "client seed than the one the player's page sent"),
                            ("commitment", ("seed commitment than the one the player's page "
                                           "showed before the roll"))):
            if field in receipt and fair.get(field) != receipt[field]:
                return f"entry {rid}: rolled with another {what} (receipt {n})"
        return None
