"""The dice algebra: its two interpreters agree on every program.

``sample`` (dice/algebra) is run over every face sequence of small programs, each weighted by its
probability, and the total must equal ``law`` (odds/algebra) to 1e-12, within the probability of
the sequences too long to enumerate. The programs are drawn by Hypothesis: die sizes, which faces
go on (at the first face and at re-rolls), what each face scores, rote-style re-rolls, marks and
pool sizes. Larger pools are checked against icepool, and the sampler against the law by
chi-square (false alarms 1e-7).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass
from fractions import Fraction

import icepool
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from astragal import LimitError, Limits, SeededSource
from astragal.dice.algebra import Chain, Drop, Keep, Marked, Pool, Reroll, Top
from astragal.dice.sampler import sample, top
from astragal.odds import maths
from astragal.odds.algebra import law, marked_law, top_law, work
from tests.stats import assert_matches


@dataclass(frozen=True)
class Faces:
    """A reading of faces as a hashable table: at the first face, and at every re-roll."""

    first: tuple[int, ...]
    later: tuple[int, ...]

    def __call__(self, position: int, face: int) -> int:
        return (self.first if position == 0 else self.later)[face - 1]


@dataclass(frozen=True)
class Goes:
    first: frozenset[int]
    later: frozenset[int]

    def __call__(self, position: int, face: int) -> bool:
        return face in (self.first if position == 0 else self.later)


@dataclass(frozen=True)
class When:
    faces: frozenset[int]

    def __call__(self, face: int) -> bool:
        return face in self.faces


@dataclass(frozen=True)
class Mark:
    """A mark from the standing first face and, when it was checked, the check die's face."""

    first: frozenset[int]
    checked: frozenset[int]

    def __call__(self, face: int, checked: int | None) -> tuple[bool, bool | None]:
        return face in self.first, None if checked is None else checked in self.checked


class _Need(Exception):
    pass


class Probe:
    """Faces from a fixed sequence; asking past its end is where the enumeration branches."""

    def __init__(self, faces: tuple[int, ...]) -> None:
        self.faces, self.used, self.shown = faces, 0, []

    def _next(self) -> int:
        if self.used >= len(self.faces):
            raise _Need
        self.used += 1
        return self.faces[self.used - 1]

    def new(self, size: int) -> int:
        self.shown.append(self._next())
        return len(self.shown) - 1

    def again(self, die: int, note: str) -> int:
        self.shown[die] = self._next()
        return self.shown[die]

    def face(self, die: int) -> int:
        return self.shown[die]


def enumerate_program(program: Pool | Drop | Keep | Chain | Reroll | Marked, size: int,
                      depth: int) -> tuple[dict[Hashable, Fraction], Fraction]:
    """P(value) (or P(value, mark)) over every face sequence of at most ``depth`` faces."""
    out: dict[Hashable, Fraction] = defaultdict(Fraction)
    unknown = Fraction(0)
    stack: list[tuple[int, ...]] = [()]
    limits = Limits(max_explosions=1000)
    while stack:
        prefix = stack.pop()
        probe = Probe(prefix)
        try:
            rec = sample(program, probe, limits)
        except _Need:
            if len(prefix) >= depth:
                unknown += Fraction(1, size ** len(prefix))
            else:
                stack.extend(prefix + (f,) for f in range(1, size + 1))
            continue
        assert probe.used == len(prefix)
        key: Hashable = (rec.value, rec.dice[0].mark) if isinstance(program, Marked) \
            else rec.value
        out[key] += Fraction(1, size ** len(prefix))
    return out, unknown


