"""Rolling the common plain shapes (``1d20+5``, ``4d6kh3+2``, ``3d6-1``) from a plan made once.

A plan is made per parsed expression (parsed trees are cached and immutable): the texts of its
lines, its dice terms' names, the crit and fumble marks of each face and the ``Die`` records
(immutable, so each (face, kept) record is made once). Rolling it draws the faces, applies the
same rule functions as the general roller (``kept_flags``, ``term_value``) and writes the same
``Roll``: ``tests/systems/dice/test_fast.py`` holds the two to the same output over random
expressions and faces. Anything else (explosions, re-rolls, success counting, labels, groups,
repeats, comparisons...) goes to the general roller.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._errors import LimitError
from ..._limits import Limits
from ..._rng import Source, SystemSource, system_faces
from ...dice import Die, Roll
from .nodes import FUDGE, PREFIX, Dice, Expression, Num, Rolls, Sum, said_twice, sum_text
from .rules import arith, critical, kept_flags, term_value

__all__ = ["plan"]

Plan = Callable[[Source, Limits, str], Roll]


def _plain(node: Any) -> bool:
    return (isinstance(node, Dice) and node.explode is None and not node.reroll
            and node.sides != FUDGE and not node.custom and node.success is None
            and node.failure is None and node.double is None and not node.sort
            and node.minimum is None and node.maximum is None and not node.match
            and not node.match_count and (node.keep is None or not node.keep.by_value)
            and node.count >= 1)


def _number(node: Any) -> bool:
    return isinstance(node, Num) and type(node.value) is int and node.value >= 0


class _Term:
    """One plain dice term: what its line and its records need, worked out once."""

    __slots__ = ("_d", "count", "dice", "group", "keep", "marks", "prefix", "sides", "term",
                 "words")

    def __init__(self, d: Dice, text: str) -> None:
        self.count, self.sides, self.keep = d.count, d.sides, d.keep
        self.term = text
        self.group = text
        self.prefix = f"  {text}: "
        self.words = f" → {d.keep.words()}" if d.keep is not None else ""
        self.marks: dict[int, tuple[bool, bool]] = {}
        self.dice: dict[tuple[int, bool], Die] = {}
        self._d = d

    def mark(self, face: int) -> tuple[bool, bool]:
        hit = self.marks.get(face)
        if hit is None:
            hit = self.marks[face] = critical(self._d, face)
        return hit

    def die(self, face: int, kept: bool) -> Die:
        hit = self.dice.get((face, kept))
        if hit is None:
            crit, fumble = self.mark(face)
            hit = self.dice[face, kept] = Die(self.sides, (face,), self.group,
                                              "" if kept else "dropped", kept, crit, fumble)
        return hit


def plan(expr: Expression | Rolls, text_of: Callable[[Any], str],
         notation: Callable[[Expression], str]) -> Plan | None:
    """The plan of a plain expression, or None (the general roller takes it)."""
    if not isinstance(expr, Expression) or expr.repeat != 1:
        return None
    body = expr.body
    if _plain(body):
        items: list[tuple[str, Any]] = [("+", body)]
    elif isinstance(body, Sum) and all(op in "+-" and (_plain(t) or _number(t))
                                       for op, t in body.terms):
        items = list(body.terms)
    else:
        return None
    parts: list[tuple[str, _Term | int]] = [
        (op, _Term(t, text_of(t)) if isinstance(t, Dice) else t.value) for op, t in items]
    head = notation(expr)
    total_dice = sum(p.count for _, p in parts if isinstance(p, _Term))
    single = len(parts) == 1

    terms_of = [part for _, part in parts if isinstance(part, _Term)]
    names = [t.term for t in terms_of]

    def render(faces_by_term: list[list[int]]) -> tuple[tuple[str, ...], tuple[Die, ...], int,
                                                         list[int]]:
        """The lines, records, total and term values of these faces (a pure function of them)."""
        lines = [head]
        dice: list[Die] = []
        values: list[int] = []
        total = 0
        shown = ""
        at = 0
        for op, part in parts:
            if type(part) is int:
                value = part
                piece = str(part)
            else:
                assert isinstance(part, _Term)
                faces = faces_by_term[at]
                at += 1
                kept = kept_flags(faces, part.keep) if part.keep is not None else None
                value = int(term_value(part._d, faces, kept)) if kept is not None else sum(faces)
                marked = []
                for i, face in enumerate(faces):
                    crit, fumble = part.mark(face)
                    dice.append(part.die(face, kept[i] if kept is not None else True))
                    marked.append(f"{face} (critical)" if crit else
                                  f"{face} (fumble)" if fumble else str(face))
                listed = ", ".join(marked)
                chosen = faces if kept is None else [f for f, k in zip(faces, kept) if k]
                verdict = part.words + (f": {sum_text(chosen)} = {value}" if len(chosen) > 1
                                        else f" → {value}")
                lines.append(part.prefix + listed + ("" if said_twice(verdict, listed, faces)
                                                     else verdict))
                values.append(value)
                piece = str(value)
            if shown:
                total = int(arith(op, total, value))
                shown += f" {op} {piece}"
            else:
                total, shown = value, piece
        line = f"Total: {total}" if single or shown == str(total) else f"{shown} = {total}"
        lines.append("  " + line)
        return tuple(lines), tuple(dice), total, values

    memo: dict[tuple[int, ...], Any] = {}
    sizes = [(t.sides, t.count) for t in terms_of]
    one = len(sizes) == 1

    def roll(source: Source, limits: Limits, text: str) -> Roll:
        if total_dice > limits.max_dice:
            raise LimitError(f"{total_dice} dice in all is more than the limit of "
                             f"{limits.max_dice} dice per roll", text, (0, len(text)))
        system = type(source) is SystemSource
        if one:
            faces = system_faces(*sizes[0]) if system else \
                [source.face(sizes[0][0], 0) for _ in range(sizes[0][1])]
            drawn = [faces]
            key = tuple(faces)
        else:
            drawn = [system_faces(s, n) if system else [source.face(s, 0) for _ in range(n)]
                     for s, n in sizes]
            key = tuple(f for faces in drawn for f in faces)
        hit = memo.get(key)  # the lines and records are a pure function of the faces
        if hit is None:
            hit = render(drawn)
            if len(memo) < 4096:
                memo[key] = hit
        lines, dice, total, values = hit
        if not system:
            source.finish()
        return Roll(PREFIX, text, "total", {"total": total, "terms": [
            {"term": name, "label": "", "value": v} for name, v in zip(names, values)]},
            dice, lines, expr)

    return roll
