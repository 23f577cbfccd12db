"""d6 + skill on the game kit: one d6 as a procedure of its rules, the verdicts, and the words.

A side's die is a procedure (S7–S11): a first 1 calls a botch check that adds nothing (S7, S8), a
6 is rolled again and added while 6s come (S9, capped by ``max_explosions``). Its value is (what
the die adds, Botch, Critical). The verdict reads the sides' values (S1 the result, S2 against
#, S3 an opposed roll whose tie is rolled again, S6 no roll when calm) and, for a hit with a
rolled DMG, asks for the DMG die (S5); the kit rolls them and weighs them in the exact odds alike.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ...kit import AGAIN, Decision, Dice, Die, Game, d6, procedure, then
from . import rules as R
from .notation import Check, Side, parse
from .rules import KIND_TITLES, SWITCHES, kinds

__all__ = ["GAME", "forget", "skill_die"]

_FIRST = Die(range(1, 7), "d6", tones={R.CRITICAL_FACE: "crit"})  # a first 6 that explodes
_CHECK = Die(range(1, 7), "botch check", tones={R.BOTCH_FACE: "fumble"})


@lru_cache(maxsize=64)
def skill_die(explodes: bool, botches: bool, cap: int | None) -> Dice:
    """One d6 read at each face by S7–S11: (what it adds, Botch, Critical)."""
    exploding = explodes and cap != 0

    def read(roll: Any) -> tuple[int, bool, bool]:
        first = roll(_FIRST if exploding else d6)
        # S7: a first 1 calls the check die; S8: its 1 is a Botch, and the die counts 1
        checked = roll(_CHECK, added="check") if R.botch_checked(first, botches) else None
        botch = R.botched(checked)  # None: no check was rolled
        if checked is not None:
            return first, botch, False
        total = last = first
        n = 0
        while R.explodes(last, exploding) and (cap is None or n < cap):  # S9, S10
            last = roll(d6, added="exploded")
            total, n = total + last, n + 1
        return total, False, R.explodes(first, exploding)

    return procedure(read, "d6")


def forget() -> None:
    """Forget the dice's laws (a test that swaps a rule asks for it)."""
    skill_die.cache_clear()


def _die(kind: str, explode_on: str, botch_on: str, max_explosions: Any) -> Dice:
    cap = None if max_explosions == "none" else int(max_explosions)
    return skill_die(kind in kinds(explode_on), kind in kinds(botch_on), cap)


def _stressful(spec: Check, stressful: bool) -> bool:
    return stressful if spec.situation is None else spec.situation == "stressful"


def dice(spec: Check, explode_on: str, botch_on: str, max_explosions: Any,
         stressful: bool) -> dict[str, Dice]:
    """The sides' dice; none at all when the bonus alone succeeds in a calm moment (S6)."""
    if spec.may_skip_roll and R.automatic_success(spec.actor.bonus, spec.difficulty or 0,
                                                  _stressful(spec, stressful)):
        return {}
    sides = {"actor": _die(spec.actor.kind, explode_on, botch_on, max_explosions)}
    if spec.opposition is not None:
        sides["opposition"] = _die(spec.opposition.kind, explode_on, botch_on, max_explosions)
    return sides


def _side(value: tuple[int, bool, bool], side: Side, result: int) -> dict[str, Any]:
    """One side's record in the roll's result."""
    total, botch, critical = value
    return {"kind": side.kind, "die": total, "bonus": side.bonus, "result": result,
            "botch": botch, "critical": critical}


# The verdict is read on every pair of values the odds weigh: the words and the record, which
# only a roll needs, are given as functions (the kit calls them for a roll alone).


