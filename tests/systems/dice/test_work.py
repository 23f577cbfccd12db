"""The work estimate of the dice notation's exact odds measures the work (issue 18).

``Budget`` counts steps before each part of the odds is computed and refuses past
``Limits.max_odds_work``; a step is one multiply-add in a Python loop. Here the estimate is held
within a factor of 4 of work counted independently, over shapes sampled from every kind of term:

* time: in a process where every kernel runs in plain Python (numpy is never imported), the
  Python lines the odds execute, counted by a trace function (one line event is one iteration
  of a loop or a comprehension: the unit of a step). Deterministic, not a clock;
* memory: the largest estimate of one step against ``tracemalloc``'s peak, in Python and numpy
  kernels alike (numpy reports its arrays to tracemalloc).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import astragal
from astragal.systems.dice import exact
from astragal.systems.dice.pmf import Budget

ROOT = Path(__file__).resolve().parents[3]

TEMPLATES = [
    "{n}d{s}", "{n}d{s}kh{k}", "{n}d{s}kl{k}", "{n}d{s}!", "{n}d{s}!kh{k}", "{n}d{s}!kl{k}",
    "{n}d{s}!!", "{n}d{s}!pkh{k}", "{n}d{s}xokh{k}", "{n}d{s}>={t}", "{n}d{s}>={t}f1",
    "{n}d{s}ro<2", "{n}d{s}r<2kh{k}", "{n}d{s}mi2", "{n}d{s}k>{t}", "{n}d{s}mt2",
    "{{d{s},d{t}}}kh1", "{n}d{s} > {n}d{t}", "d{s}*d{t}", "(d{s}*0.5)/(d{t}*0.25)",
    "({n}d4)d{s}", "{n}d{s}+{n}d{t}", "3x {n}d{s}kh{k}", "max({n}d{s}, d{t})",
    "{n}d{s}!>={u}", "{n}d{s}!!>={u}", "{{d{s},d{t},d4,d6}}kh2", "{{{n}d{s},d{t},2d4}}kh{k}",
]


def shapes(count: int, seed: int) -> list[str]:
    """Notation sampled over the templates with small random sizes (a fixed seed: the same
    sample every run)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        template = TEMPLATES[i % len(TEMPLATES)]
        n = rng.randint(2, 12)
        s = rng.choice([4, 6, 8, 10, 12, 20])
        k, t = rng.randint(1, n - 1), rng.randint(2, s)
        # u: an explosion on the faces from u up, in the die's upper half (lower, most refuse)
        out.append(template.format(n=n, s=s, k=k, t=t, u=s // 2 + 1 + t % (s - s // 2)))
    return out


_COUNTER = r"""
import json, sys
sys.path.insert(0, {src!r})
import astragal
from astragal.systems.dice import exact
from astragal.odds import keep, maths
from astragal.systems.dice import pmf
from astragal.systems.dice.pmf import Budget
# every kernel in plain Python, whatever the size: numpy's work would not show as lines, nor
# a power taken as one big integer (its estimate is held to its time in benchmarks/bench_exact.py)
maths.NUMPY_IMPORT = maths.FFT_FROM = 10**12
maths.EXACT_UPTO = 0
limits = astragal.Limits(max_odds_work=10**9)
made = []
init = Budget.__init__
def remember(self, *a, **k):
    init(self, *a, **k)
    made.append(self)
Budget.__init__ = remember
lines = [0]
def local(frame, event, arg):
    if event == "line":
        lines[0] += 1
    return local
out = []
for text in json.loads(sys.argv[1]):
    spec = astragal.parse(text).spec
    exact.forget()
    maths._python_work = 0  # each shape as the first of its process: Python kernels below
    lines[0] = 0
    sys.settrace(lambda frame, event, arg: local)
    try:
        exact.odds(spec, limits, text)
    finally:
        sys.settrace(None)
    assert "numpy" not in sys.modules, text + " imported numpy: the count would miss its work"
    out.append((text, lines[0], made[-1].used))
print(json.dumps(out))
"""


def test_estimated_steps_are_within_4x_of_the_python_lines_run() -> None:
    texts = shapes(72, seed=18)
    run = subprocess.run([sys.executable, "-c", _COUNTER.format(src=str(ROOT / "src")),
                          json.dumps(texts)], capture_output=True, text=True, timeout=600,
                         check=True)
    bad = [(text, lines, used) for text, lines, used in json.loads(run.stdout)
           if not lines / 4 <= used <= lines * 4]
    assert not bad, bad


MEMORY = [
    "1000d6", "100d100kh50", "50d20!kh10", "d100000!", "60d20kh30", "200d12", "400d6kl100",
    "d5000*d20", "30d10!!kh10", "20d6!pkh5", "100d20>=15!", "{10d6,10d8,10d10}kh2",
    "{d50000,d49999,d49998}kh1",
]


@pytest.mark.parametrize("text", MEMORY)
def test_estimated_memory_is_within_4x_of_the_traced_peak(text: str) -> None:
    """The largest estimate of one step against tracemalloc's peak (both held to a floor of
    4 MiB: below it, the interpreter's own allocations are of the same size)."""
    made: list[Budget] = []
    init = Budget.__init__

    def remember(self: Budget, *a: object, **k: object) -> None:
        init(self, *a, **k)  # type: ignore[arg-type]
        made.append(self)

    spec = astragal.parse(text).spec
    limits = astragal.Limits(max_odds_work=10**10)
    exact.forget()
    Budget.__init__ = remember  # type: ignore[method-assign]
    tracemalloc.start()
    try:
        exact.odds(spec, limits, text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        Budget.__init__ = init  # type: ignore[method-assign]
    floor = 4 << 20
    guess = max(made[-1].peak, floor)
    assert max(peak, floor) / 4 <= guess <= max(peak, floor) * 4, (text, made[-1].peak, peak)


def test_no_odds_request_passes_the_memory_limit() -> None:
    small = astragal.Limits(max_odds_memory=8 << 20, max_odds_work=10**10)
    with pytest.raises(astragal.LimitError) as info:
        astragal.odds("d999999", limits=small)
    assert "memory" in info.value.message
    assert astragal.odds("3d6", limits=small).mean == pytest.approx(10.5)
