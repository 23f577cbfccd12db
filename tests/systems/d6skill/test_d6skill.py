"""The d6 + skill game (seed 004, RULES.md §5): worked examples, properties and exact odds.

Layers: (1) every ``d6_skill`` vector of tests/data/vectors.json through the API and the CLI with
scripted faces; (2) Hypothesis properties (notation round trip, odds sum to 1, rolls inside the
odds' support, no crash on any input); (3) exactness: the closed-form odds equal the rule
functions enumerated over every face sequence (bounded explosion depth, exact fractions) and an
independent icepool model; the seeded roller agrees with its own odds (chi-square, 1e-7).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, NamedTuple

import icepool
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import astragal
from astragal import cli
from astragal.systems import d6skill as S
from tests.stats import assert_matches

VECTORS = [v for v in json.loads((Path(__file__).parents[2] / "data" / "vectors.json")
                                 .read_text(encoding="utf-8")) if v["system"] == "d6_skill"]
ROLLS = 12_000
TOL = 1e-12


# --------------------------------------------------------------------------------------------
# (1) The seed's worked examples


def vector_case(v: dict[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
    """Notation, scripted faces and the expected result keys of one vector."""
    inp, exp = v["input"], dict(v["expected"])
    if inp.get("kind") == "ATK":  # S4, S5: ATK d6 + Skill against a DEF result, weapon DMG
        text = (f"ds: atk d6+{inp['skill']} vs {inp['defense_result']} "
                f"dmg {inp['weapon_dmg']}")
        return text, ",".join(map(str, inp["die"])), exp
    if "a_result" in inp:  # S3: equal opposed results are rolled again
        a, b = inp["a_result"], inp["b_result"]
        # a first round showing 3 / 3 gives the vector's results; a second round decides
        text = f"ds: d6+{a - 3} vs d6+{b - 3}"
        return text, "3,5 / 3,2", {"rounds.0.outcome": exp["outcome"],
                                   "rounds.0.actor.result": a, "rounds.0.opposition.result": b}
    if "stressful" in inp:  # S6
        situation = "stressful" if inp["stressful"] else "calm"
        text = f"ds: d6+{inp['bonus']} vs {inp['difficulty']} {situation}"
        return text, (None if exp["auto_success"] else "3"), exp
    faces = list(inp["die"]) + ([inp["botch_check"]] if "botch_check" in inp else [])
    text = f"ds: d6+{inp['bonus']}"
    if "difficulty" in inp:
        text += f" vs {inp['difficulty']}"
    return text, ",".join(map(str, faces)), exp


def lookup(result: dict[str, Any], key: str) -> Any:
    value: Any = result
    for part in key.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def test_every_vector_is_used() -> None:
    assert len(VECTORS) == 11
    assert len({v["name"] for v in VECTORS}) == 11


@pytest.mark.parametrize("v", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_through_the_api(v: dict[str, Any]) -> None:
    text, faces, expected = vector_case(v)
    r = astragal.roll(text, faces=faces if faces is not None else [])
    for key, value in expected.items():
        assert lookup(r.result, key) == value, (key, r.transcript)
    if faces is None:  # S6: an automatic Success rolls no die
        assert r.dice == () and r.outcome == "success"
    else:  # the botch check and each explosion consume faces in rolling order, per side
        sides = [[int(f) for f in part.split(",")] for part in faces.split("/")]
        actor = [f for d in r.dice if not d.group.startswith("opposition") for f in d.faces]
        opposition = [f for d in r.dice if d.group.startswith("opposition") for f in d.faces]
        assert [actor, opposition][:len(sides)] == sides


@pytest.mark.parametrize("v", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_through_the_cli(v: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    text, faces, expected = vector_case(v)
    argv = ["roll", text, "--json"] + (["--faces", faces] if faces else ["--seed", "1"])
    assert cli.main(argv) == 0
    result = json.loads(capsys.readouterr().out)["result"]
    for key, value in expected.items():
        assert lookup(result, key) == value


def test_vectors_through_the_installed_command() -> None:
    for v in VECTORS[:3]:
        text, faces, expected = vector_case(v)
        out = subprocess.run([sys.executable, "-m", "astragal.cli", "roll", text, "--faces",
                              faces or "", "--json"], capture_output=True, text=True, check=True)
        result = json.loads(out.stdout)["result"]
        assert all(lookup(result, k) == val for k, val in expected.items())


class Read(NamedTuple):
    """One d6 as the text reads it: what it adds, Botch, Critical."""

    total: int
    botch: bool
    critical: bool


DieRules = tuple[bool, bool, "int | None"]  # does a 6 explode, is a first 1 checked, the cap
PLAIN: DieRules = (True, True, None)


def read_faces(faces: Sequence[int], rules: DieRules = PLAIN) -> Read | None:
    """One d6 read from its faces in rolling order, straight from the seed's text (S7–S11) and
    independently of the game's code; None while a face is still needed."""
    explodes, botches, cap = rules
    if not faces:
        return None
    first = faces[0]
    if first == 1 and botches:  # S7: a second d6 checks the 1; S8: the die counts 1
        return Read(1, faces[1] == 1, False) if len(faces) == 2 else None
    if not (explodes and cap != 0 and first == 6):
        return Read(first, False, False) if len(faces) == 1 else None
    n = 0  # S9: a 6 is rolled again and added while 6s come (at most ``cap`` times)
    while faces[n] == 6 and (cap is None or n < cap):
        n += 1
        if n == len(faces):
            return None
    return Read(sum(faces[:n + 1]), False, True) if len(faces) == n + 1 else None


