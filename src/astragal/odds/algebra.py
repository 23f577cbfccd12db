"""The exact interpreter of the dice algebra (``astragal.dice.algebra``).

``law(program)`` gives the exact law of what ``astragal.dice.sampler.sample`` rolls, calling the
same rule functions on every face instead of on the faces of one roll:

- a ``Chain`` (an explosion chain) is a power series: a run that stops with S(z) and goes on with
  R(z) has the law S(z)/(1 − R(z)); when every face that goes on scores the same (R = r·zˢ, the
  usual case), the law is a polynomial over (1 − r·zˢ), kept exactly in fractions;
- a ``Pool`` of n such dice is then N(z)ⁿ·(1 − r·zˢ)⁻ⁿ: a binomial (or a small polynomial power)
  times a negative binomial, O(n) terms instead of n convolutions; other pools are a power by
  squaring of the unit law;
- ``Reroll`` and ``Marked`` condition on the first face that stands;
- ``Drop`` (a pool without its highest die) of n dice whose values run u₁ < … < u_r: with Fᵢ the
  faces worth at most uᵢ, the dice all at most uᵢ but not all at most uᵢ₋₁ have their highest at
  uᵢ, so the law is Σᵢ (Fᵢⁿ − Fᵢ₋₁ⁿ)·z^(−uᵢ), in exact integers (the lowest die likewise);
- ``Top`` (the highest value and how many dice show it): P(u, m) = C(n, m)·aᵐ·bⁿ⁻ᵐ / sizeⁿ with
  a the faces worth u and b those worth less, in exact integers.
The mixed pools (``odds/pools.py``, the same interpreter continued):

- ``Highest`` of a mixed pool: P(highest ≤ k) = ∏ Fᵢ(k); of a ``Favored`` pool, a mixture over
  which die (in the rule's order) is the first that matches: the dice before it do not match,
  it is rolled afresh, the dice after it show anything. ``Least``: P(lowest > k) = ∏ P(partᵢ > k).
- ``Paired``: the rule ``pair`` is read on every pair of faces. When it is a step function of the
  difference a − d (nothing unless a > d), the filler is 1 and the bonus is read only on an
  all-ones defence, the sorted-pool evaluator (``astragal.odds.pairing``) steps through the faces
  from high to low with a small state; otherwise the sorted face vectors of each side are
  enumerated (small pools). ``outcomes`` enumerates any finite program by running the sample
  interpreter over every face sequence: the reference the tests hold the laws to.

Infinite tails are cut only where the probability left out is below ``eps``; the lost mass is
returned with every law. The work of a pool is estimated (``work``) before it is computed.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from functools import lru_cache

from .._limits import DEFAULT_LIMITS, Limits
from .._memo import by_identity
from .._records import Record
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
    Unit,
    kept_count,
    never,
)
from ..dice.algebra import face as _face
from . import maths
from .explode import each_law, each_shape, rough_parts
from .forms import (
    Form,
    Poly,
    cap_matters,
    chain_form,
    expand,
    form_of,
    poly_add,
    reroll_form,
    spread,
    trim,
)
from .keep import KeepPlan, keep_plan

__all__ = ["Law", "MarkedLaw", "keep_pool_law", "keep_shape", "law", "law_length", "marked_law",
           "pool_law", "pool_shape", "roll_once", "stood", "top_law", "work"]

DEFAULT_EPS = 1e-18



class Law(Record):
    """P(value = low + k) for k = 0, 1, 2, … and the probability lost where a tail was cut.
    From ``law``, ``low`` is 0 unless a value lies below 0 (the games index a law by value);
    from ``pool_law``, it is the lowest value the die's form counts from (a die whose faces all
    lie far above 0 has a short law)."""

    pmf: tuple[float, ...]
    truncated: float = 0.0
    low: int = 0


class MarkedLaw(Record):
    """P(value = k, mark = m) as {m: pmf}, and the probability lost where a tail was cut."""

    by_mark: tuple[tuple[Hashable, tuple[float, ...]], ...]
    truncated: float = 0.0


# --------------------------------------------------------------------------------------------
# The interpreter


def _chain(unit: Unit) -> Chain:
    while not isinstance(unit, Chain):
        unit = unit.unit
    return unit


def work(program: Program | Top) -> int:
    """Estimated steps of ``law(program)`` (a step: about one line of Python run, one
    multiply-add of a loop), following the path the law takes: a pool's binomial or power by
    squaring of its standing faces, its negative binomial tail and their product, or one die's
    series to the n-th power; a drop, one exact power per value; a highest, one product per die
    and value (per die and re-roll case when Favored). Held to the lines the laws run by
    tests/systems/test_system_work.py."""
    if isinstance(program, Mixed | Favored | Highest | Least | Paired):
        from .pools import composite_work

        return composite_work(program)
    if isinstance(program, Drop):
        pool = program.pool
        chain = _chain(pool.unit)
        values = sorted({chain.score(0, f) for f in range(1, chain.size + 1)})
        spread = sum(v - values[0] for v in values)
        return (64 + len(values) * (2 * chain.size + 8) + 6 * spread * pool.dice
                + 2 * (values[-1] - values[0]) * pool.dice)
    if isinstance(program, Top):
        chain = _chain(program.pool.unit)
        return 64 + chain.size * (program.pool.dice + 1) * 5
    if isinstance(program, Keep):
        one = _unit_work(program)
        if one > _READ_TO_COUNT:  # too much to read the die's law only to count the rest
            return one
        return one + _keep_shape(program)[0]
    capped = _capped_work(_chain(program.unit if isinstance(program, Pool) else program))
    if isinstance(program, Marked):
        return _marked_work(program) + capped
    if isinstance(program, Pool):
        return _pool_shape(program, DEFAULT_EPS)[0] + capped
    return _pool_shape(Pool(1, program), DEFAULT_EPS)[0] + capped


def pool_shape(program: Pool, eps: float = DEFAULT_EPS) -> tuple[int, int]:
    """(estimated steps, estimated length) of ``pool_law(program, eps)``."""
    return _pool_shape(program, eps)


def pool_law(program: Pool, eps: float = DEFAULT_EPS) -> Law:
    """The law of a pool whose work the caller has checked (``pool_shape``): ``law`` without
    estimating it again, counted from its lowest value (see ``Law``)."""
    return _pool_law(program, eps)


def law_length(program: Pool | Chain | Reroll, eps: float = DEFAULT_EPS) -> int:
    """The estimated length of ``law(program).pmf`` (to estimate what is done with it next)."""
    if not isinstance(program, Pool):
        program = Pool(1, program)
    return _from_zero(program) + _pool_shape(program, eps)[1]


def _from_zero(program: Pool) -> int:
    """The values from 0 up to where a pool's form counts from, which ``law`` lays out."""
    return max(0, program.dice * form_of(program.unit).low)


