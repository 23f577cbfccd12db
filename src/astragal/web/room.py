"""The table's rules, apart from HTTP: rooms, members, keys, rolling, who sees what, export.

The server rolls (never the browser): the text is expanded with the player's sheet, rolled with the
public API under the room's default system, and the faces are recorded as they are drawn so the log
can replay them later. Visibility (who may see an entry):

``public``  everyone in the room
``gm``      the GM and the player who rolled
``blind``   the GM only; the player who rolled learns that they rolled, not what

An entry a reader may not see is never sent to them: the API and the WebSocket filter per reader.

Here: ``Table`` with its rooms, members, rolling and reading of the log. It takes its odds and luck
from ``roomodds.py`` and its tools (reveal, seed epochs, keys, fight tracker, turn order) from
``roomtools.py``; its errors, keys, rate limits and ``Member`` are in ``basics.py``, re-exported here.
"""

from __future__ import annotations

import html
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import astragal
from astragal import InputError, Limits, Source
from astragal._limits import WEB_LIMITS
from astragal.render import roll_text

from . import powers
from .basics import (
    Member,
    RateLimit,
    RecordingSource,
    RollError,
    TableError,
    _clean_name,
    _now,
    check_unicode,
    key_hash,
    new_key,
    new_room_id,
)
from .caps import Budget, Caps
from .chain import FORMAT, canonical, redact
from .fair import fair_roll
from .luck import LuckBook
from .oddspool import OddsPool, shared_pool
from .roomodds import TableOdds, engine_error, odds_page
from .roomtools import TableTools
from .sheet import Expansion, Sheet, check_sheet, expand
from .signing import Signer
from .store import MAX_PAGE, Moved, NameTaken, RoomFull, Store
from .tabletools import check_sheet_rolls, dice_text, headline, outcome_kind

__all__ = [
    "VISIBILITIES",
    "Member",
    "RateLimit",
    "RecordingSource",
    "RollError",
    "Table",
    "TableError",
    "check_unicode",
    "key_hash",
    "new_key",
    "odds_page",
]

VISIBILITIES = ("public", "gm", "blind")
MAX_NAME = 40
MAX_CLIENT_SEED = 64
MAX_ROOM_NAME = 80
EXPIRY_SWEEP_SECONDS = 600.0  # how often an instance looks for idle rooms (when opening one)


def _system_table() -> dict[str, Any]:
    """Every installed system: name → (title, prefixes); and every alias → name."""
    from astragal.systems import get_system

    systems: dict[str, Any] = {}
    aliases: dict[str, str] = {}
    for name, alias_list in astragal.system_names().items():
        for a in (name, *alias_list):
            aliases[a] = name
        try:
            system = get_system(name)
        except Exception:  # noqa: BLE001, S112 - registered but not written yet, or broken: skip
            continue
        systems[name] = {"name": name, "title": system.title,
                         "prefixes": [f"{a}:" for a in (*alias_list, name)],
                         "examples": list(getattr(system, "examples", ()))}
    return {"systems": systems, "aliases": aliases}


