"""The d6 attack table in the game's words: an exchange's steps as transcript lines, and the
odds' notes. Pure functions of the steps (``astragal.dice.steps``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..dice.steps import Adjust, Begin, Count, Lookup, Rolled, Side, Step, Verdict

ATTACK_TABLE, CRITICAL_TABLE = "attack table", "critical damage table"  # Lookup.table
STATE_WORDS = {  # A12: the first rule that applies to the defender
    "stunned": "stunned: ARMOR only",
    "berserk_last_turn": "attacked Berserk last turn: ARMOR only",
    "defensive_last_turn": "attacked Defensively last turn: full defence",
    "threw_last_turn": "threw a weapon last turn",
    "whiffed_last_turn": "Whiffed last turn: PARRY/DODGE lost",
    "normal": "normal defence",
}


def _dice(n: int) -> str:
    return f"{n} {'die' if n == 1 else 'dice'}"


def _count_words(n: int) -> str:
    return {1: "one die", 2: "two dice", 3: "three dice"}.get(n, f"{n} dice")


def _need_words(need: int | None) -> str:
    if need is None:
        return "cannot be blocked"
    return f"block with {'-'.join(['6'] * need) if need <= 4 else f'{need} sixes'}"


def attack_line(steps: Sequence[Step]) -> str:
    """How the attack dice were counted (A1–A4), from the attack's ``Side``, ``Count`` (A1) and
    ``Adjust`` steps: ``Attack dice: (4 ATTACK + 3 WEAPON) / 2 = 3 (A1), +1 Berserk (A3) → 4``."""
    parts: list[str] = []
    side: Mapping[str, Any] = {}
    ordinary = luck = total = 0
    for step in steps:
        if isinstance(step, Side):
            side = dict(step.facts)
            if "written" in side:
                parts.append(f"{side['written']}d6")
                ordinary = side["written"]
        elif isinstance(step, Count):  # A1
            parts.append(f"({side['attack']} ATTACK + {side['weapon']} WEAPON) / 2 = "
                         f"{step.value} ({step.rule})")
            ordinary = step.value
        elif isinstance(step, Adjust):
            f = dict(step.facts)
            if step.what == "luck":
                luck, total = f["by"], f["dice"]
                continue
            ordinary = f["dice"]
            if step.what == "throw":
                parts.append(f"+{f['by']} Throw Bonus ({step.rule})")
            elif f["by"] > 0:
                parts.append(f"+1 Berserk ({step.rule})")
            else:
                parts.append(f"−1 Defensive ({step.rule})")
    line = "Attack dice: " + ", ".join(parts)
    if len(parts) > 1:
        line += f" → {ordinary}"
    if luck:
        line += f", plus {luck} Luck {'die' if luck == 1 else 'dice'} (A4) = {total}"
    return line


def defence_line(side: Side, pools: Adjust | None) -> str:
    """The defender's dice (A12): ``Defence (stunned: ARMOR only, A12): ARMOR = 2 dice``."""
    if pools is None:
        return f"Defence: {side.dice}d6"
    f = dict(pools.facts)
    return (f"Defence ({STATE_WORDS[f['state']]}, {pools.rule}): {' + '.join(f['pools'])} = "
            f"{_dice(side.dice)}")


def _column_line(step: Lookup) -> str:
    f = dict(step.facts)
    highest, count = step.values
    return (f"  highest {highest} on {_count_words(count)} → {step.column} ({step.rule}): "
            f"{f['damage']} damage" + (", stuns" if f["stun"] else "")
            + (", Critical Strike!" if f["critical"] else "") + f"; {_need_words(f['block'])}")


def _critical_dice_line(side: Mapping[str, Any], count: Count) -> str:
    if side["subtract"] == "dice_rolled":
        n = side["defence_dice"]
        minus = f"− {n} {'die' if n == 1 else 'dice'} the defender rolled"
    else:
        minus = f"− {side['defence_sixes']} six(es) the defender rolled"
    return (f"Critical damage dice ({count.rule}): {side['sixes']} sixes + {side['class_dice']} "
            f"(weapon {side['weapon_class'] or 'with no class'}) {minus} = {count.value}")


def _critical_total_line(rolled: Rolled, bonus: int, count: Count) -> str:
    faces = " ".join(str(runs[0][0]) for runs in rolled.runs)
    return (f"  rolled: {faces or 'no dice'} → total {sum(rolled.values)}"
            + (f" {bonus:+d} Crit Bonus" if bonus else "") + f" = {count.value} (A14, {count.rule})")


def _critical_row_line(step: Lookup) -> str:
    if not step.facts:
        return "  no entry in the Critical Damage Table"
    f = dict(step.facts)
    extra = f" (+{f['damage']} damage)" if f["damage"] else ""
    return f"  Critical Damage Table {step.row}: {f['result']}{extra}"