def _capped_work(chain: Chain) -> int:
    return (chain.limit or 0) ** 2 * chain.size if cap_matters(chain) else 0


def _series_terms(form: Form, eps: float) -> tuple[int, int]:
    """(terms, feeds) of ``expand``: the series runs until the mass still to come, which falls
    by the chance of going on (r) for every ``deg`` values, is below ``eps``."""
    length, _ = form.numerator_shape()  # the numerator itself may be too much work to make
    den = form.denominator
    if len(den) == 1:
        return length, 0
    go = [-c for c in den[1:]]
    r = sum(c for c in go if c > 0) / den[0]
    feeds = sum(1 for c in go if c)
    if r <= 0.0:
        return length, feeds
    rounds = math.log(max(eps, 1e-300)) / math.log(min(r, 0.999))
    return length + math.ceil(rounds * (len(den) - 1)), feeds


def _pool_shape(program: Pool, eps: float) -> tuple[int, int]:
    """(estimated steps, estimated length) of ``_pool_law(program, eps)``, by its branches."""
    n = program.dice
    if n <= 0:
        return 16, 1
    form = form_of(program.unit)
    geo = form.geometric()
    length, products = form.numerator_shape()
    steps = 32 + 4 * length + 2 * len(form.first) + products
    outline = _outline(form, length) if geo is not None else None
    if geo is not None and outline is not None:
        r, s = geo
        low, body, two = outline
        if body <= 2:
            nonzero = n + 1 if two else 1
            steps += 3 * n if nonzero > 1 else 8
            width = n + 1
        else:
            total = sum(form.numerator()[low:]) if length <= _MADE_UPTO else 0
            steps += maths.counts_power_plan(body, total, n)[0]
            nonzero = width = (body - 1) * n + 1
        tail = terms = 1
        if r > 0:
            rf = float(r)
            mean, sd = n * rf / (1 - rf), math.sqrt(n * rf) / (1 - rf)
            tail = terms = int(mean + 9 * sd + math.log(eps) / math.log(rf)) + 1
            steps += 7 * tail
            tail = (tail - 1) * s + 1
        # the convolution with the tail: dense, or one pass over the counts per term of a tail
        # spread out every s values
        steps += (2 * nonzero * tail if s == 1 else 2 * width * terms) + width + tail
        return steps, low * n + width + tail - 1
    _, work_, terms = _general_route(form, n, eps)
    return steps + work_, (terms - 1) * n + 1


