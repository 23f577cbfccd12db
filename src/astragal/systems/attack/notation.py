"""The notation of one exchange: an attack, optionally against a defender, and house rules.

::

    at: 5d6
    at: atk 4 wpn 3 berserk luck 1 vs armor 2 shield 1 parry 2
    at: atk 4 wpn 3 weapon D crit +2 vs armor 2 shield 1 parry 2 stunned
    at: 3d6 throw +1 vs 2d6 crit_dice_subtract=sixes_rolled

Grammar (words are case-insensitive; ``word=N`` may be written for ``word N``)::

    exchange := attacker ["vs" defender] switch*
    attacker := (Nd6 | "atk" N "wpn" N) ["weapon" CLASS] ["crit" ±N] ["throw" [+N]]
                ["berserk" | "defensive"] ["luck" [N]]
    defender := (Nd6 | ["armor" N] ["shield" N] ["parry" N | "dodge" N]) state*
    state    := "stunned" | "berserk_last_turn" | "defensive_last_turn" | "threw_last_turn"
              | "whiffed_last_turn" | "normal"        (after "vs", "berserk" etc. mean last turn)
    switch   := KEY=VALUE                              (a §6 house rule, see rules.DEFAULTS)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..._errors import LimitError, NotationError
from ..._limits import Limits
from ..._records import Record
from ...notation import Token, Tokens, tokenize
from .rules import (
    ALL_POOLS,
    BERSERK,
    BERSERK_LAST_TURN,
    DEFAULTS,
    DEFENCE_STATES,
    DEFENSIVE,
    DEFENSIVE_LAST_TURN,
    FILE_OPTIONS,
    NORMAL,
    STUNNED,
    THREW_LAST_TURN,
    WHIFFED_LAST_TURN,
    Rules,
    attack_dice,
    defence_pools,
    defence_rule,
    pool_size,
    rules_for,
)

POOL_FIELDS = {"ARMOR": "armor", "SHIELD": "shield", "PARRY/DODGE": "parry"}


class Attacker(Record):
    """What the attacker declares: dice (or ATTACK and WEAPON), weapon, stance, throw, Luck."""

    dice: int | None = None         # Nd6 written directly, instead of ATTACK and WEAPON
    attack: int | None = None       # ATTACK skill (A1)
    weapon: int | None = None       # WEAPON skill (A1)
    weapon_class: str | None = None  # A13, A17: C +1 critical die, D +2
    crit_bonus: int = 0             # A14
    thrown: bool = False            # A2
    throw_bonus: int = 0            # A2
    stance: str = NORMAL            # A3: berserk (+1 die) or defensive (−1 die)
    luck: int = 0                   # A4: Luck dice, rolled with the rest but shown apart

    @property
    def base(self) -> int:
        """A1 (or the Nd6 written): the dice before throw, stance and Luck."""
        if self.dice is not None:
            return self.dice
        return attack_dice(self.attack or 0, self.weapon or 0)

    @property
    def ordinary(self) -> int:
        """A1–A3: the attack dice that are not Luck dice (never below zero)."""
        return pool_size(self.base, self.thrown, self.throw_bonus, self.stance)

    @property
    def total(self) -> int:
        """A4, A5: every die rolled for the attack, Luck included."""
        return self.ordinary + self.luck

    def __str__(self) -> str:
        parts = [f"{self.dice}d6" if self.dice is not None
                 else f"atk {self.attack} wpn {self.weapon}"]
        if self.weapon_class:
            parts.append(f"weapon {self.weapon_class}")
        if self.crit_bonus:
            parts.append(f"crit {self.crit_bonus:+d}")
        if self.thrown:
            parts.append(f"throw +{self.throw_bonus}" if self.throw_bonus else "throw")
        if self.stance != NORMAL:
            parts.append(self.stance)
        if self.luck:
            parts.append(f"luck {self.luck}")
        return " ".join(parts)


class Defender(Record):
    """The defender: DEFENSE dice (Nd6, or ARMOR + SHIELD + PARRY/DODGE) and last turn's state."""

    dice: int | None = None
    armor: int = 0
    shield: int = 0
    parry: int = 0
    states: tuple[str, ...] = ()  # in A12's order

    def pools(self, threw_last_turn_defense: str = "full") -> tuple[str, ...]:
        """A12: the pools rolled (all of them for a defender written as Nd6)."""
        if self.dice is not None:
            return ALL_POOLS
        return defence_pools(self.states, threw_last_turn_defense)

    def rule(self) -> str:
        """A12: the first rule that applies."""
        return defence_rule(self.states)

    def dice_rolled(self, threw_last_turn_defense: str = "full") -> int:
        """A12: how many DEFENSE dice are rolled."""
        if self.dice is not None:
            return self.dice
        return sum(getattr(self, POOL_FIELDS[p]) for p in self.pools(threw_last_turn_defense))

    def __str__(self) -> str:
        if self.dice is not None:
            parts = [f"{self.dice}d6"]
        else:
            parts = [f"{name} {n}" for name, n in (("armor", self.armor), ("shield", self.shield),
                                                    ("parry", self.parry)) if n]
            parts = parts or ["armor 0"]
        return " ".join(parts + list(self.states))


