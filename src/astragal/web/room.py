"""The table's rules, apart from HTTP: rooms, members, keys, rolling, who sees what, export.

The server rolls (never the browser): the text is expanded with the player's sheet, rolled with the
public API under the room's default system, and the faces are recorded as they are drawn so the log
can replay them later. Visibility (who may see an entry):

``public``  everyone in the room
``gm``      the GM and the player who rolled
``blind``   the GM only; the player who rolled learns that they rolled, not what

An entry a reader may not see is never sent to them: the API and the WebSocket filter per reader.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import logging
import random
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NoReturn

import astragal
from astragal import Distribution, InputError, LimitError, Limits, Source, SystemSource
from astragal.render import odds_text, outcome_words, roll_text

from .caps import Budget, Caps
from .chain import FORMAT, canonical, redact
from .fair import FairSource, commitment
from .luck import WINDOW, Busy, LuckBook
from .names import hidden_character
from .oddspool import OddsPool, shared_pool, short_error
from .sheet import Expansion, Sheet, check_sheet, expand
from .signing import Signer
from .store import MAX_PAGE, Moved, NameTaken, RoomFull, Store
from .tabletools import (
    EXAMPLES,
    check_sheet_rolls,
    fight_command,
    headline,
    outcome_kind,
    turns_command,
)

log = logging.getLogger("astragal.web")

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
MAX_ODDS_VALUES = 2000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class TableError(Exception):
    """A request the table refuses: an HTTP status, an error kind and a message for the player."""

    def __init__(self, status: int, kind: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.extra = extra

    def to_json(self) -> dict[str, Any]:
        """``{"error": kind, "message": …}`` plus any details."""
        return {"error": self.kind, "message": self.message, **self.extra}


class RollError(TableError):
    """Notation the game cannot read (422): the message and the span in what the player typed."""

    def __init__(self, exc: InputError, expansion: Expansion) -> None:
        extra: dict[str, Any] = {"text": expansion.typed,
                                 "span": list(s) if (s := expansion.typed_span(exc.span)) else None}
        if expansion.changed:
            extra["expanded"] = exc.text or expansion.text
            extra["expanded_span"] = list(exc.span) if exc.span else None
        pretty = InputError(exc.message, expansion.typed, expansion.typed_span(exc.span)).pretty()
        extra["pretty"] = pretty
        super().__init__(422, type(exc).__name__, exc.message, **extra)


def new_key() -> str:
    """An unguessable key (256 bits from the OS)."""
    return secrets.token_urlsafe(32)


def new_room_id() -> str:
    """A room's id (96 random bits) that starts with a letter or digit: an id starting with '-'
    would read as an option on a command line (``astragal verify-log ROOM``)."""
    while True:
        rid = secrets.token_urlsafe(12)
        if rid[0].isalnum():
            return rid


def key_hash(key: str) -> str:
    """What the store keeps instead of a key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RecordingSource(Source):
    """Faces from another source, recorded as ``[side, size, face]`` in the order drawn."""

    def __init__(self, inner: Source | None = None) -> None:
        self.inner = inner if inner is not None else SystemSource()
        self.draws: list[list[int]] = []

    def face(self, size: int, stream: int = 0) -> int:
        value = self.inner.face(size, stream)
        self.draws.append([stream, size, value])
        return value

    def finish(self) -> None:
        self.inner.finish()


