"""Chronicles of Darkness: the data, the switches and every rule, once (RULES.md §2).

Each rule is a plain function of faces or values, registered under its ID. The roller and the
exact odds both reach the dice rules through the program (``program.py``) and map the same verdict
functions over what they get: the roller over one roll's values, the odds over their law.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..._errors import OptionError
from ..._records import Record
from ...rulebook import rule
from ...switches import Switch, resolve

__all__ = [
    "AGAIN_RULES", "CHANCE_SUCCESS", "EXCEPTIONAL_AT", "FACES", "SUCCESS_AT", "SWITCHES",
    "WILLPOWER_DICE", "Rules", "again_key", "contest", "dramatic_failure", "extended_result",
    "is_success", "pool_dice", "rerolls", "rote_rerolls", "rules_from", "tie_goes", "verdict",
]

GAME = "cofd"
FACES = 10                 # C1: ten-sided dice
SUCCESS_AT = 8             # C2, C13, C-A6: 8, 9 and 10 are successes
CHANCE_SUCCESS = 10        # C-X1: a chance die succeeds only on a 10
EXCEPTIONAL_AT = 5         # C4, C-X4 (switch exceptional_at)
WILLPOWER_DICE = 3         # C-X6: one Willpower point adds three dice
AGAIN_RULES: dict[str, int | None] = {"10": 10, "9": 9, "8": 8, "none": None}  # C5, C6

SINGLE_OUTCOMES = ("dramatic_failure", "failure", "success", "exceptional_success")
CONTEST_OUTCOMES = ("win", "lose", "tie")
EXTENDED_OUTCOMES = ("success", "failure")

_AGAIN_ALIASES = {"10-again": "10", "9-again": "9", "8-again": "8", "no-again": "none",
                  "no": "none", "off": "none", "none": "none", "10again": "10", "9again": "9",
                  "8again": "8", "noagain": "none"}

SWITCHES = (
    Switch("pool_below_one", "chance_die", "C-A3",
           "a pool cut below 1 die rolls a chance die, or fails without a roll",
           ("chance_die", "auto_fail")),
    Switch("again_threshold", "10", "C5",
           "the again rule of every pool that does not name its own: 10, 9, 8 or none",
           tuple(AGAIN_RULES), _AGAIN_ALIASES),
    Switch("rote", False, "C-X3", "every roll is a rote action"),
    Switch("exceptional_at", EXCEPTIONAL_AT, "C4",
           "successes needed for an exceptional success", low=1, high=10_000),
    Switch("contested_tie", "continue_next_turn", "C-X7",
           "a tied contest: no winner this turn, the defender wins, roll again, or a tie",
           ("continue_next_turn", "defender", "reroll", "tie")),
    Switch("contest_uses_resistance", True, "C-A5", "'resist' terms count in contests"),
    Switch("dramatic_failure_on_chance_one", True, "C-X1",
           "a 1 on a chance die is a dramatic failure"),
    Switch("chance_reroll", "as_chance_die", "C-X1",
           "a chance die's 10 is re-rolled as a chance die (10s only succeed) or a normal die",
           ("as_chance_die", "as_normal_die")),
)
DEFAULTS: dict[str, Any] = {s.name: s.default for s in SWITCHES}


def again_key(value: object) -> str:
    """An again rule (``10``, ``"9-again"``, ``"none"``, ``None``) as a key of AGAIN_RULES."""
    text = "none" if value is None else str(value).strip().lower()
    text = _AGAIN_ALIASES.get(text, text)
    if text not in AGAIN_RULES:
        raise OptionError(f"the again rule is 10, 9, 8 or none, not '{value}'")
    return text


class Rules(Record):
    """The house-rule switches in force for one request (RULES.md §6), checked and normalised."""

    pool_below_one: str = "chance_die"
    again: str = "10"
    rote: bool = False
    exceptional_at: int = EXCEPTIONAL_AT
    contested_tie: str = "continue_next_turn"
    contest_uses_resistance: bool = True
    dramatic_failure_on_chance_one: bool = True
    chance_reroll: str = "as_chance_die"


def rules_from(options: Mapping[str, Any]) -> Rules:
    """The switches from an options mapping (defaults fill the gaps); bad values are errors."""
    try:
        return _rules_cached(tuple(sorted(options.items())))
    except TypeError:  # an unhashable value: read it (and refuse it) the long way
        return _rules(options)


@lru_cache(maxsize=256)
def _rules_cached(items: tuple[tuple[str, Any], ...]) -> Rules:
    return _rules(dict(items))


def _rules(options: Mapping[str, Any]) -> Rules:
    v = resolve(SWITCHES, options, "Chronicles of Darkness")
    return Rules(v["pool_below_one"], v["again_threshold"], v["rote"], v["exceptional_at"],
                 v["contested_tie"], v["contest_uses_resistance"],
                 v["dramatic_failure_on_chance_one"], v["chance_reroll"])


# --------------------------------------------------------------------------------------------
# The rules


@rule(GAME, "C1", "a pool is the sum of its ratings, less resistance (C8), +3 for Willpower")
def pool_dice(ratings: int, resistance: int, willpower: bool) -> int:
    """C1, C8, C12, C-X6: the dice of a pool, formed before rolling (may be below 1)."""
    return ratings - resistance + (WILLPOWER_DICE if willpower else 0)


@rule(GAME, "C2", "a die showing 8, 9 or 10 is a success; a chance die only on a 10 (C-X1)")
def is_success(face: int, chance: bool = False) -> bool:
    """C2: a face of 8+ is a success; C-X1: on a chance die only a 10 is."""
    return face == CHANCE_SUCCESS if chance else face >= SUCCESS_AT


@rule(GAME, "C5", "under N-again a face of N or more is rolled again, without limit (C6)")
def rerolls(face: int, again: int | None, chance: bool = False) -> bool:
    """C5, C6: under N-again a face of N or more is rolled again; C-X1: a chance die's 10 is."""
    if again is None:
        return False
    return face == CHANCE_SUCCESS if chance else face >= again


