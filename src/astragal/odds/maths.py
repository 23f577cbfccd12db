"""The arithmetic of dice laws, written once for every game.

Laws here are dense lists: ``pmf[k]`` is the probability of the value ``k`` (counts of
successes, sums shifted to start at 0). Every function is exact up to float rounding, except where
an infinite tail is cut; those return the probability they left out, and cut only below ``eps``.

Nothing here knows a game. The dice algebra (``astragal.odds.algebra``) builds on these.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from itertools import product
from typing import Any, TypeVar

from . import kronecker
from .kronecker import exact_floats, int_multiply, int_power, rational

__all__ = [
    "apply",
    "binomial",
    "compound",
    "condition",
    "contest_chances",
    "convolve",
    "convolve_cost",
    "convolve_work",
    "counts_power",
    "counts_power_plan",
    "cumulative_below",
    "difference",
    "difference_of",
    "exact_floats",
    "geometric_rolls",
    "in_python",
    "int_multiply",
    "int_power",
    "mix",
    "negative_binomial",
    "numpy_pays",
    "power",
    "power_cost",
    "power_counts",
    "power_plan",
    "power_work",
    "pushforward",
    "rational",
    "series_divide",
    "sum_counts",
    "sum_counts_cost",
    "sum_of",
    "tail_sum",
    "trim_tail",
    "unimodal",
]


def unimodal(size: int | None, log_at: Callable[[int], float], ratio: Callable[[int], float],
             mode: int, eps: float) -> tuple[list[float], float]:
    """Terms p[0..] of a unimodal law from its log-probability at the mode and p[k+1]/p[k].

    Walking out from the mode never underflows where it matters. With ``size`` None the law has
    an infinite tail, cut where what is left falls below ``eps``; returns (terms, lost mass).
    """
    at_mode = math.exp(log_at(mode))
    below: list[float] = []
    p, k = at_mode, mode
    while k > 0 and p > 0.0:
        p = p / ratio(k - 1)
        k -= 1
        below.append(p)
    terms = [0.0] * k + below[::-1] + [at_mode]
    p, k = at_mode, mode
    while size is None or k < size:
        rho = ratio(k)
        p *= rho
        k += 1
        if size is None and rho < 1 and p * rho / (1 - rho) < eps and p < eps:
            return terms, tail_sum(p, ratio, k)
        terms.append(p)
    return terms, 0.0


def tail_sum(first: float, ratio: Callable[[int], float], k: int) -> float:
    """The mass lost past a cut: the first dropped term and the rest, to six digits."""
    tail = [first]
    while tail[-1] > 1e-7 * first and tail[-1] > 1e-300:
        tail.append(tail[-1] * ratio(k))
        k += 1
    return math.fsum(tail)


def binomial(n: int, p: float) -> list[float]:
    """P(k of n independent trials succeed), each with probability ``p``."""
    if p <= 0.0 or n == 0:
        return [1.0] + [0.0] * n
    if p >= 1.0:
        return [0.0] * n + [1.0]
    q = 1.0 - p
    if n * -math.log(q) < 600:  # q**n is a normal float: walk up from 0, most accurate
        out = [q**n]
        for k in range(n):
            out.append(out[-1] * (n - k) / (k + 1) * p / q)
        return out
    mode = min(n, int((n + 1) * p))
    terms, _ = unimodal(
        n, lambda k: (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                      + k * math.log(p) + (n - k) * math.log(q)),
        lambda k: (n - k) / (k + 1) * p / q, mode, 0.0)
    return terms


def negative_binomial(n: int, r: float, eps: float) -> tuple[list[float], float]:
    """P(j continuations) for n independent chains that each go on with probability ``r``.

    C(n+j−1, j)·(1−r)^n·r^j: the number of explosions (re-rolls) of n exploding dice. The tail is
    cut where what is left is below ``eps``; returns (terms, lost mass).
    """
    if r <= 0.0 or n == 0:
        return [1.0], 0.0
    ratio: Callable[[int], float] = lambda j: (n + j) / (j + 1) * r
    if n * -math.log1p(-r) < 600:
        out = [(1.0 - r) ** n]
        j = 0
        while True:
            rho = (n + j) / (j + 1) * r  # ratio(j), written out: a call a term costs more
            nxt = out[-1] * rho
            j += 1
            if rho < 1 and nxt * rho / (1 - rho) < eps and nxt < eps:
                return out, tail_sum(nxt, ratio, j)
            out.append(nxt)
    mode = int((n - 1) * r / (1 - r))
    return unimodal(None, lambda j: (math.lgamma(n + j) - math.lgamma(j + 1) - math.lgamma(n)
                                     + n * math.log1p(-r) + j * math.log(r)),
                    ratio, mode, eps)


# The units work is counted in, shared by every estimate: a *step* is one multiply-add in a
# Python loop (about 30 ns); numpy does about ``CELLS`` element operations in that time, plus
# ``CALL`` steps per call; a float held in a Python list takes ``LIST_BYTES``.
CELLS = 40
CALL = 60  # about 1.5 µs
LIST_BYTES = 32  # the pointer and the float object
# What importing numpy costs, in steps: ``python -c "import numpy"`` took 47-51 ms on the
# 2-core machine of docs/performance.md (numpy 2.4), about 1.5 M steps of 30 ns
NUMPY_IMPORT = 1_500_000
_python_work = 0  # steps this process has done in Python loops that numpy could have done


def numpy_pays(python: int, numpy: int) -> bool:
    """Whether work of ``python`` steps in Python loops (``numpy`` steps with numpy) is better
    done with numpy. Once numpy is loaded: when it is less work. Before, numpy's import is part
    of the bill, until this process has done as much work in Python as the import costs (a
    server or a long script: from then on the import pays for itself, as renting skis does
    until their price is spent). Every kernel that may use numpy, and its estimate, asks this."""
    if "numpy" in sys.modules or _python_work >= NUMPY_IMPORT:
        return python > numpy
    return python > numpy + NUMPY_IMPORT


def in_python(steps: int) -> None:
    """Count work done in Python loops that numpy could have done (``numpy_pays``)."""
    global _python_work
    _python_work += steps


FFT_FROM = 4_000_000  # with ``fft``: a product of more multiply-adds goes through the FFT


def _numpy_steps(direct: int, out: int) -> int:
    """Steps of numpy's direct convolution of ``direct`` multiply-adds into ``out`` terms."""
    return direct // 200 + 4 * CALL + out  # two arrays made, the product, a list back


