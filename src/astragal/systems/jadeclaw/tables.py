"""The GM's tables, computed by the rules: Levels and Bonuses (J20), Levels against the
Difficulty ladder, Damage against Soak by Level."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._cells import number, percent
from ...render.jadeclaw import dice_text
from ...switches import resolve
from . import rules as R
from .odds import contest_distribution, final_score_pmf
from .program import Prepared, damage_hits_distribution

__all__ = ["TABLES", "contest_table", "damage_table", "level_vs_level", "levels_table"]


def levels_table(max_level: int = 20, max_bonus: int = 6,
                 distribution: str = "per_die_carry_down") -> list[list[str]]:
    """J20: the Summary of Levels and Bonuses, computed (rows: Level; columns: +0..+6)."""
    rows = [["Level", "Dice"] + [f"+{b}" for b in range(1, max_bonus + 1)]]
    for level in range(max_level + 1):
        base = R.level_dice(level)
        rows.append(["none" if level == 0 else str(level), dice_text(base) if base else "zero"]
                    + [dice_text(R.apply_bonuses(base, b, distribution))
                       for b in range(1, max_bonus + 1)])
    return rows


def contest_table(options: Mapping[str, Any] = R.DEFAULTS, penalties: int = 0,
                  max_level: int = 20) -> list[list[str]]:
    """P(Success or better) of each Level (rows) against each Difficulty (columns)."""
    rows = [["Level (P Success or better)"] + [R.DIFFICULTY_TITLES[d] for d in R.DIFFICULTIES]]
    for level in range(1, max_level + 1):
        prep = Prepared(R.level_dice(level), (), penalties, False, None)
        pa = final_score_pmf(prep, options)
        row = [f"L{level} {dice_text(R.level_dice(level))}"]
        for dice in R.DIFFICULTIES.values():
            pb = final_score_pmf(Prepared(dice, (), 0, False, None), options)
            out = contest_distribution(pa, pb, None, None, options)
            row.append(percent(out['success'] + out['overwhelming_success']))
        rows.append(row)
    return rows


def level_vs_level(options: Mapping[str, Any] = R.DEFAULTS, penalties: int = 0,
                   max_level: int = 20) -> list[list[dict[str, float]]]:
    """Contest outcome probabilities of every Level against every Level (1..max_level)."""
    pmfs = [final_score_pmf(Prepared(R.level_dice(lv), (), penalties, False, None), options)
            for lv in range(1, max_level + 1)]
    plain = [final_score_pmf(Prepared(R.level_dice(lv), (), 0, False, None), options)
             for lv in range(1, max_level + 1)]
    return [[contest_distribution(pa, pb, None, None, options) for pb in plain] for pa in pmfs]


def damage_table(options: Mapping[str, Any] = R.DEFAULTS,
                 max_level: int = 20) -> list[list[str]]:
    """Mean hits of Damage dice of each Level (rows) against Soak dice of each Level (columns)."""
    rows = [["Damage \\ Soak"] + [f"L{lv}" for lv in range(max_level + 1)]]
    for dl in range(1, max_level + 1):
        row = [f"L{dl} {dice_text(R.level_dice(dl))}"]
        for sl in range(max_level + 1):
            dist = damage_hits_distribution(R.level_dice(dl), R.level_dice(sl), R.NORMAL,
                                            options=options)
            row.append(number(sum(h * p for h, p in enumerate(dist))))
        rows.append(row)
    return rows


def _options(options: Mapping[str, Any]) -> dict[str, Any]:
    return resolve(R.SWITCHES, options, "Jadeclaw")


def _table_levels(options: Mapping[str, Any]) -> list[list[str]]:
    return levels_table(distribution=_options(options)["bonus_distribution"])


def _table_contest(options: Mapping[str, Any]) -> list[list[str]]:
    opts = dict(options)
    penalties = int(opts.pop("penalties", 0))
    return contest_table(_options(opts), penalties)


def _table_damage(options: Mapping[str, Any]) -> list[list[str]]:
    return damage_table(_options(options))


TABLES = {"levels": _table_levels, "contest": _table_contest, "damage": _table_damage}
