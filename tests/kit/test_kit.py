"""The kit's own promises: its pinned names, its notation forms, its dice read alike by the roll
and the odds (against enumeration of every face), and a kit game in a web room."""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from typing import Any

import pytest

import astragal
from astragal import kit
from astragal.kit import AGAIN, Game, apply, d, d6, dF, highest, install, pool, procedure
from astragal.kit._form import Form

from .examples import game as example


def test_the_kits_public_names_are_pinned() -> None:
    assert sorted(kit.__all__) == sorted([
        "AGAIN", "Decision", "Dice", "Die", "Game", "Pool", "Switch", "apply", "d", "d4", "d6",
        "d8", "d10", "d12", "d20", "d100", "dF", "highest", "install", "lowest", "pool",
        "procedure", "then"])
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


@procedure
def skill_die(roll: Any) -> tuple[int, bool]:
    """d6 + skill's die (RULES.md S7–S10) as a procedure: a first 1 calls a check die (a second
    1 is a Botch, else the die counts 1); a 6 is rolled again and added while 6s come."""
    first = roll(d6)
    if first == 1:
        return 1, roll(d6, added="check") == 1
    total = last = first
    while last == 6:
        last = roll(d6, added="exploded")
        total += last
    return total, False


skill = Game("kitskill", "d6 + skill on the kit", "d6{bonus:+int} vs {difficulty:int}",
             dice=lambda bonus: apply(lambda v: (v[0] + bonus, v[1]), skill_die))


@skill.verdict("KS2", "a Botch; else higher than # succeeds, equal or lower fails")
def skill_check(roll: tuple[int, bool], difficulty: int) -> str:
    return "botch" if roll[1] else "success" if roll[0] > difficulty else "failure"


@pytest.mark.parametrize("bonus, difficulty", [(2, 5), (0, 6), (4, 11), (-1, 2)])
def test_a_procedure_carries_a_built_in_games_die_to_its_odds(bonus: int, difficulty: int) -> None:
    install(skill)
    ours = astragal.odds(f"kitskill: d6{bonus:+d} vs {difficulty}").outcomes
    theirs = astragal.odds(f"ds: d6{bonus:+d} vs {difficulty}").outcomes
    assert set(ours.outcomes()) == set(theirs.outcomes())
    for k in theirs.outcomes():
        assert abs(ours[k] - theirs[k]) < 1e-15, k
    # and the roll records the check die and the explosion as the page draws them
    r = astragal.roll(f"kitskill: d6{bonus:+d} vs {difficulty}", faces="1,1")
    assert r.outcome == "botch" and [d.added for d in r.dice] == ["", "check"]
    r = astragal.roll(f"kitskill: d6{bonus:+d} vs {difficulty}", faces="6,6,2")
    assert r.result["value"] == [14 + bonus, False]
    assert [d.added for d in r.dice] == ["", "exploded", "exploded"]


def test_a_procedures_law_equals_its_paths_enumerated() -> None:
    law = skill_die.law()
    assert law.fractions()[(1, True)] == Fraction(1, 36)
    assert law.fractions()[(1, False)] == Fraction(5, 36)
    assert law.fractions()[(8, False)] == Fraction(1, 36)  # 6 then 2
    assert 0 < law.cut < Fraction(1, 10**17)


def test_the_algebras_highest_of_mixed_exploding_dice_equals_the_kits() -> None:
    # the built-in algebra refused this with a bare ValueError; its law now equals the kit's
    from astragal.dice.algebra import Chain, Highest, Mixed, Reading, face
    from astragal.dice.sampler import sample
    from astragal.odds import algebra

    class On(Reading):
        def __call__(self, position: int, f: int) -> bool:
            return bool(f == self.settings[0])

    program = Highest(Mixed((Chain(8, On(8), face), Chain(6, On(6), face))))
    law = algebra.law(program)
    kit_law = highest(d(8).explode(), d6.explode()).law().fractions()
    assert max(abs(p - float(kit_law.get(v, 0))) for v, p in enumerate(law.pmf)) < 1e-15
    assert 0 < law.truncated < 1e-15

    class Hands:  # the faces in the order asked: the d8's 8 and its explosion's 5, the d6's 3
        faces = iter([8, 5, 3])

        def new(self, size: int) -> int:
            return 0

        def again(self, die: int, note: str) -> int:
            return next(self.faces)

        def face(self, die: int) -> int:
            return next(self.faces)

    assert sample(program, Hands()).value == 13


