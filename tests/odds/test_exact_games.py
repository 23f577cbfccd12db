"""Exact fractions for every game's finite law (issue 40, item 3), held to an independent
enumeration: the roller run on every tuple of faces (a second interpreter of the same program),
or the rule written out in the test, in ``Fraction`` arithmetic."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction

import pytest

import astragal
from astragal.cli import main


def _by_roller(text: str, sizes: Sequence[Sequence[int]],
               read: Callable[[astragal.Roll], object]) -> dict[object, Fraction]:
    """The law of ``read(roll)`` over every scripted face tuple (each stream's dice sizes)."""
    flat = [s for stream in sizes for s in stream]
    counts: Counter[object] = Counter()
    for faces in itertools.product(*(range(1, s + 1) for s in flat)):
        it = iter(faces)
        streams = [[next(it) for _ in stream] for stream in sizes]
        counts[read(astragal.roll(text, faces=streams))] += 1
    total = sum(counts.values())
    return {k: Fraction(c, total) for k, c in counts.items()}


def _exact(dist: astragal.Distribution) -> dict[object, Fraction]:
    return {k: p for k, p in dist.exact() if p}


@pytest.mark.parametrize("text, sizes, read, which", [
    ("jc: d6 d4 vs d4", [[6, 4], [4]], lambda r: r.outcome, "outcomes"),
    ("jc: d4 d4 -1p", [[4, 4, 4, 4]], lambda r: r.result["actor_score"], "distribution"),
    ("jc: dmg 2d4 vs soak d4", [[4, 4], [4]], lambda r: r.result["hits"], "distribution"),
    ("cofd: 2 no-again vs 1 no-again", [[10, 10], [10]], lambda r: r.outcome, "outcomes"),
    ("cofd: 3 no-again", [[10, 10, 10]], lambda r: r.result["successes"], "distribution"),
    ("od6: 2D+1 vs 1D", [[6, 6], [6]], lambda r: r.outcome, "outcomes"),
    ("od6: 2D vs 8", [[6, 6]], lambda r: r.result["total"], "distribution"),
    ("ds: d6+2 vs 6 explode_on=none botch_on=none", [[6]], lambda r: r.outcome, "outcomes"),
    ("at: 2d6", [[6, 6]], lambda r: r.outcome, "outcomes"),
])
def test_every_game_s_finite_law_is_exact_and_equals_the_roller_on_every_face(
        text: str, sizes: Sequence[Sequence[int]], read: Callable[[astragal.Roll], object],
        which: str) -> None:
    odds = astragal.odds(text)
    assert _exact(getattr(odds, which)) == _by_roller(text, sizes, read)


def test_cofd_five_dice_without_again_fail_16807_in_100000(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert dict(astragal.odds("cofd: 5 no-again").outcomes.exact())["failure"] == \
        Fraction(7, 10) ** 5
    assert main(["odds", "cofd: 5 no-again", "--exact", "--outcomes"]) == 0
    assert "16807/100000" in capsys.readouterr().out


def _one_die_ten_again(below: int) -> list[Fraction]:
    """P(a d10 under 10-again scores k successes), k < ``below``, by walking its rolls: 8-10 is
    a success, a 10 is rolled again."""
    law = [Fraction(0)] * below

    def walk(k: int, p: Fraction) -> None:
        if k >= below:
            return
        law[k] += p * Fraction(7, 10)  # 1-7: no success, the die stops
        if k + 1 < below:
            law[k + 1] += p * Fraction(2, 10)  # 8, 9: a success, the die stops
        walk(k + 1, p / 10)  # 10: a success, rolled again

    walk(0, Fraction(1))
    return law


def test_an_infinite_law_still_gives_its_outcomes_exactly(
        capsys: pytest.CaptureFixture[str]) -> None:
    one = _one_die_ten_again(5)
    two = [sum((one[i] * one[k - i] for i in range(k + 1)), Fraction(0)) for k in range(5)]
    got = dict(astragal.odds("cofd: 2").outcomes.exact())
    assert got["failure"] == two[0]
    assert got["success"] == sum(two[1:5])
    assert got["exceptional_success"] == 1 - sum(two)
    with pytest.raises(ValueError, match="infinite"):
        astragal.odds("cofd: 2").distribution.exact()
    assert main(["odds", "cofd: 2", "--exact"]) == 0
    out = capsys.readouterr().out
    assert "49/100" in out and "infinite" in out
    assert main(["odds", "cofd: 2", "--exact", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["exact"] == "outcomes" and data["outcomes"]["failure"] == "49/100"
    assert "infinite" in data["inexact"]


def test_computed_dice_are_exact() -> None:
    want: dict[int, Fraction] = {}
    for count in range(1, 5):
        for faces in itertools.product(range(1, 7), repeat=count):
            want[sum(faces)] = want.get(sum(faces), Fraction(0)) + \
                Fraction(1, 4) / 6 ** count
    assert _exact(astragal.odds("(1d4)d6").distribution) == want


@pytest.mark.parametrize("text", [
    "jc: d8 d6 vs 2d6", "jc: d6 fav vs d6", "jc: dmg d8 fav vs soak d6", "cofd: 3 rote no-again",
    "od6: 3D vs 10", "od6: 3D vs 2D",
    "ds: atk d6+2 vs d6+1 dmg d6 explode_on=none opposed_tie=stand", "ds: d6+7 vs 6 calm", "at: 3d6 weapon D vs 1d6", "(1d4)d6", "2d6"])
def test_exact_on_every_game_from_the_command_line(text: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["odds", text, "--exact", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["exact"] is True
    fractions = [Fraction(p) for p in (data["distribution"] or data["outcomes"]).values()]
    assert sum(fractions) == 1
    if data["distribution"]:  # the mean is exact too, not a float
        law = {Fraction(k): Fraction(p) for k, p in data["distribution"].items()}
        assert Fraction(data["mean"]) == sum(k * p for k, p in law.items())


def test_the_wild_die_s_outcomes_against_a_difficulty_are_exact() -> None:
    """The Wild Die's law is infinite, but every level below Incredible is decided in a few
    explosions: walked here (a 6 adds and rolls again; a first 1 removes it and the highest
    other die, D-X1), its levels are the odds' fractions."""
    wild: dict[int, Fraction] = {}  # the Wild Die's value; -1: a complication

    def walk(total: int, p: Fraction, first: bool, depth: int) -> None:
        for face in range(1, 7):
            q = p / 6
            if first and face == 1:
                wild[-1] = wild.get(-1, Fraction(0)) + q
            elif face == 6 and depth < 10:
                walk(total + 6, q, False, depth + 1)
            else:
                wild[total + face] = wild.get(total + face, Fraction(0)) + q

    walk(0, Fraction(1), True, 0)
    levels: dict[str, Fraction] = {}
    for regular in range(1, 7):
        for value, q in wild.items():
            total = 0 if value == -1 else regular + value
            points = total - 10
            level = ("failure" if points < 0 else "minimal" if points == 0 else
                     "incredible" if points >= 17 else
                     ("solid", "good", "superior", "spectacular")[min(3, (points - 1) // 4)])
            levels[level] = levels.get(level, Fraction(0)) + q / 6
    got = dict(astragal.odds("od6: 2D wild vs 10").outcomes.exact())
    for level in ("failure", "minimal", "solid", "good", "superior", "spectacular"):
        assert got[level] == levels[level], level
    assert got["incredible"] == 1 - sum(v for k, v in levels.items() if k != "incredible")


def test_ties_rolled_again_keep_the_odds_exact() -> None:
    """A tie rolled again until it breaks conditions the law on the rolls that decide: still
    finite and rational (a/(N - ties)), held to the rule enumerated here."""
    # d6 + skill (S3): d6+2 against d6+1, higher wins, ties again
    won = sum(a + 2 > b + 1 for a in range(1, 7) for b in range(1, 7))
    tied = sum(a + 2 == b + 1 for a in range(1, 7) for b in range(1, 7))
    got = dict(astragal.odds("ds: d6+2 vs d6+1 explode_on=none botch_on=none").outcomes.exact())
    assert got["success"] == Fraction(won, 36 - tied)
    # CofD (C10, C-X7 reroll): 2 dice against 1, 8+ succeeds
    faces = range(1, 11)
    counts = Counter((sum(f >= 8 for f in (x, y)) > (z >= 8)) - (sum(f >= 8 for f in (x, y))
                                                              < (z >= 8))
                     for x in faces for y in faces for z in faces)
    got = dict(astragal.odds("cofd: 2 no-again vs 1 no-again contested_tie=reroll")
               .outcomes.exact())
    assert got["win"] == Fraction(counts[1], counts[1] + counts[-1])
    # the D6 System (D-X4 reroll): 1D against 1D
    d6 = dict(astragal.odds("od6: 1D vs 1D opposed_tie=reroll").distribution.exact())
    assert d6 == {m: Fraction(6 - abs(m), 30) for m in range(-5, 6) if m}


def test_a_huge_die_code_has_odds_and_says_it_has_no_exact_form() -> None:
    # 6**400 is too large for a float: the tie conditioning once raised OverflowError here
    from astragal.odds.exactness import conditioned

    assert conditioned(6 ** 400, 0.5) is None
    o = astragal.odds("od6: 400D")
    assert abs(o.distribution.mean() - 1400) < 1e-6
    with pytest.raises(ValueError, match="no exact form"):
        o.distribution.exact()
