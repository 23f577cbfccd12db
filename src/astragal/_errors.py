"""astragal's errors: one root, and every error that input can cause is also a ``ValueError``.

::

    AstragalError                  anything astragal raises on purpose
    └── InputError (ValueError)    the input was wrong; carries the text and the span
        ├── NotationError          the notation cannot be read (unknown word, bad die, missing side)
        ├── FacesError             scripted faces do not fit the dice (too few, too many, out of range)
        ├── OptionError            an unknown house-rule switch or value, or contradictory options
        └── LimitError             a request beyond the Limits (dice per roll, length, odds work)

Each input error can draw itself with a caret under the mistake::

    jc: d12 d7 vs 2d10
            ^^
    d7 is not a Jadeclaw die: sizes are d4, d6, d8, d10, d12
"""

from __future__ import annotations

__all__ = [
    "AstragalError",
    "FacesError",
    "InputError",
    "LimitError",
    "NotationError",
    "OptionError",
    "cut",
    "shown",
    "visible",
]


class AstragalError(Exception):
    """The root of every error astragal raises on purpose."""


class InputError(AstragalError, ValueError):
    """The input was wrong: says what, and where in ``text`` (``span`` = start, end)."""

    def __init__(self, message: str, text: str = "", span: tuple[int, int] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.text = text
        self.span = span

    def pretty(self) -> str:
        """The input line, a caret under the mistake, and the message. A line longer than
        ``WINDOW`` characters is shown around the mistake, '…' where it is cut."""
        if not self.text or self.span is None:
            return self.message
        start, end = self.span
        start = max(0, min(start, len(self.text)))
        end = max(start + 1, min(end, len(self.text) + 1))
        line = visible(self.text.replace("\n", " "))
        if len(line) > WINDOW:
            lo = max(0, min(start - WINDOW // 3, len(line) + 1 - WINDOW))
            hi = lo + WINDOW
            end = min(end, hi)
            line = ("…" if lo else "") + line[lo:hi] + ("…" if hi < len(line) else "")
            start, end = start - lo + (lo > 0), end - lo + (lo > 0)
        return f"{line}\n{' ' * start}{'^' * (end - start)}\n{visible(self.message)}"

    def to_json(self) -> dict[str, object]:
        """A stable JSON form: kind, message, text and span."""
        return {
            "error": type(self).__name__,
            "message": self.message,
            "text": self.text,
            "span": list(self.span) if self.span else None,
        }


# The most characters of the input an error shows: a longer line is cut to this many around
# the mistake (a terminal's width, not a thousand characters of "d6+d6+…")
WINDOW = 72


class NotationError(InputError):
    """The notation cannot be read."""


class FacesError(InputError):
    """Scripted faces do not fit the dice that were rolled."""


class OptionError(InputError):
    """An unknown house-rule switch, a bad value, or options that contradict each other."""


class LimitError(InputError):
    """The request is beyond the configured Limits."""


# Characters that act on a terminal instead of showing (C0 and C1 controls, DEL) or turn the rest
# of a line around (the bidirectional controls): each shown as one visible character, so that a
# caret under the text still points at what it names
_VISIBLE = {**{c: 0x2400 + c for c in range(0x20) if c != 0x0A}, 0x7F: 0x2421,
            **{c: 0xFFFD for c in [*range(0x80, 0xA0), *range(0x202A, 0x202F),
                                   *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C]}}


def visible(text: str) -> str:
    """``text`` as a terminal may print it: controls as their pictures (ESC as ␛), bidi marks
    as �, one character for one (line breaks kept)."""
    return text.translate(_VISIBLE) if not text.isprintable() else text


def shown(value: object) -> str:
    """A value as an error message names it: text in quotes, anything else as Python writes it,
    ``cut`` to 40 characters."""
    return cut(f"'{value}'" if isinstance(value, str) else repr(value))


def cut(text: str) -> str:
    """``text`` cut to 40 characters (a message names what was wrong; it does not echo a
    megabyte): a number typed with a thousand digits, say."""
    return text if len(text) <= 40 else text[:37] + "..."
