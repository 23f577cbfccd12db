"""Exact probability distributions. Nothing here ever samples."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping
from fractions import Fraction
from typing import Any

__all__ = ["Distribution", "Odds", "convolve"]


class Distribution:
    """An exact distribution: outcome -> probability, over numbers or named categories.

    ``truncated`` is the probability mass left out where an infinite tail (explosions, re-rolls)
    was cut; it is below 1e-15 whenever astragal cuts one.

    >>> d = Distribution.from_mapping({1: 0.25, 2: 0.75})
    >>> d.mean(), d.at_least(2)
    (1.75, 0.75)
    """

    # A plain class with slots, not a dataclass: importing ``dataclasses`` (and the ``inspect``
    # it needs) is a large part of the command line's start-up (see astragal/_records.py).
    __slots__ = ("counts", "denominator", "items_", "truncated")

    items_: tuple[tuple[Any, float], ...]
    truncated: float
    denominator: int | None
    """A whole number that every probability is an exact multiple of 1/denominator of, when
    the system knows one (finite rational laws); it makes ``exact()`` possible. Not compared."""
    counts: tuple[int, ...] | None
    """Where the system computed the law in whole numbers: each outcome's count over
    ``denominator``, so ``exact()`` needs no rounding, however large the denominator."""

    def __init__(self, items_: tuple[tuple[Any, float], ...], truncated: float = 0.0,
                 denominator: int | None = None, counts: tuple[int, ...] | None = None) -> None:
        set_ = object.__setattr__
        set_(self, "items_", items_)
        set_(self, "truncated", truncated)
        set_(self, "denominator", denominator)
        set_(self, "counts", counts if denominator is not None else None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Distribution is immutable: cannot set {name}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Distribution:
            return NotImplemented
        return self.items_ == other.items_ and self.truncated == other.truncated

    def __hash__(self) -> int:
        return hash((self.items_, self.truncated))

    def __repr__(self) -> str:
        return (f"Distribution(items_={self.items_!r}, truncated={self.truncated!r}, "
                f"denominator={self.denominator!r})")

    def with_denominator(self, denominator: int | None) -> Distribution:
        """The same distribution, knowing every probability is a multiple of 1/denominator."""
        return Distribution(self.items_, self.truncated, denominator)

    @classmethod
    def from_mapping(cls, mapping: Mapping[Any, float], truncated: float = 0.0,
                     order: Iterable[Any] | None = None,
                     denominator: int | None = None) -> Distribution:
        """Build from a mapping; numeric outcomes are sorted, categories keep ``order``."""
        keys = cls._keys(mapping, order)
        return cls(tuple((k, float(mapping.get(k, 0.0))) for k in keys), truncated, denominator)

    @staticmethod
    def _keys(mapping: Mapping[Any, Any], order: Iterable[Any] | None) -> list[Any]:
        if order is not None:
            return list(order)
        if all(isinstance(k, (int, float)) for k in mapping):
            return sorted(mapping)
        return list(mapping)

    @classmethod
    def from_counts(cls, counts: Mapping[Any, int], denominator: int,
                    order: Iterable[Any] | None = None) -> Distribution:
        """A finite law given in whole numbers: each outcome's count over ``denominator``
        (exact fractions at any size; the counts may sum to less where a tail was cut)."""
        keys = cls._keys(counts, order)
        whole = tuple(int(counts.get(k, 0)) for k in keys)
        cut = (denominator - sum(whole)) / denominator  # exact before it is rounded: 1e-18 stays
        return cls(tuple((k, c / denominator) for k, c in zip(keys, whole)), cut,
                   None if cut else denominator, None if cut else whole)

    def exact(self) -> tuple[tuple[Any, Fraction], ...]:
        """(outcome, exact probability as a ``Fraction``) pairs, in order.

        Available when the law is finite and rational and its system gave a ``denominator``
        small enough (at most 10**12) that every float probability is within a small fraction
        of 1/denominator of the true one, so rounding to it is exact; the fractions are checked
        to sum to exactly 1. Otherwise a ``ValueError`` says why.

        >>> d = Distribution.from_mapping({2: 1 / 36, 3: 2 / 36, 4: 33 / 36}, denominator=36)
        >>> [str(p) for _, p in d.exact()]
        ['1/36', '1/18', '11/12']
        """
        if self.counts is not None and self.denominator is not None:
            den = self.denominator
            return tuple((k, Fraction(c, den)) for (k, _), c in zip(self.items_, self.counts))
        if self.truncated:
            raise ValueError("no exact form: the law is infinite (a die may be rolled again "
                             f"without end; a tail of {self.truncated:.1g} was cut)")
        if self.denominator is None:
            raise ValueError("no exact form: the law is infinite (a die may be rolled again "
                             "without end) or its system gives no common denominator")
        den = self.denominator
        if den > 10**12:
            raise ValueError(f"no exact form: the common denominator {den:.3g} is too large "
                             "to recover from floating point")
        counts = [round(p * den) for _, p in self.items_]
        if sum(counts) != den or any(abs(p * den - c) > 1e-3 for (_, p), c in
                                     zip(self.items_, counts)):
            raise ValueError("no exact form: the probabilities are not multiples of "
                             f"1/{den}")
        return tuple((k, Fraction(c, den)) for (k, _), c in zip(self.items_, counts))

    def __getitem__(self, outcome: Hashable) -> float:
        for k, p in self.items_:
            if k == outcome:
                return p
        return 0.0

    def __iter__(self) -> Any:
        return iter(k for k, _ in self.items_)

    def __len__(self) -> int:
        return len(self.items_)

    def items(self) -> tuple[tuple[Any, float], ...]:
        """(outcome, probability) pairs in order."""
        return self.items_

    def outcomes(self) -> tuple[Any, ...]:
        """The outcomes in order."""
        return tuple(k for k, _ in self.items_)

    def as_dict(self) -> dict[Any, float]:
        """outcome -> probability."""
        return dict(self.items_)

    def total(self) -> float:
        """Sum of the probabilities (1 up to rounding and any stated truncation)."""
        return math.fsum(p for _, p in self.items_)

    def _numeric(self) -> tuple[tuple[float, float], ...]:
        if not all(isinstance(k, (int, float)) and not isinstance(k, bool) for k, _ in self.items_):
            raise TypeError("this distribution is over categories; it has no mean")
        return self.items_

    def mean(self) -> float:
        """The expected value."""
        return math.fsum(k * p for k, p in self._numeric())

    def variance(self) -> float:
        """The variance."""
        mu = self.mean()
        return math.fsum(p * (k - mu) ** 2 for k, p in self._numeric())

    def std(self) -> float:
        """The standard deviation."""
        return math.sqrt(self.variance())

    def at_least(self, x: float) -> float:
        """P(outcome >= x)."""
        return math.fsum(p for k, p in self._numeric() if k >= x)

    def at_most(self, x: float) -> float:
        """P(outcome <= x)."""
        return math.fsum(p for k, p in self._numeric() if k <= x)

    def tails(self) -> list[tuple[Any, float, float, float]]:
        """(outcome, P(=), P(>=), P(<=)) for every outcome, in linear time.

        The probabilities are summed as exact integers over one power of two and each tail is
        divided back once, so every number equals ``at_least``/``at_most`` to the last bit.
        """
        items = self._numeric()
        ratios = [p.as_integer_ratio() for _, p in items]
        scale = max((d for _, d in ratios), default=1)
        exact = [n * (scale // d) for n, d in ratios]
        order = sorted(range(len(items)), key=lambda i: items[i][0])
        total = sum(exact)
        below: dict[int, int] = {}
        running = 0
        for i in order:
            running += exact[i]
            below[i] = running
        return [(k, p, (total - below[i] + exact[i]) / scale, below[i] / scale)
                for i, (k, p) in enumerate(items)]

    def map(self, f: Callable[[Any], Any], order: Iterable[Any] | None = None) -> Distribution:
        """The distribution of ``f(outcome)``."""
        out: dict[Any, float] = {}
        for k, p in self.items_:
            key = f(k)
            out[key] = out.get(key, 0.0) + p
        return Distribution.from_mapping(out, self.truncated, order, self.denominator)

    def _as_odds(self) -> Odds:
        if all(isinstance(k, str) for k in self):
            return Odds("", "distribution", self, Distribution(()))
        return Odds("", "distribution", Distribution(()), self)

    def __str__(self) -> str:
        """The table ``print`` shows: each outcome's probability (and the tails)."""
        from ..render import odds_text

        return odds_text(self._as_odds())

    def _repr_html_(self) -> str:
        """An HTML table and chart (Jupyter shows it)."""
        from ..render import odds_html

        return odds_html(self._as_odds())

    def to_json(self) -> dict[str, float]:
        """outcome (as a string key) -> probability, in order."""
        return {str(k): p for k, p in self.items_}