def die_rules(options: dict[str, Any], kind: str) -> DieRules:
    """How the switches read a die of this kind."""
    o = {**S.DEFAULTS, **options}
    cap = None if o["max_explosions"] == "none" else int(o["max_explosions"])
    return kind in S.kinds(o["explode_on"]), kind in S.kinds(o["botch_on"]), cap


def test_the_vector_rules_directly() -> None:
    assert S.opposed_verdict(8 - 8, False, False, "reroll", "before_ties") == ("reroll", 0)  # S3
    assert S.check_outcome(7, False, 6) == "success" and S.check_outcome(6, False, 6) == "failure"
    assert S.automatic_success(7, 6, False) and not S.automatic_success(6, 6, False)  # S-A5
    assert not S.automatic_success(9, 6, True)  # S6: combat is stressful
    assert S.damage(5 + 3) == 8 and S.damage(2 - 4) == 0  # S5


# --------------------------------------------------------------------------------------------
# Rules and switches, one by one


@pytest.mark.parametrize("text, faces, result, botch, critical", [
    ("ds: d6", "1,1", 1, True, False),  # S7
    ("ds: d6", "1,6", 1, False, False),  # S8, S11
    ("ds: d6", "6,6,3", 15, False, True),  # S9
    ("ds: d6", "6,1", 7, False, True),  # S10
    ("ds: d6 max_explosions=1", "6,6", 12, False, True),
    ("ds: d6 max_explosions=0", "6", 6, False, False),
    ("ds: d6 explode_on=none", "6", 6, False, False),
    ("ds: d6 botch_on=none", "1", 1, False, False),
])
def test_the_die_reads_its_faces_as_the_text_does(text: str, faces: str, result: int,
                                                  botch: bool, critical: bool) -> None:
    r = astragal.roll(text, faces=faces)
    assert (r.result["result"], r.result["botch"], r.result["critical"]) == (
        result, botch, critical)
    options = dict(astragal.parse(text).spec.options)
    assert read_faces([int(f) for f in faces.split(",")], die_rules(options, "skill")) == Read(
        result, botch, critical)


def test_a_botch_check_of_six_does_not_explode() -> None:  # S11
    r = astragal.roll("ds: d6+5", faces="1,6")
    assert r.result["result"] == 6 and not r.result["critical"] and len(r.dice) == 2
    assert not r.dice[1].kept and "botch check" in r.dice[1].note


def test_a_critical_chain_never_botches() -> None:  # S10
    r = astragal.roll("ds: d6+2", faces="6,6,1")
    assert r.result == {**r.result, "result": 15, "botch": False, "critical": True}


@pytest.mark.parametrize("text,faces,outcome,margin", [
    ("ds: d6+3 vs d6+2", "1,1 / 4", "botch", 4 - 6),          # actor botch
    ("ds: d6+3 vs d6+6", "2 / 1,1", "success", 1),             # S-A1: a win is by 1 or more
    ("ds: d6+3 vs d6+3", "1,1 / 1,1", "botch", 0),            # S-A4: Botch before the tie
    ("ds: d6+3 vs d6+3 botch_check_on_opposed=after_ties", "1,1,4 / 1,1,2", "success", 2),
    ("ds: d6+3 vs d6+3 opposed_tie=actor", "4 / 4", "success", 0),
    ("ds: d6+3 vs d6+3 opposed_tie=opposition", "4 / 4", "failure", 0),
    ("ds: d6+3 vs d6+3 opposed_tie=stand", "4 / 4", "tie", 0),
])
def test_opposed_switches(text: str, faces: str, outcome: str, margin: int) -> None:
    r = astragal.roll(text, faces=faces)
    assert (r.outcome, r.result["margin"]) == (outcome, margin)


