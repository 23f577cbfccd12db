"""The exact law of one dice term or group of the general notation: chains of explosions and
re-rolls, pools split into classes of alike dice, keep/drop by order statistics (see
``exact.py`` for how a whole expression is built from them)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from ..._limits import Limits
from ..._memo import by_identity
from ...dice.algebra import Keep, Pool, kept_count
from ...odds.algebra import keep_pool_law, keep_shape, pool_law, pool_shape, roll_once
from ...odds.keep import keep_plan
from ...odds.maths import binomial
from .lexicon import TAIL
from .nodes import (
    Dice,
    Group,
    Lazy,
    Value,
)
from .pmf import (
    ROW_BYTES,
    Budget,
    Pmf,
    add,
    convolve,
    lost_of,
    mapped,
    merge,
    power,
)
from .program import die_chain, roll_law
from .rules import (
    clamp,
    explodes,
    face_value,
    keep_count,
    keep_spec,
    keeps_value,
    score,
)

EPS = TAIL / 100
Classes = list[tuple[int, dict[int, float]]]  # dice of a pool as (count, law of one) of i.i.d.  # where an endless tail (explosions, re-rolls) is cut

# --------------------------------------------------------------------------------------------
# Dice terms


_READ = 20  # steps (lines run) to read the rules on one face of a die: its again and score at
# the first face and at a re-roll, and its re-roll


def _readable(d: Dice, budget: Budget) -> None:
    """Refuses a die too large to read before any of it is read (``d1000000!`` at once, not
    after seconds of reading): each reading is a call into a registered rule, about three lines'
    time, so reading a face can take three times ``_READ``."""
    budget.check(3 * _READ * d.size, d, d.span)


def _faces(d: Dice, budget: Budget) -> dict[int, float]:
    """The face that stands on one roll of ``d`` (N1), once the die is known to be readable."""
    _readable(d, budget)
    return roll_law(d)


def kept(classes: Classes, highest: bool, k: int, w: Callable[[int], int] | None, budget: Budget,
         what: object, span: tuple[int, int] | None = None) -> Pmf:
    """The sum of ``w`` over the ``k`` highest (lowest) dice of the classes: the shared order
    statistics (``odds.keep``), its work spent first."""
    plan = keep_plan(classes, highest, k, w, budget.limit - budget.used)
    budget.spend(plan.steps, what, span, plan.memory)
    low, pmf = plan.law()
    return Pmf(low, pmf)


def _keep_pmf(d: Dice, w: Callable[[int], int] | None, budget: Budget) -> Pmf:
    """The kept dice of a term: the algebra's ``Keep`` of its pool (rule 3), each kept die read
    by ``w`` (with ``mi``/``ma``: on its clamped value; ranking by the raw value keeps the same
    clamped values, since a clamp never reverses two values). An explosion that adds a die
    (``!``, ``!p``, ``xo``) makes each roll a die of its own (``Keep.each``)."""
    assert d.keep is not None
    _readable(d, budget)
    n, highest, dropping = keep_spec(d.keep)
    if _plain(d, w):  # one class of i.i.d. dice, a uniform law over the faces
        low = face_value(d, 1)
        unit = dict.fromkeys(range(low, low + d.size), 1.0 / d.size)
        return kept([(d.count, unit)], highest, kept_count(d.count, n, dropping), None, budget,
                    d, d.span)
    program = Keep(Pool(d.count, die_chain(d)), n, highest, w, dropping,
                   d.explode in ("explode", "penetrate", "once"))
    steps, memory = keep_shape(program)
    budget.spend(steps, d, d.span, memory)
    one = keep_pool_law(program)
    return Pmf(one.low, list(one.pmf), lost=one.truncated)


def _identity(v: int) -> int:
    return v


def _plain(d: Dice, w: Callable[[int], int] | None) -> bool:
    """Plain dice (N0 only): no explosion, re-roll, custom face or reading, so one die's law is
    uniform over the faces from ``face_value(d, 1)`` up."""
    return w is None and d.explode is None and not d.reroll and not d.custom


def _sum_pmf(d: Dice, w: Callable[[int], int] | None, limits: Limits, budget: Budget) -> Pmf:
    """A term that adds up its dice, each read by ``w`` (None: its value): the dice algebra's
    law of the pool (``program.py``). A compounded die is read whole, so with a ``w`` its law is
    mapped, then added up ``count`` times."""
    what = d
    if d.explode is None and not d.reroll:  # each die rolled once: one roll's law, added up
        unit: Pmf | None = None
        if _plain(d, w):
            unit = Pmf(face_value(d, 1), [1.0 / d.size] * d.size)
        else:  # what one roll scores (the algebra's roll_once): added up as a power when its
            # values are whole numbers without a gap (else a zero inside the sum's law would
            # not stay exact through the FFT: the algebra spreads the dice over their step)
            _readable(d, budget)
            budget.spend(_READ * d.size, what, d.span)
            once = Pmf.from_dict(dict[Value, float](roll_once(die_chain(d, w)).items()))
            if once.p is not None and 0.0 not in once.p:
                unit = once
        if unit is not None:
            return power(unit, d.count, budget, what, d.span, answer=True)
    whole = d.explode == "compound" and w is not None
    pool = Pool(1 if whole else d.count, die_chain(d, None if whole else w))
    _readable(d, budget)  # before the die's law is set up
    steps, length = pool_shape(pool, EPS)
    # the algebra's steps, one per value of the law, and the rules read on each face
    budget.spend(steps + length + _READ * d.size,
                 Lazy(lambda: f"{what} ({length:,} possible values or more)"), d.span,
                 ROW_BYTES * length)
    one = pool_law(pool, EPS)
    out = Pmf(one.low, list(one.pmf), lost=one.truncated)
    if whole:
        read: Callable[[int], int] = w  # type: ignore[assignment]  # ``whole`` needs a w
        out = power(mapped(out, lambda v: read(int(v)), budget, what), d.count, budget, what)
    return out


def _after_clamp(d: Dice, w: Callable[[int], int]) -> Callable[[int], int]:
    return lambda v: w(int(clamp(d, v)))


def _clamped(d: Dice, pmf: dict[int, float]) -> dict[int, float]:
    """A class of dice with ``mi``/``ma`` applied to each value."""
    out: dict[int, float] = {}
    for v, p in pmf.items():
        c = int(clamp(d, v))
        out[c] = out.get(c, 0.0) + p
    return out


def _clamped_kept(d: Dice, w: Callable[[Any], int]) -> Callable[[Any], int]:
    assert d.keep is not None
    keep = d.keep
    return lambda v: w(clamp(d, v)) if keeps_value(keep, clamp(d, v)) else 0


def _reroll_add_pmf(d: Dice, budget: Budget) -> Pmf:
    """Avrae's ``ra``: if any die matches, one more die is rolled and added (once per term).
    The sum where no die matches is the power of the faces that do not match; the rest of the
    law of the sum gets one more die."""
    what = d
    g = _faces(d, budget)
    lo = min(g)
    one = [0.0] * (max(g) - lo + 1)
    calm = [0.0] * len(one)
    for f, p in g.items():
        one[f - lo] = p
        if not explodes(d, f):
            calm[f - lo] = p
    every = power(Pmf(lo, one), d.count, budget, what)
    quiet = power(Pmf(lo, calm), d.count, budget, what)
    assert every.p is not None and quiet.p is not None
    some = list(every.p)
    at = quiet.off - every.off
    some[at:at + len(quiet.p)] = [max(0.0, x - y) for x, y in zip(some[at:], quiet.p)]
    added = Pmf(every.off + lo, convolve(some, one, budget, what))
    return merge(quiet, added)


def _matches_pmf(d: Dice, budget: Budget) -> Pmf:
    """Roll20's ``mt``: how many values show on at least ``match`` of the dice (plain dice,
    re-rolls allowed). Faces are placed one value at a time: given that the ``r`` dice not
    yet placed all show later values, the number showing this one is binomial."""
    g = _faces(d, budget)
    n, size = d.count, d.match
    budget.spend(len(g) * (n + 1) ** 2 * (n // size + 1), d, d.span)
    state = {(n, 0): 1.0}  # (dice left, sets found) → probability
    left = 1.0
    for v in sorted(g):
        p = g[v]
        x = min(1.0, p / left) if left > 0 else 1.0
        left -= p
        nxt: dict[tuple[int, int], float] = {}
        for (r, m), q in state.items():
            for c, pc in enumerate(binomial(r, x)):
                if pc > 0:
                    key = (r - c, m + (1 if c >= size else 0))
                    nxt[key] = nxt.get(key, 0.0) + q * pc
        state = nxt
    out: dict[Value, float] = {}
    for (_, m), q in state.items():
        out[m] = out.get(m, 0.0) + q
    return Pmf.from_dict(out)


def _kept_only(keep: Any, w: Callable[[Any], int]) -> Callable[[Any], int]:
    """Rules 3 and 4 for a by-value keep: what a die adds, 0 if it is dropped."""
    return lambda v: w(v) if keeps_value(keep, v) else 0


def _weight(term: Dice | Group) -> Callable[[Any], int] | None:
    """Rule 4 per kept die: the value itself, or its success score."""
    if term.success is None:
        return None
    return lambda v: score(term, v)


def dice_pmf(d: Dice, limits: Limits, budget: Budget) -> Pmf:
    """The exact distribution of a dice term."""
    return _dice_pmf_cached(d, limits, budget)


def _dice_pmf_cached(d: Dice, limits: Limits, budget: Budget) -> Pmf:
    # by the term's identity, as exact's whole expressions (see there); reading is the work
    return by_identity(_CACHE, (id(d), limits.max_explosions), d,
                       lambda: _dice_pmf(d, limits, budget), 256,
                       lambda pmf: budget.spend(len(pmf), d))


_CACHE: dict[tuple[int, int], tuple[Dice, Pmf]] = {}


def forget() -> None:
    """Clear the remembered laws of dice terms, and every law the algebra remembers."""
    from ...odds.algebra import clear_caches

    _CACHE.clear()
    clear_caches()


def _dice_pmf(d: Dice, limits: Limits, budget: Budget) -> Pmf:
    weight = _weight(d)
    w: Callable[[int], int] = weight if weight is not None else _identity
    if d.count == 0:
        return Pmf.point(0)
    if d.match_count:
        return _matches_pmf(d, budget)
    if d.explode == "add":
        return _reroll_add_pmf(d, budget)
    if d.minimum is not None or d.maximum is not None:  # mi/ma: on each die's value first
        w = _after_clamp(d, w)
    by_value = d.keep is not None and d.keep.by_value
    if by_value:  # k>3, p<2: a die kept or dropped on its own value adds w(v) or nothing
        w = _kept_only(d.keep, w) if d.minimum is None and d.maximum is None else (
            _clamped_kept(d, weight if weight is not None else (lambda v: v)))
    if d.keep is None or by_value:
        return _sum_pmf(d, None if w is _identity else w, limits, budget)
    return _keep_pmf(d, None if w is _identity else w, budget)


# --------------------------------------------------------------------------------------------
# Groups


_GROUP_READ = 10  # steps to read one value of a group's item for a keep (a line or so a copy)
_GROUP_BYTES = 400  # bytes it holds meanwhile: its copies in a list, dicts and sets


def group_pmf(g: Group, items: Sequence[Pmf], budget: Budget) -> Pmf:
    """``{a, b, ...}``: the sum of the items, or keep/drop and success counting over them."""
    what = g
    weight = _weight(g)
    lost = lost_of(*(p.lost for p in items))
    if g.keep is not None and g.keep.by_value:
        weight = _kept_only(g.keep, weight if weight is not None else (lambda v: v))
    if g.keep is None or g.keep.by_value:
        parts = items if weight is None else [mapped(p, weight, budget, what) for p in items]
        out = parts[0]
        for p in parts[1:]:
            out = add(out, p, budget, what)
        return out.with_lost(lost)
    # classes of identical items; fractional values are scaled to whole numbers for the DP:
    # every value of every item read into a few dicts and sets first, counted before they are
    # made (a group of twenty d650000 took 1.9 GB before its keep was counted)
    values = sum(len(p) for p in items)
    budget.spend(_GROUP_READ * values, what, g.span, _GROUP_BYTES * values)
    dists = [p.normalised().as_dict() for p in items]
    whole = {type(v) for d in dists for v in d} == {int}  # no Fraction made for whole values
    scale = 1 if whole else math.lcm(*(Fraction(v).denominator for d in dists for v in d))
    classes: list[tuple[int, dict[int, float]]] = []
    for dist in dists:
        scaled: dict[int, float] = {int(v): p for v, p in dist.items()} if whole else \
            {int(Fraction(v) * scale): p for v, p in dist.items()}
        for i, (n, other) in enumerate(classes):
            if other == scaled:
                classes[i] = (n + 1, other)
                break
        else:
            classes.append((1, scaled))
    highest, k = keep_count(g.keep, len(items))
    if weight is None:
        out = kept(classes, highest, k, None, budget, what, g.span)
        if scale != 1:
            out = mapped(out, lambda v: Fraction(v, scale) if v % scale else v // scale,
                         budget, what)
    else:
        out = kept(classes, highest, k, lambda v: weight(Fraction(v, scale)), budget, what,
                   g.span)
    return out.with_lost(lost)
