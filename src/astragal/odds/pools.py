"""The exact interpreter of the dice algebra's mixed pools: ``Highest``, ``Least`` and
``Paired`` (see ``astragal.odds.algebra`` for the rest), and ``outcomes``, the enumeration of any
finite program through the sample interpreter.

- ``Highest`` of a mixed pool: P(highest ≤ k) = ∏ Fᵢ(k); of a ``Favored`` pool, a mixture over
  which die (in the rule's order) is the first that matches: the dice before it do not match, it
  is rolled afresh, the dice after it show anything.
- ``Least``: P(lowest > k) = ∏ P(partᵢ > k).
- ``Paired``: the rule ``pair`` is read on every pair of faces. When it is a step function of the
  difference a − d (nothing unless a > d), the filler is 1 and the bonus is read only on an
  all-ones defence, the sorted-pool evaluator (``astragal.odds.pairing``) steps through the faces
  from high to low with a small state; otherwise the sorted face vectors of each side are
  enumerated (small pools).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

from .._errors import LimitError
from .._limits import DEFAULT_LIMITS, Limits
from .._records import Record
from ..dice.algebra import Chain, Favored, Highest, Least, Mixed, Paired, Program
from ..dice.sampler import sample
from . import pairing
from .algebra import Law
from .algebra import law as _law

__all__ = ["clear_caches", "composite_work", "law", "outcomes", "paired_law", "paired_work"]


def law(program: Highest | Least | Paired, limits: Limits = DEFAULT_LIMITS,
        text: str = "") -> Law:
    """The exact law of a mixed pool's program, its work checked first."""
    if isinstance(program, Paired):
        steps, peak = paired_work(program)
        limits.check_work(steps, "this roll", text)
        limits.check_memory(peak, "this roll", text)
        return _paired_law(program, "auto")
    limits.check_work(composite_work(program), "this pool", text)
    if isinstance(program, Highest):
        return _highest_law(program)
    return _least_law(program)


def _plain_values(chain: Chain) -> list[int]:
    again, score = chain.again, chain.score
    values = []
    for f in range(1, chain.size + 1):
        if again(0, f):
            raise ValueError("mixed pools take dice that are not rolled again")
        values.append(score(0, f))
    return values


def _goes_on(chain: Chain) -> bool:
    """Whether a die may be rolled more than once (it explodes, or re-rolls in place)."""
    return chain.reroll is not None or any(chain.again(0, f) for f in range(1, chain.size + 1))


def _highest_of_chains(units: tuple[Chain, ...]) -> Law:
    """The highest value of dice that may explode: P(highest ≤ k) = ∏ P(dieᵢ ≤ k), each die's
    law its chain's (cut where its tail is negligible, and the cuts added up)."""
    from ..dice.algebra import Pool
    from .algebra import pool_law

    laws: dict[int, Law] = {}
    for u in units:
        if id(u) not in laws:
            laws[id(u)] = pool_law(Pool(1, u))
    if min(law.low for law in laws.values()) < 0:
        raise ValueError("Highest's law is kept over 0, 1, 2, …: the dice may not score below 0")
    top = max(law.low + len(law.pmf) - 1 for law in laws.values())
    cdfs: dict[int, list[float]] = {}
    for key, law in laws.items():
        run, f = 0.0, []
        for k in range(top + 1):
            i = k - law.low
            run += law.pmf[i] if 0 <= i < len(law.pmf) else 0.0
            f.append(run)
        cdfs[key] = f
    cdf = [1.0] * (top + 1)
    for u in units:
        cdf = [r * x for r, x in zip(cdf, cdfs[id(u)])]
    pmf = tuple([cdf[0]] + [max(0.0, cdf[k] - cdf[k - 1]) for k in range(1, top + 1)])
    return Law(pmf, sum(laws[id(u)].truncated for u in units))


def _side_units(side: Mixed | Favored) -> tuple[Chain, ...]:
    return (side.pool if isinstance(side, Favored) else side).units