def test_explode_and_botch_switches() -> None:
    r = astragal.roll("ds: atk d6 vs def d6 explode_on=skill+atk", faces="5 / 6")
    assert r.outcome == "miss" and r.result["def_result"] == 6  # S-A2: DEF switched off
    r = astragal.roll("ds: d6 vs 0", faces="1", options={"botch_on": "none"})
    assert r.outcome == "success" and r.result["result"] == 1
    r = astragal.roll("ds: d6", faces="6,6,6", options={"max_explosions": 2})
    assert r.result["result"] == 18
    odds = astragal.odds("ds: d6 max_explosions=2")
    assert max(odds.distribution) == 18 and odds.distribution.truncated == 0


def test_the_record_names_the_critical_chain_the_botch_check_and_the_deciding_rules() -> None:
    """Each die's facts are in the record (a Critical chain one die per face, the first toned
    critical and the rest added by explosion; the botch check counting nothing), the result
    names the rule that decided, and the words say what the rules decided."""
    r = astragal.roll("ds: atk d6+2 vs def d6+2 dmg d6", faces="6,6,2,3 / 1,4")
    groups = [(d.group, d.face, d.added, d.tone, d.kept) for d in r.dice]
    assert groups == [("actor", 6, "", "crit", True), ("actor", 6, "exploded", "", True),
                      ("actor", 2, "exploded", "", True), ("opposition", 1, "", "", True),
                      ("opposition", 4, "check", "", False), ("dmg", 3, "", "", True)]
    assert r.dice[4].scored == 0  # the botch check adds nothing (S8)
    assert (r.outcome, r.result["rule"], r.result["margin"], r.result["dmg"]) == (
        "hit", "S3", 13, 16)
    assert r.transcript == (
        "  ATK: d6 shows 6, 6, 2: Critical (S9), 6 + 6 + 2 = 14 → 14 + 2 = 16",
        ("  DEF: d6 shows 1, botch check (S7) shows 4: no Botch, the die counts 1 (S8) → "
         "1 + 2 = 3"), "ATK 16 vs DEF 3: hit", "DMG roll: d6 shows 3 → 3 + 0 = 3",
        "DMG = DMG roll 3 + margin 13 = 16 (S5)")
    capped = astragal.roll("ds: d6+2 max_explosions=1", faces="6,6")
    assert "(the house cap on explosions ends the chain)" in capped.transcript[0]
    assert (capped.outcome, capped.result["rule"]) == ("no_botch", "S8")
    botched = astragal.roll("ds: d6", faces="1,1")
    assert [(d.added, d.tone) for d in botched.dice] == [("", ""), ("check", "fumble")]
    tie = astragal.roll("ds: d6+3 vs d6+3", faces="2,5 / 2,4")
    assert tie.transcript[0] == "Round 1:" and "Round 2:" in tie.transcript
    assert "  5 vs 5: a tie — roll again (S3)" in tie.transcript
    assert [rd["outcome"] for rd in tie.result["rounds"]] == ["reroll", "success"]
    # each round's dice are their own group: a page shows the tied round apart from the next
    assert [d.group for d in tie.dice] == ["actor", "opposition", "actor round 2",
                                           "opposition round 2"]
    calm = astragal.roll("ds: d6+7 vs 6 calm")
    assert calm.result["rule"] == "S6" and not calm.dice


def test_stressful_switch_and_words() -> None:
    assert astragal.roll("ds: d6+7 vs 6", options={"stressful": "false"}, faces=[]).result[
        "auto_success"]
    assert not astragal.roll("ds: d6+7 vs 6 stressful", options={"stressful": False},
                             faces="2").result["auto_success"]
    assert astragal.odds("ds: d6+7 vs 6 calm").outcomes["success"] == 1.0
    assert astragal.odds("ds: d6+7 vs 6").outcomes["success"] < 1.0


def test_attack_damage_with_a_rolled_dmg_and_a_botched_def() -> None:
    r = astragal.roll("ds: atk d6+6 vs def d6+3 dmg d6+2", faces="6,6,1,4 / 1,1")
    assert r.outcome == "hit" and r.result["dmg"] == (4 + 2) + (19 - 4)
    assert r.result["opposition_botch"]
    r = astragal.roll("ds: atk d6+1 vs def d6+9 dmg 4", faces="3 / 1,1")
    assert r.outcome == "hit" and r.result["dmg_bonus"] == 1  # S-A1: the margin is at least 1


def test_tie_rerolls_consume_faces_per_side_in_order() -> None:
    r = astragal.roll("ds: atk d6+4 vs def d6+4 dmg 2", faces="2,6,3 / 2,1,4")
    # round 1: 2+4 vs 2+4, a tie; round 2: ATK 6, 3 = 9, +4 = 13 against DEF 1 (botch check 4
    # clears it) +4 = 5: margin 8
    assert [rd["outcome"] for rd in r.result["rounds"]] == ["reroll", "hit"]
    assert r.result["dmg"] == 2 + 8


