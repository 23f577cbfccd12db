import icepool


def dragonage(ability, tn):
    roll = icepool.map(lambda a, b, g: (a + b + g + ability, g if len({a, b, g}) < 3 else 0),
                       icepool.d6, icepool.d6, icepool.d6)
    return roll.map(lambda r: "failure" if r[0] < tn else
                    "success with stunts" if r[1] else "success")
