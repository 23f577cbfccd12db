"""The kit's dice: one expression, two interpreters.

A game builds an expression of these nodes (``2 @ d6 + 1``, ``pool(d8, d6).highest(2)``,
``d10.explode()``). ``law`` gives its exact law (``_law.Law``: whole-number weights); ``sample``
rolls it on a ``Tray`` and records every die with its facts. Both read the same faces through the
same functions (a die's faces, a fold's ``step``, a map's function), so a roll and its odds cannot
disagree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from functools import reduce
from typing import Any

from .._errors import LimitError
from .._limits import DEFAULT_LIMITS, Limits
from ..dice import TONES, Tray
from ._law import CUT, Law, add_laws, binomial_law, fold_law, joint, plus, power_law

__all__ = ["Dice", "Die", "Hand", "Pool", "Procedure", "apply", "d", "dF", "highest", "lowest",
           "pool", "procedure"]


MOST_FACES = 1_000_000  # a kit die has at most this many faces


class Hand:
    """Where a side's dice go while it is rolled: the tray, the side's stream of faces (0 for the
    actor, 1 for the opposition...) and its group name in the record."""

    __slots__ = ("group", "stream", "tray")

    def __init__(self, tray: Tray, stream: int, group: str) -> None:
        self.tray, self.stream, self.group = tray, stream, group


class Dice:
    """An expression of dice: its exact ``law`` and a ``sample`` of it, read alike."""

    def law(self, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
        raise NotImplementedError

    def sample(self, hand: Hand) -> tuple[Any, str]:
        """Roll it: its value and the words for its dice (``3, 5``)."""
        raise NotImplementedError

    def dice_count(self) -> int:
        """How many dice it rolls before any explosion (what the dice limit counts)."""
        return 0

    # arithmetic builds sums and maps; a number is a constant
    def __add__(self, other: Dice | int) -> Dice:
        return Sum((self, _lift(other)))

    def __radd__(self, other: int) -> Dice:
        return Sum((_lift(other), self))

    def __sub__(self, other: Dice | int) -> Dice:
        return Sum((self, -_lift(other)))

    def __rsub__(self, other: int) -> Dice:
        return Sum((_lift(other), -self))

    def __neg__(self) -> Dice:
        return Map(_negate, (self,), "−")

    def __mul__(self, k: int) -> Dice:
        return Map(lambda x: x * k, (self,), f"×{k}")

    def map(self, f: Callable[[Any], Any], name: str = "") -> Dice:
        """The value passed through ``f`` (a rule of the game: the same function both ways)."""
        return Map(f, (self,), name)


def _negate(x: Any) -> Any:
    return tuple(-v for v in x) if isinstance(x, tuple) else -x




def _lift(x: Dice | int) -> Dice:
    if isinstance(x, Dice):
        return x
    if isinstance(x, int):
        return Const(x)
    raise TypeError(f"cannot add {type(x).__name__} to dice")


class Const(Dice):
    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value

    def law(self, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
        return Law({self.value: 1}, 1)

    def sample(self, hand: Hand) -> tuple[Any, str]:
        return self.value, str(self.value)

    def __str__(self) -> str:
        return str(self.value)


def _face_word(x: Any) -> str:
    return f"{x:+d}" if isinstance(x, int) and x < 0 else str(x)


class Die(Dice):
    """One die: its faces in order (``Die((-1, 0, 1))``), each optionally named (``labels``) and
    toned for the roller (``tones``: good, bad, crit, fumble)."""

    __slots__ = ("faces", "labels", "name", "tones")

    def __init__(self, faces: Sequence[Any], name: str = "", labels: Mapping[Any, str] | None = None,
                 tones: Mapping[Any, str] | None = None) -> None:
        self.faces = tuple(faces)
        if not 1 <= len(self.faces) <= MOST_FACES:
            raise ValueError(f"a die has 1 to {MOST_FACES:,} faces, not {len(self.faces):,}")
        self.name = name or f"d{{{','.join(map(str, self.faces))}}}"
        self.labels = _by_face("labels", labels, self.faces)
        self.tones = {x: _TONE_WORDS.get(t, t) for x, t in
                      _by_face("tones", tones, self.faces).items() if t != "neutral"}
        bad = sorted(set(self.tones.values()) - set(TONES), key=str)
        if bad:
            raise ValueError(f"a face's tone is good, bad, critical (crit), fumble or neutral, "
                             f"not {bad[0]!r}")

    def __str__(self) -> str:
        return self.name

    def __rmatmul__(self, n: int) -> Dice:
        """``n @ die``: the sum of ``n`` such dice."""
        return Pool((self,) * n).sum()

    def law(self, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
        return Law.of(self.faces)

    def dice_count(self) -> int:
        return 1

    def labelled(self, labels: Mapping[Any, str] | None = None,
                 tones: Mapping[Any, str] | None = None) -> Die:
        """The same die with its faces named or toned."""
        return Die(self.faces, self.name, {**self.labels, **(labels or {})},
                   {**self.tones, **(tones or {})})

    def word(self, x: Any, shown: int) -> str:
        """How a face reads in the words: its label, else its value (the number on the die
        for a face whose value is not a number)."""
        return self.labels.get(x) or (str(shown) if isinstance(x, tuple) else _face_word(x))

    def roll_one(self, hand: Hand, added: str = "", less: int = 0) -> tuple[int, Any]:
        """Put one die on the tray (``added`` by another's roll, counting ``less`` below its
        face): its index and its value."""
        tray = hand.tray
        i = tray.roll(len(self.faces), hand.group, hand.stream)
        shown = tray.face(i)
        x = self.faces[shown - 1]
        label = self.labels.get(x, "") or (_face_word(x) if x != shown and not isinstance(
            x, tuple) else "")
        worth = x - less if less else (x if isinstance(x, int) and x != shown else None)
        if added or label or worth is not None or self.tones.get(x):
            tray.facts(i, added=added, scored=worth, label=label, tone=self.tones.get(x, ""))
        return i, x

    def sample(self, hand: Hand) -> tuple[Any, str]:
        i, x = self.roll_one(hand)
        return x, self.word(x, hand.tray.face(i))

    def explode(self, on: Iterable[Any] | None = None, limit: int | None = None,
                penetrate: bool = False) -> Dice:
        """Rolled again, and added, while it shows one of ``on`` (its highest face if None), at
        most ``limit`` times; ``penetrate``: each die it adds counts one less."""
        return Explode(self, frozenset((max(self.faces),) if on is None else on), limit,
                       penetrate)


_TONE_WORDS = {"critical": "crit"}  # the outcomes' word for it, taken for a face's too


def _by_face(what: str, given: Mapping[Any, str] | None, faces: tuple[Any, ...]) -> dict[Any, str]:
    """``labels`` or ``tones``: a mapping from faces (as the die lists them) to words."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise TypeError(f"a die's {what} map its faces to words ({{face: word}}), not a "
                         f"{type(given).__name__}")
    unknown = [k for k in given if k not in faces]
    if unknown:
        raise ValueError(f"a die's {what} name {unknown[0]!r}, which is not one of its faces")
    return {k: str(v) for k, v in given.items()}


