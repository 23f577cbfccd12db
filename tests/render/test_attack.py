"""The attack table's rolls as steps: what a player checks against the faces they scripted (the
dice each step names, the table's column or row that was read, the rule that decided it), and
that the transcript, the notebook view and the odds' notes are those steps in words."""

from __future__ import annotations

import json

import astragal
from astragal.dice import steps as S
from astragal.render import attack as words
from astragal.render.steps import step_line

GM_TABLE = {"format": "astragal critical damage table", "version": 1,
            "rows": [{"min": 1, "max": 6, "result": "Graze"},
                     {"min": 7, "max": 9, "result": "Broken arm", "damage": 2},
                     {"min": 12, "max": None, "result": "Down", "damage": 5}]}


def _of(roll: astragal.Roll, kind: type, side: str | None = None) -> list[S.Step]:
    return [s for s in roll.steps
            if isinstance(s, kind) and (side is None or getattr(s, "side", None) == side)]


def test_a_hit_names_its_attack_dice_the_column_read_and_the_defence_pools() -> None:
    # ATTACK 4 + WEAPON 3 → 3 dice (A1), throw +1 (A2), Berserk +1 (A3), one Luck die (A4);
    # the defender Whiffed last turn, so ARMOR + SHIELD (2 + 1 dice) roll (A12)
    text = ("at: atk 4 wpn 3 throw +1 berserk luck 1 vs armor 2 shield 1 parry 2 "
            "whiffed_last_turn")
    roll = astragal.roll(text, faces="6,6,2,1,3,4 / 6,2,5")
    assert _of(roll, S.Count, "attack") == [S.Count("attack", "dice", 3, "A1")]
    adjusts = _of(roll, S.Adjust, "attack")
    assert [(a.what, a.rule, dict(a.facts)["dice"]) for a in adjusts] == [
        ("throw", "A2", 4), ("stance", "A3", 5), ("luck", "A4", 6)]
    (attack,) = _of(roll, S.Rolled, "attack")
    assert attack.read == "A5"
    assert [roll.dice[i].face for i in attack.dice] == [6, 6, 2, 1, 3, 4]
    assert [roll.dice[i].group for i in attack.dice] == ["attack"] * 5 + ["luck"]
    assert attack.marks == ("",) * 5 + ("luck",)
    (column,) = _of(roll, S.Lookup)
    assert (column.table, column.column, column.values, column.rule) == (
        "attack table", "double 6", (6, 2), "A7")
    assert dict(column.facts) == {"damage": 3, "stun": True, "critical": False, "block": 2}
    (pools,) = _of(roll, S.Adjust, "defence")
    assert pools.rule == "A12" and dict(pools.facts)["pools"] == ("ARMOR", "SHIELD")
    (defence,) = _of(roll, S.Rolled, "defence")
    assert [roll.dice[i].face for i in defence.dice] == [6, 2, 5]
    assert {roll.dice[i].group for i in defence.dice} == {"defence"}
    assert defence.values == (1, 0, 0) and defence.read == "A11"  # only a 6 counts
    verdicts = _of(roll, S.Verdict)
    assert verdicts == [S.Verdict("defence", "not_blocked", (1, 2), "A11"),
                        S.Verdict("defence", "stunned", (), "A10"),
                        S.Verdict("", "hit", (3,), "A8")]
    assert roll.outcome == "hit" and roll.result["damage"] == 3
    assert words.transcript(roll.steps) == roll.transcript
    # the odds say the attack dice and the defence in the same words as the roll
    odds = astragal.odds(text)
    assert odds.notes[0] == roll.transcript[1]
    assert odds.notes[1] == "defence: ARMOR + SHIELD = 3 dice (Whiffed last turn: PARRY/DODGE lost)"


