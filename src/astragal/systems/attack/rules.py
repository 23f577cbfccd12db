"""The d6 attack-table game's rules (seed 003; RULES.md §4, A1–A20, A-A1…A-A9), each a pure
function registered once under its ID. The data they read (the table's columns, the attack table,
the Critical Damage Table, the switches) is ``data.py``, re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._records import Record
from ...rulebook import reading, rule
from .data import (
    ALL_POOLS,
    ARMOR,
    BERSERK,
    BERSERK_LAST_TURN,
    CHOICES,
    CODES,
    COLUMN_CODES,
    COLUMNS,
    DEFAULTS,
    DEFENCE_STATES,
    DEFENSIVE,
    DEFENSIVE_LAST_TURN,
    DIE,
    FILE_OPTIONS,
    HIT_COLUMNS,
    MATCH,
    NORMAL,
    PARRY,
    SHIELD,
    STANCES,
    STUNNED,
    SWITCHES,
    THREW_LAST_TURN,
    TRIPLE_COLUMNS,
    WHIFF,
    WHIFF_AT_OR_BELOW,
    WHIFFED_LAST_TURN,
    AttackTable,
    Column,
    CriticalRow,
    CriticalTable,
    Rules,
    attack_table_from_data,
    critical_table_from_data,
    default_attack_table,
    default_critical_table,
    rules_for,
)

# The data the rules read is re-exported: ``rules`` is where the game's API is found.
__all__ = [
    "ALL_POOLS",
    "ARMOR",
    "BERSERK",
    "BERSERK_LAST_TURN",
    "CHOICES",
    "CODES",
    "COLUMNS",
    "COLUMN_CODES",
    "DEFAULTS",
    "DEFENCE_STATES",
    "DEFENSIVE",
    "DEFENSIVE_LAST_TURN",
    "DIE",
    "FILE_OPTIONS",
    "HIT_COLUMNS",
    "MATCH",
    "NORMAL",
    "PARRY",
    "SHIELD",
    "STANCES",
    "STUNNED",
    "SWITCHES",
    "THREW_LAST_TURN",
    "TRIPLE_COLUMNS",
    "WHIFF",
    "WHIFFED_LAST_TURN",
    "WHIFF_AT_OR_BELOW",
    "AttackTable",
    "Column",
    "CriticalRow",
    "CriticalTable",
    "Reading",
    "Rules",
    "attack_dice",
    "attack_table_from_data",
    "blocks",
    "column_for",
    "critical_dice",
    "critical_table_from_data",
    "critical_total",
    "default_attack_table",
    "default_critical_table",
    "defence_pools",
    "defence_rule",
    "pool_size",
    "read_attack",
    "read_column",
    "rules_for",
    "sixes",
]

# --------------------------------------------------------------------------------------------
# The rules as pure functions, each registered once under its ID (the roller reads them on one
# exchange's values, the odds on the laws of the dice algebra: ``exchange.py``)

GAME = "attack"

reading(GAME, "A-A2", "the extracted Stun row 'Stun,_,_,Stun,_,Stun,_,Stun' marks cells 0, 3, "
        "5 and 7 (3 or less, one 5, one 6, three+ 6s), which cannot be meant: a Whiff is a "
        "'complete miss' (A6), and one 5 would stun where a double 5 does not. Its four marks are read as the "
        "four multiple columns (double 4, double 5, double 6, three+ 6s), the pattern of the "
        "block row: doubles and Criticals stun. stun_columns=5/6/6-6-6 takes the cells as "
        "printed (less the Whiff)")


@rule(GAME, "A1", "attack dice are the average of ATTACK and WEAPON, rounded down")
def attack_dice(attack: int, weapon: int) -> int:
    """A1: the average of ATTACK and WEAPON, rounded down."""
    return (attack + weapon) // 2


@rule(GAME, "A3", "a thrown weapon adds its Throw Bonus; Berserk +1 die, Defensively -1 (A2)")
def pool_size(base: int, thrown: bool = False, throw_bonus: int = 0, stance: str = NORMAL) -> int:
    """A2, A3: the attack dice before Luck; never below zero (A-A8 treats zero as a Whiff)."""
    n = base + (throw_bonus if thrown else 0)
    n += 1 if stance == BERSERK else -1 if stance == DEFENSIVE else 0
    return max(0, n)


@rule(GAME, "A7", "the column is the highest face and how many dice show it; 3 or less Whiffs")
def column_for(highest: int, count: int, triple_non_six: str = "double") -> str:
    """A5–A9, A-A4: the column of the attacker's highest face and how many dice show it."""
    if highest <= WHIFF_AT_OR_BELOW or count <= 0:
        return WHIFF
    if count >= 3 and highest == DIE:
        return "three+ 6s"  # A9
    if count >= 3 and triple_non_six == "own_column":
        return f"three+ {highest}s"
    return f"{'one' if count == 1 else 'double'} {highest}"  # A-A4: three 4s/5s read double


