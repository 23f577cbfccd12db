"""Jadeclaw properties: the roller agrees with its exact odds; notation round-trips; bad input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import astragal
from astragal.systems import jadeclaw as J
from tests.stats import assert_matches

ROLLS = 20_000


@pytest.mark.parametrize("text", [
    "jc: d12 d8 vs 2d10",
    "jc: L7 -1p fav vs L5 q=expert:basic",
    "jc: d6 d4 -2p vs d8 fav",
    "jc: d12 d10 d4 limit d8 +d8 remove biggest vs 2d8",
])
def test_contest_roller_matches_its_exact_odds(text: str) -> None:
    source = astragal.SeededSource(20261123)
    rolls = [astragal.roll(text, source=source) for _ in range(ROLLS)]
    odds = astragal.odds(text)
    assert_matches((r.outcome for r in rolls), odds.outcomes.as_dict())
    assert_matches((r.result["margin"] for r in rolls), odds.distribution.as_dict())


@pytest.mark.parametrize("text", [
    "jc: dmg 2d12 d8 vs soak d10 d6",
    "jc: dmg 2d12 d8 +1b slaying vs soak d10 d6 -1p",
    "jc: dmg d10 d6 fav enervated vs soak d8 d8 fav",
    "jc: dmg d6 d6 d6 vs soak d4",
])
def test_damage_roller_matches_its_exact_odds(text: str) -> None:
    source = astragal.SeededSource(7)
    rolls = [astragal.roll(text, source=source) for _ in range(ROLLS)]
    odds = astragal.odds(text)
    assert_matches((r.result["hits"] for r in rolls), odds.distribution.as_dict())


def test_single_roll_matches_score_law() -> None:
    source = astragal.SeededSource(99)
    rolls = [astragal.roll("jc: d10 d6 fav -1p", source=source) for _ in range(ROLLS)]
    odds = astragal.odds("jc: d10 d6 fav -1p")
    assert_matches((r.result["actor_score"] for r in rolls), odds.distribution.as_dict())


def test_the_statistical_test_can_fail() -> None:
    """A biased roller (every d12 shows 12 half the time) is caught."""
    class Loaded(astragal.Source):
        def __init__(self) -> None:
            self.inner = astragal.SeededSource(1)

        def face(self, size: int, stream: int = 0) -> int:
            f = self.inner.face(size, stream)
            return size if f <= size // 2 else f

    rolls = [astragal.roll("jc: d12 vs d12", source=Loaded()) for _ in range(5000)]
    with pytest.raises(AssertionError, match="disagrees"):
        assert_matches((r.outcome for r in rolls), astragal.odds("jc: d12 vs d12").outcomes.as_dict())


sizes = st.sampled_from(J.SIZES)
pools = st.builds(
    J.Pool,
    terms=st.lists(st.one_of(
        st.builds(lambda n, s: f"{n if n > 1 else ''}d{s}", st.integers(1, 3), sizes),
        st.builds(lambda lv: f"L{lv}", st.integers(0, 20))), min_size=1, max_size=3).map(tuple),
    include=st.lists(sizes, max_size=2).map(tuple),
    remove=st.lists(st.sampled_from(["biggest", "smallest"]), max_size=1).map(tuple),
    limit=st.one_of(st.none(), sizes),
    bonuses=st.integers(0, 3), penalties=st.integers(0, 2), favored=st.booleans(),
    quality=st.one_of(st.none(), st.sampled_from(J.QUALITIES)))


@settings(max_examples=200, deadline=None)
@given(pools, st.one_of(st.none(), pools), st.booleans())
def test_notation_round_trip_and_odds_sum_to_one(actor: J.Pool, opp: J.Pool | None,
                                                 damage: bool) -> None:
    spec: J.Spec
    if damage:
        plain = J.Pool(actor.terms, actor.include, actor.remove, actor.limit, actor.bonuses,
                       actor.penalties, actor.favored, None)
        soak = J.Pool() if opp is None else J.Pool(opp.terms, penalties=opp.penalties)
        spec = J.Damage(plain, soak)
    else:
        spec = J.Simple(actor, opp)
    text = str(spec)
    assert astragal.parse(text).spec == spec
    try:
        odds = astragal.odds(text, limits=astragal.Limits(max_odds_work=2_000_000))
    except astragal.LimitError as exc:  # a legitimate refusal, never a hang
        assert "limit" in exc.message
        return
    except astragal.InputError as exc:  # e.g. a pool left with no dice, removing from nothing
        assert "no" in exc.message or "cannot" in exc.message
        return
    assert odds.outcomes.total() == pytest.approx(1.0, abs=1e-12)
    if len(odds.distribution):
        assert odds.distribution.total() == pytest.approx(1.0, abs=1e-12)
    roll = astragal.roll(text, seed=1)
    if damage:
        assert 0 <= roll.result["hits"] <= 2 * len([d for d in roll.dice if d.group == "damage"]) + 1
    else:
        assert 1 <= roll.result["actor_score"] <= 12


@pytest.mark.parametrize("text,where,words", [
    ("jc: d12 d7 vs 2d10", "d7", "not a Jadeclaw die"),
    ("jc: 1000000d12", "1000000d12", "limit"),
    ("jc: d12 frob vs d8", "frob", "not part of a Jadeclaw"),
    ("jc: d12 vs", None, "opposing pool is empty"),
    ("jc: dmg d12 vs soak", None, "soak pool is empty"),
    ("jc: ", None, "nothing to roll"),
    ("jc: d12 vs d8 vs d6", "vs", "only one 'vs'"),
    ("jc: d12 double_botch=tie vs d8", "vs", "options (name=value) go at the end"),
    ("jc: dmg d12 favored_auto=false vs d8", "vs", "options (name=value) go at the end"),
    ("jc: d12 vs routine q=expert:basic", "q=expert:basic", "Difficulty Dice have no Quality"),
    ("jc: d12 -2b", "-2b", "a Bonus is written +2b (a Penalty is -2p)"),
    ("jc: d12 remove everything", "everything", "remove what"),
    ("jc: d12 limit d9", "d9", "not a Jadeclaw die"),
    ("jc: d12 double_botch=maybe", "double_botch=maybe", "takes one of"),
    ("jc: d12 colour=red", "colour=red", "not a Jadeclaw option"),
    ("xx: d12", "xx", "unknown system"),
    ("d12 d8", "d8", "to add dice, write d12+d8"),  # no prefix: general notation
    ("jc: d12 calm", None, "needs a Difficulty"),
    ("jc: d4 remove d8", None, "no such die"),
    ("jc: d12 fav fav", "fav", "already Favored"),  # the second 'fav' (at its place)
    ("jc: d12 vs d8 fav favoured", "favoured", "opposing pool is already Favored"),
    ("jc: d12 q=3 q=4", "q=4", "Quality is given twice"),
])
def test_bad_input_names_the_problem_and_its_place(text: str, where: str | None,
                                                   words: str) -> None:
    with pytest.raises(astragal.InputError) as info:
        astragal.roll(text, seed=1)
    exc = info.value
    assert isinstance(exc, ValueError)
    assert words in exc.message
    if where is not None:
        assert exc.span is not None
        assert text[exc.span[0]:exc.span[1]] == where
        caret_line = exc.pretty().splitlines()[1]
        assert caret_line.index("^") == exc.span[0]


def test_faces_that_do_not_fit_are_errors() -> None:
    with pytest.raises(astragal.FacesError, match="cannot show on a d8"):
        astragal.roll("jc: d8", faces="9")
    with pytest.raises(astragal.FacesError, match="needs more faces"):
        astragal.roll("jc: d8 d8", faces="3")
    with pytest.raises(astragal.FacesError, match="only 1 was rolled"):
        astragal.roll("jc: d8", faces="3,4")
    with pytest.raises(astragal.FacesError, match="no faces were given for side 2"):
        astragal.roll("jc: d8 vs d8", faces="3")
    with pytest.raises(astragal.FacesError, match="not a face"):
        astragal.roll("jc: d8", faces="three")


def test_limits_are_enforced() -> None:
    tight = astragal.Limits(max_dice=3, max_notation_length=20, max_rolls=2)
    with pytest.raises(astragal.LimitError, match="limit of 3 dice"):
        astragal.roll("jc: 4d12", limits=tight)
    with pytest.raises(astragal.LimitError, match="characters long"):
        astragal.roll("jc: d12 d12 d12 vs d12 d12 d12", limits=tight)
    with pytest.raises(astragal.LimitError, match="rolls"):
        astragal.roll("jc: d12 -2p", limits=tight)
