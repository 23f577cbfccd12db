"""Benchmark: the odds work estimate against the time it stands for (issue 41, the work estimate).

A step of the estimate stands for about 30 ns (one multiply-add in a Python loop); the estimate
is honest when every request's time is within 4x of its steps × 30 ns (7.5–120 ns a step). Each
shape is timed as a first computation in a warm process (every remembered law forgotten first),
the best of a few; numpy and gmpy2 are imported first, so their imports are not in the time (the
estimate counts an import only when it is due, see ``odds.maths.numpy_pays``).

Run: ``python benchmarks/bench_estimate.py [--quick]``; writes ``benchmarks/results/estimate.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Self

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1]
                                                               / "src")]

from benchmarks import harness as H

SHAPES = [
    # the general notation: sums, keeps, re-rolls, explosions, arithmetic
    "100d6", "200d6", "50d20", "1000d6", "100d6+50d20", "100d100",
    "100d100kh50", "200d100kh100", "50d20!kh10", "100d10kh3", "500d6kh250",
    "200d20r<2", "300d6ro<2", "100d10!", "20d6!", "d300*d300", "(d100*0.5)/(d80*0.25)",
    "d1000+d1000-d1000", "50d6>=5", "4d6kh3",
    # Jadeclaw
    "jc: 10d12 vs 10d12", "jc: 30d12 fav vs 30d12 fav", "jc: 40d12 -2p vs 40d12",
    "jc: 60d12 fav -1p vs 50d12 fav", "jc: 8d12 d10 vs 6d12", "jc: dmg 4d12 vs soak 4d12",
    # Chronicles of Darkness, the D6 System, d6 + skill, the attack table
    "cofd: 100 8-again rote vs 80", "cofd: 30 target 40", "od6: 100D+2 vs 200",
    "od6: 300D", "od6: 60D+1 vs 40D", "ds: atk d6+6 vs def d6+3 dmg 4", "ds: d6+3 vs d6+2",
    "at: atk 12 wpn 20 luck 3",
]


class _Counting:
    """Every work estimate a request makes: ``Limits.check_work`` and the dice Budget's."""

    def __init__(self) -> None:
        from astragal import _limits
        from astragal.systems.dice import pmf

        self.steps = 0
        self._limits, self._pmf = _limits, pmf
        self._check = _limits.Limits.check_work
        self._init = pmf.Budget.__init__
        self.budgets: list[Any] = []

    def __enter__(self) -> Self:
        counter = self

        def check(limits: Any, work: int, what: str, text: str = "") -> None:
            counter.steps += int(work)
            counter._check(limits, work, what, text)

        def init(budget: Any, *a: Any, **k: Any) -> None:
            counter._init(budget, *a, **k)
            counter.budgets.append(budget)

        self._limits.Limits.check_work = check  # type: ignore[method-assign]
        self._pmf.Budget.__init__ = init  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        self._limits.Limits.check_work = self._check  # type: ignore[method-assign]
        self._pmf.Budget.__init__ = self._init  # type: ignore[method-assign]

    @property
    def total(self) -> int:
        return self.steps + sum(b.used for b in self.budgets)


def forget() -> None:
    """Every law remembered between requests, forgotten (each request computed again)."""
    from astragal.odds import algebra
    from astragal.systems.dice import exact, laws

    exact._BODIES.clear()
    laws.forget()
    algebra.clear_caches()
    for name, module in list(sys.modules.items()):
        if name.startswith(("astragal.systems.", "astragal.odds.")):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def measure(text: str, repeats: int) -> tuple[int, float]:
    """(estimated steps, best time) of one request computed afresh."""
    import astragal

    limits = astragal.Limits(max_odds_work=10**12, max_odds_memory=1 << 40)
    forget()
    with _Counting() as counter:
        astragal.odds(text, limits=limits)
    best = float("inf")
    for _ in range(repeats):
        forget()
        t = time.process_time()
        astragal.odds(text, limits=limits)
        best = min(best, time.process_time() - t)
    return counter.total, best


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="one timing a shape")
    parser.add_argument("shapes", nargs="*", help="these shapes instead")
    args = parser.parse_args()
    import numpy  # noqa: F401  # imported first: the estimate counts an import only when due
    try:
        import gmpy2  # noqa: F401
    except ImportError:
        pass
    H.compile_sources()
    lines = [("Each request's estimated steps against its CPU time, computed afresh in a warm "
              "process (best of 3; numpy and gmpy2 loaded). Goal: 7.5–120 ns a step (within 4x "
              "of 30 ns)."), "", "| request | estimate (steps) | time | ns a step | goal |",
             "|---|---|---|---|---|"]
    from astragal import InputError

    for text in args.shapes or SHAPES:
        try:
            steps, best = measure(text, 1 if args.quick else 3)
        except InputError as exc:
            print(f"| `{text}` | refused: {exc} |", flush=True)
            continue
        per = best / max(steps, 1) * 1e9
        ok = "ok" if 7.5 <= per <= 120 else ("UNDER (more time than estimated)" if per > 120
                                            else "OVER (less time than estimated)")
        lines.append(f"| `{text}` | {steps:,} | {H.fmt_time(best)} | {per:.1f} | {ok} |")
        print(lines[-1], flush=True)
    if not args.shapes:
        print(H.save("estimate", "The odds work estimate against time", lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
