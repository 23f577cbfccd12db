"""Rolling an expression with a ``Tray``: every face in rolling order and a line per dice term."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ..._errors import LimitError, NotationError
from ..._limits import Limits
from ..._records import remembered
from ..._rng import Source
from ...dice import Roll, Tray
from ...dice.algebra import Chain, sample_chain
from .checks import check
from .fast import plan
from .lexicon import MAX_SIDES
from .nodes import (
    FUDGE,
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
    precedence,
    said_twice,
    sum_text,
)
from .program import die_chain
from .rules import (
    BadPower,
    ZeroDivisor,
    arith,
    call,
    clamp,
    compare,
    critical,
    explodes,
    face_value,
    kept_flags,
    matches,
    term_value,
)

__all__ = ["json_value", "roll"]


_TEXTS: dict[int, tuple[object, str]] = {}


def _text_of(node: Node) -> str:
    """Canonical text of a node, remembered per node object (parsed trees are cached and
    immutable; keyed by identity because hashing a whole term costs more than printing it)."""
    return remembered(_TEXTS, node, node.__str__)


def _notation(expr: Expression) -> str:
    return remembered(_TEXTS, expr, expr.notation)


_CHECKED: dict[int, tuple[object, Limits]] = {}  # parsed trees already within the dice limit
_PLANS: dict[int, tuple[object, Any]] = {}


def forget() -> None:
    """Forget the plans of plain shapes (tests that swap a rule call this)."""
    _PLANS.clear()
    _PROGRAMS.clear()


def json_value(v: Value) -> int | float:
    """A value for JSON: whole numbers stay ints."""
    if isinstance(v, Fraction):
        return int(v) if v.denominator == 1 else float(v)
    return v


class _Rolled:
    """One die of a pool as it stands: its tray index, how it is shown and its value."""

    __slots__ = ("index", "shown", "value")

    def __init__(self, index: int, shown: str, value: int) -> None:
        self.index, self.shown, self.value = index, shown, value


class _Roller:
    __slots__ = ("indent", "labels", "limits", "lines", "terms", "text", "tray")

    def __init__(self, tray: Tray, limits: Limits, text: str) -> None:
        self.tray = tray
        self.limits = limits
        self.text = text
        self.lines: list[str] = []
        self.terms: list[dict[str, Any]] = []
        self.labels: list[dict[str, Any]] = []
        self.indent = "  "

    # --- one die ---------------------------------------------------------------------------

    def chain(self, d: Dice, program: Chain, hands: _TermHands, out: list[_Rolled],
              note: str = "") -> None:
        """Rules 1 and 2: one die, its re-rolls and everything its explosions add, rolled by the
        dice algebra's program for it (``program.die_chain``), die by die."""
        hands.rolls = []
        first = hands.new(program.size, note)
        try:
            faces, total = sample_chain(program, hands, first, self.limits)
        except LimitError as exc:
            what = "exploded" if "exploded" in exc.message else "was re-rolled"
            raise LimitError(f"a {d.die_text()} {what} more than "
                             f"{self.limits.max_explosions} times (the limit)", self.text,
                             d.span) from None
        rolls = hands.rolls
        plain = not d.custom and d.sides != FUDGE  # the tray's face is the die's
        if plain:
            shown = ["→".join(map(str, seen)) for _, seen in rolls]
        else:
            shown = ["→".join([str(face_value(d, f)) for f in seen]) for _, seen in rolls]
        if len(rolls) == 1:  # no explosion: the face that stands
            out.append(_Rolled(first, shown[0], total))
            return
        if d.explode == "compound":
            out.append(_Rolled(first, "+".join([s + "!" for s in shown[:-1]] + shown[-1:]) +
                               f"={total}", total))
            return
        last = len(rolls) - 1
        penetrates = d.explode == "penetrate"
        for i, ((index, _), text, raw) in enumerate(zip(rolls, shown, faces)):
            face = raw if plain else face_value(d, raw)
            value = program.score(i, raw) if penetrates else face  # what the roll adds
            if i < last:
                text += "!"  # it went on
            if value != face:
                text += "-1"  # !p: every die an explosion adds is worth one less
            out.append(_Rolled(index, text, value))

    # --- terms -----------------------------------------------------------------------------

    def dice(self, d: Dice, label: str) -> Value:
        group = _text_of(d) + (f" [{label}]" if label else "")
        tray = self.tray
        if d.explode is None and not d.reroll and d.sides != FUDGE and not d.custom:
            indices = [tray.roll(d.sides, group) for _ in range(d.count)]  # plain: one face each
            values: list[int] = [tray.face(i) for i in indices]
            shown = [str(v) for v in values]
        else:
            pool: list[_Rolled] = []
            program = _program_of(d)
            hands = _TermHands(tray, d, group, d.explode in _EACH_ROLL_A_DIE)
            for _ in range(d.count):
                self.chain(d, program, hands, pool)
            if d.explode == "add" and any(explodes(d, x.value) for x in pool):
                # ra: the first die that matches is rolled again, and the new die is added
                first = next(x for x in pool if explodes(d, x.value))
                first.shown += " (ra)"
                self.chain(d, program, hands, pool, "re-roll and add")
            indices = [x.index for x in pool]
            values = [x.value for x in pool]
            shown = [x.shown for x in pool]
        shown = self.marks(d, indices, shown)
        if d.minimum is not None or d.maximum is not None:
            clamped = [clamp(d, v) for v in values]
            shown = [s if c == v else f"{s} (as {c})" for s, v, c in zip(shown, values, clamped)]
            values = [int(c) for c in clamped]
        kept = kept_flags(values, d.keep)
        if d.keep is not None:
            for i, k in zip(indices, kept):
                if not k:
                    tray.drop(i, "dropped")
        total = term_value(d, values, kept)
        sets = matches(values, d.match) if d.match else []
        if d.match_count:
            total = len(sets)
        if d.sort:  # sorting changes only the order the dice are shown in
            order = sorted(range(len(values)), key=values.__getitem__, reverse=d.sort == "d")
            values = [values[i] for i in order]
            kept = [kept[i] for i in order]
            shown = [shown[i] for i in order]
        faces = ", ".join(shown) or "no dice"
        verdict = self.verdict(d, values, kept, total)
        if said_twice(verdict, faces, values):
            verdict = ""
        if d.match:
            found = "; ".join(f"{len(g)} × {v}" for v, g in sets) or "none"
            verdict += f" (matches of {d.match} or more: {found})"
            if d.match_count:
                verdict = f" → {len(sets)} match{'es' if len(sets) != 1 else ''}: {found}"
        self.lines.append(f"{self.indent}{group}: {faces}{verdict}")
        self.terms.append({"term": _text_of(d), "label": label, "value": json_value(total)})
        return total

    def rolled_number(self, node: Node, label: str, what: str, least: int,
                      span: tuple[int, int]) -> int:
        """The rolled count or sides of a computed die (``(1d4)d6``): a whole number."""
        v, _ = self.value(node, label)
        if isinstance(v, Fraction) and v.denominator != 1 or v < least:
            raise NotationError(f"the {what} came to {format_value(v)}: it must be a whole "
                                f"number, {least} or more", self.text, span)
        if what == "number of sides" and v > MAX_SIDES:
            raise LimitError(f"the rolled number of sides {v} is more than {MAX_SIDES:,}",
                             self.text, span)
        return int(v)

    def marks(self, d: Dice, indices: Sequence[int], shown: list[str]) -> list[str]:
        """Crits and fumbles: marked on each die's natural face, in the tray and the line."""
        out = []
        for i, text in zip(indices, shown):
            raw = self.tray.face(i)
            crit, fumble = critical(d, face_value(d, raw))
            if crit or fumble:
                self.tray.mark(i, crit, fumble)
                text += " (critical)" if crit else " (fumble)"
            out.append(text)
        return out

    def verdict(self, term: Dice | Group, values: Sequence[Value], kept: Sequence[bool],
                total: Value) -> str:
        chosen = [v for v, k in zip(values, kept) if k]
        out = f" → {term.keep.words()}" if term.keep is not None else ""
        if term.success is None:
            if len(chosen) > 1:
                return out + f": {sum_text(chosen)} = {format_value(total)}"
            return out + f" → {format_value(total)}"
        hits = [format_value(v) for v in chosen if term.success(v)]
        out += f" → {len(hits)} success{'es' if len(hits) != 1 else ''}"
        if hits:
            out += f" ({', '.join(hits)})"
        if term.double is not None:
            doubles = [format_value(v) for v in chosen if term.success(v) and term.double(v)]
            if doubles:
                out += f", {len(doubles)} counting twice ({', '.join(doubles)})"
        if term.failure is not None:
            misses = [format_value(v) for v in chosen if term.failure(v)]
            out += f", {len(misses)} failure{'s' if len(misses) != 1 else ''}"
            if misses:
                out += f" ({', '.join(misses)})"
        return out + f" = {format_value(total)}"

    def group(self, g: Group, label: str) -> Value:
        name = _text_of(g) + (f" [{label}]" if label else "")
        self.lines.append(f"{self.indent}{name}:")
        outer = self.indent
        self.indent += "  "
        values: list[Value] = []
        dice_of: list[range] = []  # the tray's dice each item rolled, to strike a dropped item's
        for i, item in enumerate(g.items):
            first = len(self.tray)
            v, shown = self.value(item, label)
            dice_of.append(range(first, len(self.tray)))
            values.append(v)
            if isinstance(item, Dice):  # its own line has just said what it is worth
                continue
            self.lines.append(f"{self.indent}item {i + 1}: {shown} = {format_value(v)}"
                              if shown != format_value(v) else
                              f"{self.indent}item {i + 1}: {format_value(v)}")
        self.indent = outer
        kept = kept_flags(values, g.keep)
        if g.keep is not None:
            for dice, k in zip(dice_of, kept):
                if not k:
                    for index in dice:
                        self.tray.drop(index, "dropped")
        total = term_value(g, values, kept)
        items = ", ".join(format_value(v) for v in values)
        self.lines.append(f"{self.indent}{name}: {items}{self.verdict(g, values, kept, total)}")
        self.terms.append({"term": _text_of(g), "label": label, "value": json_value(total)})
        return total

    # --- the expression --------------------------------------------------------------------

    def value(self, node: Node, label: str = "") -> tuple[Value, str]:
        """The node's value and how the arithmetic reads with the dice replaced by their totals."""
        match node:
            case Num(value=v):
                return v, format_value(v)
            case Dice():
                v = self.dice(node, label)
                return v, format_value(v)
            case Group():
                v = self.group(node, label)
                return v, format_value(v)
            case Label(node=inner, text=text):
                v, shown = self.value(inner, text)
                self.labels.append({"label": text, "term": _text_of(inner),
                                    "value": json_value(v)})
                return v, f"{_paren(shown, inner, 6)} [{text}]"
            case Neg(operand=o):
                v, shown = self.value(o, label)
                return -v, f"-{_paren(shown, o)}"
            case Sum(terms=terms):
                total, shown = self.value(terms[0][1], label)
                shown = _paren(shown, terms[0][1], 2)
                for op, t in terms[1:]:
                    v, s = self.value(t, label)
                    total = arith(op, total, v)
                    shown += f" {op} {_paren(s, t, 3)}"
                return total, shown
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
                    shown += f" {op} {_paren(s, f, 4)}"
                return total, shown
            case Power(base=pb, exponent=pe, span=span):
                a, sa = self.value(pb, label)
                x, sx = self.value(pe, label)
                try:
                    v = arith("**", a, x)
                except (ZeroDivisor, BadPower) as exc:
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
                v = self.dice(concrete, label)
                return v, format_value(v)
            case Call(name=name, args=args, span=span):
                vals, shows = zip(*(self.value(a, label) for a in args))
                try:
                    v = call(name, list(vals))
                except (ZeroDivisor, BadPower) as exc:
                    raise NotationError(f"{exc}", self.text, span) from None
                return v, f"{name}({', '.join(shows)})"
            case Comparison(op=op, left=lhs, right=rhs):
                a, sa = self.value(lhs, label)
                b, sb = self.value(rhs, label)
                return compare(op, a, b), f"{_paren(sa, lhs, 2)} {op} {_paren(sb, rhs, 2)}"
        raise TypeError(node)  # pragma: no cover


