"""Cortex Prime: roll a pool of mixed dice against a difficulty; the two highest dice add up to
the total. A 1 is a hitch and counts for nothing; a pool of nothing but 1s is a botch. (This
example reads the total, as its icepool twin does; the effect die is left out.)"""

from astragal.kit import Die, Game, pool

game = Game("cortex", "Cortex Prime tests", "{dice:dice} vs {difficulty:int}",
            examples=("d8 d6 d6 vs 7", "d10 d8 d6 vs 11"),
            tones={"botch": "bad", "failure": "bad", "success": "good", "heroic success": "critical"})


@game.dice
def roll(dice):  # a 1 is a hitch: it counts nothing (its label says what it showed)
    return pool(*(Die([0, *range(2, n + 1)], f"d{n}", {0: "1"}, {0: "bad"})
                  for n in dice)).highest(2)


@game.verdict("X1", "all 1s botch; under the difficulty fails, at it succeeds, 5 over is heroic")
def test(total, difficulty):
    return "botch" if total == 0 else "failure" if total < difficulty else (
        "heroic success" if total >= difficulty + 5 else "success")
