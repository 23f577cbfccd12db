"""Jadeclaw: astragal's exact odds beside icepool's, in the same run; prints ratios.

    python benchmarks/bench_jadeclaw.py [--quick]

--quick skips the largest damage case (icepool needs ~40 s and ~600 MiB for it).
Results are also written to benchmarks/results/jadeclaw.txt.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from astragal.systems import jadeclaw as J  # noqa: E402
from tests.oracles import icepool_jadeclaw as peer  # noqa: E402

LINES: list[str] = []


def say(line: str = "") -> None:
    print(line, flush=True)
    LINES.append(line)


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def contest_table() -> None:
    say("## Level-vs-level contest table (20 x 20 Levels, actor with 0, 1, 2 Penalties)")
    for p in (0, 1, 2):
        ours = best_of(lambda: J.level_vs_level(J.DEFAULTS, penalties=p), 3)

        def icepool_table() -> None:
            for a in range(1, 21):
                for b in range(1, 21):
                    peer.contest(list(J.level_dice(a)), list(J.level_dice(b)), actor_penalties=p)

        theirs = best_of(icepool_table, 1)
        say(f"  penalties={p}: astragal {ours * 1e3:8.2f} ms   icepool {theirs * 1e3:9.1f} ms"
            f"   ratio {theirs / ours:7.1f}x")


def damage(quick: bool) -> None:
    say("## Damage Rolls (hits distribution)")
    cases = [((12, 8), (10, 6)), ((12, 12, 8), (10, 6)), ((12, 10, 8, 6), (12, 8, 4)),
             ((12,) * 4, (12,) * 3), ((12,) * 5 + (8,), (12,) * 4), ((12,) * 6, (10,) * 5)]
    if not quick:
        cases.append(((12,) * 8 + (10,), (12,) * 6))
    for d, s in cases:
        def ours_fn() -> None:
            J.damage_hits_distribution(d, s)

        ours = best_of(ours_fn, 3)
        theirs = best_of(lambda: peer.damage_hits(list(d), list(s)), 1)
        a = J.damage_hits_distribution(d, s)
        b = peer.damage_hits(list(d), list(s)) if len(d) < 7 else None
        agree = "" if b is None else (
            "  (agree)" if max(abs((a[h] if h < len(a) else 0) - b.get(h, 0))
                              for h in set(b) | set(range(len(a)))) < 1e-12 else "  DISAGREE")
        say(f"  {J.dice_text(d):>14} vs {J.dice_text(s):<10}: astragal {ours * 1e3:8.2f} ms   "
            f"icepool {theirs * 1e3:10.1f} ms   ratio {theirs / ours:7.1f}x{agree}")


MEMORY_SCRIPT = {
    "astragal": "from astragal.systems import jadeclaw as J; "
                "J.damage_hits_distribution([12]*8+[10],[12]*6)",
    "icepool": "from tests.oracles import icepool_jadeclaw as p; p.damage_hits([12]*8+[10],[12]*6)",
    "astragal-baseline": "import numpy; from astragal.systems import jadeclaw",
    "icepool-baseline": "import icepool; from tests.oracles import icepool_jadeclaw",
}


def peak_rss_mib(code: str) -> float:
    # VmHWM (the peak resident set of this process image); ru_maxrss would carry the parent's
    # peak across fork and exec
    script = ("import sys; sys.path[:0] = [%r, %r]; %s; "
              "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0])"
              % (str(ROOT), str(ROOT / "src"), code))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    return int(out.split()[-2]) / 1024


def memory(quick: bool) -> None:
    if quick:
        return
    say("## Peak memory, 8d12 & d10 vs soak 6d12 (each in a fresh process, max RSS)")
    base_a = peak_rss_mib(MEMORY_SCRIPT["astragal-baseline"])
    base_i = peak_rss_mib(MEMORY_SCRIPT["icepool-baseline"])
    ours = peak_rss_mib(MEMORY_SCRIPT["astragal"])
    theirs = peak_rss_mib(MEMORY_SCRIPT["icepool"])
    say(f"  astragal {ours:6.1f} MiB (+{ours - base_a:5.1f} over its imports)   "
        f"icepool {theirs:6.1f} MiB (+{theirs - base_i:6.1f})   ratio {theirs / ours:5.1f}x")


STARTUP = {
    "astragal CLI": [sys.executable, "-m", "astragal.cli", "odds", "jc: d12 d8 vs 2d10"],
    "icepool script": [sys.executable, "-c",
                       "import icepool\n"
                       "a = icepool.highest(icepool.d12, icepool.d8)\n"
                       "b = icepool.highest(icepool.d10, icepool.d10)\n"
                       "def out(x, y):\n"
                       "    if x == 1 and y == 1: return 'tie'\n"
                       "    if x == 1: return 'botch'\n"
                       "    m = x - y\n"
                       "    return ('overwhelming_success' if m >= 5 else 'overwhelming_failure'"
                       " if m <= -5 else 'success' if m > 0 else 'failure' if m < 0 else 'tie')\n"
                       "print(icepool.map(out, a, b))\n"],
}


def startup() -> None:
    say("## Start-up: a whole process computing `jc: d12 d8 vs 2d10` (median of 15, interleaved)")
    # pip byte-compiles an installed package; do the same for the source tree so both sides
    # start from compiled modules, as a user's would.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True,
                   capture_output=True)
    times: dict[str, list[float]] = {name: [] for name in STARTUP}
    for _ in range(15):
        for name, cmd in STARTUP.items():
            t = time.perf_counter()
            subprocess.run(cmd, capture_output=True, check=True, cwd=ROOT)
            times[name].append(time.perf_counter() - t)
    a, i = (statistics.median(times[n]) for n in ("astragal CLI", "icepool script"))
    say(f"  astragal CLI {a * 1e3:6.0f} ms   icepool script {i * 1e3:6.0f} ms   "
        f"ratio {i / a:4.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    say(f"# Jadeclaw benchmarks ({time.strftime('%Y-%m-%d')}, ratio = icepool time / astragal "
        "time, same run)")
    contest_table()
    damage(args.quick)
    memory(args.quick)
    startup()
    out = ROOT / "benchmarks" / "results" / "jadeclaw.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(LINES) + "\n")


if __name__ == "__main__":
    main()
