"""The dice algebra: what is rolled, written once, read two ways.

A game says how its notation becomes a small *program* of these primitives, and keeps its
verdicts as plain functions of values. The program has two interpreters:

- **sample** (here): faces come from ``Hands`` (the dice tray, or faces typed in at the table),
  in rolling order, and every face and step is kept for the transcript;
- **exact** (``astragal.odds.algebra.law``): the law of the same program, by the fast algorithm
  that fits it (binomial and negative binomial counts, power series for explosion chains,
  convolution), with the probability of any cut tail reported.

The rule functions a primitive calls (``again``, ``score``, ``when``, ``mark``) are the game's
registered rules; both interpreters call the same ones, so a roll and its odds cannot disagree.

Primitives:

- ``Chain(size, again, score, limit=None, reroll=None, reroll_once=False)``: one die and the
  re-rolls it sets off (an explosion chain). The value is the sum of ``score(position, face)``
  over the run; the die is rolled again while ``again(position, face)``, at most ``limit`` times
  when a house rule caps the chain. The first face (position 0) may be read differently from its
  re-rolls; re-rolls (position 1 on) must all be read alike. With ``reroll``, every roll of the
  run (the first and each re-roll) whose face satisfies ``reroll(face)`` is rolled again in place
  before it is read, until it does not (``reroll_once``: once, and the second face stands).
  Scores may be negative, except those of faces that go on after the first.
- ``Reroll(unit, when)``: a die whose first face satisfies ``when`` is rolled once more (the whole
  chain again) and the new chain stands (a rote action; a Favored die is the pool-level cousin).
- ``Marked(unit, mark, check=None)``: the unit's value paired with ``mark(first, checked)``, where
  ``first`` is the first face that stands (a chance die's 1 is a dramatic failure). With ``check``,
  a first face for which ``check(first)`` holds calls for one more die, a *check die* that adds
  nothing and whose face is passed as ``checked`` (a d6 + skill 1 is checked for a Botch);
  otherwise ``checked`` is None.
- ``Drop(pool, highest=True)``: the pool without its highest (or lowest) die: the value is the
  sum of the others (the D6 System's Wild Die complication removes the highest die). ``dropped``
  applies it to a pool already rolled.
- ``Keep(pool, keep, highest=True, read=None)``: the ``keep`` highest (lowest) values of the
  pool's dice, each read by ``read``, summed; the earlier die is kept among equal values (the
  general notation's ``4d6kh3``). ``kept`` applies it to a pool already rolled.
- ``Top(pool)``: the highest value of a pool and how many dice show it (the d6 attack table reads
  its column from them); ``top`` reads it from a pool already rolled.
- ``Pool(dice, unit)``: ``dice`` independent units, rolled first faces first, then each die's
  re-rolls die by die; the value is the sum of the units' values.
- ``Mixed(units)``: dice of several sizes rolled together (``d12 & d8 & d4``), in order.
- ``Favored(pool, order, when)``: after ``pool`` is rolled, the first die in ``order(sizes)``
  whose face satisfies ``when`` is rolled once more and the new face stands (a Jadeclaw Favored
  roll re-rolls one 1, on the largest die showing one).
- ``Highest(pool)``: the highest value among a pool's dice (a Jadeclaw Score).
- ``Least(parts)``: each part rolled in turn; the value is the lowest of theirs, and the first
  part that shows it stands (a Penalty's repeat rolls keep the worst Score).
- ``Paired(attack, defence, pair, filler, bonus)``: both pools sorted high → low and paired by
  rank; the value is the sum of ``pair(a, d)`` over the pairs, a surplus attack die meeting the
  face ``filler`` and surplus defence dice ignored, plus ``bonus(highest defence value)`` when
  both pools have dice (Jadeclaw damage against soak).

``generic`` readings shared by games: ``never`` (a die that is not rolled again) and ``face``
(a face is worth its number).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import lru_cache
from typing import Any, Protocol, overload

from .._errors import LimitError
from .._limits import DEFAULT_LIMITS, Limits
from .._records import Record

__all__ = ["Chain", "DieRecord", "Drop", "Favored", "Hands", "Highest", "Keep", "Least",
           "LeastRecord", "Marked", "Mixed", "Paired", "PairedRecord", "Pool", "PoolRecord",
           "Program", "Reading", "Reroll", "Top", "Unit", "die", "dropped", "face", "favored",
           "highest", "kept", "least", "never", "paired", "sample", "sample_chain", "sample_die",
           "top"]


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


# The primitives are immutable records, equal (and hashed alike) only within their own type, so
# that a program is a cache key for its law (``astragal._records.typed``).


class Chain(Record):
    """One ``size``-sided die rolled again while ``again(position, face)`` holds."""

    size: int
    again: Callable[[int, int], bool]
    score: Callable[[int, int], int]
    note: str = "re-roll"
    limit: int | None = None  # at most this many re-rolls (a house rule's cap); None: no cap
    reroll: Callable[[int], bool] | None = None  # a face rolled again in place before it is read
    reroll_once: bool = False  # ``reroll`` at most once per roll


class Reroll(Record):
    """``unit``, rolled once more (and the new roll stands) when its first face is ``when``."""

    unit: Chain
    when: Callable[[int], bool]
    note: str = "re-roll"


class Marked(Record):
    """``unit``'s value, paired with ``mark(first face that stands, check die's face or None)``."""

    unit: Chain | Reroll
    mark: Callable[[int, int | None], Hashable]
    check: Callable[[int], bool] | None = None
    note: str = "check"


Unit = Chain | Reroll | Marked


class Pool(Record):
    """``dice`` independent copies of ``unit``, their values summed."""

    dice: int
    unit: Chain | Reroll


class Reading:
    """A rule read at each face (``again``, ``score``, ``when``, ``mark``): a small callable that
    holds the switches it needs. Equal when of one class with equal settings, so that programs
    (and the laws cached for them) are equal exactly when they read faces alike; cheaper to
    define than a dataclass, which matters to a game's first call."""

    __slots__ = ("_hash", "settings")

    def __init__(self, *settings: Any) -> None:
        self.settings: tuple[Any, ...] = settings
        self._hash: int | None = None

    def __eq__(self, other: object) -> bool:
        return other is self or isinstance(other, Reading) and type(other) is type(self) and (
            other.settings == self.settings)

    def __hash__(self) -> int:  # made once: a program is hashed at every law it is looked up by
        if self._hash is None:
            self._hash = hash((type(self), self.settings))
        return self._hash

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self.settings!r}"


