"""The rules as pure functions of faces and values; the roller and the exact odds both call them.

A die term works in this order (docs/notation.md, "order of modifiers"):

1. each roll of a die is re-rolled while its face matches ``r`` (``ro``: at most once);
2. a standing face that matches the explosion condition rolls again: ``!`` adds a new die,
   ``!!`` adds the roll to the same die, ``!p`` adds a new die worth one less, ``xo`` adds at
   most one new die;
3. ``mi``/``ma`` raise or cut each die's value (a compounded die's total);
4. keep/drop picks dice by rank (ties: earlier dice are kept first), or each die by its own
   value (``k>3`` keeps the dice over 3, ``p<2`` drops the dice under 2);
5. the term's value is the sum of the kept dice, or with a success condition the number of kept
   dice that match it (+1 each for ``dbl``, −1 each die that matches ``f``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from ..._errors import OptionError
from ...dice.algebra import keep_flags, kept_count
from ...rulebook import rule
from ...switches import Switch
from .nodes import Compare, Dice, Group, Keep, Value

GAME = "dice"

__all__ = [
    "arith",
    "as_number",
    "call",
    "clamp",
    "compare",
    "count_matching",
    "critical",
    "die_range",
    "explodes",
    "face_value",
    "keep_count",
    "keep_spec",
    "keeps_value",
    "kept_flags",
    "matches",
    "rerolls",
    "round_half_up",
    "score",
    "term_value",
]


@rule(GAME, "N1", "a face matching the re-roll condition is rolled again (ro: at most once)")
def rerolls(d: Dice, face: int) -> bool:
    """Rule 1: this face is re-rolled."""
    return any(c(face) for c in d.reroll)


@rule(GAME, "N2", "a standing face matching the explosion condition rolls again")
def explodes(d: Dice, face: int) -> bool:
    """Rule 2: this standing face rolls again (checked on the face, before ``!p`` takes 1 off)."""
    return d.explode_on is not None and d.explode_on(face)


def face_range(sides: int) -> tuple[int, int]:
    """The lowest and highest face."""
    return (-1, 1) if sides == 0 else (1, sides)


def die_range(d: Dice) -> tuple[int, int]:
    """The lowest and highest face of the term's die (a custom die's as written)."""
    return (min(d.custom), max(d.custom)) if d.custom else face_range(d.sides)


@rule(GAME, "N0", "Fudge dice show −1, 0, +1; a custom die shows its faces as written")
def face_value(d: Dice, raw: int) -> int:
    """The face a die shows for the tray's raw face 1..size (Fudge: −1, 0, +1; custom dice:
    the written face in that position)."""
    if d.custom:
        return d.custom[raw - 1]
    return raw - 2 if d.sides == 0 else raw


@rule(GAME, "N3", "mi/ma raise or cut each die's value")
def clamp(d: Dice, v: Value) -> Value:
    """``mi``/``ma`` (``min``/``max``): a die's value raised to the minimum, cut to the
    maximum (after its explosions and re-rolls, before keep/drop and counting)."""
    if d.minimum is not None and v < d.minimum:
        v = d.minimum
    if d.maximum is not None and v > d.maximum:
        v = d.maximum
    return v


def critical(d: Dice, face: int) -> tuple[bool, bool]:
    """(critical, fumble) for a natural face: the term's ``crit``/``fumble`` (Roll20's
    ``cs``/``cf``), else a d20's 20 and 1."""
    plain_d20 = d.sides == 20 and not d.custom
    crit = d.crit(face) if d.crit is not None else plain_d20 and face == 20
    fumble = d.fumble(face) if d.fumble is not None else plain_d20 and face == 1
    return bool(crit), bool(fumble)


def count_matching(d: Dice, compares: Sequence[Compare], within: Compare | None = None) -> int:
    """How many faces of the term's die (custom dice: with repeats) match any of ``compares``
    (and ``within``)."""
    if d.custom:
        return sum(1 for f in d.custom if any(c(f) for c in compares)
                   and (within is None or within(f)))
    lo, hi = face_range(d.sides)
    return matching(compares, lo, hi, within)


