"""Machine output without float noise, and charts that say outcomes in words (issue 40, item 6)."""

from __future__ import annotations

import itertools
import json
import re

import pytest

import astragal
from astragal.cli import main
from astragal.render.chart import svg_chart, terminal_chart


@pytest.mark.parametrize("game", ["d6system", "cofd", "jadeclaw", "d6skill", "attack"])
def test_game_tables_as_json_carry_no_float_noise(game: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["table", game, "--format", "json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    percents = [i for i, c in enumerate(data["columns"]) if "mean" not in c.lower()]
    for row in data["rows"]:
        for i in percents:
            if isinstance(row[i], float) and i:
                assert 0.0 <= row[i] <= 1.0, (row[0], data["columns"][i], row[i])
    # no number in the data ends in a run of noise digits (1.0000000000000002, 0.51 as
    # 0.5099999999999999)
    assert not re.search(r"\d\.\d*(0{9,}|9{9,})\d", out), out


def test_the_d6_system_s_sure_columns_are_exactly_one(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["table", "d6system", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    col = data["columns"].index("Very Easy 1")
    assert {row[col] for row in data["rows"]} == {1}


def test_print_of_odds_and_of_a_distribution_is_a_table_not_a_dump() -> None:
    odds = astragal.odds("2d6")
    assert str(odds).startswith("Exact odds: 2d6")
    assert "Odds(" not in str(odds) and "items_" not in str(odds.distribution)
    assert re.search(r"7\s+16\.667%", str(odds.distribution))


def test_charts_name_outcomes_in_words() -> None:
    odds = astragal.odds("jc: d8 vs d8")
    svg = svg_chart([odds], outcomes=True)
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', svg)
    assert "Overwhelming Failure" in ticks and "overwhelming_failure" not in ticks
    assert "Overwhelming Failure" in terminal_chart([odds], outcomes=True)


def _ticks(svg: str) -> list[tuple[float, str, bool]]:
    return [(float(x), name, "rotate" in attrs) for x, attrs, name in re.findall(
        r'<text class="tick" x="([\d.]+)"([^>]*)>([^<]*)</text>', svg)]


@pytest.mark.parametrize("text, outcomes", [("3d20", False), ("10d10", False),
                                            ("jc: d8 vs d8", True), ("cofd: 5 vs 4", True)])
def test_svg_axis_labels_do_not_overlap(text: str, outcomes: bool) -> None:
    ticks = _ticks(svg_chart([astragal.odds(text)], outcomes=outcomes))
    assert ticks
    for (x0, a, slanted), (x1, b, _) in itertools.pairwise(ticks):
        # upright labels of 12px sans-serif (at most 7px a character) do not touch; slanted
        # ones are one line apart
        room = 14 if slanted else 7 * (len(a) + len(b)) / 2
        assert x1 - x0 >= room, (a, b, x1 - x0)
