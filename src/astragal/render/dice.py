"""The general dice notation in words: a roll's steps as transcript lines. Pure functions of the
steps (``astragal.dice.steps``).

What the notation's roller records, per dice term: a ``Side`` (its name as the tray groups its
dice, ``4d6kh3 [fire]``, and its settings as facts), a ``Rolled`` step (each die's faces as it
shows them, Fudge and custom faces included: a re-roll starts a new run, a compounded roll
joins the run it adds to; its marks, ``+``-joined: ``explosion`` for a die an explosion added,
``ra`` and ``added`` for ``ra``'s die and the die it added, ``critical``, ``fumble``,
``success``, ``double``, ``failure``, ``match``), a ``Changed`` step when ``mi``/``ma`` changed a
value, and a ``Count`` of what the term comes to. A group is a ``Side`` with ``items``, its
items' own steps, a ``Worked`` step per item that is not a dice term, and ``Items``. A roll ends
with a ``Worked`` total (or comparison); a repeated roll has a ``Round`` per roll.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..dice import steps as S
    from ..dice.steps import Changed, Items, Rolled, Step
else:
    S = None  # imported by the first transcript: a plain roll's words need no steps

__all__ = ["compare_words", "keep_words", "number", "plain_line", "plain_transcript", "sum_text",
           "term_line", "total_line", "transcript"]

_COMPARE = {"=": "exactly {}", "!=": "not {}", "<": "under {}", "<=": "{} or less",
            ">": "over {}", ">=": "{} or more"}
_KEEP = {"kh": "keep highest", "kl": "keep lowest", "dh": "drop highest", "dl": "drop lowest"}


def number(v: float) -> str:
    """A value as a player reads it: ``7``, ``3.5``, ``3.333333`` (six decimals at most)."""
    return str(v) if isinstance(v, int) else f"{v:.6f}".rstrip("0")


def compare_words(op: str, value: int) -> str:
    """``8 or more``, ``exactly 1``."""
    return _COMPARE[op].format(value)


@lru_cache(maxsize=256)
def keep_words(keep: tuple[Any, ...]) -> str:
    """``keep highest 3`` for ``("kh", 3)``; ``drop dice under 2`` for ``("p", "<", 2)``."""
    if len(keep) == 3:
        how, op, value = keep
        return ("keep" if how == "k" else "drop") + f" dice {compare_words(op, value)}"
    return f"{_KEEP[keep[0]]} {keep[1]}"


def sum_text(values: Sequence[float]) -> str:
    """``3 + 6``, ``4 - 1``: values added up in words."""
    text = " + ".join(map(str, values))
    if "-" not in text and "." not in text and "e" not in text:  # whole numbers, none below 0
        return text
    out = number(values[0])
    for v in values[1:]:
        out += f" - {number(-v)}" if v < 0 else f" + {number(v)}"
    return out


def said_twice(verdict: str, listed: str, values: Sequence[float]) -> bool:
    """A term line's `` → total`` says nothing new: the faces listed are it, or its one die is
    worth its face (``d20: 20 (critical)``, not ``… → 20``)."""
    return verdict == f" → {listed}" or (len(values) == 1 and verdict == f" → {number(values[0])}")


def verdict(facts: Mapping[str, Any], values: Sequence[float], kept: Sequence[bool] | None,
            marks: Sequence[Sequence[str]], total: float) -> str:
    """What a term or a group comes to: `` → keep highest 3: 6 + 4 + 3 = 13``,
    `` → 2 successes (8, 9), 1 failure (1) = 1`` (``kept``: ``None`` when all count)."""
    out = f" → {keep_words(facts['keep'])}" if "keep" in facts else ""
    if "success" not in facts:
        chosen = values if kept is None else [v for v, k in zip(values, kept) if k]
        if len(chosen) > 1:
            return out + f": {sum_text(chosen)} = {number(total)}"
        return out + f" → {number(total)}"
    if kept is None:
        kept = (True,) * len(values)

    def marked(mark: str) -> list[str]:
        return [number(v) for v, k, m in zip(values, kept, marks) if k and mark in m]

    hits = marked("success")
    out += f" → {len(hits)} success{'es' if len(hits) != 1 else ''}"
    if hits:
        out += f" ({', '.join(hits)})"
    doubles = marked("double") if "double" in facts else []
    if doubles:
        out += f", {len(doubles)} counting twice ({', '.join(doubles)})"
    if "failure" in facts:
        misses = marked("failure")
        out += f", {len(misses)} failure{'s' if len(misses) != 1 else ''}"
        if misses:
            out += f" ({', '.join(misses)})"
    return out + f" = {number(total)}"


def _marks(step: Rolled | Items) -> list[tuple[str, ...]]:
    return [tuple(m.split("+")) if m else () for m in step.marks] or [()] * len(step.values)


def die_text(runs: Sequence[Sequence[int]], value: int, before: int, marks: Sequence[str],
             compound: bool, goes_on: bool) -> str:
    """One die as the term's line shows it: ``1→4``, ``6!``, ``5!-1``, ``6!+6!+3=15``,
    ``20 (critical)``, ``1 (as 2)``."""
    if compound:
        text = "→".join(["!+".join(map(str, run)) for run in runs])
        if any(len(run) > 1 for run in runs):
            text += f"={before}"
    else:
        text = "→".join([str(run[0]) for run in runs])
        if goes_on:
            text += "!"
        if before != runs[-1][-1]:
            text += "-1"  # !p: every die an explosion adds is worth one less
    if "ra" in marks:
        text += " (ra)"
    if "critical" in marks:
        text += " (critical)"
    elif "fumble" in marks:
        text += " (fumble)"
    if value != before:
        text += f" (as {value})"
    return text


_QUIET = frozenset({"success", "double", "failure", "match", "added"})  # not on the die's text


def _shown(facts: Mapping[str, Any], rolled: Rolled, changed: Changed | None,
           marks: list[tuple[str, ...]] | None) -> list[str]:
    """Each die of a term as its line shows it, in rolling order."""
    runs_of, values, dice = rolled.runs, rolled.values, rolled.dice
    if facts.get("explode") == "compound":
        before = dict(zip(changed.dice, changed.before)) if changed is not None else {}
        return [die_text(runs, v, before.get(i, v), m, True, False)
                for i, runs, v, m in zip(dice, runs_of, values, marks or [()] * len(values))]
    if rolled.reroll:
        shown = ["→".join([str(r[0]) for r in runs]) for runs in runs_of]
    elif changed is None and marks is None:
        return list(map(str, values))
    else:
        shown = [str(runs[0][0]) for runs in runs_of]
    marked: dict[int, int] = {}  # the dice whose text a mark changes (or goes on), by position
    if marks is not None:
        for k, m in enumerate(marks):
            if m and not _QUIET.issuperset(m):
                marked[k] = values[k]
                if "explosion" in m and k:
                    marked[k - 1] = values[k - 1]
    if changed is not None:
        at = {i: k for k, i in enumerate(dice)}
        for i, was, after in zip(changed.dice, changed.before, changed.after):
            if at[i] in marked:
                marked[at[i]] = was
            else:
                shown[at[i]] += f" (as {after})"
    if marked:
        assert marks is not None
        last = len(values) - 1
        for k, was in marked.items():
            shown[k] = die_text(runs_of[k], values[k], was, marks[k], False,
                                k < last and "explosion" in marks[k + 1])
    return shown


_MARKED = {"": "", "critical": " (critical)", "fumble": " (fumble)",
           "critical+fumble": " (critical)"}
_PLAIN = frozenset({"label", "keep"})  # the facts a term with one face a die may have


def plain_line(name: str, faces: Sequence[int], marks: Sequence[str],
               kept: Sequence[bool] | None, keep: tuple[Any, ...] | None, total: int) -> str:
    """The line of a term whose dice show one face each and count it (no re-roll, explosion,
    ``mi``/``ma``, count or sort): ``4d6kh3: 6, 4, 1, 3 → keep highest 3: 6 + 4 + 3 = 13``,
    ``d20: 20 (critical)``; ``marks``: each die's (``critical``, ``fumble``; ``()``: none),
    ``kept``: ``None`` when every die counts."""
    listed = (", ".join([f"{f}{_MARKED[m]}" for f, m in zip(faces, marks)]) if marks
              else ", ".join(map(str, faces))) or "no dice"
    chosen = faces if kept is None else [f for f, k in zip(faces, kept) if k]
    words = (f" → {keep_words(keep)}" if keep else "") + (
        f": {sum_text(chosen)} = {total}" if len(chosen) > 1 else f" → {total}")
    return f"{name}: {listed}" if said_twice(words, listed, faces) else f"{name}: {listed}{words}"


def total_line(working: str, value: str) -> str:
    """A roll's last line: ``Total: 15``, or its working: ``12 + 2 = 14``."""
    return f"Total: {value}" if working == value else f"{working} = {value}"


