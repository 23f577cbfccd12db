"""FATE Core: four Fudge dice plus a skill against an opposition; shifts decide the action."""

from astragal.kit import Game, dF

game = Game("fate", "FATE Core actions", "{skill:+int=0} [vs {against:+int=0}]",
            dice=lambda skill: 4 @ dF + skill, examples=("+2 vs +3", "+4"))


@game.verdict("F1", "shifts (total less opposition): under 0 fail, 0 tie, 1-2 succeed, 3+ style")
def action(total, against):
    s = total - against
    return "fail" if s < 0 else "tie" if s == 0 else "succeed" if s < 3 else "succeed with style"
