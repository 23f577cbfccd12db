import icepool


def savage(trait, mod=0, extra=False):
    die = icepool.d(trait).explode(depth=18)
    wild = icepool.Die([1]) if extra else icepool.d6.explode(depth=18)
    roll = icepool.map(lambda t, w: (max(t, w) + mod, t == 1 and w == 1 and not extra), die, wild)
    return roll.map(lambda r: "critical failure" if r[1] else "failure" if r[0] < 4
                    else "success" if r[0] < 8 else "raise")
