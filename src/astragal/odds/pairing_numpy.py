"""The sorted-pool evaluator's numpy kernel (``pairing.py`` holds the rule, the shape, the exact
kernel and the work estimate): float64, a face's states as rows of an int array, their hit laws as
rows of a float array; each step's structure is built once and indexed."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .pairing import (
    _DENSE_KEYS,
    NUMPY_CELLS_PER_STEP,
    NUMPY_STEPS_PER_STAGE,
    _attack_hits,
    _defence_hits,
    _eligible,
    _favored_weight,
    _Shape,
)

__all__ = ["numpy_kernel"]

# A defence step is run as unit steps (``chain``) when its states still place this many dice
# or more in all: below it the unit steps' fixed costs (a few numpy calls each) outweigh the
# moves they save (measured on 3 to 12 d12 a side)
CHAIN_FROM = 3000
# A favoured pool's classes are placed in one step while that makes this many moves or fewer
TOGETHER_UPTO = 3000


# -------------------------------------------------------------------------------------------
# The numpy kernel: float64, a face's states in arrays, duplicates summed through a dense index


def numpy_kernel(shape: _Shape) -> tuple[list[float], int, int]:
    """The numpy kernel. The states of a face are rows of an int array; their hit laws are the
    rows of ``probs`` (states × hits). A step's *structure* (which state moves where, with
    which binomial coefficient and hit shift) depends only on the states it starts from, not
    on the face's probabilities, so it is built once and indexed: one ``bincount`` over (new
    state, hit count) sums every move's scaled row into its new state's row, shifted by the
    move's hits. Faces below the smallest die repeat the last face's structures. A big defence
    step runs as unit steps (``chain``): fewer moves, the same sums."""
    import numpy as np

    a_cls, d_cls = shape.attack.classes(), shape.defence.classes()
    ka, kd, depth, m = len(a_cls), len(d_cls), shape.depth, shape.m
    nd = ka + kd
    steps2 = [(t, w) for t, w in shape.steps if t >= 2]
    reads = [(depth + 1 - t, w) for t, w in steps2]
    first_read = min((t for t, _ in steps2), default=0)
    first = shape.step_at(1)
    width = shape.max_hits + 1
    lanes = np.arange(width)
    radix = [len(c) + 1 for c in a_cls] + [len(c) + 1 for c in d_cls] + \
        [min(shape.n, m) + 1] * depth
    space = math.prod(radix)
    place = np.array([math.prod(radix[:i]) for i in range(len(radix))], dtype=np.int64)
    table = np.empty(space, dtype=np.int32) if space <= _DENSE_KEYS else None
    rmax = max(shape.n, m)
    states = np.zeros((1, nd + depth), dtype=np.int64)
    probs = np.zeros((1, width))  # a state a row: its hit law
    probs[0, 0] = 1.0
    work = 0
    peak = 0
    stages = 0  # numpy steps taken
    # the structures of this face and of the face above (only a face's next one repeats them),
    # by step and number of states, then by the states' bytes (made only when a step with as
    # many states is remembered: a favoured pool's states seldom repeat)
    memo: dict[tuple[Any, ...], dict[bytes, tuple[Any, ...]]] = {}
    older: dict[tuple[Any, ...], dict[bytes, tuple[Any, ...]]] = {}

    def remembered(key: tuple[Any, ...]) -> tuple[Any, ...] | None:
        key = key + (len(states),)
        kept = memo.get(key) or older.get(key)
        if kept:
            hit = kept.get(states.tobytes())
            if hit is not None:
                memo.setdefault(key, {})[states.tobytes()] = hit
                return hit
        return None

    def remember(key: tuple[Any, ...], hit: tuple[Any, ...]) -> tuple[Any, ...]:
        memo.setdefault(key + (len(states),), {})[states.tobytes()] = hit
        return hit

    def count(rows: Any, lo: int, hi: int) -> Any:
        """The dice placed over classes ``lo .. hi − 1`` (column by column: ``sum(axis=1)``
        over a few columns is slower)."""
        out = rows[:, lo].copy() if hi > lo else np.zeros(len(rows), dtype=np.int64)
        for j in range(lo + 1, hi):
            out += rows[:, j]
        return out

    def dedupe(new: Any) -> tuple[Any, Any]:
        """(first row of each distinct state, each row's state number)."""
        keys = new @ place
        if table is not None:
            table[keys] = np.arange(len(keys), dtype=np.int32)
            winner = table[keys].astype(np.int64)
            firsts = np.flatnonzero(winner == np.arange(len(keys)))
            compact = np.zeros(len(keys), dtype=np.int64)
            compact[firsts] = np.arange(len(firsts))
            return firsts, compact[winner]
        _, firsts, ids = np.unique(keys, return_index=True, return_inverse=True)
        return firsts, ids.ravel()

    def spread(ids: Any, shift: Any) -> tuple[Any, int]:
        """Where each move's row lands in the new states' rows: its hit count w at ``ids[i] ·
        width + shift[i] + w``. The cells past a row's end carry exactly 0 (no state holds a
        hit count that a later move could take past the most hits), so they may spill into
        the next row (the last row's into ``spill`` cells past the end)."""
        return ids * width + shift, int(shift.max()) if len(shift) else 0

    def cells(base: Any) -> Any:
        """The cells of rows starting at ``base`` (made when used: kept, they would hold 8
        bytes a cell where ``base`` holds 8 a row)."""
        return (base[:, None] + lanes).ravel()

    def structure(key: tuple[Any, ...], cols: list[tuple[int, int]],
                  move: Callable[[Any, Any], tuple[Any, Any]]) -> tuple[Any, ...]:
        """The step from ``states`` placing, for every (column, eligible) of ``cols``, k = 0 ..
        ``eligible − states[:, column]`` dice of that class (no column: only ``move``): (each
        move's state, its coefficient indices — one per column —, where its row lands, the
        spill, the new states). ``move(rows, k)`` gives the rows moved by k dice in all (their
        counts already raised) and their hits."""
        hit = remembered(key)
        if hit is not None:
            return hit
        r = [np.maximum(elig - states[:, col], 0) for col, elig in cols]
        if len(r) == 1:  # a move per state and k = 0 .. r
            rep = np.repeat(np.arange(len(states)), r[0] + 1)
            ks = (np.arange(len(rep)) - np.repeat(np.cumsum(r[0]) - r[0], r[0] + 1) - rep)[None]
        else:  # every combination of k per class a move: the combinations of k = 0 .. the
            # most any state places, kept where each k is at most what the state places
            grid = np.indices([int(x.max()) + 1 for x in r]).reshape(len(r), -1) if r else \
                np.zeros((0, 1), dtype=np.int64)
            fits = np.ones((len(states), grid.shape[1]), dtype=bool)
            for c, x in enumerate(r):
                fits &= grid[c] <= x[:, None]
            rep, combo = np.nonzero(fits)
            ks = grid[:, combo]
        coef = [x[rep] * (rmax + 1) + k for x, k in zip(r, ks)]
        new = states[rep]
        for (col, _), k in zip(cols, ks):
            new[:, col] += k
        new, shift = move(new, ks.sum(axis=0))
        firsts, ids = dedupe(new)
        base, spill = spread(ids, shift)
        return remember(key, (rep, coef, base, spill, new[firsts]))

    def apply(hit: tuple[Any, ...], pmf: Any) -> Any:
        """One step's numbers: each move's row scaled by its coefficient, summed into its new
        state's row at its shift by one ``bincount``."""
        nonlocal work, peak, stages
        rep, coef, base, spill, new_states = hit
        src = probs[rep]
        if coef:
            scale = pmf[coef[0]]
            for more in coef[1:]:
                scale = scale * pmf[more]
            src *= scale[:, None]
        size = len(new_states) * width
        out = np.bincount(cells(base), weights=src.ravel(), minlength=size + spill)
        work += len(rep) * width
        stages += 1
        peak = max(peak, 16 * src.size + out.nbytes)
        return out[:size].reshape(len(new_states), width)

    def chain(key: tuple[Any, ...], col: int, elig: int) -> tuple[Any, ...]:
        """A defence step as unit steps. Placing k dice of a class is k placements of one die
        (the class's count + 1; ``_defence_hits`` of one rank scored; every history slot − 1,
        clipped at 0), and the binomial coefficient of k dice can be read at the end from the
        new state's count and k (r = elig − (count after − k) dice could show the face). The
        clipping makes states equal, which then move as one: the k-th unit step moves only the
        distinct states k placements reach, not every (state, k). (Per unit step: its sources
        among the last unit step's states, its cells, padded row and new states; per k: the
        output number and coefficient index of each state reached; the new states.)"""
        hit = remembered(key)
        if hit is not None:
            return hit
        rows = states
        reached = [rows]
        units = []
        while True:
            live = np.flatnonzero(rows[:, col] < elig)
            if not len(live):
                break
            new = rows[live]
            new[:, col] += 1
            hist = [new[:, nd + j] for j in range(depth)]
            one = np.ones(len(new), dtype=np.int64)
            shift = _defence_hits(one, hist, reads, np.minimum) if reads else 0 * one
            new[:, nd:] = np.maximum(new[:, nd:] - 1, 0)
            firsts, ids = dedupe(new)
            rows = new[firsts]
            units.append((live,) + spread(ids, shift) + (len(rows),))
            reached.append(rows)
        every = np.concatenate(reached)
        firsts, ids = dedupe(every)
        cuts = np.cumsum([0] + [len(x) for x in reached])
        tail = [(ids[cuts[k]:cuts[k + 1]], (elig - reached[k][:, col] + k) * (rmax + 1) + k)
                for k in range(len(reached))]
        return remember(key, (units, tail, every[firsts]))

    def run(hit: tuple[Any, ...], pmf: Any) -> Any:
        """A ``chain``'s numbers: each unit step's moves summed by one ``bincount``; the states
        each k reaches added into the new states times their coefficient."""
        nonlocal work, peak, stages
        units, tail, new_states = hit
        stages += 1
        out = np.zeros((len(new_states), width))
        ids, coef = tail[0]
        u: Any = probs
        out[ids] = u * pmf[coef][:, None]
        for (live, base, spill, n_k), (ids, coef) in zip(units, tail[1:]):
            src = u[live]
            u = np.bincount(cells(base), weights=src.ravel(), minlength=n_k * width + spill)
            u = u[:n_k * width].reshape(n_k, width)
            out[ids] += u * pmf[coef][:, None]
            work += (len(live) + n_k) * width
            peak = max(peak, out.nbytes + 16 * src.size + 16 * n_k * width)
        return out

    def together(cols: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
        """The classes of a side placed in one step (every combination of k per class a move:
        fewer numpy calls) while that makes at most ``TOGETHER_UPTO`` moves, else one step a
        class (the sum of the combinations, not their product)."""
        if len(cols) < 2:
            return [cols] if cols else []
        moves = np.ones(len(states), dtype=np.int64)
        for col, elig in cols:
            moves *= np.maximum(elig - states[:, col], 0) + 1
        return [cols] if int(moves.sum()) <= TOGETHER_UPTO else [[c] for c in cols]

    for v in range(shape.top, 1, -1):
        older, memo = memo, {}
        q = 1.0 / v
        binom = np.zeros((rmax + 1, rmax + 1))
        for total in range(rmax + 1):
            for j in range(total + 1):
                binom[total, j] = math.comb(total, j) * q ** j * (1 - q) ** (total - j)
        pmf = binom.ravel()
        cols = [(ka + c, elig) for c, elig in enumerate(_eligible(d_cls, v))
                if (elig > states[:, ka + c]).any()]

        def defence(new: Any, k: Any) -> tuple[Any, Any]:
            hist = [new[:, nd + j] for j in range(depth)]
            shift = _defence_hits(k, hist, reads, np.minimum) if reads else np.zeros_like(k)
            for j in range(depth):
                new[:, nd + j] = np.maximum(0, hist[j] - k)
            return new, shift

        for group in together(cols):
            col, elig = group[0]
            if len(group) == 1 and int(np.maximum(elig - states[:, col], 0).sum()) >= \
                    CHAIN_FROM:
                got = chain(("c", col, elig), col, elig)
                probs, states = run(got, pmf), got[2]
            else:
                hit = structure(("d",) + tuple(group), group, defence)
                probs, states = apply(hit, pmf), hit[4]
        surplus = shape.step_at(v - 1)
        if depth:  # one face lower: D(v+1) enters the history (0 once no step reads it);
            # states that differed only in the history slot that leaves are merged
            live = v >= first_read

            def enter(new: Any, k: Any, live: bool = live) -> tuple[Any, Any]:
                a, b = count(new, 0, ka), count(new, ka, nd)
                entry = np.maximum(0, np.minimum(a, m) - b) if live else 0 * a
                new = np.concatenate([new[:, :nd], new[:, nd + 1:], entry[:, None]], axis=1)
                return new, 0 * k

            hit = structure(("e", live), [], enter)
            probs, states = apply(hit, pmf), hit[4]
        cols = [(c, elig) for c, elig in enumerate(_eligible(a_cls, v))
                if (elig > states[:, c]).any()]

        def attack(new: Any, k: Any, surplus: int = surplus) -> tuple[Any, Any]:
            a, b = count(new, 0, ka) - k, count(new, ka, nd)
            return new, _attack_hits(a, k, b, m, first, surplus, np.minimum, np.maximum)

        for group in together(cols):
            hit = structure(("a", surplus) + tuple(group), group, attack)
            probs, states = apply(hit, pmf), hit[4]
    # face 1, as in the exact kernel
    b = count(states, ka, nd)
    weight = np.ones(len(states))
    for pool, lo, hi in ((shape.attack, 0, ka), (shape.defence, ka, nd)):
        if pool.favored:
            sizes = np.array([len(c) for c in pool.classes()], dtype=np.int64)
            ones = sizes[None, :] - states[:, lo:hi]
            seen: dict[tuple[int, ...], float] = {}
            for i, row in enumerate(map(tuple, ones.tolist())):
                if row not in seen:
                    seen[row] = float(_favored_weight(pool, row))
                weight[i] *= seen[row]
    hist = [states[:, nd + j] for j in range(depth)]
    shift = _defence_hits(m - b, hist, reads, np.minimum) if reads else np.zeros_like(b)
    shift = shift + shape.bonus * (b == 0)
    flat = shift[:, None] + np.arange(width)
    out = np.bincount(flat.ravel(), weights=(probs * weight[:, None]).ravel(),
                      minlength=width)
    work += len(states) * width
    return [float(x) for x in out[:width]], work // NUMPY_CELLS_PER_STEP + stages * \
        NUMPY_STEPS_PER_STAGE, peak
