"""The exact interpreter of the dice algebra (``astragal.dice.algebra``).

``law(program)`` gives the exact law of what ``astragal.dice.algebra.sample`` rolls, calling the
same rule functions on every face instead of on the faces of one roll:

- a ``Chain`` (an explosion chain) is a power series: a run that stops with S(z) and goes on with
  R(z) has the law S(z)/(1 − R(z)); when every face that goes on scores the same (R = r·zˢ, the
  usual case), the law is a polynomial over (1 − r·zˢ), kept exactly in fractions;
- a ``Pool`` of n such dice is then N(z)ⁿ·(1 − r·zˢ)⁻ⁿ: a binomial (or a small polynomial power)
  times a negative binomial, O(n) terms instead of n convolutions; other pools are a power by
  squaring of the unit law;
- ``Reroll`` and ``Marked`` condition on the first face that stands.

Infinite tails are cut only where the probability left out is below ``eps``; the lost mass is
returned with every law. The work of a pool is estimated (``work``) before it is computed.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from .._errors import LimitError
from .._limits import DEFAULT_LIMITS, Limits
from ..dice.algebra import Chain, Marked, Pool, Reroll, Unit
from . import maths

__all__ = ["Law", "MarkedLaw", "law", "marked_law", "work"]

DEFAULT_EPS = 1e-18

Poly = tuple[Fraction, ...]


@dataclass(frozen=True, slots=True)
class Law:
    """P(value = k) for k = 0, 1, 2, … and the probability lost where a tail was cut."""

    pmf: tuple[float, ...]
    truncated: float = 0.0


@dataclass(frozen=True, slots=True)
class MarkedLaw:
    """P(value = k, mark = m) as {m: pmf}, and the probability lost where a tail was cut."""

    by_mark: tuple[tuple[Hashable, tuple[float, ...]], ...]
    truncated: float = 0.0


# --------------------------------------------------------------------------------------------
# Polynomials with exact coefficients


def _padd(a: Poly, b: Poly) -> Poly:
    n = max(len(a), len(b))
    return tuple((a[i] if i < len(a) else Fraction(0)) + (b[i] if i < len(b) else Fraction(0))
                 for i in range(n))


def _pscale(a: Poly, c: Fraction) -> Poly:
    return tuple(x * c for x in a)


def _pmul(a: Poly, b: Poly) -> Poly:
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return tuple(out)


def _shift(a: Poly, k: int) -> Poly:
    return (Fraction(0),) * k + a


def _strip(a: Poly) -> Poly:
    out = list(a)
    while len(out) > 1 and out[-1] == 0:
        out.pop()
    return tuple(out)


# --------------------------------------------------------------------------------------------
# One die: its generating function as numerator / denominator


@dataclass(frozen=True, slots=True)
class _Form:
    """A die's law as rational generating functions sharing one denominator D(z).

    ``first[f]`` is the numerator of P(first standing face = f, value = k) (each already weighted
    by the probability of that first face); the die's law is Σ first[f] / D.
    """

    first: tuple[tuple[int, Poly], ...]
    denominator: Poly

    def numerator(self) -> Poly:
        out: Poly = (Fraction(0),)
        for _, num in self.first:
            out = _padd(out, num)
        return _strip(out)

    def geometric(self) -> tuple[Fraction, int] | None:
        """(r, s) when D(z) = d0·(1 − r·zˢ) (or a constant), else None."""
        d = self.denominator
        nonzero = [(i, c) for i, c in enumerate(d) if c and i > 0]
        if not nonzero:
            return Fraction(0), 1
        if len(nonzero) == 1:
            s, c = nonzero[0]
            return -c / d[0], s
        return None


@lru_cache(maxsize=256)
def _chain_form(chain: Chain) -> _Form:
    p = Fraction(1, chain.size)
    stop: Poly = (Fraction(0),)
    go: Poly = (Fraction(0),)
    for f in range(1, chain.size + 1):
        term = _shift((p,), chain.score(1, f))
        if chain.again(1, f):
            go = _padd(go, term)
        else:
            stop = _padd(stop, term)
    first: list[tuple[int, Poly]] = []
    if not any(chain.again(0, f) for f in range(1, chain.size + 1)):  # never rolled again
        for f in range(1, chain.size + 1):
            first.append((f, _shift((p,), chain.score(0, f))))
        return _Form(tuple(first), (Fraction(1),))
    denominator = _strip(_padd((Fraction(1),), _pscale(go, Fraction(-1))))
    if sum(denominator) <= 0:
        raise LimitError("a die here is rolled again on every face, so it never stops")
    for f in range(1, chain.size + 1):
        head = _shift((p,), chain.score(0, f))
        first.append((f, _strip(_pmul(head, stop if chain.again(0, f) else denominator))))
    return _Form(tuple(first), denominator)


def _form(unit: Chain | Reroll) -> _Form:
    if isinstance(unit, Chain):
        return _chain_form(unit)
    return _reroll_form(unit)


@lru_cache(maxsize=256)
def _reroll_form(unit: Reroll) -> _Form:
    base = _chain_form(unit.unit)
    p = Fraction(1, unit.unit.size)
    rerolled = sum((p for f in range(1, unit.unit.size + 1) if unit.when(f)), Fraction(0))
    # the first face that stands is g: either g came first and was kept, or any face came first,
    # was rolled once more, and the new roll showed g
    first = []
    for g, num in base.first:
        keep = Fraction(0) if unit.when(g) else Fraction(1)
        first.append((g, _strip(_pscale(num, keep + rerolled))))
    return _Form(tuple(first), base.denominator)


def _expand(numerator: Poly, denominator: Poly, eps: float) -> tuple[list[float], float]:
    if len(denominator) == 1:
        out = [float(c / denominator[0]) for c in numerator]
        return out, 0.0
    return maths.series_divide([float(c) for c in numerator], [float(c) for c in denominator],
                               eps)


# --------------------------------------------------------------------------------------------
# The interpreter


def work(program: Pool | Unit) -> int:
    """Estimated steps of ``law(program)``: the pool's terms times its tail, or one die's."""
    if isinstance(program, Pool):
        return program.count * (2 * program.count + 64)
    return 64


@lru_cache(maxsize=1024)
def _pool_law(program: Pool, eps: float) -> Law:
    n = program.count
    if n <= 0:
        return Law((1.0,))
    form = _form(program.unit)
    geo = form.geometric()
    numerator = _pscale(form.numerator(), 1 / form.denominator[0])
    if geo is not None and all(c >= 0 for c in numerator):
        r, s = geo
        low = next(i for i, c in enumerate(numerator) if c)
        body = numerator[low:]
        total = sum(body, Fraction(0))
        if len(body) <= 2:
            p = float(body[1] / total) if len(body) == 2 else 0.0
            counts = maths.binomial(n, p)
        else:
            counts = maths.power([float(c / total) for c in body], n)
        tail, lost = maths.negative_binomial(n, float(r), eps)
        if s > 1:
            spread = [0.0] * ((len(tail) - 1) * s + 1)
            spread[::s] = tail
            tail = spread
        pmf = [0.0] * (low * n) + maths.convolve(counts, tail)
    else:  # the general case: the unit's law, cut deeper, to the n-th power
        unit, unit_lost = _expand(form.numerator(), form.denominator, eps / max(1, n))
        pmf = maths.power(unit, n)
        lost = n * unit_lost
    while len(pmf) > 1 and pmf[-1] == 0.0:
        pmf.pop()
    return Law(tuple(pmf), lost)


def law(program: Pool | Chain | Reroll, eps: float = DEFAULT_EPS,
        limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
    """The exact law of ``program``'s value (a pool's sum, or one die's value)."""
    limits.check_work(work(program), "this pool", text)
    if not isinstance(program, Pool):
        program = Pool(1, program)
    return _pool_law(program, eps)


@lru_cache(maxsize=256)
def _marked_law(unit: Marked, eps: float) -> MarkedLaw:
    form = _form(unit.unit)
    by_mark: dict[Hashable, list[float]] = {}
    lost = 0.0
    for face, num in form.first:
        if not any(num):
            continue
        terms, cut = _expand(num, form.denominator, eps)
        lost += cut
        acc = by_mark.setdefault(unit.mark(face), [])
        acc.extend([0.0] * (len(terms) - len(acc)))
        for k, t in enumerate(terms):
            acc[k] += t
    return MarkedLaw(tuple((m, tuple(v)) for m, v in by_mark.items()), lost)


def marked_law(unit: Marked, eps: float = DEFAULT_EPS) -> MarkedLaw:
    """The exact joint law of a marked die's value and its mark."""
    return _marked_law(unit, eps)


def clear_caches() -> None:
    """Forget every cached law (tests that swap a rule call this)."""
    for f in (_chain_form, _reroll_form, _pool_law, _marked_law):
        f.cache_clear()