class Table(TableOdds, TableTools):
    """The web table over a ``Store``: every operation the HTTP API offers, with its checks."""

    def __init__(self, store: Store, *, limits: Limits | None = None,
                 source: Callable[[], Source | None] | None = None,
                 roll_rate: tuple[float, int] = (2.0, 6),
                 odds_rate: tuple[float, int] = (2.0, 6),
                 caps: Caps | None = None, pool: OddsPool | None = None,
                 signer: Signer | None = None, archive: Path | None = None) -> None:
        self.store = store
        # Every entry is signed with the table's key (a fresh one when none is given: tests)
        self.signer = signer or Signer.generate()
        store.sign = self.signer.sign
        # The web's own bounds: the same engine limits, with exact odds kept well inside a
        # request's time (every odds request holds a worker thread).
        self.limits = limits or WEB_LIMITS
        self.source = source
        self.caps = caps = caps or Caps()
        self.roll_limit = RateLimit(*roll_rate)
        self.odds_limit = RateLimit(*odds_rate)
        self.address_rolls = RateLimit(*caps.rolls_per_address)
        self.address_bytes = Budget(*caps.stored_bytes_per_address)
        self.address_reads = RateLimit(*caps.reads_per_address)
        self.address_pings = RateLimit(*caps.pings_per_address)
        self.odds_cpu = Budget(*caps.odds_cpu_per_address)
        self.exports = RateLimit(*caps.exports_per_member)
        self.pool = pool or shared_pool(caps.odds_workers, caps.odds_seconds, caps.odds_memory,
                                        caps.odds_wait)
        self._systems: dict[str, Any] | None = None
        self._odds_cache: dict[tuple[str, str | None], dict[str, Any]] = {}
        # Refusals: by the exact text, and (for computations cut off or out of memory) by the
        # shape of the canonical parse, so that changing a number does not get past the cache.
        self._refused: dict[tuple[str, str | None], dict[str, Any]] = {}
        self._refused_shapes: dict[tuple[str, str | None], tuple[str, float]] = {}
        self._odds_lock = threading.Lock()
        self._odds_running: set[str] = set()  # addresses with an odds computation under way
        self.luckbook = LuckBook()
        self.clock: Callable[[], float] = time.monotonic  # the epochs' schedule (tests move it)
        self.wall: Callable[[], str] = _now  # an entry's `at` (tests step it back)
        self._last_at: dict[str, str] = {}  # room -> the latest `at` stored or read here
        self._epoch_seen: dict[str, tuple[int, float]] = {}  # room -> (epoch, first seen)
        self._joins: dict[tuple[str, str], int] = {}  # (room, address) -> members added
        self._log_bytes: dict[str, tuple[int, float]] = {}  # room -> (bytes, when read)
        self._caps_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._state_cache: dict[str, dict[str, Any]] = {}
        self._room_locks: dict[str, threading.Lock] = {}
        # Told of every entry this table stores, in each room's order (the app's live feed)
        self.on_entry: Callable[[dict[str, Any]], None] | None = None
        # Idle rooms are exported here, then deleted (``expire_idle``); None keeps every room
        self.archive = archive
        self._swept = -EXPIRY_SWEEP_SECONDS  # when this instance last looked for idle rooms

    # -- systems -----------------------------------------------------------------------------

    def systems(self) -> dict[str, Any]:
        """Installed systems (looked up again while some are still being written)."""
        table = _system_table()
        self._systems = table
        return table

    def _aliases(self) -> dict[str, str]:
        if self._systems is None:
            self.systems()
        assert self._systems is not None
        return self._systems["aliases"]  # type: ignore[no-any-return]

    # -- rooms and members -------------------------------------------------------------------

    def create_room(self, name: object, system: object, gm_name: object) -> dict[str, Any]:
        """A new room; its creator is the GM. Returns the room, the GM and the GM's key."""
        room_name = _clean_name(name if name is not None else "", "the room's name",
                                MAX_ROOM_NAME, required=False, visible=False) or "A table"
        gm = _clean_name(gm_name if gm_name is not None else "GM", "your name", MAX_NAME)
        if not isinstance(system, str):
            raise TableError(422, "RequestError", "the room's system must be text")
        known = self.systems()
        key = known["aliases"].get(system.strip().lower())
        if key is None or key not in known["systems"]:
            names = ", ".join(sorted(known["systems"]))
            raise TableError(422, "RequestError", f"'{system}' is not an installed system: "
                                                  f"choose one of {names}")
        self.expire_idle()
        if (count := self.store.room_count()) >= self.caps.rooms:
            raise TableError(507, "TableFull", f"this table holds {count:,} rooms, the most it "
                             "keeps: try again when idle rooms have been archived",
                             retry_after=3600)
        room = {"id": new_room_id(), "name": room_name, "system": key,
                "created": _now()}
        gm_key = new_key()
        member = {"id": secrets.token_urlsafe(12), "room": room["id"], "name": gm, "role": "gm",
                  "key_hash": key_hash(gm_key), "created": room["created"]}
        self.store.create_room(room, member)
        return {"room": room, "member": {"id": member["id"], "name": gm, "role": "gm"},
                "key": gm_key}

    def expire_idle(self) -> list[str]:
        """Archive and delete the rooms idle for ``caps.idle_room_days`` (at most once per
        ``EXPIRY_SWEEP_SECONDS`` on an instance, and only with an ``archive`` folder): each is
        first written whole, as its GM would export it, to ``archive/<room>.json`` (on disk
        before the room is deleted). The rooms deleted."""
        now = self.clock()
        if self.archive is None or now - self._swept < EXPIRY_SWEEP_SECONDS:
            return []
        self._swept = now
        cutoff = (datetime.now(UTC) - timedelta(days=self.caps.idle_room_days)).isoformat(
            timespec="milliseconds").replace("+00:00", "Z")
        gone = []
        for room_id in self.store.idle_rooms(cutoff, 100):
            gm = next((m for m in self.store.members(room_id) if m["role"] == "gm"), None)
            viewer = Member(gm["id"] if gm else "", room_id, gm["name"] if gm else "GM", "gm",
                            Sheet())
            self.archive.mkdir(parents=True, exist_ok=True)
            final = self.archive / f"{room_id}.json"
            part = final.with_suffix(".json.part")
            with part.open("w", encoding="utf-8") as out:
                for chunk in self.export_chunks(viewer):
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            os.replace(part, final)
            self.store.delete_room(room_id)
            gone.append(room_id)
        return gone

    def room(self, room_id: str) -> dict[str, Any]:
        """The room, or a 404."""
        room = self.store.room(room_id) if len(room_id) <= 64 else None
        if room is None:
            raise TableError(404, "NotFound", "no such room: check the link")
        return room

    def join(self, room_id: str, name: object, who: str = "") -> dict[str, Any]:
        """Join a room as a player with a display name; returns the member and their key.

        ``who`` is the client's address: one address adds at most
        ``caps.joins_per_address_per_room`` members to a room (429), and a room holds at most
        ``caps.members_per_room`` (507).
        """
        self.room(room_id)
        clean = _clean_name(name, "your name", MAX_NAME)
        cap = self.caps.joins_per_address_per_room
        with self._caps_lock:
            if self._joins.get((room_id, who), 0) >= cap:
                raise TableError(429, "TooManyMembers", f"this address has already added {cap} "
                                 f"members to this room (the limit per address)",
                                 retry_after=3600)
        key = new_key()
        member = {"id": secrets.token_urlsafe(12), "room": room_id, "name": clean,
                  "role": "player", "key_hash": key_hash(key), "created": _now()}
        try:
            self.store.add_member(member, max_members=self.caps.members_per_room)
        except NameTaken as exc:
            said = (f"'{clean}'" if exc.taken == clean else
                    f"'{exc.taken}', which '{clean}' would look like")
            raise TableError(409, "NameTaken", f"someone in this room is already called "
                                               f"{said}: choose another name") from None
        except RoomFull:
            raise TableError(507, "RoomFull", f"this room is full: it has "
                             f"{self.caps.members_per_room} members, the most a room may "
                             "have") from None
        with self._caps_lock:
            self._joins[(room_id, who)] = self._joins.get((room_id, who), 0) + 1
            if len(self._joins) > 100_000:
                self._joins.clear()  # memory stays bounded; the room cap still holds
        return {"member": {"id": member["id"], "name": clean, "role": "player"}, "key": key}

    def member(self, room_id: str, key: object) -> Member:
        """Who holds ``key`` in the room: 404 for no room, 401 for a missing or wrong key."""
        self.room(room_id)
        if not key:
            raise TableError(401, "Unauthorized", "this needs your key (join the room first)")
        # A key is short printable text: anything else (a list on the WebSocket, a lone
        # surrogate, a megabyte) is simply not a key of this room.
        row = (self.store.member_by_key(room_id, key_hash(key))
               if isinstance(key, str) and len(key) <= 200 and key.isascii() else None)
        if row is None:
            raise TableError(401, "Unauthorized", "this key does not belong to this room")
        return Member(row["id"], row["room"], row["name"], row["role"],
                      Sheet.from_json(row["sheet"]))

    def save_sheet(self, member: Member, data: Mapping[str, Any], who: str = "") -> Sheet:
        """Replace the member's stats and macros (422 with the name at fault); ``who`` is the
        client's address, which pays the same caps as a roll (``admit``)."""
        self.admit(member, who)
        try:
            sheet = check_sheet(data)
            check_sheet_rolls(sheet, self.room(member.room)["system"], self._aliases())
        except InputError as exc:
            raise TableError(422, "SheetError", exc.message,
                             **({"text": exc.text, "span": list(exc.span)}
                                if exc.text is not None and exc.span else {})) from None
        saved = sheet.to_json()
        self.store.save_sheet(member.id, saved)
        self.address_bytes.charge(f"ip:{who}", len(json.dumps(saved, ensure_ascii=False)))
        return sheet

    # -- rolling ---------------------------------------------------------------------------

    def expand(self, member: Member | None, text: object, system: str | None) -> Expansion:
        if not isinstance(text, str):
            raise TableError(422, "RequestError", "the roll's text must be text")
        check_unicode(text, "the roll's text")
        try:
            self.limits.check_length(text)
        except InputError as exc:
            raise RollError(exc, Expansion(text, text)) from None
        sheet = member.sheet if member is not None else Sheet()
        return expand(text, sheet, system, self._aliases())

    def roll(self, member: Member, text: object, visibility: object = "public",
             who: str = "", client_seed: object = "") -> dict[str, Any]:
        """Roll ``text`` for ``member`` and append it to the room's log; the stored entry.

        ``who`` is the client's address, whose rolls and stored bytes are metered too. The faces
        come from the room's seed (``fair.py``) with the member's ``client_seed``, unless the
        table was given a source of its own (tests).
        """
        if not isinstance(client_seed, str) or len(client_seed) > MAX_CLIENT_SEED or not (
                client_seed.isascii() and client_seed.isprintable()):
            raise TableError(422, "RequestError", f"a client seed is up to {MAX_CLIENT_SEED} "
                             "printable ASCII characters")
        if visibility not in VISIBILITIES:
            raise TableError(422, "RequestError", f"visibility is one of {', '.join(VISIBILITIES)}"
                                                  f", not {visibility!r}")
        self.admit(member, who)
        room = self.room(member.room)
        exp = self.expand(member, text, room["system"])
        seeded = self._end_stale_epoch(member) if self.source is None else None
        # One roll of a room at a time on this instance: the faces are rolled for the entry id
        # the roll will take, so rolls made at once each found their id taken and were rolled
        # again and again (8 members with a heavy roll: 20 % refused as Busy, each computed up
        # to 8 times). Queued, each is rolled once; only another instance's entry (PostgreSQL)
        # taking the id makes it roll again.
        with self._room_lock(room["id"]):
            for _ in range(8):  # the nonce is the entry's id: roll again if another took it
                source, fair, nonce = self._faces(member, room["id"], client_seed, seeded,
                                                  hidden=visibility != "public")
                body = self._rolled(member, exp, room, visibility, source, fair)
                try:
                    return self._append(room["id"], body, who, expect=nonce)
                except Moved:
                    seeded = None  # another instance stored first: read the seed again too
        raise TableError(503, "Busy", "the room's log is too busy to take this roll: try again",
                         retry_after=1)

    def admit(self, member: Member, who: str) -> None:
        """The caps every way of writing pays alike (a roll, a reveal, a fight or turn-order
        command, a seed epoch ended, a sheet saved): the member's rate, the address's rate and
        the bytes the address stored of late (429 naming which)."""
        self.roll_limit.check(member.id, "rolls")
        self.address_rolls.check(f"ip:{who}", "rolls from this address")
        if (wait := self.address_bytes.wait(f"ip:{who}")) > 0:
            raise TableError(429, "RateLimited", f"this address has stored too much in the last "
                             f"moments; try again in {wait:.1f} s", retry_after=round(wait, 2))

    def _faces(self, member: Member, room_id: str, client_seed: str,
               seeded: tuple[int, str] | None = None, hidden: bool = False,
               ) -> tuple[RecordingSource, dict[str, Any] | None, int | None]:
        """Where a roll's faces come from: the room's seed (``seeded``: its epoch and seed as
        just read) and the entry id it is rolled for (a hidden roll's secret too), or the
        table's own source (tests)."""
        given = self.source() if self.source is not None else None
        if given is not None:
            return RecordingSource(given), None, None
        epoch, seed = seeded or self.store.epoch(room_id)
        nonce = self.store.head(room_id)[0] + 1
        try:
            source, fair = fair_roll(seed, room_id, epoch, member.id, client_seed, nonce, hidden)
        except ValueError as exc:  # a hidden roll past the entries that have a secret
            raise TableError(507, "RoomFull", str(exc)) from None
        return RecordingSource(source), fair, nonce

    def _rolled(self, member: Member, exp: Expansion, room: Mapping[str, Any], visibility: object,
                source: RecordingSource, fair: dict[str, Any] | None) -> dict[str, Any]:
        """The entry of one roll with faces from ``source``."""
        try:
            result = astragal.roll(exp.text, source=source, limits=self.limits,
                                   default_system=room["system"])
        except InputError as exc:
            raise RollError(exc, exp) from None
        except Exception as exc:  # noqa: BLE001 - a bug in a game's rules: one line, no trace
            raise engine_error("roll", exp.text, exc) from None
        body = {
            "kind": "roll",
            "room": room["id"],
            "at": self.wall(),
            "member": member.id,
            "who": member.name,
            "role": member.role,
            "visibility": visibility,
            "text": exp.typed,
            "notation": exp.text,
            "system": result.system,
            "outcome": result.outcome,
            "verdict": result.transcript[-1] if result.transcript else result.outcome,
            "headline": headline(result.outcome, result.transcript, result.steps),
            "tone": outcome_kind(result.outcome, result.system),
            "transcript_text": roll_text(result),
            "roll": result.to_json(with_steps=False),  # the record as older versions replay it
            "draws": source.draws,
            "nonce": secrets.token_hex(16),
        }
        if fair is not None:
            body["fair"] = fair
        return body

    def _append(self, room_id: str, body: dict[str, Any], who: str,
                expect: int | None = None) -> dict[str, Any]:
        """Store an entry within the caps of an entry, a room and an address."""
        size = len(canonical(body).encode("utf-8")) + 400  # + id, prev, commit, hash and sig
        if size > self.caps.entry_bytes:
            raise TableError(413, "EntryTooLarge", f"this roll's record would be {size:,} bytes; "
                             f"a room stores at most {self.caps.entry_bytes:,} bytes per roll "
                             "(roll fewer dice, or fewer re-rolls)")
        self._check_room_space(room_id, size, None if expect is None else expect - 1)
        with self._caps_lock:
            latest = self._last_at.get(room_id, "")
        if isinstance(body.get("at"), str) and body["at"] < latest:
            # the wall clock stepped back (an NTP step, a VM restored): kept as it was read, and
            # flagged with the latest time before it, so no reader takes the order of `at` for
            # the order of the log (the ids are the order)
            body = {**body, "at_behind": latest}
        entry = self.store.append(room_id, body, expect)
        self._saw_at(room_id, entry)
        if self.on_entry is not None:
            self.on_entry(entry)
        self.address_bytes.charge(f"ip:{who}", size)
        with self._caps_lock:
            stored, when = self._log_bytes.get(room_id, (0, 0.0))
            self._log_bytes[room_id] = (stored + size, when)
        return entry

    def _saw_at(self, room_id: str, entry: Mapping[str, Any]) -> None:
        at = entry.get("at")
        if not isinstance(at, str):
            return
        with self._caps_lock:
            if at > self._last_at.get(room_id, ""):
                if len(self._last_at) > 10_000:
                    self._last_at.clear()
                self._last_at[room_id] = at

    def _check_room_space(self, room_id: str, size: int = 0, last: int | None = None) -> None:
        """507 when the room's log is at its cap of entries or bytes (``last``: its last id,
        when just read)."""
        caps = self.caps
        if last is None:
            last, _ = self.store.head(room_id)
        if last >= caps.entries_per_room:
            raise TableError(507, "RoomFull", f"this room's log is full: it holds {last:,} "
                             f"rolls, the most a room may keep (export it and open a new room)")
        now = time.monotonic()
        with self._caps_lock:
            known = self._log_bytes.get(room_id)
        if known is None or now - known[1] > 60.0:  # re-read now and then: other instances
            known = (self.store.log_bytes(room_id), now)
            with self._caps_lock:
                self._log_bytes[room_id] = known
                if len(self._log_bytes) > 10_000:
                    self._log_bytes = {room_id: known}
        if known[0] + size > caps.log_bytes_per_room:
            raise TableError(507, "RoomFull", f"this room's log is full: it holds "
                             f"{known[0] / 2**20:.1f} MiB, and a room keeps at most "
                             f"{caps.log_bytes_per_room / 2**20:.0f} MiB (export it and open a "
                             "new room)")

    # -- reading the log ---------------------------------------------------------------------

    @staticmethod
    def visible(entry: Mapping[str, Any], viewer: Member) -> dict[str, Any] | None:
        """The entry as ``viewer`` may see it (``powers.POWERS``' ``see``): whole, a stub (their
        own blind roll: that they rolled, not what), or not at all."""
        vis = entry.get("visibility", "public")
        mine = entry.get("member") == viewer.id
        if powers.allowed(viewer, "see", vis if vis in VISIBILITIES else "blind",
                          owner=entry.get("member")):
            return dict(entry)
        if vis == "blind" and mine:
            keep = ("id", "kind", "room", "at", "member", "who", "role", "visibility", "text",
                    "notation", "system")
            return {**{k: entry[k] for k in keep if k in entry}, "hidden": True}
        return None

    def log(self, viewer: Member, after: int = 0, limit: int = MAX_PAGE) -> dict[str, Any]:
        """Entries after ``after`` that ``viewer`` may see; ``last`` is the last id read."""
        count = max(1, min(limit, MAX_PAGE))
        # a page ends at ``page_bytes`` of entries too: 500 of the largest took ~50 MB of JSON
        # and ~360 MB to answer, and eight such requests at once took the server down
        rows, more = self.store.page(viewer.room, after, count, self.caps.page_bytes)
        if rows:
            self._saw_at(viewer.room, rows[-1])  # entries of other instances, too
        out = [v for e in rows if (v := self.visible(e, viewer)) is not None]
        last = rows[-1]["id"] if rows else after
        page = {"entries": out, "last": last, "more": more}
        if rows:  # the chain's head as of this read: players compare it with the GM's
            page["head"] = rows[-1]["hash"]
        return page

    def _all(self, room_id: str, last: int) -> Iterator[dict[str, Any]]:
        """The room's entries up to id ``last``, read ``caps.export_page`` at a time."""
        after = 0
        page = max(1, self.caps.export_page)
        while after < last:
            rows = self.store.entries(room_id, after, min(page, last - after))
            yield from rows
            if not rows:
                return
            after = rows[-1]["id"]

    def export_chunks(self, viewer: Member) -> Iterator[str]:
        """The JSON export as pieces of text, a page of entries at a time (bounded memory).

        The log is exported up to its head when the export begins (later rolls are not in it),
        so the stated head is known first.
        """
        room = self.room(viewer.room)
        last, head = self.store.head(room["id"])
        header = {"format": FORMAT, "room": {k: room[k] for k in ("id", "name", "system")},
                  "exported_at": _now(), "exported_by": viewer.to_json(), "head": head,
                  "key": self.signer.public}
        yield json.dumps(header, ensure_ascii=False, separators=(",", ":"))[:-1] + ',"entries":['
        first = True
        for e in self._all(room["id"], last):
            seen = self.visible(e, viewer)
            shown = e if seen is not None and not seen.get("hidden") else redact(e)
            yield ("" if first else ",") + json.dumps(shown, ensure_ascii=False,
                                                      separators=(",", ":"))
            first = False
        yield "]}"

    def export(self, viewer: Member) -> dict[str, Any]:
        """The whole log as ``viewer`` may see it; unseen entries stay as links of the chain."""
        data: dict[str, Any] = json.loads("".join(self.export_chunks(viewer)))
        return data

    def export_markdown_chunks(self, viewer: Member) -> Iterator[str]:
        """The log as a Markdown table (user text escaped so it renders as text), in pieces."""
        room = self.room(viewer.room)
        last, head = self.store.head(room["id"])
        yield "\n".join([
            f"# {_md(room['name'])}: roll log", "",
            (f"System: {_md(room['system'])}. Exported {_now()} by "
             f"{_md(viewer.name)}. Head hash `{head}` "
             "(check with `astragal verify-log` on the JSON export)."), "",
            "| # | when (UTC) | who | roll | dice | verdict | seen by |",
            "|---:|---|---|---|---|---|---|"]) + "\n"
        for raw in self._all(room["id"], last):
            seen = self.visible(raw, viewer)
            if seen is None or seen.get("hidden"):
                yield f"| {raw['id']} | | | *hidden* | | | |\n"
                continue
            e = seen
            if e.get("kind", "roll") != "roll":  # a reveal, a fight or turn-order change
                what = (f"reveals #{e['reveals']}" if e.get("kind") == "reveal"
                        else f"{e.get('kind')}: `{_code(e.get('text', ''))}`")
                yield (f"| {e['id']} | {_when(e)} | "
                       f"{_md(e['who'])} | {what} | | "
                       f"{_md(e.get('message', e.get('of', {}).get('verdict', '')))} | all |\n")
                continue
            dice = _md(dice_text(e["roll"]["dice"]))
            roll = f"`{_code(e['text'])}`"
            if e["notation"] != e["text"]:
                roll += f" → `{_code(e['notation'])}`"
            shown = {"public": "all", "gm": "GM + roller", "blind": "GM"}[e["visibility"]]
            yield (f"| {e['id']} | {_when(e)} | "
                   f"{_md(e['who'])} | {roll} | {dice} | "
                   f"{_md(e.get('headline') or e['verdict'])} | {shown} |\n")

    def export_markdown(self, viewer: Member) -> str:
        """The log as a Markdown table (user text escaped so it renders as text)."""
        return "".join(self.export_markdown_chunks(viewer))


def _when(entry: Mapping[str, Any]) -> str:
    """An entry's time for the Markdown table, flagged when the clock had stepped back."""
    when = _md(str(entry.get("at", "")).replace("T", " ").rstrip("Z"))
    if entry.get("at_behind"):
        when += f" (clock behind: after {_md(str(entry['at_behind']))})"
    return when


def _md(text: str) -> str:
    """Plain text for a Markdown table cell: no HTML, no pipes, no line breaks."""
    return html.escape(" ".join(str(text).split())).replace("|", "\\|").replace("`", "'") \
        .replace("*", "\\*").replace("_", "\\_").replace("[", "\\[")


def _code(text: str) -> str:
    return " ".join(str(text).split()).replace("`", "'").replace("|", "\\|")
