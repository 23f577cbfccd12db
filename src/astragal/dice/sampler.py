"""The sample interpreter of the dice algebra (``astragal.dice.algebra``): a program rolled with
faces from ``Hands`` (the dice tray, or faces typed in at the table), in rolling order, every face
and step kept for the transcript. ``astragal.odds.algebra.law`` is the exact interpreter of the
same programs; both call the same rule functions.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import lru_cache
from typing import Any, Protocol, overload

from .._errors import LimitError
from .._limits import DEFAULT_LIMITS, Limits
from .._records import Record
from .algebra import (
    Chain,
    Drop,
    Favored,
    Highest,
    Keep,
    Least,
    Marked,
    Mixed,
    Paired,
    Pool,
    Program,
    Reroll,
    Unit,
    face,
    keep_flags,
    never,
)

__all__ = ["DieRecord", "Hands", "LeastRecord", "PairedRecord", "PoolRecord", "dropped",
           "favored", "highest", "kept", "least", "paired", "sample", "sample_chain",
           "sample_die", "top"]


class Hands(Protocol):
    """Where faces come from: a new die of ``size`` sides, re-rolls of a die already on the
    table, its face."""

    def new(self, size: int) -> int: ...

    def again(self, die: int, note: str) -> int: ...

    def face(self, die: int) -> int: ...


# A re-roll in place (``Chain.reroll``) calls ``hands.redo(die, note)`` where the hands have it:
# the latest roll of the die's run rolled again, its new face standing. Hands that keep one face
# per die (every game's but the dice tray's, whose explosion faces may be dice of their own) do
# that with ``again``.


class DieRecord(Record):
    """One die as it landed: its runs (a first face and the re-rolls it set off; a second run
    when it was rolled once more), and the value of the run that stands."""

    runs: tuple[tuple[int, ...], ...]
    value: int
    mark: Hashable = None
    checked: int | None = None  # the check die's face (``Marked.check``), if one was rolled

    @property
    def standing(self) -> tuple[int, ...]:
        """The run that stands."""
        return self.runs[-1]


class PoolRecord(Record):
    """A pool as it landed: each die's record, the pool's value and the dice it dropped."""

    dice: tuple[DieRecord, ...]
    value: int
    dropped: tuple[int, ...] = ()


def _kept(chain: Chain, hands: Hands, die: int, face: int, limits: Limits) -> int:
    """The face of one roll after the chain's re-roll in place (``Chain.reroll``)."""
    reroll = chain.reroll
    if reroll is None:
        return face
    redo = getattr(hands, "redo", hands.again)
    times = 0
    while reroll(face):
        if times >= limits.max_explosions:
            raise LimitError(f"a die was re-rolled more than {limits.max_explosions} times: the "
                             "limit of re-rolls per die")
        times += 1
        face = redo(die, f"re-rolled {face}")
        if chain.reroll_once:
            break
    return face


_TABLE_UP_TO = 64  # dice this large or smaller are read from a table of their faces


@lru_cache(maxsize=256)
def _table(chain: Chain) -> tuple[tuple[bool, ...], tuple[bool, ...], tuple[int, ...],
                                  tuple[int, ...]]:
    """``again`` and ``score`` read once on every face of a small die, at the first face and at a
    re-roll (re-rolls are all read alike): what a run does with each face, by index."""
    faces = range(chain.size + 1)  # index 0 unused
    again, score = chain.again, chain.score
    return (tuple(bool(f) and again(0, f) for f in faces),
            tuple(bool(f) and again(1, f) for f in faces),
            tuple(score(0, f) if f else 0 for f in faces),
            tuple(score(1, f) if f else 0 for f in faces))


def _run(chain: Chain, hands: Hands, die: int, first: int,
         limits: Limits) -> tuple[tuple[int, ...], int]:
    """A die's chain from its first face: the faces, and their value."""
    if chain.reroll is not None:
        first = _kept(chain, hands, die, first, limits)
    if chain.again is never:  # rolled once
        return (first,), chain.score(0, first)
    if chain.size <= _TABLE_UP_TO:
        goes_first, goes, scores_first, scores = _table(chain)
    else:
        goes_first, goes = _Reader(chain.again, 0), _Reader(chain.again, 1)  # type: ignore[assignment]
        scores_first, scores = _Reader(chain.score, 0), _Reader(chain.score, 1)  # type: ignore[assignment]
    faces = [first]
    value = scores_first[first]
    go = goes_first[first]
    cap = chain.limit
    while go and (cap is None or len(faces) <= cap):
        if len(faces) > limits.max_explosions:
            raise LimitError(f"a die exploded (was rolled again) more than "
                             f"{limits.max_explosions} times: the limit of explosions per die")
        face = hands.again(die, chain.note)
        if chain.reroll is not None:
            face = _kept(chain, hands, die, face, limits)
        value += scores[face]
        faces.append(face)
        go = goes[face]
    return tuple(faces), value


