"""Reading one dice term's modifiers (``4d6kh3``, ``8d6r<3``, ``10d10>=8f1``, ``d20cs>19``):
the part of the parser (``grammar.py``) that turns a die and what is glued to it into a ``Dice``."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ..._errors import LimitError, NotationError
from ..._limits import Limits
from ...notation import unknown
from .checks import _check_dice
from .lexicon import (
    _ALNUM,
    _CMP,
    _DIGITS,
    _SIGNED,
    _SPACED,
    _WORD,
    MAX_COUNT,
    MAX_CUSTOM,
    MAX_DIGITS,
    MAX_SIDES,
)
from .nodes import (
    FUDGE,
    Call,
    Compare,
    Comparison,
    Dice,
    Group,
    Keep,
    Label,
    Neg,
    Node,
    Power,
    Product,
    Sum,
)
from .rules import ROLL20_FORMS, face_range
from .rules import keep_count as _keep_count


class DiceTerms:
    """The parser's methods for dice terms; ``grammar._Parser`` holds the state they read."""

    text: str
    source: str
    pos: int
    end: int
    limits: Limits
    reading: dict[str, str]
    reroll_once: bool

    def or_equal_at(self, token: str) -> bool:
        """Whether ``>``/``<`` after ``token`` (``""``: glued to the dice) means or equal."""
        how = self.reading["greater_than"]
        return how == "or_equal" or (how == "roll20_forms" and token in ROLL20_FORMS)

    def error(self, message: str, start: int, end: int | None = None) -> NotationError:
        raise NotImplementedError

    def int_literal(self, digits: str, at: int) -> int:
        if len(digits.lstrip("-")) > MAX_DIGITS:
            raise LimitError(f"the number has more than {MAX_DIGITS} digits", self.text,
                             (at, at + len(digits)))
        return int(digits)

    def too_many_dice(self, count: int, span: tuple[int, int]) -> LimitError:
        """The error of a term of more dice than the notation reads (``NdS``, ``N d(…)``)."""
        return LimitError(f"{count:,} dice in one term is more than the notation reads (at "
                          f"most {MAX_COUNT:,}; a roll rolls at most {self.limits.max_dice:,})",
                          self.text, span)

    def dice(self, m: re.Match[str]) -> Node:
        start = m.start()
        count = 1
        if m.group(1):
            count = self.int_literal(m.group(1), start)
        if count > MAX_COUNT:
            raise self.too_many_dice(count, (start, m.end()))
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
        self.spaced(mods, count, rng[1], start)
        match = mods.get("match", (0, False))
        dice = Dice(count, sides, mods.get("reroll", ()), mods.get("reroll_once", False),
                    mods.get("explode"), mods.get("explode_on"), mods.get("keep"),
                    mods.get("success"), mods.get("failure"), mods.get("double"),
                    mods.get("sort"), mods.get("minimum"), mods.get("maximum"),
                    mods.get("crit"), mods.get("fumble"), match[0], match[1], custom,
                    (start, self.pos))
        if dice.explode is not None and dice.explode_on is None:
            dice = _with_explode_on(dice, Compare("=", rng[1]))
        _check_dice(dice, self.text, self.limits, mods["_spans"])
        if check_keep and dice.keep is not None:  # a rolled count may be small: (d4)d6dl1
            # can leave nothing, and says so
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
            if op in (">", "<") and self.or_equal_at(what):
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
                if token == "!" and text.startswith(">=", self.pos) and \
                        self.reading["greater_than"] == "roll20_forms":
                    raise self.error("under /r, '!>=' is read apart: Roll20 explodes on that "
                                     "face or more, Sidekick explodes the highest face and "
                                     "counts that face or more as successes (its 3d10!>=8 is "
                                     "3d10!10>=8 here): write that, or say which with -o "
                                     "dialect=roll20", start, self.pos + 2)
                mods["explode_on"] = self.compare_point(False, token, start)
            elif rest[:2] in ("ro", "rr") or rest[:1] == "r":
                if group:
                    raise self.error("re-rolls apply to dice, not to a group", start, start + 1)
                token = rest[:2] if rest[:2] in ("ro", "rr") else "r"
                if token == "r" and self.reading["reroll"] == "refuse":
                    raise self.error("a bare r re-rolls until the face stops matching in "
                                     "Roll20 but only once in Foundry, and both take /r: write "
                                     "rr (until it stops) or ro (once), or say which with -o "
                                     "dialect=roll20 or dialect=foundry", start, start + 1)
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
                    if m.group().lower() == "t":
                        raise self.error("'t' is Sidekick's 'count twice' (t10: a 10 counts "
                                         "as two successes) and Dice Maiden's target (t8: "
                                         "8 or more): write 10d10>=8dbl10 or 10d10>=8",
                                         start, m.end())
                    raise unknown(self.source, (start, m.end()), m.group(), "a modifier",
                                  ("crit", "fumble", "dbl", "min", "max"), "modifiers are r, ro, "
                                  "rr, !, !!, !p, x, xo, e, kh, kl, dh, dl, k>N, p<N, mi, ma, "
                                  ">=N, f, df, dbl, crit, fumble, m, mt, s, sd")
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

    def spaced(self, mods: dict[str, Any], count: int, hi: int, start: int) -> None:
        """Dice Maiden's modifiers, written after the dice with spaces, and read its way
        (its README): ``e6`` explodes once on 6 or more (``ie6``: again and again), ``r2``
        re-rolls a 2 or less once (``ir2``: until it stops), ``d1`` drops the lowest, ``k2``
        keeps the highest (``kl2`` the lowest), ``t7`` counts each die of 7 or more, ``f1``
        takes one away for each of 1 or less; and the same in words (``drop lowest``, ``keep
        highest 3``). No other tool reads them, and as a description they would change
        nothing."""
        spans = mods["_spans"]
        maiden: dict[str, Keep] = {}  # a d or k written Dice Maiden's way (drop, then keep)
        while True:
            at = self.pos
            while at < self.end and self.text[at].isspace():
                at += 1
            m = _SPACED.match(self.text, at) if at > self.pos else None
            if m is None:
                break
            written = self.source[at:m.end()]
            token = (m.group(1) or "").lower()
            n = int(m.group(2) or m.group(5) or (0 if token else 1))
            if token and not m.group(2) and token not in ("e", "ie"):
                break  # 'd' or 't' alone: no tool reads it as dice
            if token == "b":
                raise self.error(f"Dice Maiden's '{written}' counts botches beside the total, "
                                 "which astragal does not: leave it out, or count them in a "
                                 f"roll of their own ({count}d{hi}<={n})", at, m.end())
            if n == 0 and token not in ("e", "ie"):
                raise self.error(f"'{written}' changes nothing in Dice Maiden: leave it out",
                                 at, m.end())
            if token == "d" and n >= count:  # d12 d8: a die without its '+'
                raise self.error(f"'{written}' after the dice would be Dice Maiden's 'drop the "
                                 f"lowest {n}', which drops every die: to add dice, write "
                                 f"{self.source[start:self.pos]}+{written}", at, m.end())
            if not token:  # in words
                token = m.group(3)[0].lower() + m.group(4)[0].lower()
            kind, value = _MAIDEN[token](n or hi)
            if kind == "keep" and token in ("d", "k") and "keep" in maiden:
                # Dice Maiden drops first, then keeps the highest of the dice left: the
                # highest k as long as k are left (explosions only add dice), which is kh k
                d, k = (n, maiden["keep"].n) if token == "d" else (maiden["keep"].n, n)
                if {token, maiden.pop("keep").how} != {"d", "k"} or k + d > count:
                    raise self.error(f"Dice Maiden drops {d} and then keeps {k} of the "
                                     f"{count} dice: write one of them", at, m.end())
                value = Keep("kh", k)
                del spans["keep"]
            if kind in spans:
                a, b = spans[kind]
                raise self.error(f"the {kind} modifier is given twice ('{self.source[a:b]}' "
                                 f"and '{written}')", at, m.end())
            if kind == "explode" or kind == "reroll":
                mods[kind], mods[f"{kind}_{'on' if kind == 'explode' else 'once'}"] = value
            else:
                mods[kind] = value
            if token in ("d", "k"):
                maiden["keep"] = Keep(token, n)
            spans[kind] = (at, m.end())
            self.pos = m.end()
        if "failure" in mods and "success" not in mods:
            a, b = spans["failure"]
            raise self.error(f"'{self.source[a:b]}' needs a target first, as in "
                             f"{count}d{hi} t{hi} {self.source[a:b]}", a, b)

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


