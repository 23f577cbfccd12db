"""Jadeclaw step dice (seed 000; RULES.md §1, rules J1–J52, J-A*, J-X*).

The package, in reading order: ``rules`` (the data, the switches and every rule, registered under
its ID), ``notation`` (``jc: d12 & d8 +1b fav vs routine``, ``jc: dmg 2d12 vs soak d8``),
``program`` (a side's Score and a Damage Roll as programs of the dice algebra, and rolling them:
the roll records its steps, which ``astragal.render.jadeclaw`` puts into words), ``odds`` (their
exact law, the same verdicts mapped over it), ``tables`` (the GM tables).
"""

from __future__ import annotations

from ...render.jadeclaw import dice_text
from .. import Game
from .notation import Damage, Pool, Simple, Spec, parse, quality_in_force
from .odds import contest_distribution, final_score_pmf, odds
from .program import (
    Prepared,
    damage_hits,
    damage_hits_distribution,
    damage_program,
    effective_options,
    favored_index,
    prepare,
    roll,
    score_program,
)
from .rules import (
    CONTEST_OUTCOMES,
    DEFAULTS,
    DIFFICULTIES,
    DIFFICULTY_TITLES,
    ENERVATED,
    NORMAL,
    OVERWHELM,
    QUALITIES,
    SINGLE_OUTCOMES,
    SIZES,
    SLAYING,
    SWITCHES,
    TOP,
    apply_bonuses,
    apply_limit,
    contest_outcome,
    damage_kind,
    damage_penalty,
    level_dice,
    may_declare_success,
    net,
    pair_hits,
    quality_of_level,
    remove_die,
    resolve_tested,
    roll_count,
)
from .tables import TABLES, contest_table, damage_table, level_vs_level, levels_table

__all__ = [
    "CONTEST_OUTCOMES", "DEFAULTS", "DIFFICULTIES", "DIFFICULTY_TITLES", "ENERVATED", "NORMAL",
    "OVERWHELM", "QUALITIES", "SINGLE_OUTCOMES", "SIZES", "SLAYING", "SWITCHES", "SYSTEM",
    "TABLES", "TOP", "Damage", "Pool", "Prepared", "Simple", "Spec", "apply_bonuses",
    "apply_limit", "contest_distribution", "contest_outcome", "contest_table", "damage_hits",
    "damage_hits_distribution", "damage_kind", "damage_penalty", "damage_program",
    "damage_table", "dice_text", "effective_options", "favored_index", "final_score_pmf",
    "level_dice", "level_vs_level", "levels_table", "may_declare_success", "net", "odds",
    "pair_hits", "parse", "prepare", "quality_in_force", "quality_of_level", "remove_die",
    "resolve_tested", "roll", "roll_count", "score_program",
]

SYSTEM = Game("jadeclaw", "Jadeclaw", parse, roll, odds, SWITCHES, aliases=("jc",),
              tables=TABLES,
              examples=("d12 d8 vs 2d10", "L7 +1b vs L8", "d10 d8 vs routine",
                        "d12 d6 -1p vs 2d10"))
