"""GM tables for d6 + skill: P(Success) by bonus and #, opposed rolls by the bonuses' difference,
each cell the game's own exact odds."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..._cells import percent
from ..._limits import DEFAULT_LIMITS
from .game import GAME
from .notation import parse
from .rules import DEFAULTS


def _odds(text: str, options: Mapping[str, Any]) -> Any:
    return GAME.odds(parse(text, 3), {**DEFAULTS, **options}, DEFAULT_LIMITS, text).outcomes


def success_table(options: Mapping[str, Any] = DEFAULTS, bonuses: Sequence[int] = range(11),
                  difficulties: Sequence[int] = range(3, 16)) -> list[list[str]]:
    """P(Success) of d6 + bonus (rows) against each # (columns), stressful (S2, S7, S9)."""
    rows = [["bonus"] + [f"#{d}" for d in difficulties]]
    for b in bonuses:
        rows.append([f"{b:+d}"] + [percent(_odds(f"ds: d6{b:+d} vs {d} stressful", options)[
            "success"]) for d in difficulties])
    return rows


def opposed_table(options: Mapping[str, Any] = DEFAULTS,
                  differences: Sequence[int] = range(-6, 7)) -> list[list[str]]:
    """Opposed Skill rolls by the difference of bonuses: Success, Failure, Botch, tie per round
    (the chance that a round ties: the odds of a tie that stands, opposed_tie=stand)."""
    rows = [["actor − opposition", "Success", "Failure", "Botch", "tie per round"]]
    for diff in differences:
        text = f"ds: d6{diff:+d} vs d6"
        out = _odds(text, options)
        tie = _odds(text, {**options, "opposed_tie": "stand"})["tie"]
        rows.append([f"{diff:+d}", percent(out["success"], 2), percent(out["failure"], 2),
                     percent(out["botch"], 2), percent(tie, 2)])
    return rows


TABLES: dict[str, Callable[[Mapping[str, Any]], list[list[str]]]] = {
    "success": success_table, "opposed": opposed_table}
