"""Benchmark: the example games of examples/ (written on the game kit) against their icepool twins
in examples/icepool/, the same odds in the same run.

* cold: the first odds of a fresh process, the game's file already loaded (astragal) or its twin
  imported (icepool), as a designer's first ``odds`` after opening a notebook;
* warm: repeats in this process; the kit caches nothing, so each call does the whole work;
  icepool keeps its own caches.
The ratio is icepool's time over astragal's (above 1: astragal is faster). There is no goal: the
kit is built for a designer's freedom, and the figures say what that costs.

Run: ``python benchmarks/bench_kit.py [samples]`` (writes benchmarks/results/kit.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1]
                                                              / "src")]

from benchmarks import harness

CASES = [  # example, text, the twin's arguments
    ("pbta", "pbta: +1", (1,)),
    ("fate", "fate: +2 vs +3", (2, 3)),
    ("coc", "coc: 60 +2", (60, 2)),
    ("savage", "swade: d8 +1", (8, 1)),
    ("dragonage", "age: +2 vs 11", (2, 11)),
    ("cortex", "cortex: d10 d8 d6 d6 vs 11", ((10, 8, 6, 6), 11)),
    ("onering", "tor: 4 vs 16", (4, 16)),
]

_OURS = ("from tests.kit.examples import game; import astragal; game({name!r})",
         "astragal.odds({text!r}).outcomes")
_PEER = (("from tests.kit.examples import load, ROOT; "
          "f = getattr(load({name!r}, ROOT / 'icepool'), {name!r})"), "d = f(*{args!r}); {{k: d.probability(k) for k in d.outcomes()}}")


def main(samples: int = 5) -> None:
    from tests.kit.examples import ROOT, game, load

    import astragal

    harness.compile_sources()
    lines = ["Cold: first odds in a fresh process.", "", harness.HEADER]
    warm_lines = ["", "Warm: repeats in one process.", "", harness.HEADER]
    for name, text, args in CASES:
        ours = tuple(s.format(name=name, text=text) for s in _OURS)
        peer = tuple(s.format(name=name, args=args) for s in _PEER)
        a, b = harness.cold_pair(ours, peer, samples)  # type: ignore[arg-type]
        lines.append(harness.row(text, a, b, 0))
        game(name)
        twin = getattr(load(name, ROOT / "icepool"), name)

        def peer_call(twin=twin, args=args):  # type: ignore[no-untyped-def]
            d = twin(*args)
            return {k: d.probability(k) for k in d.outcomes()}

        a, b = harness.warm_pair(lambda text=text: astragal.odds(text), peer_call, 5, 0.1)
        warm_lines.append(harness.row(text, a, b, 0))
    print(harness.save("kit", "The kit's example games against their icepool twins",
                       lines + warm_lines))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