# A die rolled once whose numerator is longer than this has it outlined from the form's entries,
# not made: a die whose faces lie far apart (``d{1,1000000000}``) has a few entries and a
# numerator as long as their span
_MADE_UPTO = 4096


def _outline(form: Form, length: int) -> tuple[int, int, bool] | None:
    """(first nonzero term, terms from it to the end, whether two such terms are both nonzero)
    of a geometric form's numerator when every term is at least 0, else None. A long numerator
    of a die rolled once (its entries are its faces' weights at their values) is read off the
    entries: making it is work in its length, which the estimate is there to refuse first."""
    if length > _MADE_UPTO and not any(times for _, _, _, times in form.first):
        if any(c < 0 for _, _, num, _ in form.first for c in num):
            return None
        low = min(shift + next(i for i, c in enumerate(num) if c)
                  for _, shift, num, _ in form.first if any(num))
        second = any(shift <= low + 1 < shift + len(num) and num[low + 1 - shift]
                     for _, shift, num, _ in form.first)
        return low, length - low, length - low == 2 and second
    numerator = form.numerator()
    if any(c < 0 for c in numerator):
        return None
    low = next(i for i, c in enumerate(numerator) if c)
    return low, len(numerator) - low, len(numerator) - low == 2 and numerator[-1] != 0


_DIVIDED_UPTO = 64  # numerators this long or shorter may be raised to the n-th power first


def _general_route(form: Form, n: int, eps: float) -> tuple[bool, int, int]:
    """How ``_pool_law`` takes a pool whose die is not geometric (an explosion on several
    faces, ``10d10!>=8``): (divided?, its steps). Either the die's law expanded, then raised to
    the n-th power (products of long series: numpy's, for most pools), or its numerator raised
    to the n-th power and divided by the denominator n times (each a recurrence of nonnegative
    terms, as long as the pool's law; in Python, no cancellation): the one with less work.
    Also the die's expanded law's length (its terms), which the pool's length is read from."""
    terms, feeds = _series_terms(form, eps / max(1, n))
    power = terms * (5 + 2 * feeds) + maths.power_work(terms, n)
    length, products = form.numerator_shape()
    den = form.denominator
    r = sum(-c for c in den[1:] if c < 0) / den[0]  # the chance a roll goes on
    if n < 2 or len(den) == 1 or not 0.0 < r < 1.0 or length > _DIVIDED_UPTO or \
            products > 4096 or any(c < 0 for c in form.numerator()):
        return False, power, terms
    # the pool's law is as long as n numerators and the rounds that n dice go on for: their
    # mean, nine standard widths, and the rounds for the chance left to fall below eps
    rounds = n * r / (1 - r) + 9 * math.sqrt(n * r) / (1 - r) + \
        math.log(max(eps, 1e-300)) / math.log(min(r, 0.999))
    law = (length - 1) * n + 1 + math.ceil(rounds * (len(den) - 1))
    # n divisions, each a recurrence over a series at most as long, a term read per feed
    divided = maths.power_work(length, n) + n * law * (4 + 4 * feeds)
    return divided < power, min(divided, power), terms


def _divided(form: Form, numerator: Poly, n: int, eps: float) -> tuple[list[float], float]:
    """(N/D)ⁿ as Nⁿ divided by D n times, and the mass cut: after the i-th division the series
    holds D(1)^(n−i) of the final mass, so what each cuts is counted at that scale."""
    num, den = form.floats(numerator)
    whole = math.fsum(den)  # D(1): N(1)/D(1) is the die's whole law
    acc = maths.power(num, n)
    lost = 0.0
    for i in range(1, n + 1):
        scale = whole ** (n - i)
        acc, cut = maths.series_divide(acc, den, eps / n * scale)
        lost += cut / scale
    return acc, lost