def _by_fft(la: int, lb: int, fft: bool) -> bool:
    return fft and la * lb > FFT_FROM and min(la, lb) >= 64


def convolve(a: Sequence[float], b: Sequence[float], fft: bool = False,
             numpy: bool | None = None) -> list[float]:
    """The law of the sum of two independent values.

    With ``fft``, a product of more than ``FFT_FROM`` multiply-adds (both parts 64 long or more)
    goes through numpy's FFT, O(n log n), its rounding about 1e-16 of the largest term (the
    general notation's sums of many dice). Else numpy's direct loop when it pays for itself
    (``numpy_pays``; ``numpy``: as the caller decided for a whole computation), else Python.
    """
    if not a or not b:
        return []
    size, out_len = len(a) * len(b), len(a) + len(b) - 1
    if _by_fft(len(a), len(b), fft):
        return _fft_convolve(a, b)
    if numpy is None:
        numpy = numpy_pays(size, _numpy_steps(size, out_len))
    if numpy and len(a) > 1 and len(b) > 1:
        import numpy as np

        out_np: list[float] = np.convolve(np.asarray(a), np.asarray(b)).tolist()
        return out_np
    in_python(size)
    out = [0.0] * out_len
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _fft_convolve(a: Sequence[float], b: Sequence[float]) -> list[float]:
    import numpy as np

    n = len(a) + len(b) - 1
    size = 1 << (n - 1).bit_length()
    out = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(b, size), size)[:n]
    out[out < 1e-300] = 0.0  # rounding can leave tiny negatives where the answer is 0
    result: list[float] = out.tolist()
    return result


def convolve_cost(la: int, lb: int, fft: bool = False,
                  numpy: bool | None = None) -> tuple[int, int]:
    """(steps, peak bytes) of ``convolve`` on parts of these lengths, by the path it takes:
    Python loops, numpy's direct loop (several hundred multiply-adds a step) or the FFT."""
    direct, out = la * lb, la + lb - 1
    if _by_fft(la, lb, fft):
        size = 1 << (out - 1).bit_length()
        return size * max(1, size.bit_length()) // 4 + 4 * CALL + out, \
            LIST_BYTES * out + 8 * 6 * size
    if la == 1 or lb == 1:
        return direct, LIST_BYTES * direct
    steps = _numpy_steps(direct, out)
    if numpy is None:
        numpy = numpy_pays(direct, steps)
    if numpy:
        return steps, LIST_BYTES * out + 8 * 2 * (la + lb + out)
    return direct, LIST_BYTES * out