def interval(c: Compare, lo: int, hi: int) -> tuple[int, int]:
    """The faces lo..hi that a compare point matches, as an interval (empty if a > b)."""
    match c.op:
        case "=":
            return max(lo, c.value), min(hi, c.value)
        case "<":
            return lo, min(hi, c.value - 1)
        case "<=":
            return lo, min(hi, c.value)
        case ">":
            return max(lo, c.value + 1), hi
        case _:
            return max(lo, c.value), hi


def matching(compares: Sequence[Compare], lo: int, hi: int,
             within: Compare | None = None) -> int:
    """How many faces lo..hi match any of ``compares`` (and ``within``, if given)."""
    spans = []
    for c in compares:
        a, b = interval(c, lo, hi)
        if within is not None:
            wa, wb = interval(within, lo, hi)
            a, b = max(a, wa), min(b, wb)
        if a <= b:
            spans.append((a, b))
    spans.sort()
    total, end = 0, lo - 1
    for a, b in spans:
        if b > end:
            total += b - max(a, end + 1) + 1
            end = b
    return total


def matches(values: Sequence[Value], size: int) -> list[tuple[Value, list[int]]]:
    """Roll20's ``m``/``mt``: the sets of at least ``size`` dice showing the same value, as
    (value, positions), by value."""
    where: dict[Value, list[int]] = {}
    for i, v in enumerate(values):
        where.setdefault(v, []).append(i)
    return [(v, where[v]) for v in sorted(where) if len(where[v]) >= size]


@rule(GAME, "N4", "keep/drop takes the highest or lowest dice by rank, ties to the earlier die")
def keep_spec(keep: Keep) -> tuple[int, bool, bool]:
    """Rule 3 as the dice algebra's ``Keep`` reads it: (how many, the highest?, dropping?) —
    ``kh``/``kl`` keep so many highest/lowest, ``dh``/``dl`` drop so many (not for a by-value
    keep)."""
    match keep.how:
        case "kh":
            return keep.n, True, False
        case "kl":
            return keep.n, False, False
        case "dh":
            return keep.n, False, True
        case _:
            return keep.n, True, True


def keep_count(keep: Keep, total: int) -> tuple[bool, int]:
    """(keep the highest?, how many) of a pool of ``total`` dice (not for a by-value keep)."""
    n, highest, dropping = keep_spec(keep)
    return highest, kept_count(total, n, dropping)


@rule(GAME, "N5", "k>N / p<N keeps or drops each die on its own value")
def keeps_value(keep: Keep, v: Value) -> bool:
    """For a by-value keep: is a die of value ``v`` kept?"""
    assert keep.cond is not None
    return keep.cond(v) if keep.how == "k" else not keep.cond(v)


def kept_flags(values: Sequence[Value], keep: Keep | None) -> list[bool]:
    """Rule 3: which dice of a pool are kept: the dice algebra's ``Keep`` (the earlier of equal
    dice kept), or N5 on each die's own value."""
    if keep is None:
        return [True] * len(values)
    if keep.by_value:  # k>3, p<2: each die on its own value
        return [keeps_value(keep, v) for v in values]
    return keep_flags(values, *keep_spec(keep))


@rule(GAME, "N6", "a success condition counts each kept die that matches (dbl: 2, f: −1)")
def score(term: Dice | Group, value: Value) -> int:
    """Rule 4: what one kept die (or group item) adds to a success count."""
    assert term.success is not None
    s = 0
    if term.success(value):
        s = 2 if term.double is not None and term.double(value) else 1
    if term.failure is not None and term.failure(value):
        s -= 1
    return s


def term_value(term: Dice | Group, values: Sequence[Value], kept: Sequence[bool]) -> Value:
    """Rule 4: the sum of the kept values, or the net successes."""
    chosen = [v for v, k in zip(values, kept) if k]
    if term.success is None:
        return as_number(sum(chosen))
    return sum(score(term, v) for v in chosen)


def as_number(v: Value) -> Value:
    """An exact value, as an int when it is whole."""
    if type(v) is Fraction and v.denominator == 1:
        return int(v)
    return v


def round_half_up(v: Value) -> int:
    """``round``: halves go up (toward +infinity), as in Roll20 and Foundry (JavaScript)."""
    return math.floor(Fraction(v) + Fraction(1, 2))