def test_a_critical_strike_reads_its_dice_and_the_gm_table_row() -> None:
    # three 6s + 2 (a D weapon) − the 1 die the defender rolled = 4 critical dice (A13),
    # 4 + 5 + 1 + 2 + 1 Crit Bonus = 13 (A14, A15): the row 12+ of the GM's table, +5 damage
    roll = astragal.roll("at: 4d6 weapon D crit +1 vs 1d6", faces="6,6,6,2 / 3 / 4,5,1,2",
                         options={"critical_damage_table": GM_TABLE})
    (column,) = [s for s in _of(roll, S.Lookup) if s.table == "attack table"]
    assert (column.column, column.values) == ("three+ 6s", (6, 3))
    assert dict(column.facts)["critical"] and dict(column.facts)["block"] == 3  # A11: match
    assert S.Count("critical", "dice", 4, "A13") in roll.steps
    (crit,) = _of(roll, S.Rolled, "critical")
    assert [roll.dice[i].face for i in crit.dice] == [4, 5, 1, 2]
    assert {roll.dice[i].group for i in crit.dice} == {"critical"}
    assert S.Count("critical", "total", 13, "A15") in roll.steps
    (row,) = [s for s in _of(roll, S.Lookup) if s.table == "critical damage table"]
    assert (row.row, row.column, row.values, row.rule) == ("12+", "", (13,), "A14")
    assert dict(row.facts) == {"result": "Down", "damage": 5}
    assert roll.steps[-1] == S.Verdict("", "critical", (8,), "A9")
    assert words.transcript(roll.steps) == roll.transcript
    assert step_line(row) == "lookup critical damage table: row 12+ by 13 → result=Down, " \
                             "damage=5 (A14)"
    # a total no row covers is read as no entry
    low = astragal.roll("at: 6d6 vs 1d6", faces="6,6,6,6,1,1 / 2 / 4,5,1",
                        options={"critical_damage_table": GM_TABLE})
    (row,) = [s for s in _of(low, S.Lookup) if s.table == "critical damage table"]
    assert (row.row, row.values, row.facts) == ("", (10,), ())
    assert "no entry in the Critical Damage Table" in low.transcript[-2]


def test_a_whiff_and_a_block_end_the_exchange_with_their_rule() -> None:
    whiff = astragal.roll("at: 3d6 vs 2d6", faces="3,1,2")
    (column,) = _of(whiff, S.Lookup)
    assert (column.column, column.values, column.facts) == ("3 or less", (3, 1), ())
    assert not _of(whiff, S.Side, "defence")  # A19: the defender never rolls
    assert whiff.steps[-1] == S.Verdict("", "whiff", (3,), "A6")
    no_dice = astragal.roll("at: atk 1 wpn 1 defensive vs armor 2", seed=1)
    assert no_dice.steps[-1] == S.Verdict("", "whiff", (0,), "A-A8") and not no_dice.dice
    blocked = astragal.roll("at: 2d6 vs 3d6", faces="5,5 / 6,1,6")
    assert blocked.steps[-2:] == (S.Verdict("defence", "blocked", (2, 2), "A11"),
                                  S.Verdict("", "blocked", (2, 2), "A11"))
    assert not _of(blocked, S.Verdict, "critical")
    for roll in (whiff, no_dice, blocked):
        assert words.transcript(roll.steps) == roll.transcript


def test_the_steps_are_in_the_json_and_the_notebook_view() -> None:
    roll = astragal.roll("at: 3d6 vs 2d6", faces="5,5,1 / 6,2")
    data = json.loads(json.dumps(roll.to_json()))
    assert [s["step"] for s in data["steps"]] == [
        "begin", "side", "rolled", "lookup", "side", "rolled", "verdict", "verdict", "verdict"]
    lookup = data["steps"][3]
    assert lookup == {"step": "lookup", "table": "attack table", "column": "double 5",
                      "values": [5, 2], "rule": "A7",
                      "facts": {"damage": 2, "stun": True, "critical": False, "block": 2}}
    assert "steps" not in roll.to_json(with_steps=False)
    html = roll._repr_html_()
    assert "lookup attack table: column double 5 by 5, 2" in html
    assert "verdict of defence: stunned (A10)" in html
