"""Exact odds of two dice pools sorted high→low and paired by rank (a sorted-pool evaluator).

The mechanic, game-agnostic: an *attack* pool and a *defence* pool are rolled, both sorted high →
low, and attack die ``i`` meets defence die ``i``. A pair scores by the difference ``d − s`` of its
faces through a step function: ``sum(w for t, w in steps if d − s ≥ t)`` (every ``t ≥ 1``, so a
pair scores nothing unless ``d > s``). Surplus attack dice meet an imaginary defence face 1;
surplus defence dice are ignored. ``all_ones_bonus`` is added when both pools have dice and every
defence die shows 1. A pool may be *favoured*: after rolling, if any die shows 1, one of the
largest dice showing 1 is re-rolled once. (Jadeclaw's Damage Roll is this mechanic: J23–J34.)

The evaluator steps through the faces from the highest down to 1 with a small state instead of
enumerating faces. Write ``D(x)`` and ``S(x)`` for the number of attack and defence dice showing at
least ``x``. Rank ``i`` (0-based) shows at least ``x`` on a side exactly when ``D(x) > i``, so

* attack die ``i`` placed at face ``x`` beats its partner (``d > s``) iff ``S(x) ≤ i``: known as
  soon as the defence dice at ``x`` are placed, and a rank ``i ≥ len(defence)`` meets the
  imaginary 1 — it scores from its own face alone;
* defence die ``i`` placed at face ``y`` is beaten by ``t`` or more iff ``D(y + t) > i``: known
  from the attack counts of the last few faces, kept in the state clipped to the ranks that can
  still meet a defence die.

The state at face ``v`` is (attack dice placed per class, defence dice placed per class,
``D(v+2) … D(v+T)`` clipped). The number of dice of a class showing ``v``, given that its unplaced
dice show at most ``v``, is binomial with ``p = 1/v`` whatever their sizes (each is uniform on
``1..min(size, v)``), so a plain pool is one class and the state needs no per-die detail.

A favoured pool's face vector ``F`` has probability ``∏ 1/size × W(F)``, where ``W`` depends only
on which dice show 1 (below), so it is a plain pool whose final weights are corrected at face 1:
with the dice ordered largest first, ``W = 1 + Σ 1/size`` when no die shows 1, else
``Σ_{j ≤ first 1} 1/size_j``. Averaged over which dice of a size show the 1s that is a function
of the number of 1s per size, so a favoured pool is tracked per size (one class per size) and
costs about what a plain pool does, not one evaluation per re-roll case.

Two kernels run the same steps: ``exact`` (pure Python, integer counts, a hits polynomial packed
into one integer — no numpy import, fast for small pools) and ``numpy`` (float64: a face's states
as rows of an int array, their hit laws as rows of a float array; each step's structure is built
once and indexed, a big defence step run one die at a time, see ``_numpy``). Shapes where at
most two ranks meet have closed forms instead (``_closed``): no defence dice, one die on a side,
or two dice on a side against any number (``_two_dice``, Favored pools too), exact integer
counts like the exact kernel's. ``estimate`` counts the work and peak memory of each before any
of it is done, in the units of ``Limits`` (tested within 4x of what they count and allocate);
results are remembered.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from itertools import accumulate, product
from operator import mul, sub
from typing import Any

from .._records import Record
from . import maths

__all__ = ["Pool", "Work", "distribution", "estimate"]


class Pool(Record):
    """One side: its die sizes and whether it is favoured (one 1 re-rolled, largest die first)."""

    sizes: tuple[int, ...]
    favored: bool = False

    def classes(self) -> tuple[tuple[int, ...], ...]:
        """The dice as classes the state counts separately: one class for a plain pool (its
        dice need no per-size detail), one class per size for a favoured pool (largest first)."""
        if not self.sizes:
            return ()
        if not self.favored:
            return (tuple(sorted(self.sizes, reverse=True)),)
        return tuple((s,) * self.sizes.count(s) for s in sorted(set(self.sizes), reverse=True))


class Work(Record):
    """Work of one evaluation: ``steps`` = state transitions × hit counts carried (the unit
    both kernels spend their time on), ``peak_bytes`` = the largest working set of one face."""

    steps: int
    peak_bytes: int
    kernel: str


# -------------------------------------------------------------------------------------------
# The rule, written once: hits of a placement step, for ints or numpy arrays alike


def _defence_hits(k: Any, hist: Sequence[Any], reads: Sequence[tuple[int, int]],
                  lo: Callable[[Any, Any], Any]) -> Any:
    """Defence ranks ``b .. b+k−1`` placed at ``v``: each step ``t ≥ 2`` scores for the ranks
    below ``D(v+t)``; ``reads`` = (history slot holding ``D(v+t) − b``, clipped at 0; weight)."""
    hits: Any = 0
    for slot, w in reads:
        hits = hits + w * lo(k, hist[slot])
    return hits


def _attack_hits(a: Any, k: Any, b: Any, m: int, first: int, surplus: int,
                 lo: Callable[[Any, Any], Any], hi: Callable[[Any, Any], Any]) -> Any:
    """Attack ranks ``a .. a+k−1`` placed at ``v ≥ 2`` after the defence dice at ``v`` (``b`` of
    them show ≥ v): ranks in ``[b, m)`` beat their partner (step 1); ranks ``≥ m`` meet the
    imaginary 1 and score ``surplus`` (the step function at ``v − 1``) each."""
    return first * hi(0, lo(a + k, m) - hi(a, b)) + surplus * hi(0, a + k - hi(a, m))


def _favored_weight(pool: Pool, ones: Sequence[int]) -> Fraction:
    """``W`` averaged over which dice of each size show the 1s: ``ones[c]`` of class ``c``."""
    classes = pool.classes()
    before = Fraction(0)
    for cls, r in zip(classes, ones):
        n_c, size = len(cls), cls[0]
        if r:  # the first 1 sits after (n_c − r)/(r + 1) dice of this size, on average
            return before + Fraction(n_c + 1, (r + 1) * size)
        before += Fraction(n_c, size)
    return 1 + before


# -------------------------------------------------------------------------------------------
# Shape of one evaluation


class _Shape:
    __slots__ = ("attack", "bonus", "defence", "depth", "g", "m", "max_hits", "n", "steps",
                 "top")

    def __init__(self, attack: Pool, defence: Pool, steps: tuple[tuple[int, int], ...],
                 bonus: int, top: int, depth: int, max_hits: int) -> None:
        self.attack, self.defence, self.steps, self.bonus = attack, defence, steps, bonus
        self.top = top
        self.depth = depth  # attack-count history kept: D(v+2) .. D(v+depth+1)
        self.max_hits = max_hits
        self.n, self.m = len(attack.sizes), len(defence.sizes)
        rises = [0] * (top + 1)  # the step function at each difference 0..top
        for t, w in steps:
            if t <= top:
                rises[t] += w
        self.g = list(accumulate(rises))

    def step_at(self, diff: int) -> int:
        return self.g[diff]

    def packed_bits(self) -> tuple[int, int]:
        """The exact kernel's common denominator of the Favored weights, and the bits of one
        count in its packed hits polynomial (a count is at most ∏ sizes times that)."""
        den = _favored_den(self.attack) * _favored_den(self.defence)
        total = math.prod(self.attack.sizes) * math.prod(self.defence.sizes)
        return den, (total * den).bit_length() + 2

    def steps_per_move(self) -> int:
        """The exact kernel's steps a move: ``EXACT_STEPS_PER_MOVE`` while its packed hits
        polynomial is under 40 machine words, that many again for each 40 words more (a move
        adds and shifts the whole polynomial: measured 15-40 ns a step up to 55 words, then
        about 0.85 ns a word, e.g. 60 dice against 4)."""
        words = (self.max_hits + 1) * self.packed_bits()[1] // 64
        return EXACT_STEPS_PER_MOVE * (1 + words // 40)


def _shape(attack: Pool, defence: Pool, steps: Sequence[tuple[int, int]], bonus: int) -> _Shape:
    clean = tuple(sorted((int(t), int(w)) for t, w in steps if w))
    if any(t < 1 or w < 0 for t, w in clean) or bonus < 0:
        raise ValueError("steps need thresholds ≥ 1 and weights ≥ 0")
    for s in attack.sizes + defence.sizes:
        if s < 1:
            raise ValueError(f"a die needs at least one face, not {s}")
    top = max(attack.sizes + defence.sizes, default=1)
    depth = max((t for t, _ in clean), default=1) - 1
    n = len(attack.sizes)
    per_pair = sum(w for _, w in clean)
    max_hits = n * per_pair + (bonus if n and defence.sizes else 0)
    return _Shape(attack, defence, clean, bonus if defence.sizes and n else 0, top, depth,
                  max_hits)


def _eligible(classes: tuple[tuple[int, ...], ...], v: int) -> list[int]:
    return [sum(1 for s in cls if s >= v) for cls in classes]


# -------------------------------------------------------------------------------------------
# The kernels: exact (``pairing_exact.py``), closed forms (below: at most two ranks meet),
# numpy (``pairing_numpy.py``)


def _exact(shape: _Shape) -> tuple[list[Fraction], int]:
    """The exact kernel (``pairing_exact.py``): integer counts, a hits polynomial in one int."""
    from .pairing_exact import exact_kernel

    return exact_kernel(shape)


# Closed forms: at most two ranks meet


def _closed_form(attack: Pool, defence: Pool) -> bool:
    """Whether the closed form answers: plain pools with no defence dice (each attack die meets
    the imaginary 1 and scores from its own face), one attack die (it meets the highest defence
    face), one defence die (it meets the highest attack die; the rest meet the imaginary 1), or,
    favoured pools too, two dice on one side against two or more (the two ranks that meet)."""
    if min(len(attack.sizes), len(defence.sizes)) == 2:
        return True  # favoured pools too
    return not attack.favored and not defence.favored and (
        len(defence.sizes) <= 1 or len(attack.sizes) == 1)


def _closed(shape: _Shape) -> tuple[list[int], int, int]:
    """``_exact``'s counts for a ``_closed_form`` shape: the face vectors scoring each hit
    count, out of how many (``∏ sizes``, times the Favored weights' denominators), and the
    steps taken.

    With ``g`` the step function of the difference: with no defence die, the convolution of each
    attack die's hits ``g(face − 1)``; with one attack die, ``g(d − s)`` against the highest
    defence face ``s`` (the all-ones bonus when that is 1); with one defence die ``s``, the
    attack dice's ``Σ g(face − 1)`` over the vectors whose highest face is ``x`` (those with
    every face ≤ x less those with every face ≤ x − 1), the highest die scoring
    ``g(x − s)`` instead of ``g(x − 1)``; with two dice on one side and two or more on the
    other, ``_two_dice``."""
    att, dfn = shape.attack.sizes, shape.defence.sizes
    if min(len(att), len(dfn)) == 2:
        return _two_dice(shape)
    g = shape.g  # the step function at a difference x
    work = 0
    laws: dict[int, list[int]] = {}

    def own_hits(faces: int) -> list[int]:
        """How many of the faces 1..faces of one attack die score h hits against a 1."""
        law = laws.get(faces)
        if law is None:
            law = laws[faces] = [0] * (g[faces - 1] + 1)
            for f in range(1, faces + 1):
                law[g[f - 1]] += 1
        return law

    def pool_hits(cap: int) -> list[int]:
        """Σ own hits over the attack vectors with every face ≤ cap, by hits."""
        nonlocal work
        counts = [1]
        for size in att:
            law = own_hits(min(size, cap))
            out = [0] * (len(counts) + len(law) - 1)
            for i, c in enumerate(counts):
                if c:
                    for j, x in enumerate(law):
                        if x:
                            out[i + j] += c * x
            work += len(counts) * len(law)
            counts = out
        return counts

    if not dfn:
        counts = pool_hits(max(att))
    elif len(att) == 1:
        size = att[0]
        counts = [0] * (shape.max_hits + 1)
        lower = 0  # defence face vectors whose highest face is below s
        for s in range(1, max(dfn) + 1):
            upto = math.prod(min(z, s) for z in dfn)
            ways, lower = upto - lower, upto
            extra = shape.bonus if s == 1 else 0
            for d in range(1, size + 1):
                counts[(g[d - s] if d > s else 0) + extra] += ways
            work += size
    else:
        counts = [0] * (shape.max_hits + 1)
        below: list[int] = []  # by hits: the attack vectors whose highest face is below x
        for x in range(1, max(att) + 1):
            capped = pool_hits(x)
            at = [c - (below[h] if h < len(below) else 0) for h, c in enumerate(capped)]
            below = capped
            for s in range(1, dfn[0] + 1):
                shift = (g[x - s] if x > s else 0) - g[x - 1] + (shape.bonus if s == 1 else 0)
                for h, c in enumerate(at):
                    if c:
                        counts[h + shift] += c
                work += len(at)
    return counts, math.prod(att) * math.prod(dfn), work


def _runs(u: int, top: int, edges: list[int], levels: list[int],
          pair_defends: bool) -> list[tuple[int, int, int]]:
    """The other pool's faces ``1..top`` that a face ``u`` of the two-dice pool meets, in runs
    that score alike: (lowest, highest, hits). ``edges`` are the step function's thresholds,
    ascending, and ``levels`` its value from each on (0 below the first). ``pair_defends``: the
    other faces ``x`` score ``g(x − u)``; else the two dice attack, scoring ``g(u − s)`` against
    the faces ``s``."""
    out: list[tuple[int, int, int]] = []
    level = 0
    if pair_defends:  # x ≥ u + edge reaches this edge
        lo = 1
        for edge, above in zip(edges, levels):
            hi = min(u + edge - 1, top)
            if lo <= hi:
                out.append((lo, hi, level))
            lo, level = max(u + edge, 1), above
        if lo <= top:
            out.append((lo, top, level))
        return out
    hi = top
    for edge, above in zip(edges, levels):
        lo = max(u - edge + 1, 1)  # s ≤ u − edge reaches this edge
        if lo <= hi:
            out.append((lo, hi, level))
        hi, level = min(u - edge, top), above
    if hi >= 1:
        out.append((1, hi, level))
    return out


def _by_size(sizes: Sequence[int]) -> list[tuple[int, int]]:
    """(size, how many dice of it), largest first."""
    by: dict[int, int] = {}
    for size in sizes:
        by[size] = by.get(size, 0) + 1
    return sorted(by.items(), reverse=True)


def _favored_den(pool: Pool) -> int:
    """A common denominator of a favoured pool's weights ``W`` (1 for a plain pool)."""
    if not pool.favored:
        return 1
    return math.lcm(*pool.sizes) * math.lcm(*range(1, len(pool.sizes) + 2))


