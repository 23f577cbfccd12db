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
from typing import Any

from ..._errors import LimitError, NotationError
from ..._limits import Limits
from ...notation import did_you_mean, unknown
from .atoms import Atoms
from .lexicon import (
    _ADVANTAGE,
    _COMMAND,
    _COMPARE_WORDS,
    _DESCRIPTION,
    _DICE_WORDS,
    _DIE_WORD,
    _ENDS_DICE,
    _ENDS_NUMBER,
    _LOOSE_WORD,
    _MODIFIER_WORD,
    _NORMALISE,
    _REPEAT,
    _TOTAL_CMP,
    _TOTAL_OPS,
    _WORD,
    MAX_DEPTH,
    MAX_SIDES,
    TAIL,
)
from .nodes import (
    FUNCTIONS,
    Comparison,
    Dice,
    Expression,
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
from .rules import CHOICES, DEFAULTS, SWITCHES, check_options, reading
from .terms import _advantage

__all__ = ["CHOICES", "DEFAULTS", "MAX_DEPTH", "MAX_SIDES", "SWITCHES", "TAIL", "parse"]


class _Parser(Atoms):
    def __init__(self, text: str, start: int, options: Mapping[str, Any], limits: Limits) -> None:
        self.source = text
        self.options = options
        self.text = text.translate(_NORMALISE)
        self.pos = start
        self.end = len(text)
        self.depth = 0
        self.limits = limits
        self.dialect = options.get("dialect", "astragal")
        self.read_as("")

    def read_as(self, command: str) -> None:
        """Read the dialect-dependent forms as the options say, or as the tool whose chat
        ``command`` (``/r``, ``!r``) is in front of the roll reads them."""
        self.reading = reading(self.options, command)
        self.reroll_once = self.reading["reroll"] == "once"

    def command(self) -> None:
        """A chat command in front of a roll (``/r``, ``/roll``, ``!r``, AnyDice's ``output``)
        is skipped, and says how the roll is read."""
        m = _COMMAND.match(self.text, self.pos)
        if m is not None:
            self.pos = m.end()
            self.read_as(m.group(1))

    # --- helpers ---------------------------------------------------------------------------

    def error(self, message: str, start: int, end: int | None = None) -> NotationError:
        return NotationError(message, self.source, (start, end if end is not None else start + 1))

    def ws(self) -> None:
        while self.pos < self.end and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos:self.pos + n]

    def describe_here(self) -> str:
        if self.pos >= self.end:
            return "the end"
        m = _WORD.match(self.text, self.pos)
        return f"'{m.group()}'" if m else f"'{self.text[self.pos]}'"

    # --- the request -----------------------------------------------------------------------

    def request(self) -> Expression | Rolls:
        """A whole request: an optional chat command (``/r``, ``/roll``, ``!r``), then one
        roll, several separated by ``;``, or ``[[ ]]`` inline rolls in a line of text."""
        self.command()
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
            inner.command()  # Foundry's [[/r 1d20]]
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
        begin = self.pos
        body = self.compare()
        self.ws()
        m = _ADVANTAGE.match(self.text, self.pos)
        if m is not None:
            body = _advantage(body, m.group(1).lower().startswith("a"), self, m)
            self.pos = m.end()
            self.ws()
            if not isinstance(body, Comparison):  # 1d20+5 adv >= 15
                if self.peek() in ("+", "-"):  # d20 adv +5: Avrae takes 'adv' out wherever
                    body = self.sum(body, begin)  # it stands, so +5 still adds
                body = self.compared(body, begin)
        comment = ""
        stop = self.text.find(";", self.pos)
        stop = self.end if stop < 0 else stop
        if self.pos < self.end and (self.text[self.pos] == "#" or (
                self.text[self.pos] == "!" and self.text[self.pos - 1].isspace()
                and self.text[self.pos + 1:self.pos + 2] in ("", " ", "\t"))):
            # '#', or Dice Maiden's '!' between spaces: everything after it is a comment
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
        if _MODIFIER_WORD.fullmatch(word) or word in FUNCTIONS or _DIE_WORD.fullmatch(word):
            return False
        if did_you_mean(word, ("advantage", "disadvantage")) is not None:  # 1d20+5 advantge
            raise unknown(self.source, (self.pos, m.end()), m.group(), "read after a roll",
                          ("advantage", "disadvantage"), "")
        stop = self.text.find(";", self.pos)
        for w in _DESCRIPTION.finditer(self.text, self.pos, self.end if stop < 0 else stop):
            if (hint := _DICE_WORDS.get(w.group().lower())) is not None:
                raise self.error(_ignored(w.group(), hint, self.source[:self.pos].rstrip()),
                                 w.start(), w.end())
        return True

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
        return self.compared(left, start)

    def compared(self, left: Node, start: int) -> Node:
        """``left`` compared with what follows, if a comparison of totals follows."""
        m = _TOTAL_CMP.match(self.text, self.pos)
        if not m:
            return left
        op = _TOTAL_OPS[m.group()]
        self.pos = m.end()
        right = self.sum()
        self.ws()
        if (m2 := _TOTAL_CMP.match(self.text, self.pos)) is not None:
            raise self.error("compare once: a < b < c is not allowed; use parentheses",
                             m2.start(), m2.end())
        return Comparison(op, left, right, (start, self.pos))

    def sum(self, first: Node | None = None, start: int | None = None) -> Node:
        """Terms joined by + and -; ``first`` (read from ``start``): a term already read."""
        start = self.pos if start is None else start
        terms: list[tuple[str, Node]] = list(first.terms) if isinstance(first, Sum) else [
            ("+", self.product() if first is None else first)]
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


