"""A game in its own pip package is found through the ``astragal.systems`` entry-point group."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest

import astragal
from astragal import systems


@pytest.fixture
def installed_coin_game(tmp_path: Path) -> Iterator[None]:
    """Install the example game's metadata as pip would: a dist-info with its entry point."""
    dist = tmp_path / "coin_game-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: coin-game\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[astragal.systems]\ncoin = tests.plugin_game:game\n")
    sys.path.insert(0, str(tmp_path))
    saved = (dict(systems._MODULES), dict(systems._ALIASES), dict(systems._LOADED),
             systems._DISCOVERED, dict(systems._ENTRY))
    systems._DISCOVERED = False
    try:
        yield
    finally:
        sys.path.remove(str(tmp_path))
        systems._MODULES.clear()
        systems._MODULES.update(saved[0])
        systems._ALIASES.clear()
        systems._ALIASES.update(saved[1])
        systems._LOADED.clear()
        systems._LOADED.update(saved[2])
        systems._DISCOVERED = saved[3]
        systems._ENTRY.clear()
        systems._ENTRY.update(saved[4])


def test_an_installed_game_rolls_and_computes_odds(installed_coin_game: None) -> None:
    assert "coin" in astragal.system_names()
    r = astragal.roll("coin: 3", faces="2,1,2")
    assert r.result["value"] == 2
    o = astragal.odds("coin: 3")
    assert [str(p) for _, p in o.distribution.exact()] == ["1/8", "3/8", "3/8", "1/8"]
    # its switch is declared once and read everywhere
    assert astragal.roll("coin: 3", faces="2,1,2", options={"heads_on": 1}).result[
        "value"] == 1
    with pytest.raises(astragal.OptionError, match="heads_on takes 1 to 2"):
        astragal.odds("coin: 3", options={"heads_on": 3})
    # its alias and rulebook come with it
    assert astragal.roll("coins: 2 vs 1", faces="2,2 / 1").outcome == "win"
    assert [r.id for r in astragal.rulebook("coin")] == ["K1", "K2"]


def test_a_contest_of_the_installed_game_rolls_ties_again_in_roll_and_odds(
        installed_coin_game: None) -> None:
    # 1 head each is a tie, flipped again: then 0 heads against 1
    r = astragal.roll("coin: 1 vs 1", faces="2,1 / 2,2")
    assert r.outcome == "lose" and r.result["value"] == [0, 1]
    assert any("rolled again" in line for line in r.transcript)
    # X ~ Bin(3, 1/2), Y ~ Bin(2, 1/2): P(X > Y) = 16/32, P(X = Y) = 10/32, so a win is 16/22
    o = astragal.odds("coin: 3 vs 2")
    assert dict(o.outcomes.exact()) == {"win": Fraction(8, 11), "lose": Fraction(3, 11)}


def test_an_installed_games_own_aliases_work_in_a_fresh_lookup(installed_coin_game: None) -> None:
    # the entry point names only 'coin'; 'coins' is the game's own alias, learnt when asked
    assert astragal.roll("coins: 2", faces="2,2").result["value"] == 2


def test_an_unknown_game_is_still_an_error(installed_coin_game: None) -> None:
    with pytest.raises(astragal.NotationError, match="unknown system 'nosuch'"):
        astragal.roll("nosuch: 3")
