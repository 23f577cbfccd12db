"""What both stores share: the errors a store raises, its constants, and the helpers both
backends use to check a join, read a member's row and sign an entry (``store.py`` re-exports them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["BYTES_PAGE", "DEFAULT_DB", "MAX_PAGE", "MEMBERS_NOTE", "Moved", "NameTaken", "RoomFull",
           "StoreError", "Wake", "name_key"]

DEFAULT_DB = "astragal.db"
MEMBERS_NOTE = "m:"  # a NOTIFY payload "m:<room>": someone joined the room (else: a new entry)
MAX_PAGE = 500
# A page of entries by size as well as count: the rows whose stored JSON before them comes to
# less than the last parameter (so a page holds at least one entry, and ends just past it).
# Both databases' SQL; %s placeholders (SQLite's are swapped in), {log} the log's table
BYTES_PAGE = """SELECT body FROM (
    SELECT body, seq, SUM(LENGTH(body)) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING)
                      - LENGTH(body) AS before
    FROM {log} WHERE room_id = %s AND seq > %s ORDER BY seq LIMIT %s) AS page
WHERE before < %s ORDER BY seq"""

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
