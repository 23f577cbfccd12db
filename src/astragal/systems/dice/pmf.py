"""Distributions of the general dice notation and the arithmetic on independent parts.

A ``Pmf`` is a finite law over exact values: dense (whole numbers ``off .. off+len(p)-1`` as a
plain list of floats) or sparse (a dict). Plain lists keep small odds in plain Python: numpy is
imported only by a step large enough to pay for its import (``convolve`` and ``power`` are the
shared ``odds.maths`` ones, the FFT above ``maths.FFT_FROM``; the keep DP in ``odds.keep``).

Every step spends its work on a ``Budget`` before it is done; past ``Limits.max_odds_work`` the
answer is a LimitError. A *step* is one multiply-add in a Python loop (about 30 ns); numpy does
about ``CELLS`` element operations in the time of one step, plus ``CALL`` steps per call, so the
budget measures time whichever kernel runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..._errors import LimitError
from ..._limits import Limits
from ...odds import maths
from ...odds.maths import CALL, CELLS, LIST_BYTES
from .nodes import Lazy, Value

__all__ = ["CALL", "CELLS", "LIST_BYTES", "Budget", "Pmf", "add", "binop", "convolve", "mapped", "merge", "mix",
           "negate", "power"]

ROW = 30  # steps per possible value of the answer (its row, the JSON, a chart's bar)
ROW_BYTES = 150  # bytes per possible value of the answer (a (value, probability) row)


class Budget:
    """Counts the estimated work and refuses to start a step that would pass the limits: the
    steps of ``Limits.max_odds_work`` in all, and ``Limits.max_odds_memory`` at any one step
    (``peak`` keeps the largest estimate, for the tests that hold it to what is allocated)."""

    def __init__(self, limits: Limits, text: str) -> None:
        self.limit = limits.max_odds_work
        self.limits = limits
        self.text = text
        self.used = 0
        self.peak = 0

    def spend(self, work: float, what: object, span: tuple[int, int] | None = None,
              memory: float = 0) -> None:
        self.check(work, what, span, memory)
        self.used += int(work)
        self.peak = max(self.peak, int(memory))

    def check(self, work: float, what: object, span: tuple[int, int] | None = None,
              memory: float = 0) -> None:
        """Refuse now if ``work`` more steps would pass the limit, or ``memory`` bytes the
        memory limit (without counting them)."""
        where = span if span is not None else ((0, len(self.text)) if self.text else None)
        if self.used + work > self.limit:
            self.used += int(work)
            raise LimitError(
                f"the exact odds of {what} would take about {self.used:.2g} steps, over the "
                f"odds work limit of {self.limit:.2g}", self.text, where)
        if memory > self.limits.max_odds_memory:
            try:
                self.limits.check_memory(int(memory), str(what), self.text)
            except LimitError as exc:
                raise LimitError(exc.message, self.text, where) from None


class Pmf:
    """A finite distribution over exact values, with the probability ``lost`` to a cut tail.

    Dense form (whole numbers ``off .. off+len(p)-1``, ``p`` a list of floats) or sparse form
    (a dict). Probabilities sum to ``1 - lost``. Parts are shared, never changed in place.
    """

    __slots__ = ("counts", "lost", "off", "p", "sparse")

    def __init__(self, off: int = 0, p: list[float] | None = None,
                 sparse: dict[Value, float] | None = None, lost: float = 0.0,
                 counts: tuple[list[int], int] | None = None) -> None:
        self.off = off
        self.p = p
        self.sparse = sparse
        self.lost = lost
        self.counts = counts
        """A dense law known exactly: (counts, denominator), ``p[k]`` = counts[k] / denominator
        correctly rounded (an exact power or sum, ``maths.power_counts``)."""

    @staticmethod
    def point(v: Value) -> Pmf:
        if isinstance(v, int):
            return Pmf(v, [1.0])
        return Pmf(sparse={v: 1.0})

    @staticmethod
    def from_dict(d: dict[Value, float], lost: float = 0.0) -> Pmf:
        items = {k: v for k, v in d.items() if v > 0}
        if not items:
            return Pmf(0, [0.0], lost=lost)
        if all(isinstance(k, int) for k in items):
            lo, hi = min(items), max(items)
            if hi - lo + 1 <= 4 * len(items) + 64:
                p = [0.0] * (int(hi - lo) + 1)
                for k, v in items.items():
                    p[int(k) - int(lo)] = v
                return Pmf(int(lo), p, lost=lost)
        return Pmf(sparse=items, lost=lost)

    def with_lost(self, lost: float) -> Pmf:
        """The same outcomes with another lost mass."""
        return Pmf(self.off, self.p, self.sparse, lost)

    @property
    def dense(self) -> bool:
        return self.p is not None

    def __len__(self) -> int:
        return len(self.p) if self.p is not None else len(self.sparse or {})

    def items(self) -> list[tuple[Value, float]]:
        """(value, probability) for every value with a positive probability, in value order."""
        if self.p is not None:
            off = self.off
            return [(off + i, q) for i, q in enumerate(self.p) if q > 0]
        assert self.sparse is not None
        return sorted(self.sparse.items())

    def as_dict(self) -> dict[Value, float]:
        return dict(self.items())

    def total(self) -> float:
        if self.p is not None:
            return math.fsum(self.p)
        return math.fsum((self.sparse or {}).values())

    def normalised(self) -> Pmf:
        """The distribution given that the tail was not cut (for the order-statistics DP)."""
        t = self.total()
        if self.p is not None:
            return Pmf(self.off, [x / t for x in self.p])
        return Pmf(sparse={k: v / t for k, v in (self.sparse or {}).items()})


def lost_of(*parts: float) -> float:
    """The mass lost by a combination of independent parts that each lost some."""
    keep = 1.0
    for x in parts:
        keep *= 1.0 - x
    return 1.0 - keep if any(parts) else 0.0


def convolve(a: Sequence[float], b: Sequence[float], budget: Budget, what: object) -> list[float]:
    """The distribution of a sum of two independent dense parts (``odds.maths.convolve``, the
    FFT for large parts), its work spent first."""
    steps, memory = maths.convolve_cost(len(a), len(b), fft=True)
    budget.spend(steps, what, memory=memory)
    return maths.convolve(a, b, fft=True)


_READ_UPTO = 256  # a dense law this short, not known exactly, is read as counts (``rational``)


def _counts(a: Pmf) -> tuple[list[int], int] | None:
    """A dense part's law as counts over a denominator, when it is one (no tail cut)."""
    if a.counts is not None or a.p is None or a.lost or len(a.p) > _READ_UPTO:
        return a.counts
    return maths.rational(a.p)


