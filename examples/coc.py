"""Call of Cthulhu 7th edition: a percentile skill roll with bonus (+N) or penalty (−N) dice."""

from astragal.kit import Die, Game, apply

tens, units = Die(range(0, 100, 10), "tens die"), Die(range(10), "units die")
game = Game("coc", "Call of Cthulhu 7e skill rolls", "{skill:int} [{dice:+int=0}]",
            aliases=("cthulhu",), examples=("45", "60 +1", "30 -2"), value="roll",
            order=("fumble", "failure", "regular", "hard", "extreme", "critical"),
            tones={"fumble": "bad", "failure": "bad", "regular": "good", "hard": "good",
                   "extreme": "critical", "critical": "critical"})


@game.dice
def percentile(dice):
    best = min if dice > 0 else max  # a bonus die keeps the better tens, a penalty the worse
    return apply(lambda u, *ts: best((t + u) or 100 for t in ts), units, *[tens] * (1 + abs(dice)))


@game.verdict("C1", "01 is a critical; 100 (96 or more under skill 50) a fumble; at most a fifth "
                    "of the skill extreme, half hard, the skill regular; above it a failure")
def skill_roll(roll, skill):
    if roll == 1:
        return "critical"
    if roll == 100 or skill < 50 and roll >= 96:
        return "fumble"
    return next(o for o, t in (("extreme", skill // 5), ("hard", skill // 2),
                               ("regular", skill), ("failure", 100)) if roll <= t)