@st.composite
def chains(draw: st.DrawFn, negative: bool = True) -> Chain:
    """Chains of every kind: which faces go on, what each scores (below 0 too, except a face
    that goes on after the first), a cap, and a re-roll in place of some faces (once or until
    they stop showing)."""
    size = draw(st.integers(2, 5))
    faces = list(range(1, size + 1))
    later = frozenset(draw(st.lists(st.sampled_from(faces), max_size=size - 1, unique=True)))
    first = frozenset(draw(st.lists(st.sampled_from(faces), max_size=size, unique=True)))
    low = -2 if negative else 0
    score_later = tuple(draw(st.integers(0 if f in later else low, 3)) for f in faces)
    score_first = tuple(draw(st.lists(st.integers(low, 3), min_size=size, max_size=size)))
    limit = draw(st.one_of(st.none(), st.integers(0, 3)))  # a house rule's cap on re-rolls
    reroll = draw(st.lists(st.sampled_from(faces), max_size=size - 1, unique=True))
    once = draw(st.booleans())
    # some face that stands must stop the chain (one re-rolled once may still stand)
    assume(once or any(f not in later and f not in reroll for f in faces))
    return Chain(size, Goes(first, later), Faces(score_first, score_later), limit=limit,
                 reroll=When(frozenset(reroll)) if reroll else None, reroll_once=once)


def _compare(exact: dict[Hashable, float], brute: dict[Hashable, Fraction],
             unknown: Fraction) -> None:
    for key in set(exact) | set(brute):
        fast = exact.get(key, 0.0)
        lo = float(brute.get(key, Fraction(0)))
        assert lo - 1e-12 <= fast <= lo + float(unknown) + 1e-12, (key, fast, lo, unknown)


def _as_dict(pmf: tuple[float, ...], low: int = 0) -> dict[Hashable, float]:
    return {low + k: p for k, p in enumerate(pmf) if p}


@settings(max_examples=60, deadline=None)
@given(chains(), st.integers(1, 3), st.booleans(), st.data())
def test_law_equals_sample_over_every_face_sequence(chain: Chain, count: int, rote: bool,
                                                    data: st.DataObject) -> None:
    unit: Chain | Reroll = chain
    if rote:
        faces = range(1, chain.size + 1)
        unit = Reroll(chain, When(frozenset(data.draw(st.lists(st.sampled_from(list(faces)),
                                                                unique=True)))))
    program = Pool(count, unit)
    depth = {1: 9, 2: 8, 3: 7}[count] if chain.size <= 3 else {1: 7, 2: 5, 3: 4}[count]
    brute, unknown = enumerate_program(program, chain.size, depth)
    exact = law(program)
    assert exact.truncated < 1e-15
    assert abs(sum(exact.pmf) + exact.truncated - 1.0) < 1e-12
    _compare(_as_dict(exact.pmf, exact.low), brute, unknown)


@settings(max_examples=40, deadline=None)
@given(chains(negative=False), st.data())
def test_marked_law_equals_sample(chain: Chain, data: st.DataObject) -> None:
    faces = list(range(1, chain.size + 1))
    def some() -> frozenset[int]:
        return frozenset(data.draw(st.lists(st.sampled_from(faces), unique=True)))

    again, marked, checked = some(), some(), some()
    check = When(some()) if data.draw(st.booleans()) else None  # faces that call a check die
    program = Marked(Reroll(chain, When(again)), Mark(marked, checked), check)
    brute, unknown = enumerate_program(program, chain.size, 8)
    exact = marked_law(program)
    flat = {(k, m): p for m, pmf in exact.by_mark for k, p in enumerate(pmf) if p}
    _compare(flat, brute, unknown)


def test_general_chains_that_are_not_geometric() -> None:
    # faces that go on score differently (1 and 2), so the law is a true series division
    chain = Chain(3, Goes(frozenset({2, 3}), frozenset({2, 3})), Faces((0, 1, 2), (0, 1, 2)))
    brute, unknown = enumerate_program(Pool(1, chain), 3, 14)
    _compare(_as_dict(law(Pool(1, chain)).pmf), brute, unknown)
    assert float(unknown) < 0.01
    # two dice: values up to 3 need at most 5 faces, so below that enumeration is exact
    brute, unknown = enumerate_program(Pool(2, chain), 3, 9)
    exact = law(Pool(2, chain)).pmf
    for k in range(4):
        assert abs(exact[k] - float(brute[k])) < 1e-12