# --------------------------------------------------------------------------------------------
# Bad input: the package's own errors, with spans


@pytest.mark.parametrize("text,where,words", [
    ("ds: 2d6+3", "2d6+3", "one d6"),
    ("ds: d8+3", "d8+3", "not this game's die"),
    ("ds: d6+3 vs", None, "vs what"),
    ("ds: d6+3 vs 5 vs 6", "vs", "only one 'vs'"),
    ("ds: d6+3 frob", "frob", "not understood"),
    ("ds: d6+3 calm", "calm", "needs a Difficulty"),
    ("ds: atk d6+3 vs 5 calm", "calm", "always stressful"),
    ("ds: d6+3 vs d6 dmg 4", "dmg", "goes with an ATK"),
    ("ds: atk d6+3 dmg 4", "dmg", "margin over a DEF"),
    ("ds: atk d6+3 vs skill d6", "skill", "opposed by the target's DEF"),
    ("ds: d6+3 vs def d6", "def", "opposes an ATK"),
    ("ds: dmg d6+3 vs 5", "vs", "not made against anything"),
    ("ds: d6+1234567", "d6+1234567", "too large"),
    ("ds: d6 explode_on=feet", "explode_on=feet", "is not one of skill, trait"),
    ("ds: d6 opposed_tie=coin", "opposed_tie=coin", "takes one of"),
    ("ds: d6 colour=red", "colour=red", "not a d6 + skill option"),
    ("ds: d6 max_explosions=-1", "max_explosions=-1", "whole number"),
    ("ds: d6 explode_on=skill , trait", ",", "join the kinds"),
    ("ds: ", None, "nothing to roll"),
    ("ds: vs 5", "vs", "not a d6 + skill roll"),
])
def test_bad_notation_is_an_input_error_with_a_span(text: str, where: str | None,
                                                     words: str) -> None:
    with pytest.raises(astragal.InputError) as info:
        astragal.roll(text, seed=1)
    exc = info.value
    assert words in exc.message and exc.span is not None
    if where is not None:
        assert text[exc.span[0]:exc.span[1]] == where
    assert "^" in exc.pretty()


def test_bad_options_and_faces() -> None:
    with pytest.raises(astragal.OptionError, match="not a d6 \\+ skill option"):
        astragal.odds("ds: d6", options={"colour": "red"})
    with pytest.raises(astragal.OptionError, match="max_explosions"):
        astragal.odds("ds: d6", options={"max_explosions": "lots"})
    with pytest.raises(astragal.FacesError, match="needs more faces"):
        astragal.roll("ds: d6+3 vs d6+3", faces="4 / 4")  # the tie must be rolled again
    with pytest.raises(astragal.FacesError, match="only 1 was rolled"):
        astragal.roll("ds: d6+3", faces="4,4")
    with pytest.raises(astragal.FacesError, match="cannot show on a d6"):
        astragal.roll("ds: d6+3", faces="7")
    with pytest.raises(astragal.FacesError):
        astragal.roll("ds: d6+7 vs 6 calm", faces="3")  # S6: no die is rolled


def test_limits_on_explosions_and_tied_rounds() -> None:
    limits = astragal.Limits(max_explosions=5, max_rolls=3)
    with pytest.raises(astragal.LimitError, match="explosion"):
        astragal.roll("ds: d6", faces=[6] * 7, limits=limits)
    assert astragal.roll("ds: d6", faces=[6] * 5 + [2], limits=limits).result["die"] == 32
    with pytest.raises(astragal.LimitError, match="tied rounds"):
        astragal.roll("ds: d6 vs d6", faces="2,2,2,2 / 2,2,2,2", limits=limits)


def test_cli_reports_bad_input_with_exit_code_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["roll", "ds: d6+3 vs", "--seed", "1"]) == 2
    assert "vs what" in capsys.readouterr().err
    assert cli.main(["odds", "ds: d6", "-o", "opposed_tie=coin"]) == 2


# --------------------------------------------------------------------------------------------
# (2) Properties

mods = st.lists(st.integers(-20, 20), max_size=3).map(tuple)
kinds_set = st.sets(st.sampled_from(S.KINDS))
options = st.fixed_dictionaries({}, optional={
    "explode_on": kinds_set.map(lambda ks: "+".join(k for k in S.KINDS if k in ks) or "none"),
    "botch_on": st.sets(st.sampled_from(S.BOTCH_KINDS)).map(
        lambda ks: "+".join(k for k in S.KINDS if k in ks) or "none"),
    "max_explosions": st.one_of(st.just("none"), st.integers(0, 4)),
    "opposed_tie": st.sampled_from(S.TIE_RULES),
    "botch_check_on_opposed": st.sampled_from(S.BOTCH_ORDERS),
    "stressful": st.booleans(),
}).map(lambda d: tuple(sorted(d.items())))


