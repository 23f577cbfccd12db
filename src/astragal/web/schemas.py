"""The HTTP API's request and response bodies (pydantic models), which document it in OpenAPI,
and the error answers every route may give (``ERRORS``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["ERRORS", "CommandIn", "ErrorOut", "JoinIn", "Joined", "LogPage", "MemberOut",
           "RollIn", "RoomCreated", "RoomIn", "RoomOut", "SheetIn"]

class RoomIn(BaseModel):
    """A room to open: its name, its default system, and the GM's display name."""

    name: str = Field("", description="shown at the top of the room", examples=["The Jade Court"])
    system: str = Field("jadeclaw", description="the default system (name or prefix)",
                        examples=["jadeclaw"])
    gm_name: str = Field("GM", description="the GM's display name", examples=["Hostess Mei"])


class JoinIn(BaseModel):
    """A player joining: their display name (unique in the room, ignoring case)."""

    name: str = Field(..., examples=["Wu"])


class RollIn(BaseModel):
    """A roll: notation (a macro name, stat names allowed) and who may see it."""

    text: str = Field(..., examples=["d12 d8 vs 2d10"])
    visibility: Literal["public", "gm", "blind"] = Field(
        "public", description="public: everyone; gm: the GM and you; blind: the GM only")
    client_seed: str = Field("", max_length=64, description="your own seed: the faces follow "
                             "from it and the room's committed seed (docs/trust.md)")


class SheetIn(BaseModel):
    """A player's stats (named pools and numbers) and macros (named rolls)."""

    stats: dict[str, str | int] = Field(default_factory=dict,
                                        examples=[{"Fast-Talk": "d12", "Will": "d10"}])
    macros: dict[str, str] = Field(default_factory=dict,
                                   examples=[{"sneak": "jc: Speed + Stealth vs routine"}])


class CommandIn(BaseModel):
    """A fight-tracker command (``attack Wu Orc berserk``) or a turn-order command (``next``)."""

    text: str = Field(..., examples=["attack Wu Orc"])


class MemberOut(BaseModel):
    id: str
    name: str
    role: Literal["gm", "player"]


class RoomOut(BaseModel):
    id: str
    name: str
    system: str
    created: str


class RoomCreated(BaseModel):
    """The new room, you (its GM), your secret key, and the two links to share or keep."""

    room: RoomOut
    member: MemberOut
    key: str = Field(..., description="the GM's secret key: keep it; it is shown once")
    gm_link: str
    join_link: str


class Joined(BaseModel):
    member: MemberOut
    key: str = Field(..., description="your secret key: the page keeps it for you")


class LogPage(BaseModel):
    """Entries you may see with id > after, oldest first; ask again with after=last if more."""

    entries: list[dict[str, Any]]
    last: int
    more: bool
    head: str | None = Field(None, description="the hash of entry `last` (when any was read)")


class ErrorOut(BaseModel):
    error: str
    message: str
    text: str | None = None
    span: list[int] | None = None


ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "missing or wrong key"},
    404: {"model": ErrorOut, "description": "no such room"},
    413: {"model": ErrorOut, "description": "request body too large"},
    422: {"model": ErrorOut, "description": "bad input: notation errors carry text and span"},
    429: {"model": ErrorOut, "description": "too many requests; see retry_after (seconds)"},
    503: {"model": ErrorOut, "description": "the database cannot be reached or written; nothing "
                                            "was stored (unless maybe_stored): try again"},
    507: {"model": ErrorOut, "description": "the database's disk is full; nothing was stored"},
}