class RateLimit:
    """A token bucket per key: ``burst`` at once, then ``rate`` per second."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def wait(self, key: str) -> float:
        """Take a token: 0.0 when allowed, else the seconds until one is free."""
        now = self.clock()
        with self._lock:
            tokens, at = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - at) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                if len(self._buckets) > 50_000:  # forget the idle ones: memory stays bounded
                    self._buckets = {k: v for k, v in self._buckets.items()
                                     if v[0] + (now - v[1]) * self.rate < self.burst}
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate

    def check(self, key: str, what: str) -> None:
        """Raise a 429 ``TableError`` naming the limit when ``key`` is over it."""
        wait = self.wait(key)
        if wait > 0:
            raise TableError(429, "RateLimited",
                             f"too many {what}: at most {self.rate:g} per second (bursts of "
                             f"{self.burst}); try again in {wait:.1f} s",
                             retry_after=round(wait, 2))


@dataclass(frozen=True, slots=True)
class Member:
    """Someone in a room, as known from their key."""

    id: str
    room: str
    name: str
    role: str
    sheet: Sheet

    @property
    def is_gm(self) -> bool:
        return self.role == "gm"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "role": self.role}


def check_unicode(text: str, what: str) -> None:
    """422 for text that cannot be stored or sent as UTF-8 (a lone surrogate from ``\\ud800``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TableError(422, "RequestError", f"{what} is not valid Unicode text (a lone "
                                              f"surrogate at character {exc.start + 1})") from None


def _clean_name(value: object, what: str, limit: int, required: bool = True,
                visible: bool = True) -> str:
    if not isinstance(value, str):
        raise TableError(422, "RequestError", f"{what} must be text")
    check_unicode(value, what)
    text = " ".join(value.split())
    if required and not text:
        raise TableError(422, "RequestError", f"{what} is empty")
    if len(text) > limit:
        raise TableError(422, "RequestError", f"{what} is {len(text)} characters; the limit is "
                                              f"{limit}")
    if _CONTROL.search(text):
        raise TableError(422, "RequestError", f"{what} has a control character")
    if visible and (why := hidden_character(text)) is not None:
        raise TableError(422, "RequestError", f"{what} {why}")
    return text


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
                         "examples": list(EXAMPLES.get(name, ()))}
    return {"systems": systems, "aliases": aliases}