_EACH_ROLL_A_DIE = ("explode", "penetrate", "once")  # explosions add dice; ``!!`` adds to one
_PROGRAMS: dict[int, tuple[Dice, Chain]] = {}


def _program_of(d: Dice) -> Chain:
    """``die_chain(d)``, remembered per parsed term (parsed trees are cached and immutable)."""
    return remembered(_PROGRAMS, d, lambda: die_chain(d))


class _TermHands:
    """The dice algebra's hands for one die of a term: each roll (the first, each explosion)
    is a die of the tray (``!!``: the same die rolled again), a re-roll in place rolls that die
    again with the note ``re-rolled <face>``; ``rolls`` keeps each roll's die and every face it
    showed, in order."""

    __slots__ = ("d", "each", "group", "rolls", "tray")

    def __init__(self, tray: Tray, d: Dice, group: str, each_roll_a_die: bool) -> None:
        self.tray, self.d, self.group, self.each = tray, d, group, each_roll_a_die
        self.rolls: list[tuple[int, list[int]]] = []

    def new(self, size: int, note: str = "") -> int:
        die = self.tray.roll(size, self.group, 0, note)
        self.rolls.append((die, [self.tray.face(die)]))
        return die

    def again(self, die: int, note: str) -> int:
        if self.each:
            return self.tray.face(self.new(self.tray.size(die), note))
        face = self.tray.reroll(die, 0, note)
        self.rolls.append((die, [face]))
        return face

    def redo(self, die: int, note: str) -> int:
        index, seen = self.rolls[-1]
        face = self.tray.reroll(index, 0, f"re-rolled {face_value(self.d, seen[-1])}")
        seen.append(face)
        return face

    def face(self, die: int) -> int:
        return self.tray.face(die)


