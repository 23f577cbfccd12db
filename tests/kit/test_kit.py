"""The kit's own promises: its pinned names, its notation forms, its dice read alike by the roll
and the odds (against enumeration of every face), and a kit game in a web room."""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from typing import Any

import pytest

import astragal
from astragal import kit
from astragal.kit import AGAIN, Game, apply, d, d6, dF, highest, install, pool
from astragal.kit._form import Form

from .examples import game as example


def test_the_kits_public_names_are_pinned() -> None:
    assert sorted(kit.__all__) == sorted([
        "AGAIN", "Decision", "Dice", "Die", "Game", "Pool", "Switch", "apply", "d", "d4", "d6",
        "d8", "d10", "d12", "d20", "d100", "dF", "highest", "install", "lowest", "pool"])
    for name in kit.__all__:
        assert getattr(kit, name) is not None


def fractions(dice: Any) -> dict[Any, Fraction]:
    return dice.law().fractions()


def brute(f: Any, *sizes: int) -> dict[Any, Fraction]:
    out: dict[Any, Fraction] = {}
    n = 1
    for s in sizes:
        n *= s
    for faces in product(*(range(1, s + 1) for s in sizes)):
        k = f(*faces)
        out[k] = out.get(k, Fraction(0)) + Fraction(1, n)
    return out


def test_pool_readings_equal_every_face_enumerated() -> None:
    assert fractions(3 @ d6) == brute(lambda *f: sum(f), 6, 6, 6)
    assert fractions(pool(d(8), d6, d6).highest(2)) == brute(
        lambda *f: sum(sorted(f)[-2:]), 8, 6, 6)
    assert fractions(pool((4, d6)).lowest(1)) == brute(lambda *f: min(f), 6, 6, 6, 6)
    assert fractions(pool((4, d(10))).count(lambda x: x >= 8)) == brute(
        lambda *f: sum(x >= 8 for x in f), 10, 10, 10, 10)
    # two counts at once, without packing them into one number
    assert fractions(pool((3, d6)).count({6}, {1})) == brute(
        lambda *f: (f.count(6), f.count(1)), 6, 6, 6)
    assert fractions(pool((3, d6)).sorted(2)) == brute(
        lambda *f: tuple(sorted(f, reverse=True)[:2]), 6, 6, 6)
    assert fractions(4 @ dF) == brute(lambda *f: sum(x - 2 for x in f), 3, 3, 3, 3)


def test_the_highest_of_mixed_exploding_dice_has_its_law() -> None:
    law = highest(d(4).explode(), d6.explode()).law()
    # P(max <= 3) = 3/4 * 3/6 exactly; the law is cut only far below 1e-15
    assert sum(p for v, p in law.fractions().items() if v <= 3) == Fraction(3, 8)
    assert 0 < law.cut < Fraction(1, 10**15)
    # 5 is the d4's 4 then 1 (1/16) over a d6 of at most 5, or the d6's 5 over a d4 of 1 to 3
    assert law.fractions()[5] == Fraction(1, 16) * Fraction(5, 6) + Fraction(3, 4) * Fraction(1, 6)


def test_a_form_reads_carets_and_did_you_mean() -> None:
    form = Form("x", "{pool:int} [{again:10|9|8}-again] [{rote:rote}] [vs {rival:int}]")
    spec = form.parse("5 9-again rote vs 3")
    assert (spec.pool, spec.again, spec.rote, spec.rival) == (5, 9, "rote", 3)
    assert str(spec) == "x: 5 9-again rote vs 3"
    assert str(form.parse("5")) == "x: 5"
    with pytest.raises(astragal.NotationError) as e:
        form.parse("5 rot")
    assert "did you mean 'rote'?" in str(e.value) and e.value.span == (2, 5)
    with pytest.raises(astragal.NotationError, match="expected a whole number"):
        form.parse("five")
    with pytest.raises(astragal.NotationError, match="ends too early"):
        form.parse("5 vs")


def test_a_game_with_no_dice_limit_refuses_too_many_dice_with_a_message() -> None:
    example("pbta")
    g = Game("many", "Many dice", "{n:int}", dice=lambda n: n @ d6)
    g.verdict("M1", "a total")(lambda total: "rolled")
    install(g)
    with pytest.raises(astragal.LimitError, match="dice"):
        astragal.roll("many: 100000")
    with pytest.raises(astragal.LimitError, match="dice"):
        astragal.odds("many: 100000")


def test_a_rule_that_never_ends_says_so() -> None:
    g = Game("tie", "Always a tie", "{n:int}", dice=lambda n: apply(lambda a: a, n @ d6))
    g.verdict("T1", "always again")(lambda total: AGAIN)
    install(g)
    with pytest.raises(astragal.LimitError, match="never ends"):
        astragal.odds("tie: 1")
    with pytest.raises(astragal.LimitError, match="made again"):
        astragal.roll("tie: 1", seed=1)


def test_words_render_the_decision_and_change_with_it() -> None:
    example("pbta")
    r = astragal.roll("pbta: +0", faces="5,5")
    assert r.outcome == "strong hit" and r.result == {"value": 10, "rule": "P1"}
    verdict = ("strong hit (P1: 10 or more is a strong hit, 7 to 9 a weak hit, 6 or less a "
               "miss)")
    assert r.transcript == ("2d6+0: 5, 5 + 0 = 10", verdict)
    assert astragal.roll("pbta: +0", faces="3,3").transcript[-1].startswith("miss")
