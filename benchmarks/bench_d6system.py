"""D6 System exact odds against icepool 2.1.3, in the same run: 1D–30D, Wild Die off and on.

The task timed is the same for both: the exact distribution of the dice total of an ND code
and P(success) against each of the seven rolled standard difficulties (RULES.md D6).

- plain: N d6 summed (D1).
- wild: the Wild Die (D-X1) with the default complication (a first 1 removes it and the highest
  other die); icepool writes it as a mixture over the Wild Die's first face, with
  ``pool.lowest(m - 1)`` for the complication branch and ``explode(depth=19)`` for the sixes.
- wild/1 counts: the ``complication_only`` switch (regular dice plus an exploding d6).

"cold": astragal's caches are cleared before every call and icepool gets a fresh d6 (its caches
live on the die object), so neither side reuses earlier work. "warm": astragal keeps its caches
and icepool reuses ``icepool.d6``. Times are the best of several repeats. "api" is the whole
public call ``astragal.odds("od6: ND wild vs moderate")`` (parse, odds, records) from cold.

Run: ``python benchmarks/bench_d6system.py`` (writes benchmarks/results/d6system.txt too).
"""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import icepool

import astragal
from astragal.systems import d6system as d6

DIFFICULTY_NUMBERS = [n for n, _, _ in d6.DIFFICULTIES.values() if n > 0]
K = 23  # icepool's Wild Die depth: 6^-24 ≈ 2e-19, where astragal cuts its tail too
MODES = {"plain": (False, "drop_one_and_highest"),
         "wild": (True, "drop_one_and_highest"),
         "wild/1 counts": (True, "complication_only")}


def clear() -> None:
    """Every cache of the game and of the dice algebra: each call does the whole work."""
    from astragal.odds import algebra
    from astragal.systems.d6system import program, rules

    algebra.clear_caches()
    for module in (program, rules):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def ours(n: int, wild: bool, wild_one: str) -> list[float]:
    law = d6.dice_law(n, wild, wild_one)
    pmf = law.pmf
    return [sum(pmf[d:]) for d in DIFFICULTY_NUMBERS]


def ice_die(d: icepool.Die, n: int, wild: bool, wild_one: str) -> icepool.Die:
    if not wild:
        return n @ d
    m = n - 1
    regular = m @ d if m else icepool.Die([0])
    if wild_one == "complication_only":
        return regular + d.explode(depth=K)
    rest = d.pool(m).lowest(m - 1).sum() if m > 1 else icepool.Die([0])
    not_one = icepool.Die([icepool.Die([2, 3, 4, 5]), 6 + d.explode(depth=K - 1)], times=[4, 1])
    return icepool.Die([rest, not_one + regular], times=[1, 5])


def ice(d: icepool.Die, n: int, wild: bool, wild_one: str) -> list[float]:
    die = ice_die(d, n, wild, wild_one)
    die.probabilities()
    return [float(die.probability(">=", x)) for x in DIFFICULTY_NUMBERS]


def best(fn: Callable[[], object], repeats: int, budget: float = 0.02) -> float:
    """Best time per call over ``repeats`` rounds, each long enough to time (≥ budget s)."""
    loops = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(loops):
            fn()
        if time.perf_counter() - t0 >= budget or loops >= 10_000:
            break
        loops *= 4
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(loops):
            fn()
        times.append((time.perf_counter() - t0) / loops)
    return min(times)


def timed(n: int, wild: bool, wild_one: str, text: str) -> dict[str, Callable[[], object]]:
    """The five timed calls for one code and mode."""

    def ours_cold() -> None:
        clear()
        ours(n, wild, wild_one)

    def api_cold() -> None:
        clear()
        astragal.odds(text)

    return {"oc": ours_cold,
            "ic": lambda: ice(icepool.Die(range(1, 7)), n, wild, wild_one),
            "ow": lambda: ours(n, wild, wild_one),
            "iw": lambda: ice(icepool.d6, n, wild, wild_one),
            "ac": api_cold}


def check(n: int, wild: bool, wild_one: str) -> float:
    """The largest difference between the two answers (they must agree to 1e-12)."""
    clear()
    a = ours(n, wild, wild_one)
    b = ice(icepool.Die(range(1, 7)), n, wild, wild_one)
    return max(abs(x - y) for x, y in zip(a, b))


def main() -> int:
    out: list[str] = []

    def emit(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    emit("D6 System exact odds vs icepool 2.1.3 (same run): distribution of the ND total and "
         "P(success) at the 7 rolled standard difficulties")
    emit(f"python {platform.python_version()}, icepool {icepool.__version__}, "
         f"{platform.machine()}; times are best-of-5 per call")
    emit()
    header = (f"{'code':>4}  {'mode':<13}  {'ours cold':>10}  {'ice cold':>10}  {'ratio':>7}  "
              f"{'ours warm':>10}  {'ice warm':>10}  {'ratio':>7}  {'api cold':>10}  "
              f"{'ratio':>7}  {'max diff':>8}")
    emit(header)
    emit("-" * len(header))
    worst = {"cold": float("inf"), "warm": float("inf"), "api": float("inf")}
    for n in range(1, 31):
        for mode, (wild, wild_one) in MODES.items():
            diff = check(n, wild, wild_one)
            assert diff < 1e-12, (n, mode, diff)

            text = f"od6: {n}D vs moderate" + (" wild" if wild else "") + (
                " wild_one=complication_only" if wild_one == "complication_only" else "")
            t = {name: best(fn, 5) for name, fn in timed(n, wild, wild_one, text).items()}
            r_cold, r_warm, r_api = t["ic"] / t["oc"], t["iw"] / t["ow"], t["ic"] / t["ac"]
            worst["cold"] = min(worst["cold"], r_cold)
            worst["warm"] = min(worst["warm"], r_warm)
            worst["api"] = min(worst["api"], r_api)
            emit(f"{n:>3}D  {mode:<13}  {t['oc'] * 1e3:>8.3f}ms  {t['ic'] * 1e3:>8.3f}ms  "
                 f"{r_cold:>6.1f}x  {t['ow'] * 1e3:>8.3f}ms  {t['iw'] * 1e3:>8.3f}ms  "
                 f"{r_warm:>6.1f}x  {t['ac'] * 1e3:>8.3f}ms  {r_api:>6.1f}x  {diff:>8.1e}")
    emit()
    emit(f"smallest ratio (icepool time / ours): cold {worst['cold']:.1f}x, warm "
         f"{worst['warm']:.1f}x, whole API call vs icepool cold {worst['api']:.1f}x")
    path = Path(__file__).resolve().parent / "results" / "d6system.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
