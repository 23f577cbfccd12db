"""Common denominators of the dice algebra's programs: what makes a finite law exact.

A program whose dice are each rolled a bounded number of times has a law whose probabilities are
all whole multiples of 1/N for the N given here (the product, over every die that may be rolled,
of its number of equally likely faces). ``Distribution.exact()`` rounds each probability to that
grid, which is exact while N is small (at most 10**12). A die that may be rolled again without
end (an explosion with no cap) gives an infinite law: ``None``.
"""

from __future__ import annotations

import math

from ..dice.algebra import (
    Chain,
    Drop,
    Favored,
    Highest,
    Keep,
    Least,
    Marked,
    Mixed,
    Paired,
    Pool,
    Program,
    Reroll,
    Top,
    never,
)
from . import Odds

__all__ = ["conditioned", "denominator", "exact_odds", "product"]


def product(*parts: int | None) -> int | None:
    """The denominator of independent parts together (None if any is infinite)."""
    out = 1
    for p in parts:
        if p is None:
            return None
        out *= p
    return out


def conditioned(den: int | None, kept: float) -> int | None:
    """The denominator of a law conditioned on an event of probability ``kept`` (a tie rolled
    again until it breaks): each probability a/N becomes a/(N·kept), and N·kept is whole."""
    if den is None or kept <= 0.0 or den > 10**15:
        # past 10**15 a float cannot tell N·kept from its neighbours: no exact form to recover
        # (and N itself may be too large for a float: 6**400 is)
        return None
    if kept == 1.0:  # nothing is rolled again
        return den
    if den > 2**53:  # past a float's whole numbers N·kept cannot be told whole (nor made one)
        return None
    whole = round(den * kept)
    return whole if abs(den * kept - whole) < 1e-3 else None


def _chain(c: Chain) -> int | None:
    one = c.size
    if c.reroll is not None:
        if c.reroll_once:
            one = c.size * c.size
        else:  # re-rolled in place until it stops: the faces that stand are equally likely
            one = c.size - sum(bool(c.reroll(f)) for f in range(1, c.size + 1))
            if one <= 0:
                return None
    if c.again is never or not any(c.again(0, f) for f in range(1, c.size + 1)):
        return one
    if c.limit is not None:  # a capped chain: at most limit + 1 rolls
        return int(one ** (c.limit + 1))
    return None


def denominator(program: Program | Top) -> int | None:
    """A whole number N such that every probability of the program's law is a multiple of 1/N,
    or None where the law is infinite (a die may be rolled again without end)."""
    match program:
        case Chain():
            return _chain(program)
        case Reroll(unit=unit):
            return product(_chain(unit), _chain(unit))
        case Marked(unit=unit, check=check):
            inner = denominator(unit)
            size = unit.size if isinstance(unit, Chain) else unit.unit.size
            return product(inner, size if check is not None else 1)
        case Pool(dice=n, unit=unit):
            one = denominator(unit)
            return None if one is None else int(one ** n)
        case Drop(pool=pool) | Keep(pool=pool) | Top(pool=pool):
            return denominator(pool)
        case Mixed(units=units):
            return product(*(_chain(u) for u in units))
        case Favored(pool=pool):
            # the first matching die is rolled once more: any one of them may be
            dens = [_chain(u) for u in pool.units]
            if any(d is None for d in dens):
                return None
            return product(denominator(pool), math.lcm(*(d for d in dens if d is not None)))
        case Highest(pool=pool):
            return denominator(pool)
        case Least(parts=parts):
            return product(*(denominator(p) for p in parts))
        case Paired(attack=a, defence=d):
            return product(denominator(a), denominator(d))
    raise TypeError(program)  # pragma: no cover


def exact_odds(odds: Odds, den: int | None, outcomes_den: int | None = None) -> Odds:
    """``odds`` knowing the common denominator of its outcomes and distribution (``den``), or,
    where only the value's law is infinite, of its outcomes alone (``outcomes_den``)."""
    out_den = den if den is not None else outcomes_den
    if out_den is None:
        return odds
    dist = odds.distribution
    return Odds(odds.system, odds.input, odds.outcomes.with_denominator(out_den),
                dist.with_denominator(den) if den is not None else dist, odds.value_name,
                odds.notes, odds.extra)