class Table:
    """The web table over a ``Store``: every operation the HTTP API offers, with its checks."""

    def __init__(self, store: Store, *, limits: Limits | None = None,
                 source: Callable[[], Source | None] | None = None,
                 roll_rate: tuple[float, int] = (2.0, 6),
                 odds_rate: tuple[float, int] = (2.0, 6),
                 caps: Caps | None = None, pool: OddsPool | None = None,
                 signer: Signer | None = None) -> None:
        self.store = store
        # Every entry is signed with the table's key (a fresh one when none is given: tests)
        self.signer = signer or Signer.generate()
        store.sign = self.signer.sign
        # The web's own bounds: the same engine limits, with exact odds kept well inside a
        # request's time (every odds request holds a worker thread).
        self.limits = limits or Limits(max_notation_length=500, max_odds_work=5_000_000)
        self.source = source
        self.caps = caps = caps or Caps()
        self.roll_limit = RateLimit(*roll_rate)
        self.odds_limit = RateLimit(*odds_rate)
        self.address_rolls = RateLimit(*caps.rolls_per_address)
        self.address_bytes = Budget(*caps.stored_bytes_per_address)
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
        self._epoch_seen: dict[str, tuple[int, float]] = {}  # room -> (epoch, first seen)
        self._joins: dict[tuple[str, str], int] = {}  # (room, address) -> members added
        self._log_bytes: dict[str, tuple[int, float]] = {}  # room -> (bytes, when read)
        self._caps_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._state_cache: dict[str, dict[str, Any]] = {}
        self._room_locks: dict[str, threading.Lock] = {}

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
        room = {"id": new_room_id(), "name": room_name, "system": key,
                "created": _now()}
        gm_key = new_key()
        member = {"id": secrets.token_urlsafe(12), "room": room["id"], "name": gm, "role": "gm",
                  "key_hash": key_hash(gm_key), "created": room["created"]}
        self.store.create_room(room, member)
        return {"room": room, "member": {"id": member["id"], "name": gm, "role": "gm"},
                "key": gm_key}

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

    def save_sheet(self, member: Member, data: Mapping[str, Any]) -> Sheet:
        """Replace the member's stats and macros (422 with the name at fault)."""
        try:
            sheet = check_sheet(data)
            check_sheet_rolls(sheet, self.room(member.room)["system"], self._aliases())
        except InputError as exc:
            raise TableError(422, "SheetError", exc.message,
                             **({"text": exc.text, "span": list(exc.span)}
                                if exc.text is not None and exc.span else {})) from None
        self.store.save_sheet(member.id, sheet.to_json())
        return sheet

    # -- rolling and odds --------------------------------------------------------------------

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
        self.roll_limit.check(member.id, "rolls")
        self.address_rolls.check(f"ip:{who}", "rolls from this address")
        if (wait := self.address_bytes.wait(f"ip:{who}")) > 0:
            raise TableError(429, "RateLimited", f"this address has stored too much in the last "
                             f"moments; try again in {wait:.1f} s", retry_after=round(wait, 2))
        room = self.room(member.room)
        self._check_room_space(room["id"])
        exp = self.expand(member, text, room["system"])
        if self.source is None:
            self._end_stale_epoch(member)
        for _ in range(8):  # the nonce is the entry's id: roll again if another entry took it
            source, fair, nonce = self._faces(member, room["id"], client_seed)
            body = self._rolled(member, exp, room, visibility, source, fair)
            try:
                return self._append(room["id"], body, who, expect=nonce)
            except Moved:
                continue
        raise TableError(503, "Busy", "the room's log is too busy to take this roll: try again",
                         retry_after=1)

    def _faces(self, member: Member, room_id: str,
               client_seed: str) -> tuple[RecordingSource, dict[str, Any] | None, int | None]:
        """Where a roll's faces come from: the room's seed (and the entry id it is rolled for),
        or the table's own source (tests)."""
        given = self.source() if self.source is not None else None
        if given is not None:
            return RecordingSource(given), None, None
        epoch, seed = self.store.epoch(room_id)
        nonce = self.store.head(room_id)[0] + 1
        fair = {"epoch": epoch, "commitment": commitment(seed), "client": client_seed,
                "nonce": nonce}
        return (RecordingSource(FairSource(seed, room_id, epoch, member.id, client_seed, nonce)),
                fair, nonce)

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
            "at": _now(),
            "member": member.id,
            "who": member.name,
            "role": member.role,
            "visibility": visibility,
            "text": exp.typed,
            "notation": exp.text,
            "system": result.system,
            "outcome": result.outcome,
            "verdict": result.transcript[-1] if result.transcript else result.outcome,
            "headline": headline(result.outcome, result.transcript),
            "tone": outcome_kind(result.outcome),
            "transcript_text": roll_text(result),
            "roll": result.to_json(),
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
        self._check_room_space(room_id, size)
        entry = self.store.append(room_id, body, expect)
        self.address_bytes.charge(f"ip:{who}", size)
        with self._caps_lock:
            stored, when = self._log_bytes.get(room_id, (0, 0.0))
            self._log_bytes[room_id] = (stored + size, when)
        return entry

    def _check_room_space(self, room_id: str, size: int = 0) -> None:
        """507 when the room's log is at its cap of entries or bytes."""
        caps = self.caps
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

    def odds(self, text: object, system: str | None, member: Member | None = None,
             who: str = "") -> dict[str, Any]:
        """Exact odds of ``text`` (expanded with the member's sheet): JSON and the CLI's text.

        Metered by CPU time per address (``caps.odds_cpu_per_address``), one computation at a
        time per address, each in a worker process cut at ``caps.odds_seconds``. Refusals are
        cached: by the text, and computations that were cut (or ran out of memory) by the shape
        of their canonical form, every number replaced by its size in bits, for
        ``REFUSED_SHAPE_SECONDS``: ``d60000ro<59999`` and ``d60001ro<59998`` are one shape,
        refused at once after the first was cut; numbers that double or halve are a new shape,
        which costs one more cut (and the address's budget).
        """
        self.odds_limit.check(member.id if member is not None else f"ip:{who}", "odds requests")
        address = f"ip:{who}"
        exp = self.expand(member, text, system)
        cache_key = (exp.text, system)
        with self._odds_lock:
            hit = self._odds_cache.get(cache_key)
            refused = self._refused.get(cache_key)
        if refused is not None:
            raise TableError(500 if refused["error"] == "EngineError" else 422, refused["error"],
                             refused["message"],
                             **{k: v for k, v in refused.items() if k not in ("error", "message")})
        if hit is not None:
            return {"text": exp.typed, **hit}
        if (wait := self.odds_cpu.wait(address)) > 0:
            raise TableError(429, "RateLimited", f"this address has used its share of the "
                             f"server's time for odds (at most {self.odds_cpu.rate:g} CPU-seconds "
                             f"per second, bursts of {self.odds_cpu.burst:g}); try again in "
                             f"{wait:.1f} s", retry_after=round(wait, 2))
        with self._odds_lock:
            if address in self._odds_running:
                raise TableError(429, "RateLimited", "odds from this address are already being "
                                 "computed: one at a time", retry_after=1)
            self._odds_running.add(address)
        try:
            return {"text": exp.typed, **self._compute_odds(exp, system, address)}
        finally:
            with self._odds_lock:
                self._odds_running.discard(address)

    def _compute_odds(self, exp: Expansion, system: str | None, address: str) -> dict[str, Any]:
        start = time.thread_time()
        try:
            try:
                canon = str(astragal.parse(exp.text, limits=self.limits, default_system=system))
            except InputError as exc:
                self._refuse((exp.text, system), RollError(exc, exp))
            except Exception as exc:  # noqa: BLE001 - a bug in a game's parser
                raise engine_error("odds", exp.text, exc) from None
        finally:
            self.odds_cpu.charge(address, time.thread_time() - start)
        shape = (_SHAPE_NUMBER.sub(lambda m: f"#{int(m.group()).bit_length()}", canon), system)
        with self._odds_lock:
            said, when = self._refused_shapes.get(shape, ("", 0.0))
        if said and time.monotonic() - when < REFUSED_SHAPE_SECONDS:
            self._refuse((exp.text, system), RollError(LimitError(
                f"{said} (a roll of the same shape was refused: its numbers are within a factor "
                "of two of this one's)", exp.text, (0, len(exp.text))), exp))
        outcome = self.pool.run(exp.text, system, self.limits)  # may be killed at its cut
        if outcome is None:
            raise TableError(503, "Busy", "the server is computing other odds: try again in a "
                             "moment", retry_after=2)
        self.odds_cpu.charge(address, outcome.cpu)
        if outcome.kind in ("overrun", "memory"):
            what = (f"took over {self.pool.seconds:g} s, the most the web table spends on one "
                    "roll's odds" if outcome.kind == "overrun" else
                    f"needed over {self.pool.memory / 2**30:g} GiB of memory, the most the web "
                    "table gives one roll's odds")
            message = f"the exact odds of this roll {what}"
            log.warning("odds cut off (%s): %r", outcome.kind, exp.text[:100])
            with self._odds_lock:
                if len(self._refused_shapes) > 4096:
                    self._refused_shapes.clear()
                self._refused_shapes[shape] = (message, time.monotonic())
            # Not cached by its text: the shape holds it, and forgets it after a while (a cut
            # on a machine busy with other work should not refuse a roll for ever).
            raise RollError(LimitError(message + " (the command line has no such cut)",
                                       exp.text, (0, len(exp.text))), exp)
        if outcome.kind == "input":
            kind, message, text, span = outcome.value
            error = LimitError(message, text, tuple(span) if span else None) \
                if kind == "LimitError" else InputError(message, text, tuple(span) if span else None)
            refusal = RollError(error, exp)
            refusal.kind = kind
            self._refuse((exp.text, system), refusal)
        if outcome.kind == "crash":
            log.error("engine error in odds of %r: %s", exp.text[:100], outcome.value)
            self._refuse((exp.text, system), TableError(500, "EngineError", _ENGINE_MESSAGE))
        hit: dict[str, Any] = outcome.value
        with self._odds_lock:
            if len(self._odds_cache) > 512:
                self._odds_cache.clear()
            self._odds_cache[(exp.text, system)] = hit
        return hit

    def luck(self, viewer: Member) -> dict[str, Any]:
        """The Luck panel of ``viewer``'s room: each roll they may see placed in its own exact
        odds (the last ``luck.WINDOW`` entries), and each member's and session's luck. Odds are
        computed in the odds workers, charged to the room's own share of the server's time."""
        self.odds_limit.check(viewer.id, "luck reports")
        room_id = viewer.room
        address = f"luck:{room_id}"

        def odds_of(notation: str, system: str) -> Mapping[str, Any]:
            key = (notation, system)
            with self._odds_lock:
                hit, refused = self._odds_cache.get(key), self._refused.get(key)
            if refused is not None:
                raise TableError(422, refused["error"], refused["message"])
            if hit is not None:
                return hit
            if self.odds_cpu.wait(address) > 0:
                raise Busy
            try:
                return self._compute_odds(Expansion(notation, notation), system, address)
            except TableError as exc:
                if exc.status in (429, 503):
                    raise Busy from None
                raise

        last = self.store.head(room_id)[0]
        seed = int.from_bytes(hashlib.sha256(room_id.encode()).digest()[:4], "big")
        return self.luckbook.report(self._visible_from(viewer, max(0, last - WINDOW), last),
                                    odds_of, seed)

    def _visible_from(self, viewer: Member, after: int, last: int) -> Iterator[dict[str, Any]]:
        """The entries after ``after`` up to ``last`` that ``viewer`` may see, a page at a time."""
        page = max(1, self.caps.export_page)
        while after < last:
            rows = self.store.entries(viewer.room, after, min(page * 8, last - after))
            if not rows:
                return
            for e in rows:
                if (v := self.visible(e, viewer)) is not None:
                    yield v
            after = rows[-1]["id"]

    def _refuse(self, key: tuple[str, str | None], error: TableError) -> NoReturn:
        """Cache the refusal of ``key`` and raise it."""
        with self._odds_lock:
            if len(self._refused) > 4096:
                self._refused.clear()
            self._refused[key] = error.to_json()
        raise error

    # -- the table's tools: reveal, keys, members, fight tracker, turn order -----------------

    def _entry(self, room_id: str, entry_id: object) -> dict[str, Any]:
        if not isinstance(entry_id, int) or isinstance(entry_id, bool) or entry_id < 1:
            raise TableError(422, "RequestError", "an entry's id is a whole number ≥ 1")
        rows = self.store.entries(room_id, entry_id - 1, 1)
        if not rows or rows[0]["id"] != entry_id:
            raise TableError(404, "NotFound", f"there is no entry {entry_id} in this room")
        return rows[0]

    def _base(self, member: Member, kind: str) -> dict[str, Any]:
        return {"kind": kind, "room": member.room, "at": _now(), "member": member.id,
                "who": member.name, "role": member.role, "visibility": "public"}

    def reveal(self, member: Member, entry_id: object, who: str = "") -> dict[str, Any]:
        """Show a GM-only or blind roll to the whole room, as a new public entry: the GM may
        reveal any, a player their own. The hidden entry itself never changes (the chain)."""
        entry = self._entry(member.room, entry_id)
        if entry.get("kind", "roll") != "roll" or entry.get("visibility") == "public":
            raise TableError(409, "NotHidden", f"entry {entry_id} is not a hidden roll")
        if not (member.is_gm or entry.get("member") == member.id):
            raise TableError(403, "Forbidden", "only the GM, or whoever rolled it, may reveal "
                                               "a hidden roll")
        self.roll_limit.check(member.id, "rolls")
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

    def _end_stale_epoch(self, member: Member) -> None:
        """An epoch rolled in for more than ``caps.epoch_hours`` (since this server first saw a
        roll in it) ends by itself before the next roll: its seed is revealed in the log, so no
        epoch stays unverifiable because nobody ended it."""
        epoch, _ = self.store.epoch(member.room)
        now = self.clock()
        with self._odds_lock:
            known = self._epoch_seen.get(member.room)
            if known is None or known[0] != epoch:
                if len(self._epoch_seen) > 100_000:
                    self._epoch_seen.clear()
                self._epoch_seen[member.room] = (epoch, now)
                return
        if now - known[1] < self.caps.epoch_hours * 3600:
            return
        with contextlib.suppress(TableError):  # another request ended it first
            self._end_epoch(member, "the table (an epoch ends after "
                            f"{self.caps.epoch_hours:g} hours)", "")

    def end_epoch(self, member: Member, who: str = "") -> dict[str, Any]:
        """The GM ends the seed epoch: its seed is revealed in the log (every face of the epoch
        can then be derived again) and a new epoch starts with a new commitment."""
        if not member.is_gm:
            raise TableError(403, "Forbidden", "only the GM may end a seed epoch")
        self.roll_limit.check(member.id, "rolls")
        return self._end_epoch(member, None, who)

    def _end_epoch(self, member: Member, by: str | None, who: str) -> dict[str, Any]:
        epoch, seed = self.store.epoch(member.room)
        made = self.store.next_epoch(member.room, epoch)
        if made is None:
            raise TableError(409, "Conflict", f"epoch {epoch} has just been ended")
        body = {**self._base(member, "seed"), "epoch": epoch, "seed": seed,
                "commitment": commitment(seed), "next": made[0],
                "next_commitment": commitment(made[1])}
        if by is not None:  # the schedule's, not a person's: it stands before the roll that
            body.update({"member": "", "who": by, "role": "table"})  # found the epoch stale
        return self._append(member.room, body, who)

    def _gm_over(self, gm: Member, member_id: object) -> dict[str, Any]:
        if not gm.is_gm:
            raise TableError(403, "Forbidden", "only the GM may do this")
        target = next((m for m in self.store.members(gm.room) if m["id"] == member_id), None)
        if target is None:
            raise TableError(404, "NotFound", "no such member in this room")
        return target

    def reissue_key(self, gm: Member, member_id: object) -> dict[str, Any]:
        """A new key for a member (the GM, for a player who lost theirs): the old key stops
        working at once. Returns the member and the new key."""
        target = self._gm_over(gm, member_id)
        key = new_key()
        self.store.set_key(target["id"], key_hash(key))
        return {"member": target, "key": key}

    def remove_member(self, gm: Member, member_id: object) -> dict[str, Any]:
        """The GM takes a player out of the room: their key stops working, their rolls stay."""
        target = self._gm_over(gm, member_id)
        if target["id"] == gm.id:
            raise TableError(409, "Conflict", "the GM cannot remove themself")
        self.store.remove_member(target["id"])
        return target

    def _states(self, room_id: str) -> dict[str, Any]:
        """The latest fight and turn-order states of a room (read forward from a cache)."""
        with self._state_lock:
            known = self._state_cache.get(room_id, {"last": 0})
        known = dict(known)
        while True:
            rows = self.store.entries(room_id, known["last"], MAX_PAGE)
            for e in rows:
                if e.get("kind") in ("fight", "turns"):
                    known[e["kind"]] = e.get("state")
            if rows:
                known["last"] = rows[-1]["id"]
            if len(rows) < MAX_PAGE:
                break
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
        word = (text.split() or [""])[0].lower()
        if word in ("new", "add", "set", "remove", "option") and not member.is_gm:
            raise TableError(403, "Forbidden", f"only the GM may '{word}' in the fight")
        self.roll_limit.check(member.id, "rolls")
        self.address_rolls.check(f"ip:{who}", "rolls from this address")

        def edit(states: dict[str, Any], expect: int) -> dict[str, Any] | None:
            source, fair, nonce = self._faces(member, member.room, "")
            if nonce is not None and nonce != expect:
                return None  # an entry came after the state was read: read it again
            try:
                message, new, as_json = fight_command(states.get("fight"), text, source)
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
        self.roll_limit.check(member.id, "rolls")

        def edit(states: dict[str, Any], _: int) -> dict[str, Any]:
            try:
                message, new = turns_command(states.get("turns"), text)
            except InputError as exc:
                raise RollError(exc, Expansion(text, text)) from None
            return {**self._base(member, "turns"), "text": text, "message": message,
                    "state": new}

        return self._edit_state(member, edit, who)

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

    # -- reading the log ---------------------------------------------------------------------

    @staticmethod
    def visible(entry: Mapping[str, Any], viewer: Member) -> dict[str, Any] | None:
        """The entry as ``viewer`` may see it: whole, a stub (own blind roll), or not at all."""
        vis = entry.get("visibility", "public")
        if vis == "public" or viewer.is_gm:
            return dict(entry)
        mine = entry.get("member") == viewer.id
        if vis == "gm" and mine:
            return dict(entry)
        if vis == "blind" and mine:
            keep = ("id", "kind", "room", "at", "member", "who", "role", "visibility", "text",
                    "notation", "system")
            return {**{k: entry[k] for k in keep if k in entry}, "hidden": True}
        return None

    def log(self, viewer: Member, after: int = 0, limit: int = MAX_PAGE) -> dict[str, Any]:
        """Entries after ``after`` that ``viewer`` may see; ``last`` is the last id read."""
        rows = self.store.entries(viewer.room, after, max(1, min(limit, MAX_PAGE)))
        out = [v for e in rows if (v := self.visible(e, viewer)) is not None]
        last = rows[-1]["id"] if rows else after
        page = {"entries": out, "last": last, "more": len(rows) >= max(1, min(limit, MAX_PAGE))}
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
                yield (f"| {e['id']} | {e['at'].replace('T', ' ').rstrip('Z')} | "
                       f"{_md(e['who'])} | {what} | | "
                       f"{_md(e.get('message', e.get('of', {}).get('verdict', '')))} | all |\n")
                continue
            dice = " ".join(
                f"d{d['size']}:{d['face']}" + ("" if d.get("kept", True) else "(dropped)")
                for d in e["roll"]["dice"])
            roll = f"`{_code(e['text'])}`"
            if e["notation"] != e["text"]:
                roll += f" → `{_code(e['notation'])}`"
            shown = {"public": "all", "gm": "GM + roller", "blind": "GM"}[e["visibility"]]
            yield (f"| {e['id']} | {e['at'].replace('T', ' ').rstrip('Z')} | "
                   f"{_md(e['who'])} | {roll} | {dice} | "
                   f"{_md(e['verdict'])} | {shown} |\n")

    def export_markdown(self, viewer: Member) -> str:
        """The log as a Markdown table (user text escaped so it renders as text)."""
        return "".join(self.export_markdown_chunks(viewer))


