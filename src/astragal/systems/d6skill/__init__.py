"""The d6 + skill game (seed 004; RULES.md §5, rules S1–S14 and S-A1–S-A6; switches in §6).

One d6 plus a Trait or Skill and modifiers, against a Difficulty (#) or an opposed roll. A first 1
is checked for a Botch, a 6 on most rolls explodes into a Critical, ATK is opposed by DEF and the
margin becomes DMG. The package, in reading order: ``rules`` (data, switches, every rule under
its ID), ``notation``, ``program`` (one d6 as a program of the dice algebra; the roller samples
it, the odds take its exact law, the same verdicts map over both; the roller records its steps,
which ``astragal.render.d6skill`` puts into words), ``tables``.

>>> import astragal
>>> astragal.roll("ds: d6+2", faces="6,6,3").result["result"]
17
>>> round(astragal.odds("ds: d6+3 vs 6").outcomes["success"], 12)  # 4, 5 or a Critical 6
0.5
"""

from __future__ import annotations

from .. import Game
from .notation import Check, Side, Spec, parse
from .odds import DieLaw, RoundLaw, d6_law, damage_law, odds, opposed_law, result_law
from .program import D6Roll, die_program, read_d6, roll
from .rules import (
    BOTCH_KINDS,
    BOTCH_ORDERS,
    DEFAULTS,
    KIND_TITLES,
    KINDS,
    SWITCHES,
    TIE_RULES,
    DieRules,
    Rules,
    automatic_success,
    botch_checked,
    botched,
    check_outcome,
    damage,
    explodes,
    make_rules,
    opposed_verdict,
    result,
)
from .tables import TABLES, opposed_table, success_table

__all__ = [
    "BOTCH_KINDS", "BOTCH_ORDERS", "DEFAULTS", "KINDS", "KIND_TITLES", "SWITCHES", "SYSTEM",
    "TABLES", "TIE_RULES", "Check", "D6Roll", "DieLaw", "DieRules", "RoundLaw", "Rules", "Side",
    "Spec", "automatic_success", "botch_checked", "botched", "check_outcome", "d6_law", "damage",
    "damage_law", "die_program", "explodes", "make_rules", "odds", "opposed_law",
    "opposed_table", "opposed_verdict", "parse", "read_d6", "result", "result_law", "roll",
    "success_table",
]

SYSTEM = Game("d6skill", "d6 + skill", parse, roll, odds, SWITCHES, aliases=("ds",),
              tables=TABLES,
              examples=("d6+3", "d6+2 vs 5"))
