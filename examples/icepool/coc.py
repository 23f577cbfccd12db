import icepool


def coc(skill, dice=0):
    tens, units = icepool.Die(range(0, 100, 10)), icepool.Die(range(10))
    best = min if dice > 0 else max
    roll = icepool.map(lambda u, *ts: best((t + u) or 100 for t in ts), units,
                       *[tens] * (1 + abs(dice)))

    def level(r):
        if r == 1:
            return "critical"
        if r == 100 or skill < 50 and r >= 96:
            return "fumble"
        return next(o for o, t in (("extreme", skill // 5), ("hard", skill // 2),
                                   ("regular", skill), ("failure", 100)) if r <= t)
    return roll.map(level)