def _marked_work(program: Marked) -> int:
    """``marked_law``: each face (each face pair when a face is checked) grouped by its mark,
    then one series per mark (counted as three)."""
    form = form_of(program.unit)
    size = _chain(program).size
    checked = program.check is not None
    terms, feeds = _series_terms(form, DEFAULT_EPS)
    grouping = len(form.first) * (size if checked else 1) * (8 + form.numerator_shape()[0])
    return 64 + grouping + 3 * terms * (5 + 2 * feeds)


@lru_cache(maxsize=1024)
def _pool_law(program: Pool, eps: float) -> Law:
    n = program.dice
    if n <= 0:
        return Law((1.0,))
    form = form_of(program.unit)
    geo = form.geometric()
    numerator = form.numerator()
    if geo is not None and all(c >= 0 for c in numerator):
        r, s = geo
        low = next(i for i, c in enumerate(numerator) if c)
        body = numerator[low:]
        counts = maths.counts_power(body, n)  # two values: the binomial
        tail, lost = maths.negative_binomial(n, float(r), eps)
        pmf = [0.0] * (low * n) + (maths.convolve(counts, tail) if s == 1 else
                                   spread(counts, tail, s))
    elif _general_route(form, n, eps)[0]:
        pmf, lost = _divided(form, numerator, n, eps)
    else:  # the general case: the unit's law, cut deeper, to the n-th power
        unit, unit_lost = expand(form, numerator, eps / max(1, n))
        pmf = maths.power(unit, n)
        lost = n * unit_lost
    while len(pmf) > 1 and pmf[-1] == 0.0:
        pmf.pop()
    low = n * form.low
    if low < 0:  # the forms' floor may lie below the lowest value: start at the lowest
        lead = 0
        while lead < -low and lead < len(pmf) - 1 and pmf[lead] == 0.0:
            lead += 1
        pmf, low = pmf[lead:], low + lead
    return Law(tuple(pmf), lost, low)


@lru_cache(maxsize=256)
def _drop_law(program: Drop) -> Law:
    pool, n = program.pool, program.pool.dice
    chain = _plain(pool, "Drop")
    if n <= 1:
        return Law((1.0,))
    values = sorted(chain.score(0, f) for f in range(1, chain.size + 1))
    if not program.highest:  # the lowest die of the values is the highest of their negatives
        values = sorted(-v for v in values)
    low = values[0]
    # F_i: the faces worth at most u_i, as counts of (value − lowest)
    out: dict[int, int] = {}
    below: list[int] = []
    distinct = sorted(set(values))
    for u in distinct:
        f = [0] * (u - low + 1)
        for v in values:
            if v <= u:
                f[v - low] += 1
        power = maths.int_power(f, n)
        for k, c in enumerate(power):
            c -= below[k] if k < len(below) else 0
            if c:
                value = n * low + k - u  # the sum of the others
                out[value] = out.get(value, 0) + c
        below = power
    if not program.highest:
        out = {-v: c for v, c in out.items()}
    lo, hi = min(out), max(out)
    counts = [out.get(v, 0) for v in range(lo, hi + 1)]
    if lo < 0:
        raise ValueError("Drop's law is kept over 0, 1, 2, …: the dice may not score below 0")
    return Law(tuple([0.0] * lo + maths.exact_floats(counts, chain.size, n)))


_READ_TO_COUNT = 1_000_000  # a Keep's work is counted on its die's law, read if it costs less


@lru_cache(maxsize=256)
def stood(chain: Chain) -> dict[int, float]:
    """The law of the face that stands on one roll of ``chain``, after its re-roll in place
    (every face alike without one)."""
    if chain.reroll is None:
        return dict.fromkeys(range(1, chain.size + 1), 1.0 / chain.size)
    one = _pool_law(Pool(1, Chain(chain.size, never, _face, "re-roll", None, chain.reroll,
                                  chain.reroll_once)), DEFAULT_EPS)
    return {one.low + k: p for k, p in enumerate(one.pmf) if p > 0.0}


