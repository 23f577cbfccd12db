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
