"""The rulings of the independent audit of the five texts (RULES.md: each under its rule).

Each ruling is checked through the API and through the command line, as a player would meet it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import astragal


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "astragal.cli", *args], check=False,
                          capture_output=True,
                          text=True, timeout=120)


# J-A6: Difficulty Dice have no Quality, however it is written
@pytest.mark.parametrize("text", ["jc: d12 q=basic vs difficult q=expert",
                                  "jc: d12 q=basic vs difficult q=basic:expert"])
def test_a_difficulty_has_no_quality(text: str) -> None:
    with pytest.raises(astragal.NotationError, match=r"Difficulty Dice have no Quality \(J-A6\)"):
        astragal.odds(text)
    r = cli("odds", text)
    assert r.returncode == 2 and "Difficulty Dice have no Quality" in r.stderr and "^" in r.stderr


# J47: modifiers after a named Difficulty would silently change the GM's dice
@pytest.mark.parametrize("mod", ["+1b", "fav", "-1p", "limit d6", "+d8", "d8"])
def test_modifiers_after_a_named_difficulty_are_refused(mod: str) -> None:
    text = f"jc: d12 vs routine {mod}"
    with pytest.raises(astragal.NotationError, match="before 'vs'"):
        astragal.roll(text, seed=1)
    r = cli("roll", text)
    assert r.returncode == 2 and "Difficulty as dice" in r.stderr
    assert astragal.roll(f"jc: d12 {mod if mod != 'd8' else '+1b'} vs routine", seed=1)


def test_a_penalty_written_with_a_plus_is_refused() -> None:
    with pytest.raises(astragal.NotationError, match="a Penalty is written -1p"):
        astragal.parse("jc: d12 +1p vs d8")
    assert cli("roll", "jc: d12 +1p vs d8").returncode == 2


# J48: a calm task with a Penalty is rolled
def test_a_calm_task_with_a_penalty_is_rolled() -> None:
    text = "jc: d10 d8 -1p vs intermediate calm"
    r = astragal.roll(text, faces="3,2,5,2 / 8,8")
    assert r.result["actor_score"] == 3 and r.outcome == "overwhelming_failure"
    assert any("a Penalty (lack of time, poor preparation)" in line for line in r.transcript)
    o = astragal.odds(text)
    assert 0 < o.outcomes["success"] < 1 and o.outcomes["botch"] > 0
    # without the Penalty the same task succeeds unrolled (the dice match die for die)
    assert astragal.odds("jc: d10 d8 vs intermediate calm").outcomes["success"] == 1.0
    out = cli("roll", text, "--faces", "3,2,5,2 / 8,8")
    assert out.returncode == 0 and "not calm" in out.stdout


# J-A6: quality_bands=0-4 reads q=N with the 0–4 bands
def test_quality_bands_switch_reads_skill_levels() -> None:
    with pytest.raises(astragal.NotationError, match="Skill Level 0 has no Quality"):
        astragal.parse("jc: d12 q=0 vs d8")
    assert str(astragal.parse("jc: d12 q=0 vs d8 quality_bands=0-4")).endswith(
        "quality_bands=0-4")
    # Levels 5 and 6: Basic and Expert under 1–5, both Expert under 0–4, so ties stay ties
    ones = astragal.odds("jc: d8 q=5 vs d8 q=6")
    zeros = astragal.odds("jc: d8 q=5 vs d8 q=6", options={"quality_bands": "0-4"})
    assert ones.outcomes["tie"] == pytest.approx(1 / 64) and zeros.outcomes["tie"] == \
        pytest.approx(8 / 64)
    r = astragal.roll("jc: d8 q=5 vs d8 q=6", faces="4 / 4", options={"quality_bands": "0-4"})
    assert r.outcome == "tie"
    assert astragal.roll("jc: d8 q=5 vs d8 q=6", faces="4 / 4").outcome == "failure"
    out = cli("roll", "jc: d8 q=5 vs d8 q=6", "--faces", "4 / 4", "-o", "quality_bands=0-4")
    assert out.returncode == 0 and "Tie" in out.stdout


def test_plurals_in_the_transcript() -> None:
    text = "\n".join(astragal.roll("jc: d12 +1b -2p vs d8", seed=3).transcript)
    assert "1 Bonus and 2 Penalties cancel → net -1 Penalty" in text
    assert "(1 Penalty: keep the worst Score" in text
    assert "Bonus(es)" not in text and "Penalty(ies)" not in text
    out = cli("roll", "jc: d12 +1b -2p vs d8", "--seed", "3")
    assert out.returncode == 0 and "1 Bonus and 2 Penalties cancel" in out.stdout


# J-A12 with the switch on: a soak Botch still hits when every damage die was removed
def test_soak_botch_with_no_damage_dice_switch() -> None:
    text = "jc: dmg d6 -1p vs soak d4"
    assert astragal.odds(text).outcomes["hit"] == 0.0
    on = {"soak_botch_with_no_damage_dice": True}
    assert astragal.odds(text, options=on).outcomes["hit"] == pytest.approx(0.25)
    r = astragal.roll(text, faces=" / 1", options=on)
    assert r.outcome == "hit" and r.result == {"hits": 1, "pairs": [], "soak_botch": True}
    assert astragal.roll(text, faces=" / 1").outcome == "nothing"
    out = cli("odds", text, "-o", "soak_botch_with_no_damage_dice=true", "--json")
    assert out.returncode == 0 and '"hit": 0.25' in out.stdout


# J35: the Resolve test follows an injury
def test_resolve_test_only_after_a_hit() -> None:
    r = astragal.roll("jc: dmg d8 vs soak d8 resolve d10", faces="2 / 5")
    assert r.result["resolve"] == {"tested": False} and len(r.dice) == 2
    assert any("no Resolve test" in line for line in r.transcript)
    r = astragal.roll("jc: dmg d8 vs soak d8 resolve d10", faces="7 / 5 / 9")
    assert r.result["resolve"]["tested"] and r.result["resolve"]["outcome"] == "success"
    o = astragal.odds("jc: dmg d8 d6 d4 vs soak d8 d6 resolve d10 d6")
    assert o.extra["resolve_tested"] == pytest.approx(0.8002387152777778, abs=1e-12)
    out = cli("odds", "jc: dmg d8 d6 d4 vs soak d8 d6 resolve d10 d6", "--json")
    assert out.returncode == 0 and '"resolve_tested": 0.80023871527' in out.stdout


def test_resolve_odds_are_given_a_hit_by_enumeration() -> None:
    import itertools
    from collections import defaultdict
    from fractions import Fraction

    from astragal.systems import jadeclaw as J

    dmg, soak, res = (6, 4), (6,), (8,)
    joint: dict[str, Fraction] = defaultdict(Fraction)
    tested = Fraction(0)
    total = 6 * 4 * 6 * 8
    for d in itertools.product(*(range(1, s + 1) for s in dmg)):
        for s in itertools.product(*(range(1, x + 1) for x in soak)):
            if not J.resolve_tested(J.damage_hits(list(d), list(s))):
                continue
            for r in itertools.product(*(range(1, x + 1) for x in res)):
                tested += Fraction(1, total)
                joint[J.contest_outcome(max(r), max(d), None, None)] += Fraction(1, total)
    o = astragal.odds("jc: dmg d6 d4 vs soak d6 resolve d8")
    assert o.extra["resolve_tested"] == pytest.approx(float(tested), abs=1e-12)
    for name, p in o.extra["resolve_outcomes"].items():
        assert p == pytest.approx(float(joint[name] / tested), abs=1e-12)


def test_resolve_odds_after_a_favored_damage_roll_by_enumeration() -> None:
    """J35, J39: the Favored re-roll of the damage 1 ties the damage Score to the hits; the
    odds are exact all the same (every face of d8 fav vs soak d6 vs resolve d8 walked here)."""
    import itertools
    from collections import defaultdict
    from fractions import Fraction

    from astragal.systems import jadeclaw as J

    joint: dict[str, Fraction] = defaultdict(Fraction)
    tested = Fraction(0)
    for first in range(1, 9):  # the damage d8; a 1 is rolled once more and the new face stands
        for face, p in ([(f, Fraction(1, 64)) for f in range(1, 9)] if first == 1
                        else [(first, Fraction(1, 8))]):
            for s, r in itertools.product(range(1, 7), range(1, 9)):
                if J.resolve_tested(J.damage_hits([face], [s])):
                    w = p * Fraction(1, 6 * 8)
                    tested += w
                    joint[J.contest_outcome(r, face, None, None)] += w
    assert tested == Fraction(61, 96)
    given = {k: v / tested for k, v in joint.items()}
    assert (given["botch"], given["tie"], given["success"]) == (
        Fraction(243, 1952), Fraction(1, 8), Fraction(59, 244))
    o = astragal.odds("jc: dmg d8 fav vs soak d6 resolve d8")
    assert o.extra["resolve_tested"] == pytest.approx(float(tested), abs=1e-12)
    for name, p in o.extra["resolve_outcomes"].items():
        assert p == pytest.approx(float(given.get(name, 0)), abs=1e-12), name
    out = cli("odds", "jc: dmg d8 fav vs soak d6 resolve d8", "--json")
    assert out.returncode == 0 and '"resolve_outcomes"' in out.stdout


# J-A12 and J35: a Soak Botch's hit with every damage die removed is a Wound with no faces
def test_resolve_after_a_soak_botch_with_no_damage_dice() -> None:
    text = "jc: dmg d6 -1p vs soak d4 resolve d6 soak_botch_with_no_damage_dice=true"
    o = astragal.odds(text)
    got = o.extra["resolve_outcomes"]
    assert sum(got.values()) == pytest.approx(1.0)
    # no face to beat (Score 0): the Resolve d6 succeeds unless it Botches (a 1)
    assert got["botch"] == pytest.approx(1 / 6)
    assert got["success"] + got["overwhelming_success"] == pytest.approx(5 / 6)
    for seed in range(1, 9):
        out = cli("roll", text, "--seed", str(seed))
        assert out.returncode == 0, out.stderr
    r = astragal.roll(text, faces=" / 1 / 4")
    assert r.result["resolve"] == {"tested": True, "score": 4, "damage_score": 0,
                                   "outcome": "success"}
    assert "the Score to beat is 0" in "\n".join(r.transcript)
    botched = astragal.roll(text + " empty_pool=auto_botch", faces=" / 1 / 4")
    assert botched.result["resolve"]["damage_score"] == 1
    auto = astragal.odds(text + " empty_pool=auto_botch").extra["resolve_outcomes"]
    assert sum(auto.values()) == pytest.approx(1.0) and auto["tie"] == pytest.approx(1 / 6)


# D6 System (D-X2, D-A4): a penalty never makes a roll better
@pytest.mark.parametrize("text, code", [
    ("od6: 1D -1 pip", "1D-1"), ("od6: 1D -4 pips", "1D-4"), ("od6: 1D+1 -2 pips", "1D-1"),
    ("od6: 2D -4 pips", "1D-1"), ("od6: 2D -5 pips", "1D-2"), ("od6: 2D -1D -2 pips", "1D-2"),
    ("od6: 1D -1D min_dice_after_penalty=2", "1D"), ("od6: 3D+2 +2 pips", "4D+1"),
])
def test_d6_penalties_borrow_dice_only_above_the_floor(text: str, code: str) -> None:
    r = astragal.roll(text, seed=5)
    assert f"rolls {code}" in r.transcript[1], r.transcript
    out = cli("roll", text, "--seed", "5")
    assert out.returncode == 0 and f"rolls {code}" in out.stdout


def test_d6_a_dice_penalty_that_cannot_take_dice_costs_three_per_d() -> None:
    """D-A4 "convert to -3 per D": `1D -1D` is no longer the same roll as 1D (66.7% against 3)."""
    assert astragal.odds("od6: 1D -1D vs 3").extra["p_success"] == pytest.approx(1 / 6)
    r = astragal.roll("od6: 1D -1D vs 3", faces="5")
    assert r.result["total"] == 2 and r.outcome == "failure"
    assert "the 1D the penalty cannot take counts -3 on the total (-3 per D, D-A4)" in \
        r.transcript[2]
    off = astragal.roll("od6: 1D -1D vs 3 penalty_below_min=ignore", faces="5")
    assert off.result["total"] == 5 and "ignored" in off.transcript[2]


def test_d6_one_die_less_one_pip_is_worse_than_one_die() -> None:
    assert astragal.odds("od6: 1D -1 pip").mean == pytest.approx(2.5)
    assert astragal.odds("od6: 1D").mean == pytest.approx(3.5)


from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 4), st.integers(0, 2), st.integers(0, 3), st.integers(0, 7),
       st.integers(1, 3), st.booleans())
def test_d6_a_penalty_never_raises_the_odds(dice: int, pips: int, minus_dice: int,
                                            minus_pips: int, low: int, wild: bool) -> None:
    base = f"od6: {dice}D{f'+{pips}' if pips else ''}" + (" wild" if wild else "")
    worse = base + (f" -{minus_dice}D" if minus_dice else "") + (
        f" -{minus_pips} pips" if minus_pips else "")
    opts = {"min_dice_after_penalty": low}
    a, b = astragal.odds(base, options=opts).distribution, astragal.odds(
        worse, options=opts).distribution
    assert b.mean() <= a.mean() + 1e-9
    if minus_dice or minus_pips:  # D-A4: every penalty costs something, at least a pip
        assert b.mean() <= a.mean() - 1 + 1e-9, (base, worse)
    for x in set(a.outcomes()) | set(b.outcomes()):
        assert b.at_least(x) <= a.at_least(x) + 1e-9, (base, worse, x)


# d6 + skill (S7): a rolled DMG gets the botch check, switchable like every roll kind
def test_rolled_dmg_is_checked_for_a_botch() -> None:
    r = astragal.roll("ds: dmg d6+2", faces="1,1")
    assert r.outcome == "botch" and r.result["botch"]
    assert astragal.odds("ds: dmg d6+2").outcomes["botch"] == pytest.approx(1 / 36)
    off = {"botch_on": "skill+trait+atk+def+loot"}
    assert astragal.roll("ds: dmg d6+2", faces="1", options=off).result["botch"] is False
    assert astragal.odds("ds: dmg d6+2", options=off).outcomes["botch"] == 0.0
    out = cli("roll", "ds: dmg d6+2", "--faces", "1,1")
    assert out.returncode == 0 and "Botch" in out.stdout
    r = astragal.roll("ds: atk d6+6 vs def d6+3 dmg d6+2", faces="5,1,1 / 2")
    assert r.result["dmg_roll"]["botch"] and any("DMG roll" in x and "Botch" in x
                                                   for x in r.transcript)


def test_a_botched_defence_says_so() -> None:
    r = astragal.roll("ds: atk d6+3 vs def d6+5 dmg 2", faces="3 / 1,1")
    assert r.result["opposition_botch"] and "DEF botched" in "\n".join(r.transcript)
    out = cli("roll", "ds: atk d6+3 vs def d6+5 dmg 2", "--faces", "3 / 1,1")
    assert out.returncode == 0 and "DEF botched" in out.stdout


# J48 and typed-in faces (issue 40, item 11)
def test_calm_takes_a_difficulty_written_as_dice() -> None:
    """The text's own example of J48 writes the Difficulty as dice: "d10 & d8 vs 2d8"."""
    r = astragal.roll("jc: d10 & d8 vs 2d8 calm", faces="")
    assert r.outcome == "success" and r.dice == ()
    assert astragal.odds("jc: d10 d8 vs 2d8 calm").outcomes["success"] == 1.0
    rolled = astragal.roll("jc: d6 d8 vs 2d8 calm", faces="5,3 / 2,4")
    assert rolled.outcome == "success" and len(rolled.dice) == 4
    with pytest.raises(astragal.NotationError, match="'vs 2d8'"):
        astragal.parse("jc: d10 d8 calm")


def test_no_faces_for_a_roll_that_rolls_no_dice() -> None:
    out = cli("roll", "ds: d6+7 vs 6 calm", "--faces", "")
    assert out.returncode == 0 and "Success without rolling" in out.stdout, out.stderr
    out = cli("roll", "2d6", "--faces", "")
    assert out.returncode == 2 and "no faces were given for side 1, but a d6 was rolled" in \
        out.stderr


@pytest.mark.parametrize("text, faces, said", [
    ("ds: d6+7 vs 6 calm", "3", "side 1 was given 1 face but no die was rolled"),
    ("2d6", "1,2,3", "side 1 was given 3 faces but only 2 were rolled"),
    ("1d6", "1,2", "side 1 was given 2 faces but only 1 was rolled"),
    ("2d6", "3", "a d6 was rolled after the 1 face given"),
])
def test_faces_left_over_or_missing_are_counted_in_english(text: str, faces: str,
                                                           said: str) -> None:
    with pytest.raises(astragal.FacesError) as err:
        astragal.roll(text, faces=faces)
    assert said in str(err.value)
