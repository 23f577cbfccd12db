"""Chronicles of Darkness d10 pools (seed 001, RULES.md §2): worked examples, properties, exactness.

Layers: (1) every ``cofd`` vector of tests/data/vectors.json through ``astragal.roll`` and the CLI;
(2) Hypothesis properties (notation round trip, odds sum to 1, rolls within bounds); (3) the fast
odds against the rule enumerated over every face sequence (brute force), against icepool 2.1.3,
against an independent joint-state oracle for extended contests, and the roller against its own
exact odds (chi-square at 1e-7, fixed seeds).
"""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import icepool
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import astragal
from astragal import (
    FacesError,
    InputError,
    LimitError,
    Limits,
    NotationError,
    OptionError,
    SeededSource,
)
from astragal.cli import main as cli_main
from astragal.dice import steps
from astragal.render import cofd as render_cofd
from astragal.systems import cofd
from tests.stats import assert_matches

VECTORS = [v for v in json.loads((Path(__file__).resolve().parents[2] / "data" /
                                  "vectors.json").read_text()) if v["system"] == "cofd"]


# --------------------------------------------------------------------------------------------
# Layer 1: the seed's worked examples, through the API and the CLI


def _faces_for(successes: int, pool: int) -> list[int]:
    """Faces giving exactly ``successes`` on ``pool`` dice without re-rolls (8s, then 1s)."""
    return [8] * successes + [1] * (pool - successes)


def _vector_case(v: dict[str, Any]) -> tuple[str, str, Callable[[dict[str, Any], str], None]]:
    """Notation, faces and a check of the roll's JSON for one vector; unknown shapes fail."""
    i, e = v["input"], v["expected"]
    if "attribute" in i:
        text = f"cofd: Manipulation {i['attribute']} + Subterfuge {i['skill']}"
        faces = ",".join(["1"] * e["pool"])

        def check(r: dict[str, Any], outcome: str) -> None:
            assert r["pool"] == e["pool"] and r["dice"] == e["pool"]
        return text, faces, check
    if "resistance" in i:
        text = f"cofd: {i['pool']} resist Composure {i['resistance']}"
        faces = ",".join(["1"] * e["pool"])

        def check(r: dict[str, Any], outcome: str) -> None:
            assert r["pool"] == e["pool"] and r["dice"] == e["pool"]
        return text, faces, check
    if "faces" in i:
        text = f"cofd: {i['pool']} {i['again']}-again"
        faces = ",".join(str(f) for f in i["faces"] + i.get("rerolls", []))

        def check(r: dict[str, Any], outcome: str) -> None:
            assert r["successes"] == e["successes"]
            if "exceptional" in e:
                assert r["exceptional"] is e["exceptional"]
                assert (outcome == "exceptional_success") is e["exceptional"]
        return text, faces, check
    if set(i) == {"successes"}:
        pool = max(1, i["successes"])
        text = f"cofd: {pool}"
        faces = ",".join(map(str, _faces_for(i["successes"], pool)))

        def check(r: dict[str, Any], outcome: str) -> None:
            assert r["successes"] == i["successes"]
            if "exceptional" in e:
                assert r["exceptional"] is e["exceptional"]
                assert (outcome == "exceptional_success") is e["exceptional"]
            if "success" in e:
                assert (outcome in ("success", "exceptional_success")) is e["success"]
        return text, faces, check
    if i.get("mode") == "contested_single":
        pool = max(i["a_successes"], i["b_successes"], 1)
        text = f"cofd: {pool} vs {pool}"
        faces = " / ".join(",".join(map(str, _faces_for(i[k], pool)))
                           for k in ("a_successes", "b_successes"))

        def check(r: dict[str, Any], outcome: str) -> None:
            assert r["actor"]["successes"] == i["a_successes"]
            assert r["opposition"]["successes"] == i["b_successes"]
            assert r["winner"] == {"a": "actor", "b": "opposition"}[e["winner"]]
        return text, faces, check
    if i.get("mode") == "contested_extended":
        pool = max(1, *i["a_per_roll"], *i["b_per_roll"])
        text = f"cofd: {pool} target {i['target']} vs {pool}"
        faces = " / ".join(",".join(str(f) for s in i[k] for f in _faces_for(s, pool))
                           for k in ("a_per_roll", "b_per_roll"))

        def check(r: dict[str, Any], outcome: str) -> None:
            assert r["winner"] == {"a": "actor", "b": "opposition"}[e["winner"]]
            assert r["rolls"] == e["after_rolls"]
            assert r["actor_successes"] == i["a_per_roll"][: e["after_rolls"]]
        return text, faces, check
    pytest.fail(f"vector {v['name']} has a shape this test does not read: {i}")