def plain_transcript(text: str, lines: Iterable[str], working: str, total: int) -> tuple[str, ...]:
    """The transcript of a sum of plain terms and numbers: the notation, each term's
    ``plain_line``, the total (what ``transcript`` makes of their steps)."""
    return (text, *["  " + line for line in lines], "  " + total_line(working, str(total)))


_LINES: dict[tuple[Any, ...], str] = {}


def term_line(name: str, facts: Mapping[str, Any], rolled: Rolled, changed: Changed | None,
              total: int) -> str:
    """A dice term's line: ``4d6kh3: 6, 4, 1, 3 → keep highest 3: 6 + 4 + 3 = 13``; the line of
    a plain term or of a few dice that are more than plain is remembered (a pure function of its
    steps: its name, the term as written, says its facts; a few dice show few different faces),
    and so is the line of a ``Rolled`` step met again (the same record: the roller remembered
    it)."""
    seen = _SEEN.get(id(rolled))  # a roller that remembers a term's reading gives it again
    if seen is not None and seen[0] is rolled and seen[1] is changed and seen[2] == total:
        return seen[3]
    kept: list[bool] | None = None
    if rolled.dropped:
        dropped = set(rolled.dropped)
        kept = [i not in dropped for i in rolled.dice]
    if not (rolled.again or rolled.reroll or changed) and _PLAIN.issuperset(facts):
        if len(rolled.dice) > 8:
            return plain_line(name, rolled.values, rolled.marks, kept, facts.get("keep"), total)
        key = (name, rolled.values, rolled.marks, None if kept is None else tuple(kept), total)
        line = _PLAIN_LINES.get(key)
        if line is None:
            if len(_PLAIN_LINES) > 8192:
                _PLAIN_LINES.clear()
            line = _PLAIN_LINES[key] = plain_line(name, rolled.values, rolled.marks, kept,
                                                  facts.get("keep"), total)
        return line
    line = _line(name, facts, rolled, changed, kept, total)
    if len(_SEEN) > 4096:
        _SEEN.clear()
    _SEEN[id(rolled)] = (rolled, changed, total, line)
    return line