@st.composite
def checks(draw: Callable[..., Any]) -> S.Check:
    form = draw(st.sampled_from(["alone", "difficulty", "opposed", "atk_fixed", "atk_def"]))
    opts = draw(options)
    if form == "alone":
        return S.Check(S.Side(draw(st.sampled_from(S.KINDS)), draw(mods)), options=opts)
    if form == "difficulty":
        kind = draw(st.sampled_from(["skill", "trait", "loot", "def"]))
        sit = draw(st.sampled_from([None, "stressful"] + (["calm"] if kind != "def" else [])))
        return S.Check(S.Side(kind, draw(mods)), draw(st.integers(-5, 30)), situation=sit,
                       options=opts)
    if form == "opposed":
        return S.Check(S.Side(draw(st.sampled_from(["skill", "trait"])), draw(mods)),
                       opposition=S.Side(draw(st.sampled_from(["skill", "trait"])), draw(mods)),
                       options=opts)
    dmg = draw(st.one_of(st.none(), st.integers(0, 12),
                         mods.map(lambda m: S.Side("dmg", m))))
    if form == "atk_fixed":
        return S.Check(S.Side("atk", draw(mods)), draw(st.integers(0, 25)), dmg=dmg, options=opts)
    return S.Check(S.Side("atk", draw(mods)), opposition=S.Side("def", draw(mods)), dmg=dmg,
                   options=opts)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(checks(), st.integers(0, 2**32))
def test_round_trip_odds_sum_to_one_and_rolls_in_bounds(spec: S.Check, seed: int) -> None:
    text = str(spec)
    assert astragal.parse(text).spec == spec
    assert str(astragal.parse(text)) == text
    odds = astragal.odds(text)
    assert odds.outcomes.total() == pytest.approx(1.0, abs=1e-12)
    dist = odds.distribution
    if len(dist):
        assert 0 <= dist.truncated < 1e-15
        assert dist.total() + dist.truncated == pytest.approx(1.0, abs=1e-12)
    r = astragal.roll(text, seed=seed)
    assert odds.outcomes[r.outcome] > 0
    value = {"result": "result", "margin": "margin", "DMG": "dmg"}[odds.value_name]
    if len(dist):
        assert dist[r.result[value]] > 0
    elif value == "result":
        assert r.result["auto_success"]


words = st.sampled_from(["d6", "d6+3", "d6-2", "2d6", "d8", "+", "-", "3", "-4", "#5", "vs",
                         "atk", "def", "dmg", "loot", "trait", "calm", "stressful", "combat",
                         ",", "&", "(", "opposed_tie=actor", "explode_on=def", "max_explosions=0",
                         "stressful=no", "q=1", "x", "999999999", "d6+99999999", "#", "="])


@settings(max_examples=300, deadline=None)
@given(st.lists(words, max_size=8), st.text(max_size=6))
def test_any_input_is_read_or_refused_cleanly(parts: list[str], noise: str) -> None:
    text = "ds: " + " ".join(parts) + noise
    try:
        astragal.odds(text)
        astragal.roll(text, seed=3)
    except astragal.InputError as exc:
        assert exc.message


# --------------------------------------------------------------------------------------------
# (3) Exactness: brute-force enumeration of the rule functions, exact fractions


def sequences(rules: DieRules, max_faces: int = 64) -> list[tuple[Read, Fraction]]:
    """Every way one d6 can land (faces in rolling order) with its exact probability."""
    out: list[tuple[Read, Fraction]] = []
    stack: list[tuple[int, ...]] = [()]
    while stack:
        prefix = stack.pop()
        r = read_faces(prefix, rules)
        if r is not None:
            out.append((r, Fraction(1, 6 ** len(prefix))))
        elif len(prefix) < max_faces:
            stack.extend(prefix + (f,) for f in range(1, 7))
    return out


def brute_result(rules: DieRules, bonus: int) -> tuple[dict[int, Fraction], Fraction]:
    law: dict[int, Fraction] = defaultdict(Fraction)
    botch = Fraction(0)
    for r, p in sequences(rules):
        law[r.total + bonus] += p
        botch += p if r.botch else 0
    return law, botch


def close(ours: dict[Any, float], exact: dict[Any, Fraction], tol: float = TOL) -> None:
    keys = set(ours) | set(exact)
    bad = {k: (ours.get(k, 0.0), float(exact.get(k, 0))) for k in keys
           if abs(ours.get(k, 0.0) - float(exact.get(k, 0))) > tol}
    assert not bad, bad


CAPS = [0, 1, 2, 3]


