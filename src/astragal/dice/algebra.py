"""The dice algebra: what is rolled, written once, read two ways.

A game says how its notation becomes a small *program* of these primitives, and keeps its
verdicts as plain functions of values. The program has two interpreters:

- **sample** (``astragal.dice.sampler.sample``): faces come from ``Hands`` (the dice tray, or faces typed in at the table),
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
- ``Keep(pool, keep, highest=True, read=None, dropping=False, each=False)``: the ``keep`` highest
  (lowest) values of the pool's dice, each read by ``read``, summed; the earlier die is kept among
  equal values (the general notation's ``4d6kh3``). ``dropping``: all but the ``keep`` values at
  the other end (``4d6dl1``, however many dice the pool comes to). ``each``: every roll of a
  die's chain is a die of its own, worth its own score (an explosion adds a die: ``4d6!kh3``).
  ``kept`` applies it to a pool already rolled; ``keep_flags`` says which values it keeps.
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

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from .._records import Record

__all__ = ["Chain", "Drop", "Favored", "Highest", "Keep", "Least", "Marked", "Mixed", "Paired",
           "Pool", "Program", "Reading", "Reroll", "Side", "Top", "Unit", "die", "face",
           "keep_flags", "kept_count", "never"]


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
    ``read`` (None: its value), summed; among equal values the earlier die is kept. ``dropping``:
    all the dice but ``keep`` at the other end. ``each``: each roll of a die's chain (its first
    face, each explosion) is a die of its own, worth its score at its position."""

    pool: Pool
    keep: int
    highest: bool = True
    read: Callable[[int], int] | None = None
    dropping: bool = False
    each: bool = False


def kept_count(total: int, keep: int, dropping: bool = False) -> int:
    """How many of ``total`` dice a ``Keep`` of ``keep`` keeps: all of them when more are asked
    for; with ``dropping``, all but ``keep``."""
    return max(0, total - keep) if dropping else max(0, min(keep, total))


def keep_flags(values: Sequence[Any], keep: int, highest: bool = True,
               dropping: bool = False) -> list[bool]:
    """Which of ``values`` (in rolling order) a ``Keep`` keeps: the highest (lowest) ones, the
    earlier of equal values first."""
    # Python's sort is stable in reverse too: among equal values the earlier die comes first
    order = sorted(range(len(values)), key=values.__getitem__, reverse=highest)
    flags = [False] * len(values)
    for i in order[:kept_count(len(values), keep, dropping)]:
        flags[i] = True
    return flags


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


Program = Pool | Drop | Keep | Unit | Mixed | Favored | Highest | Least | Paired


def __getattr__(name: str) -> Any:
    """The sample interpreter's names, where a game written before it moved to ``dice.sampler``
    looks for them (``from astragal.dice.algebra import sample``)."""
    from . import sampler as _sample

    if name in _sample.__all__:
        return getattr(_sample, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
