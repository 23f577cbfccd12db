"""Whole numbers as players type them: ASCII digits only, in every reader.

``str.isdigit`` and a regex's ``\\d`` also take other characters: ``'²'`` and ``'①'``, which
``int()`` refuses with a ValueError (a traceback where a clear error was due), and other scripts'
digits (``'٣'``, ``'３'``), which ``int()`` reads as numbers. The general dice notation has always
read ASCII digits only (its patterns are ``re.ASCII``); every other reader of typed numbers asks
``digits`` (or compiles its patterns with ``re.ASCII``), so each game refuses the same text with
its own error, and no game reads a number another refuses.
"""

from __future__ import annotations

__all__ = ["digits", "signed"]


def digits(text: str) -> bool:
    """Whether ``text`` is one or more ASCII digits (what ``int()`` reads in every reader)."""
    return text.isascii() and text.isdigit()


def signed(text: str, most: int = 40) -> int | None:
    """A whole number typed as at most ``most`` ASCII digits after an optional minus sign
    (``'12'``, ``' -7 '``: a seed), or None."""
    body = text.strip()
    unsigned = body.removeprefix("-")
    return int(body) if digits(unsigned) and len(unsigned) <= most else None