class Exchange(Record):
    """One attack, optionally against a defender, with any house-rule switches written inline."""

    attacker: Attacker
    defender: Defender | None = None
    options: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        text = f"at: {self.attacker}"
        if self.defender is not None:
            text += f" vs {self.defender}"
        return text + "".join(f" {k}={v}" for k, v in self.options)


# --------------------------------------------------------------------------------------------
# Reading the notation

_DICE = re.compile(r"(\d*)d(\d+)$", re.ASCII)
_NUMBER = re.compile(r"[+-]?\d+$", re.ASCII)
_ATTACK_WORDS = {"atk": "attack", "attack": "attack", "wpn": "weapon", "weapon": "weapon",
                 "class": "class", "crit": "crit", "throw": "throw", "thrown": "throw",
                 "luck": "luck", "dice": "dice"}
_STANCE_WORDS = {"berserk": BERSERK, "defensive": DEFENSIVE, "defensively": DEFENSIVE,
                 "def": DEFENSIVE}
_DEFENCE_WORDS = {"armor": "armor", "armour": "armor", "shield": "shield", "parry": "parry",
                  "dodge": "parry", "dice": "dice"}
_STATE_WORDS = {
    "stunned": STUNNED, "stun": STUNNED,
    "berserk_last_turn": BERSERK_LAST_TURN, "was_berserk": BERSERK_LAST_TURN,
    "berserk": BERSERK_LAST_TURN,
    "defensive_last_turn": DEFENSIVE_LAST_TURN, "was_defensive": DEFENSIVE_LAST_TURN,
    "defensive": DEFENSIVE_LAST_TURN, "defensively": DEFENSIVE_LAST_TURN,
    "threw_last_turn": THREW_LAST_TURN, "threw": THREW_LAST_TURN, "thrown": THREW_LAST_TURN,
    "whiffed_last_turn": WHIFFED_LAST_TURN, "whiffed": WHIFFED_LAST_TURN,
    "whiff": WHIFFED_LAST_TURN,
    "normal": NORMAL,
}
_MAX_NUMBER = 10_000


def _word(tok: Token) -> str:
    return tok.lower.replace("-", "_")


def _is_switch(tok: Token) -> bool:
    key = _word(tok).partition("=")[0]
    return "=" in tok.text and key in DEFAULTS


def _number(toks: Tokens, tok: Token, text: str, what: str, signed: bool = False) -> int:
    if not _NUMBER.match(text) or (not signed and text.startswith("-")):
        kind = "a whole number such as +2 or -1" if signed else "a whole number"
        raise toks.error(f"{what} takes {kind}, not '{text}'", tok)
    digits = text.lstrip("+-")
    if len(digits) > 5 or int(digits) > _MAX_NUMBER:
        raise toks.error(f"{what} {text} is more than this engine allows ({_MAX_NUMBER})", tok)
    return int(text)


