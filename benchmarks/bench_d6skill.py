"""Benchmark: exact odds of the d6 + skill game, astragal against icepool 2.1.3 in the same run.

Each case computes the same law both ways (checked to agree within 1e-12 before timing). astragal
is timed cold: its caches (the die law, the checked switches) are cleared before every call, so
each call does the whole work from the notation. icepool builds its dice afresh on every call.

Run: ``python benchmarks/bench_d6skill.py`` (writes benchmarks/results/d6skill.txt too).
"""

from __future__ import annotations

import platform
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import icepool

import astragal

DEPTH = 21  # astragal keeps Critical chains of up to 21 sixes (the tail beyond is < 1e-17)


# ---- icepool: what an icepool user would write from RULES.md §5 ----------------------------


def ice_side(bonus: int, depth: int = DEPTH, botch: bool = True) -> icepool.Die:
    """(result, botched) of d6 + bonus: S9 via explode, S7/S8 via a second d6."""
    chain = icepool.d6.explode(depth=depth)

    def settle(total: int) -> Any:
        if total == 1 and botch:
            return icepool.d6.map(lambda check: (1 + bonus, check == 1))
        return (total + bonus, False)

    return chain.map(settle)


def ice_round(a: tuple[int, bool], b: tuple[int, bool]) -> tuple[str, int]:
    (ra, ba), (rb, bb) = a, b
    if ba:
        return "botch", ra - rb
    if bb:
        return "success", max(1, ra - rb)
    if ra == rb:
        return "reroll", 0
    return ("success" if ra > rb else "failure"), ra - rb


def ice_single(bonus: int) -> dict[Any, float]:
    side = ice_side(bonus)
    return _probs(side, lambda o: o[0])


def ice_difficulty(bonus: int, dfn: int) -> dict[Any, float]:
    verdict = ice_side(bonus).map(
        lambda o: "botch" if o[1] else "success" if o[0] > dfn else "failure")
    return _probs(verdict, lambda o: o)


def ice_opposed(a: int, b: int, depth: int = DEPTH) -> dict[Any, float]:
    final = icepool.map(ice_round, ice_side(a, depth), ice_side(b, depth)).reroll(
        [("reroll", 0)], depth="inf")
    return _probs(final, lambda o: o[1])


def ice_attack(a: int, b: int, weapon: int | None) -> dict[Any, float]:
    final = icepool.map(ice_round, ice_side(a), ice_side(b)).reroll([("reroll", 0)], depth="inf")
    w = (icepool.Die([weapon]) if weapon is not None
         else ice_side(2, botch=False).map(lambda o: o[0]))
    dmg = icepool.map(lambda r, x: max(0, x + r[1]) if r[0] == "success" else 0, final, w)
    return _probs(dmg, lambda o: o)


def _probs(die: icepool.Die, key: Callable[[Any], Any]) -> dict[Any, float]:
    out: dict[Any, float] = defaultdict(float)
    for outcome, p in zip(die.outcomes(), die.probabilities()):
        out[key(outcome)] += float(p)
    return dict(out)


# ---- astragal ----------------------------------------------------------------------------


def clear_caches() -> None:
    """Every cache of the game (its dice's laws) and of the dice algebra: each call does the
    whole work."""
    from astragal.odds import algebra
    from astragal.systems import d6skill

    algebra.clear_caches()
    d6skill.forget()


def ours(text: str, what: str = "distribution") -> Callable[[], dict[Any, float]]:
    def run() -> dict[Any, float]:
        clear_caches()
        odds = astragal.odds(text)
        return (odds.outcomes if what == "outcomes" else odds.distribution).as_dict()
    return run


CASES: list[tuple[str, Callable[[], dict[Any, float]], Callable[[], dict[Any, float]]]] = [
    ("ds: d6+3  (result law)", ours("ds: d6+3"), lambda: ice_single(3)),
    ("ds: d6+3 vs 6  (outcomes)", ours("ds: d6+3 vs 6", "outcomes"),
     lambda: ice_difficulty(3, 6)),
    ("ds: d6+3 vs d6+2  (margin)", ours("ds: d6+3 vs d6+2"), lambda: ice_opposed(3, 2)),
    ("ds: d6+3 vs d6+2 max_explosions=3", ours("ds: d6+3 vs d6+2 max_explosions=3"),
     lambda: ice_opposed(3, 2, depth=3)),
    ("ds: atk d6+6 vs def d6+3 dmg 4", ours("ds: atk d6+6 vs def d6+3 dmg 4"),
     lambda: ice_attack(6, 3, 4)),
    ("ds: atk d6+6 vs def d6+3 dmg d6+2", ours("ds: atk d6+6 vs def d6+3 dmg d6+2"),
     lambda: ice_attack(6, 3, None)),
]


def timed(fn: Callable[[], Any], budget: float = 2.0) -> float:
    """Median seconds per call over repeated batches within about ``budget`` seconds."""
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    per_batch = max(1, int(0.1 / once))
    samples: list[float] = []
    deadline = time.perf_counter() + budget
    while time.perf_counter() < deadline or len(samples) < 5:
        t0 = time.perf_counter()
        for _ in range(per_batch):
            fn()
        samples.append((time.perf_counter() - t0) / per_batch)
    return statistics.median(samples)


def main() -> int:
    title = (f"d6 + skill exact odds: astragal {astragal.__version__} vs icepool "
             f"{icepool.__version__}, Python {platform.python_version()}, "
             f"{platform.machine()}, same run")
    lines = [title,
             "astragal timed cold (caches cleared every call); median per call", ""]
    header = f"{'case':<40} {'astragal':>11} {'icepool':>11} {'ratio':>8} {'max |diff|':>11}"
    lines += [header, "-" * len(header)]
    print("\n".join(lines), flush=True)
    ok = True
    for name, mine, peer in CASES:
        a, b = mine(), peer()
        diff = max(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))
        ok &= diff < 1e-12
        t_ours, t_peer = timed(mine), timed(peer)
        row = (f"{name:<40} {t_ours * 1e3:9.3f}ms {t_peer * 1e3:9.3f}ms "
               f"{t_peer / t_ours:7.1f}x {diff:11.1e}")
        lines.append(row)
        print(row, flush=True)
    lines.append("")
    lines.append("ratio = icepool time / astragal time (higher is faster for astragal)")
    out = Path(__file__).parent / "results" / "d6skill.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(lines[-1])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
