"""One die of the dice algebra as rational generating functions (the exact interpreter's forms).

A ``Chain`` (with its re-roll in place) or a ``Reroll`` becomes a ``Form``: for each first face
that stands, a numerator over a denominator shared by the whole die, in exact integers over the
faces' weights, shifted by the die's lowest value. ``astragal.odds.algebra`` builds the laws of
pools, drops and marks from them.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from .._errors import LimitError
from .._memo import by_identity
from .._records import Record
from ..dice.algebra import Chain, Reroll
from . import maths

__all__ = ["Form", "Poly", "cap_matters", "chain_form", "expand", "form_of", "poly_add",
           "reroll_form", "shifted", "spread", "trim"]

Poly = tuple[int, ...]


# --------------------------------------------------------------------------------------------
# Polynomials with exact integer coefficients (a die's faces are equally likely, so every
# coefficient is a whole number over a power of the die's size, kept beside it as a scale)


def poly_add(a: Poly, b: Poly) -> Poly:
    n = max(len(a), len(b))
    return tuple((a[i] if i < len(a) else 0) + (b[i] if i < len(b) else 0) for i in range(n))


def _pmul(a: Poly, b: Poly) -> Poly:
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return tuple(out)


def _sparse_mul(a: Poly, b: Poly) -> Poly:
    """a·b where b has few nonzero coefficients (a die's denominator: its faces that go on)."""
    out = [0] * (len(a) + len(b) - 1)
    for j, y in enumerate(b):
        if y:
            for i, x in enumerate(a, j):
                out[i] += x * y
    return tuple(out)


def shifted(a: Poly, k: int) -> Poly:
    return (0,) * k + a


def trim(a: Poly) -> Poly:
    out = list(a)
    while len(out) > 1 and out[-1] == 0:
        out.pop()
    return tuple(out)


# --------------------------------------------------------------------------------------------
# One die: its generating function as numerator / denominator


_NUMERATORS: dict[int, tuple[object, Poly]] = {}


class Form(Record):
    """A die's law as rational generating functions sharing one denominator.

    P(first standing face = f, value = low + k) is the coefficient of zᵏ in
    (z^shift · num · (denominator if over else 1) / num_scale) / (denominator / den_scale) for
    the entry (f, shift, num, over) of ``first``; the die's law is their sum over f. (The shift
    and the factor of a face that stops at once are kept apart: each face of a large die would
    otherwise carry a polynomial as long as the die.)
    """

    first: tuple[tuple[int, int, Poly, bool], ...]
    num_scale: int
    denominator: Poly
    den_scale: int
    low: int = 0

    def numerator(self) -> Poly:
        """The sum of the entries' numerators (made once per form)."""
        return by_identity(_NUMERATORS, id(self), self, self._numerator, 512)

    def numerator_shape(self) -> tuple[int, int]:
        """(length, products) of ``numerator()`` without making it: the faces that stop at once
        are multiplied by every face that goes on (quadratic in a die with many of each)."""
        plain = over = 0
        for _, shift, num, times in self.first:
            if times:
                over = max(over, shift + len(num))
            else:
                plain = max(plain, shift + len(num))
        feeds = sum(1 for c in self.denominator if c)
        length = max(plain, over + len(self.denominator) - 1 if over else 0)
        return length, over * feeds

    def _numerator(self) -> Poly:
        ends = [(shift + len(num), times) for _, shift, num, times in self.first]
        plain = [0] * max([end for end, times in ends if not times], default=0)
        over = [0] * max([end for end, times in ends if times], default=0)
        for _, shift, num, times in self.first:
            acc = over if times else plain
            if len(num) == 1:  # most faces of a large die: one weight at its value
                acc[shift] += num[0]
                continue
            acc[shift:shift + len(num)] = [x + c for x, c in zip(acc[shift:shift + len(num)],
                                                                 num)]
        if over:
            for k, c in enumerate(_sparse_mul(tuple(over), self.denominator)):
                if k >= len(plain):
                    plain.append(0)
                plain[k] += c
        return trim(tuple(plain))

    def entry(self, i: int) -> Poly:
        """The numerator of entry ``i`` in full."""
        _, shift, num, times = self.first[i]
        return shifted(_sparse_mul(num, self.denominator) if times else num, shift)

    def geometric(self) -> tuple[Fraction, int] | None:
        """(r, s) when the denominator is d0·(1 − r·zˢ) (or a constant), else None."""
        d = self.denominator
        nonzero = [(i, c) for i, c in enumerate(d) if c and i > 0]
        if not nonzero:
            return Fraction(0), 1
        if len(nonzero) == 1:
            s, c = nonzero[0]
            return Fraction(-c, d[0]), s
        return None

    def floats(self, num: Poly) -> tuple[list[float], list[float]]:
        """A numerator and the denominator as floats of one series (scales folded in)."""
        return ([c * self.den_scale / self.num_scale for c in num],
                [float(c) for c in self.denominator])


def _accumulate(terms: list[tuple[int, int]]) -> list[int]:
    """Σ count·z^power as a coefficient list."""
    out = [0] * (max((k for k, _ in terms), default=0) + 1)
    for k, c in terms:
        out[k] += c
    return out


# A die that is rolled again has a form as long as its values' span (its polynomials hold a
# term per value between them): a custom die's values may lie 10**15 apart, a plain die's at
# most 10**6 (``MAX_SIDES``)
_SPAN_UPTO = 4_000_000

# A capped chain whose cap is reached with less probability than this is computed as uncapped:
# the cap moves less mass than the tails cut anyway.
_CAP_MATTERS = 1e-21


def _finite_tail(size: int, stop: Poly, go: Poly, every: Poly, limit: int) -> Poly:
    """A run after its first face when at most ``limit`` re-rolls are allowed, over size^limit:
    Σ_{j<limit−1} Gʲ·S·size^(limit−1−j) + G^(limit−1)·T (the last re-roll stops whatever it
    shows)."""
    tail: Poly = (0,)
    power: Poly = (1,)
    for j in range(limit - 1):
        tail = poly_add(tail, tuple(c * size ** (limit - 1 - j) for c in _pmul(power, stop)))
        power = _pmul(power, go)
    return trim(poly_add(tail, _pmul(power, every)))


def _weights(chain: Chain) -> tuple[list[int], int]:
    """How often each face 1..size stands on one roll, over a whole-number base: 1 each over
    ``size``; after a re-roll in place (``Chain.reroll``), 0 for a re-rolled face over the faces
    that stand, or with ``reroll_once`` (size if it stands, plus one per re-rolled face) over
    size²."""
    size, reroll = chain.size, chain.reroll
    if reroll is None:
        return [1] * size, size
    hit = [reroll(f) for f in range(1, size + 1)]
    if chain.reroll_once:
        again = sum(hit)
        return [(0 if h else size) + again for h in hit], size * size
    standing = size - sum(hit)
    if standing == 0:
        raise LimitError("a die here is re-rolled on every face, so it never stands")
    return [0 if h else 1 for h in hit], standing


def cap_matters(chain: Chain) -> bool:
    """The chain's cap can be reached with a probability that counts (see ``_CAP_MATTERS``)."""
    if chain.limit is None:
        return False
    weights, base = _weights(chain)
    going = sum(w for f, w in enumerate(weights, 1) if chain.again(1, f))
    return chain.limit > 0 and (going / base) ** (chain.limit - 1) >= _CAP_MATTERS


@lru_cache(maxsize=256)
def chain_form(chain: Chain) -> Form:
    weights, base = _weights(chain)
    faces = [f for f, w in enumerate(weights, 1) if w]
    goes_first = [chain.again(0, f) for f in faces]
    scores_first = [chain.score(0, f) for f in faces]
    # the generating functions are kept in z^(value − low) ≥ 0, from the lowest first value (a
    # die whose faces all lie far from 0 has short polynomials: 3d{1000000000,1000000002})
    a = min(scores_first)
    if not any(goes_first) or chain.limit == 0:  # never rolled again
        alone: tuple[tuple[int, int, Poly, bool], ...] = tuple(
            (f, k - a, (weights[f - 1],), False) for f, k in zip(faces, scores_first))
        return Form(alone, base, (1,), 1, a)
    later = [(chain.score(1, f), chain.again(1, f), weights[f - 1]) for f in faces]
    if any(k < 0 for k, go, _ in later if go):
        raise LimitError("a die here goes on after a face worth less than 0, so its value has "
                         "no lowest")
    # a roll again adds its value to the die's: its polynomial counts values from 0, so the
    # span that is made runs from 0 (or the lowest value below it) to the highest
    values = scores_first + [k for k, _, _ in later]
    if max(values) - min(0, *values) > _SPAN_UPTO:  # before polynomials as long are made
        raise LimitError(f"a die here that is rolled again shows values from {min(values):,} to "
                         f"{max(values):,}: exact odds follow such dice when their values, and "
                         f"0, lie at most {_SPAN_UPTO:,} apart")
    b = min([0, *(k for k, go, _ in later if not go)])  # a run after the first stops once
    stop = tuple(_accumulate([(k - b, w) for k, go, w in later if not go]))
    go = _accumulate([(k, w) for k, g, w in later if g])
    limit = chain.limit
    if limit is not None and cap_matters(chain):
        scale = base ** limit
        every = tuple(_accumulate([(k - b, w) for k, _, w in later]))
        tail = _finite_tail(base, stop, tuple(go), every, limit)
        first = tuple((f, k - a + (0 if g else -b),
                       trim(tuple(c * weights[f - 1] for c in (tail if g else (scale,)))),
                       False)
                      for f, g, k in zip(faces, goes_first, scores_first))
        return Form(first, base * scale, (1,), 1, a + b)
    go[0] = base - go[0]
    denominator = trim(tuple([go[0]] + [-c for c in go[1:]]))
    by_weight: dict[int, Poly] = {}  # the stop polynomial times each weight, made once

    def stopping(w: int) -> Poly:
        hit = by_weight.get(w)
        if hit is None:
            hit = by_weight[w] = trim(tuple(c * w for c in stop))
        return hit

    if sum(denominator) <= 0:
        raise LimitError("a die here is rolled again on every face, so it never stops")
    first = tuple((f, k - a + (0 if g else -b),
                   stopping(weights[f - 1]) if g else (weights[f - 1],), not g)
                  for f, g, k in zip(faces, goes_first, scores_first))
    return Form(first, base * base, denominator, base, a + b)


def form_of(unit: Chain | Reroll) -> Form:
    if isinstance(unit, Chain):
        return chain_form(unit)
    return reroll_form(unit)


@lru_cache(maxsize=256)
def reroll_form(unit: Reroll) -> Form:
    base = chain_form(unit.unit)
    weights, total = _weights(unit.unit)
    rerolled = sum(w for f, w in enumerate(weights, 1) if unit.when(f))
    # the first face that stands is g: either g came first and was kept, or any face came first,
    # was rolled once more, and the new roll showed g
    first = tuple((g, shift, trim(tuple(c * ((0 if unit.when(g) else total) + rerolled)
                                          for c in num)), times)
                  for g, shift, num, times in base.first)
    return Form(first, base.num_scale * total, base.denominator, base.den_scale, base.low)


def spread(counts: list[float], tail: list[float], s: int) -> list[float]:
    """counts ∗ (the tail's terms placed every ``s`` values): one pass over the counts per term
    (a large die that explodes on one face has few terms, far apart)."""
    width = len(counts)
    out = [0.0] * (width + (len(tail) - 1) * s)
    for j, t in enumerate(tail):
        if t:
            at = j * s
            out[at:at + width] = [x + c * t for x, c in zip(out[at:at + width], counts)]
    return out


def expand(form: Form, numerator: Poly, eps: float) -> tuple[list[float], float]:
    num, den = form.floats(numerator)
    if len(den) == 1:
        return [c / den[0] for c in num], 0.0
    return maths.series_divide(num, den, eps)
