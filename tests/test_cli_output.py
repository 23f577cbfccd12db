"""Machine output and CLI truth (issue 16): numbers in CSV/JSON, exact fractions, --outcomes
without categories, file errors, --help for every subcommand, folded tails in charts/HTML."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import astragal
from astragal.cli import main


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "astragal.cli", *args], check=False,
                          capture_output=True,
                          text=True, timeout=120)


def test_odds_csv_carries_numbers_with_the_header_as_header(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["odds", "2d6", "2d6+1", "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["total P(=)", "2d6", "2d6+1"]
    assert rows[1] == ["2", repr(1 / 36), "0.0"]
    assert all(r[0] != "mean" for r in rows)
    assert sum(float(r[1]) for r in rows[1:]) == pytest.approx(1)


def test_exact_fractions_in_csv_json_and_the_api(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["odds", "2d20kh1+5 >= 15", "--exact", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcomes"] == {"success": "319/400", "failure": "81/400"}
    assert main(["odds", "4d6kh3", "--exact", "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[1] == ["3", "1/1296"] and rows[-1] == ["18", "7/432"]
    law = dict(astragal.odds("3d6").distribution.exact())
    assert law[10] == Fraction(27, 216) and sum(law.values()) == 1
    assert dict(astragal.odds("d20r1").distribution.exact())[2] == Fraction(1, 19)
    assert dict(astragal.odds("d6ro1").distribution.exact())[1] == Fraction(1, 36)
    with pytest.raises(ValueError):
        astragal.odds("3d6!").distribution.exact()  # infinite: no exact form
    assert main(["odds", "3d6!", "--exact"]) == 2


def test_exact_odds_of_a_contest_give_its_outcomes_in_words_and_its_margins(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A GM asks `--exact` for a contest: the outcomes (as without --exact) come first, named
    in the game's words, then the margins; CSV keeps the keys as data."""
    assert main(["odds", "jc: d6 vs d6", "--exact"]) == 0
    out = capsys.readouterr().out
    outcomes, margins = out.split("\n\n")
    said = {line.rsplit(None, 1)[0].strip(): line.rsplit(None, 1)[1]
            for line in outcomes.splitlines()[2:]}
    assert said == {"Botch": "5/36", "Overwhelming Failure": "0", "Failure": "5/18",
                    "Tie": "1/6", "Success": "7/18", "Overwhelming Success": "1/36"}
    assert "overwhelming" not in outcomes
    assert margins.startswith("margin P(=)") and "-5" in margins
    assert main(["odds", "jc: d6 vs d6", "--exact", "--outcomes", "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert ["overwhelming_success", "1/36"] in rows
    assert main(["odds", "2d6", "--exact"]) == 0  # no categories: the totals alone
    assert capsys.readouterr().out.startswith("total P(=)")


def test_outcomes_without_categories_is_an_error() -> None:
    p = run("odds", "2d6", "--outcomes")
    assert p.returncode == 2 and "no outcome categories" in p.stderr and p.stdout == ""
    assert run("odds", "2d6 >= 8", "--outcomes").returncode == 0


@pytest.mark.parametrize("path", ["/nonexistent/x.png", "/nonexistent/x.svg"])
def test_plot_file_errors_exit_2(path: str) -> None:
    p = run("odds", "d6!", "--plot", path)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "cannot write" in p.stderr


def test_charts_and_html_fold_far_tails(tmp_path: Path) -> None:
    from astragal.render.chart import svg_chart

    o = astragal.odds("d6!")
    assert len(o.distribution) > 60
    svg = svg_chart([o])
    bars = svg.count('class="bar"')
    assert 6 <= bars <= 30
    html = o._repr_html_()
    assert html.count("<tr>") <= 35 and "values at the ends" in html
    assert astragal.odds("2d6")._repr_html_().count("<tr>") == 13  # short laws: every value


def test_roll_html_shows_dice_and_verdict() -> None:
    html = astragal.roll("4d6kh3+2", faces="6,4,1,3")._repr_html_()
    assert "Total: 15" in html and "<td>d6</td>" in html
    assert html.count("<tr") == 5 and "line-through" in html  # the dropped 1


@pytest.mark.parametrize("args,words", [
    (("fight", "attack", "--help"), "attack A B"),
    (("table", "--help"), "jadeclaw: levels"),
    (("demo", "--help"), "the roll to show"),
    (("serve", "--help"), "port"),
    (("odds", "--help"), "--exact"),
])
def test_every_subcommand_describes_its_arguments(args: tuple[str, ...], words: str) -> None:
    p = run(*args)
    assert p.returncode == 0 and words in p.stdout, p.stderr


def test_verify_log_missing_file_and_unknown_system() -> None:
    p = run("verify-log", "/nonexistent/log.json")
    assert p.returncode == 2 and "missing" in p.stderr
    q = run("roll", "d6", "--system", "nosuch")
    assert q.returncode == 2 and "--system nosuch" in q.stderr and "Traceback" not in q.stderr


def test_table_json_has_columns_and_numbers() -> None:
    data = json.loads(run("table", "jadeclaw", "levels", "--json").stdout)
    assert data["table"] == "levels" and isinstance(data["columns"], list)
    assert not any(row == data["columns"] for row in data["rows"])


def test_a_fighter_who_is_down_gets_a_warning(tmp_path: Path) -> None:
    f = str(tmp_path / "fight.json")
    for words in (["new"], ["add", "Wolf", "atk=4", "wpn=3", "armor=1", "hp=1"],
                  ["add", "Bear", "atk=5", "wpn=4", "armor=2"], ["set", "Wolf", "damage=3"]):
        assert run("fight", "--file", f, *words).returncode == 0
    p = run("fight", "--file", f, "attack", "Wolf", "Bear", "--seed", "1")
    assert p.returncode == 0 and "warning: the attacker Wolf is down" in p.stdout


def test_a_missing_extra_names_the_package_not_a_checkout(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the plot extra were missing
    assert main(["odds", "2d6", "--plot", str(tmp_path / "chart.png")]) == 2
    err = capsys.readouterr().err
    assert "pip install 'astragal[plot]'" in err and "'.[plot]'" not in err
