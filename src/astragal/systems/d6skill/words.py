"""d6 + skill in the game's words: how a die was read, the ATK line, the odds' notes."""

from __future__ import annotations

from typing import NamedTuple

from .notation import Side
from .rules import BOTCH_FACE, CRITICAL_FACE, KIND_TITLES, DieRules, Rules


class D6Roll(NamedTuple):
    """One d6 as the rules read it: the faces it used, what it adds, Botch and Critical."""

    faces: tuple[int, ...]
    total: int
    botch: bool = False
    critical: bool = False

    @property
    def explosions(self) -> int:
        """How many times a 6 was rolled again (S9)."""
        return len(self.faces) - 1 if self.critical else 0


def describe(d: D6Roll, result: int, bonus: int, rules: DieRules) -> str:
    """How one d6 was read: ``d6 shows 6, 6, 3: Critical (S9), 6 + 6 + 3 = 15 → 15 + 2 = 17``."""
    sign = "-" if bonus < 0 else "+"
    sum_text = f"{d.total} {sign} {abs(bonus)} = {result}"
    if d.botch:
        return "d6 shows 1, botch check (S7) shows 1 — Botch!"
    if d.faces[0] == BOTCH_FACE and len(d.faces) == 2 and not d.critical:
        return (f"d6 shows 1, botch check (S7) shows {d.faces[1]}: no Botch, the die counts 1 "
                f"(S8) → {sum_text}")
    if d.critical:
        chain = " + ".join(map(str, d.faces))
        capped = (rules.max_explosions is not None and d.explosions == rules.max_explosions
                  and d.faces[-1] == CRITICAL_FACE)
        return (f"d6 shows {', '.join(map(str, d.faces))}: Critical (S9), {chain} = {d.total}"
                + (" (the house cap on explosions ends the chain)" if capped else "")
                + f" → {sum_text}")
    return f"d6 shows {d.faces[0]} → {sum_text}"


def attack_line(atk: int, dfn: int, botch: bool, def_botch: bool, outcome: str) -> str:
    """The ATK's verdict line (S2, S4, S7)."""
    if botch:
        return "ATK Botch! (S7: usually a broken weapon)"
    if outcome == "hit":
        why = " (the DEF botched)" if def_botch else ""
        return f"ATK {atk} vs DEF {dfn}: hit{why}"
    if outcome == "tie":
        return f"ATK {atk} vs DEF {dfn}: a tie, which stands (house rule)"
    return f"ATK {atk} vs DEF {dfn}: miss (S2: not higher than the DEF)"


def side_title(side: Side, role: str) -> str:
    """``ATK``, ``DEF``, or ``Actor (Skill)``."""
    if side.kind in ("atk", "def"):
        return KIND_TITLES[side.kind]
    return f"{role} ({KIND_TITLES[side.kind]})"


def law_note(name: str, side: Side, rules: Rules) -> str:
    """The odds' note on how a side's die is read."""
    dr = rules.die(side.kind)
    parts = [f"{name}: {KIND_TITLES[side.kind]} d6 {side.bonus:+d}"]
    parts.append("botch check on a 1 (S7)" if dr.botches else "no botch check")
    if dr.explodes and dr.max_explosions != 0:
        cap = "" if dr.max_explosions is None else f", at most {dr.max_explosions} times"
        parts.append(f"6s explode (S9{cap})")
    else:
        parts.append("6s do not explode")
    return ", ".join(parts)
