"""Luck you can check: where a roll fell in its own exact distribution, and whether a session's
rolls look like fair dice.

A roll's *percentile* is P(X < x) + P(X = x)/2 under its exact odds (mid-rank for ties): "better
than 87% of rolls like it". For a test of fairness each roll gives a *randomised* percentile
U = P(X < x) + V·P(X = x), V uniform on [0, 1) from a seeded generator: under fair dice U is
exactly uniform on [0, 1) whatever the game (the probability integral transform), so a session's
Us are tested against the uniform law with the Anderson–Darling statistic (sensitive in the
tails, where loaded dice show first), its p-value from Marsaglia & Marsaglia's limiting law.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._records import Record
from .dice import Roll
from .odds import Odds

__all__ = ["FLAG_BELOW", "Luck", "Verdict", "anderson_darling", "luck", "place", "report",
           "verdict"]

# Which result of a roll its odds' distribution is over, by the odds' value name; the value
# is better when higher except where named in LOWER_IS_BETTER.
VALUE_KEYS: dict[str, tuple[str, ...]] = {
    "total": ("total",), "successes": ("successes", "total"), "success": ("total",),
    "margin": ("margin",), "hits": ("hits",), "Score": ("actor_score",), "rolls": ("rolls",),
    "result points": ("result_points",), "damage": ("damage",), "result": ("result",),
    "DMG": ("dmg",),
}
LOWER_IS_BETTER = frozenset({"rolls"})  # an extended action: fewer rolls to the target
FLAG_BELOW = 1e-3  # a session is flagged when its p-value is below this (false alarms 0.1%)


class Luck(Record):
    """Where one roll fell: its value, P(worse), P(as good) and the mid-rank percentile."""

    value: float
    worse: float
    same: float

    @property
    def percentile(self) -> float:
        """P(worse) + P(same)/2: "better than this share of rolls like it"."""
        return self.worse + self.same / 2

    def randomised(self, rng: random.Random) -> float:
        """P(worse) + V·P(same): uniform on [0, 1) under fair dice."""
        return self.worse + rng.random() * self.same

    def words(self) -> str:
        return f"better than {100 * self.percentile:.0f}% of rolls like it"

    def to_json(self) -> dict[str, float]:
        return {"value": self.value, "worse": self.worse, "same": self.same,
                "percentile": self.percentile}


def luck(roll: Roll, odds: Odds) -> Luck | None:
    """Where ``roll`` fell in ``odds`` (the odds of the same text); None when the roll has no
    ordered value (a verdict with no number, several rolls at once)."""
    law = odds.distribution.as_dict() if len(odds.distribution) else {}
    return place(roll.result, odds.value_name, law)


def place(result: Mapping[str, Any], value_name: str, law: Mapping[Any, float]) -> Luck | None:
    """Where a roll's ``result`` fell in the law of its value (``value_name`` as the odds name
    it); None when the roll has no ordered value in that law."""
    keys = VALUE_KEYS.get(value_name)
    if keys is None or not law:
        return None
    value = next((result[k] for k in keys if isinstance(result.get(k), (int, float))
                  and not isinstance(result.get(k), bool)), None)
    if value is None or value not in law:
        return None
    lower = value_name in LOWER_IS_BETTER
    worse = math.fsum(p for x, p in law.items() if (x > value if lower else x < value))
    total = math.fsum(law.values())
    return Luck(value, worse / total, law[value] / total)


def _adinf(z: float) -> float:
    """P(A² < z) for the Anderson–Darling statistic of a large sample (Marsaglia 2004)."""
    if z <= 0:
        return 0.0
    if z < 2:
        return math.exp(-1.2337141 / z) / math.sqrt(z) * (
            2.00012 + (.247105 - (.0649821 - (.0347962 - (.011672 - .00168691 * z) * z) * z)
                       * z) * z)
    return math.exp(-math.exp(1.0776 - (2.30695 - (.43424 - (.082433 - (.008056 - .0003146 * z)
                                                              * z) * z) * z) * z))


def anderson_darling(us: Sequence[float]) -> tuple[float, float]:
    """The Anderson–Darling statistic A² of ``us`` against the uniform law, and its p-value."""
    n = len(us)
    if n == 0:
        return 0.0, 1.0
    xs = sorted(min(max(u, 1e-15), 1 - 1e-15) for u in us)
    s = math.fsum((2 * i + 1) * (math.log(xs[i]) + math.log1p(-xs[n - 1 - i])) for i in range(n))
    a2 = -n - s / n
    return a2, max(0.0, min(1.0, 1.0 - _adinf(a2)))


class Verdict(Record):
    """A session's (or a member's) luck: rolls, mean percentile, histogram, A², p-value."""

    rolls: int
    mean: float
    histogram: tuple[int, ...]
    statistic: float
    p_value: float

    @property
    def flagged(self) -> bool:
        return self.rolls > 0 and self.p_value < FLAG_BELOW

    def to_json(self) -> dict[str, Any]:
        return {"rolls": self.rolls, "mean_percentile": self.mean,
                "histogram": list(self.histogram), "anderson_darling": self.statistic,
                "p_value": self.p_value, "flagged": self.flagged}


def verdict(lucks: Iterable[Luck], seed: int = 0, bins: int = 10) -> Verdict:
    """The luck of a set of rolls (randomised percentiles from ``seed``: reproducible)."""
    rng = random.Random(seed)
    given = list(lucks)
    us = [x.randomised(rng) for x in given]
    hist = [0] * bins
    for u in us:
        hist[min(bins - 1, int(u * bins))] += 1
    a2, p = anderson_darling(us)
    mean = math.fsum(x.percentile for x in given) / len(given) if given else 0.0
    return Verdict(len(given), mean, tuple(hist), a2, p)


def report(by_member: Mapping[str, Sequence[Luck]], seed: int = 0) -> dict[str, Any]:
    """The luck of each member and of the whole session."""
    everyone = [x for xs in by_member.values() for x in xs]
    return {"session": verdict(everyone, seed).to_json(),
            "members": {name: verdict(xs, seed).to_json() for name, xs in by_member.items()},
            "flag_below": FLAG_BELOW}
