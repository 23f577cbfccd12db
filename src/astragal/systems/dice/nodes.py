"""The parsed expression: immutable nodes whose ``str()`` is canonical notation.

Canonical printing is independent of the house-rule switches: a re-roll prints as ``rr`` (until
it stops matching) or ``ro`` (once), a compare point prints its operator in full. So the printed
text parses back to an equal tree under any options.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from ..._memo import by_identity
from ..._records import Record, typed

__all__ = [
    "FUDGE",
    "PREFIX",
    "Call",
    "Compare",
    "Comparison",
    "Computed",
    "Dice",
    "Expression",
    "Group",
    "Keep",
    "Label",
    "Neg",
    "Node",
    "Num",
    "Power",
    "Product",
    "Rolls",
    "Sum",
    "Value",
    "faces_of",
    "format_value",
]

Value = int | Fraction
FUDGE = 0  # the ``sides`` of a Fudge die (faces −1, 0, +1)
PREFIX = "dice"

Span = tuple[int, int]


def format_value(v: Value) -> str:
    """A value as a player reads it: ``7``, ``3.5``, ``3.333333`` (six decimals at most)."""
    if isinstance(v, int) or v.denominator == 1:
        return str(int(v))
    text = f"{float(v):.6f}".rstrip("0")
    return text


class Lazy:
    """Words made only if they are printed: a check or a limit names the term it refuses, and
    a term's text costs microseconds that no step should pay when nothing is refused."""

    __slots__ = ("words",)

    def __init__(self, words: Callable[[], str]) -> None:
        self.words = words

    def __str__(self) -> str:
        return self.words()

    def __format__(self, spec: str) -> str:
        return format(self.words(), spec)


def _literal(v: Value) -> str:
    """A number literal exactly as written (decimal literals have finite expansions)."""
    if isinstance(v, int) or v.denominator == 1:
        return str(int(v))
    whole, rest = divmod(v.numerator, v.denominator)
    digits = []
    while rest:
        rest *= 10
        d, rest = divmod(rest, v.denominator)
        digits.append(str(d))
    return f"{whole}.{''.join(digits)}"


class Compare(Record):
    """A compare point such as ``>=8``: which faces or values it matches."""

    op: str  # "=", "!=", "<", "<=", ">", ">="
    value: int

    def __call__(self, v: Value) -> bool:
        match self.op:
            case "=":
                return v == self.value
            case "!=":
                return v != self.value
            case "<":
                return v < self.value
            case "<=":
                return v <= self.value
            case ">":
                return v > self.value
            case _:
                return v >= self.value

    def text(self, bare: bool = True) -> str:
        """``>=8``; an equality prints as the bare number where the modifier allows it (``r1``)."""
        if self.op == "=" and bare and self.value >= 0:
            return str(self.value)
        return f"{self.op}{self.value}"

    def words(self) -> str:
        """``8 or more``, ``exactly 1`` (in ``render.dice``'s words)."""
        from ...render.dice import compare_words

        return compare_words(self.op, self.value)


class Keep(Record):
    """Keep or drop: ``kh`` keep highest, ``kl`` keep lowest, ``dh`` drop highest, ``dl`` drop
    lowest; ``k`` / ``p`` keep / drop (Avrae's "pop") every die whose value matches ``cond``."""

    how: str
    n: int
    cond: Compare | None = None  # for "k" and "p"

    def __str__(self) -> str:
        if self.cond is not None:
            return f"{self.how}{self.cond.text(bare=False)}"
        return f"{self.how}{self.n}"

    @property
    def by_value(self) -> bool:
        """True for ``k>3``-style keeps: each die is kept or dropped on its own value."""
        return self.cond is not None


EXPLODE_TEXT = {"explode": "!", "compound": "!!", "penetrate": "!p", "once": "xo", "add": "ra"}