@pytest.mark.parametrize("explodes", [True, False])
@pytest.mark.parametrize("botches", [True, False])
@pytest.mark.parametrize("cap", CAPS)
def test_die_law_equals_enumeration_at_bounded_depth(explodes: bool, botches: bool,
                                                     cap: int) -> None:
    law = S.skill_die(explodes, botches, cap).law().fractions()  # exact: no tail to cut
    exact: dict[Read, Fraction] = defaultdict(Fraction)
    for r, p in sequences((explodes, botches, cap)):
        exact[r] += p
    assert {Read(*k): v for k, v in law.items()} == exact


def test_unlimited_chain_equals_deep_enumeration_and_cuts_below_1e_15() -> None:
    exact, _ = brute_result((True, True, 40), 0)  # 6^-41 is far below every tolerance here
    odds = astragal.odds("ds: d6")
    close(odds.distribution.as_dict(), exact)
    kept = sum(odds.distribution.as_dict().values())
    assert 0 < odds.distribution.truncated < 1e-15
    assert kept + odds.distribution.truncated == pytest.approx(1, abs=1e-15)


def opposed_switches(options: dict[str, Any]) -> tuple[str, str]:
    o = {**S.DEFAULTS, **options}
    return o["opposed_tie"], o["botch_check_on_opposed"]


def brute_opposed(text: str, options: dict[str, Any], bonus_a: int, bonus_b: int, kind_a: str,
                  kind_b: str) -> tuple[dict[str, Fraction], dict[int, Fraction]]:
    """One round enumerated with the rule, then the conditional law given no re-roll (S3)."""
    outcomes: dict[str, Fraction] = defaultdict(Fraction)
    margins: dict[int, Fraction] = defaultdict(Fraction)
    seq_b = sequences(die_rules(options, kind_b))
    for a, p in sequences(die_rules(options, kind_a)):
        for b, q in seq_b:
            v, m = S.opposed_verdict(a.total + bonus_a - b.total - bonus_b, a.botch, b.botch,
                                     *opposed_switches(options))
            outcomes[v] += p * q
            if v != "reroll":
                margins[m] += p * q
    keep = 1 - outcomes.pop("reroll", Fraction(0))
    return ({k: v / keep for k, v in outcomes.items()},
            {k: v / keep for k, v in margins.items()})


OPPOSED_CASES = [
    ("", 3, 2), ("", 0, 0), ("", -2, 5), ("opposed_tie=stand", 1, 1),
    ("opposed_tie=actor botch_check_on_opposed=after_ties", 2, 2),
    ("opposed_tie=opposition", 4, 0), ("botch_check_on_opposed=after_ties", 0, 1),
    ("botch_on=skill explode_on=trait", 1, 0),
]


@pytest.mark.parametrize("cap", [1, 3])
@pytest.mark.parametrize("switches,bonus_a,bonus_b", OPPOSED_CASES)
def test_opposed_odds_equal_enumeration(switches: str, bonus_a: int, bonus_b: int,
                                        cap: int) -> None:
    text = f"ds: d6{bonus_a:+d} vs trait d6{bonus_b:+d} max_explosions={cap} {switches}"
    odds = astragal.odds(text)
    options = dict(astragal.parse(text).spec.options)
    outcomes, margins = brute_opposed(text, options, bonus_a, bonus_b, "skill", "trait")
    close(odds.outcomes.as_dict(), outcomes)
    close(odds.distribution.as_dict(), margins)


def brute_attack(options: dict[str, Any], atk: int, dfn: int | None, def_bonus: int,
                 dmg: int | S.Side | None) -> tuple[dict[str, Fraction], dict[int, Fraction]]:
    words = {"botch": "botch", "failure": "miss", "success": "hit", "tie": "tie"}
    rounds: dict[tuple[str, int], Fraction] = defaultdict(Fraction)
    for a, p in sequences(die_rules(options, "atk")):
        res = a.total + atk
        if dfn is not None:  # a fixed DEF: S2
            v = S.check_outcome(res, a.botch, dfn)
            rounds[(words[v], res - dfn)] += p
            continue
        for b, q in sequences(die_rules(options, "def")):
            v, m = S.opposed_verdict(res - b.total - def_bonus, a.botch, b.botch,
                                     *opposed_switches(options))
            rounds[(words.get(v, v), m)] += p * q
    keep = 1 - sum((p for (v, _), p in rounds.items() if v == "reroll"), Fraction(0))
    weapon = sequences(die_rules(options, "dmg")) if isinstance(dmg, S.Side) else None
    outcomes: dict[str, Fraction] = defaultdict(Fraction)
    damage: dict[int, Fraction] = defaultdict(Fraction)
    for (v, m), p in rounds.items():
        if v == "reroll":
            continue
        outcomes[v] += p / keep
        if v != "hit":
            damage[0] += p / keep
        elif isinstance(dmg, S.Side):
            assert weapon is not None
            for w, q in weapon:
                damage[S.damage(w.total + dmg.bonus + m)] += p * q / keep
        else:
            damage[S.damage((dmg or 0) + m)] += p / keep
    return dict(outcomes), dict(damage)


