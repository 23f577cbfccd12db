"""The general notation's rolls as steps: what a player checks against the faces they scripted
(each die's faces in order, what was re-rolled, exploded, compounded, clamped, dropped or
counted, and by which rule), and that the transcript is those steps in words."""

from __future__ import annotations

import json
import pickle

import astragal
from astragal.dice import steps as S
from astragal.render import dice as words
from astragal.render.steps import step_line


def roll(text: str, faces: str) -> astragal.Roll:
    r = astragal.roll("dice: " + text, faces=faces)
    assert words.transcript(r.steps) == r.transcript  # the transcript is the steps in words
    return r


def one(r: astragal.Roll, kind: type) -> S.Step:
    (step,) = [s for s in r.steps if isinstance(s, kind)]
    return step


def test_explosions_and_rerolls_name_each_die_and_its_faces_in_order() -> None:
    # the first die shows 6 and explodes; the die it adds shows 1, is re-rolled (r1) and shows 4
    r = roll("3d6!r1", "6,1,4,2,5")
    rolled = one(r, S.Rolled)
    assert isinstance(rolled, S.Rolled)
    assert rolled.runs == (((6,),), ((1,), (4,)), ((2,),), ((5,),))
    assert rolled.marks == ("", "explosion", "", "")
    assert (rolled.again, rolled.reroll) == ("N2", "N1")
    assert [r.dice[i].faces for i in rolled.dice] == [(6,), (1, 4), (2,), (5,)]
    assert S.Count("3d6rr1!", "total", 17, "") in r.steps
    assert r.transcript[1] == "  3d6rr1!: 6!, 1→4, 2, 5: 6 + 4 + 2 + 5 = 17"


def test_compounding_and_penetrating_dice() -> None:
    # !!: one die adds its rolls; a re-roll (r1) starts a new run of its faces
    r = roll("d6!!r1", "1,6,6,2")
    rolled = one(r, S.Rolled)
    assert isinstance(rolled, S.Rolled)
    assert rolled.runs == (((1,), (6, 6, 2)),) and rolled.values == (14,)
    assert r.dice[0].faces == (1, 6, 6, 2) and len(r.dice) == 1
    assert r.transcript[1] == "  d6rr1!!: 1→6!+6!+2=14"
    # !p: each die an explosion adds is worth one less
    r = roll("2d6!p", "6,6,2,3")
    rolled = one(r, S.Rolled)
    assert isinstance(rolled, S.Rolled)
    assert rolled.values == (6, 5, 1, 3) and rolled.marks == ("", "explosion", "explosion", "")
    assert r.result["total"] == 15


def test_clamps_drops_and_the_rules_that_did_them() -> None:
    # mi2 raises the 1 to 2 (N3); keep highest 3 then drops the second 2, the later die (N4)
    r = roll("4d6mi2kh3", "1,5,6,2")
    assert one(r, S.Changed) == S.Changed("4d6mi2kh3", (0,), (1,), (2,), "N3")
    rolled = one(r, S.Rolled)
    assert isinstance(rolled, S.Rolled)
    assert rolled.values == (2, 5, 6, 2) and rolled.read == "N3"
    assert (rolled.dropped, rolled.drop) == ((3,), "N4")
    assert [d.kept for d in r.dice] == [True, True, True, False]
    side = one(r, S.Side)
    assert isinstance(side, S.Side) and dict(side.facts) == {"min": 2, "keep": ("kh", 3)}
    assert r.transcript[1] == "  4d6mi2kh3: 1 (as 2), 5, 6, 2 → keep highest 3: 2 + 5 + 6 = 13"
    # a keep by value names its own rule (N5)
    r = roll("4d6k>3", "1,5,6,2")
    rolled = one(r, S.Rolled)
    assert isinstance(rolled, S.Rolled) and (rolled.dropped, rolled.drop) == ((0, 3), "N5")


def test_success_counting_marks_each_die_it_counts() -> None:
    r = roll("5d10>=7f1dbl10", "10,7,1,3,8")
    rolled = one(r, S.Rolled)
    assert isinstance(rolled, S.Rolled)
    assert rolled.marks == ("success+double", "success", "failure", "", "success")
    assert S.Count("5d10>=7f1dbl10", "successes", 3, "N6") in r.steps
    assert r.result["total"] == 3
    # a dropped die counts nothing and is not marked
    r = roll("3d10kh2>=7", "9,8,7")
    rolled = one(r, S.Rolled)
    assert isinstance(rolled, S.Rolled) and rolled.marks == ("success", "success", "")


def test_fudge_custom_critical_re_roll_and_add_and_matches() -> None:
    r = roll("4dF", "1,2,3,3")
    rolled = one(r, S.Rolled)
    assert isinstance(rolled, S.Rolled)
    assert rolled.runs == (((-1,),), ((0,),), ((1,),), ((1,),)) and rolled.read == "N0"
    assert [d.face for d in r.dice] == [1, 2, 3, 3]  # the tray keeps the die's own faces
    r = roll("2d20", "20,1")
    rolled = one(r, S.Rolled)
    assert isinstance(rolled, S.Rolled) and rolled.marks == ("critical", "fumble")
    # ra: the first 6 is rolled again and the new die added
    r = roll("3d6ra6", "6,2,6,4")
    rolled = one(r, S.Rolled)
    assert isinstance(rolled, S.Rolled) and rolled.marks == ("ra", "", "", "added")
    assert r.dice[3].note == "re-roll and add"
    r = roll("5d6mt2", "3,5,3,5,5")
    assert S.Count("5d6mt2", "matches", 2, "") in r.steps
    rolled = one(r, S.Rolled)
    assert isinstance(rolled, S.Rolled) and rolled.marks == ("match",) * 5
    assert r.transcript[1] == "  5d6mt2: 3, 5, 3, 5, 5 → 2 matches: 2 × 3; 3 × 5"


