"""A fight's combatants: their numbers and counters (A16), how a GM writes them, and the checks a
fight read from outside must pass. The commands that change them are ``fight.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..._digits import digits as is_digits
from ..._errors import InputError
from .rules import BERSERK_LAST_TURN, DEFENSIVE_LAST_TURN, THREW_LAST_TURN, WHIFFED_LAST_TURN

__all__ = ["ADD_ONLY_NOT", "FIELDS", "LAST_TURN_FLAGS", "FightError", "apply_fields",
           "check_combatant", "flag_state", "new_combatant"]


class FightError(InputError):
    """A fight command that cannot be carried out (unknown combatant, empty counter, bad file)."""


# --------------------------------------------------------------------------------------------
# Combatants

# key in the file → (words a GM may type, kind)
FIELDS: dict[str, tuple[tuple[str, ...], str]] = {
    "attack": (("attack", "atk"), "count"),
    "weapon": (("weapon", "wpn"), "count"),
    "class": (("class", "weapon_class"), "class"),
    "throw_bonus": (("throw", "throw_bonus", "tb"), "count"),
    "crit_bonus": (("crit", "crit_bonus"), "signed"),
    "armor": (("armor", "armour"), "count"),
    "shield": (("shield",), "count"),
    "parry": (("parry", "dodge", "parry_dodge"), "count"),
    "luck": (("luck",), "count"),
    "heal": (("heal",), "count"),
    "ammo": (("ammo",), "optional"),
    "hp": (("hp", "health"), "optional"),
    "damage": (("damage",), "count"),
    "stunned": (("stunned",), "bool"),
    # which side of the fight the combatant is on (party, foes, …): no rule reads it; the web
    # table aims an attack at the other side by default. Kept only once given, so a fight
    # written before it reads, and runs again, as it was.
    "side": (("side", "team"), "side"),
}
ADD_ONLY_NOT = ("damage", "stunned")
_WORDS = {w: key for key, (words, _) in FIELDS.items() for w in words}
LAST_TURN_FLAGS = ("berserk", "defensive", "threw", "whiffed")
_FLAG_STATE = {"berserk": BERSERK_LAST_TURN, "defensive": DEFENSIVE_LAST_TURN,
               "threw": THREW_LAST_TURN, "whiffed": WHIFFED_LAST_TURN}
_MAX = 10_000


def new_combatant(name: str) -> dict[str, Any]:
    """A combatant with every number at its starting value."""
    return {"name": name, "attack": 0, "weapon": 0, "class": None, "throw_bonus": 0,
            "crit_bonus": 0, "armor": 0, "shield": 0, "parry": 0, "luck": 0, "heal": 0,
            "ammo": None, "hp": None, "damage": 0, "stunned": False, "last_turn": [],
            "criticals": []}


def _field_value(key: str, kind: str, text: str, word: str) -> Any:
    low = text.strip().lower()
    if kind == "class":
        if low in ("-", "none", ""):
            return None
        if len(low) == 1 and low.isalpha():
            return low.upper()
        raise FightError(f"{word}: a weapon class is one letter such as C or D (or '-' for "
                         f"none), not '{text}'")
    if kind == "bool":
        if low in ("true", "yes", "on", "1"):
            return True
        if low in ("false", "no", "off", "0"):
            return False
        raise FightError(f"{word} takes true or false, not '{text}'")
    if kind == "optional" and low in ("-", "none", ""):
        return None
    if kind == "side":
        if low in ("-", "none", ""):
            return None
        if not _is_side(text.strip()):
            raise FightError(f"{word} is one word of up to 20 letters, digits, '-' or '_', "
                             f"such as party or foes (or '-' for none), not '{text}'")
        return text.strip()
    signed = kind == "signed"
    digits = low[1:] if signed and low[:1] in "+-" else low
    if not is_digits(digits) or len(digits) > 5 or int(digits) > _MAX:
        what = (f"a whole number from -{_MAX:,} to {_MAX:,}, such as +2 or -1" if signed
                else f"a whole number from 0 to {_MAX:,}")
        extra = " (or '-' for not tracked)" if kind == "optional" else ""
        raise FightError(f"{word} takes {what}{extra}, not '{text}'")
    return int(low)


def apply_fields(c: dict[str, Any], pairs: Sequence[str], allow_state: bool) -> list[str]:
    changed: list[str] = []
    for pair in pairs:
        word, sep, value = pair.partition("=")
        word = word.strip().lower().replace("-", "_")
        if not sep:
            raise FightError(f"write numbers as key=value, such as atk=4, not '{pair}'")
        key = _WORDS.get(word)
        if key is None:
            raise FightError(f"'{word}' is not a combatant's number; keys are "
                             f"{', '.join(sorted(_WORDS))}")
        if key in ADD_ONLY_NOT and not allow_state:
            raise FightError(f"{word} is part of the fight's state: change it with "
                             f"'fight set {c['name']} {word}=…'")
        c[key] = _field_value(key, FIELDS[key][1], value, word)
        changed.append(key)
    return changed


def check_combatant(c: Any, i: int) -> dict[str, Any]:
    where = f"combatant {i + 1}"
    if not isinstance(c, dict) or not isinstance(c.get("name"), str) or not c["name"]:
        raise FightError(f"the fight file is damaged: {where} has no name")
    where = f"combatant {c['name']}"
    base = new_combatant(c["name"])
    for key in base:
        if key not in c:
            raise FightError(f"the fight file is damaged: {where} has no '{key}'")
    for key, (_, kind) in FIELDS.items():
        if kind == "side":
            if not (c.get(key) is None or (isinstance(c[key], str) and _is_side(c[key]))):
                raise FightError(f"the fight file is damaged: {where} has {key} = "
                                 f"{json.dumps(c[key])}")
            continue
        v = c[key]
        ok = (kind == "class" and (v is None or (isinstance(v, str) and len(v) == 1
                                                  and v.isalpha()))) or \
             (kind == "bool" and isinstance(v, bool)) or \
             (kind == "optional" and (v is None or (type(v) is int and 0 <= v <= _MAX))) or \
             (kind == "count" and type(v) is int and 0 <= v <= 10 * _MAX) or \
             (kind == "signed" and type(v) is int and abs(v) <= _MAX)
        if not ok:
            raise FightError(f"the fight file is damaged: {where} has {key} = {json.dumps(v)}")
    if not isinstance(c["last_turn"], list) or any(f not in LAST_TURN_FLAGS
                                                   for f in c["last_turn"]):
        raise FightError(f"the fight file is damaged: {where} has last_turn = "
                         f"{json.dumps(c['last_turn'])}")
    if not isinstance(c["criticals"], list):
        raise FightError(f"the fight file is damaged: {where} has criticals that are not a list")
    return c




def _is_side(text: str) -> bool:
    return 0 < len(text) <= 20 and all(ch.isalnum() or ch in "-_" for ch in text)


def flag_state(flag: str) -> str:
    """A12: the defence state a last-turn flag stands for."""
    return _FLAG_STATE[flag]
