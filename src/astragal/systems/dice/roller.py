"""Rolling an expression with a ``Tray``: every face in rolling order, and the steps of each
dice term (``pool.py``), group and total, which ``render.dice`` puts into words."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ..._errors import LimitError, NotationError
from ..._limits import CEILINGS, Limits
from ..._memo import by_identity
from ..._rng import ScriptedSource, Source
from ...dice import Roll, Tray
from ...dice import steps as S
from ...render import dice as words
from .checks import check
from .fast import forget as _forget_plans
from .fast import plain_roll
from .lexicon import MAX_SIDES
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
    notation_of,
    precedence,
    text_of,
)
from .pool import forget as _forget_programs
from .pool import group_items, roll_term, side_step
from .rules import BadValue, ZeroDivisor, arith, call, compare, kept_flags, term_value

__all__ = ["general", "json_value", "plain_steps", "roll"]


_CHECKED: dict[int, tuple[object, Limits]] = {}  # parsed trees already within the dice limit


def forget() -> None:
    """Forget the plans of plain shapes and the terms' programs (tests that swap a rule call
    this)."""
    _forget_plans()
    _forget_programs()
    _COMPILED.clear()


def json_value(v: Value) -> int | float:
    """A value for JSON: whole numbers stay ints."""
    if type(v) is int:
        return v
    if isinstance(v, Fraction):
        return int(v) if v.denominator == 1 else float(v)
    return v


class _Roller:
    __slots__ = ("labels", "limits", "steps", "terms", "text", "tray")

    def __init__(self, tray: Tray, limits: Limits, text: str) -> None:
        self.tray = tray
        self.limits = limits
        self.text = text
        self.steps: list[S.Step] = []
        self.terms: list[dict[str, Any]] = []
        self.labels: list[dict[str, Any]] = []

    # --- terms -----------------------------------------------------------------------------

    def dice(self, d: Dice, label: str) -> Value:
        term = text_of(d)
        name = f"{term} [{label}]" if label else term
        self.steps.append(side_step(d, name, label))
        total = roll_term(self.tray, self.limits, self.text, d, name, self.steps)
        self.terms.append({"term": term, "label": label, "value": total})
        return total

    def rolled_number(self, node: Node, label: str, what: str, least: int,
                      span: tuple[int, int]) -> int:
        """The rolled count or sides of a computed die (``(1d4)d6``): a whole number."""
        v, _ = self.value(node, label)
        if type(v) is Fraction and v.denominator != 1 or v < least:
            raise NotationError(f"the {what} came to {format_value(v)}: it must be a whole "
                                f"number, {least} or more", self.text, span)
        if what == "number of sides" and v > MAX_SIDES:
            raise LimitError(f"the rolled number of sides {v} is more than {MAX_SIDES:,}",
                             self.text, span)
        return int(v)

    def group(self, g: Group, label: str, items: list[tuple[Worker, str | None]]) -> Value:
        """A group whose items are worked out by ``items``: each one's worker, and the rule
        of its ``Worked`` step (``None``: a dice term, whose own steps say what it is worth)."""
        name = text_of(g) + (f" [{label}]" if label else "")
        self.steps.append(side_step(g, name, label))
        values: list[Value] = []
        dice_of: list[range] = []  # the tray's dice each item rolled, to strike a dropped item's
        for i, (work, rule) in enumerate(items):
            first = len(self.tray)
            v, shown = work(self, label)
            dice_of.append(range(first, len(self.tray)))
            values.append(v)
            if rule is not None:
                self.steps.append(S.Worked(name, f"item {i + 1}", shown, json_value(v), rule))
        kept = kept_flags(values, g.keep)
        if g.keep is not None:
            for dice, k in zip(dice_of, kept):
                if not k:
                    for index in dice:
                        self.tray.drop(index, "dropped")
        total = term_value(g, values, kept)
        self.steps.append(group_items(g, name, values, kept, total, json_value))
        self.terms.append({"term": text_of(g), "label": label, "value": json_value(total)})
        return total

    # --- the expression --------------------------------------------------------------------

    def value(self, node: Node, label: str = "") -> tuple[Value, str]:
        """The node's value and how the arithmetic reads with the dice replaced by their totals."""
        return _compiled(node)(self, label)

    def worked(self, node: Node, label: str) -> tuple[Value, str]:
        """``value`` of the nodes that ``_compile`` leaves to it."""
        match node:
            case Label(node=inner, text=text):
                v, shown = self.value(inner, text)
                self.labels.append({"label": text, "term": text_of(inner),
                                    "value": json_value(v)})
                self.steps.append(S.Worked(text, "label", shown, json_value(v), _rule_of(inner)))
                return v, f"{_paren(shown, inner, 6)} [{text}]"
            case Neg(operand=o):
                v, shown = self.value(o, label)
                return -v, f"-{_paren(shown, o)}"
            case Product(factors=factors, spans=spans):
                total, shown = self.value(factors[0][1], label)
                shown = _paren(shown, factors[0][1], 4)
                for (op, f), span in zip(factors[1:], spans[1:]):
                    v, s = self.value(f, label)
                    try:
                        total = arith(op, total, v)
                    except ZeroDivisor as exc:
                        raise NotationError(f"{exc}: the divisor came to 0", self.text,
                                            span) from None
                    except BadValue as exc:
                        raise NotationError(f"{exc}", self.text, span) from None
                    shown += f" {op} {_paren(s, f, 4)}"
                return total, shown
            case Power(base=pb, exponent=pe, span=span):
                a, sa = self.value(pb, label)
                x, sx = self.value(pe, label)
                try:
                    v = arith("**", a, x)
                except (ZeroDivisor, BadValue) as exc:
                    raise NotationError(f"{exc}", self.text, span) from None
                return v, f"{_paren(sa, pb, 6)} ** {_paren(sx, pe, 4)}"
            case Computed(count=count, sides=sides, dice=d, span=span):
                n, sides_n = d.count, d.sides
                if count is not None:
                    n = self.rolled_number(count, label, "count of dice", 0, span)
                if sides is not None:
                    sides_n = self.rolled_number(sides, label, "number of sides", 1, span)
                concrete = d._replace(count=n, sides=sides_n, span=span)
                if n > self.limits.max_dice:
                    raise LimitError(f"the rolled count {n} is more than the limit of "
                                     f"{self.limits.max_dice} dice", self.text, span)
                rolled = (("count", n),) * (count is not None) + (("sides", sides_n),) * (
                    sides is not None)
                self.steps.append(S.Adjust(text_of(concrete) + (f" [{label}]" if label else ""),
                                           "rolled", "", rolled))
                v = self.dice(concrete, label)
                return v, format_value(v)
            case Call(name=name, args=args, span=span):
                vals, shows = zip(*(self.value(a, label) for a in args))
                try:
                    v = call(name, list(vals))
                except (ZeroDivisor, BadValue) as exc:
                    raise NotationError(f"{exc}", self.text, span) from None
                return v, f"{name}({', '.join(shows)})"
        raise TypeError(node)  # pragma: no cover


