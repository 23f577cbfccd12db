"""The command line as a user meets it: a real process, exit codes, stdout and stderr."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from astragal._errors import WINDOW


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "astragal.cli", *args], check=False,
                          capture_output=True,
                          text=True, timeout=120)


def test_roll_with_faces_prints_the_transcript() -> None:
    p = run("roll", "jc: d10 d4 vs routine", "--faces", "7,2 / 3,4")
    assert p.returncode == 0, p.stderr
    assert "d10→7" in p.stdout and "7 vs 4: margin +3 → Success" in p.stdout


def test_roll_json_shape() -> None:
    p = run("roll", "jc: dmg d8 d6 d4 vs soak d8 d6", "--faces", "7,6,2 / 8,3", "--json")
    data = json.loads(p.stdout)
    assert set(data) == {"system", "input", "outcome", "result", "dice", "transcript", "steps"}
    assert data["result"]["hits"] == 2
    pairs = [s for s in data["steps"] if s["step"] == "pair"]
    assert [(p["face"], p["other_face"], p["value"]) for p in pairs] == [(7, 8, 0), (6, 3, 1),
                                                                          (2, 1, 1)]


def test_odds_json_shape() -> None:
    data = json.loads(run("odds", "jc: d12 d8 vs 2d10", "--json").stdout)
    assert {"system", "input", "outcomes", "distribution", "mean"} <= set(data)
    assert list(data["outcomes"]) == ["botch", "overwhelming_failure", "failure", "tie",
                                      "success", "overwhelming_success"]
    assert sum(data["outcomes"].values()) == pytest.approx(1.0, abs=1e-12)


def test_bad_input_exits_2_with_a_caret_on_stderr() -> None:
    p = run("roll", "jc: d12 d7 vs 2d10")
    assert p.returncode == 2 and p.stdout == ""
    lines = p.stderr.splitlines()
    assert "Traceback" not in p.stderr
    assert lines[1] == "jc: d12 d7 vs 2d10" and lines[2] == "        ^^"
    assert "d7 is not a Jadeclaw die" in lines[3]


def test_a_mistake_in_a_long_line_is_shown_in_a_window_around_it() -> None:
    text = "d6+" * 100 + "d6q" + "+d6" * 100  # the mistake, 'q', at 302 of 603 characters
    p = run("roll", text)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    _, line, caret, message = p.stderr.splitlines()
    assert len(line) <= WINDOW + 2 and line[0] == line[-1] == "…"
    assert line[caret.index("^")] == "q" and caret.strip() == "^"
    assert "'q'" in message
    # over the length limit: the first 1,000 characters are kept, the caret under the last
    p = run("roll", "d6+" * 5000)
    _, line, caret, message = p.stderr.splitlines()
    assert len(line) <= WINDOW + 2 and line[0] == "…" and caret.index("^") == len(line) - 1
    assert "15000 characters long" in message


@pytest.mark.parametrize("args", [
    ("roll", "jc: d12", "--faces", "13"),
    ("odds", "jc: dmg 60d12 vs soak 60d12"),
    ("table", "jadeclaw", "nope"),
    ("roll", "jc: d12", "-o", "nonsense"),
])
def test_other_errors_exit_2_without_traceback(args: tuple[str, ...]) -> None:
    p = run(*args)
    assert p.returncode == 2 and "Traceback" not in p.stderr and p.stderr.strip()


@pytest.mark.parametrize("text", ["1000000d6", "1000000d(6)"])
def test_a_term_of_more_dice_than_the_notation_reads_says_both_limits(text: str) -> None:
    p = run("roll", text)
    assert p.returncode == 2
    assert p.stderr.splitlines()[-1] == ("1,000,000 dice in one term is more than the notation "
                                         "reads (at most 999,999; a roll rolls at most 500)")


def test_two_views_of_the_values_at_once_are_refused() -> None:
    p = run("odds", "1d6", "--at-least", "--at-most")
    assert p.returncode == 2 and p.stdout == ""
    assert "--at-most: not allowed with argument --at-least" in p.stderr


def test_tables() -> None:
    p = run("table", "jadeclaw", "levels")
    lines = p.stdout.splitlines()
    assert lines[0].split()[:2] == ["Level", "Dice"]
    assert lines[9].split()[0] == "7" and "2d12 & d4" in lines[9]  # L7 +2 → 2d12&d4
    c = run("table", "jadeclaw", "contest", "--json")
    data = json.loads(c.stdout)
    assert data["columns"][1] == "Trivial" and len(data["rows"]) == 20
    assert all(isinstance(p, float) and 0 <= p <= 1 for row in data["rows"] for p in row[1:])


def test_demo_rolls_and_prints_odds() -> None:
    p = run("demo", "--seed", "1")
    assert p.returncode == 0 and "Exact odds" in p.stdout and "Score" in p.stdout


def test_the_fight_file_may_follow_the_command(tmp_path: object) -> None:
    f = str(tmp_path) + "/arena.json"  # type: ignore[operator]
    assert run("fight", "new", "--file", f).returncode == 0
    assert run("fight", "add", "Wu", "atk=4", "wpn=3", f"--file={f}").returncode == 0
    assert run("fight", "--file", f, "add", "Orc", "atk=3", "wpn=2").returncode == 0
    shown = run("fight", "show", "--file", f)
    assert shown.returncode == 0 and "Wu" in shown.stdout and "Orc" in shown.stdout
    twice = run("fight", "--file", f, "show", "--file", f + ".other")
    assert twice.returncode == 2 and "given twice" in twice.stderr
    assert run("fight", "show", "--file").returncode == 2


def test_an_unknown_option_is_named_with_its_commands_usage() -> None:
    p = run("roll", "4d6", "--bogus")
    assert p.returncode == 2
    assert "usage: astragal roll" in p.stderr
    assert "astragal roll: error: unrecognized arguments: --bogus" in p.stderr
    assert run("roll", "-d6", "--seed", "1").returncode == 0  # notation that starts with '-'


def test_python_dash_m_astragal_runs_the_command_line() -> None:
    out = subprocess.run([sys.executable, "-m", "astragal", "roll", "1d20+5", "--faces", "13"],
                         check=False, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "18" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "astragal", "odds", "d{0,1000000000000}"],
                         check=False, capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "limit" in bad.stderr
