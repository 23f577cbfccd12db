"""d6 + skill in the game's words: a roll's steps as transcript lines, and the odds' notes. Pure
functions of the steps (``astragal.dice.steps``) and of a die's switches."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..dice.steps import Begin, Count, Rolled, Round, Side, Step, Tie, Verdict

if TYPE_CHECKING:
    from ..systems.d6skill.rules import DieRules

_ROLES = {"actor": "Actor", "opposition": "Opposition"}
_CHAIN = ("critical", "explosion", "capped")  # the marks of a Critical chain's dice (S9)
_CHECK = ("botch_check", "botch")  # the marks of a botch check's die (S7, S8)


def describe(step: Rolled, result: int, bonus: int) -> str:
    """How one d6 was read: ``d6 shows 6, 6, 3: Critical (S9), 6 + 6 + 3 = 15 → 15 + 2 = 17``."""
    faces = [runs[0][0] for runs in step.runs]
    marks = step.marks or ("",) * len(faces)
    total = sum(step.values)
    sign = "-" if bonus < 0 else "+"
    sum_text = f"{total} {sign} {abs(bonus)} = {result}"
    if "botch" in marks:
        return "d6 shows 1, botch check (S7) shows 1 — Botch!"
    if "botch_check" in marks:
        return (f"d6 shows 1, botch check (S7) shows {faces[1]}: no Botch, the die counts 1 "
                f"(S8) → {sum_text}")
    if "critical" in marks:
        chain = [f for f, m in zip(faces, marks) if m in _CHAIN]
        capped = " (the house cap on explosions ends the chain)" if "capped" in marks else ""
        return (f"d6 shows {', '.join(map(str, chain))}: Critical (S9), "
                f"{' + '.join(map(str, chain))} = {total}{capped} → {sum_text}")
    return f"d6 shows {faces[0]} → {sum_text}"


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


def side_title(facts: Mapping[str, Any], role: str) -> str:
    """``ATK``, ``DEF``, or ``Actor (Skill)``."""
    if facts["kind"] in ("atk", "def"):
        return str(facts["title"])
    return f"{role} ({facts['title']})"


def _botched(step: Rolled | None) -> bool:
    return step is not None and "botch" in step.marks


def transcript(steps: Iterable[Step]) -> tuple[str, ...]:
    """A d6 + skill roll's steps in words, one line each."""
    steps = tuple(steps)
    rounds = any(isinstance(s, Tie) for s in steps)  # each round is headed when one was tied
    lines: list[str] = []
    facts: dict[str, Mapping[str, Any]] = {}
    rolled: dict[str, Rolled] = {}
    results: dict[str, int] = {}
    begin: Mapping[str, Any] = {}
    opposed = False
    margin = 0
    for step in steps:
        if isinstance(step, Begin):
            begin = dict(step.facts)
            lines.append(f"d6 + skill: {step.text[4:]}")
        elif isinstance(step, Side):
            facts[step.side] = dict(step.facts)
            opposed = opposed or step.side == "opposition"
        elif isinstance(step, Round):
            if rounds:
                lines.append(f"Round {step.n}:")
        elif isinstance(step, Rolled):
            rolled[step.side] = step
        elif isinstance(step, Count) and step.what == "result":
            f = facts[step.side]
            results[step.side] = step.value
            said = describe(rolled[step.side], step.value, f["bonus"])
            if step.side == "dmg":
                lines.append(f"DMG roll: {said}")
            elif opposed:
                lines.append(f"  {side_title(f, _ROLES[step.side])}: {said}")
            else:
                lines.append(f"{f['title']}: {said}")
        elif isinstance(step, Count) and step.what == "dmg":
            weapon = begin["dmg"]
            if weapon is None:
                lines.append(f"DMG = the margin, {step.value} (S5; no weapon DMG given)")
            else:
                base = (f"DMG roll {results['dmg']}" if weapon == "rolled"
                        else f"base DMG {weapon}")
                lines.append(f"DMG = {base} + margin {margin} = {step.value} (S5)")
        elif isinstance(step, Tie):
            lines.append(f"  {step.values[0]} vs {step.values[1]}: a tie — roll again (S3)")
        elif isinstance(step, Verdict):
            lines += _verdict_lines(step, rolled, begin, opposed)
            if len(step.values) > 2:
                margin = step.values[2]
    return tuple(lines)


def _verdict_lines(v: Verdict, rolled: Mapping[str, Rolled], begin: Mapping[str, Any],
                   opposed: bool) -> list[str]:
    if v.rule == "S6":
        bonus, difficulty = v.values
        if v.outcome == "success":
            return [(f"S6: the bonus {bonus:+d} alone beats # {difficulty} and the situation "
                     "is calm: Success without rolling")]
        return [(f"S6: the bonus {bonus:+d} alone beats # {difficulty}, but the situation is "
                 "stressful: roll")]
    botch, def_botch = _botched(rolled.get("actor")), _botched(rolled.get("opposition"))
    if v.side:  # no difficulty: is it a Botch
        critical = "critical" in rolled[v.side].marks
        return ["Botch!" if v.outcome == "botch" else f"Result {v.values[0]}"
                + (" (Critical)" if critical else "")]
    a, b = v.values[0], v.values[1]
    if begin["attack"]:
        return [attack_line(a, b, botch, def_botch, v.outcome)]
    if not opposed:
        said = {"botch": "Botch!", "success": "Success (S2: higher than #)",
                "failure": "Failure (S2: not higher than #)"}[v.outcome]
        return [f"{a} vs # {b}: {said}" if v.outcome != "botch" else said]
    said = {"botch": "Botch!", "success": "Success", "failure": "Failure",
            "tie": "a tie, which stands (house rule)"}[v.outcome]
    why = ""
    if v.outcome == "success" and def_botch:
        why = " (the opposition botched)"
    elif v.outcome == "botch" and def_botch:
        why = " (both sides botched)"
    return [f"{a} vs {b}: {said}{why}"]


# --------------------------------------------------------------------------------------------
# The odds' notes


def law_note(name: str, title: str, bonus: int, dr: DieRules) -> str:
    """The odds' note on how a side's die is read."""
    parts = [f"{name}: {title} d6 {bonus:+d}"]
    parts.append("botch check on a 1 (S7)" if dr.botches else "no botch check")
    if dr.explodes and dr.max_explosions != 0:
        cap = "" if dr.max_explosions is None else f", at most {dr.max_explosions} times"
        parts.append(f"6s explode (S9{cap})")
    else:
        parts.append("6s do not explode")
    return ", ".join(parts)
