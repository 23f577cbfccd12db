"""Benchmark: exact sums of dice against their arithmetic floor (issue 41, part 2).

The floor of an exact sum of n dice is the die's generating polynomial packed into one big
integer (Kronecker substitution), raised to the n-th power, and its coefficients read back
(decoding included): GMP's through gmpy2 when it is installed (the floor the issue sets), and
Python's own integers beside it. astragal is timed on the whole request (``astragal.odds``:
parsing, the law, its rows) and on the kernel alone (``odds.maths.power`` of the die's law).

* first call: a fresh process per sample (benchmarks/harness.py); each side's modules imported
  first (gmpy2 for the floor; astragal imports gmpy2 inside the call when it pays for it, so
  that import is part of the call's cost), astragal and the floor alternating;
* warm: in this process, rounds alternating the two, astragal's remembered laws forgotten
  before every call (computed again, as a new request would be).

ratio = astragal time / floor time (the lower the better; goal ≤ 3x), the median of the
per-sample ratios with their min–max. The work estimate's time per step is printed beside
(its goal: within 4x of the 30 ns a step stands for).

Run: ``python benchmarks/bench_exact.py [--quick]``; writes ``benchmarks/results/exact.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1]
                                                               / "src")]

from benchmarks import harness as H

# notation, (die size, dice) for each power in it
CASES = [
    ("100d6", [(6, 100)]),
    ("200d6", [(6, 200)]),
    ("50d20", [(20, 50)]),
    ("20d10", [(10, 20)]),
    ("300d6", [(6, 300)]),
    ("100d100", [(100, 100)]),
    ("100d6+50d20", [(6, 100), (20, 50)]),
]

def _pack(coeffs: list[int], width: int) -> int:
    return int.from_bytes(b"".join(c.to_bytes(width, "little") for c in coeffs), "little")


def _unpack(number: int, width: int, length: int) -> list[int]:
    raw = number.to_bytes(width * length, "little")
    return [int.from_bytes(raw[i:i + width], "little") for i in range(0, width * length, width)]


def floor(powers: list[tuple[int, int]], gmp: bool) -> list[int]:
    """The floor: each die's polynomial packed, raised (a sum of several is one product of
    their powers), decoded once."""
    big: Callable[[int], Any] = int
    if gmp:
        import gmpy2  # type: ignore[import-untyped, import-not-found, unused-ignore]

        big = gmpy2.mpz
    bound = 1
    for size, n in powers:
        bound *= size ** n
    width = (bound.bit_length() + 8) // 8
    number: Any = 1
    length = 1
    for size, n in powers:
        number = number * big(_pack([1] * size, width)) ** n
        length += (size - 1) * n
    return _unpack(int(number), width, length)


def _floor_setup(gmp: bool) -> str:
    return ("import gmpy2\n" if gmp else "") + "from benchmarks.bench_exact import floor"


def _gmpy2() -> bool:
    try:
        import gmpy2  # noqa: F401
    except ImportError:
        return False
    return True


def _forget() -> None:
    from astragal.systems.dice import exact, laws

    exact._BODIES.clear()
    laws.forget()


def _estimate(notation: str) -> int:
    """The work estimate's steps for the request (what its Budget spent)."""
    import astragal
    from astragal.systems.dice.pmf import Budget

    made: list[Budget] = []
    init = Budget.__init__

    def remember(self: Budget, *a: object, **k: object) -> None:
        init(self, *a, **k)  # type: ignore[arg-type]
        made.append(self)

    _forget()
    Budget.__init__ = remember  # type: ignore[method-assign]
    try:
        astragal.odds("dice: " + notation)
    finally:
        Budget.__init__ = init  # type: ignore[method-assign]
    return made[-1].used


ROW = "| {} | {} | {} | {:.2f}x ({:.2f}–{:.2f}) | {} |"


def _row(name: str, ours: list[float], floor: list[float], goal: float) -> str:
    rs = [o / f for o, f in zip(ours, floor) if f > 0]
    r = statistics.median(rs)
    return ROW.format(name, H.fmt_time(statistics.median(ours)),
                      H.fmt_time(statistics.median(floor)), r, min(rs), max(rs),
                      "ok" if r <= goal else f"ABOVE GOAL (≤{goal:g}x)")


def rows(samples: int, gmp: bool) -> list[str]:
    import astragal
    from astragal.odds import kronecker, maths

    out = []
    floor_name = "GMP" if gmp else "Python int"
    kronecker._state["found"] = None if gmp else False  # astragal without GMP, beside Python's
    for notation, powers in CASES:
        setup = _floor_setup(gmp)
        call = f"floor({powers!r}, {gmp})"
        ours = ("import astragal\nimport astragal.systems.dice.exact" + ("" if gmp else
                "\nfrom astragal.odds import kronecker\nkronecker._state['found'] = False"),
                f"astragal.odds({'dice: ' + notation!r})")
        a, b = H.cold_pair(ours, (setup, call), samples)
        out.append(_row(f"`{notation}`, first call, against {floor_name}", a, b, 3.0))
        print(out[-1], flush=True)

        def request(n: str = notation) -> None:
            _forget()
            astragal.odds("dice: " + n)

        wa, wb = H.warm_pair(request, lambda p=powers: floor(p, gmp), rounds=5, budget=0.1)
        out.append(_row(f"`{notation}`, warm (computed again), against {floor_name}", wa, wb,
                        3.0))
        print(out[-1], flush=True)
        if len(powers) == 1:
            size, n = powers[0]
            unit = [1.0 / size] * size
            ka, kb = H.warm_pair(lambda u=unit, n=n: maths.power(u, n, fft=True, exact=True),
                                 lambda p=powers: floor(p, gmp), rounds=5, budget=0.1)
            out.append(_row(f"`{notation}`, the kernel `maths.power`, warm, against "
                            f"{floor_name}", ka, kb, 3.0))
            print(out[-1], flush=True)
    return out


def estimate_rows() -> list[str]:
    """The work estimate against the time it stands for, warm."""
    import astragal

    out = ["", "| case | estimate (steps) | time, warm (computed again) | ns a step | goal |",
           "|---|---|---|---|---|"]
    for notation, _ in CASES:
        steps = _estimate(notation)
        best = float("inf")
        for _ in range(5):
            _forget()
            t = time.perf_counter()
            astragal.odds("dice: " + notation)
            best = min(best, time.perf_counter() - t)
        per = best / steps * 1e9
        ok = "ok" if 7.5 <= per <= 120 else "OUTSIDE 4x of 30 ns"
        out.append(f"| `{notation}` | {steps:,} | {H.fmt_time(best)} | {per:.1f} | {ok} |")
        print(out[-1], flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="3 samples a case")
    args = parser.parse_args()
    samples = 3 if args.quick else 7
    H.compile_sources()
    gmp = _gmpy2()
    lines = [("ratio = astragal time / floor time: the median over interleaved samples, with "
              f"their min–max ({samples} fresh processes for first calls, 5 warm rounds). "
              f"gmpy2 {'installed' if gmp else 'not installed'}."), "",
             "| case | astragal | floor | ratio (min–max) | goal |", "|---|---|---|---|---|"]
    if gmp:
        lines += rows(samples, True)
    lines += rows(samples, False)
    from astragal.odds import kronecker

    kronecker._state["found"] = None
    lines += estimate_rows()
    print(H.save("exact", "Exact sums against the Kronecker floor", lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