def add(a: Pmf, b: Pmf, budget: Budget, what: object, sign: int = 1) -> Pmf:
    """The sum (or difference) of two independent parts: exactly, as one product of big
    integers, when both are known as counts and that is about as little work as the float
    products (``maths.sum_counts_cost``)."""
    if sign < 0:
        b = negate(b)
    lost = lost_of(a.lost, b.lost)
    if a.p is not None and b.p is not None:
        if b.p == [1.0] or a.p == [1.0]:  # a number added (d20+5): the other part, moved
            return Pmf(a.off + b.off, a.p if b.p == [1.0] else b.p, lost=lost,
                       counts=a.counts if b.p == [1.0] else b.counts)
        ca, cb = _counts(a), _counts(b)
        plan = maths.sum_counts_cost(ca, cb, fft=True) if ca and cb else None
        if ca and cb and plan:
            budget.spend(plan[0] + len(a.p) + len(b.p), what, memory=plan[1])
            counts = maths.sum_counts(ca, cb)
            return Pmf(a.off + b.off, maths.exact_floats(counts[0], counts[1], 1),
                       counts=counts)
        return Pmf(a.off + b.off, convolve(a.p, b.p, budget, what), lost=lost)
    return binop(a, b, lambda x, y: x + y, budget, what, lost)


def negate(a: Pmf) -> Pmf:
    if a.p is not None:
        counts = None if a.counts is None else (a.counts[0][::-1], a.counts[1])
        return Pmf(-(a.off + len(a.p) - 1), a.p[::-1], lost=a.lost, counts=counts)
    return Pmf(sparse={-k: v for k, v in (a.sparse or {}).items()}, lost=a.lost)


