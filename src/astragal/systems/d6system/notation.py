"""D6 System notation: ``od6: 4D+2 +1D very advantaged vs moderate``, ``od6: 3D wild vs 2D+2``.

A die code (``4D``, ``3D+2``), then what is added to it in order (``+1D``, ``+2``, ``+1 pip``, a
situation from the modifier table), then ``vs`` a difficulty (a level, a number, or a level with
a number) or an opposing die code, ``wild`` and ``key=value`` switches.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..._digits import digits
from ..._errors import LimitError, OptionError
from ..._limits import Limits
from ..._records import Record
from ...notation import Token, Tokens, tokenize
from . import rules as R
from .rules import (
    DIFFICULTIES,
    MODIFIER_ALIASES,
    MODIFIERS,
    SWITCHES,
    difficulty_level,
    options_from,
)

__all__ = ["DieCode", "Difficulty", "Side", "Spec", "Term", "parse"]

_SWITCHES = {s.name: s for s in SWITCHES}


class DieCode(Record):
    """A die code ``ND+p``: N six-sided dice summed, plus p pips (D1)."""

    dice: int
    pips: int = 0

    def __str__(self) -> str:
        if self.pips == 0:
            return f"{self.dice}D"
        return f"{self.dice}D{self.pips:+d}"


class Term(Record):
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


class Side(Record):
    """One side's roll as written: its die code and what is added to it, in order."""

    code: DieCode
    terms: tuple[Term, ...] = ()

    def __str__(self) -> str:
        return " ".join([str(self.code), *map(str, self.terms)])


class Difficulty(Record):
    """A difficulty: a standard level by name (D6), a number, or a level with a chosen number."""

    level: str | None
    number: int

    @property
    def automatic(self) -> bool:
        """D7: Automatic (0) needs no roll."""
        return R.is_automatic(self.number)

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


class Spec(Record):
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


_CODE = re.compile(r"(\d+)d(?:([+-])(\d+))?$", re.ASCII)
_D6_CODE = re.compile(r"(\d+)d6([+-]\d+)?$", re.ASCII)
_DICE_TERM = re.compile(r"([+-])(\d+)d(?:\+(\d+))?$", re.ASCII)
_NUMBER_TERM = re.compile(r"([+-])(\d+)$", re.ASCII)
_PIPS_TERM = re.compile(r"([+-])(\d+)(?:pips?)$", re.ASCII)
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
    if word in MODIFIERS or word in MODIFIER_ALIASES:
        toks.next()
        return MODIFIER_ALIASES.get(word, word)
    nxt = toks.peek(1)
    if word in _QUALIFIERS and nxt is not None and nxt.lower in _WORDS:
        name = f"{word} {nxt.lower}"
        name = MODIFIER_ALIASES.get(name, name)
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
    own_wild = False  # 'wild' on each side reads as one Wild Die a roll; twice on one, a slip
    while (tok := toks.peek()) is not None:
        w = tok.lower
        if w == "vs" or "=" in w:
            break
        if w == "wild":
            if own_wild:
                raise toks.error("'wild' is given twice", tok)
            own_wild = True
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
            raise toks.unknown(tok, f"part of a D6 System {side} roll",
                               [*MODIFIERS, *_WORDS, "wild", "vs", "pips"], _EXPECTED)
    return Side(code, tuple(terms))


_EXPECTED = ("expected a bonus (+1D, +2, +1 pip), a modifier (advantaged, very "
             "disadvantaged...), 'wild' or 'vs'")


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
            if not digits(num_tok.text):
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
    if digits(tok.text):
        toks.next()
        return Difficulty(None, _number(tok.text, tok, toks)), None
    if _CODE.match(tok.lower) or _D6_CODE.match(tok.lower):
        return None, _read_side(toks, limits, "opposing", wild)
    if tok.text.startswith("-") and digits(tok.text[1:]):
        raise toks.error("a difficulty number is 0 or more", tok)
    raise toks.unknown(tok, "a standard difficulty", DIFFICULTIES,
                       f"the standard difficulties are {_DIFFICULTY_HELP}; or write a "
                       "difficulty number or a die code to oppose")


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
            if key not in _SWITCHES:
                raise OptionError(f"'{key}' is not a D6 System option; options are "
                                  f"{', '.join(sorted(_SWITCHES))}", toks.text, (tok.start, tok.end))
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
    try:
        return _SWITCHES[key].read(value)
    except OptionError as exc:
        raise OptionError(exc.message, toks.text, (tok.start, tok.end)) from None


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
    merged = options_from({**options, **opts})
    for side in (spec.actor, spec.opposition):
        if side is not None:
            prep = R.prepare(side, merged)
            limits.check_dice(prep.dice, text, (start, len(text)))
    return spec
