"""First rolls against an earlier version of the code, in the same run (issue 13's 0.8x floor).

Each sample is a fresh Python process (byte-compiled sources, as an installed package is) that
imports astragal and times ``import astragal`` plus one seeded roll ("process"), or the roll alone
after the import and a collection of its garbage ("first roll": see ``harness.py``). The two source trees alternate, so a busy machine slows both
alike; ratio = before / now (above 1: now is faster), the median with its min–max.

Run: ``python benchmarks/bench_first_roll.py --before OTHER/src [--samples 15]`` where OTHER is a
checkout of the earlier commit (``git worktree add OTHER COMMIT``, or ``git archive COMMIT src``
unpacked); the table is also written to ``benchmarks/results/first_roll.md``.

``--d20`` measures the general notation's first rolls against the d20 package instead (issue 18:
≥2x): a fresh process per sample, ``import astragal`` and the notation's modules (``import d20``,
which builds its parser), then the first roll timed ("first roll"); "process" is the import and
the roll together; ratio = d20 / astragal.
Written to ``benchmarks/results/first_roll_d20.md``.
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
{setup}
import gc
gc.collect()  # the import's garbage, as benchmarks/harness.py does: see there
t1 = time.perf_counter()
r = astragal.roll({text!r}{seed})
t2 = time.perf_counter()
str(r)  # the text a player reads
t3 = time.perf_counter()
assert astragal.__file__.startswith({src!r}), astragal.__file__
print(t2 - t0, t2 - t1, t3 - t1)
"""


D20_CASES = ["1d20+5", "4d6kh3+2"]
# each library's modules imported, then the first roll timed (as bench_dice.py does): d20 builds
# its parser when imported; astragal loads a game's package, and the modules that roll, on their
# first use: they are imported before the roll is timed (the "process" column counts them)
_DICE = "import astragal.systems.dice.roller"

_D20_WORKER = r"""
import time
t0 = time.perf_counter()
import d20
import gc
gc.collect()
t1 = time.perf_counter()
r = d20.roll({text!r})
t2 = time.perf_counter()
str(r)  # the text a player reads: d20 makes it when asked, astragal with the roll
t3 = time.perf_counter()
print(t2 - t0, t2 - t1, t3 - t1)
"""


def first_d20(text: str) -> tuple[float, ...]:
    """(import + first roll, first roll, first roll and its text) of the d20 package in a fresh
    process."""
    out = subprocess.run([sys.executable, "-c", _D20_WORKER.format(text=text)], check=True,
                         capture_output=True, text=True)
    return tuple(map(float, out.stdout.split()))


def against_d20(samples: int) -> int:
    """The general notation's first rolls against d20's, interleaved (ratio = d20 / astragal)."""
    tree = ROOT / "src"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], check=True,
                   capture_output=True)
    lines = [("| case | d20: process | astragal: process | ratio | d20: first roll | "
              "astragal: first roll | ratio | d20: first roll and its text | astragal: first "
              "roll and its text | ratio |"), "|---" * 10 + "|"]
    for text in D20_CASES:
        got: list[list[tuple[float, ...]]] = [[], []]
        first_d20(text)
        first(tree, text, False, _DICE)
        for _ in range(samples):
            got[0].append(first_d20(text))
            got[1].append(first(tree, text, False, _DICE))
        lines.append(_row(text, got, 3))
        print(lines[-1], flush=True)
    save("first_roll_d20", "First rolls of the general notation against d20 (fresh processes, "
         "interleaved)", [(f"{samples} samples a case; ratio = d20 / astragal (goal: ≥2x). "
                           "d20 words a roll when its text is asked for, astragal with the "
                           "roll: the last columns time both with the text a player reads."), "",
                          *lines])
    return 0


def first(src: Path, text: str, seeded: bool = True, setup: str = "") -> tuple[float, ...]:
    """(import + first roll, first roll, first roll and its text) in a fresh process on the
    sources under ``src``
    (a seeded roll, or one from the operating system's randomness; ``setup`` runs after the
    import, before the roll is timed)."""
    code = _WORKER.format(src=str(src), text=text, seed=", seed=7" if seeded else "",
                          setup=setup)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, cwd=src.parent)
    return tuple(map(float, out.stdout.split()))


def _row(text: str, got: list[list[tuple[float, ...]]], measures: int = 2) -> str:
    """A table row: each measure (the process, the first roll, and with ``measures=3`` the
    first roll and its text) before and now, and the ratio."""
    cells = [f"`{text}`"]
    for k in range(measures):
        b, n = [s[k] for s in got[0]], [s[k] for s in got[1]]
        cells += [f"{fmt_time(statistics.median(b))} ({fmt_time(min(b))}–{fmt_time(max(b))})",
                  f"{fmt_time(statistics.median(n))} ({fmt_time(min(n))}–{fmt_time(max(n))})",
                  _ratio(b, n)]
    return "| " + " | ".join(cells) + " |"


def _ratio(before: list[float], now: list[float]) -> str:
    rs = [b / n for b, n in zip(before, now)]
    return f"{statistics.median(rs):.2f}x ({min(rs):.2f}–{max(rs):.2f})"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, help="the earlier version's src/")
    ap.add_argument("--d20", action="store_true", help="against the d20 package instead")
    ap.add_argument("--samples", type=int, default=15)
    args = ap.parse_args()
    if args.d20:
        return against_d20(args.samples)
    if args.before is None:
        ap.error("give --before OTHER/src, or --d20")
    trees = [args.before.resolve(), ROOT / "src"]
    for tree in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree)], check=True,
                       capture_output=True)
    lines = [("| case | before: process | now: process | ratio | before: first roll | "
              "now: first roll | ratio |"), "|---|---|---|---|---|---|---|"]
    for text in CASES:
        got: list[list[tuple[float, ...]]] = [[], []]
        for tree, out in zip(trees, got):  # warm each tree's .pyc and the OS caches
            first(tree, text)
        for _ in range(args.samples):
            for tree, out in zip(trees, got):
                out.append(first(tree, text))
        lines.append(_row(text, got))
        print(lines[-1], flush=True)
    save("first_roll", "First rolls, before and now (fresh processes, interleaved)",
         [f"{args.samples} samples a case; ratio = before / now.", "", *lines])
    return 0


if __name__ == "__main__":
    sys.exit(main())
