"""Resource limits: every request is bounded, and going past a bound is a clear error."""

from __future__ import annotations

from dataclasses import dataclass

from ._errors import LimitError

__all__ = ["DEFAULT_LIMITS", "Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what one request may ask for."""

    max_notation_length: int = 1000
    max_dice: int = 500
    max_rolls: int = 100
    max_explosions: int = 100
    max_odds_work: int = 20_000_000

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


DEFAULT_LIMITS = Limits()
