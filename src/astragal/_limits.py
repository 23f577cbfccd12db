"""Resource limits: every request is bounded, and going past a bound is a clear error."""

from __future__ import annotations

from typing import Any, Self

from ._errors import LimitError, OptionError, shown
from ._records import Record

__all__ = ["CEILINGS", "DEFAULT_LIMITS", "Limits"]

CEILINGS: dict[str, int] = {
    # The most each limit may be raised to. Past these the numbers stop meaning anything: no
    # game's notation writes a count of more than six digits (so a dice limit over 999 999 would
    # be quoted in errors it can never apply to), and work beyond 10**12 steps is hours of CPU.
    "max_notation_length": 1_000_000,
    "max_dice": 999_999,
    "max_rolls": 1_000_000,
    "max_explosions": 1_000_000,
    "max_odds_work": 10**12,
    "max_odds_memory": 1 << 40,
}


class _Bounds(Record):
    max_notation_length: int = 1000
    max_dice: int = 500
    max_rolls: int = 100
    max_explosions: int = 100
    max_odds_work: int = 20_000_000  # steps: one step is about one multiply-add in a Python
    # loop (~30 ns), so the default is about a second of work; numpy kernels count what they do
    # in the same units (their estimates are tested within 4x of the work they count)
    max_odds_memory: int = 512 * 1024 * 1024  # bytes one odds request may use at its peak



class Limits(_Bounds):
    """Bounds on what one request may ask for."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        self = super().__new__(cls, *args, **kwargs)
        # A limit is a whole number from 1 to its ceiling: a string, a float (NaN would turn the
        # check off: every comparison with it is false), a bool, 0 or a negative number is an
        # OptionError naming the limit, not a TypeError deep inside a system.
        for name, value in zip(self._fields, self):
            ceiling = CEILINGS[name]
            if isinstance(value, bool) or not isinstance(value, int):
                raise OptionError(f"Limits({name}=...) must be a whole number from 1 to "
                                  f"{ceiling:,}, not {shown(value)}")
            if not 1 <= value <= ceiling:
                raise OptionError(f"Limits({name}={value}) is out of range: it must be from 1 "
                                  f"to {ceiling:,}")
        return self

    @classmethod
    def _make(cls, iterable: Any) -> Self:  # type: ignore[override]  # _replace checks too
        return cls(*iterable)

    def check_length(self, text: str) -> None:
        """Refuse notation longer than ``max_notation_length``."""
        if len(text) > self.max_notation_length:
            raise LimitError(
                f"the notation is {len(text)} characters long; the limit is "
                f"{self.max_notation_length}",
                text[: self.max_notation_length],
                (self.max_notation_length - 1, self.max_notation_length),
            )

    def check_dice(self, count: int, text: str = "", span: tuple[int, int] | None = None) -> None:
        """Refuse a pool of more than ``max_dice`` dice."""
        if count > self.max_dice:
            raise LimitError(
                f"{count} dice is more than the limit of {self.max_dice} dice per roll", text, span
            )

    def check_work(self, work: int, what: str, text: str = "") -> None:
        """Refuse exact odds whose estimated work exceeds ``max_odds_work``."""
        if work > self.max_odds_work:
            raise LimitError(
                f"the exact odds of {what} would take about {work:.2g} steps, over the odds work "
                f"limit of {self.max_odds_work:.2g}",
                text,
                (0, len(text)) if text else None,
            )


    def check_memory(self, nbytes: int, what: str, text: str = "") -> None:
        """Refuse exact odds whose estimated peak memory exceeds ``max_odds_memory``."""
        if nbytes > self.max_odds_memory:
            raise LimitError(
                f"the exact odds of {what} would need about {_mib(nbytes)} of memory, over the "
                f"odds memory limit of {_mib(self.max_odds_memory)}",
                text,
                (0, len(text)) if text else None,
            )


def _mib(nbytes: int) -> str:
    return f"{nbytes / 2**20:,.0f} MiB" if nbytes >= 2**20 else f"{nbytes / 1024:,.0f} KiB"


DEFAULT_LIMITS = Limits()
# The web table's bounds: its rolls and their odds (exact odds well inside a request's time),
# and `astragal luck`'s odds of the rolls of its exports (each distinct roll's odds cost at most
# what the table's Luck panel would spend on it: a crafted export cannot ask for more)
WEB_LIMITS = Limits(max_notation_length=500, max_odds_work=5_000_000)
