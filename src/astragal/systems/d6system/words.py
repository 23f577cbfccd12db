"""The D6 System in the game's words: the transcript lines of a side, its total and the verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .notation import Side
from .rules import Prepared


def side_lines(side: Side, prep: Prepared, name: str, lines: list[str]) -> None:
    """``Actor: 3D+2 +2 pips → rolls 4D+1`` and the steps that prepared it."""
    lines.append(f"{name}: {side}" + (f" → rolls {prep}" if str(prep) != str(side) else ""))
    for step in prep.steps:
        lines.append(f"  {step}")


def rolled_lines(name: str, prep: Prepared, faces: Sequence[int], wild: Sequence[int],
                 complication: bool, removed: int | None, drop: bool, dice_sum: int,
                 total: int, lines: list[str]) -> None:
    """The faces a side rolled (the Wild Die's chain), a complication, and the total."""
    shown = ", ".join(map(str, faces))
    if wild:
        chain = " → re-rolled ".join(map(str, wild))
        wild_text = f"Wild Die {chain}"
        if len(wild) > 1:
            wild_text += f" (explodes: {'+'.join(map(str, wild))} = {sum(wild)})"
        shown = f"{shown} and the {wild_text}" if shown else f"the {wild_text}"
    lines.append(f"  {name} rolls {prep.code}: {shown}")
    if complication and drop:
        if removed is not None:
            lines.append(f"  Complication: the Wild Die shows 1 on its first roll; it and the "
                         f"highest other die ({faces[removed]}) are removed (D-X1)")
        else:
            lines.append("  Complication: the Wild Die, the only die, shows 1 on its first "
                         "roll and is removed (D-X1)")
    elif complication:
        lines.append("  Complication: the Wild Die shows 1 on its first roll; the 1 counts "
                     "and the GM adds a complication (D-X1)")
    parts = [f"dice {dice_sum}"]
    if removed is not None:
        parts = [f"dice {'+'.join(map(str, faces))} − {faces[removed]} = {dice_sum}"]
    if prep.pips:
        parts.append(f"{prep.pips:+d} pip{'s' if abs(prep.pips) != 1 else ''}")
    if prep.number:
        parts.append(f"{prep.number:+d}")
    lines.append(f"  {name} total: {' '.join(parts)} = {total}" if len(parts) > 1
                 else f"  {name} total: {total}")


def wild_line(options: Mapping[str, Any]) -> str:
    """The transcript's note that the Wild Die is on."""
    return ("Wild Die on: one die of each roll; a 6 adds and rolls again, a 1 on its "
            + ("first roll is a complication that removes it and the highest die"
               if options["wild_one"] == "drop_one_and_highest"
               else "first roll is a complication (the 1 counts)"))


def verdict_lines(result_points: int, level: str | None, half: int, damage: int,
                  lines: list[str]) -> None:
    """``Result points +6: Good success (D10)`` and the result-point bonuses (D11, D12)."""
    if level is None:
        lines.append(f"Result points {result_points:+d}: Failure (D9)")
        return
    lines.append(f"Result points {result_points:+d}: {level} success (D10)")
    if result_points > 0:
        lines.append(f"  bonus: +{half} to another roll (half, rounded up, D11); an attack adds "
                     f"+{damage} to damage (one fifth, D12)")