def verdict(actor: Any = None, opposition: Any = None, *, spec: Check, explode_on: str,
            botch_on: str, max_explosions: Any, opposed_tie: str, botch_check_on_opposed: str,
            stressful: bool) -> Any:
    """S1, S2, S3, S5, S6: the roll's outcome, the rule that decided it and its words."""
    if actor is None:  # S6: no roll
        b, d = spec.actor.bonus, spec.difficulty
        return Decision("success", "S6", f"S6: the bonus {b:+d} alone beats # {d} and the "
                        "situation is calm: Success without rolling",
                        {"kind": spec.actor.kind, "bonus": b, "difficulty": d,
                         "auto_success": True, "success": True, "botch": False,
                         "critical": False, "result": None})
    res = R.result(actor[0], spec.actor.bonus)
    if opposition is not None and spec.opposition is not None:
        return _opposed(actor, opposition, res, R.result(opposition[0], spec.opposition.bonus),
                        spec, explode_on, botch_on, max_explosions, opposed_tie,
                        botch_check_on_opposed)
    botch, critical = actor[1], actor[2]

    def a() -> dict[str, Any]:  # the record, for a roll
        return _side(actor, spec.actor, res)

    if spec.difficulty is None:  # no Difficulty: is it a Botch (S7, S8)
        return Decision("botch" if botch else "no_botch", "S8", lambda: "Botch!" if botch else (
            f"Result {res}" + (" (Critical)" if critical else "")), a, res)
    d = spec.difficulty
    outcome = R.check_outcome(res, botch, d)
    if spec.is_attack:  # ATK against a fixed DEF: S2 (higher than the DEF), S5
        return _damage({"botch": "botch", "failure": "miss", "success": "hit"}[outcome], "S2",
                       res, d, res - d, lambda: {**a(), "atk_result": res, "def_result": d,
                                                 "hit": outcome == "success", "margin": res - d},
                       spec, False, explode_on, botch_on, max_explosions)

    def said() -> tuple[str, ...]:
        line = {"botch": "Botch!", "success": f"{res} vs # {d}: Success (S2: higher than #)",
                "failure": f"{res} vs # {d}: Failure (S2: not higher than #)"}[outcome]
        if spec.may_skip_roll and spec.actor.bonus > d:
            return (f"S6: the bonus {spec.actor.bonus:+d} alone beats # {d}, but the situation "
                    "is stressful: roll"), line
        return (line,)

    return Decision(outcome, "S2", said, lambda: {**a(), "difficulty": d, "auto_success": False,
                                                  "success": outcome == "success"}, res)


def _opposed(actor: Any, opposition: Any, ra: int, rb: int, spec: Check, explode_on: str,
             botch_on: str, max_explosions: Any, opposed_tie: str,
             botch_check_on_opposed: str) -> Any:
    outcome, margin = R.opposed_verdict(ra - rb, actor[1], opposition[1], opposed_tie,
                                        botch_check_on_opposed)
    assert spec.opposition is not None
    side = spec.opposition

    def a() -> dict[str, Any]:
        return _side(actor, spec.actor, ra)

    def b() -> dict[str, Any]:
        return _side(opposition, side, rb)

    if outcome == "reroll":  # S3: a tie is rolled again
        return Decision(AGAIN, "S3", lambda: f"  {ra} vs {rb}: a tie — roll again (S3)",
                        lambda: {"actor": a(), "opposition": b(), "margin": 0,
                                 "outcome": "reroll"})

    def found() -> dict[str, Any]:
        out = {"actor": a(), "opposition": b(), "actor_result": ra, "opposition_result": rb,
               "margin": margin, "botch": actor[1], "opposition_botch": opposition[1],
               "critical": actor[2], "success": outcome == "success"}
        if spec.is_attack:
            out.update({"atk_result": ra, "def_result": rb, "hit": outcome == "success"})
        return out

    if spec.is_attack:
        said = {"botch": "botch", "failure": "miss", "success": "hit", "tie": "tie"}[outcome]
        return _damage(said, "S3", ra, rb, margin, found, spec, opposition[1], explode_on,
                       botch_on, max_explosions)

    def words() -> str:
        said = {"botch": "Botch!", "success": "Success", "failure": "Failure",
                "tie": "a tie, which stands (house rule)"}[outcome]
        if outcome == "success" and opposition[1]:
            said += " (the opposition botched)"
        elif outcome == "botch" and opposition[1]:
            said += " (both sides botched)"
        return f"{ra} vs {rb}: {said}"

    return Decision(outcome, "S3", words, found, margin)


def _attack_line(outcome: str, atk: int, dfn: int, def_botch: bool) -> str:
    if outcome == "botch":
        return "ATK Botch! (S7: usually a broken weapon)"
    if outcome == "hit":
        return f"ATK {atk} vs DEF {dfn}: hit" + (" (the DEF botched)" if def_botch else "")
    if outcome == "tie":
        return f"ATK {atk} vs DEF {dfn}: a tie, which stands (house rule)"
    return f"ATK {atk} vs DEF {dfn}: miss (S2: not higher than the DEF)"