def test_pools_equal_icepool() -> None:
    # d6 exploding on 6 (each face scores its value), 12 dice; icepool explodes to a depth whose
    # lost mass is far below the tolerance
    chain = Chain(6, Goes(frozenset({6}), frozenset({6})), Faces(*((1, 2, 3, 4, 5, 6),) * 2))
    ice = 12 @ icepool.d6.explode(depth=14)
    total = ice.denominator()
    exact = law(Pool(12, chain)).pmf
    for value, count in ice.items():
        if value < 12 * 6 * 3:  # icepool's deepest outcomes carry its own cut
            assert abs(exact[value] - count / total) < 1e-12


def test_series_division_reports_what_it_cut() -> None:
    # 1 / (1 − z/2): P(k) = 2^−(k+1); the mass left after the cut is exactly the last term
    terms, lost = maths.series_divide([0.5], [1.0, -0.5], 1e-12)
    assert all(abs(t - 2.0 ** -(k + 1)) < 1e-18 for k, t in enumerate(terms))
    assert abs(lost - 2.0 ** -len(terms)) < 1e-18 and lost < 1e-12


def test_a_chain_that_never_stops_is_refused() -> None:
    with pytest.raises(LimitError, match="never stops"):
        law(Chain(2, Goes(frozenset({2}), frozenset({1, 2})), Faces((1, 1), (1, 1))))
    # the same reading of re-rolls is harmless when the first face is never rolled again
    assert law(Chain(2, Goes(frozenset(), frozenset({1, 2})), Faces((1, 1), (1, 1)))).pmf == (
        0.0, 1.0)


def test_sampler_matches_its_law() -> None:
    chain = Chain(4, Goes(frozenset({4}), frozenset({3, 4})), Faces((0, 1, 1, 2), (0, 0, 1, 1)))
    program = Pool(3, Reroll(chain, When(frozenset({1}))))
    exact = _as_dict(law(program).pmf)

    class Hands:
        def __init__(self, source: SeededSource) -> None:
            self.source, self.shown = source, []

        def new(self, size: int) -> int:
            self.shown.append(self.source.face(4))
            return len(self.shown) - 1

        def again(self, die: int, note: str) -> int:
            self.shown[die] = self.source.face(4)
            return self.shown[die]

        def face(self, die: int) -> int:
            return self.shown[die]

    source = SeededSource(20261123)
    assert_matches([sample(program, Hands(source)).value for _ in range(20000)], exact)


def test_a_capped_chain_stops_at_its_cap_and_a_far_cap_changes_nothing() -> None:
    # d6 exploding on 6 capped at 2 re-rolls: 6,6,6 ends the chain at 18 (the last 6 stands)
    six = Goes(frozenset({6}), frozenset({6}))
    faces = Faces(*((1, 2, 3, 4, 5, 6),) * 2)
    capped = law(Chain(6, six, faces, limit=2)).pmf
    assert abs(capped[18] - 6.0 ** -3) < 1e-15 and len(capped) == 19
    assert sample(Chain(6, six, faces, limit=2), Probe((6, 6, 6))).value == 18
    # a cap reached with probability 6^-40 is computed as no cap, its cut reported as usual
    far, free = law(Chain(6, six, faces, limit=41)), law(Chain(6, six, faces))
    assert far == free and free.truncated < 1e-17


def test_a_check_die_adds_nothing_and_marks_the_die() -> None:
    # a first 1 calls a check die; the die's value stays 1 and the mark reads the check's face
    chain = Chain(6, Goes(frozenset({6}), frozenset({6})), Faces(*((1, 2, 3, 4, 5, 6),) * 2))
    unit = Marked(chain, Mark(frozenset(), frozenset({1})), When(frozenset({1})), "botch check")
    probe = Probe((1, 1))
    rec = sample(unit, probe)
    assert (rec.value, rec.dice[0].mark, rec.dice[0].checked) == (1, (False, True), 1)
    by_mark = dict(marked_law(unit).by_mark)
    assert abs(by_mark[(False, True)][1] - 1 / 36) < 1e-15
    assert abs(by_mark[(False, False)][1] - 5 / 36) < 1e-15


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5), st.integers(0, 4), st.booleans(), st.data())
def test_dropping_the_highest_or_lowest_die_equals_enumeration(
        size: int, count: int, highest: bool, data: st.DataObject) -> None:
    scores = tuple(data.draw(st.lists(st.integers(0, 4), min_size=size, max_size=size)))
    chain = Chain(size, Goes(frozenset(), frozenset()), Faces(scores, scores))
    program = Drop(Pool(count, chain), highest)
    brute, unknown = enumerate_program(program, size, count)
    assert unknown == 0
    _compare(_as_dict(law(program).pmf), brute, unknown)