Worker = Callable[[_Roller, str], tuple[Value, str]]
_COMPILED: dict[int, tuple[Node, Worker]] = {}


def _compiled(node: Node) -> Worker:
    """``_compile(node)``, remembered per parsed node."""
    return by_identity(_COMPILED, id(node), node, lambda: _compile(node), 4096)


def _compile(node: Node) -> Worker:
    """A function of the roller and the label giving ``_Roller.value`` of ``node``: the
    common nodes' shapes (a sum's operators, where its parts need brackets) read once per
    parsed tree, not at every roll; the others are worked out by ``_Roller.worked``."""
    if isinstance(node, Num):
        out = (node.value, format_value(node.value))
        return lambda r, label: out
    if isinstance(node, Dice):
        def dice(r: _Roller, label: str) -> tuple[Value, str]:
            v = r.dice(node, label)
            return v, str(v)
        return dice
    if isinstance(node, Group):
        items = [(_compiled(item), None if isinstance(item, Dice) else _rule_of(item))
                 for item in node.items]

        def group(r: _Roller, label: str) -> tuple[Value, str]:
            v = r.group(node, label, items)
            return v, format_value(v)
        return group
    if isinstance(node, Sum):
        head, parts = node.terms[0][1], node.terms[1:]
        first, bracket = _compiled(head), precedence(head) < 2
        rest = [(op, _compiled(t), " " + op + (" (" if precedence(t) < 3 else " "),
                 ")" if precedence(t) < 3 else "") for op, t in parts]

        def add(r: _Roller, label: str) -> tuple[Value, str]:
            total, shown = first(r, label)
            if bracket:
                shown = f"({shown})"
            for op, part, before, after in rest:
                v, s = part(r, label)
                total = arith(op, total, v)
                shown += before + s + after
            return total, shown
        return add
    if isinstance(node, Comparison):
        op, lhs, rhs = node.op, _compiled(node.left), _compiled(node.right)
        left_b, right_b = precedence(node.left) < 2, precedence(node.right) < 2

        def holds(r: _Roller, label: str) -> tuple[Value, str]:
            a, sa = lhs(r, label)
            b, sb = rhs(r, label)
            return compare(op, a, b), (f"({sa})" if left_b else sa) + f" {op} " + (
                f"({sb})" if right_b else sb)
        return holds
    return lambda r, label: r.worked(node, label)


_RULES = {Sum: "N7", Product: "N7", Power: "N7", Neg: "N7", Call: "N8", Comparison: "N9"}


def _rule_of(node: Node) -> str:
    """The rule that works out a node's value from its parts (``""``: a term, a number)."""
    return _RULES.get(type(node), "")


