"""Rolling the common plain shapes (``1d20+5``, ``4d6kh3+2``, ``3d6-1``) from a plan made once.

A plan is made per parsed expression (parsed trees are cached and immutable): its dice terms'
names and ``Side`` steps, the crit and fumble marks of each face and the ``Die`` records
(immutable, so each (face, kept) record is made once). Rolling it draws the faces, applies the
same rule functions as the general roller (``kept_flags``, ``term_value``), records the same
steps, puts them into words with ``render.dice`` (both remembered per faces: they are a pure
function of them) and returns the same ``Roll``: ``tests/systems/dice/test_fast.py`` holds the two to the same output over random
expressions and faces. Anything else (explosions, re-rolls, success counting, labels, groups,
repeats, comparisons...) goes to the general roller.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..._errors import LimitError
from ..._limits import Limits
from ..._rng import Source, SystemSource, system_faces
from ...dice import Die, Roll
from ...render.dice import plain_line, plain_transcript
from .nodes import FUDGE, PREFIX, Dice, Expression, Num, Rolls, Sum, notation_of, text_of
from .rules import arith, critical, kept_flags, term_value

if TYPE_CHECKING:
    from ...dice.steps import Step

__all__ = ["PlainRoll", "forget", "plain_roll", "plan"]

Plan = Callable[[Source, Limits, str], Roll]


class PlainRoll(Roll):
    """A roll of a plain shape. Its steps are made when they are asked for (its transcript is
    worded without them): the steps the general roller records on the same faces."""

    __slots__ = ()

    @property
    def steps(self) -> tuple[Step, ...]:
        from .roller import plain_steps

        return plain_steps(self.spec, [d.faces[0] for d in self.dice], self.input)

    def __eq__(self, other: object) -> bool:  # as a Roll is (its steps, its spec not compared)
        return isinstance(other, Roll) and self[:-2] == other[:-2]

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(("Roll", self[:-2]))


def _plain(node: Any) -> bool:
    return (isinstance(node, Dice) and node.explode is None and not node.reroll
            and node.sides != FUDGE and not node.custom and node.success is None
            and node.failure is None and node.double is None and not node.sort
            and node.minimum is None and node.maximum is None and not node.match
            and not node.match_count and (node.keep is None or not node.keep.by_value)
            and node.count >= 1)


def _number(node: Any) -> bool:
    return isinstance(node, Num) and type(node.value) is int and node.value >= 0


class _PerFace(dict[int, Any]):
    """A value per face, made the first time that face is asked for."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[int], Any]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, face: int) -> Any:
        value = self[face] = self.make(face)
        return value


class _Term:
    """One plain dice term: what its steps and its records need, worked out once (per face:
    its mark and its ``Die`` records, kept or dropped)."""

    __slots__ = ("_d", "count", "dropped", "keep", "keep_fact", "kept", "marks", "sides", "term")

    def __init__(self, d: Dice, text: str) -> None:
        self.count, self.sides, self.keep = d.count, d.sides, d.keep
        self.term = text
        self.keep_fact = (d.keep.how, d.keep.n) if d.keep is not None else None  # as a fact
        self._d = d
        self.marks = _PerFace(self.mark)
        self.kept = _PerFace(lambda face: self.die(face, True))
        self.dropped = _PerFace(lambda face: self.die(face, False))

    def mark(self, face: int) -> str:
        crit, fumble = critical(self._d, face)
        return "+".join(["critical"] * crit + ["fumble"] * fumble)

    def die(self, face: int, kept: bool) -> Die:
        crit, fumble = critical(self._d, face)
        return Die(self.sides, (face,), self.term, "" if kept else "dropped", kept, crit, fumble)


_PLANS: dict[int, tuple[object, Plan | None]] = {}


def forget() -> None:
    """Forget the plans (tests that swap a rule call this)."""
    _PLANS.clear()


def plain_roll(expr: Expression | Rolls, source: Source, limits: Limits,
               text: str) -> Roll | None:
    """The roll of a plain expression from its plan (made once per parsed expression), or None
    when the expression is not a plain shape (the general roller takes it)."""
    known = _PLANS.get(id(expr))
    if known is None or known[0] is not expr:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        known = _PLANS[id(expr)] = (expr, plan(expr))
    return None if known[1] is None else known[1](source, limits, text)


def plan(expr: Expression | Rolls) -> Plan | None:
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
    head = notation_of(expr)
    total_dice = sum(p.count for _, p in parts if isinstance(p, _Term))

    terms_of = [part for _, part in parts if isinstance(part, _Term)]
    names = [t.term for t in terms_of]

    def render(faces_by_term: list[list[int]]) -> tuple[tuple[str, ...], tuple[Die, ...], int,
                                                         list[int]]:
        """The lines, records, total and term values of these faces (a pure function of them;
        the lines are what ``render.dice`` makes of the steps the general roller records)."""
        lines: list[str] = []
        dice: list[Die] = []
        values: list[int] = []
        total = 0
        shown = ""
        at = 0
        for op, part in parts:
            if type(part) is int:
                value = part
            else:
                assert isinstance(part, _Term)
                faces = faces_by_term[at]
                at += 1
                kept = None
                if part.keep is not None:
                    kept = kept_flags(faces, part.keep)
                    value = int(term_value(part._d, faces, kept))
                    dice += [part.kept[f] if k else part.dropped[f] for f, k in zip(faces, kept)]
                else:
                    value = sum(faces)
                    dice += map(part.kept.__getitem__, faces)
                marks = list(map(part.marks.__getitem__, faces))
                lines.append(plain_line(part.term, faces, marks if any(marks) else (), kept,
                                        part.keep_fact, value))
                values.append(value)
            if shown:
                total = int(arith(op, total, value))
                shown += f" {op} {value}"
            else:
                total, shown = value, str(value)
        return plain_transcript(head, lines, shown, total), tuple(dice), total, values

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
        return PlainRoll(PREFIX, text, "total", {"total": total, "terms": [
            {"term": name, "label": "", "value": v} for name, v in zip(names, values)]},
            dice, lines, expr)

    return roll