def test_a_group_its_items_and_the_dropped_items_dice() -> None:
    r = roll("{2d6+3,d8}kh1", "1,2,5")
    group = next(s for s in r.steps if isinstance(s, S.Side))
    assert isinstance(group, S.Side) and dict(group.facts) == {"items": 2, "keep": ("kh", 1)}
    assert S.Worked("{2d6+3,d8}kh1", "item 1", "3 + 3", 6, "N7") in r.steps
    assert one(r, S.Items) == S.Items("{2d6+3,d8}kh1", (6, 5), 6, "", (), (1,), "N4")
    assert [d.kept for d in r.dice] == [True, True, False]  # the d8 of the dropped item
    assert r.transcript[-2] == "  {2d6+3,d8}kh1: 6, 5 → keep highest 1 → 6"
    r = roll("{d6,d6,d6}>3", "4,2,6")
    assert one(r, S.Items) == S.Items("{d6,d6,d6}>3", (4, 2, 6), 2, "N6",
                                      ("success", "", "success"))


def test_repeats_labels_arithmetic_and_inline_rolls() -> None:
    r = roll("3x d20 >= 11", "1,11,20")
    assert [s.n for s in r.steps if isinstance(s, S.Round)] == [1, 2, 3]
    assert [s.working for s in r.steps if isinstance(s, S.Worked)] == [
        "1 >= 11", "11 >= 11", "20 >= 11"]
    assert r.steps[-1] == S.Count("", "successes", 2, "N9")
    assert [r.dice[i].repeat for i in range(3)] == [1, 2, 3]
    r = roll("2d6[fire] + 1d4[cold] + 3", "3,4,2")
    sides = [s for s in r.steps if isinstance(s, S.Side)]
    assert [(s.side, dict(s.facts)) for s in sides] == [("2d6 [fire]", {"label": "fire"}),
                                                        ("d4 [cold]", {"label": "cold"})]
    assert r.steps[-1] == S.Worked("", "total", "7 [fire] + 2 [cold] + 3", 12, "N7")
    r = roll("(2d6+3)/2", "3,4")
    assert r.steps[-1] == S.Worked("", "total", "(7 + 3) / 2", 5, "N7")
    r = astragal.roll("dice: I hit [[1d20+5]] for [[2d6/4]]", faces="12,3,4")
    assert words.transcript(r.steps) == r.transcript
    begins = [s for s in r.steps if isinstance(s, S.Begin)]
    assert [(b.kind, b.text) for b in begins] == [
        ("rolls", " I hit [[d20+5]] for [[2d6/4]]"), ("part", "d20+5"), ("part", "2d6/4")]
    assert r.transcript[-1] == " I hit [[17]] for [[1.75]]"


def test_a_plain_roll_has_the_steps_of_the_general_roller() -> None:
    """``1d20+5`` and ``4d6kh3+2`` roll from a plan; their steps, made when asked for, are
    the general roller's on the same faces."""
    r = roll("4d6kh3+2", "6,4,1,3")
    assert r.steps == (S.Begin("4d6kh3+2"), S.Side("4d6kh3", 4, (("keep", ("kh", 3)),)),
                       S.Rolled("4d6kh3", (0, 1, 2, 3), (((6,),), ((4,),), ((1,),), ((3,),)),
                                (6, 4, 1, 3), (), "", "", "", (2,), "N4"),
                       S.Count("4d6kh3", "total", 13, ""), S.Worked("", "total", "13 + 2", 15,
                                                                    "N7"))
    again = pickle.loads(pickle.dumps(r))
    assert again == r and again.steps == r.steps
    assert astragal.Roll._make(r) == r and r == astragal.Roll._make(r)  # a roll like any other
    assert r != roll("4d6kh3+2", "6,4,1,2")
    crit = roll("1d20+5", "20")
    rolled = one(crit, S.Rolled)
    assert isinstance(rolled, S.Rolled) and rolled.marks == ("critical",)


def test_the_steps_are_in_the_json_and_the_notebook_view() -> None:
    r = roll("4d6mi2kh3", "1,5,6,2")
    data = json.loads(json.dumps(r.to_json()))
    assert [s["step"] for s in data["steps"]] == ["begin", "side", "rolled", "changed", "count",
                                                  "worked"]
    assert data["steps"][3] == {"step": "changed", "side": "4d6mi2kh3", "dice": [0],
                                "before": [1], "after": [2], "rule": "N3"}
    assert "steps" not in r.to_json(with_steps=False)
    html = r._repr_html_()
    assert "changed 4d6mi2kh3: die #0 1 → 2 (N3)" in html
    assert step_line(r.steps[2]) == ("rolled 4d6mi2kh3: die #0 1 (2), die #1 5 (5), die #2 6 (6),"
                                     " die #3 2 (2); dropped #3 (N4); N3")
    assert step_line(r.steps[-1]) == "total: 13 → 13"