def _paren(shown: str, node: Node, need: int = 4) -> str:
    return f"({shown})" if precedence(node) < need else shown


def _roll_once(r: _Roller, expr: Expression) -> tuple[Value, dict[str, Any], str]:
    r.terms = []
    r.labels = []
    value, shown = r.value(expr.body)
    body = expr.body
    if isinstance(body, Comparison):
        ok = bool(value)
        r.steps.append(S.Worked("", "comparison", shown, int(value), "N9"))
        result: dict[str, Any] = {"total": json_value(value), "success": ok}
        outcome = "success" if ok else "failure"
    else:
        r.steps.append(S.Worked("", "total", shown, json_value(value), _rule_of(body)))
        result = {"total": json_value(value)}
        outcome = "total"
    result["terms"] = r.terms
    if r.labels:
        result["labels"] = r.labels
    return value, result, outcome


def _roll_expression(r: _Roller, expr: Expression) -> tuple[dict[str, Any], str]:
    """One expression (with its repeats): the result and the outcome."""
    if expr.repeat == 1:
        _, result, outcome = _roll_once(r, expr)
        return result, outcome
    rolls: list[dict[str, Any]] = []
    values: list[Value] = []
    for i in range(expr.repeat):
        r.steps.append(S.Round(i + 1))
        r.tray.repeat = i + 1
        value, res, _ = _roll_once(r, expr)
        rolls.append(res)
        values.append(value)
    r.tray.repeat = 0
    if isinstance(expr.body, Comparison):
        hits = sum(1 for v in values if v)
        r.steps.append(S.Count("", "successes", hits, "N9"))
        return {"totals": [json_value(v) for v in values], "successes": hits,
                "rolls": rolls}, "repeated"
    total = json_value(sum(values, Fraction(0)))
    r.steps.append(S.Worked("", "sum", words.sum_text([json_value(v) for v in values]), total))
    return {"totals": [json_value(v) for v in values], "total": total,
            "rolls": rolls}, "repeated"


def _begin(expr: Expression, part: int = 0) -> S.Begin:
    """The ``Begin`` step of an expression, or of the ``part``-th roll of several."""
    times = (("times", expr.repeat),) if expr.repeat > 1 else ()
    if part:
        return S.Begin(expr.notation(), "part", (("part", part),) + times)
    return S.Begin(notation_of(expr), "repeated" if times else "", times)


_BEGINS: dict[int, tuple[object, S.Begin]] = {}


_REPLAY = Limits(max_dice=CEILINGS["max_dice"])  # a plain roll's dice passed their limit already


def plain_steps(expr: Expression, faces: list[int], text: str) -> tuple[S.Step, ...]:
    """The steps of a plain roll (``fast.py``) that showed ``faces``: those this roller records
    on the same faces."""
    r = _Roller(Tray(ScriptedSource([faces]), _REPLAY), _REPLAY, text)
    r.steps.append(by_identity(_BEGINS, id(expr), expr, lambda: _begin(expr), 4096))
    _roll_expression(r, expr)
    return tuple(r.steps)


def roll(expr: Expression | Rolls, source: Source, limits: Limits, text: str) -> Roll:
    """Roll the expression: a plain shape from its plan (``fast.py``), any other by
    ``general``."""
    plain = plain_roll(expr, source, limits, text)
    return general(expr, source, limits, text) if plain is None else plain


def general(expr: Expression | Rolls, source: Source, limits: Limits, text: str) -> Roll:
    """Roll the expression: every die through the Tray, its steps recorded and put into words
    (``render.dice``)."""
    seen = _CHECKED.get(id(expr))
    if seen is None or seen[0] is not expr or seen[1] != limits:
        check(expr, text, limits)
        if len(_CHECKED) > 4096:
            _CHECKED.clear()
        _CHECKED[id(expr)] = (expr, limits)
    tray = Tray(source, limits)
    r = _Roller(tray, limits, text)
    if isinstance(expr, Rolls):
        r.steps.append(S.Begin(expr.notation(), "rolls", (("parts", len(expr.parts)),) + (
            (("texts", expr.texts),) if expr.texts else ())))
        results: list[dict[str, Any]] = []
        for i, part in enumerate(expr.parts):
            r.steps.append(_begin(part, i + 1))
            res, _ = _roll_expression(r, part)
            results.append(res)
        result: dict[str, Any] = {"rolls": results,
                                  "totals": [res.get("total") for res in results]}
        outcome = "rolls"
    else:
        r.steps.append(by_identity(_BEGINS, id(expr), expr, lambda: _begin(expr), 4096))
        result, outcome = _roll_expression(r, expr)
    source.finish()
    steps = tuple(r.steps)
    return Roll(PREFIX, text, outcome, result, tray.freeze(), words.transcript(steps), expr, steps)
