"""Faults the fuzzers found in game systems, one input each: all fixed by the systems' owners.

Each test replays one finding through ``harness.exercise`` (the fuzz suite's own rule: a result
within the limits, or astragal's ``InputError``; no other exception, no operation over the time
limit, odds that sum to 1). They were ``xfail`` while open; every one is fixed now, so they are
plain tests that keep them fixed, and ``harness.KNOWN`` is empty: the fuzz suite fails on any of
them again.
"""

from __future__ import annotations

import pytest

from . import harness

FAULTS = [
    # (system, input, what went wrong)
    ("dice", "dice: d1000000!",
     ("parse takes about 5-10 s (the explosion analysis grows with the die size; d100000! "
      "takes 0.7 s, d300000! 2 s): a hang for a web request")),
    ("dice", "dice: d100000!",
     "odds take over 5 s (exact.py: the explosion mixture over every face of a huge die)"),
    ("dice", "dice: d999999",
     "odds of one plain die with 999999 faces take over 10 s and 250 MiB (exact.py)"),
    ("dice", "dice: " + "*".join(["d6"] * 165),
     ("the canonical form (each 'd6' printed as '1d6') is longer than the notation limit, so "
      "str(parse(x)) is refused (LimitError) although x was accepted")),
    ("dice", "dice: (0 [label]) [label]",
     ("the canonical form 'dice: 0[label][label]' drops the parentheses and is refused: "
      "'one label per term'")),
    ("dice", "dice: 2d6xo>5",
     "odds: the total's probabilities sum to 1/36, not 1 (explode-once 'xo' with a compare point)"),
    ("dice", " 1d6xo>5",
     "odds with the room's system (no prefix): the total's probabilities sum to 1/6"),
    ("dice", "dice: d60000!>20000",
     ("odds refused by the estimate only after 50 s of CPU (test_cost found it): the "
      "numerator of a die with many faces that go on and many that stop is quadratic and was "
      "made before the work was estimated")),
    ("dice", "dice:\u00b9",
     "parse: AssertionError in grammar.atom on a superscript digit ('¹'.isdigit() is True)"),
]

# Found earlier and fixed by the system's owner at the time.
FIXED = [
    ("d6skill", "ds: d6 max_explosions=464",
     "odds: OverflowError (int too large to convert to float) in d6_law"),
    ("d6skill", "ds: d6 max_explosions=999999",
     "odds: OverflowError (int too large to convert to float) in d6_law"),
    ("attack", "attack: ATK=1 WPN=500 Throw 2 luck vs Armour 2 dodge 1",
     "odds took over 10 s (a huge WPN with luck)"),
]


@pytest.mark.parametrize(("system", "text", "why"), FAULTS, ids=[f[1][:40] for f in FAULTS])
def test_found_by_fuzzing(system: str, text: str, why: str) -> None:
    _reproduce(system, text, why, harness.HANG_SECONDS)


@pytest.mark.parametrize(("system", "text", "why"), FIXED, ids=[f[1][:40] for f in FIXED])
def test_found_by_fuzzing_and_fixed(system: str, text: str, why: str) -> None:
    _reproduce(system, text, why, harness.HANG_SECONDS)


def _reproduce(system: str, text: str, why: str, hang: float) -> None:
    if system not in harness.installed_systems()[0]:
        pytest.skip(f"{system} does not import")
    stats = harness.Stats()
    saved, harness.KNOWN[:] = list(harness.KNOWN), []
    try:
        findings = harness.exercise(text, system, hang=hang, stats=stats,
                                    default_system=system if ":" not in text else None)
    finally:
        harness.KNOWN[:] = saved
    assert not findings, f"{why}\n" + "\n".join(f.describe() for f in findings)