@pytest.mark.parametrize("atk,dfn,def_bonus,dmg", [
    (6, None, 3, 4), (2, None, 5, S.Side("dmg", (1,))), (4, 7, 0, 3),
    (0, 3, 0, S.Side("dmg", (-2,))), (3, None, 3, None), (1, None, 9, 0),
])
@pytest.mark.parametrize("switches", ["", "opposed_tie=actor explode_on=atk+dmg"])
def test_attack_damage_equals_enumeration(atk: int, dfn: int | None, def_bonus: int,
                                          dmg: int | S.Side | None, switches: str) -> None:
    target = f"{dfn}" if dfn is not None else f"def d6{def_bonus:+d}"
    spec = S.Check(S.Side("atk", (atk,)), dfn,
                   None if dfn is not None else S.Side("def", (def_bonus,)), dmg)
    text = f"{spec} max_explosions=2 {switches}"
    assert target in text
    odds = astragal.odds(text)
    options = dict(astragal.parse(text).spec.options)
    outcomes, damage = brute_attack(options, atk, dfn, def_bonus, dmg)
    close({k: v for k, v in odds.outcomes.as_dict().items() if v}, outcomes)
    close(odds.distribution.as_dict(), damage)


def test_difficulty_odds_equal_enumeration() -> None:
    for bonus in range(-2, 9):
        for dfn in range(0, 16, 3):
            text = f"ds: trait d6{bonus:+d} vs {dfn} max_explosions=3"
            law, botch = brute_result((True, True, 3), bonus)
            exact = {"botch": botch,
                     "success": sum((p for x, p in law.items() if x > dfn), Fraction(0))}
            exact["success"] -= botch if 1 + bonus > dfn else 0  # a Botch never succeeds
            exact["failure"] = 1 - exact["botch"] - exact["success"]
            close(astragal.odds(text).outcomes.as_dict(), exact)


# --------------------------------------------------------------------------------------------
# (3) Exactness against icepool, an independent model written from RULES.md


def ice_side(bonus: int, explode: bool = True, botch: bool = True,
             depth: int = 30) -> icepool.Die:
    """(result, botched) of d6 + bonus: S9 chains via explode, S7/S8 via a second d6."""
    chain = icepool.d6.explode(depth=depth) if explode and depth > 0 else icepool.d6

    def settle(total: int) -> Any:
        if total == 1 and botch:
            return icepool.d6.map(lambda check: (1 + bonus, check == 1))
        return (total + bonus, False)

    return chain.map(settle)


def ice_round(a: tuple[int, bool], b: tuple[int, bool]) -> tuple[str, int]:
    """S3, S-A1, S-A4 with the default switches."""
    (ra, ba), (rb, bb) = a, b
    if ba:
        return "botch", ra - rb
    if bb:
        return "success", max(1, ra - rb)
    if ra == rb:
        return "reroll", 0
    return ("success" if ra > rb else "failure"), ra - rb


def ice_probs(die: icepool.Die, key: Callable[[Any], Any]) -> dict[Any, Fraction]:
    out: dict[Any, Fraction] = defaultdict(Fraction)
    for outcome, p in zip(die.outcomes(), die.probabilities()):
        out[key(outcome)] += p
    return dict(out)


@pytest.mark.parametrize("bonus", [0, 3, -4])
def test_single_roll_equals_icepool(bonus: int) -> None:
    side = ice_side(bonus)
    odds = astragal.odds(f"ds: d6{bonus:+d}")
    close(odds.distribution.as_dict(), ice_probs(side, lambda o: o[0]))
    assert odds.outcomes["botch"] == pytest.approx(float(ice_probs(side, lambda o: o[1])[True]),
                                                   abs=TOL)


@pytest.mark.parametrize("bonus_a,bonus_b", [(3, 2), (0, 0), (1, 6), (8, 0)])
def test_opposed_roll_equals_icepool(bonus_a: int, bonus_b: int) -> None:
    rounds = icepool.map(ice_round, ice_side(bonus_a), ice_side(bonus_b))
    final = rounds.reroll([("reroll", 0)], depth="inf")  # the conditional law
    odds = astragal.odds(f"ds: d6{bonus_a:+d} vs d6{bonus_b:+d}")
    close(odds.outcomes.as_dict(), ice_probs(final, lambda o: o[0]))
    close(odds.distribution.as_dict(), ice_probs(final, lambda o: o[1]))