def _products(length: int, n: int) -> list[tuple[int, int]]:
    """The lengths multiplied by ``power`` of a law of ``length`` terms to ``n``, in turn."""
    out = []
    result, base = 0, length
    while n:
        if n & 1:
            if result:
                out.append((result, base))
                result += base - 1
            else:
                result = base
        n >>= 1
        if n:
            out.append((base, base))
            base = 2 * base - 1
    return out


def _power_by_numpy(length: int, n: int, fft: bool) -> bool:
    """Whether ``power``'s direct products run on numpy: decided once for all of them, by their
    work in all (``numpy_pays``), so that numpy is not imported halfway through."""
    direct = [(a, b) for a, b in _products(length, n) if not _by_fft(a, b, fft) and a > 1]
    return numpy_pays(sum(a * b for a, b in direct),
                      sum(_numpy_steps(a * b, a + b - 1) for a, b in direct))


EXACT_UPTO = 4096  # laws this long or shorter may be read as counts (``rational``) and powered
# exactly; 0: never (a count of the Python lines the float products run sets it)
# The exact route is taken while it is at most this many times the float products' work: its
# terms are correctly rounded, where the floats' lose about n·eps each and the FFT's are exact
# only to ~1e-16 of the largest (a far tail of 1e-70 is noise there)
EXACT_PREMIUM = 4


def _exact(unit: Sequence[float], n: int, fft: bool) -> tuple[list[int], int] | None:
    """``unit`` as (counts, denominator) when ``power`` takes the exact route for it: a law of
    equally likely faces (``rational``) whose power as one big integer (``kronecker``) is less
    work than the float products."""
    if not 2 <= len(unit) <= EXACT_UPTO or n < 2:
        return None
    found = rational(unit)
    if found is None:
        return None
    exact = kronecker.power_cost(len(unit), n, sum(found[0]))[0]
    return found if exact <= EXACT_PREMIUM * _float_plan(len(unit), n, fft)[0] else None


def power_counts(unit: Sequence[float], n: int,
                 fft: bool = False) -> tuple[list[int], int] | None:
    """(counts, denominator) of ``power(unit, n, fft, exact=True)`` when it takes the exact
    route, else None: its law is ``exact_floats(counts, denominator, 1)``."""
    counted = _exact(unit, n, fft) if n else None
    if counted is None:
        return None
    return int_power(counted[0], n), counted[1] ** n


def sum_counts(a: tuple[Sequence[int], int], b: tuple[Sequence[int], int]) -> tuple[list[int], int]:
    """(counts, denominator) of the sum of two independent laws given as counts over their
    denominators: one product of big integers (``kronecker.int_multiply``)."""
    return int_multiply(a[0], b[0]), a[1] * b[1]


def sum_counts_cost(a: tuple[Sequence[int], int], b: tuple[Sequence[int], int],
                    fft: bool = False) -> tuple[int, int] | None:
    """(steps, peak bytes) of ``sum_counts`` and of the floats made of its counts, when that is
    the less work than ``convolve``'s float products (within ``EXACT_PREMIUM``), else None."""
    bits = (max(a[0]) * max(b[0]) * min(len(a[0]), len(b[0]))).bit_length()
    steps, peak, _ = kronecker.multiply_cost(len(a[0]), len(b[0]), bits)
    floats, _ = convolve_cost(len(a[0]), len(b[0]), fft)
    return (steps, peak) if steps <= EXACT_PREMIUM * floats else None


def counts_power_plan(length: int, total: int, n: int) -> tuple[int, int, bool]:
    """(steps, peak bytes, exact) of ``counts_power`` of ``length`` counts summing to ``total``:
    the exact route's (``kronecker.power_cost``) where it is at most ``EXACT_PREMIUM`` times
    the float products' work, else theirs (numpy's when it pays, else the Python loops of
    ``power_work``)."""
    steps, peak, numpy = _float_plan(length, n, False)
    if not numpy and length != 2:
        steps = power_work(length, n)
    if 2 <= length <= EXACT_UPTO and n >= 2 and total > 0:
        exact, exact_peak, _ = kronecker.power_cost(length, n, total)
        if exact <= EXACT_PREMIUM * steps:
            return exact, exact_peak, True
    return steps, peak, False


