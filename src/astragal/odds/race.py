"""Races to a target over repeated rolls (extended actions and contests), exactly.

Each side's running total below the target is a vector; one roll convolves it with the side's
per-roll law, and what crosses the target is this roll's arrivals, by total. The sides are
independent, so the race at roll r combines the two sides' arrivals and survivals. Who wins an
arrival is the game's rule, read once per kind of arrival (``kinds``: ``first``, ``second``,
``both_more``, ``both_less``, ``both_equal`` → ``win``/``lose``/``tie``); a ``tie`` becomes what
``settle`` says (``tie``, ``lose``, or ``again``: keep rolling single contests, decided by
``contest`` of the margin, until one side leads). Rolls stop once what is still undecided is
below 1e-16; that mass is reported as truncated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from .._errors import OptionError
from .._limits import DEFAULT_LIMITS, Limits
from .._records import Record
from . import maths

__all__ = ["Race", "memory", "race", "work"]


class Race(Record):
    """A race's law: P(decided at roll r) by who wins, and the lost mass."""

    win: tuple[float, ...]
    lose: tuple[float, ...]
    tie: tuple[float, ...]
    truncated: float


def _rolls(pa_law: Sequence[float], pb_law: Sequence[float] | None, target: int,
           max_rolls: int | None) -> float:
    """The rolls a race is estimated to run: those the faster side needs on average, four
    standard widths more, and the rolls it takes every side to stop scoring nothing with a
    chance below 1e-16."""
    laws = [law for law in (pa_law, pb_law) if law is not None]
    means = [math.fsum(k * p for k, p in enumerate(law)) for law in laws if len(law) > 1]
    if not means:
        return 1.0
    mean = max(means)
    stall = math.prod(law[0] for law in laws)
    rolls = target / mean + 4 * math.sqrt(target / mean) + 2
    if 0.0 < stall < 1.0:
        rolls += math.log(1e-16) / math.log(stall)
    elif stall >= 1.0:
        rolls = float(max_rolls or 10**6)
    return min(rolls, max_rolls) if max_rolls is not None else rolls


_NUMPY_CELLS_PER_STEP = 40  # numpy's convolution does ~40 multiply-adds in a Python step's time
_FEW_ARRIVALS = 64  # running totals past the target summed in Python up to this many
_NUMPY_STEPS_PER_ROLL = 500  # and a roll's dozen numpy calls cost about 500 steps


def work(pa_law: Sequence[float], pb_law: Sequence[float] | None, target: int,
         max_rolls: int | None = None) -> int:
    """The estimated steps of ``race``: rolls × (the running totals × each per-roll law), in
    Python lines for a small race, in numpy's cells (and its calls) for a large one."""
    width = len(pa_law) + (len(pb_law) if pb_law is not None else 0)
    rolls = _rolls(pa_law, pb_law, target, max_rolls)
    return int(rolls * _per_roll(target, width, rolls)) + 64


def _python_per_roll(target: int, width: int) -> int:
    return 2 * target * width + 16 * width + 100


def _numpy_per_roll(target: int, width: int) -> int:
    return target * width // _NUMPY_CELLS_PER_STEP + _NUMPY_STEPS_PER_ROLL


def _per_roll(target: int, width: int, rolls: float) -> int:
    """The steps of one roll of the race on the kernel it takes (``_in_python``)."""
    if _in_python(target, width, rolls):
        return _python_per_roll(target, width)
    return _numpy_per_roll(target, width)


def _in_python(target: int, width: int, rolls: float) -> bool:
    """A race runs on Python lists unless numpy pays for itself (``maths.numpy_pays``)."""
    return not maths.numpy_pays(int(rolls * _python_per_roll(target, width)),
                                int(rolls * _numpy_per_roll(target, width)))


def memory(pa_law: Sequence[float], pb_law: Sequence[float] | None, target: int,
           max_rolls: int | None = None) -> int:
    """The estimated peak bytes of ``race`` and of the answer built from it: three numbers a
    roll (and the law of the rolls), the running totals and their product with a roll."""
    width = len(pa_law) + (len(pb_law) if pb_law is not None else 0)
    return int(_rolls(pa_law, pb_law, target, max_rolls) * 300) + 100 * (target + width)


