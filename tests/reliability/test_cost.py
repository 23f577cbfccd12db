"""Cost-based fuzzing: search for rolls whose exact odds cost more than their work estimate says.

The web table refuses odds whose *estimated* work is over its limit, and kills a computation that
runs past its cut (``Caps.odds_seconds``) anyway. An input the estimate lets through but that runs
into the cut is a wrong estimate: the attack's ``d60000ro<59999`` was one (12 s of CPU, then a
refusal). Hypothesis is steered (``target``) towards inputs with the most CPU time per estimated
step, and towards the most CPU time; a finding is an input accepted within the web's limits whose
odds take more CPU time than the cut, or that raise anything but astragal's ``InputError``.

The time measured is the process's CPU time, not the wall clock, so other work on the machine does
not make a finding; every input runs under an alarm at twice the cut, so nothing hangs the suite.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, target
from hypothesis import strategies as st

import astragal
from astragal import InputError, Limits
from astragal.web.caps import Caps

from . import harness
from .test_fuzz import ALL, _fuzz_settings, _system, dice_expression, renumbered

CUT = Caps().odds_seconds
SECONDS = float(os.environ.get("ASTRAGAL_FUZZ_SECONDS", "45")) / 3  # this file's share
WORST: dict[str, Any] = {"ratio": 0.0, "cpu": 0.0}
_ESTIMATES: list[int] = []


class _Metered(Limits):
    """The web table's limits, noting every work estimate a system makes."""

    __slots__ = ()

    def check_work(self, work: int, what: str, text: str = "") -> None:
        _ESTIMATES.append(int(work))
        super().check_work(work, what, text)


WEB = _Metered(max_notation_length=harness.WEB_LIMITS.max_notation_length,
               max_odds_work=harness.WEB_LIMITS.max_odds_work)


class _Overrun(BaseException):
    pass


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def ring(signum: int, frame: Any) -> None:
        raise _Overrun()

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.2)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _cost(text: str) -> tuple[float, int] | None:
    """(CPU seconds, the largest estimate) of the odds of ``text``; None when refused."""
    _ESTIMATES.clear()
    start = time.process_time()
    try:
        with _alarm(2 * CUT):
            astragal.odds(text, limits=WEB)
    except InputError:
        return None
    except _Overrun:
        cpu = time.process_time() - start
        raise AssertionError(f"odds of {text!r} accepted by the estimate "
                             f"({max(_ESTIMATES, default=0):,} steps) still ran after "
                             f"{2 * CUT:g} s ({cpu:.1f} s of CPU)") from None
    return time.process_time() - start, max(_ESTIMATES, default=0)


def _search(text: str, deadline: float) -> None:
    if time.monotonic() > deadline:
        return
    cost = _cost(text)
    if cost is None:
        return
    cpu, estimate = cost
    ratio = cpu / max(estimate, 1)
    target(cpu, label="CPU seconds")
    target(ratio * 1e6, label="CPU microseconds per estimated step")
    if ratio > WORST["ratio"] and cpu > 0.05:
        WORST.update(ratio=ratio, ratio_text=text, estimate=estimate, ratio_cpu=cpu)
    if cpu > WORST["cpu"]:
        WORST.update(cpu=cpu, cpu_text=text)
    assert cpu <= CUT, (f"odds of {text!r}: the estimate ({estimate:,} steps) let through "
                        f"{cpu:.2f} s of CPU, over the web table's cut of {CUT:g} s")


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
@pytest.mark.parametrize("name", ALL)
def test_no_accepted_roll_costs_more_than_the_cut(name: str) -> None:
    _system(name)
    harness.warm_up()
    deadline = time.monotonic() + SECONDS / max(1, len(ALL))
    big = st.sampled_from([10**3, 5 * 10**3, 2 * 10**4, 6 * 10**4, 10**5, 10**6])
    strategy = dice_expression() if name == "dice" else renumbered(name)
    if name == "dice":  # the attack's shape too: one huge die, re-rolled below a huge number
        strategy = st.one_of(strategy, st.builds(
            lambda n, m, op: f"d{n}{op}{min(m, n - 1)}", big, big,
            st.sampled_from(["ro<", "r<", "!>", "kh", "ro>", "!o>"])))

    @_fuzz_settings(80)
    @given(text=strategy)
    def run(text: str) -> None:
        _search(text, deadline)

    run()