def counts_power(counts: Sequence[int], n: int) -> list[float]:
    """The law of the sum of ``n`` dice whose faces fall on each value as often as ``counts``
    says (over their sum): exactly, as one big-integer power, when ``counts_power_plan`` takes
    that route; else ``power`` of their floats."""
    total = sum(counts)
    if counts_power_plan(len(counts), total, n)[2]:
        return exact_floats(int_power(counts, n), total, n)
    return power([c / total for c in counts], n)


def power(unit: Sequence[float], n: int, fft: bool = False,
          numpy: bool | None = None, exact: bool = False) -> list[float]:
    """The law of the sum of ``n`` independent copies of ``unit`` (squaring, O(log n) steps);
    ``numpy``: the kernel of its direct products, as ``power_plan`` chose (None: choose now).

    With ``exact`` (the caller's estimate is ``power_plan`` given the unit), a law of equally
    likely faces (its terms counts over a common denominator, ``rational``) is raised exactly
    where that is less work: its counts packed into one integer, raised to the n-th power
    (``kronecker.int_power``), each term correctly rounded at the end."""
    if n == 0:
        return [1.0]
    counted = power_counts(unit, n, fft) if exact else None
    if counted is not None:
        return exact_floats(counted[0], counted[1], 1)
    total = math.fsum(unit) if len(unit) == 2 and min(unit) >= 0.0 else 0.0
    if 0.0 < total <= 1.0:
        # a law of two values (a success count): the binomial term by term, where squaring
        # would lose about n·eps of each term
        counts = binomial(n, unit[1] / total)
        return counts if total == 1.0 else [c * total**n for c in counts]
    if numpy is None:
        numpy = _power_by_numpy(len(unit), n, fft)
    result: list[float] | None = None
    base = list(unit)
    while True:
        if n & 1:
            result = base if result is None else convolve(result, base, fft, numpy)
        n >>= 1
        if not n:
            assert result is not None
            return result
        base = convolve(base, base, fft, numpy)


def power_plan(length: int, n: int, fft: bool = False,
               unit: Sequence[float] | None = None) -> tuple[int, int, bool]:
    """(steps, peak bytes, numpy) of ``power`` of a law of ``length`` terms to ``n``: the
    squarings and products it will do, through the lengths they make, each by the path it
    takes; numpy: the kernel of the direct products, to hand to ``power``. Given the ``unit``
    itself, the exact route's when ``power(..., exact=True)`` takes it."""
    exact = None if unit is None else _exact(unit, n, fft)
    if exact is not None:
        steps, peak, _ = kronecker.power_cost(len(unit or ()), n, sum(exact[0]))
        return steps + 3 * length, peak, False
    return _float_plan(length, n, fft)


def _float_plan(length: int, n: int, fft: bool) -> tuple[int, int, bool]:
    """``power_plan`` of the float products."""
    if length == 2 and n:  # the binomial (``power``): a term a trial
        return 4 * n + 16, LIST_BYTES * (n + 1), False
    numpy = _power_by_numpy(length, n, fft)
    steps = peak = 0
    loads = False
    for a, b in _products(length, n):
        s, m = convolve_cost(a, b, fft, numpy)
        steps, peak = steps + s, max(peak, m)
        loads = loads or numpy or _by_fft(a, b, fft)
    if loads and "numpy" not in sys.modules:  # numpy's import is part of this power's time
        steps += NUMPY_IMPORT
    return steps, peak, numpy


def power_cost(length: int, n: int, fft: bool = False) -> tuple[int, int]:
    """(steps, peak bytes) of ``power`` (``power_plan``)."""
    steps, peak, _ = power_plan(length, n, fft)
    return steps, peak


