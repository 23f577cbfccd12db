"""Powered by the Apocalypse: a move rolls 2d6 and adds a stat (Apocalypse World, Dungeon World)."""

from astragal.kit import Game, d6

game = Game("pbta", "Powered by the Apocalypse moves", "{stat:+int=0}",
            dice=lambda stat: 2 @ d6 + stat, aliases=("move",), examples=("+1", "-1"))


@game.verdict("P1", "10 or more is a strong hit, 7 to 9 a weak hit, 6 or less a miss")
def move(total):
    return "strong hit" if total >= 10 else "weak hit" if total >= 7 else "miss"
