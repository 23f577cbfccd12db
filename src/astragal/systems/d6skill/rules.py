"""d6 + skill: the data, the switches and every rule, once (RULES.md §5, S1–S14, S-A1–S-A6).

Each rule is a plain function of faces or values, registered under its ID. The die's rules (S7,
S8, S9) are read by the die's procedure (``game.py``) at every face, by the roll and the odds
alike; the verdicts (S1, S2, S3, S5, S6) are read over one roll's values and over the exact law.
"""

from __future__ import annotations

from typing import Any

from ...rulebook import rule
from ...switches import Switch

__all__ = [
    "BOTCH_FACE", "BOTCH_KINDS", "BOTCH_ORDERS", "CRITICAL_FACE", "DEFAULTS", "KINDS",
    "KIND_TITLES", "SIDES", "SWITCHES", "TIE_RULES", "automatic_success", "botch_checked",
    "botched", "check_outcome", "damage", "explodes", "kinds", "opposed_verdict", "result",
]

GAME = "d6skill"
SIDES = 6
BOTCH_FACE = 1  # S7
CRITICAL_FACE = 6  # S9

# The kinds of roll the seed names. S1/S-A6: every action is a Trait or Skill roll; ATK is a
# Skill roll (Melee, Projectile), DEF a Skill or Trait roll (Dodge, Block; S-A2).
KINDS = ("skill", "trait", "atk", "def", "dmg", "loot")
KIND_TITLES = {"skill": "Skill", "trait": "Trait", "atk": "ATK", "def": "DEF", "dmg": "DMG",
               "loot": "Loot"}
KIND_WORDS = {"skill": "skill", "trait": "trait", "atk": "atk", "attack": "atk", "def": "def",
              "defense": "def", "defence": "def", "dmg": "dmg", "damage": "dmg", "loot": "loot"}
BOTCH_KINDS = KINDS  # S7: any roll may be checked for a Botch; botch_on says which are
TIE_RULES = ("reroll", "actor", "opposition", "stand")
BOTCH_ORDERS = ("before_ties", "after_ties")

SINGLE_OUTCOMES = ("botch", "no_botch")
CHECK_OUTCOMES = ("botch", "failure", "success")
ATK_OUTCOMES = ("botch", "miss", "hit")

_KIND_ALIASES = {w: k for w, k in KIND_WORDS.items() if w != k}
MAX_CAP = 999_999

SWITCHES = (
    Switch("explode_on", "skill+trait+atk+def+dmg+loot", "S9",
           "the roll kinds whose 6s explode (S9, S-A2, S-A6), joined with '+', or none",
           KINDS, _KIND_ALIASES, multiple=True),
    Switch("botch_on", "skill+trait+atk+def+dmg+loot", "S7",
           "the roll kinds whose first 1 is checked for a Botch (S7), joined with '+', or none",
           BOTCH_KINDS, _KIND_ALIASES, multiple=True),
    Switch("max_explosions", "none", "S9",
           "the most times one die may explode (§5.3: the seed has no cap), or none",
           ("none",), low=0, high=MAX_CAP),
    Switch("opposed_tie", "reroll", "S3",
           "an opposed tie is rolled again (S3), won by the actor or the opposition, or stands",
           TIE_RULES),
    Switch("botch_check_on_opposed", "before_ties", "S-A4",
           "a Botch decides an opposed round before ties are looked at, or after", BOTCH_ORDERS),
    Switch("stressful", True, "S6",
           "a roll against # is stressful (no automatic Success) unless marked 'calm'"),
)
DEFAULTS: dict[str, Any] = {s.name: s.default for s in SWITCHES}


def kinds(value: str) -> frozenset[str]:
    """The roll kinds an ``explode_on`` or ``botch_on`` switch names."""
    return frozenset() if value == "none" else frozenset(value.split("+"))


# --------------------------------------------------------------------------------------------
# The rules


@rule(GAME, "S1", "the result is the d6 plus one Trait or Skill and the modifiers")
def result(die: int, bonus: int) -> int:
    """S1: what the d6 adds (a Critical chain's sum, a botched or checked 1 counting 1) + bonus."""
    return die + bonus


@rule(GAME, "S2", "a result higher than # succeeds; equal or lower fails; a Botch is a Botch")
def check_outcome(result: int, botch: bool, difficulty: int) -> str:
    """S2, S7: a Botch, a Success (the result is higher than #) or a Failure (equal or lower)."""
    if botch:
        return "botch"
    return "success" if result > difficulty else "failure"


@rule(GAME, "S3", "opposed rolls: the higher result wins; a tie is rolled again (opposed_tie)")
def opposed_verdict(margin: int, actor_botch: bool, opposition_botch: bool, opposed_tie: str,
                    botch_check_on_opposed: str) -> tuple[str, int]:
    """One round of an opposed roll: the actor's outcome and the margin that counts.

    ``margin`` is actor result − opposition result, a botched die counting 1 (S8). Outcomes:
    ``botch``, ``failure``, ``success``, ``reroll`` (S3: a tie is rolled again) or ``tie`` (the
    house rule opposed_tie=stand). S-A4: by default a Botch decides before ties are looked at.
    """
    if botch_check_on_opposed == "before_ties":
        decided = _botch_decides(margin, actor_botch, opposition_botch)
        if decided is not None:
            return decided
    if margin == 0:
        if opposed_tie == "reroll":
            return "reroll", 0
        if opposed_tie == "actor":
            return "success", 0
        if opposed_tie == "opposition":
            return "failure", 0
        return "tie", 0
    decided = _botch_decides(margin, actor_botch, opposition_botch)
    if decided is not None:
        return decided
    return ("success" if margin > 0 else "failure"), margin


def _botch_decides(margin: int, actor_botch: bool,
                   opposition_botch: bool) -> tuple[str, int] | None:
    if actor_botch:  # the actor's Botch stands even when both sides botch
        return "botch", margin
    if opposition_botch:
        # the opposition's Botch gives the actor the win; S-A1: a winning margin is at least 1
        return "success", max(1, margin)
    return None


@rule(GAME, "S5", "on a hit, DMG is the weapon's base DMG plus the ATK's margin")
def damage(points: int) -> int:
    """S4, S5: DMG from the weapon's base DMG (rated or rolled) plus the ATK's margin; never
    below 0."""
    return max(0, points)


@rule(GAME, "S6", "no roll when the bonus alone is higher than # and the moment is calm")
def automatic_success(bonus: int, difficulty: int, stressful: bool) -> bool:
    """S6, S-A5: no roll when the bonus alone is higher than # and the moment is not stressful."""
    return not stressful and bonus > difficulty


@rule(GAME, "S7", "a natural 1 is rolled again to check for a Botch")
def botch_checked(first: int, checks: bool) -> bool:
    """S7: a first face of 1 calls for the botch check (on the kinds botch_on names)."""
    return checks and first == BOTCH_FACE


@rule(GAME, "S8", "a botch check of 1 is a Botch; anything else is ignored and the die counts 1")
def botched(checked: int | None) -> bool:
    """S7, S8, S11: the botch check's face decides the Botch (it is never added, never explodes);
    ``None`` when no check was rolled."""
    return checked == BOTCH_FACE


@rule(GAME, "S9", "a natural 6 is rolled again while 6s keep coming, and every roll is added")
def explodes(face: int, enabled: bool) -> bool:
    """S9: a 6 (on the kinds explode_on names) is a Critical: roll again and add; S10: a 1 late in
    the chain is just 1 (the check reads only the first face)."""
    return enabled and face == CRITICAL_FACE