def roll_once(chain: Chain, position: int = 0) -> dict[int, float]:
    """The law of what one roll of ``chain`` scores at ``position`` (0: a first face, 1: a
    re-roll), on the face that stands after its re-roll in place."""
    score = chain.score
    if chain.reroll is None:  # every face alike: a value's chance is its faces over the size,
        faces: dict[int, int] = {}  # each correctly rounded (no sum of 1/size a face)
        for f in range(1, chain.size + 1):
            v = score(position, f)
            faces[v] = faces.get(v, 0) + 1
        return {v: c / chain.size for v, c in faces.items()}
    out: dict[int, float] = {}
    for f, p in stood(chain).items():
        v = score(position, f)
        out[v] = out.get(v, 0.0) + p
    return out


def _classes(program: Keep) -> tuple[list[tuple[int, dict[int, float]]], float]:
    """A Keep's pool as one class of i.i.d. dice (how many, the law of one), and what was cut
    from the law of one: the class's law is read given that no die ran past the cut."""
    unit, n = program.pool.unit, program.pool.dice
    if isinstance(unit, Chain) and unit.again is never:  # rolled once: no generating function
        return [(n, roll_once(unit))], 0.0
    one = _pool_law(Pool(1, unit), DEFAULT_EPS / max(1, n))
    whole = 1.0 - one.truncated
    return [(n, {one.low + k: p / whole for k, p in enumerate(one.pmf) if p})], one.truncated


def _unit_work(program: Keep) -> int:
    """The work of reading one die: its faces (each roll's face, when each roll is a die of its
    own), or its law."""
    unit = program.pool.unit
    if isinstance(unit, Chain) and (unit.again is never or program.each):
        return 4 * unit.size + (work(Pool(1, Chain(unit.size, never, _face, "re-roll", None,
                                                   unit.reroll, unit.reroll_once)))
                                if unit.reroll is not None else 0)
    return work(Pool(1, unit))


_PLANS: dict[int, tuple[Keep, tuple[KeepPlan, float]]] = {}


def _plan(program: Keep) -> tuple[KeepPlan, float]:
    """A Keep's order statistics made ready, once per program (its cost is counted, then its
    law made, from the same set-up), and what was cut from the law of one die."""
    def make() -> tuple[KeepPlan, float]:
        classes, cut = _classes(program)
        return keep_plan(classes, program.highest, _kept(program), program.read), cut

    return by_identity(_PLANS, id(program), program, make, 64)


def _keep_shape(program: Keep) -> tuple[int, int]:
    """(steps, peak bytes) of a Keep's order statistics, once its die's law is known."""
    if program.each:
        return each_shape(program, DEFAULT_EPS)
    plan = _plan(program)[0]
    return plan.steps, plan.memory


def _kept(program: Keep) -> int:
    """How many dice are kept."""
    return kept_count(program.pool.dice, program.keep, program.dropping)


def keep_shape(program: Keep) -> tuple[int, int]:
    """(steps, peak bytes) of ``law(program)`` for a caller that counts its own work."""
    one = _unit_work(program)
    if one > _READ_TO_COUNT:
        return one, 0
    if program.each:  # refused at once if the mixture is huge, before any part is made
        chain = _chain(program.pool.unit)
        rough = rough_parts(program) * keep_plan([(program.pool.dice, roll_once(chain))],
                                                  program.highest, _kept(program),
                                                  program.read).steps
        if rough > _READ_TO_COUNT * 100:
            return one + int(rough), 0
    steps, memory = _keep_shape(program)
    return one + steps, memory


def keep_pool_law(program: Keep) -> Law:
    """The law of a Keep whose work the caller has counted (``keep_shape``)."""
    if program.each:
        low, pmf, lost = each_law(program, DEFAULT_EPS)
        return Law(tuple(pmf), lost, low)
    plan, cut = _plan(program)
    whole = (1.0 - cut) ** program.pool.dice  # no die ran past the cut
    low, pmf = plan.law()
    return Law(tuple([p * whole for p in pmf] if cut else pmf), 1.0 - whole, low)


