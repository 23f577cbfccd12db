"""Keep/drop's order statistics over several kinds of dice (``odds/keep.py``): the Python-list
and numpy kernels give one law, and it is the law of every face combination counted."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from astragal.odds import keep


def die(size: int) -> dict[int, float]:
    return {v: 1.0 / size for v in range(1, size + 1)}


def counted(sizes: list[int], highest: bool, k: int) -> dict[int, Fraction]:
    """The kept sum over every combination of faces, each as likely as any other."""
    out: dict[int, Fraction] = {}
    every = Fraction(1, 1)
    for s in sizes:
        every /= s
    for faces in itertools.product(*(range(1, s + 1) for s in sizes)):
        ranked = sorted(faces, reverse=highest)
        total = sum(ranked[:k])
        out[total] = out.get(total, Fraction(0)) + every
    return out


CASES = [
    ([12, 10, 8, 6, 4], True, 2),  # Cortex: one die of each size, the best two
    ([6, 6, 6, 8, 8], False, 3),  # two kinds, several dice each, the lowest three
    ([10, 10, 10, 4, 6, 6], True, 4),
    ([20, 4], True, 1),  # the highest die: the closed form
]


@pytest.mark.parametrize(("sizes", "highest", "k"), CASES)
def test_several_kinds_of_dice_keep_one_law_in_both_kernels(sizes: list[int], highest: bool,
                                                             k: int) -> None:
    classes = [(sizes.count(s), die(s)) for s in sorted(set(sizes), key=sizes.index)]
    plan = keep.keep_plan(classes, highest, k)
    want = counted(sizes, highest, k)
    for numpy in (False, True):
        low, pmf = plan._replace(numpy=numpy).law()
        got = {low + i: p for i, p in enumerate(pmf) if p}
        assert set(got) == set(want), (numpy, sorted(got), sorted(want))
        for total, p in want.items():
            assert got[total] == pytest.approx(float(p), rel=1e-12, abs=1e-16), (numpy, total)


@pytest.mark.parametrize(("sizes", "highest"), [
    ([20, 20], True),  # D&D advantage
    ([20, 20], False),  # disadvantage
    ([20, 20, 20], True),  # elven accuracy
    ([12, 10, 8, 6, 4], True),  # one die of each size
    ([6] * 3 + [8] * 2, False),
])
def test_the_highest_of_equally_likely_faces_is_exact_to_the_last_bit(
        sizes: list[int], highest: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # faces all equally likely: P(all ≤ v) is a ratio of whole numbers, so each probability is
    # the exact one rounded once; the general formula (in floats) agrees to a few ulps
    classes = [(sizes.count(s), die(s)) for s in sorted(set(sizes), key=sizes.index)]
    want = counted(sizes, highest, 1)
    low, pmf = keep.keep_plan(classes, highest, 1).law()
    assert {low + i: p for i, p in enumerate(pmf) if p} == {v: float(p) for v, p in want.items()}
    monkeypatch.setattr(keep, "_UNIFORM_BITS", 0)  # the general formula, for every law
    low, general = keep.keep_plan(classes, highest, 1).law()
    assert general != pmf  # the other path ran: it rounds differently
    assert general == pytest.approx(pmf, rel=1e-13, abs=1e-300)
