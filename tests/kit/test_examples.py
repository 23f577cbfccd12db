"""The example games: each equals its icepool twin and an enumeration of every face, rolls like
its odds, works from the command line in a fresh process, and is short."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import tokenize
from fractions import Fraction
from pathlib import Path

import pytest

import astragal
from astragal.testing import check_enumeration, check_perturbed, check_sampler

from .examples import NAMES, ROOT, game, load

# each case: the example, its text, and its icepool twin's arguments
CASES = [
    ("pbta", "pbta: +1", (1,)), ("pbta", "move: -2", (-2,)), ("pbta", "pbta:", ()),
    ("fate", "fate: +2 vs +3", (2, 3)), ("fate", "fate: +4", (4,)),
    ("coc", "coc: 45", (45,)), ("coc", "coc: 60 +1", (60, 1)), ("coc", "cthulhu: 30 -2", (30, -2)),
    ("coc", "coc: 70 -1", (70, -1)),
    ("savage", "swade: d4 extra", (4, 0, True)), ("savage", "savage: d8 +1", (8, 1)),
    ("savage", "swade: d4", (4,)),
    ("dragonage", "age: +2 vs 11", (2, 11)), ("dragonage", "dragonage: +0 vs 16", (0, 16)),
    ("cortex", "cortex: d8 d6 d4 vs 7", ((8, 6, 4), 7)), ("cortex", "cortex: 2d4 vs 3", ((4, 4), 3)),
    ("onering", "tor: 2 vs 14", (2, 14)), ("onering", "onering: 2 vs 12 weary miserable",
                                            (2, 12, True, True)),
]
TWIN = {"savage": "savage", "dragonage": "dragonage", "onering": "onering"}


@pytest.mark.parametrize("name, text, args", CASES)
def test_odds_equal_the_icepool_twin(name: str, text: str, args: tuple) -> None:
    game(name)
    twin = getattr(load(name, ROOT / "icepool"), name)(*args)
    theirs = {k: twin.probability(k) for k in twin.outcomes()}
    ours = astragal.odds(text).outcomes
    infinite = bool(ours.truncated) or name == "savage"
    for outcome in set(theirs) | set(ours.outcomes()):
        want = theirs.get(outcome, Fraction(0))
        if infinite:  # icepool cuts explosions at its depth, astragal far deeper
            assert abs(ours[outcome] - want) < 1e-9, (text, outcome)
        else:
            assert dict(ours.exact()).get(outcome, Fraction(0)) == want, (text, outcome)


@pytest.mark.parametrize("name, text, args", CASES)
def test_odds_equal_every_face_enumerated(name: str, text: str, args: tuple) -> None:
    check_enumeration(game(name).game, text, depth=10)


@pytest.mark.parametrize("name, text", [(n, t) for n, t, _ in CASES[::2]])
def test_roller_follows_its_odds(name: str, text: str) -> None:
    game(name)
    check_sampler(text, rolls=3000)


@pytest.mark.parametrize("name, text", [(n, t) for n, t, _ in CASES[::3]])
def test_a_perturbed_verdict_changes_odds_roll_and_words(name: str, text: str) -> None:
    check_perturbed(game(name).game, text)


def code_lines(path: Path) -> int:
    """Lines holding code: no blank, comment or docstring lines (a docstring is a string that
    is a whole statement)."""
    source = path.read_text()
    docs: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(
                node.value.value, str):
            docs.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    lines: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}
    for tok in tokenize.tokenize(io.BytesIO(source.encode()).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines - docs)


@pytest.mark.parametrize("name", NAMES)
def test_each_example_is_at_most_half_again_its_icepool_twin(name: str) -> None:
    ours, theirs = code_lines(ROOT / f"{name}.py"), code_lines(ROOT / "icepool" / f"{name}.py")
    assert ours <= 1.5 * theirs, (name, ours, theirs)


def test_code_lines_skip_docstrings_comments_and_blanks(tmp_path: Path) -> None:
    f = tmp_path / "g.py"
    f.write_text('"""doc\nmore"""\n\n# note\nx = (1,\n     2)  # two lines\n')
    assert code_lines(f) == 2


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASTRAGAL_GAMES": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "astragal", *args], check=False,
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("name", NAMES)
def test_each_example_rolls_from_the_command_line_by_its_aliases(name: str) -> None:
    g = load(name).game
    for prefix in (g.name, *g.aliases):
        text = f"{prefix}: {g.examples[0]}"
        out = _cli("roll", text, "--seed", "7")
        assert out.returncode == 0, out.stderr
        assert any(o in out.stdout for o in g.order or ("",)), out.stdout
    odds = _cli("odds", f"{g.name}: {g.examples[-1]}")
    assert odds.returncode == 0 and "Exact odds" in odds.stdout, odds.stderr
    rules = _cli("rules", g.name)
    assert rules.returncode == 0 and g._verdict_rule in rules.stdout, rules.stdout + rules.stderr


def test_exact_odds_print_fractions_from_the_command_line() -> None:
    out = _cli("odds", "pbta: +1", "--exact")
    assert out.returncode == 0, out.stderr
    assert "1/36" in out.stdout and "5/36" in out.stdout


def test_symbol_faces_carry_their_labels_and_tones_in_the_record() -> None:
    game("onering")
    roll = astragal.roll("tor: 1 vs 14 miserable", faces="11,6")
    feat, success = roll.dice
    assert (feat.label, feat.tone) == ("Eye", "bad")
    assert success.tone == "good" and roll.outcome == "failure"
    assert roll.to_json()["dice"][0]["label"] == "Eye"
