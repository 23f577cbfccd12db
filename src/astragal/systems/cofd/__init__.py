"""Chronicles of Darkness d10 dice pools (seed 001; RULES.md §2, rules C1–C14, C-A*, C-X*).

The package, in reading order: ``rules`` (the data, the switches and every rule, registered under
its ID), ``notation`` (``cofd: Wits 3 + Composure 2 vs 4``), ``program`` (a side as a program of
the dice algebra; rolling samples it, the odds take its exact law; the same verdicts map over
both; the roller records its steps, which ``astragal.render.cofd`` puts into words), ``tables``
(the GM table).
"""

from __future__ import annotations

from .. import Game
from .notation import Action, Side, Term, parse
from .odds import SideLaw, odds, pool_pmf, side_law, single_outcomes
from .program import (
    Prepared,
    SideRoll,
    effective_rules,
    prepare,
    program,
    roll,
    roll_side,
)
from .rules import (
    AGAIN_RULES,
    CONTEST_OUTCOMES,
    DEFAULTS,
    EXTENDED_OUTCOMES,
    SINGLE_OUTCOMES,
    SWITCHES,
    Rules,
    again_key,
    contest,
    extended_result,
    is_success,
    rerolls,
    rote_rerolls,
    rules_from,
    verdict,
)
from .tables import TABLES, pools_table

__all__ = [
    "AGAIN_RULES", "CONTEST_OUTCOMES", "DEFAULTS", "EXTENDED_OUTCOMES", "SINGLE_OUTCOMES",
    "SWITCHES", "SYSTEM", "TABLES", "Action", "Prepared", "Rules", "Side", "SideLaw", "SideRoll",
    "Term", "again_key", "contest", "effective_rules", "extended_result", "is_success", "odds",
    "parse", "pool_pmf", "pools_table", "prepare", "program", "rerolls", "roll", "roll_side", "rote_rerolls",
    "rules_from", "side_law", "single_outcomes", "verdict",
]

SYSTEM = Game("cofd", "Chronicles of Darkness", parse, roll, odds, SWITCHES, tables=TABLES,
              examples=("7", "5 9-again", "4 rote", "chance"))