# Dice Maiden's spaced modifiers (``e6``, ``t8``...) and the words (``dl``: drop lowest), each as
# the modifier it is (``spaced``)
_MAIDEN: dict[str, Callable[[int], tuple[str, Any]]] = {
    "e": lambda n: ("explode", ("once", Compare(">=", n))),
    "ie": lambda n: ("explode", ("explode", Compare(">=", n))),
    "r": lambda n: ("reroll", ((Compare("<=", n),), True)),
    "ir": lambda n: ("reroll", ((Compare("<=", n),), False)),
    "t": lambda n: ("success", Compare(">=", n)),
    "f": lambda n: ("failure", Compare("<=", n)),
    "d": lambda n: ("keep", Keep("dl", n)),
    "k": lambda n: ("keep", Keep("kh", n)),
    "kl": lambda n: ("keep", Keep("kl", n)),
    "dl": lambda n: ("keep", Keep("dl", n)),
    "dh": lambda n: ("keep", Keep("dh", n)),
    "kh": lambda n: ("keep", Keep("kh", n)),
}


def _with_explode_on(dice: Dice, on: Compare) -> Dice:
    return dice._replace(explode_on=on)


def _advantage(body: Node, advantage: bool, parser: DiceTerms, m: re.Match[str]) -> Node:
    """Avrae's ``adv``/``dis``: the first single d20 of the roll becomes 2d20kh1 (2d20kl1)."""
    done = False

    def visit(node: Node) -> Node:
        nonlocal done
        if done:
            return node
        if isinstance(node, Dice):
            if node.sides == 20 and node.count == 1 and node.keep is None and not node.custom:
                done = True
                return node._replace(count=2, keep=Keep("kh" if advantage else "kl", 1))
            return node
        match node:
            case Sum(terms=t):
                return node._replace(terms=tuple((op, visit(x)) for op, x in t))
            case Product(factors=f):
                return node._replace(factors=tuple((op, visit(x)) for op, x in f))
            case Group(items=items):
                return node._replace(items=tuple(visit(x) for x in items))
            case Call(args=args):
                return node._replace(args=tuple(visit(x) for x in args))
            case Neg(operand=o):
                return node._replace(operand=visit(o))
            case Label(node=inner):
                return node._replace(node=visit(inner))
            case Comparison(left=lhs, right=rhs):
                left = visit(lhs)
                return node._replace(left=left, right=visit(rhs))
            case Power(base=b, exponent=e):
                base = visit(b)
                return node._replace(base=base, exponent=visit(e))
        return node

    out = visit(body)
    if not done:
        raise parser.error(f"'{m.group()}' turns the roll's first d20 into 2d20kh1 or 2d20kl1 "
                           "(as Avrae does), but this roll has no single d20", m.start(),
                           m.end())
    return out
