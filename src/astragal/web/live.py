"""The live WebSocket (``add_live``, called by ``app.create_app``) and the ``Hub`` that wakes the
connections of a room when its log grows, here or on another instance.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Callable, Collection, Mapping
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, WebSocket
from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocketDisconnect

from .feed import KEPT, Feed, message_text
from .oddspool import short_error
from .room import Member, Table, TableError
from .routes import MAX_ID
from .store import MEMBERS_NOTE, Store, StoreError

log = logging.getLogger("astragal.web")

__all__ = ["CATCH_UP_SECONDS", "SILENT_SECONDS", "WS_MAX_MESSAGE", "Hub", "add_live"]

WS_MAX_MESSAGE = 4 * 1024
CATCH_UP_SECONDS = 15.0  # a safety net: clients re-read the log even if a wake-up was lost
# A client that has pinged and then says nothing for this long is gone (the page pings every
# 4 s): its connection ends, so a phone that vanished without a close does not hold one of its
# member's live connections (the cap) until TCP gives up. A client that never pings (a script)
# is not timed out.
SILENT_SECONDS = 30.0


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
        # Pages read at once, server-wide (``Caps.live_reads``, made when the app starts): a page
        # is a few hundred KiB of JSON in memory, and a thousand connections waking at once must
        # not read them all at once
        self.page_reads: asyncio.Semaphore | None = None
        # The last entries of each watched room as the texts sent (``feed.py``): written once
        # per entry, not once per connection
        self.feeds: dict[str, Feed] = {}

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
        self.feeds.setdefault(room_id, Feed())
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
                self.feeds.pop(room_id, None)

    def publish(self, entry: Mapping[str, Any]) -> None:
        """In the event loop: an entry this instance stored; its room's connections send it."""
        room_id = str(entry["room"])
        feed = self.feeds.get(room_id)
        if feed is not None:
            feed.add(entry)
        self.wake(room_id)

    def publish_threadsafe(self, entry: Mapping[str, Any]) -> None:
        """``publish`` from a request's thread (called in the order the room's entries were
        stored, so the feed's run stays whole)."""
        self._call(self.publish, entry)

    def note(self, payload: str | None) -> None:
        """In the event loop: what another instance said (a NOTIFY's payload: ``room id`` for
        an entry, ``m:room`` for a join; None: anything may have changed, as after a lost
        listener). An entry the room's feed already holds (this instance's own) changes nothing."""
        if payload is None or payload.startswith(MEMBERS_NOTE):
            for each in self.feeds.values() if payload is None else ():
                each.touch()
            self.wake(payload)
            return
        room_id, _, number = payload.partition(" ")
        feed = self.feeds.get(room_id)
        if feed is None:
            return  # nobody watches the room here
        if not (number.isdigit() and feed.holds(int(number))):
            feed.touch()
        self.wake(room_id)

    def note_threadsafe(self, payload: str | None) -> None:
        """``note`` from the PostgreSQL listener's thread."""
        self._call(self.note, payload)

    def wake(self, room_id: str | None, members: bool = False) -> None:
        """In the event loop: wake one room's connections (None: all rooms)."""
        if room_id is None:
            self.epoch += 1
        elif room_id.startswith(MEMBERS_NOTE):  # another instance: a join, a new key, a removal
            room_id, members = room_id[len(MEMBERS_NOTE):], True
        if members and room_id is not None and room_id in self.rooms:
            self.joined[room_id] = self.joined.get(room_id, 0) + 1
        targets = self.rooms.values() if room_id is None else [self.rooms.get(room_id, set())]
        for watchers in list(targets):
            for event in list(watchers):
                event.set()

    def wake_threadsafe(self, room_id: str | None, members: bool = False) -> None:
        """From any thread (request workers)."""
        self._call(self.wake, room_id, members)

    def _call(self, function: Callable[..., None], *args: Any) -> None:
        loop = self.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop is shutting down
                loop.call_soon_threadsafe(function, *args)

    async def next_page(self, table: Table, member: Member,
                        after: int) -> tuple[deque[str], int, bool]:
        """The live messages after ``after`` for ``member``: from the room's feed when it can
        say, else read from the database (the room's newest once for all its connections,
        or this connection's own page when it is further behind); the last id; whether more
        may follow."""
        room_id = member.room
        feed = self.feeds.get(room_id)

        def view(entry: Mapping[str, Any]) -> dict[str, Any] | None:
            return Table.visible(entry, member)

        if feed is not None and feed.low <= after:
            served = feed.serve(after, view)
            if served is None:
                async with feed.reading:
                    served = feed.serve(after, view)  # another connection may have read it
                    if served is None and feed.low <= after:
                        version = feed.version
                        async with self.page_reads or contextlib.nullcontext():
                            rows, more = await run_in_threadpool(
                                table.store.page, room_id, after, KEPT, table.caps.page_bytes)
                        feed.fill(after, rows, version, more)
                        served = feed.serve(after, view)
            if served is not None:
                return deque(served[0]), served[1], False
        async with self.page_reads or contextlib.nullcontext():
            return await run_in_threadpool(_page, table, member, after)


