"""Where rooms, members, sheets and the roll log live: one small interface, two real backends.

``SQLiteStore`` (the default: one file, zero set-up; WAL so readers never wait for the writer) and
``PostgresStore`` (several app instances on one database; an append sends ``NOTIFY`` so the other
instances wake their clients, who then catch up by the last id they saw).

Appends are atomic and ordered per room: the room is locked (SQLite ``BEGIN IMMEDIATE``, PostgreSQL
``SELECT … FOR UPDATE`` on the room row), the last entry's hash is read, and the new entry is sealed
with it (``chain.seal``) and inserted in the same transaction. ``(room, id)`` is the primary key.

Keys are never stored: only their SHA-256, so a copy of the database lets nobody act as a member.

The backends are ``sqlite_store.py`` and ``postgres_store.py``; the errors and helpers they share are
in ``store_common.py``. This module holds the interface (``Store``) and ``open_store``, and re-exports
the rest, so ``from astragal.web.store import SQLiteStore, StoreError, ...`` works as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .postgres_store import PostgresStore, split_schema
from .sqlite_store import SQLiteStore
from .store_common import (
    DEFAULT_DB,
    MAX_PAGE,
    MEMBERS_NOTE,
    Moved,
    NameTaken,
    RoomFull,
    StoreError,
    Wake,
    name_key,
)

__all__ = ["DEFAULT_DB", "MAX_PAGE", "MEMBERS_NOTE", "Moved", "NameTaken", "PostgresStore",
           "RoomFull", "SQLiteStore", "Store", "StoreError", "Wake", "name_key", "open_store",
           "split_schema"]


class Store(Protocol):
    """What the web table needs from storage."""

    def create_room(self, room: Mapping[str, Any], gm: Mapping[str, Any]) -> None:
        """Store a new room and its GM (a member with role ``gm``) together."""

    def room(self, room_id: str) -> dict[str, Any] | None:
        """The room's id, name, system and creation time, or None."""

    def add_member(self, member: Mapping[str, Any], max_members: int | None = None) -> None:
        """Store a member; ``NameTaken`` if the room has the name or one it could pass for
        (``names.clash``), ``RoomFull`` if it already has ``max_members``."""

    def member_by_key(self, room_id: str, key_hash: str) -> dict[str, Any] | None:
        """The member of ``room_id`` whose key hashes to ``key_hash``, with its sheet."""

    def members(self, room_id: str) -> list[dict[str, Any]]:
        """Everyone in the room (id, name, role), in joining order."""

    def save_sheet(self, member_id: str, sheet: Mapping[str, Any]) -> None:
        """Replace a member's stats and macros."""

    def set_key(self, member_id: str, key_hash: str) -> None:
        """Replace a member's key (the old one stops working)."""

    def remove_member(self, member_id: str) -> None:
        """Take a member out of their room (their log entries stay)."""

    sign: Callable[[str, int, str], str] | None
    """The table's signature of (room, id, hash), given to every entry appended (``signing``)."""

    def append(self, room_id: str, body: Mapping[str, Any],
               expect: int | None = None) -> dict[str, Any]:
        """Seal ``body`` as the room's next entry (id, prev, hash, sig) and store it atomically;
        ``expect``: the id it must get (``Moved`` if another entry took it first)."""

    def epoch(self, room_id: str) -> tuple[int, str]:
        """The room's current seed epoch and its secret seed (epoch 1 made on first use)."""

    def next_epoch(self, room_id: str, epoch: int) -> tuple[int, str] | None:
        """Start epoch ``epoch + 1`` with a new seed, if ``epoch`` is still the current one."""

    def hashes(self, room_id: str, after: int = 0, limit: int = MAX_PAGE) -> list[tuple[int, str]]:
        """The (id, hash) pairs of the hash column, id > ``after`` (``verify-log`` compares them
        with the entries)."""

    def entries(self, room_id: str, after: int = 0, limit: int = MAX_PAGE) -> list[dict[str, Any]]:
        """The room's entries with id > ``after``, oldest first, at most ``limit``."""

    def page(self, room_id: str, after: int, limit: int,
             max_bytes: int) -> tuple[list[dict[str, Any]], bool]:
        """A page of the room's entries with id > ``after``: at most ``limit``, and no more than
        reach ``max_bytes`` of stored JSON (``take_page``); and whether entries may follow.
        Entries past the page's end are not read."""

    def head(self, room_id: str) -> tuple[int, str]:
        """The last entry's id and hash (0 and GENESIS for an empty log)."""

    def log_bytes(self, room_id: str) -> int:
        """The size of the room's stored entries, in bytes of their JSON."""

    def room_count(self) -> int:
        """How many rooms the table holds."""

    def idle_rooms(self, before: str, limit: int) -> list[str]:
        """Up to ``limit`` rooms with nothing in them since ``before`` (an ISO time: their last
        entry's ``at``, or their opening for an empty log)."""

    def delete_room(self, room_id: str) -> None:
        """Delete a room with its log, members and seeds (``Table.expire_idle`` exports it
        first)."""

    def ping(self) -> None:
        """Check the database answers (``StoreError`` when not)."""

    def listen(self, wake: Wake) -> None:
        """Call ``wake`` when another instance appends (no-op where there is no other instance)."""

    def close(self) -> None:
        """Release connections and stop listening."""


def open_store(db: str | None) -> Store:
    """The store for ``--db``: a PostgreSQL URL, else a SQLite file path (default ./astragal.db)."""
    if db and db.startswith(("postgresql://", "postgres://")):
        return PostgresStore(db)
    if db and db.startswith("sqlite:///"):
        db = db[len("sqlite:///"):]
    return SQLiteStore(db or DEFAULT_DB)
