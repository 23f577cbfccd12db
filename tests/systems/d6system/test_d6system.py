"""D6 System die codes (RULES.md §3): seed vectors, notation properties, exact odds, roller.

Layers: (1) every ``d6`` vector of tests/data/vectors.json through ``astragal.roll`` and the CLI;
(2) Hypothesis properties (notation round trip, odds sum to 1, rolls inside the odds' support);
(3) exactness: the fast odds equal the rule functions enumerated over every face (Fractions) on
small codes and icepool on large ones; the roller matches its own odds (chi-square, 1e-7).
"""

from __future__ import annotations

import doctest
import itertools
import json
import math
import subprocess
import sys
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import icepool
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import astragal
from astragal import cli
from astragal.dice import steps
from astragal.render import d6system as render_d6system
from astragal.systems import d6system as d6
from astragal.systems.d6system import (
    DIFFICULTIES,
    MODIFIERS,
    DieCode,
    Difficulty,
    Side,
    Spec,
    Term,
)
from tests.stats import assert_matches

VECTORS_PATH = Path(__file__).resolve().parents[2] / "data" / "vectors.json"
VECTORS = [v for v in json.loads(VECTORS_PATH.read_text()) if v["system"] == "d6"]
TOL = 1e-12
K = 26  # Wild Die chains enumerated: 6^-27 (< 1e-21) is beyond every tolerance here
DROP, COUNTS = "drop_one_and_highest", "complication_only"


# --------------------------------------------------------------------------------------------
# helpers: the API and the CLI side by side


def _cli_roll(capsys: pytest.CaptureFixture[str], text: str, faces: str | None,
              options: Mapping[str, str] = {}) -> dict[str, Any]:
    argv = ["roll", text, "--json"]
    if faces is not None:
        argv += ["--faces", faces]
    for key, value in options.items():
        argv += ["-o", f"{key}={value}"]
    assert cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def _both(capsys: pytest.CaptureFixture[str], text: str, faces: str | None,
          options: Mapping[str, str] = {}) -> list[dict[str, Any]]:
    """The roll's JSON from the public API and from the CLI (they must agree)."""
    api = astragal.roll(text, faces=faces, options=dict(options)).to_json()
    via_cli = _cli_roll(capsys, text, faces, options)
    assert api == via_cli
    return [api, via_cli]


def _ones(n: int) -> str:
    return ",".join(["1"] * n)


# --------------------------------------------------------------------------------------------
# (1) the seed's vectors, every one, through the API and the CLI


