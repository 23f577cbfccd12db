"""The FastAPI application: the HTTP API (documented in OpenAPI at /docs), the live WebSocket, the page.

Every error has one JSON shape, ``{"error": kind, "message": …}``, plus the ``text`` and ``span``
for notation (422). Keys travel in the ``Authorization: Bearer <key>`` header, and on the WebSocket
in its first message: never in a URL, so they stay out of logs and browser history.

Here: ``create_app``, the error handlers, the page and the middleware (a body size limit, security
headers). The routes are in ``routes.py`` (rooms, rolls, tools, log, odds), ``exports.py`` (the
log's exports) and ``live.py`` (the WebSocket and its ``Hub``); the bodies in ``schemas.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, MutableMapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import GZipMiddleware

from .caps import Caps
from .exports import _Streams, add_exports  # noqa: F401 - _Streams: tests import it from here
from .live import CATCH_UP_SECONDS, Hub, add_live
from .oddspool import short_error
from .room import RateLimit, Table, TableError
from .routes import add_api
from .schemas import ERRORS
from .store import Store, StoreError

log = logging.getLogger("astragal.web")

__all__ = ["CATCH_UP_SECONDS", "MAX_BODY", "MAX_LIVE_PER_MEMBER", "Hub", "create_app"]

STATIC = Path(__file__).with_name("static")
MAX_BODY = 16 * 1024
MAX_URL = 8 * 1024
BODY_SECONDS = 10.0  # a request body must arrive within this (else 408)
MAX_LIVE_PER_MEMBER = Caps().live_per_member  # open live connections per key (tabs, devices)

_PAGE_HEADERS = {
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self'; "
                                "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
                                "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    "Referrer-Policy": "no-referrer",
}
_ALL_HEADERS = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
                "Cache-Control": "no-store"}


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
        def too_large(scope: Scope, receive: Callable[[], Awaitable[Message]],
                      send: Callable[[Message], Awaitable[None]]) -> Awaitable[None]:
            # made when needed only: a response built for every request cost each one
            return JSONResponse({"error": "TooLarge", "message": f"the request body is over the "
                                 f"limit of {max_body} bytes"}, status_code=413)(scope, receive,
                                                                                 send)
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
                if scope["path"].startswith("/static/"):
                    # the page's files hold no secret: a reload asks whether they changed (their
                    # ETag) and gets 304 without them, rather than all of them again (no-store)
                    extra["Cache-Control"] = "no-cache"
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


def create_app(store: Store, *, table: Table | None = None, own_store: bool = True,
               max_body: int = MAX_BODY, door_rate: tuple[float, int] = (1.0, 30),
               origins: Collection[str] = ()) -> FastAPI:
    """The web table's ASGI app over ``store`` (closed on shutdown when ``own_store``);
    ``origins``: other sites whose pages may open the live connection (``live.origin_allowed``)."""
    table = table or Table(store)
    hub = Hub()
    doors = RateLimit(*door_rate)  # rooms opened and joins, per client address

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        hub.loop = asyncio.get_running_loop()
        hub.page_reads = asyncio.Semaphore(max(1, table.caps.live_reads))
        table.on_entry = hub.publish_threadsafe
        store.listen(hub.note_threadsafe)
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
        responses=ERRORS,
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
        kind = first.get("type")
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        message = f"{where}: {first.get('msg', 'invalid request')}" if where else \
            str(first.get("msg", "invalid request"))
        sent_json = "json" in request.headers.get("content-type", "").lower()
        if not where and kind in ("model_attributes_type", "missing", "json_invalid") and \
                not sent_json:  # form-encoded or plain text (curl -d's default): not read
            message = "send the body as JSON, with the header Content-Type: application/json"
        elif kind == "json_invalid":  # the location is the character where the JSON breaks
            at = where if where.isdigit() else ""
            message = "the body is not valid JSON" + (
                f" (it breaks at character {int(at) + 1})" if at else "")
        elif kind == "model_attributes_type" and not where:
            message = 'the body must be a JSON object: {"name": value, …}'
        elif kind == "missing" and not where:
            message = "the request needs a JSON body"
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

    # compressed (the page's files only: no response with a key or a roll in it is, so their
    # lengths say nothing of a secret, as BREACH would read them)
    app.mount("/static", GZipMiddleware(StaticFiles(directory=STATIC), minimum_size=1024),
              name="static")

    # -- the API -----------------------------------------------------------------------------

    add_api(app, store, table, hub, doors)
    add_exports(app, table)

    # -- live ------------------------------------------------------------------------------

    add_live(app, store, table, hub, origins)

    app.add_middleware(_GuardMiddleware, max_body=max_body)
    return app


class _GuardMiddleware:
    """``_guard`` as a Starlette middleware class."""

    def __init__(self, app: ASGIApp, max_body: int = MAX_BODY) -> None:
        self.app = _guard(app, max_body)

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        await self.app(scope, receive, send)
