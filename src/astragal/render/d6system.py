"""The D6 System in the game's words: a roll's steps as transcript lines. Pure functions of the
steps (``astragal.dice.steps``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..dice.steps import Adjust, Begin, Count, Rolled, Round, Side, Step, Tie, Verdict

_NAMES = {"actor": "Actor", "opposition": "Opposition"}
_WILD = ("wild_die", "complication")  # the marks of the Wild Die


def adjust_text(step: Adjust) -> str:
    """How a side's code changed before the roll (D5, D-A4, D-X2)."""
    f = dict(step.facts)
    if step.what == "modifier":
        value = f"{f['dice']:+d}D" if "dice" in f else f"{f['number']:+d}"
        return f"{f['name'].capitalize()}: {value} (D5)"
    if step.what == "floor":
        short = f["short"]
        dice = f"the {short}D the penalty cannot take"
        if f["each"]:
            return (f"at least {f['dice']}D is rolled; {dice} {'count' if short > 1 else 'counts'}"
                    f" {-f['each'] * short:+d} on the total (-{f['each']} per D, D-A4)")
        return (f"at least {f['dice']}D is rolled; {dice} {'are' if short > 1 else 'is'} "
                "ignored (penalty_below_min=ignore, D-A4)")
    if step.what == "carry":
        return f"{f['from']} → {f['to']} (3 pips = 1D)"
    if step.what == "pips_stay":
        pips = f["pips"]
        return (f"{-pips} pip{'s' if pips < -1 else ''} cannot borrow a die below "
                f"{f['floor']}D, so {'they count' if pips < -1 else 'it counts'} {pips:+d} on "
                "the total (a penalty never makes a roll better)")
    raise ValueError(f"no words for {step!r}")


def wild_line(wild_one: str) -> str:
    """The transcript's note that the Wild Die is on."""
    return ("Wild Die on: one die of each roll; a 6 adds and rolls again, a 1 on its "
            + ("first roll is a complication that removes it and the highest die"
               if wild_one == "drop_one_and_highest"
               else "first roll is a complication (the 1 counts)"))


class _Sides:
    """What the words of a later step need from earlier ones: each side's facts, last roll and
    total."""

    def __init__(self) -> None:
        self.facts: dict[str, Mapping[str, Any]] = {}
        self.totals: dict[str, int] = {}
        self.rolled: dict[str, Rolled] = {}
        self.round = 1
        self.difficulty: int | None = None

    def name(self, side: str) -> str:
        name = _NAMES[side]
        return name if self.round == 1 else f"{name}, roll {self.round},"


def _rolled_lines(step: Rolled, sides: _Sides) -> list[str]:
    """The faces a side rolled (the Wild Die's chain) and a complication."""
    name, code = sides.name(step.side), sides.facts[step.side]["code"]
    marks = step.marks or ("",) * len(step.dice)
    wild_at = next((k for k, m in enumerate(marks) if m in _WILD), None)
    faces = [v for k, v in enumerate(step.values) if k != wild_at]
    wild = list(step.runs[wild_at][0]) if wild_at is not None else []
    shown = ", ".join(map(str, faces))
    if wild:
        chain = " → re-rolled ".join(map(str, wild))
        wild_text = f"Wild Die {chain}"
        if len(wild) > 1:
            wild_text += f" (explodes: {'+'.join(map(str, wild))} = {sum(wild)})"
        shown = f"{shown} and the {wild_text}" if shown else f"the {wild_text}"
    lines = [f"  {name} rolls {code}: {shown}"]
    if wild_at is not None and marks[wild_at] == "complication":
        others = [step.dice.index(i) for i in step.dropped if step.dice.index(i) != wild_at]
        if step.dice[wild_at] not in step.dropped:
            lines.append("  Complication: the Wild Die shows 1 on its first roll; the 1 counts "
                         "and the GM adds a complication (D-X1)")
        elif others:
            lines.append(f"  Complication: the Wild Die shows 1 on its first roll; it and the "
                         f"highest other die ({step.values[others[0]]}) are removed (D-X1)")
        else:
            lines.append("  Complication: the Wild Die, the only die, shows 1 on its first "
                         "roll and is removed (D-X1)")
    return lines


