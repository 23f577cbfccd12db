"""Reading the notation: a scanner-less recursive-descent parser that keeps spans.

Grammar (lowest precedence first; ``docs/notation.md`` has every operator with an example)::

    request    := [INT "x"] compare ["#" comment]
    compare    := sum [(">=" | ">" | "<=" | "<" | "=" | "==") sum]
    sum        := product (("+" | "-") product)*
    product    := unary (("*" | "/" | "%") unary)*
    unary      := ("-" | "+") unary | postfix
    postfix    := atom ["[" label "]"]
    atom       := NUMBER | dice | group | "(" compare ")" | FUNC "(" compare ("," compare)* ")"
    dice       := [INT] "d" (INT | "%" | "F") modifier*        (no spaces inside)
    group      := "{" compare ("," compare)* "}" modifier*
    modifier   := "r" / "rr" / "ro" [cmp] | "!" / "!!" / "!p" / "x" / "xo" [cmp]
                | ("kh" | "kl" | "k" | "dh" | "dl" | "d") [INT]
                | cmp-op INT | "f" [cmp] | "dbl" [cmp] | "s" | "sa" | "sd"

A compare point glued to dice or a group (``10d10>=8``) counts successes; written with a space
(``2d20kh1+5 >= 15``) it compares totals.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..._errors import LimitError, NotationError, OptionError
from ..._limits import Limits
from ...switches import Switch
from .nodes import (
    FUDGE,
    FUNCTIONS,
    Call,
    Compare,
    Comparison,
    Computed,
    Dice,
    Expression,
    Group,
    Keep,
    Label,
    Neg,
    Node,
    Num,
    Power,
    Product,
    Rolls,
    Sum,
)
from .rules import face_range
from .rules import keep_count as _keep_count

__all__ = ["CHOICES", "DEFAULTS", "MAX_DEPTH", "MAX_SIDES", "SWITCHES", "TAIL", "parse"]

MAX_DEPTH = 40  # parentheses, unary signs, groups and calls nested inside each other
MAX_SIDES = 1_000_000
MAX_COUNT = 999_999  # dice in one term: rolling is bounded by Limits.max_dice, odds by their work
MAX_DIGITS = 15
MAX_CUSTOM = 1000  # faces on a custom die
TAIL = 1e-15  # the probability below which an endless tail may be cut (explosions, re-rolls)

DIALECTS: dict[str, dict[str, str]] = {
    # The few forms that mean different things where players come from (docs/notation.md,
    # "Dialects"); everything else is read the same under every dialect.
    #   reroll: bare ``r``; greater_than: ``>``/``<`` in a compare point;
    #   cs: ``cs``/``cf``; k_number: ``k3``; glued_compare: ``3d6>10`` (count the dice, or
    #   compare the total as Avrae and d20, which have no success counting)
    "astragal": {"reroll": "recursive", "greater_than": "strict", "cs": "refuse",
                 "k_number": "highest", "glued_compare": "count"},
    "roll20": {"reroll": "recursive", "greater_than": "or_equal", "cs": "critical",
               "k_number": "highest", "glued_compare": "count"},
    "foundry": {"reroll": "once", "greater_than": "strict", "cs": "count",
                "k_number": "highest", "glued_compare": "count"},
    "avrae": {"reroll": "recursive", "greater_than": "strict", "cs": "refuse",
              "k_number": "value", "glued_compare": "total"},
}
SWITCHES = (
    Switch("dialect", "astragal", "dialects",
           "where the player comes from: the forms tools read differently are read that way",
           tuple(DIALECTS)),
    Switch("reroll", "dialect", "N1", "a bare r re-rolls as the dialect reads it, until it stops "
           "matching, or once", ("dialect", "recursive", "once")),
    Switch("greater_than", "dialect", "N9",
           "> in a compare point: as the dialect reads it, strictly greater, or greater or equal",
           ("dialect", "strict", "or_equal")),
)
DEFAULTS: dict[str, Any] = {s.name: s.default for s in SWITCHES}
CHOICES: dict[str, tuple[str, ...]] = {s.name: s.choices for s in SWITCHES}


def reading(options: Mapping[str, Any]) -> dict[str, str]:
    """How this request reads the dialect-dependent forms: the dialect, then the overrides."""
    out = dict(DIALECTS[options.get("dialect", "astragal")])
    for key in ("reroll", "greater_than"):
        value = options.get(key, "dialect")
        if value != "dialect":
            out[key] = value
    return out


# Characters a keyboard or a word processor puts where ASCII was meant (same length, so spans
# stay right): the minus sign, en and em dashes, the multiplication sign.
_NORMALISE = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2014": "-", "\u00d7": "*"})

_NUMBER = re.compile(r"\d+(?:\.\d+)?", re.ASCII)
_DICE = re.compile(r"(\d*)[dD](\d+|%|[fF])", re.ASCII)
_COMPUTED_SIDES = re.compile(r"(\d*)[dD](?:\d|%|[fF]|\(|\{)", re.ASCII)
_WORD = re.compile(r"[A-Za-z_]+", re.ASCII)
_CMP = re.compile(r">=|<=|==|=|>|<", re.ASCII)
_TOTAL_CMP = re.compile(r"!=|<>|>=|<=|==|=|>|<", re.ASCII)
_REPEAT = re.compile(r"\s*(\d+)\s*[xX](?=[\s(]|\d*[dD])", re.ASCII)
_ENDS_DICE = re.compile(r"(?:\d*[dD](?:\d+|%|[fF])\S*|\}\S*)$", re.ASCII)
_ENDS_NUMBER = re.compile(r"(?<![\w.)\]}])\d+$", re.ASCII)
_COMMAND = re.compile(r"\s*(?:/(?:roll|r|gmroll|gr)|!(?:roll|r))(?=\s|$)", re.ASCII | re.IGNORECASE)
_ADVANTAGE = re.compile(r"(adv|dis|advantage|disadvantage)\b", re.ASCII | re.IGNORECASE)
_DESCRIPTION = re.compile(r"[A-Za-z][A-Za-z'-]*", re.ASCII)
_COMPARE_WORDS = {"vs", "versus", "dc", "ac", "tn", "target", "against"}
_DIE_WORD = re.compile(r"[dD](?:\d+|%|[fF])", re.ASCII)
_DIGITS = re.compile(r"\d+", re.ASCII)
_SIGNED = re.compile(r"-?\d+", re.ASCII)
_ALNUM = re.compile(r"\w+", re.ASCII)
_LOOSE_WORD = re.compile(r"[A-Za-z!]+\d*", re.ASCII)
_MODIFIER_WORD = re.compile(r"(kh|kl|dh|dl|k|d|r|ro|rr|f|dbl|s|sa|sd|x|xo|!|!!|!p)\d*", re.ASCII)
_COUNT_ON = {"success": "counts a success", "failure": "counts a failure",
             "crit": "is marked critical", "fumble": "is marked a fumble",
             "double": "counts twice", "explode": "explodes", "reroll": "is re-rolled"}


class _Parser:
    def __init__(self, text: str, start: int, options: Mapping[str, Any], limits: Limits) -> None:
        self.source = text
        self.options = options
        self.text = text.translate(_NORMALISE)
        self.pos = start
        self.end = len(text)
        self.depth = 0
        self.limits = limits
        self.dialect = options.get("dialect", "astragal")
        self.reading = reading(options)
        self.reroll_once = self.reading["reroll"] == "once"
        self.or_equal = self.reading["greater_than"] == "or_equal"

    # --- helpers ---------------------------------------------------------------------------

    def error(self, message: str, start: int, end: int | None = None) -> NotationError:
        return NotationError(message, self.source, (start, end if end is not None else start + 1))

    def ws(self) -> None:
        while self.pos < self.end and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos:self.pos + n]

    def enter(self, at: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise LimitError(f"the expression nests more than {MAX_DEPTH} levels deep "
                             "(parentheses, signs, groups, functions)", self.text, (at, at + 1))

    def leave(self) -> None:
        self.depth -= 1

    def describe_here(self) -> str:
        if self.pos >= self.end:
            return "the end"
        m = _WORD.match(self.text, self.pos)
        return f"'{m.group()}'" if m else f"'{self.text[self.pos]}'"

    # --- the request -----------------------------------------------------------------------

    def request(self) -> Expression | Rolls:
        """A whole request: an optional chat command (``/r``, ``/roll``, ``!r``), then one
        roll, several separated by ``;``, or ``[[ ]]`` inline rolls in a line of text."""
        m = _COMMAND.match(self.text, self.pos)
        if m is not None:
            self.pos = m.end()
        if "[[" in self.text[self.pos:]:
            return self.inline()
        first = self.one()
        if self.pos >= self.end:
            return first
        parts = [first]
        while self.pos < self.end and self.text[self.pos] == ";":
            self.pos += 1
            if not self.text[self.pos:].strip():
                break  # a trailing ';' ends the last roll
            parts.append(self.one())
        if len(parts) > self.limits.max_rolls:
            raise LimitError(f"{len(parts)} rolls is more than the limit of "
                             f"{self.limits.max_rolls}", self.text, (0, len(self.text)))
        return parts[0] if len(parts) == 1 else Rolls(tuple(parts))

    def inline(self) -> Rolls:
        """Roll20's inline rolls: every ``[[ roll ]]`` in a line of text is rolled."""
        texts: list[str] = []
        parts: list[Expression] = []
        at = self.pos
        while True:
            open_ = self.text.find("[[", at)
            if open_ < 0:
                texts.append(self.text[at:])
                break
            close = self.text.find("]]", open_ + 2)
            if close < 0:
                raise self.error("an inline roll is not closed: write [[1d20+5]]", open_,
                                 open_ + 2)
            texts.append(self.text[at:open_])
            inner = _Parser(self.source[:close], open_ + 2, self.options, self.limits)
            part = inner.one()
            if inner.pos < close:
                raise inner.unexpected()
            parts.append(part)
            at = close + 2
        if len(parts) > self.limits.max_rolls:
            raise LimitError(f"{len(parts)} inline rolls is more than the limit of "
                             f"{self.limits.max_rolls}", self.text, (0, len(self.text)))
        self.pos = self.end
        return Rolls(tuple(parts), tuple(re.sub(r"\s+", " ", t) for t in texts))

    def one(self) -> Expression:
        """``[N x] expression [adv | dis] [description | # comment]``, up to a ``;``."""
        repeat = 1
        m = _REPEAT.match(self.text, self.pos)
        if m:
            repeat = self.int_literal(m.group(1), m.start(1))
            if repeat < 1:
                raise self.error("repeat at least once: 1x or more", m.start(1), m.end(1))
            if repeat > self.limits.max_rolls:
                raise LimitError(f"{repeat} repeated rolls is more than the limit of "
                                 f"{self.limits.max_rolls}", self.text, (m.start(1), m.end(1)))
            self.pos = m.end()
        self.ws()
        if self.pos >= self.end or self.text[self.pos] == "#":
            raise self.error("nothing to roll: expected dice such as 4d6kh3 or 2d6+3",
                             min(self.pos, self.end))
        body = self.compare()
        self.ws()
        m = _ADVANTAGE.match(self.text, self.pos)
        if m is not None:
            body = _advantage(body, m.group(1).lower().startswith("a"), self, m)
            self.pos = m.end()
            self.ws()
        comment = ""
        stop = self.text.find(";", self.pos)
        stop = self.end if stop < 0 else stop
        if self.pos < self.end and self.text[self.pos] == "#":
            comment = " ".join(self.text[self.pos + 1:].split())
            self.pos = self.end
        elif self.pos < stop and self.description_here():
            comment = " ".join(self.text[self.pos:stop].split())
            self.pos = stop
        if self.pos < self.end and self.text[self.pos] != ";":
            raise self.unexpected()
        return Expression(body, repeat, comment)

    def description_here(self) -> bool:
        """A trailing description (Avrae's ``1d20+5 Longsword attack``): words after the roll,
        unless the first word looks like notation, which would then be silently ignored."""
        if self.pos == 0 or not self.text[self.pos - 1].isspace():
            return False
        m = _DESCRIPTION.match(self.text, self.pos)
        if m is None:
            return False
        word = m.group().lower()
        if word in _COMPARE_WORDS:
            raise self.error(f"'{m.group()}' would be read as a description and ignored: to "
                             "compare the total, write it with a comparison, as in "
                             "d20+5 >= 15", self.pos, m.end())
        return not (_MODIFIER_WORD.fullmatch(word) or word in FUNCTIONS or
                    _DIE_WORD.fullmatch(word) or word in ("adv", "dis"))

    def unexpected(self) -> NotationError:
        start = self.pos
        m = _LOOSE_WORD.match(self.text, start)
        end = m.end() if m else start + 1
        before = self.text[:start]
        spaced = before.rstrip() != before
        word = m.group() if m else ""
        if spaced and _DIE_WORD.fullmatch(word) and _ENDS_NUMBER.search(before.rstrip()):
            count = _ENDS_NUMBER.search(before.rstrip())
            assert count is not None
            return self.error(f"no space between the count and the die: write "
                              f"{count.group()}{word}", count.start(), end)
        if (m and spaced and _MODIFIER_WORD.fullmatch(word.lower())
                and _ENDS_DICE.search(before.rstrip())):
            return self.error("modifiers go right after their dice, without spaces "
                              "(4d6kh3, 10d10>=8)", start, end)
        return self.error(f"unexpected {self.describe_here()}: expected +, -, *, /, %, a "
                          "comparison such as >= 15, or the end", start, end)

    # --- precedence levels -----------------------------------------------------------------

    def compare(self) -> Node:
        start = self.pos
        left = self.sum()
        self.ws()
        m = _TOTAL_CMP.match(self.text, self.pos)
        if not m:
            return left
        op = {"==": "=", "<>": "!="}.get(m.group(), m.group())
        self.pos = m.end()
        right = self.sum()
        self.ws()
        if (m2 := _TOTAL_CMP.match(self.text, self.pos)) is not None:
            raise self.error("compare once: a < b < c is not allowed; use parentheses",
                             m2.start(), m2.end())
        return Comparison(op, left, right, (start, self.pos))

    def sum(self) -> Node:
        start = self.pos
        terms: list[tuple[str, Node]] = [("+", self.product())]
        while True:
            self.ws()
            c = self.peek()
            if c not in ("+", "-"):
                break
            self.pos += 1
            terms.append((c, self.product()))
        if len(terms) == 1:
            return terms[0][1]
        return Sum(tuple(terms), (start, self.pos))

    def product(self) -> Node:
        start = self.pos
        factors: list[tuple[str, Node]] = [("*", self.unary())]
        spans: list[tuple[int, int]] = [(start, start)]
        while True:
            self.ws()
            c = self.peek()
            if c not in ("*", "/", "%"):
                break
            op = "//" if self.peek(2) == "//" else c  # //: floor division (Python, d20)
            spans.append((self.pos, self.pos + len(op)))
            self.pos += len(op)
            factors.append((op, self.unary()))
        if len(factors) == 1:
            return factors[0][1]
        return Product(tuple(factors), tuple(spans), (start, self.pos))

    def unary(self) -> Node:
        self.ws()
        c = self.peek()
        if c in ("-", "+"):
            at = self.pos
            self.pos += 1
            self.enter(at)
            operand = self.unary()
            self.leave()
            return Neg(operand, (at, self.pos)) if c == "-" else operand
        return self.power()

    def power(self) -> Node:
        """``a ** b`` or ``a ^ b`` (AnyDice), right-associative: ``2**3**2`` is 2**9."""
        start = self.pos
        base = self.postfix()
        save = self.pos
        self.ws()
        op = "**" if self.peek(2) == "**" else "^" if self.peek() == "^" else ""
        if not op:
            self.pos = save
            return base
        self.enter(self.pos)
        self.pos += len(op)
        exponent = self.unary()
        self.leave()
        return Power(base, exponent, (start, self.pos))

    def postfix(self) -> Node:
        start = self.pos
        node = self.atom()
        save = self.pos
        self.ws()
        if self.peek() == "[":
            node = Label(node, self.label(), (start, self.pos))
            save = self.pos
            self.ws()
            if self.peek() == "[":
                raise self.error("one label per term", self.pos)
        self.pos = save
        return node

    def label(self) -> str:
        start = self.pos
        close = self.text.find("]", start + 1)
        if close < 0:
            raise self.error("the label is not closed: write [label]", start, self.end)
        inner = " ".join(self.text[start + 1:close].split())
        if any(ch in inner for ch in "[{}#"):
            raise self.error("a label cannot contain [, {, } or #", start, close + 1)
        if not inner:
            raise self.error("an empty label: write a name inside [ ]", start, close + 1)
        self.pos = close + 1
        return inner

    # --- atoms -----------------------------------------------------------------------------

    def atom(self) -> Node:
        self.ws()
        start = self.pos
        if start >= self.end:
            raise self.error("the expression ends too early: expected a number, dice or '('",
                             start)
        c = self.text[start]
        if c == "(":
            self.enter(start)
            self.pos += 1
            inner = self.compare()
            self.ws()
            if self.peek() == ",":  # d20's sets: (1d20, 1d20)kh1 is the group {1d20, 1d20}kh1
                return self.group(start, [inner], ")")
            if self.peek() != ")":
                raise self.error(f"expected ')' to close the '(' at {start + 1}, found "
                                 f"{self.describe_here()}", self.pos)
            self.pos += 1
            self.leave()
            after = _COMPUTED_SIDES.match(self.text, self.pos)
            if after is not None and not after.group(1):  # (1d4)d6: a rolled count
                return self.computed(inner, start)
            return inner
        if c == "{":
            return self.group()
        if (m := _COMPUTED_SIDES.match(self.text, start)) is not None and \
                self.text[m.end() - 1] in "({":
            count = Num(self.int_literal(m.group(1), start), (start, m.end(1))) \
                if m.group(1) else None
            return self.computed(count, start, at=m.start() + len(m.group(1)))
        if (m := _DICE.match(self.text, start)) is not None:
            return self.dice(m)
        if "0" <= c <= "9":
            m2 = _NUMBER.match(self.text, start)
            assert m2 is not None
            self.pos = m2.end()
            if self.pos < self.end and self.text[self.pos] in "dD":
                if "." in m2.group():
                    raise self.error("a count of dice is a whole number", start, self.pos)
                raise self.error("how many sides? write d6, d20, d% or dF", start, self.pos + 1)
            if len(m2.group()) > MAX_DIGITS + 1:
                raise LimitError(f"the number has more than {MAX_DIGITS} digits", self.text,
                                 (start, self.pos))
            if "." in m2.group():
                return Num(Fraction(m2.group()), (start, self.pos))
            return Num(int(m2.group()), (start, self.pos))
        if (m3 := _WORD.match(self.text, start)) is not None:
            return self.call(m3)
        raise self.error(f"expected a number, dice such as 2d6, '(' or '{{', found "
                         f"{self.describe_here()}", start)

    def call(self, m: re.Match[str]) -> Node:
        name = m.group().lower()
        start = m.start()
        if name not in FUNCTIONS:
            if name in ("d",):
                raise self.error("how many sides? write d6, d20, d% or dF", start, m.end())
            raise self.error(f"unknown word '{m.group()}': functions are "
                             f"{', '.join(FUNCTIONS)}; dice are written like 2d6", start, m.end())
        self.pos = m.end()
        self.ws()
        if self.peek() != "(":
            raise self.error(f"{name} needs its arguments in parentheses: {name}(...)",
                             start, m.end())
        self.enter(start)
        self.pos += 1
        args = [self.compare()]
        self.ws()
        while self.peek() == ",":
            self.pos += 1
            args.append(self.compare())
            self.ws()
        if self.peek() != ")":
            raise self.error(f"expected ',' or ')' in {name}(...), found {self.describe_here()}",
                             self.pos)
        self.pos += 1
        self.leave()
        arity = FUNCTIONS[name]
        if arity > 0 and len(args) != arity:
            raise self.error(f"{name} takes {'one argument' if arity == 1 else f'{arity} arguments'}"
                             f", not {len(args)}", start, self.pos)
        if arity < 0 and len(args) < 2:
            raise self.error(f"{name} takes two or more arguments", start, self.pos)
        return Call(name, tuple(args), (start, self.pos))

    def group(self, start: int | None = None, items: list[Node] | None = None,
              close: str = "}") -> Node:
        if start is None or items is None:
            start = self.pos
            self.enter(start)
            self.pos += 1
            self.ws()
            if self.peek() == "}":
                raise self.error("an empty group: write {2d6, 1d8}", start, self.pos + 1)
            items = [self.compare()]
            self.ws()
        while self.peek() == ",":
            self.pos += 1
            self.ws()
            if close == ")" and self.peek() == ")":
                break  # d20's (1d20,): a trailing comma
            items.append(self.compare())
            self.ws()
        if self.peek() != close:
            raise self.error(f"expected ',' or '{close}' in the group, found "
                             f"{self.describe_here()}", self.pos)
        self.pos += 1
        self.leave()
        mods = self.modifiers(group=True, rng=None)
        for kind in ("crit", "fumble", "match"):
            if kind in mods:
                a, b = mods["_spans"][kind]
                raise self.error(f"'{self.source[a:b]}' applies to dice, not to a group", a, b)
        self.check_keep(mods.get("keep"), len(items), "items", mods["_spans"], "", start)
        return Group(tuple(items), mods.get("keep"), mods.get("success"), mods.get("failure"),
                     mods.get("double"), mods.get("sort"), (start, self.pos))

    def computed(self, count: Node | None, start: int, at: int | None = None) -> Node:
        """After a count: ``d6``, ``d(…)`` or ``d{…}``; the count itself may be rolled
        (``(1d4)d6``) and so may the sides (``(d6)d(d4+4)``), AnyDice's computed dice."""
        self.pos = self.pos if at is None else at
        self.pos += 1  # the d
        c = self.peek()
        sides_node: Node | None = None
        custom: tuple[int, ...] = ()
        sides = 1
        if c == "(":
            open_at = self.pos
            self.enter(open_at)
            self.pos += 1
            sides_node = self.compare()
            self.ws()
            if self.peek() != ")":
                raise self.error(f"expected ')' to close the '(' at {open_at + 1}, found "
                                 f"{self.describe_here()}", self.pos)
            self.pos += 1
            self.leave()
        elif c == "{":
            custom = self.custom_faces()
            sides = len(custom)
        else:
            m = re.compile(r"\d+|%|[fF]", re.ASCII).match(self.text, self.pos)
            if m is None:
                raise self.error("how many sides? write d6, d20, d% or dF", self.pos - 1,
                                 self.pos)
            sides = 100 if m.group() in ("%", "00") else (
                FUDGE if m.group().lower() == "f" else self.int_literal(m.group(), m.start()))
            if sides < 1 and m.group().lower() != "f":
                raise self.error("a die needs at least one side", m.start(), m.end())
            self.pos = m.end()
        n = count.value if isinstance(count, Num) and isinstance(count.value, int) else 1
        if isinstance(count, Num):
            if n > MAX_COUNT:
                raise LimitError(f"{n} dice is more than {MAX_COUNT:,}, the most one term may "
                                 "hold", self.text, (start, self.pos))
            count = None
        if sides_node is not None:
            if self.pos < self.end and (self.text[self.pos].isalpha() or
                                        self.text[self.pos] in "!<>="):
                raise self.error("modifiers on dice with a rolled number of sides are not "
                                 "supported: roll the sides into a plain die first", self.pos,
                                 self.pos + 1)
            return Computed(count, sides_node, Dice(n, 1), (start, self.pos))
        dice = self.finish_dice(n, sides, custom, start, check_keep=count is None)
        if count is None:
            return dice
        return Computed(count, None, dice, (start, self.pos))

    def custom_faces(self) -> tuple[int, ...]:
        """``{1,2,2,3}``: the faces of a custom die, whole numbers, repeats allowed."""
        open_at = self.pos
        close = self.text.find("}", open_at)
        if close < 0:
            raise self.error("a custom die is not closed: write d{1,2,3}", open_at, self.end)
        items = self.text[open_at + 1:close].split(",")
        faces = []
        for item in items:
            word = item.strip()
            if not re.fullmatch(r"-?\d{1,15}", word, re.ASCII):
                raise self.error("a custom die's faces are whole numbers: d{1,2,2,3}, "
                                 "d{-1,0,1}", open_at, close + 1)
            faces.append(int(word))
        if len(faces) > MAX_CUSTOM:
            raise LimitError(f"a custom die has more than {MAX_CUSTOM} faces", self.text,
                             (open_at, close + 1))
        self.pos = close + 1
        return tuple(faces)

    def int_literal(self, digits: str, at: int) -> int:
        if len(digits.lstrip("-")) > MAX_DIGITS:
            raise LimitError(f"the number has more than {MAX_DIGITS} digits", self.text,
                             (at, at + len(digits)))
        return int(digits)

    def dice(self, m: re.Match[str]) -> Node:
        start = m.start()
        count = 1
        if m.group(1):
            count = self.int_literal(m.group(1), start)
        if count > MAX_COUNT:
            raise LimitError(f"{count} dice is more than {MAX_COUNT:,}, the most one term may "
                             "hold", self.text, (start, m.end()))
        sides_text = m.group(2)
        if sides_text in ("%", "00"):  # d00: the percentile die's own marking
            sides = 100
        elif sides_text.lower() == "f":
            sides = FUDGE
        else:
            sides = self.int_literal(sides_text, m.start(2))
            if sides < 1:
                raise self.error("a die needs at least one side", m.start(2), m.end(2))
            if sides > MAX_SIDES:
                raise LimitError(f"a d{sides} has more than {MAX_SIDES:,} sides", self.text,
                                 (m.start(2), m.end(2)))
        self.pos = m.end()
        return self.finish_dice(count, sides, (), start)

    def finish_dice(self, count: int, sides: int, custom: tuple[int, ...], start: int,
                    check_keep: bool = True) -> Dice:
        """Read the modifiers after ``NdS`` (or ``Nd{...}``) and build the checked term."""
        rng = (min(custom), max(custom)) if custom else face_range(sides)
        mods = self.modifiers(group=False, rng=rng)
        match = mods.get("match", (0, False))
        dice = Dice(count, sides, mods.get("reroll", ()), mods.get("reroll_once", False),
                    mods.get("explode"), mods.get("explode_on"), mods.get("keep"),
                    mods.get("success"), mods.get("failure"), mods.get("double"),
                    mods.get("sort"), (start, self.pos), mods.get("minimum"),
                    mods.get("maximum"), mods.get("crit"), mods.get("fumble"), match[0],
                    match[1], custom)
        if dice.explode is not None and dice.explode_on is None:
            dice = _with_explode_on(dice, Compare("=", rng[1]))
        _check_dice(dice, self.text, self.limits, mods["_spans"])
        if check_keep:  # a rolled count may be small: (d4)d6dl1 can leave nothing, and says so
            self.check_keep(dice.keep, count, "dice", mods["_spans"], dice.die_text(), start)
        return dice

    def check_keep(self, keep: Keep | None, count: int, what: str,
                   spans: Mapping[str, tuple[int, int]], die: str, start: int) -> None:
        """A keep or drop that leaves nothing is never what was meant: ``d4d6`` is not
        "a d4, drop the lowest 6" but two dice written without a ``+``."""
        if keep is None or keep.by_value or count == 0 or _keep_count(keep, count)[1] > 0:
            return
        a, b = spans["keep"]
        written = self.source[a:b]
        if keep.how == "dl" and written[:1].lower() == "d" and written[1:2].isdigit():
            hint = (f"'{written}' after {self.source[start:a]} reads as 'drop the lowest "
                    f"{keep.n}', which drops every die: to add dice write "
                    f"{self.source[start:a]}+{written}; to roll {self.source[start:a]} many "
                    f"{written}, write ({self.source[start:a]}){written}")
        elif keep.how in ("kh", "kl"):
            hint = f"'{written}' keeps no {what}: keep at least 1"
        else:
            hint = (f"'{written}' drops all {count} {what}, so nothing is left: drop fewer "
                    f"than {count}")
        raise self.error(hint, a, b)

    # --- modifiers -------------------------------------------------------------------------

    def compare_point(self, required: bool, what: str, start: int) -> Compare | None:
        m = _CMP.match(self.text, self.pos)
        op = "="
        if m is not None:
            op = "=" if m.group() == "==" else m.group()
            self.pos = m.end()
            if self.or_equal and op in (">", "<"):
                op += "="  # the Roll20 reading: a compare point > 3 means 3 or more
        elif required:
            return None
        n = (_SIGNED if m is not None else _DIGITS).match(self.text, self.pos)
        if n is None:
            if m is None:
                return None
            if self.pos < self.end and self.text[self.pos].isspace():
                raise self.error(f"no spaces inside a dice term: write {what}{op}N right "
                                 f"after the dice, or put spaces on both sides to compare "
                                 f"the total", start, self.pos + 1)
            raise self.error(f"{what or 'the compare point'} {op} needs a whole number",
                             start, self.pos + 1)
        self.pos = n.end()
        return Compare(op, self.int_literal(n.group(), n.start()))

    def critical_or_count(self, token: str, mods: dict[str, Any], start: int, lo: int,
                          hi: int) -> tuple[str, Compare]:
        """``cs``/``cf``: Roll20's critical range (marks only) or Foundry's counts; refused
        under the other dialects, since either reading silently changes the other's total."""
        how = self.reading["cs"]
        if how == "refuse":
            raise self.error(f"'{token}' means different things in Roll20 (a critical range: "
                             "the dice are only marked) and Foundry (count successes or "
                             "failures): say which with -o dialect=roll20 or dialect=foundry, "
                             f"or write {'crit' if token == 'cs' else 'fumble'}>=N to mark, "
                             ">=N to count successes, fN to take failures away",
                             start, start + 2)
        self.pos += 2
        cond = self.compare_point(False, token, start)
        if how == "critical":
            if cond is None:
                cond = Compare("=", hi if token == "cs" else lo)
            return ("crit" if token == "cs" else "fumble"), cond
        if cond is None:
            raise self.error(f"Foundry's {token} needs a target: {token}>=8 or {token}=1",
                             start, self.pos)
        if token == "cs":
            return "success", cond
        mods["_cf"] = True  # cf alone counts failures; with cs it takes them away
        return "failure", cond

    def keep(self, group: bool) -> Keep:
        """``kh3 kl1 dh1 dl1 k3 d1`` by rank, Avrae's ``ph1 pl1``; ``k>3 k<3 p>3 p<3 p3`` by
        value (under ``dialect=avrae`` ``k3`` keeps the 3s, as Avrae reads it)."""
        text, start = self.text, self.pos
        two = text[start:start + 2].lower()
        if two in ("kh", "kl", "dh", "dl", "ph", "pl"):
            self.pos += 2
            how = {"ph": "dh", "pl": "dl"}.get(two, two)
            n = _DIGITS.match(text, self.pos)
            if n is None:
                return Keep(how, 1)
            self.pos = n.end()
            return Keep(how, self.int_literal(n.group(), n.start()))
        letter = two[0]
        self.pos += 1
        if _CMP.match(text, self.pos):  # k>3, p<2, d<2: each die on its own value
            m = _CMP.match(text, self.pos)
            assert m is not None
            op = "=" if m.group() == "==" else m.group()
            n = _SIGNED.match(text, m.end())
            if n is None:
                raise self.error(f"'{letter}{op}' needs a whole number, as in {letter}{op}3",
                                 start, m.end())
            self.pos = n.end()
            return Keep("k" if letter == "k" else "p", 0,
                        Compare(op, self.int_literal(n.group(), n.start())))
        n = _DIGITS.match(text, self.pos)
        if n is None:
            if letter == "p":
                raise self.error("'p' (drop, as in Avrae) needs what to drop: ph1 (highest), "
                                 "pl1 (lowest), p<3 (dice under 3) or p1 (the 1s)", start,
                                 self.pos)
            return Keep("kh" if letter == "k" else "dl", 1)
        self.pos = n.end()
        value = self.int_literal(n.group(), n.start())
        if letter == "p" or (letter == "k" and self.reading["k_number"] == "value"):
            return Keep("k" if letter == "k" else "p", 0, Compare("=", value))
        return Keep("kh" if letter == "k" else "dl", value)

    def modifiers(self, group: bool, rng: tuple[int, int] | None) -> dict[str, Any]:
        mods: dict[str, Any] = {}
        spans: dict[str, tuple[int, int]] = {}
        text = self.text
        lo, hi = rng if rng is not None else (1, 1)
        while self.pos < self.end:
            start = self.pos
            rest = text[start:start + 6].lower()
            kind: str
            if rest.startswith("dbl"):
                self.pos += 3
                kind = "double"
                mods[kind] = self.compare_point(False, "dbl", start) or Compare("=", hi)
            elif rest[:2] == "df":  # Foundry: deduct failures
                self.pos += 2
                kind = "failure"
                mods[kind] = self.compare_point(False, "df", start) or Compare("=", lo)
            elif rest.startswith(("min", "max", "mi", "ma")):
                if group:
                    raise self.error("a minimum or maximum applies to dice, not to a group",
                                     start, start + 2)
                token = rest[:3] if rest[:3] in ("min", "max") else rest[:2]
                self.pos += len(token)
                kind = "minimum" if token.startswith("mi") else "maximum"
                n = _SIGNED.match(text, self.pos)
                if n is None:
                    raise self.error(f"'{token}' needs a number: {token}2 makes every die "
                                     f"{'at least' if kind == 'minimum' else 'at most'} 2",
                                     start, self.pos)
                self.pos = n.end()
                mods[kind] = self.int_literal(n.group(), n.start())
            elif rest[:2] == "mt" or rest[:1] == "m":
                token = "mt" if rest[:2] == "mt" else "m"
                self.pos += len(token)
                kind = "match"
                n = _DIGITS.match(text, self.pos)
                size = 2
                if n is not None:
                    self.pos = n.end()
                    size = self.int_literal(n.group(), n.start())
                    if size < 1:
                        raise self.error("a match is a set of at least 1 die", start, self.pos)
                elif _CMP.match(text, self.pos):
                    raise self.error(f"Roll20's {token} with a compare point is not supported: "
                                     f"write {token} or {token}N (sets of N or more)", start,
                                     self.pos + 1)
                mods[kind] = (size, token == "mt")
            elif rest.startswith(("crit", "fumble")):
                token = "crit" if rest.startswith("crit") else "fumble"
                self.pos += len(token)
                kind = token
                mods[kind] = self.compare_point(False, token, start) or Compare(
                    "=", hi if token == "crit" else lo)
            elif rest[:2] in ("cs", "cf"):
                kind, mods_value = self.critical_or_count(rest[:2], mods, start, lo, hi)
                mods[kind] = mods_value
            elif rest[:2] == "ra":  # Avrae: re-roll and add, one extra die for the term
                if group:
                    raise self.error("re-rolls apply to dice, not to a group", start, start + 2)
                self.pos += 2
                kind = "explode"
                if kind in mods:
                    raise self.error("one explosion per term (!, !!, !p, xo or ra)", start,
                                     self.pos)
                mods[kind] = "add"
                mods["explode_on"] = self.compare_point(False, "ra", start)
            elif rest[:2] in ("kh", "kl", "dh", "dl", "ph", "pl") or rest[:1] in ("k", "d", "p"):
                kind = "keep"
                keep = self.keep(group)
                if kind in mods:
                    raise self.error("one keep or drop per term (kh, kl, dh, dl, k>N, p<N)",
                                     start, self.pos)
                mods[kind] = keep
            elif rest[:2] == "!=" and self.reading["glued_compare"] == "total":
                break  # d20: 1d20!=1 compares the total (there is no ! in its notation)
            elif rest[:2] in ("!!", "!p", "xo") or rest[:1] in ("!", "x", "e"):
                if group:
                    raise self.error("explosions apply to dice, not to a group", start,
                                     start + 1)
                token = rest[:2] if rest[:2] in ("!!", "!p", "xo") else rest[:1]
                self.pos += len(token)
                kind = "explode"
                if kind in mods:
                    raise self.error("one explosion per term (!, !!, !p or xo)", start, self.pos)
                mods[kind] = {"!": "explode", "x": "explode", "e": "explode", "!!": "compound",
                              "!p": "penetrate", "xo": "once"}[token]
                mods["explode_on"] = self.compare_point(False, token, start)
            elif rest[:2] in ("ro", "rr") or rest[:1] == "r":
                if group:
                    raise self.error("re-rolls apply to dice, not to a group", start, start + 1)
                token = rest[:2] if rest[:2] in ("ro", "rr") else "r"
                self.pos += len(token)
                once = token == "ro" or (token == "r" and self.reroll_once)
                if "reroll" in mods and mods["reroll_once"] != once:
                    raise self.error("re-roll once (ro) and until it stops matching (rr) "
                                     "cannot be mixed on one term", start, self.pos)
                cond = self.compare_point(False, token, start)
                if cond is None:
                    cond = Compare("=", lo)
                mods["reroll"] = mods.get("reroll", ()) + (cond,)
                mods["reroll_once"] = once
                kind = "reroll"
            elif rest[:1] == "f":
                self.pos += 1
                kind = "failure"
                mods[kind] = self.compare_point(False, "f", start) or Compare("=", lo)
            elif rest[:1] == "s":
                token = rest[:2] if rest[:2] in ("sa", "sd") else "s"
                self.pos += len(token)
                kind = "sort"
                mods[kind] = "d" if token == "sd" else "a"
            elif _CMP.match(text, start) and self.reading["glued_compare"] == "total" \
                    and not group:
                break  # Avrae and d20 have no success counting: 3d6>10 compares the total
            elif _CMP.match(text, start):
                kind = "success"
                if kind in mods:
                    raise self.error("one success condition per term", start, start + 1)
                mods[kind] = self.compare_point(True, "", start)
            else:
                if text[start].isascii() and text[start].isalnum():
                    m = _WORD.match(text, start) or _ALNUM.match(text, start)
                    assert m is not None
                    raise self.error(f"unknown modifier '{m.group()}': modifiers are r, ro, "
                                     "rr, !, !!, !p, x, xo, e, kh, kl, dh, dl, k>N, p<N, mi, "
                                     "ma, >=N, f, df, dbl, crit, fumble, m, mt, s, sd",
                                     start, m.end())
                break
            if kind in spans and kind not in ("reroll",):
                raise self.error(f"the {kind} modifier is given twice", start, self.pos)
            spans[kind] = (start, self.pos)
        if "failure" in mods and "success" not in mods and mods.get("_cf"):
            mods["success"], spans["success"] = mods.pop("failure"), spans.pop("failure")
        for kind in ("failure", "double"):
            if kind in mods and "success" not in mods:
                a, b = spans[kind]
                raise self.error(f"'{self.text[a:b]}' needs a success condition first, "
                                 "such as 10d10>=8" + ("f1" if kind == "failure" else "dbl10"),
                                 a, b)
        mods["_spans"] = spans
        return mods