@lru_cache(maxsize=1024)
def _highest_law(program: Highest) -> Law:
    side = program.pool
    units = _side_units(side)
    if not units:
        return Law((1.0,))
    # each distinct die read once: the dice of one size are one Chain (``die`` hands out one per
    # size), so they are told apart by identity, without hashing their readings
    if not isinstance(side, Favored) and any(_goes_on(u) for u in units):
        return _highest_of_chains(units)
    seen: dict[int, list[int]] = {}
    values = []
    for u in units:
        got = seen.get(id(u))
        if got is None:
            got = seen[id(u)] = _plain_values(u)
        values.append(got)
    top = max(max(v) for v in seen.values())
    if min(min(v) for v in seen.values()) < 0:
        raise ValueError("Highest's law is kept over 0, 1, 2, …: the dice may not score below 0")
    if not isinstance(side, Favored):  # P(highest ≤ k) = ∏ Fᵢ(k), each die's CDF made once
        cdfs: dict[int, list[float]] = {}
        cdf = [1.0] * (top + 1)
        for u, vals in zip(units, values):
            f = cdfs.get(id(vals))
            if f is None:
                counts = [0] * (top + 1)
                for x in vals:
                    counts[x] += 1
                run, size, f = 0, u.size, []
                for c in counts:
                    run += c
                    f.append(run / size)
                cdfs[id(vals)] = f
            cdf = [r * x for r, x in zip(cdf, f)]
        return Law(tuple([cdf[0]] + [max(0.0, cdf[k] - cdf[k - 1]) for k in range(1, top + 1)]))
    when = side.when if isinstance(side, Favored) else None
    order = list(side.order(tuple(u.size for u in units))) if isinstance(side, Favored) else []
    if len(set(order)) != len(order) or not set(order) <= set(range(len(units))):
        raise ValueError("a Favored order must name each die at most once")
    # per distinct die: the share of its faces worth at most k, all of them and those that do
    # not match the Favored re-roll, for k = 0..top
    def shares(i: int) -> tuple[list[float], list[float], float]:
        size = units[i].size
        full, miss = [0] * (top + 1), [0] * (top + 1)
        matched = 0
        for f, v in enumerate(values[i], 1):
            full[v] += 1
            if when is not None and when(f):
                matched += 1
            else:
                miss[v] += 1
        for k in range(1, top + 1):
            full[k] += full[k - 1]
            miss[k] += miss[k - 1]
        return [c / size for c in full], [c / size for c in miss], matched / size

    known: dict[int, tuple[list[float], list[float], float]] = {}
    table = [known[id(values[i])] if id(values[i]) in known else
             known.setdefault(id(values[i]), shares(i)) for i in range(len(units))]
    favored = set(order)
    rest = [1.0] * (top + 1)  # the dice not in the Favored order: a product of their CDFs
    for i in range(len(units)):
        if i not in favored:
            rest = [r * f for r, f in zip(rest, table[i][0], strict=True)]
    if not order:
        cdf = rest
    else:
        cdf = []
        for k in range(top + 1):
            # the first die in the order that matches is rolled afresh; those before it do not
            # match, those after it show anything
            total, before = 0.0, 1.0
            after = [1.0] * (len(order) + 1)
            for j in range(len(order) - 1, -1, -1):
                after[j] = after[j + 1] * table[order[j]][0][k]
            for j, i in enumerate(order):
                full, miss, matched = table[i]
                total += before * matched * full[k] * after[j + 1]
                before *= miss[k]
            cdf.append(rest[k] * (total + before))
    pmf = [cdf[0]] + [max(0.0, cdf[k] - cdf[k - 1]) for k in range(1, top + 1)]
    return Law(tuple(pmf))


@lru_cache(maxsize=256)
def _least_law(program: Least) -> Law:
    laws = [_law(p) for p in program.parts]
    top = max(len(x.pmf) for x in laws)
    above = [1.0] * top  # P(lowest > k)
    for part in laws:
        tail = 1.0
        for k in range(top):
            tail -= part.pmf[k] if k < len(part.pmf) else 0.0
            above[k] *= max(0.0, tail)
    pmf = [1.0 - above[0]] + [max(0.0, above[k - 1] - above[k]) for k in range(1, top)]
    return Law(tuple(pmf), sum(x.truncated for x in laws))


class _Fast(Record):
    """A ``Paired`` program as the sorted-pool evaluator takes it."""

    attack: Any
    defence: Any
    steps: tuple[tuple[int, int], ...]
    bonus: int


def _evaluator_pool(side: Mixed | Favored) -> tuple[int, ...] | None:
    """The sizes of a side the evaluator can take (faces worth their number; a Favored side
    re-rolls a 1, largest die first), or None."""
    units = _side_units(side)
    # each distinct die read once: ``die`` hands out one Chain a size, told apart by identity
    for u in {id(u): u for u in units}.values():
        if _plain_values(u) != list(range(1, u.size + 1)):
            return None
    sizes = tuple(u.size for u in units)
    if isinstance(side, Favored):
        order = list(side.order(sizes))
        if sorted(order) != list(range(len(units))) or any(
                sizes[a] < sizes[b] for a, b in itertools.pairwise(order)):
            return None
        if any(side.when(f) != (f == 1) for f in range(1, max(sizes, default=1) + 1)):
            return None
    return sizes


