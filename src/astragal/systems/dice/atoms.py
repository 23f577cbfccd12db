"""Reading the atoms of the notation: numbers, brackets, functions, groups and computed dice
(``(1d4)d6``, ``d(d4+4)``); the part of the parser (``grammar.py``) below its precedence levels,
which it calls back for the expressions inside them (``compare``)."""

from __future__ import annotations

import re
from fractions import Fraction

from ..._errors import LimitError
from ...notation import unknown
from .lexicon import (
    _ANYDICE,
    _COMPUTED_SIDES,
    _DICE,
    _NUMBER,
    _WORD,
    MAX_COUNT,
    MAX_DEPTH,
    MAX_DIGITS,
)
from .nodes import FUDGE, FUNCTIONS, Call, Computed, Dice, Group, Node, Num
from .terms import DiceTerms


class Atoms(DiceTerms):
    """The parser's methods for atoms; ``grammar._Parser`` holds the state and the levels."""

    depth: int

    def compare(self) -> Node:
        raise NotImplementedError

    def ws(self) -> None:
        raise NotImplementedError

    def peek(self, n: int = 1) -> str:
        raise NotImplementedError

    def describe_here(self) -> str:
        raise NotImplementedError

    def enter(self, at: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise LimitError(f"the expression nests more than {MAX_DEPTH} levels deep "
                             "(parentheses, signs, groups, functions)", self.text, (at, at + 1))

    def leave(self) -> None:
        self.depth -= 1

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
        if c == "[" and (any_ := _ANYDICE.match(self.text, start)) is not None:
            how, n, dice = any_.group(1).lower(), any_.group(2), any_.group(3)
            raise self.error(f"AnyDice's [{how} {n} of {dice}] is written {dice}k"
                             f"{how[0]}{n} here", start, any_.end())
        raise self.error(f"expected a number, dice such as 2d6, '(' or '{{', found "
                         f"{self.describe_here()}", start)

    def call(self, m: re.Match[str]) -> Node:
        name = m.group().lower()
        start = m.start()
        if name not in FUNCTIONS:
            if name == "repeat":
                raise self.error("Sidekick's repeat(4d6k3, 6) is written 6x 4d6k3 here: the "
                                 "count first, then x and the roll", start, m.end())
            if name in ("d",):
                raise self.error("how many sides? write d6, d20, d% or dF", start, m.end())
            raise unknown(self.source, (start, m.end()), m.group(), "a function",
                          [*FUNCTIONS, "adv", "dis"], f"functions are {', '.join(FUNCTIONS)}; "
                          "dice are written like 2d6")
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
                raise self.too_many_dice(n, (start, self.pos))
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
