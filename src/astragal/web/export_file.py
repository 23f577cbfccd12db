"""An exported log read from its file a piece at a time, so ``verify-log`` holds one entry at once.

``json.loads`` of a whole export holds every entry as Python objects, six to fifteen times the
file's size (a crafted 70 MiB export took 1 GiB). ``ExportFile`` reads the file in 1 MiB pieces
and hands out the export's top-level members in order, the ``entries`` list as an iterator that
parses one entry when asked for it. What it will read is capped, each cap named when it is hit
(an ``InputError``: exit 2): the file (``MAX_EXPORT``), one entry's JSON (``MAX_ENTRY``: the table
writes none over 160 KiB, a reveal holds one roll whole), the number of entries
(``MAX_ENTRIES``: a room holds 20,000 by default) and any other member (``MAX_MEMBER``).
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterator
from typing import Any, Self

from .._errors import InputError
from .._files import open_regular

__all__ = ["MAX_ENTRIES", "MAX_ENTRY", "MAX_EXPORT", "MAX_MEMBER", "Entries", "ExportFile"]

MAX_EXPORT = 256 << 20   # bytes: a room at the web table's log cap (64 MiB) exports under this
MAX_ENTRY = 1 << 20      # characters of one entry's JSON
MAX_ENTRIES = 100_000    # entries in one export (a room holds 20,000 unless its cap is raised)
MAX_MEMBER = 1 << 20     # characters of any other member (the room, who exported it, the key)
_PIECE = 1 << 20
_SPACE = re.compile(r"[ \t\n\r]*")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class Entries:
    """The export's ``entries`` list, read one entry at a time (once)."""

    def __init__(self, file: ExportFile) -> None:
        self._reading = file._entries()

    def __iter__(self) -> Iterator[Any]:
        return self._reading


class ExportFile:
    """The members of an export file, read in order (``members``); open it with ``with``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = open_regular(path, "log export", MAX_EXPORT)
        self._decode = codecs.getincrementaldecoder("utf-8")()
        self._decoder = json.JSONDecoder(parse_constant=_no_constant)
        self._buf, self._pos, self._base, self._read, self._eof = "", 0, 0, 0, False
        self._in_entries = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self._fd)

    def _error(self, why: str) -> InputError:
        return InputError(f"cannot read {self.path} as a JSON log export: {why}")

    def _more(self) -> None:
        """Read the next piece of the file onto what is left of the buffer."""
        try:
            raw = os.read(self._fd, min(_PIECE, MAX_EXPORT + 1 - self._read))
        except OSError as exc:
            raise InputError(f"cannot read the log export {self.path}: "
                             f"{exc.strerror or exc}") from None
        self._read += len(raw)
        if self._read > MAX_EXPORT:
            raise InputError(f"the log export {self.path} is over the limit of "
                             f"{MAX_EXPORT:,} bytes")
        try:
            text = self._decode.decode(raw, final=not raw)
        except UnicodeDecodeError:
            raise InputError(f"the log export {self.path} is not UTF-8 text") from None
        self._eof = not raw
        self._base += self._pos
        self._buf, self._pos = self._buf[self._pos:] + text, 0

    def _peek(self) -> str:
        """The next character that is not white space ("" at the end of the file)."""
        while True:
            end = _SPACE.match(self._buf, self._pos)
            self._pos = end.end() if end else self._pos
            if self._pos < len(self._buf) or self._eof:
                return self._buf[self._pos:self._pos + 1]
            self._more()

    def _expect(self, char: str) -> None:
        if self._peek() != char:
            got = self._buf[self._pos:self._pos + 1]
            raise self._error(f"expected {char!r} at character {self._base + self._pos + 1}, "
                              f"found {got!r}" if got else f"expected {char!r}: the file ends")
        self._pos += 1

    def _value(self, limit: int, what: str, usual: str = "") -> Any:
        """The JSON value at the reading point, of at most ``limit`` characters (``what`` it is,
        named when it is longer, with ``usual``, what the table writes)."""
        self._peek()
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buf, self._pos)
                if end < len(self._buf) or self._eof:  # a number may go on in the next piece
                    self._pos = end
                    return value
            except json.JSONDecodeError as exc:
                if self._eof:
                    raise self._error(f"{exc.msg} at character {self._base + exc.pos + 1}"
                                      ) from None
            except ValueError as exc:  # NaN, Infinity
                raise self._error(str(exc)) from None
            except RecursionError:
                raise self._error("nested too deeply") from None
            if len(self._buf) - self._pos > limit:
                raise InputError(f"{self.path}: {what} is over {limit:,} characters of JSON, "
                                 f"more than this reads{usual}")
            self._more()

    def members(self) -> Iterator[tuple[str, Any]]:
        """The export's top-level members in order; ``entries`` (a list) as ``Entries``, to be
        read through before the next member (else the reading ends there). ``InputError`` when
        the file is no JSON object."""
        if self._peek() != "{":
            data = self._value(MAX_MEMBER, "the file")  # say why: not JSON, too deep, a list
            raise InputError(f"{self.path} is not an astragal log export (a JSON object, not "
                             f"{type(data).__name__})")
        self._pos += 1
        seen: set[str] = set()
        if self._peek() == "}":
            self._pos += 1
            return
        while True:
            key = self._value(MAX_MEMBER, "a member's name")
            if not isinstance(key, str):
                raise self._error(f"a member's name that is not text, at character "
                                  f"{self._base + self._pos}")
            if key in seen:
                raise self._error(f"the member \"{key[:40]}\" is given twice")
            seen.add(key)
            self._expect(":")
            if key == "entries" and self._peek() == "[":
                self._pos += 1
                self._in_entries = True
                yield key, Entries(self)
                if self._in_entries:  # not read through (a check that stopped): read no more
                    return
            else:
                yield key, self._value(MAX_MEMBER, f"the member \"{key[:40]}\"")
            if self._peek() == ",":
                self._pos += 1
                continue
            self._expect("}")
            break
        if self._peek() != "":
            raise self._error(f"extra text after the export, at character "
                              f"{self._base + self._pos + 1}")

    def _entries(self) -> Iterator[Any]:
        n = 0
        if self._peek() == "]":
            self._pos += 1
            self._in_entries = False
            return
        while True:
            n += 1
            if n > MAX_ENTRIES:
                raise InputError(f"{self.path} holds more than {MAX_ENTRIES:,} entries, more "
                                 "than this reads (a room holds 20,000 unless its cap is raised)")
            yield self._value(MAX_ENTRY, f"item {n} of its entries",
                              " (the table writes an entry of at most 160 KiB)")
            if self._peek() == ",":
                self._pos += 1
                continue
            self._expect("]")
            self._in_entries = False
            return
