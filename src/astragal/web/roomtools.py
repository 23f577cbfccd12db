"""The table's tools as ``Table`` methods, apart from HTTP: revealing a hidden roll, the seed
epochs, re-issuing a key, removing a member, and the fight tracker and turn order kept as states
in the room's log (``tabletools.py`` holds the commands themselves).
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from astragal import InputError

from . import powers
from .basics import (
    Member,
    RecordingSource,
    RollError,
    TableError,
    check_unicode,
    key_hash,
    new_key,
)
from .caps import Caps
from .fair import commitment, revealed
from .sheet import Expansion
from .store import MAX_PAGE, Moved, Store
from .tabletools import (
    Command,
    fight_command,
    headline,
    outcome_kind,
    parse_command,
    turn_owner,
    turns_command,
)

__all__ = ["TableTools"]


class TableTools:
    """The ``Table``'s tools, as a mixin: the attributes and methods named below are the
    ``Table``'s own (set in its ``__init__``), declared here for the type checker."""

    store: Store
    caps: Caps
    clock: Callable[[], float]
    wall: Callable[[], str]
    _odds_lock: threading.Lock
    _epoch_seen: dict[str, tuple[int, float]]
    _state_lock: threading.Lock
    _state_cache: dict[str, dict[str, Any]]
    _room_locks: dict[str, threading.Lock]

    if TYPE_CHECKING:
        def admit(self, member: Member, who: str) -> None: ...

        def _append(self, room_id: str, body: dict[str, Any], who: str,
                    expect: int | None = None) -> dict[str, Any]: ...

        def _faces(self, member: Member, room_id: str, client_seed: str,
                   seeded: tuple[int, str] | None = None, hidden: bool = False
                   ) -> tuple[RecordingSource, dict[str, Any] | None, int | None]: ...

    # -- the table's tools: reveal, keys, members, fight tracker, turn order -----------------

    def _entry(self, room_id: str, entry_id: object) -> dict[str, Any]:
        if not isinstance(entry_id, int) or isinstance(entry_id, bool) or entry_id < 1:
            raise TableError(422, "RequestError", "an entry's id is a whole number ≥ 1")
        rows = self.store.entries(room_id, entry_id - 1, 1)
        if not rows or rows[0]["id"] != entry_id:
            raise TableError(404, "NotFound", f"there is no entry {entry_id} in this room")
        return rows[0]

    def _base(self, member: Member, kind: str) -> dict[str, Any]:
        return {"kind": kind, "room": member.room, "at": self.wall(), "member": member.id,
                "who": member.name, "role": member.role, "visibility": "public"}

    def reveal(self, member: Member, entry_id: object, who: str = "") -> dict[str, Any]:
        """Show a GM-only or blind roll to the whole room, as a new public entry: the GM may
        reveal any, a player their own GM-only roll (a blind roll stays blind to its roller
        until the GM reveals it: ``powers.POWERS``). The hidden entry itself never changes."""
        entry = self._entry(member.room, entry_id)
        if entry.get("kind", "roll") != "roll" or entry.get("visibility") == "public":
            raise TableError(409, "NotHidden", f"entry {entry_id} is not a hidden roll")
        vis = "blind" if entry.get("visibility") == "blind" else "gm"
        powers.check(member, "reveal", vis, f"reveal a {'blind' if vis == 'blind' else 'GM-only'}"
                     " roll", owner=entry.get("member"), owner_words="whoever rolled it")
        self.admit(member, who)
        # the roll's whole content (and its id): its commitment is the one the hidden entry's
        # header carries, so anyone can check the reveal shows exactly what was rolled then
        body = {**self._base(member, "reveal"), "reveals": entry["id"],
                "of": {k: v for k, v in entry.items() if k not in ("prev", "commit", "hash",
                                                                    "sig")}}
        return self._append(member.room, body, who)

    def fairness(self, room_id: str) -> dict[str, Any]:
        """The room's current seed epoch and the commitment to its secret seed (``fair.py``)."""
        epoch, seed = self.store.epoch(room_id)
        return {"epoch": epoch, "commitment": commitment(seed)}

    def _end_stale_epoch(self, member: Member) -> tuple[int, str]:
        """An epoch rolled in for more than ``caps.epoch_hours`` (since this server first saw a
        roll in it) ends by itself before the next roll: its seed is revealed in the log, so no
        epoch stays unverifiable because nobody ended it. The epoch and seed to roll with."""
        seeded = self.store.epoch(member.room)
        now = self.clock()
        with self._odds_lock:
            known = self._epoch_seen.get(member.room)
            if known is None or known[0] != seeded[0]:
                if len(self._epoch_seen) > 100_000:
                    self._epoch_seen.clear()
                self._epoch_seen[member.room] = (seeded[0], now)
                return seeded
        if now - known[1] < self.caps.epoch_hours * 3600:
            return seeded
        with contextlib.suppress(TableError):  # another request ended it first
            self._end_epoch(member, "the table (an epoch ends after "
                            f"{self.caps.epoch_hours:g} hours)", "")
        return self.store.epoch(member.room)

    def end_epoch(self, member: Member, who: str = "") -> dict[str, Any]:
        """The GM ends the seed epoch: its seed is revealed in the log (every face of the epoch
        can then be derived again) and a new epoch starts with a new commitment."""
        powers.check(member, "epoch", "end", "end a seed epoch")
        self.admit(member, who)
        return self._end_epoch(member, None, who)

    def _end_epoch(self, member: Member, by: str | None, who: str) -> dict[str, Any]:
        epoch, seed = self.store.epoch(member.room)
        made = self.store.next_epoch(member.room, epoch)
        if made is None:
            raise TableError(409, "Conflict", f"epoch {epoch} has just been ended")
        body = {**self._base(member, "seed"), "epoch": epoch, **revealed(seed),
                "commitment": commitment(seed), "next": made[0],
                "next_commitment": commitment(made[1])}
        if by is not None:  # the schedule's, not a person's: it stands before the roll that
            body.update({"member": "", "who": by, "role": "table"})  # found the epoch stale
        return self._append(member.room, body, who)

    def _gm_over(self, gm: Member, member_id: object, what: str, doing: str) -> dict[str, Any]:
        powers.check(gm, "member", what, doing)
        target = next((m for m in self.store.members(gm.room) if m["id"] == member_id), None)
        if target is None:
            raise TableError(404, "NotFound", "no such member in this room")
        return target

    def reissue_key(self, gm: Member, member_id: object) -> dict[str, Any]:
        """A new key for a member (the GM, for a player who lost theirs): the old key stops
        working at once. Returns the member and the new key."""
        target = self._gm_over(gm, member_id, "rekey", "give a member a new key")
        key = new_key()
        self.store.set_key(target["id"], key_hash(key))
        return {"member": target, "key": key}

    def remove_member(self, gm: Member, member_id: object) -> dict[str, Any]:
        """The GM takes a player out of the room: their key stops working, their rolls stay."""
        target = self._gm_over(gm, member_id, "remove", "remove a member")
        if target["id"] == gm.id:
            raise TableError(409, "Conflict", "the GM cannot remove themself")
        self.store.remove_member(target["id"])
        return target

    def _states(self, room_id: str) -> dict[str, Any]:
        """The latest fight and turn-order states of a room (read forward from a cache)."""
        with self._state_lock:
            known = self._state_cache.get(room_id, {"last": 0})
        known = dict(known)
        more = True
        while more:  # a page may end early at its size: read on while more may follow
            rows, more = self.store.page(room_id, known["last"], MAX_PAGE, self.caps.page_bytes)
            for e in rows:
                if e.get("kind") in ("fight", "turns"):
                    known[e["kind"]] = e.get("state")
                if e.get("kind") == "fight":  # whose command the fight's last change was
                    known["fight_by"] = e.get("member")
            if rows:
                known["last"] = rows[-1]["id"]
        with self._state_lock:
            if len(self._state_cache) > 2048:
                self._state_cache.clear()
            self._state_cache[room_id] = known
        return known

    def fight(self, member: Member, text: object, who: str = "") -> dict[str, Any]:
        """One fight-tracker command, run with the attack table's rules; a new log entry."""
        if not isinstance(text, str) or len(text) > 500:
            raise TableError(422, "RequestError", "a fight command is text of at most 500 "
                                                  "characters")
        check_unicode(text, "the command")
        command = self._command("fight", text)
        if command.name != "undo":  # an undo's owner is read with the state it undoes
            powers.check(member, "fight", command.name, f"'{command.name}' in the fight")
        self.admit(member, who)

        def edit(states: dict[str, Any], expect: int) -> dict[str, Any] | None:
            if command.name == "undo" and "undo" in (states.get("fight") or {}):
                # the last fight command is the attack it takes back (nothing to undo: a 422)
                powers.check(member, "fight", "undo", "undo this attack",
                             owner=states.get("fight_by"), owner_words="whoever made it")
            source, fair, nonce = self._faces(member, member.room, "")
            if nonce is not None and nonce != expect:
                return None  # an entry came after the state was read: read it again
            try:
                message, new, as_json = fight_command(states.get("fight"), command, source)
            except InputError as exc:
                raise RollError(exc, Expansion(text, text)) from None
            body = {**self._base(member, "fight"), "text": text, "message": message,
                    "state": new}
            if as_json is not None:
                body.update({"roll": as_json, "outcome": as_json["outcome"],
                             "system": "attack", "draws": source.draws,
                             "headline": headline(as_json["outcome"],
                                                  as_json.get("transcript", ())),
                             "tone": outcome_kind(as_json["outcome"])})
                if fair is not None:
                    body["fair"] = fair
            return body

        return self._edit_state(member, edit, who)

    def turns(self, member: Member, text: object, who: str = "") -> dict[str, Any]:
        """One turn-order command (any game): add NAME [initiative], remove NAME, next, clear."""
        if not isinstance(text, str) or len(text) > 200:
            raise TableError(422, "RequestError", "a turn command is text of at most 200 "
                                                  "characters")
        check_unicode(text, "the command")
        command = self._command("turns", text)
        self.admit(member, who)

        def edit(states: dict[str, Any], _: int) -> dict[str, Any]:
            try:
                message, new = turns_command(states.get("turns"), command, member.id)
            except InputError as exc:
                raise RollError(exc, Expansion(text, text)) from None
            # after the command read (a name not in the order is its own 422), on the state it
            # ran on: whose name it removes, whose turn it ends
            powers.check(member, "turns", command.name, f"'{command.name}' in the turn order",
                         owner=turn_owner(states.get("turns"), command),
                         owner_words="whose turn it is" if command.name == "next" else
                         "whoever added it")
            return {**self._base(member, "turns"), "text": text, "message": message,
                    "state": new}

        return self._edit_state(member, edit, who)

    @staticmethod
    def _command(tool: str, text: str) -> Command:
        try:
            return parse_command(tool, text)
        except InputError as exc:
            raise RollError(exc, Expansion(text, text)) from None

    def _edit_state(self, member: Member,
                    edit: Callable[[dict[str, Any], int], dict[str, Any] | None],
                    who: str) -> dict[str, Any]:
        """Append the entry ``edit`` makes from the room's latest fight and turn-order states,
        stored only as the very next entry after the state it read: a command another instance
        (PostgreSQL) stored in between makes it read the state again and run once more, so no
        command is lost and none runs on a stale state."""
        with self._room_lock(member.room):
            for attempt in range(16):
                states = self._states(member.room)
                expect = states["last"] + 1
                body = edit(states, expect)
                if body is not None:
                    try:
                        return self._append(member.room, body, who, expect=expect)
                    except Moved:
                        pass
                # another instance stored first: wait a moment, a random one, so that two
                # instances racing for one room do not keep meeting
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
        raise TableError(503, "Busy", "the room's log is too busy to take this command: try "
                                      "again", retry_after=1)

    def _room_lock(self, room_id: str) -> threading.Lock:
        with self._state_lock:
            lock = self._room_locks.get(room_id)
            if lock is None:
                if len(self._room_locks) > 2048:
                    self._room_locks.clear()
                lock = self._room_locks[room_id] = threading.Lock()
            return lock