@lru_cache(maxsize=256)
def _fast(program: Paired) -> _Fast | None:
    """The evaluator's form of ``program`` when the rule it reads fits it, else None."""
    a_sizes, d_sizes = _evaluator_pool(program.attack), _evaluator_pool(program.defence)
    if a_sizes is None or d_sizes is None or program.filler != 1:
        return None
    high = max(a_sizes, default=1)
    low = max(d_sizes, default=1)
    steps = _steps(program.pair, high, low)
    if steps is None:
        return None
    bonus = program.bonus(1) if d_sizes and a_sizes else 0
    if bonus < 0 or any(program.bonus(t) for t in range(2, low + 1)):
        return None
    return _Fast(pairing.Pool(a_sizes, isinstance(program.attack, Favored)),
                 pairing.Pool(d_sizes, isinstance(program.defence, Favored)), steps, bonus)


@lru_cache(maxsize=256)
def _steps(pair: Any, high: int, low: int) -> tuple[tuple[int, int], ...] | None:
    """The pair rule as the evaluator's steps of the difference, or None: read on every pair of
    faces up to ``high`` (attack) and ``low`` (defence), once per rule and sizes."""
    g = [0] + [pair(x + 1, 1) for x in range(1, high)]  # g[x]: faces differing by x
    if pair(1, 1):
        return None
    for a in range(1, high + 1):
        for d in range(2, low + 1):  # (a, 1) read above
            if pair(a, d) != (g[a - d] if a > d else 0):
                return None
    steps = tuple([(t, g[t] - g[t - 1]) for t in range(1, high) if g[t] != g[t - 1]])
    return None if min([w for _, w in steps], default=0) < 0 else steps


def paired_work(program: Paired) -> tuple[int, int]:
    """The steps and peak bytes of ``law(program)``, estimated before any of it is done."""
    fast = _fast(program)
    if fast is not None:
        w = pairing.estimate(fast.attack, fast.defence, fast.steps, fast.bonus)
        return int(w.steps), int(w.peak_bytes)
    paths = [_paths(side) for side in (program.attack, program.defence)]
    vectors = [_vectors(side) for side in (program.attack, program.defence)]
    return sum(paths) + vectors[0] * vectors[1] * 4, (vectors[0] + vectors[1]) * 400


def _paths(side: Mixed | Favored) -> int:
    units = _side_units(side)
    extra = max((u.size for u in units), default=1) if isinstance(side, Favored) else 1
    return math.prod(u.size for u in units) * extra * (len(units) + 1)


def _vectors(side: Mixed | Favored) -> int:
    counts: dict[int, int] = {}
    for u in _side_units(side):
        counts[u.size] = counts.get(u.size, 0) + 1
    return math.prod(math.comb(s + n - 1, n) for s, n in counts.items())


@lru_cache(maxsize=256)
def _paired_law(program: Paired, kernel: str) -> Law:
    fast = _fast(program) if kernel != "enumerate" else None
    if fast is not None:
        return Law(tuple(pairing.distribution(fast.attack, fast.defence, fast.steps, fast.bonus,
                                              kernel)))
    # the sorted face vectors of each side, every pair of them read by the rule (numpy: this
    # is the slow path, taken for small pools or rules the evaluator cannot read)
    import numpy as np

    attack, defence = _sorted_vectors(program.attack), _sorted_vectors(program.defence)
    width = max((len(a) for a in attack), default=0)
    if not width:
        return Law((1.0,))
    high = max(max(a) for a in attack)
    low = max((max(d) for d in defence if d), default=0)
    faces = max(high, low, program.filler)
    table = np.array([[program.pair(a, d) for d in range(faces + 1)] for a in range(faces + 1)])
    a_rows = np.array(list(attack), dtype=np.int64).reshape(len(attack), width)
    d_rows = np.array([(d + (program.filler,) * width)[:width] for d in defence],
                      dtype=np.int64).reshape(len(defence), width)
    bonus = np.array([program.bonus(d[0]) if d else 0 for d in defence], dtype=np.int64)
    total = np.repeat(bonus[None, :], len(a_rows), axis=0)
    for k in range(width):
        total += table[a_rows[:, k][:, None], d_rows[:, k][None, :]]
    weights = np.outer(np.array(list(attack.values())), np.array(list(defence.values())))
    if total.min() < 0:
        raise ValueError("Paired's law is kept over 0, 1, 2, …: pairs may not score below 0")
    pmf = np.bincount(total.ravel(), weights=weights.ravel())
    return Law(tuple(float(p) for p in pmf))


