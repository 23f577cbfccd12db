"""A table cell as the reader sees it, holding the number it rounds.

The games' tables (``astragal table``) are rows of text for the terminal; CSV and JSON carry data.
A ``Shown`` cell is both: the rounded text (``"0.0%"``), and its exact ``value`` (0.000213), so a
spreadsheet gets the number, not the rounding.
"""

from __future__ import annotations

from typing import Self

__all__ = ["Shown", "number", "percent"]


class Shown(str):
    """Text that stands for a number: ``str`` for the eye, ``value`` for the data."""

    value: float

    def __new__(cls, text: str, value: float) -> Self:
        cell = super().__new__(cls, text)
        cell.value = value
        return cell


def percent(p: float, places: int = 1) -> Shown:
    """``12.5%`` for 0.125 (a probability shown in percent)."""
    return Shown(f"{100 * p:.{places}f}%", p)


def number(x: float, places: int = 2) -> Shown:
    """``0.75`` (a mean shown to ``places`` decimals)."""
    return Shown(f"{x:.{places}f}", x)
