import icepool


def pbta(stat=0):
    total = 2 @ icepool.d6 + stat
    return total.map(lambda t: "strong hit" if t >= 10 else "weak hit" if t >= 7 else "miss")
