"""The sorted-pool evaluator's numpy kernel (``pairing.py`` holds the rule, the shape, the exact
kernel and the work estimate): float64, a face's states as rows of an int array, their hit laws as
columns; each step's structure is built once and indexed."""

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


# -------------------------------------------------------------------------------------------
# The numpy kernel: float64, a face's states in arrays, duplicates summed through a dense index



def numpy_kernel(shape: _Shape) -> tuple[list[float], int, int]:
    """The numpy kernel. The states of a face are rows of an int array; their hit laws are the
    columns of ``probs`` (hits × states). A step's *structure* (which state moves where, with
    which binomial coefficient and hit shift) depends only on the states it starts from, not
    on the face's probabilities, so it is built once and indexed: the states are ordered by how
    many dice they still place, so the moves that place ``k`` dice are a leading slice (a
    contiguous multiply, no gather), and one ``bincount`` sums every move into its new state.
    Faces below the smallest die repeat the same structures."""
    import numpy as np

    a_cls, d_cls = shape.attack.classes(), shape.defence.classes()
    ka, kd, depth, m = len(a_cls), len(d_cls), shape.depth, shape.m
    nd = ka + kd
    steps2 = [(t, w) for t, w in shape.steps if t >= 2]
    reads = [(depth + 1 - t, w) for t, w in steps2]
    first_read = min((t for t, _ in steps2), default=0)
    first = shape.step_at(1)
    width = shape.max_hits + 1
    radix = [len(c) + 1 for c in a_cls] + [len(c) + 1 for c in d_cls] + \
        [min(shape.n, m) + 1] * depth
    space = math.prod(radix)
    place = np.array([math.prod(radix[:i]) for i in range(len(radix))], dtype=np.int64)
    table = np.empty(space, dtype=np.int32) if space <= _DENSE_KEYS else None
    rmax = max(shape.n, m)
    states = np.zeros((1, nd + depth), dtype=np.int64)
    probs = np.zeros((width, 1))
    probs[0, 0] = 1.0
    work = 0
    peak = 0
    memo: dict[tuple[Any, ...], tuple[Any, ...]] = {}

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

    def structure(key: tuple[Any, ...], col: int | None, elig: int,
                  move: Callable[[Any, Any], tuple[Any, Any]]) -> tuple[Any, ...]:
        """The step from ``states`` placing up to ``elig - states[:, col]`` dice (``col`` None:
        none, only ``move``): (order of the states, moves per k, coefficient index, target
        index, largest shift, new states). ``move(rows, k)`` gives the moved rows and shifts."""
        full = key + (states.tobytes(),)
        hit = memo.get(full)
        if hit is not None:
            return hit
        if col is None:
            r = np.zeros(len(states), dtype=np.int64)
            order = None
        else:
            r = np.maximum(elig - states[:, col], 0)
            order = np.argsort(-r, kind="stable")
            if (order == np.arange(len(order))).all():
                order = None
            else:
                r = r[order]
        src = states if order is None else states[order]
        counts = [int(x) for x in np.bincount(r, minlength=rmax + 1)[::-1].cumsum()[::-1]]
        runs = [n for n in counts if n]  # runs[k]: the states that place k or more dice
        rep = np.concatenate([np.arange(n) for n in runs])
        k = np.repeat(np.arange(len(runs)), runs)
        new, shift = move(src[rep], k)
        firsts, ids = dedupe(new)
        top = int(shift.max()) if len(shift) else 0
        hit = memo[full] = (order, rep, r[rep] * (rmax + 1) + k, shift * len(firsts) + ids,
                            top, new[firsts])
        return hit

    def apply(hit: tuple[Any, ...], pmf: Any) -> Any:
        """One step's numbers: each move's column scaled by its coefficient (a slice per k),
        summed into its new state and hit count by one ``bincount``."""
        nonlocal work, peak
        order, rep, coef, target, top, new_states = hit
        src = probs if order is None else probs[:, order]
        scale = pmf[coef]
        n_out = len(new_states)
        # a move from hit count w lands at w + shift in its new state (target = shift · n_out
        # + state): one bincount per hit count, added in at w (nothing scores past the last)
        out = np.zeros(width * n_out)
        reach = (top + 1) * n_out
        for w in range(width):
            if w * n_out >= len(out):
                break
            moved = np.bincount(target, weights=src[w][rep] * scale, minlength=reach)
            end = min(len(out), w * n_out + reach)
            out[w * n_out:end] += moved[:end - w * n_out]
        work += len(target) * width
        peak = max(peak, 2 * out.nbytes + 8 * reach + 24 * len(target))
        return out.reshape(width, n_out)

    stages = 3 * (shape.top - 1)
    for v in range(shape.top, 1, -1):
        q = 1.0 / v
        binom = np.zeros((rmax + 1, rmax + 1))
        for total in range(rmax + 1):
            for j in range(total + 1):
                binom[total, j] = math.comb(total, j) * q ** j * (1 - q) ** (total - j)
        pmf = binom.ravel()
        for c, elig in enumerate(_eligible(d_cls, v)):
            col = ka + c
            if not (elig > states[:, col]).any():
                continue

            def defence(new: Any, k: Any, col: int = col) -> tuple[Any, Any]:
                new[:, col] += k
                hist = [new[:, nd + j] for j in range(depth)]
                shift = _defence_hits(k, hist, reads, np.minimum) if reads else \
                    np.zeros_like(k)
                for j in range(depth):
                    new[:, nd + j] = np.maximum(0, hist[j] - k)
                return new, shift

            hit = structure(("d", col, elig), col, elig, defence)
            probs, states = apply(hit, pmf), hit[5]
        surplus = shape.step_at(v - 1)
        if depth:  # one face lower: D(v+1) enters the history (0 once no step reads it);
            # states that differed only in the history slot that leaves are merged
            live = v >= first_read

            def enter(new: Any, k: Any, live: bool = live) -> tuple[Any, Any]:
                a, b = new[:, :ka].sum(axis=1), new[:, ka:nd].sum(axis=1)
                entry = np.maximum(0, np.minimum(a, m) - b) if live else 0 * a
                new = np.concatenate([new[:, :nd], new[:, nd + 1:], entry[:, None]], axis=1)
                return new, 0 * k

            hit = structure(("e", live), None, 0, enter)
            probs, states = apply(hit, pmf), hit[5]
        for c, elig in enumerate(_eligible(a_cls, v)):
            if not (elig > states[:, c]).any():
                continue

            def attack(new: Any, k: Any, c: int = c, surplus: int = surplus) -> tuple[Any, Any]:
                a, b = new[:, :ka].sum(axis=1), new[:, ka:nd].sum(axis=1)
                new[:, c] += k
                return new, _attack_hits(a, k, b, m, first, surplus, np.minimum, np.maximum)

            hit = structure(("a", c, elig, surplus), c, elig, attack)
            probs, states = apply(hit, pmf), hit[5]
    # face 1, as in the exact kernel
    b = states[:, ka:nd].sum(axis=1)
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
    out = np.bincount(flat.ravel(), weights=(probs.T * weight[:, None]).ravel(),
                      minlength=width)
    work += len(states) * width
    return [float(x) for x in out[:width]], work // NUMPY_CELLS_PER_STEP + stages * \
        NUMPY_STEPS_PER_STAGE, peak
