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
# the shapes games' players type, first call only (the same goals): D&D, Savage Worlds, Cortex,
# L5R's roll and keep, Shadowrun, Fate, PbtA, Year Zero, Cthulhu
SWEEP = [
    ("D&D advantage +5", "2d20kh1+5", "icepool.d20.highest(2, 1) + 5"),
    ("D&D disadvantage", "2d20kl1", "icepool.d20.lowest(2, 1)"),
    ("D&D elven accuracy", "3d20kh1", "icepool.d20.highest(3, 1)"),
    ("D&D check", "d20+5 >= 15", "icepool.d20 + 5 >= 15"),
    ("D&D fireball", "8d6", "8 @ icepool.d6"),
    ("D&D smite", "2d8+1d6+4", "2 @ icepool.d8 + icepool.d6 + 4"),
    ("D&D stat, 4d6 drop lowest", "4d6dl1", "icepool.d6.highest(4, 3)"),
    ("Savage Worlds trait, d8", "{1d8!,1d6!}kh1",
     "icepool.highest(icepool.d8.explode(depth=20), icepool.d6.explode(depth=20))"),
    ("Savage Worlds trait, d12+2", "{1d12!,1d6!}kh1+2",
     "icepool.highest(icepool.d12.explode(depth=20), icepool.d6.explode(depth=20)) + 2"),
    ("Cortex, keep 2 of 3", "{d8,d6,d10}kh2",
     "icepool.Pool([icepool.d8, icepool.d6, icepool.d10]).highest(2).sum()"),
    ("Cortex, keep 2 of 5", "{d12,d10,d8,d6,d4}kh2",
     ("icepool.Pool([icepool.d12, icepool.d10, icepool.d8, icepool.d6, icepool.d4])"
      ".highest(2).sum()")),
    ("L5R roll 6 keep 3", "6d10!kh3", "icepool.d10.explode(depth=20).highest(6, 3)"),
    ("Shadowrun, 12 dice", "12d6>=5", "12 @ (icepool.d6 >= 5)"),
    ("Fate", "4dF+2", "4 @ icepool.Die([-1, 0, 1]) + 2"),
    ("PbtA", "2d6+1", "2 @ icepool.d6 + 1"),
    ("Year Zero, 6 dice", "6d6>=6", "6 @ (icepool.d6 >= 6)"),
    ("Cthulhu, bonus die", "d100", "icepool.d100"),
    ("exploding 3d6", "3d6!", "3 @ icepool.d6.explode(depth=20)"),
    ("exploding 8d10", "8d10!", "8 @ icepool.d10.explode(depth=20)"),
]
ROLLS = ["1d20+5", "4d6kh3+2"]


def sweep_rows(samples: int) -> list[str]:
    """First calls only, of the shapes players type most."""
    rows = []
    for name, notation, expr in SWEEP:
        ours = ("import astragal\nimport astragal.systems.dice.exact",
                f"astragal.odds({'dice: ' + notation!r})")
        peer = ("import sys\nsys.setrecursionlimit(100_000)\nimport icepool", expr)
        a, b = H.cold_pair(ours, peer, samples)
        goal = 2.0 if statistics.median(b) < 0.010 else 10.0
        rows.append(H.row(f"odds `{notation}` ({name}), first call", a, b, goal))
        print(rows[-1], flush=True)
    return rows


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
    lines += sweep_rows(3 if args.quick else 5)
    lines += roll_rows(samples)
    lines += cli_rows(samples * 2)
    lines += ["", "Not measured: `100d100kh50` (icepool takes about 44 s; astragal 0.5 s)."]
    print(H.save("dice", "General dice notation: astragal against icepool and d20", lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
