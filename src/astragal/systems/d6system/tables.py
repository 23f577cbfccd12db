"""GM tables for the D6 System: P(success) of each die code against each standard difficulty."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..._cells import percent
from ..._errors import OptionError
from . import rules as R
from .program import dice_law
from .rules import DEFAULTS, DIFFICULTIES


def difficulties_table(options: Mapping[str, Any] = DEFAULTS, pips: int = 0,
                       max_dice: int = 12) -> list[list[str]]:
    """P(success) of each die code 1D…12D (rows) against each standard difficulty (columns)."""
    wild = bool(options["wild_die"])
    rows = [["Code"] + [f"{name.title()} {number}" for name, (number, _, _)
                        in DIFFICULTIES.items()]]
    for dice in range(1, max_dice + 1):
        law = dice_law(dice, wild, options["wild_one"])
        row = [R.code_text(dice, pips)]
        for number, _, _ in DIFFICULTIES.values():
            if R.is_automatic(number):
                row.append("100.0%")  # D7: Automatic needs no roll
                continue
            p = sum(q for k, q in enumerate(law.pmf)
                    if R.success_level(R.result_points(k + pips, number)) is not None)
            row.append(percent(p))
        rows.append(row)
    return rows


def _table_difficulties(options: Mapping[str, Any]) -> list[list[str]]:
    raw = dict(options)
    pips_text = str(raw.pop("pips", "0"))
    if pips_text not in ("0", "1", "2"):
        raise OptionError(f"the table's pips option takes 0, 1 or 2, not '{pips_text}'")
    return difficulties_table(R.options_from(raw), int(pips_text))


TABLES: dict[str, Callable[[Mapping[str, Any]], list[list[str]]]] = {
    "difficulties": _table_difficulties}