def _paren(shown: str, node: Node, need: int = 4) -> str:
    return f"({shown})" if precedence(node) < need else shown


def _roll_once(r: _Roller, expr: Expression) -> tuple[Value, dict[str, Any], str]:
    r.terms = []
    r.labels = []
    value, shown = r.value(expr.body)
    body = expr.body
    if isinstance(body, Comparison):
        ok = bool(value)
        line = f"{shown}: {'success' if ok else 'failure'}"
        result: dict[str, Any] = {"total": json_value(value), "success": ok}
        outcome = "success" if ok else "failure"
    else:
        plain = isinstance(body, (Dice, Group))
        line = f"Total: {format_value(value)}" if plain or shown == format_value(value) else \
            f"{shown} = {format_value(value)}"
        result = {"total": json_value(value)}
        outcome = "total"
    result["terms"] = r.terms
    if r.labels:
        result["labels"] = r.labels
    r.lines.append(f"{r.indent}{line}")
    return value, result, outcome


def _roll_expression(r: _Roller, expr: Expression) -> tuple[dict[str, Any], str]:
    """One expression (with its repeats): the result and the outcome."""
    if expr.repeat == 1:
        _, result, outcome = _roll_once(r, expr)
        return result, outcome
    rolls: list[dict[str, Any]] = []
    values: list[Value] = []
    outer = r.indent
    for i in range(expr.repeat):
        r.lines.append(f"{outer[2:]}Roll {i + 1}:" if outer != "  " else f"Roll {i + 1}:")
        r.indent = outer
        r.tray.repeat = i + 1
        value, res, _ = _roll_once(r, expr)
        rolls.append(res)
        values.append(value)
    r.tray.repeat = 0
    shown = ", ".join(format_value(v) for v in values)
    if isinstance(expr.body, Comparison):
        hits = sum(1 for v in values if v)
        r.lines.append(f"{outer[2:]}{hits} of {expr.repeat} succeed")
        return {"totals": [json_value(v) for v in values], "successes": hits,
                "rolls": rolls}, "repeated"
    r.lines.append(f"{outer[2:]}Totals: {shown}")
    return {"totals": [json_value(v) for v in values],
            "total": json_value(sum(values, Fraction(0))), "rolls": rolls}, "repeated"


