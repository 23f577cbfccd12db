"""The roll route's quick path, and the one mapping of the table's refusals to HTTP answers.

``POST /api/rooms/{id}/rolls`` is most of a table's requests. Through FastAPI each one paid for
its routing, its dependencies, pydantic's check of the body and the exception middleware, about
as much CPU as the roll itself (parse, roll, seal, sign, store). ``answer_roll`` takes a roll
request before FastAPI when its body is one the full route would take as it is (a JSON object
whose ``text`` is a string, ``visibility`` one of ``RollIn``'s and ``client_seed`` a string of
at most 64 characters, either left out) and does what the route does (``routes.roll_for``), in
the same thread pool. Any other body goes on to the full route, so every refusal of a body is
still pydantic's and worded by ``app.bad_request``; the route stays the one OpenAPI documents.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from .basics import TableError
from .store_common import StoreError

if TYPE_CHECKING:
    from .room import Table

__all__ = ["answer_roll", "refusal"]

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]

_PREFIX = "/api/rooms/"
_SUFFIX = "/rolls"
_VISIBILITIES = ("public", "gm", "blind")  # RollIn.visibility's Literal
_MAX_CLIENT_SEED = 64  # RollIn.client_seed's max_length


def refusal(exc: TableError | StoreError) -> tuple[int, dict[str, Any], dict[str, str] | None]:
    """The HTTP answer to a refusal of the table or its store: status, body and headers."""
    if isinstance(exc, TableError):
        headers = ({"Retry-After": str(max(1, round(exc.extra["retry_after"] + 0.5)))}
                   if "retry_after" in exc.extra else None)
        return exc.status, exc.to_json(), headers
    return exc.status, exc.to_json(), {"Retry-After": "2"} if exc.status == 503 else None


def _encode(content: Any) -> bytes:
    # as Starlette's JSONResponse writes it
    return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None,
                      separators=(",", ":")).encode("utf-8")


def _room(scope: MutableMapping[str, Any]) -> str | None:
    """The room of a roll request (the full route's ``{room_id}``: one path segment), or None."""
    if scope.get("method") != "POST" or scope.get("root_path"):
        return None
    path: str = scope.get("path", "")
    if not (path.startswith(_PREFIX) and path.endswith(_SUFFIX)):
        return None
    room = path[len(_PREFIX):-len(_SUFFIX)]
    return room if room and "/" not in room else None


def _plain(headers: list[tuple[bytes, bytes]], body: bytes) -> tuple[str, str, str] | None:
    """``text``, ``visibility`` and ``client_seed`` of a body the full route takes as it is."""
    for name, value in headers:
        if name == b"content-type":
            # FastAPI reads a body as JSON with no content type, or a JSON one
            if value.split(b";", 1)[0].strip().lower() != b"application/json":
                return None
            break
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # 15,000-deep JSON too: the route words the refusal
        return None
    if type(data) is not dict:
        return None
    text = data.get("text")
    visibility = data.get("visibility", "public")
    seed = data.get("client_seed", "")
    if type(text) is not str or visibility not in _VISIBILITIES or type(seed) is not str \
            or len(seed) > _MAX_CLIENT_SEED:
        return None
    return text, visibility, seed


async def answer_roll(table: Table, scope: MutableMapping[str, Any], body: bytes,
                      send: Send) -> bool:
    """Answer a plain roll request (``True``), or leave it to the full route (``False``)."""
    from starlette.concurrency import run_in_threadpool

    from .routes import roll_for

    room = _room(scope)
    if room is None:
        return False
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    fields = _plain(headers, body)
    if fields is None:
        return False
    authorization = next((v.decode("latin-1") for k, v in headers if k == b"authorization"),
                         None)
    client = scope.get("client")
    who = client[0] if client else "unknown"
    extra: dict[str, str] | None = None
    try:
        status, content = 201, await run_in_threadpool(roll_for, table, room, authorization,
                                                       *fields, who)
    except (TableError, StoreError) as exc:
        status, content, extra = refusal(exc)
    data = _encode(content)
    out = [(b"content-length", str(len(data)).encode("latin-1")),
           (b"content-type", b"application/json")]
    out += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": data})
    return True