def _weights(pool: Pool) -> tuple[int, Callable[[Sequence[int]], int]]:
    """``_favored_den``, and the pool's weight ``W`` times that (``_favored_weight``, as the
    kernels read it) given how many dice of each size show 1, sizes largest first."""
    den = _favored_den(pool)
    if not pool.favored:
        return den, lambda ones: 1

    def weight(ones: Sequence[int]) -> int:
        w = _favored_weight(pool, ones) * den
        assert w.denominator == 1
        return w.numerator

    return den, weight


def _top_two_table(pool: Pool, top: int, faces: Callable[[int, int], int],
                   weight: Callable[[Sequence[int]], int]) -> tuple[list[list[int]], int]:
    """``N(s, t)`` at ``[s][t]`` for ``0 ≤ s, t ≤ top``: the pool's face vectors whose highest
    face is at most ``s`` and second highest at most ``min(s, t)`` (0 where ``t = 0``: two dice
    or more), each weighted by ``weight`` (the Favored weight over a common denominator, given
    how many dice of each size show 1), with the steps taken. ``faces(size, v)`` is what the
    faces ``1..min(v, size)`` of one die count for: their number, or a hits polynomial whose
    term for face 1 is 1.

    A die with ``c`` faces at most ``t`` and ``d`` in ``(t, s]`` is the dual number ``c + d·ε``
    (``ε² = 0``): a product of dice is ``P + Q·ε``, with ``P`` the vectors with every face at
    most ``t`` and ``Q`` those with exactly one in ``(t, s]``, so ``N = P + Q``, and ``Q`` is
    linear in the ``d`` of each size: ``N(s, t) = P(t) + Σ_sizes d·K(t)``, with ``K`` read off
    at ``d = 1`` for that size, 0 for the others. A favoured pool's weight depends on how many
    dice of each size show 1: with ``r`` of the ``k`` dice of a size fixed at 1 (``1 + 0·ε``),
    ``C(k, r)`` ways, the others may not show 1 (``(c − 1) + d·ε``)."""
    sizes = _by_size(pool.sizes)
    # (weight, dice of each size left free) per count of 1s of each size: a favoured pool's
    # free dice may not show 1; a plain pool is one case, every die free to show any face
    if pool.favored:
        cases = [(weight(ones) * math.prod(math.comb(k, r) for (_, k), r in zip(sizes, ones)),
                  [k - r for (_, k), r in zip(sizes, ones)])
                 for ones in product(*(range(k + 1) for _, k in sizes))]
    else:
        cases = [(1, [k for _, k in sizes])]
    off = 1 if pool.favored else 0  # faces at most t that a free die may show: c − off
    # N(s, t) = A(t) + Σ_sizes faces(size, s)·K(t), A(t) = P(t) − Σ_sizes faces(size, t)·K(t)
    base = [0] * (top + 1)
    slopes = [[0] * (top + 1) for _ in sizes]
    for t in range(1, top + 1):
        cs = [faces(size, t) for size, _ in sizes]
        # the powers of each size's c − off that the cases read, each from the one below
        # (a case's free dice of a size: j dice are (c − off)^j + j·(c − off)^(j − 1)·d·ε)
        pows: list[Any]  # each size's powers by exponent: a list, or the two a plain pool reads
        if pool.favored:
            pows = [list(accumulate([1] + [c - off] * k, mul)) for (_, k), c in zip(sizes, cs)]
        else:
            pows = [{k - 1: c ** (k - 1), k: c ** k} for (_, k), c in zip(sizes, cs)]
        p, ks = 0, [0] * len(sizes)
        for w, free in cases:
            terms = [pw[j] for pw, j in zip(pows, free)]
            p += w * math.prod(terms)
            for i, j in enumerate(free):
                if j:  # the one die of size i in (t, s]
                    ks[i] += w * j * pows[i][j - 1] * math.prod(terms[:i] + terms[i + 1:])
        base[t] = p - sum(c * k for c, k in zip(cs, ks))
        for slope, k in zip(slopes, ks):
            slope[t] = k
    work = top * len(cases) * len(sizes) * (len(sizes) + 1) + (top + 1) ** 2 * len(sizes)
    rows = []
    for s in range(top + 1):
        row = base[:s + 1]
        for (size, _), slope in zip(sizes, slopes):
            m = faces(size, s)
            row = [a + m * k for a, k in zip(row, slope)]
        row[0] = 0
        rows.append(row + [row[s]] * (top - s))
    return rows, work


