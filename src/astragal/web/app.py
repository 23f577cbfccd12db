"""The FastAPI application: the HTTP API (documented in OpenAPI at /docs), the live WebSocket, the page.

Every error has one JSON shape, ``{"error": kind, "message": …}``, plus the ``text`` and ``span``
for notation (422). Keys travel in the ``Authorization: Bearer <key>`` header, and on the WebSocket
in its first message: never in a URL, so they stay out of logs and browser history.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Header, Query, Request, WebSocket
from fastapi import Path as Path_
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.websockets import WebSocketDisconnect

from .caps import Caps
from .oddspool import short_error
from .room import Member, RateLimit, Table, TableError
from .store import MEMBERS_NOTE, Store, StoreError

log = logging.getLogger("astragal.web")

__all__ = ["MAX_BODY", "Hub", "create_app"]

STATIC = Path(__file__).with_name("static")
MAX_BODY = 16 * 1024
WS_MAX_MESSAGE = 4 * 1024
MAX_URL = 8 * 1024
MAX_ID = 2**62  # ids are 64-bit in both stores
BODY_SECONDS = 10.0  # a request body must arrive within this (else 408)
MAX_LIVE_PER_MEMBER = Caps().live_per_member  # open live connections per key (tabs, devices)
CATCH_UP_SECONDS = 15.0  # a safety net: clients re-read the log even if a wake-up was lost

_PAGE_HEADERS = {
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self'; "
                                "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
                                "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    "Referrer-Policy": "no-referrer",
}
_ALL_HEADERS = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
                "Cache-Control": "no-store"}


# ------------------------------------------------------------------------------------------------
# Request and response bodies (they document the API in OpenAPI)


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


_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "missing or wrong key"},
    404: {"model": ErrorOut, "description": "no such room"},
    413: {"model": ErrorOut, "description": "request body too large"},
    422: {"model": ErrorOut, "description": "bad input: notation errors carry text and span"},
    429: {"model": ErrorOut, "description": "too many requests; see retry_after (seconds)"},
    503: {"model": ErrorOut, "description": "the database cannot be reached or written; nothing "
                                            "was stored (unless maybe_stored): try again"},
    507: {"model": ErrorOut, "description": "the database's disk is full; nothing was stored"},
}


# ------------------------------------------------------------------------------------------------
# Live: which connections watch which room


class Hub:
    """Wakes the WebSocket connections of a room when its log grows (here or on another instance)."""

    def __init__(self) -> None:
        self.rooms: dict[str, set[asyncio.Event]] = {}
        self.live: dict[str, int] = {}  # open connections per member
        self.loop: asyncio.AbstractEventLoop | None = None
        # Who is at the table changes rarely: connections re-read it only when this moves.
        self.joined: dict[str, int] = {}
        self.epoch = 0
        self.live_rooms: dict[str, int] = {}  # open connections per room
        self.live_addresses: dict[str, int] = {}  # open connections per client address
        # The members of a room as last read, with the version they were read at: one read per
        # room per change, whatever the number of connections watching it.
        self.member_lists: dict[str, tuple[tuple[int, int], list[dict[str, Any]]]] = {}
        self._member_reads: dict[str, asyncio.Lock] = {}

    async def members(self, room_id: str, store: Store) -> list[dict[str, Any]]:
        """The room's members, read once per change of ``members_version``."""
        version = self.members_version(room_id)
        cached = self.member_lists.get(room_id)
        if cached is not None and cached[0] == version:
            return cached[1]
        lock = self._member_reads.setdefault(room_id, asyncio.Lock())
        async with lock:
            cached = self.member_lists.get(room_id)
            if cached is not None and cached[0] == version:
                return cached[1]
            now = await run_in_threadpool(store.members, room_id)
            if room_id in self.rooms:
                self.member_lists[room_id] = (version, now)
            return now

    def members_version(self, room_id: str) -> tuple[int, int]:
        """Changes whenever the room's members may have changed (a join, or a lost listener)."""
        return self.epoch, self.joined.get(room_id, 0)

    def subscribe(self, room_id: str) -> asyncio.Event:
        event = asyncio.Event()
        self.rooms.setdefault(room_id, set()).add(event)
        return event

    def unsubscribe(self, room_id: str, event: asyncio.Event) -> None:
        watchers = self.rooms.get(room_id)
        if watchers is not None:
            watchers.discard(event)
            if not watchers:
                del self.rooms[room_id]
                self.joined.pop(room_id, None)
                self.member_lists.pop(room_id, None)
                self._member_reads.pop(room_id, None)

    def wake(self, room_id: str | None, members: bool = False) -> None:
        """In the event loop: wake one room's connections (None: all rooms)."""
        if room_id is None:
            self.epoch += 1
        elif room_id.startswith(MEMBERS_NOTE):  # another instance: someone joined
            room_id, members = room_id[len(MEMBERS_NOTE):], True
        if members and room_id is not None and room_id in self.rooms:
            self.joined[room_id] = self.joined.get(room_id, 0) + 1
        targets = self.rooms.values() if room_id is None else [self.rooms.get(room_id, set())]
        for watchers in list(targets):
            for event in list(watchers):
                event.set()

    def wake_threadsafe(self, room_id: str | None, members: bool = False) -> None:
        """From any thread (request workers, the PostgreSQL listener)."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop is shutting down
                loop.call_soon_threadsafe(self.wake, room_id, members)


# ------------------------------------------------------------------------------------------------
# Middleware: a body size limit and security headers, as plain ASGI (it also sees chunked bodies)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
                   Awaitable[None]]


def _guard(app: ASGIApp, max_body: int) -> ASGIApp:
    async def guarded(scope: Scope, receive: Callable[[], Awaitable[Message]],
                      send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        too_large = JSONResponse(
            {"error": "TooLarge", "message": f"the request body is over the limit of {max_body} "
                                             "bytes"}, status_code=413)
        # Whatever server runs the app: a long URL is 414, long headers 431 (uvicorn's
        # httptools reads headers of any size; `astragal serve` uses h11, which caps them too).
        url_bytes = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        if url_bytes > MAX_URL:
            await JSONResponse({"error": "TooLarge", "message": f"the URL is over the limit of "
                                                                f"{MAX_URL} bytes"},
                               status_code=414)(scope, receive, send)
            return
        if sum(len(k) + len(v) + 4 for k, v in scope.get("headers", [])) > max_body:
            await JSONResponse({"error": "TooLarge", "message": f"the request headers are over "
                                                                f"the limit of {max_body} bytes"},
                               status_code=431)(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and (not value.isdigit() or int(value) > max_body):
                await too_large(scope, receive, send)
                return
        # Bodies here are small: read the whole body first (chunked or not), refuse it whole.
        # A body that trickles in (a slow client holding a connection) is cut at BODY_SECONDS.
        chunks: list[bytes] = []
        seen = 0
        deadline = asyncio.get_running_loop().time() + BODY_SECONDS
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                await JSONResponse({"error": "RequestTimeout", "message": f"the request body "
                                    f"did not arrive within {BODY_SECONDS:g} s"},
                                   status_code=408, headers={"Connection": "close"})(
                    scope, receive, send)
                return
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            if seen > max_body:
                await too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                extra = dict(_ALL_HEADERS)
                if scope["path"] == "/" or scope["path"].startswith(("/r/", "/static/")):
                    extra.update(_PAGE_HEADERS)
                for k, v in extra.items():
                    if k.lower().encode() not in present:
                        headers.append((k.lower().encode(), v.encode()))
                message["headers"] = headers
            await send(message)

        try:
            await app(scope, replay, send_with_headers)
        except Exception as exc:  # noqa: BLE001 - a bug: one line in the log, a JSON 500
            # Caught here, inside Starlette's error middleware, so that it is not raised again
            # to the server (which would print the whole trace a second time and drop the
            # connection): the client keeps its connection and gets a clear answer.
            log.error("internal error on %s %s: %s", scope.get("method"), scope.get("path"),
                      short_error(exc))
            if not started:
                await JSONResponse({"error": "InternalError", "message": (
                    "astragal failed on this request (a bug: it is in the server's log); "
                    f"nothing was stored. {type(exc).__name__}")}, status_code=500)(
                    scope, receive, send_with_headers)

    return guarded


# ------------------------------------------------------------------------------------------------
# The application


def _key(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def create_app(store: Store, *, table: Table | None = None, own_store: bool = True,
               max_body: int = MAX_BODY, door_rate: tuple[float, int] = (1.0, 30)) -> FastAPI:
    """The web table's ASGI app over ``store`` (closed on shutdown when ``own_store``)."""
    table = table or Table(store)
    hub = Hub()
    doors = RateLimit(*door_rate)  # rooms opened and joins, per client address

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        hub.loop = asyncio.get_running_loop()
        store.listen(hub.wake_threadsafe)
        yield
        hub.loop = None
        if own_store:
            await run_in_threadpool(store.close)

    app = FastAPI(
        title="astragal web table",
        version="1",
        summary="Roll together, live: rooms, a shared roll log with a hash chain, exact odds.",
        description=(
            "Open a room (you are its GM), share its link, and everyone rolls in any system's "
            "notation. Rolls are made by the server, stored in order, and sent live over the "
            "WebSocket `/api/rooms/{id}/live` (send `{\"key\": …, \"after\": last_id}` first; "
            "then receive `{\"type\": \"entry\", \"entry\": …}` messages). Authenticate with "
            "`Authorization: Bearer <key>`."),
        lifespan=lifespan,
        responses=_ERRORS,
    )
    app.state.table = table
    app.state.hub = hub

    @app.exception_handler(TableError)
    async def table_error(request: Request, exc: TableError) -> JSONResponse:
        headers = ({"Retry-After": str(max(1, round(exc.extra["retry_after"] + 0.5)))}
                   if "retry_after" in exc.extra else None)
        return JSONResponse(exc.to_json(), status_code=exc.status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        message = f"{where}: {first.get('msg', 'invalid request')}" if where else \
            str(first.get("msg", "invalid request"))
        # Not the input itself: it may be huge, NaN, or not valid Unicode.
        detail = [{"type": str(e.get("type", "")), "loc": [str(p) for p in e.get("loc", ())],
                   "msg": str(e.get("msg", ""))} for e in errors[:20]]
        return JSONResponse({"error": "RequestError", "message": message, "detail": detail},
                            status_code=422)

    @app.exception_handler(StoreError)
    async def store_error(request: Request, exc: StoreError) -> JSONResponse:
        return JSONResponse(exc.to_json(), status_code=exc.status,
                            headers={"Retry-After": "2"} if exc.status == 503 else None)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kinds = {400: "RequestError", 404: "NotFound", 405: "MethodNotAllowed"}
        return JSONResponse({"error": kinds.get(exc.status_code, "HTTPError"),
                             "message": str(exc.detail)}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    # -- the page ----------------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/r/{room_id}", include_in_schema=False)
    def room_page(room_id: str) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/verify", include_in_schema=False)
    @app.get("/static/verify.html", include_in_schema=False)
    def verify_page() -> FileResponse:
        """The page that checks an export (it also works saved and opened from disk)."""
        from . import verify_page as page

        return FileResponse(page.PAGE, headers=page.headers())

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # -- the API -----------------------------------------------------------------------------

    @app.get("/api/health", tags=["rooms"], responses={503: {"model": ErrorOut}})
    def health() -> dict[str, Any]:
        """Is the table up and its database answering? 200, or 503 with the reason."""
        store.ping()
        listening = getattr(store, "listening", None)
        return {"status": "ok", "store": type(store).__name__,
                **({"listening": listening} if listening is not None else {})}

    @app.get("/api/systems", tags=["odds"])
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

    @app.get("/api/rooms/{room_id}", response_model=RoomOut, tags=["rooms"])
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

    @app.get("/api/rooms/{room_id}/me", tags=["rooms"])
    def me(room_id: str, authorization: str | None = Header(None)) -> dict[str, Any]:
        """You, your sheet, the room, who else is in it, and the log's head."""
        member = table.member(room_id, _key(authorization))
        last, head = store.head(room_id)
        return {"member": member.to_json(), "sheet": member.sheet.to_json(),
                "room": table.room(room_id), "members": store.members(room_id),
                "head": {"id": last, "hash": head}, "key": table.signer.public,
                "fair": table.fairness(room_id)}

    @app.put("/api/rooms/{room_id}/sheet", tags=["characters"])
    def put_sheet(room_id: str, body: SheetIn,
                  authorization: str | None = Header(None)) -> dict[str, Any]:
        """Replace your stats (``Fast-Talk = d12``) and macros (``sneak = jc: …``)."""
        member = table.member(room_id, _key(authorization))
        return table.save_sheet(member, body.model_dump()).to_json()

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
                  authorization: str | None = Header(None)) -> dict[str, Any]:
        """Roll (on the server), store it in the log, and send it live to who may see it.

        Returns the stored entry as you may see it (a blind roll comes back without its result).
        """
        member = table.member(room_id, _key(authorization))
        entry = table.roll(member, body.text, body.visibility, _client(request), body.client_seed)
        hub.wake_threadsafe(room_id)
        seen = Table.visible(entry, member)
        assert seen is not None  # the roller always sees at least a stub
        return seen

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

    @app.get("/api/rooms/{room_id}/log", response_model=LogPage, tags=["rolls"])
    def get_log(room_id: str, after: int = Query(0, ge=0, le=MAX_ID),
                limit: int = Query(500, ge=1, le=500),
                authorization: str | None = Header(None)) -> dict[str, Any]:
        """The log entries you may see, with id > ``after`` (the last id you saw)."""
        return table.log(table.member(room_id, _key(authorization)), after, limit)

    @app.get("/api/rooms/{room_id}/luck", tags=["odds"])
    def room_luck(room_id: str, authorization: str | None = Header(None)) -> dict[str, Any]:
        """Luck you can check: each roll you may see placed in its own exact odds (mid-rank
        percentile), and each member's and session's luck (rolls, mean percentile, histogram,
        Anderson–Darling p-value; flagged below ``flag_below``). Rolls whose odds wait for the
        room's share of the server's time are counted in ``pending``."""
        return table.luck(table.member(room_id, _key(authorization)))

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

    exporting = _Streams(table.caps.exports_at_once)

    def _export(room_id: str, authorization: str | None, chunks: Callable[[Member], Any],
                media: str, suffix: str) -> StreamingResponse:
        member = table.member(room_id, _key(authorization))
        table.exports.check(member.id, "exports")
        body = exporting.stream(chunks(member))
        return StreamingResponse(body, media_type=media, headers={
            "Content-Disposition": f'attachment; filename="astragal-{room_id}.{suffix}"'})

    @app.get("/api/rooms/{room_id}/export.json", tags=["log"],
             responses={200: {"content": {"application/json": {}}}})
    def export_json(room_id: str, authorization: str | None = Header(None)) -> StreamingResponse:
        """The whole log, as you may see it, for ``astragal verify-log`` (streamed)."""
        return _export(room_id, authorization, table.export_chunks, "application/json", "json")

    @app.get("/api/rooms/{room_id}/export.md", tags=["log"], response_class=PlainTextResponse)
    def export_md(room_id: str, authorization: str | None = Header(None)) -> StreamingResponse:
        """The whole log, as you may see it, as a Markdown table (streamed)."""
        return _export(room_id, authorization, table.export_markdown_chunks,
                       "text/markdown; charset=utf-8", "md")

    # -- live ------------------------------------------------------------------------------

    @app.websocket("/api/rooms/{room_id}/live")
    async def live(ws: WebSocket, room_id: str) -> None:
        """Send ``{"key": …, "after": N}``; receive every entry you may see with id > N, live.

        Messages: ``hello`` (who you are), ``members`` (everyone at the table: first, and when
        someone left or changed), ``member`` (one newcomer: joins arrive as this small delta),
        ``entry`` (one log entry), ``head`` (the chain's last id and hash, after new entries),
        ``error`` (then the connection closes).
        """
        await ws.accept()
        caps = table.caps
        address = ws.client.host if ws.client else "unknown"
        try:
            first = await asyncio.wait_for(_receive_text(ws), timeout=10)
            if len(first) > WS_MAX_MESSAGE:
                raise ValueError("the first message is too long")
            hello = json.loads(first)
            if not isinstance(hello, dict):
                raise TypeError("the first message must be an object")
            after = hello.get("after", 0)
            if not isinstance(after, int) or isinstance(after, bool) or not 0 <= after <= MAX_ID:
                raise ValueError("after must be a whole number ≥ 0 (the last id you saw)")
            member: Member = await run_in_threadpool(table.member, room_id, hello.get("key"))
        except (TableError, StoreError) as exc:
            with contextlib.suppress(Exception):
                await ws.send_json({"type": "error", **exc.to_json()})
                await ws.close(code=4000 + exc.status)
            return
        except (TimeoutError, ValueError, TypeError, RecursionError) as exc:
            with contextlib.suppress(Exception):
                await ws.send_json({"type": "error", "error": "RequestError",
                                    "message": f"start with {{\"key\": …, \"after\": N}}: {exc}"})
                await ws.close(code=4400)
            return
        except WebSocketDisconnect:
            return
        over = (f"too many live connections with your key (at most {caps.live_per_member}): "
                "close another tab" if hub.live.get(member.id, 0) >= caps.live_per_member else
                f"too many live connections to this room (at most {caps.live_per_room})"
                if hub.live_rooms.get(room_id, 0) >= caps.live_per_room else
                f"too many live connections from your address (at most "
                f"{caps.live_per_address})"
                if hub.live_addresses.get(address, 0) >= caps.live_per_address else None)
        if over is not None:
            with contextlib.suppress(Exception):
                await ws.send_json({"type": "error", "error": "RateLimited", "message": over})
                await ws.close(code=4429)
            return
        for counts, key in ((hub.live, member.id), (hub.live_rooms, room_id),
                            (hub.live_addresses, address)):
            counts[key] = counts.get(key, 0) + 1
        event = hub.subscribe(room_id)

        async def drain() -> None:  # the client only pings; a close ends the connection
            with contextlib.suppress(WebSocketDisconnect, RuntimeError, ValueError):
                while True:
                    message = await _receive_text(ws)  # a binary frame ends the connection
                    if len(message) > WS_MAX_MESSAGE:
                        return
                    if message == "ping":  # the page expects its pong, or calls it lost
                        await ws.send_json({"type": "pong"})

        receiver = asyncio.create_task(drain())
        members: list[dict[str, Any]] | None = None
        version: tuple[int, int] | None = None
        try:
            await ws.send_json({"type": "hello", "member": member.to_json(), "after": after})
            while not receiver.done():
                event.clear()  # before reading, so a wake-up during the read is not lost
                if version != (v := hub.members_version(room_id)):
                    version = v
                    # a re-issued key or a removed member: the old key's connections end
                    await run_in_threadpool(table.member, room_id, hello.get("key"))
                    now = await hub.members(room_id, store)
                    if members is not None and now[:len(members)] == members:
                        for newcomer in now[len(members):]:  # joins: the newcomer alone
                            await ws.send_json({"type": "member", "member": newcomer})
                    elif now != members:
                        await ws.send_json({"type": "members", "members": now})
                    members = now
                page = await run_in_threadpool(table.log, member, after)
                for entry in page["entries"]:
                    await ws.send_json({"type": "entry", "entry": entry})
                if "head" in page:
                    await ws.send_json({"type": "head", "id": page["last"], "hash": page["head"]})
                after = page["last"]
                if page["more"]:
                    continue
                waiter = asyncio.create_task(event.wait())
                await asyncio.wait({receiver, waiter}, timeout=CATCH_UP_SECONDS,
                                   return_when=asyncio.FIRST_COMPLETED)
                if not waiter.done():
                    version = None  # the safety net re-reads the members too
                waiter.cancel()
        except TableError as exc:  # the key no longer belongs to the room
            with contextlib.suppress(Exception):
                await ws.send_json({"type": "error", **exc.to_json()})
                await ws.close(code=4000 + exc.status)
        except StoreError as exc:  # the client reconnects and catches up by its last id
            with contextlib.suppress(Exception):
                await ws.send_json({"type": "error", **exc.to_json()})
                await ws.close(code=4000 + exc.status)
        except (WebSocketDisconnect, RuntimeError):
            pass
        except Exception as exc:  # noqa: BLE001 - a bug: one line in the log, a clean close
            log.error("internal error on the live connection of %s: %s", room_id,
                      short_error(exc))
            with contextlib.suppress(Exception):
                await ws.close(code=1011)
        finally:
            hub.unsubscribe(room_id, event)
            for counts, key in ((hub.live, member.id), (hub.live_rooms, room_id),
                                (hub.live_addresses, address)):
                counts[key] -= 1
                if not counts[key]:
                    del counts[key]
            receiver.cancel()
            with contextlib.suppress(Exception):
                await ws.close()

    app.add_middleware(_GuardMiddleware, max_body=max_body)
    return app


async def _receive_text(ws: WebSocket) -> str:
    """The next text message; ``ValueError`` for a binary one (the table speaks JSON text)."""
    message = await ws.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    text = message.get("text")
    if text is None:
        raise ValueError("send JSON as a text message, not binary")
    return str(text)


class _Streams:
    """At most ``at_once`` exports streaming at a time (503 beyond), each in bounded pieces."""

    def __init__(self, at_once: int) -> None:
        self.at_once = at_once
        self.active = 0
        self._lock = threading.Lock()

    def _release(self) -> None:
        with self._lock:
            self.active -= 1

    def stream(self, chunks: Iterator[str]) -> _Export:
        with self._lock:
            if self.active >= self.at_once:
                raise TableError(503, "Busy", f"{self.at_once} room logs are being exported at "
                                 "this moment, the most at once: try again shortly",
                                 retry_after=5)
            self.active += 1
        return _Export(self, chunks)


class _Export:
    """An export's bytes, about 64 KiB at a time; its place among the streams is given back
    when it ends, is closed, or is dropped (a client that went away)."""

    def __init__(self, owner: _Streams, chunks: Iterator[str]) -> None:
        self._chunks = chunks
        self._done = weakref.finalize(self, owner._release)

    def __iter__(self) -> _Export:
        return self

    def __next__(self) -> bytes:
        parts: list[str] = []
        size = 0
        try:
            for piece in self._chunks:
                parts.append(piece)
                size += len(piece)
                if size >= 1 << 16:
                    break
        except BaseException:
            self.close()
            raise
        if not parts:
            self.close()
            raise StopIteration
        return "".join(parts).encode("utf-8")

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()
        self._done()


class _GuardMiddleware:
    """``_guard`` as a Starlette middleware class."""

    def __init__(self, app: ASGIApp, max_body: int = MAX_BODY) -> None:
        self.app = _guard(app, max_body)

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        await self.app(scope, receive, send)
