"""Exact odds of any expression: nothing here samples.

Every dice term and group is rolled separately, so the distribution of an expression is built
from independent parts: sums by convolution, other operators over all pairs of outcomes.

A dice term without keep/drop is ``count`` independent *chains* (a die and what its explosions
add), so its distribution is one chain's distribution convolved ``count`` times. With keep/drop
the pool is split into classes of independent, identically distributed dice (an exploding pool
is ``count`` dice that did not explode plus a negative-binomial number that did; see
``_pool_classes``) and the kept sum comes from order statistics: a dynamic programme over values
from high to low that tracks how many dice of each class are placed so far (``keep_dp``), the
same idea as the Jadeclaw damage DP. Endless tails (explosions) are cut once the probability left
is below ``1e-15``; what was cut is reported as ``truncated``.

Work is estimated before each step; past ``Limits.max_odds_work`` the answer is a LimitError.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

from ..._errors import NotationError
from ..._limits import Limits
from ...odds import Distribution
from ...odds.maths import binomial
from .. import Odds
from .keep import binomial_all, keep_cost, keep_dp
from .lexicon import TAIL
from .nodes import (
    PREFIX,
    Call,
    Comparison,
    Computed,
    Dice,
    Expression,
    Group,
    Label,
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
    LIST_BYTES,
    ROW,
    ROW_BYTES,
    Budget,
    Pmf,
    add,
    binop,
    convolve,
    lost_of,
    mapped,
    merge,
    mix,
    negate,
    power,
    power_cost,
    series,
)
from .rules import (
    BadPower,
    ZeroDivisor,
    arith,
    call,
    clamp,
    compare,
    explodes,
    face_value,
    keep_count,
    keeps_value,
    roll_pmf,
    score,
)

__all__ = ["Budget", "Pmf", "evaluate", "keep_dp", "odds"]

# --------------------------------------------------------------------------------------------
# Dice terms


def _split(pmf: dict[int, float], d: Dice) -> tuple[dict[int, float], dict[int, float], float]:
    """(faces that explode, faces that do not, chance to explode) of one roll."""
    boom = {f: p for f, p in pmf.items() if explodes(d, f)}
    calm = {f: p for f, p in pmf.items() if not explodes(d, f)}
    return boom, calm, math.fsum(boom.values())


def _scored(pmf: dict[int, float], w: Callable[[int], int], shift: int = 0) -> Pmf:
    out: dict[Value, float] = {}
    for f, p in pmf.items():
        v = w(f + shift)
        out[v] = out.get(v, 0.0) + p
    return Pmf.from_dict(out)


def _depth(q: float, eps: float, cap: int) -> int:
    """How many explosions to follow so that what is left (q^(k+1)) is at most ``eps``."""
    if q <= 0:
        return 0
    k = max(0, math.ceil(math.log(eps) / math.log(q)) - 1) if q < 1 else cap
    return min(k, cap)


def chain_pmf(d: Dice, w: Callable[[int], int], limits: Limits, budget: Budget) -> Pmf:
    """What one die and its explosions add to the term (rules 1, 2 and 4), exactly."""
    what = str(d)
    if (d.explode is None and not d.reroll and d.success is None and d.keep is None
            and not d.custom and d.minimum is None and d.maximum is None):
        budget.spend(d.size, what, d.span, memory=8 * d.size)
        low = face_value(d, 1)
        if face_value(d, d.size) == low + d.size - 1:  # the faces run low, low+1, …: uniform
            return Pmf(low, [1.0 / d.size] * d.size)
    budget.spend(20 * d.size, what, d.span, memory=ROW_BYTES * d.size)
    g = roll_pmf(d)
    if d.explode is None:
        return _scored(g, w)
    boom, calm, q = _split(g, d)
    eps = TAIL / 100 / max(1, d.count)
    depth = _depth(q, eps, limits.max_explosions)
    if d.explode == "once":
        if not boom:
            return _scored(g, w)
        again = add(_scored(boom, w), _scored(g, w), budget, what)
        return merge(_scored(calm, w), again) if calm else again
    if d.explode == "compound":
        value = series(_scored(calm, lambda x: x), _scored(boom, lambda x: x), depth, budget,
                        what)
        return mapped(value, lambda v: w(int(v)), budget, what).with_lost(q ** (depth + 1))
    if d.explode == "explode":
        out = series(_scored(calm, w), _scored(boom, w), depth, budget, what)
        return out.with_lost(q ** (depth + 1))
    # penetrate: the first roll counts its face, every roll an explosion adds counts face − 1
    tail = series(_scored(calm, w, -1), _scored(boom, w, -1), depth, budget, what)
    start = add(_scored(boom, w), tail, budget, what)
    first = _scored(calm, w)
    return merge(first, start).with_lost(q * q ** (depth + 1))


def _after_clamp(d: Dice, w: Callable[[int], int]) -> Callable[[int], int]:
    return lambda v: w(int(clamp(d, v)))


def _clamped(d: Dice, pmf: dict[int, float]) -> dict[int, float]:
    """A class of dice with ``mi``/``ma`` applied to each value."""
    out: dict[int, float] = {}
    for v, p in pmf.items():
        c = int(clamp(d, v))
        out[c] = out.get(c, 0.0) + p
    return out


def _clamped_kept(d: Dice, w: Callable[[Any], int]) -> Callable[[Any], int]:
    assert d.keep is not None
    keep = d.keep
    return lambda v: w(clamp(d, v)) if keeps_value(keep, clamp(d, v)) else 0


def _reroll_add_pmf(d: Dice, budget: Budget) -> Pmf:
    """Avrae's ``ra``: if any die matches, one more die is rolled and added (once per term).
    The sum where no die matches is the power of the faces that do not match; the rest of the
    law of the sum gets one more die."""
    what = str(d)
    g = roll_pmf(d)
    lo = min(g)
    one = [0.0] * (max(g) - lo + 1)
    calm = [0.0] * len(one)
    for f, p in g.items():
        one[f - lo] = p
        if not explodes(d, f):
            calm[f - lo] = p
    every = power(Pmf(lo, one), d.count, budget, what)
    quiet = power(Pmf(lo, calm), d.count, budget, what)
    assert every.p is not None and quiet.p is not None
    some = list(every.p)
    at = quiet.off - every.off
    some[at:at + len(quiet.p)] = [max(0.0, x - y) for x, y in zip(some[at:], quiet.p)]
    added = Pmf(every.off + lo, convolve(some, one, budget, what))
    return merge(quiet, added)


def _matches_pmf(d: Dice, budget: Budget) -> Pmf:
    """Roll20's ``mt``: how many values show on at least ``match`` of the dice (plain dice,
    re-rolls allowed). Faces are placed one value at a time: given that the ``r`` dice not
    yet placed all show later values, the number showing this one is binomial."""
    g = roll_pmf(d)
    n, size = d.count, d.match
    budget.spend(len(g) * (n + 1) ** 2 * (n // size + 1), str(d), d.span)
    state = {(n, 0): 1.0}  # (dice left, sets found) → probability
    left = 1.0
    for v in sorted(g):
        p = g[v]
        x = min(1.0, p / left) if left > 0 else 1.0
        left -= p
        nxt: dict[tuple[int, int], float] = {}
        for (r, m), q in state.items():
            for c, pc in enumerate(binomial_all(r, x)):
                if pc > 0:
                    key = (r - c, m + (1 if c >= size else 0))
                    nxt[key] = nxt.get(key, 0.0) + q * pc
        state = nxt
    out: dict[Value, float] = {}
    for (_, m), q in state.items():
        out[m] = out.get(m, 0.0) + q
    return Pmf.from_dict(out)


def _kept_only(keep: Any, w: Callable[[Any], int]) -> Callable[[Any], int]:
    """Rules 3 and 4 for a by-value keep: what a die adds, 0 if it is dropped."""
    return lambda v: w(v) if keeps_value(keep, v) else 0


def _weight(term: Dice | Group) -> Callable[[Any], int] | None:
    """Rule 4 per kept die: the value itself, or its success score."""
    if term.success is None:
        return None
    return lambda v: score(term, v)


def dice_pmf(d: Dice, limits: Limits, budget: Budget) -> Pmf:
    """The exact distribution of a dice term."""
    return _dice_pmf_cached(d, limits, budget)


def _dice_pmf_cached(d: Dice, limits: Limits, budget: Budget) -> Pmf:
    key = (d, limits.max_explosions)
    hit = _CACHE.get(key)
    if hit is not None:
        budget.spend(len(hit), str(d))
        return hit
    out = _dice_pmf(d, limits, budget)
    if len(_CACHE) > 256:
        _CACHE.clear()
    _CACHE[key] = out
    return out


_CACHE: dict[tuple[Dice, int], Pmf] = {}
_BODIES: dict[tuple[Node, int], Pmf] = {}  # whole expressions' laws (a repeated request)


def forget() -> None:
    """Clear the remembered laws (benchmarks and tests that time or count the computing)."""
    _CACHE.clear()
    _BODIES.clear()


def _dice_pmf(d: Dice, limits: Limits, budget: Budget) -> Pmf:
    what = str(d)
    weight = _weight(d)
    w: Callable[[int], int] = weight if weight is not None else (lambda v: v)
    if d.count == 0:
        return Pmf.point(0)
    if d.match_count:
        return _matches_pmf(d, budget)
    if d.explode == "add":
        return _reroll_add_pmf(d, budget)
    if d.minimum is not None or d.maximum is not None:  # mi/ma: on each die's value first
        w = _after_clamp(d, w)
    by_value = d.keep is not None and d.keep.by_value
    if by_value:  # k>3, p<2: a die kept or dropped on its own value adds w(v) or nothing
        w = _kept_only(d.keep, w) if d.minimum is None and d.maximum is None else (
            _clamped_kept(d, weight if weight is not None else (lambda v: v)))
    if d.keep is None or by_value:  # power() refuses at once what it could not finish
        steps, memory = power_cost(d.size, d.count)  # at least this, explosions or not
        budget.check(steps + (20 * d.size if d.reroll or d.explode else 0),
                     f"{what} ({(d.size - 1) * d.count + 1:,} possible values or more)", d.span,
                     memory)
        return power(chain_pmf(d, w, limits, budget), d.count, budget, what)
    budget.spend(20 * d.count, what, d.span, memory=LIST_BYTES * d.count)  # the mixture's law
    if d.explode is not None and d.explode != "compound":  # refuse at once a huge mixture:
        # about 40 standard deviations of the number of explosions, each part a keep DP
        _, _, q = _split(roll_pmf(d), d)
        n_parts = min(d.count + 1, 40 * math.sqrt(d.count * q / max(1e-9, 1 - q) ** 2) + 1)
        one = keep_cost([(d.count, roll_pmf(d))], keep_count(d.keep, d.count)[1], w)
        budget.check(n_parts * one[0], what, d.span, one[1])
    mixture = _pool_classes(d, limits, budget)
    if d.minimum is not None or d.maximum is not None:
        mixture = [(wt, [(n, _clamped(d, pmf)) for n, pmf in classes])
                   for wt, classes in mixture]
        w = weight if weight is not None else (lambda v: v)
    plans = []
    steps = memory = 0
    for weight_, classes in mixture:  # the work of every part, before any is done
        total = sum(n for n, _ in classes)
        highest, k = keep_count(d.keep, total)
        cost = keep_cost(classes, k, w)
        steps, memory = steps + cost[0], max(memory, cost[1])
        budget.check(steps, what, d.span, memory)
        plans.append((weight_, classes, highest, k))
    parts: list[tuple[float, Pmf]] = []
    for weight_, classes, highest, k in plans:
        parts.append((weight_, keep_dp(classes, highest, k, w, budget, what, d.span)))
    return mix(parts).with_lost(max(0.0, 1.0 - math.fsum(wt for wt, _ in parts)))


def _norm(d: dict[int, float], shift: int = 0) -> dict[int, float]:
    t = math.fsum(d.values())
    return {f + shift: p / t for f, p in d.items()}


def _negbin_upto(r: int, q: float, eps: float) -> list[float]:
    """P(M = m), m = 0.. until the tail left is ≤ eps: explosions among r chains (rule 2).

    The shared negative binomial (odds/maths.py) walks out from the mode in logarithms, so a
    large pool (100d2!, 500d100!) neither overflows nor loses its tail to cancellation.
    """
    from ...odds.maths import negative_binomial

    return negative_binomial(r, q, eps)[0]


Classes = list[tuple[int, dict[int, float]]]


def _pool_classes(d: Dice, limits: Limits, budget: Budget) -> list[tuple[float, Classes]]:
    """The pool of a dice term as a mixture of pools of i.i.d. classes: [(weight, [(n, pmf)])].

    ``!``: every chain ends with one die that did not explode, and the number of dice that did
    is negative binomial; given those counts, exploded faces and calm faces are independent.
    ``!p`` splits first rolls from added rolls (worth one less); ``xo`` adds one die per
    exploded first roll; ``!!`` is one class of compounded values.
    """
    g = roll_pmf(d)
    n = d.count
    eps = TAIL / 100
    if d.explode is None:
        return [(1.0, [(n, g)])]
    boom, calm, q = _split(g, d)
    if d.explode == "compound":
        depth = _depth(q, eps / max(1, n), limits.max_explosions)
        value = series(_scored(calm, lambda x: x), _scored(boom, lambda x: x), depth,
                        budget, str(d))
        lost = q ** (depth + 1)
        pmf = {int(v): p / (1 - lost) for v, p in value.items()}
        return [((1 - lost) ** n, [(n, pmf)])]
    if not boom:
        return [(1.0, [(n, g)])]
    boom_n, calm_n = _norm(boom), _norm(calm) if calm else {}
    out: list[tuple[float, Classes]] = []
    if d.explode == "explode":
        for m, pm in enumerate(_negbin_upto(n, q, eps)):
            out.append((pm, [(n, calm_n), (m, boom_n)]))
        return out
    first = binomial(n, q)
    for a, pa in enumerate(first):
        if pa == 0:
            continue
        if d.explode == "once":
            out.append((pa, [(a, boom_n), (n - a, calm_n), (a, g)]))
            continue
        for m, pm in enumerate(_negbin_upto(a, q, eps)):
            out.append((pa * pm, [(a, boom_n), (n - a, calm_n), (a, _norm(calm, -1)),
                                  (m, _norm(boom, -1))]))
    return out


# --------------------------------------------------------------------------------------------
# Groups


def group_pmf(g: Group, items: Sequence[Pmf], budget: Budget) -> Pmf:
    """``{a, b, ...}``: the sum of the items, or keep/drop and success counting over them."""
    what = str(g)
    weight = _weight(g)
    lost = lost_of(*(p.lost for p in items))
    if g.keep is not None and g.keep.by_value:
        weight = _kept_only(g.keep, weight if weight is not None else (lambda v: v))
    if g.keep is None or g.keep.by_value:
        parts = items if weight is None else [mapped(p, weight, budget, what) for p in items]
        out = parts[0]
        for p in parts[1:]:
            out = add(out, p, budget, what)
        return out.with_lost(lost)
    # classes of identical items; fractional values are scaled to whole numbers for the DP
    dists = [p.normalised().as_dict() for p in items]
    scale = math.lcm(*(Fraction(v).denominator for d in dists for v in d))
    classes: list[tuple[int, dict[int, float]]] = []
    for dist in dists:
        scaled = {int(Fraction(v) * scale): p for v, p in dist.items()}
        for i, (n, other) in enumerate(classes):
            if other == scaled:
                classes[i] = (n + 1, other)
                break
        else:
            classes.append((1, scaled))
    highest, k = keep_count(g.keep, len(items))
    if weight is None:
        out = keep_dp(classes, highest, k, lambda v: v, budget, what, g.span)
        if scale != 1:
            out = mapped(out, lambda v: Fraction(v, scale) if v % scale else v // scale,
                         budget, what)
    else:
        out = keep_dp(classes, highest, k, lambda v: weight(Fraction(v, scale)), budget, what,
                      g.span)
    return out.with_lost(lost)


# --------------------------------------------------------------------------------------------
# The expression


def _as_value(v: Value) -> Value:
    if isinstance(v, Fraction) and v.denominator == 1:
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
                acc = add(acc, evaluate(t, limits, budget), budget, str(node),
                          1 if op == "+" else -1)
            return acc
        case Product(factors=factors, spans=spans):
            acc = evaluate(factors[0][1], limits, budget)
            for (op, f), span in zip(factors[1:], spans[1:]):
                right = evaluate(f, limits, budget)
                if op in ("/", "//", "%") and any(v == 0 for v, _ in right.items()):
                    raise NotationError("the divisor can come to 0, so the result is undefined "
                                        "for some rolls", budget.text, span)
                acc = _product(op, acc, right, budget, str(node))
            return acc
        case Call(name=name, args=args, span=span) if name == "pow":
            a, x = (evaluate(arg, limits, budget) for arg in args)
            try:
                return binop(a, x, lambda u, v: call("pow", [u, v]), budget, str(node))
            except (ZeroDivisor, BadPower) as exc:
                raise NotationError(f"{exc} for some rolls, so the odds are undefined",
                                    budget.text, span) from None
        case Call(name=name, args=args):
            parts = [evaluate(a, limits, budget) for a in args]
            if len(parts) == 1:
                return mapped(parts[0], lambda v: call(name, [v]), budget, str(node))
            acc = parts[0]
            for p in parts[1:]:
                acc = binop(acc, p, lambda x, y: call(name, [x, y]), budget, str(node))
            return acc
        case Comparison(op=op, left=lhs, right=rhs):
            a = evaluate(lhs, limits, budget)
            b = evaluate(rhs, limits, budget)
            if a.p is not None and b.p is not None:
                # whole numbers: N9 compares the totals by their difference (a − b against 0),
                # so it is read once per difference of the difference's law, not on every pair
                diff = add(a, b, budget, str(node), sign=-1)
                return mapped(diff, lambda d: compare(op, d, 0), budget, str(node))
            return binop(a, b, lambda x, y: compare(op, x, y), budget, str(node))
        case Power(base=b, exponent=e, span=span):
            a = evaluate(b, limits, budget)
            x = evaluate(e, limits, budget)
            try:
                return binop(a, x, lambda u, v: arith("**", u, v), budget, str(node))
            except (ZeroDivisor, BadPower) as exc:
                raise NotationError(f"{exc} for some rolls, so the odds are undefined",
                                    budget.text, span) from None
        case Computed():
            return computed_pmf(node, limits, budget)
    raise TypeError(node)  # pragma: no cover


def computed_pmf(node: Computed, limits: Limits, budget: Budget) -> Pmf:
    """``(1d4)d6``, ``(d6)d(d4+4)``: a mixture over the rolled count and sides of the dice
    term's exact law for each (AnyDice's computed dice)."""
    from .lexicon import MAX_SIDES

    what = str(node)
    counts = evaluate(node.count, limits, budget).items() if node.count is not None else \
        [(node.dice.count, 1.0)]
    sides = evaluate(node.sides, limits, budget).items() if node.sides is not None else \
        [(node.dice.sides, 1.0)]
    for v, _ in counts:
        if isinstance(v, Fraction) or v < 0 or v > limits.max_dice:
            raise NotationError(f"the count of dice can come to {format_value(v)}: it must be "
                                f"a whole number from 0 to {limits.max_dice}", budget.text,
                                node.span)
    for v, _ in sides:
        if isinstance(v, Fraction) or v < 1 or v > MAX_SIDES:
            raise NotationError(f"the number of sides can come to {format_value(v)}: it must "
                                f"be a whole number from 1 to {MAX_SIDES:,}", budget.text,
                                node.span)
    budget.spend(sum(int(n) * int(s) for n, _ in counts for s, _ in sides), what, node.span)
    out: dict[Value, float] = {}
    lost = 0.0
    for n, pn in counts:
        for s, ps in sides:
            part = dice_pmf(replace(node.dice, count=int(n), sides=int(s)), limits, budget)
            lost += pn * ps * part.lost
            for v, p in part.items():
                out[v] = out.get(v, 0.0) + pn * ps * p
    return Pmf.from_dict(out, lost)


def _product(op: str, a: Pmf, b: Pmf, budget: Budget, what: str) -> Pmf:
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
    return binop(a, b, lambda x, y: arith(op, x, y), budget, what)


# --------------------------------------------------------------------------------------------
# Odds


def _key(v: Value) -> int | float:
    return float(v) if isinstance(v, Fraction) else v


def _distribution(pmf: Pmf) -> Distribution:
    if pmf.p is not None:  # already whole numbers in order
        return Distribution(tuple(pmf.items()), pmf.lost)
    return Distribution.from_mapping({_key(v): p for v, p in pmf.items()}, pmf.lost)


def denominator(node: Node) -> int | None:
    """A common denominator of every probability of the node's law (each die term's outcomes
    are equally likely tuples of faces), or None where an explosion makes the law infinite."""
    from .checks import _walk
    from .rules import count_matching

    out = 1
    for n in _walk(node):
        if isinstance(n, Computed):
            return None  # a mixture: exact, but no simple common denominator is worked out
        if not isinstance(n, Dice):
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
    key = (expr.body, limits.max_explosions)
    pmf = _BODIES.get(key)
    if pmf is None:
        pmf = evaluate(expr.body, limits, budget)
        if len(_BODIES) > 256:
            _BODIES.clear()
        _BODIES[key] = pmf
    else:  # remembered (laws are never changed in place): reading it is the work
        budget.spend(len(pmf), expr.notation())
    # every possible value becomes a row of the answer: a d999999 is refused, not built
    budget.spend(ROW * len(pmf), f"{expr.notation()} ({len(pmf):,} possible values)",
                 memory=ROW_BYTES * len(pmf))
    notes: list[str] = []
    is_check = isinstance(expr.body, Comparison)
    den = None if pmf.lost else denominator(expr.body)
    dist = replace(_distribution(pmf), denominator=den)
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