def _advantage(body: Node, advantage: bool, parser: _Parser, m: re.Match[str]) -> Node:
    """Avrae's ``adv``/``dis``: the first single d20 of the roll becomes 2d20kh1 (2d20kl1)."""
    from dataclasses import replace

    done = False

    def visit(node: Node) -> Node:
        nonlocal done
        if done:
            return node
        if isinstance(node, Dice):
            if node.sides == 20 and node.count == 1 and node.keep is None and not node.custom:
                done = True
                return replace(node, count=2, keep=Keep("kh" if advantage else "kl", 1))
            return node
        match node:
            case Sum(terms=t):
                return replace(node, terms=tuple((op, visit(x)) for op, x in t))
            case Product(factors=f):
                return replace(node, factors=tuple((op, visit(x)) for op, x in f))
            case Group(items=items):
                return replace(node, items=tuple(visit(x) for x in items))
            case Call(args=args):
                return replace(node, args=tuple(visit(x) for x in args))
            case Neg(operand=o):
                return replace(node, operand=visit(o))
            case Label(node=inner):
                return replace(node, node=visit(inner))
            case Comparison(left=lhs, right=rhs):
                left = visit(lhs)
                return replace(node, left=left, right=visit(rhs))
            case Power(base=b, exponent=e):
                base = visit(b)
                return replace(node, base=base, exponent=visit(e))
        return node

    out = visit(body)
    if not done:
        raise parser.error(f"'{m.group()}' turns the roll's first d20 into 2d20kh1 or 2d20kl1 "
                           "(as Avrae does), but this roll has no single d20", m.start(),
                           m.end())
    return out


