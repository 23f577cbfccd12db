"""Digits that are not ASCII digits, typed where a number is read: never a traceback, never read
as a number in one game and refused in another.

``str.isdigit`` and an unflagged regex ``\\d`` take ``'²'`` and ``'①'`` (``int()`` then raises
ValueError: a traceback in the CLI) and other scripts' digits (``'٣'``, ``'３'``, which ``int()``
reads). Each game's notation, the scripted faces, the seeds and counters of the fight tracker,
the table's options and the web table's initiative are tried with each of them wherever the
worked rolls of ``corpus.SEEDS`` hold a number.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import astragal
from astragal import AstragalError, FacesError
from astragal.cli import main as cli_main
from astragal.web.tabletools import parse_command, turns_command

from . import corpus

OTHER_DIGITS = ["²", "①", "٣", "３"]  # superscript, circled, Arabic-Indic, fullwidth
_NUMBER = re.compile(r"[0-9]+")


def _variants() -> list[str]:
    """Each seed roll with one of its numbers written in each of ``OTHER_DIGITS``, and the
    Quality written as a Skill Level (``q=7``), which held the first of these tracebacks."""
    out = ["jc: d12 q=²", "jc: d12 q=٣ vs d10", "jc: L7 vs L8 q=①:expert"]
    for seeds in corpus.SEEDS.values():
        for text in seeds:
            start = text.index(":") + 1
            for m in _NUMBER.finditer(text, start):
                out += [text[:m.start()] + d + text[m.end():] for d in OTHER_DIGITS]
    return out


VARIANTS = _variants()


def test_every_game_refuses_other_digits_with_its_own_error() -> None:
    read = []
    for text in VARIANTS:
        try:
            parsed = astragal.parse(text)
        except AstragalError:
            continue
        # read at all, the digit is kept as text (a label, a comment), never made a number
        shown = str(parsed)
        assert any(d in shown for d in OTHER_DIGITS), (text, shown)
        astragal.roll(text, seed=1)
        read.append(text)
    assert len(read) < len(VARIANTS) // 10, read  # nearly all are refused, not skipped past


@pytest.mark.parametrize("digit", OTHER_DIGITS)
def test_scripted_faces_refuse_other_digits(digit: str) -> None:
    with pytest.raises(FacesError, match=f"'{digit}' is not a face"):
        astragal.roll("2d6", faces=f"3,{digit}")


@pytest.mark.parametrize("digit", OTHER_DIGITS)
def test_the_web_tables_initiative_refuses_other_digits(digit: str) -> None:
    with pytest.raises(astragal.InputError, match="initiative is a whole number"):
        turns_command(None, parse_command("turns", f"add Wu 1{digit}"))


@pytest.mark.parametrize("digit", ["²", "٣"])
@pytest.mark.parametrize("command", [
    ["set", "Anna", "armor=D"], ["heal", "Anna", "D"], ["attack", "Anna", "Bram", "luck=D"],
    ["attack", "Anna", "Bram", "--seed", "D"], ["attack", "Anna", "Bram", "--faces", "D,6,2"],
    ["option", "damage_by_column=D/0/0/0/9/0/0"],
    ["option", "weapon_class_crit_dice=C:D"],
])
def test_the_fight_tracker_refuses_other_digits(command: list[str], digit: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "fight.json")
    for setup in (["new"], ["add", "Anna", "atk=4", "wpn=3", "heal=3"],
                  ["add", "Bram", "atk=5", "wpn=5", "armor=3"]):
        assert cli_main(["fight", "--file", path, *setup]) == 0
    before = Path(path).read_bytes()
    capsys.readouterr()
    code = cli_main(["fight", "--file", path, *[w.replace("D", digit) for w in command]])
    said = capsys.readouterr().err
    assert code == 2 and digit in said and "Traceback" not in said
    assert Path(path).read_bytes() == before