def _headline(result: dict[str, Any]) -> str:
    if "successes" in result and "total" not in result:
        return f"{result['successes']} of {len(result['totals'])} succeed"
    if "success" in result:
        return "success" if result["success"] else "failure"
    return format_value(Fraction(result["total"]).limit_denominator(10**6)) \
        if isinstance(result["total"], float) else str(result["total"])


def roll(expr: Expression | Rolls, source: Source, limits: Limits, text: str) -> Roll:
    """Roll the expression: every die through the Tray, a transcript line per dice term."""
    known = _PLANS.get(id(expr))
    if known is None or known[0] is not expr:  # plain shapes roll from a plan (fast.py)
        if len(_PLANS) > 4096:
            _PLANS.clear()
        known = _PLANS[id(expr)] = (expr, plan(expr, _text_of, _notation))
    if known[1] is not None:
        return known[1](source, limits, text)
    seen = _CHECKED.get(id(expr))
    if seen is None or seen[0] is not expr or seen[1] != limits:
        check(expr, text, limits)
        if len(_CHECKED) > 4096:
            _CHECKED.clear()
        _CHECKED[id(expr)] = (expr, limits)
    tray = Tray(source, limits)
    r = _Roller(tray, limits, text)
    if isinstance(expr, Rolls):
        r.lines.append(expr.notation())
        results: list[dict[str, Any]] = []
        for i, part in enumerate(expr.parts):
            r.lines.append(f"Roll {i + 1}: {part.notation()}")
            r.indent = "    " if part.repeat > 1 else "  "
            res, _ = _roll_expression(r, part)
            results.append(res)
        if expr.texts:
            line = expr.texts[0]
            for res, after in zip(results, expr.texts[1:]):
                line += f"[[{_headline(res)}]]{after}"
            r.lines.append(line)
        result: dict[str, Any] = {"rolls": results,
                                  "totals": [res.get("total") for res in results]}
        source.finish()
        return Roll(PREFIX, text, "rolls", result, tray.freeze(), tuple(r.lines), expr)
    r.lines.append(_notation(expr))
    result, outcome = _roll_expression(r, expr)
    source.finish()
    return Roll(PREFIX, text, outcome, result, tray.freeze(), tuple(r.lines), expr)