def _with_explode_on(dice: Dice, on: Compare) -> Dice:
    from dataclasses import replace

    return replace(dice, explode_on=on)


# --------------------------------------------------------------------------------------------
# Checks once the tree is read: conditions that match no face, endless re-rolls and explosions


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
    from .rules import count_matching, die_range

    lo, hi = die_range(d)
    n = d.size
    name = f"{d.die_text()}"

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


def check_options(options: Mapping[str, Any]) -> None:
    """Refuse a switch value that is not one of its choices."""
    for key, choices in CHOICES.items():
        if not isinstance(options.get(key, DEFAULTS[key]), str):
            raise OptionError(f"option {key} takes one of {', '.join(choices)}, "
                              f"not {options[key]!r}")
        if options.get(key, DEFAULTS[key]) not in choices:
            raise OptionError(f"option {key} takes one of {', '.join(choices)}, "
                              f"not '{options[key]}'")


def parse(text: str, start: int, options: Mapping[str, Any],
          limits: Limits) -> Expression | Rolls:
    """Read general dice notation from ``text[start:]``.

    >>> from astragal import Limits
    >>> print(parse("dice: 4d6kh3 + 2", 5, {}, Limits()))
    dice: 4d6kh3+2
    """
    check_options(options)
    return _Parser(text, start, options, limits).request()
