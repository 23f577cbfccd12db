"""Injectable randomness: the OS source by default, a seed for reproducible streams, scripted faces.

A source hands out faces for named *streams*. Random sources ignore the stream; a scripted source
keeps one list of faces per stream (``"7,2 / 3,4"``: the actor's faces, then the opposition's), so
a player who rolled physical dice can type them per side, in the order they were rolled.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from ._digits import digits
from ._errors import FacesError, OptionError, shown

__all__ = ["ScriptedSource", "SeededSource", "Source", "SystemSource", "make_source", "parse_faces",
           "system_faces"]


class Source:
    """Where faces come from. ``face(size, stream)`` returns a face in 1..size."""

    def face(self, size: int, stream: int = 0) -> int:
        raise NotImplementedError

    def finish(self) -> None:
        """Called after a roll: a scripted source checks that every face was used."""


# The blocks of OS randomness grow from _FIRST to _BLOCK bytes: a 4 KiB read costs ~8 µs of
# the kernel's time, a 256-byte one ~1 µs, and a process that rolls once needs a few bytes
_FIRST = 256
_BLOCK = 4096
_lock = threading.Lock()
_buffer = b""
_pos = 0
_next = _FIRST  # the size of the next block


def _forget_buffer() -> None:
    """After ``fork``: the child must not deal the bytes its parent will also deal."""
    global _buffer, _pos, _lock, _next
    _buffer, _pos, _lock, _next = b"", 0, threading.Lock(), _FIRST


def _refill(n: int = 1) -> None:
    """A fresh block of at least ``n`` bytes (under ``_lock``), each twice the last up to 4 KiB."""
    global _buffer, _pos, _next
    _buffer, _pos = os.urandom(max(_next, n)), 0
    _next = min(2 * _next, _BLOCK)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_buffer)


def _random_bytes(n: int) -> bytes:
    """``n`` bytes from the operating system, dealt from one block shared by every roll.

    One system call per block (up to 4 KiB) for the whole process (not per roll, not per die);
    a lock deals each byte to exactly one caller across threads, and a forked child starts a
    fresh block.
    """
    global _pos
    with _lock:
        if _pos + n > len(_buffer):
            _refill(n)
        chunk = _buffer[_pos:_pos + n]
        _pos += n
    return chunk


def _random_byte() -> int:
    """One byte (0..255) dealt from the shared block, as ``_random_bytes(1)[0]``."""
    global _pos
    with _lock:
        if _pos >= len(_buffer):
            _refill()
        byte = _buffer[_pos]
        _pos += 1
    return byte


def system_faces(size: int, n: int) -> list[int]:
    """``n`` faces of a d``size`` from the operating system, drawn under one lock (what
    ``SystemSource().face`` gives n times, without n lock round trips)."""
    global _pos
    if size > 256:
        source = SystemSource()
        return [source.face(size) for _ in range(n)]
    limit = 256 - 256 % size
    out: list[int] = []
    with _lock:
        while len(out) < n:
            if _pos >= len(_buffer):
                _refill()
            byte = _buffer[_pos]
            _pos += 1
            if byte < limit:
                out.append(byte % size + 1)
    return out


class SystemSource(Source):
    """The operating system's randomness (``os.urandom``), every face exactly uniform."""

    def face(self, size: int, stream: int = 0) -> int:
        # rejection sampling: values at or above ``limit`` would favour the low faces
        if size <= 256:  # one byte a draw (most dice)
            limit = 256 - 256 % size
            while True:
                byte = _random_byte()
                if byte < limit:
                    return byte % size + 1
        width = max(1, (size.bit_length() + 7) // 8)
        span = 1 << (8 * width)
        limit = span - span % size
        while True:
            value = int.from_bytes(_random_bytes(width), "little")
            if value < limit:
                return value % size + 1


class SeededSource(Source):
    """A reproducible stream from an integer seed."""

    def __init__(self, seed: int) -> None:
        import random

        self.seed = seed
        self._random = random.Random(seed)

    def face(self, size: int, stream: int = 0) -> int:
        return self._random.randrange(size) + 1


class ScriptedSource(Source):
    """Replays given faces, one list per stream, in rolling order."""

    def __init__(self, streams: Sequence[Sequence[int]], text: str = "") -> None:
        self.streams = [list(s) for s in streams]
        self.used = [0] * len(self.streams)
        self.text = text

    def face(self, size: int, stream: int = 0) -> int:
        if stream >= len(self.streams):
            raise FacesError(
                f"no faces were given for side {stream + 1}; separate the sides' faces with '/'",
                self.text,
                (len(self.text), len(self.text) + 1) if self.text else None,
            )
        faces = self.streams[stream]
        i = self.used[stream]
        if i >= len(faces):
            raise FacesError(
                f"no faces were given for side {stream + 1}, but a d{size} was rolled" if not faces
                else f"side {stream + 1} needs more faces: a d{size} was rolled after the "
                f"{_faces(len(faces))} given",
                self.text,
                (len(self.text), len(self.text) + 1) if self.text else None,
            )
        value = faces[i]
        if not 1 <= value <= size:
            raise FacesError(
                f"face {value} (side {stream + 1}, face {i + 1}) cannot show on a d{size}",
                self.text,
                None,
            )
        self.used[stream] = i + 1
        return value

    def finish(self) -> None:
        for stream, (faces, used) in enumerate(zip(self.streams, self.used)):
            if used < len(faces):
                rolled = "no die was rolled" if not used else \
                    f"only {used} {'was' if used == 1 else 'were'} rolled"
                raise FacesError(
                    f"side {stream + 1} was given {_faces(len(faces))} but {rolled}",
                    self.text,
                    None,
                )


def parse_faces(text: str) -> list[list[int]]:
    """Read ``"7,2 / 3,4"`` into ``[[7, 2], [3, 4]]`` (commas or spaces; '/' between sides)."""
    streams: list[list[int]] = []
    pos = 0
    for part in text.split("/"):
        faces: list[int] = []
        for token in part.replace(",", " ").split():
            start = text.find(token, pos)
            pos = start + len(token)
            if not digits(token) or len(token) > 6:
                raise FacesError(f"'{token}' is not a face: faces are whole numbers", text,
                                 (start, start + len(token)))
            faces.append(int(token))
        pos = max(pos, text.find("/", pos) + 1)
        streams.append(faces)
    # no faces at all ("" or " / "): right for a roll that rolls no dice (a calm task's
    # automatic success); a roll that needs one says "no faces were given" when it asks
    return streams


def _faces(n: int) -> str:
    return "1 face" if n == 1 else f"{n} faces"


def make_source(seed: int | None = None, faces: str | Sequence[Sequence[int]] | Sequence[int] | None = None) -> Source:
    """The source for a roll: scripted ``faces`` if given, else ``seed``, else the OS."""
    if faces is not None and seed is not None:
        raise OptionError("give either a seed or faces, not both")
    if faces is not None:
        if isinstance(faces, str):
            return ScriptedSource(parse_faces(faces), faces)
        items: Any = list(faces) if isinstance(faces, (list, tuple)) else None
        if items and all(_whole(f) for f in items):
            return ScriptedSource([items])
        if items is not None and all(isinstance(s, (list, tuple)) and all(_whole(f) for f in s)
                                     for s in items):  # [] too: a roll that rolls no dice
            return ScriptedSource([list(s) for s in items])
        raise OptionError(f"faces are text such as \"7,2 / 3,4\", a list of whole numbers or "
                          f"a list of such lists, not {shown(faces)}")
    if seed is not None:
        if not _whole(seed):
            raise OptionError(f"a seed is a whole number, not {shown(seed)}")
        return SeededSource(seed)
    return _SYSTEM


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_SYSTEM = SystemSource()  # it keeps no state of its own: one serves every roll