class ZeroDivisor(ValueError):
    """Division or remainder by zero (the caller turns it into a NotationError with a span)."""


@rule(GAME, "N7", "arithmetic is exact: / gives a fraction, % takes the divisor's sign, ** a "
               "whole power")
def arith(op: str, a: Value, b: Value) -> Value:
    """``+ - * / %``; ``/`` is exact, ``%`` takes the sign of the divisor (floored)."""
    match op:
        case "+":
            return as_number(a + b)
        case "-":
            return as_number(a - b)
        case "*":
            return _held(as_number(a * b), "product")
        case "/":
            if b == 0:
                raise ZeroDivisor("division by zero")
            if type(a) is int and type(b) is int:  # the same fraction, made once
                return _held(as_number(Fraction(a, b)), "quotient")
            return _held(as_number(Fraction(a) / Fraction(b)), "quotient")
        case "**":
            return power(a, b)
        case "//":
            if b == 0:
                raise ZeroDivisor("division by zero")
            if type(a) is int and type(b) is int:  # whole numbers: Python's // is this floor
                return a // b
            return math.floor(Fraction(a) / Fraction(b))
        case _:
            if b == 0:
                raise ZeroDivisor("remainder after division by zero")
            if type(a) is int and type(b) is int:  # whole numbers: Python's % takes the
                return a % b  # divisor's sign, as the floored remainder does
            return as_number(Fraction(a) % Fraction(b))


# A value that needs more bits than this is refused (its numerator and its denominator each):
# products and powers are the only ways to grow one (a number has at most 15 digits), and a value
# this size, squared, still fits in a float (the mean and spread are floats, to 2**1023)
MAX_VALUE_BITS = 256
_PAST = 1 << MAX_VALUE_BITS


class BadValue(ValueError):
    """A value the notation does not hold: a power with a fractional exponent, or a value of
    more than ``MAX_VALUE_BITS`` bits (the caller adds the span)."""


def _held(v: Value, what: str) -> Value:
    """``v``, or BadValue when it needs more than ``MAX_VALUE_BITS`` bits."""
    if type(v) is int:
        if -_PAST < v < _PAST:
            return v
    elif -_PAST < v.numerator < _PAST and v.denominator < _PAST:
        return v
    raise BadValue(f"a {what} here comes to more than {MAX_VALUE_BITS} bits")


def power(a: Value, b: Value) -> Value:
    """``a ** b``: a whole-number exponent; a negative one gives an exact fraction."""
    if type(b) is Fraction and b.denominator != 1:
        raise BadValue(f"the exponent {float(b):g} is not a whole number")
    e = int(b)
    if e < 0 and a == 0:
        raise ZeroDivisor("0 to a negative power")
    base = Fraction(a)
    bits = max(abs(base.numerator), base.denominator).bit_length()
    if bits > 1 and abs(e) * (bits - 1) > MAX_VALUE_BITS:
        raise BadValue(f"{a} ** {e} is too large (more than {MAX_VALUE_BITS} bits)")
    return _held(as_number(base ** e), "power")


@rule(GAME, "N8", "floor, ceil, round (halves up), abs, min, max")
def call(name: str, args: Sequence[Value]) -> Value:
    """``floor``, ``ceil``, ``round``, ``abs``, ``min``, ``max``."""
    match name:
        case "floor":
            return math.floor(args[0])
        case "ceil":
            return math.ceil(args[0])
        case "round":
            return round_half_up(args[0])
        case "abs":
            return as_number(Fraction(abs(Fraction(args[0]))))
        case "min":
            return min(args)
        case "pow":
            return power(args[0], args[1])
        case _:
            return max(args)


@rule(GAME, "N9", "a comparison of totals is 1 when it holds, else 0")
def compare(op: str, a: Value, b: Value) -> int:
    """A comparison between totals: 1 if it holds, else 0."""
    point = _AGAINST_ZERO.get(op)
    if point is None:
        point = _AGAINST_ZERO[op] = Compare(op, 0)
    return int(point(a - b))


_AGAINST_ZERO: dict[str, Compare] = {}  # each operator's compare point against 0, made once


# --------------------------------------------------------------------------------------------
# The house-rule switches: where the player comes from, and the forms dialects read differently

