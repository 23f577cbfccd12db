"""A roll in a notebook (issue 40, item 4): its headline says what it came to, not only its
category, and the dice table says what each die counts."""

from __future__ import annotations

import re

import pytest

import astragal
from astragal.dice import Die


def _headline(roll: astragal.Roll) -> str:
    found = re.search(r'<div style="font-size:1.2em"><strong>(.*?)</strong>', roll._repr_html_())
    assert found is not None
    return found.group(1)


@pytest.mark.parametrize("text, faces, said", [
    ("ds: d6+2", "6,6,3", "Result 17 (Critical)"),  # the seed's worked example, not "No Botch"
    ("jc: dmg 2d6 vs soak d8", "6,5 / 2", "2 hits"),  # not "Hit"
    ("jc: dmg 2d6 vs soak d8", "1,1 / 8", "0 hits"),
    ("jc: d10 d4 vs 2d6", "7,2 / 3,4", "Success: 7 vs 4"),
    ("jc: d8", "5", "Score 5"),
    ("cofd: 5", "8,9,1,2,3", "Success: 2 successes"),
    ("cofd: 3 vs 2", "8,1,1 / 9,2", "Tie: 1 vs 1 successes"),
    ("od6: 3D vs 10", "4,5,6", "Good: total 15 vs 10"),
    ("od6: 2D", "3,4", "Total 7"),
    ("at: 3d6 vs 1d6", "6,6,4 / 2", "Hit: 3 damage, stunned"),
    ("ds: d6+2 vs 6", "1,1", "Botch: result 3"),
    ("2d6+1", "3,4", "Total: 8"),
])
def test_a_game_roll_s_headline_shows_its_result(text: str, faces: str, said: str) -> None:
    assert _headline(astragal.roll(text, faces=faces)) == said


def _counts(roll: astragal.Roll) -> list[int]:
    return [int(x) for x in re.findall(r"<td><strong>(-?\d+)</strong></td>", roll._repr_html_())]


def test_the_dice_table_says_what_each_die_counts() -> None:
    # a compounding die's faces add up into its value; a CofD die counts its successes
    compounding = Die(6, (6, 2), "3d6!!", joined="compounded")
    cofd = Die(10, (9, 2), "pool", joined="exploded", scored=1)
    roll = astragal.Roll("dice", "x", "total", {"total": 8}, (compounding, cofd,
                                                            Die(6, (1, 4), joined="rerolled")),
                         ("Total: 8",))
    assert _counts(roll) == [8, 1, 4]
    assert "<th>counts</th>" in roll._repr_html_()