class Drop(Record):
    """``pool`` without its highest die (``highest=False``: its lowest); the value is the rest's."""

    pool: Pool
    highest: bool = True


class Keep(Record):
    """The ``keep`` highest (``highest=False``: lowest) values among ``pool``'s dice, each read by
    ``read`` (None: its value), summed; among equal values the earlier die is kept."""

    pool: Pool
    keep: int
    highest: bool = True
    read: Callable[[int], int] | None = None


class Top(Record):
    """The highest value of ``pool`` and how many of its dice show it: ``(value, count)``."""

    pool: Pool


class _Never(Reading):
    """A die that is not rolled again."""

    __slots__ = ()

    def __call__(self, position: int, face: int) -> bool:
        return False


class _Face(Reading):
    """A face is worth its number."""

    __slots__ = ()

    def __call__(self, position: int, face: int) -> int:
        return face


never = _Never()
face = _Face()


_DICE: dict[int, Chain] = {}


def die(size: int) -> Chain:
    """A plain ``size``-sided die: rolled once, worth its face."""
    hit = _DICE.get(size)
    if hit is None:
        hit = _DICE[size] = Chain(size, never, face)
    return hit


class Mixed(Record):
    """Dice of several sizes rolled together, in the order given."""

    units: tuple[Chain, ...]


class Favored(Record):
    """``pool``, then the first die in ``order(sizes)`` whose face satisfies ``when`` rolled once
    more (the new face stands, whatever it shows)."""

    pool: Mixed
    order: Callable[[tuple[int, ...]], tuple[int, ...]]
    when: Callable[[int], bool]
    note: str = "re-roll"


Side = Mixed | Favored


class Highest(Record):
    """The highest value among the dice of ``pool`` (0 for no dice)."""

    pool: Side


class Least(Record):
    """``parts`` rolled in turn; the lowest value stands (the first part showing it)."""

    parts: tuple[Highest, ...]


class Paired(Record):
    """Two pools sorted high → low and paired by rank (see the module's docstring)."""

    attack: Side
    defence: Side
    pair: Callable[[int, int], int]
    filler: int
    bonus: Callable[[int], int]


# --------------------------------------------------------------------------------------------
# The sample interpreter


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


def kept(record: PoolRecord, keep: int, highest: bool = True,
         read: Callable[[int], int] | None = None) -> PoolRecord:
    """``record`` read by ``Keep``: the dice not kept are dropped (in rolling order), the value
    is the kept dice's, each read by ``read``."""
    values = [d.value for d in record.dice]
    # Python's sort is stable in reverse too: among equal values the earlier die comes first
    order = sorted(range(len(values)), key=values.__getitem__, reverse=highest)
    out = set(order[max(0, keep):])
    value = sum(v if read is None else read(v) for i, v in enumerate(values) if i not in out)
    return PoolRecord(record.dice, value, tuple(sorted(out)))


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


Program = Pool | Drop | Keep | Unit | Mixed | Favored | Highest | Least | Paired


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
        return kept(sample(program.pool, hands, limits), program.keep, program.highest,
                    program.read)
    if isinstance(program, Pool):
        chain, reroll, marked = _parts(program.unit)
        ids = [hands.new(chain.size) for _ in range(program.dice)]
    else:
        chain, reroll, marked = _parts(program)
        ids = [hands.new(chain.size)]
    dice = tuple([_die(chain, reroll, marked, hands, i, limits) for i in ids])
    return PoolRecord(dice, sum(d.value for d in dice))
