"""The HTTP API's routes for rooms, members, sheets, rolls, the table's tools, the log and odds
(``add_api``, called by ``app.create_app``), and how a request names its key and its address.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi import Path as Path_
from fastapi.responses import JSONResponse

from .room import RateLimit, Table
from .schemas import (
    CommandIn,
    ErrorOut,
    Joined,
    JoinIn,
    LogPage,
    RollIn,
    RoomCreated,
    RoomIn,
    RoomOut,
    SheetIn,
)
from .store import Store

if TYPE_CHECKING:
    from .live import Hub

__all__ = ["MAX_ID", "add_api", "roll_for"]

MAX_ID = 2**62  # ids are 64-bit in both stores


def _key(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def roll_for(table: Table, room_id: str, authorization: str | None, text: str, visibility: str,
             client_seed: str, who: str) -> dict[str, Any]:
    """A roll request's work (the route's and ``quick.answer_roll``'s): the entry as the roller
    may see it (a blind roll comes back without its result)."""
    member = table.member(room_id, _key(authorization))
    # the live connections are woken by the entry itself (``Table.on_entry``)
    entry = table.roll(member, text, visibility, who, client_seed)
    seen = Table.visible(entry, member)
    assert seen is not None  # the roller always sees at least a stub
    return seen


def add_api(app: FastAPI, store: Store, table: Table, hub: Hub, doors: RateLimit) -> None:
    """The API's routes on ``app``; ``doors`` limits rooms opened and joins per address."""

    async def reading(request: Request) -> None:
        """A read pays the address's read rate (``caps.reads_per_address``), checked in the
        event loop before a worker thread is taken: reads flooding from one address queued
        ahead of everyone else's rolls in the worker threads."""
        table.address_reads.check(f"ip:{_client(request)}", "reads from this address")

    reads = [Depends(reading)]

    @app.get("/api/health", tags=["rooms"], responses={503: {"model": ErrorOut}})
    def health() -> dict[str, Any]:
        """Is the table up and its database answering? 200, or 503 with the reason."""
        store.ping()
        listening = getattr(store, "listening", None)
        return {"status": "ok", "store": type(store).__name__,
                **({"listening": listening} if listening is not None else {})}

    @app.get("/api/systems", tags=["odds"], dependencies=reads)
    def systems() -> list[dict[str, Any]]:
        """The installed game systems: name, title, prefixes."""
        return list(table.systems()["systems"].values())

    @app.post("/api/rooms", status_code=201, response_model=RoomCreated, tags=["rooms"])
    def create_room(body: RoomIn, request: Request) -> dict[str, Any]:
        """Open a room. You are its GM: keep the GM link, share the join link."""
        doors.check(_client(request), "rooms opened or joined from this address")
        made = table.create_room(body.name, body.system, body.gm_name)
        rid = made["room"]["id"]
        return {**made, "gm_link": f"/r/{rid}#key={made['key']}", "join_link": f"/r/{rid}"}

    @app.get("/api/rooms/{room_id}", response_model=RoomOut, tags=["rooms"], dependencies=reads)
    def get_room(room_id: str) -> dict[str, Any]:
        """A room's name and system (anyone with the link may see these, to join)."""
        return table.room(room_id)

    @app.post("/api/rooms/{room_id}/members", status_code=201, response_model=Joined,
              tags=["rooms"])
    def join(room_id: str, body: JoinIn, request: Request) -> dict[str, Any]:
        """Join a room by its link with a display name; returns your player key."""
        doors.check(_client(request), "rooms opened or joined from this address")
        joined = table.join(room_id, body.name, _client(request))
        hub.wake_threadsafe(room_id, members=True)  # live connections send the newcomer alone
        return joined

    @app.get("/api/rooms/{room_id}/me", tags=["rooms"], dependencies=reads)
    def me(room_id: str, authorization: str | None = Header(None)) -> dict[str, Any]:
        """You, your sheet, the room, who else is in it, and the log's head."""
        member = table.member(room_id, _key(authorization))
        last, head = store.head(room_id)
        return {"member": member.to_json(), "sheet": member.sheet.to_json(),
                "room": table.room(room_id), "members": store.members(room_id),
                "head": {"id": last, "hash": head}, "key": table.signer.public,
                "fair": table.fairness(room_id)}

    @app.put("/api/rooms/{room_id}/sheet", tags=["characters"])
    def put_sheet(room_id: str, body: SheetIn, request: Request,
                  authorization: str | None = Header(None)) -> dict[str, Any]:
        """Replace your stats (``Fast-Talk = d12``) and macros (``sneak = jc: …``)."""
        member = table.member(room_id, _key(authorization))
        return table.save_sheet(member, body.model_dump(), _client(request)).to_json()

    @app.post("/api/rooms/{room_id}/epoch", status_code=201, tags=["rolls"])
    def end_epoch(room_id: str, request: Request,
                  authorization: str | None = Header(None)) -> dict[str, Any]:
        """End the seed epoch (the GM): its seed is revealed in the log, a new one committed."""
        member = table.member(room_id, _key(authorization))
        entry = table.end_epoch(member, _client(request))
        hub.wake_threadsafe(room_id)
        return entry

    @app.post("/api/rooms/{room_id}/rolls", status_code=201, tags=["rolls"])
    def post_roll(room_id: str, body: RollIn, request: Request,
                  authorization: str | None = Header(None)) -> JSONResponse:
        """Roll (on the server), store it in the log, and send it live to who may see it.

        Returns the stored entry as you may see it (a blind roll comes back without its result).
        """
        # (a plain body is answered before FastAPI, by ``quick.answer_roll``; here the rest)
        seen = roll_for(table, room_id, authorization, body.text, body.visibility,
                        body.client_seed, _client(request))
        # written here, in the request's thread: a returned dict would be checked and encoded
        # again by FastAPI in a second trip to the thread pool
        return JSONResponse(seen, status_code=201)

    @app.post("/api/rooms/{room_id}/rolls/{entry_id}/reveal", status_code=201, tags=["rolls"])
    def reveal(request: Request, room_id: str, entry_id: int = Path_(..., ge=1, le=MAX_ID),
               authorization: str | None = Header(None)) -> dict[str, Any]:
        """Show a hidden roll to everyone (the GM any, a player their own): a new entry."""
        member = table.member(room_id, _key(authorization))
        entry = table.reveal(member, entry_id, _client(request))
        hub.wake_threadsafe(room_id)
        return entry

    @app.post("/api/rooms/{room_id}/members/{member_id}/key", tags=["rooms"])
    def reissue_key(room_id: str, member_id: str,
                    authorization: str | None = Header(None)) -> dict[str, Any]:
        """The GM gives a member a new key (and link); the old key stops working at once."""
        gm = table.member(room_id, _key(authorization))
        made = table.reissue_key(gm, member_id)
        hub.wake_threadsafe(room_id, members=True)  # the old key's live connections close
        return {**made, "link": f"/r/{room_id}#key={made['key']}"}

    @app.delete("/api/rooms/{room_id}/members/{member_id}", tags=["rooms"])
    def remove_member(room_id: str, member_id: str,
                      authorization: str | None = Header(None)) -> dict[str, Any]:
        """The GM removes a member: their key stops working; their rolls stay in the log."""
        gm = table.member(room_id, _key(authorization))
        gone = table.remove_member(gm, member_id)
        hub.wake_threadsafe(room_id, members=True)
        return {"removed": gone}

    @app.post("/api/rooms/{room_id}/fight", status_code=201, tags=["rolls"])
    def fight(request: Request, room_id: str, body: CommandIn,
              authorization: str | None = Header(None)) -> dict[str, Any]:
        """A fight-tracker command, run with the attack table's rules (``astragal fight``'s
        commands: add, set, remove, attack, pass, heal, spend, option; and new)."""
        member = table.member(room_id, _key(authorization))
        entry = table.fight(member, body.text, _client(request))
        hub.wake_threadsafe(room_id)
        return entry

    @app.post("/api/rooms/{room_id}/turns", status_code=201, tags=["rolls"])
    def turns(request: Request, room_id: str, body: CommandIn,
              authorization: str | None = Header(None)) -> dict[str, Any]:
        """The turn order, for any game: add NAME [initiative], remove NAME, next, clear."""
        member = table.member(room_id, _key(authorization))
        entry = table.turns(member, body.text, _client(request))
        hub.wake_threadsafe(room_id)
        return entry

    @app.get("/api/rooms/{room_id}/log", response_model=LogPage, tags=["rolls"],
             dependencies=reads)
    def get_log(room_id: str, after: int = Query(0, ge=0, le=MAX_ID),
                limit: int = Query(500, ge=1, le=500),
                authorization: str | None = Header(None)) -> dict[str, Any]:
        """The log entries you may see, with id > ``after`` (the last id you saw)."""
        return table.log(table.member(room_id, _key(authorization)), after, limit)

    @app.get("/api/rooms/{room_id}/luck", tags=["odds"])
    def room_luck(room_id: str, request: Request,
                  authorization: str | None = Header(None)) -> dict[str, Any]:
        """Luck you can check: each roll you may see placed in its own exact odds (mid-rank
        percentile), and each member's and session's luck (rolls, mean percentile, histogram,
        Anderson–Darling p-value; flagged below ``flag_below``). Rolls whose odds wait for the
        room's share of the server's time are counted in ``pending``."""
        return table.luck(table.member(room_id, _key(authorization)), _client(request))

    @app.get("/api/rooms/{room_id}/odds", tags=["odds"])
    def room_odds(room_id: str, request: Request, text: str = Query(..., max_length=2000),
                  authorization: str | None = Header(None)) -> dict[str, Any]:
        """Exact odds of a roll in this room (its default system, your stats and macros)."""
        member = table.member(room_id, _key(authorization))
        return table.odds(text, table.room(room_id)["system"], member, _client(request))

    @app.get("/api/odds", tags=["odds"])
    def odds(request: Request, text: str = Query(..., max_length=2000),
             system: str | None = Query(None, description="default system for text without "
                                                          "a prefix")) -> dict[str, Any]:
        """Exact odds of any roll: outcome categories and the value's distribution."""
        return table.odds(text, system, None, _client(request))
