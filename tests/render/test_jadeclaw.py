"""Jadeclaw's steps: the roller records what it did (which dice, which faces, which rule), and
render/jadeclaw.py words them; scripted faces, so each step can be checked by hand."""

from __future__ import annotations

import json

import pytest

import astragal
from astragal.dice import steps as S
from astragal.render import jadeclaw as render
from astragal.render.steps import step_line


def kinds(roll: astragal.Roll, kind: type) -> list:  # type: ignore[type-arg]
    return [s for s in roll.steps if isinstance(s, kind)]


def test_a_damage_rolls_pairs_name_their_dice_faces_and_rules() -> None:
    """J23: sorted high → low and paired by rank; J24 reads a pair, J26 gives the surplus damage
    die its imaginary 1, J27 says a 1 never hits; each pair names the roll's own dice."""
    r = astragal.roll("jc: dmg 2d12 d8 vs soak d10 d6", faces="4,10,1 / 6,2")
    pairs = kinds(r, S.Pair)
    assert [(p.face, p.other_face, p.value, p.rule) for p in pairs] == [
        (10, 6, 1, "J24"), (4, 2, 1, "J24"), (1, 1, 0, "J27")]
    assert [(r.dice[p.die].size, r.dice[p.die].face) for p in pairs] == [(12, 10), (12, 4), (8, 1)]
    assert all(r.dice[p.die].group == "damage" for p in pairs)
    assert [(r.dice[p.other].size, r.dice[p.other].face) for p in pairs[:2]] == [(10, 6), (6, 2)]
    assert (pairs[2].other, pairs[2].filler) == (-1, "J26")  # no soak die left: the imaginary 1
    assert r.steps[-1] == S.Verdict("", "hit", (2,), "J34") and r.result["hits"] == 2
    assert render.transcript(r.steps) == r.transcript
    assert r.transcript[-2] == "  1 vs an imaginary 1: 0 hits (a 1 never hits)"
    assert step_line(pairs[0]) == "pair damage die #1 10 vs soak die #3 6: 1 (J24)"
    assert step_line(pairs[2]) == "pair damage die #2 1 vs soak 1 (J26): 0 (J27)"


def test_slaying_enervated_and_the_soak_botch_are_their_own_rules() -> None:
    slaying = astragal.roll("jc: dmg d12 d6 slaying vs soak d4", faces="5,2 / 4")
    assert [(p.value, p.rule) for p in kinds(slaying, S.Pair)] == [(2, "J31"), (2, "J31")]
    enervated = astragal.roll("jc: dmg d12 enervated vs soak d4", faces="9 / 4")
    assert [(p.value, p.rule) for p in kinds(enervated, S.Pair)] == [(1, "J32")]
    both = astragal.roll("jc: dmg d12 slaying enervated vs soak d4", faces="9 / 4")
    assert kinds(both, S.Check) == [S.Check("J33", True, (("kind", "normal"),))]
    assert [(p.value, p.rule) for p in kinds(both, S.Pair)] == [(2, "J24")]
    botch = astragal.roll("jc: dmg d6 vs soak d4 d4", faces="3 / 1,1")
    assert S.Count("", "soak_botch", 1, "J28") in botch.steps and botch.result["hits"] == 2
    # J-A12: no damage dice left; the Soak Botch counts only by the house rule
    off = astragal.roll("jc: dmg d6 -1p vs soak d4", faces=[[], [1]])
    assert S.Count("", "soak_botch", 0, "J-A12") in off.steps and off.outcome == "nothing"
    assert kinds(off, S.Rolled)[0].dice == ()  # the damage side rolled nothing
    on = astragal.roll("jc: dmg d6 -1p vs soak d4 soak_botch_with_no_damage_dice=true",
                       faces=[[], [1]])
    assert S.Count("", "soak_botch", 1, "J-A12") in on.steps and on.result["hits"] == 1
    for roll in (slaying, enervated, both, botch, off, on):
        assert render.transcript(roll.steps) == roll.transcript


def test_a_favored_reroll_shows_the_rerolled_one() -> None:
    """J39: one die showing 1 is rolled once more and its new face stands; J-A15: of several
    1s, the largest die's."""
    r = astragal.roll("jc: d8 d12 fav", faces="1,1,7")
    (rolled,) = kinds(r, S.Rolled)
    assert rolled.runs == (((1,),), ((1,), (7,))) and rolled.reroll == "J39"
    assert rolled.values == (1, 7)
    rerolled = rolled.dice[1]
    assert (r.dice[rerolled].size, r.dice[rerolled].faces) == (12, (1, 7))
    assert r.steps[-1] == S.Verdict("", "no_botch", (7,), "J9")
    assert "  Favored: re-roll the 1 on the d12 → 7" in r.transcript
    # favored_auto=false (J-A11): nothing is re-rolled, the die the player may re-roll is marked
    asked = astragal.roll("jc: d8 d12 fav favored_auto=false", faces="1,1")
    (rolled,) = kinds(asked, S.Rolled)
    assert rolled.marks == ("", "may_reroll") and rolled.reroll == ""
    assert all(len(runs) == 1 for runs in rolled.runs) and asked.outcome == "botch"
    assert render.transcript(asked.steps) == asked.transcript


