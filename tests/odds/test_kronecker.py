"""Exact powers as big integers (odds/kronecker.py), on Python's integers and on GMP's."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from astragal.odds import kronecker, maths

BACKENDS = ["python", "gmp"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every product on one backend: GMP's (when gmpy2 is installed) or Python's."""
    if request.param == "gmp":
        pytest.importorskip("gmpy2")
        monkeypatch.setitem(kronecker._state, "found", True)
        monkeypatch.setitem(kronecker._state, "python", float(kronecker._GMP_IMPORT))
        monkeypatch.setattr(kronecker, "_GMP_STEPS", 0.0)  # GMP whatever the size
        monkeypatch.setattr(kronecker, "_CONVERT", 0.0)
    else:
        monkeypatch.setitem(kronecker._state, "found", False)
    monkeypatch.setattr(maths, "EXACT_PREMIUM", 10**9)  # the exact route, whatever it costs
    return str(request.param)


def _poly_power(poly: list[int], n: int) -> list[int]:
    out = [1]
    for _ in range(n):
        nxt = [0] * (len(out) + len(poly) - 1)
        for i, x in enumerate(out):
            for j, y in enumerate(poly):
                nxt[i + j] += x * y
        out = nxt
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=2, max_size=7), st.integers(0, 12))
def test_int_power_is_the_polynomial_power(poly: list[int], n: int) -> None:
    for found in (False, None):  # Python's integers; GMP's when it is installed and pays
        kronecker._state["found"] = found
        assert kronecker.int_power(poly, n) == _poly_power(poly, n)
    kronecker._state["found"] = None


def test_both_backends_give_the_same_counts(backend: str) -> None:
    got = kronecker.int_power([1] * 6, 100)
    assert got == _poly_power([1] * 6, 100)
    assert sum(got) == 6**100
    assert kronecker.int_multiply([3, 0, 7], [1, 2]) == [3, 6, 7, 14]
    assert ("gmpy2" in __import__("sys").modules) or backend == "python"


@pytest.mark.parametrize("size, n", [(6, 100), (20, 50), (10, 20), (6, 300)])
def test_an_exact_power_is_the_sum_of_dice_correctly_rounded(backend: str, size: int,
                                                            n: int) -> None:
    law = maths.power([1 / size] * size, n, exact=True)
    counts = _poly_power([1] * size, n) if n <= 100 else kronecker.int_power([1] * size, n)
    assert len(law) == len(counts)
    den = size**n
    for got, c in zip(law, counts):
        # within one rounding of the exact fraction (the scale is one float: two roundings)
        want = Fraction(c, den)
        assert abs(Fraction(got) - want) <= want * Fraction(1, 2**51)
    # the far tails are there, not lost to float products' noise
    assert law[0] == pytest.approx(float(Fraction(1, den)), rel=1e-15)


def test_rational_reads_laws_of_equally_likely_faces_and_nothing_else() -> None:
    assert maths.rational([1 / 6] * 6) == ([1] * 6, 6)
    assert maths.rational([0.0, 0.25, 0.5, 0.25]) == ([0, 1, 2, 1], 4)
    assert maths.rational([1 / 36 * k for k in (1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1)]) == \
        ([1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1], 36)
    assert maths.rational([2.0, 1.0]) == ([2, 1], 1)  # counts: a denominator of 1
    assert maths.rational([1 / 3, 1 / 7]) == ([7, 3], 21)  # the two denominators' multiple
    assert maths.rational([math.pi / 4, 1 - math.pi / 4]) is None  # not a ratio of counts
    assert maths.rational([0.5, 1e-30]) is None  # a denominator past the bound
    assert maths.rational([0.5, -0.5]) is None and maths.rational([]) is None


def test_the_exact_route_is_taken_only_when_asked_and_planned_as_such(backend: str) -> None:
    unit = [1 / 6] * 6
    steps, _, numpy = maths.power_plan(6, 100, fft=True, unit=unit)
    assert not numpy
    assert steps == kronecker.power_cost(6, 100, 6)[0] + 18
    # without the unit (or with exact off), the float products: the law agrees to rounding
    floats = maths.power(unit, 100, fft=True, numpy=False)
    exact = maths.power(unit, 100, fft=True, exact=True)
    assert floats != exact
    assert all(abs(a - b) <= 1e-12 * b for a, b in zip(floats, exact) if b > 1e-290)


def test_gmp_is_bought_when_it_pays_for_its_import(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(__import__("sys").modules, "gmpy2", raising=False)
    monkeypatch.setitem(kronecker._state, "found", True)
    monkeypatch.setitem(kronecker._state, "python", 0.0)
    cost = kronecker._GMP_IMPORT
    assert not kronecker._gmp_pays(cost, 1.0)  # not worth its import
    assert kronecker._gmp_pays(cost + 2.0, 1.0)
    monkeypatch.setitem(kronecker._state, "python", float(cost))  # as much done without it
    assert kronecker._gmp_pays(2.0, 1.0) and not kronecker._gmp_pays(1.0, 1.0)
    monkeypatch.setitem(kronecker._state, "found", False)  # not installed: never
    assert not kronecker._gmp_pays(10.0 * cost, 1.0)
