"""The shared arithmetic of dice laws, against exact fractions."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from astragal.odds import maths


@pytest.mark.parametrize("n, p", [(1, 0.3), (7, 0.5), (40, 0.1), (2000, 0.3), (5, 0.0), (5, 1.0)])
def test_binomial_equals_exact(n: int, p: float) -> None:
    got = maths.binomial(n, p)
    q = Fraction(p)
    for k in range(0, n + 1, max(1, n // 40)):
        exact = math.comb(n, k) * q**k * (1 - q) ** (n - k)
        assert abs(got[k] - float(exact)) <= 1e-12 * max(1.0, float(exact))
    assert abs(math.fsum(got) - 1.0) < 1e-12


@pytest.mark.parametrize("n, r", [(1, 0.1), (12, 0.3), (300, 0.2), (3000, 0.1)])
def test_negative_binomial_equals_exact_and_reports_its_cut(n: int, r: float) -> None:
    got, lost = maths.negative_binomial(n, r, 1e-18)
    q = Fraction(r)
    for j in range(0, len(got), max(1, len(got) // 30)):
        exact = math.comb(n + j - 1, j) * (1 - q) ** n * q**j
        assert abs(got[j] - float(exact)) <= 1e-12 * max(1.0, float(exact))
    assert 0 <= lost < 1e-17
    assert abs(math.fsum(got) + lost - 1.0) < 1e-12


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=6),
       st.lists(st.integers(0, 9), min_size=1, max_size=6))
def test_contests_and_differences_equal_the_joint_law(a_w: list[int], b_w: list[int]) -> None:
    if not sum(a_w) or not sum(b_w):
        return
    a = [x / sum(a_w) for x in a_w]
    b = [x / sum(b_w) for x in b_w]
    win, lose, tie = maths.contest_chances(a, b)
    diff = maths.difference(a, b)
    joint = {(i, j): p * q for i, p in enumerate(a) for j, q in enumerate(b)}
    assert abs(win - math.fsum(v for (i, j), v in joint.items() if i > j)) < 1e-12
    assert abs(lose - math.fsum(v for (i, j), v in joint.items() if i < j)) < 1e-12
    assert abs(tie - math.fsum(v for (i, j), v in joint.items() if i == j)) < 1e-12
    for m, p in diff.items():
        assert abs(p - math.fsum(v for (i, j), v in joint.items() if i - j == m)) < 1e-12


def test_power_is_repeated_convolution() -> None:
    d6 = [0.0] + [1 / 6] * 6
    three = maths.convolve(maths.convolve(d6, d6), d6)
    assert all(abs(x - y) < 1e-15 for x, y in zip(maths.power(d6, 3), three))
    assert abs(maths.power(d6, 3)[10] - 27 / 216) < 1e-15


def test_geometric_rolls() -> None:
    rolls, cut = maths.geometric_rolls(0.25)
    assert abs(rolls[1] - 0.75) < 1e-15 and abs(rolls[2] - 0.1875) < 1e-15
    assert cut < 1e-16 and abs(math.fsum(rolls.values()) + cut - 1.0) < 1e-15


def test_the_fft_path_gives_the_direct_products_law_and_is_costed_as_such() -> None:
    # the general notation's large sums (1000d6) multiply through the FFT: the same law, to the
    # rounding of the largest term, for far fewer steps than the direct product's
    a = [1 / 3000] * 3000
    b = [1 / 2000] * 2000
    fast = maths.convolve(a, b, fft=True)
    assert max(abs(x - y) for x, y in zip(fast, maths.convolve(a, b))) < 1e-16
    assert min(fast) >= 0.0 and abs(math.fsum(fast) - 1.0) < 1e-12
    steps, memory = maths.convolve_cost(3000, 2000, fft=True)
    assert steps < 3000 * 2000 / 20 < maths.convolve_cost(3000, 2000)[0] * 20
    assert memory >= 8 * (3000 + 2000 - 1)
    # a small product stays direct, and a power by squaring is costed product by product
    assert maths.convolve([0.5, 0.5], [0.5, 0.5], fft=True) == [0.25, 0.5, 0.25]
    assert maths.power_cost(6, 3) == (36 + 66, maths.LIST_BYTES * 16)


def test_numpy_is_bought_when_it_pays_for_its_import_or_after_as_much_rent(monkeypatch) -> None:
    # one rule for every kernel that may use numpy: before numpy is loaded, its import is on
    # the bill; once the process has done as much work in Python loops as the import costs,
    # numpy is used wherever it is less work (a server pays the import once)
    numpy = pytest.importorskip("numpy")
    monkeypatch.delitem(__import__("sys").modules, "numpy")
    monkeypatch.setattr(maths, "_python_work", 0)
    bill = maths.NUMPY_IMPORT
    assert not maths.numpy_pays(bill + 1000, 1000)
    assert maths.numpy_pays(bill + 1001, 1000)
    maths.in_python(bill - 1)
    assert not maths.numpy_pays(5000, 1000)
    maths.in_python(1)
    assert maths.numpy_pays(1001, 1000) and not maths.numpy_pays(1000, 1000)
    monkeypatch.setattr(maths, "_python_work", 0)
    monkeypatch.setitem(__import__("sys").modules, "numpy", numpy)
    assert maths.numpy_pays(1001, 1000) and not maths.numpy_pays(1000, 1000)


@pytest.mark.parametrize("text", ["3d6! > 3d6!", "4d6kh3", "30d6kh10", "6d10!kh3", "cofd: 6 target 10 vs 5",
                                  "jc: dmg 4d12 vs soak 4d12"])
def test_a_one_off_computation_below_numpys_import_does_not_import_it(text: str) -> None:
    # each kernel asks maths.numpy_pays, and counts what it does in Python for the next ones
    import subprocess
    import sys

    code = ("import sys, astragal\nfrom astragal.odds import maths\n"
            f"astragal.odds({text!r})\nprint('numpy' in sys.modules, maths._python_work > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"], (text, out)


def test_power_of_two_values_is_the_binomial_and_of_counts_their_expansion() -> None:
    import math as m

    p = Fraction(1, 1000)
    law = maths.power([float(1 - p), float(p)], 999)
    for k, got in enumerate(law):  # term by term, each within a few ulps (squaring: 2.9e-14)
        want = m.comb(999, k) * p**k * (1 - p) ** (999 - k)
        if want > 1e-250:
            assert abs(Fraction(got) - want) <= want * Fraction(5, 10**15), k
    half = maths.power([0.25, 0.25], 4)  # a law with mass lost: (1/2)^4 of the binomial
    assert half == pytest.approx([x / 16 for x in maths.binomial(4, 0.5)], rel=1e-15)
    assert maths.power([2.0, 1.0], 3) == [8.0, 12.0, 6.0, 1.0]  # counts, not a law: (2 + z)^3