def _value(toks: Tokens, tok: Token, word: str, what: str, signed: bool = False,
           optional: bool = False) -> tuple[int | None, Token]:
    """The number after ``word`` (``word N``, ``word=N`` or ``wordN``)."""
    w = tok.lower
    if "=" in w:
        return _number(toks, tok, w.partition("=")[2], what, signed), tok
    if len(w) > len(word) and w.startswith(word):
        return _number(toks, tok, w[len(word):], what, signed), tok
    nxt = toks.peek()
    if nxt is not None and _NUMBER.match(nxt.text):
        toks.next()
        return _number(toks, nxt, nxt.text, what, signed), nxt
    if optional:
        return None, tok
    if nxt is None:
        raise toks.error_at_end(f"{what} needs a number: '{word} 3'")
    raise toks.error(f"{what} needs a number after '{word}', not '{nxt.text}'", nxt)


def _dice_count(toks: Tokens, tok: Token, m: re.Match[str]) -> int:
    if m.group(2) != "6":
        raise toks.error(f"d{m.group(2)} is not a die of this game: every die is a d6", tok)
    if not m.group(1):
        return 1
    return _number(toks, tok, m.group(1), "a dice count")


def _head(tok: Token, words: Mapping[str, str]) -> str | None:
    """Which field word a token starts (``atk``, ``atk=4``, ``crit+2``), if any."""
    w = _word(tok)
    key = w.partition("=")[0]
    if key in words:
        return key
    for word in sorted(words, key=len, reverse=True):
        if w.startswith(word) and _NUMBER.match(w[len(word):] or "x"):
            return word
    return None


def _read_attacker(toks: Tokens) -> tuple[Attacker, Token | None]:
    fields: dict[str, Any] = {}
    seen: dict[str, Token] = {}
    first = toks.peek()

    def once(name: str, tok: Token) -> None:
        if name in seen:
            raise toks.error(f"{name} is given twice", tok)
        seen[name] = tok

    while (tok := toks.peek()) is not None:
        w = _word(tok)
        if w == "vs" or _is_switch(tok):
            break
        toks.next()
        if m := _DICE.match(w):
            once("the attack dice", tok)
            fields["dice"] = _dice_count(toks, tok, m)
        elif w in _STANCE_WORDS:
            once("the stance (berserk or defensive)", tok)
            fields["stance"] = _STANCE_WORDS[w]
        elif (head := _head(tok, _ATTACK_WORDS)) is not None:
            field = _ATTACK_WORDS[head]
            if field in ("weapon", "class"):
                # "weapon 3" is the WEAPON skill (A1); "weapon D" / "class D" the class (A13)
                where: Token | None = tok
                if "=" in w:
                    value: str | None = tok.text.partition("=")[2]
                elif w == head:
                    where = toks.peek()
                    value = where.text if where is not None else None
                else:
                    value = w[len(head):]
                if value is not None and not _NUMBER.match(value):
                    assert where is not None
                    if not (len(value) == 1 and value.isalpha()):
                        raise toks.error(f"'{value}' is not a weapon class (one letter such as "
                                         f"C or D) or a WEAPON skill (a number)", where)
                    if where is not tok:
                        toks.next()
                    once("the weapon class", tok)
                    fields["weapon_class"] = value.upper()
                    continue
                if field == "class":
                    raise toks.error("class needs a letter such as C or D", tok)
            if field == "dice":
                once("the attack dice", tok)
                fields["dice"] = _value(toks, tok, head, "dice")[0]
            elif field == "attack":
                once("ATTACK", tok)
                fields["attack"] = _value(toks, tok, head, "ATTACK")[0]
            elif field == "weapon":
                once("WEAPON", tok)
                fields["weapon"] = _value(toks, tok, head, "WEAPON")[0]
            elif field == "crit":
                once("the Crit Bonus", tok)
                fields["crit_bonus"] = _value(toks, tok, head, "the Crit Bonus", signed=True)[0]
            elif field == "throw":
                once("throw", tok)
                bonus, _ = _value(toks, tok, head, "the Throw Bonus", optional=True)
                fields["thrown"] = True
                fields["throw_bonus"] = bonus or 0
            elif field == "luck":
                once("Luck", tok)
                n, _ = _value(toks, tok, head, "Luck", optional=True)
                fields["luck"] = 1 if n is None else n
        elif w in _DEFENCE_WORDS or w in _STATE_WORDS:
            raise toks.error(f"'{tok.text}' describes the defender: write it after 'vs'", tok)
        else:
            raise toks.unknown(tok, "part of an attack",
                               [*_ATTACK_WORDS, *_STANCE_WORDS, "crit", "throw", "luck", "vs"],
                               "expected 5d6, atk N wpn N, weapon C, crit +N, throw +N, "
                               "berserk, defensive, luck N")
    if not seen:
        msg = "no attack: expected dice such as '5d6' or skills such as 'atk 4 wpn 3'"
        if first is None or toks.peek() is None:
            raise toks.error_at_end(msg)
        raise toks.error(msg, toks.peek())  # type: ignore[arg-type]
    if "dice" in fields and ("ATTACK" in seen or "WEAPON" in seen):
        raise toks.error("give the attack dice (Nd6) or ATTACK and WEAPON, not both",
                         seen.get("ATTACK") or seen["WEAPON"])
    if "dice" not in fields:
        for name, other in (("ATTACK", "WEAPON"), ("WEAPON", "ATTACK")):
            if name in seen and other not in seen:
                raise toks.error(f"{name} is given without {other}: the attack dice are their "
                                 f"average, rounded down (A1)", seen[name])
        if "ATTACK" not in seen:
            raise toks.error("no attack dice: write 'Nd6' or 'atk N wpn N'", first)  # type: ignore[arg-type]
    return Attacker(**fields), first


