"""Dragon Age (the AGE System): 3d6 plus an ability against a target number; when any two dice
match, the Dragon Die's face gives that many stunt points."""

from astragal.kit import Game, apply, d6

game = Game("age", "Dragon Age tests", "{ability:+int=0} vs {tn:int}", aliases=("dragonage",),
            examples=("+2 vs 11", "+0 vs 13"),
            tones={"failure": "bad", "success": "good", "success with stunts": "critical"},
            dice=lambda ability: apply(lambda a, b, dragon: (
                a + b + dragon + ability, dragon if len({a, b, dragon}) < 3 else 0), d6, d6, d6))


@game.verdict("A1", "meet the target number to succeed; doubles then give Dragon Die stunts")
def check(roll, tn):
    return "failure" if roll[0] < tn else "success with stunts" if roll[1] else "success"