class _Halved:
    """A read of a kept value (a success count's, say): half of it, rounded down, less one."""

    def __call__(self, v: int) -> int:
        return v // 2 - 1


@settings(max_examples=60, deadline=None)
@given(chains(), st.integers(1, 3), st.integers(0, 4), st.booleans(), st.booleans())
def test_keeping_the_highest_or_lowest_dice_equals_enumeration(
        chain: Chain, count: int, keep: int, highest: bool, halved: bool) -> None:
    program = Keep(Pool(count, chain), keep, highest, _Halved() if halved else None)
    depth = {1: 9, 2: 8, 3: 7}[count] if chain.size <= 3 else {1: 7, 2: 5, 3: 4}[count]
    brute, unknown = enumerate_program(program, chain.size, depth)
    exact = law(program)
    assert abs(sum(exact.pmf) + exact.truncated - 1.0) < 1e-12
    _compare(_as_dict(exact.pmf, exact.low), brute, unknown)


@settings(max_examples=80, deadline=None)
@given(chains(), st.integers(1, 3), st.integers(0, 4), st.booleans(), st.booleans(),
       st.booleans())
def test_keeping_each_roll_as_a_die_of_its_own_equals_enumeration(
        chain: Chain, count: int, keep: int, highest: bool, dropping: bool,
        halved: bool) -> None:
    # ``4d6!kh3``, ``4d6!pdl1``, ``6d6xokh3``: an explosion adds a die, kept or dropped alone
    assume(chain.limit in (None, 0, 1))
    program = Keep(Pool(count, chain), keep, highest, _Halved() if halved else None, dropping,
                   each=True)
    assume(work(program) < 2_000_000)  # long tails of re-rolls that go on: seconds a case
    depth = {1: 9, 2: 8, 3: 7}[count] if chain.size <= 3 else {1: 7, 2: 5, 3: 4}[count]
    brute, unknown = enumerate_program(program, chain.size, depth)
    exact = law(program)
    assert abs(sum(exact.pmf) + exact.truncated - 1.0) < 1e-12
    _compare(_as_dict(exact.pmf, exact.low), brute, unknown)


def test_each_roll_kept_alone_reads_a_re_roll_at_its_position() -> None:
    # 3d6!p: a 6 goes on, a later roll is worth one less; dl1 drops the lowest of every roll
    d6p = Chain(6, Goes(frozenset({6}), frozenset({6})), Faces((1, 2, 3, 4, 5, 6),
                                                                 (0, 1, 2, 3, 4, 5)))
    faces = (6, 2, 6, 6, 1, 3)  # the firsts; then die one's re-rolls 6, 1; die three's 3
    # each die's rolls in turn, worth: 6, 6-1, 1-1 | 2 | 6, 3-1
    rec = sample(Keep(Pool(3, d6p), 1, dropping=True, each=True), Probe(faces))
    assert (rec.value, rec.dropped) == (6 + 5 + 2 + 6 + 2, (2,))
    rec = sample(Keep(Pool(3, d6p), 2, each=True), Probe(faces))
    assert (rec.value, rec.dropped) == (12, (1, 2, 3, 5))
    with pytest.raises(ValueError, match="capped at one re-roll"):
        law(Keep(Pool(2, d6p._replace(limit=2)), 1, each=True))
    with pytest.raises(ValueError, match="plain chains"):  # a rote-style re-roll of the whole die
        law(Keep(Pool(2, Reroll(d6p, When(frozenset({1})))), 1, each=True))


