"""The D6 System's die codes (seed 002; RULES.md §3, rules D1–D15, D-A1…D-A6, D-X1…D-X6).

Reading order: data (difficulties, modifiers, success levels, options) → the rules as pure
functions (success level, result-point bonuses, the Wild Die's total) → the notation → preparing a
die code (bonuses, 3 pips = 1D) → rolling → exact odds → GM tables. Rolling and odds use the same
rule functions; the fast odds are checked against the rule enumerated over every face (tests).

Exact odds are exact integer counts over a power of 6, turned into floats only at the end (one
correctly rounded division each). Sums of d6 are polynomial powers, computed by packing the
polynomial into one big integer (Kronecker substitution) so that Python's own big-number
multiplication does the convolution.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
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

__all__ = [
    "DEFAULTS",
    "DIFFICULTIES",
    "LEVELS",
    "MODIFIERS",
    "SYSTEM",
    "TABLES",
    "DieCode",
    "Difficulty",
    "Prepared",
    "Side",
    "Spec",
    "Term",
    "damage_bonus",
    "dice_total",
    "difficulty_level",
    "half_bonus",
    "modifier_options",
    "odds",
    "parse",
    "prepare",
    "roll",
    "side_counts",
    "success_level",
    "total_distribution",
]

# --------------------------------------------------------------------------------------------
# Data

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
_MODIFIER_ALIASES = {"slight disadvantaged": "slightly disadvantaged",  # the seed's own spelling
                     "slight advantaged": "slightly advantaged"}

LEVELS = ("Minimal", "Solid", "Good", "Superior", "Spectacular", "Incredible")  # D10
CHECK_OUTCOMES = ("failure", "minimal", "solid", "good", "superior", "spectacular", "incredible")
PLAIN_OUTCOMES = ("no_complication", "complication")
AUTOMATIC_OUTCOMES = ("automatic",)

# D-X1: explosions kept in the exact odds; the chains cut off (20 sixes in a row) have
# probability 6^-20 ≈ 2.7e-16, under the 1e-15 the engine allows and reported as ``truncated``.
EXPLOSIONS_KEPT = 19
LOST_MASS = 1 / SIDES ** (EXPLOSIONS_KEPT + 1)

DEFAULTS: dict[str, Any] = {
    "incredible_from": 17,                     # D-A1 | 16
    "modifier_form": "numeric",                # D-A3 | "dice"
    "wild_die": False,                         # D-X1: off in the seed
    "wild_one": "drop_one_and_highest",        # D-X1 | "complication_only"
    "pips_carry": True,                        # D-X2: 3 pips = 1D
    "min_dice_after_penalty": 1,               # D-A4
    "penalty_below_min": "ignore",             # D-A4 | "minus_three" (−3 per die not taken)
    "opposed_tie": "actor",                    # D-X4 | "defender" | "reroll"
}
_CHOICES: dict[str, tuple[Any, ...]] = {
    "incredible_from": (17, 16),
    "modifier_form": ("numeric", "dice"),
    "wild_one": ("drop_one_and_highest", "complication_only"),
    "penalty_below_min": ("ignore", "minus_three"),
    "opposed_tie": ("actor", "defender", "reroll"),
}


def check_options(options: Mapping[str, Any]) -> None:
    """Refuse a switch value that is not one of its choices."""
    for key, choices in _CHOICES.items():
        value = options.get(key, DEFAULTS[key])
        if value not in choices:
            raise OptionError(f"option {key} takes one of {', '.join(map(str, choices))}, "
                              f"not '{value}'")
    low = options.get("min_dice_after_penalty", 1)
    if not isinstance(low, int) or isinstance(low, bool) or not 1 <= low <= 100:
        raise OptionError(f"option min_dice_after_penalty takes a whole number from 1 to 100 "
                          f"(every roll keeps at least one die), not '{low}'")


# --------------------------------------------------------------------------------------------
# The rules as pure functions


def success_level(result_points: int, incredible_from: int = 17) -> str | None:
    """D9, D10, D-A1: the success level of ``result_points`` (None for a failure, D15)."""
    if result_points < 0:
        return None
    if result_points == 0:
        return "Minimal"
    if result_points >= incredible_from:
        return "Incredible"
    return LEVELS[min(4, 1 + (result_points - 1) // 4)]  # bands of four: 1–4, 5–8, 9–12, 13–16


def half_bonus(result_points: int) -> int:
    """D11: half the result points, rounded up, as a bonus to another roll (0 on a failure)."""
    return -(-result_points // 2) if result_points > 0 else 0  # D-A6: only successes give one


def damage_bonus(result_points: int) -> int:
    """D12: one fifth of an attack's result points, rounded up, added to damage."""
    return -(-result_points // 5) if result_points > 0 else 0


def difficulty_level(number: int) -> str:
    """D-A2: the standard difficulty whose reconstructed range holds ``number``."""
    for name, (_, low, high) in DIFFICULTIES.items():
        if number >= low and (high is None or number <= high):
            return name
    raise ValueError(f"{number} is not a difficulty number")


def modifier_options(situation: str) -> tuple[str, ...]:
    """D5: the modifier a situation gives, in its numeric and (where offered) dice forms."""
    key = situation.lower().replace("-", " ").replace("_", " ")
    number, dice = MODIFIERS[_MODIFIER_ALIASES.get(key, key)]
    return (f"{number:+d}",) + (() if dice is None else (f"{dice:+d}D",))


def dice_total(regular: Sequence[int], wild: Sequence[int] = (),
               wild_one: str = "drop_one_and_highest") -> tuple[int, bool, int | None]:
    """The dice's part of a total from the faces: (sum, complication, index of a removed die).

    ``wild`` is the Wild Die's faces in order, each 6 followed by its re-roll (D-X1: a 6 adds and
    is rolled again). A 1 on its first roll is a complication; by default that 1 and the highest
    regular die are removed, with ``complication_only`` the 1 counts and the GM narrates.
    """
    if wild and wild[0] == 1 and wild_one == "drop_one_and_highest":
        if not regular:
            return 0, True, None
        top = max(range(len(regular)), key=lambda i: (regular[i], -i))  # first of the highest
        return sum(regular) - regular[top], True, top
    return sum(regular) + sum(wild), bool(wild) and wild[0] == 1, None


def wild_chain_done(wild: Sequence[int]) -> bool:
    """D-X1: the Wild Die keeps rolling while its last face is a 6."""
    return bool(wild) and wild[-1] != SIDES


# --------------------------------------------------------------------------------------------
# The notation


@dataclass(frozen=True, slots=True)
class DieCode:
    """A die code ``ND+p``: N six-sided dice summed, plus p pips (D1)."""

    dice: int
    pips: int = 0

    def __str__(self) -> str:
        if self.pips == 0:
            return f"{self.dice}D"
        return f"{self.dice}D{self.pips:+d}"


@dataclass(frozen=True, slots=True)
class Term:
    """One thing added to a die code: ``dice`` (+1D, +1D+2), ``pips`` (+2 pips), ``number`` (+2,
    D3) or a ``modifier`` by its situation name (D5)."""

    kind: str
    value: int = 0
    pips: int = 0
    name: str = ""

    def __str__(self) -> str:
        if self.kind == "dice":
            return f"{self.value:+d}D" + (f"+{self.pips}" if self.pips else "")
        if self.kind == "pips":
            return f"{self.value:+d} pip{'' if abs(self.value) == 1 else 's'}"
        if self.kind == "number":
            return f"{self.value:+d}"
        return self.name


@dataclass(frozen=True, slots=True)
class Side:
    """One side's roll as written: its die code and what is added to it, in order."""

    code: DieCode
    terms: tuple[Term, ...] = ()

    def __str__(self) -> str:
        return " ".join([str(self.code), *map(str, self.terms)])


@dataclass(frozen=True, slots=True)
class Difficulty:
    """A difficulty: a standard level by name (D6), a number, or a level with a chosen number."""

    level: str | None
    number: int

    @property
    def automatic(self) -> bool:
        """D7: Automatic (0) needs no roll."""
        return self.number == 0

    @property
    def title(self) -> str:
        name = self.level or difficulty_level(self.number)
        return name.title()

    def __str__(self) -> str:
        if self.level is None:
            return str(self.number)
        word = self.level
        if self.number != DIFFICULTIES[self.level][0]:
            return f"{word} ({self.number})"
        return word


@dataclass(frozen=True, slots=True)
class Spec:
    """A D6 System roll: the actor's die code, alone, against a difficulty, or opposed."""

    actor: Side
    difficulty: Difficulty | None = None
    opposition: Side | None = None
    wild: bool = False
    options: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        text = f"od6: {self.actor}"
        if self.wild:
            text += " wild"
        if self.difficulty is not None:
            text += f" vs {self.difficulty}"
        elif self.opposition is not None:
            text += f" vs {self.opposition}"
        return text + "".join(f" {k}={_opt_text(v)}" for k, v in self.options)


def _opt_text(v: Any) -> str:
    return ("on" if v else "off") if isinstance(v, bool) else str(v)


_CODE = re.compile(r"(\d+)d(?:([+-])(\d+))?$")
_D6_CODE = re.compile(r"(\d+)d6([+-]\d+)?$")
_DICE_TERM = re.compile(r"([+-])(\d+)d(?:\+(\d+))?$")
_NUMBER_TERM = re.compile(r"([+-])(\d+)$")
_PIPS_TERM = re.compile(r"([+-])(\d+)(?:pips?)$")
_DIGITS = 6  # longer numbers are refused before int() ever sees them
_QUALIFIERS = ("slightly", "slight", "very", "extremely")
_WORDS = {"advantaged", "disadvantaged"}


def _number(text: str, tok: Token, toks: Tokens) -> int:
    if len(text) > _DIGITS:
        raise LimitError(f"{text} is far beyond any D6 System number", toks.text,
                         (tok.start, tok.end))
    return int(text)


def _dice_count(text: str, tok: Token, toks: Tokens, limits: Limits) -> int:
    n = _number(text, tok, toks)
    if n > limits.max_dice:
        raise LimitError(f"{n} dice is more than the limit of {limits.max_dice} dice per roll",
                         toks.text, (tok.start, tok.end))
    return n


def _read_code(toks: Tokens, limits: Limits, side: str) -> DieCode:
    tok = toks.peek()
    if tok is None:
        raise toks.error_at_end(f"the {side} needs a die code such as 4D or 3D+2")
    w = tok.lower
    m = _CODE.match(w)
    if m is None:
        if _D6_CODE.match(w):
            raise toks.error(f"'{tok.text}': a D6 System die code is written without the die "
                             f"size, as {w.split('d')[0]}D (every die is a d6)", tok)
        raise toks.error(f"'{tok.text}' is not a die code: the {side} starts with a die code "
                         "such as 4D or 3D+2 (D1)", tok)
    toks.next()
    dice = _dice_count(m.group(1), tok, toks, limits)
    if dice == 0:
        raise toks.error("a die code has at least 1D", tok)
    pips = 0
    if m.group(2):
        pips = _number(m.group(3), tok, toks)
        if m.group(2) == "-" or pips > 2:
            # D1: a code's pips are +1 or +2; three pips are a die (D-X2)
            value = 3 * dice + (pips if m.group(2) == "+" else -pips)
            same = (f"{tok.text} is {DieCode(value // 3, value % 3)} (3 pips = 1D), "
                    if value >= 3 else "")
            raise toks.error(f"'{tok.text}': a die code's pips are +1 or +2 (D1); {same}or put "
                             f"a space before the number ('{dice}D {m.group(2)}{pips}') to add "
                             "it to the total", tok)
    return DieCode(dice, pips)


def _read_modifier(toks: Tokens) -> str | None:
    tok = toks.peek()
    if tok is None:
        return None
    word = tok.lower.replace("_", " ").replace("-", " ")
    if word in MODIFIERS or word in _MODIFIER_ALIASES:
        toks.next()
        return _MODIFIER_ALIASES.get(word, word)
    nxt = toks.peek(1)
    if word in _QUALIFIERS and nxt is not None and nxt.lower in _WORDS:
        name = f"{word} {nxt.lower}"
        name = _MODIFIER_ALIASES.get(name, name)
        if name in MODIFIERS:
            toks.i += 2
            return name
    return None


def _read_difficulty(toks: Tokens) -> str | None:
    """A standard difficulty by name (D6), one word or two ('very difficult', 'very-difficult')."""
    tok = toks.peek()
    if tok is None:
        return None
    word = tok.lower.replace("_", " ").replace("-", " ")
    if word in DIFFICULTIES:
        toks.next()
        return word
    nxt = toks.peek(1)
    if word == "very" and nxt is not None and f"very {nxt.lower}" in DIFFICULTIES:
        toks.i += 2
        return f"very {nxt.lower}"
    return None


def _read_side(toks: Tokens, limits: Limits, side: str, wild: list[bool]) -> Side:
    code = _read_code(toks, limits, side)
    terms: list[Term] = []
    while (tok := toks.peek()) is not None:
        w = tok.lower
        if w == "vs" or "=" in w:
            break
        if w == "wild":
            toks.next()
            wild.append(True)
            continue
        if (name := _read_modifier(toks)) is not None:
            terms.append(Term("modifier", name=name))
            continue
        toks.next()
        if w in ("+", "-"):  # a sign written apart from its number: '+ 1D', '- 2'
            nxt = toks.peek()
            if nxt is None:
                raise toks.error(f"'{w}' what? expected a bonus such as {w}1D or {w}2", tok)
            toks.next()
            w = w + nxt.lower
            tok = Token(tok.text + nxt.text, tok.start, nxt.end)
        if m := _DICE_TERM.match(w):
            n = _dice_count(m.group(2), tok, toks, limits)
            pips = _number(m.group(3), tok, toks) if m.group(3) else 0
            if m.group(1) == "-" and m.group(3):
                raise toks.error(f"write a dice penalty and its pips apart ('-{n}D "
                                 f"+{pips} pip{'s' if pips != 1 else ''}')", tok)
            if pips > 2:
                value = 3 * n + pips
                raise toks.error(f"'{tok.text}': a die code's pips are +1 or +2 (D1); "
                                 f"{tok.text} is {Term('dice', value // 3, value % 3)} "
                                 "(3 pips = 1D)", tok)
            terms.append(Term("dice", n if m.group(1) == "+" else -n, pips))
        elif m := _PIPS_TERM.match(w):
            n = _number(m.group(2), tok, toks)
            terms.append(Term("pips", n if m.group(1) == "+" else -n))
        elif m := _NUMBER_TERM.match(w):
            n = _number(m.group(2), tok, toks)
            n = n if m.group(1) == "+" else -n
            if toks.accept("pips", "pip") is not None:
                terms.append(Term("pips", n))
            else:
                terms.append(Term("number", n))  # D3: a number adds to the total
        elif w in ("pips", "pip"):
            raise toks.error("how many pips? write '+2 pips'", tok)
        else:
            raise toks.error(_unknown(tok.text, side), tok)
    return Side(code, tuple(terms))


def _unknown(word: str, side: str) -> str:
    return (f"'{word}' is not part of a D6 System {side} roll: expected a bonus (+1D, +2, "
            "+1 pip), a modifier (advantaged, very disadvantaged...), 'wild' or 'vs'")


_DIFFICULTY_HELP = ("automatic, very easy, easy, moderate, difficult, very difficult, heroic, "
                    "legendary")


def _read_against(toks: Tokens, limits: Limits,
                  wild: list[bool]) -> tuple[Difficulty | None, Side | None]:
    tok = toks.peek()
    if tok is None:
        raise toks.error_at_end("vs what? a difficulty (moderate, 16) or a die code (3D+1)")
    name = _read_difficulty(toks)
    if name is not None:
        number = DIFFICULTIES[name][0]
        if toks.accept("(") is not None:  # D-A2: a number chosen inside the level's range
            num_tok = toks.next()
            if not num_tok.text.isdigit():
                raise toks.error(f"expected the difficulty number, such as ({number})", num_tok)
            number = _number(num_tok.text, num_tok, toks)
            _, low, high = DIFFICULTIES[name]
            if number < low or (high is not None and number > high):
                span = f"{low}–{high}" if high is not None else f"{low} or more"
                raise toks.error(f"{name.title()} difficulties are {span} (D-A2)", num_tok)
            close = toks.next() if not toks.at_end() else None
            if close is None or close.text != ")":
                raise (toks.error("expected ')'", close) if close is not None
                       else toks.error_at_end("expected ')'"))
        return Difficulty(name, number), None
    if tok.text.isdigit():
        toks.next()
        return Difficulty(None, _number(tok.text, tok, toks)), None
    if _CODE.match(tok.lower) or _D6_CODE.match(tok.lower):
        return None, _read_side(toks, limits, "opposing", wild)
    if tok.text.startswith("-") and tok.text[1:].isdigit():
        raise toks.error("a difficulty number is 0 or more", tok)
    raise toks.error(f"'{tok.text}' is not a standard difficulty ({_DIFFICULTY_HELP}), a "
                     "difficulty number or a die code to oppose", tok)


def _read_options(toks: Tokens, opts: dict[str, Any], wild: list[bool],
                  after_difficulty: bool) -> None:
    while (tok := toks.peek()) is not None:
        w = tok.lower
        if w == "wild":
            toks.next()
            wild.append(True)
            continue
        if "=" in w:
            toks.next()
            key, _, value = w.partition("=")
            key = key.replace("-", "_")
            if key not in DEFAULTS:
                raise OptionError(f"'{key}' is not a D6 System option; options are "
                                  f"{', '.join(sorted(DEFAULTS))}", toks.text, (tok.start, tok.end))
            opts[key] = _option_value(key, value, tok, toks)
            continue
        if w == "vs":
            raise toks.error("only one 'vs' is allowed", tok)
        if after_difficulty and (_read_modifier(toks) is not None or _DICE_TERM.match(w)
                                 or _NUMBER_TERM.match(w) or _PIPS_TERM.match(w)):
            raise toks.error("modifiers change the roll, never the difficulty (D4): write them "
                             "before 'vs'", tok)
        raise toks.error(f"'{tok.text}' is not understood here", tok)


def _option_value(key: str, value: str, tok: Token, toks: Tokens) -> Any:
    def bad(message: str) -> OptionError:
        return OptionError(message, toks.text, (tok.start, tok.end))

    default = DEFAULTS[key]
    if isinstance(default, bool):
        if value not in ("true", "false", "on", "off", "yes", "no"):
            raise bad(f"option {key} takes on or off, not '{value}'")
        return value in ("true", "on", "yes")
    if isinstance(default, int):
        if not value.isdigit() or len(value) > 3:
            raise bad(f"option {key} takes a whole number, not '{value}'")
        number = int(value)
        choices = _CHOICES.get(key)
        if (choices is not None and number not in choices) or not 1 <= number <= 100:
            allowed = " or ".join(map(str, choices)) if choices else "1 to 100"
            raise bad(f"option {key} takes {allowed}, not {number}")
        return number
    if value not in _CHOICES[key]:
        raise bad(f"option {key} takes one of {', '.join(_CHOICES[key])}, not '{value}'")
    return value


def parse(text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Spec:
    """Read D6 System notation (after the ``od6:`` prefix).

    >>> print(parse("od6: 3D+2 +2 pips very-advantaged vs Moderate", 4, {}, Limits()))
    od6: 3D+2 +2 pips very advantaged vs moderate
    """
    toks = tokenize(text, start)
    if toks.at_end():
        raise toks.error_at_end("nothing to roll: expected a die code such as '4D+2 vs moderate'")
    wild: list[bool] = []
    opts: dict[str, Any] = {}
    actor = _read_side(toks, limits, "actor", wild)
    difficulty = opposition = None
    if toks.accept("vs") is not None:
        difficulty, opposition = _read_against(toks, limits, wild)
    _read_options(toks, opts, wild, difficulty is not None)
    spec = Spec(actor, difficulty, opposition, bool(wild), tuple(sorted(opts.items())))
    merged = {**DEFAULTS, **options, **opts}
    check_options(merged)
    for side in (spec.actor, spec.opposition):
        if side is not None:
            prep = prepare(side, merged)
            limits.check_dice(prep.dice, text, (start, len(text)))
    return spec


# --------------------------------------------------------------------------------------------
# Preparing a die code (shared by rolling and odds)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A side after its bonuses: dice to roll, pips and number added to the total, and why."""

    dice: int
    pips: int
    number: int
    steps: tuple[str, ...]

    @property
    def code(self) -> str:
        """The effective die code (``5D``, ``4D+1``; pips may exceed 2 when they do not carry)."""
        return str(DieCode(self.dice, self.pips))

    @property
    def added(self) -> int:
        """Everything added to the dice: pips and number bonuses."""
        return self.pips + self.number

    def __str__(self) -> str:
        return self.code + (f" {self.number:+d}" if self.number else "")


def prepare(side: Side, options: Mapping[str, Any]) -> Prepared:
    """D2–D5, D-X2, D-A3, D-A4: the dice to roll and what is added, from a side as written."""
    dice, pips, number = side.code.dice, side.code.pips, 0
    written = side.code.dice  # the dice before any penalty
    steps: list[str] = []
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
                steps.append(f"{term.name.capitalize()}: {in_dice:+d}D (D5)")
            else:
                number += value
                steps.append(f"{term.name.capitalize()}: {value:+d} (D5)")
    # D-A4 and the audit's ruling: a penalty never takes the last die(s) and never makes a roll
    # better: the floor is the minimum, but never more dice than were there before penalties
    low = min(options["min_dice_after_penalty"], written)
    if dice < low:
        short = low - dice
        dice = low
        if options["penalty_below_min"] == "minus_three":
            number -= 3 * short
            steps.append(f"at least {low}D is rolled; the {short}D not taken count "
                         f"{-3 * short:+d} (D-A4)")
        else:
            steps.append(f"at least {low}D is rolled (D-A4)")
    if options["pips_carry"] and not 0 <= pips <= 2:  # D-X2: 3 pips = 1D
        before = f"{dice}D{pips:+d}"
        if pips > 2:
            dice, pips = dice + pips // 3, pips % 3
        # negative pips take whole dice (3 pips each) while a die above the floor is left; a
        # remainder of 1 or 2 stays on the total (2D−1 is 2D−1, not 1D+2, which could roll 3
        # where 2D rolls 2: a penalty never makes any total more likely)
        while pips <= -3 and dice > low:
            dice, pips = dice - 1, pips + 3
        if before != f"{dice}D{pips:+d}":
            steps.append(f"{before} → {DieCode(dice, pips)} (3 pips = 1D)")
        if pips < 0:
            steps.append(f"{-pips} pip{'s' if pips < -1 else ''} cannot borrow a die below "
                         f"{low}D, so {'they count' if pips < -1 else 'it counts'} {pips:+d} on "
                         "the total (a penalty never makes a roll better)")
    return Prepared(dice, pips, number, tuple(steps))


def effective_options(spec: Spec, options: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults, the caller's options, then the options written in the notation."""
    merged = {**DEFAULTS, **options, **dict(spec.options)}
    if spec.wild:
        merged["wild_die"] = True
    return merged


# --------------------------------------------------------------------------------------------
# Rolling


@dataclass(slots=True)
class _Rolled:
    total: int
    faces: list[int]
    wild: list[int]
    complication: bool
    removed: int | None


def _roll_side(tray: Tray, prep: Prepared, name: str, stream: int, options: Mapping[str, Any],
               limits: Limits, lines: list[str]) -> _Rolled:
    """Roll one side's dice: the regular dice, then the Wild Die and its re-rolls (D-X1)."""
    group = name.lower().replace(",", "")
    wild_on = bool(options["wild_die"])
    n_regular = prep.dice - 1 if wild_on else prep.dice
    idx = [tray.roll(SIDES, group, stream) for _ in range(n_regular)]
    faces = [tray.face(i) for i in idx]
    wild: list[int] = []
    w_idx = None
    if wild_on:
        w_idx = tray.roll(SIDES, f"{group} wild", stream, "Wild Die")
        wild.append(tray.face(w_idx))
        while not wild_chain_done(wild):  # D-X1: a 6 adds and is rolled again
            if len(wild) > limits.max_explosions:
                raise LimitError(f"the Wild Die exploded more than {limits.max_explosions} "
                                 "times, the limit")
            wild.append(tray.reroll(w_idx, stream, "Wild Die"))
    dice_sum, complication, removed = dice_total(faces, wild, options["wild_one"])
    shown = ", ".join(map(str, faces))
    if wild_on:
        chain = " → re-rolled ".join(map(str, wild))
        wild_text = f"Wild Die {chain}"
        if len(wild) > 1:
            wild_text += f" (explodes: {'+'.join(map(str, wild))} = {sum(wild)})"
        shown = f"{shown} and the {wild_text}" if shown else f"the {wild_text}"
    lines.append(f"  {name} rolls {prep.code}: {shown}")
    if complication and w_idx is not None:
        if options["wild_one"] == "drop_one_and_highest":
            tray.drop(w_idx, "Wild Die: complication (1 on its first roll), removed")
            if removed is not None:
                tray.drop(idx[removed], "removed with the Wild Die's 1 (the highest other die)")
                lines.append(f"  Complication: the Wild Die shows 1 on its first roll; it and the "
                             f"highest other die ({faces[removed]}) are removed (D-X1)")
            else:
                lines.append("  Complication: the Wild Die, the only die, shows 1 on its first "
                             "roll and is removed (D-X1)")
        else:
            lines.append("  Complication: the Wild Die shows 1 on its first roll; the 1 counts "
                         "and the GM adds a complication (D-X1)")
    total = dice_sum + prep.added
    parts = [f"dice {dice_sum}"]
    if removed is not None:
        parts = [f"dice {'+'.join(map(str, faces))} − {faces[removed]} = {dice_sum}"]
    if prep.pips:
        parts.append(f"{prep.pips:+d} pip{'s' if abs(prep.pips) != 1 else ''}")
    if prep.number:
        parts.append(f"{prep.number:+d}")
    lines.append(f"  {name} total: {' '.join(parts)} = {total}" if len(parts) > 1
                 else f"  {name} total: {total}")
    return _Rolled(total, faces, wild, complication, removed)


def _side_lines(side: Side, prep: Prepared, name: str, lines: list[str]) -> None:
    lines.append(f"{name}: {side}" + (f" → rolls {prep}" if str(prep) != str(side) else ""))
    for step in prep.steps:
        lines.append(f"  {step}")


def _side_result(prep: Prepared, rolled: _Rolled) -> dict[str, Any]:
    out: dict[str, Any] = {"code": prep.code, "dice_rolled": prep.dice, "pips": prep.pips,
                           "bonus": prep.number, "faces": rolled.faces, "total": rolled.total}
    if rolled.wild:
        out["wild"] = rolled.wild
        out["complication"] = rolled.complication
        if rolled.removed is not None:
            out["removed"] = rolled.faces[rolled.removed]
    return out


def _verdict(result_points: int, options: Mapping[str, Any], result: dict[str, Any],
             lines: list[str]) -> str:
    level = success_level(result_points, options["incredible_from"])
    result.update({"result_points": result_points, "success": level is not None,
                   "level": level, "half_bonus": half_bonus(result_points),
                   "damage_bonus": damage_bonus(result_points)})
    if level is None:
        lines.append(f"Result points {result_points:+d}: Failure (D9)")
        return "failure"
    lines.append(f"Result points {result_points:+d}: {level} success (D10)")
    if result_points > 0:
        lines.append(f"  bonus: +{half_bonus(result_points)} to another roll (half, rounded up, "
                     f"D11); an attack adds +{damage_bonus(result_points)} to damage (one fifth, "
                     "D12)")
    return level.lower()


def roll(spec: Spec, source: Source, options: Mapping[str, Any], limits: Limits,
         text: str) -> Roll:
    """Roll a D6 System spec with faces from ``source``; the verdict comes from the rule functions.

    Faces are read per side in rolling order: the regular dice, then the Wild Die, then its
    re-rolls after each 6.
    """
    tray = Tray(source, limits)
    lines = [f"D6 System roll: {str(spec)[5:]}"]
    wild_on = bool(options["wild_die"])
    if wild_on:
        lines.append("Wild Die on: one die of each roll; a 6 adds and rolls again, a 1 on its "
                     + ("first roll is a complication that removes it and the highest die"
                        if options["wild_one"] == "drop_one_and_highest"
                        else "first roll is a complication (the 1 counts)"))
    if spec.difficulty is not None and spec.difficulty.automatic:
        lines.append("Difficulty: Automatic (0): success without rolling (D7)")
        source.finish()
        return Roll("d6system", text, "automatic",
                    {"automatic": True, "success": True, "difficulty": 0},
                    tray.freeze(), tuple(lines), spec)
    actor = prepare(spec.actor, options)
    _side_lines(spec.actor, actor, "Actor", lines)
    a = _roll_side(tray, actor, "Actor", 0, options, limits, lines)
    result: dict[str, Any] = {**_side_result(actor, a)}
    if spec.difficulty is not None:
        d = spec.difficulty
        lines.append(f"Difficulty: {d.title} ({d.number})" if d.level is not None
                     else f"Difficulty: {d.number} (in the {d.title} range)")
        source.finish()
        result["difficulty"] = d.number
        lines.append(f"{a.total} vs {d.number}")
        outcome = _verdict(a.total - d.number, options, result, lines)  # D8
        return Roll("d6system", text, outcome, result, tray.freeze(), tuple(lines), spec)
    if spec.opposition is None:
        source.finish()
        outcome = "complication" if a.complication else "no_complication"
        return Roll("d6system", text, outcome, result, tray.freeze(), tuple(lines), spec)
    opp = prepare(spec.opposition, options)
    _side_lines(spec.opposition, opp, "Opposition", lines)
    b = _roll_side(tray, opp, "Opposition", 1, options, limits, lines)
    rerolls = 0
    tie_rule = options["opposed_tie"]
    while a.total == b.total and tie_rule == "reroll":  # D-X4: both sides roll again
        rerolls += 1
        if rerolls >= limits.max_rolls:
            raise LimitError(f"{rerolls} tied rolls in a row; the limit is {limits.max_rolls} "
                             "rolls")
        lines.append(f"Tie at {a.total}: both sides roll again (D-X4, opposed_tie=reroll)")
        a = _roll_side(tray, actor, f"Actor, roll {rerolls + 1},", 0, options, limits, lines)
        b = _roll_side(tray, opp, f"Opposition, roll {rerolls + 1},", 1, options, limits, lines)
    source.finish()
    result = {**_side_result(actor, a), "opposition": _side_result(opp, b),
              "opposition_total": b.total, "tie_rule": tie_rule}
    if rerolls:
        result["rerolls"] = rerolls
    margin = a.total - b.total
    lines.append(f"{a.total} vs {b.total}: the opposing total is the difficulty")
    if margin == 0 and tie_rule == "defender":
        lines.append("Tie: the defender wins (opposed_tie=defender, D-X4)")
        result.update({"result_points": 0, "success": False, "level": None, "half_bonus": 0,
                       "damage_bonus": 0})
        return Roll("d6system", text, "failure", result, tray.freeze(), tuple(lines), spec)
    if margin == 0:
        lines.append("Tie: meet or beat, the acting character wins (D-X3, D-X4)")
    outcome = _verdict(margin, options, result, lines)
    return Roll("d6system", text, outcome, result, tray.freeze(), tuple(lines), spec)


# --------------------------------------------------------------------------------------------
# Exact odds: integer counts over powers of 6


def _pack(coeffs: Sequence[int], width: int) -> int:
    return int.from_bytes(b"".join(c.to_bytes(width, "little") for c in coeffs), "little")


def _unpack(number: int, width: int, length: int) -> list[int]:
    raw = number.to_bytes(width * length, "little")
    return [int.from_bytes(raw[i:i + width], "little") for i in range(0, width * length, width)]


def _width(bound: int) -> int:
    return (bound.bit_length() + 8) // 8  # bytes per coefficient, with room to spare


def poly_mul(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """The convolution of two lists of non-negative integers, exactly (Kronecker substitution)."""
    if not a or not b:
        return []
    if len(a) == 1 or len(b) == 1:
        x = a[0] if len(a) == 1 else b[0]
        return [x * y for y in (b if len(a) == 1 else a)]
    width = _width(max(a) * max(b) * min(len(a), len(b)))
    return _unpack(_pack(a, width) * _pack(b, width), width, len(a) + len(b) - 1)


@lru_cache(maxsize=64)
def uniform_power(faces: int, n: int) -> tuple[int, ...]:
    """Counts of each sum of ``n`` dice showing 1..faces (index 0 = sum n), ``faces**n`` in all."""
    if n == 0:
        return (1,)
    if faces == 1:
        return (1,)
    width = _width(faces ** n)
    packed = pow(_pack([1] * faces, width), n)
    return tuple(_unpack(packed, width, (faces - 1) * n + 1))


def _rest_after_highest(m: int) -> tuple[int, list[int]]:
    """Counts of (sum − highest) over ``m`` d6 (6**m in all): (lowest value, counts)."""
    if m == 0:
        return 0, [1]
    counts = [0] * (5 * (m - 1) + 1)  # values m−1 .. 6(m−1)
    below: tuple[int, ...] = ()
    for v in range(1, SIDES + 1):
        upto = uniform_power(v, m)  # sums of m dice each ≤ v: index s − m
        for i, c in enumerate(upto):
            # max exactly v: all ≤ v but not all ≤ v−1; the rest sums to s − v
            c -= below[i] if i < len(below) else 0
            if c:
                counts[i + m - v - (m - 1)] += c
        below = upto
    return m - 1, counts


@lru_cache(maxsize=4)
def _wild_counts(first_one_counts: bool) -> tuple[int, ...]:
    """The Wild Die's value, counts over 6^(K+1) (index 0 = value 1), K = EXPLOSIONS_KEPT.

    Chains 6,…,6,f (k sixes, then f in 1..5) have probability 6^-(k+1). The first face 1 is left
    out when it is a complication that removes the Wild Die (counted elsewhere).
    """
    k_max = EXPLOSIONS_KEPT
    counts = [0] * (SIDES * (k_max + 1))
    for k in range(k_max + 1):
        for f in range(1, SIDES):
            if k == 0 and f == 1 and not first_one_counts:
                continue
            counts[SIDES * k + f - 1] = SIDES ** (k_max - k)
    while counts and counts[-1] == 0:
        counts.pop()
    return tuple(counts)


_FLOAT_EXP = 390  # 6^390 < 1e308: below this a float scale factor is exact enough and fast


def _to_float(counts: Sequence[int], exp: int) -> list[float]:
    """Counts over 6^exp as probabilities: one float multiply each, or exact big-int division
    when 6^exp is beyond the float range (codes of hundreds of dice)."""
    if exp <= _FLOAT_EXP:
        scale = 1.0 / SIDES ** exp
        return [c * scale for c in counts]
    den = SIDES ** exp
    return [c / den for c in counts]


@dataclass(frozen=True, slots=True)
class Counts:
    """An exact distribution of integers: ``counts[i]`` ways for value ``low + i``, of 6^exp.

    ``probs`` holds the same law as floats (within two units in the last place), made once.
    """

    low: int
    counts: tuple[int, ...]
    exp: int
    truncated: float = 0.0
    probs: tuple[float, ...] = ()

    @classmethod
    def of(cls, low: int, counts: Sequence[int], exp: int, truncated: float = 0.0) -> Counts:
        """Counts with their float probabilities."""
        return cls(low, tuple(counts), exp, truncated, tuple(_to_float(counts, exp)))

    def probabilities(self) -> dict[int, float]:
        """value → probability."""
        low = self.low
        return {low + i: p for i, (c, p) in enumerate(zip(self.counts, self.probs)) if c}

    def at_least(self, value: int) -> float:
        """P(outcome ≥ ``value``); the terms are all positive, so a plain sum is accurate."""
        return sum(self.probs[max(0, value - self.low):])

    def between(self, low: int, high: int | None) -> int:
        """The count of outcomes in ``low..high`` (``None``: no upper end), exact."""
        start = max(0, low - self.low)
        stop = len(self.counts) if high is None else max(0, high - self.low + 1)
        return sum(self.counts[start:stop])

    def shift(self, by: int) -> Counts:
        """The same law moved by ``by`` (pips and bonuses added to the dice)."""
        return Counts(self.low + by, self.counts, self.exp, self.truncated, self.probs)


@lru_cache(maxsize=512)
def side_counts(dice: int, wild: bool = False,
                wild_one: str = "drop_one_and_highest") -> Counts:
    """The exact distribution of the dice's part of a total (D1, with the D-X1 Wild Die)."""
    if not wild:
        return Counts.of(dice, uniform_power(SIDES, dice), dice)
    m = dice - 1
    regular = uniform_power(SIDES, m)
    drop = wild_one == "drop_one_and_highest"
    w = _wild_counts(not drop)
    rolled = poly_mul(w, regular)  # values 1 + m + index
    if not drop:
        return Counts.of(1 + m, rolled, dice + EXPLOSIONS_KEPT, LOST_MASS)
    low, rest = _rest_after_highest(m)  # the complication: a first 1 (1 in 6)
    scale = SIDES ** EXPLOSIONS_KEPT
    out = [0] * (max(low + len(rest), 1 + m + len(rolled)) - low)
    for i, c in enumerate(rest):
        out[i] += c * scale
    for i, c in enumerate(rolled):
        out[1 + m + i - low] += c
    return Counts.of(low, out, dice + EXPLOSIONS_KEPT, LOST_MASS)


def _work(dice: int) -> int:
    """A rough count of the big-integer work of one side (coefficients × their digits)."""
    return 6 * dice * dice + 200 * dice


def total_distribution(prep: Prepared, options: Mapping[str, Any]) -> Counts:
    """The exact distribution of a side's total: dice (with the Wild Die), pips and bonus."""
    return side_counts(prep.dice, bool(options["wild_die"]), options["wild_one"]).shift(
        prep.added)


def _level_bands(incredible_from: int) -> tuple[tuple[str, int, int | None], ...]:
    """D9, D10, D-A1: each outcome with its band of result points."""
    return (("failure", -(10**9), -1), ("minimal", 0, 0), ("solid", 1, 4), ("good", 5, 8),
            ("superior", 9, 12), ("spectacular", 13, incredible_from - 1),
            ("incredible", incredible_from, None))


@dataclass(frozen=True, slots=True)
class Margin:
    """The distribution of the actor's total minus the opposing total, as probabilities."""

    low: int
    probs: tuple[float, ...]
    truncated: float = 0.0

    def between(self, low: int, high: int | None) -> float:
        """P(low ≤ margin ≤ high) (``None``: no upper end)."""
        start = max(0, low - self.low)
        stop = len(self.probs) if high is None else max(0, high - self.low + 1)
        return math.fsum(self.probs[start:stop])


def margin_distribution(a: Counts, b: Counts) -> Margin:
    """D8 with the opposing total as the difficulty: the law of a − b for independent sides.

    A direct (not FFT) float convolution of the two sides' probabilities: every term is
    non-negative, so each value keeps its relative accuracy, for codes of any size.
    """
    import numpy as np

    pa = np.array(a.probs)
    pb = np.array(b.probs)
    out = np.convolve(pa, pb[::-1])
    return Margin(a.low - (b.low + len(b.counts) - 1), tuple(out.tolist()),
                  1 - (1 - a.truncated) * (1 - b.truncated))


def _category_sums(margin: Counts | Margin, options: Mapping[str, Any],
                   tie: str) -> dict[str, float]:
    """Each success level's share by result points; on an opposed tie, D-X4's rule."""
    sums: dict[str, float] = {k: margin.between(lo, hi)
                              for k, lo, hi in _level_bands(options["incredible_from"])}
    if tie == "defender":  # D-X4: an opposed tie goes to the defender
        sums["failure"] += sums["minimal"]
        sums["minimal"] = 0
    elif tie == "reroll":  # D-X4: the tie is rolled again until it breaks
        sums["minimal"] = 0
    return sums


def odds(spec: Spec, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    """The exact odds of a D6 System spec (D1–D15, the Wild Die D-X1, opposed rolls D-X4)."""
    wild_on = bool(options["wild_die"])
    if spec.difficulty is not None and spec.difficulty.automatic:
        return Odds("d6system", text, Distribution.from_mapping({"automatic": 1.0},
                                                                order=AUTOMATIC_OUTCOMES),
                    Distribution.from_mapping({}), "total",
                    ("Automatic difficulty: success without rolling (D7)",))
    actor = prepare(spec.actor, options)
    sides = [actor] + ([prepare(spec.opposition, options)] if spec.opposition else [])
    limits.check_work(sum(_work(p.dice) for p in sides)
                      + (_work(sum(p.dice for p in sides)) if len(sides) == 2 else 0),
                      "this D6 System roll", text)
    notes = [f"actor rolls {actor}" + (" with the Wild Die" if wild_on else "")]
    if wild_on:
        notes.append(f"Wild Die: a 6 explodes (tail below {LOST_MASS:.1e} cut), a first 1 is a "
                     "complication" + (" removing it and the highest die"
                                       if options["wild_one"] == "drop_one_and_highest"
                                       else " (the 1 counts)"))
    a = total_distribution(actor, options)
    pa = a.probabilities()
    extra: dict[str, Any] = {}
    if wild_on:
        extra["complication"] = {"actor": 1 / SIDES}
    if spec.difficulty is None and spec.opposition is None:
        c = 1 / SIDES if wild_on else 0.0
        outcomes = {"no_complication": 1 - c, "complication": c}
        return Odds("d6system", text, Distribution.from_mapping(outcomes, order=PLAIN_OUTCOMES),
                    Distribution.from_mapping(pa, a.truncated), "total", tuple(notes), extra)
    if spec.difficulty is not None:
        d = spec.difficulty.number
        margin = a.shift(-d)  # D8: result points = total − difficulty
        counts = _category_sums(margin, options, "actor")
        cats = dict(zip(counts, _to_float([int(c) for c in counts.values()], margin.exp)))
        p_success = sum(v for k, v in cats.items() if k != "failure")
        notes.append(f"difficulty {spec.difficulty.title} ({d}): P(success) = "
                     f"{100 * p_success:.3f}%")
        extra["p_success"] = p_success
        extra["result_points"] = {"difficulty": d, "distribution": {
            str(k - d): p for k, p in pa.items()}}
        return Odds("d6system", text, Distribution.from_mapping(cats, a.truncated,
                                                                order=CHECK_OUTCOMES),
                    Distribution.from_mapping(pa, a.truncated), "total", tuple(notes), extra)
    opp = sides[1]
    b = total_distribution(opp, options)
    notes.append(f"opposition rolls {opp}" + (" with the Wild Die" if wild_on else ""))
    if wild_on:
        extra["complication"]["opposition"] = 1 / SIDES
    raw = margin_distribution(a, b)
    win, tie, lose = raw.between(1, None), raw.between(0, 0), raw.between(-(10**9), -1)
    extra["contest"] = {"win": win, "tie": tie, "lose": lose}
    extra["actor_total"] = {"distribution": {str(k): p for k, p in pa.items()}}
    extra["opposition_total"] = {"distribution": {str(k): p
                                                  for k, p in b.probabilities().items()}}
    tie_rule = options["opposed_tie"]
    notes.append({"actor": "a tie goes to the acting character (meet or beat, D-X4)",
                  "defender": "a tie goes to the defender (D-X4)",
                  "reroll": "a tie is rolled again until it breaks (D-X4)"}[tie_rule])
    cats = _category_sums(raw, options, tie_rule)
    kept = win + lose if tie_rule == "reroll" else 1.0  # D-X4 reroll: given the tie broke
    if kept <= 0:
        raise LimitError("these sides always tie, so re-rolling ties would never end", text)
    cats = {k: v / kept for k, v in cats.items()}
    skip = 0 if tie_rule == "reroll" else None
    dist = Distribution.from_mapping({raw.low + i: p / kept for i, p in enumerate(raw.probs)
                                      if p and raw.low + i != skip}, raw.truncated)
    return Odds("d6system", text, Distribution.from_mapping(cats, raw.truncated,
                                                            order=CHECK_OUTCOMES),
                dist, "result points", tuple(notes), extra)


# --------------------------------------------------------------------------------------------
# GM tables


def difficulties_table(options: Mapping[str, Any] = DEFAULTS, pips: int = 0,
                       max_dice: int = 12) -> list[list[str]]:
    """P(success) of each die code 1D…12D (rows) against each standard difficulty (columns)."""
    wild = bool(options["wild_die"])
    rows = [["Code"] + [f"{name.title()} {number}" for name, (number, _, _)
                        in DIFFICULTIES.items()]]
    for dice in range(1, max_dice + 1):
        dist = side_counts(dice, wild, options["wild_one"]).shift(pips)
        row = [str(DieCode(dice, pips))]
        for number, _, _ in DIFFICULTIES.values():
            if number == 0:
                row.append("100.0%")  # D7: Automatic needs no roll
                continue
            row.append(f"{100 * dist.at_least(number):.1f}%")
        rows.append(row)
    return rows


def _table_difficulties(options: Mapping[str, Any]) -> list[list[str]]:
    raw = dict(options)
    pips_text = str(raw.pop("pips", "0"))
    if pips_text not in ("0", "1", "2"):
        raise OptionError(f"the table's pips option takes 0, 1 or 2, not '{pips_text}'")
    merged = dict(DEFAULTS)
    for key, value in raw.items():
        k = key.replace("-", "_")
        if k not in DEFAULTS:
            raise OptionError(f"'{key}' is not a D6 System option; options are pips, "
                              f"{', '.join(sorted(DEFAULTS))}")
        merged[k] = _coerce(k, value)
    check_options(merged)
    return difficulties_table(merged, int(pips_text))


def _coerce(key: str, value: Any) -> Any:
    default = DEFAULTS[key]
    text = str(value).lower()
    if isinstance(default, bool):
        if text not in ("true", "false", "on", "off", "yes", "no", "1", "0"):
            raise OptionError(f"option {key} takes on or off, not '{value}'")
        return text in ("true", "on", "yes", "1")
    if isinstance(default, int):
        if not text.isdigit() or len(text) > 3:
            raise OptionError(f"option {key} takes a whole number, not '{value}'")
        return int(text)
    return text


TABLES = {"difficulties": _table_difficulties}


# --------------------------------------------------------------------------------------------
# The system object


@dataclass(frozen=True)
class _D6System:
    name: str = "d6system"
    aliases: tuple[str, ...] = ("od6",)
    title: str = "D6 System"
    defaults: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULTS))

    def parse(self, text: str, start: int, options: Mapping[str, Any], limits: Limits) -> Spec:
        return parse(text, start, options, limits)

    def roll(self, spec: Spec, source: Source, options: Mapping[str, Any], limits: Limits,
             text: str) -> Roll:
        return roll(spec, source, effective_options(spec, options), limits, text)

    def odds(self, spec: Spec, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
        return odds(spec, effective_options(spec, options), limits, text)


SYSTEM = _D6System()