def d(sides: int) -> Die:
    """A die of ``sides`` faces numbered from 1."""
    if not 1 <= sides <= MOST_FACES:
        raise ValueError(f"a die has 1 to {MOST_FACES:,} faces, not {sides:,}")
    return Die(range(1, sides + 1), f"d{sides}")


dF = Die((-1, 0, 1), "dF", labels={-1: "−", 0: "0", 1: "+"}, tones={-1: "bad", 1: "good"})


class Explode(Dice):
    __slots__ = ("die", "limit", "on", "penetrate")

    def __init__(self, die: Die, on: frozenset[Any], limit: int | None, penetrate: bool) -> None:
        self.die, self.on, self.limit, self.penetrate = die, on, limit, penetrate

    def __str__(self) -> str:
        return f"{self.die}!" + ("p" if self.penetrate else "")

    def __rmatmul__(self, n: int) -> Dice:
        return Pool((self,) * n).sum()

    def dice_count(self) -> int:
        return 1

    def law(self, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
        faces = self.die.faces
        s, e = len(faces), sum(1 for f in faces if f in self.on)
        if e == s and self.limit is None:
            raise ValueError(f"{self} explodes on every face: it never stops")
        depth = self.limit + 1 if self.limit is not None else (
            0 if e == 0 else math.ceil(math.log(CUT) / math.log(e / s)) + 1)
        limits.check_work(depth * s * s, f"the explosions of {self}", text)
        shift = 1 if self.penetrate else 0
        out: dict[Any, int] = {}
        run: dict[Any, int] = {0: 1}  # the sum of the exploding faces so far, at this depth
        for level in range(depth):
            scale = s ** (depth - level - 1)
            last = level == depth - 1 and self.limit is not None
            nxt: dict[Any, int] = {}
            for so_far, w in run.items():
                for f in faces:
                    v = so_far + f - (shift if level else 0)
                    if f in self.on and not last:
                        nxt[v] = nxt.get(v, 0) + w
                    else:
                        out[v] = out.get(v, 0) + w * scale
            run = nxt
        return Law(out, s ** depth)

    def sample(self, hand: Hand) -> tuple[Any, str]:
        i, x = self.die.roll_one(hand)
        value, words, times = x, [self.die.word(x, hand.tray.face(i))], 0
        while x in self.on and (self.limit is None or times < self.limit):
            times += 1
            less = 1 if self.penetrate else 0
            i, x = self.die.roll_one(hand, "penetrated" if less else "exploded", less)
            value += x - less
            words.append(self.die.word(x, hand.tray.face(i)) + ("−1" if less else ""))
        return value, "+".join(words) if times else words[0]


def _same(parts: Sequence[Dice]) -> list[tuple[Dice, int]]:
    """The parts grouped by identity, in first-seen order, with how many of each."""
    groups: dict[int, list[Any]] = {}
    for p in parts:
        g = groups.setdefault(id(p), [p, 0])
        g[1] += 1
    return [(p, n) for p, n in groups.values()]


class Sum(Dice):
    __slots__ = ("parts",)
    parts: tuple[Dice, ...]

    def __init__(self, parts: tuple[Dice, ...]) -> None:
        flat: list[Dice] = []
        for p in parts:
            flat.extend(p.parts if isinstance(p, Sum) else (p,))
        self.parts = tuple(flat)

    def __str__(self) -> str:
        out = ""
        for p in self.parts:
            word = str(p)
            out += word if not out else (word if word.startswith(("−", "-")) else "+" + word)
        return out

    def dice_count(self) -> int:
        return sum(p.dice_count() for p in self.parts)

    def law(self, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
        out = Law({0: 1}, 1)
        for part, n in _same(self.parts):
            out = add_laws(out, power_law(part.law(limits, text), n, limits, text), limits, text)
        return out

    def sample(self, hand: Hand) -> tuple[Any, str]:
        total: Any = 0
        words = []
        for p in self.parts:
            v, w = p.sample(hand)
            total = plus(total, v)
            words.append(w)
        return total, " + ".join(words)


class Map(Dice):
    __slots__ = ("f", "name", "parts")

    def __init__(self, f: Callable[..., Any], parts: tuple[Dice, ...], name: str = "") -> None:
        self.f, self.parts, self.name = f, parts, name

    def __str__(self) -> str:
        inner = ", ".join(map(str, self.parts))
        return f"{self.name}{inner}" if self.name in ("−",) else (
            f"{inner}{self.name}" if self.name.startswith("×") else inner)

    def dice_count(self) -> int:
        return sum(p.dice_count() for p in self.parts)

    def law(self, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
        return joint([p.law(limits, text) for p in self.parts], self.f, limits, text)

    def sample(self, hand: Hand) -> tuple[Any, str]:
        values, words = [], []
        for p in self.parts:
            v, w = p.sample(hand)
            values.append(v)
            words.append(w)
        return self.f(*values), ", ".join(words)


def apply(f: Callable[..., Any], *parts: Dice) -> Dice:
    """``f`` of the values of independent ``parts`` (the same function for the roll and its odds)."""
    return Map(f, tuple(_lift(p) for p in parts))


class Pool:
    """Dice rolled together, read as a whole by one of its reductions."""

    __slots__ = ("dice",)

    def __init__(self, dice: tuple[Dice, ...]) -> None:
        self.dice = dice

    def __str__(self) -> str:
        return " ".join(f"{n}{p}" if n > 1 else str(p) for p, n in _same(self.dice)) or "no dice"

    def sum(self) -> Dice:
        """The total of the dice."""
        return Reduce(self, "sum", (), plus, 0)

    def count(self, *which: Callable[[Any], bool] | Iterable[Any]) -> Dice:
        """How many dice show a face ``which`` picks (a test, or the faces themselves); with
        several, a tuple of counts, one for each."""
        tests = tuple(w if callable(w) else frozenset(w).__contains__ for w in which)
        if len(tests) == 1:
            test = tests[0]
            return Reduce(self, "count", (test,), lambda n, x: n + bool(test(x)), 0)
        return Reduce(self, "counts", tests, lambda c, x: tuple(
            n + bool(t(x)) for n, t in zip(c, tests)), (0,) * len(tests))

    def highest(self, keep: int = 1) -> Dice:
        """The sum of the ``keep`` highest values (the earlier die kept among equals)."""
        return Reduce(self, "highest", (keep,), _top(keep, True), (), _total, keep)

    def lowest(self, keep: int = 1) -> Dice:
        """The sum of the ``keep`` lowest values."""
        return Reduce(self, "lowest", (keep,), _top(keep, False), (), _total, keep)

    def sorted(self, keep: int | None = None) -> Dice:
        """The values high to low (the ``keep`` highest), as a tuple."""
        n = keep if keep is not None else len(self.dice)
        return Reduce(self, "sorted", (n,), _top(n, True), ())

    def fold(self, step: Callable[[Any, Any], Hashable], start: Hashable,
             final: Callable[[Any], Any] | None = None) -> Dice:
        """``state = step(state, value)`` over the dice, from ``start``; the value is
        ``final(state)`` (the state itself if None). Any pool reading fits this shape."""
        return Reduce(self, "fold", (step,), step, start, final)


def pool(*dice: Dice | Pool | tuple[int, Dice]) -> Pool:
    """Dice rolled together: ``pool(d8, d6, d6)``, ``pool(3 * [d10])`` or ``pool((3, d10))``."""
    out: list[Dice] = []
    for x in dice:
        if isinstance(x, Pool):
            out.extend(x.dice)
        elif isinstance(x, tuple):
            out.extend((x[1],) * x[0])
        elif isinstance(x, list):
            out.extend(x)
        else:
            out.append(x)
    return Pool(tuple(out))


def _total(kept: tuple[Any, ...]) -> Any:
    return sum(kept)


def _top(keep: int, high: bool) -> Callable[[tuple[Any, ...], Any], tuple[Any, ...]]:
    def step(kept: tuple[Any, ...], x: Any) -> tuple[Any, ...]:
        return tuple(sorted((*kept, x), reverse=high)[:keep])
    return step


class Reduce(Dice):
    """A pool read by a fold; the common folds (a sum, a count of one kind) take faster roads to
    the same law."""

    __slots__ = ("args", "final", "keep", "kind", "pool", "start", "step")

    def __init__(self, pool: Pool, kind: str, args: tuple[Any, ...], step: Callable[..., Any],
                 start: Hashable, final: Callable[[Any], Any] | None = None,
                 keep: int | None = None) -> None:
        self.pool, self.kind, self.args, self.step = pool, kind, args, step
        self.start, self.final, self.keep = start, final, keep

    def __str__(self) -> str:
        words = {"sum": "", "count": " counted", "counts": " counted", "fold": "",
                 "sorted": " sorted"}
        if self.kind in ("highest", "lowest"):
            return f"{self.pool} keep {self.kind} {self.args[0]}"
        return f"{self.pool}{words[self.kind]}"

    def dice_count(self) -> int:
        return sum(x.dice_count() for x in self.pool.dice)

    def law(self, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
        limits.check_dice(self.dice_count(), text)
        groups = _same(self.pool.dice)
        if self.kind == "sum":
            return Sum(self.pool.dice).law(limits, text)
        if self.kind == "count" and len(groups) <= 4:
            out = Law({0: 1}, 1)
            for part, n in groups:
                law = part.law(limits, text)
                if law.cut:
                    break
                hit = sum(w for x, w in law.weights.items() if self.args[0](x))
                out = add_laws(out, binomial_law(n, hit, law.total), limits, text)
            else:
                return out
        laws = [p.law(limits, text) for p in self.pool.dice]
        out = fold_law(laws, self.step, self.start, limits, text)
        return out.map(self.final) if self.final is not None else out

    def sample(self, hand: Hand) -> tuple[Any, str]:
        values, words, spans = [], [], []
        for p in self.pool.dice:
            first = len(hand.tray)
            v, w = p.sample(hand)
            values.append(v)
            words.append(w)
            spans.append(range(first, len(hand.tray)))
        state = reduce(self.step, values, self.start)
        if self.kind in ("highest", "lowest"):
            kept = _kept_flags(values, self.args[0], self.kind == "highest")
            for flag, span in zip(kept, spans):
                for i in span:
                    if not flag:
                        hand.tray.drop(i, "dropped")
            words = [w if flag else f"({w})" for w, flag in zip(words, kept)]
        if self.kind in ("count", "counts"):
            for v, span in zip(values, spans):
                counted = tuple(int(bool(t(v))) for t in self.args)
                for i in span[:1]:
                    if len(counted) == 1:
                        hand.tray.facts(i, scored=counted[0])
        return (self.final(state) if self.final is not None else state), ", ".join(words)


def _kept_flags(values: Sequence[Any], keep: int, high: bool) -> list[bool]:
    order = sorted(range(len(values)), key=values.__getitem__, reverse=high)
    flags = [False] * len(values)
    for i in order[:keep]:
        flags[i] = True
    return flags


class _Extreme(Dice):
    """The highest (lowest) value of dice of any kinds, exploding ones included."""

    __slots__ = ("high", "parts")

    def __init__(self, parts: tuple[Dice, ...], high: bool) -> None:
        self.parts, self.high = parts, high

    def __str__(self) -> str:
        return f"{'highest' if self.high else 'lowest'} of {', '.join(map(str, self.parts))}"

    def dice_count(self) -> int:
        return sum(p.dice_count() for p in self.parts)

    def law(self, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
        pick = max if self.high else min
        out = self.parts[0].law(limits, text)
        for p in self.parts[1:]:
            out = joint((out, p.law(limits, text)), pick, limits, text)
        return out

    def sample(self, hand: Hand) -> tuple[Any, str]:
        values, words = zip(*(p.sample(hand) for p in self.parts))
        return (max if self.high else min)(values), ", ".join(words)


def highest(*parts: Dice) -> Dice:
    """The highest value among ``parts`` (dice of several sizes, exploding or not)."""
    return _Extreme(tuple(parts), True)


def lowest(*parts: Dice) -> Dice:
    """The lowest value among ``parts``."""
    return _Extreme(tuple(parts), False)


class _Pruned(Exception):
    """A path of draws less likely than the cut."""


class Procedure(Dice):
    """Dice rolled by a procedure: ``f(roll)`` calls ``roll(die)`` for each die it rolls (and
    ``roll(die, added="exploded")`` for one that another die added, ``roll(die, added="check")``
    for one that another die called for and that counts nothing) and returns the value. The
    roll runs it on the tray; the odds run it on every path of faces, each weighed by its chance,
    so anything a procedure can say (a check die, a push of chosen dice, a re-roll that depends on
    the faces) has its exact law. A path less likely than 10⁻¹⁸ is cut and counted as cut. The
    law is worked out once per procedure (and the paths it took are counted against each later
    request's limit)."""

    __slots__ = ("_law", "f", "name")

    def __init__(self, f: Callable[[Callable[..., Any]], Any], name: str = "") -> None:
        self.f, self.name = f, name or getattr(f, "__name__", "procedure")
        self._law: tuple[Law, int] | None = None

    def __str__(self) -> str:
        return self.name

    def __rmatmul__(self, n: int) -> Dice:
        return Pool((self,) * n).sum()

    def dice_count(self) -> int:
        return 1

    def sample(self, hand: Hand) -> tuple[Any, str]:
        words: list[str] = []
        most = hand.tray.limits.max_explosions
        added_dice = [0]

        def roll(die: Die, added: str = "") -> Any:
            if added == "exploded":
                added_dice[0] += 1
                if added_dice[0] > most:
                    raise LimitError(f"{self} exploded more than {most} times: the limit of "
                                     f"explosions is {most}")
            i, x = die.roll_one(hand, added)
            if added == "check":  # a die another called for: it decides, it adds nothing
                hand.tray.facts(i, scored=0)
                hand.tray.drop(i, die.name or "check")
            words.append(die.word(x, hand.tray.face(i)))
            return x

        return self.f(roll), ", ".join(words)

    def law(self, limits: Limits = DEFAULT_LIMITS, text: str = "") -> Law:
        what = f"the paths of {self}"
        if self._law is not None:
            law, work = self._law
            limits.check_work(work, what, text)
            return law
        ways: dict[tuple[Any, int], int] = {}  # (value, 1/chance of a path): how many paths
        path: list[int] = []  # the index of the face taken at each draw
        work = 0  # steps: about thirty lines of Python run per draw of a path
        while True:
            walk = _Walk(path)
            try:
                key = self.f(walk.roll), walk.ways
                ways[key] = ways.get(key, 0) + 1
            except _Pruned:
                pass
            sizes = walk.sizes
            work += _DRAW * (len(sizes) + 1)
            if work > limits.max_odds_work:  # refused as soon as the walk is over the limit
                limits.check_work(work, what, text)
            del path[len(sizes):]
            while path and path[-1] == sizes[len(path) - 1] - 1:
                path.pop()
            if not path:
                break
            path[-1] += 1
        limits.check_work(work, what, text)
        total = math.lcm(*(n for _, n in ways)) if ways else 1
        weights: dict[Any, int] = {}
        for (value, n), count in ways.items():
            weights[value] = weights.get(value, 0) + count * (total // n)
        law = Law(weights, total)
        self._law = (law, work)
        return law


_DRAW = 30


class _Walk:
    """One path of faces through a procedure: the face taken at each draw, and the number of
    equally likely paths it is one of (its chance is 1 / ``ways``)."""

    __slots__ = ("path", "sizes", "ways")

    def __init__(self, path: list[int]) -> None:
        self.path, self.ways = path, 1
        self.sizes: list[int] = []

    def roll(self, die: Die, added: str = "") -> Any:
        i = len(self.sizes)
        n = len(die.faces)
        self.sizes.append(n)
        if i == len(self.path):
            self.path.append(0)
        self.ways *= n
        if self.ways > _MOST_WAYS:  # a chance below the cut
            raise _Pruned
        return die.faces[self.path[i]]


_MOST_WAYS = CUT.denominator // CUT.numerator


def procedure(f: Callable[[Callable[..., Any]], Any], name: str = "") -> Dice:
    """Decorate ``f(roll)``, a die's procedure, as dice (see ``Procedure``)."""
    return Procedure(f, name)