@pytest.mark.parametrize("size, top, n", [(6, 2, 5), (10, 3, 10), (8, 2, 12), (20, 6, 12),
                                            (6, 3, 3), (10, 1, 4)])
def test_a_pool_that_explodes_on_several_faces_has_one_law_by_either_route(
        size: int, top: int, n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # 10d10!>=8: the die's law is rational but not geometric; the pool's law is either the die's
    # expanded law to the n-th power, or its numerator to the n-th power divided n times by the
    # denominator (no numpy, no long products): the same law, the same mass cut
    from astragal.odds import algebra, forms

    goes = frozenset(range(size - top + 1, size + 1))
    chain = Chain(size, Goes(goes, goes), Faces(*((tuple(range(1, size + 1)),) * 2)))
    form = forms.form_of(chain)
    numerator = form.numerator()
    divided, cut = algebra._divided(form, numerator, n, 1e-18)
    unit = forms.expand(form, numerator, 1e-18 / n)[0]
    powered = maths.power(unit, n)
    assert max(abs(a - b) for a, b in zip(divided, powered)) < 1e-15
    assert abs(math.fsum(divided) + cut - 1.0) < 1e-14 and 0.0 <= cut < 1e-17
    if top > 1:  # the pool takes the cheaper route: in Python loops, the divisions (where
        # numpy pays, its products of the expanded law can be the less work)
        monkeypatch.setattr(maths, "numpy_pays", lambda python, numpy: False)
        assert algebra._general_route(form, n, 1e-18)[0]


def test_a_keep_of_each_roll_runs_all_its_parts_on_one_kernel(monkeypatch) -> None:
    # 12d6!kh4: a mixture of keeps, one per count of explosions; numpy pays for its import by
    # their work in all, not part by part; and both kernels give the same law
    from astragal.odds import explode

    d6x = Chain(6, Goes(frozenset({6}), frozenset({6})), Faces(*((1, 2, 3, 4, 5, 6),) * 2))
    parts = explode._plans(Keep(Pool(12, d6x), 4, each=True), 1e-18)
    costs = [plan.cost.python for _, plan in parts]
    assert len(costs) > 10
    bill = (max(costs) + sum(costs)) // 2  # more than any part's work, less than all of it
    monkeypatch.setattr(maths, "numpy_pays", lambda python, numpy: python > bill)
    explode.clear()
    program = Keep(Pool(12, d6x), 4, each=True)
    assert {plan.numpy for _, plan in explode._plans(program, 1e-18)} == {True}
    with_numpy = law(program)
    monkeypatch.setattr(maths, "numpy_pays", lambda python, numpy: False)
    explode.clear()
    program = Keep(Pool(12, d6x), 4, each=True)
    assert {plan.numpy for _, plan in explode._plans(program, 1e-18)} == {False}
    in_python = law(program)
    explode.clear()
    assert with_numpy.low == in_python.low and len(with_numpy.pmf) == len(in_python.pmf)
    assert max(abs(x - y) for x, y in zip(with_numpy.pmf, in_python.pmf)) < 1e-15


def test_kept_keeps_the_earlier_of_equal_dice_and_reads_only_the_kept() -> None:
    d6 = Chain(6, Goes(frozenset(), frozenset()), Faces(*((1, 2, 3, 4, 5, 6),) * 2))
    rec = sample(Keep(Pool(4, d6), 3), Probe((3, 6, 2, 3)))  # 4d6kh3: the second 3 goes
    assert (rec.value, rec.dropped) == (12, (2,))
    rec = sample(Keep(Pool(4, d6), 2, highest=False), Probe((3, 6, 2, 3)))
    assert (rec.value, rec.dropped) == (5, (1, 3))
    rec = sample(Keep(Pool(3, d6), 2, read=_Halved()), Probe((6, 5, 1)))
    assert (rec.value, rec.dropped) == (2 + 1, (2,))
    big = law(Keep(Pool(10, d6), 3))  # against icepool: 10d6, the highest 3 kept
    ice = icepool.d6.pool(10).highest(3).sum()
    got = _as_dict(big.pmf, big.low)
    assert set(got) == set(ice.outcomes())
    assert all(abs(got[k] - ice.probability(k)) < 1e-12 for k in ice.outcomes())


def test_dropped_marks_the_first_of_the_highest_dice() -> None:
    d6 = Chain(6, Goes(frozenset(), frozenset()), Faces(*((1, 2, 3, 4, 5, 6),) * 2))
    rec = sample(Drop(Pool(4, d6)), Probe((3, 6, 2, 6)))
    assert (rec.value, rec.dropped) == (11, (1,))
    rec = sample(Drop(Pool(4, d6), highest=False), Probe((3, 6, 2, 2)))
    assert (rec.value, rec.dropped) == (11, (2,))
    big = law(Drop(Pool(30, d6))).pmf  # against icepool: 30d6, the highest dropped
    ice = icepool.d6.pool(30).lowest(29).sum()
    assert all(abs(big[k] - ice.probability(k)) < 1e-12 for k in ice.outcomes())


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5), st.integers(0, 4), st.data())
def test_top_law_equals_enumeration(size: int, count: int, data: st.DataObject) -> None:
    scores = tuple(data.draw(st.lists(st.integers(0, 4), min_size=size, max_size=size)))
    chain = Chain(size, Goes(frozenset(), frozenset()), Faces(scores, scores))
    brute: dict[tuple[int, int], Fraction] = defaultdict(Fraction)
    for faces in itertools.product(range(1, size + 1), repeat=count):
        brute[top(sample(Pool(count, chain), Probe(faces)))] += Fraction(1, size ** count)
    exact = top_law(Top(Pool(count, chain)))
    assert set(exact) == set(brute)
    assert all(abs(exact[k] - float(p)) < 1e-15 for k, p in brute.items())