def _read_defender(toks: Tokens, vs: Token) -> Defender:
    fields: dict[str, Any] = {}
    seen: dict[str, Token] = {}
    states: set[str] = set()
    while (tok := toks.peek()) is not None:
        w = _word(tok)
        if _is_switch(tok):
            break
        toks.next()
        if m := _DICE.match(w):
            if "dice" in seen:
                raise toks.error("the defence dice are given twice", tok)
            seen["dice"] = tok
            fields["dice"] = _dice_count(toks, tok, m)
        elif w in _STATE_WORDS:
            # "berserk last turn" may be written as three words
            if (t1 := toks.peek()) is not None and t1.lower == "last" and \
                    (t2 := toks.peek(1)) is not None and t2.lower == "turn":
                toks.i += 2
            if _STATE_WORDS[w] != NORMAL:
                states.add(_STATE_WORDS[w])
            seen.setdefault("state", tok)
        elif (head := _head(tok, _DEFENCE_WORDS)) is not None:
            field = _DEFENCE_WORDS[head]
            name = {"armor": "ARMOR", "shield": "SHIELD", "parry": "PARRY/DODGE",
                    "dice": "the defence dice"}[field]
            if field in seen:
                raise toks.error(f"{name} is given twice (PARRY and DODGE are one pool)"
                                 if field == "parry" else f"{name} is given twice", tok)
            seen[field] = tok
            fields[field] = _value(toks, tok, head, name)[0]
        elif w == "vs":
            raise toks.error("only one 'vs' is allowed", tok)
        elif w in _STANCE_WORDS or _head(tok, _ATTACK_WORDS) is not None or "=" in w:
            if "=" in w:
                raise toks.error(f"'{w.partition('=')[0]}' is not a house rule of this game; "
                                 f"they are {', '.join(sorted(DEFAULTS))}", tok)
            raise toks.error(f"'{tok.text}' describes the attack: write it before 'vs'", tok)
        else:
            raise toks.error(f"'{tok.text}' is not part of a defence: expected armor N, "
                             "shield N, parry N (or dodge N), Nd6, or a state such as stunned",
                             tok)
    if not any(k in seen for k in ("dice", "armor", "shield", "parry")):
        msg = "the defender has no dice: write 'vs armor 2 shield 1 parry 2' or 'vs 3d6'"
        tok = toks.peek()
        raise toks.error(msg, tok) if tok is not None else toks.error_at_end(msg)
    if "dice" in seen and any(k in seen for k in ("armor", "shield", "parry")):
        raise toks.error("give the defence dice (Nd6) or ARMOR, SHIELD and PARRY/DODGE, "
                         "not both", seen["dice"])
    if "dice" in seen and states:
        raise toks.error("a defence state (A12) needs the defender's ARMOR, SHIELD and "
                         "PARRY/DODGE: write 'vs armor 2 shield 1 parry 2 stunned'",
                         seen["state"])
    return Defender(states=tuple(s for s in DEFENCE_STATES if s in states), **fields)