@rule(GAME, "C-X3", "a rote action re-rolls once each die that failed, not a dramatic failure")
def rote_rerolls(first: int, chance: bool = False, dramatic_on_one: bool = True) -> bool:
    """C-X3: a rote action re-rolls once a die whose first face failed, not a dramatic failure."""
    if chance:
        return first != CHANCE_SUCCESS and not (first == 1 and dramatic_on_one)
    return not is_success(first)


@rule(GAME, "C-X1", "a 1 on the chance die that stands is a dramatic failure")
def dramatic_failure(first: int, chance: bool, dramatic_on_one: bool = True) -> bool:
    """C-X1: the chance die's standing first face is 1 (and the switch is on)."""
    return chance and dramatic_on_one and first == 1


@rule(GAME, "C3", "no success fails; one or more succeeds; 5 or more is exceptional (C4)")
def verdict(successes: int, dramatic: bool = False, exceptional_at: int = EXCEPTIONAL_AT) -> str:
    """C3, C4, C-X1: the outcome of one roll in the game's words (a snake_case key)."""
    if dramatic:
        return "dramatic_failure"
    if successes <= 0:
        return "failure"
    return "exceptional_success" if successes >= exceptional_at else "success"


@rule(GAME, "C10", "in a single-roll contest more successes wins")
def contest(margin: int) -> str:
    """C10: the actor's ``win``/``lose``/``tie`` from its successes less the opposition's."""
    return "win" if margin > 0 else "lose" if margin < 0 else "tie"


@rule(GAME, "C-X7", "a tied contest: as the contested_tie switch says")
def tie_goes(tie_rule: str, extended: bool) -> str:
    """C-A4, C-X7: what a tie becomes: ``tie``, ``lose`` (to the defender) or ``again``.

    In a single roll, ``continue_next_turn`` leaves the turn without a winner; in an extended
    contest it (and ``reroll``) keeps rolling until one side leads.
    """
    if tie_rule == "defender":
        return "lose"
    if tie_rule == "reroll" or (extended and tie_rule == "continue_next_turn"):
        return "again"
    return "tie"


@rule(GAME, "C11", "in an extended action the first to reach the target wins")
def extended_result(actor_total: int, opposition_total: int | None, target: int) -> str | None:
    """C11, C-A4: after a roll of an extended action or contest, who has reached the target.

    None while nobody has. When both sides reach it on the same roll, the larger total wins and
    equal totals are a ``tie`` for the contested_tie switch to settle.
    """
    if opposition_total is None:
        return "success" if actor_total >= target else None
    a, b = actor_total >= target, opposition_total >= target
    if not (a or b):
        return None
    if a and b:
        return contest(actor_total - opposition_total)
    return "win" if a else "lose"