_SHAPE_NUMBER = re.compile(r"\d+")
REFUSED_SHAPE_SECONDS = 600.0  # how long a cut-off computation's shape is refused at once
_ENGINE_MESSAGE = ("astragal failed on this roll (a bug in the game's rules code, now in the "
                   "server's log); nothing was stored")


def engine_error(what: str, text: str, exc: BaseException) -> TableError:
    """A bug in a game's code met by a request: one line in the log, a 500 for the player."""
    log.error("engine error in %s of %r: %s", what, text[:100], short_error(exc))
    return TableError(500, "EngineError", _ENGINE_MESSAGE)


def odds_page(text: str, system: str | None, limits: Limits) -> dict[str, Any]:
    """The web table's answer for the odds of ``text``: what an odds worker computes.

    Raises ``InputError`` (``LimitError`` for more than ``MAX_ODDS_VALUES`` values).
    """
    result = astragal.odds(text, limits=limits, default_system=system)
    dist = result.distribution
    if len(dist) > MAX_ODDS_VALUES:
        # A page of 10 000 rows helps nobody, and its JSON and text cost seconds each.
        raise LimitError(f"the odds of this roll have {len(dist)} possible values; the web table "
                         f"shows at most {MAX_ODDS_VALUES} (the command line has no such limit)",
                         text, (0, len(text)))
    return {"notation": text, "system": result.system, "value_name": result.value_name,
            "odds": result.to_json(), "odds_text": odds_text(result),
            # For the page, in order (a JSON object's numeric keys lose it in JavaScript):
            # [key, words, P], and [value, P(=), P(>=), P(<=)].
            "outcome_rows": [[str(k), outcome_words(str(k)), p]
                             for k, p in result.outcomes.items()],
            "tones": {str(k): outcome_kind(str(k)) for k in result.outcomes},
            "value_rows": _value_rows(dist)}