def test_a_decision_carries_its_rule_its_words_and_what_it_found() -> None:
    from astragal.kit import Decision

    g = Game("margin", "A margin", "{n:int} vs {tn:int}", dice=lambda n: n @ d6)

    @g.rule("G2", "a total of twice the target is a triumph")
    def triumph(total: int, tn: int) -> bool:
        return total >= 2 * tn

    @g.verdict("G1", "meet the target to succeed")
    def verdict(total: int, tn: int) -> object:
        if triumph(total, tn):
            return Decision("triumph", "G2", "{value}: a triumph", {"margin": total - tn})
        return Decision("success" if total >= tn else "failure", found={"margin": total - tn})

    install(g)
    r = astragal.roll("margin: 2 vs 4", faces="5,6")
    assert (r.outcome, r.result) == ("triumph", {"value": 11, "rule": "G2", "margin": 7})
    assert r.transcript[-1] == "11: a triumph"
    r = astragal.roll("margin: 2 vs 4", faces="1,2")
    assert (r.outcome, r.result["rule"], r.result["margin"]) == ("failure", "G1", -1)


@pytest.mark.parametrize("text, said", [
    ("cortex: d100000000 vs 3", "1 to 1000 sides"),
    ("tor: 100000000000 vs 3", "too large for dice"),
    ("coc: 50 +40", "odds work limit"),
    ("tor: 600 vs 3", "more than the limit of 500 dice"),
])
def test_huge_requests_are_refused_at_once_with_their_reason(text: str, said: str) -> None:
    for name in ("cortex", "onering", "coc"):
        example(name)
    with pytest.raises(astragal.InputError, match=said):
        astragal.odds(text)


def test_a_side_that_rolls_no_dice_is_a_number() -> None:
    g = Game("fixed", "Against a fixed defence", "{n:int} [vs {defence:int}]",
             dice=lambda n, defence: n @ d6 if defence is None else (n @ d6, defence))
    g.verdict("F1", "beat the defence")(
        lambda mine, theirs=0: "hit" if mine > theirs else "miss")
    install(g)
    assert dict(astragal.odds("fixed: 1 vs 4").outcomes.exact()) == {
        "miss": Fraction(2, 3), "hit": Fraction(1, 3)}
    r = astragal.roll("fixed: 1 vs 4", faces="5")
    assert r.outcome == "hit" and len(r.dice) == 1


