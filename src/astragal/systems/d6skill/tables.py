"""GM tables for d6 + skill: P(Success) by bonus and #, opposed rolls by the bonuses' difference."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..._cells import percent
from . import rules as R
from .odds import d6_law, opposed_law
from .rules import DEFAULTS


def success_table(options: Mapping[str, Any] = DEFAULTS, bonuses: Sequence[int] = range(11),
                  difficulties: Sequence[int] = range(3, 16)) -> list[list[str]]:
    """P(Success) of d6 + bonus (rows) against each # (columns), stressful (S2, S7, S9)."""
    rules = R.make_rules(options)
    law = d6_law(rules.die("skill"))
    rows = [["bonus"] + [f"#{d}" for d in difficulties]]
    for b in bonuses:
        row = [f"{b:+d}"]
        for d in difficulties:
            # a Botch (P(botch)) is never a Success, whatever the result it counts
            p = sum(q for t, botch, q in law.joint()
                    if R.check_outcome(R.result(t, b), botch, d) == "success")
            row.append(percent(p))
        rows.append(row)
    return rows


def opposed_table(options: Mapping[str, Any] = DEFAULTS,
                  differences: Sequence[int] = range(-6, 7)) -> list[list[str]]:
    """Opposed Skill rolls by the difference of bonuses: Success, Failure, Botch, tie per round."""
    rules = R.make_rules(options)
    skill = rules.die("skill")
    rows = [["actor − opposition", "Success", "Failure", "Botch", "tie per round"]]
    for diff in differences:
        rl = opposed_law(skill, diff, skill, 0, rules)
        rows.append([f"{diff:+d}", percent(rl.outcomes.get('success', 0.0), 2),
                     percent(rl.outcomes.get('failure', 0.0), 2),
                     percent(rl.outcomes.get('botch', 0.0), 2),
                     percent(rl.tie_per_round, 2)])
    return rows


TABLES: dict[str, Callable[[Mapping[str, Any]], list[list[str]]]] = {
    "success": success_table, "opposed": opposed_table}
