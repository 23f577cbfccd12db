"""Savage Worlds: a trait die and, for a Wild Card, a Wild Die (d6), both exploding; the higher
counts. 4 succeeds, 8 or more is a raise; both dice showing 1 is a critical failure. An Extra
rolls no Wild Die."""

from astragal.kit import Die, Game, apply, d, d6

game = Game("swade", "Savage Worlds trait rolls",
            "d{trait:4|6|8|10|12} [{mod:+int=0}] [{extra:extra}]", aliases=("savage",),
            examples=("d8", "d6 +1", "d10 extra"), dice=lambda trait, mod, extra: apply(
                lambda t, w: (max(t, w) + mod, t == w == 1), d(trait).explode(),
                Die([0], "no Wild Die") if extra else d6.explode()))


@game.verdict("S1", "both dice on 1 is a critical failure; under 4 fails, 4-7 succeeds, 8+ raise")
def trait_test(roll):  # roll: (the higher die plus the modifier, whether both dice show 1)
    return "critical failure" if roll[1] else "failure" if roll[0] < 4 else (
        "success" if roll[0] < 8 else "raise")