def _total_line(step: Count, sides: _Sides) -> str:
    facts, rolled = sides.facts[step.side], sides.rolled[step.side]
    pips, number = facts["pips"], facts["number"]
    dice_sum = step.value - pips - number
    parts = [f"dice {dice_sum}"]
    marks = rolled.marks or ("",) * len(rolled.dice)
    regular = [(i, v) for i, v, m in zip(rolled.dice, rolled.values, marks) if m not in _WILD]
    removed = [v for i, v in regular if i in rolled.dropped]
    if removed:
        parts = [f"dice {'+'.join(str(v) for _, v in regular)} − {removed[0]} = {dice_sum}"]
    if pips:
        parts.append(f"{pips:+d} pip{'s' if abs(pips) != 1 else ''}")
    if number:
        parts.append(f"{number:+d}")
    name = sides.name(step.side)
    return (f"  {name} total: {' '.join(parts)} = {step.value}" if len(parts) > 1
            else f"  {name} total: {step.value}")


def transcript(steps: Iterable[Step]) -> tuple[str, ...]:
    """A D6 System roll's steps in words, one line each."""
    lines: list[str] = []
    sides = _Sides()
    begin: Mapping[str, Any] = {}
    half = 0
    for step in steps:
        if isinstance(step, Begin):
            begin = dict(step.facts)
            lines.append(f"D6 System roll: {step.text[5:]}")
            if begin["wild_die"]:
                lines.append(wild_line(begin["wild_one"]))
        elif isinstance(step, Side):
            facts = sides.facts[step.side] = dict(step.facts)
            written, prepared = facts["written"], facts["prepared"]
            lines.append(f"{_NAMES[step.side]}: {written}"
                         + (f" → rolls {prepared}" if prepared != written else ""))
        elif isinstance(step, Adjust):
            lines.append(f"  {adjust_text(step)}")
        elif isinstance(step, Round):
            sides.round = step.n
        elif isinstance(step, Rolled):
            sides.rolled[step.side] = step
            lines += _rolled_lines(step, sides)
        elif isinstance(step, Count):
            if step.what == "total":
                sides.totals[step.side] = step.value
                lines.append(_total_line(step, sides))
            elif step.what == "difficulty":
                sides.difficulty = step.value
                title, level = begin["difficulty_title"], begin["difficulty_level"]
                lines.append(f"Difficulty: {title} ({step.value})" if level is not None
                             else f"Difficulty: {step.value} (in the {title} range)")
            elif step.what == "result_points":
                a = sides.totals["actor"]
                lines.append(f"{a} vs {sides.difficulty}" if sides.difficulty is not None
                             else f"{a} vs {sides.totals['opposition']}: the opposing total is "
                                  "the difficulty")
            elif step.what == "half_bonus":
                half = step.value
            elif step.what == "damage_bonus":
                lines.append(f"  bonus: +{half} to another roll (half, rounded up, D11); an "
                             f"attack adds +{step.value} to damage (one fifth, D12)")
        elif isinstance(step, Tie):
            a = step.values[0]
            if step.goes == "again":
                lines.append(f"Tie at {a}: both sides roll again (D-X4, {step.setting})")
            elif step.goes == "lose":
                lines.append(f"Tie: the defender wins ({step.setting}, D-X4)")
            else:
                lines.append("Tie: meet or beat, the acting character wins (D-X3, D-X4)")
        elif isinstance(step, Verdict):
            if step.rule == "D7":
                lines.append("Difficulty: Automatic (0): success without rolling (D7)")
            elif step.rule == "D9":
                lines.append(f"Result points {step.values[0]:+d}: Failure (D9)")
            elif step.rule == "D10":
                lines.append(f"Result points {step.values[0]:+d}: "
                             f"{step.outcome.capitalize()} success (D10)")
            # a tie the defender wins (D-X4) was said by its Tie; a roll with no difficulty
            # (D-X1: a complication or none) has no verdict line
    return tuple(lines)
