"""Exact laws as whole-number weights over a common total: ``weights[outcome] / total``.

Every probability a kit game gives is a ratio of two integers here, so its fractions are exact by
construction; an infinite law (an explosion) is cut where its tail falls below ``CUT`` and says how
much it cut (``Law.cut``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from fractions import Fraction
from itertools import product
from math import comb, prod
from typing import Any

from .._errors import LimitError
from .._limits import DEFAULT_LIMITS, Limits
from ..odds.maths import int_multiply, int_power

__all__ = ["CUT", "Law", "add_laws", "binomial_law", "by_margin", "fold_law", "joint", "plus",
           "power_law"]

CUT = Fraction(1, 10**18)
COMBINATION = 60  # the steps (lines of Python run) of one combination of a joint law
_MEMORY, _ENTRY = 64 << 10, 400  # a joint law's bytes: its own, and per entry of its parts  # an explosion's tail is cut once what is left is below this


class Law:
    """``weights[outcome] / total`` for each outcome; the weights may sum to less than ``total``
    where an infinite tail was cut."""

    __slots__ = ("total", "weights")

    def __init__(self, weights: dict[Any, int], total: int) -> None:
        self.weights, self.total = weights, total

    @classmethod
    def of(cls, outcomes: Iterable[Any]) -> Law:
        """Each of ``outcomes`` equally likely (a die's faces, repeats counting twice)."""
        weights: dict[Any, int] = {}
        n = 0
        for x in outcomes:
            weights[x] = weights.get(x, 0) + 1
            n += 1
        return cls(weights, n)

    @property
    def cut(self) -> Fraction:
        """The probability left out where an infinite tail was cut (0 for a finite law)."""
        return Fraction(self.total - sum(self.weights.values()), self.total)

    def fractions(self) -> dict[Any, Fraction]:
        return {k: Fraction(w, self.total) for k, w in self.weights.items()}

    def map(self, f: Callable[[Any], Any]) -> Law:
        out: dict[Any, int] = {}
        for k, w in self.weights.items():
            y = f(k)
            out[y] = out.get(y, 0) + w
        return Law(out, self.total)

    def without(self, drop: Callable[[Any], bool]) -> Law:
        """The law given that no outcome ``drop`` picks came up (a roll made again until it
        does not: its law is the law conditioned on stopping)."""
        kept = {k: w for k, w in self.weights.items() if not drop(k)}
        gone = sum(self.weights.values()) - sum(kept.values())
        if not kept:
            raise LimitError("every outcome calls for the roll to be made again: it never ends")
        return Law(kept, self.total - gone)


def _int_valued(law: Law) -> bool:
    return all(type(k) is int for k in law.weights)


def _dense(law: Law) -> tuple[int, list[int]]:
    low = min(law.weights)
    out = [0] * (max(law.weights) - low + 1)
    for k, w in law.weights.items():
        out[k - low] = w
    return low, out


def _sparse(low: int, dense: Sequence[int]) -> dict[Any, int]:
    return {low + i: w for i, w in enumerate(dense) if w}


def _is_dense(law: Law) -> bool:
    span: int = max(law.weights) - min(law.weights) + 1
    return span <= 4 * len(law.weights) + 16


def joint(laws: Sequence[Law], f: Callable[..., Any], limits: Limits = DEFAULT_LIMITS,
          text: str = "") -> Law:
    """The law of ``f`` of independent draws from ``laws`` (every combination weighed)."""
    combos = prod(len(law.weights) for law in laws)
    # steps: the function's own lines for each combination (a verdict runs a few dozen)
    limits.check_work(COMBINATION * combos, "the combinations of the roll's parts", text)
    limits.check_memory(_MEMORY + _ENTRY * sum(len(law.weights) for law in laws),
                        "the combinations of the roll's parts", text)
    out: dict[Any, int] = {}
    items = [tuple(law.weights.items()) for law in laws]
    if len(items) == 2:  # a contest: the common case, without a tuple per combination
        get = out.get
        for x, wx in items[0]:
            for y, wy in items[1]:
                z = f(x, y)
                out[z] = get(z, 0) + wx * wy
        return Law(out, laws[0].total * laws[1].total)
    for combo in product(*items):
        y = f(*(k for k, _ in combo))
        w = 1
        for _, v in combo:
            w *= v
        out[y] = out.get(y, 0) + w
    return Law(out, prod(law.total for law in laws))


def _split(law: Law) -> dict[Any, dict[int, int]] | None:
    """A law of ints, or of tuples whose first place is an int, as {rest: {first: weight}}."""
    out: dict[Any, dict[int, int]] = {}
    for k, w in law.weights.items():
        if type(k) is int:
            first, rest = k, None
        elif isinstance(k, tuple) and k and type(k[0]) is int:
            first, rest = k[0], k[1:]
        else:
            return None
        out.setdefault(rest, {})[first] = w
    return out


def by_margin(a: Law, b: Law, f: Callable[[Any, Any], Any], limits: Limits = DEFAULT_LIMITS,
              text: str = "") -> Law | None:
    """The law of ``f(x, y)`` for a contest whose ``f`` reads the two values only through the
    difference of their numbers (an int, or a tuple's first place) and the rest of each tuple:
    for each pair of rests, the margins' law is one convolution, and ``f`` is read once per
    margin on a pair of values that gives it. None where the values are not of that shape."""
    sa, sb = _split(a), _split(b)
    if sa is None or sb is None:
        return None
    conv = sum(len(x) + len(y) for x in sa.values() for y in sb.values())
    limits.check_work(COMBINATION * conv, "the margins of the contest", text)
    limits.check_memory(_MEMORY + _ENTRY * (len(a.weights) + len(b.weights)),
                        "the margins of the contest", text)
    out: dict[Any, int] = {}
    for ra, xa in sa.items():
        la, da = _dense(Law(xa, 1))
        for rb, xb in sb.items():
            lb, db = _dense(Law(xb, 1))
            margins = int_multiply(da, db[::-1])  # x - y, from la - (lb + len(db) - 1)
            low = la - (lb + len(db) - 1)
            for i, w in enumerate(margins):
                if not w:
                    continue
                m = low + i
                x = next(x for x in xa if x - m in xb)  # a pair of values with this margin
                y = x - m
                z = f(x if ra is None else (x, *ra), y if rb is None else (y, *rb))
                out[z] = out.get(z, 0) + w
    return Law(out, a.total * b.total)


def add_laws(a: Law, b: Law, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
    """The law of a sum of independent draws from ``a`` and ``b``."""
    if _int_valued(a) and _int_valued(b) and _is_dense(a) and _is_dense(b):
        (la, da), (lb, db) = _dense(a), _dense(b)
        limits.check_work(len(da) + len(db), "a sum", text)
        return Law(_sparse(la + lb, int_multiply(da, db)), a.total * b.total)
    return joint((a, b), plus, limits, text)


def plus(x: Any, y: Any) -> Any:
    """A sum; tuples (several counts at once) add up place by place, and 0 adds nothing."""
    if isinstance(x, tuple) and isinstance(y, tuple):
        return tuple(a + b for a, b in zip(x, y))
    if isinstance(x, tuple) or isinstance(y, tuple):
        return y if x == 0 else x if y == 0 else x + y
    return x + y


def power_law(law: Law, n: int, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
    """The law of the sum of ``n`` independent draws from ``law``."""
    if n == 0:
        return Law({0: 1}, 1)
    if _int_valued(law) and _is_dense(law):
        low, dense = _dense(law)
        limits.check_work(len(dense) * n, f"the sum of {n} dice", text)
        return Law(_sparse(low * n, int_power(dense, n)), law.total ** n)
    out = Law({0: 1}, 1)
    for _ in range(n):
        out = add_laws(out, law, limits, text)
    return out


def binomial_law(n: int, hit: int, total: int) -> Law:
    """How many of ``n`` draws hit, each hitting with ``hit`` chances in ``total``."""
    miss = total - hit
    return Law({k: comb(n, k) * hit ** k * miss ** (n - k) for k in range(n + 1)
                if hit or k == 0}, total ** n)


def fold_law(laws: Sequence[Law], step: Callable[[Any, Any], Hashable], start: Hashable,
             limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
    """The law of ``state = step(state, x)`` over independent draws ``x`` from each of ``laws``
    in turn, starting from ``start``: a dynamic programme over the states that can be reached."""
    states: dict[Any, int] = {start: 1}
    total = 1
    for law in laws:
        limits.check_work(len(states) * len(law.weights), "the states of a pool", text)
        nxt: dict[Any, int] = {}
        for s, ws in states.items():
            for x, wx in law.weights.items():
                t = step(s, x)
                nxt[t] = nxt.get(t, 0) + ws * wx
        states, total = nxt, total * law.total
    return Law(states, total)