class Odds:
    """Exact odds of one roll: named outcome categories and the distribution of its value."""

    __slots__ = ("distribution", "extra", "input", "notes", "outcomes", "system", "value_name")

    system: str
    input: str
    outcomes: Distribution
    distribution: Distribution
    value_name: str
    notes: tuple[str, ...]
    extra: dict[str, Any]

    def __init__(self, system: str, input: str, outcomes: Distribution,
                 distribution: Distribution, value_name: str = "value",
                 notes: tuple[str, ...] = (), extra: dict[str, Any] | None = None) -> None:
        set_ = object.__setattr__
        for name, value in (("system", system), ("input", input), ("outcomes", outcomes),
                            ("distribution", distribution), ("value_name", value_name),
                            ("notes", notes), ("extra", {} if extra is None else extra)):
            set_(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Odds are immutable: cannot set {name}")

    def _key(self) -> tuple[Any, ...]:
        return (self.system, self.input, self.outcomes, self.distribution, self.value_name,
                self.notes, self.extra)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Odds:
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # it holds a dict (``extra``)

    def __repr__(self) -> str:
        return (f"Odds(system={self.system!r}, input={self.input!r}, outcomes={self.outcomes!r},"
                f" distribution={self.distribution!r}, value_name={self.value_name!r}, "
                f"notes={self.notes!r}, extra={self.extra!r})")

    @property
    def mean(self) -> float:
        return self.distribution.mean()

    def __str__(self) -> str:
        """The odds as the command line prints them (``print(odds)``)."""
        from ..render import odds_text

        return odds_text(self)

    def _repr_html_(self) -> str:
        from ..render import odds_html

        return odds_html(self)

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (see README: JSON output)."""
        out: dict[str, Any] = {
            "system": self.system,
            "input": self.input,
            "outcomes": self.outcomes.to_json(),
            "distribution": self.distribution.to_json(),
            "mean": self.mean,
        }
        if self.notes:
            out["notes"] = list(self.notes)
        if self.distribution.truncated:
            out["truncated"] = self.distribution.truncated
        out.update(self.extra)
        return out


def convolve(a: Mapping[int, float], b: Mapping[int, float]) -> dict[int, float]:
    """The distribution of the sum of two independent integer outcomes."""
    out: dict[int, float] = {}
    for x, p in a.items():
        for y, q in b.items():
            out[x + y] = out.get(x + y, 0.0) + p * q
    return out
