"""The d6 + skill game (seed 004; RULES.md §5, rules S1–S14 and S-A1–S-A6; switches in §6).

One d6 plus a Trait or Skill and modifiers, against a Difficulty (#) or an opposed roll. A first 1
is checked for a Botch, a 6 on most rolls explodes into a Critical, ATK is opposed by DEF and the
margin becomes DMG.

Reading order: data and switches → the rules as pure functions of faces (one d6 read from its
faces, Success against #, the automatic Success, one round of an opposed roll, damage) → the
notation → rolling → exact odds → GM tables. Rolling and odds call the same rule functions.

>>> import astragal
>>> astragal.roll("ds: d6+2", faces="6,6,3").result["result"]
17
>>> round(astragal.odds("ds: d6+3 vs 6").outcomes["success"], 12)  # 4, 5 or a Critical 6
0.5
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .._errors import LimitError, OptionError
from .._limits import Limits
from .._rng import Source
from ..dice import Roll, Tray
from ..notation import Token, Tokens, tokenize
from ..odds import Distribution
from . import Odds

# --------------------------------------------------------------------------------------------
# Data and switches

SIDES = 6
BOTCH_FACE = 1  # S7
CRITICAL_FACE = 6  # S9

# The kinds of roll the seed names. S1/S-A6: every action is a Trait or Skill roll; ATK is a
# Skill roll (Melee, Projectile), DEF a Skill or Trait roll (Dodge, Block; S-A2).
KINDS = ("skill", "trait", "atk", "def", "dmg", "loot")
KIND_TITLES = {"skill": "Skill", "trait": "Trait", "atk": "ATK", "def": "DEF", "dmg": "DMG",
               "loot": "Loot"}
_KIND_WORDS = {"skill": "skill", "trait": "trait", "atk": "atk", "attack": "atk", "def": "def",
               "defense": "def", "defence": "def", "dmg": "dmg", "damage": "dmg", "loot": "loot"}
BOTCH_KINDS = KINDS  # S7: any roll may be checked for a Botch; botch_on says which are

TIE_RULES = ("reroll", "actor", "opposition", "stand")
BOTCH_ORDERS = ("before_ties", "after_ties")

DEFAULTS: dict[str, Any] = {
    # S9, S-A2, S-A6: 6s explode on Trait, Skill, DMG and Loot rolls; ATK and DEF are Skill or
    # Trait rolls, so they explode too. Kinds are joined with '+' ("skill+trait"), or "none".
    "explode_on": "skill+trait+atk+def+dmg+loot",
    # S7, S-A2, S10: "If you roll 1, re-roll to check for a Botch" exempts only the re-rolls of a
    # Critical chain, so every roll is checked by default, rolled DMG included (audit ruling).
    "botch_on": "skill+trait+atk+def+dmg+loot",
    # §5.3: the seed puts no cap on a Critical chain; a number caps the explosions per die.
    "max_explosions": "none",
    # S3: opposed ties are rolled again (the seed); house rules: actor or opposition wins ties,
    # or the tie stands.
    "opposed_tie": "reroll",
    # S-A4: a Botch decides an opposed round before ties are looked at.
    "botch_check_on_opposed": "before_ties",
    # S6: the engine cannot see the scene, so a roll is stressful unless marked 'calm'.
    "stressful": True,
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "opposed_tie": TIE_RULES,
    "botch_check_on_opposed": BOTCH_ORDERS,
}

SINGLE_OUTCOMES = ("botch", "no_botch")
CHECK_OUTCOMES = ("botch", "failure", "success")
ATK_OUTCOMES = ("botch", "miss", "hit")

# Where the unlimited Critical tail of one die is cut: below 1e-17 per die, so that even three
# dice (ATK, DEF, DMG) after conditioning on no tie lose far less than 1e-15 in all.
TAIL = 1e-17
_MAX_DIGITS = 6


@dataclass(frozen=True, slots=True)
class DieRules:
    """How one d6 of a given kind is read: does a 6 explode (S9), is a 1 checked (S7), the cap."""

    explodes: bool = True
    botches: bool = True
    max_explosions: int | None = None


@dataclass(frozen=True, slots=True)
class Rules:
    """The switches of §6 in checked, normalised form."""

    explode_on: frozenset[str]
    botch_on: frozenset[str]
    max_explosions: int | None
    opposed_tie: str
    botch_check_on_opposed: str
    stressful: bool

    def die(self, kind: str) -> DieRules:
        """The DieRules of a roll of this kind."""
        return DieRules(kind in self.explode_on, kind in self.botch_on, self.max_explosions)


def _kind_set(key: str, value: Any, allowed: Sequence[str]) -> frozenset[str]:
    if isinstance(value, str):
        words = [w for w in re.split(r"[+,|/ ]+", value.strip().lower()) if w]
    elif isinstance(value, Iterable):
        words = [str(w).lower() for w in value]
    else:
        raise OptionError(f"option {key} takes roll kinds joined with '+', not {value!r}")
    if words in (["none"], []):
        return frozenset()
    if words == ["all"]:
        return frozenset(allowed)
    out: set[str] = set()
    for w in words:
        kind = _KIND_WORDS.get(w)
        if kind is None or kind not in allowed:
            raise OptionError(f"option {key}: '{w}' is not a roll kind here; kinds are "
                              f"{', '.join(allowed)} (joined with '+'), or none / all")
        out.add(kind)
    return frozenset(out)


def _cap(value: Any) -> int | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("none", "")):
        return None
    if isinstance(value, bool):
        raise OptionError(f"option max_explosions takes a whole number or none, not {value!r}")
    text = str(value).strip()
    if not _DIGITS.fullmatch(text) or len(text) > _MAX_DIGITS:
        raise OptionError(f"option max_explosions takes a whole number (0 to 999999) or none, "
                          f"not {value!r}")
    return int(text)


def _flag(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "on", "off", "yes", "no",
                                                    "1", "0"):
        return value.lower() in ("true", "on", "yes", "1")
    raise OptionError(f"option {key} takes true or false, not {value!r}")


def make_rules(options: Mapping[str, Any]) -> Rules:
    """Check the switches (defaults overlaid with ``options``) and normalise them."""
    merged = {**DEFAULTS, **options}
    # the type is part of the key: True == 1, but max_explosions=True is an error and 1 is not
    key = tuple(sorted((k, type(v).__name__, v) for k, v in merged.items()))
    try:
        return _make_rules_cached(key)
    except TypeError:  # an unhashable value (a list of kinds from the API)
        return _make_rules(merged)


@lru_cache(maxsize=256)
def _make_rules_cached(key: tuple[tuple[str, str, Any], ...]) -> Rules:
    return _make_rules({k: v for k, _, v in key})


def _make_rules(merged: dict[str, Any]) -> Rules:
    unknown = set(merged) - set(DEFAULTS)
    if unknown:
        raise OptionError(f"'{min(unknown)}' is not a d6 + skill option; options are "
                          f"{', '.join(sorted(DEFAULTS))}")
    for key, choices in _CHOICES.items():
        if merged[key] not in choices:
            raise OptionError(f"option {key} takes one of {', '.join(choices)}, "
                              f"not {merged[key]!r}")
    return Rules(_kind_set("explode_on", merged["explode_on"], KINDS),
                 _kind_set("botch_on", merged["botch_on"], BOTCH_KINDS),
                 _cap(merged["max_explosions"]), str(merged["opposed_tie"]),
                 str(merged["botch_check_on_opposed"]), _flag("stressful", merged["stressful"]))


# --------------------------------------------------------------------------------------------
# The rules as pure functions of faces


@dataclass(frozen=True, slots=True)
class D6Roll:
    """One d6 as the rules read it: the faces it used, what it adds, Botch and Critical."""

    faces: tuple[int, ...]
    total: int
    botch: bool = False
    critical: bool = False

    @property
    def explosions(self) -> int:
        """How many times a 6 was rolled again (S9)."""
        return len(self.faces) - 1 if self.critical else 0


def read_d6(faces: Sequence[int], rules: DieRules = DieRules()) -> D6Roll | None:
    """Read one d6 from its faces in rolling order (S7–S11); None while a face is still needed.

    >>> read_d6([6, 6, 3])
    D6Roll(faces=(6, 6, 3), total=15, botch=False, critical=True)
    >>> read_d6([1, 6])
    D6Roll(faces=(1, 6), total=1, botch=False, critical=False)
    """
    if not faces:
        return None
    first = faces[0]
    if first == BOTCH_FACE and rules.botches:
        # S7: a first 1 is rolled again; S8, S11: anything but 1 is ignored (it never explodes)
        if len(faces) < 2:
            return None
        return D6Roll((first, faces[1]), 1, faces[1] == BOTCH_FACE, False)
    if first == CRITICAL_FACE and rules.explodes and rules.max_explosions != 0:
        # S9: roll again while 6s keep coming and add every roll; S10: no botch check inside
        i = 0
        while faces[i] == CRITICAL_FACE and (rules.max_explosions is None
                                             or i < rules.max_explosions):
            i += 1
            if i >= len(faces):
                return None
        used = tuple(faces[: i + 1])
        return D6Roll(used, sum(used), False, True)
    return D6Roll((first,), first)


def check_outcome(result: int, botch: bool, difficulty: int) -> str:
    """S2, S7: a Botch, a Success (the result is higher than #) or a Failure (equal or lower)."""
    if botch:
        return "botch"
    return "success" if result > difficulty else "failure"


def automatic_success(bonus: int, difficulty: int, stressful: bool) -> bool:
    """S6, S-A5: no roll when the bonus alone is higher than # and the moment is not stressful."""
    return not stressful and bonus > difficulty


def opposed_verdict(margin: int, actor_botch: bool, opposition_botch: bool,
                    rules: Rules) -> tuple[str, int]:
    """One round of an opposed roll: the actor's outcome and the margin that counts.

    ``margin`` is actor result − opposition result, a botched die counting 1 (S8). Outcomes:
    ``botch``, ``failure``, ``success``, ``reroll`` (S3: a tie is rolled again) or ``tie`` (the
    house rule opposed_tie=stand).
    """
    if rules.botch_check_on_opposed == "before_ties":  # S-A4: the botch check comes first
        decided = _botch_decides(margin, actor_botch, opposition_botch)
        if decided is not None:
            return decided
    if margin == 0:
        if rules.opposed_tie == "reroll":
            return "reroll", 0  # S3
        if rules.opposed_tie == "actor":
            return "success", 0
        if rules.opposed_tie == "opposition":
            return "failure", 0
        return "tie", 0
    decided = _botch_decides(margin, actor_botch, opposition_botch)
    if decided is not None:
        return decided
    return ("success" if margin > 0 else "failure"), margin


def _botch_decides(margin: int, actor_botch: bool, opposition_botch: bool) -> tuple[str, int] | None:
    if actor_botch:  # the actor's Botch stands even when both sides botch
        return "botch", margin
    if opposition_botch:
        # the opposition's Botch gives the actor the win; S-A1: a winning margin is at least 1
        return "success", max(1, margin)
    return None


def damage(margin: int, weapon_dmg: int) -> int:
    """S4, S5: DMG = the weapon's base DMG (rated or rolled) + the ATK's margin, never below 0."""
    return max(0, weapon_dmg + margin)


# --------------------------------------------------------------------------------------------
# The notation


@dataclass(frozen=True, slots=True)
class Side:
    """One roll as written: its kind and the modifiers added to the d6 (``skill d6+6-2``)."""

    kind: str = "skill"
    modifiers: tuple[int, ...] = ()

    @property
    def bonus(self) -> int:
        """S1: the Trait or Skill and every modifier, before the d6."""
        return sum(self.modifiers)

    def __str__(self) -> str:
        mods = "".join(f"{m:+d}" for m in self.modifiers)
        return ("" if self.kind == "skill" else f"{self.kind} ") + f"d6{mods}"


@dataclass(frozen=True, slots=True)
class Check:
    """A d6 + skill request: a roll, alone, against # or an opposed roll, with optional DMG."""

    actor: Side
    difficulty: int | None = None
    opposition: Side | None = None
    dmg: int | Side | None = None
    situation: str | None = None  # "calm" | "stressful" (S6); None = the switch's default
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def is_attack(self) -> bool:
        """An ATK roll (S4): against a DEF roll or a fixed DEF."""
        return self.actor.kind == "atk"

    @property
    def may_skip_roll(self) -> bool:
        """S6 can apply: a fixed # and not a combat roll (ATK and DEF are always stressful)."""
        return self.difficulty is not None and self.actor.kind not in ("atk", "def")

    def __str__(self) -> str:
        text = f"ds: {self.actor}"
        if self.difficulty is not None:
            text += f" vs {self.difficulty}"
        elif self.opposition is not None:
            text += f" vs {self.opposition}"
        if self.dmg is not None:
            text += f" dmg {self.dmg if isinstance(self.dmg, int) else str(self.dmg)[4:]}"
        if self.situation is not None:
            text += f" {self.situation}"
        return text + "".join(f" {k}={_opt_text(v)}" for k, v in self.options)


Spec = Check


def _opt_text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


_D6 = re.compile(r"([0-9]*)d([0-9]+)((?:[+-][0-9]+)*)$")
_MOD = re.compile(r"[+-][0-9]+")
_NUMBER = re.compile(r"#?([+-]?[0-9]+)#?$")
_DIGITS = re.compile(r"[0-9]+")


def _number(tok: Token, digits: str, toks: Tokens) -> int:
    if len(digits.lstrip("+-")) > _MAX_DIGITS:
        raise toks.error(f"{digits} is too large a number (at most {_MAX_DIGITS} digits)", tok)
    return int(digits)


def _read_side(toks: Tokens, where: str, kind: str | None, default_kind: str) -> Side:
    """``[kind] d6[+N...] [+N] [-N]``."""
    tok = toks.peek()
    if tok is None:
        raise toks.error_at_end(f"the {where} roll is missing: expected the d6, such as 'd6+3'")
    if kind is None and tok.lower in _KIND_WORDS and not _D6.match(tok.lower):
        kind = _KIND_WORDS[tok.lower]
        toks.next()
        tok = toks.peek()
        if tok is None:
            raise toks.error_at_end(f"the {where} roll is missing: expected the d6, such as "
                                    "'d6+3'")
    m = _D6.match(tok.lower)
    if not m:
        raise toks.error(f"'{tok.text}' is not a d6 + skill roll: expected the d6 and its "
                         "modifiers, such as 'd6+3'", tok)
    toks.next()
    if m.group(1) not in ("", "1"):
        raise toks.error("this game rolls one d6 (S1): write d6+N, not "
                         f"{m.group(1)}d{m.group(2)}", tok)
    if m.group(2) != "6":
        raise toks.error(f"d{m.group(2)[:6]} is not this game's die: it rolls one d6 (S1)", tok)
    mods = [_number(tok, d, toks) for d in _MOD.findall(m.group(3))]
    while (t := toks.peek()) is not None:
        if _MOD.fullmatch(t.text):
            toks.next()
            mods.append(_number(t, t.text, toks))
        elif t.text in ("+", "-") and (n := toks.peek(1)) is not None and _DIGITS.fullmatch(
                n.text):
            toks.next()
            toks.next()
            mods.append(_number(n, t.text + n.text, toks))
        else:
            break
    return Side(kind or default_kind, tuple(mods))


def parse(text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Check:
    """Read d6 + skill notation (after the ``ds:`` prefix).

    >>> print(parse("ds: atk d6+6 vs d6+3 dmg 4", 3, {}, Limits()))
    ds: atk d6+6 vs def d6+3 dmg 4
    """
    toks = tokenize(text, start)
    if toks.at_end():
        raise toks.error_at_end("nothing to roll: expected a roll such as 'd6+3 vs 5'")
    actor = _read_side(toks, "actor's", None, "skill")
    difficulty: int | None = None
    opposition: Side | None = None
    dmg: int | Side | None = None
    situation: str | None = None
    opts: dict[str, Any] = {}
    vs_tok = dmg_tok = sit_tok = None
    while (tok := toks.next() if not toks.at_end() else None) is not None:
        w = tok.lower
        if w == "vs":
            if vs_tok is not None:
                raise toks.error("only one 'vs' is allowed", tok)
            vs_tok = tok
            t = toks.peek()
            if t is None:
                raise toks.error_at_end("vs what? expected a Difficulty such as 'vs 5' or an "
                                        "opposed roll such as 'vs d6+2'")
            if t.text == "#" and (n := toks.peek(1)) is not None and _NUMBER.match(n.text):
                toks.next()
                t = n
            if (m := _NUMBER.match(t.text)) and not _D6.match(t.lower):
                toks.next()
                difficulty = _number(t, m.group(1), toks)
            else:
                opposition = _read_side(toks, "opposing", None,
                                        "def" if actor.kind == "atk" else "skill")
                _check_opposition(actor, opposition, t, toks)
        elif w in ("dmg", "damage"):
            if dmg_tok is not None:
                raise toks.error("the weapon's DMG is given twice", tok)
            dmg_tok = tok
            t = toks.peek()
            if t is None:
                raise toks.error_at_end("dmg what? expected the weapon's base DMG, such as "
                                        "'dmg 4' or a rolled DMG such as 'dmg d6+2'")
            if _DIGITS.fullmatch(t.text):
                toks.next()
                dmg = _number(t, t.text, toks)
            else:
                dmg = _read_side(toks, "DMG", "dmg", "dmg")
        elif w in ("calm", "stressful", "combat"):
            if sit_tok is not None:
                raise toks.error("say 'calm' or 'stressful' once", tok)
            sit_tok = tok
            situation = "calm" if w == "calm" else "stressful"
        elif "=" in w:
            _read_option(tok, toks, opts)
        elif w in _KIND_WORDS or _D6.match(w):
            raise toks.error(f"'{tok.text}' is out of place: a d6 + skill roll is 'd6+N', "
                             "'d6+N vs #' or 'd6+N vs d6+M'", tok)
        else:
            raise toks.error(f"'{tok.text}' is not understood here: expected vs, dmg N, calm, "
                             "stressful or key=value", tok)
    spec = Check(actor, difficulty, opposition, dmg, situation, tuple(sorted(opts.items())))
    _check_spec(spec, toks, vs_tok, dmg_tok, sit_tok)
    make_rules({**options, **opts})
    return spec


def _check_opposition(actor: Side, opposition: Side, tok: Token, toks: Tokens) -> None:
    if actor.kind == "atk":
        if opposition.kind != "def":
            raise toks.error("an ATK is opposed by the target's DEF roll (S4): write "
                             "'atk d6+N vs def d6+M'", tok)
    elif opposition.kind not in ("skill", "trait"):
        what = KIND_TITLES[opposition.kind]
        if opposition.kind == "def":
            raise toks.error("a DEF roll opposes an ATK (S4): write 'atk d6+N vs def d6+M'", tok)
        raise toks.error(f"a {what} roll cannot oppose this roll: opposed rolls are Skill or "
                         "Trait rolls (S3), or ATK against DEF (S4)", tok)
    if actor.kind in ("def", "dmg", "loot"):
        raise toks.error(f"a {KIND_TITLES[actor.kind]} roll is not opposed: write the ATK first "
                         "('atk d6+N vs def d6+M') or roll it against a Difficulty", tok)


def _check_spec(spec: Check, toks: Tokens, vs_tok: Token | None,
                dmg_tok: Token | None, sit_tok: Token | None) -> None:
    if spec.actor.kind == "dmg" and vs_tok is not None:
        raise toks.error("a DMG roll is not made against anything: write 'dmg d6+N' alone",
                         vs_tok)
    if dmg_tok is not None:
        if not spec.is_attack:
            raise toks.error("a weapon's DMG goes with an ATK roll (S5): write "
                             "'atk d6+N vs def d6+M dmg D'", dmg_tok)
        if vs_tok is None:
            raise toks.error("DMG needs the ATK's margin over a DEF: write "
                             "'atk d6+N vs def d6+M dmg D'", dmg_tok)
    if sit_tok is not None and spec.situation == "calm":
        if spec.difficulty is None:
            raise toks.error("'calm' (S6: automatic Success) needs a Difficulty: write "
                             "'d6+N vs # calm'", sit_tok)
        if spec.actor.kind in ("atk", "def"):
            raise toks.error("ATK and DEF rolls are combat, which is always stressful (S6)",
                             sit_tok)
    if sit_tok is not None and spec.difficulty is None:
        raise toks.error("'stressful' matters only against a Difficulty (S6)", sit_tok)


def _read_option(tok: Token, toks: Tokens, opts: dict[str, Any]) -> None:
    key, _, value = tok.lower.partition("=")
    key = key.replace("-", "_")
    if key not in DEFAULTS:
        raise toks.error(f"'{key}' is not a d6 + skill option; options are "
                         f"{', '.join(sorted(DEFAULTS))}", tok)
    if key in opts:
        raise toks.error(f"option {key} is given twice", tok)
    if (n := toks.peek()) is not None and n.text == ",":
        raise toks.error("join the kinds with '+' in the notation, e.g. explode_on=skill+trait", n)
    try:
        if key in ("explode_on", "botch_on"):
            kinds = _kind_set(key, value, KINDS if key == "explode_on" else BOTCH_KINDS)
            opts[key] = "+".join(k for k in KINDS if k in kinds) or "none"
        elif key == "max_explosions":
            cap = _cap(value)
            opts[key] = "none" if cap is None else cap
        elif key == "stressful":
            opts[key] = _flag(key, value)
        else:
            if value not in _CHOICES[key]:
                raise OptionError(f"option {key} takes one of {', '.join(_CHOICES[key])}")
            opts[key] = value
    except OptionError as exc:
        raise toks.error(exc.message, tok) from None


# --------------------------------------------------------------------------------------------
# Rolling


def _describe(d: D6Roll, side: Side, rules: DieRules) -> str:
    """How one d6 was read, in the game's words: ``d6 shows 6, 6, 3: Critical (S9) …``."""
    result = d.total + side.bonus
    sign = "-" if side.bonus < 0 else "+"
    sum_text = f"{d.total} {sign} {abs(side.bonus)} = {result}"
    if d.botch:
        return "d6 shows 1, botch check (S7) shows 1 — Botch!"
    if d.faces[0] == BOTCH_FACE and rules.botches:
        return (f"d6 shows 1, botch check (S7) shows {d.faces[1]}: no Botch, the die counts 1 "
                f"(S8) → {sum_text}")
    if d.critical:
        chain = " + ".join(map(str, d.faces))
        capped = (rules.max_explosions is not None and d.explosions == rules.max_explosions
                  and d.faces[-1] == CRITICAL_FACE)
        return (f"d6 shows {', '.join(map(str, d.faces))}: Critical (S9), {chain} = {d.total}"
                + (" (the house cap on explosions ends the chain)" if capped else "")
                + f" → {sum_text}")
    return f"d6 shows {d.faces[0]} → {sum_text}"


def roll_d6(tray: Tray, rules: DieRules, group: str, stream: int, limits: Limits,
            text: str) -> D6Roll:
    """Roll one d6 face by face until ``read_d6`` can read it (S7–S11)."""
    faces: list[int] = []
    while (d := read_d6(faces, rules)) is None:
        if faces and faces[0] == CRITICAL_FACE and len(faces) > limits.max_explosions:
            raise LimitError(f"a Critical chain of more than {limits.max_explosions} explosions "
                             f"is beyond the explosion limit", text, (0, len(text)))
        if not faces:
            note = ""
        elif faces[0] == BOTCH_FACE:
            note = "botch check"
        else:
            note = "Critical re-roll"
        idx = tray.roll(SIDES, group, stream, note)
        faces.append(tray.face(idx))
    if d.faces[0] == BOTCH_FACE and len(d.faces) == 2:
        # the botch check's face is never added (S8): it only confirms or clears the Botch
        tray.drop(idx, "botch check: Botch" if d.botch else "botch check (ignored, S8)")
    return d


def _side_json(d: D6Roll, side: Side) -> dict[str, Any]:
    return {"kind": side.kind, "faces": list(d.faces), "die": d.total, "bonus": side.bonus,
            "result": d.total + side.bonus, "botch": d.botch, "critical": d.critical}


def roll(spec: Check, source: Source, options: Mapping[str, Any], limits: Limits,
         text: str) -> Roll:
    """Roll a d6 + skill spec with faces from ``source``; the verdict comes from the rules."""
    rules = make_rules(options)
    tray = Tray(source, limits)
    lines = [f"d6 + skill: {str(spec)[4:]}"]
    actor = spec.actor
    title = KIND_TITLES[actor.kind]
    if spec.difficulty is not None and spec.may_skip_roll:
        stressful = rules.stressful if spec.situation is None else spec.situation == "stressful"
        if automatic_success(actor.bonus, spec.difficulty, stressful):
            lines.append(f"S6: the bonus {actor.bonus:+d} alone beats # {spec.difficulty} and the "
                         "situation is calm: Success without rolling")
            source.finish()
            return Roll("d6skill", text, "success",
                        {"kind": actor.kind, "bonus": actor.bonus, "difficulty": spec.difficulty,
                         "auto_success": True, "success": True, "botch": False,
                         "critical": False, "result": None},
                        tray.freeze(), tuple(lines), spec)
        if actor.bonus > spec.difficulty:
            lines.append(f"S6: the bonus {actor.bonus:+d} alone beats # {spec.difficulty}, but the "
                         "situation is stressful: roll")
    if spec.opposition is not None:
        return _roll_opposed(spec, tray, rules, limits, text, lines)
    d = roll_d6(tray, rules.die(actor.kind), "actor", 0, limits, text)
    lines.append(f"{title}: {_describe(d, actor, rules.die(actor.kind))}")
    result = _side_json(d, actor)
    res = d.total + actor.bonus
    if spec.difficulty is None:
        source.finish()
        outcome = "botch" if d.botch else "no_botch"
        lines.append("Botch!" if d.botch else f"Result {res}" + (" (Critical)" if d.critical
                                                                  else ""))
        return Roll("d6skill", text, outcome, result, tray.freeze(), tuple(lines), spec)
    verdict = check_outcome(res, d.botch, spec.difficulty)
    if spec.is_attack:  # ATK against a fixed DEF: S2 (higher than DEF) and S5
        hit = verdict == "success"
        margin = res - spec.difficulty
        result.update({"atk_result": res, "def_result": spec.difficulty, "hit": hit,
                       "margin": margin})
        outcome = {"botch": "botch", "failure": "miss", "success": "hit"}[verdict]
        lines.append(_attack_line(res, spec.difficulty, d.botch, False, outcome))
        _roll_damage(spec, tray, rules, limits, text, lines, result, hit, margin)
        source.finish()
        return Roll("d6skill", text, outcome, result, tray.freeze(), tuple(lines), spec)
    result.update({"difficulty": spec.difficulty, "auto_success": False,
                   "success": verdict == "success"})
    source.finish()
    words = {"botch": "Botch!", "success": "Success (S2: higher than #)",
             "failure": "Failure (S2: not higher than #)"}[verdict]
    lines.append(f"{res} vs # {spec.difficulty}: {words}" if verdict != "botch" else words)
    return Roll("d6skill", text, verdict, result, tray.freeze(), tuple(lines), spec)


def _attack_line(atk: int, dfn: int, botch: bool, def_botch: bool, outcome: str) -> str:
    if botch:
        return "ATK Botch! (S7: usually a broken weapon)"
    if outcome == "hit":
        why = " (the DEF botched)" if def_botch else ""
        return f"ATK {atk} vs DEF {dfn}: hit{why}"
    if outcome == "tie":
        return f"ATK {atk} vs DEF {dfn}: a tie, which stands (house rule)"
    return f"ATK {atk} vs DEF {dfn}: miss (S2: not higher than the DEF)"


def _roll_damage(spec: Check, tray: Tray, rules: Rules, limits: Limits, text: str,
                 lines: list[str], result: dict[str, Any], hit: bool, margin: int) -> None:
    weapon: int | None = None
    if hit and isinstance(spec.dmg, Side):  # S9, S-A3: a rolled DMG, rolled by the attacker
        d = roll_d6(tray, rules.die("dmg"), "dmg", 0, limits, text)
        lines.append(f"DMG roll: {_describe(d, spec.dmg, rules.die('dmg'))}")
        weapon = d.total + spec.dmg.bonus
        result["dmg_roll"] = _side_json(d, spec.dmg)
    elif isinstance(spec.dmg, int):
        weapon = spec.dmg
    dmg = damage(margin, weapon or 0) if hit else 0
    result.update({"dmg_bonus": margin if hit else 0, "weapon_dmg": weapon, "dmg": dmg})
    if hit and spec.dmg is None:
        lines.append(f"DMG = the margin, {dmg} (S5; no weapon DMG given)")
    elif hit:
        base = f"DMG roll {weapon}" if isinstance(spec.dmg, Side) else f"base DMG {weapon}"
        lines.append(f"DMG = {base} + margin {margin} = {dmg} (S5)")


def _side_title(side: Side, role: str) -> str:
    if side.kind in ("atk", "def"):
        return KIND_TITLES[side.kind]
    return f"{role} ({KIND_TITLES[side.kind]})"


def _roll_opposed(spec: Check, tray: Tray, rules: Rules, limits: Limits, text: str,
                  lines: list[str]) -> Roll:
    actor, opp = spec.actor, spec.opposition
    assert opp is not None
    ra, rb = rules.die(actor.kind), rules.die(opp.kind)
    rounds: list[dict[str, Any]] = []
    while True:
        if len(rounds) >= limits.max_rolls:  # §6: a safety cap on re-rolled ties
            raise LimitError(f"{limits.max_rolls} tied rounds in a row: the re-roll limit is "
                             f"{limits.max_rolls}", text, (0, len(text)))
        group = "" if not rounds else f" round {len(rounds) + 1}"
        a = roll_d6(tray, ra, f"actor{group}", 0, limits, text)
        b = roll_d6(tray, rb, f"opposition{group}", 1, limits, text)
        res_a, res_b = a.total + actor.bonus, b.total + opp.bonus
        verdict, margin = opposed_verdict(res_a - res_b, a.botch, b.botch, rules)
        rounds.append({"actor": _side_json(a, actor), "opposition": _side_json(b, opp),
                       "margin": res_a - res_b, "outcome": verdict})
        if len(rounds) > 1:
            lines.append(f"Round {len(rounds)}:")
        elif verdict == "reroll":
            lines.append("Round 1:")
        lines.append(f"  {_side_title(actor, 'Actor')}: {_describe(a, actor, ra)}")
        lines.append(f"  {_side_title(opp, 'Opposition')}: {_describe(b, opp, rb)}")
        if verdict == "reroll":
            lines.append(f"  {res_a} vs {res_b}: a tie — roll again (S3)")
            continue
        break
    result: dict[str, Any] = {"rounds": rounds, "actor_result": res_a, "opposition_result": res_b,
                              "margin": margin, "botch": a.botch, "opposition_botch": b.botch,
                              "critical": a.critical, "success": verdict == "success"}
    if spec.is_attack:
        outcome = {"botch": "botch", "failure": "miss", "success": "hit", "tie": "tie"}[verdict]
        result.update({"atk_result": res_a, "def_result": res_b, "hit": outcome == "hit"})
        lines.append(_attack_line(res_a, res_b, a.botch, b.botch, outcome))
        _roll_damage(spec, tray, rules, limits, text, lines, result, outcome == "hit", margin)
    else:
        outcome = verdict
        words = {"botch": "Botch!", "success": "Success", "failure": "Failure",
                 "tie": "a tie, which stands (house rule)"}[verdict]
        why = ""
        if verdict == "success" and b.botch:
            why = " (the opposition botched)"
        elif verdict == "botch" and b.botch:
            why = " (both sides botched)"
        lines.append(f"{res_a} vs {res_b}: {words}{why}")
    tray.source.finish()
    return Roll("d6skill", text, outcome, result, tray.freeze(), tuple(lines), spec)


# --------------------------------------------------------------------------------------------
# Exact odds


@dataclass(frozen=True, slots=True)
class D6Law:
    """The exact law of one d6 (S7–S11): P(total = t, no Botch) for t = 0..len−1, and the rest."""

    plain: tuple[float, ...]
    botch: float
    critical: float
    truncated: float


@lru_cache(maxsize=64)
def d6_law(rules: DieRules) -> D6Law:
    """The law of one d6 in closed form; an unlimited Critical tail is cut below ``TAIL``.

    A 1 is a Botch with 1/36 (S7); 2..5 show 1/6 each; an exploding 6 makes a chain of k sixes
    and then r in 1..5, total 6k + r, with probability 6^-(k+1) (S9); a capped chain ends on its
    last 6 (§6 max_explosions).
    """
    sixth = 1.0 / SIDES
    botch = sixth * sixth if rules.botches else 0.0
    p = {1: sixth - botch, 2: sixth, 3: sixth, 4: sixth, 5: sixth}
    critical = truncated = 0.0
    if not rules.explodes or rules.max_explosions == 0:
        p[6] = sixth
    else:
        critical = sixth
        k, reach = 1, sixth  # reach = P(the first k faces are all 6)
        while True:
            if rules.max_explosions is not None and k > rules.max_explosions:
                p[6 * k] = reach
                break
            for r in range(1, 6):
                p[6 * k + r] = sixth ** (k + 1)
            k += 1
            reach = sixth**k
            if reach < TAIL:  # a cap this far out changes nothing above the cut
                truncated = reach
                break
    plain = [0.0] * (max(p) + 1)
    for t, q in p.items():
        plain[t] = q
    return D6Law(tuple(plain), botch, critical, truncated)


def result_law(law: D6Law, bonus: int) -> dict[int, float]:
    """P(result = x) for d6 + bonus, a botched die counting 1 (S8)."""
    out = {t + bonus: q for t, q in enumerate(law.plain) if q}
    if law.botch:
        out[1 + bonus] = math.fsum((out.get(1 + bonus, 0.0), law.botch))
    return out


def _np_correlate(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """c[k] = Σ a[i]·b[j] over i − j = k − (len(b) − 1)."""
    import numpy as np

    return [float(x) for x in np.convolve(np.asarray(a), np.asarray(b)[::-1])]


@dataclass(frozen=True, slots=True)
class RoundLaw:
    """One opposed round, then the tie handling: outcome and counted-margin probabilities."""

    outcomes: dict[str, float]
    margins: dict[int, float]            # the counted margin, over every decided outcome
    hit_margins: dict[int, float]        # the counted margin where the actor succeeds
    tie_per_round: float
    opposition_botch: float
    truncated: float


def opposed_law(la: D6Law, bonus_a: int, lb: D6Law, bonus_b: int, rules: Rules) -> RoundLaw:
    """Exact odds of an opposed roll (S3, S-A1, S-A4) after ties are rolled again.

    One round splits into four blocks by who botched; within each the margin's law is a
    correlation of the two dice's laws. ``opposed_verdict`` (the rule) judges every (block,
    margin). Re-rolled ties repeat the round, so the final law is the round's law conditioned
    on no re-roll: P(x) / (1 − P(tie)), exact rather than a truncated loop.
    """
    blocks: list[tuple[bool, bool, int, Sequence[float]]] = []  # (a botch, b botch, offset, pmf)
    nn = _np_correlate(la.plain, lb.plain)
    blocks.append((False, False, bonus_a - bonus_b - (len(lb.plain) - 1), nn))
    if lb.botch:
        blocks.append((False, True, bonus_a - (1 + bonus_b), [q * lb.botch for q in la.plain]))
    if la.botch:
        blocks.append((True, False, (1 + bonus_a) - bonus_b - (len(lb.plain) - 1),
                       [la.botch * q for q in reversed(lb.plain)]))
    if la.botch and lb.botch:
        blocks.append((True, True, bonus_a - bonus_b, [la.botch * lb.botch]))
    outcomes: dict[str, list[float]] = {}
    margins: dict[int, list[float]] = {}
    hits: dict[int, list[float]] = {}
    opp_botch: list[float] = []
    for a_botch, b_botch, offset, pmf in blocks:
        for i, q in enumerate(pmf):
            if q <= 0.0:
                continue
            verdict, m = opposed_verdict(offset + i, a_botch, b_botch, rules)
            outcomes.setdefault(verdict, []).append(q)
            if verdict == "reroll":
                continue
            margins.setdefault(m, []).append(q)
            if verdict == "success":
                hits.setdefault(m, []).append(q)
            if b_botch:
                opp_botch.append(q)
    tie = math.fsum(outcomes.pop("reroll", []))
    scale = 1.0 / (1.0 - tie)  # S3: the conditional law of the round that decides
    lost = la.truncated + lb.truncated - la.truncated * lb.truncated

    def norm(acc: Mapping[Any, list[float]]) -> dict[Any, float]:
        return {k: math.fsum(v) * scale for k, v in acc.items()}

    return RoundLaw(norm(outcomes), norm(margins), norm(hits), tie,
                    math.fsum(opp_botch) * scale, lost * scale)


def damage_law(hit_margins: Mapping[int, float], miss: float, weapon: int | Side | None,
               rules: Rules) -> tuple[dict[int, float], float]:
    """The law of DMG (S5): 0 on a miss or Botch, else ``damage(margin, weapon DMG)``.

    A rolled DMG (S9, S-A3) is convolved with the margins; S5 depends only on their sum.
    Returns the law and the extra mass cut from the DMG roll's own tail.
    """
    acc: dict[int, list[float]] = {0: [miss]} if miss else {}
    if isinstance(weapon, Side):
        law = d6_law(rules.die("dmg"))
        wl = result_law(law, weapon.bonus)
        lo_m, lo_w = min(hit_margins), min(wl)
        ma = [0.0] * (max(hit_margins) - lo_m + 1)
        for m, q in hit_margins.items():
            ma[m - lo_m] = q
        wa = [0.0] * (max(wl) - lo_w + 1)
        for w, q in wl.items():
            wa[w - lo_w] = q
        conv = _np_correlate(ma, wa[::-1])  # a convolution: index k ↔ margin + weapon − lows
        for k, q in enumerate(conv):
            if q > 0.0:
                acc.setdefault(damage(k + lo_m + lo_w, 0), []).append(q)
        lost = law.truncated * math.fsum(hit_margins.values())
    else:
        for m, q in hit_margins.items():
            acc.setdefault(damage(m, weapon or 0), []).append(q)
        lost = 0.0
    return {k: math.fsum(v) for k, v in acc.items()}, lost


def odds(spec: Check, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    """The exact odds of a d6 + skill spec."""
    rules = make_rules(options)
    actor = spec.actor
    la = d6_law(rules.die(actor.kind))
    notes = [_law_note("actor", actor, rules)]
    extra: dict[str, Any] = {"p_critical": la.critical}
    if spec.opposition is not None:
        return _opposed_odds(spec, rules, la, text, notes, extra)
    ra = result_law(la, actor.bonus)
    res_dist = Distribution.from_mapping(ra, la.truncated)
    if spec.difficulty is None:
        out = {"botch": la.botch, "no_botch": 1.0 - la.botch}
        return Odds("d6skill", text, Distribution.from_mapping(out, order=SINGLE_OUTCOMES),
                    res_dist, "result", tuple(notes), extra)
    if spec.may_skip_roll:
        stressful = rules.stressful if spec.situation is None else spec.situation == "stressful"
        if automatic_success(actor.bonus, spec.difficulty, stressful):
            notes.append(f"S6: the bonus {actor.bonus:+d} alone beats # {spec.difficulty} and the "
                         "situation is calm: Success without rolling")
            out = {"botch": 0.0, "failure": 0.0, "success": 1.0}
            return Odds("d6skill", text, Distribution.from_mapping(out, order=CHECK_OUTCOMES),
                        Distribution.from_mapping({}), "result", tuple(notes),
                        {"p_critical": 0.0, "auto_success": True})
        if actor.bonus > spec.difficulty:
            notes.append("S6: the bonus alone beats #, but the situation is stressful: roll")
    parts: dict[str, list[float]] = {k: [] for k in CHECK_OUTCOMES}
    parts["botch"].append(la.botch)
    for t, q in enumerate(la.plain):
        if q:
            parts[check_outcome(t + actor.bonus, False, spec.difficulty)].append(q)
    out = {k: math.fsum(v) for k, v in parts.items()}
    if not spec.is_attack:
        extra["auto_success"] = False
        return Odds("d6skill", text, Distribution.from_mapping(out, order=CHECK_OUTCOMES),
                    res_dist, "result", tuple(notes), extra)
    # ATK against a fixed DEF: a hit is higher than the DEF (S2), the margin goes to DMG (S5)
    hits = {t + actor.bonus - spec.difficulty: q for t, q in enumerate(la.plain)
            if q and check_outcome(t + actor.bonus, False, spec.difficulty) == "success"}
    atk_out = {"botch": out["botch"], "miss": out["failure"], "hit": out["success"]}
    return _attack_odds(spec, rules, text, notes, extra, atk_out, hits, la.truncated,
                        ATK_OUTCOMES)


def _law_note(name: str, side: Side, rules: Rules) -> str:
    dr = rules.die(side.kind)
    parts = [f"{name}: {KIND_TITLES[side.kind]} d6 {side.bonus:+d}"]
    parts.append("botch check on a 1 (S7)" if dr.botches else "no botch check")
    if dr.explodes and dr.max_explosions != 0:
        cap = "" if dr.max_explosions is None else f", at most {dr.max_explosions} times"
        parts.append(f"6s explode (S9{cap})")
    else:
        parts.append("6s do not explode")
    return ", ".join(parts)


def _attack_odds(spec: Check, rules: Rules, text: str, notes: list[str], extra: dict[str, Any],
                 out: dict[str, float], hits: Mapping[int, float], truncated: float,
                 order: Sequence[str]) -> Odds:
    miss = math.fsum(v for k, v in out.items() if k != "hit")
    if hits:
        dmg, lost = damage_law(hits, miss, spec.dmg, rules)
    else:
        dmg, lost = {0: miss}, 0.0
    if isinstance(spec.dmg, Side):
        notes.append(_law_note("DMG roll", spec.dmg, rules))
    elif spec.dmg is None:
        notes.append("no weapon DMG given: DMG is the margin alone (S5)")
    extra["dmg_bonus"] = Distribution.from_mapping(hits).to_json()
    return Odds("d6skill", text, Distribution.from_mapping(out, order=order),
                Distribution.from_mapping(dmg, truncated + lost), "DMG", tuple(notes), extra)


def _opposed_odds(spec: Check, rules: Rules, la: D6Law, text: str, notes: list[str],
                  extra: dict[str, Any]) -> Odds:
    opp = spec.opposition
    assert opp is not None
    lb = d6_law(rules.die(opp.kind))
    notes.append(_law_note("opposition", opp, rules))
    rl = opposed_law(la, spec.actor.bonus, lb, opp.bonus, rules)
    if rules.opposed_tie == "reroll":
        notes.append(f"S3: a round ties with probability {rl.tie_per_round:.4g} and is rolled "
                     "again; these are the odds after the re-rolls")
    extra.update({"tie_per_round": rl.tie_per_round, "expected_rounds":
                  1.0 / (1.0 - rl.tie_per_round) if rules.opposed_tie == "reroll" else 1.0,
                  "p_opposition_botch": rl.opposition_botch,
                  "actor_result": Distribution.from_mapping(
                      result_law(la, spec.actor.bonus)).to_json(),
                  "opposition_result": Distribution.from_mapping(
                      result_law(lb, opp.bonus)).to_json()})
    tie_cat = ("tie",) if rules.opposed_tie == "stand" else ()
    if spec.is_attack:
        words = {"botch": "botch", "failure": "miss", "success": "hit", "tie": "tie"}
        out = dict.fromkeys(ATK_OUTCOMES + tie_cat, 0.0)
        for k, v in rl.outcomes.items():
            out[words[k]] += v
        return _attack_odds(spec, rules, text, notes, extra, out, rl.hit_margins, rl.truncated,
                            ("botch", "miss") + tie_cat + ("hit",))
    out = dict.fromkeys(CHECK_OUTCOMES + tie_cat, 0.0)
    out.update(rl.outcomes)
    return Odds("d6skill", text, Distribution.from_mapping(
        out, order=("botch", "failure") + tie_cat + ("success",)),
        Distribution.from_mapping(rl.margins, rl.truncated), "margin", tuple(notes), extra)


# --------------------------------------------------------------------------------------------
# GM tables


def success_table(options: Mapping[str, Any] = DEFAULTS, bonuses: Sequence[int] = range(11),
                  difficulties: Sequence[int] = range(3, 16)) -> list[list[str]]:
    """P(Success) of d6 + bonus (rows) against each # (columns), stressful (S2, S7, S9)."""
    rules = make_rules(options)
    law = d6_law(rules.die("skill"))
    rows = [["bonus"] + [f"#{d}" for d in difficulties]]
    for b in bonuses:
        row = [f"{b:+d}"]
        for d in difficulties:
            p = math.fsum(q for t, q in enumerate(law.plain) if q and t + b > d)
            row.append(f"{100 * p:.1f}%")
        rows.append(row)
    return rows


def opposed_table(options: Mapping[str, Any] = DEFAULTS,
                  differences: Sequence[int] = range(-6, 7)) -> list[list[str]]:
    """Opposed Skill rolls by the difference of bonuses: Success, Failure, Botch, tie per round."""
    rules = make_rules(options)
    law = d6_law(rules.die("skill"))
    rows = [["actor − opposition", "Success", "Failure", "Botch", "tie per round"]]
    for diff in differences:
        rl = opposed_law(law, diff, law, 0, rules)
        rows.append([f"{diff:+d}", f"{100 * rl.outcomes.get('success', 0.0):.2f}%",
                     f"{100 * rl.outcomes.get('failure', 0.0):.2f}%",
                     f"{100 * rl.outcomes.get('botch', 0.0):.2f}%",
                     f"{100 * rl.tie_per_round:.2f}%"])
    return rows


# --------------------------------------------------------------------------------------------
# The system object


@dataclass(frozen=True)
class _D6Skill:
    name: str = "d6skill"
    aliases: tuple[str, ...] = ("ds",)
    title: str = "d6 + skill"
    defaults: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULTS))

    def parse(self, text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Check:
        return parse(text, start, options, limits)

    def effective_options(self, spec: Check, options: Mapping[str, Any]) -> dict[str, Any]:
        return {**DEFAULTS, **options, **dict(spec.options)}

    def roll(self, spec: Check, source: Source, options: Mapping[str, Any], limits: Limits,
             text: str) -> Roll:
        return roll(spec, source, self.effective_options(spec, options), limits, text)

    def odds(self, spec: Check, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
        return odds(spec, self.effective_options(spec, options), limits, text)


SYSTEM = _D6Skill()

TABLES = {"success": success_table, "opposed": opposed_table}