_SEEN: dict[int, tuple[Rolled, Changed | None, int, str]] = {}
_PLAIN_LINES: dict[tuple[Any, ...], str] = {}


def _line(name: str, facts: Mapping[str, Any], rolled: Rolled, changed: Changed | None,
          kept: list[bool] | None, total: int) -> str:
    if len(rolled.dice) > 5:
        return _term_line(name, facts, rolled, changed, kept, total)
    key = (name, tuple(rolled), None if changed is None else tuple(changed), total)
    line = _LINES.get(key)
    if line is None:
        if len(_LINES) > 4096:
            _LINES.clear()
        line = _LINES[key] = _term_line(name, facts, rolled, changed, kept, total)
    return line


def _term_line(name: str, facts: Mapping[str, Any], rolled: Rolled, changed: Changed | None,
               kept: list[bool] | None, total: int) -> str:
    marks = [tuple(m.split("+")) if m else () for m in rolled.marks] if rolled.marks else None
    shown = _shown(facts, rolled, changed, marks)
    values: Sequence[int] = rolled.values
    if "sort" in facts:  # sorting changes only the order the dice are shown in
        order = sorted(range(len(values)), key=values.__getitem__, reverse=facts["sort"] == "d")
        values = [values[i] for i in order]
        kept = None if kept is None else [kept[i] for i in order]
        shown = [shown[i] for i in order]
        if marks is not None:
            marks = [marks[i] for i in order]
    faces = ", ".join(shown) or "no dice"
    words = verdict(facts, values, kept, marks or (), total)
    if said_twice(words, faces, values):
        words = ""
    if "match" in facts:
        sets: dict[int, int] = {}
        for v, m in zip(values, marks or ()):
            if "match" in m:
                sets[v] = sets.get(v, 0) + 1
        found = "; ".join(f"{n} × {v}" for v, n in sorted(sets.items())) or "none"
        words += f" (matches of {facts['match']} or more: {found})"
        if facts.get("match_count"):
            words = f" → {total} match{'es' if total != 1 else ''}: {found}"
    return f"{name}: {faces}{words}"


