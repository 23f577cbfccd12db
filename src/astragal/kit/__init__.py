"""The game kit: everything a game author needs, and nothing else (its names are pinned by a test).

A game is one definition::

    from astragal.kit import Game, d6

    game = Game("pbta", "Powered by the Apocalypse moves", "{stat:+int}",
                dice=lambda stat: 2 @ d6 + stat)

    @game.verdict("P1", "10 or more is a strong hit, 7 to 9 a weak hit, 6 or less a miss")
    def move(total):
        return "strong hit" if total >= 10 else "weak hit" if total >= 7 else "miss"

From it astragal derives the roll (every die recorded with its facts, the transcript), the exact
odds with their fractions, the rulebook, the command line and the web room. See docs/games.md.
"""

from __future__ import annotations

from ..switches import Switch
from ._dice import Dice, Die, Pool, apply, d, dF, highest, lowest, pool, procedure
from ._game import AGAIN, Decision, Game, then
from ._load import install

__all__ = ["AGAIN", "Decision", "Dice", "Die", "Game", "Pool", "Switch", "apply", "d", "d4",
           "d6", "d8", "d10", "d12", "d20", "d100", "dF", "highest", "install", "lowest", "pool",
           "procedure", "then"]

d4, d6, d8, d10, d12, d20, d100 = (d(n) for n in (4, 6, 8, 10, 12, 20, 100))