class _Reader:
    """A reading indexed like a table (a large die's faces are read as they come)."""

    __slots__ = ("position", "read")

    def __init__(self, read: Callable[[int, int], Any], position: int) -> None:
        self.read, self.position = read, position

    def __getitem__(self, face: int) -> Any:
        return self.read(self.position, face)


def _parts(unit: Unit) -> tuple[Chain, Reroll | None, Marked | None]:
    marked = unit if isinstance(unit, Marked) else None
    inner = unit.unit if isinstance(unit, Marked) else unit
    reroll = inner if isinstance(inner, Reroll) else None
    return (inner.unit if isinstance(inner, Reroll) else inner), reroll, marked


def _die(chain: Chain, reroll: Reroll | None, marked: Marked | None, hands: Hands, die: int,
         limits: Limits) -> DieRecord:
    runs = [_run(chain, hands, die, hands.face(die), limits)]
    first = runs[0][0][0]  # the first face after any re-roll in place
    if reroll is not None and reroll.when(first):
        runs.append(_run(chain, hands, die, hands.again(die, reroll.note), limits))
    faces = tuple(run for run, _ in runs)
    value = runs[-1][1]
    if marked is None:
        return DieRecord(faces, value)
    standing = faces[-1][0]
    checked = None
    if marked.check is not None and marked.check(standing):
        checked = hands.again(die, marked.note)
    return DieRecord(faces, value, marked.mark(standing, checked), checked)


def sample_die(unit: Unit, hands: Hands, die: int, limits: Limits = DEFAULT_LIMITS) -> DieRecord:
    """Carry on a die already on the table (its first face shown) by ``unit``'s rules."""
    return _die(*_parts(unit), hands, die, limits)


def sample_chain(chain: Chain, hands: Hands, die: int,
                 limits: Limits = DEFAULT_LIMITS) -> tuple[tuple[int, ...], int]:
    """``sample_die`` for a bare ``Chain``: the face that stood on each roll of the run, and the
    run's value."""
    return _run(chain, hands, die, hands.face(die), limits)


def dropped(record: PoolRecord, highest: bool = True) -> PoolRecord:
    """``record`` without its highest (lowest) die: the first of the dice of that value."""
    if not record.dice:
        return record
    values = [d.value for d in record.dice]
    pick = (max if highest else min)(range(len(values)), key=lambda i: (values[i], -i)
                                     if highest else (values[i], i))
    return PoolRecord(record.dice, record.value - values[pick], record.dropped + (pick,))


def kept(program: Keep, record: PoolRecord) -> PoolRecord:
    """``record`` (``program.pool`` rolled) read by ``program``: the values not kept are dropped,
    the value is the kept ones', each read by ``program.read``. ``dropped`` numbers the values
    in rolling order: one a die, or with ``each`` one a roll (each die's rolls in turn)."""
    if program.each:
        score = _parts(program.pool.unit)[0].score
        values = [score(1 if j else 0, f) for d in record.dice for j, f in enumerate(d.standing)]
    else:
        values = [d.value for d in record.dice]
    flags = keep_flags(values, program.keep, program.highest, program.dropping)
    read = program.read
    value = sum([v if read is None else read(v) for v, k in zip(values, flags) if k])
    return PoolRecord(record.dice, value, tuple([i for i, k in enumerate(flags) if not k]))


def top(*records: PoolRecord) -> tuple[int, int]:
    """The highest value over the dice of ``records`` and how many show it ((0, 0): no dice)."""
    values = [d.value for r in records for d in r.dice]
    if not values:
        return 0, 0
    high = max(values)
    return high, values.count(high)


class LeastRecord(Record):
    """Parts rolled in turn: each part's record, the lowest value, and which part stands."""

    parts: tuple[PoolRecord, ...]
    value: int
    stands: int


class PairedRecord(Record):
    """Two pools paired by rank: (attack value, defence value or None for the filler, score) per
    pair, high → low, the bonus read from the defence, and the total."""

    attack: PoolRecord
    defence: PoolRecord
    pairs: tuple[tuple[int, int | None, int], ...]
    bonus: int
    value: int