def _read_switches(toks: Tokens) -> dict[str, tuple[str, Token]]:
    out: dict[str, tuple[str, Token]] = {}
    while (tok := toks.peek()) is not None:
        toks.next()
        key, _, value = _word(tok).partition("=")
        if "=" not in tok.text or key not in DEFAULTS:
            if "=" in tok.text:
                raise toks.error(f"'{key}' is not a house rule of this game; they are "
                                 f"{', '.join(sorted(DEFAULTS))}", tok)
            raise toks.error(f"'{tok.text}' is not understood here: house rules (key=value) "
                             "come last", tok)
        if key in FILE_OPTIONS:
            # a file path typed into a roll would let anyone who can roll (the web table) make
            # the server read its files: tables come only from the API, the CLI's -o, or a fight
            raise toks.error(f"{key} names a file, so it is not accepted inside a roll; give it "
                             f"as an option instead (astragal -o {key}=PATH)", tok)
        value = tok.text.partition("=")[2]
        # a list value such as 1,1,2,2,3,3,3: the tokenizer splits off the commas
        while (c := toks.peek()) is not None and c.text == "," and toks.peek(1) is not None:
            toks.next()
            value += "," + toks.next().text
        if key in out:
            raise toks.error(f"house rule {key} is given twice", tok)
        out[key] = (value, tok)
    return out


def parse(text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Exchange:
    """Read one exchange (after the ``at:`` prefix).

    >>> print(parse("at: ATK 4 WPN 3 Berserk luck=1 vs armour 2 dodge 2", 3, {}, Limits()))
    at: atk 4 wpn 3 berserk luck 1 vs armor 2 parry 2
    """
    toks = tokenize(text, start)
    if toks.at_end():
        raise toks.error_at_end("nothing to roll: expected an attack such as '5d6' or "
                                "'atk 4 wpn 3 vs armor 2 shield 1 parry 2'")
    attacker, first = _read_attacker(toks)
    defender = None
    if (vs := toks.accept("vs")) is not None:
        defender = _read_defender(toks, vs)
    switches = _read_switches(toks)
    spec = Exchange(attacker, defender, tuple(sorted((k, v) for k, (v, _) in switches.items())))
    try:
        rules = rules_for({**options, **dict(spec.options)})
    except NotationError:
        raise
    except Exception as exc:
        from ..._errors import InputError

        if not isinstance(exc, InputError):
            raise
        bad = next((t for k, (_, t) in switches.items() if k in exc.message), None)
        raise type(exc)(exc.message, text, (bad.start, bad.end) if bad else None) from None
    check(spec, rules, limits, text, first)
    return spec


def check(spec: Exchange, rules: Rules, limits: Limits, text: str = "",
          first: Token | None = None) -> None:
    """Refuse an exchange beyond the Limits, or with no attack dice under cannot_attack (A-A8)."""
    a = spec.attacker
    span = (first.start, first.end) if first is not None else (0, len(text)) if text else None
    n = a.total  # A1–A4: the dice rolled, the stance's die and the Luck dice counted
    limits.check_dice(n, text, span)
    if spec.defender is not None:
        d = spec.defender
        limits.check_dice(d.dice if d.dice is not None else d.armor + d.shield + d.parry, text,
                          span)
    if n + rules.crit_dice_for(a.weapon_class) > limits.max_dice:
        raise LimitError(f"up to {n + rules.crit_dice_for(a.weapon_class)} critical dice is more "
                         f"than the limit of {limits.max_dice} dice per roll", text, span)
    if a.total == 0 and rules.zero_attack_dice == "cannot_attack":
        raise NotationError("no attack dice are left to roll (A-A8); the default house rule "
                            "zero_attack_dice=whiff counts this as a Whiff", text, span)
