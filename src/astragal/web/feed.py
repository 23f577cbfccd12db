"""A room's newest entries as the live connections send them: each written as JSON once.

Every live connection of a room wants the same few new entries. Reading them from the database
and writing them as JSON per connection cost a query, a decode and an encode per connection per
roll (five for a room of five); a ``Feed`` keeps the room's last ``KEPT`` entries as the text of
their messages (the whole entry, and the stub a blind roll's roller gets), written once, and
hands each connection the ones it may see.

It never guesses. Entries come in two ways: those this instance stored (``add``, in the order of
their ids per room) and those read from the database (``fill``). The database stays the truth:
whenever another instance may have stored an entry (its NOTIFY, a lost listener, the periodic
catch-up) the feed is ``stale`` until a read of the database has reached the log's end after that
moment, and a connection whose next entry the feed does not hold reads its own page, as before.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["KEPT", "SAFETY_SECONDS", "Feed", "View", "message_text"]

KEPT = 64  # entries a room's feed keeps (a connection further behind reads its own page)
SAFETY_SECONDS = 15.0  # a room's feed is read again from the database at least this often


def message_text(message: Mapping[str, Any]) -> str:
    """A live message as the text sent."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


@dataclass(slots=True)
class _Kept:
    entry: dict[str, Any]
    full: str  # the entry message, whole
    head: str  # the head message with this entry last
    stub: str | None = None  # the message of the stub a blind roll's roller gets (when asked)


View = Callable[[Mapping[str, Any]], "dict[str, Any] | None"]
"""A reader's view of an entry: whole, a stub (``hidden``), or None (``Table.visible``)."""


class Feed:
    """One room's entries with ids in (``low``, ``top``], every one of them, as message texts;
    and whether entries past ``top`` may exist that it has not been given (``stale``)."""

    def __init__(self) -> None:
        self.kept: dict[int, _Kept] = {}
        self.low = self.top = 0
        self.version = 0  # moves whenever another instance may have appended
        self.synced = -1  # the version at which a read of the database last reached the end
        self.synced_at = 0.0  # and when (monotonic seconds)
        self.reading = asyncio.Lock()  # one read of the database per room at a time

    @property
    def stale(self) -> bool:
        """Whether entries may exist past ``top`` that the feed has not been given: another
        instance may have stored one, or the last read is ``SAFETY_SECONDS`` old (a safety
        net for a wake-up that was lost: one read per room, whatever its connections)."""
        return (self.synced != self.version
                or time.monotonic() - self.synced_at > SAFETY_SECONDS)

    def touch(self) -> None:
        """Another instance may have appended (its NOTIFY, or nobody knows: a safety net)."""
        self.version += 1

    def holds(self, entry_id: int) -> bool:
        return self.low < entry_id <= self.top

    def add(self, entry: Mapping[str, Any]) -> None:
        """An entry of the room, stored here or read from the database. One past ``top``
        extends the run; one further on starts a new run (what lies between is not known)."""
        eid = int(entry["id"])
        if eid <= self.top:
            return
        if eid > self.top + 1:
            self.kept.clear()
            self.low = eid - 1
        self.top = eid
        self.kept[eid] = _Kept(dict(entry), message_text({"type": "entry", "entry": entry}),
                               message_text({"type": "head", "id": eid, "hash": entry["hash"]}))
        while self.top - self.low > KEPT:
            self.low += 1
            del self.kept[self.low]

    def fill(self, after: int, rows: list[dict[str, Any]], version: int, more: bool) -> None:
        """The entries with ids after ``after`` read from the database (every one, in order)
        when the feed was at ``version``; ``more``: the read stopped before the log's end."""
        if after > self.top:  # the log has entries up to ``after`` that were never given
            self.kept.clear()
            self.low = self.top = after
        for e in rows:
            self.add(e)
        if not more and version >= self.synced:
            self.synced, self.synced_at = version, time.monotonic()

    def serve(self, after: int, view: View) -> tuple[list[str], int] | None:
        """The messages for a connection that has seen up to ``after``: the entries it may
        see, then the head; and its new last id. None when the feed cannot say (stale, or
        ``after`` before its run): the connection reads its own page."""
        if self.stale or not self.low <= after <= self.top:
            return None
        out: list[str] = []
        for eid in range(after + 1, self.top + 1):
            k = self.kept[eid]
            seen = view(k.entry)
            if seen is None:
                continue
            if seen.get("hidden"):
                if k.stub is None:
                    k.stub = message_text({"type": "entry", "entry": seen})
                out.append(k.stub)
            else:
                out.append(k.full)
        if self.top > after:
            out.append(self.kept[self.top].head)
        return out, self.top
