"""Luck: a roll placed in its own exact odds, and a session's rolls tested against fair dice.

Stated rates (docs/trust.md): a session is flagged when the Anderson–Darling test of its
randomised percentiles gives p < 1e-3, so fair dice are flagged in 0.1% of sessions; a d20 that
rolls 1 8% of the time (not 5%) is flagged in at least 90% of sessions of 5,000 rolls, and a
Jadeclaw d8 & d6 pool whose 1s are re-rolled in at least 90% of sessions of 800 rolls.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

import astragal
from astragal import SeededSource, Source
from astragal.cli import main as cli
from astragal.dice import Roll
from astragal.luck import FLAG_BELOW, anderson_darling, luck, verdict


def test_a_roll_is_placed_in_its_own_odds() -> None:
    r = astragal.roll("4d6kh3", faces="6,6,5,1")  # 17
    o = astragal.odds("4d6kh3")
    placed = luck(r, o)
    assert placed is not None and placed.value == 17
    law = o.distribution.as_dict()
    assert placed.worse == pytest.approx(math.fsum(p for x, p in law.items() if x < 17))
    assert placed.same == pytest.approx(law[17])
    assert placed.percentile == pytest.approx(placed.worse + law[17] / 2)
    assert "better than 9" in placed.words()  # 17 or 18 on 4d6kh3: the top 6.3%


def test_fewer_rolls_to_a_target_is_the_luckier_extended_action() -> None:
    o = astragal.odds("cofd: 3 target 3")
    quick = luck(astragal.roll("cofd: 3 target 3", faces="8,8,8"), o)  # done in one roll
    assert quick is not None and quick.value == 1 and quick.worse > 0.5


def test_a_roll_without_an_ordered_value_has_no_luck() -> None:
    assert luck(astragal.roll("jc: d8 vs d8 q=expert:basic", faces="3 / 3"),
                astragal.odds("jc: d8 vs d8 q=expert:basic")) is not None
    r = Roll("dice", "x", "ok", {"total": 3}, (), ())
    assert luck(r, astragal.odds("d20 >= 30")) is None  # 3 is not a value of that law


def test_the_cli_says_where_a_roll_fell(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["roll", "2d6", "--faces", "6,6", "--luck"]) == 0
    assert "Luck: better than 99% of rolls like it" in capsys.readouterr().out
    assert cli(["roll", "2d6", "--faces", "1,1", "--luck", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["luck"]["worse"] == 0.0 and data["luck"]["same"] == pytest.approx(1 / 36)


def test_anderson_darling_against_scipy() -> None:
    from scipy.stats import (
        anderson_ksamp,  # noqa: F401 - scipy is the test extra's peer
        kstest,
    )

    rng = random.Random(3)
    us = [rng.random() for _ in range(500)]
    a2, p = anderson_darling(us)
    assert 0.0 < a2 < 5.0 and 0.001 < p <= 1.0
    skewed = [u ** 1.3 for u in us]
    assert anderson_darling(skewed)[1] < 1e-3 < kstest(us, "uniform").pvalue


def _fair_d20_sessions(sessions: int, rolls: int) -> int:
    o = astragal.odds("d20")
    flagged = 0
    for s in range(sessions):
        src = SeededSource(10_000 + s)
        lucks = [luck(astragal.roll("d20", source=src), o) for _ in range(rolls)]
        flagged += verdict([x for x in lucks if x is not None], seed=s).flagged
    return flagged


def test_fair_dice_are_flagged_no_more_than_the_stated_rate() -> None:
    # 200 sessions at a 1e-3 false-alarm rate: 0.2 expected; 6 or more has probability < 1e-7
    assert _fair_d20_sessions(200, 200) <= 5


def test_a_d20_that_rolls_1_too_often_is_flagged() -> None:
    o = astragal.odds("d20")
    by_face = {f: luck(Roll("dice", "d20", "", {"total": f}, (), ()), o) for f in range(1, 21)}
    rng = random.Random(20)
    flagged = 0
    for s in range(20):
        lucks = [by_face[1] if rng.random() < 0.08 else by_face[rng.randint(2, 20)]
                 for _ in range(5000)]
        flagged += verdict([x for x in lucks if x is not None], seed=s).flagged
    assert flagged >= 18  # at least 90% of sessions of 5,000 rolls


class NoOnes(Source):
    """A loaded source: every 1 is rolled again."""

    def __init__(self, seed: int) -> None:
        self.inner = SeededSource(seed)

    def face(self, size: int, stream: int = 0) -> int:
        f = self.inner.face(size, stream)
        while f == 1:
            f = self.inner.face(size, stream)
        return f


def test_a_jadeclaw_pool_whose_ones_are_rerolled_is_flagged() -> None:
    o = astragal.odds("jc: d8 d6")
    flagged = 0
    for s in range(20):
        src = NoOnes(7_000 + s)
        lucks = [luck(astragal.roll("jc: d8 d6", source=src), o) for _ in range(800)]
        flagged += verdict([x for x in lucks if x is not None], seed=s).flagged
    assert flagged >= 18  # at least 90% of sessions of 800 rolls


def _export(tmp_path: Path) -> Path:
    from astragal.web.caps import LOOSE
    from astragal.web.room import Table
    from astragal.web.store import SQLiteStore

    table = Table(SQLiteStore(tmp_path / "t.db"), roll_rate=(1000.0, 1000), caps=LOOSE)
    made = table.create_room("A table", "dice", "Mei")
    gm = table.member(made["room"]["id"], made["key"])
    wu = table.member(made["room"]["id"], table.join(made["room"]["id"], "Wu")["key"])
    for n in range(30):
        table.roll(gm if n % 2 else wu, ["d20", "3d6", "4d6kh3", "d20 >= 12"][n % 4],
                   "gm" if n == 5 else "public")
    table.roll(gm, "6x 4d6kh3")
    path = tmp_path / "export.json"
    path.write_text(json.dumps(table.export(wu)), encoding="utf-8")
    return path


def test_the_luck_report_of_an_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _export(tmp_path)
    svg = tmp_path / "luck.svg"
    assert cli(["luck", str(path), "--json", "--plot", str(svg)]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert data["session"]["rolls"] == 29  # 31 rolls, one hidden from Wu, one of 6 at once
    assert data["members"]["Wu"]["rolls"] == 15 and data["members"]["Mei"]["rolls"] == 14
    assert sum(data["session"]["histogram"]) == 29 and data["left_out"] == 1
    assert 0.0 <= data["session"]["p_value"] <= 1.0 and data["flag_below"] == FLAG_BELOW
    assert svg.read_text().startswith("<svg") and "Wu" in svg.read_text()
    assert cli(["luck", str(path), "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "Wu" in out and "mean percentile" in out


def test_the_luck_report_spends_on_each_roll_what_the_table_would(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 38, item 12: ``astragal luck`` computed the odds of any roll of an export (about a
    CPU-second for each distinct heavy roll, uncapped): now within the web table's bounds, so a
    roll whose odds the table's Luck panel refuses is left out here too."""
    from astragal.web.caps import LOOSE
    from astragal.web.room import Table
    from astragal.web.store import SQLiteStore

    table = Table(SQLiteStore(tmp_path / "t.db"), roll_rate=(1000.0, 1000), caps=LOOSE)
    made = table.create_room("A table", "dice", "Mei")
    gm = table.member(made["room"]["id"], made["key"])
    heavy = "60d20!kh30"  # its odds: past the table's work limit, within the engine's default
    for text in ("d20", heavy):
        table.roll(gm, text)
    panel = table.luck(gm)
    assert sorted(panel["entries"]) == ["1", "2"] and "none" in panel["entries"]["2"]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(table.export(gm)), encoding="utf-8")
    assert cli(["luck", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["session"]["rolls"] == 1 and data["left_out"] == 1


@pytest.mark.parametrize("content, expect", [
    ("{not json", "cannot read"), ('{"format": "x"}', "not an astragal log export"),
])
def test_a_bad_export_is_a_clear_error(tmp_path: Path, content: str, expect: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    assert cli(["luck", str(bad)]) == 2
    assert expect in capsys.readouterr().err
    assert cli(["luck", str(tmp_path / "missing.json")]) == 2