def _value_rows(dist: Distribution) -> list[list[Any]]:
    """``[value, P(=), P(>=), P(<=)]`` per value, in the engine's order, in linear time.

    ``Distribution.at_least`` sums afresh for each value (quadratic: 51 s for a d10000). Here
    the probabilities are made exact integers over one power of two, summed once in order of
    value, and each tail divided back: Python rounds an integer division correctly, as ``fsum``
    rounds its exact sum, so every number equals ``at_least``/``at_most`` to the last bit.
    """
    items = dist.items()
    if not all(isinstance(k, (int, float)) and not isinstance(k, bool) for k, _ in items):
        return [[str(k), p, dist.at_least(k), dist.at_most(k)] for k, p in items]
    ratios = [p.as_integer_ratio() for _, p in items]
    scale = max((d for _, d in ratios), default=1)
    exact = [n * (scale // d) for n, d in ratios]
    order = sorted(range(len(items)), key=lambda i: items[i][0])
    total = sum(exact)
    at_most: dict[int, int] = {}
    below = 0
    for i in order:
        below += exact[i]
        at_most[i] = below
    return [[str(k), p, (total - at_most[i] + exact[i]) / scale, at_most[i] / scale]
            for i, (k, p) in enumerate(items)]


def _md(text: str) -> str:
    """Plain text for a Markdown table cell: no HTML, no pipes, no line breaks."""
    return html.escape(" ".join(str(text).split())).replace("|", "\\|").replace("`", "'") \
        .replace("*", "\\*").replace("_", "\\_").replace("[", "\\[")


def _code(text: str) -> str:
    return " ".join(str(text).split()).replace("`", "'").replace("|", "\\|")
