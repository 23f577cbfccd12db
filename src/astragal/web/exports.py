"""The log's exports over HTTP (``add_exports``): JSON for ``astragal verify-log`` and Markdown,
streamed in bounded pieces, a few at a time (``_Streams``).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI, Header
from fastapi.responses import PlainTextResponse, StreamingResponse

from .room import Member, Table, TableError
from .routes import _key

__all__ = ["add_exports"]


def add_exports(app: FastAPI, table: Table) -> None:
    """The export routes on ``app``."""
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


class _Streams:
    """At most ``at_once`` exports streaming at a time (503 beyond), each in bounded pieces.

    An export whose client has taken no piece for ``stall`` seconds (it stopped reading, or went
    away and its stream waits for the garbage collector) gives its place to the next export
    asked for, and ends: four stalled clients held every export of the server, for as long as
    they stalled."""

    def __init__(self, at_once: int, stall: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.at_once = at_once
        self.stall = stall
        self.clock = clock
        self.active = 0
        self._open: weakref.WeakSet[_Export] = weakref.WeakSet()
        self._lock = threading.Lock()

    def _release(self) -> None:
        with self._lock:
            self.active -= 1

    def stream(self, chunks: Iterator[str]) -> _Export:
        stalled = [e for e in list(self._open) if self.clock() - e.pulled > self.stall]
        for export in stalled:
            export.cut()
        with self._lock:
            if self.active >= self.at_once:
                raise TableError(503, "Busy", f"{self.at_once} room logs are being exported at "
                                 "this moment, the most at once: try again shortly",
                                 retry_after=5)
            self.active += 1
        export = _Export(self, chunks)
        self._open.add(export)
        return export


class _Export:
    """An export's bytes, about 64 KiB at a time; its place among the streams is given back
    when it ends, is closed, is dropped (a client that went away) or is cut (stalled)."""

    def __init__(self, owner: _Streams, chunks: Iterator[str]) -> None:
        self._chunks = chunks
        self._clock = owner.clock
        self.pulled = owner.clock()
        self._cut = False
        self._done = weakref.finalize(self, owner._release)

    def __iter__(self) -> _Export:
        return self

    def cut(self) -> None:
        """Give the place back now; the stream ends at its next piece."""
        self._cut = True
        self._done()

    def __next__(self) -> bytes:
        if self._cut:
            self.close()
            raise StopIteration
        self.pulled = self._clock()
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