@typed(compared=-1)
class Dice(Record):
    """``NdS`` with its modifiers, applied in a fixed order (see docs/notation.md).

    re-roll → explode/compound/penetrate → keep/drop → count successes, failures, doubles → sort.
    """

    count: int  # type: ignore[assignment]
    sides: int  # FUDGE for dF
    reroll: tuple[Compare, ...] = ()
    reroll_once: bool = False
    explode: str | None = None  # "explode" | "compound" | "penetrate" | "once" | "add" (ra)
    explode_on: Compare | None = None
    keep: Keep | None = None
    success: Compare | None = None
    failure: Compare | None = None
    double: Compare | None = None
    sort: str | None = None  # "a" | "d"
    minimum: int | None = None  # mi / min: a die's value is at least this (Avrae, Foundry)
    maximum: int | None = None  # ma / max: at most this
    crit: Compare | None = None  # natural faces marked critical (default: a d20's 20)
    fumble: Compare | None = None  # natural faces marked fumbles (default: a d20's 1)
    match: int = 0  # Roll20 m / mt: sets of at least this many equal dice (0: none)
    match_count: bool = False  # mt: the value is the number of sets
    custom: tuple[int, ...] = ()  # d{1,2,2,3}: the faces of a custom die (sides = len)
    span: Span = (0, 0)  # where it was written (not compared)

    @property
    def size(self) -> int:
        """Faces on the die (3 for a Fudge die)."""
        return 3 if self.sides == FUDGE else self.sides

    def die_text(self) -> str:
        if self.custom:
            return "d{" + ",".join(map(str, self.custom)) + "}"
        return "dF" if self.sides == FUDGE else f"d{self.sides}"

    def __str__(self) -> str:
        out = [f"{self.count if self.count != 1 else ''}{self.die_text()}"]
        for c in self.reroll:
            out.append(("ro" if self.reroll_once else "rr") + c.text())
        if self.explode is not None:
            out.append(EXPLODE_TEXT[self.explode])
            top = 1 if self.sides == FUDGE else self.sides
            default = self.explode_on == Compare("=", top) and self.explode != "add"
            # a bare ``!`` followed by a success compare would read that compare as its own
            if self.explode_on is not None and not (default and (self.keep or not self.success)):
                out.append(self.explode_on.text())
        if self.minimum is not None:
            out.append(f"mi{self.minimum}")
        if self.maximum is not None:
            out.append(f"ma{self.maximum}")
        if self.keep is not None:
            out.append(str(self.keep))
        out.append(_counting(self.success, self.failure, self.double))
        if self.crit is not None:
            out.append("crit" + self.crit.text(bare=False))
        if self.fumble is not None:
            out.append("fumble" + self.fumble.text(bare=False))
        if self.match:
            out.append(("mt" if self.match_count else "m") + str(self.match))
        if self.sort:
            out.append("s" + self.sort)
        return "".join(out)


def _counting(success: Compare | None, failure: Compare | None, double: Compare | None) -> str:
    out = ""
    if success is not None:
        out += success.text(bare=False)
    if failure is not None:
        out += "f" + failure.text()
    if double is not None:
        out += "dbl" + double.text()
    return out


def faces_of(sides: int, custom: tuple[int, ...] = ()) -> tuple[int, ...]:
    """The faces of a die: 1..S, −1, 0, +1 for Fudge, or a custom die's faces as written."""
    if custom:
        return custom
    return (-1, 0, 1) if sides == FUDGE else tuple(range(1, sides + 1))


@typed(compared=-1)
class Num(Record):
    """A number (decimal literals are exact fractions)."""

    value: Value
    span: Span = (0, 0)

    def __str__(self) -> str:
        return _literal(self.value)


@typed(compared=-1)
class Group(Record):
    """``{a, b, ...}`` with keep/drop or success counting over the items' totals."""

    items: tuple[Node, ...]
    keep: Keep | None = None
    success: Compare | None = None
    failure: Compare | None = None
    double: Compare | None = None
    sort: str | None = None
    span: Span = (0, 0)

    def __str__(self) -> str:
        inner = ",".join(_text(item, 1) for item in self.items)
        out = "{" + inner + "}"
        if self.keep is not None:
            out += str(self.keep)
        out += _counting(self.success, self.failure, self.double)
        if self.sort:
            out += "s" + self.sort
        return out


@typed(compared=-1)
class Neg(Record):
    """Unary minus."""

    operand: Node
    span: Span = (0, 0)

    def __str__(self) -> str:
        return "-" + _text(self.operand, 5)


@typed(compared=-1)
class Sum(Record):
    """``a + b - c``: terms with their signs (the first is ``+``)."""

    terms: tuple[tuple[str, Node], ...]
    span: Span = (0, 0)

    def __str__(self) -> str:
        out = _text(self.terms[0][1], 3)
        for op, node in self.terms[1:]:
            out += op + _text(node, 3)
        return out


@typed(compared=-2)
class Product(Record):
    """``a * b / c % d``, left to right; ``/`` is exact division."""

    factors: tuple[tuple[str, Node], ...]
    spans: tuple[Span, ...] = ()  # each operator's span
    span: Span = (0, 0)

    def __str__(self) -> str:
        out = _text(self.factors[0][1], 4)
        for op, node in self.factors[1:]:
            out += op + _text(node, 4)
        return out