@lru_cache(maxsize=256)
def _sorted_vectors(side: Mixed | Favored) -> dict[tuple[int, ...], float]:
    """P(sorted values, high → low) of one side, by running its sampler on every face."""
    def read(record: Any) -> tuple[int, ...]:
        return tuple(sorted((d.value for d in record.dice), reverse=True))

    return outcomes(side, read)


def paired_law(program: Paired, kernel: str = "auto") -> Law:
    """``law(program)`` by a chosen method: ``auto``, ``exact`` or ``numpy`` (the evaluator's
    kernels, when the rule fits it) or ``enumerate`` (every sorted face vector of each side)."""
    return _paired_law(program, kernel)


def composite_work(program: Mixed | Favored | Highest | Least | Paired) -> int:
    if isinstance(program, Paired):
        return paired_work(program)[0]
    if isinstance(program, Least):  # each distinct part's law once (the laws are remembered),
        # then a pass over the values a part
        parts = dict.fromkeys(program.parts)
        return sum(composite_work(p) for p in parts) + 64 + 16 * len(program.parts)
    side = program.pool if isinstance(program, Highest) else program
    units = _side_units(side)
    top = max((u.size for u in units), default=1)
    # ``_highest_law``: each distinct die's faces read once (its values, and with Favored its
    # shares below each value), a CDF product a die; with Favored, a pass over the order for
    # each value (a few products a die)
    distinct = len({id(u) for u in units})
    steps = 64 + distinct * (3 * top + 16) + len(units) * (top + 1)
    if isinstance(side, Favored):
        steps += 4 * len(side.order(tuple(u.size for u in units))) * (top + 1)
    return steps


class _Enumerated:
    """Faces from a path of choices; a die asked beyond the path shows 1 (see ``outcomes``)."""

    def __init__(self, path: list[int]) -> None:
        self.path, self.used = path, 0
        self.sizes: list[int] = []
        self.dice: list[int] = []
        self.shown: dict[int, int] = {}

    def _draw(self, size: int) -> int:
        if self.used == len(self.path):
            self.path.append(1)
        self.sizes.append(size)
        self.used += 1
        return self.path[self.used - 1]

    def new(self, size: int) -> int:
        self.dice.append(size)
        self.shown[len(self.dice) - 1] = self._draw(size)
        return len(self.dice) - 1

    def again(self, die: int, note: str) -> int:
        self.shown[die] = self._draw(self.dice[die])
        return self.shown[die]

    def face(self, die: int) -> int:
        return self.shown[die]


def outcomes(program: Program, read: Any = None, max_paths: int = 5_000_000) -> dict[Any, float]:
    """P(read(record)) over every face sequence of a finite ``program`` (default: its value),
    by running the sample interpreter on each in turn (an odometer over the faces asked for)."""
    counts: dict[Any, dict[int, int]] = {}  # per outcome: how many paths of each weight 1/n
    path: list[int] = []
    paths = 0
    while True:
        hands = _Enumerated(path)
        record = sample(program, hands, Limits(max_explosions=64))
        del path[hands.used:]
        key = record.value if read is None else read(record)
        by_weight = counts.setdefault(key, {})
        weight = math.prod(hands.sizes)
        by_weight[weight] = by_weight.get(weight, 0) + 1
        paths += 1
        if paths > max_paths:
            raise LimitError(f"more than {max_paths} face sequences to enumerate")
        i = len(path) - 1
        while i >= 0 and path[i] == hands.sizes[i]:
            i -= 1
        if i < 0:  # every path counted in whole numbers: the sums are exact to the last bit
            return {k: float(sum(Fraction(c, n) for n, c in w.items()))
                    for k, w in counts.items()}
        del path[i + 1:]
        path[i] += 1


def clear_caches() -> None:
    """Forget every cached law of a mixed pool."""
    for f in (_highest_law, _least_law, _fast, _steps, _paired_law, _sorted_vectors):
        f.cache_clear()