def race(pa_law: Sequence[float], lost_a: float, pb_law: Sequence[float] | None, lost_b: float,
         target: int, kinds: Mapping[str, str], settle: str, contest: Callable[[int], str],
         max_rolls: int | None = None, limits: Limits = DEFAULT_LIMITS,
         text: str = "") -> Race:
    """The exact law of a race of per-roll laws ``pa_law`` (and ``pb_law``) to ``target``."""
    if len(pa_law) == 1 and (pb_law is None or len(pb_law) == 1):
        raise OptionError("no side can ever score a success, so the target is never reached",
                          text, (0, len(text)) if text else None)
    guess = work(pa_law, pb_law, target, max_rolls)
    limits.check_work(guess, "this extended action", text)
    limits.check_memory(memory(pa_law, pb_law, target, max_rolls), "this extended action", text)
    step = {"win": 0.0, "lose": 0.0, "tie": 0.0}
    if pb_law is not None:
        for m, p in maths.difference(pa_law, pb_law).items():
            step[contest(m)] += p
    width = len(pa_law) + (len(pb_law) if pb_law is not None else 0)
    rolls = _rolls(pa_law, pb_law, target, max_rolls)
    python = _in_python(target, width, rolls)
    per_roll = _python_per_roll(target, width) if python else _numpy_per_roll(target, width)
    if python:  # counted after the choice: the work this race does, not the next one's
        maths.in_python(int(rolls * per_roll))
    ops: _Ops = _PythonOps() if python else _NumpyOps()
    pa = ops.array(pa_law)
    pb = ops.array(pb_law) if pb_law is not None else None
    ga = ops.array([1.0] + [0.0] * (target - 1))
    gb = ops.array([1.0] + [0.0] * (target - 1))
    out: dict[str, list[float]] = {"win": [], "lose": [], "tie": []}
    pending = 0.0
    done = 0
    lost_per_roll = lost_a + lost_b
    r = 0
    while True:
        r += 1
        done += per_roll
        if done > limits.max_odds_work:  # the guess above was too kind: stop all the same
            limits.check_work(done, "this extended action", text)
        ga, ha = ops.roll(ga, pa, target)
        if pb is None:
            out["win"].append(ops.total(ha))
            out["lose"].append(0.0)
            out["tie"].append(0.0)
            alive = ops.total(ga)
            if (max_rolls is not None and r >= max_rolls) or alive < 1e-16:
                return Race(tuple(out["win"]), tuple(out["lose"]), tuple(out["tie"]),
                            (0.0 if max_rolls is not None else alive) + r * lost_per_roll)
            continue
        gb, hb = ops.roll(gb, pb, target)
        alive_a, alive_b = ops.total(ga), ops.total(gb)
        first, second, more, less, equal = ops.arrivals(ha, hb)
        now = {"win": 0.0, "lose": 0.0, "tie": 0.0}
        now[kinds["first"]] += first * alive_b
        now[kinds["both_more"]] += more
        now[kinds["second"]] += second * alive_a
        now[kinds["both_less"]] += less
        now[kinds["both_equal"]] += equal
        # ties still being played out: one more single contest each roll
        now["win"] += pending * step["win"]
        now["lose"] += pending * step["lose"]
        pending *= step["tie"]
        tie, now["tie"] = now["tie"], 0.0
        if settle == "again":
            pending += tie
        else:
            now[settle] += tie
        for k, series in out.items():
            series.append(now[k])
        undecided = alive_a * alive_b + pending
        if undecided < 1e-16:
            return Race(tuple(out["win"]), tuple(out["lose"]), tuple(out["tie"]),
                        undecided + r * lost_per_roll)


class _Ops(Protocol):
    def array(self, values: Sequence[float]) -> Any: ...

    def roll(self, alive: Any, law: Any, target: int) -> tuple[Any, Any]: ...

    def total(self, values: Any) -> float: ...

    def arrivals(self, ha: Any, hb: Any) -> tuple[float, float, float, float, float]: ...


class _PythonOps:
    """One roll of the race on Python lists (small races: no numpy import)."""

    def array(self, values: Sequence[float]) -> list[float]:
        return list(values)

    def roll(self, alive: list[float], law: list[float],
             target: int) -> tuple[list[float], list[float]]:
        """The running totals after one more roll: those still below the target, and those
        that reach it (by how far past it)."""
        out = [0.0] * (len(alive) + len(law) - 1)
        for i, x in enumerate(alive):
            if x:
                for j, y in enumerate(law):
                    out[i + j] += x * y
        return out[:target], out[target:]

    def total(self, values: list[float]) -> float:
        return math.fsum(values)

    @staticmethod
    def arrivals(ha: list[float], hb: list[float]) -> tuple[float, float, float, float, float]:
        """(A arrives, B arrives, both with A further, both with B further, both level)."""
        more = less = equal = 0.0
        below_a = below_b = 0.0
        for k in range(max(len(ha), len(hb))):
            a = ha[k] if k < len(ha) else 0.0
            b = hb[k] if k < len(hb) else 0.0
            more += a * below_b
            less += b * below_a
            equal += a * b
            below_a += a
            below_b += b
        return math.fsum(ha), math.fsum(hb), more, less, equal


class _NumpyOps:
    """One roll of the race on numpy arrays (large races)."""

    def __init__(self) -> None:
        import numpy as np

        self.np = np

    def array(self, values: Sequence[float]) -> Any:
        return self.np.asarray(values, dtype=float)

    def roll(self, alive: Any, law: Any, target: int) -> tuple[Any, Any]:
        c = self.np.convolve(alive, law)
        return c[:target], c[target:]

    def total(self, values: Any) -> float:
        return float(values.sum())

    def arrivals(self, ha: Any, hb: Any) -> tuple[float, float, float, float, float]:
        np = self.np
        n = max(len(ha), len(hb))
        if n <= _FEW_ARRIVALS:  # a few: summed as lists, where numpy's dozen calls cost more
            return _PythonOps.arrivals(ha.tolist(), hb.tolist())
        ha_, hb_ = np.pad(ha, (0, n - len(ha))), np.pad(hb, (0, n - len(hb)))
        below_b = np.concatenate(([0.0], np.cumsum(hb_)[:-1]))
        below_a = np.concatenate(([0.0], np.cumsum(ha_)[:-1]))
        return (float(ha_.sum()), float(hb_.sum()), float(np.dot(ha_, below_b)),
                float(np.dot(hb_, below_a)), float(np.dot(ha_, hb_)))
