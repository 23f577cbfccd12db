"""A brute-force law of dice, written from the tools' own descriptions (not from astragal's code):
the law of each corpus line in ``habits.tsv`` is one of these expressions.

A die is the list of what it can put into the pool, each with its chance: a plain d6 puts one
face; a d6 that explodes once on 6 puts one face, or a 6 and one more face. A pool of n such dice
is every multiset of n outcomes, weighted by its multinomial count, so ``pool(10, d(6, once=6))``
takes 184,756 multisets, not 11¹⁰ sequences. Explosions that may go on are followed, roll after
roll, until the chance left is below 1e-15; everything else is exact fractions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from fractions import Fraction
from itertools import combinations_with_replacement
from math import factorial, prod

Outcome = tuple[int, ...]  # the values one die puts into the pool
Die = list[tuple[Outcome, Fraction]]
Law = dict[Fraction, Fraction]  # value → chance


def _first(faces: list[int], reroll_once: Callable[[int], bool] | None,
           reroll: Callable[[int], bool] | None) -> dict[int, Fraction]:
    """The face a roll of the die stands on: re-rolled once (the second face stands), or again
    and again while it matches (so uniform over the faces that do not)."""
    n = len(faces)
    out: dict[int, Fraction] = {}
    if reroll is not None:
        stay = [f for f in faces if not reroll(f)]
        for f in stay:
            out[f] = out.get(f, Fraction(0)) + Fraction(1, len(stay))
        return out
    for f in faces:
        if reroll_once is not None and reroll_once(f):
            for g in faces:
                out[g] = out.get(g, Fraction(0)) + Fraction(1, n * n)
        else:
            out[f] = out.get(f, Fraction(0)) + Fraction(1, n)
    return out


def d(sides: int, *, faces: Iterable[int] | None = None, once: int | None = None,
      again: int | None = None, reroll_once: Callable[[int], bool] | None = None,
      reroll: Callable[[int], bool] | None = None, at_least: int | None = None) -> Die:
    """One die: ``once=6`` explodes once on 6 or more (one extra die, which does not explode);
    ``again=6`` explodes on 6 or more as long as it matches, and is then one value, the sum of
    its rolls (enough for a total: read it with ``sum_of``), followed until the chance left is
    below 1e-15; re-rolls apply to every roll; ``at_least`` raises each value (Avrae's mi)."""
    rolled = _first(list(faces) if faces is not None else list(range(1, sides + 1)),
                    reroll_once, reroll)
    out: Die = []
    if again is not None:
        sums: dict[int, Fraction] = {}
        going: dict[int, Fraction] = {0: Fraction(1)}  # the sum so far of dice still exploding
        while going and sum(going.values()) > Fraction(1, 10**15):
            nxt: dict[int, Fraction] = {}
            for base, q in going.items():
                for f, p in rolled.items():
                    into = nxt if f >= again else sums
                    into[base + f] = into.get(base + f, Fraction(0)) + q * p
            going = nxt
        for base, q in going.items():  # the tail left (below 1e-15) stops where it is
            sums[base] = sums.get(base, Fraction(0)) + q
        return [((v,), p) for v, p in sums.items()]
    for f, p in rolled.items():
        if once is not None and f >= once:
            out.extend(((f, g), p * q) for g, q in rolled.items())
        else:
            out.append(((f,), p))
    if at_least is not None:
        out = [(tuple(max(v, at_least) for v in o), p) for o, p in out]
    return out


def sum_of(n: int, die: Die) -> Law:
    """The total of n dice, by convolution (for exploding dice)."""
    law: Law = {Fraction(0): Fraction(1)}
    for _ in range(n):
        law = plus(law, {Fraction(sum(o)): p for o, p in die})
    return law


def fudge() -> Die:
    return d(3, faces=(-1, 0, 1))


class Pool:
    """The law of a pool of dice: each sorted tuple of values with its chance."""

    def __init__(self, law: dict[Outcome, Fraction]) -> None:
        self.law = law


def pool(n: int, die: Die) -> Pool:
    law: dict[Outcome, Fraction] = {}
    for pick in combinations_with_replacement(range(len(die)), n):
        counts: dict[int, int] = {}
        for i in pick:
            counts[i] = counts.get(i, 0) + 1
        ways = factorial(n) // prod(factorial(c) for c in counts.values())
        chance = ways * prod((die[i][1] for i in pick), start=Fraction(1))
        values = tuple(sorted(v for i in pick for v in die[i][0]))
        law[values] = law.get(values, Fraction(0)) + chance
    return Pool(law)


def _kept(values: Outcome, kh: int | None, kl: int | None, dl: int | None,
          dh: int | None, keep: Callable[[int], bool] | None,
          drop: Callable[[int], bool] | None) -> Outcome:
    v = values  # sorted low → high
    if kh is not None:
        v = v[len(v) - kh:] if kh < len(v) else v
    if kl is not None:
        v = v[:kl]
    if dl is not None:
        v = v[dl:]
    if dh is not None:
        v = v[:len(v) - dh]
    if keep is not None:
        v = tuple(x for x in v if keep(x))
    if drop is not None:
        v = tuple(x for x in v if not drop(x))
    return v


def _law(p: Pool, read: Callable[[Outcome], Fraction | int]) -> Law:
    out: Law = {}
    for values, chance in p.law.items():
        k = Fraction(read(values))
        out[k] = out.get(k, Fraction(0)) + chance
    return out


def total(p: Pool, *, kh: int | None = None, kl: int | None = None, dl: int | None = None,
          dh: int | None = None, keep: Callable[[int], bool] | None = None,
          drop: Callable[[int], bool] | None = None) -> Law:
    """The sum of the kept dice."""
    return _law(p, lambda v: sum(_kept(v, kh, kl, dl, dh, keep, drop)))


def count(p: Pool, success: Callable[[int], bool], failure: Callable[[int], bool] | None = None,
          *, kh: int | None = None) -> Law:
    """How many kept dice succeed, less one for each that fails."""
    def read(v: Outcome) -> int:
        kept = _kept(v, kh, None, None, None, None, None)
        return sum(1 for x in kept if success(x)) - (
            sum(1 for x in kept if failure(x)) if failure is not None else 0)
    return _law(p, read)


def ge(t: int) -> Callable[[int], bool]:
    return lambda x: x >= t


def le(t: int) -> Callable[[int], bool]:
    return lambda x: x <= t


def eq(t: int) -> Callable[[int], bool]:
    return lambda x: x == t


def plus(law: Law, c: int | Law) -> Law:
    """The law of a sum: a number added, or another law convolved."""
    other: Law = {Fraction(c): Fraction(1)} if isinstance(c, int) else c
    out: Law = {}
    for a, p in law.items():
        for b, q in other.items():
            out[a + b] = out.get(a + b, Fraction(0)) + p * q
    return out


def mapped(law: Law, f: Callable[[Fraction], Fraction | int]) -> Law:
    out: Law = {}
    for a, p in law.items():
        k = Fraction(f(a))
        out[k] = out.get(k, Fraction(0)) + p
    return out


def reaches(law: Law, target: int) -> Law:
    """A comparison of totals: 1 when the total is at least ``target``, else 0."""
    return mapped(law, lambda v: int(v >= target))


def above(law: Law, target: int) -> Law:
    return mapped(law, lambda v: int(v > target))


def dice_of(count_law: Law, each: Callable[[int], Law]) -> Law:
    """A rolled number of dice (AnyDice's (1d4)d6): the mixture over the count."""
    out: Law = {}
    for n, p in count_law.items():
        for v, q in each(int(n)).items():
            out[v] = out.get(v, Fraction(0)) + p * q
    return out


NAMES = {f.__name__: f for f in (d, fudge, pool, sum_of, total, count, ge, le, eq, plus, mapped,
                                  reaches, above, dice_of)}


def law_of(text: str) -> Law:
    """A corpus line's law, written in the names above."""
    value = eval(text, {"__builtins__": {}, **NAMES})  # the test's own corpus, no input
    assert isinstance(value, dict), text
    return value
