"""The sorted-pool evaluator's closed forms (``pairing.py`` holds the rule, the shape, the choice
of kernel and the work estimate): plain pools that need no sorting, read from the step function
alone."""

from __future__ import annotations

import math
from fractions import Fraction

from .pairing import _Shape

__all__ = ["closed_kernel"]


def closed_kernel(shape: _Shape) -> tuple[list[Fraction], int]:
    """``_exact``'s counts for a ``_closed_form`` shape, and the steps taken.

    With ``g`` the step function of the difference: with no defence die, the convolution of each
    attack die's hits ``g(face − 1)``; with one attack die, ``g(d − s)`` against the highest
    defence face ``s`` (the all-ones bonus when that is 1); with one defence die ``s``, the
    attack dice's ``Σ g(face − 1)`` over the vectors whose highest face is ``x`` (those with
    every face ≤ x less those with every face ≤ x − 1), the highest die scoring
    ``g(x − s)`` instead of ``g(x − 1)``."""
    g = [shape.step_at(x) for x in range(shape.top)]  # the step function at a difference x
    att, dfn = shape.attack.sizes, shape.defence.sizes
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
    total = math.prod(att) * math.prod(dfn)
    return [Fraction(c, total) for c in counts], work
