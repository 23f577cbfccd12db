"""The d6 + skill game (seed 004; RULES.md §5, rules S1–S14 and S-A1–S-A6; switches in §6).

One d6 plus a Trait or Skill and modifiers, against a Difficulty (#) or an opposed roll. A first 1
is checked for a Botch, a 6 on most rolls explodes into a Critical, ATK is opposed by DEF and the
margin becomes DMG. Written on the game kit (``astragal.kit``), in reading order: ``rules`` (data,
switches, every rule under its ID), ``notation``, ``game`` (the die as a procedure of the rules,
the verdict and the words; the kit derives the roll and the exact odds from them), ``tables``.

>>> import astragal
>>> astragal.roll("ds: d6+2", faces="6,6,3").result["result"]
17
>>> round(astragal.odds("ds: d6+3 vs 6").outcomes["success"], 12)  # 4, 5 or a Critical 6
0.5
"""

from __future__ import annotations

from .game import GAME, forget, skill_die
from .notation import Check, Side, Spec, parse
from .rules import (
    BOTCH_KINDS,
    BOTCH_ORDERS,
    DEFAULTS,
    KIND_TITLES,
    KINDS,
    SWITCHES,
    TIE_RULES,
    automatic_success,
    botch_checked,
    botched,
    check_outcome,
    damage,
    explodes,
    kinds,
    opposed_verdict,
    result,
)
from .tables import TABLES, opposed_table, success_table

__all__ = [
    "BOTCH_KINDS", "BOTCH_ORDERS", "DEFAULTS", "KINDS", "KIND_TITLES", "SWITCHES", "SYSTEM",
    "TABLES", "TIE_RULES", "Check", "Side", "Spec", "automatic_success", "botch_checked",
    "botched", "check_outcome", "damage", "explodes", "forget", "kinds", "opposed_table",
    "opposed_verdict", "parse", "result", "skill_die", "success_table",
]

GAME.tables = TABLES
SYSTEM = GAME
