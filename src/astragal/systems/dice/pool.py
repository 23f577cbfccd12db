"""Rolling one dice term with a ``Tray``: every face in rolling order, recorded as steps.

A term's dice are rolled die by die from its program (``program.die_chain``: rules N1 and N2),
then ``mi``/``ma`` (N3), keep/drop (N4, N5) and the count (N6) are read; the steps it records
(``Side``, ``Rolled``, ``Changed``, ``Count``) are put into words by ``render.dice``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import LimitError
from ..._limits import Limits
from ..._memo import by_identity
from ...dice import Tray
from ...dice import steps as S
from ...dice.algebra import Chain
from ...dice.sampler import sample_chain
from .nodes import FUDGE, Compare, Dice, Group, Keep
from .program import die_chain
from .rules import clamp, critical, explodes, face_value, kept_flags, matches, score, term_value

__all__ = ["RUNS", "group_items", "keep_fact", "roll_term", "side_step"]

_EACH_ROLL_A_DIE = ("explode", "penetrate", "once")  # explosions add dice; ``!!`` adds to one
_PROGRAMS: dict[int, tuple[Dice, tuple[Chain, tuple[int | None, ...] | None]]] = {}
_SIDES: dict[tuple[int, str], tuple[Dice | Group, S.Side]] = {}


def forget() -> None:
    """Forget the programs made per term and what terms read from their faces (tests that swap
    a rule call this)."""
    _PROGRAMS.clear()
    _ONE_FACE.clear()
    _HELD[0] = 0


def _program_of(d: Dice) -> tuple[Chain, tuple[int | None, ...] | None]:
    """``die_chain(d)``, remembered per parsed term (parsed trees are cached and immutable),
    with what each first face of a small die is worth when its chain stops there (``None``:
    it goes on, or is re-rolled in place): the chain read once per face, not at every die."""
    def make() -> tuple[Chain, tuple[int | None, ...] | None]:
        chain = die_chain(d)
        if chain.size > 64 or chain.reroll is not None:
            return chain, None
        again, score = chain.again, chain.score
        return chain, (None, *[None if again(0, f) else score(0, f)
                              for f in range(1, chain.size + 1)])
    return by_identity(_PROGRAMS, id(d), d, make, 4096)


def _compare(c: Compare) -> tuple[str, int]:
    return c.op, c.value


def keep_fact(keep: Keep) -> tuple[Any, ...]:
    """A keep as a ``Side`` fact: ``("kh", 3)``, or ``("k", ">", 3)`` for a keep by value."""
    return (keep.how, keep.n) if keep.cond is None else (keep.how, *_compare(keep.cond))


def side_step(term: Dice | Group, name: str, label: str) -> S.Side:
    """The ``Side`` step of a term or group: its settings as facts (remembered per term)."""
    key = (id(term), label)
    hit = _SIDES.get(key)
    if hit is not None and hit[0] is term:
        return hit[1]
    facts: list[tuple[str, Any]] = [("label", label)] if label else []
    if isinstance(term, Group):
        facts.append(("items", len(term.items)))
    else:
        facts += [(k, v) for k, v in (("explode", term.explode), ("min", term.minimum),
                                      ("max", term.maximum)) if v is not None]
    if term.keep is not None:
        facts.append(("keep", keep_fact(term.keep)))
    facts += [(k, _compare(c)) for k, c in (("success", term.success), ("failure", term.failure),
                                            ("double", term.double)) if c is not None]
    if isinstance(term, Dice) and term.match:
        facts += [("match", term.match)] + ([("match_count", True)] if term.match_count else [])
    if term.sort:
        facts.append(("sort", term.sort))
    step = S.Side(name, term.count if isinstance(term, Dice) else 0, tuple(facts))
    if len(_SIDES) > 4096:
        _SIDES.clear()
    _SIDES[key] = (term, step)
    return step


class _Runs(dict[int, tuple[tuple[int, ...], ...]]):
    """A plain die's runs (its one face), made once per face."""

    def __missing__(self, face: int) -> tuple[tuple[int, ...], ...]:
        runs = self[face] = ((face,),)
        return runs


RUNS = _Runs()