def binop(a: Pmf, b: Pmf, f: Callable[[Value, Value], Value], budget: Budget, what: object,
          lost: float | None = None, op: str = "") -> Pmf:
    """Any operator over all pairs of outcomes of two independent parts (``op``: which, for
    its cost a pair, ``pair_cost``)."""
    budget.spend(pair_cost(a, b, op) * len(a) * len(b), what,
                 memory=ROW_BYTES * len(a) * len(b) if a.p is None or b.p is None else 0)
    ia, ib = a.items(), b.items()
    out: dict[Value, float] = {}
    get = out.get
    for x, p in ia:
        for y, q in ib:
            v = f(x, y)
            out[v] = get(v, 0.0) + p * q
    return Pmf.from_dict(out, lost_of(a.lost, b.lost) if lost is None else lost)


# Steps to apply an operator to a pair of whole numbers and add its chance into the answer, where
# that is more than the 10 of a sum (measured on d300 and d1000 against themselves): a product
# makes as many values as pairs (a dict that large), a quotient or a power a Fraction each
PAIR_STEPS = {"*": 30, "/": 200, "**": 160, "call": 15}


def pair_cost(a: Pmf, b: Pmf | None = None, op: str = "") -> int:
    """Steps to apply an operator to one pair of outcomes: 10 for whole numbers (more for the
    operators of ``PAIR_STEPS``), 300 where a part holds fractions (each Fraction operation
    allocates and reduces)."""
    frac = a.sparse is not None or (b is not None and b.sparse is not None)
    return 300 if frac else PAIR_STEPS.get(op, 10)


def mapped(a: Pmf, f: Callable[[Value], Value], budget: Budget, what: object) -> Pmf:
    """The distribution of ``f(outcome)``."""
    budget.spend(pair_cost(a) * len(a), what, memory=ROW_BYTES * len(a))
    out: dict[Value, float] = {}
    for x, p in a.items():
        v = f(x)
        out[v] = out.get(v, 0.0) + p
    return Pmf.from_dict(out, a.lost)


def power(a: Pmf, n: int, budget: Budget, what: object, span: tuple[int, int] | None = None,
          answer: bool = False) -> Pmf:
    """The sum of ``n`` independent copies (``odds.maths.power``: repeated squaring). With
    ``answer`` (the sum is a term's whole law), it is refused before it is built when its
    answer's rows (``ROW`` a possible value) would pass the limits."""
    lost = -math.expm1(n * math.log1p(-a.lost)) if a.lost else 0.0
    if n == 0:
        return Pmf.point(0)
    if a.p is None:
        out = a
        for _ in range(n - 1):
            out = add(out, a, budget, what)
        return out.with_lost(lost)
    steps, memory, numpy = maths.power_plan(len(a.p), n, fft=True,
                                            unit=None if a.lost else a.p)
    values = (len(a.p) - 1) * n + 1
    said = Lazy(lambda: f"{what} ({values:,} possible values)")
    if answer:
        budget.check(steps + ROW * values, said, span, max(memory, ROW_BYTES * values))
    budget.spend(steps, said, span, memory)
    counts = None if a.lost else maths.power_counts(a.p, n, fft=True)
    if counts is not None:
        return Pmf(a.off * n, maths.exact_floats(counts[0], counts[1], 1), counts=counts)
    return Pmf(a.off * n, maths.power(a.p, n, fft=True, numpy=numpy), lost=lost)


def merge(a: Pmf, b: Pmf) -> Pmf:
    """The mixture a + b of two dense sub-distributions (they are exclusive cases)."""
    assert a.p is not None and b.p is not None
    return Pmf(*_sum_at(a.off, a.p, b.off, b.p))


def _sum_at(off_a: int, a: Sequence[float], off_b: int,
            b: Sequence[float]) -> tuple[int, list[float]]:
    lo = min(off_a, off_b)
    hi = max(off_a + len(a), off_b + len(b))
    out = [0.0] * (hi - lo)
    i = off_a - lo
    out[i:i + len(a)] = a
    j = off_b - lo
    out[j:j + len(b)] = [x + y for x, y in zip(out[j:j + len(b)], b)]
    return lo, out


def mix(parts: Sequence[tuple[float, Pmf]]) -> Pmf:
    """The mixture of dense parts with the given weights."""
    if len(parts) == 1 and parts[0][0] == 1.0:
        return parts[0][1]
    acc: Pmf | None = None
    for wt, pmf in parts:
        assert pmf.p is not None
        scaled = Pmf(pmf.off, [x * wt for x in pmf.p])
        acc = scaled if acc is None else merge(acc, scaled)
    assert acc is not None
    return acc


Array = Any
