"""The exact law of a ``Keep`` whose explosions add dice (``Keep.each``: ``4d6!kh3``), read by
the order statistics of ``odds/keep.py``.

Every roll of a die's chain is a die of its own. The pool is a mixture of pools of i.i.d.
classes, given how many rolls went on:

- first rolls that go on (``a`` of the ``n``, binomial) and those that stop, each class read at
  position 0; then among the ``a`` chains, re-rolls that go on (negative binomial: ``m`` of them)
  and the ``a`` that stop, read at position 1. Given those counts the faces of each class are
  independent, each with the law of the faces of its kind;
- when re-rolls read their faces as first faces do (``!``), the ``n`` chains are one negative
  binomial: ``n`` rolls that stop and ``m`` that go on;
- a chain capped at one re-roll (``xo``) adds one roll, of any face, to each first roll that
  goes on.

Tails are cut below ``eps``; the weight left out is the law's ``truncated``. The work is every
part's order statistics, counted before any is done.
"""

from __future__ import annotations

import math
from functools import lru_cache

from .._memo import by_identity
from ..dice.algebra import Chain, Keep, kept_count
from . import maths
from .keep import KeepPlan, keep_plan

__all__ = ["each_law", "each_shape"]

Classes = tuple[tuple[int, dict[int, float]], ...]  # (how many dice, the law of one)
Parts = tuple[tuple[float, Classes], ...]  # (weight, classes)
_PART = 20  # steps to make one part of the mixture and mix its law in, a value at a time


def _split(chain: Chain, position: int, faces: dict[int, float]
           ) -> tuple[dict[int, float], dict[int, float], float, dict[int, float]]:
    """(values of the faces that go on, of those that stop, the chance to go on, of all faces)
    of one roll at ``position``, each law normalised."""
    on: dict[int, float] = {}
    off: dict[int, float] = {}
    every: dict[int, float] = {}
    for f, p in faces.items():
        v = chain.score(position, f)
        side = on if chain.again(position, f) else off
        side[v] = side.get(v, 0.0) + p
        every[v] = every.get(v, 0.0) + p
    q = math.fsum(on.values())
    return _norm(on), _norm(off), q, every


def _norm(law: dict[int, float]) -> dict[int, float]:
    total = math.fsum(law.values())
    return {v: p / total for v, p in law.items()} if total else {}


def _chain(program: Keep) -> Chain:
    """The pool's chain, which a Keep of each roll can read."""
    chain = program.pool.unit
    if not isinstance(chain, Chain) or chain.limit not in (None, 0, 1):
        raise ValueError("a Keep of each roll reads a pool of plain chains, uncapped or capped "
                         "at one re-roll")
    return chain


def rough_parts(program: Keep) -> float:
    """An upper estimate of how many parts the mixture has, made without making them (a refusal
    before any is made): 40 standard deviations of each count past its mean."""
    from .algebra import stood

    chain, n = _chain(program), program.pool.dice
    faces = stood(chain)
    on0, off0, q0, _ = _split(chain, 0, faces)
    on1, off1, q1, _ = _split(chain, 1, faces)
    if q0 == 0 or chain.limit == 0:
        return 1.0
    if chain.limit is None and (on0, off0) == (on1, off1):  # one negative binomial
        return _tail(n, q0)
    firsts = min(n + 1, 40 * math.sqrt(n * q0 * (1 - q0)) + 1)
    return firsts * (1 if chain.limit == 1 else _tail(n, q1))


def _tail(n: int, q: float) -> float:
    """How many terms of a negative binomial of ``n`` chains going on with ``q`` are read."""
    stop = max(1e-9, 1.0 - q)
    return n * q / stop + 40 * math.sqrt(n * q) / stop + 1


@lru_cache(maxsize=64)
def _parts(program: Keep, eps: float) -> Parts:
    from .algebra import stood

    chain, n = _chain(program), program.pool.dice
    faces = stood(chain)
    on0, off0, q0, every0 = _split(chain, 0, faces)
    if q0 == 0 or chain.limit == 0:
        return ((1.0, ((n, every0),)),)
    on1, off1, q1, every1 = _split(chain, 1, faces)
    if chain.limit is None and (on0, off0) == (on1, off1):  # re-rolls read like first rolls
        goes = maths.negative_binomial(n, q0, eps)[0]
        return tuple((pm, ((n, off0), (m, on0))) for m, pm in enumerate(goes))
    out: list[tuple[float, Classes]] = []
    for a, pa in enumerate(maths.binomial(n, q0)):
        if pa == 0:
            continue
        if chain.limit == 1:
            out.append((pa, ((a, on0), (n - a, off0), (a, every1))))
            continue
        for m, pm in enumerate(maths.negative_binomial(a, q1, eps)[0]):
            out.append((pa * pm, ((a, on0), (n - a, off0), (a, off1), (m, on1))))
    return tuple(out)


_MIXTURES: dict[tuple[int, float], tuple[Keep, list[tuple[float, KeepPlan]]]] = {}


def _plans(program: Keep, eps: float) -> list[tuple[float, KeepPlan]]:
    """Each part of the mixture: its weight and its kept dice's order statistics, made ready
    once per program (counted, then run). The parts run with numpy or without it together:
    numpy pays for its import by their work in all (``maths.numpy_pays``)."""
    def make() -> list[tuple[float, KeepPlan]]:
        parts = [(weight, keep_plan(classes, program.highest,
                                    kept_count(sum(c for c, _ in classes), program.keep,
                                               program.dropping), program.read))
                 for weight, classes in _parts(program, eps)]
        numpy = maths.numpy_pays(sum(plan.cost.python for _, plan in parts),
                                 sum(plan.cost.numpy for _, plan in parts))
        return [(weight, plan._replace(numpy=numpy)) for weight, plan in parts]

    return by_identity(_MIXTURES, (id(program), eps), program, make, 64)


def each_shape(program: Keep, eps: float) -> tuple[int, int]:
    """(steps, peak bytes) of ``each_law``: every part's order statistics."""
    steps = memory = 0
    for _, plan in _plans(program, eps):
        steps, memory = steps + plan.steps + _PART, max(memory, plan.memory)
    return steps, memory


def each_law(program: Keep, eps: float) -> tuple[int, list[float], float]:
    """(lowest value, P(value = lowest + k) for each k, weight cut off): the mixture of every
    part's kept dice (a caller counts the work first, ``each_shape``)."""
    laws = []
    for weight, plan in _plans(program, eps):
        low, pmf = plan.law()
        laws.append((weight, low, pmf))
    low = min(lo for _, lo, _ in laws)
    out = [0.0] * (max(lo + len(p) for _, lo, p in laws) - low)
    for weight, lo, pmf in laws:
        at = lo - low
        for i, p in enumerate(pmf):
            out[at + i] += weight * p
    return low, out, max(0.0, 1.0 - math.fsum(w for w, _, _ in laws))


def clear() -> None:
    """Forget the remembered mixtures."""
    _parts.cache_clear()
    _MIXTURES.clear()