def sixes(faces: Sequence[int]) -> int:
    """The dice showing 6."""
    return sum(1 for f in faces if f == DIE)


class Reading(Record):
    """The attack table read from the attack dice's highest face and its count (A5–A11)."""

    highest: int
    showing: int  # how many dice show the highest face
    sixes: int
    column: str
    entry: Column | None  # None for a Whiff

    @property
    def whiff(self) -> bool:
        return self.entry is None

    @property
    def sixes_to_block(self) -> int | None:
        return None if self.entry is None else self.entry.sixes_to_block(self.showing)


def read_column(highest: int, count: int, rules: Rules) -> Reading:
    """A5–A9: the column (and its entry) of the highest face shown on ``count`` dice."""
    name = column_for(highest, count, rules.triple_non_six)
    entry = None if name == WHIFF else rules.table.column(name)
    return Reading(highest, count, count if highest == DIE else 0, name, entry)


def read_attack(faces: Sequence[int], rules: Rules) -> Reading:
    """A5–A9: the column of the attack faces, Luck dice included."""
    high = max(faces, default=0)
    return read_column(high, faces.count(high) if faces else 0, rules)


def defence_rule(states: Sequence[str]) -> str:
    """A12: the first rule that applies to the defender ("normal" when none does)."""
    for state in DEFENCE_STATES:
        if state in states:
            return state
    return NORMAL


@rule(GAME, "A12", "the DEFENSE pool by the first rule that applies (stunned: ARMOR only ...)")
def defence_pools(states: Sequence[str], threw_last_turn_defense: str = "full") -> tuple[str, ...]:
    """A12: which of ARMOR, SHIELD and PARRY/DODGE the defender rolls (first rule that applies)."""
    state = defence_rule(states)
    if state in (STUNNED, BERSERK_LAST_TURN):
        return (ARMOR,)
    if state == WHIFFED_LAST_TURN:
        return (ARMOR, SHIELD)  # A6: a Whiff loses PARRY/DODGE
    if state == THREW_LAST_TURN:  # A-A6: literal text = full defence; a switch narrows it
        return {"full": ALL_POOLS, "armor_shield": (ARMOR, SHIELD),
                "armor": (ARMOR,)}[threw_last_turn_defense]
    return ALL_POOLS


@rule(GAME, "A11", "a block needs as many 6s as the hit's column asks (a single 6, a double 6-6)")
def blocks(needed: int | None, defence_sixes: int) -> bool:
    """A11: a block needs at least ``needed`` 6s (None: this hit cannot be blocked)."""
    return needed is not None and defence_sixes >= needed


@rule(GAME, "A13", "critical dice: the attack's 6s + the weapon class's dice - the defender's dice")
def critical_dice(attack_sixes: int, class_dice: int, defender_dice_rolled: int,
                  defender_sixes: int = 0, subtract: str = "dice_rolled") -> int:
    """A13, A-A5: 6s rolled + class dice − the defender's dice rolled (or 6s rolled), floor 0."""
    minus = defender_dice_rolled if subtract == "dice_rolled" else defender_sixes
    return max(0, attack_sixes + class_dice - minus)


@rule(GAME, "A15", "the critical dice are summed and the weapon's Crit Bonus added")
def critical_total(dice_sum: int, crit_bonus: int = 0) -> int:
    """A14, A15: the critical dice are summed, then the weapon's Crit Bonus is added."""
    return dice_sum + crit_bonus
