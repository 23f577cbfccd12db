"""Jadeclaw: astragal's exact odds beside the icepool evaluator of tests/oracles (the peer), in
the same run (benchmarks/harness.py: fresh processes and warm rounds, interleaved).

    python benchmarks/bench_jadeclaw.py [--quick]

--quick: one sample per shape, the grid's corners only, no case where the peer needs over a few
seconds. Writes benchmarks/results/jadeclaw.md. Goals (issue 18): Damage Rolls ≥10x the peer
on every shape of n d12 vs m d12 (n, m ≤ 12) and on the large cases; 10d12 vs 10d12 ≤ 40 ms and
8d12 d10 vs 6d12 ≤ 20 ms; Favored at most 3x plain; memory never more than the peer's.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tests.oracles import icepool_jadeclaw as peer

from astragal.systems import jadeclaw as J
from benchmarks import harness as H

NAMED = [  # (damage, soak, favored damage, favored soak)
    ((12,) * 4, (12,) * 3, False, False), ((12,) * 4, (12,) * 3, True, True),
    ((12,) * 8 + (10,), (12,) * 6, False, False), ((12,) * 10, (12,) * 10, False, False),
    ((12,) * 20, (), False, False), ((12,) * 30, (), False, False),
    ((12,) * 20, (12, 12), False, False), ((12,) * 25, (12, 12), False, False),
    ((12, 12, 10, 10, 8, 8), (12, 10, 8, 6), True, True),
]
SLOW_PEER = {((12,) * 25, (12, 12)), ((12,) * 10, (12,) * 10)}  # the peer takes seconds


def text(d: tuple[int, ...], s: tuple[int, ...], fd: bool, fs: bool) -> str:
    out = "jc: dmg " + J.dice_text(d) + (" fav" if fd else "")
    return out + (" vs soak " + J.dice_text(s) + (" fav" if fs else "") if s else "")


def cold_case(d: tuple[int, ...], s: tuple[int, ...], fd: bool, fs: bool,
              samples: int) -> tuple[list[float], list[float]]:
    # each side's modules imported, then the first call timed (numpy, if a computation
    # needs it, is imported inside the call: it is part of that computation's cost)
    ours = ("import astragal\nimport astragal.systems.jadeclaw",
            f"astragal.odds({text(d, s, fd, fs)!r})")
    theirs = ("from tests.oracles import icepool_jadeclaw as p",
              f"p.damage_hits({list(d)}, {list(s)}, damage_favored={fd}, soak_favored={fs})")
    return H.cold_pair(ours, theirs, samples)


def grid(quick: bool) -> list[str]:
    """n d12 vs m d12: one fresh process each side per shape; the worst ratio is the goal."""
    ns = [1, 4, 8, 12] if quick else range(1, 13)
    ms = [0, 3, 8, 12] if quick else range(13)
    cells: dict[tuple[int, int], float] = {}
    worst = (float("inf"), "")
    for n in ns:
        for m in ms:
            a, b = cold_case((12,) * n, (12,) * m, False, False, 1)
            cells[n, m] = b[0] / a[0]
            if cells[n, m] < worst[0]:
                worst = (cells[n, m],
                         f"{n}d12 vs {m}d12 ({H.fmt_time(a[0])} against {H.fmt_time(b[0])})")
        print(f"  row {n}: " + " ".join(f"{cells[n, m]:.0f}x" for m in ms), flush=True)
    lines = ["", ("## Damage Rolls: n d12 vs m d12, first call in a fresh process, ratio peer / "
                  "astragal"),
             "", "| n \\ m | " + " | ".join(map(str, ms)) + " |",
             "|---" * (len(ms) + 1) + "|"]
    for n in ns:
        lines.append(f"| {n} | " + " | ".join(f"{cells[n, m]:.0f}x" for m in ms) + " |")
    status = "ok" if worst[0] >= 10 else "BELOW GOAL (≥10x)"
    lines += ["", f"Worst shape: {worst[1]}, {worst[0]:.1f}x — {status}."]
    return lines


def named(quick: bool, samples: int) -> list[str]:
    lines = ["", "## Damage Rolls, named cases", "", H.HEADER]
    for d, s, fd, fs in NAMED:
        if quick and (d, s) in SLOW_PEER:
            continue
        a, b = cold_case(d, s, fd, fs, samples)
        lines.append(H.row(f"{text(d, s, fd, fs)[8:]}, first call", a, b, 10.0))
        print(lines[-1], flush=True)

        def ours(d: tuple[int, ...] = d, s: tuple[int, ...] = s, fd: bool = fd,
                 fs: bool = fs) -> None:
            from astragal.odds import algebra

            algebra.clear_caches()  # computing again, not reading a cache (laws, evaluator)
            J.damage_hits_distribution(d, s, "normal", fd, fs)

        def theirs(d: tuple[int, ...] = d, s: tuple[int, ...] = s, fd: bool = fd,
                   fs: bool = fs) -> None:
            peer.damage_hits(list(d), list(s), damage_favored=fd, soak_favored=fs)

        wa, wb = H.warm_pair(ours, theirs, rounds=3, budget=0.1)
        lines.append(H.row(f"{text(d, s, fd, fs)[8:]}, warm (computed again)", wa, wb, 10.0))
        print(lines[-1], flush=True)
    return lines


def floors() -> list[str]:
    """The arithmetic-floor goals, warm (numpy loaded), best of 5, computed again each time."""
    from astragal.odds import algebra

    lines = ["", "## Floors (warm, computed again; best of 5)", ""]
    for d, s, goal in (((12,) * 10, (12,) * 10, 0.040), ((12,) * 8 + (10,), (12,) * 6, 0.020)):
        best = float("inf")
        for _ in range(5):
            algebra.clear_caches()
            t = time.perf_counter()
            J.damage_hits_distribution(d, s)
            best = min(best, time.perf_counter() - t)
        status = "ok" if best <= goal else f"BELOW GOAL (≤{goal * 1e3:.0f} ms)"
        lines.append(f"- {J.dice_text(d)} vs {J.dice_text(s)}: {H.fmt_time(best)} — {status}")
    return lines


def favored() -> list[str]:
    """Favored damage against the same pools plain (computed again, best of 3)."""
    from astragal.odds import algebra

    lines = ["", "## Favored against plain (astragal, warm, computed again)", ""]
    for d, s in (((12,) * 4, (12,) * 3), ((12,) * 8 + (10,), (12,) * 6),
                 ((12, 10, 8, 6), (12, 8, 4)), ((12, 12, 10, 10, 8, 8), (12, 10, 8, 6)),
                 ((12,) * 10, (12,) * 10)):
        times = []
        for fd, fs in ((False, False), (True, True)):
            best = float("inf")
            for _ in range(3):
                algebra.clear_caches()
                t = time.perf_counter()
                J.damage_hits_distribution(d, s, "normal", fd, fs)
                best = min(best, time.perf_counter() - t)
            times.append(best)
        r = times[1] / times[0]
        status = "ok" if r <= 3 else "BELOW GOAL (≤3x)"
        lines.append(f"- {J.dice_text(d)} vs {J.dice_text(s)}: plain {H.fmt_time(times[0])}, "
                     f"both Favored {H.fmt_time(times[1])}: {r:.1f}x — {status}")
    return lines


ESTIMATED = [  # (damage, soak, favored both, kernel): each kernel and closed form, short to
    # long pools (the exact kernel's long packed polynomials: 40 vs 3)
    ((12,) * 4, (12,) * 4, False, "auto"), ((12,) * 10, (12,) * 10, False, "auto"),
    ((12,) * 40, (12,) * 3, False, "exact"), ((12,) * 30, (12,) * 5, False, "auto"),
    ((12,) * 60, (12, 12), False, "auto"), ((12, 12), (12,) * 100, False, "auto"),
    ((12,) * 150, (12, 12), True, "auto"), ((12, 12, 10, 10, 8, 8), (12, 10, 8, 6), True, "auto"),
]


def estimates(quick: bool) -> list[str]:
    """The work estimate against the time it stands for: a step is about 30 ns, and the goal
    is within 4x (7.5–120 ns a step), warm, computed again, best of 3."""
    from astragal.odds import pairing

    steps = ((1, 1), (5, 1))  # J24
    lines = ["", "## Work estimate against time (warm, computed again; goal 7.5–120 ns a step)",
             ""]
    for d, s, fav, kernel in ESTIMATED[:2] if quick else ESTIMATED:
        attack, defence = pairing.Pool(d, fav), pairing.Pool(s, fav)
        work = pairing.estimate(attack, defence, steps, 1, kernel)
        best = float("inf")
        for _ in range(3):
            pairing._distribution.cache_clear()
            t = time.perf_counter()
            pairing.distribution(attack, defence, steps, 1, kernel)
            best = min(best, time.perf_counter() - t)
        per = best / work.steps * 1e9
        status = "ok" if 7.5 <= per <= 120 else "BELOW GOAL (within 4x of 30 ns a step)"
        lines.append(f"- {J.dice_text(d)}{' fav' if fav else ''} vs {J.dice_text(s)}"
                     f"{' fav' if fav else ''} ({work.kernel}): {work.steps:.3g} steps, "
                     f"{H.fmt_time(best)}, {per:.0f} ns a step — {status}")
    return lines


def peak_rss_mib(code: str) -> float:
    # VmHWM: the peak resident set of this process image
    script = (f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'src')!r}]; {code}; "
              "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0])")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    return int(out.split()[-2]) / 1024


def memory(quick: bool) -> list[str]:
    lines = ["", "## Peak memory (fresh process, peak RSS)", ""]
    cases = [((12,) * 8 + (10,), (12,) * 6)] + ([] if quick else [((12,) * 10, (12,) * 10)])
    for d, s in cases:
        ours = peak_rss_mib(f"import astragal; astragal.odds({text(d, s, False, False)!r})")
        theirs = peak_rss_mib("from tests.oracles import icepool_jadeclaw as p; "
                              f"p.damage_hits({list(d)}, {list(s)})")
        status = "ok" if ours <= theirs else "BELOW GOAL (≤ the peer's)"
        lines.append(f"- {J.dice_text(d)} vs {J.dice_text(s)}: astragal {ours:.0f} MiB, peer "
                     f"{theirs:.0f} MiB — {status}")
    return lines


def startup(samples: int) -> list[str]:
    py = sys.executable
    script = ("import icepool\na = icepool.highest(icepool.d12, icepool.d8)\n"
              "b = icepool.highest(icepool.d10, icepool.d10)\n"
              "def out(x, y):\n"
              "    if x == 1 and y == 1: return 'tie'\n"
              "    if x == 1: return 'botch'\n"
              "    m = x - y\n"
              "    return ('overwhelming_success' if m >= 5 else 'overwhelming_failure'"
              " if m <= -5 else 'success' if m > 0 else 'failure' if m < 0 else 'tie')\n"
              "print(icepool.map(out, a, b))\n")
    a, b = H.process_pair([py, "-m", "astragal.cli", "odds", "jc: d12 d8 vs 2d10"],
                          [py, "-c", script], samples)
    return ["", "## Start-up", "", H.HEADER,
            H.row("astragal odds 'jc: d12 d8 vs 2d10' vs an icepool script (whole process)",
                  a, b, 1.0)]


def rolling() -> list[str]:
    import astragal

    n = 2000
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            astragal.roll("jc: d12 d8 vs 2d10")
        best = min(best, (time.perf_counter() - t) / n)
    return ["", f"Rolling `jc: d12 d8 vs 2d10` (no peer): {H.fmt_time(best)} a roll."]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    samples = 1 if args.quick else 3
    H.compile_sources()
    lines = [("Ratio = peer time / astragal time, median over interleaved samples (min–max). "
              "Peer: tests/oracles/icepool_jadeclaw.py (icepool 2.1.3).")]
    lines += named(args.quick, samples)
    lines += floors()
    lines += favored()
    lines += estimates(args.quick)
    lines += grid(args.quick)
    lines += memory(args.quick)
    lines += startup(5 if args.quick else 15)
    lines += rolling()
    print(H.save("jadeclaw", "Jadeclaw: astragal against the icepool evaluator", lines))


if __name__ == "__main__":
    main()