def law(program: Pool | Drop | Keep | Chain | Reroll | Highest | Least | Paired,
        eps: float = DEFAULT_EPS, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
    """The exact law of ``program``'s value (a pool's sum, one die's value, a highest...)."""
    if isinstance(program, Highest | Least | Paired):
        from . import pools

        return pools.law(program, limits, text)
    if isinstance(program, Keep):
        steps, memory = keep_shape(program)
        limits.check_work(steps, "this pool", text)
        limits.check_memory(memory, "this pool", text)
        return keep_pool_law(program)
    limits.check_work(work(program), "this pool", text)
    if isinstance(program, Drop):
        return _drop_law(program)
    if not isinstance(program, Pool):
        program = Pool(1, program)
    out = _pool_law(program, eps)
    if out.low > 0:  # counted from 0, as the games read it
        out = Law((0.0,) * out.low + out.pmf, out.truncated)
    return out


@lru_cache(maxsize=256)
def _marked_law(unit: Marked, eps: float) -> MarkedLaw:
    form = form_of(unit.unit)
    if form.low < 0:
        raise ValueError("a marked die's law is kept over 0, 1, 2, …: it may not score below 0")
    if form.low:  # the form counts from its lowest value: moved to count from 0
        form = form._replace(first=tuple((f, shift + form.low, num, times)
                                         for f, shift, num, times in form.first), low=0)
    # the series are linear in their numerators: add those of faces with the same mark first
    grouped: dict[Hashable, Poly] = {}
    check, size = unit.check, _chain(unit).size
    if check is not None and any(check(entry[0]) for entry in form.first):
        # a checked face's weight is shared by the check die's faces: every other face counts
        # ``size`` times over a scale ``size`` times larger
        form = form._replace(num_scale=form.num_scale * size)
    else:
        check = None
    for i, (face, _, _, _) in enumerate(form.first):
        num = form.entry(i)
        if not any(num):
            continue
        if check is not None and check(face):
            for checked in range(1, size + 1):
                mark = unit.mark(face, checked)
                grouped[mark] = poly_add(grouped.get(mark, (0,)), num)
        else:
            mark = unit.mark(face, None)
            weighted = num if check is None else tuple(c * size for c in num)
            grouped[mark] = poly_add(grouped.get(mark, (0,)), weighted)
    by_mark: list[tuple[Hashable, tuple[float, ...]]] = []
    lost = 0.0
    for mark, num in grouped.items():
        terms, cut = expand(form, trim(num), eps)
        lost += cut
        by_mark.append((mark, tuple(terms)))
    return MarkedLaw(tuple(by_mark), lost)


def marked_law(unit: Marked, eps: float = DEFAULT_EPS) -> MarkedLaw:
    """The exact joint law of a marked die's value and its mark."""
    return _marked_law(unit, eps)


def _plain(pool: Pool, what: str) -> Chain:
    chain = pool.unit
    if not isinstance(chain, Chain) or chain.reroll is not None or any(
            chain.again(0, f) for f in range(1, chain.size + 1)):
        raise ValueError(f"{what} takes a pool of dice that are not rolled again")
    return chain


@lru_cache(maxsize=256)
def top_law(program: Top) -> dict[tuple[int, int], float]:
    """The exact law of ``(highest value, dice showing it)``; ``(0, 0)`` for an empty pool."""
    pool = program.pool
    n, chain = pool.dice, _plain(pool, "Top")
    if n <= 0:
        return {(0, 0): 1.0}
    values = [chain.score(0, f) for f in range(1, chain.size + 1)]
    counts: dict[tuple[int, int], int] = {}
    for u in sorted(set(values)):
        at, below = values.count(u), sum(1 for v in values if v < u)
        for m in range(1, n + 1):
            ways = math.comb(n, m) * at ** m * below ** (n - m)
            if ways:
                counts[(u, m)] = ways
    keys = list(counts)
    return dict(zip(keys, maths.exact_floats([counts[k] for k in keys], chain.size, n)))


def clear_caches() -> None:
    """Forget every cached law (tests that swap a rule call this)."""
    from ..dice.sampler import _table
    from . import explode, pairing, pools

    for f in (chain_form, reroll_form, _pool_law, _marked_law, _drop_law, top_law, _table,
              stood):
        f.cache_clear()
    _PLANS.clear()
    explode.clear()
    pools.clear_caches()
    pairing._distribution.cache_clear()

