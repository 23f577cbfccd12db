"""A small example game in its own package, found through the ``astragal.systems`` entry points.

``coin: 3`` flips three coins and counts heads; ``coin: 3 vs 2`` compares heads, a tie flipped
again. It is written only with the public kit (``astragal.kit``); a third-party game ships this
file and one line in its pyproject: ``[project.entry-points."astragal.systems"] coin =
"coin_game:game"``.
"""

from __future__ import annotations

from astragal.kit import AGAIN, Dice, Game, Switch, d, pool

game = Game("coin", "Coin flips", "{coins:int} [vs {rival:int}]", aliases=("coins",),
            value="heads", examples=("3", "3 vs 2"),
            switches=(Switch("heads_on", 2, "K1", "the face of a d2 that is heads", low=1,
                             high=2),))


@game.rule("K1", "a coin that lands heads scores one")
def heads(face: int, heads_on: int) -> bool:
    return face == heads_on


@game.dice
def flip(coins: int, rival: int | None, heads_on: int) -> Dice | tuple[Dice, Dice]:
    def side(n: int) -> Dice:
        return pool((n, d(2))).count(lambda f: heads(f, heads_on))
    return side(coins) if rival is None else (side(coins), side(rival))


@game.verdict("K2", "alone, the heads are the result; against a rival more heads wins and a tie "
                    "is flipped again")
def verdict(mine: int, theirs: int | None = None) -> object:
    if theirs is None:
        return "flipped"
    return "win" if mine > theirs else "lose" if mine < theirs else AGAIN
