"""A table cell as the reader sees it, holding the number it rounds.

The games' tables (``astragal table``) are rows of text for the terminal; CSV and JSON carry data.
A ``Shown`` cell is both: the rounded text (``"0.0%"``), and its exact ``value`` (0.000213), so a
spreadsheet gets the number, not the rounding.
"""

from __future__ import annotations

from typing import Self

__all__ = ["Shown", "number", "percent", "probability"]


class Shown(str):
    """Text that stands for a number: ``str`` for the eye, ``value`` for the data."""

    value: float

    def __new__(cls, text: str, value: float) -> Self:
        cell = super().__new__(cls, text)
        cell.value = value
        return cell


_NOISE = 4e-15  # a few units in the last place of 1: what summing a law's floats leaves


def _clean(x: float) -> float:
    """``x`` without the noise that summing floats and cutting a series' far tail leave in the
    last digits: a value within 14 significant digits of a short number (10 digits or fewer)
    is that number (``0.7500000000000002`` is 0.75, ``0.5099999999999999`` is 0.51); any
    other value is kept to the last bit (``0.024305555555555556``, 7/288)."""
    short = f"{x:.14g}"
    digits = len(short.split("e")[0].replace("-", "").replace(".", "").lstrip("0"))
    return float(short) if digits <= 10 else x


def probability(p: float) -> float:
    """A probability summed from floats, without the rounding noise: never above 1 or below 0
    (``1.0000000000000002`` is 1)."""
    if p > 1.0 - _NOISE:
        return 1.0
    return max(0.0, _clean(p))


def percent(p: float, places: int = 1) -> Shown:
    """``12.5%`` for 0.125 (a probability shown in percent)."""
    p = probability(p)
    return Shown(f"{100 * p:.{places}f}%", p)


def number(x: float, places: int = 2) -> Shown:
    """``0.75`` (a mean shown to ``places`` decimals)."""
    return Shown(f"{x:.{places}f}", _clean(x))