def favored(program: Favored, faces: tuple[int, ...]) -> int | None:
    """Which die of a Favored pool that showed ``faces`` is rolled once more (None: none)."""
    sizes = tuple(u.size for u in program.pool.units)
    for i in program.order(sizes):
        if program.when(faces[i]):
            return i
    return None


def _side(program: Mixed | Favored, hands: Hands, limits: Limits) -> PoolRecord:
    pool = program.pool if isinstance(program, Favored) else program
    new, shown, make = hands.new, hands.face, tuple.__new__
    ids = [new(u.size) for u in pool.units]
    dice: list[DieRecord] = []
    for u, i in zip(pool.units, ids):
        if u.again is never and u.score is face and u.reroll is None:  # a plain die: its face
            f = shown(i)
            dice.append(make(DieRecord, (((f,),), f, None, None)))
        else:
            dice.append(_die(u, None, None, hands, i, limits))
    if isinstance(program, Favored):
        j = favored(program, tuple(d.runs[0][0] for d in dice))
        if j is not None:
            run, value = _run(pool.units[j], hands, ids[j], hands.again(ids[j], program.note),
                              limits)
            dice[j] = DieRecord(dice[j].runs + (run,), value)
    return PoolRecord(tuple(dice), sum(d.value for d in dice))


def highest(record: PoolRecord) -> PoolRecord:
    """A rolled pool read by ``Highest``: its value is its highest die's (0 for no dice)."""
    top = max([d[1] for d in record.dice], default=0)
    return tuple.__new__(PoolRecord, (record.dice, top, record.dropped))


def least(records: tuple[PoolRecord, ...]) -> LeastRecord:
    """Rolled parts read by ``Least``: the first of the lowest stands."""
    values = [r.value for r in records]
    stands = values.index(min(values))
    return LeastRecord(records, values[stands], stands)


def paired(program: Paired, attack: PoolRecord, defence: PoolRecord) -> PairedRecord:
    """Two rolled pools read by ``Paired``: sorted high → low, paired by rank."""
    a = sorted([x[1] for x in attack.dice], reverse=True)
    d = sorted([x[1] for x in defence.dice], reverse=True)
    pair, filler, m = program.pair, program.filler, len(d)
    pairs = []
    total = 0
    for i, x in enumerate(a):
        score = pair(x, d[i]) if i < m else pair(x, filler)
        pairs.append((x, d[i] if i < m else None, score))
        total += score
    bonus = program.bonus(d[0]) if a and d else 0
    return PairedRecord(attack, defence, tuple(pairs), bonus, total + bonus)




@overload
def sample(program: Least, hands: Hands, limits: Limits = ...) -> LeastRecord: ...


@overload
def sample(program: Paired, hands: Hands, limits: Limits = ...) -> PairedRecord: ...


@overload
def sample(program: Pool | Drop | Keep | Unit | Mixed | Favored | Highest, hands: Hands,
           limits: Limits = ...) -> PoolRecord: ...


def sample(program: Program, hands: Hands,
           limits: Limits = DEFAULT_LIMITS) -> PoolRecord | LeastRecord | PairedRecord:
    """Roll ``program`` with faces from ``hands``: every die's first face left to right, then each
    die's re-rolls as they happen, die by die (a ``Favored`` re-roll after the whole pool; the
    parts of ``Least`` and the pools of ``Paired`` one after the other). A ``PoolRecord`` (a
    ``LeastRecord`` for ``Least``, a ``PairedRecord`` for ``Paired``)."""
    if isinstance(program, Mixed | Favored):
        return _side(program, hands, limits)
    if isinstance(program, Highest):
        return highest(_side(program.pool, hands, limits))
    if isinstance(program, Least):
        return least(tuple(sample(p, hands, limits) for p in program.parts))
    if isinstance(program, Paired):
        attack = _side(program.attack, hands, limits)
        return paired(program, attack, _side(program.defence, hands, limits))
    if isinstance(program, Drop):
        return dropped(sample(program.pool, hands, limits), program.highest)
    if isinstance(program, Keep):
        return kept(program, sample(program.pool, hands, limits))
    if isinstance(program, Pool):
        chain, reroll, marked = _parts(program.unit)
        ids = [hands.new(chain.size) for _ in range(program.dice)]
    else:
        chain, reroll, marked = _parts(program)
        ids = [hands.new(chain.size)]
    dice = tuple([_die(chain, reroll, marked, hands, i, limits) for i in ids])
    return PoolRecord(dice, sum(d.value for d in dice))