def _defence_verdict(v: Verdict, rolled: Rolled | None) -> str:
    if v.outcome == "unblockable":
        return "  this hit cannot be blocked: no defence roll"
    if v.outcome == "no_dice":
        return "  no DEFENSE dice to roll: the hit cannot be blocked"
    assert rolled is not None
    k, need = v.values
    faces = " ".join(str(runs[0][0]) for runs in rolled.runs)
    return (f"  rolled: {faces} → {k} six{'es' if k != 1 else ''}: "
            + (f"blocked ({v.rule}, needs {need})" if v.outcome == "blocked"
               else f"not enough to block (needs {need})"))


def _verdict(v: Verdict, stun: Verdict | None) -> str:
    if v.outcome == "whiff":
        why = f"no attack dice ({v.rule})" if v.rule == "A-A8" else f"highest face {v.values[0]}"
        return (f"  {why}: the attack Whiffs, a complete miss (A6); the attacker loses "
                "PARRY/DODGE on their next defence")
    if v.outcome == "blocked":
        return f"Blocked: no damage, no stun ({v.rule})"
    return (("Critical Strike" if v.outcome == "critical" else "Hit") + f"! {v.values[0]} damage"
            + (f", the defender is stunned ({stun.rule})" if stun is not None else ""))


def transcript(steps: Iterable[Step]) -> tuple[str, ...]:
    """An exchange's steps in words, one line each."""
    lines: list[str] = []
    attack: list[Step] = []
    sides: dict[str, Side] = {}
    rolled: dict[str, Rolled] = {}
    stun: Verdict | None = None
    for step in steps:
        if isinstance(step, Begin):
            lines.append(f"Attack table: {step.text[4:]}")
        elif isinstance(step, Side):
            sides[step.side] = step
            if step.side == "attack":
                attack = [step]
            elif step.side == "defence" and "written" in dict(step.facts):
                lines.append(defence_line(step, None))
        elif isinstance(step, Adjust) and step.side == "defence":
            lines.append(defence_line(sides["defence"], step))
        elif isinstance(step, (Adjust, Count)) and step.side == "attack":
            attack.append(step)
        elif isinstance(step, Rolled):
            rolled[step.side] = step
            if step.side == "attack":
                lines += [attack_line(attack), _attack_faces(step)]
        elif isinstance(step, Lookup):
            if step.table == CRITICAL_TABLE:
                lines.append(_critical_row_line(step))
            elif step.facts:  # a hit column (a Whiff's is said by its verdict)
                lines.append(_column_line(step))
        elif isinstance(step, Count):  # the critical dice (A13) and their total (A15)
            facts = dict(sides["critical"].facts)
            if step.what == "dice":
                lines.append(_critical_dice_line(facts, step))
            else:
                lines.append(_critical_total_line(rolled["critical"], facts["crit_bonus"], step))
        elif isinstance(step, Verdict):
            if step.outcome == "stunned":
                stun = step
            elif step.side == "defence":
                lines.append(_defence_verdict(step, rolled.get("defence")))
            else:
                lines.append(_verdict(step, stun))
    return tuple(lines)


def _attack_faces(step: Rolled) -> str:
    """``  rolled: 6 6 2   Luck: 3`` (A4: Luck dice are shown apart)."""
    marks = step.marks or ("",) * len(step.dice)
    faces = [str(runs[0][0]) for runs, m in zip(step.runs, marks) if m != "luck"]
    luck = [str(runs[0][0]) for runs, m in zip(step.runs, marks) if m == "luck"]
    shown = "  rolled: " + (" ".join(faces) if faces else "no attack dice")
    return shown + ("   Luck: " + " ".join(luck) if luck else "")


# --------------------------------------------------------------------------------------------
# The odds' notes


def defence_note(steps: Sequence[Step]) -> str:
    """``defence: ARMOR + SHIELD = 3 dice (Whiffed last turn: PARRY/DODGE lost)``, from the
    defender's ``Side`` and A12 ``Adjust`` steps (none: no defender)."""
    side = next((s for s in steps if isinstance(s, Side)), None)
    pools = next((s for s in steps if isinstance(s, Adjust)), None)
    if side is None:
        return "no defender: every hit lands"
    if pools is None:
        return f"defence: {side.dice}d6"
    f = dict(pools.facts)
    return (f"defence: {' + '.join(f['pools'])} = {_dice(side.dice)} "
            f"({STATE_WORDS[f['state']]})")


def critical_note(gm_table: bool) -> str:
    return "critical dice and totals are given a Critical Strike that lands" + (
        "" if gm_table else " (no Critical Damage Table: the total is reported)")
