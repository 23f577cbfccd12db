"""The sorted-pool evaluator's exact kernel (``pairing.py`` holds the rule, the shape, the choice
of kernel and the work estimate): pure Python, integer counts, a hits polynomial packed into one
Python int; no numpy import, fast for small pools."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from .pairing import (
    _attack_hits,
    _defence_hits,
    _eligible,
    _favored_weight,
    _Shape,
)

__all__ = ["exact_kernel"]


def exact_kernel(shape: _Shape) -> tuple[list[Fraction], int]:
    """The exact counts of every hit total over the common denominator, and the steps taken."""
    a_cls, d_cls = shape.attack.classes(), shape.defence.classes()
    ka, kd, depth, m = len(a_cls), len(d_cls), shape.depth, shape.m
    steps2 = [(t, w) for t, w in shape.steps if t >= 2]
    first = shape.step_at(1)
    fav_a, fav_d = shape.attack.favored, shape.defence.favored
    total = math.prod(shape.attack.sizes) * math.prod(shape.defence.sizes)
    den, bits = shape.packed_bits()  # favoured weights over one denominator; a count's bits
    nd = ka + kd
    rmax = max(shape.n, m)
    rows = [tuple(math.comb(r, k) for k in range(1, r + 1)) for r in range(rmax + 1)]
    # the history slot each step t ≥ 2 reads at face v: D(v+t) sits at depth + 1 − t
    reads = [(depth + 1 - t, w) for t, w in steps2]
    first_read = min((t for t, _ in steps2), default=0)
    # A state is a pool (the dice placed per class, ``pools``) and an attack-count history
    # (``hists``), each numbered: an int hashes at once where a tuple hashes element by element.
    # The states are kept grouped by pool, ``{pool: {history: hits polynomial}}``: a step's
    # moves depend on the pool (and, for the defence, on the history through small tables), so
    # a pool's moves are read once and applied to each of its histories in a tight loop.
    pools: list[tuple[int, ...]] = [(0,) * nd]
    pool_ids = {pools[0]: 0}
    hists: list[tuple[int, ...]] = [(0,) * depth]
    hist_ids = {hists[0]: 0}

    def number(table: list[tuple[int, ...]], ids: dict[tuple[int, ...], int],
               key: tuple[int, ...]) -> int:
        got = ids.get(key)
        if got is None:
            got = ids[key] = len(table)
            table.append(key)
        return got

    # per history: the histories k defence ranks placed leave, and the hits they score
    # (_defence_hits); per history and entering value: the history one face lower. A rank
    # placed lowers every slot by one (clipped at 0), so k ranks lower it k times: each
    # history's one-lower history is worked out once (``less``), the all-0 history is its own.
    lowered: dict[int, tuple[list[int], tuple[int, ...]]] = {}
    entered: dict[tuple[int, int], int] = {}
    less: dict[int, int] = {0: 0}

    def lower(h: int) -> tuple[list[int], tuple[int, ...]]:
        low = []
        x = h
        for _ in range(m):
            y = less.get(x)
            if y is None:
                y = less[x] = number(hists, hist_ids,
                                     tuple([v - 1 if v > 1 else 0 for v in hists[x]]))
            low.append(y)
            x = y
        hist = hists[h]
        hits = tuple([bits * _defence_hits(k, hist, reads, min) for k in range(1, m + 1)])
        got = lowered[h] = (low, hits)
        return got

    # per pool counts and step: the pools after placing k = 1..r dice (numbered), their
    # coefficients and (attack) hits, remembered per pool and step
    def placed(p: int, col: int, elig: int) -> tuple[int, list[int]]:
        counts = pools[p]
        r = max(0, elig - counts[col])
        head, at, tail = counts[:col], counts[col], counts[col + 1:]
        return r, [number(pools, pool_ids, head + (at + k,) + tail) for k in range(1, r + 1)]

    def defence_pool(p: int, col: int, elig: int) -> tuple[Any, ...]:
        r, targets = placed(p, col, elig)
        return tuple(zip(targets, rows[r]))

    def attack_pool(p: int, c: int, elig: int, surplus: int) -> tuple[Any, ...]:
        counts = pools[p]
        a = sum(counts[:ka])
        b = sum(counts[ka:nd])
        r, targets = placed(p, c, elig)
        # an attack move's hits do not depend on the history: its coefficient and its hits'
        # shift are one multiplier
        moves = tuple(zip(targets, [coef << (bits * _attack_hits(a, k, b, m, first, surplus,
                                                                 min, max))
                                    for k, coef in enumerate(rows[r], 1)]))
        return moves, max(0, min(a, m) - b)

    # k = 0 (no die at v) keeps every state as it is: a step starts from the states it was
    # given, and a pool's histories are copied only when a move first adds to them
    by_pool: dict[tuple[Any, ...], dict[int, Any]] = {}
    states: dict[int, dict[int, int]] = {0: {0: 1}}
    work = 0
    out = 0
    for v in range(shape.top, 1, -1):
        # defence dice showing v, class by class: k of them move a state to its pool's k-th
        # target at its history's k-th lowered history, scoring that history's hits
        for c, elig in enumerate(_eligible(d_cls, v)):
            col = ka + c
            new = dict(states)
            own: set[int] = set()  # the pools copied in this step
            table = by_pool.setdefault((0, col, elig), {})
            for p, hs in states.items():
                moves = table.get(p)
                if moves is None:
                    moves = table[p] = defence_pool(p, col, elig)
                work += len(hs) * (len(moves) + 1)
                if not moves:
                    continue
                targets = []
                for t, coef in moves:
                    if t not in own:
                        own.add(t)
                        new[t] = dict(new.get(t, ()))
                    targets.append((new[t], coef))
                for h, poly in hs.items():
                    low, hits = lowered.get(h) or lower(h)
                    for (into, coef), x, s in zip(targets, low, hits):
                        into[x] = into.get(x, 0) + ((poly * coef) << s)
            states = new
        # then the attack dice showing v, class by class (the first class's step also enters
        # D(v+1) into the history, clipped to the ranks ≥ b that can still meet a defence die,
        # 0 once no step reads it any more)
        surplus = shape.step_at(v - 1)
        enter = 0 if not depth else 2 if v >= first_read else 1
        for c, elig in enumerate(_eligible(a_cls, v)):
            table = by_pool.setdefault((1, c, elig, surplus), {})
            kept: dict[int, dict[int, int]] = {}
            for p, hs in states.items():
                got = table.get(p)
                if got is None:
                    got = table[p] = attack_pool(p, c, elig, surplus)
                if enter:
                    entry = got[1] if enter > 1 else 0
                    shifted: dict[int, int] = {}
                    for h, poly in hs.items():
                        key = (h, entry)
                        h2 = entered.get(key)
                        if h2 is None:
                            h2 = entered[key] = number(hists, hist_ids, hists[h][1:] + (entry,))
                        shifted[h2] = shifted.get(h2, 0) + poly
                    hs = shifted
                kept[p] = hs
            new = kept
            own = set()
            for p, hs in list(kept.items()):
                moves = table[p][0]
                work += len(hs) * (len(moves) + 1)
                for t, times in moves:
                    if t in own:
                        into = new[t]
                    else:
                        own.add(t)
                        if t not in new:  # a pool no state had: its states are these
                            new[t] = {h: poly * times for h, poly in hs.items()}
                            continue
                        into = new[t] = dict(new[t])
                    for h, poly in hs.items():
                        into[h] = into.get(h, 0) + poly * times
            enter = 0
            states = new
    # face 1: every unplaced die shows 1 (an attack 1 never scores); favoured pools take their
    # weight W from how many 1s each size shows; the all-ones bonus when no defence die is above 1
    for p, hs in states.items():
        st = pools[p]
        b = sum(st[ka:nd])
        weight = Fraction(den)
        if fav_a:
            weight *= _favored_weight(shape.attack, [len(cls) - st[c]
                                                     for c, cls in enumerate(a_cls)])
        if fav_d:
            weight *= _favored_weight(shape.defence, [len(cls) - st[ka + c]
                                                      for c, cls in enumerate(d_cls)])
        assert weight.denominator == 1
        scale = weight.numerator
        bonus = shape.bonus if b == 0 else 0
        for h, poly in hs.items():
            shift = (_defence_hits(m - b, hists[h], reads, min) if reads else 0) + bonus
            out += (poly * scale) << (bits * shift)
        work += len(hs)
    mask = (1 << bits) - 1
    denominator = total * den
    return [Fraction((out >> (bits * h)) & mask, denominator)
            for h in range(shape.max_hits + 1)], work * shape.steps_per_move()