def test_every_cofd_vector_is_read() -> None:
    assert len(VECTORS) >= 12
    for v in VECTORS:
        _vector_case(v)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_through_api(vector: dict[str, Any]) -> None:
    text, faces, check = _vector_case(vector)
    r = astragal.roll(text, faces=faces)
    check(r.result, r.outcome)
    assert r.system == "cofd"


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_through_cli(vector: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    text, faces, check = _vector_case(vector)
    assert cli_main(["roll", text, "--faces", faces, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    check(out["result"], out["outcome"])
    assert cli_main(["roll", text, "--faces", faces]) == 0
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("name, text", [
    ("ten_again_chain", "cofd: 1 10 again"),
    ("nine_again", "cofd: 2 9 again"),
    ("eight_again", "cofd: 1 dice 8 again"),
    ("count_successes_8_plus", "cofd: 5 dice"),
])
def test_the_texts_own_words_are_read(name: str, text: str) -> None:
    """C-A7: "a 9 again rule, or even an 8 again rule", "that many ten sided dice": the text's
    words give the vector's successes and the short form's reading."""
    v = next(v for v in VECTORS if v["name"] == name)
    i = v["input"]
    faces = ",".join(str(f) for f in i["faces"] + i.get("rerolls", []))
    roll = astragal.roll(text, faces=faces)
    assert roll.result["successes"] == v["expected"]["successes"]
    again = "" if i["again"] == 10 and "again" not in text else f" {i['again']}-again"
    assert str(astragal.parse(text)) == f"cofd: {i['pool']}{again}"
    with pytest.raises(NotationError, match="'cofd: 5 target 10'") as caught:
        astragal.roll("cofd: 5 extended 10", seed=1)
    assert caught.value.span == (8, 16)


def test_steps_name_the_dice_rerolled_and_the_rules_that_decided() -> None:
    """The roller returns typed steps: which dice, their faces in order, what 10-again and the
    rote action rolled again, and which rule decided each verdict; the transcript is those
    steps put into words."""
    r = astragal.roll("cofd: 3 rote vs 1", faces="10,4,9,10,8,7 / 8")
    begin, side, rolled, verdict = r.steps[:4]
    assert isinstance(begin, steps.Begin) and begin.text == "cofd: 3 rote vs 1"
    assert isinstance(side, steps.Side) and (side.side, side.dice) == ("actor", 3)
    assert dict(side.facts)["rote"] is True and dict(side.facts)["again"] == 10
    assert isinstance(rolled, steps.Rolled) and rolled.side == "actor"
    assert rolled.runs == (((10, 10, 8),), ((4,), (7,)), ((9,),))
    assert rolled.values == (3, 0, 1)
    assert (rolled.read, rolled.again, rolled.reroll) == ("C2", "C5", "C-X3")
    # the dice it names are the roll's own: their faces are the runs' faces, in order
    assert [r.dice[i].faces for i in rolled.dice] == [(10, 10, 8), (4, 7), (9,)]
    again = [i for i, runs in zip(rolled.dice, rolled.runs) if len(runs[0]) > 1]
    rote = [i for i, runs in zip(rolled.dice, rolled.runs) if len(runs) > 1]
    assert again == [0] and rote == [1]
    assert verdict == steps.Verdict("actor", "success", (4,), "C3")
    assert r.steps[-1] == steps.Verdict("", "win", (4, 1), "C10")
    assert render_cofd.transcript(r.steps) == r.transcript
    # an exceptional success is C4's, a chance die's 1 C-X1's, a tie the tie switch's
    assert astragal.roll("cofd: 5", faces="8,8,8,8,8").steps[-1].rule == "C4"
    c = astragal.roll("cofd: 2 - 3", faces="1")
    assert c.steps[-2].marks == ("dramatic_failure",)
    assert c.steps[-1] == steps.Verdict("pool", "dramatic_failure", (0,), "C-X1")
    t = astragal.roll("cofd: 1 vs 1 contested_tie=defender", faces="8 / 9")
    assert t.steps[-1] == steps.Verdict("", "lose", (1, 1), "C-X7", "contested_tie=defender")


def test_extended_steps_round_by_round() -> None:
    r = astragal.roll("cofd: 2 target 3 vs 1 contested_tie=reroll",
                      faces="8,9,8,1,1,1,9,2 / 8,10,8,2,3")
    kinds = [type(s).__name__ for s in r.steps]
    assert kinds[:3] == ["Begin", "Side", "Side"] and kinds.count("Round") == r.result["rolls"]
    assert dict(r.steps[0].facts) == {"target": 3, "contest": True}
    counts = [s for s in r.steps if isinstance(s, steps.Count)]
    assert [c.value for c in counts if c.side == "actor"] == list(
        itertools.accumulate(r.result["actor_successes"]))
    assert all(c.rule == "C11" for c in counts)
    assert render_cofd.transcript(r.steps) == r.transcript
    ties = [s for s in r.steps if isinstance(s, steps.Tie)]
    assert [(t.values, t.goes) for t in ties] == [((3, 3), "again"), ((3, 3), "again")]
    assert ties[0].setting == "contested_tie=reroll" and r.outcome == "win"
    assert r.transcript[-2] == "Roll 4: actor 9; 2 = 1 (total 4); opposition 3 = 0 (total 3)"
    assert r.steps[-1] == steps.Verdict("", "win", (4, 3), "C11")


def test_steps_as_json_name_dice_of_the_roll() -> None:
    r = astragal.roll("cofd: 4 8-again rote vs 2 contested_tie=reroll", seed=11)
    out = json.loads(json.dumps(r.to_json()))
    assert [s["step"] for s in out["steps"]][:3] == ["begin", "side", "rolled"]
    dice = out["dice"]
    for s in out["steps"]:
        if s["step"] == "rolled":
            for i, runs in zip(s["dice"], s["runs"]):
                assert dice[i].get("faces", [dice[i]["face"]]) == [f for run in runs for f in run]
                assert dice[i]["group"] == s["side"]


def test_transcript_shows_chains_rote_and_chance() -> None:
    r = astragal.roll("cofd: 3 rote", faces="10,4,9,10,8,7")
    text = "\n".join(r.transcript)
    assert "10 → 10 → 8" in text          # die 1: 10-again chain, C5
    assert "4, rote re-roll: 7" in text   # die 2: C-X3
    assert r.result["successes"] == 4
    assert text.splitlines()[-1] == "4 successes: Success"
    c = astragal.roll("cofd: 2 - 3", faces="1")
    assert c.outcome == "dramatic_failure" and c.result["chance_die"]
    assert "chance die" in "\n".join(c.transcript) and "Dramatic Failure" in c.transcript[-1]
    c = astragal.roll("cofd: chance", faces="10,10,8")  # re-rolls read as a chance die (default)
    assert c.result["successes"] == 2 and c.outcome == "success"
    c = astragal.roll("cofd: chance chance_reroll=as_normal_die", faces="10,10,8")
    assert c.result["successes"] == 3


def test_chance_die_rules() -> None:
    assert astragal.roll("cofd: 1 - 1", faces="9").outcome == "failure"   # 9 does not succeed
    assert astragal.roll("cofd: 0 9-again", faces="9").result["successes"] == 0
    assert astragal.roll("cofd: chance no-again", faces="10").result["successes"] == 1
    # C-X3: a rote chance die re-rolls a plain failure, never a dramatic failure
    assert astragal.roll("cofd: chance rote", faces="1").outcome == "dramatic_failure"
    assert astragal.roll("cofd: chance rote", faces="5,10,3").result["successes"] == 1
    assert astragal.roll("cofd: chance rote dramatic_failure_on_chance_one=false",
                         faces="1,2").outcome == "failure"
    assert astragal.roll("cofd: 2-3", faces="1",
                         options={"dramatic_failure_on_chance_one": "false"}).outcome == "failure"
    auto = astragal.roll("cofd: 2-3", seed=7, options={"pool_below_one": "auto_fail"})
    assert auto.outcome == "failure" and auto.result["dice"] == 0 and not auto.dice


def test_willpower_specialty_and_resistance_in_contests() -> None:
    r = astragal.roll("cofd: Wits 2 + Composure 1 - 4 wp", faces="1,1")
    assert r.result["pool"] == 2                     # 3 − 4 + 3 (C-X6)
    spec = "cofd: 4 resist Resolve 2 vs 3"
    assert astragal.roll(spec, faces="1,1 / 1,1,1").result["actor"]["dice"] == 2
    assert astragal.roll(spec, faces="1,1,1,1 / 1,1,1",
                         options={"contest_uses_resistance": False}).result["actor"]["dice"] == 4


def test_contested_tie_switch_in_rolls() -> None:
    assert astragal.roll("cofd: 1 vs 1", faces="8 / 9").outcome == "tie"
    assert astragal.roll("cofd: 1 vs 1 contested_tie=defender", faces="8 / 9").outcome == "lose"
    r = astragal.roll("cofd: 1 vs 1 contested_tie=reroll", faces="8,9 / 9,2")
    assert r.outcome == "win" and r.result["rolls"] == 2 and r.result["tied_rolls"] == [[1, 1]]


def test_extended_simultaneous_arrival() -> None:
    # both pass the target on roll 1: the larger total wins (C-A4)
    assert astragal.roll("cofd: 2 target 1 vs 2", faces="8,8 / 8,1").outcome == "win"
    same = "cofd: 1 target 1 vs 1"
    assert astragal.roll(same + " contested_tie=tie", faces="8 / 8").outcome == "tie"
    assert astragal.roll(same + " contested_tie=defender", faces="8 / 8").outcome == "lose"
    r = astragal.roll(same, faces="8,1,8 / 8,1,1")    # continues until one side leads
    assert r.outcome == "win" and r.result["rolls"] == 3
    cap = astragal.roll("cofd: 1 target 3 rolls 2", faces="8,1")
    assert cap.outcome == "failure" and cap.result["rolls"] == 2


# --------------------------------------------------------------------------------------------
# Bad input: the package's own errors with spans, never a traceback


@pytest.mark.parametrize("text, kind, where", [
    ("cofd: 7 11-again", NotationError, "11-again"),
    ("cofd: -x", NotationError, "x"),
    ("cofd: 9999999", LimitError, "9999999"),
    ("cofd: 501", LimitError, None),
    ("cofd: 300 + 300", LimitError, None),
    ("cofd:", NotationError, None),
    ("cofd: 5 vs", NotationError, None),
    ("cofd: 5 target 0", NotationError, "0"),
    ("cofd: 5 target 99999", LimitError, "99999"),
    ("cofd: 5 rolls 3", NotationError, "3"),
    ("cofd: 5 target 3 rolls 2 vs 4", NotationError, "2"),
    ("cofd: 5 target 3 rolls 500", LimitError, "500"),
    ("cofd: 5d10", NotationError, "5d10"),
    ("cofd: 3 2", NotationError, "2"),
    ("cofd: 5 rote rote", NotationError, "rote"),
    ("cofd: 5 9-again 8-again", NotationError, "8-again"),
    ("cofd: 5 willpower wp", NotationError, "wp"),
    ("cofd: chance + 2", NotationError, "chance"),
    ("cofd: wits", NotationError, "wits"),
    ("cofd: 5 $", NotationError, "$"),
    ("cofd: 5 - resist 2", NotationError, "resist"),
    ("cofd: 5 vs 4 vs 3", NotationError, "vs"),
    ("cofd: 5 pool_below_one=maybe", NotationError, "pool_below_one=maybe"),
    ("cofd: 5 frobnicate=1", NotationError, "frobnicate=1"),
    ("cofd: 5 exceptional_at=0", NotationError, "exceptional_at=0"),
    ("cofd: 5 target 3 + 2", NotationError, "+"),
])
def test_bad_notation(text: str, kind: type[InputError], where: str | None) -> None:
    with pytest.raises(kind) as info:
        astragal.parse(text)
    err = info.value
    assert isinstance(err, ValueError) and err.message
    assert err.span is not None and err.text == text
    if where is not None:
        assert text[err.span[0]:err.span[1]] == where
    assert "^" in err.pretty()


def test_bad_input_through_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["roll", "cofd: 7 11-again"]) == 2
    assert "11-again is not an again rule" in capsys.readouterr().err
    assert cli_main(["odds", "cofd: 5", "-o", "contested_tie=sometimes"]) == 2
    assert "contested_tie" in capsys.readouterr().err
    assert cli_main(["table", "cofd", "-o", "rote=maybe"]) == 2
    capsys.readouterr()


def test_bad_faces_options_and_limits() -> None:
    with pytest.raises(FacesError):
        astragal.roll("cofd: 3", faces="8,8")
    with pytest.raises(FacesError):
        astragal.roll("cofd: 1", faces="8,8")
    with pytest.raises(FacesError):
        astragal.roll("cofd: 1", faces="11")
    with pytest.raises(OptionError):
        astragal.odds("cofd: 5", options={"again_threshold": "7"})
    with pytest.raises(OptionError):
        astragal.odds("cofd: 5", options={"exceptional_at": "many"})
    with pytest.raises(LimitError):
        astragal.roll("cofd: 1", faces="10,10,10,10,3", limits=Limits(max_explosions=3))
    with pytest.raises(LimitError):
        astragal.odds("cofd: 30", limits=Limits(max_odds_work=100))
    with pytest.raises(LimitError):
        astragal.roll("cofd: 1 target 5", faces="1,1,1", limits=Limits(max_rolls=3))
    with pytest.raises(OptionError):   # nobody can ever score: an endless contest
        astragal.odds("cofd: 0 target 2 vs 0", options={"pool_below_one": "auto_fail"})


# --------------------------------------------------------------------------------------------
# Layer 2: properties


_NAMES = st.sampled_from(["", "Wits", "Composure", "Animal Ken", "Manipulation"])
_TERM = st.builds(cofd.Term, st.integers(0, 12), _NAMES, st.sampled_from([1, -1]),
                  st.booleans())


@st.composite
def _sides(draw: st.DrawFn) -> cofd.Side:
    again = draw(st.sampled_from([None, "10", "9", "8", "none"]))
    rote = draw(st.booleans())
    if draw(st.integers(0, 5)) == 0:
        return cofd.Side((), again, rote, False, True)
    terms = draw(st.lists(_TERM, min_size=1, max_size=4))
    # a resisting trait is always subtracted (C8)
    return cofd.Side(tuple(cofd.Term(t.value, t.name, -1, True) if t.resist else t
                           for t in terms), again, rote, draw(st.booleans()))


@st.composite
def _actions(draw: st.DrawFn) -> cofd.Action:
    actor = draw(_sides())
    opp = draw(st.none() | _sides())
    target = draw(st.none() | st.integers(1, 6))
    rolls = draw(st.none() | st.integers(1, 9)) if target and opp is None else None
    options = draw(st.sampled_from([(), (("contested_tie", "defender"),),
                                    (("exceptional_at", 3), ("rote", True)),
                                    (("again_threshold", "9"),)]))
    return cofd.Action(actor, opp, target, rolls, options)


@settings(max_examples=150, deadline=None)
@given(_actions())
def test_notation_round_trip(spec: cofd.Action) -> None:
    text = str(spec)
    parsed = astragal.parse(text).spec
    assert parsed == spec
    assert str(parsed) == text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_actions())
def test_odds_sum_to_one(spec: cofd.Action) -> None:
    try:
        o = astragal.odds(str(spec))
    except OptionError:   # an extended contest nobody can win: refused, not looped
        return
    assert math.isclose(o.outcomes.total(), 1.0, abs_tol=1e-12)
    assert all(p >= 0 for _, p in o.outcomes.items())
    assert 0 <= o.distribution.truncated < 1e-15
    assert math.isclose(o.distribution.total() + o.distribution.truncated, 1.0, abs_tol=1e-12)


@settings(max_examples=80, deadline=None)
@given(_sides(), st.integers(0, 2**32), st.sampled_from([None, 1, 3, 6]))
def test_rolls_within_bounds(side: cofd.Side, seed: int, exceptional: int | None) -> None:
    spec = cofd.Action(side, options=(("exceptional_at", exceptional),) if exceptional else ())
    r = astragal.roll(str(spec), seed=seed)
    rules = cofd.effective_rules(spec, {})
    prep = cofd.prepare(side, rules)
    res = r.result
    # C7a rolling order: every die's first face, then each die's re-rolls, die by die
    faces = [d.faces[0] for d in r.dice] + [f for d in r.dice for f in d.faces[1:]]
    assert res["dice"] == prep.dice == len(r.dice) and all(1 <= f <= 10 for f in faces)
    assert 0 <= res["successes"] <= len(faces)
    assert r.outcome == cofd.verdict(res["successes"], res["dramatic_failure"],
                                     rules.exceptional_at)
    assert res["dramatic_failure"] <= prep.chance
    # the same faces typed in give the same verdict: one rule for rolls and typed faces (C7a)
    again = astragal.roll(str(spec), faces=",".join(map(str, faces)) if faces else "")
    assert again.result == res


# --------------------------------------------------------------------------------------------
# Layer 3a: the fast odds against the rule enumerated over every face sequence


# the probe hands faces from a fixed prefix to the roller's own procedure and raises _Need where
# the enumeration must branch (shared with the dice algebra's tests)
from tests.dice.test_algebra import Probe as _Probe
from tests.dice.test_algebra import _Need


def _enumerate(dice: int, again: int | None, rote: bool, chance: bool, rules: cofd.Rules,
               max_faces: int) -> tuple[dict[tuple[int, bool], Fraction], Fraction]:
    """Exact P(successes, dramatic failure) over every face sequence of at most ``max_faces``.

    Runs the rule procedure (the one the roller uses) on each prefix; where it asks for another
    face, it branches on all ten. Sequences longer than ``max_faces`` are lumped as unknown mass.
    """
    out: dict[tuple[int, bool], Fraction] = defaultdict(Fraction)
    unknown = Fraction(0)
    stack: list[tuple[int, ...]] = [()]
    while stack:
        prefix = stack.pop()
        try:
            prep = cofd.Prepared(dice if not chance else 0, dice, chance, again,
                                 cofd.again_key(again), rote, "")
            r = cofd.roll_side(_Probe(prefix), prep, rules, Limits())
        except _Need:
            if len(prefix) >= max_faces:
                unknown += Fraction(1, 10 ** len(prefix))
            else:
                stack.extend(prefix + (f,) for f in range(1, 11))
            continue
        out[(r.successes, r.dramatic_failure)] += Fraction(1, 10 ** len(prefix))
    return out, unknown


_BRUTE = [  # dice, again, rote, chance, switches, faces enumerated
    (1, 10, False, False, {}, 14), (2, 10, False, False, {}, 9), (3, 10, False, False, {}, 5),
    (1, 9, False, False, {}, 11), (2, 9, False, False, {}, 5), (1, 8, False, False, {}, 8),
    (2, 8, False, False, {}, 4), (1, 10, True, False, {}, 12), (2, 10, True, False, {}, 6),
    (1, 8, True, False, {}, 7), (1, 9, True, False, {}, 8), (3, None, False, False, {}, 3),
    (2, None, True, False, {}, 4),
    (1, 10, False, True, {}, 14), (1, 10, True, True, {}, 14), (1, None, True, True, {}, 2),
    (1, 9, True, True, {"chance_reroll": "as_normal_die"}, 10),
    (1, 8, False, True, {"chance_reroll": "as_normal_die"}, 8),
    (1, 10, True, True, {"dramatic_failure_on_chance_one": False}, 12),
]


@pytest.mark.parametrize("dice, again, rote, chance, switches, depth", _BRUTE)
def test_odds_equal_enumeration(dice: int, again: int | None, rote: bool, chance: bool,
                                switches: dict[str, Any], depth: int) -> None:
    rules = cofd.rules_from(switches)
    brute, unknown = _enumerate(dice, again, rote, chance, rules, depth)
    prep = cofd.Prepared(dice if not chance else 0, dice, chance, again,
                         cofd.again_key(again), rote, "")
    law = cofd.side_law(prep, rules)
    by_k: dict[int, Fraction] = defaultdict(Fraction)
    for (k, _), p in brute.items():
        by_k[k] += p
    # a sequence with k successes has at most dice·(1 + rote) + k faces, so below this every
    # sequence was enumerated and the probability is exact
    exact_upto = depth - dice * (1 + rote)
    for k in range(max(len(law.pmf), max(by_k) + 1)):
        fast = law.pmf[k] if k < len(law.pmf) else 0.0
        if k <= exact_upto or unknown == 0:
            assert abs(fast - float(by_k[k])) < 1e-12, (k, fast, by_k[k])
        else:
            assert float(by_k[k]) - 1e-12 <= fast <= float(by_k[k] + unknown) + 1e-12
    dramatic = sum((p for (k, d), p in brute.items() if d), Fraction(0))
    assert abs(law.dramatic - float(dramatic)) < 1e-12
    assert exact_upto >= 2 or unknown == 0


def test_verdicts_equal_enumeration_on_small_pools() -> None:
    rules = cofd.rules_from({"exceptional_at": 2})
    brute, unknown = _enumerate(2, 9, False, False, rules, 6)
    exact: dict[str, Fraction] = defaultdict(Fraction)
    for (k, d), p in brute.items():
        exact[cofd.verdict(k, d, 2)] += p
    o = astragal.odds("cofd: 2 9-again exceptional_at=2")
    for name in ("dramatic_failure", "failure", "success"):
        assert abs(o.outcomes[name] - float(exact[name])) < 1e-12
    assert float(exact["exceptional_success"]) - 1e-12 <= o.outcomes["exceptional_success"] \
        <= float(exact["exceptional_success"] + unknown) + 1e-12


# --------------------------------------------------------------------------------------------
# Layer 3b: icepool 2.1.3 on larger pools (explode with a depth whose lost mass is < 1e-14)


def _ice_die(again: int | None, rote: bool, depth: int) -> icepool.Die[int]:
    if again is None:
        plain = icepool.Die({0: 7, 1: 3})
    else:
        big = 1000  # a re-rolling success: decoded as one success per 1000 plus the last face's
        faces = {0: 7, 1: again - 8, big: 11 - again}
        plain = icepool.Die({k: q for k, q in faces.items() if q}).explode(
            [big], depth=depth).map(lambda t: t // big + t % big)
    if not rote:
        return plain

    def first(face: int) -> Any:
        if face < 8:
            return plain          # C-X3: the failed die is rolled once more
        return 1 + plain if again is not None and face >= again else 1
    return icepool.d10.map(first)


def _ice_pmf(n: int, again: int | None, rote: bool) -> dict[int, Fraction]:
    r = 0.0 if again is None else (11 - again) / 10
    depth = 12 if r == 0 else max(8, math.ceil(math.log(1e-15 / n) / math.log(r)))
    pool = n @ _ice_die(again, rote, depth)
    total = pool.denominator()
    return {k: Fraction(q, total) for k, q in pool.items()}


@pytest.mark.parametrize("n, again, rote", [
    (4, 10, False), (17, 10, False), (30, 10, False), (11, 9, False), (30, 9, False),
    (6, 8, False), (23, 8, False), (25, None, False), (9, 10, True), (12, 9, True),
    (7, 8, True), (15, None, True),
])
def test_pool_odds_equal_icepool(n: int, again: int | None, rote: bool) -> None:
    ice = _ice_pmf(n, again, rote)
    pmf, lost = cofd.pool_pmf(n, again, rote)
    assert lost < 1e-15
    for k in range(max(len(pmf), max(ice) + 1)):
        assert abs((pmf[k] if k < len(pmf) else 0.0) - float(ice.get(k, 0))) < 1e-12


def test_contest_odds_equal_icepool() -> None:
    a = n_a = 8
    n_b = 6
    ice_a = n_a @ _ice_die(9, False, 24)
    ice_b = n_b @ _ice_die(10, True, 16)
    margin = ice_a - ice_b
    o = astragal.odds(f"cofd: {a} 9-again vs {n_b} rote contested_tie=tie")
    total = margin.denominator()
    for m, q in margin.items():
        assert abs(o.distribution[m] - q / total) < 1e-12
    win = Fraction(sum(q for m, q in margin.items() if m > 0), total)
    tie = Fraction(sum(q for m, q in margin.items() if m == 0), total)
    assert abs(o.outcomes["win"] - float(win)) < 1e-12
    assert abs(o.outcomes["tie"] - float(tie)) < 1e-12
    d = astragal.odds(f"cofd: {a} 9-again vs {n_b} rote contested_tie=defender")
    assert abs(d.outcomes["lose"] - float(1 - win)) < 1e-12 and d.outcomes["tie"] == 0
    rr = astragal.odds(f"cofd: {a} 9-again vs {n_b} rote contested_tie=reroll")
    assert abs(rr.outcomes["win"] - float(win / (1 - tie))) < 1e-12
    assert abs(rr.extra["rolls"]["2"] - float(tie * (1 - tie))) < 1e-12


# --------------------------------------------------------------------------------------------
# Layer 3c: extended actions and contests against a joint-state oracle


def _oracle_race(pa: tuple[float, ...], pb: tuple[float, ...] | None, target: int,
                 tie_rule: str, max_rolls: int | None = None) -> dict[str, list[float]]:
    """Both totals as one state, rolled forward with the extended_result rule (independent DP)."""
    states: dict[tuple[int, int], float] = {(0, 0): 1.0}
    pb_ = pb if pb is not None else (1.0,)
    w1 = math.fsum(x * y for i, x in enumerate(pa) for j, y in enumerate(pb_) if i > j)
    l1 = math.fsum(x * y for i, x in enumerate(pa) for j, y in enumerate(pb_) if i < j)
    t1 = math.fsum(x * y for i, x in enumerate(pa) for j, y in enumerate(pb_) if i == j)
    out: dict[str, list[float]] = {"win": [], "lose": [], "tie": [], "success": []}
    level = 0.0  # both at the target with equal totals, still rolling
    for r in range(1, 10_000):
        got: dict[str, float] = defaultdict(float)
        got["win"] += level * w1
        got["lose"] += level * l1
        level *= t1
        nxt: dict[tuple[int, int], float] = defaultdict(float)
        for (a, b), p in states.items():
            for x, px in enumerate(pa):
                for y, py in enumerate(pb_):
                    q = p * px * py
                    res = cofd.extended_result(a + x, None if pb is None else b + y, target)
                    if res is None:
                        nxt[(a + x, b + y)] += q
                    elif res == "tie" and tie_rule in ("reroll", "continue_next_turn"):
                        level += q
                    elif res == "tie" and tie_rule == "defender":
                        got["lose"] += q
                    else:
                        got[res] += q
        states = nxt
        for k, series in out.items():
            series.append(got[k])
        if sum(states.values()) + level < 1e-17 or (max_rolls and r >= max_rolls):
            return out
    raise AssertionError("the oracle did not settle")


@pytest.mark.parametrize("text, tie_rule", [
    ("cofd: 3 target 5 vs 2", "continue_next_turn"), ("cofd: 2 9-again target 4 vs 2 rote", "tie"),
    ("cofd: 1 target 3 vs 0", "defender"), ("cofd: 4 target 6 vs 4 8-again", "reroll"),
])
def test_extended_contest_equals_oracle(text: str, tie_rule: str) -> None:
    o = astragal.odds(text, options={"contested_tie": tie_rule})
    spec = astragal.parse(text).spec
    rules = cofd.effective_rules(spec, {"contested_tie": tie_rule})
    pa = cofd.side_law(cofd.prepare(spec.actor, rules, True), rules, 1e-20).pmf
    pb = cofd.side_law(cofd.prepare(spec.opposition, rules, True), rules, 1e-20).pmf
    ref = _oracle_race(pa, pb, spec.target, tie_rule)
    for name in ("win", "lose", "tie"):
        assert abs(o.outcomes[name] - math.fsum(ref[name])) < 1e-12
    for r in range(len(ref["win"])):
        decided = ref["win"][r] + ref["lose"][r] + ref["tie"][r]
        assert abs(o.distribution[r + 1] - decided) < 1e-12
        if decided >= 1e-12:
            assert abs(o.extra["win_by_roll"].get(str(r + 1), 0.0) - ref["win"][r]) < 1e-12
    assert o.distribution.truncated < 1e-15


def test_extended_action_equals_oracle() -> None:
    for text, cap in (("cofd: 2 target 4", None), ("cofd: 3 8-again target 7 rolls 3", 3),
                      ("cofd: 2-4 target 2", None)):
        o = astragal.odds(text)
        spec = astragal.parse(text).spec
        rules = cofd.effective_rules(spec, {})
        pa = cofd.side_law(cofd.prepare(spec.actor, rules), rules, 1e-20).pmf
        ref = _oracle_race(pa, None, spec.target, "tie", cap)["success"]
        assert abs(o.outcomes["success"] - math.fsum(ref)) < 1e-12
        for r, p in enumerate(ref):
            if cap is not None and r + 1 == cap:  # the last allowed roll also ends a failure
                p += 1.0 - math.fsum(ref)
            assert abs(o.distribution[r + 1] - p) < 1e-12
        assert abs(o.outcomes["failure"] - (0.0 if cap is None else 1 - math.fsum(ref))) < 1e-12


# --------------------------------------------------------------------------------------------
# Layer 3d: the roller against its own exact odds (chi-square, false alarms 1e-7, fixed seeds)


def _sample(text: str, n: int, seed: int, key: Callable[[astragal.Roll], Any]) -> list[Any]:
    spec = astragal.parse(text).spec
    source = SeededSource(seed)
    return [key(cofd.roll(spec, source, {}, Limits(), text)) for _ in range(n)]


@pytest.mark.parametrize("text, seed", [
    ("cofd: 5 9-again rote", 101), ("cofd: 6 8-again", 202), ("cofd: 3 - 4 rote", 303),
    ("cofd: chance chance_reroll=as_normal_die 8-again", 404),
])
def test_roller_matches_its_odds(text: str, seed: int) -> None:
    o = astragal.odds(text)
    samples = _sample(text, 8000, seed, lambda r: (r.outcome, r.result["successes"]))
    exact: dict[Any, float] = defaultdict(float)
    law = dict(o.distribution.items())
    for k, p in law.items():
        if k == 0:
            exact[("dramatic_failure", 0)] = o.outcomes["dramatic_failure"]
            exact[("failure", 0)] = o.outcomes["failure"]
        else:
            exact[(cofd.verdict(k, False, 5), k)] = p
    assert_matches(samples, exact)


def test_contest_rollers_match_their_odds() -> None:
    text = "cofd: 4 vs 4 9-again"
    o = astragal.odds(text)
    assert_matches(_sample(text, 6000, 505, lambda r: r.outcome), o.outcomes.as_dict())
    text = "cofd: 3 target 5 vs 2 rote"
    o = astragal.odds(text)
    exact = {("win", int(k)): p for k, p in o.extra["win_by_roll"].items()}
    exact.update({("lose", int(k)): p for k, p in o.extra["lose_by_roll"].items()})
    assert_matches(_sample(text, 3000, 606, lambda r: (r.outcome, r.result["rolls"])), exact)


# --------------------------------------------------------------------------------------------
# Odds output, JSON and the GM table


def test_odds_json_shape_and_truncation_note(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["odds", "cofd: 7 8-again", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"system", "input", "outcomes", "distribution", "mean", "truncated"}
    assert list(data["outcomes"]) == list(cofd.SINGLE_OUTCOMES)
    assert 0 < data["truncated"] < 1e-15
    assert cli_main(["odds", "cofd: 7 8-again"]) == 0
    assert "tail cut" in capsys.readouterr().out
    assert cli_main(["odds", "cofd: 6 target 10 vs 5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data["outcomes"]) == ["win", "lose", "tie"] and "win_by_roll" in data


def _die_law(again: int | None, rote: bool) -> tuple[Fraction, Fraction, Fraction]:
    """(a, b, r): one die's successes have the generating function (a + b·z) / (1 − r·z).

    Each face is a failure (1–7, a), a success that stops (8 to N−1, b) or a success rolled again
    (N–10, r); a rote die is f·G + (G − f) = (1 + f)·G − f, which keeps the shape.
    """
    fail = Fraction(7, 10)
    again_p = Fraction(0 if again is None else 11 - again, 10)
    stop = Fraction(3, 10) - again_p
    if not rote:
        return fail, stop, again_p
    return fail * fail, stop * (1 + fail) + fail * again_p, again_p


def test_mean_matches_generating_function() -> None:
    for again in (10, 9, 8, None):
        for rote in (False, True):
            a, b, r = _die_law(again, rote)
            # G'(1) for G = (a + b·z)/(1 − r·z): (b(1 − r) + r(a + b)) / (1 − r)^2
            mean_die = (b * (1 - r) + r * (a + b)) / (1 - r) ** 2
            o = astragal.odds(f"cofd: 12 {'no' if again is None else again}-again"
                              + (" rote" if rote else ""))
            assert abs(o.mean - 12 * float(mean_die)) < 1e-11


def test_table_pools(capsys: pytest.CaptureFixture[str]) -> None:
    rows = cofd.TABLES["pools"]({})
    assert [r[0] for r in rows[1:]] == ["chance"] + [str(n) for n in range(1, 21)]
    assert len(rows[0]) == 1 + 3 * len(cofd.AGAIN_RULES)
    o = astragal.odds("cofd: 7 9-again")
    col = rows[0].index("9-again ≥1")
    assert rows[8][col] == f"{100 * (1 - o.outcomes['failure']):.1f}%"
    assert abs(float(rows[8][col + 2]) - o.mean) <= 0.005 + 1e-12
    assert cli_main(["table", "cofd", "-o", "rote=true", "-o", "exceptional_at=3"]) == 0
    out = capsys.readouterr().out
    assert "10-again 3+" in out and "chance" in out


def test_extended_result_depends_only_on_who_arrives_and_who_leads() -> None:
    # the exact race reads C11 once per kind of arrival; this is what makes that exact
    for target in (1, 3, 7):
        for a in range(2 * target + 2):
            assert cofd.extended_result(a, None, target) == ("success" if a >= target else None)
            for b in range(2 * target + 2):
                got = cofd.extended_result(a, b, target)
                arrived = (a >= target, b >= target)
                if arrived == (False, False):
                    assert got is None
                elif arrived == (True, True):
                    assert got == cofd.contest(a - b)
                else:
                    assert got == ("win" if arrived[0] else "lose")