def test_a_re_roll_in_place_is_read_before_the_chain_goes_on() -> None:
    # d6 re-rolling 1s until they stop, exploding on 6: the faces 1, 6, 1, 3 are the die's first
    # roll re-rolled (1 → 6), the 6 going on, and that roll re-rolled (1 → 3): 6 + 3
    six = Goes(frozenset({6}), frozenset({6}))
    chain = Chain(6, six, Faces(*((1, 2, 3, 4, 5, 6),) * 2), reroll=When(frozenset({1})))
    probe = Probe((1, 6, 1, 3))
    assert sample(chain, probe).value == 9 and probe.used == 4
    # once: the second 1 stands
    once = chain._replace(reroll_once=True)
    assert sample(once, Probe((1, 1))).value == 1
    # the law: a 1 never stands, so a die is worth 2..5, or 6 plus another such die
    exact = law(chain)
    assert exact.pmf[1] == 0.0 and abs(exact.pmf[2] - 1 / 5) < 1e-15
    assert abs(exact.pmf[8] - 1 / 25) < 1e-15  # 6 then 2


def test_negative_scores_keep_their_lowest_value() -> None:
    # a Fudge-style die (−1, 0, +1) rolled again on +1: its law starts at −1
    fudge = Chain(3, Goes(frozenset({3}), frozenset({3})), Faces((-1, 0, 1), (-1, 0, 1)))
    exact = law(Pool(2, fudge))
    assert exact.low == -2 and abs(exact.pmf[0] - 1 / 9) < 1e-15
    brute, unknown = enumerate_program(Pool(2, fudge), 3, 9)
    _compare(_as_dict(exact.pmf, exact.low), brute, unknown)
    # a face that goes on after the first may not score below 0: the value would have no floor
    with pytest.raises(LimitError, match="no lowest"):
        law(Chain(3, Goes(frozenset({1}), frozenset({1})), Faces((-1, 0, 1), (-1, 0, 1))))


def test_a_game_written_before_the_sampler_moved_still_finds_it() -> None:
    # an installed game (an ``astragal.systems`` entry point) may import the sampler's names from
    # ``dice.algebra``, where they were before ``dice/sampler.py``
    from astragal.dice import algebra, sampler

    assert algebra.sample is sampler.sample and algebra.PoolRecord is sampler.PoolRecord
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        algebra.nonsense  # noqa: B018
