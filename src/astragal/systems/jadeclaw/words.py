"""The transcript of a Jadeclaw roll in the game's words (the rules decide; this only says it)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["OUTCOME_WORDS", "dice_text", "n", "verdict_line"]

OUTCOME_WORDS = {"botch": "Botch", "overwhelming_failure": "Overwhelming Failure",
                 "failure": "Failure", "tie": "Tie", "success": "Success",
                 "overwhelming_success": "Overwhelming Success"}


def dice_text(sizes: Sequence[int]) -> str:
    """``2d12 & d4`` (largest first), ``no dice`` for an empty pool."""
    if not sizes:
        return "no dice"
    counts: dict[int, int] = {}
    for s in sorted(sizes, reverse=True):
        counts[s] = counts.get(s, 0) + 1
    return " & ".join(f"{k if k > 1 else ''}d{s}" for s, k in counts.items())


def n(count: int, one: str, many: str) -> str:
    """``1 Bonus``, ``2 Bonuses``."""
    return f"{count} {one if count == 1 else many}"


def verdict_line(a: int, b: int, qa: str | None, qb: str | None, outcome: str) -> str:
    """``7 vs 4: margin +3 → Success``, with why a tie was broken."""
    line = f"{a} vs {b}: margin {a - b:+d} → {OUTCOME_WORDS[outcome]}"
    if a == b == 1:
        line += " (double Botch)"
    elif a == b and outcome != "tie":
        line += f" (Quality {qa} beats {qb})" if outcome == "success" else \
            f" (Quality {qb} beats {qa})"
    return line