def test_penalty_rolls_are_rounds_and_the_worse_roll_stands() -> None:
    """J21: p Penalties roll p+1 times, the worst Score stands (J22 reads its Botch); the other
    rolls' dice are dropped; J40 gives each roll its own Favored re-roll."""
    r = astragal.roll("jc: d12 d6 -1p fav", faces="1,5,3,6,4")
    assert [s.n for s in kinds(r, S.Round)] == [1, 2]
    first, second = kinds(r, S.Rolled)
    assert first.runs == (((1,), (3,)), ((5,),)) and first.dropped == ()
    assert second.dropped == second.dice and second.drop == "J21"
    assert all(not r.dice[i].kept for i in second.dropped)
    scores = [(c.value, c.rule) for c in kinds(r, S.Count)]
    assert scores == [(5, "J4"), (6, "J4"), (5, "J21")]
    assert S.Verdict("actor", "no_botch", (5,), "J22") in r.steps
    assert render.transcript(r.steps) == r.transcript


def test_a_pools_preparation_is_adjust_steps_in_the_order_of_j41_and_j42() -> None:
    r = astragal.roll("jc: d12 d10 d4 limit d8 +d8 remove biggest +2b -1p vs 2d8",
                      faces="4,5,9 / 3,6")
    adjusts = kinds(r, S.Adjust)
    assert [(a.side, a.what, a.rule) for a in adjusts] == [
        ("actor", "include", "J36"), ("actor", "remove", "J37"), ("actor", "limit", "J38"),
        ("actor", "net", "J12"), ("actor", "bonus", "J13")]
    assert dict(adjusts[-1].facts) == {"bonuses": 1, "dice": 3, "sizes": (10, 6, 10)}
    side = kinds(r, S.Side)[0]
    assert dict(side.facts)["base"] == (12, 10, 4) and side.dice == 3
    dmg = astragal.roll("jc: dmg 2d8 +1b vs soak d6 d4 -1p", faces="5,3 / 2")
    assert [(a.side, a.what, a.rule) for a in kinds(dmg, S.Adjust)] == [
        ("damage", "bonus", "J29"), ("soak", "penalty", "J30")]
    limited = astragal.roll("jc: d12 limit d8 +1b limit_before_bonus=false", faces="7")
    assert [a.rule for a in kinds(limited, S.Adjust)] == ["J38", "J13", "J-A9"]
    for roll in (r, dmg, limited):
        assert render.transcript(roll.steps) == roll.transcript


def test_the_calm_task_check_and_the_contests_deciding_rule() -> None:
    """J48: a calm pool matching the Difficulty succeeds without a roll; with a Penalty it is
    rolled. A contest's verdict names the rule that decided it."""
    calm = astragal.roll("jc: d10 d8 vs intermediate calm", faces=[[], []])
    assert calm.steps[1] == S.Check("J48", True, (("actor", (10, 8)), ("difficulty", (8, 8)),
                                                   ("penalties", 0)))
    assert calm.steps[-1].rule == "J48" and not calm.dice and calm.outcome == "success"
    rushed = astragal.roll("jc: d10 d8 -1p vs intermediate calm", faces="3,2,5,2 / 8,8")
    check = kinds(rushed, S.Check)[0]
    assert not check.holds and dict(check.facts)["penalties"] == 1
    assert dict(kinds(rushed, S.Side)[1].facts)["difficulty"] == "intermediate"
    assert rushed.steps[-1] == S.Verdict("", "overwhelming_failure", (3, 8), "J6")
    assert astragal.roll("jc: d6 vs d6", faces="1 / 1").steps[-1] == S.Verdict(
        "", "tie", (1, 1), "J10", "double_botch=tie")
    assert astragal.roll("jc: d6 vs d8", faces="1 / 7").steps[-1] == S.Verdict(
        "", "botch", (1, 7), "J-A7", "botch_overrides_overwhelm=true")
    quality = astragal.roll("jc: d12 vs d12 q=expert:basic", faces="5 / 5")
    assert quality.steps[-1] == S.Verdict("", "success", (5, 5), "J7")
    for roll in (calm, rushed, quality):
        assert render.transcript(roll.steps) == roll.transcript


