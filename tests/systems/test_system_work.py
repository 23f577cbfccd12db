"""The work estimates of every game's exact odds measure the work (issues 18 and 41):
Chronicles of Darkness (``cofd:``), the D6 System (``od6:``), d6 + skill (``ds:``), the attack
exchange (``at:``) and Jadeclaw's Simple Rolls and contests (``jc:``: plain, Favored, Penalties).

Each game checks its estimated steps against ``Limits.max_odds_work`` before any work; a step is
about one line of Python run (one multiply-add of a loop). Here every estimate a request makes
(the sum of what it hands to ``Limits.check_work``) is held within a factor of 4 of the Python
lines its odds execute, counted by a trace function in a process where every kernel runs in
plain Python (numpy is never imported, so no work hides in it). Deterministic, not a clock. The
Jadeclaw Damage Rolls' estimates are held to the kernels' own counts in tests/odds/test_pairing.py,
the general notation's in tests/systems/dice/test_work.py.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TEMPLATES = {
    "cofd": ["cofd: {n}", "cofd: {n} 8-again", "cofd: {n} 9-again rote", "cofd: {n} vs {m}",
             "cofd: {n} vs {m} 8-again", "cofd: {n} target {t}", "cofd: {k} target {t} vs {k}",
             "cofd: {k} target {t} rolls 5", "cofd: 0 rote"],
    "od6": ["od6: {n}D", "od6: {n}D wild", "od6: {n}D+2 vs {t}", "od6: {n}D wild vs {m}D wild",
            "od6: {n}D wild vs easy", "od6: {n}D vs {m}D opposed_tie=reroll",
            "od6: {n}D wild wild_one=complication_only"],
    "ds": ["ds: d6+{k}", "ds: d6 max_explosions={k}", "ds: atk d6+{k} vs def d6+{j} dmg {j}",
           "ds: atk d6+{k} vs def d6+{j} dmg d6+{j}", "ds: d6+{k} vs skill d6+{j}",
           "ds: atk d6+{k} vs {t} dmg {j}"],
    "jc": ["jc: {n}d12 vs {m}d12", "jc: {n}d12 fav vs {m}d12 fav", "jc: {n}d12 -{k}p vs {m}d12",
           "jc: {n}d12 fav -{k}p vs {m}d12 fav -1p", "jc: d12 d10 d8 d6 fav vs d12 d8 d4",
           "jc: d12 & d6 +{k}b vs routine", "jc: L{k} -1p fav vs L5 q=expert:basic",
           "jc: {n}d12 d10 limit d8 +d8 remove biggest vs 2d8", "jc: {n}d10", "jc: L{t} vs L3"],
    "at": ["at: {n}d6", "at: {n}d6 vs {m}d6", "at: {n}d6 vs armor 1 shield {j}",
           "at: {n}d6 luck 2 vs {m}d6", "at: {n}d6 vs {m}d6 crit_dice_subtract=sixes_rolled",
           "at: {n}d6 vs {m}d6 sixes_to_block_by_column=1/1/1/1/1/1/-"],
}


def shapes(game: str, count: int, seed: int) -> list[str]:
    """Requests sampled over a game's templates, pools from 1 to ~120 dice (a fixed seed: the
    same sample every run)."""
    rng = random.Random(seed)
    templates = TEMPLATES[game]
    out = []
    for i in range(count):
        n, m = (int(2 ** rng.uniform(0, 7)) for _ in range(2))
        out.append(templates[i % len(templates)].format(
            n=n, m=m, k=rng.randint(1, 8), j=rng.randint(0, 6), t=rng.randint(2, 40)))
    return out


_COUNTER = r"""
import json, sys
sys.path.insert(0, {src!r})
import astragal
from astragal import _limits, _parse
from astragal.odds import algebra, maths, race
# every kernel in plain Python, whatever the size: numpy's work would not show as lines, nor
# a power taken as one big integer (its estimate is held to its time in benchmarks/)
maths.NUMPY_IMPORT = 10**12
maths.EXACT_UPTO = 0
limits = astragal.Limits(max_odds_work=10**12)
estimates = []
check = _limits.Limits.check_work
def counted(self, work, what, text=""):
    estimates.append(work)
    return check(self, work, what, text)
_limits.Limits.check_work = counted
lines = [0]
def local(frame, event, arg):
    if event == "line":
        lines[0] += 1
    return local
