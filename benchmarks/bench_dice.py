"""Benchmark: the general dice notation against icepool (exact odds) and d20 (rolling), and the
CLI's start-up against the equivalent scripts (benchmarks/harness.py: first call in a fresh
process and warm, interleaved with the peer in the same run).

Run: ``python benchmarks/bench_dice.py [--quick]`` (the bench extra: icepool 2.1.3, d20).
Writes ``benchmarks/results/dice.md``. Goals (issue 18): never slower than the peer; ≥2× where
the peer takes under 10 ms, ≥10× above; rolling ≥2× d20; the CLI at least as fast as a script.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1]
                                                               / "src")]

from benchmarks import harness as H

# name, astragal notation, the same odds with icepool (explosions followed to below 1e-15)
ODDS = [
    ("4d6kh3", "4d6kh3", "icepool.d6.highest(4, 3)"),
    ("2d20kh1", "2d20kh1", "icepool.d20.highest(2, 1)"),
    ("3d6 > 3d6", "3d6 > 3d6", "(3 @ icepool.d6) > (3 @ icepool.d6)"),
    ("10d10kh3", "10d10kh3", "icepool.d10.highest(10, 3)"),
    ("20d6!", "20d6!", "20 @ icepool.d6.explode(depth=20)"),
    ("6x 4d6kh3 (stat array)", "6x 4d6kh3",
     "(lambda s: (s, s.highest(6, 1), s.lowest(6, 1), 6 @ s))(icepool.d6.highest(4, 3))"),
    ("8d10>=8 exploding 10s", "8d10>=8!",
     ("8 @ icepool.d10.map(lambda x: int(x >= 8) + (icepool.Again if x == 10 else 0), "
      "again_depth=15)")),
    ("100d6", "100d6", "100 @ icepool.d6"),
    ("1000d6", "1000d6", "1000 @ icepool.d6"),
]
SLOW = [("50d20!kh10", "50d20!kh10", "icepool.d20.explode(depth=11).highest(50, 10)")]
ROLLS = ["1d20+5", "4d6kh3+2"]


def odds_rows(cases: list[tuple[str, str, str]], samples: int) -> list[str]:
    import icepool

    import astragal

    rows = []
    for name, notation, expr in cases:
        # each side's modules imported, then the first call timed (numpy, if a computation
        # needs it, is imported inside the call: it is part of that computation's cost)
        ours = ("import astragal\nimport astragal.systems.dice.exact",
                f"astragal.odds({'dice: ' + notation!r})")
        peer = ("import sys\nsys.setrecursionlimit(100_000)\nimport icepool", expr)
        a, b = H.cold_pair(ours, peer, samples)
        goal = 2.0 if statistics.median(b) < 0.010 else 10.0
        rows.append(H.row(f"odds {name}, first call", a, b, goal))
        print(rows[-1], flush=True)
        sys.setrecursionlimit(100_000)
        wa, wb = H.warm_pair(lambda n=notation: astragal.odds("dice: " + n),
                             lambda e=expr: eval(e, {"icepool": icepool}), rounds=3)
        rows.append(H.row(f"odds {name}, warm", wa, wb, goal))
        print(rows[-1], flush=True)
    return rows


def roll_rows(samples: int) -> list[str]:
    import d20  # type: ignore[import-not-found]

    import astragal

    rows = []
    for text in ROLLS:
        a, b = H.cold_pair(("import astragal\nimport astragal.systems.dice.roller",
                            f"astragal.roll({text!r})"), ("import d20", f"d20.roll({text!r})"),
                           samples)
        rows.append(H.row(f"roll {text}, first call", a, b, 2.0))

        def ours(text: str = text) -> None:
            for _ in range(1000):
                astragal.roll(text)

        def peer(text: str = text) -> None:
            for _ in range(1000):
                d20.roll(text)

        wa, wb = H.warm_pair(ours, peer)
        rows.append(H.row(f"roll {text}, warm (per 1000 rolls)", wa, wb, 2.0))
        print(*rows[-2:], sep="\n", flush=True)
    return rows


def cli_rows(samples: int) -> list[str]:
    py = sys.executable
    ice = ("import icepool\nd = icepool.d6.highest(4, 3)\n"
           "for k, p in d.items(): print(k, p)\n")
    cases = [
        ("astragal odds 4d6kh3 vs an icepool script",
         [py, "-m", "astragal.cli", "odds", "4d6kh3"], [py, "-c", ice]),
        ("astragal roll 4d6kh3+2 vs a d20 script",
         [py, "-m", "astragal.cli", "roll", "4d6kh3+2"],
         [py, "-c", "import d20\nprint(d20.roll('4d6kh3+2'))"]),
    ]
    rows = []
    for name, ours, peer in cases:
        a, b = H.process_pair(ours, peer, samples)
        rows.append(H.row(name + " (whole process)", a, b, 1.0))
        print(rows[-1], flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="3 samples, no slow peer cases")
    args = parser.parse_args()
    samples = 3 if args.quick else 7
    H.compile_sources()
    lines = [("Ratio = peer time / astragal time: the median over interleaved samples, with "
              f"their min–max ({samples} fresh processes for first calls, 3–7 warm rounds). "
              "Peers: icepool (odds), d20 (rolling), scripts with them (CLI)."), "", H.HEADER]
    lines += odds_rows(ODDS + ([] if args.quick else SLOW), samples)
    lines += roll_rows(samples)
    lines += cli_rows(samples * 2)
    lines += ["", "Not measured: `100d100kh50` (icepool takes about 44 s; astragal 0.5 s)."]
    print(H.save("dice", "General dice notation: astragal against icepool and d20", lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
