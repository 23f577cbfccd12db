"""First rolls against an earlier version of the code, in the same run (issue 13's 0.8x floor).

Each sample is a fresh Python process (byte-compiled sources, as an installed package is) that
imports astragal and times ``import astragal`` plus one seeded roll ("process"), or the roll alone
after the import ("first roll"). The two source trees alternate, so a busy machine slows both
alike; ratio = before / now (above 1: now is faster), the median with its min–max.

Run: ``python benchmarks/bench_first_roll.py --before OTHER/src [--samples 15]`` where OTHER is a
checkout of the earlier commit (``git worktree add OTHER COMMIT``, or ``git archive COMMIT src``
unpacked); the table is also written to ``benchmarks/results/first_roll.md``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from harness import ROOT, fmt_time, save

CASES = [
    "cofd: Wits 3 + Composure 2 9-again",
    "cofd: 6 rote vs 4",
    "cofd: 3 target 8",
    "od6: 4D+1 wild vs moderate",
    "od6: 3D vs 3D+2",
    "ds: atk d6+6 vs def d6+3 dmg 4",
    "ds: d6+3 vs d6+2",
]

_WORKER = r"""
import sys, time
sys.path.insert(0, {src!r})
t0 = time.perf_counter()
import astragal
t1 = time.perf_counter()
astragal.roll({text!r}, seed=7)
t2 = time.perf_counter()
assert astragal.__file__.startswith({src!r}), astragal.__file__
print(t2 - t0, t2 - t1)
"""


def first(src: Path, text: str) -> tuple[float, float]:
    """(import + first roll, first roll) in a fresh process on the sources under ``src``."""
    code = _WORKER.format(src=str(src), text=text)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=src.parent)
    process, roll = map(float, out.stdout.split())
    return process, roll


def _ratio(before: list[float], now: list[float]) -> str:
    rs = [b / n for b, n in zip(before, now)]
    return f"{statistics.median(rs):.2f}x ({min(rs):.2f}–{max(rs):.2f})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True, help="the earlier version's src/")
    ap.add_argument("--samples", type=int, default=15)
    args = ap.parse_args()
    trees = [args.before.resolve(), ROOT / "src"]
    for tree in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], check=True,
                       capture_output=True)
    lines = [("| case | before: process | now: process | ratio | before: first roll | "
              "now: first roll | ratio |"), "|---|---|---|---|---|---|---|"]
    for text in CASES:
        got: list[list[tuple[float, float]]] = [[], []]
        for tree, out in zip(trees, got):  # warm each tree's .pyc and the OS caches
            first(tree, text)
        for _ in range(args.samples):
            for tree, out in zip(trees, got):
                out.append(first(tree, text))
        cells = [f"`{text}`"]
        for k in (0, 1):
            b, n = [s[k] for s in got[0]], [s[k] for s in got[1]]
            cells += [f"{fmt_time(statistics.median(b))} ({fmt_time(min(b))}–{fmt_time(max(b))})",
                      f"{fmt_time(statistics.median(n))} ({fmt_time(min(n))}–{fmt_time(max(n))})",
                      _ratio(b, n)]
        lines.append("| " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    save("first_roll", "First rolls, before and now (fresh processes, interleaved)",
         [f"{args.samples} samples a case; ratio = before / now.", "", *lines])
    return 0


if __name__ == "__main__":
    sys.exit(main())
