"""The D6 System's die codes (seed 002; RULES.md §3, rules D1–D15, D-A1…D-A6, D-X1…D-X6).

The package, in reading order: ``rules`` (data, switches, every rule under its ID), ``notation``
(``od6: 4D+2 +1D vs moderate``), ``program`` (a side as a program of the dice algebra: a pool of
d6 summed, the Wild Die a marked exploding chain whose complication drops the highest die; the
roller samples it, the odds take its exact law, the same verdicts map over both; the roller
records its steps, which ``astragal.render.d6system`` puts into words), ``tables``.

>>> import astragal
>>> astragal.roll("od6: 3D+1 vs moderate", faces="4,5,6").outcome
'good'
"""

from __future__ import annotations

from .. import Game
from .notation import DieCode, Difficulty, Side, Spec, Term, parse
from .program import SideLaw, dice_law, dice_total, effective_options, odds, roll, total_law
from .rules import (
    CHECK_OUTCOMES,
    DEFAULTS,
    DIFFICULTIES,
    LEVELS,
    MODIFIERS,
    SWITCHES,
    Prepared,
    damage_bonus,
    difficulty_level,
    half_bonus,
    is_automatic,
    modifier_options,
    prepare,
    result_points,
    success_level,
    tie_goes,
    wild_die,
)
from .tables import TABLES, difficulties_table

__all__ = [
    "CHECK_OUTCOMES", "DEFAULTS", "DIFFICULTIES", "LEVELS", "MODIFIERS", "SWITCHES", "SYSTEM",
    "TABLES", "DieCode", "Difficulty", "Prepared", "Side", "SideLaw", "Spec", "Term",
    "damage_bonus", "dice_law", "dice_total", "difficulties_table", "difficulty_level",
    "effective_options", "half_bonus", "is_automatic", "modifier_options", "odds", "parse",
    "prepare", "result_points", "roll", "success_level", "tie_goes", "total_law", "wild_die",
]

SYSTEM = Game("d6system", "D6 System", parse, roll, odds, SWITCHES, aliases=("od6",),
              tables=TABLES,
              examples=("4D+2 vs moderate", "3D wild vs 10", "5D vs 4D"))
