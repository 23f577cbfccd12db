import icepool


def fate(skill=0, against=0):
    shifts = 4 @ icepool.Die([-1, 0, 1]) + skill - against
    return shifts.map(lambda s: "fail" if s < 0 else "tie" if s == 0
                      else "succeed" if s < 3 else "succeed with style")
