"""Sums of many dice are exact: every probability is the true fraction, correctly rounded (the
power and the sums as big integers, odds/kronecker.py), on Python's integers and on GMP's."""

from __future__ import annotations

from fractions import Fraction

import pytest

import astragal
from astragal.odds import kronecker, maths
from astragal.systems.dice import exact, laws


def _law(terms: list[tuple[int, int, int]]) -> dict[int, Fraction]:
    """The exact law of a sum of terms (sign, dice, sides), one die at a time in Fractions."""
    law = {0: Fraction(1)}
    for sign, count, sides in terms:
        for _ in range(count):
            nxt: dict[int, Fraction] = {}
            for v, p in law.items():
                for f in range(1, sides + 1):
                    nxt[v + sign * f] = nxt.get(v + sign * f, 0) + p / sides
            law = nxt
    return law


@pytest.mark.parametrize("backend", ["python", "gmp"])
@pytest.mark.parametrize("text, terms", [
    ("60d6", [(1, 60, 6)]),
    ("40d6+25d20", [(1, 40, 6), (1, 25, 20)]),
    ("30d10-20d8+7", [(1, 30, 10), (-1, 20, 8)]),
    ("50d4+d12", [(1, 50, 4), (1, 1, 12)]),
])
def test_a_sum_of_many_dice_is_its_exact_law_correctly_rounded(
        backend: str, text: str, terms: list[tuple[int, int, int]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    if backend == "gmp":
        pytest.importorskip("gmpy2")
        monkeypatch.setitem(kronecker._state, "python", float(kronecker._GMP_IMPORT))
        monkeypatch.setitem(kronecker._state, "found", True)
    else:
        monkeypatch.setitem(kronecker._state, "found", False)
    monkeypatch.setattr(maths, "EXACT_PREMIUM", 10**9)  # the exact route, whatever it costs
    exact._BODIES.clear()
    laws.forget()
    got = astragal.odds(text).distribution
    want = _law(terms)
    shift = 7 if text.endswith("+7") else 0
    assert {k - shift for k in got.outcomes()} == set(want)
    for k, p in got.items():
        w = want[k - shift]
        # one rounding of the exact fraction, two where the scale is a float: 2**-51 of it
        assert abs(Fraction(p) - w) <= w * Fraction(1, 2**51), (k, p, float(w))
    exact._BODIES.clear()
    laws.forget()