def _ignored(word: str, means: str, roll: str) -> str:
    """The refusal of a word that means dice in some tool inside a trailing description."""
    how = {"adv": f"write {roll} adv (or dis) right after the roll",
           "dis": f"write {roll} dis right after the roll",
           "drop": "write drop lowest (or dl1) right after the dice, as in 4d6 drop lowest",
           "keep": "write keep highest 3 (or kh3) right after the dice, as in 4d6 keep "
                   "highest 3",
           "reroll": "write the re-roll on the dice, as in 4d6r1 (until it stops) or 4d6ro1 "
                     "(once)",
           "explode": "write the explosion on the dice, as in 3d6!"}[means]
    return (f"'{word}' would be read as a description and ignored: {how}; or, for a "
            f"description, put it after # ({roll} # ...)")


def parse(text: str, start: int, options: Mapping[str, Any],
          limits: Limits) -> Expression | Rolls:
    """Read general dice notation from ``text[start:]``.

    >>> from astragal import Limits
    >>> print(parse("dice: 4d6kh3 + 2", 5, {}, Limits()))
    dice: 4d6kh3+2
    """
    check_options(options)
    plain = read_plain(text, start)
    return _Parser(text, start, options, limits).request() if plain is None else plain


_PLAIN_CHARS = frozenset("0123456789dkhlFf+- <>=!")


def _whole(digits: str) -> int:
    """A few ASCII digits' value. ``int(str)``'s first call in a process costs ~20 µs (its C
    code run for the first time), about a tenth of a first roll's; this loop, ~1.5 µs."""
    value = 0
    for ch in digits:
        value = value * 10 + ord(ch) - 48
    return value
_KEEPS = ("kh", "kl", "dh", "dl")


