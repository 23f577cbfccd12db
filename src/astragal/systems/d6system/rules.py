"""The D6 System: the data, the switches and every rule, once (RULES.md §3, D1–D15, D-A*, D-X*).

Each rule is a plain function of values, registered under its ID. The roller and the exact odds
both reach the dice through the program (``program.py``) and map the same verdicts over what
they get: the roller over one roll's totals, the odds over their law.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..._records import Record
from ...dice.steps import Adjust
from ...rulebook import reading, rule
from ...switches import Switch, resolve

__all__ = [
    "DEFAULTS", "DIFFICULTIES", "LEVELS", "MODIFIERS", "SIDES", "SWITCHES", "Prepared",
    "damage_bonus", "difficulty_level", "half_bonus", "is_automatic", "modifier_options",
    "options_from", "prepare", "result_points", "success_level", "tie_goes", "wild_die",
]

GAME = "d6system"

reading(GAME, "D-A4", "negative pips borrow whole dice only (3 pips each), and only while a die "
        "above the minimum is left; what cannot be borrowed counts on the total: 2D -1 pip is "
        "2D-1, not 1D+2, which would make a total of 3 certain where 2D can roll 2 (a penalty "
        "never makes a roll better). A dice penalty leaves at least "
        "min_dice_after_penalty dice, and each die it cannot take counts -3 on the total (the "
        "text's 'convert to −3 per D'): 1D -1D rolls 1D-3; penalty_below_min=ignore drops them")
SIDES = 6  # D1: every die of a die code is a six-sided die

# D6, D-A2: level → (printed number, lowest, highest or None); the printed number is the default
DIFFICULTIES: dict[str, tuple[int, int, int | None]] = {
    "automatic": (0, 0, 0),
    "very easy": (1, 1, 5),
    "easy": (6, 6, 10),
    "moderate": (11, 11, 15),
    "difficult": (16, 16, 20),
    "very difficult": (21, 21, 25),
    "heroic": (26, 26, 30),
    "legendary": (31, 31, None),
}

# D5: situation → (numeric form, dice form or None when the row offers only a number)
MODIFIERS: dict[str, tuple[int, int | None]] = {
    "slightly advantaged": (3, None),
    "advantaged": (5, 1),
    "very advantaged": (8, 2),
    "extremely advantaged": (10, 3),
    "extremely disadvantaged": (-10, -3),
    "very disadvantaged": (-8, -2),
    "disadvantaged": (-5, -1),
    "slightly disadvantaged": (-3, None),
}
MODIFIER_ALIASES = {"slight disadvantaged": "slightly disadvantaged",  # the seed's own spelling
                    "slight advantaged": "slightly advantaged"}

LEVELS = ("Minimal", "Solid", "Good", "Superior", "Spectacular", "Incredible")  # D10
CHECK_OUTCOMES = ("failure", "minimal", "solid", "good", "superior", "spectacular", "incredible")
PLAIN_OUTCOMES = ("no_complication", "complication")
AUTOMATIC_OUTCOMES = ("automatic",)

SWITCHES = (
    Switch("incredible_from", 17, "D-A1", "result points that start Incredible (16 appears "
           "twice in the seed)", low=16, high=17),
    Switch("modifier_form", "numeric", "D-A3", "table rows offering both: the number or the dice",
           ("numeric", "dice")),
    Switch("wild_die", False, "D-X1", "one die of every roll is the Wild Die"),
    Switch("wild_one", "drop_one_and_highest", "D-X1",
           "a Wild Die's first 1: remove it and the highest die, or count it (a complication)",
           ("drop_one_and_highest", "complication_only")),
    Switch("pips_carry", True, "D-X2", "3 pips make 1D"),
    Switch("min_dice_after_penalty", 1, "D-A4", "the fewest dice a penalty leaves", low=1,
           high=100),
    Switch("penalty_below_min", "minus_three", "D-A4",
           "dice a penalty cannot take: -3 each on the total (the text's 'convert to -3 per "
           "D'), or ignored", ("minus_three", "ignore")),
    Switch("opposed_tie", "actor", "D-X4",
           "an opposed tie goes to the actor (meet or beat), the defender, or is rolled again",
           ("actor", "defender", "reroll")),
)
DEFAULTS: dict[str, Any] = {s.name: s.default for s in SWITCHES}


def options_from(options: Mapping[str, Any]) -> dict[str, Any]:
    """The switches from an options mapping (defaults fill the gaps); bad values are errors."""
    try:
        return dict(_options_cached(tuple(sorted((k, type(v).__name__, v)
                                                 for k, v in options.items()))))
    except TypeError:  # an unhashable value: read it (and refuse it) the long way
        return resolve(SWITCHES, options, "D6 System")


@lru_cache(maxsize=256)
def _options_cached(key: tuple[tuple[str, str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    return tuple(resolve(SWITCHES, {k: v for k, _, v in key}, "D6 System").items())


def difficulty_level(number: int) -> str:
    """D-A2: the standard difficulty whose reconstructed range holds ``number``."""
    for name, (_, low, high) in DIFFICULTIES.items():
        if number >= low and (high is None or number <= high):
            return name
    raise ValueError(f"{number} is not a difficulty number")


def modifier_options(situation: str) -> tuple[str, ...]:
    """D5: the modifier a situation gives, in its numeric and (where offered) dice forms."""
    key = situation.lower().replace("-", " ").replace("_", " ")
    number, dice = MODIFIERS[MODIFIER_ALIASES.get(key, key)]
    return (f"{number:+d}",) + (() if dice is None else (f"{dice:+d}D",))


class Prepared(Record):
    """A side after its bonuses: dice to roll, pips and number added to the total, and why."""

    dice: int
    pips: int
    number: int
    steps: tuple[Adjust, ...]  # how the code changed before the roll (D5, D-A4, D-X2)

    @property
    def code(self) -> str:
        """The effective die code (``5D``, ``4D+1``; pips may exceed 2 when they do not carry)."""
        return code_text(self.dice, self.pips)

    @property
    def added(self) -> int:
        """Everything added to the dice: pips and number bonuses."""
        return self.pips + self.number

    def __str__(self) -> str:
        return self.code + (f" {self.number:+d}" if self.number else "")


def code_text(dice: int, pips: int) -> str:
    """``4D``, ``4D+2``, ``2D-1``."""
    return f"{dice}D" if pips == 0 else f"{dice}D{pips:+d}"


# --------------------------------------------------------------------------------------------
# The rules


@rule(GAME, "D2", "dice bonuses add dice, numbers add to the total, 3 pips make 1D (D3, D5, "
      "D-X2, D-A4)")
def prepare(side: Any, options: Mapping[str, Any]) -> Prepared:
    """D2–D5, D-X2, D-A3, D-A4: the dice to roll and what is added, from a side as written."""
    dice, pips, number = side.code.dice, side.code.pips, 0
    written = side.code.dice  # the dice before any penalty
    steps: list[Adjust] = []
    for term in side.terms:
        if term.kind == "dice":  # D2: a dice bonus adds dice to the roll
            dice += term.value
            pips += term.pips
            written += max(0, term.value)
        elif term.kind == "pips":
            pips += term.value
        elif term.kind == "number":  # D3: a number adds to the total
            number += term.value
        else:
            value, in_dice = MODIFIERS[term.name]
            if options["modifier_form"] == "dice" and in_dice is not None:  # D-A3
                dice += in_dice
                written += max(0, in_dice)
                steps.append(Adjust("", "modifier", "D5",
                                    (("name", term.name), ("dice", in_dice))))
            else:
                number += value
                steps.append(Adjust("", "modifier", "D5",
                                    (("name", term.name), ("number", value))))
    # D-A4 and the audit's ruling: a penalty never takes the last die(s) and never makes a roll
    # better: the floor is the minimum, but never more dice than were there before penalties
    low = min(options["min_dice_after_penalty"], written)
    if dice < low:
        # D-A4 "convert to -3 per D": a die the penalty cannot take costs 3 on the total, so
        # every penalty costs something (ignored only by the house rule)
        short = low - dice
        dice = low
        each = 3 if options["penalty_below_min"] == "minus_three" else 0
        number -= each * short
        steps.append(Adjust("", "floor", "D-A4", (("dice", low), ("short", short),
                                                  ("each", each))))
    if options["pips_carry"] and not 0 <= pips <= 2:  # D-X2: 3 pips = 1D
        before = (dice, pips)
        if pips > 2:
            dice, pips = dice + pips // 3, pips % 3
        # negative pips take whole dice (3 pips each) while a die above the floor is left; a
        # remainder of 1 or 2 stays on the total (2D−1 is 2D−1, not 1D+2, which could roll 3
        # where 2D rolls 2: a penalty never makes any total more likely)
        while pips <= -3 and dice > low:
            dice, pips = dice - 1, pips + 3
        if before != (dice, pips):
            steps.append(Adjust("", "carry", "D-X2", (("from", f"{before[0]}D{before[1]:+d}"),
                                                      ("to", code_text(dice, pips)))))
        if pips < 0:
            steps.append(Adjust("", "pips_stay", "D-X2", (("pips", pips), ("floor", low))))
    return Prepared(dice, pips, number, tuple(steps))


@rule(GAME, "D7", "an Automatic difficulty succeeds without rolling")
def is_automatic(difficulty_number: int) -> bool:
    """D7: Automatic (0) needs no roll."""
    return difficulty_number == 0


@rule(GAME, "D8", "result points are the total less the difficulty")
def result_points(total: int, difficulty: int) -> int:
    """D8 (and D-X4: the opposing total is the difficulty)."""
    return total - difficulty


@rule(GAME, "D10", "success levels by result points: Minimal 0, Solid 1-4 ... Incredible 17+")
def success_level(result_points: int, incredible_from: int = 17) -> str | None:
    """D9, D10, D-A1: the success level of ``result_points`` (None for a failure, D15)."""
    if result_points < 0:
        return None
    if result_points == 0:
        return "Minimal"
    if result_points >= incredible_from:
        return "Incredible"
    return LEVELS[min(4, 1 + (result_points - 1) // 4)]  # bands of four: 1–4, 5–8, 9–12, 13–16


@rule(GAME, "D11", "half the result points, rounded up, may go to another roll")
def half_bonus(result_points: int) -> int:
    """D11: half the result points, rounded up, as a bonus to another roll (0 on a failure)."""
    return -(-result_points // 2) if result_points > 0 else 0  # D-A6: only successes give one


@rule(GAME, "D12", "one fifth of an attack's result points, rounded up, adds to damage")
def damage_bonus(result_points: int) -> int:
    """D12: one fifth of an attack's result points, rounded up, added to damage."""
    return -(-result_points // 5) if result_points > 0 else 0


@rule(GAME, "D-X1", "the Wild Die: a 6 adds and rolls again; a 1 on its first roll is a "
      "complication")
def wild_die(face: int, first: bool) -> str | None:
    """D-X1: ``again`` for a 6 (it adds and is rolled again), ``complication`` for a 1 on the Wild
    Die's first roll, None otherwise."""
    if face == SIDES:
        return "again"
    return "complication" if first and face == 1 else None


@rule(GAME, "D-X4", "an opposed tie goes to the actor, the defender, or is rolled again")
def tie_goes(tie_rule: str) -> str:
    """D-X3, D-X4: ``actor`` (meet or beat: Minimal), ``defender`` (a failure) or ``again``."""
    return {"actor": "actor", "defender": "defender", "reroll": "again"}[tie_rule]