DIALECTS: dict[str, dict[str, str]] = {
    # The few forms that mean different things where players come from (docs/notation.md,
    # "Dialects"); everything else is read the same under every dialect.
    #   reroll: bare ``r``; greater_than: ``>``/``<`` in a compare point;
    #   cs: ``cs``/``cf``; k_number: ``k3``; glued_compare: ``3d6>10`` (count the dice, or
    #   compare the total as Avrae and d20, which have no success counting)
    "astragal": {"reroll": "recursive", "greater_than": "strict", "cs": "refuse",
                 "k_number": "highest", "glued_compare": "count"},
    "roll20": {"reroll": "recursive", "greater_than": "or_equal", "cs": "critical",
               "k_number": "highest", "glued_compare": "count"},
    "foundry": {"reroll": "once", "greater_than": "strict", "cs": "count",
                "k_number": "highest", "glued_compare": "count"},
    "avrae": {"reroll": "recursive", "greater_than": "strict", "cs": "refuse",
              "k_number": "value", "glued_compare": "total"},
}
# A tool's own command word in front of a roll says where the player comes from, when no dialect
# is set. /r, /roll and /gmroll are Roll20's and Foundry's both (Sidekick's and Dice Maiden's
# too): under them a compare point that only Roll20 writes (a success count glued to the dice,
# ``!``, ``!!``, ``!p``, ``ro``, ``f``) is read Roll20's way, one that only Foundry writes
# (``x``, ``xo``, ``rr``, ``df``) Foundry's way, and the forms both read differently (a bare
# ``r``, ``cs``/``cf``) are refused with both readings. AnyDice's ``output`` says nothing.
_SHARED = "roll20|foundry"
COMMANDS: dict[str, str | None] = {
    "/r": _SHARED, "/roll": _SHARED, "/gmroll": _SHARED, "/gr": "roll20",
    "/gmr": "foundry", "/sr": "foundry", "/selfroll": "foundry", "/br": "foundry",
    "/broll": "foundry", "/blindroll": "foundry", "/pr": "foundry", "/publicroll": "foundry",
    "!r": "avrae", "!roll": "avrae", "output": None,
}
READINGS: dict[str, dict[str, str]] = {
    **DIALECTS,
    _SHARED: {"reroll": "refuse", "greater_than": "roll20_forms", "cs": "refuse",
              "k_number": "highest", "glued_compare": "count"},
}
ROLL20_FORMS = frozenset(("", "!", "!!", "!p", "ro", "f"))  # where Roll20 writes a compare point
SWITCHES = (
    Switch("dialect", "astragal", "dialects",
           "where the player comes from: the forms tools read differently are read that way",
           tuple(DIALECTS)),
    Switch("reroll", "dialect", "N1", "a bare r re-rolls as the dialect reads it, until it stops "
           "matching, or once", ("dialect", "recursive", "once")),
    Switch("greater_than", "dialect", "N9",
           "> in a compare point: as the dialect reads it, strictly greater, or greater or equal",
           ("dialect", "strict", "or_equal")),
)
DEFAULTS: dict[str, Any] = {s.name: s.default for s in SWITCHES}
CHOICES: dict[str, tuple[str, ...]] = {s.name: s.choices for s in SWITCHES}


def reading(options: Mapping[str, Any], command: str = "") -> dict[str, str]:
    """How this request reads the dialect-dependent forms: the dialect (with none set, the one
    its chat ``command`` says), then the overrides."""
    dialect = options.get("dialect", "astragal")
    if dialect == "astragal":
        dialect = COMMANDS.get(command.lower()) or dialect
    out = dict(READINGS[dialect])
    for key in ("reroll", "greater_than"):
        value = options.get(key, "dialect")
        if value != "dialect":
            out[key] = value
    return out


def check_options(options: Mapping[str, Any]) -> None:
    """Refuse a switch value its ``Switch`` does not read as itself (the one place switches are
    checked; ``options`` here are normally resolved already)."""
    for switch in SWITCHES:
        value = options.get(switch.name, switch.default)
        if value is not switch.default and value not in switch.choices:  # as its Switch reads
            raise OptionError(f"option {switch.name} takes one of {', '.join(switch.choices)}, "
                              f"not {value!r}")
