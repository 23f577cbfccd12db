"""Chronicles of Darkness exact odds vs icepool 2.1.3, side by side in the same run.

For pools of 1–30 d10s under 10-, 9- and 8-again: astragal's closed-form pool law
(``cofd.pool_pmf``, and the whole public ``astragal.odds`` call with its caches cleared) against
what an icepool user writes — a per-die success count built with ``explode`` (depth chosen so the
lost mass is below 1e-15, the same precision as ours) summed over the pool with ``n @ die``.
Both are checked to agree to 1e-12 in the same run. Also: one contested roll (margin law) and one
extended contest (no icepool peer: its time alone).

Run: ``python benchmarks/bench_cofd.py`` (about two minutes); the table is also written to
``benchmarks/results/cofd.txt``.
"""

from __future__ import annotations

import math
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import icepool
import numpy  # noqa: F401  (imported up front: its import time is no one's odds)

import astragal
from astragal.systems import cofd

POOLS = range(1, 31)
AGAINS = (10, 9, 8)
BIG = 1000  # an encoded re-rolling success in the icepool peer


def icepool_pool(n: int, again: int) -> icepool.Die[int]:
    """The icepool way: one die's successes via explode, then the sum of n of them."""
    r = (11 - again) / 10
    depth = max(8, math.ceil(math.log(1e-15 / n) / math.log(r)))
    faces = {0: 7, 1: again - 8, BIG: 11 - again}
    die = icepool.Die({k: q for k, q in faces.items() if q}).explode([BIG], depth=depth)
    return n @ die.map(lambda t: t // BIG + t % BIG)


def best_time(fn: Callable[[], object], budget: float = 0.2, max_reps: int = 2000) -> float:
    """Best of repeated runs: at least two, more while the time budget lasts."""
    best = math.inf
    spent = 0.0
    reps = 0
    while reps < max_reps and (reps < 2 or spent < budget):
        t = time.perf_counter()
        fn()
        dt = time.perf_counter() - t
        best = min(best, dt)
        spent += dt
        reps += 1
    return best


def _forget() -> None:
    """Every law the game and the dice algebra remember."""
    from astragal.odds import algebra

    # the package's ``odds`` is the game's odds function; its module is systems/cofd/odds.py
    sys.modules["astragal.systems.cofd.odds"]._side_law.cache_clear()
    algebra.clear_caches()


def ours_public(n: int, again: int) -> object:
    _forget()  # no help from earlier calls
    return astragal.odds(f"cofd: {n} {again}-again")


def agree(n: int, again: int) -> float:
    pmf, lost = cofd.pool_pmf(n, again)
    assert lost < 1e-15
    ice = icepool_pool(n, again)
    total = ice.denominator()
    top = max(len(pmf), max(ice.outcomes()) + 1)
    return max(abs((pmf[k] if k < len(pmf) else 0.0) - ice.quantity(k) / total)
               for k in range(top))


def main() -> int:
    lines = [(f"astragal cofd exact odds vs icepool {icepool.__version__} "
              f"(Python {platform.python_version()}, {platform.machine()})"),
             ("times in ms (best of repeats); ratio = icepool / ours; 'odds()' is the whole "
              "public call (parse, law, outcomes, Distribution)"), ""]
    head = f"{'pool':>4}"
    for a in AGAINS:
        head += f" | {a}-again: {'ours':>7} {'odds()':>7} {'icepool':>8} {'ratio':>6}"
    lines.append(head)
    worst = 0.0
    sums = {a: [0.0, 0.0, 0.0] for a in AGAINS}
    min_ratio = {a: math.inf for a in AGAINS}
    for n in POOLS:
        row = f"{n:>4}"
        for a in AGAINS:
            t_ours = best_time(lambda n=n, a=a: cofd.pool_pmf(n, a))
            t_pub = best_time(lambda n=n, a=a: ours_public(n, a))
            t_ice = best_time(lambda n=n, a=a: icepool_pool(n, a), budget=0.5, max_reps=5)
            worst = max(worst, agree(n, a))
            for i, t in enumerate((t_ours, t_pub, t_ice)):
                sums[a][i] += t
            min_ratio[a] = min(min_ratio[a], t_ice / t_pub)
            row += (f" | {'':>9}{1e3 * t_ours:>7.3f} {1e3 * t_pub:>7.3f} {1e3 * t_ice:>8.2f} "
                    f"{t_ice / t_ours:>6.0f}")
        lines.append(row)
        print(lines[-1], file=sys.stderr)
    lines.append("")
    for a in AGAINS:
        ours, pub, ice = sums[a]
        lines.append(f"{a}-again, pools 1–30 in total: ours {1e3 * ours:.2f} ms, odds() "
                     f"{1e3 * pub:.2f} ms, icepool {1e3 * ice:.1f} ms → {ice / ours:.0f}× "
                     f"(core), {ice / pub:.0f}× (odds()); smallest per-pool ratio of odds() "
                     f"{min_ratio[a]:.0f}×")
    lines.append(f"largest difference from icepool over all 90 laws: {worst:.1e}")

    # a contested roll: the margin law of 8 dice (9-again) against 6 dice (10-again)
    text = "cofd: 8 9-again vs 6 contested_tie=tie"

    def ice_contest() -> object:
        return icepool_pool(8, 9) - icepool_pool(6, 10)

    def our_contest() -> object:
        _forget()
        return astragal.odds(text)
    t_ice, t_ours = best_time(ice_contest, 1.0, 5), best_time(our_contest)
    lines.append("")
    lines.append(f"contest '{text}': ours {1e3 * t_ours:.3f} ms, icepool {1e3 * t_ice:.1f} ms "
                 f"→ {t_ice / t_ours:.0f}×")
    text = "cofd: 6 target 10 vs 5"

    def our_extended() -> object:
        _forget()
        return astragal.odds(text)
    lines.append(f"extended contest '{text}' (no icepool peer): ours "
                 f"{1e3 * best_time(our_extended):.2f} ms")
    out = "\n".join(lines)
    print(out)
    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    (results / "cofd.txt").write_text(out + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