def convolve_work(a: int, b: int) -> int:
    """The steps of ``convolve`` on laws of lengths ``a`` and ``b`` by the path it takes: in
    Python (a multiply-add and its loop: two lines), or numpy's where it pays
    (``numpy_pays``, its import counted while it is still to come)."""
    direct = a * b
    if a > 1 and b > 1:
        numpy = _numpy_steps(direct, a + b - 1)
        if numpy_pays(direct, numpy):
            return numpy + (0 if "numpy" in sys.modules else NUMPY_IMPORT)
    return 2 * a * b + a + 8


def power_work(length: int, n: int) -> int:
    """The steps of ``power`` of a law of ``length`` terms to ``n`` (its squarings and products,
    followed through the lengths they make)."""
    steps, result, base = 8, 1, length
    while n:
        if n & 1:
            steps += convolve_work(result, base)
            result += base - 1
        n >>= 1
        if n:
            steps += convolve_work(base, base)
            base = 2 * base - 1
    return steps


def series_divide(numerator: Sequence[float], denominator: Sequence[float],
                  eps: float) -> tuple[list[float], float]:
    """The power series N(z)/D(z) of a law, cut where the mass left is below ``eps``.

    This is the law of an explosion chain: a run that stops with generating function S(z) and goes
    on with R(z) has the law S(z)/(1 − R(z)). ``D(z) = d0 − R(z)`` with ``d0 > R(1) ≥ 0`` and R's
    coefficients nonnegative. Past N's degree every term is fed only by the last few, so the mass
    still to come is known exactly from them (no cancellation against 1). Returns (terms, lost).
    """
    d0 = denominator[0]
    go = [-c for c in denominator]
    go[0] = 0.0
    deg = len(denominator) - 1
    rest = d0 - math.fsum(go)
    if rest <= 0.0:
        raise ValueError("this chain does not end")
    # above[m] = R's mass at powers ≥ m
    above = [0.0] * (deg + 2)
    for m in range(deg, 0, -1):
        above[m] = above[m + 1] + go[m]
    feeds = [(j, g) for j, g in enumerate(go) if g]  # most chains go on from one or two faces
    out: list[float] = []
    k = 0
    start = len(numerator)
    while True:
        acc = numerator[k] if k < len(numerator) else 0.0
        for j, g in feeds:
            if j <= k:
                acc += g * out[k - j]
        out.append(acc / d0 if acc > 0.0 else 0.0)
        k += 1
        if k >= start and (k - start) % max(1, deg) == 0:  # the mass to come, once a window
            # every term is non-negative, so a plain sum keeps its relative accuracy
            lost = sum([out[i] * above[k - i] for i in range(max(0, k - deg), k)]) / rest
            if lost < eps:
                return out, lost
        if k > 1_000_000:  # refuse rather than loop
            raise ValueError("this chain does not end")


def trim_tail(pmf: Sequence[float], budget: float) -> tuple[list[float], float]:
    """Drop the far tail while what is dropped stays within ``budget``; returns (terms, dropped)."""
    out = list(pmf)
    dropped = 0.0
    while len(out) > 1 and dropped + out[-1] <= budget:
        dropped += out.pop()
    return out, dropped


def cumulative_below(pmf: Sequence[float]) -> list[float]:
    """c[k] = P(value < k) for k = 0..len(pmf)."""
    out = [0.0]
    for p in pmf:
        out.append(out[-1] + p)
    return out