class _Die:
    """One die of a term as it stands: its tray index, its faces as shown (in runs: a re-roll
    starts one), its value and its marks."""

    __slots__ = ("index", "marks", "runs", "value")

    def __init__(self, index: int, runs: tuple[tuple[int, ...], ...], value: int,
                 marks: list[str] | None = None) -> None:
        self.index, self.runs, self.value = index, runs, value
        self.marks = marks if marks is not None else []


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


def _chain(d: Dice, program: Chain, hands: _TermHands, limits: Limits, text: str,
           out: list[_Die], first: int) -> None:
    """Rules 1 and 2: one die (rolled: the tray's die ``first``), its re-rolls and everything
    its explosions add, rolled by the dice algebra's program for it (``program.die_chain``),
    die by die."""
    hands.rolls = [(first, [hands.tray.face(first)])]
    try:
        faces, total = sample_chain(program, hands, first, limits)
    except LimitError as exc:
        what = "exploded" if "exploded" in exc.message else "was re-rolled"
        raise LimitError(f"a {d.die_text()} {what} more than {limits.max_explosions} times "
                         "(the limit)", text, d.span) from None
    rolls = hands.rolls
    plain = not d.custom and d.sides != FUDGE  # the tray's face is the die's
    if len(rolls) == 1:  # no explosion: the face that stands
        seen = rolls[0][1]
        if len(seen) == 1:
            out.append(_Die(first, RUNS[seen[0] if plain else face_value(d, seen[0])], total))
        else:
            out.append(_Die(first, tuple([(f if plain else face_value(d, f),) for f in seen]),
                            total))
        return
    shown = [seen if plain else [face_value(d, f) for f in seen] for _, seen in rolls]
    if d.explode == "compound":  # one die: a re-roll starts a run, a roll again adds to it
        runs = [[shown[0][0]]]
        for j, seen in enumerate(shown):
            for k, f in enumerate(seen):
                if k:
                    runs.append([f])
                elif j:
                    runs[-1].append(f)
        out.append(_Die(first, tuple(map(tuple, runs)), total))
        return
    penetrates = d.explode == "penetrate"
    for i, ((index, _), seen, raw) in enumerate(zip(rolls, shown, faces)):
        value = program.score(i, raw) if penetrates else seen[-1]  # what the roll adds
        out.append(_Die(index, tuple((f,) for f in seen), value, ["explosion"] if i else None))


def _success_marks(term: Dice | Group, values: Sequence[Any], kept: Sequence[bool],
                   marks: Sequence[list[str]]) -> None:
    """N6 read on each kept die or item: ``success``, ``double``, ``failure``."""
    success, double, failure = term.success, term.double, term.failure
    assert success is not None
    for v, k, m in zip(values, kept, marks):
        if k:
            if success(v):
                m.append("success")
                if double is not None and double(v):
                    m.append("double")
            if failure is not None and failure(v):
                m.append("failure")


def _pool(tray: Tray, limits: Limits, text: str, d: Dice, name: str) -> list[_Die]:
    """Rules 1 and 2 (and ``ra``) for each die of a term that explodes or re-rolls, or whose
    faces are not its tray faces."""
    pool: list[_Die] = []
    program, stops = _program_of(d)
    hands = _TermHands(tray, d, name, d.explode in _EACH_ROLL_A_DIE)
    roll, face, size = tray.roll, tray.face, program.size
    plain = not d.custom and d.sides != FUDGE  # the tray's face is the die's
    for _ in range(d.count):
        first = roll(size, name)
        if stops is not None:
            f = face(first)
            value = stops[f]
            if value is not None:  # the face stands: no explosion, no re-roll
                pool.append(_Die(first, RUNS[f if plain else face_value(d, f)], value))
                continue
        _chain(d, program, hands, limits, text, pool, first)
    if d.explode == "add":
        # ra: the first die that matches is rolled again, and the new die is added
        matching = next((x for x in pool if explodes(d, x.value)), None)
        if matching is not None:
            matching.marks.append("ra")
            _chain(d, program, hands, limits, text, pool, roll(size, name, 0, "re-roll and add"))
            pool[-1].marks.append("added")
    return pool


