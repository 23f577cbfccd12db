"""The web table's basic parts, apart from HTTP: its errors, keys and room ids, the recording
source of a roll's faces, rate limits, a room's member, and the checks of names and text.

``room.py`` re-exports what other code imports from there (``TableError``, ``Member``, ...).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from astragal import InputError, Source, SystemSource

from .names import hidden_character
from .sheet import Expansion, Sheet

__all__ = ["Member", "RateLimit", "RecordingSource", "RollError", "TableError", "check_unicode",
           "key_hash", "new_key", "new_room_id"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class TableError(Exception):
    """A request the table refuses: an HTTP status, an error kind and a message for the player."""

    def __init__(self, status: int, kind: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.extra = extra

    def to_json(self) -> dict[str, Any]:
        """``{"error": kind, "message": …}`` plus any details."""
        return {"error": self.kind, "message": self.message, **self.extra}


class RollError(TableError):
    """Notation the game cannot read (422): the message and the span in what the player typed."""

    def __init__(self, exc: InputError, expansion: Expansion) -> None:
        extra: dict[str, Any] = {"text": expansion.typed,
                                 "span": list(s) if (s := expansion.typed_span(exc.span)) else None}
        if expansion.changed:
            extra["expanded"] = exc.text or expansion.text
            extra["expanded_span"] = list(exc.span) if exc.span else None
        pretty = InputError(exc.message, expansion.typed, expansion.typed_span(exc.span)).pretty()
        extra["pretty"] = pretty
        super().__init__(422, type(exc).__name__, exc.message, **extra)


def new_key() -> str:
    """An unguessable key (256 bits from the OS)."""
    return secrets.token_urlsafe(32)


def new_room_id() -> str:
    """A room's id (96 random bits) that starts with a letter or digit: an id starting with '-'
    would read as an option on a command line (``astragal verify-log ROOM``)."""
    while True:
        rid = secrets.token_urlsafe(12)
        if rid[0].isalnum():
            return rid


def key_hash(key: str) -> str:
    """What the store keeps instead of a key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RecordingSource(Source):
    """Faces from another source, recorded as ``[side, size, face]`` in the order drawn."""

    def __init__(self, inner: Source | None = None) -> None:
        self.inner = inner if inner is not None else SystemSource()
        self.draws: list[list[int]] = []

    def face(self, size: int, stream: int = 0) -> int:
        value = self.inner.face(size, stream)
        self.draws.append([stream, size, value])
        return value

    def finish(self) -> None:
        self.inner.finish()


class RateLimit:
    """A token bucket per key: ``burst`` at once, then ``rate`` per second."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def wait(self, key: str) -> float:
        """Take a token: 0.0 when allowed, else the seconds until one is free."""
        now = self.clock()
        with self._lock:
            tokens, at = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - at) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                if len(self._buckets) > 50_000:  # forget the idle ones: memory stays bounded
                    self._buckets = {k: v for k, v in self._buckets.items()
                                     if v[0] + (now - v[1]) * self.rate < self.burst}
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate

    def check(self, key: str, what: str) -> None:
        """Raise a 429 ``TableError`` naming the limit when ``key`` is over it."""
        wait = self.wait(key)
        if wait > 0:
            raise TableError(429, "RateLimited",
                             f"too many {what}: at most {self.rate:g} per second (bursts of "
                             f"{self.burst}); try again in {wait:.1f} s",
                             retry_after=round(wait, 2))


@dataclass(frozen=True, slots=True)
class Member:
    """Someone in a room, as known from their key."""

    id: str
    room: str
    name: str
    role: str
    sheet: Sheet

    @property
    def is_gm(self) -> bool:
        return self.role == "gm"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "role": self.role}


def check_unicode(text: str, what: str) -> None:
    """422 for text that cannot be stored or sent as UTF-8 (a lone surrogate from ``\\ud800``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TableError(422, "RequestError", f"{what} is not valid Unicode text (a lone "
                                              f"surrogate at character {exc.start + 1})") from None


def _clean_name(value: object, what: str, limit: int, required: bool = True,
                visible: bool = True) -> str:
    if not isinstance(value, str):
        raise TableError(422, "RequestError", f"{what} must be text")
    check_unicode(value, what)
    text = " ".join(value.split())
    if required and not text:
        raise TableError(422, "RequestError", f"{what} is empty")
    if len(text) > limit:
        raise TableError(422, "RequestError", f"{what} is {len(text)} characters; the limit is "
                                              f"{limit}")
    if _CONTROL.search(text):
        raise TableError(422, "RequestError", f"{what} has a control character")
    if visible and (why := hidden_character(text)) is not None:
        raise TableError(422, "RequestError", f"{what} {why}")
    return text