def test_a_dies_labels_and_tones_are_checked_when_it_is_made() -> None:
    from astragal.kit import Die

    die = Die((1, 2, 3), "d3", tones={1: "bad", 2: "neutral", 3: "critical"})
    assert die.tones == {1: "bad", 3: "crit"}  # the outcomes' words are taken for a face's too
    with pytest.raises(ValueError, match="not 'grand'"):
        Die((1, 2), tones={2: "grand"})
    with pytest.raises(TypeError, match="map its faces to words"):
        Die((1, 2), labels=["one", "two"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not one of its faces"):
        Die((1, 2), labels={3: "three"})


def test_a_contest_of_tuples_tabulates_the_first_sides_number() -> None:
    # Ironsworn: an action die plus a stat against two challenge dice
    g = Game("iron", "Ironsworn moves", "{stat:+int=0}", dice=lambda stat: (
        apply(lambda a: (a + stat, a), d6), d(10), d(10)), sides=("action", "c1", "c2"),
        order=("miss", "weak hit", "strong hit"))

    @g.verdict("I1", "beat both challenge dice for a strong hit, one for a weak hit")
    def move(action: tuple[int, int], c1: int, c2: int) -> str:
        beaten = (action[0] > c1) + (action[0] > c2)
        return ("miss", "weak hit", "strong hit")[beaten]

    install(g)
    o = astragal.odds("iron: +2")
    assert o.distribution.outcomes() == tuple(range(3, 9))  # the action score, 1+2 to 6+2
    assert sum(p for _, p in o.outcomes.exact()) == 1


def test_a_fault_in_a_games_dice_function_is_named_not_a_traceback() -> None:
    g = Game("faulty", "A faulty game", "{n:int}", dice=lambda n: [d6][n])
    g.verdict("Z1", "any")(lambda total: "rolled")
    install(g)
    with pytest.raises(astragal.NotationError, match="faulty's dice could not be made.*IndexError"):
        astragal.roll("faulty: 3")


def test_an_outcome_the_order_lists_that_cannot_come_up_passes_the_checks() -> None:
    from astragal.testing import check_enumeration

    g = Game("never", "A never", "{n:int}", dice=lambda n: n @ d6, order=("low", "high", "never"))
    g.verdict("N1", "4 or more is high")(lambda total: "high" if total >= 4 else "low")
    check_enumeration(g, "never: 1")


def test_one_broken_game_file_leaves_the_others_and_is_named(tmp_path: Any) -> None:
    import os
    import shutil
    import subprocess
    import sys

    from .examples import ROOT

    shutil.copy(ROOT / "pbta.py", tmp_path / "pbta.py")
    (tmp_path / "broken.py").write_text("raise RuntimeError('half written')\n")
    env = {**os.environ, "ASTRAGAL_GAMES": str(tmp_path)}

    def cli(text: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "astragal", "roll", text, "--seed", "1"],
                              capture_output=True, text=True, env=env, check=False, timeout=120)

    assert cli("pbta: +1").returncode == 0
    out = cli("broken: 1")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "broken.py could not be loaded (RuntimeError: half written)" in out.stderr


def test_exact_fractions_past_what_floats_can_recover() -> None:
    # 20d6 has 6**20 (3.7e15) equally likely rolls: beyond a float's reach, the counts are kept
    g = Game("big", "Twenty dice", "{n:int}", dice=lambda n: n @ d6)
    g.verdict("B1", "70 or more is high")(lambda total: "high" if total >= 70 else "low")
    install(g)
    o = astragal.odds("big: 20")
    exact = dict(o.distribution.exact())
    assert exact[20] == Fraction(1, 6 ** 20) and sum(exact.values()) == 1
    high = sum(Fraction(w, 6 ** 20) for v, w in (20 @ d6).law().weights.items() if v >= 70)
    assert dict(o.outcomes.exact())["high"] == high


def test_a_contest_read_by_its_margin_convolves_and_gives_the_same_law() -> None:
    """``Game(margin=True)``: the verdict is read once per margin and pair of flags instead of
    once per pair of values, and the odds are the very same fractions."""
    calls = [0]

    def contest(a: tuple[int, bool], b: tuple[int, bool]) -> Any:
        calls[0] += 1
        if a[1]:
            return "fumble"
        return "win" if a[0] > b[0] else AGAIN if a[0] == b[0] else "lose"

    laws = {}
    for fast in (False, True):
        game = Game(f"margin{int(fast)}", "a contest", "{bonus:+int}", margin=fast,
                    dice=lambda bonus: (apply(lambda v: (v + bonus, v == 1), d(100)),
                                        apply(lambda v: (v, False), 4 @ d6)))
        game.verdict("M1", "the higher wins; a 1 of yours fumbles")(contest)
        install(game)
        calls[0] = 0
        laws[fast] = (astragal.odds(f"margin{int(fast)}: +1").outcomes.exact(), calls[0])
    (slow, slow_calls), (quick, quick_calls) = laws[False], laws[True]
    assert slow == quick
    assert quick_calls * 5 < slow_calls
