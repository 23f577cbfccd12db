"""The sorted-pool evaluator (astragal.odds.pairing): its two kernels agree, its work estimate
measures its work.

Exactness against the rules is tested per game (tests/systems/jadeclaw/test_odds.py enumerates
``damage_hits`` over every face combination); here the pure-Python exact kernel and the numpy
kernel are checked against each other on pools too big to enumerate, and ``estimate`` against
the work each kernel reports having done (a deterministic count, not a clock).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from astragal.odds import pairing as P

KINDS = [((1, 1), (5, 1)), ((1, 2),), ((5, 1),), ((1, 1), (3, 1), (7, 2))]
pools = st.lists(st.sampled_from([4, 6, 8, 10, 12]), min_size=0, max_size=6)


@settings(max_examples=60, deadline=None)
@given(pools.filter(bool), pools, st.booleans(), st.booleans(), st.sampled_from(KINDS),
       st.integers(0, 2))
def test_exact_and_numpy_kernels_agree(a: list[int], d: list[int], fa: bool, fd: bool,
                                       steps: tuple[tuple[int, int], ...], bonus: int) -> None:
    att, dfn = P.Pool(tuple(a), fa), P.Pool(tuple(d), fd)
    one = P.distribution(att, dfn, steps, bonus, kernel="exact")
    two = P.distribution(att, dfn, steps, bonus, kernel="numpy")
    assert len(one) == len(two)
    assert max(abs(x - y) for x, y in zip(one, two)) < 1e-12
    assert abs(sum(one) - 1) < 1e-12


@settings(max_examples=60, deadline=None)
@given(pools.filter(bool), pools.filter(bool), st.booleans(), st.booleans(),
       st.sampled_from(KINDS), st.integers(0, 2))
def test_defence_steps_as_unit_steps_count_what_the_exact_kernel_counts(
        a: list[int], d: list[int], fa: bool, fd: bool, steps: tuple[tuple[int, int], ...],
        bonus: int) -> None:
    """The numpy kernel runs a big defence step as unit steps (one die at a time, the states
    the history's clipping makes equal merged after each, the binomial coefficient read at
    the end): forced on every defence step of small pools, it gives the exact kernel's law."""
    from astragal.odds import pairing_numpy

    att, dfn = P.Pool(tuple(a), fa), P.Pool(tuple(d), fd)
    shape = P._shape(att, dfn, steps, bonus)
    exact = [float(x) for x in P._exact(shape)[0]]
    whole = P._numpy(shape)[0]
    saved = pairing_numpy.CHAIN_FROM
    pairing_numpy.CHAIN_FROM = 0
    try:
        chained = P._numpy(shape)[0]
    finally:
        pairing_numpy.CHAIN_FROM = saved
    assert len(chained) == len(exact)
    # a few units in the last place of 1 from the exact law (the kernel without unit steps is
    # as far), 1e-15 from the kernel without them
    assert max(abs(x - y) for x, y in zip(exact, chained)) < 4e-15
    assert max(abs(x - y) for x, y in zip(whole, chained)) < 1e-15


@pytest.mark.parametrize("a,d,fa,fd", [((12,) * 8 + (10,), (12,) * 6, False, False),
                                       ((12,) * 9, (12,) * 7, True, False),
                                       ((12, 12, 10, 8, 8, 6, 6), (12, 10, 10, 8), True, True)])
def test_big_defence_steps_give_the_same_law_either_way(a: tuple[int, ...],
                                                        d: tuple[int, ...], fa: bool,
                                                        fd: bool) -> None:
    """Pools big enough that the numpy kernel runs their defence steps as unit steps: the same
    law (to 1e-15) as every (state, dice placed) moved at once."""
    from astragal.odds import pairing_numpy

    shape = P._shape(P.Pool(a, fa), P.Pool(d, fd), KINDS[0], 1)
    chained = P._numpy(shape)[0]
    saved = pairing_numpy.CHAIN_FROM
    pairing_numpy.CHAIN_FROM = 10 ** 9
    try:
        whole = P._numpy(shape)[0]
    finally:
        pairing_numpy.CHAIN_FROM = saved
    assert max(abs(x - y) for x, y in zip(chained, whole)) < 1e-15
    assert abs(sum(chained) - 1) < 1e-12


def test_no_attack_dice_score_nothing() -> None:
    assert P.distribution(P.Pool(()), P.Pool((12, 12)), ((1, 1),), 1) == [1.0]


def test_bad_steps_are_refused() -> None:
    with pytest.raises(ValueError):
        P.distribution(P.Pool((6,)), P.Pool((6,)), ((0, 1),))


GRID = [(n, m, fa, fd, steps, sizes)
        for n, m in [(1, 0), (2, 1), (3, 3), (5, 2), (4, 6), (8, 3), (12, 0), (6, 6)]
        for fa, fd in [(False, False), (True, True)]
        for steps in KINDS[:3]
        for sizes in [(12,), (12, 10, 8, 6, 4), (8, 8, 4)]]


def _pools(n: int, m: int, fa: bool, fd: bool, sizes: tuple[int, ...]) -> tuple[P.Pool, P.Pool]:
    return (P.Pool(tuple(itertools.islice(itertools.cycle(sizes), n)), fa),
            P.Pool(tuple(itertools.islice(itertools.cycle(sizes[::-1]), m)), fd))


@pytest.mark.parametrize("n,m,fa,fd,steps,sizes", GRID)
def test_estimate_is_within_4x_of_the_work_done(n: int, m: int, fa: bool, fd: bool,
                                                steps: tuple[tuple[int, int], ...],
                                                sizes: tuple[int, ...]) -> None:
    """``estimate`` (before any work) within a factor of 4 of the steps each kernel counts."""
    att, dfn = _pools(n, m, fa, fd, sizes)
    shape = P._shape(att, dfn, steps, 1)
    _, exact_steps = P._exact(shape)
    _, numpy_steps, _ = P._numpy(shape)
    for kernel, done in (("exact", exact_steps), ("numpy", numpy_steps)):
        guess = P.estimate(att, dfn, steps, 1, kernel)
        assert done / 4 <= guess.steps <= done * 4, (kernel, guess, done)