def roll_term(tray: Tray, limits: Limits, text: str, d: Dice, name: str,
              steps: list[S.Step]) -> int:
    """Roll the dice term ``d`` into the tray's group ``name``, recording its steps after its
    ``Side``; returns what it comes to."""
    if d.explode is None and not d.reroll and d.sides != FUDGE and not d.custom:
        return _one_face(d, name).roll(tray, steps)
    pool = _pool(tray, limits, text, d, name)
    indices = tuple([x.index for x in pool])
    read = _read(d, name, indices, [x.value for x in pool], tuple([x.runs for x in pool]),
                 [x.marks for x in pool], [face_value(d, tray.face(i)) for i in indices])
    joins = {x.index: _joined(d, x) for x in pool}
    return _apply(read, tray, steps, joins, FUDGE_LABELS if d.sides == FUDGE else None)


FUDGE_LABELS = {1: "−", 2: "blank", 3: "+"}  # a Fudge die's faces, by the tray's face


def _joined(d: Dice, x: _Die) -> tuple[str, str]:
    """A die's ``joined`` and ``added`` facts: how its later faces go with its first (a
    compounding die's add up, a re-roll's replace), and whether an explosion added it."""
    joined = ""
    if d.explode == "compound" and any(len(run) > 1 for run in x.runs):
        joined = "compounded"
    elif len(x.runs) > 1:
        joined = "rerolled"
    added = ""
    if "explosion" in x.marks or "added" in x.marks:
        added = "penetrated" if d.explode == "penetrate" else "exploded"
    return joined, added


# A term's reading: its steps, what it comes to, the dice to mark (index, critical, fumble), the
# dice dropped, and each die's worth (index, what it counts, its tone) where that is not its face
_Read = tuple[tuple[S.Step, ...], int, tuple[tuple[int, bool, bool], ...], tuple[int, ...],
              tuple[tuple[int, int | None, str], ...]]


def _apply(read: _Read, tray: Tray, steps: list[S.Step],
           joins: dict[int, tuple[str, str]] | None = None,
           labels: dict[int, str] | None = None) -> int:
    """A term's reading on the tray (its crits and fumbles marked, its dropped dice struck, each
    die's facts recorded) and in the steps; returns what it comes to."""
    new_steps, total, crits, dropped, worth = read
    for i, crit, fumble in crits:
        tray.mark(i, crit, fumble)
    for i in dropped:
        tray.drop(i, "dropped")
    if joins or worth or labels:
        scored = {i: (w, tone) for i, w, tone in worth}
        for i in (joins or dict.fromkeys(scored)):
            joined, added = joins.get(i, ("", "")) if joins else ("", "")
            w, tone = scored.get(i, (None, ""))
            if joined or added or w is not None or tone or labels:
                tray.facts(i, joined, added, w, labels[tray.face(i)] if labels else "", tone)
    steps += new_steps
    return total


class _OneFace:
    """A term whose dice show one face each and count it (no explosion or re-roll: ``4d6kh3``,
    ``2d20kh1``, ``4d6mi2``, ``8d10>=8``): what it reads from its faces (its steps, marks and
    drops: a pure function of them) is remembered per faces and the term's place in the tray
    (up to ``MOST`` readings a term)."""

    __slots__ = ("count", "d", "kept", "memo", "name", "sides")
    MOST = 8192

    def __init__(self, d: Dice, name: str) -> None:
        self.d, self.name, self.count, self.sides = d, name, d.count, d.sides
        self.memo: dict[tuple[int, ...], dict[int, _Read]] = {}
        self.kept = 0

    def roll(self, tray: Tray, steps: list[S.Step]) -> int:
        new, face, size, name = tray.roll, tray.face, self.sides, self.name
        first = len(tray)
        faces = tuple([face(new(size, name)) for _ in range(self.count)])
        at = self.memo.get(faces)
        read = None if at is None else at.get(first)
        if read is None:
            indices = tuple(range(first, first + len(faces)))
            read = _read(self.d, name, indices, list(faces), tuple(map(RUNS.__getitem__, faces)),
                         None, faces)
            if self.kept < self.MOST:
                self.kept += 1
                self.memo.setdefault(faces, {})[first] = read
                _HELD[0] += 1
                if _HELD[0] > _MOST_IN_ALL:  # a server rolling many terms: start again
                    _HELD[0] = 0
                    _ONE_FACE.clear()
        return _apply(read, tray, steps)


_ONE_FACE: dict[tuple[int, str], tuple[Dice, _OneFace]] = {}
_MOST_IN_ALL = 65_536  # readings held by every term together (a few hundred bytes each)
_HELD = [0]


