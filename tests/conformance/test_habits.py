"""What players of Roll20, Foundry, Avrae, Dice Maiden, Sidekick and AnyDice type (issue 40,
``habits.tsv``): each form is read as its tool reads it, or refused with a message that names
the reading. The law of each line is a brute-force enumeration (``brute.py``), written from the
tools' descriptions, never astragal's own odds.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

import astragal
from tests.conformance.brute import law_of

HABITS = Path(__file__).with_name("habits.tsv")


def _rows() -> list[tuple[str, str, str, str]]:
    rows = []
    for line in HABITS.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            tool, text, expect, source = line.split("\t")
            rows.append((tool, text, expect, source))
    return rows


ROWS = _rows()
READ = [r for r in ROWS if not r[2].startswith("refused: ")]
REFUSED = [r for r in ROWS if r[2].startswith("refused: ")]


def test_the_corpus_covers_each_tool() -> None:
    tools = {r[0] for r in ROWS}
    assert tools == {"roll20", "foundry", "avrae", "maiden", "sidekick", "anydice", "words"}
    assert len({r[1] for r in ROWS}) == len(ROWS)
    assert all(r[3] for r in ROWS)


@pytest.mark.parametrize("tool,text,expect,source", READ, ids=[r[1] for r in READ])
def test_read_as_its_tool_reads_it(tool: str, text: str, expect: str, source: str) -> None:
    law = {k: p for k, p in law_of(expect).items() if p}
    odds = astragal.odds(text, default_system="dice")
    got = {Fraction(k): p for k, p in odds.distribution.as_dict().items() if p > 1e-14}
    assert sum(law.values()) == 1 or "again=" in expect
    assert set(got) <= set(law), f"{text}: values no enumeration gives: {set(got) - set(law)}"
    for value, chance in law.items():
        assert abs(got.get(value, 0.0) - float(chance)) < 1e-9, (text, value)
    r = astragal.roll(text, seed=len(text), default_system="dice")
    totals = r.result["totals"] if "totals" in r.result else [r.result["total"]]
    assert all(Fraction(t) in law for t in totals)


@pytest.mark.parametrize("tool,text,expect,source", REFUSED, ids=[r[1] for r in REFUSED])
def test_refused_with_the_reading(tool: str, text: str, expect: str, source: str) -> None:
    words = expect.removeprefix("refused: ")
    with pytest.raises(astragal.InputError) as caught:
        astragal.odds(text, default_system="dice")
    assert words in str(caught.value), str(caught.value)
    with pytest.raises(astragal.InputError):
        astragal.roll(text, seed=1, default_system="dice")


def test_the_enumerator_tells_readings_apart() -> None:
    """The laws can fail: Roll20's >3 and Avrae's k3 are not the other tools' readings."""
    assert law_of("count(pool(8, d(6)), ge(3))") != law_of("count(pool(8, d(6)), ge(4))")
    assert law_of("total(pool(4, d(6)), keep=eq(3))") != law_of("total(pool(4, d(6)), kh=3)")
    assert law_of("total(pool(3, d(6, once=6)))") != law_of("sum_of(3, d(6, again=6))")


def test_an_explicit_dialect_wins_over_the_command_word() -> None:
    law = law_of("count(pool(8, d(6)), ge(4))")
    odds = astragal.odds("/r 8d6>3", default_system="dice", options={"dialect": "foundry"})
    got = odds.distribution.as_dict()
    assert all(abs(got.get(k, 0.0) - float(p)) < 1e-12 for k, p in law.items())