def _two_dice_work(attack: Pool, defence: Pool, steps: Sequence[tuple[int, int]],
                   bonus: int) -> Work:
    """``_two_dice``'s work, counted as it counts it: the other pool's table (each face, each
    count of 1s of each size if favoured), then each face of the two dice, its runs by hit
    counts over a column. Its numbers are hits polynomials packed in one int (a slot per hit
    count, each as wide as the largest count): an operation costs about a step per 6 machine
    words of them. Memory: the tables, and the weights of the counts of 1s."""
    pair_defends = len(attack.sizes) != 2
    pair, other = (defence, attack) if pair_defends else (attack, defence)
    top, by = max(other.sizes), _by_size(other.sizes)
    runs = 1 + len({t for t, w in steps if w and t < max(attack.sizes + defence.sizes)})
    cases = math.prod(k + 1 for _, k in by) if other.favored else 1
    ops = top * cases * len(by) * (len(by) + 1) + (top + 1) ** 2 * (len(by) + pair_defends) \
        + max(pair.sizes) * runs * (runs + (runs if pair_defends else 1) + 1) * (top + 1)
    total = math.prod(attack.sizes) * math.prod(defence.sizes) * _favored_den(pair) \
        * _favored_den(other)
    slots = len(attack.sizes) * sum(w for _, w in steps) + bonus + 1
    size = slots * (total.bit_length() + 1) // 64 + 1  # machine words of a packed number
    weights = cases * (total.bit_length() // 8 + 100 + 8 * len(by)) if other.favored else 0
    return Work(ops * (1 + size // 6) + 64, 2 * (top + 1) ** 2 * (8 * size + 32) + weights,
                "closed")


def _two_dice(shape: _Shape) -> tuple[list[int], int, int]:
    """One pool of two dice against two or more: the two dice's higher face ``u`` meets the
    other pool's highest face, their lower face ``v ≤ u`` its second highest; the other
    pool's surplus dice are ignored (defence) or meet the imaginary 1 (attack). Either pool
    may be favoured. Returns the counts by hits, out of how many, and the steps taken.

    The other pool is read from its table (``_top_two_table``): for the defence, ``N(s, t)``
    (the all-ones vector carrying the bonus); for the attack, the vectors' hits polynomials
    (a polynomial packed in one int) with the two highest faces' own hits taken out, summed
    over the highest faces up to ``x`` and ``y``. For a face ``u`` the other pool's highest
    faces fall in a few runs that score alike (``_runs``), and a run's table entries by the
    second face are a column, ``T(hi, ·) − T(lo − 1, ·)``. The lower face's law on a column is
    a sum over its own runs, linear in the column; summed over ``2 ≤ v < u`` it is kept as a
    row of coefficients per hit count, added to as ``u`` rises. The two dice's rolls sorted to
    ``(u, v)``, ``2 ≤ v < u``, are 2 while both dice can show ``u``, else 1, and ``v = u`` is
    one roll (times the Favored weight with no 1); ``v = 1`` takes its own weight (which die
    shows the 1)."""
    g, bonus = shape.g, shape.bonus
    attack, defence = shape.attack, shape.defence
    pair_defends = len(attack.sizes) != 2  # then the other pool's faces x score g(x − u)
    pair, other = (defence, attack) if pair_defends else (attack, defence)
    big, small = sorted(pair.sizes, reverse=True)
    top = max(other.sizes)
    den_p, pair_weight = _weights(pair)
    den_o, other_weight = _weights(other)
    total = math.prod(attack.sizes) * math.prod(defence.sizes) * den_p * den_o
    bits = total.bit_length() + 1
    by = _by_size(other.sizes)
    if pair_defends:  # each attack die's faces up to v, as a polynomial in its hits against a 1
        polys = {size: list(accumulate([0] + [1 << bits * g[f - 1] for f in range(1, size + 1)]))
                 for size, _ in by}
        table, work = _top_two_table(other, top, lambda size, v: polys[size][min(v, size)],
                                     other_weight)
        # the vectors whose two highest faces are (x, y), less those two faces' own hits,
        # summed again over the faces up to (x, y): the surplus dice's hits
        rest = [[0] * (top + 1) for _ in range(top + 1)]
        for x in range(1, top + 1):
            for y in range(1, top + 1):
                z = table[x][y] - table[x - 1][y] - table[x][y - 1] + table[x - 1][y - 1] \
                    if y <= x else 0
                rest[x][y] = (z >> bits * (g[x - 1] + g[y - 1])) + rest[x - 1][y] \
                    + rest[x][y - 1] - rest[x - 1][y - 1]
        table = rest
        work += (top + 1) ** 2
    else:
        table, work = _top_two_table(other, top, lambda size, v: min(v, size), other_weight)
        if bonus:  # every defence die shows 1: one vector in every N(s, t), s, t ≥ 1
            extra = other_weight([k for _, k in by]) * ((1 << bits * bonus) - 1)
            for row in table[1:]:
                row[1:] = [n + extra for n in row[1:]]

    def w(*ones: int) -> int:  # the two dice's roll's weight, with these dice showing 1
        return pair_weight([ones.count(size) for size, _ in _by_size(pair.sizes)])

    # no 1; the larger die or the smaller showing 1 (the other at u ≥ 2); both
    w0, w_big_one, w_small_one, w_ones = w(), w(big), w(small), w(big, small)
    edges = sorted({t for t, _ in shape.steps if t < len(g) - 1})  # differences reach top − 1
    levels = [g[t] for t in edges]
    hits = sorted({0, *levels})
    where = {h: i for i, h in enumerate(hits)}
    # the lower face's law over 2 ≤ v < u, as coefficients on a column (a row per hits)
    cumulative = [[0] * (top + 1) for _ in hits]
    lowest = _runs(1, top, edges, levels, pair_defends)
    out = 0  # the hits polynomial
    for u in range(1, big + 1):
        runs = _runs(u, top, edges, levels, pair_defends)
        both = u <= small  # either die shows u
        # v = 1: the larger die shows u and the smaller 1, or the other way round
        one = w_ones if u == 1 else w_small_one + (w_big_one if both else 0)
        lift = bonus if pair_defends and u == 1 else 0  # both defence dice show 1
        for lo, hi, h1 in runs:
            column = list(map(sub, table[hi], table[lo - 1]))
            for v_lo, v_hi, h2 in lowest:
                out += (one * (column[v_hi] - column[v_lo - 1])) << bits * (h1 + h2 + lift)
            if u > 1:
                for h2, row in zip(hits, cumulative):
                    out += (w0 * sum(map(mul, row, column))) << (bits * (h1 + h2) + both)
                if both:  # v = u
                    for v_lo, v_hi, h2 in runs:
                        out += (w0 * (column[v_hi] - column[v_lo - 1])) << bits * (h1 + h2)
        if 1 < u <= small:
            for lo, hi, h in runs:
                row = cumulative[where[h]]
                row[hi] += 1
                row[lo - 1] -= 1
        work += len(runs) * (len(hits) + len(lowest) + 1) * (top + 1)
    work *= 1 + ((shape.max_hits + 1) * bits // 64 + 1) // 6  # words of a packed number
    mask = (1 << bits) - 1
    return [(out >> bits * h) & mask for h in range(shape.max_hits + 1)], total, work


# The numpy kernel (``pairing_numpy.py``): float64, a face's states in arrays
_DENSE_KEYS = 1 << 23  # a key table of up to 8 M entries (32 MiB); sort the keys above that


def _numpy(shape: _Shape) -> tuple[list[float], int, int]:
    """The numpy kernel: float64 laws, the steps taken and the peak bytes."""
    from .pairing_numpy import numpy_kernel

    return numpy_kernel(shape)


# -------------------------------------------------------------------------------------------
# The work, counted before any of it is done


# Work is counted in the steps of ``Limits.max_odds_work``: a step is about one multiply-add in a
# Python loop (~30 ns). A move of the exact kernel (a dict update of a packed big integer) costs
# about 12 steps (measured 11-20 ns a counted step at 20: 2 to 9 dice a side); the numpy kernel
# does about 8 cells (a move's hit count: one multiply, one index, one bincount slot) a step,
# plus the fixed cost of the numpy calls of each face's step.
EXACT_STEPS_PER_MOVE = 12
NUMPY_CELLS_PER_STEP = 8
NUMPY_STEPS_PER_STAGE = 1500  # ~45 µs of numpy calls per placement step (measured 25-35 µs)


def _state_sums(na: int, ns: int, m: int, live: int) -> tuple[int, int, int]:
    """Σ hist, Σ hist · a, Σ hist · b over the (a, b) of ``0..na`` × ``0..ns`` reached, where
    ``hist = C(w + live, live)`` (the history values a state can carry: ``live`` slots, each
    at most ``w = max(0, min(a, m) − b)``, non-increasing). Summed over b in closed form, so
    a pool of 500 dice a side is counted at once: with ``c = min(a, m)`` and ``k = min(ns, c)``,
    b = 0..k has w = c − b (Σ_{j ≤ x} C(j + L, L) = C(x + L + 1, L + 1), and Σ_{j ≤ x}
    j·C(j + L, L) = (L + 1)·C(x + L + 1, L + 2)), and b = k+1..ns has w = 0."""
    def upto(x: int) -> int:  # Σ_{j=0..x} C(j + live, live)
        return math.comb(x + live + 1, live + 1) if x >= 0 else 0

    def weighted(x: int) -> int:  # Σ_{j=0..x} j·C(j + live, live)
        return (live + 1) * math.comb(x + live + 1, live + 2) if x >= 0 else 0

    s0 = sa = sb = 0
    for a in range(na + 1):
        c = min(a, m)
        k = min(ns, c)
        head = upto(c) - upto(c - k - 1)  # b = 0..k
        row = head + ns - k
        s0 += row
        sa += a * row
        sb += c * head - (weighted(c) - weighted(c - k - 1)) + (ns * (ns + 1) - k * (k + 1)) // 2
    return s0, sa, sb


def _count_moves(shape: _Shape) -> tuple[int, int, int]:
    """(moves, most moves of one step, most states of one step), counted from the shape: at
    each face, every (a, b) the pools can have reached times the history values it can carry
    (the states), times the choices of k (the moves)."""
    m, depth = shape.m, shape.depth
    a_sizes, d_sizes = shape.attack.sizes, shape.defence.sizes
    # a favoured pool with several sizes counts its dice per size: more states per (a, b)
    extra = 1.0
    for pool in (shape.attack, shape.defence):
        if pool.favored:
            classes = pool.classes()
            extra *= math.prod(len(c) + 1 for c in classes) / (len(pool.sizes) + 1)
    steps2 = [t for t, _ in shape.steps if t >= 2]
    first_read = min(steps2, default=0)
    # how many dice of each size (a few sizes: counting over them costs less than importing
    # bisect, whose C module alone is half of this module's import)
    a_by, d_by = dict(_by_size(a_sizes)), dict(_by_size(d_sizes))
    # the sums over (a, b) depend on the face only through (na, ns, live): read once each
    sums: dict[tuple[int, int, int], tuple[int, int, int]] = {}
    total = widest = most = 0
    for v in range(shape.top, 1, -1):
        na = sum([c for size, c in a_by.items() if size > v])  # dice that can be above v
        ns = sum([c for size, c in d_by.items() if size > v])
        ea = na + a_by.get(v, 0)  # ... or show v
        es = ns + d_by.get(v, 0)
        # live history slots: D(v+j) for j = 2..depth+1, nonzero only when v + j ≤ top and read
        # (v + j − first_read ≥ 1): the j in max(2, first_read + 1 − v) .. min(depth + 1, top − v)
        live = max(0, min(depth + 1, shape.top - v) - max(2, first_read + 1 - v) + 1) \
            if depth else 0
        got = sums.get((na, ns, live))
        if got is None:
            got = sums[na, ns, live] = _state_sums(na, ns, m, live)
        states, sa, sb = got
        # every state places k = 0..es − b defence dice; after the defence step (b' ≥ b) the
        # attack step sees about as many states, each placing k = 0..ea − a attack dice
        d_moves = int(((es + 1) * states - sb) * extra)
        a_moves = int(((ea + 1) * states - sa) * extra)
        total += d_moves + a_moves
        widest = max(widest, d_moves, a_moves)
        most = max(most, int(states * extra))
    return total, widest, most


def estimate(attack: Pool, defence: Pool, steps: Sequence[tuple[int, int]],
             all_ones_bonus: int = 0, kernel: str = "auto") -> Work:
    """The work of ``distribution`` before doing it: which kernel (``auto``: the faster, counting
    numpy's import while it is not loaded), its steps and its peak bytes."""
    if not attack.sizes:
        return Work(1, 0, "exact")
    if kernel in ("auto", "closed") and _closed_form(attack, defence):
        if min(len(attack.sizes), len(defence.sizes)) == 2:
            return _two_dice_work(attack, defence, steps, all_ones_bonus)
        n, per_die = len(attack.sizes), sum(w for _, w in steps) + 1
        pool = (n * (n - 1) // 2 * (per_die - 1) + n) * per_die  # one convolution of the pool
        if not defence.sizes:
            done = pool
        elif n == 1:
            done = attack.sizes[0] * max(defence.sizes)
        else:
            done = max(attack.sizes) * (pool + defence.sizes[0] * (n * (per_die - 1) + 1))
        return Work(done + 64, 64 * (done + n * per_die), "closed")
    exact, numpy = _kernel_work(attack, defence, tuple(steps), all_ones_bonus)
    if kernel == "exact":
        return exact
    if kernel == "numpy":
        return numpy
    return numpy if maths.numpy_pays(exact.steps, numpy.steps) else exact


@lru_cache(maxsize=256)
def _kernel_work(attack: Pool, defence: Pool, steps: tuple[tuple[int, int], ...],
                 all_ones_bonus: int) -> tuple[Work, Work]:
    """Each kernel's work (remembered: a request estimates before it checks its limits, then
    again to pick its kernel)."""
    shape = _shape(attack, defence, steps, all_ones_bonus)
    moves, widest, states = _count_moves(shape)
    width = shape.max_hits + 1
    exact = Work(moves * shape.steps_per_move(), widest * (120 + width), "exact")
    # numpy: a step's law (width floats per state, twice), one hit count's moves at a time,
    # its structure (moves, state rows) and the structures kept for the faces that repeat
    # them, the key table
    radix = [len(c) + 1 for c in shape.attack.classes() + shape.defence.classes()] + \
        [min(shape.n, shape.m) + 1] * shape.depth
    space = math.prod(radix)
    table = 4 * space if space <= _DENSE_KEYS else 0
    # a numpy step per face for each side and one for the history (a favoured pool's classes
    # go in one step while they are few; the cells count the rest)
    stages = 3 * (shape.top - 1)
    numpy = Work(moves * width // NUMPY_CELLS_PER_STEP + stages * NUMPY_STEPS_PER_STAGE,
                 16 * width * states + widest * (24 + 8 * (len(radix) + 8)) + 24 * moves + table,
                 "numpy")
    return exact, numpy


def distribution(attack: Pool, defence: Pool, steps: Sequence[tuple[int, int]],
                 all_ones_bonus: int = 0, kernel: str = "auto") -> list[float]:
    """P(score = h) for h = 0..max, exactly (see the module docstring). ``kernel``: "auto"
    (by ``estimate``), "exact", "numpy" or "closed" (the shapes of ``_closed_form``)."""
    if not attack.sizes:
        return [1.0]
    if kernel == "auto":
        kernel = estimate(attack, defence, steps, all_ones_bonus).kernel
    return list(_distribution(attack, defence, tuple(steps), all_ones_bonus, kernel))


@lru_cache(maxsize=256)
def _distribution(attack: Pool, defence: Pool, steps: tuple[tuple[int, int], ...],
                  all_ones_bonus: int, kernel: str) -> tuple[float, ...]:
    """``distribution``, remembered (a table or a repeated request asks the same pools again)."""
    shape = _shape(attack, defence, steps, all_ones_bonus)
    if kernel == "numpy":
        result = _numpy(shape)[0]
    elif kernel == "closed":
        counts, total, _ = _closed(shape)
        result = [c / total for c in counts]  # an int's true division rounds correctly
    else:
        result_exact, work = _exact(shape)
        maths.in_python(work)  # what numpy could have done (maths.numpy_pays)
        result = [float(p) for p in result_exact]
    while len(result) > 1 and result[-1] == 0.0:
        result.pop()
    return tuple(result)