def group_line(name: str, facts: Mapping[str, Any], items: Items) -> str:
    """A group's closing line: ``{d12,d8}kh1: 4, 7 → keep highest 1 → 7`` (remembered: a pure
    function of its step, whose side, the group as written, says its facts)."""
    key = tuple(items)
    line = _GROUPS.get(key)
    if line is None:
        if len(_GROUPS) > 4096:
            _GROUPS.clear()
        line = _GROUPS[key] = _group_line(name, facts, items)
    return line


_GROUPS: dict[tuple[Any, ...], str] = {}


def _group_line(name: str, facts: Mapping[str, Any], items: Items) -> str:
    dropped = set(items.dropped)
    kept = [k not in dropped for k in range(len(items.values))]
    words = verdict(facts, items.values, kept, _marks(items), items.value)
    return f"{name}: {', '.join(number(v) for v in items.values)}{words}"


def headline(v: float) -> str:
    """A total as an inline roll shows it (a fraction to six digits)."""
    if isinstance(v, int):
        return str(v)
    f = Fraction(v).limit_denominator(10**6)
    return number(int(f) if f.denominator == 1 else float(f))


_NO_FACTS: Mapping[str, Any] = {}


def transcript(steps: Iterable[Step]) -> tuple[str, ...]:
    """A general-notation roll's steps in words: the notation, a line per dice term (a group's
    items indented under it), the total; ``Roll n:`` before each roll of a repeated roll."""
    global S
    if S is None:
        S = import_module("..dice.steps", __package__)
    Side, Rolled, Count, Worked = S.Side, S.Rolled, S.Count, S.Worked
    lines: list[str] = []
    facts: dict[str, Mapping[str, Any]] = {}
    base = indent = "  "
    depth, times = 0, 1
    texts: Sequence[str] = ()
    heads: list[str] = []  # what each roll came to, for the inline rolls in a line of text
    totals: list[float] = []
    rolled: Any = None
    changed: Any = None
    step: Any
    for step in steps:
        kind = type(step)
        if kind is Side:
            f = facts[step.side] = S.facts_of(step.facts) if step.facts else _NO_FACTS
            if "items" in f:  # a group: its items' lines go one level in
                lines.append(f"{indent}{step.side}:")
                depth += 1
                indent = base + "  " * depth
        elif kind is Rolled:
            rolled, changed = step, None
        elif kind is Count:
            if step.side:
                lines.append(indent + term_line(step.side, facts[step.side], rolled, changed,
                                                step.value))
            else:  # how many rolls of a repeated comparison held
                heads[-1] = f"{step.value} of {times} succeed"
                lines.append(f"{base[2:]}{heads[-1]}")
        elif kind is Worked:
            v = step.value
            value = str(v) if type(v) is int else number(v)
            what = step.what
            if what == "total" and not step.side:
                lines.append(indent + total_line(step.working, value))
                if times > 1:
                    totals.append(v)
                if texts:
                    heads[-1] = headline(v)
            elif what == "comparison":
                heads[-1] = "success" if v else "failure"
                lines.append(f"{indent}{step.working}: {heads[-1]}")
            elif what == "sum":
                heads[-1] = headline(v)
                lines.append(f"{base[2:]}Totals: {', '.join(number(t) for t in totals)}")
            elif what.startswith("item "):
                lines.append(f"{indent}{what}: {step.working} = {value}"
                             if step.working != value else f"{indent}{what}: {value}")
        elif kind is S.Begin:
            f = S.facts_of(step.facts) if step.facts else _NO_FACTS
            times, totals = f.get("times", 1), []
            if step.kind == "part":
                lines.append(f"Roll {f['part']}: {step.text}")
                base = indent = "    " if times > 1 else "  "
            else:
                lines.append(step.text)
                texts = f.get("texts", ())
            if step.kind != "rolls":
                heads.append("")
        elif kind is S.Items:
            depth -= 1
            indent = base + "  " * depth
            lines.append(indent + group_line(step.side, facts[step.side], step))
        elif kind is S.Changed:
            changed = step
        elif kind is S.Round:
            lines.append(f"{base[2:]}Roll {step.n}:")
    if texts:
        line = texts[0]
        for head, after in zip(heads, texts[1:]):
            line += f"[[{head}]]{after}"
        lines.append(line)
    return tuple(lines)
