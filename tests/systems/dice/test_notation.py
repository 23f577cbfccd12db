"""The general notation read the way players mean it (issue 16): no silent misreading, the
habits of Roll20, Foundry, Avrae and AnyDice, and transcripts that read right.

Worked examples with scripted faces, worked by hand from docs/notation.md.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import astragal
from astragal import InputError, Limits, NotationError
from astragal.cli import main
from astragal.systems.dice.grammar import _Parser, read_plain
from astragal.systems.dice.rules import DEFAULTS, DIALECTS


def roll(text: str, **kw: Any) -> astragal.Roll:
    return astragal.roll(text, default_system="dice", **kw)


def odds(text: str, **kw: Any) -> astragal.Odds:
    return astragal.odds(text, default_system="dice", **kw)


# --------------------------------------------------------------------------------------------
# A keep or drop that leaves nothing is an error, never a silent 0

@pytest.mark.parametrize("text,message,span", [
    ("d4d6", "'d6' after d4 reads as 'drop the lowest 6'", (2, 4)),
    ("3d6d6", "to add dice write 3d6+d6", (3, 5)),
    ("2d6d3", "which drops every die", (3, 5)),
    ("4d6kh0", "keeps no dice", (3, 6)),
    ("4d6dl4", "drops all 4 dice", (3, 6)),
    ("{d6,d8}dh2", "drops all 2 items", (7, 10)),
    ("4d6k>6", "keeps no die: no face of a d6 is over 6", (3, 6)),
    ("4d6p>0", "drops every die", (3, 6)),
])
def test_keep_or_drop_of_every_die_is_an_error(text: str, message: str,
                                                span: tuple[int, int]) -> None:
    with pytest.raises(NotationError) as info:
        odds(text)
    assert message in info.value.message
    assert info.value.span == span


def test_keep_above_a_value_avrae() -> None:
    # 4d6k>3: keep the dice above 3 (Avrae and d20), not "keep 1, count successes over 3"
    r = roll("4d6k>3", faces=[2, 5, 1, 4])
    assert r.result["total"] == 9
    assert "keep dice over 3" in str(r)
    assert [d.kept for d in r.dice] == [False, True, False, True]
    assert roll("4d6p<3", faces=[2, 5, 1, 4]).result["total"] == 9
    assert roll("4d6p1", faces=[1, 5, 1, 4]).result["total"] == 9
    assert roll("4d6ph1", faces=[1, 5, 1, 4]).result["total"] == 6
    # the odds: each die on its own value
    o = odds("2d6k>4").distribution
    assert o[0] == pytest.approx(16 / 36) and o[5] == pytest.approx(8 / 36)
    assert o[11] == pytest.approx(2 / 36)


def test_bare_k_number_is_keep_highest_except_for_avrae() -> None:
    assert roll("4d6k3", faces=[3, 5, 3, 6]).result["total"] == 14
    avrae = roll("4d6k3", faces=[3, 5, 3, 6], options={"dialect": "avrae"})
    assert avrae.result["total"] == 6  # Avrae: k3 keeps the dice that show 3
    assert str(astragal.parse("4d6k3", default_system="dice",
                              options={"dialect": "avrae"})) == "dice: 4d6k=3"


# --------------------------------------------------------------------------------------------
# Transcripts that read right: brackets kept, labels where they were written and in the JSON


def test_brackets_of_a_comparison_are_kept() -> None:
    r = roll("(d20 >= 10)+(d20 >= 10)", faces=[8, 19])
    assert "(8 >= 10) + (19 >= 10) = 1" in str(r)
    assert r.result["total"] == 1


def test_labels_are_shown_where_written_and_in_the_json() -> None:
    r = roll("(2d6+3)[fire]+d4[cold]", faces=[2, 5, 1])
    assert "(7 + 3) [fire] + 1 [cold] = 11" in str(r)
    assert r.result["labels"] == [{"label": "fire", "term": "2d6+3", "value": 10},
                                  {"label": "cold", "term": "d4", "value": 1}]
    assert [t["label"] for t in r.result["terms"]] == ["fire", "cold"]
    plain = roll("2d6+3 [fire]", faces=[2, 5])
    assert "7 + 3 [fire] = 10" in str(plain)  # the label names the 3, as written
    assert plain.result["labels"] == [{"label": "fire", "term": "3", "value": 3}]


# --------------------------------------------------------------------------------------------
# Hints that name the real mistake


@pytest.mark.parametrize("text,message,span", [
    ("1 d20", "no space between the count and the die: write 1d20", (0, 5)),
    ("4d6 kh3", "modifiers go right after their dice", (4, 7)),
    ("2d6 + 3 kh", "unexpected 'kh'", (8, 10)),
])
def test_hints(text: str, message: str, span: tuple[int, int]) -> None:
    with pytest.raises(NotationError) as info:
        odds(text)
    assert message in info.value.message and info.value.span == span
    assert "without spaces" not in info.value.message or "kh3" in text


def test_repeat_written_without_a_space() -> None:
    r = roll("3x4d6kh3", faces=[6, 6, 6, 1] + [1, 1, 1, 1] + [2, 3, 4, 5])
    assert r.result["totals"] == [18, 3, 12]
    assert str(astragal.parse("6x4d6kh3", default_system="dice")) == "dice: 6x 4d6kh3"


def test_unicode_minus_and_dashes_are_minus() -> None:
    for text in ("d20 \u2212 1", "d20 \u2013 1", "d20\u22121"):
        assert roll(text, faces=[12]).result["total"] == 11
    with pytest.raises(NotationError) as info:
        odds("d20 \u2212 q")
    assert "\u2212" in info.value.pretty()  # the error shows what was typed


def test_d00_is_a_d100() -> None:
    assert astragal.parse("d00", default_system="dice").spec == \
        astragal.parse("d100", default_system="dice").spec
    assert roll("d00", faces=[100]).result["total"] == 100
    with pytest.raises(NotationError):
        odds("d0")


@pytest.mark.parametrize("argv", [["roll", "-d6", "--faces", "4"],
                                  ["roll", "--faces", "4", "--", "-d6"],
                                  ["roll", "--faces=4", "-d6", "--json"]])
def test_cli_reads_a_leading_minus_as_notation(argv: list[str],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    if "--json" in argv:
        data = json.loads(out)
        assert data["input"] == "-d6" and data["result"]["total"] == -4
    else:
        assert "Total: -4" in out


def test_cli_leading_minus_in_odds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["odds", "-d6", "-2d4", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(",-d6,-2d4")


def test_errors_are_input_errors() -> None:
    with pytest.raises(InputError):
        odds("4d6p")


@pytest.mark.parametrize("text", ["3d4k>2", "3d3!p<2", "{d4,d3}k>=2", "3d4p2>=2", "2d3!!k>3"])
def test_keep_by_value_odds_equal_the_enumerated_roller(text: str) -> None:
    from fractions import Fraction

    from tests.systems.dice.test_dice import enumerate_roller

    want, cut = enumerate_roller(text, Fraction(1, 10**8))
    got = odds(text).distribution.as_dict()
    for k in set(got) | {int(v) for v in want}:
        assert abs(got.get(k, 0.0) - float(want.get(Fraction(k), 0))) <= float(cut) + 1e-12


@pytest.mark.parametrize("text", ["3d4mi2", "3d4ma3kh2", "3d3mt", "4d3mt3", "2d4!mi2",
                                  "3d4mi2k>2", "2d4!!ma6", "3d4r1mi3>=3", "2d3e3"])
def test_min_max_matches_odds_equal_the_enumerated_roller(text: str) -> None:
    from fractions import Fraction

    from tests.systems.dice.test_dice import enumerate_roller

    want, cut = enumerate_roller(text, Fraction(1, 10**7))
    got = odds(text).distribution.as_dict()
    for k in set(got) | {int(v) for v in want}:
        assert abs(got.get(k, 0.0) - float(want.get(Fraction(k), 0))) <= float(cut) + 1e-12


# --------------------------------------------------------------------------------------------
# Habits of the other tools


def test_avrae_and_foundry_minimum_and_maximum() -> None:
    assert roll("4d6mi3", faces=[1, 2, 5, 6]).result["total"] == 17
    assert roll("4d6min3", faces=[1, 2, 5, 6]).result["total"] == 17  # Foundry's spelling
    assert roll("d20ma15", faces=[19]).result["total"] == 15
    assert "1 (as 3)" in str(roll("4d6mi3", faces=[1, 2, 5, 6]))
    assert odds("4d6mi3").mean == pytest.approx(16)
    with pytest.raises(NotationError, match="changes no face"):
        odds("4d6max7")


def test_roll20_matches() -> None:
    r = roll("6d6mt", faces=[3, 3, 5, 1, 5, 5])
    assert r.result["total"] == 2 and "2 matches: 2 × 3; 3 × 5" in str(r)
    shown = roll("6d6m", faces=[3, 3, 5, 1, 5, 5])
    assert shown.result["total"] == 22 and "matches of 2 or more" in str(shown)
    assert odds("4d6mt3").distribution[1] == pytest.approx(6 * 21 / 1296)


def test_avrae_e_explodes() -> None:
    assert parse_text("4d6e6") == parse_text("4d6!")
    assert roll("2d6e>5", faces=[6, 1, 2]).result["total"] == 9


def parse_text(text: str, **kw: Any) -> str:
    return str(astragal.parse(text, default_system="dice", **kw))


def test_d20_crits_and_fumbles_are_marked_on_natural_faces() -> None:
    r = roll("2d20kh1+5", faces=[20, 1])
    assert "20 (critical), 1 (fumble)" in str(r)
    dice = r.to_json()["dice"]
    assert dice[0]["crit"] is True and "fumble" not in dice[0]
    assert dice[1]["fumble"] is True and "crit" not in dice[1]
    assert "crit" not in roll("d6", faces=[6]).to_json()["dice"][0]  # d20s only by default
    wide = roll("d20crit>=19", faces=[19])
    assert wide.dice[0].crit and wide.result["total"] == 19


def test_cs_cf_by_dialect() -> None:
    with pytest.raises(NotationError, match="dialect=roll20 or dialect=foundry"):
        odds("10d10cs>=8")
    r20 = roll("1d20cs>18", faces=[18], options={"dialect": "roll20"})
    assert r20.dice[0].crit and r20.result["total"] == 18  # Roll20's > is "or equal"
    assert parse_text("1d20cs>18", options={"dialect": "roll20"}) == "dice: d20crit>=18"
    foundry = {"dialect": "foundry"}
    assert roll("5d10cs>=8", faces=[8, 9, 1, 2, 10], options=foundry).result["total"] == 3
    assert roll("5d10cf<3", faces=[8, 9, 1, 2, 10], options=foundry).result["total"] == 2
    assert roll("5d10cs>=8df1", faces=[8, 9, 1, 2, 10], options=foundry).result["total"] == 2
    assert parse_text("4d6r1", options=foundry) == "dice: 4d6ro1"
    assert parse_text("10d10>7", options={"dialect": "roll20"}) == "dice: 10d10>=7"


def test_chat_commands_descriptions_and_advantage() -> None:
    assert parse_text("/r 1d20+5") == "dice: d20+5"
    assert parse_text("/roll 2d6") == parse_text("!r 2d6") == "dice: 2d6"
    assert parse_text("1d20+5 Longsword attack") == "dice: d20+5 # Longsword attack"
    assert parse_text("d20+5 adv") == "dice: 2d20kh1+5"
    assert parse_text("1d20+3 dis Stealth") == "dice: 2d20kl1+3 # Stealth"
    with pytest.raises(NotationError, match="no single d20"):
        odds("2d6 adv")
    with pytest.raises(NotationError, match="would be read as a description"):
        odds("d20 vs 15")
    with pytest.raises(NotationError, match="modifiers go right after"):
        odds("4d6 kh3 Strength")  # notation words are never taken for a description


def test_several_rolls_and_inline_rolls() -> None:
    r = roll("d20; 2d6+1", faces=[12, 3, 4])
    assert r.result["totals"] == [12, 8] and r.outcome == "rolls"
    line = roll("I attack [[1d20+5]] for [[2d6+3]] damage", faces=[11, 2, 5])
    assert line.transcript[-1] == "I attack [[16]] for [[10]] damage"
    assert line.result["totals"] == [16, 10]
    assert odds("[[d6]] fire").mean == pytest.approx(3.5)
    with pytest.raises(NotationError, match="holds 2 rolls"):
        odds("d20; d6")


def test_computed_and_custom_dice() -> None:
    r = roll("(1d4)d6", faces=[3, 6, 1, 2])
    assert r.result["total"] == 9 and "3d6: 6, 1, 2" in str(r)
    o = odds("(1d4)d6")
    assert o.mean == pytest.approx(2.5 * 3.5)
    assert o.distribution[24] == pytest.approx(1 / 4 / 6**4)
    both = odds("(d6)d(d4+4)")
    assert both.mean == pytest.approx(3.5 * 3.75)
    assert roll("(d6)d(d4+4)", faces=[2, 1, 5, 4]).result["total"] == 9
    assert odds("d{1,2,2,3}").distribution.as_dict() == pytest.approx({1: .25, 2: .5, 3: .25})
    assert odds("3d{-1,0,1}").distribution.as_dict() == pytest.approx(
        odds("3dF").distribution.as_dict())
    assert roll("2d{1,2,2,3}", faces=[2, 4]).result["total"] == 5  # positions 2 and 4
    with pytest.raises(NotationError, match="can come to -2"):
        odds("(d6-3)d6")
    assert dict(odds("d{1,2,2,3}").distribution.exact())[2] == 0.5


def test_power() -> None:
    assert roll("d6**2", faces=[5]).result["total"] == 25
    assert parse_text("2^3^2") == "dice: 2**3**2"
    assert roll("2^3^2", faces=[]).result["total"] == 512
    assert roll("-2**2", faces=[]).result["total"] == -4
    assert odds("d6**2").mean == pytest.approx(91 / 6)
    with pytest.raises(NotationError, match="too large"):
        odds("2**1000")


@pytest.mark.parametrize("text", ["(d3)d3", "(d2)d(d2+1)", "d{1,2,2}kh1", "2d{0,1,1}!>=1",
                                  "(d3)d3kh1", "d3**d2", "2d{-1,1}mi0"])
def test_computed_custom_power_odds_equal_the_enumerated_roller(text: str) -> None:
    from fractions import Fraction

    from tests.systems.dice.test_dice import enumerate_roller

    want, cut = enumerate_roller(text, Fraction(1, 10**7))
    got = odds(text).distribution.as_dict()
    for k in set(got) | {int(v) for v in want}:
        assert abs(got.get(k, 0.0) - float(want.get(Fraction(k), 0))) <= float(cut) + 1e-12


def test_avrae_dialect_compares_totals_and_reads_d20_forms() -> None:
    avrae = {"dialect": "avrae"}
    assert parse_text("3d6>10", options=avrae) == "dice: 3d6 > 10"
    assert roll("3d6>10", faces=[6, 5, 1], options=avrae).result["success"] is True
    assert parse_text("3d6>3") == "dice: 3d6>3"  # elsewhere a glued compare counts dice
    assert roll("(1d20, 1d20)kh1", faces=[4, 15]).result["total"] == 15
    assert roll("7//2", faces=[]).result["total"] == 3
    assert roll("d20 != 10", faces=[10]).result["total"] == 0
    assert roll("pow(2, d4)", faces=[3]).result["total"] == 8
    assert odds("d6//2").distribution.as_dict() == pytest.approx({0: 1 / 6, 1: 1 / 3,
                                                                  2: 1 / 3, 3: 1 / 6})


def test_avrae_reroll_and_add() -> None:
    r = roll("2d6ra6", faces=[6, 2, 6])
    assert r.result["total"] == 14 and "6 (ra), 2, 6" in str(r)  # the added 6 adds no more
    assert roll("2d6ra6", faces=[3, 2]).result["total"] == 5
    assert odds("1d20ra1").mean == pytest.approx(10.5 + 10.5 / 20)
    with pytest.raises(NotationError, match="ra"):
        odds("4d6ra1kh3")


@pytest.mark.parametrize("text", ["2d3ra3", "3d3ra<2", "2d4ro1ra1"])
def test_reroll_and_add_odds_equal_the_enumerated_roller(text: str) -> None:
    from fractions import Fraction

    from tests.systems.dice.test_dice import enumerate_roller

    want, cut = enumerate_roller(text, Fraction(0))
    got = odds(text).distribution.as_dict()
    assert cut == 0
    for k in set(got) | {int(v) for v in want}:
        assert abs(got.get(k, 0.0) - float(want.get(Fraction(k), 0))) <= 1e-12


# --------------------------------------------------------------------------------------------
# The plain shapes read without the parser: the same tree, spans included, in every dialect

_PIECES = ["1d20", "d20", "4d6kh3", "4d6kl1", "5d6dh2", "4d6dl1", "2d6kh5", "3d6", "10d10",
           "5", "05", "0", "12", "d6d2", "4d6kh0", "4d6dl4", "4d6kh", "4d6k3", "1d0", "0d6",
           "1d020", "d1000000", "D6", "4d6kh3kh2", "d", "kh", "-", "+", " ", "  ", "4dF", "dF",
           "4df", "0dF", "dFkh1", "dF2", "dFF", "F", "f", "df6", "1000dF",
           # the total compared with a number: dialects differ right after a die (d20>=15)
           ">", "<", "=", "==", ">=", "<=", "!=", "<>", "!", "=>", " >= 15", ">=15", " > 0",
           "<>10 ", " = 1000000000", "15"]


@given(st.lists(st.sampled_from(_PIECES + ["+", "-", " + ", " - "]), min_size=1, max_size=7),
       st.sampled_from(sorted(DIALECTS)), st.sampled_from(["", " ", "dice: "]))
def test_plain_shapes_are_read_as_the_parser_reads_them(pieces: list[str], dialect: str,
                                                         before: str) -> None:
    text = before + "".join(pieces)
    start = len(before)
    options = {**DEFAULTS, "dialect": dialect}
    fast = read_plain(text, start)
    try:
        full: Any = _Parser(text, start, options, Limits()).request()
    except InputError as exc:
        full = exc
    if fast is not None:
        assert repr(fast) == repr(full)


@pytest.mark.parametrize("text", ["1d20+5", "4d6kh3 + 2", " 3d6-1 ", "d20", "2d20kh1+1d4+3",
                                  "8d6 - 2 + 1d8", "4dF+2", "4df - 1", "d20+5 >= 15",
                                  "d20+5>=15", "2d6 + 1 > 7", "d20 = 20", "3d6 <> 10 ",
                                  "3d6 > 3d6", "2d20kh1+5 >= 1d20 + 3", "12 < 2d6"])
def test_the_common_shapes_are_read_without_the_parser(text: str) -> None:
    fast = read_plain(text)
    assert fast is not None
    assert repr(fast) == repr(_Parser(text, 0, DEFAULTS, Limits()).request())


# --------------------------------------------------------------------------------------------
# Dice rolled once each and read by a rule: the sum of one roll's law, as exact as the algebra's


def test_a_custom_die_with_gaps_makes_only_the_totals_its_faces_make() -> None:
    # 100 dice of {0, 50}: the totals 0, 50, ..., 5000, none between (no FFT noise in a gap)
    got = odds("100d{0,50}").distribution.as_dict()
    assert sorted(got) == list(range(0, 5001, 50))
    assert got[0] == pytest.approx(0.5**100, rel=1e-12)


@pytest.mark.parametrize(("text", "n", "size"), [("999d1000>=1000", 999, 1000),
                                                 ("999d100>=100", 999, 100),
                                                 ("12d6>=5", 12, 3)])
def test_a_success_count_is_the_binomial_to_its_last_digits(text: str, n: int, size: int) -> None:
    import math
    from fractions import Fraction

    p = Fraction(1, size)
    got = odds(text).distribution.as_dict()
    for k in range(n + 1):
        want = math.comb(n, k) * p**k * (1 - p) ** (n - k)
        assert abs(got.get(k, 0.0) - float(want)) <= 2e-15, (text, k)


def test_a_sparse_custom_die_is_refused_before_its_work_naming_its_values() -> None:
    # (100d{1,2,3,1000} is answered: its exact power as one big integer is ~0.15 s of work)
    with pytest.raises(astragal.LimitError, match="possible values"):
        odds("100d{1,2,3,10000}")


def test_a_keep_over_dice_far_from_zero_costs_what_the_same_dice_near_zero_cost() -> None:
    # the several-kind keep's rows hold the sums the kept dice can make, wherever they lie: its
    # estimate counts those, not the distance from 0 (this was refused at 2.6e7 steps)
    far = odds("{d6+1000000,d8+1000000,d10+1000000,d12+1000000}kh3").distribution.as_dict()
    near = odds("{d6,d8,d10,d12}kh3").distribution.as_dict()
    assert far == pytest.approx({k + 3_000_000: p for k, p in near.items()}, abs=1e-15)


def _refused_peak(text: str) -> int:
    """The peak bytes allocated while ``text``'s odds are refused (a LimitError, not a
    MemoryError or a hang)."""
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(astragal.LimitError):
            odds(text)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("text", ["d{1,100000000}", "d{0,1000000000000}", "2d{1,1000000000}",
                                  "3d{1,1000,1000000,1000000000}", "d{1,100000000}ro1",
                                  "d{1,100000000}mi5"])
def test_a_custom_die_with_faces_far_apart_is_refused_before_its_law_is_laid_out(
        text: str) -> None:
    # its law's generating function is as long as the span of its faces: the estimate reads the
    # few faces, where it once made that list (d{1,100000000}: 3 GiB and 11 s before the
    # refusal; d{0,1000000000000}: a MemoryError)
    assert _refused_peak(text) < 4 << 20


@pytest.mark.parametrize("text", ["d{1,1000000000}!", "d{1,5000000}!>=5", "3d{1,2,9999999}!!"])
def test_a_custom_die_rolled_again_with_faces_far_apart_is_refused_naming_its_values(
        text: str) -> None:
    with pytest.raises(astragal.LimitError, match="apart"):
        odds(text)
    assert _refused_peak(text) < 4 << 20


def test_a_custom_die_rolled_again_far_from_zero_is_refused_before_its_polynomials_are_made(
        ) -> None:
    # each roll again adds about 10**9: the law spans 10**9 a roll whatever the faces' spread
    # (this took every byte of the machine's memory and was killed)
    with pytest.raises(astragal.LimitError, match="and 0, lie at most"):
        odds("d{1000000000,1000000002}!")
    assert _refused_peak("d{1000000000,1000000002}!") < 4 << 20


@pytest.mark.parametrize("text, near, shift", [
    ("3d{1000000000,1000000002}", "3d{0,2}", 3_000_000_000),
    ("2d{1000000,1000001,1000005}kh1", "2d{0,1,5}kh1", 1_000_000),
    ("4d{1000000000,1000000002}>=1000000001", "4d{0,2}>=1", 0),
    ("d{1000000000,1000000001}ro<1000000001", "d{0,1}ro<1", 1_000_000_000)])
def test_dice_whose_faces_all_lie_far_from_zero_cost_what_the_same_dice_near_zero_cost(
        text: str, near: str, shift: int) -> None:
    # a die's generating function counts from its lowest value, not from 0: these were refused
    # for billions of values they do not have
    far = odds(text).distribution.as_dict()
    assert far == pytest.approx({k + shift: p for k, p in odds(near).distribution.as_dict().items()},
                                abs=1e-15)


def test_a_custom_die_with_faces_far_apart_still_has_odds_when_the_work_is_small() -> None:
    # a die rolled once whose faces lie far apart is counted by its faces, and answered as
    # before while its law is small enough
    assert odds("d{1,100000}").distribution.as_dict() == {1: 0.5, 100000: 0.5}
    assert odds("d{1,1000000000}>=5").distribution.as_dict() == {0: 0.5, 1: 0.5}
    # re-rolled until it shows the far face: one value (refused as 10**8 values before)
    assert odds("d{1,100000000}r1").distribution.as_dict() == {100000000: 1.0}


@pytest.mark.parametrize("op, a, b, want", [
    ("%", -7, 3, 2), ("%", 7, -3, -2), ("%", -7, -3, -1), ("//", -7, 2, -4), ("//", 7, -2, -4),
    ("//", 9, 3, 3), ("/", 6, 3, 2), ("/", -6, 4, -1.5)])
def test_whole_number_division_floors_and_takes_the_divisors_sign(op: str, a: int, b: int,
                                                                  want: float) -> None:
    assert odds(f"{a}{op}({b})").distribution.as_dict() == {want: 1.0}
    assert astragal.roll(f"{a}{op}({b})").result["total"] == want


@pytest.mark.parametrize("text", ["d1000/d1000", "d1400*d1400", "floor(d1000/d999)",
                                  "(d1000*d1000)**2"])
def test_an_operator_over_two_large_dice_is_refused_at_its_cost_a_pair(text: str) -> None:
    # a quotient makes a Fraction a pair and a product a value a pair: counted at their cost
    # (d1000/d1000 was refused after 9 s of pairs, d1400*d1400 after 1.8 s)
    assert _refused_peak(text) < 4 << 20


def test_remainder_and_floor_division_over_two_dice_count_every_pair() -> None:
    counts: dict[int, int] = {}
    quotients: dict[int, int] = {}
    for a in range(1, 61):
        for b in range(1, 41):
            counts[a % b] = counts.get(a % b, 0) + 1
            quotients[a // b] = quotients.get(a // b, 0) + 1
    assert odds("d60%d40").distribution.as_dict() == pytest.approx(
        {k: c / 2400 for k, c in counts.items()}, rel=1e-12, abs=0)
    assert odds("d60//d40").distribution.as_dict() == pytest.approx(
        {k: c / 2400 for k, c in quotients.items()}, rel=1e-12, abs=0)


@pytest.mark.parametrize("text", ["5d{5000,5001}", "5d{5000,5002}", "3d{4000,4001,4003}",
                                  "7d{1,9000}", "2d{10000,10001}r10000", "3d{1,7000}ro1"])
def test_a_long_numerator_outlined_from_its_faces_is_the_one_the_estimate_would_make(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from astragal.dice.algebra import Pool
    from astragal.odds import algebra
    from astragal.systems.dice.grammar import parse
    from astragal.systems.dice.laws import die_chain

    d = parse(text, 0, {}, Limits()).body
    form = algebra.form_of(Pool(d.count, die_chain(d, None)).unit)
    length = form.numerator_shape()[0]
    outlined = algebra._outline(form, length)
    monkeypatch.setattr(algebra, "_MADE_UPTO", 10**9)  # made, as it was
    assert outlined == algebra._outline(form, length)


@pytest.mark.parametrize(("text", "faces"), [
    ("2**255*2**255*2**255*2**255*2**255/7", None), ("d6*2**255*2**255*2**255", "1"),
    ("{d6*2**255*2**255*2**255*2**255*2**255, d6}kh1", "1,1"), ("15**85", None),
    # 2·2²⁵⁵ over 5·3¹⁶⁰: 257 bits above (a roll of 1 there would make 256: within the cap)
    ("(d6*2**255)/(d6*3**160)", "2,5"), ("(d4*3**160*7**90)/(d4*5**109*11**73)", "1,1")])
def test_a_value_past_256_bits_is_refused_where_it_is_made(text: str, faces: str | None) -> None:
    # a product of powers each under the cap grew past what a float holds: the roll, the odds
    # and their mean raised OverflowError (and fractions of thousands of bits ran for ~40 s)
    with pytest.raises(astragal.NotationError, match="more than 256 bits"):
        astragal.roll(text, faces=faces)
    with pytest.raises(astragal.NotationError, match="more than 256 bits"):
        odds(text)  # every roll: some past the cap
    if faces == "2,5":  # the one roll within the cap answers, as exactly as it is
        assert astragal.roll(text, faces="1,4").result["total"] == pytest.approx(2**255 / (4 * 3**160))


def test_values_up_to_256_bits_keep_their_exact_odds_and_spread() -> None:
    law = odds("2**200*d6*2**50")
    assert law.distribution.mean() == pytest.approx(3.5 * 2.0 ** 250)
    assert law.distribution.std() == pytest.approx(math.sqrt(35 / 12) * 2.0 ** 250)
    assert astragal.roll("2**200*d6*2**50", faces="4").result["total"] == 4 * 2 ** 250


def test_a_keep_over_many_kinds_of_dice_stops_counting_once_past_the_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the rows of a keep over 79 kinds of dice were all counted before the refusal: thousands of
    # counts, each over every kind (198 kinds: 55 s to be refused)
    from astragal.odds import keep

    calls = []
    count = keep._class_rows

    def counted(*args: Any) -> tuple[int, int]:
        calls.append(args)
        return count(*args)

    monkeypatch.setattr(keep, "_class_rows", counted)
    with pytest.raises(astragal.LimitError):
        odds("{" + ",".join(f"d{s}" for s in range(2, 81)) + "}kh40")
    assert 0 < len(calls) < 500


def test_a_keep_over_a_group_of_large_dice_is_refused_before_their_values_are_copied() -> None:
    # each item's values were read into dicts and sets before the keep was counted: twenty
    # d650000 took 1.9 GB and raised MemoryError
    assert _refused_peak("{" + ",".join(f"d{s}" for s in range(300000, 299992, -1)) + "}kh2") \
        < 64 << 20


@pytest.mark.parametrize("text, message", [
    ("(d1000)d6", "the count of dice can come to 1000"),
    ("(d6-4)d6", "the count of dice can come to -3"),
    ("(2)d(d6-1)", "the number of sides can come to 0")])
def test_a_rolled_count_or_sides_out_of_range_is_named_by_its_farthest_value(
        text: str, message: str) -> None:
    with pytest.raises(NotationError, match=message):
        odds(text)