MEMORY = [(n, m, fa, fd, sizes) for n, m in [(3, 3), (6, 4), (8, 6), (10, 10), (20, 2), (30, 0)]
          for fa, fd in [(False, False), (True, True)]
          for sizes in [(12,), (12, 10, 8)]]


@pytest.mark.parametrize("n,m,fa,fd,sizes", MEMORY)
def test_estimated_memory_is_within_4x_of_the_traced_peak(n: int, m: int, fa: bool, fd: bool,
                                                          sizes: tuple[int, ...]) -> None:
    """``estimate``'s peak bytes against what ``tracemalloc`` sees the kernel allocate (numpy
    reports its arrays to it); small runs are held to 4x of a 1 MiB floor."""
    import tracemalloc

    import numpy  # noqa: F401  # imported before tracing: the kernel's arrays, not the import

    att, dfn = _pools(n, m, fa, fd, sizes)
    steps = KINDS[0]
    for kernel in ("exact", "numpy"):
        guess = P.estimate(att, dfn, steps, 1, kernel)
        if guess.steps > 3_000_000:
            continue  # the slow kernel on a big pool: the other one is checked
        shape = P._shape(att, dfn, steps, 1)
        run = P._exact if kernel == "exact" else P._numpy
        tracemalloc.start()
        try:
            run(shape)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        floor = 1 << 20
        assert max(peak, floor) / 4 <= max(guess.peak_bytes, floor) <= max(peak, floor) * 4, \
            (kernel, guess, peak)


PLAIN_CLOSED = [((12,), ()), ((4,), ()), ((12, 12, 12), ()), ((12, 10, 4, 4), ()), ((6,) * 7, ()),
                ((12,) * 20, ()), ((12,), (12,)), ((4,), (12, 8, 6)), ((12,), (4, 4, 4, 4)),
                ((8,), (12,) * 5), ((12, 12), (12,)), ((12,) * 7, (4,)), ((12, 10, 8, 4), (6,)),
                ((4, 4), (12,)), ((12,) * 12, (12,)), ((12, 12), (4, 4)), ((6, 6), (12,) * 12),
                ((4, 12), (12,) * 7), ((1, 2), (1, 1, 3))]
TWO_DICE = [((12, 12), (12, 12)), ((12, 8), (12, 10, 8, 6)), ((4, 12), (12,) * 5),
            ((6, 6), (12, 12, 10, 10, 8)), ((12, 10), (4, 4, 4)), ((12, 12, 12), (12, 12)),
            ((12, 10, 8, 8, 6), (10, 4)), ((4, 4, 4), (12, 6))]
CLOSED = [(a, fa, d, fd, steps, bonus)
          for a, d, favored in [(a, d, [(False, False)]) for a, d in PLAIN_CLOSED]
          + [(a, d, [(False, False), (True, False), (False, True), (True, True)])
             for a, d in TWO_DICE]
          for fa, fd in favored for steps in KINDS for bonus in (0, 1)]


@pytest.mark.parametrize("a,fa,d,fd,steps,bonus", CLOSED)
def test_closed_form_counts_what_the_exact_kernel_counts(
        a: tuple[int, ...], fa: bool, d: tuple[int, ...], fd: bool,
        steps: tuple[tuple[int, int], ...], bonus: int) -> None:
    """Plain pools with no defence dice or one die on a side, and two dice on a side against two
    or more, either side favoured: the closed form's exact fractions are the exact kernel's,
    and its estimate is within 4x of the steps it counts."""
    att, dfn = P.Pool(a, fa), P.Pool(d, fd)
    assert P._closed_form(att, dfn)
    shape = P._shape(att, dfn, steps, bonus)
    counts, total, done = P._closed(shape)
    exact = P._exact(shape)[0]
    closed = [Fraction(c, total) for c in counts]
    assert closed + [0] * (len(exact) - len(closed)) == exact
    guess = P.estimate(att, dfn, steps, bonus)
    assert guess.kernel == "closed"
    assert done / 4 <= guess.steps <= done * 4 + 64, (guess, done)
    assert P.distribution(att, dfn, steps, bonus) == P.distribution(att, dfn, steps, bonus,
                                                                    kernel="exact")


def test_favored_pools_and_sorted_pairs_are_not_closed() -> None:
    assert not P._closed_form(P.Pool((12,), True), P.Pool(()))
    assert not P._closed_form(P.Pool((12,)), P.Pool((12,), True))
    assert not P._closed_form(P.Pool((12, 12), True), P.Pool((12,)))
    assert not P._closed_form(P.Pool((12, 12, 12)), P.Pool((12, 12, 12)))


def test_the_estimate_sums_the_states_in_closed_form_as_it_would_one_by_one() -> None:
    # the work estimate's sums over every (a, b) a face can reach, summed over b in closed
    # form (a pool of 500 dice a side took 1.2 s to be refused, counted pair by pair)
    import math

    from astragal.odds.pairing import _state_sums

    for na, ns, m, live in itertools.product(range(7), range(7), range(7), range(4)):
        s0 = sa = sb = 0
        for a in range(na + 1):
            for b in range(ns + 1):
                hist = math.comb(max(0, min(a, m) - b) + live, live)
                s0, sa, sb = s0 + hist, sa + hist * a, sb + hist * b
        assert _state_sums(na, ns, m, live) == (s0, sa, sb), (na, ns, m, live)