def origin_allowed(origin: str | None, host: str, allowed: Collection[str]) -> bool:
    """May a page from ``origin`` open the live connection? Its own page (the origin's host and
    port are the request's ``Host``), an origin in ``allowed``, or a client that is no browser
    (no ``Origin``: browsers always send one on a WebSocket). Another site's page, which could
    hold a player's key only by a leak, is refused: the connection is never opened."""
    if origin is None:
        return True
    origin = origin.strip().lower().rstrip("/")
    if origin in allowed:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and bool(host) and parts.netloc == host.lower()


def add_live(app: FastAPI, store: Store, table: Table, hub: Hub,
             origins: Collection[str] = ()) -> None:
    """The live WebSocket's route on ``app``; ``origins``: other sites whose pages may open it
    (``astragal serve --allow-origin``), besides the table's own."""
    allowed = frozenset(o.strip().lower().rstrip("/") for o in origins)

    @app.websocket("/api/rooms/{room_id}/live")
    async def live(ws: WebSocket, room_id: str) -> None:
        """Send ``{"key": …, "after": N}``; receive every entry you may see with id > N, live.

        Messages: ``hello`` (who you are), ``members`` (everyone at the table: first, and when
        someone left or changed), ``member`` (one newcomer: joins arrive as this small delta),
        ``entry`` (one log entry), ``head`` (the chain's last id and hash, after new entries),
        ``error`` (then the connection closes).
        """
        if not origin_allowed(ws.headers.get("origin"), ws.headers.get("host", ""), allowed):
            await ws.close(code=4403)  # before the accept: the upgrade is answered 403
            return
        address = ws.client.host if ws.client else "unknown"
        if table.address_pings.wait(f"ip:{address}") > 0:
            # opening a connection counts as a ping, so closing one for its pings and opening
            # another is no way around the rate; refused before the accept (403), no database
            await ws.close(code=4429)
            return
        await ws.accept()
        caps = table.caps
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
            pinged = False
            with contextlib.suppress(WebSocketDisconnect, RuntimeError, ValueError,
                                     TimeoutError):
                while True:
                    async with asyncio.timeout(SILENT_SECONDS if pinged else None):
                        message = await _receive_text(ws)  # a binary frame ends it too
                    if len(message) > WS_MAX_MESSAGE:
                        return
                    if message == "ping":  # the page expects its pong, or calls it lost
                        pinged = True
                        if table.address_pings.wait(f"ip:{address}") > 0:
                            # a flood of pings held the event loop from everyone's rolls
                            await ws.send_json({"type": "error", "error": "RateLimited",
                                                "message": "too many pings from your address "
                                                f"(at most {caps.pings_per_address[0]:g} per "
                                                "second)"})
                            await ws.close(code=4429)
                            return
                        await ws.send_json({"type": "pong"})

        receiver = asyncio.create_task(drain())
        receiver.add_done_callback(lambda _: event.set())
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
                messages, after, more = await hub.next_page(table, member, after)
                # sent as text, one at a time: a client that stops reading holds this
                # connection at its next message with the rest of one page (uvicorn waits for
                # the transport to drain before each send), whatever the length of the log
                while messages:
                    await ws.send_text(messages.popleft())
                if more:
                    continue
                try:  # a wake-up, the client gone (the receiver sets it too), or the timeout
                    async with asyncio.timeout(CATCH_UP_SECONDS):
                        await event.wait()
                except TimeoutError:
                    version = None  # the safety net re-reads the members too
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


def _page(table: Table, member: Member, after: int) -> tuple[deque[str], int, bool]:
    """The live messages of the page after ``after``: its entries, then the chain's head; the
    last id read; whether more may follow. Written as JSON here, in the worker thread, so the
    event loop neither encodes them nor holds a page of objects for a client that does not read.
    """
    page = table.log(member, after)
    messages = deque(message_text({"type": "entry", "entry": entry})
                     for entry in page["entries"])
    if "head" in page:
        messages.append(message_text({"type": "head", "id": page["last"], "hash": page["head"]}))
    return messages, page["last"], page["more"]


async def _receive_text(ws: WebSocket) -> str:
    """The next text message; ``ValueError`` for a binary one (the table speaks JSON text)."""
    message = await ws.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    text = message.get("text")
    if text is None:
        raise ValueError("send JSON as a text message, not binary")
    return str(text)