def read_plain(text: str, start: int = 0) -> Expression | None:
    """The common plain shapes, ``1d20+5``, ``4d6kh3 + 2``, ``3d6-1``, ``4dF+2``, ``d20+5 >= 15``,
    ``3d6 > 3d6``: dice with at most a keep or drop by rank, Fudge dice, and whole numbers, added
    or taken away, and two such totals compared, read without the parser (whose first call in a
    fresh process costs ~0.2 ms of code run once). The tree is the one ``_Parser`` reads, spans
    included (``tests/systems/dice/test_notation.py`` holds them equal in every dialect);
    anything else, or anything the parser would refuse or warn about, gives None. Nothing in
    such a term has a check to fail (``checks._check_dice``): no re-roll, explosion, bound or
    compare point, and a keep that leaves dice."""
    end = len(text)
    if end - start > 60 or not _PLAIN_CHARS.issuperset(text[start:]):
        return None
    left = _plain_terms(text, start)
    if left is None:
        return None
    first, terms, at, glued, dice = left
    if at == end:
        return Expression(_total(terms, first, end), 1, "") if dice else None
    # two totals compared; a compare glued to a die (``d20>=15``) is read as the dialects
    # differ (a success count in Roll20's), so the parser reads that
    if glued:
        return None
    width = 2 if text[at:at + 2] in _TOTAL_OPS else 1  # the longest form, as _TOTAL_CMP
    op = _TOTAL_OPS.get(text[at:at + width])
    if op is None:  # "!" alone
        return None
    right = _plain_terms(text, at + width)
    if right is None or right[2] != end or not (dice or right[4]):
        return None  # a second comparison (a < b < c), or no dice at all
    return Expression(Comparison(op, _total(terms, first, at),
                                 _total(right[1], at + width, end), (first, end)), 1, "")


def _total(terms: list[tuple[str, Node]], start: int, end: int) -> Node:
    """One term as it is, several as their ``Sum`` over ``start:end`` (as ``_Parser.sum``)."""
    return terms[0][1] if len(terms) == 1 else Sum(tuple(terms), (start, end))


def _plain_terms(text: str, pos: int) -> tuple[int, list[tuple[str, Node]], int, bool,
                                                  bool] | None:
    """``read_plain``'s terms added or taken away from ``pos``, up to the text's end or a
    comparison: (where the first term starts, the terms, where they stop (after spaces),
    whether a comparison follows a die with no space, whether there are dice); None where
    the parser must read it."""
    end = len(text)
    while pos < end and text[pos] == " ":
        pos += 1
    first = pos
    terms: list[tuple[str, Node]] = []
    op, dice = "+", False
    while True:
        at = pos
        while pos < end and "0" <= text[pos] <= "9":
            pos += 1
        digits = text[at:pos]
        node: Node
        if pos < end and text[pos] == "d" and text[pos + 1:pos + 2] in ("F", "f"):
            pos += 2  # Fudge dice, as Fate rolls them: 4dF
            count = _whole(digits) if digits else 1
            if len(digits) > 3 or count < 1 or (pos < end and text[pos] not in " +-"):
                return None
            node, dice = Dice(count, 0, (), False, None, None, None, None, None, None, None,
                              None, None, None, None, 0, False, (), (at, pos)), True
        elif pos < end and text[pos] == "d":
            pos += 1
            from_ = pos
            while pos < end and "0" <= text[pos] <= "9":
                pos += 1
            count = _whole(digits) if digits else 1
            if len(digits) > 3 or not 0 < pos - from_ <= 6 or count < 1:
                return None
            sides = _whole(text[from_:pos])
            keep = None
            if text.startswith(_KEEPS, pos):
                how = text[pos:pos + 2]
                pos += 2
                from_ = pos
                while pos < end and "0" <= text[pos] <= "9":
                    pos += 1
                if not 0 < pos - from_ <= 3:
                    return None
                n = _whole(text[from_:pos])
                if n == 0 if how[0] == "k" else n >= count:  # it leaves no dice: the parser says so
                    return None
                keep = Keep(how, n)
            if sides < 1:
                return None
            node, dice = Dice(count, sides, (), False, None, None, keep, None, None, None, None,
                              None, None, None, None, 0, False, (), (at, pos)), True
        elif digits and len(digits) <= 9:
            node = Num(_whole(digits), (at, pos))
        else:
            return None
        terms.append((op, node))
        if pos < end and text[pos] not in " +-<>=!":
            return None
        after = pos
        while pos < end and text[pos] == " ":
            pos += 1
        if pos == end or text[pos] not in "+-":
            return first, terms, pos, pos == after and isinstance(node, Dice), dice
        op = text[pos]
        pos += 1
        while pos < end and text[pos] == " ":
            pos += 1