FUNCTIONS = {"floor": 1, "ceil": 1, "round": 1, "abs": 1, "min": -1, "max": -1, "pow": 2}


@typed(compared=-1)
class Call(Record):
    """``floor(x)``, ``ceil``, ``round`` (halves up), ``abs``, ``min(a, b, ...)``, ``max``."""

    name: str
    args: tuple[Node, ...]
    span: Span = (0, 0)

    def __str__(self) -> str:
        return f"{self.name}(" + ", ".join(_text(a, 1) for a in self.args) + ")"


@typed(compared=-1)
class Comparison(Record):
    """``a >= b`` between totals (written with spaces): 1 if true, 0 if false."""

    op: str
    left: Node
    right: Node
    span: Span = (0, 0)

    def __str__(self) -> str:
        return f"{_text(self.left, 2)} {self.op} {_text(self.right, 2)}"


@typed(compared=-1)
class Label(Record):
    """``2d6[fire]``: a name for the term before it; changes nothing else."""

    node: Node
    text: str
    span: Span = (0, 0)

    def __str__(self) -> str:
        inner = _text(self.node, 6)
        if isinstance(self.node, Label):  # (x [a]) [b]: one label per term, so keep the parentheses
            inner = f"({inner})"
        return f"{inner}[{self.text}]"


@typed(compared=-1)
class Power(Record):
    """``a ** b`` (AnyDice's ``^``): a whole-number exponent; right-associative, above ``*``."""

    base: Node
    exponent: Node
    span: Span = (0, 0)

    def __str__(self) -> str:
        return f"{_text(self.base, 6)}**{_text(self.exponent, 4)}"


@typed(compared=-1)
class Computed(Record):
    """``(1d4)d6``, ``(d6)d(d4+4)``: a dice term whose count and/or sides are rolled first.

    ``dice`` holds the modifiers (its count and sides are placeholders where computed).
    """

    count: Node | None  # type: ignore[assignment]
    sides: Node | None
    dice: Dice
    span: Span = (0, 0)

    def __str__(self) -> str:
        written = str(self.dice)
        die = self.dice.die_text()
        rest = written[written.index(die) + len(die):]
        count = (f"({self.count})" if self.count is not None else
                 (str(self.dice.count) if self.dice.count != 1 else ""))
        sides = f"d({self.sides})" if self.sides is not None else die
        return count + sides + rest


Node = Num | Dice | Group | Neg | Sum | Product | Call | Comparison | Label | Power | Computed


def precedence(node: Node) -> int:
    """1 comparison, 2 sum, 3 product, 4 unary minus, 5 power, 6 atom."""
    match node:
        case Comparison():
            return 1
        case Sum():
            return 2
        case Product():
            return 3
        case Neg():
            return 4
        case Power():
            return 5
        case _:
            return 6


def _text(node: Node, need: int) -> str:
    """A child printed inside a parent that needs precedence above ``need - 1``."""
    text = str(node)
    return f"({text})" if precedence(node) < need else text


class Expression(Record):
    """A whole request: ``[N x] expression [# comment]``; ``str()`` starts with ``dice:``."""

    body: Node
    repeat: int = 1
    comment: str = ""

    def notation(self) -> str:
        """The canonical notation without the system prefix."""
        out = f"{self.repeat}x " if self.repeat > 1 else ""
        out += _text(self.body, 1)
        if self.comment:
            out += f" # {self.comment}"
        return out

    def __str__(self) -> str:
        return f"{PREFIX}: {self.notation()}"


class Rolls(Record):
    """Several rolls in one request: Roll20's ``;`` between rolls, or ``[[ ]]`` inline rolls
    in a line of text (``texts`` then holds the text around them, one more than the rolls)."""

    parts: tuple[Expression, ...]
    texts: tuple[str, ...] = ()

    def notation(self) -> str:
        if not self.texts:
            return "; ".join(p.notation() for p in self.parts)
        out = self.texts[0]
        for part, after in zip(self.parts, self.texts[1:]):
            out += f"[[{part.notation()}]]{after}"
        return out

    def __str__(self) -> str:
        return f"{PREFIX}: {self.notation()}"


_TEXTS: dict[int, tuple[object, str]] = {}


def text_of(node: Node) -> str:
    """Canonical text of a node, remembered per node object (parsed trees are cached and
    immutable; keyed by identity because hashing a whole term costs more than printing it)."""
    return by_identity(_TEXTS, id(node), node, node.__str__, 4096)


def notation_of(expr: Expression) -> str:
    """``expr.notation()``, remembered per parsed expression."""
    return by_identity(_TEXTS, id(expr), expr, expr.notation, 4096)
