"""Characters and macros: named pools and numbers, named rolls, and how a roll's text uses them.

A player's sheet holds *stats* (``Fast-Talk = d12``, ``Will = d10``, ``Dexterity = 3``) and
*macros* (``sneak = jc: Speed + Stealth vs routine``). When the player rolls:

1. a text that is exactly a macro's name becomes the macro's text;
2. every word that is a stat's name (any case) becomes the stat's value;
3. in Jadeclaw, ``+`` between two stats that are dice becomes ``&``: Jadeclaw pools are joined
   with ``&`` (J1) and ``+ dS`` means Include (J36), and a player who writes ``Speed + Stealth``
   means one pool of both dice.

Values are not expanded again (no stat inside a stat, no macro inside a macro), so expansion always
ends. The expansion keeps a map back to the typed text, so a notation error found in the expanded
text still points at what the player typed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._errors import InputError

__all__ = ["MAX_MACROS", "MAX_STATS", "Expansion", "Sheet", "SheetError", "check_sheet", "expand"]

MAX_STATS = 100
MAX_MACROS = 50
MAX_STAT_VALUE = 100
MAX_MACRO_VALUE = 500

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_'\-]{0,39}$")
_WORD = re.compile(r"(?<![A-Za-z0-9_'\-=:])[A-Za-z][A-Za-z0-9_'\-]*(?![A-Za-z0-9_'\-=:])")
_PREFIX = re.compile(r"\s*([A-Za-z][A-Za-z0-9_\-]*)\s*:")
# Names a player may not take: they read as notation in every game (dice, Jadeclaw Levels, 'vs');
# a stat's name is also read inside a roll, where 'dmg' and 'damage' are words of the notation,
# but a macro's only as the whole text, and neither word alone is a roll in any game.
_RESERVED = re.compile(r"(\d*d\d+|l\d+|vs)$", re.IGNORECASE | re.ASCII)
_RESERVED_STAT = re.compile(r"(dmg|damage)$", re.IGNORECASE | re.ASCII)
_DICE_VALUE = re.compile(r"\s*(\d*d\d+|L\d+)(\s*(&|,)?\s*(\d*d\d+|L\d+))*\s*$",
                         re.IGNORECASE | re.ASCII)


class SheetError(InputError):
    """A stat or macro that cannot be kept: a bad name, an empty or over-long value, too many."""


@dataclass(frozen=True, slots=True)
class Sheet:
    """One player's stats and macros (names as written; matched without regard to case)."""

    stats: tuple[tuple[str, str], ...] = ()
    macros: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, dict[str, str]]:
        """``{"stats": {name: value}, "macros": {name: text}}``."""
        return {"stats": dict(self.stats), "macros": dict(self.macros)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Sheet:
        """Read the stored form back (already checked when it was saved)."""
        data = data or {}
        return cls(tuple((str(k), str(v)) for k, v in dict(data.get("stats") or {}).items()),
                   tuple((str(k), str(v)) for k, v in dict(data.get("macros") or {}).items()))


def _check_entries(kind: str, entries: Any, limit: int, value_limit: int) -> tuple[tuple[str, str], ...]:
    if entries is None:
        return ()
    if not isinstance(entries, Mapping):
        raise SheetError(f"{kind} must be an object of name: value")
    if len(entries) > limit:
        raise SheetError(f"{len(entries)} {kind} is more than the limit of {limit}")
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name, value in entries.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise SheetError(f"'{name}' cannot be a name: use a letter A-Z, then letters A-Z, "
                             "digits, - _ or ' (at most 40), so that it reads in the notation",
                             str(name), (0, max(1, len(str(name)))))
        if _RESERVED.match(name) or kind == "stats" and _RESERVED_STAT.match(name):
            raise SheetError(f"'{name}' cannot be a name: it reads as dice notation",
                             name, (0, len(name)))
        if name.lower() in seen:
            raise SheetError(f"'{name}' is named twice (names ignore case)", name, (0, len(name)))
        seen.add(name.lower())
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise SheetError(f"{name}: the value must be text or a whole number")
        text = str(value).strip()
        if not text:
            raise SheetError(f"{name}: the value is empty")
        if len(text) > value_limit:
            raise SheetError(f"{name}: the value is {len(text)} characters; the limit is "
                             f"{value_limit}")
        if any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in text):
            raise SheetError(f"{name}: the value has a line break, a control character or a "
                             "lone surrogate")
        out.append((name, text))
    return tuple(out)


