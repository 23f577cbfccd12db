"""What both stores share: the errors a store raises, its constants, and the helpers both
backends use to check a join, read a member's row and sign an entry (``store.py`` re-exports them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["DEFAULT_DB", "MAX_PAGE", "MEMBERS_NOTE", "Moved", "NameTaken", "RoomFull", "StoreError",
           "Wake", "name_key", "take_page"]

DEFAULT_DB = "astragal.db"
MEMBERS_NOTE = "m:"  # a NOTIFY payload "m:<room>": the room's members changed (a join, a new
# key, a removal: live connections re-check their key); any other payload: a new entry
MAX_PAGE = 500


def take_page(rows: Iterable[tuple[str | bytes, int]], limit: int,
              max_bytes: int) -> tuple[list[dict[str, Any]], bool]:
    """A page of the log from ``(stored JSON, its size in bytes)`` rows read lazily, oldest first.

    The page ends after ``limit`` entries, or after the entry that brings its stored JSON to
    ``max_bytes`` (so it holds at least one entry): rows after that are never read. The flag
    says whether entries may follow (the page was cut by its count or its size).
    """
    page: list[dict[str, Any]] = []
    size = 0
    for body, length in rows:
        page.append(json.loads(body))
        size += length
        if len(page) >= limit or size >= max_bytes:
            return page, True
    return page, False


Wake = Callable[[str | None], None]
"""Called with a room id when another instance appended to it (None: wake every room)."""


class NameTaken(Exception):
    """A member with this display name, or one it could pass for, is already in the room.

    ``args[0]`` is the name asked for, ``taken`` the member's name it clashes with."""

    def __init__(self, name: str, taken: str | None = None) -> None:
        super().__init__(name)
        self.taken = taken if taken is not None else name


class RoomFull(Exception):
    """The room is at its cap of members (``add_member``'s ``max_members``)."""


class Moved(Exception):
    """The entry would not get the id it was rolled for: another entry came first."""

    def __init__(self, next_id: int) -> None:
        super().__init__(f"the log moved on to entry {next_id}")
        self.next_id = next_id


class StoreError(Exception):
    """The database could not do what was asked: unreachable, read-only, or out of space.

    ``status`` is the HTTP status the web table answers with (503: try again later; 507: the
    disk is full). Nothing was stored unless ``maybe_stored`` says the outcome is unknown (the
    connection broke while the database was committing).
    """

    def __init__(self, status: int, message: str, maybe_stored: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.maybe_stored = maybe_stored

    def to_json(self) -> dict[str, Any]:
        """``{"error": "StoreUnavailable" | "StoreFull", "message": …}``."""
        out: dict[str, Any] = {"error": "StoreFull" if self.status == 507 else "StoreUnavailable",
                               "message": self.message}
        if self.maybe_stored:
            out["maybe_stored"] = True
        return out


def name_key(name: str) -> str:
    """The key the database keeps unique per room: the name's folded TR39 skeleton (NFKC, case
    and accents folded, confusable letters mapped: "Ｍｅｉ", "MEI", "Méi", "rnei" → "rnei").
    Joining also compares the skeletons as written (``names.clash``)."""
    from .names import name_keys

    return name_keys(name)[1]


def _check_join(m: Mapping[str, Any], names: list[str], max_members: int | None) -> None:
    """Before inserting ``m`` (under the room's write lock): the name clash, then the cap."""
    from .names import clash

    if (taken := clash(m["name"], names)) is not None:
        raise NameTaken(m["name"], taken)
    if max_members is not None and len(names) >= max_members:
        raise RoomFull(m["room"])


def _member_row(row: Any) -> dict[str, Any]:
    mid, room_id, name, role, created, sheet = row
    return {"id": mid, "room": room_id, "name": name, "role": role, "created": created,
            "sheet": json.loads(sheet) if sheet else {}}


def _signer(sign: Callable[[str, int, str], str] | None,
            room_id: str) -> Callable[[int, str], str] | None:
    return None if sign is None else (lambda entry_id, entry_hash: sign(room_id, entry_id,
                                                                        entry_hash))