def _one_face(d: Dice, name: str) -> _OneFace:
    return by_identity(_ONE_FACE, (id(d), name), d, lambda: _OneFace(d, name))


def _read(d: Dice, name: str, indices: tuple[int, ...], values: list[int],
          runs: tuple[tuple[tuple[int, ...], ...], ...], marks: list[list[str]] | None,
          naturals: Sequence[int]) -> _Read:
    """What a term's dice come to: crits and fumbles on each die's natural face, ``mi``/``ma``
    (N3), keep/drop (N4, N5), successes (N6) and matches; its steps, the dice to mark (index,
    critical, fumble) and the dice dropped."""
    crits: list[tuple[int, bool, bool]] = []
    if d.crit is not None or d.fumble is not None or (d.sides == 20 and not d.custom):
        for k, (i, natural) in enumerate(zip(indices, naturals)):
            crit, fumble = critical(d, natural)
            if crit or fumble:
                crits.append((i, crit, fumble))
                if marks is None:
                    marks = [[] for _ in indices]
                marks[k] += ["critical"] * crit + ["fumble"] * fumble
    changed = None
    if d.minimum is not None or d.maximum is not None:
        after = [int(clamp(d, v)) for v in values]
        moved = [k for k, (v, c) in enumerate(zip(values, after)) if v != c]
        if moved:
            changed = S.Changed(name, tuple(indices[k] for k in moved),
                                tuple(values[k] for k in moved), tuple(after[k] for k in moved),
                                "N3")
        values = after
    kept = kept_flags(values, d.keep)
    dropped: tuple[int, ...] = ()
    if d.keep is not None:
        dropped = tuple([i for i, k in zip(indices, kept) if not k])
    total = term_value(d, values, kept)
    what, rule = "total", ""
    if d.success is not None or d.match:
        if marks is None:
            marks = [[] for _ in indices]
        if d.success is not None:
            _success_marks(d, values, kept, marks)
            what, rule = "successes", "N6"
        if d.match:
            sets = matches(values, d.match)
            for _, where in sets:
                for k in where:
                    marks[k].append("match")
            if d.match_count:
                total, what = len(sets), "matches"
    steps: list[S.Step] = [S.Rolled(
        name, indices, runs, tuple(values),
        tuple(["+".join(m) for m in marks]) if marks and any(marks) else (),
        "N3" if changed is not None else "N0" if d.custom or d.sides == FUDGE else "",
        "N2" if d.explode else "", "N1" if d.reroll else "", dropped,
        ("N5" if d.keep.by_value else "N4") if dropped and d.keep else "")]
    if changed is not None:
        steps.append(changed)
    steps.append(S.Count(name, what, int(total), rule))
    return tuple(steps), int(total), tuple(crits), dropped, _worth(d, indices, values, kept,
                                                                  naturals)


def _worth(d: Dice, indices: tuple[int, ...], values: Sequence[Any], kept: Sequence[bool],
           naturals: Sequence[int]) -> tuple[tuple[int, int | None, str], ...]:
    """Each kept die's worth where it is not its face: a success count's 1 or 0 (2 for a
    double, less 1 for a failure: toned good or bad), else its value after explosions,
    penetration, ``mi``/``ma`` or a Fudge face."""
    out: list[tuple[int, int | None, str]] = []
    for i, v, k, natural in zip(indices, values, kept, naturals):
        if not k:
            continue
        if d.success is not None:
            s = score(d, v)
            out.append((i, s, "good" if s > 0 else "bad" if s < 0 else ""))
        elif v != natural or d.sides == FUDGE or d.custom:
            out.append((i, int(v), ""))
    return tuple(out)


def group_items(g: Group, name: str, values: Sequence[Any], kept: Sequence[bool], total: Any,
                json: Any) -> S.Items:
    """The ``Items`` step of a group whose items came to ``values``."""
    marked: tuple[str, ...] = ()
    if g.success is not None:
        marks: list[list[str]] = [[] for _ in values]
        _success_marks(g, values, kept, marks)
        marked = tuple(["+".join(m) for m in marks]) if any(marks) else ()
    dropped = tuple([k for k, keep in enumerate(kept) if not keep]) if g.keep is not None else ()
    return S.Items(name, tuple(map(json, values)), json(total),
                   "N6" if g.success is not None else "", marked, dropped,
                   ("N5" if g.keep is not None and g.keep.by_value else "N4") if dropped else "")
