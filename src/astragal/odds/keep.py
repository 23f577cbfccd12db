"""Keep/drop by rank: the exact law of the sum of the ``k`` highest (lowest) dice of a pool.

Dice of one class are i.i.d. Values are placed from the highest down; given that the ``r``
unplaced dice of a class all show at most ``v``, the number showing exactly ``v`` is binomial with
``p = P(v) / P(≤ v)``. The state is how many dice of each class are placed (while fewer than ``k``
are) and the kept sum so far; once ``k`` are placed the rest cannot change the sum.

Small pools run in plain Python lists; numpy is imported only when the work pays for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Any

from .._records import Record
from .maths import CALL, CELLS, LIST_BYTES, binomial, in_python, numpy_pays

__all__ = ["Cost", "KeepPlan", "keep_cost", "keep_plan"]

Law = tuple[int, list[float]]  # (lowest value, P(lowest), P(lowest + 1), ...)


@lru_cache(maxsize=4096)
def _class_rows(caps: tuple[int, ...], c: int, n: int, k: int) -> tuple[int, int]:
    """(live states, row updates) when class ``c`` (``n`` dice) places dice at one value and
    the classes with ``caps`` (dice each may have placed so far, ``caps[c]`` included) are
    live: a state moves ``min(r, need - 1) + 1`` rows, plus one for the tail once ``r ≥ need``
    (r = n − j_c, need = k − Σj)."""
    others = [1] + [0] * (k - 1)  # how many tuples of the other classes sum to s < k
    for i, cap in enumerate(caps):
        if i == c or not cap:
            continue
        nxt = [0] * k
        for s_, ways in enumerate(others):
            if ways:
                for j in range(min(cap, k - 1 - s_) + 1):
                    nxt[s_ + j] += ways
        others = nxt
    states = total = 0
    for j in range(min(caps[c], k - 1) + 1):
        r = n - j
        for s_, ways in enumerate(others[:k - j]):
            need = k - j - s_
            states += ways
            total += ways * (min(r, need - 1) + 1 + (1 if r >= need else 0))
    return states, total


def _multi_rows(classes: Sequence[tuple[int, AbstractSet[int]]], k: int,
                most: int | None = None) -> tuple[int, int]:
    """(most live states, row updates) of the several-class DP: values from the highest down;
    a class has placed dice only once a value of its own has been passed. Counting stops once
    the rows pass ``most`` (the rows are then over it: a count of ~200 classes of ~200 values
    would take a minute of its own, for a refusal)."""
    values = sorted({v for _, vs in classes for v in vs}, reverse=True)
    caps = [0] * len(classes)
    states = rows = 0
    lowest = [min(vs) for _, vs in classes]
    fixed = 0  # dice of classes already past their lowest value: all of them are placed
    for v in values:
        for c, (n, vs) in enumerate(classes):
            if v in vs and fixed < k:
                live, moved = _class_rows(tuple(caps), c, n, k - fixed)
                if v == lowest[c]:  # every unplaced die shows it: one move a state, and the
                    # class is placed in full from here on
                    states, rows = max(states, live), rows + live
                    caps[c], fixed = 0, fixed + n
                else:
                    states, rows = max(states, live), rows + moved
                    caps[c] = min(n, k - 1)
                if most is not None and rows > most:
                    return states, rows
    return states, rows


class Cost(Record):
    """(steps, peak bytes) of a keep in Python lists and with numpy."""

    python: int
    python_bytes: int
    numpy: int
    numpy_bytes: int


def keep_cost(n: int, n_values: int, k: int, size: int, n_classes: int = 1,
              classes: Sequence[tuple[int, AbstractSet[int]]] = (),
              span: int | None = None, most: int | None = None) -> Cost:
    """The work of the order statistics in Python and with numpy: each value moves each live
    state (dice placed per class, fewer than k in all) by each m below what it still needs, a
    row of ``size`` sums each. ``classes``: (dice, its values) of each class when there are
    several, whose rows hold only the sums k dice can make (``span`` of them: k · (highest −
    lowest score) + 1, however far from 0 the scores lie). ``most``: the steps the caller
    allows; the count may stop once it is past them (the cost is then over ``most``)."""
    if k == 1:  # the highest die's law in closed form: one power a value and class
        steps = 12 * n_values * n_classes + 200
        peak = LIST_BYTES * (size + 2 * n_values * n_classes)
        return Cost(steps, peak, steps, peak)
    if n_classes == 1:  # a state with j dice placed holds j/k of the sums: size/2 on average
        states, rows = k, n_values * (min(n, k) * (k + 1) // 2 + k)
        per_row = size // 2 + 1
    else:
        size = span if span is not None else size
        # a row holds the sums of the dice placed, size/2 on average; a cell of it costs about
        # 1.5 steps (sliced out, scaled and added, put back: one line, ~45 ns)
        per_row = 3 * size // 4 + 2
        # past ``most`` steps in either kernel's count, the rows need not be counted further
        cheapest = min(per_row + 16, (per_row + 16) // CELLS + 2 * CALL)
        states, rows = _multi_rows(classes, k, None if most is None else most // cheapest + 1)
    # plus the setup of a run: the values and their scores, the binomial terms of each value
    cells = rows * (per_row + 16) + 300 + 40 * n_values * n_classes
    # with numpy: a few calls per row (one class: per value and m, over every state, whose
    # rows numpy scales and adds whole, ``size`` cells each, beside the binomial terms a state
    # and m in Python)
    calls = rows // max(1, states) * 3 if n_classes == 1 else rows * 2
    numpy_cells = rows * (size + 16) + CELLS * rows if n_classes == 1 else cells
    return Cost(cells, LIST_BYTES * 2 * states * size, numpy_cells // CELLS + calls * CALL,
                8 * 3 * states * size)


class _Setup(Record):
    classes: list[tuple[int, dict[int, float]]]  # highest first: the lowest k are negated
    values: list[int]  # every value a die can show, from the highest down
    scores: dict[int, int]  # each value's weight
    k: int
    off: int  # the lowest kept sum
    size: int  # how many kept sums there can be
    shape: list[tuple[int, frozenset[int]]]  # (dice, values) of each class


def _setup(classes: Sequence[tuple[int, dict[int, float]]], highest: bool, k: int,
           w: Callable[[int], int] | None) -> _Setup | None:
    """What a ``KeepPlan`` counts and works on; None: nothing is kept."""
    live = [(n, pmf) for n, pmf in classes if n > 0]
    if k <= 0 or not live:
        return None
    if not highest:  # the lowest k of X are the highest k of −X
        live = [(n, {-v: p for v, p in pmf.items()}) for n, pmf in live]
    values = sorted({v for _, pmf in live for v in pmf if pmf[v] > 0}, reverse=True)
    sign = 1 if highest else -1  # a value ranked here is sign · the die's value
    if w is None:  # each kept die adds its value
        scores = {v: sign * v for v in values}
    else:
        scores = {v: w(sign * v) for v in values}
        # values next to each other in rank with one score: which of them a kept die shows
        # does not change the kept sum, so each run of them is one value (successes counted
        # over a keep, 100d100kh50>=50: two values, not a hundred)
        runs = [v for i, v in enumerate(values) if not i or scores[values[i - 1]] != scores[v]]
        if len(runs) < len(values):
            head, at = {}, runs[0]
            for v in values:
                if scores[v] != scores[at]:
                    at = v
                head[v] = at
            merged: list[tuple[int, dict[int, float]]] = []
            for n, pmf in live:
                one: dict[int, float] = {}
                for v, p in pmf.items():
                    if p > 0:
                        one[head[v]] = one.get(head[v], 0.0) + p
                merged.append((n, one))
            live, values, scores = merged, runs, {v: scores[v] for v in runs}
    off = k * min(min(scores.values()), 0)
    size = k * max(max(scores.values()), 0) - off + 1
    # each class's values, which only the several-class count reads
    shape = [(n, frozenset([v for v, p in pmf.items() if p > 0])) for n, pmf in live] \
        if len(live) > 1 else []
    return _Setup(live, values, scores, k, off, size, shape)


class KeepPlan(Record):
    """A keep's order statistics made ready: what they cost (counted before anything runs) and,
    on request, their law. Every caller counts the work, spends it, then asks for the law: the
    set-up (values, scores, the kernel's choice) is made once for both."""

    setup: _Setup | None  # None: nothing is kept
    cost: Cost
    numpy: bool  # the kernel: numpy arrays, or Python lists

    @property
    def steps(self) -> int:
        return self.cost.numpy if self.numpy else self.cost.python

    @property
    def memory(self) -> int:
        return self.cost.numpy_bytes if self.numpy else self.cost.python_bytes

    def law(self) -> Law:
        """The law of the kept sum (its work already counted and spent by the caller)."""
        setup = self.setup
        if setup is None:
            return 0, [1.0]
        live, values, scores, k, off, size, _ = setup
        if k == 1:
            return _keep_highest(live, values, scores)
        if not self.numpy:  # a DP numpy could have run (numpy_pays)
            in_python(self.steps)
        if len(live) == 1:
            n, pmf = live[0]
            if self.numpy:
                return _keep_one_class(n, pmf, values, scores, k, off, size)
            return _keep_small(n, pmf, values, scores, k)
        return _keep_classes(live, values, scores, k, self.numpy)


def keep_plan(classes: Sequence[tuple[int, dict[int, float]]], highest: bool, k: int,
              w: Callable[[int], int] | None = None, most: int | None = None) -> KeepPlan:
    """Order statistics of the sum of ``w`` (None: the value) over the ``k`` highest (lowest)
    dice of ``classes`` (``n`` i.i.d. dice of a law each): their cost (``steps``, peak bytes),
    then ``law()``; with numpy when it pays (``maths.numpy_pays``; a caller running several
    keeps decides for all of them at once, ``KeepPlan._replace(numpy=...)``)."""
    setup = _setup(classes, highest, k, w)
    if setup is None:
        return KeepPlan(None, Cost(1, 0, 1, 0), False)
    scores = setup.scores.values()
    cost = keep_cost(sum(n for n, _ in setup.classes), len(setup.values), setup.k, setup.size,
                     len(setup.classes), setup.shape,
                     setup.k * (max(scores) - min(scores)) + 1, most)
    return KeepPlan(setup, cost, numpy_pays(cost.python, cost.numpy))


def _head_and_tail(r: int, x: float, need: int) -> tuple[list[float], float]:
    """P(m of r show v) for m < need (m ≤ r), and P(at least ``need`` do)."""
    if r < 0:
        return [], 0.0
    if r == 1 and 0.0 < x < 1.0:  # one die (a class of one, as Cortex's dice are)
        return ([1.0 - x, x] if need > 1 else [1.0 - x]), (x if need == 1 else 0.0)
    top = min(r, need - 1)
    if 0.0 < x < 1.0:
        head = [(1.0 - x) ** r]
        ratio = x / (1.0 - x)
        for m in range(top):
            head.append(head[-1] * ratio * (r - m) / (m + 1))
        if head[0] == 0.0:  # underflow: the closed form term by term
            head = [math.comb(r, m) * x**m * (1 - x) ** (r - m) for m in range(top + 1)]
    else:
        head = [1.0 if (x >= 1.0 and m == r) or (x <= 0.0 and m == 0) else 0.0
                for m in range(top + 1)]
    if r < need:
        return head, 0.0
    tail = 1.0 - math.fsum(head)
    if tail < 0.5:  # a small tail is summed term by term, to keep its digits
        tail = math.fsum(binomial(r, x)[need:])
    return head, max(tail, 0.0)


def _below(pmf: dict[int, float], values: Sequence[int]) -> list[tuple[float, float]]:
    """(F(v), p(v)/F(v)) at each of ``values`` from the lowest up, F(v) = P(a die ≤ v), for a
    die of law ``pmf`` (normalised). F is summed exactly in linear time: every float is a whole
    number over one power of two, so the running sums are exact integers and an integer division
    rounds correctly; F is exactly 1 from the die's highest value on (no rounding raised to n)."""
    masses = [pmf.get(v, 0.0) for v in reversed(values)]
    total = math.fsum(masses)
    ratios = [p.as_integer_ratio() for p in masses]
    scale = max([d for _, d in ratios])
    whole = [a * (scale // d) for a, d in ratios]
    everything = sum(whole)
    top = len(masses) - 1
    while masses[top] <= 0:
        top -= 1
    out = []
    running = 0
    for i, p in enumerate(masses):
        running += whole[i]
        upto = 1.0 if i >= top else running / everything  # at most 1: running ≤ everything
        share = p / total / upto if upto > 0 else 0.0
        out.append((upto, min(1.0, share)))
    return out


def _uniform_counts(live: Sequence[tuple[int, dict[int, float]]], values: Sequence[int]
                    ) -> list[tuple[int, list[int]]] | None:
    """Each class's faces and how many of them are at most each of ``values`` (from the lowest
    up), when every class's faces are equally likely and the products stay small whole numbers
    (at most ``_UNIFORM_BITS`` bits); else None."""
    out = []
    bits = 0
    for n, pmf in live:
        masses = [p for p in pmf.values() if p > 0]
        if masses.count(masses[0]) != len(masses):
            return None
        bits += n * len(masses).bit_length()
        if bits > _UNIFORM_BITS:
            return None
        if len(masses) == len(values):  # every value is a face: 1, 2, … from the lowest up
            out.append((len(masses), list(range(1, len(values) + 1))))
            continue
        upto, running = [], 0
        for v in reversed(values):
            running += pmf.get(v, 0.0) > 0
            upto.append(running)
        out.append((len(masses), upto))
    return out


_UNIFORM_BITS = 2048


def _keep_highest(live: Sequence[tuple[int, dict[int, float]]], values: Sequence[int],
                  scores: dict[int, int]) -> Law:
    """The highest of the dice: P(highest = v) = ∏ F_c(v)^n_c − ∏ F_c(v⁻)^n_c over the classes,
    F_c(v) = P(a die of class c ≤ v), written ∏ F_c(v)^n_c · (1 − ∏ (1 − p_c(v)/F_c(v))^n_c) so
    that no two close numbers are subtracted."""
    lo = min(scores.values())
    out = [0.0] * (max(scores.values()) - lo + 1)
    counts = _uniform_counts(live, values)
    if counts is not None:  # equally likely faces: P(all ≤ v) = ∏ (faces ≤ v)^n / ∏ faces^n
        whole, tops = 1, [1] * len(values)  # tops[i]: the numerator at the i-th lowest value
        for (n, _), (m, faces) in zip(live, counts):
            whole *= m ** n
            tops = [a * u ** n for a, u in zip(tops, faces)]
        before = 0
        for v, now in zip(reversed(values), tops):
            out[scores[v] - lo] += (now - before) / whole  # one rounding: exact to the last bit
            before = now
        return lo, out
    below = [(n, _below(pmf, values)) for n, pmf in live]
    for i, v in enumerate(reversed(values)):  # from the lowest value up
        every, stays, fresh = 1.0, 0.0, False  # P(all ≤ v); Σ n log(1 − p/F); a die must show v
        for n, cdf in below:
            upto, share = cdf[i]
            every *= upto ** n
            if share >= 1.0:
                fresh = True
            elif share > 0.0:
                stays += n * math.log1p(-share)
        if every > 0.0:
            out[scores[v] - lo] += every * (1.0 if fresh else -math.expm1(stays))
    return lo, out


def _keep_small(n: int, pmf: dict[int, float], values: Sequence[int], scores: dict[int, int],
                k: int) -> Law:
    """One class of ``n`` dice in plain Python lists (small pools).

    ``state[j][i]``: j dice placed (all kept, j < k) with kept sum ``j·lo + i``.
    """
    lo = min(scores.values())
    width = max(scores.values()) - lo
    state: list[list[float]] = [[1.0]] + [[0.0] * (j * width + 1) for j in range(1, k)]
    live = [True] + [False] * (k - 1)
    done = [0.0] * (k * width + 1)
    below = 1.0  # P(a die shows at most v)
    for v in values:
        p = pmf.get(v, 0.0)
        if p <= 0:
            continue
        x = min(1.0, p / below) if below > 0 else 1.0
        below -= p
        step = scores[v] - lo
        new = [[0.0] * len(row) for row in state]
        new_live = [False] * k
        for j in range(k):
            if not live[j]:
                continue
            row, r, need = state[j], n - j, k - j
            head, tail = _head_and_tail(r, x, need)
            size = len(row)
            for m, c in enumerate(head):
                if c > 0:
                    dst, sh = new[j + m], m * step
                    dst[sh:sh + size] = [a + b * c for a, b in zip(dst[sh:sh + size], row)]
                    new_live[j + m] = True
            if tail > 0:
                sh = need * step
                done[sh:sh + size] = [a + b * tail for a, b in zip(done[sh:sh + size], row)]
        state, live = new, new_live
    return k * lo, done


def _keep_one_class(n: int, pmf: dict[int, float], values: Sequence[int],
                    scores: dict[int, int], k: int, off: int, size: int) -> Law:
    """One class of ``n`` dice in numpy: the state is only how many are placed (j < k), so each
    value is a few array operations over all j at once."""
    import numpy as np

    state = np.zeros((k, size))  # state[j]: j dice placed so far, by kept sum
    state[0, -off] = 1.0
    done = np.zeros(size)
    below = 1.0  # P(a die shows at most v)
    for v in values:
        p = pmf.get(v, 0.0)
        if p <= 0:
            continue
        x = min(1.0, p / below) if below > 0 else 1.0
        below -= p
        sv = scores[v]
        coef = np.zeros((k, k))
        tails = []
        for j in range(k):
            head, tail = _head_and_tail(n - j, x, k - j)
            coef[j, :len(head)] = head
            tails.append(tail)
        nonzero = np.flatnonzero(state.any(axis=1))
        if not len(nonzero):
            break
        live = int(nonzero[-1]) + 1  # rows past it are all 0
        new = state * coef[:, 0:1]
        for m in range(1, k):
            rows = min(live, k - m)
            part = state[:rows] * coef[:rows, m:m + 1]
            shift = m * sv
            if shift >= 0:
                new[m:m + rows, shift:] += part[:, :size - shift]
            else:
                new[m:m + rows, :shift] += part[:, -shift:]
        for j in range(live):
            if tails[j] > 0:
                _shift_add(done, state[j], (k - j) * sv, tails[j])
        state = new
    lo, hi = k * min(scores.values()), k * max(scores.values())  # the sums k dice can make
    return lo, done[lo - off:hi - off + 1].tolist()


def _keep_classes(classes: Sequence[tuple[int, dict[int, float]]], values: Sequence[int],
                  scores: dict[int, int], k: int, numpy: bool) -> Law:
    """Several classes: the state is how many dice of each class are placed (``j`` in all,
    fewer than ``k``), and its row the law of their sum: ``j·lo + i`` at ``row[i]``, so a row
    holds only the sums ``j`` dice can make (one cell while none is placed)."""
    lo = min(scores.values())
    width = max(scores.values()) - lo
    np: Any = None
    if numpy:
        import numpy as np
    cdf: list[dict[int, float]] = []
    for _, pmf in classes:
        acc, upto = 0.0, {}
        for v in sorted(pmf):
            acc += pmf[v]
            upto[v] = acc
        cdf.append(upto)
    state: dict[tuple[int, ...], Any] = {(0,) * len(classes): np.ones(1) if numpy else [1.0]}
    done: Any = np.zeros(k * width + 1) if numpy else [0.0] * (k * width + 1)
    for v in values:
        step = scores[v] - lo
        for c, (count, pmf) in enumerate(classes):
            p = pmf.get(v, 0.0)
            if p <= 0 or not state:
                continue
            x = min(1.0, p / cdf[c][v])
            nxt: dict[tuple[int, ...], Any] = {}
            for key, row in state.items():
                r = count - key[c]
                if r <= 0:  # this class is placed in full: the row moves on as it is
                    if key in nxt:
                        _add_at(nxt[key], row, 0, 1.0)
                    else:
                        nxt[key] = row  # no longer read where it was
                    continue
                placed = sum(key)
                need = k - placed
                head, tail = _head_and_tail(r, x, need)
                for m, pm in enumerate(head):
                    if pm > 0:
                        nk = key if m == 0 else key[:c] + (key[c] + m,) + key[c + 1:]
                        dst, at = nxt.get(nk), m * step
                        if dst is not None:
                            _add_at(dst, row, at, pm)
                        elif numpy:  # a new state: the row scaled into place
                            dst = nxt[nk] = np.zeros((placed + m) * width + 1)
                            dst[at:at + len(row)] = pm * row
                        else:
                            nxt[nk] = ([0.0] * at + [pm * b for b in row]
                                       + [0.0] * ((placed + m) * width + 1 - at - len(row)))
                if tail > 0:
                    _add_at(done, row, need * step, tail)
            state = nxt
    return k * lo, done.tolist() if numpy else done


def _add_at(dst: Any, src: Any, at: int, c: float) -> None:
    """dst[at + i] += c · src[i] for every i of ``src`` (lists or numpy arrays)."""
    end = at + len(src)
    if isinstance(dst, list):
        dst[at:end] = [a + c * b for a, b in zip(dst[at:end], src)]
    else:
        dst[at:end] += c * src


def _shift_add(dst: Any, src: Any, shift: int, c: float) -> None:
    """dst[i + shift] += c · src[i] where both are in range (lists or numpy arrays)."""
    n = len(dst)
    if isinstance(dst, list):
        if shift >= 0:
            dst[shift:] = [a + c * b for a, b in zip(dst[shift:], src)]
        else:
            dst[:shift] = [a + c * b for a, b in zip(dst[:shift], src[-shift:])]
    elif shift == 0:
        dst += c * src
    elif shift > 0:
        dst[shift:] += c * src[:n - shift]
    else:
        dst[:shift] += c * src[-shift:]