def forget():
    # each request as the first of its process: no law remembered from the one before
    algebra.clear_caches()
    for name, module in list(sys.modules.items()):
        if name.startswith("astragal.systems."):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()
out = []
for text in json.loads(sys.argv[1]):
    system, parsed, options = _parse(text, None, limits, None)
    forget()
    maths._python_work = 0
    estimates.clear()
    lines[0] = 0
    sys.settrace(lambda frame, event, arg: local)
    try:
        system.odds(parsed.spec, options, limits, text)
    finally:
        sys.settrace(None)
    assert "numpy" not in sys.modules, text + " imported numpy: the count would miss its work"
    out.append((text, lines[0], sum(estimates)))
print(json.dumps(out))
"""


@pytest.mark.parametrize("game", sorted(TEMPLATES))
def test_estimated_steps_are_within_4x_of_the_python_lines_run(game: str) -> None:
    texts = shapes(game, 24, seed=18)
    run = subprocess.run([sys.executable, "-c", _COUNTER.format(src=str(ROOT / "src")),
                          json.dumps(texts)], capture_output=True, text=True, timeout=900,
                         check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    counted = json.loads(run.stdout)
    assert len(counted) == len(texts)
    bad = [(text, lines, used) for text, lines, used in counted
           if not lines / 4 <= used <= lines * 4]
    assert not bad, bad


def test_a_request_over_the_work_limit_is_refused_before_any_work() -> None:
    import astragal

    small = astragal.Limits(max_odds_work=20_000)
    for text in ("cofd: 80 vs 80", "od6: 30D wild vs 30D wild", "ds: d6+3 vs skill d6",
                 "at: 40d6 vs 10d6"):
        with pytest.raises(astragal.LimitError) as info:
            astragal.odds(text, limits=small)
        assert "steps" in info.value.message, text
    assert astragal.odds("cofd: 3", limits=small).outcomes


MEMORY = ["cofd: 500 vs 500 8-again", "cofd: 1 target 5000", "cofd: 3 target 3000 vs 2",
          "cofd: 1 target 20000", "od6: 500D wild vs 500D wild", "od6: 500D",
          "od6: 300D wild vs 20", "od6: 400D vs 300D", "at: 500d6 vs 400d6", "at: 500d6",
          "at: 300d6 vs 100d6", "ds: atk d6+6 vs def d6+3 dmg d6+2"]


@pytest.mark.parametrize("text", MEMORY)
def test_estimated_memory_is_within_4x_of_the_traced_peak(text: str) -> None:
    """The largest estimate a request checks against ``tracemalloc``'s peak, both held to a
    floor of 256 KiB (below it the interpreter's own allocations are of the same size). numpy
    is imported first: its import is not the request's memory."""
    import tracemalloc

    import numpy  # noqa: F401

    import astragal
    from astragal import _limits, _parse
    from astragal.odds import algebra

    limits = astragal.Limits(max_odds_work=10**12, max_dice=999_999, max_rolls=1_000_000)
    system, parsed, options = _parse(text, None, limits, None)
    algebra.clear_caches()
    for name, module in list(sys.modules.items()):
        if name.startswith("astragal.systems."):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()
    estimates: list[int] = []
    check = _limits.Limits.check_memory

    def counted(self: _limits.Limits, nbytes: int, what: str, text: str = "") -> None:
        estimates.append(nbytes)
        check(self, nbytes, what, text)

    _limits.Limits.check_memory = counted  # type: ignore[method-assign]
    tracemalloc.start()
    try:
        system.odds(parsed.spec, options, limits, text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        _limits.Limits.check_memory = check  # type: ignore[method-assign]
    floor = 256 << 10
    guess = max(max(estimates), floor)
    assert max(peak, floor) / 4 <= guess <= max(peak, floor) * 4, (text, estimates, peak)


def test_a_request_over_the_memory_limit_is_refused_before_any_work() -> None:
    import astragal

    small = astragal.Limits(max_odds_memory=1 << 20, max_odds_work=10**12, max_rolls=1_000_000)
    with pytest.raises(astragal.LimitError) as info:
        astragal.odds("cofd: 1 target 5000", limits=small)
    assert "memory" in info.value.message
    assert astragal.odds("cofd: 1 target 50", limits=small).outcomes
