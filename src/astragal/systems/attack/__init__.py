"""The d6 attack-table game (seed 003; RULES.md §4, A1–A20; switches §6) and its fight tracker.

Roll ATTACK and WEAPON averaged (plus throw, stance and Luck dice), read the attack table from the
highest face and how many dice show it, let the defender try to block with 6s, and roll critical
damage dice for three or more 6s.

>>> import astragal
>>> r = astragal.roll("at: atk 4 wpn 3 vs armor 1 shield 1", faces="6,6,2 / 6,3")
>>> r.outcome, r.result["column"], r.result["damage"], r.result["stun"]
('hit', 'double 6', 3, True)

Modules: ``rules`` (data, switches, the rules as pure functions), ``notation`` (the ``at:``
notation), ``exchange`` (rolling one exchange, its steps worded by ``render.attack``, and its
exact odds), ``fight`` (the tracker's fight; its file and printing are the CLI's,
``astragal/fight_cli.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._cells import percent
from ..._limits import Limits
from ..._rng import Source
from ...dice import Roll
from .. import Game, Odds
from . import exchange
from .exchange import block_chance, column_chances
from .fight import FightError
from .notation import Attacker, Defender, Exchange, parse
from .rules import COLUMNS, DEFAULTS, SWITCHES, TRIPLE_COLUMNS, Rules, rules_for

__all__ = ["DEFAULTS", "SWITCHES", "SYSTEM", "TABLES", "Attacker", "Defender", "Exchange", "FightError",
           "Rules", "parse", "rules_for", "rules_of"]


def rules_of(spec: Exchange, options: Mapping[str, Any]) -> Rules:
    """The rules of this exchange: the switches given, overlaid by those written inline."""
    return rules_for({**options, **dict(spec.options)})


def _roll(spec: Exchange, source: Source, options: Mapping[str, Any], limits: Limits,
          text: str) -> Roll:
    return exchange.roll(spec, source, rules_of(spec, options), limits, text)


def _odds(spec: Exchange, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    return exchange.odds(spec, rules_of(spec, options), limits, text)


def _pct(p: float) -> str:
    return percent(p, 2)


def _table_categories(options: Mapping[str, Any]) -> list[list[str]]:
    """Column chances (and hit/critical totals) for 1–12 attack dice."""
    rules = rules_for(options)
    names = list(COLUMNS) + [c for c in TRIPLE_COLUMNS if rules.triple_non_six == "own_column"]
    rows = [["Dice"] + names + ["hit", "stun"]]
    for n in range(1, 13):
        ch = column_chances(n, rules)
        stun = sum(p for name, p in ch.items()
                   if name != COLUMNS[0] and rules.table.column(name).stun)
        rows.append([str(n)] + [_pct(ch.get(name, 0.0)) for name in names]
                    + [_pct(1 - ch[COLUMNS[0]]), _pct(stun)])
    return rows


def _table_block(options: Mapping[str, Any]) -> list[list[str]]:
    """P(block) for 1–12 DEFENSE dice against a single, a double, and 3–5 sixes (A11)."""
    rules_for(options)
    needs = (1, 2, 3, 4, 5)
    rows = [["DEFENSE dice"] + [f"needs {'-'.join(['6'] * k)}" for k in needs]]
    for d in range(1, 13):
        rows.append([str(d)] + [_pct(block_chance(d, k)) for k in needs])
    return rows


TABLES = {"categories": _table_categories, "block": _table_block}
SYSTEM = Game("attack", "the d6 attack table", parse, _roll, _odds, SWITCHES, aliases=("at",),
              tables=TABLES,
              examples=("atk 4 wpn 3 vs armor 2 shield 1 parry 2", "5d6", "atk 4 wpn 3"))