def _check_vector(v: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    inp, exp = v["input"], v["expected"]
    if "skill" in inp:  # D2: shovel +1D on a 4D skill
        for out in _both(capsys, f"od6: {inp['skill']} {inp['bonus']}", "2,3,4,5,6"):
            assert out["result"]["dice_rolled"] == exp["dice_rolled"]
            assert out["result"]["code"] == exp["code"]
            assert len(out["dice"]) == exp["dice_rolled"]
    elif "code" in inp:  # D1, D3
        text = f"od6: {inp['code']}" + (f" {inp['bonus']:+d}" if "bonus" in inp else "")
        faces = ",".join(map(str, inp["faces"]))
        for out in _both(capsys, text, faces):
            assert out["result"]["total"] == exp["total"]
    elif "situation" in inp:  # D5, D-A3: both forms of the row, read back from the roll
        name = inp["situation"]
        effects = set()
        for form in ("numeric", "dice"):
            for out in _both(capsys, f"od6: 4D {name}", _faces_for(name, form),
                             {"modifier_form": form}):
                r = out["result"]
                delta = r["dice_rolled"] - 4
                effects.add(f"{delta:+d}D" if delta else f"{r['bonus']:+d}")
                assert r["total"] == r["dice_rolled"] + r["bonus"]  # faces are all 1
        assert effects == set(exp["modifier_options"])
        assert set(d6.modifier_options(name)) == set(exp["modifier_options"])
    elif "difficulty_level" in inp:  # D6, D7, D-A2
        level = inp["difficulty_level"].lower()
        text = f"od6: 2D vs {level}"
        if not exp["roll_needed"]:
            for out in _both(capsys, text, None):
                assert out["outcome"] == "automatic" and out["dice"] == []
                assert out["result"]["success"] is True
            assert astragal.odds(text).outcomes["automatic"] == 1.0
        else:
            for out in _both(capsys, text, "1,1"):
                assert out["result"]["difficulty"] == exp["default_number"]
        low, high = exp["range"]
        for number in (low, high if high is not None else low + 50):
            spec = astragal.parse(f"od6: 2D vs {level} ({number})").spec
            assert spec.difficulty.number == number
            assert d6.difficulty_level(number) == level
        for number in (low - 1, None if high is None else high + 1):
            if number is None or number < 0:
                continue
            with pytest.raises(astragal.NotationError) as err:
                astragal.parse(f"od6: 2D vs {level} ({number})")
            assert err.value.span is not None
    elif "result_points" in inp:  # D8–D12
        rp = inp["result_points"]
        for out in _both(capsys, f"od6: 1D {rp + 5:+d} vs easy", "1"):  # total rp + 6 vs 6
            r = out["result"]
            assert r["result_points"] == rp
            if "level" in exp:
                assert r["level"] == exp["level"]
            if "half_bonus_round_up" in exp:
                assert r["half_bonus"] == exp["half_bonus_round_up"]
                assert r["damage_bonus"] == exp["attack_damage_bonus_fifth_round_up"]
    elif "total" in inp:  # D8, D9
        total, diff = inp["total"], inp["difficulty"]
        for out in _both(capsys, f"od6: 2D {total - 2:+d} vs {diff}", "1,1"):
            r = out["result"]
            assert r["total"] == total
            if "success" in exp:
                assert r["success"] is exp["success"]
            if "result_points" in exp:
                assert r["result_points"] == exp["result_points"]
            if "level" in exp:
                assert r["level"] == exp["level"]
    else:  # pragma: no cover - a new vector shape must be handled, not skipped
        pytest.fail(f"vector {v['name']} has an input this test does not know: {inp}")


def _faces_for(name: str, form: str) -> str:
    _, dice = MODIFIERS[name.lower()]
    n = 4 + (dice if form == "dice" and dice is not None else 0)
    return _ones(max(1, n))


def test_every_d6_vector_is_present() -> None:
    assert len(VECTORS) == 39


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_seed_vector(vector: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    _check_vector(vector, capsys)


def test_cli_console_script_rolls_scripted_faces() -> None:
    out = subprocess.run([sys.executable, "-m", "astragal.cli", "roll", "od6: 3D+1",
                          "--faces", "4,5,6", "--json"], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout)["result"]["total"] == 16


# --------------------------------------------------------------------------------------------
# the issue's notation and the transcript


def test_issue_examples_parse_and_print_canonically() -> None:
    cases = {
        "od6: 4D+2 vs 16": "od6: 4D+2 vs 16",
        "od6: 3D+1 +1D vs moderate": "od6: 3D+1 +1D vs moderate",
        "od6: 5D very advantaged vs heroic": "od6: 5D very advantaged vs heroic",
        "od6: 4D+2 wild vs 3D+1": "od6: 4D+2 wild vs 3D+1",
        "od6: 3D+2 +2 pips": "od6: 3D+2 +2 pips",
        "d6system: 4d+2 VS Very-Difficult": "od6: 4D+2 vs very difficult",
        "od6: 3D + 1D slight disadvantaged vs moderate (13)":
            "od6: 3D +1D slightly disadvantaged vs moderate (13)",
    }
    for text, canonical in cases.items():
        assert str(astragal.parse(text)) == canonical


def test_pips_carry_to_a_die() -> None:
    r = astragal.roll("od6: 3D+2 +2 pips", faces="1,2,3,4")
    assert r.result["code"] == "4D+1" and r.result["total"] == 11
    assert any("3 pips = 1D" in line for line in r.transcript)
    off = astragal.roll("od6: 3D+2 +2 pips", faces="1,2,3", options={"pips_carry": "off"})
    assert off.result["code"] == "3D+4" and off.result["total"] == 10
    # negative pips take whole dice only (audit ruling: a penalty never makes a total likelier)
    minus = astragal.roll("od6: 3D -1 pip", faces="2,2,2")
    assert minus.result["code"] == "3D-1" and minus.result["total"] == 5
    minus = astragal.roll("od6: 3D -4 pips", faces="2,2")
    assert minus.result["code"] == "2D-1" and minus.result["total"] == 3


def test_wild_die_explodes_and_is_marked(capsys: pytest.CaptureFixture[str]) -> None:
    for out in _both(capsys, "od6: 4D+2 wild vs 3D+1", "4,5,1,6,6,2 / 3,3,4"):
        r = out["result"]
        assert r["wild"] == [6, 6, 2] and r["total"] == 4 + 5 + 1 + 14 + 2
        assert r["opposition"]["wild"] == [4] and r["opposition_total"] == 11
        assert r["result_points"] == 26 - 11 and r["level"] == "Spectacular"
        wild = [d for d in out["dice"] if d.get("note") == "Wild Die"]
        assert [d["faces"] if "faces" in d else [d["face"]] for d in wild] == [[6, 6, 2], [4]]
    text = astragal.roll("od6: 4D+2 wild vs 3D+1", faces="4,5,1,6,6,2 / 3,3,4").transcript
    assert any("Wild Die 6 → re-rolled 6 → re-rolled 2" in line for line in text)


def test_wild_complication_removes_it_and_the_highest() -> None:
    r = astragal.roll("od6: 4D wild", faces="5,4,3,1")
    assert r.outcome == "complication"
    assert r.result["total"] == 7 and r.result["removed"] == 5
    assert [d.kept for d in r.dice] == [False, True, True, False]
    alone = astragal.roll("od6: 1D+1 wild", faces="1")
    assert alone.result["total"] == 1 and alone.result["complication"] is True
    narrated = astragal.roll("od6: 4D wild wild_one=complication_only", faces="5,4,3,1")
    assert narrated.result["total"] == 13 and narrated.result["complication"] is True
    later_one = astragal.roll("od6: 2D wild", faces="3,6,1")  # a 1 after a 6 is no complication
    assert later_one.result["total"] == 10 and later_one.result["complication"] is False


def test_steps_name_the_wild_die_what_it_dropped_and_the_deciding_rules() -> None:
    """The roller returns typed steps: the Wild Die (its chain, its complication), the dice the
    complication removed, each total and the rule that decided the verdict; the transcript is
    those steps put into words."""
    r = astragal.roll("od6: 4D wild vs easy", faces="5,4,3,1")
    side, rolled, total = r.steps[1:4]
    assert isinstance(side, steps.Side) and (side.side, side.dice) == ("actor", 4)
    assert isinstance(rolled, steps.Rolled) and rolled.values == (5, 4, 3, 1)
    assert rolled.marks == ("", "", "", "complication") and rolled.drop == "D-X1"
    assert [r.dice[i].face for i in rolled.dropped] == [1, 5]  # the Wild Die and the highest
    assert all(not r.dice[i].kept for i in rolled.dropped)
    assert total == steps.Count("actor", "total", 7, "D1")
    assert r.steps[-3:] == (steps.Verdict("", "solid", (1,), "D10"),
                            steps.Count("", "half_bonus", 1, "D11"),
                            steps.Count("", "damage_bonus", 1, "D12"))
    assert render_d6system.transcript(r.steps) == r.transcript
    exploded = astragal.roll("od6: 2D wild", faces="3,6,6,2")
    assert exploded.steps[2].runs == (((3,),), ((6, 6, 2),)) and exploded.steps[2].again == "D-X1"
    assert exploded.steps[-1] == steps.Verdict("", "no_complication", (), "D-X1")
    penalty = astragal.roll("od6: 2D -5 pips vs 3", faces="3")
    adjusts = [s for s in penalty.steps if isinstance(s, steps.Adjust)]
    assert [(a.what, a.rule) for a in adjusts] == [("carry", "D-X2"), ("pips_stay", "D-X2")]
    assert render_d6system.transcript(penalty.steps) == penalty.transcript
    tie = astragal.roll("od6: 2D vs 2D opposed_tie=reroll", faces="3,4,6,6 / 5,2,1,1")
    assert [type(s).__name__ for s in tie.steps].count("Round") == 1
    assert steps.Tie((7, 7), "again", "D-X4", "opposed_tie=reroll") in tie.steps
    assert render_d6system.transcript(tie.steps) == tie.transcript
    lost = astragal.roll("od6: 2D vs 2D opposed_tie=defender", faces="3,4 / 5,2")
    assert lost.steps[-1] == steps.Verdict("", "failure", (0,), "D-X4", "opposed_tie=defender")


def test_modifiers_never_touch_the_difficulty() -> None:
    with pytest.raises(astragal.NotationError, match="D4"):
        astragal.parse("od6: 4D vs moderate advantaged")
    r = astragal.roll("od6: 4D advantaged vs moderate", faces="1,1,1,1")
    assert r.result["difficulty"] == 11 and r.result["total"] == 9


def test_dice_penalty_keeps_one_die() -> None:
    r = astragal.roll("od6: 2D extremely disadvantaged", faces="3", options={
        "modifier_form": "dice"})
    assert r.result["dice_rolled"] == 1 and r.result["total"] == 3 - 6  # D-A4: -3 per D
    r = astragal.roll("od6: 2D extremely disadvantaged modifier_form=dice "
                      "penalty_below_min=ignore", faces="3")
    assert r.result["dice_rolled"] == 1 and r.result["total"] == 3


def test_incredible_from_switch() -> None:
    assert astragal.roll("od6: 1D +21 vs easy", faces="1").result["level"] == "Spectacular"
    assert astragal.roll("od6: 1D +21 vs easy incredible_from=16",
                         faces="1").result["level"] == "Incredible"
    assert [d6.success_level(rp) for rp in (-1, 0, 4, 5, 16, 17)] == [
        None, "Minimal", "Solid", "Good", "Spectacular", "Incredible"]


def test_opposed_tie_rules() -> None:
    assert astragal.roll("od6: 2D vs 2D", faces="3,4 / 5,2").outcome == "minimal"
    assert astragal.roll("od6: 2D vs 2D opposed_tie=defender",
                         faces="3,4 / 5,2").outcome == "failure"
    r = astragal.roll("od6: 2D vs 2D opposed_tie=reroll", faces="3,4,6,6 / 5,2,1,1")
    assert r.result["rerolls"] == 1 and r.result["result_points"] == 10
    assert r.outcome == "superior"


def test_automatic_needs_no_roll() -> None:
    r = astragal.roll("od6: 3D vs 0", faces=[])
    assert r.outcome == "automatic" and r.dice == ()


def test_odds_json_shape() -> None:
    out = astragal.odds("od6: 3D+1 wild vs moderate").to_json()
    assert set(out) >= {"system", "input", "outcomes", "distribution", "mean", "truncated"}
    assert list(out["outcomes"]) == list(d6.CHECK_OUTCOMES)
    assert 0 < out["truncated"] < 1e-15
    assert out["complication"]["actor"] == pytest.approx(1 / 6)
    opposed = astragal.odds("od6: 4D+2 wild vs 3D+1").to_json()
    contest = opposed["contest"]
    assert math.fsum(contest.values()) == pytest.approx(1, abs=1e-14)
    tie_actor = opposed["outcomes"]["minimal"]
    assert tie_actor == pytest.approx(contest["tie"], abs=TOL)


def test_doctests() -> None:
    assert doctest.testmod(d6, optionflags=doctest.ELLIPSIS).failed == 0


# --------------------------------------------------------------------------------------------
# bad input: a clear error with a span, never a traceback


BAD = [
    ("od6: 4D+3", astragal.NotationError, "pips"),
    ("od6: 4D vs hard", astragal.NotationError, "not a standard difficulty"),
    ("od6: 9999D", astragal.LimitError, "limit"),
    ("od6: 99999999999D", astragal.LimitError, "beyond"),
    ("od6: 300D +300D", astragal.LimitError, "limit"),
    ("od6: 0D", astragal.NotationError, "at least 1D"),
    ("od6: 4d6", astragal.NotationError, "without the die size"),
    ("od6: 4D vs moderate (17)", astragal.NotationError, "11–15"),
    ("od6: 4D vs", astragal.NotationError, "vs what"),
    ("od6: 4D foo", astragal.NotationError, "not part of"),
    ("od6: 4D vs -3", astragal.NotationError, "0 or more"),
    ("od6: 4D vs 3D vs 2D", astragal.NotationError, "only one"),
    ("od6: 4D wild_one=bogus", astragal.OptionError, "wild_one"),
    ("od6: 4D nope=1", astragal.OptionError, "not a D6 System option"),
    ("od6:", astragal.NotationError, "nothing to roll"),
    ("od6: +1D", astragal.NotationError, "die code"),
    ("od6: 4D +", astragal.NotationError, "what"),
    ("od6: 4D very", astragal.NotationError, "not part of"),
    ("od6: 4D wild wild", astragal.NotationError, "'wild' is given twice"),
]


@pytest.mark.parametrize("text,kind,words", BAD, ids=[b[0] for b in BAD])
def test_bad_input(text: str, kind: type[Exception], words: str,
                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(kind, match=words) as err:
        astragal.parse(text)
    assert isinstance(err.value, astragal.InputError) and err.value.span is not None
    assert cli.main(["roll", text]) == 2
    assert "astragal: error" in capsys.readouterr().err


def test_bad_faces_and_limits() -> None:
    with pytest.raises(astragal.FacesError):
        astragal.roll("od6: 3D", faces="1,2")
    with pytest.raises(astragal.FacesError):
        astragal.roll("od6: 3D", faces="1,2,7")
    with pytest.raises(astragal.LimitError, match="exploded"):
        astragal.roll("od6: 1D wild", faces=",".join(["6"] * 200) + ",1")
    with pytest.raises(astragal.LimitError, match="odds work"):
        astragal.odds("od6: 400D", limits=astragal.Limits(max_odds_work=1000))
    with pytest.raises(astragal.OptionError):
        astragal.odds("od6: 3D", options={"opposed_tie": "coin"})


# --------------------------------------------------------------------------------------------
# (2) properties


# every field given: builds() would draw the fields left at their defaults too
codes = st.builds(DieCode, st.integers(1, 8), st.integers(0, 2))
terms = st.one_of(
    st.builds(Term, st.just("dice"), st.integers(-3, 3), st.just(0), st.just("")),
    st.builds(Term, st.just("dice"), st.integers(0, 3), st.integers(1, 2), st.just("")),
    st.builds(Term, st.just("pips"), st.integers(-5, 5), st.just(0), st.just("")),
    st.builds(Term, st.just("number"), st.integers(-20, 20), st.just(0), st.just("")),
    st.sampled_from(sorted(MODIFIERS)).map(lambda n: Term("modifier", name=n)),
)
sides = st.builds(Side, codes, st.lists(terms, max_size=3).map(tuple))
def _top(level: str) -> int:
    high = DIFFICULTIES[level][2]
    return 45 if high is None else high


levels = st.sampled_from(sorted(DIFFICULTIES)).flatmap(
    lambda lv: st.integers(DIFFICULTIES[lv][1], _top(lv)).map(
        lambda n: Difficulty(lv, n)))
difficulties = st.one_of(levels, st.integers(0, 45).map(lambda n: Difficulty(None, n)))
options = st.fixed_dictionaries({}, optional={
    "opposed_tie": st.sampled_from(["actor", "defender", "reroll"]),
    "wild_one": st.sampled_from([DROP, COUNTS]),
    "modifier_form": st.sampled_from(["numeric", "dice"]),
    "incredible_from": st.sampled_from([16, 17]),
    "pips_carry": st.booleans(),
}).map(lambda o: tuple(sorted(o.items())))


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    actor = draw(sides)
    kind = draw(st.sampled_from(["plain", "difficulty", "opposed"]))
    return Spec(actor, draw(difficulties) if kind == "difficulty" else None,
                draw(sides) if kind == "opposed" else None, draw(st.booleans()), draw(options))


@settings(max_examples=150, deadline=None)
@given(specs())
def test_notation_round_trip(spec: Spec) -> None:
    text = str(spec)
    parsed = astragal.parse(text).spec
    assert parsed == spec
    assert str(parsed) == text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs(), st.integers(0, 2**32))
def test_odds_sum_to_one_and_rolls_stay_in_support(spec: Spec, seed: int) -> None:
    text = str(spec)
    o = astragal.odds(text)
    assert math.fsum(p for _, p in o.outcomes.items()) + o.distribution.truncated == \
        pytest.approx(1, abs=1e-13)
    if len(o.distribution):
        assert o.distribution.total() + o.distribution.truncated == pytest.approx(1, abs=1e-13)
        assert all(p >= 0 for _, p in o.distribution.items())
    r = astragal.roll(text, seed=seed)
    assert o.outcomes[r.outcome] > 0
    if spec.difficulty is not None and spec.difficulty.automatic:
        return
    value = r.result["result_points"] if spec.opposition is not None else r.result["total"]
    assert o.distribution[value] > 0


# --------------------------------------------------------------------------------------------
# (3) exactness: enumeration of the rule functions, icepool, and the roller


def _chains() -> list[tuple[list[int], Fraction]]:
    """Every Wild Die history up to K explosions (6,…,6,f), with its probability."""
    return [([6] * k + [f], Fraction(1, 6 ** (k + 1))) for k in range(K + 1) for f in range(1, 6)]


def _brute_dice(n: int, wild: bool, wild_one: str) -> dict[int, Fraction]:
    """The dice's part of the total: ``dice_total`` over every face (and Wild Die history)."""
    out: dict[int, Fraction] = {}
    if not wild:
        for faces in itertools.product(range(1, 7), repeat=n):
            t = d6.dice_total(faces)[0]
            out[t] = out.get(t, Fraction(0)) + Fraction(1, 6 ** n)
        return out
    for faces in itertools.product(range(1, 7), repeat=n - 1):
        for chain, p in _chains():
            t = d6.dice_total(faces, chain, wild_one)[0]
            out[t] = out.get(t, Fraction(0)) + p / 6 ** (n - 1)
    return out


def _close(a: Mapping[Any, float | Fraction], b: Mapping[Any, float | Fraction]) -> None:
    for k in set(a) | set(b):
        assert abs(float(a.get(k, 0)) - float(b.get(k, 0))) < TOL, k


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("wild,wild_one", [(False, DROP), (True, DROP), (True, COUNTS)])
def test_side_odds_equal_enumeration(n: int, wild: bool, wild_one: str) -> None:
    brute = _brute_dice(n, wild, wild_one)
    fast = d6.dice_law(n, wild, wild_one)
    _close(fast.probabilities(), brute)
    assert fast.truncated < 1e-15 and (wild or fast.truncated == 0.0)
    assert math.fsum(fast.pmf) + fast.truncated == pytest.approx(1.0, abs=1e-15)


def _brute_outcomes(a: Mapping[int, Fraction], b: Mapping[int, Fraction] | None,
                    difficulty: int | None, tie: str, incredible: int) -> dict[str, float]:
    """Success levels from pairs of totals, by the rule functions (D8–D10, D-X4)."""
    out = dict.fromkeys(d6.CHECK_OUTCOMES, Fraction(0))
    pairs = ([(x, difficulty, p) for x, p in a.items()] if b is None else
             [(x, y, p * q) for x, p in a.items() for y, q in b.items()])
    decided = Fraction(0)
    for x, y, p in pairs:
        assert y is not None
        rp = x - y
        if rp == 0 and b is not None and tie == "reroll":
            continue
        decided += p
        level = d6.success_level(rp, incredible)
        if rp == 0 and b is not None and tie == "defender":
            level = None
        out["failure" if level is None else level.lower()] += p
    if b is not None and tie == "reroll":
        return {k: float(v / decided) for k, v in out.items()}
    return {k: float(v) for k, v in out.items()}


def _shift(dist: Mapping[int, Fraction], by: int) -> dict[int, Fraction]:
    return {k + by: p for k, p in dist.items()}


@pytest.mark.parametrize("text", [
    "od6: 3D+1 vs moderate", "od6: 2D+2 wild vs easy", "od6: 3D wild vs 12 incredible_from=16",
    "od6: 1D wild vs very easy", "od6: 3D+1 wild vs 2D+2 wild_one=complication_only",
])
def test_check_and_opposed_odds_equal_enumeration(text: str) -> None:
    spec = astragal.parse(text).spec
    opts = d6.effective_options(spec, {})
    wild = bool(opts["wild_die"])
    prep_a = d6.prepare(spec.actor, opts)
    a = _shift(_brute_dice(prep_a.dice, wild, opts["wild_one"]), prep_a.added)
    b = None
    if spec.opposition is not None:
        prep_b = d6.prepare(spec.opposition, opts)
        b = _shift(_brute_dice(prep_b.dice, wild, opts["wild_one"]), prep_b.added)
    diff = spec.difficulty.number if spec.difficulty is not None else None
    for tie in ("actor", "defender", "reroll") if b is not None else ("actor",):
        o = astragal.odds(text, options={"opposed_tie": tie})
        _close(o.outcomes.as_dict(),
               _brute_outcomes(a, b, diff, tie, opts["incredible_from"]))


def _ice_dice(n: int, wild: bool, wild_one: str) -> icepool.Die:
    """The same law written in icepool: a mixture over the Wild Die's first face."""
    d = icepool.d6
    if not wild:
        return n @ d
    m = n - 1
    regular = m @ d if m else icepool.Die([0])
    exploding = d.explode(depth=K)
    if wild_one == COUNTS:
        return regular + exploding
    rest = d.pool(m).lowest(m - 1).sum() if m > 1 else icepool.Die([0])
    not_one = icepool.Die([icepool.Die([2, 3, 4, 5]), 6 + d.explode(depth=K - 1)], times=[4, 1])
    return icepool.Die([rest, not_one + regular], times=[1, 5])


@pytest.mark.parametrize("n", [5, 12, 30])
@pytest.mark.parametrize("wild,wild_one", [(False, DROP), (True, DROP), (True, COUNTS)])
def test_side_odds_equal_icepool(n: int, wild: bool, wild_one: str) -> None:
    ice = _ice_dice(n, wild, wild_one)
    _close(d6.dice_law(n, wild, wild_one).probabilities(),
           {int(k): ice.probability(k) for k in ice.outcomes()})


def test_opposed_margin_equals_icepool() -> None:
    o = astragal.odds("od6: 8D+1 wild vs 6D+2")
    ice = (_ice_dice(8, True, DROP) + 1) - (_ice_dice(6, True, DROP) + 2)
    _close(o.distribution.as_dict(), {int(k): ice.probability(k) for k in ice.outcomes()})
    win = ice.probability(">", 0)
    tie = ice.probability(0)
    assert o.extra["contest"]["win"] == pytest.approx(win, abs=TOL)
    reroll = astragal.odds("od6: 8D+1 wild vs 6D+2 opposed_tie=reroll")
    success = math.fsum(p for k, p in reroll.outcomes.items() if k != "failure")
    assert success == pytest.approx(win / (1 - tie), abs=TOL)


def test_large_code_sums_to_one() -> None:
    o = astragal.odds("od6: 500D wild vs legendary")
    assert o.distribution.total() + o.distribution.truncated == pytest.approx(1, abs=1e-12)
    assert o.outcomes["incredible"] == pytest.approx(1, abs=1e-12)


def test_table_matches_the_odds(capsys: pytest.CaptureFixture[str]) -> None:
    rows = d6.TABLES["difficulties"]({"wild_die": "on"})
    assert len(rows) == 13 and len(rows[0]) == 1 + len(DIFFICULTIES)
    for row in (rows[1], rows[4], rows[12]):
        for (name, _), cell in zip(DIFFICULTIES.items(), row[1:]):
            o = astragal.odds(f"od6: {row[0]} wild vs {name}")
            p = 1.0 if name == "automatic" else o.extra["p_success"]
            assert cell == f"{100 * p:.1f}%"
    assert cli.main(["table", "d6system", "difficulties", "-o", "pips=1"]) == 0
    assert "12D+1" in capsys.readouterr().out
    with pytest.raises(astragal.OptionError):
        d6.TABLES["difficulties"]({"pips": "3"})


ROLLER_CASES = [
    ("od6: 3D+1 wild vs moderate", 101),
    ("od6: 2D wild wild_one=complication_only", 202),
    ("od6: 3D wild vs 2D+2 wild opposed_tie=reroll", 303),
    ("od6: 4D -1D advantaged vs 10 modifier_form=dice", 404),
]


@pytest.mark.parametrize("text,seed", ROLLER_CASES)
def test_roller_matches_its_exact_odds(text: str, seed: int) -> None:
    parsed = astragal.parse(text)
    system = astragal.systems.get_system("d6system")
    opts = astragal.systems.resolve_options(system, None)
    source = astragal.SeededSource(seed)
    limits = astragal.Limits()
    value: Callable[[astragal.Roll], int] = (
        (lambda r: r.result["result_points"]) if parsed.spec.opposition is not None
        else (lambda r: r.result["total"]))
    rolls = [system.roll(parsed.spec, source, opts, limits, text) for _ in range(20_000)]
    o = astragal.odds(text)
    assert_matches([value(r) for r in rolls], o.distribution.as_dict())
    assert_matches([r.outcome for r in rolls], o.outcomes.as_dict())
