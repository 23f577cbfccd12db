"""Characters and macros: names become their values, errors still point at what was typed."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import astragal
from astragal.web.sheet import Sheet, SheetError, check_sheet, expand

ALIASES = {"jc": "jadeclaw", "jadeclaw": "jadeclaw", "cofd": "cofd", "dice": "dice"}
WU = check_sheet({"stats": {"Fast-Talk": "d12", "Will": "d10", "Speed": "d10", "Stealth": "d8",
                            "Dexterity": 3},
                  "macros": {"sneak": "jc: Speed + Stealth vs routine",
                             "con": "Will & Fast-Talk vs 2d10"}})


@pytest.mark.parametrize("typed, expanded", [
    ("Fast-Talk vs 2d10", "d12 vs 2d10"),
    ("fast-talk & will vs 2d10", "d12 & d10 vs 2d10"),       # names ignore case
    ("Speed + Stealth vs routine", "d10 & d8 vs routine"),   # J1: one pool, not an Include
    ("Speed+Stealth", "d10 & d8"),
    ("Speed + d8", "d10 + d8"),                              # '+ d8' as typed stays an Include
    ("sneak", "jc: d10 & d8 vs routine"),                    # a macro, then its stats
    ("  SNEAK ", "jc: d10 & d8 vs routine"),
    ("con", "d10 & d12 vs 2d10"),
    ("d12 vs d8", "d12 vs d8"),                              # nothing to replace
    ("jc: Will q=expert", "jc: d10 q=expert"),
    ("Willpower vs d8", "Willpower vs d8"),                  # whole words only
])
def test_expansion_in_jadeclaw(typed: str, expanded: str) -> None:
    assert expand(typed, WU, "jadeclaw", ALIASES).text == expanded


def test_plus_stays_plus_outside_jadeclaw() -> None:
    assert expand("cofd: Dexterity + Stealth", WU, "jadeclaw", ALIASES).text == "cofd: 3 + d8"
    assert expand("Dexterity + 2", WU, "cofd", ALIASES).text == "3 + 2"


def test_expanded_rolls_equal_the_same_roll_typed_out() -> None:
    for typed in ("sneak", "Fast-Talk & Will vs 2d10", "Speed + Stealth +1b vs routine"):
        exp = expand(typed, WU, "jadeclaw", ALIASES)
        a = astragal.roll(exp.text, seed=5, default_system="jadeclaw")
        b = astragal.roll(exp.text.replace("jc:", "").strip(), seed=5, default_system="jadeclaw")
        assert a.to_json()["dice"] == b.to_json()["dice"] and a.outcome == b.outcome


@pytest.mark.parametrize("typed, bad", [
    ("Fast-Talk d7 vs 2d10", "d7"),
    ("Speed+Stealth vs d3", "d3"),
    ("Will & Fast-Talk vs wobbly", "wobbly"),
])
def test_errors_point_into_the_typed_text(typed: str, bad: str) -> None:
    exp = expand(typed, WU, "jadeclaw", ALIASES)
    with pytest.raises(astragal.NotationError) as info:
        astragal.parse(exp.text, default_system="jadeclaw")
    span = exp.typed_span(info.value.span)
    assert span is not None
    assert typed[span[0]:span[1]] == bad


def test_an_error_inside_a_stat_points_at_the_stat_name() -> None:
    sheet = check_sheet({"stats": {"Claws": "d7"}})
    exp = expand("d12 Claws vs d8", sheet, "jadeclaw", ALIASES)
    with pytest.raises(astragal.NotationError) as info:
        astragal.parse(exp.text, default_system="jadeclaw")
    assert exp.typed_span(info.value.span) == (4, 9)


@pytest.mark.parametrize("system, value, bad", [
    ("jadeclaw", "d7", "d7"),     # a stat is the game's dice: no hint to use another notation
    ("cofd", "4d6", "4d6"),       # CofD pools are counts of d10s
    ("d6system", "3d6", "3d6"),   # die codes are written 3D
    ("nosuch", "d8", None),       # a game no longer installed: the error has no place to point
])
def test_a_stat_the_rooms_game_cannot_roll_is_named_on_its_line(system: str, value: str,
                                                                 bad: str | None) -> None:
    from astragal.web.tabletools import check_sheet_rolls

    with pytest.raises(SheetError) as info:
        check_sheet_rolls(check_sheet({"stats": {"Speed": value}}), system, ALIASES)
    err = info.value
    assert err.message.startswith("character: Speed: ") and "dice:" not in err.message
    assert err.text == f"Speed = {value}" and err.span is not None
    if bad is not None:
        assert err.text[err.span[0]:err.span[1]] == bad
    else:  # the whole value, never the stat's name
        assert err.span == (8, len(err.text))


def test_an_error_inside_a_macro_points_at_the_whole_macro_name() -> None:
    sheet = check_sheet({"macros": {"oops": "jc: d7"}})
    exp = expand("oops", sheet, "jadeclaw", ALIASES)
    with pytest.raises(astragal.NotationError) as info:
        astragal.parse(exp.text)
    assert exp.typed_span(info.value.span) == (0, 4)


@pytest.mark.parametrize("data, expect", [
    ({"stats": {"d8": "d10"}}, "reads as dice notation"),
    ({"stats": {"L7": "d10"}}, "reads as dice notation"),
    ({"stats": {"vs": "d10"}}, "reads as dice notation"),
    ({"stats": {"dmg": "3"}}, "reads as dice notation"),  # a word inside Jadeclaw's notation
    ({"macros": {"d6": "d8"}}, "reads as dice notation"),
    ({"stats": {"7th": "d10"}}, "cannot be a name"),
    ({"stats": {"a b": "d10"}}, "cannot be a name"),
    ({"stats": {"<script>": "d10"}}, "cannot be a name"),
    ({"stats": {"Will": "d10", "will": "d8"}}, "named twice"),
    ({"stats": {"Will": ""}}, "empty"),
    ({"stats": {"Will": "d10\nd8"}}, "control character"),
    ({"stats": {"Will": "d" * 200}}, "the limit is 100"),
    ({"stats": {"Will": True}}, "text or a whole number"),
    ({"stats": {f"s{i}": "d4" for i in range(101)}}, "limit of 100"),
    ({"macros": {"m": "x" * 501}}, "the limit is 500"),
    ({"stats": ["Will"]}, "object of name"),
])
def test_bad_sheets_are_refused_with_the_reason(data: dict[str, Any], expect: str) -> None:
    with pytest.raises(SheetError, match=expect):
        check_sheet(data)


def test_sheet_round_trips_through_json() -> None:
    assert Sheet.from_json(WU.to_json()) == WU
    assert WU.to_json()["stats"]["Dexterity"] == "3"


NAMES = st.sampled_from(["Fast-Talk", "Will", "Speed", "Stealth", "sneak", "con", "d12", "vs",
                         "+", "&", "2d10", "routine", " ", "  ", "+1b", "Dexterity", "x"])


@settings(max_examples=200, deadline=None)
@given(st.lists(NAMES, max_size=8).map(" ".join), st.integers(0, 60), st.integers(0, 60))
def test_any_span_maps_back_inside_the_typed_text(typed: str, a: int, b: int) -> None:
    exp = expand(typed, WU, "jadeclaw", ALIASES)
    lo, hi = sorted((min(a, len(exp.text)), min(b, len(exp.text) + 1)))
    span = exp.typed_span((lo, max(hi, lo + 1)))
    assert span is not None
    assert 0 <= span[0] < span[1] <= len(typed) + 1


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="dDvs0123456789 &+-=:lLqbp", max_size=30))
def test_text_without_names_is_left_alone(typed: str) -> None:
    exp = expand(typed, WU, "jadeclaw", ALIASES)
    assert exp.text == typed and not exp.changed
