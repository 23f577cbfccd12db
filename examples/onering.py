"""The One Ring (2nd edition): the Feat die (d12 with the Eye of Sauron on 11 and the Gandalf
rune on 12) and a Success die (d6) per rank, against a target number. The Eye counts 0, the rune
succeeds whatever the total; each 6 on a Success die is a Tengwar rune that raises a success.
Weary: Success dice on 1 to 3 count 0. Miserable: the Eye fails the roll."""

from astragal.kit import Die, Game, apply

feat = Die([*range(1, 11), "Eye", "Rune"], "feat die", tones={"Eye": "bad", "Rune": "good"})
game = Game("tor", "The One Ring 2e rolls", "{dice:int} vs {tn:int} [{weary:weary}] "
            "[{miserable:miserable}]", aliases=("onering",), examples=("2 vs 14", "3 vs 16 weary"),
            measure=lambda roll: roll[1], dice=lambda dice, weary: apply(lambda f, s: (
                f, s[0] + (f if f in range(11) else 0), s[1]), feat, dice @ Die(
                [(0 if weary and f < 4 else f, f == 6) for f in range(1, 7)], "d6",
                tones={(6, True): "good"})))  # a Success die is worth (value, Tengwar)


@game.verdict("R1", "the rune succeeds, the Eye fails if Miserable, else meet the TN; Tengwars raise")
def verdict(roll, tn, miserable):  # roll: (the Feat die, the total, the Tengwars)
    f, total, tengwars = roll
    return "failure" if f == "Eye" and miserable or f != "Rune" and total < tn else (
        ("success", "great success", "extraordinary success")[min(tengwars, 2)])