def check_sheet(data: Mapping[str, Any]) -> Sheet:
    """Check a sheet sent by a player (``{"stats": {...}, "macros": {...}}``) and keep it."""
    stats = _check_entries("stats", data.get("stats"), MAX_STATS, MAX_STAT_VALUE)
    macros = _check_entries("macros", data.get("macros"), MAX_MACROS, MAX_MACRO_VALUE)
    return Sheet(stats, macros)


@dataclass(frozen=True, slots=True)
class Expansion:
    """The text to roll, and for each replaced piece: (start, end) typed ↔ (start, end) expanded."""

    typed: str
    text: str
    pieces: tuple[tuple[int, int, int, int], ...] = ()
    macro: str | None = None

    @property
    def changed(self) -> bool:
        return self.text != self.typed

    def typed_span(self, span: tuple[int, int] | None) -> tuple[int, int] | None:
        """Where a span of the expanded text lies in what the player typed."""
        if span is None or not self.changed:
            return span
        if self.macro is not None:
            return (0, len(self.typed))
        start, end = span

        def back(pos: int, is_end: bool) -> int:
            shift = 0
            for ts, te, es, ee in self.pieces:
                if pos < es or (is_end and pos == es):
                    break
                if pos < ee or (is_end and pos == ee):
                    return te if is_end else ts
                shift = te - ee
            return max(0, pos + shift)

        a = back(start, False)
        b = max(a + 1, back(end, True))
        return (a, b)


def system_of(text: str, default_system: str | None, aliases: Mapping[str, str]) -> str | None:
    """The system a text will be rolled in: its prefix's, else the room's."""
    m = _PREFIX.match(text)
    if m is not None:
        return aliases.get(m.group(1).lower(), m.group(1).lower())
    return default_system


def expand(typed: str, sheet: Sheet, default_system: str | None,
           aliases: Mapping[str, str]) -> Expansion:
    """Replace a macro name and stat names in ``typed``; see the module docstring for the rules."""
    macro = None
    text = typed
    macros = {k.lower(): (k, v) for k, v in sheet.macros}
    if typed.strip().lower() in macros:
        macro, text = macros[typed.strip().lower()]
    stats = {k.lower(): v for k, v in sheet.stats}
    if not stats:
        return Expansion(typed, text, (), macro)
    m = _PREFIX.match(text)
    body_start = m.end() if m is not None else 0
    system = system_of(text, default_system, aliases)
    hits = [(w.start(), w.end(), stats[w.group().lower()])
            for w in _WORD.finditer(text, body_start) if w.group().lower() in stats]
    if not hits:
        return Expansion(typed, text, (), macro)
    out: list[str] = []
    pieces: list[tuple[int, int, int, int]] = []
    length = 0
    pos = 0
    for i, (s, e, value) in enumerate(hits):
        gap = text[pos:s]
        if (system == "jadeclaw" and i > 0 and gap.strip() == "+"
                and _DICE_VALUE.match(hits[i - 1][2]) and _DICE_VALUE.match(value)):
            gap = " & "  # J1: pools join with '&'; '+ dS' would be an Include (J36)
            pieces.append((pos, s, length, length + len(gap)))
        out.append(gap)
        length += len(gap)
        out.append(value)
        pieces.append((s, e, length, length + len(value)))
        length += len(value)
        pos = e
    out.append(text[pos:])
    expanded = "".join(out)
    if macro is not None:
        return Expansion(typed, expanded, (), macro)
    return Expansion(typed, expanded, tuple(pieces), None)
