"""Checks once the general notation's tree is read: conditions that match no face, endless
re-rolls and explosions, and more dice than a roll may have."""

from __future__ import annotations

from collections.abc import Mapping

from ..._errors import LimitError, NotationError
from ..._limits import Limits
from .lexicon import (
    _COUNT_ON,
    TAIL,
)
from .nodes import (
    Call,
    Compare,
    Comparison,
    Computed,
    Dice,
    Expression,
    Group,
    Label,
    Lazy,
    Neg,
    Node,
    Power,
    Product,
    Rolls,
    Sum,
)
from .rules import count_matching, die_range


def _walk(node: Node) -> list[Node]:
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        match n:
            case Group(items=items):
                stack.extend(items)
            case Neg(operand=o):
                stack.append(o)
            case Sum(terms=t) | Product(factors=t):
                stack.extend(x for _, x in t)
            case Call(args=a):
                stack.extend(a)
            case Comparison(left=lhs, right=rhs):
                stack.extend((lhs, rhs))
            case Label(node=inner):
                stack.append(inner)
            case Power(base=b, exponent=e):
                stack.extend((b, e))
            case Computed(count=c, sides=sd, dice=d):
                stack.extend(x for x in (c, sd) if x is not None)
                if c is None:
                    stack.append(d)
    return out


def _check_dice(d: Dice, text: str, limits: Limits,
                spans: Mapping[str, tuple[int, int]]) -> None:
    lo, hi = die_range(d)
    n = d.size
    name = Lazy(d.die_text)  # its text is made only for an error

    def never(c: Compare, what: str) -> None:
        if count_matching(d, [c]) == 0:
            hint = (" (to compare the total, put spaces around the comparison: 1d20+1d4 >= 15)"
                    if what == "success" else "")
            raise NotationError(f"no face of a {name} is {c.words()}: nothing {_COUNT_ON[what]}"
                                + hint, text, spans.get(what, d.span))

    for c in d.reroll:
        never(c, "reroll")
    rerolled = count_matching(d, d.reroll)
    if d.reroll and not d.reroll_once and rerolled == n:
        raise NotationError(f"every face of a {name} is re-rolled: the roll would never end",
                            text, spans.get("reroll", d.span))
    if d.reroll and not d.reroll_once and _too_long(rerolled / n, d.count, limits):
        raise LimitError(f"{name} re-rolls {rerolled} of {n} faces: a die could need more "
                         f"than {limits.max_explosions} re-rolls (the limit)",
                         text, spans.get("reroll", d.span))
    if d.explode is not None and d.explode_on is not None:
        never(d.explode_on, "explode")
        boom = count_matching(d, [d.explode_on])
        boom_rerolled = count_matching(d, d.reroll, within=d.explode_on)
        if d.reroll_once:  # a matching face is rolled once more and stands
            q = (boom - boom_rerolled) / n + boom * rerolled / (n * n)
        else:
            q = (boom - boom_rerolled) / (n - rerolled)
        if d.explode not in ("once", "add") and q >= 1:
            raise NotationError(f"every face of a {name} explodes: the roll would never end",
                                text, spans.get("explode", d.span))
        if d.explode not in ("once", "add") and _too_long(q, d.count, limits):
            raise LimitError(f"{name} explodes too often: a die could need more than "
                             f"{limits.max_explosions} explosions (the limit)", text,
                             spans.get("explode", d.span))
    if d.minimum is not None and d.maximum is not None and d.minimum > d.maximum:
        raise NotationError(f"the minimum {d.minimum} is above the maximum {d.maximum}", text,
                            spans.get("maximum", d.span))
    for what in ("minimum", "maximum"):
        bound = getattr(d, what)
        if bound is not None and d.explode is None and (
                bound <= lo if what == "minimum" else bound >= hi):
            raise NotationError(f"a {what} of {bound} changes no face of a {name} (faces "
                                f"{lo} to {hi}): nothing to do", text, spans.get(what, d.span))
    if d.explode == "add" and (d.keep is not None or d.success is not None or d.match
                               or d.minimum is not None or d.maximum is not None):
        raise NotationError("ra (re-roll and add, as in Avrae) works here on dice without "
                            "keep/drop, min/max, matches or success counting", text,
                            spans.get("explode", d.span))
    if d.match and (d.keep is not None or d.explode is not None or d.success is not None
                    or d.minimum is not None or d.maximum is not None) and d.match_count:
        raise NotationError("mt (count matches) works on plain dice (re-rolls allowed), not with "
                            "keep/drop, explosions, min/max or success counting", text,
                            spans.get("match", d.span))
    if d.keep is not None and d.keep.by_value and d.explode not in ("compound", "penetrate"):
        assert d.keep.cond is not None
        hit = count_matching(d, [d.keep.cond])
        if d.keep.how == "k" and hit == 0:
            raise NotationError(f"'{d.keep}' keeps no die: no face of a {name} is "
                                f"{d.keep.cond.words()}", text, spans.get("keep", d.span))
        if d.keep.how == "p" and hit == n:
            raise NotationError(f"'{d.keep}' drops every die: every face of a {name} is "
                                f"{d.keep.cond.words()}", text, spans.get("keep", d.span))
    for what in ("success", "failure", "double", "crit", "fumble"):
        c = getattr(d, what)
        # compounded and penetrated dice have values other than faces: those are not checked
        if c is not None and (d.explode not in ("compound", "penetrate") or
                              what in ("crit", "fumble")) and d.minimum is None \
                and d.maximum is None:
            never(c, what)


def _too_long(q: float, dice: int, limits: Limits) -> bool:
    """True if some die of ``dice`` could pass the per-die limit with probability over TAIL."""
    return q > 0 and dice * q ** (limits.max_explosions + 1) > TAIL


def check(expr: Expression | Rolls, text: str, limits: Limits) -> None:
    """Refuse a roll of more dice than ``Limits.max_dice`` (all terms and repeats together).
    Exact odds are bounded by their work and memory instead: ``1000d6`` has odds in
    milliseconds, though rolling it is refused."""
    parts = expr.parts if isinstance(expr, Rolls) else (expr,)
    total = sum(node.count * part.repeat for part in parts for node in _walk(part.body)
                if isinstance(node, Dice))
    if total > limits.max_dice:
        raise LimitError(f"{total} dice in all is more than the limit of "
                         f"{limits.max_dice} dice per roll", text, (0, len(text)))
