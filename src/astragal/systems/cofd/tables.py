"""The Chronicles of Darkness GM table: pools by again rule."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..._cells import number, percent
from . import rules as R
from .notation import Side, Term
from .odds import side_law, single_outcomes
from .program import prepare


def pools_table(options: Mapping[str, Any] | None = None, max_pool: int = 20) -> list[list[str]]:
    """Pool 1–20 (and a chance die) by again rule: P(≥1 success), P(exceptional), mean successes."""
    rules = R.rules_from(options or {})
    e = rules.exceptional_at
    header = ["Pool"]
    for key in R.AGAIN_RULES:
        name = "no-again" if key == "none" else f"{key}-again"
        header += [f"{name} ≥1", f"{name} {e}+", f"{name} mean"]
    rows = [header]
    for pool in range(max_pool + 1):
        row = ["chance" if pool == 0 else str(pool)]
        for key in R.AGAIN_RULES:
            prep = prepare(Side((Term(pool),), key), rules)
            law = side_law(prep, rules)
            out = single_outcomes(law, rules)
            mean = math.fsum(k * p for k, p in enumerate(law.pmf))
            row += [percent(out['success'] + out['exceptional_success']),
                    percent(out['exceptional_success']), number(mean)]
        rows.append(row)
    return rows


def _table_pools(options: Mapping[str, Any]) -> list[list[str]]:
    return pools_table(options)


TABLES = {"pools": _table_pools}
