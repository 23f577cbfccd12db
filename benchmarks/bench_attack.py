"""The d6 attack table's exact odds vs icepool 2.1.3, side by side in the same run.

For 1–12 attack dice (weapon D, Crit Bonus +2) against no defender, 2 and 5 DEFENSE dice: the
whole exchange law (Whiff / Blocked / hit / Critical, damage, stun, critical totals).

- law: ``exchange.exchange_odds``, the exchange law from the dice counts (the d6-sum table it
  reads is kept between calls, as any table of constants would be);
- cold: the same with every cache cleared first (the d6-sum table, the rules, even the shipped
  attack table read from its JSON file): a first call in a fresh process;
- odds(): the whole public ``astragal.odds`` call from the notation (parse, house rules, law,
  ``Odds`` record), with the rules cache cleared on every call;
- icepool: what an icepool user writes: ``d6.pool(n).highest_outcome_and_count()``, the
  defender's 6s as ``d6.pool(d).keep_outcomes([6]).size()``, and ``icepool.map`` of the
  exchange, with ``c @ d6 + bonus`` for the critical total. Built afresh on every call (icepool's
  own internal caches still help it on repeats, which favours icepool).

Both are checked to agree within 1e-12 in the same run before the times are printed.

Run: ``python benchmarks/bench_attack.py`` (about a minute); the table is also written to
``benchmarks/results/attack.txt``.
"""

from __future__ import annotations

import math
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import icepool

import astragal
from astragal.systems.attack import exchange, rules

DICE = range(1, 13)
DEFENCES: tuple[int | None, ...] = (None, 2, 5)
CLASS_DICE, BONUS = 2, 2  # weapon D: +2 critical dice (A13), Crit Bonus +2 (A14)


def icepool_exchange(n: int, d: int | None) -> icepool.Die:
    """The exchange as an icepool user writes it (RULES.md A5–A15, the default table)."""
    top = icepool.d6.pool(n).highest_outcome_and_count()
    rolled = d or 0
    six_count = icepool.d6.pool(rolled).keep_outcomes([6]).size()

    def resolve(hm: tuple[int, int], k: int) -> Any:
        h, m = hm
        if h <= 3:
            return ("whiff", 0, False, -1)
        critical = h == 6 and m >= 3
        need = m if critical else min(m, 2)
        if rolled and k >= need:
            return ("blocked", 0, False, -1)
        if not critical:
            return ("hit", h - 3, m >= 2, -1)
        c = max(0, m + CLASS_DICE - rolled)
        return ("critical", 3, True, c @ icepool.d6 + BONUS)

    return icepool.map(resolve, top, six_count)


def clear_all() -> None:
    """Every cache of the game and of the dice algebra: each call does the whole work."""
    from astragal.odds import algebra

    algebra.clear_caches()
    for module in (rules, exchange):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def law(n: int, d: int | None) -> exchange.ExchangeOdds:
    return exchange.exchange_odds(n, d, "D", BONUS, rules.rules_for({}))


def law_cold(n: int, d: int | None) -> exchange.ExchangeOdds:
    clear_all()
    return law(n, d)


def text_of(n: int, d: int | None) -> str:
    return f"at: {n}d6 weapon D crit +2" + (f" vs {d}d6" if d is not None else "")


def ours_public(n: int, d: int | None) -> astragal.Odds:
    rules._rules.cache_clear()
    rules._default_rules.cache_clear()
    return astragal.odds(text_of(n, d))


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


def agree(n: int, d: int | None) -> float:
    """The largest difference between our laws and icepool's."""
    eo = law_cold(n, d)
    die = icepool_exchange(n, d)
    den = die.denominator()
    laws: list[tuple[dict[Any, float], dict[Any, float]]] = []
    for index, ours in ((0, eo.outcomes), (1, eo.damage)):
        theirs: dict[Any, float] = {}
        for outcome, q in die.items():
            theirs[outcome[index]] = theirs.get(outcome[index], 0.0) + q / den
        laws.append((ours, theirs))
    crit = {o[3]: q for o, q in die.items() if o[0] == "critical"}
    mass = sum(crit.values())
    laws.append((eo.critical_total, {k: q / mass for k, q in crit.items()} if mass else {}))
    stun = sum(q for o, q in die.items() if o[2]) / den
    worst = abs(eo.stun - stun)
    for ours, theirs in laws:
        for k in set(ours) | set(theirs):
            worst = max(worst, abs(ours.get(k, 0.0) - theirs.get(k, 0.0)))
    return worst


def main() -> int:
    lines = [(f"astragal attack-table exact odds vs icepool {icepool.__version__} "
              f"(Python {platform.python_version()}, {platform.machine()})"),
             ("the whole exchange law (outcomes, damage, stun, critical totals), weapon D, "
              "Crit Bonus +2; times in ms, best of repeats"),
             ("ratio = icepool time / ours; law = the law from the dice counts, cold = with "
              "every cache cleared, odds() = the public call from the notation"), ""]
    head = f"{'dice':>4}"
    for d in DEFENCES:
        name = "no defender" if d is None else f"vs {d}d6"
        head += (f" | {name:>11}: {'law':>5} {'cold':>5} {'odds()':>6} {'icepool':>7} "
                 f"{'×law':>5} {'×cold':>5} {'×odds':>5}")
    lines.append(head)
    worst = 0.0
    sums = {d: [0.0, 0.0, 0.0, 0.0] for d in DEFENCES}
    least = [math.inf, math.inf, math.inf]
    for n in DICE:
        row = f"{n:>4}"
        for d in DEFENCES:
            worst = max(worst, agree(n, d))
            times = (best_time(lambda n=n, d=d: law(n, d)),
                     best_time(lambda n=n, d=d: law_cold(n, d)),
                     best_time(lambda n=n, d=d: ours_public(n, d)),
                     best_time(lambda n=n, d=d: icepool_exchange(n, d), budget=0.5,
                               max_reps=5))
            for i, t in enumerate(times):
                sums[d][i] += t
            ice = times[3]
            for i in range(3):
                least[i] = min(least[i], ice / times[i])
            row += (f" | {'':>12} " + " ".join(f"{1e3 * t:>5.3f}" for t in times[:2])
                    + f" {1e3 * times[2]:>6.3f} {1e3 * ice:>7.2f} "
                    + " ".join(f"{ice / t:>5.0f}" for t in times[:3]))
        lines.append(row)
        print(lines[-1], file=sys.stderr)
    lines.append("")
    for d in DEFENCES:
        t_law, t_cold, t_pub, t_ice = sums[d]
        name = "no defender" if d is None else f"vs {d}d6"
        lines.append(f"{name}, 1–12 dice in total: law {1e3 * t_law:.2f} ms, cold "
                     f"{1e3 * t_cold:.2f} ms, odds() {1e3 * t_pub:.2f} ms, icepool "
                     f"{1e3 * t_ice:.1f} ms → {t_ice / t_law:.0f}× (law), {t_ice / t_cold:.0f}× "
                     f"(cold), {t_ice / t_pub:.0f}× (odds())")
    lines.append(f"smallest per-case ratio: {least[0]:.0f}× (law), {least[1]:.0f}× (cold), "
                 f"{least[2]:.0f}× (odds())")
    lines.append(f"largest difference from icepool over all {len(DICE) * len(DEFENCES)} "
                 f"exchanges: {worst:.1e}")
    assert worst < 1e-12, worst
    out = "\n".join(lines)
    print(out)
    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    (results / "attack.txt").write_text(out + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