@pytest.mark.parametrize("atk,dfn,weapon", [(6, 3, "4"), (3, 3, "d6+2"), (5, 0, "d6")])
def test_attack_damage_equals_icepool(atk: int, dfn: int, weapon: str) -> None:
    final = icepool.map(ice_round, ice_side(atk), ice_side(dfn)).reroll([("reroll", 0)],
                                                                        depth="inf")
    w: icepool.Die = (icepool.Die([int(weapon)]) if weapon.isdigit()
                      else ice_side(int(weapon[2:] or 0), botch=False).map(lambda o: o[0]))
    dmg = icepool.map(lambda r, x: max(0, x + r[1]) if r[0] == "success" else 0, final, w)
    odds = astragal.odds(f"ds: atk d6{atk:+d} vs def d6{dfn:+d} dmg {weapon}")
    close(odds.distribution.as_dict(), ice_probs(dmg, lambda o: o))
    assert odds.outcomes["hit"] == pytest.approx(
        float(ice_probs(final, lambda o: o[0])["success"]), abs=TOL)


@pytest.mark.parametrize("bonus,dfn", [(3, 6), (0, 4), (7, 12), (2, 0)])
def test_difficulty_equals_icepool(bonus: int, dfn: int) -> None:
    verdict = ice_side(bonus).map(
        lambda o: "botch" if o[1] else "success" if o[0] > dfn else "failure")
    close(astragal.odds(f"ds: d6{bonus:+d} vs {dfn}").outcomes.as_dict(),
          ice_probs(verdict, lambda o: o))


# --------------------------------------------------------------------------------------------
# The roller against its own exact odds (chi-square at 1e-7, fixed seeds)


def seeded_rolls(text: str, seed: int, n: int = ROLLS) -> Iterator[astragal.Roll]:
    source = astragal.SeededSource(seed)
    return (astragal.roll(text, source=source) for _ in range(n))


@pytest.mark.parametrize("text,seed,value", [
    ("ds: d6+3", 20261123, "result"),
    ("ds: d6+3 vs d6+2", 7, "margin"),
    ("ds: atk d6+6 vs def d6+3 dmg d6+2", 11, "dmg"),
    ("ds: d6+2 vs trait d6+2 opposed_tie=stand botch_check_on_opposed=after_ties"
     + " max_explosions=1", 5, "margin"),
])
def test_roller_matches_its_exact_odds(text: str, seed: int, value: str) -> None:
    rolls = list(seeded_rolls(text, seed))
    odds = astragal.odds(text)
    assert_matches((r.outcome for r in rolls), odds.outcomes.as_dict())
    assert_matches((r.result[value] for r in rolls), odds.distribution.as_dict())


def test_the_statistical_test_can_fail() -> None:
    """A roller whose d6 shows 6 twice as often is caught."""
    class Loaded(astragal.Source):
        def __init__(self) -> None:
            self.inner = astragal.SeededSource(1)

        def face(self, size: int, stream: int = 0) -> int:
            f = self.inner.face(7, stream)
            return 6 if f == 7 else f

    rolls = [astragal.roll("ds: d6+3", source=Loaded()) for _ in range(5000)]
    with pytest.raises(AssertionError, match="disagrees"):
        assert_matches((r.result["result"] for r in rolls),
                       astragal.odds("ds: d6+3").distribution.as_dict())


# --------------------------------------------------------------------------------------------
# Output forms and tables


def test_odds_json_has_the_common_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["odds", "ds: atk d6+6 vs def d6+3 dmg 4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"system", "input", "outcomes", "distribution", "mean"} <= set(data)
    assert data["system"] == "d6skill" and set(data["outcomes"]) == {"botch", "miss", "hit"}
    assert 0 < data["truncated"] < 1e-15


def test_tables_agree_with_the_odds(capsys: pytest.CaptureFixture[str]) -> None:
    rows = S.success_table()
    col = rows[0].index("#6")
    row = next(r for r in rows if r[0] == "+3")
    success = astragal.odds("ds: d6+3 vs 6").outcomes["success"]
    assert row[col] == f"{100 * success:.1f}%"
    assert cli.main(["table", "d6skill", "opposed", "-o", "opposed_tie=stand"]) == 0
    assert "tie per round" in capsys.readouterr().out


def test_prefixes_and_transcript_words() -> None:
    r = astragal.roll("d6skill: d6+2", faces="6,6,3")
    assert r.system == "d6skill" and "Critical (S9)" in str(r)
    assert "Botch" in str(astragal.roll("ds: d6", faces="1,1"))


def test_doctests() -> None:
    import doctest
    import sys

    for name in ("", ".notation", ".game", ".rules"):
        assert doctest.testmod(sys.modules["astragal.systems.d6skill" + name]).failed == 0