def contest_chances(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """P(A > B), P(A < B), P(A = B) for independent laws over 0, 1, 2, …"""
    below_a, below_b = cumulative_below(a), cumulative_below(b)
    win = math.fsum(p * below_b[min(k, len(b))] for k, p in enumerate(a))
    lose = math.fsum(p * below_a[min(k, len(a))] for k, p in enumerate(b))
    tie = math.fsum(p * b[k] for k, p in enumerate(a) if k < len(b))
    return win, lose, tie


def difference(a: Sequence[float], b: Sequence[float]) -> dict[int, float]:
    """The law of A − B for independent laws over 0, 1, 2, …"""
    conv = convolve(a, list(b)[::-1])
    shift = len(b) - 1
    return {i - shift: p for i, p in enumerate(conv)}


def geometric_rolls(repeat: float, cut: float = 1e-16) -> tuple[dict[int, float], float]:
    """Rolls until an event of probability 1 − ``repeat`` happens: P(R = j), cut below ``cut``."""
    out: dict[int, float] = {}
    p, j = 1.0, 1
    while p >= cut and j <= 100_000:
        out[j] = p * (1.0 - repeat)
        p *= repeat
        j += 1
    return out, p


# --------------------------------------------------------------------------------------------
# Laws over any values (dicts): mixtures, functions of independent laws, re-rolled outcomes

K = TypeVar("K", bound=Hashable)


def mix(*pmfs: Sequence[float]) -> list[float]:
    """The sum of dense sub-laws term by term (the parts of one law split by a mark, rejoined)."""
    out = [0.0] * max((len(p) for p in pmfs), default=0)
    for pmf in pmfs:
        for k, p in enumerate(pmf):
            out[k] += p
    return out


def pushforward(pairs: Iterable[tuple[K, float]]) -> dict[K, float]:
    """The law of the values of ``pairs`` (value, probability), equal values' chances added."""
    acc: dict[K, float] = {}
    get = acc.get
    for key, p in pairs:
        if p:
            acc[key] = get(key, 0.0) + p
    return acc


def apply(function: Callable[..., K], *laws: Mapping[Any, float]) -> dict[K, float]:
    """The law of ``function(x, y, …)`` for independent values with the given laws."""
    items = [[(x, p) for x, p in law.items() if p] for law in laws]
    if len(items) == 2:  # the usual case (a contest), without the generic tuple handling
        acc: dict[K, float] = {}
        get = acc.get
        second = items[1]
        for x, p in items[0]:
            for y, q in second:
                key = function(x, y)
                acc[key] = get(key, 0.0) + p * q
        return acc

    def joint() -> Iterable[tuple[K, float]]:
        for combo in product(*items):
            p = 1.0
            for _, q in combo:
                p *= q
            yield function(*(x for x, _ in combo)), p

    return pushforward(joint())


def condition(law: Mapping[K, float], again: Callable[[K], bool]) -> tuple[dict[K, float], float]:
    """Outcomes for which ``again`` holds are rolled again until one does not (a re-rolled tie):
    the law of the outcome that stands, law / (1 − P(again)), and P(again) on each try."""
    repeat = math.fsum(p for k, p in law.items() if again(k))
    if repeat >= 1.0:
        raise ValueError("every outcome is rolled again: the roll never ends")
    scale = 1.0 / (1.0 - repeat)
    return {k: p * scale for k, p in law.items() if not again(k)}, repeat


def _dense(law: Mapping[int, float]) -> tuple[list[float], int]:
    low = min(law)
    out = [0.0] * (max(law) - low + 1)
    for k, p in law.items():
        out[k - low] += p
    return out, low


def sum_of(a: Mapping[int, float], b: Mapping[int, float]) -> dict[int, float]:
    """The law of X + Y for independent whole-number laws (``apply`` for +, by convolution)."""
    if not a or not b:
        return {}
    (da, la), (db, lb) = _dense(a), _dense(b)
    return {k + la + lb: p for k, p in enumerate(convolve(da, db)) if p}


def difference_of(a: Mapping[int, float], b: Mapping[int, float]) -> dict[int, float]:
    """The law of X − Y for independent whole-number laws (``apply`` for −, by convolution)."""
    return sum_of(a, {-k: p for k, p in b.items()})


def compound(count: Mapping[int, float], unit: Sequence[float]) -> list[float]:
    """The law of the sum of N independent copies of ``unit`` where N has the law ``count``: a
    random number of dice summed (Horner's scheme on Σ P(N = c)·U(z)ᶜ, one convolution a step).
    """
    top = max((c for c, p in count.items() if p), default=0)
    steps = top * len(unit) * max(1, top * (len(unit) - 1))
    if numpy_pays(steps, steps // CELLS + 2 * top * CALL):
        import numpy as np

        u = np.asarray(unit, dtype=float)
        acc = np.array([count.get(top, 0.0)])
        for c in range(top - 1, -1, -1):
            acc = np.convolve(acc, u)
            acc[0] += count.get(c, 0.0)
        out: list[float] = acc.tolist()
        return out
    in_python(steps)
    law = [count.get(top, 0.0)]
    for c in range(top - 1, -1, -1):
        nxt = [0.0] * (len(law) + len(unit) - 1)
        for i, x in enumerate(law):
            if x:
                for j, y in enumerate(unit):
                    nxt[i + j] += x * y
        nxt[0] += count.get(c, 0.0)
        law = nxt
    return law
