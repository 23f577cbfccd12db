"""Mixed pools, Favored re-rolls, Highest, Least and Paired: the exact law of each program equals
the sample interpreter run over every face sequence (``outcomes``), on programs Hypothesis draws
(die sizes, which faces a Favored roll re-rolls and in which order, how pairs score, the filler
and the bonus), and the sorted-pool evaluator equals enumeration whenever the rule fits it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from astragal import LimitError, Limits
from astragal.dice.algebra import Favored, Highest, Least, Mixed, Paired, Reading, die
from astragal.dice.sampler import sample
from astragal.odds.algebra import law
from astragal.odds.pools import outcomes, paired_law, paired_work


@dataclass(frozen=True)
class Order:
    """Dice in a fixed order of preference, or largest first (``by_size``)."""

    ranks: tuple[int, ...]
    by_size: bool = False

    def __call__(self, sizes: tuple[int, ...]) -> tuple[int, ...]:
        if self.by_size:
            return tuple(sorted(range(len(sizes)), key=lambda i: -sizes[i]))
        return tuple(r for r in self.ranks if r < len(sizes))


@dataclass(frozen=True)
class In:
    faces: frozenset[int]

    def __call__(self, face: int) -> bool:
        return face in self.faces


class Steps(Reading):
    """A pair scores by the difference of its faces (nothing unless the attack is higher)."""

    def __call__(self, a: int, d: int) -> int:
        return sum(w for t, w in self.settings if a - d >= t)


class Table(Reading):
    """A pair scores by any table (not a function of the difference)."""

    def __call__(self, a: int, d: int) -> int:
        return int(self.settings[0][(a * 7 + d * 3) % len(self.settings[0])])


class Bonus(Reading):
    def __call__(self, top: int) -> int:
        return int(self.settings[0]) if top == 1 else int(self.settings[1])


sizes = st.lists(st.sampled_from([2, 3, 4, 6]), min_size=0, max_size=3)


@st.composite
def sides(draw: st.DrawFn, small: bool = True) -> Mixed | Favored:
    pool = Mixed(tuple(die(s) for s in draw(sizes)))
    if not draw(st.booleans()):
        return pool
    by_size = draw(st.booleans())
    ranks = tuple(draw(st.permutations(range(len(pool.units))))) if not by_size else ()
    when = In(frozenset(draw(st.lists(st.integers(1, 6), max_size=3))))
    return Favored(pool, Order(ranks, by_size), when)


def _close(exact: tuple[float, ...], brute: dict[int, float]) -> None:
    for k in set(range(len(exact))) | set(brute):
        got = exact[k] if k < len(exact) else 0.0
        assert abs(got - brute.get(k, 0.0)) < 1e-12, (k, got, brute.get(k))


@settings(max_examples=80, deadline=None)
@given(sides())
def test_highest_law_equals_every_face_sequence(side: Mixed | Favored) -> None:
    program = Highest(side)
    _close(law(program).pmf, outcomes(program))


@settings(max_examples=40, deadline=None)
@given(st.lists(sides(), min_size=1, max_size=3))
def test_least_law_equals_every_face_sequence(parts: list[Mixed | Favored]) -> None:
    program = Least(tuple(Highest(p) for p in parts))
    if sum(len((p.pool if isinstance(p, Favored) else p).units) for p in parts) > 6:
        return
    _close(law(program).pmf, outcomes(program))


@settings(max_examples=80, deadline=None)
@given(sides(), sides(), st.lists(st.tuples(st.integers(1, 5), st.integers(0, 2)), max_size=3),
       st.integers(0, 2), st.sampled_from([1, 2]))
def test_paired_law_equals_every_face_sequence(attack: Mixed | Favored, defence: Mixed | Favored,
                                               steps: list[tuple[int, int]], bonus: int,
                                               filler: int) -> None:
    program = Paired(attack, defence, Steps(*steps), filler, Bonus(bonus, 0))
    _close(law(program).pmf, outcomes(program))
    # a rule that is not a step function of the difference takes the enumeration
    odd = program._replace(pair=Table((0, 1, 3, 0, 2)), bonus=Bonus(bonus, 1))
    _close(law(odd).pmf, outcomes(odd))


@pytest.mark.parametrize("kernel", ["exact", "numpy"])
def test_the_evaluator_equals_enumeration_on_larger_pools(kernel: str) -> None:
    class Order(Reading):
        def __call__(self, sizes: tuple[int, ...]) -> tuple[int, ...]:
            return tuple(sorted(range(len(sizes)), key=lambda i: -sizes[i]))

    class One(Reading):
        def __call__(self, face: int) -> bool:
            return face == 1

    attack = Favored(Mixed((die(12), die(8), die(8), die(4))), Order(), One())
    defence = Mixed((die(10), die(6), die(6)))
    program = Paired(attack, defence, Steps((1, 1), (5, 1)), 1, Bonus(1, 0))
    fast, slow = paired_law(program, kernel), paired_law(program, "enumerate")
    assert len(fast.pmf) == len(slow.pmf)
    assert all(abs(a - b) < 1e-12 for a, b in zip(fast.pmf, slow.pmf))


def test_sampling_a_favored_pool_rerolls_the_first_matching_die_in_the_rule_order() -> None:
    class Script:
        def __init__(self, faces: list[int]) -> None:
            self.faces, self.shown = faces, []

        def new(self, size: int) -> int:
            self.shown.append(self.faces.pop(0))
            return len(self.shown) - 1

        def again(self, die: int, note: str) -> int:
            self.shown[die] = self.faces.pop(0)
            return self.shown[die]

        def face(self, die: int) -> int:
            return self.shown[die]

    side = Favored(Mixed((die(4), die(12), die(8))), Order((), by_size=True), In(frozenset({1})))
    record = sample(Highest(side), Script([1, 5, 1, 7]))
    # both the d4 and the d8 show 1: the d8 (larger) is rolled again and its 7 is the highest
    assert [d.runs for d in record.dice] == [((1,),), ((5,),), ((1,), (7,))]
    assert record.value == 7


def test_enumeration_and_the_evaluator_are_limited_before_they_start() -> None:
    big = Mixed(tuple(die(12) for _ in range(9)))
    odd = Paired(big, big, Table((0, 1, 2)), 1, Bonus(0, 0))
    steps, _ = paired_work(odd)
    assert steps > 10**9  # every face vector of nine d12s on each side, paired
    with pytest.raises(LimitError):
        law(odd, limits=Limits())
