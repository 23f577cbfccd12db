"""Rendered output: golden files for text, Markdown and CSV; the SVG and PNG charts read back.

Run ``pytest --update-golden`` after an intended change of output, and review the diff.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import astragal
from astragal.cli import main as cli_main
from astragal.render.chart import svg_chart

GOLDEN = Path(__file__).parents[1] / "golden"

CASES = {
    "roll_contest.txt": ["roll", "jc: L7 -1p fav vs L5 q=expert:basic", "--faces", "1,5,3,6,4 / 8"],
    "roll_damage.txt": ["roll", "jc: dmg 2d12 d8 +1b slaying vs soak d10 d6 -1p",
                        "--faces", "4,10,9,2 / 6"],
    "odds_contest.txt": ["odds", "jc: d12 d8 vs 2d10"],
    "odds_damage.txt": ["odds", "jc: dmg 2d12 d8 vs soak d10 d6"],
    "odds_compare.txt": ["odds", "jc: dmg 2d12 vs soak d10", "jc: dmg 2d12 +1b vs soak d10"],
    "odds_compare.md": ["odds", "jc: L7 vs L5", "jc: L7 -1p vs L5", "--outcomes",
                        "--format", "markdown"],
    "odds_compare.csv": ["odds", "jc: dmg 2d12 vs soak d10", "jc: dmg 3d12 vs soak d10",
                         "--format", "csv"],
    "odds_at_least.csv": ["odds", "jc: dmg 2d12 vs soak d10", "jc: dmg 3d12 vs soak d10",
                          "--at-least", "--format", "csv"],
    "odds_at_most.md": ["odds", "jc: dmg 2d12 vs soak d10", "--at-most", "--format", "markdown"],
    "table_levels.txt": ["table", "jadeclaw", "levels"],
    "table_levels.md": ["table", "jadeclaw", "levels", "--format", "markdown"],
    "table_contest.csv": ["table", "jadeclaw", "contest", "--format", "csv"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_output(name: str, update_golden: bool) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli_main(CASES[name]) == 0
    path = GOLDEN / name
    if update_golden or not path.exists():
        path.write_text(out.getvalue())
        if not update_golden:
            pytest.fail(f"golden file {name} was missing and has been written; review it")
    assert out.getvalue() == path.read_text()


def test_svg_has_one_series_per_roll_and_true_bar_heights() -> None:
    texts = ["jc: dmg 2d12 vs soak d10", "jc: dmg 2d12 +1b vs soak d10", "jc: dmg 3d12 & d4"]
    odds = [astragal.odds(t) for t in texts]
    root = ET.fromstring(svg_chart(odds))
    ns = {"s": "http://www.w3.org/2000/svg"}
    names = [t.text for t in root.iterfind(".//s:text[@class='series-name']", ns)]
    assert names == texts
    bars = list(root.iterfind(".//s:rect[@class='bar']", ns))
    by_series: dict[int, dict[str, tuple[float, float]]] = {}
    for b in bars:
        by_series.setdefault(int(b.get("data-series", -1)), {})[b.get("data-value", "")] = (
            float(b.get("data-p", 0)), float(b.get("height", 0)))
    assert sorted(by_series) == [0, 1, 2]
    # every bar's height is its probability on one common scale
    points = [(p, h) for s in by_series.values() for p, h in s.values()]
    scale = max(h for _, h in points) / max(p for p, _ in points)
    assert all(abs(h - p * scale) <= 0.002 for p, h in points)  # heights are written to 1e-3
    for j, o in enumerate(odds):
        for value, p in o.distribution.items():
            assert by_series[j][str(value)][0] == pytest.approx(p, abs=1e-15)
    title = root.find("s:title", ns)
    assert title is not None and "3 rolls compared" in (title.text or "")
    assert any("probability" in (t.text or "") for t in root.iterfind(".//s:text", ns))


def test_rolls_of_different_quantities_compared_say_which_is_which() -> None:
    # a Jadeclaw margin beside a 2d6 total: one column of values, each roll names its own
    from astragal.render import chart

    mixed = [astragal.odds("jc: L7 vs L5"), astragal.odds("2d6")]
    header = chart.compare_rows(mixed)[0]
    assert header == ["value P(=)", "jc: L7 vs L5 (margin)", "2d6 (total)"]
    ns = {"s": "http://www.w3.org/2000/svg"}
    root = ET.fromstring(svg_chart(mixed))
    assert [t.text for t in root.iterfind(".//s:text[@class='series-name']", ns)] == header[1:]
    assert "(margin)" in chart.terminal_chart(mixed)
    # the same quantity: named once, in the corner
    same = chart.compare_rows([astragal.odds("2d6"), astragal.odds("3d6")])[0]
    assert same == ["total P(=)", "2d6", "3d6"]


def test_svg_escapes_what_users_typed() -> None:
    odds = astragal.odds("jc: d12 vs d12")
    fake = astragal.Odds(odds.system, "<script>alert(1)</script> & co", odds.outcomes,
                         odds.distribution)
    svg = svg_chart([fake])
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    ET.fromstring(svg)


def test_plot_writes_svg_and_png(tmp_path: Path) -> None:
    svg = tmp_path / "c.svg"
    with redirect_stdout(io.StringIO()):
        assert cli_main(["odds", "jc: d12 vs d10", "jc: d8 vs d10", "--plot", str(svg)]) == 0
    ET.parse(svg)
    pytest.importorskip("matplotlib")
    png = tmp_path / "c.png"
    with redirect_stdout(io.StringIO()):
        assert cli_main(["odds", "jc: d12 vs d10", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_plot_refuses_other_extensions(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["odds", "jc: d12", "--plot", "chart.gif"]) == 2
    assert ".svg or .png" in capsys.readouterr().err


def test_notebook_html() -> None:
    odds = astragal.odds("jc: L7 vs L5")
    html = odds._repr_html_()
    assert "<table>" in html and "<svg" in html and "Overwhelming Success" in html
    assert "<svg" in odds.distribution._repr_html_()
    roll = astragal.roll("jc: d12 vs d12", faces="3 / <".replace("<", "9"))
    assert "Failure" in roll._repr_html_()


def test_a_rolls_steps_render_as_its_transcript_and_html() -> None:
    """render/ puts a roll's steps into words: the game's transcript, and in any game one line
    per step (the notebook view lists them, with the dice and the rules)."""
    from astragal.render import cofd
    from astragal.render.steps import step_line

    roll = astragal.roll("cofd: 3 rote vs 2", faces="10,4,9,10,8,7 / 1,2")
    assert cofd.transcript(roll.steps) == roll.transcript
    lines = [step_line(s) for s in roll.steps]
    assert lines[2] == ("rolled actor: die #0 10 → 10 → 8 (3), die #1 4 | 7 (0), die #2 9 (1); "
                        "C2, again C5, re-roll C-X3")
    assert lines[-1] == "verdict of the roll: win from 4, 0 (C10)"
    html = roll._repr_html_()
    assert "<summary>steps</summary>" in html and "verdict of actor: success from 4 (C3)" in html
    # a game that records no steps (one in its own package may not) shows none
    bare = astragal.Roll("coin", "coin: 1", "1 heads", {"heads": 1}, (), ("Coin: heads",))
    assert "steps" not in bare._repr_html_() and "Coin: heads" in bare._repr_html_()


def test_terminal_chart_scales_bars() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        cli_main(["odds", "jc: d4 vs d4", "jc: d12 vs d4", "--outcomes"])
    lines = [line for line in out.getvalue().splitlines() if re.search(r"%\s+[█▓]", line)]
    assert lines, out.getvalue()


def test_a_wide_table_is_cut_into_blocks_for_a_terminal() -> None:
    from astragal.render import table_text

    rows = [["Pool", *[f"column {i}" for i in range(12)]],
            *[[str(n), *[f"{n * i}.0%" for i in range(12)]] for n in range(1, 4)]]
    whole = table_text(rows)
    assert len(whole.splitlines()) == 5 and max(map(len, whole.splitlines())) > 80
    cut = table_text(rows, 80)
    blocks = cut.split("\n\n")
    assert len(blocks) == 2 and all(len(line) <= 80 for line in cut.splitlines())
    assert all(b.splitlines()[2].startswith("1 ") for b in blocks)  # the first column repeats
    # every cell is in one block, once
    cells = [c for b in blocks for c in b.splitlines()[0].split("  ") if c.strip()]
    assert cells.count("Pool") == 2 and sorted(set(cells) - {"Pool"}) == sorted(rows[0][1:])


def test_table_data_carries_the_numbers_the_text_rounds() -> None:
    """``astragal table … --format csv/json`` gives each probability and mean unrounded: a mean
    of 0.004 hits printed as 0.00 is 0.004 in the data."""
    import json

    from astragal.render.chart import format_rows
    from astragal.systems.jadeclaw.tables import damage_table

    rows = damage_table(max_level=20)
    text_cell = rows[1][-1]  # L1 d4 against L20 soak
    assert text_cell == "0.00"
    data = json.loads(format_rows(rows, "json"))
    mean = data["rows"][0][-1]
    assert 0 < mean < 0.005
    assert format_rows(rows, "csv").splitlines()[1].split(",")[-1] == repr(mean)


def test_a_note_row_does_not_widen_the_first_column() -> None:
    from astragal.render import table_text

    rows = [["total", "3d6"], ["3", "0.463%"], ["(379 values at the ends, not shown)", ""],
            ["mean", "10.5"]]
    lines = table_text(rows).splitlines()
    assert lines[0] == "total     3d6" and lines[3] == "(379 values at the ends, not shown)"


def _naive_fill(s: list[tuple[float, float]], keys: list[float], view: str) -> list[float]:
    """The tail views' definition, key by key: a key the series lacks takes the tail of the
    nearest value it has on that side."""
    got = dict(s)
    out = []
    for k in keys:
        if k in got:
            out.append(got[k])
        elif view == "at_least":
            out.append(max((p for x, p in s if x >= k), default=0.0))
        elif view == "at_most":
            out.append(max((p for x, p in s if x <= k), default=0.0))
        else:
            out.append(0.0)
    return out


@pytest.mark.parametrize("view", ["eq", "at_least", "at_most"])
def test_rolls_compared_are_filled_at_each_others_values_as_their_views_read(view: str) -> None:
    from astragal.render import chart

    odds = [astragal.odds(t) for t in ("2d6", "d4+7", "3d4-2", "d{1,5,20}")]
    all_series = [chart.series(o, view) for o in odds]
    keys = chart._union(all_series)
    assert keys == sorted({k for s in all_series for k, _ in s})
    for s in all_series:
        assert chart._fill(s, keys, view) == _naive_fill(s, keys, view)
    exact = chart.compare_rows(odds, view, numeric=True, exact=True)
    floats = chart.compare_rows(odds, view, numeric=True)
    assert [r[0] for r in exact] == [r[0] for r in floats]
    for e, f in zip(exact[1:], floats[1:]):
        assert [float(x) for x in e[1:]] == pytest.approx(f[1:], abs=1e-12)


def test_long_laws_compared_are_tabled_whole() -> None:
    # every key of two laws with no value in common, in each view (the union and the tails were
    # quadratic in the values: d100000 took ~40 s as CSV, d600000 did not finish)
    from astragal.render import chart

    odds = [astragal.odds("d20000"), astragal.odds("d20000+20000")]
    for view in ("eq", "at_least", "at_most"):
        rows = chart.compare_rows(odds, view, numeric=True)
        assert len(rows) == 40001
        if view == "at_least":
            assert rows[1][1:] == pytest.approx([1.0, 1.0])
            assert rows[20001][1:] == pytest.approx([0.0, 1.0])
        if view == "at_most":
            assert rows[20000][1:] == pytest.approx([1.0, 0.0])
