"""Exact odds of any expression: nothing here samples.

Every dice term and group is rolled separately, so the distribution of an expression is built
from independent parts: sums by convolution, other operators over all pairs of outcomes.

A dice term without keep/drop is ``count`` independent *chains* (a die and what its explosions
add), so its distribution is one chain's distribution convolved ``count`` times. With keep/drop
the pool is split into classes of independent, identically distributed dice (an exploding pool
is ``count`` dice that did not explode plus a negative-binomial number that did: the algebra's
``Keep`` of each roll, ``odds/explode.py``) and the kept sum comes from order statistics: a dynamic programme over values
from high to low that tracks how many dice of each class are placed so far (``odds/keep.py``), the
same idea as the Jadeclaw damage DP. Endless tails (explosions) are cut once the probability left
is below ``1e-15``; what was cut is reported as ``truncated``.

Work is estimated before each step; past ``Limits.max_odds_work`` the answer is a LimitError.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any

from ..._errors import NotationError
from ..._limits import Limits
from ..._memo import by_identity
from ...odds import Distribution
from ...odds.maths import binomial
from .. import Odds
from . import laws
from .checks import _walk
from .laws import dice_pmf, group_pmf
from .nodes import (
    PREFIX,
    Call,
    Comparison,
    Computed,
    Dice,
    Expression,
    Group,
    Label,
    Lazy,
    Neg,
    Node,
    Num,
    Power,
    Product,
    Rolls,
    Sum,
    Value,
    format_value,
)
from .pmf import (
    ROW,
    ROW_BYTES,
    Budget,
    Pmf,
    add,
    binop,
    lost_of,
    mapped,
    negate,
    power,
)
from .rules import (
    BadValue,
    ZeroDivisor,
    arith,
    call,
    compare,
    count_matching,
)

__all__ = ["Budget", "Pmf", "evaluate", "odds"]

# --------------------------------------------------------------------------------------------
# The expression

_BODIES: dict[tuple[int, int], tuple[Node, Pmf]] = {}  # whole expressions' laws (a repeated request)


def forget() -> None:
    """Clear the remembered laws (benchmarks and tests that time or count the computing)."""
    laws.forget()
    _BODIES.clear()


def _as_value(v: Value) -> Value:
    if type(v) is Fraction and v.denominator == 1:
        return int(v)
    return v


def evaluate(node: Node, limits: Limits, budget: Budget) -> Pmf:
    """The exact distribution of a node; its parts are independent (each term rolls its own)."""
    match node:
        case Num(value=v):
            return Pmf.point(_as_value(v))
        case Dice():
            return dice_pmf(node, limits, budget)
        case Group(items=items):
            return group_pmf(node, [evaluate(i, limits, budget) for i in items], budget)
        case Label(node=inner):
            return evaluate(inner, limits, budget)
        case Neg(operand=o):
            return negate(evaluate(o, limits, budget))
        case Sum(terms=terms):
            acc = evaluate(terms[0][1], limits, budget)
            for op, t in terms[1:]:
                acc = add(acc, evaluate(t, limits, budget), budget, node,
                          1 if op == "+" else -1)
            return acc
        case Product(factors=factors, spans=spans):
            acc = evaluate(factors[0][1], limits, budget)
            for (op, f), span in zip(factors[1:], spans[1:]):
                right = evaluate(f, limits, budget)
                if op in ("/", "//", "%") and any(v == 0 for v, _ in right.items()):
                    raise NotationError("the divisor can come to 0, so the result is undefined "
                                        "for some rolls", budget.text, span)
                try:
                    acc = _product(op, acc, right, budget, node)
                except BadValue as exc:
                    raise NotationError(f"{exc} for some rolls, past what the notation holds",
                                        budget.text, span) from None
            return acc
        case Call(name=name, args=args, span=span) if name == "pow":
            a, x = (evaluate(arg, limits, budget) for arg in args)
            try:
                return binop(a, x, lambda u, v: call("pow", [u, v]), budget, node, op="**")
            except (ZeroDivisor, BadValue) as exc:
                raise NotationError(f"{exc} for some rolls, so the odds are undefined",
                                    budget.text, span) from None
        case Call(name=name, args=args):
            parts = [evaluate(a, limits, budget) for a in args]
            if len(parts) == 1:
                return mapped(parts[0], lambda v: call(name, [v]), budget, node)
            acc = parts[0]
            for p in parts[1:]:
                acc = binop(acc, p, lambda x, y: call(name, [x, y]), budget, node, op="call")
            return acc
        case Comparison(op=op, left=lhs, right=rhs):
            a = evaluate(lhs, limits, budget)
            b = evaluate(rhs, limits, budget)
            if a.p is not None and b.p is not None:
                # whole numbers: N9 compares the totals by their difference (a − b against 0),
                # so it is read once per difference of the difference's law, not on every pair
                diff = add(a, b, budget, node, sign=-1)
                return mapped(diff, lambda d: compare(op, d, 0), budget, node)
            return binop(a, b, lambda x, y: compare(op, x, y), budget, node)
        case Power(base=b, exponent=e, span=span):
            a = evaluate(b, limits, budget)
            x = evaluate(e, limits, budget)
            try:
                return binop(a, x, lambda u, v: arith("**", u, v), budget, node, op="**")
            except (ZeroDivisor, BadValue) as exc:
                raise NotationError(f"{exc} for some rolls, so the odds are undefined",
                                    budget.text, span) from None
        case Computed():
            return computed_pmf(node, limits, budget)
    raise TypeError(node)  # pragma: no cover


def computed_pmf(node: Computed, limits: Limits, budget: Budget) -> Pmf:
    """``(1d4)d6``, ``(d6)d(d4+4)``: a mixture over the rolled count and sides of the dice
    term's exact law for each (AnyDice's computed dice)."""
    from .lexicon import MAX_SIDES

    what = node
    counts = evaluate(node.count, limits, budget).items() if node.count is not None else \
        [(node.dice.count, 1.0)]
    sides = evaluate(node.sides, limits, budget).items() if node.sides is not None else \
        [(node.dice.sides, 1.0)]
    # a rolled count or number of sides out of range is named by its farthest value (a fixed
    # one was checked where it was read: Fudge dice have 0 sides)
    for rolled, law, name, lo, hi in (
            (node.count, counts, "count of dice", 0, limits.max_dice),
            (node.sides, sides, "number of sides", 1, MAX_SIDES)):
        if rolled is None:
            continue
        bad = [v for v, _ in law if type(v) is Fraction or v < lo or v > hi]
        if bad:
            v = next((b for b in bad if type(b) is Fraction), max(bad) if max(bad) > hi
                     else min(bad))
            raise NotationError(f"the {name} can come to {format_value(v)}: it must be a whole "
                                f"number from {lo} to {hi:,}", budget.text, node.span)
    budget.spend(sum(int(n) * int(s) for n, _ in counts for s, _ in sides), what, node.span)
    out: dict[Value, float] = {}
    lost = 0.0
    # the most dice and sides first: the part that costs most is counted, and refused, first
    for n, pn in sorted(counts, key=lambda c: c[0], reverse=True):
        for s, ps in sorted(sides, key=lambda c: c[0], reverse=True):
            part = dice_pmf(node.dice._replace(count=int(n), sides=int(s)), limits, budget)
            lost += pn * ps * part.lost
            for v, p in part.items():
                out[v] = out.get(v, 0.0) + pn * ps * p
    return Pmf.from_dict(out, lost)


def _product(op: str, a: Pmf, b: Pmf, budget: Budget, what: object) -> Pmf:
    if op == "*" and a.p is not None and b.p is not None and (len(a.p) == 1 or len(b.p) == 1):
        const, other = (a, b) if len(a.p) == 1 else (b, a)
        c = const.off
        assert other.p is not None
        lost = lost_of(a.lost, b.lost)
        if c == 0:
            return Pmf(0, [math.fsum(other.p)], lost=lost)
        if abs(c) == 1:
            scale = const.p[0]  # type: ignore[index]
            out = Pmf(other.off, [x * scale for x in other.p], lost=lost)
            return out if c == 1 else negate(out)
    return binop(a, b, lambda x, y: arith(op, x, y), budget, what, op=op)


# --------------------------------------------------------------------------------------------
# Odds


def _key(v: Value) -> int | float:
    return float(v) if isinstance(v, Fraction) else v


def _distribution(pmf: Pmf) -> Distribution:
    if pmf.p is not None:  # already whole numbers in order
        return Distribution(tuple(pmf.items()), pmf.lost)
    return Distribution.from_mapping({_key(v): p for v, p in pmf.items()}, pmf.lost)


def denominator(node: Node,
                values: Callable[[Node], Iterable[Value]] | None = None) -> int | None:
    """A common denominator of every probability of the node's law (each die term's outcomes
    are equally likely tuples of faces), or None where an explosion makes the law infinite.
    A term whose count or sides are rolled (``(1d4)d6``) takes the least common multiple over
    the ``values`` they can come to (None without ``values``)."""
    out = 1
    placeholders: set[int] = set()  # a computed term's own dice: counted by its values
    for n in _walk(node):
        if isinstance(n, Computed):
            if values is None:
                return None
            placeholders.add(id(n.dice))
            counts = [n.dice.count] if n.count is None else [int(v) for v in values(n.count)]
            sides = [n.dice.sides] if n.sides is None else [int(v) for v in values(n.sides)]
            dens = [denominator(n.dice._replace(count=c, sides=s)) for c in counts
                    for s in sides]
            if any(d is None for d in dens):
                return None
            out *= math.lcm(*(d for d in dens if d is not None))
            continue
        if not isinstance(n, Dice) or id(n) in placeholders:
            continue
        if n.explode in ("explode", "compound", "penetrate"):
            return None
        size = n.size
        one = size * size if n.reroll_once else size - count_matching(n, n.reroll)
        out *= (one * one if n.explode == "once" else one) ** n.count
        if n.explode == "add":
            out *= one
    return out


def _counting(node: Node) -> bool:
    while isinstance(node, Label):
        node = node.node
    return isinstance(node, (Dice, Group)) and node.success is not None


def odds(expr: Expression | Rolls, limits: Limits, text: str) -> Odds:
    """The exact odds of an expression.

    >>> from astragal import Limits
    >>> from .grammar import parse
    >>> o = odds(parse("2d6", 0, {}, Limits()), Limits(), "2d6")
    >>> round(o.distribution[7], 6)
    0.166667
    """
    if isinstance(expr, Rolls):
        if len(expr.parts) != 1:
            raise NotationError(f"this request holds {len(expr.parts)} rolls: ask the odds of "
                                "one roll at a time", text, (0, len(text)))
        expr = expr.parts[0]
    budget = Budget(limits, text)
    # remembered by the parsed body's identity (parsed trees are cached and immutable; hashing
    # a whole tree, field by field in Python, costs more than a small law's first computing);
    # laws are never changed in place, so reading a remembered one is the work
    body = expr.body
    pmf = by_identity(_BODIES, (id(body), limits.max_explosions), body,
                      lambda: evaluate(body, limits, budget), 256,
                      lambda known: budget.spend(len(known), Lazy(expr.notation)))
    # every possible value becomes a row of the answer: a d999999 is refused, not built
    budget.spend(ROW * len(pmf), Lazy(lambda: f"{expr.notation()} ({len(pmf):,} possible "
                                      "values)"), memory=ROW_BYTES * len(pmf))
    notes: list[str] = []
    is_check = isinstance(expr.body, Comparison)
    den = None if pmf.lost else denominator(
        expr.body, lambda n: [v for v, _ in evaluate(n, limits, budget).items()])
    dist = _distribution(pmf).with_denominator(den)
    if pmf.lost:
        notes.append(f"explosion tails cut where the probability left is below 1e-15 "
                     f"(left out: {pmf.lost:.1e})")
    extra: dict[str, Any] = {}
    if is_check:
        outcomes = Distribution.from_mapping({"success": dist[1], "failure": dist[0]},
                                             pmf.lost, order=("success", "failure"),
                                             denominator=den)
        value_name = "success"
    else:
        outcomes = Distribution.from_mapping({}, pmf.lost)
        value_name = "successes" if _counting(expr.body) else "total"
    if expr.repeat > 1:
        n = expr.repeat
        notes.append(f"{n}x: the odds of one roll; the {n} rolls are independent and each has "
                     "these odds")
        extra.update(_repeated(pmf, n, is_check, budget))
    return Odds(PREFIX, text, outcomes, dist, value_name, tuple(notes), extra)


def _repeated(pmf: Pmf, n: int, is_check: bool, budget: Budget) -> dict[str, Any]:
    """For ``Nx``: the best and worst of the N rolls and their sum (or the count of successes)."""
    items = pmf.items()
    if is_check:
        p1 = dict(items).get(1, 0.0)
        return {f"successes_of_{n}": {str(k): p for k, p in enumerate(binomial(n, p1))}}
    best: dict[str, float] = {}
    worst: dict[str, float] = {}
    below = 0.0
    for v, p in items:  # P(max = v) = F(v)^n - F(v-)^n; P(min = v) = S(v-)^n - S(v)^n
        upto = below + p
        key = format_value(v)
        best[key] = upto**n - below**n
        worst[key] = (1.0 - below) ** n - max(0.0, 1.0 - upto) ** n
        below = upto
    total = power(pmf, n, budget, f"the sum of {n} rolls")
    return {
        f"highest_of_{n}": {k: p for k, p in best.items() if p > 0},
        f"lowest_of_{n}": {k: p for k, p in worst.items() if p > 0},
        f"sum_of_{n}": _rows(total),
    }


def _rows(pmf: Pmf) -> dict[str, float]:
    """value (as text) → probability, for the JSON extras."""
    if pmf.p is not None:
        return {str(pmf.off + i): q for i, q in enumerate(pmf.p) if q > 0}
    return {format_value(v): p for v, p in pmf.items()}


def pmf_of(expr: Expression, limits: Limits | None = None) -> dict[Value, float]:
    """The exact distribution of one roll of an expression as a dict (for tests and tools)."""
    lim = limits or Limits()
    return evaluate(expr.body, lim, Budget(lim, str(expr))).as_dict()