def _damage(outcome: str, rule: str, atk: int, dfn: int, margin: int,
            found: Callable[[], dict[str, Any]], spec: Check, def_botch: bool, explode_on: str,
            botch_on: str, max_explosions: Any) -> Any:
    """The ATK's verdict and, on a hit, its DMG (S5): a rolled DMG (S9, S-A3) is rolled by the
    attacker, from the actor's faces, only on a hit."""
    hit = outcome == "hit"
    weapon = spec.dmg

    def said() -> str:
        return _attack_line(outcome, atk, dfn, def_botch)

    if hit and isinstance(weapon, Side):
        return then(_die("dmg", explode_on, botch_on, max_explosions), _rolled_dmg, outcome, rule,
                    margin, weapon, side="dmg", says=said, found=found)
    base = weapon if isinstance(weapon, int) else 0
    dmg = R.damage(base + margin) if hit else 0

    def lines() -> tuple[str, ...]:
        if hit and weapon is None:
            return said(), f"DMG = the margin, {dmg} (S5; no weapon DMG given)"
        if hit:
            return said(), f"DMG = base DMG {weapon} + margin {margin} = {dmg} (S5)"
        return (said(),)

    return Decision(outcome, rule, lines, lambda: {**found(), "dmg_bonus": margin if hit else 0,
                                                   "weapon_dmg": weapon, "dmg": dmg}, dmg)


def _rolled_dmg(value: tuple[int, bool, bool], outcome: str, rule: str, margin: int,
                weapon: Side) -> Decision:
    """S5 with a rolled DMG (S9, S-A3): the DMG roll's result plus the margin."""
    result = R.result(value[0], weapon.bonus)
    dmg = R.damage(result + margin)
    return Decision(outcome, rule, lambda: f"DMG = DMG roll {result} + margin {margin} = {dmg} "
                    "(S5)", lambda: {"dmg_bonus": margin, "weapon_dmg": result, "dmg": dmg,
                                     "dmg_roll": _side(value, weapon, result)}, dmg)


# --------------------------------------------------------------------------------------------
# The words of a side's die, from its dice's records


def line(side: str, value: Any, rolled: tuple[Any, ...], spec: Check) -> str:
    """``Skill: d6 shows 6, 6, 3: Critical (S9), 6 + 6 + 3 = 15 → 15 + 2 = 17``."""
    who = spec.dmg if side == "dmg" else spec.opposition if side == "opposition" else spec.actor
    assert isinstance(who, Side)
    total, botch, critical = value
    res = R.result(total, who.bonus)
    sign = "-" if who.bonus < 0 else "+"
    sums = f"{total} {sign} {abs(who.bonus)} = {res}"
    check = [d.face for d in rolled if d.added == "check"]
    chain = [d.face for d in rolled if d.added != "check"]
    if botch:
        said = "d6 shows 1, botch check (S7) shows 1 — Botch!"
    elif check:
        said = (f"d6 shows 1, botch check (S7) shows {check[0]}: no Botch, the die counts 1 "
                f"(S8) → {sums}")
    elif critical:
        capped = (" (the house cap on explosions ends the chain)"
                  if chain[-1] == R.CRITICAL_FACE else "")
        said = (f"d6 shows {', '.join(map(str, chain))}: Critical (S9), "
                f"{' + '.join(map(str, chain))} = {total}{capped} → {sums}")
    else:
        said = f"d6 shows {chain[0]} → {sums}"
    title = KIND_TITLES[who.kind]
    if side == "dmg":
        return f"DMG roll: {said}"
    if spec.opposition is None:
        return f"{title}: {said}"
    if who.kind not in ("atk", "def"):
        title = f"{'Actor' if side == 'actor' else 'Opposition'} ({title})"
    return f"  {title}: {said}"


def _order(spec: Check, opposed_tie: str) -> tuple[str, ...]:
    if spec.difficulty is None and spec.opposition is None:
        return ("botch", "no_botch")
    tie = ("tie",) if spec.opposition is not None and opposed_tie == "stand" else ()
    if spec.is_attack:
        return ("botch", "miss", *tie, "hit")
    return ("botch", "failure", *tie, "success")


def _value(spec: Check) -> str:
    if spec.difficulty is None and spec.opposition is None:
        return "result"
    return "DMG" if spec.is_attack else "margin" if spec.opposition is not None else "result"


GAME = Game("d6skill", "d6 + skill", parse, dice, aliases=("ds",), switches=SWITCHES,
            order=_order, value=_value, line=line, margin=True, examples=("d6+3", "d6+2 vs 5"),
            tones={"botch": "bad", "failure": "bad", "miss": "bad", "success": "good",
                   "hit": "good", "no_botch": "neutral", "tie": "neutral"})
GAME.verdict()(verdict)
