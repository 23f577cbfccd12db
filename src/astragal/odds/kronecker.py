"""Exact integer polynomials multiplied as big integers (Kronecker substitution), and their cost.

A law of equally likely faces is a polynomial with whole-number coefficients (counts) over a
common denominator. Its coefficients packed side by side into one integer, with room enough that
no sum of products overflows into its neighbour, make the product of two polynomials one product
of two integers, and a power one ``pow``: the convolution is done by the big-number library, not
by a Python loop. The counts are exact; turned into probabilities at the end, each is correctly
rounded (or within one rounding of it).

The big numbers are Python's own (Karatsuba, about n^1.6) or, when ``gmpy2`` is installed and
pays for its import, GMP's (FFT-based, about n^1.3 over the sizes dice make): the same integers
either way. Work is counted in the steps of ``odds.maths`` (one multiply-add in a Python loop,
about 30 ns); the models below were fitted on the 2-core machine of docs/performance.md.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

__all__ = ["exact_floats", "int_multiply", "int_power", "multiply_cost", "power_cost",
           "rational"]

# Products of integers of b bits: Python ~0.8 µs at 1,000 bits, times (b / 1000)^1.6 (its
# Karatsuba); GMP ~0.2 µs times (b / 1000)^1.3, and a pass over the bits each way (the
# conversion to and from its own numbers). In steps of 30 ns.
_PY_STEPS, _PY_EXP = 27.0, 1.6
_GMP_STEPS, _GMP_EXP = 7.0, 1.3
_CONVERT = 3.0  # steps per 1,000 bits converted between Python's and GMP's integers
# What importing gmpy2 costs, in steps: 1.8–2.5 ms (gmpy2 2.2; 2.3 also loads importlib.metadata
# at import, ~40 ms more, which is why pyproject.toml asks for < 2.3); paid once, like numpy's
# import (``maths.numpy_pays``)
_GMP_IMPORT = 80_000
_state: dict[str, Any] = {"found": None, "python": 0.0}  # gmpy2 installed?; steps done without


def _gmpy2_installed() -> bool:
    if _state["found"] is None:  # looked for once, without importing importlib.util
        _state["found"] = any(getattr(finder, "find_spec", None) is not None and
                              finder.find_spec("gmpy2", None) is not None
                              for finder in sys.meta_path)
    return bool(_state["found"])


def _gmp_pays(python: float, gmp: float) -> bool:
    """Whether GMP does work of ``python`` steps (``gmp`` steps with it) for less: once gmpy2 is
    loaded, when it is less work; before, its import is on the bill until this process has
    multiplied as much in Python as the import costs (a server pays it once)."""
    if python <= gmp or _state["found"] is False:
        return False
    if "gmpy2" in sys.modules:
        return True
    if _state["python"] < _GMP_IMPORT and python <= gmp + _GMP_IMPORT:
        return False  # not worth its import yet (and not worth looking for it)
    return _gmpy2_installed()


def _mul_steps(a_bits: float, b_bits: float, gmp: bool) -> float:
    """Steps of one product of integers of these sizes (a long one times a short one is done in
    pieces of the short one's size)."""
    small, big = max(1.0, min(a_bits, b_bits)), max(1.0, a_bits, b_bits)
    if gmp:
        return (big / small) * _GMP_STEPS * math.pow(small / 1000, _GMP_EXP) + \
            _CONVERT * (a_bits + b_bits) / 1000 + 1
    return (big / small) * _PY_STEPS * math.pow(max(1.0, small / 1000), _PY_EXP) + 1


def _pow_steps(bits: float, n: int, gmp: bool) -> float:
    """Steps of ``pow(x, n)`` for ``x`` of ``bits`` bits: squarings from the top bit of n down,
    each followed by a product with x where n's bit is set."""
    steps, size = 0.0, bits
    for bit in bin(n)[3:]:
        steps += _mul_steps(size, size, gmp)
        size *= 2
        if bit == "1":
            steps += _mul_steps(size, bits, gmp)
            size += bits
    return steps


def _width(bound: int) -> int:
    return (bound.bit_length() + 8) // 8  # bytes per coefficient, with room to spare


def _width_of(bits: float) -> int:
    """``_width`` of a bound of about ``bits`` bits, without making it."""
    return (int(bits) + 9) // 8


def _read_steps(length: int, width: int) -> float:
    """Steps of unpacking ``length`` coefficients of ``width`` bytes and making them floats."""
    return length * (12 + width / 16)


def power_cost(length: int, n: int, total: int) -> tuple[int, int, bool]:
    """(steps, peak bytes, by GMP) of ``int_power`` of a polynomial of ``length`` coefficients
    summing to ``total``, to the ``n``-th power, and of turning its counts into floats."""
    if n == 0 or length <= 1:
        return 8 + 4 * length, 64, False
    width = _width_of(n * math.log2(max(total, 2)) + 1)
    out = (length - 1) * n + 1
    bits = 8.0 * width * length
    python = _pow_steps(bits, n, False)
    gmp = _pow_steps(bits, n, True)
    by_gmp = _gmp_pays(python, gmp)
    steps = (gmp if by_gmp else python) + _read_steps(out, width) + 3 * length * width + 40
    # the power and its bytes, the counts (an int object each) and the floats made of them
    peak = 3 * width * out + out * (32 + width) + 32 * out
    return int(steps), int(peak), by_gmp


def multiply_cost(a: int, b: int, bound_bits: float) -> tuple[int, int, bool]:
    """(steps, peak bytes, by GMP) of ``int_multiply`` of polynomials of ``a`` and ``b``
    coefficients whose products sum to at most about 2**bound_bits."""
    width = _width_of(bound_bits)
    out = a + b - 1
    python = _mul_steps(8.0 * width * a, 8.0 * width * b, False)
    gmp = _mul_steps(8.0 * width * a, 8.0 * width * b, True)
    by_gmp = _gmp_pays(python, gmp)
    steps = (gmp if by_gmp else python) + _read_steps(out, width) + 3 * (a + b) * width + 40
    peak = 3 * width * out + out * (32 + width) + 32 * out
    return int(steps), int(peak), by_gmp


def _pack(coeffs: Sequence[int], width: int) -> int:
    return int.from_bytes(b"".join(c.to_bytes(width, "little") for c in coeffs), "little")


def _unpack(number: int, width: int, length: int) -> list[int]:
    raw = number.to_bytes(width * length, "little")
    return [int.from_bytes(raw[i:i + width], "little") for i in range(0, width * length, width)]


def _counted(python: float, by_gmp: bool) -> None:
    """Count work done with Python's integers that GMP could have done (``_gmp_pays``)."""
    if not by_gmp:
        _state["python"] += python


def int_multiply(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """The product of two polynomials with non-negative integer coefficients, exactly."""
    if not a or not b:
        return []
    if len(a) == 1 or len(b) == 1:
        x = a[0] if len(a) == 1 else b[0]
        return [x * y for y in (b if len(a) == 1 else a)]
    bound = max(a) * max(b) * min(len(a), len(b))
    width = _width(bound)
    _, _, by_gmp = multiply_cost(len(a), len(b), bound.bit_length())
    x, y = _pack(a, width), _pack(b, width)
    if by_gmp:
        import gmpy2  # type: ignore[import-untyped, import-not-found, unused-ignore]

        product = int(gmpy2.mpz(x) * gmpy2.mpz(y))
    else:
        _counted(_mul_steps(8.0 * width * len(a), 8.0 * width * len(b), False), False)
        product = x * y
    return _unpack(product, width, len(a) + len(b) - 1)


def int_power(poly: Sequence[int], n: int) -> list[int]:
    """``poly`` to the ``n``-th power, exactly (non-negative integer coefficients)."""
    if n == 0:
        return [1]
    if len(poly) == 1:
        return [poly[0] ** n]
    total = sum(poly)
    width = _width(total ** n)
    _, _, by_gmp = power_cost(len(poly), n, total)
    base = _pack(poly, width)
    if by_gmp:
        import gmpy2  # type: ignore[import-untyped, import-not-found, unused-ignore]

        number = int(gmpy2.mpz(base) ** n)
    else:
        _counted(_pow_steps(8.0 * width * len(poly), n, False), False)
        number = pow(base, n)
    return _unpack(number, width, (len(poly) - 1) * n + 1)


def exact_floats(counts: Sequence[int], base: int, exp: int) -> list[float]:
    """``counts`` over ``base**exp`` as probabilities: one multiply each while the scale is a
    float, exact big-integer division beyond (each correctly rounded)."""
    if exp * math.log2(max(base, 2)) < 1000:
        scale = 1.0 / base ** exp
        return [c * scale for c in counts]
    den = base ** exp
    return [c / den for c in counts]


# The largest common denominator ``rational`` looks for, and how near count/denominator a
# probability must be (relative to it): a few roundings. A number that is no such ratio is
# rarely that near one with a denominator this small (of 2,000 random floats, none came within
# 5e-14 of a fraction over at most 2**16), and one that is is changed by less than its rounding.
RATIONAL_UPTO = 1 << 16
_CLOSE = 1e-14


def rational(pmf: Sequence[float], most: int = RATIONAL_UPTO) -> tuple[list[int], int] | None:
    """(counts, d): every term of ``pmf`` is count/d to within float rounding (1e-14 of it),
    d ≤ ``most`` — the law of equally likely faces it was made from — or None. A term that
    is not guessed from d so far gives d its own denominator (its nearest fraction), a few
    times at most: one pass over the law, in the usual case."""
    top = max(pmf, default=0.0)
    if not 0.0 < top < math.inf or min(pmf) < 0.0:
        return None
    den = 1
    for _ in range(6):
        counts: list[int] = []
        miss = None
        for p in pmf:
            x = p * den
            c = round(x)
            if abs(x - c) > _CLOSE * x:
                miss = p
                break
            counts.append(c)
        if miss is None:
            return counts, den
        near = Fraction(miss).limit_denominator(most).denominator
        den = den * near // math.gcd(den, near)
        if den > most:
            return None
    return None
