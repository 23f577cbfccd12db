import icepool


def onering(dice, tn, weary=False, miserable=False):
    success = icepool.map(lambda *fs: (sum(0 if weary and f <= 3 else f for f in fs),
                                       sum(f == 6 for f in fs)), *[icepool.d6] * dice)

    def read(f, s):  # 11 is the Eye, 12 the rune
        if f == 11 and miserable or f != 12 and s[0] + (f if f < 11 else 0) < tn:
            return "failure"
        return ("success", "great success", "extraordinary success")[min(s[1], 2)]
    return icepool.map(read, icepool.d12, success)