QUALITY_SAID = [
    # Wu Shousu's Fast-Talk (Basic) against her father's Psychology (Expert), the seed's example
    ("jc: d10 d12 q=basic vs d8 d12 d4 q=expert", "9,4 / 3,9,2", "J7",
     "9 vs 9: margin +0 → Failure (equal Scores: Quality Expert beats Basic, J7)"),
    # the same Qualities when the father's Score is 8: the Scores decide, Quality is idle
    ("jc: d10 d12 q=basic vs d8 d12 d4 q=expert", "9,4 / 3,8,2", "J5",
     ("9 vs 8: margin +1 → Success (Quality Basic vs Expert breaks ties only: the Scores "
      "differ, J7)")),
    ("jc: d12 vs d12 q=7", "5 / 9", "J5",
     ("5 vs 9: margin -4 → Failure (the opposition's Quality, Expert, breaks ties only: the "
      "Scores differ, J7)")),
    ("jc: d12 q=expert vs d8 q=basic", "1 / 8", "J-A7",
     ("1 vs 8: margin -7 → Botch (Quality Expert vs Basic breaks ties only: the Scores differ, "
      "J7)")),
    ("jc: d12 q=heroic vs d12 q=heroic", "5 / 5", "J7",
     "5 vs 5: margin +0 → Tie (equal Scores and equal Quality, Heroic: the Tie stands, J7)"),
    ("jc: d12 q=expert vs d12", "5 / 5", "J-A6",
     ("5 vs 5: margin +0 → Tie (equal Scores, and only the actor has a Quality, Expert: it "
      "breaks no tie, quality_vs_no_quality=no_tie_break, J-A6)")),
    ("jc: d12 q=mythic vs d12 q=basic", "1 / 1", "J10",
     "1 vs 1: margin +0 → Tie (double Botch; Quality breaks no double Botch, J-A8)"),
    ("jc: dmg d8 vs soak d4 resolve d8 q=expert", "6 / 2 / 4", "J5",
     ("4 vs 6: margin -2 → Failure (the Resolve roll's Quality, Expert, breaks ties only: the "
      "Scores differ, J7)")),
    ("jc: d12 vs d12", "5 / 9", "J5", "5 vs 9: margin -4 → Failure"),  # no Quality: no words
]


@pytest.mark.parametrize("text, faces, rule, said", QUALITY_SAID,
                         ids=[f"{t} | {f}" for t, f, _, _ in QUALITY_SAID])
def test_what_a_named_quality_did_is_said(text: str, faces: str, rule: str, said: str) -> None:
    """J7: a Quality only breaks a tie; when one is named the verdict's line says what it did,
    by the rule that decided the contest (the verdict step's record)."""
    roll = astragal.roll(text, faces=faces)
    assert roll.steps[-1].rule == rule
    assert roll.transcript[-1] == said
    assert render.transcript(roll.steps) == roll.transcript


def test_a_resolve_test_follows_a_wound_only() -> None:
    """J35: the damage faces' Score is the Resolve Test's opposition, after a hit only."""
    hit = astragal.roll("jc: dmg d12 d6 vs soak d4 resolve L5", faces="9,3 / 2 / 6")
    assert S.Check("J35", True, (("hits", 3),)) in hit.steps
    assert S.Count("damage", "score", 9, "J35") in hit.steps
    resolve = [s for s in hit.steps if isinstance(s, S.Side) and s.side == "resolve"]
    assert len(resolve) == 1 and hit.steps[-1] == S.Verdict("", "failure", (6, 9), "J5")
    assert hit.result["resolve"]["outcome"] == "failure"
    miss = astragal.roll("jc: dmg d4 vs soak d4 resolve L5", faces="1 / 3")
    assert kinds(miss, S.Check) == [S.Check("J35", False, (("hits", 0),))]
    assert not any(isinstance(s, S.Side) and s.side == "resolve" for s in miss.steps)
    for roll in (hit, miss):
        assert render.transcript(roll.steps) == roll.transcript


def test_steps_in_json_and_not_in_the_tables_log() -> None:
    r = astragal.roll("jc: dmg d12 d6 vs soak d4", faces="9,3 / 2")
    data = json.loads(json.dumps(r.to_json()))
    pairs = [s for s in data["steps"] if s["step"] == "pair"]
    assert pairs[1] == {"step": "pair", "side": "damage", "die": 1, "face": 3, "against": "soak",
                        "other": -1, "other_face": 1, "value": 1, "rule": "J24",
                        "filler": "J26"}
    assert "steps" not in r.to_json(with_steps=False)
    html = r._repr_html_()
    assert "<summary>steps</summary>" in html and "pair damage die #0 9 vs soak die #2 2" in html


def test_a_pools_working_counts_in_the_games_words() -> None:
    """J13, J30, J47: one Bonus, two Bonuses; one size increase; the Difficulty by its name."""
    one = astragal.roll("jc: d12 +1 bonus vs heroes only", faces="4,2 / 10,9,3")
    assert "  +1 Bonus: 1 × 1 die = 1 size increase → d12 & d4" in one.transcript
    assert "Difficulty: For Heroes Only; the GM rolls its Difficulty Dice (J47, J52)" in \
        one.transcript
    two = astragal.roll("jc: d12 d6 +2b vs routine", faces="4,10,2 / 3,3")
    assert "  +2 Bonuses: 2 × 2 dice = 4 size increases → 2d12 & d4" in two.transcript
    cut = astragal.roll("jc: dmg d12 d8 d4 -2p", faces="4")
    assert "  -2 Penalties: remove the smallest die for each → d12" in cut.transcript
    for roll in (one, two, cut):
        assert render.transcript(roll.steps) == roll.transcript
