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

import hashlib
import html
import re
import secrets
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import astragal
from astragal import Distribution, InputError, LimitError, Limits, Source, SystemSource
from astragal.render import odds_text, outcome_words, roll_text

from .chain import FORMAT, GENESIS, redact
from .sheet import Expansion, Sheet, check_sheet, expand
from .store import MAX_PAGE, NameTaken, Store

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
]

VISIBILITIES = ("public", "gm", "blind")
MAX_NAME = 40
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


# Characters a name may not hold: controls, and the invisible ones (format characters such as
# zero-width spaces and bidirectional overrides, unassigned or private code points, line and
# paragraph separators) with which one player could pass for another, or for the GM.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


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
    hidden = next((c for c in text if unicodedata.category(c) in _HIDDEN_CATEGORIES), None) \
        if visible else None
    if hidden is not None:
        raise TableError(422, "RequestError", f"{what} has an invisible character "
                                              f"(U+{ord(hidden):04X}): use letters you can see")
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
                         "prefixes": [f"{a}:" for a in (*alias_list, name)]}
    return {"systems": systems, "aliases": aliases}


class Table:
    """The web table over a ``Store``: every operation the HTTP API offers, with its checks."""

    def __init__(self, store: Store, *, limits: Limits | None = None,
                 source: Callable[[], Source] = SystemSource,
                 roll_rate: tuple[float, int] = (2.0, 6),
                 odds_rate: tuple[float, int] = (2.0, 6)) -> None:
        self.store = store
        # The web's own bounds: the same engine limits, with exact odds kept well inside a
        # request's time (every odds request holds a worker thread).
        self.limits = limits or Limits(max_notation_length=500, max_odds_work=5_000_000)
        self.source = source
        self.roll_limit = RateLimit(*roll_rate)
        self.odds_limit = RateLimit(*odds_rate)
        self._systems: dict[str, Any] | None = None
        self._odds_cache: dict[tuple[str, str | None], dict[str, Any]] = {}
        self._odds_lock = threading.Lock()

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

    def join(self, room_id: str, name: object) -> dict[str, Any]:
        """Join a room as a player with a display name; returns the member and their key."""
        self.room(room_id)
        clean = _clean_name(name, "your name", MAX_NAME)
        key = new_key()
        member = {"id": secrets.token_urlsafe(12), "room": room_id, "name": clean,
                  "role": "player", "key_hash": key_hash(key), "created": _now()}
        try:
            self.store.add_member(member)
        except NameTaken:
            raise TableError(409, "NameTaken", f"someone in this room is already called "
                                               f"'{clean}': choose another name") from None
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
        except InputError as exc:
            raise TableError(422, "SheetError", exc.message) from None
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

    def roll(self, member: Member, text: object, visibility: object = "public") -> dict[str, Any]:
        """Roll ``text`` for ``member`` and append it to the room's log; the stored entry."""
        if visibility not in VISIBILITIES:
            raise TableError(422, "RequestError", f"visibility is one of {', '.join(VISIBILITIES)}"
                                                  f", not {visibility!r}")
        self.roll_limit.check(member.id, "rolls")
        room = self.room(member.room)
        exp = self.expand(member, text, room["system"])
        source = RecordingSource(self.source())
        try:
            result = astragal.roll(exp.text, source=source, limits=self.limits,
                                   default_system=room["system"])
        except InputError as exc:
            raise RollError(exc, exp) from None
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
            "transcript_text": roll_text(result),
            "roll": result.to_json(),
            "draws": source.draws,
            "nonce": secrets.token_hex(16),
        }
        return self.store.append(room["id"], body)

    def odds(self, text: object, system: str | None, member: Member | None = None,
             who: str = "") -> dict[str, Any]:
        """Exact odds of ``text`` (expanded with the member's sheet): JSON and the CLI's text."""
        self.odds_limit.check(member.id if member is not None else f"ip:{who}", "odds requests")
        exp = self.expand(member, text, system)
        cache_key = (exp.text, system)
        with self._odds_lock:
            hit = self._odds_cache.get(cache_key)
        if hit is None:
            try:
                result = astragal.odds(exp.text, limits=self.limits, default_system=system)
            except InputError as exc:
                raise RollError(exc, exp) from None
            dist = result.distribution
            if len(dist) > MAX_ODDS_VALUES:
                # A page of 10 000 rows helps nobody, and its JSON and text cost seconds each.
                raise RollError(LimitError(
                    f"the odds of this roll have {len(dist)} possible values; the web table "
                    f"shows at most {MAX_ODDS_VALUES} (the command line has no such limit)",
                    exp.text, (0, len(exp.text))), exp)
            hit = {"notation": exp.text, "system": result.system, "value_name": result.value_name,
                   "odds": result.to_json(), "odds_text": odds_text(result),
                   # For the page, in order (a JSON object's numeric keys lose it in JavaScript):
                   # [key, words, P], and [value, P(=), P(>=), P(<=)].
                   "outcome_rows": [[str(k), outcome_words(str(k)), p]
                                    for k, p in result.outcomes.items()],
                   "value_rows": _value_rows(dist)}
            with self._odds_lock:
                if len(self._odds_cache) > 512:
                    self._odds_cache.clear()
                self._odds_cache[cache_key] = hit
        return {"text": exp.typed, **hit}

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

    def _all(self, room_id: str) -> Iterator[dict[str, Any]]:
        after = 0
        while True:
            rows = self.store.entries(room_id, after, MAX_PAGE)
            yield from rows
            if len(rows) < MAX_PAGE:
                return
            after = rows[-1]["id"]

    def export(self, viewer: Member) -> dict[str, Any]:
        """The whole log as ``viewer`` may see it; unseen entries stay as links of the chain."""
        room = self.room(viewer.room)
        entries: list[dict[str, Any]] = []
        head = GENESIS
        for e in self._all(room["id"]):
            seen = self.visible(e, viewer)
            entries.append(e if seen is not None and not seen.get("hidden") else redact(e))
            head = e["hash"]
        return {"format": FORMAT, "room": {k: room[k] for k in ("id", "name", "system")},
                "exported_at": _now(), "exported_by": viewer.to_json(), "head": head,
                "entries": entries}

    def export_markdown(self, viewer: Member) -> str:
        """The log as a Markdown table (user text escaped so it renders as text)."""
        data = self.export(viewer)
        room = data["room"]
        lines = [f"# {_md(room['name'])}: roll log", "",
                 (f"System: {_md(room['system'])}. Exported {data['exported_at']} by "
                 f"{_md(data['exported_by']['name'])}. Head hash `{data['head']}` "
                 "(check with `astragal verify-log` on the JSON export)."), "",
                 "| # | when (UTC) | who | roll | dice | verdict | seen by |",
                 "|---:|---|---|---|---|---|---|"]
        for e in data["entries"]:
            if e.get("redacted"):
                lines.append(f"| {e['id']} | | | *hidden* | | | |")
                continue
            dice = " ".join(
                f"d{d['size']}:{d['face']}" + ("" if d.get("kept", True) else "(dropped)")
                for d in e["roll"]["dice"])
            roll = f"`{_code(e['text'])}`"
            if e["notation"] != e["text"]:
                roll += f" → `{_code(e['notation'])}`"
            seen = {"public": "all", "gm": "GM + roller", "blind": "GM"}[e["visibility"]]
            lines.append(f"| {e['id']} | {e['at'].replace('T', ' ').rstrip('Z')} | "
                         f"{_md(e['who'])} | {roll} | {dice} | "
                         f"{_md(e['verdict'])} | {seen} |")
        return "\n".join(lines) + "\n"


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
