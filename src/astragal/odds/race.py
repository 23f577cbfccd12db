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
from dataclasses import dataclass

from .._errors import OptionError
from .._limits import DEFAULT_LIMITS, Limits
from . import maths

__all__ = ["Race", "race"]


@dataclass(frozen=True, slots=True)
class Race:
    """A race's law: P(decided at roll r) by who wins, and the lost mass."""

    win: tuple[float, ...]
    lose: tuple[float, ...]
    tie: tuple[float, ...]
    truncated: float


def race(pa_law: Sequence[float], lost_a: float, pb_law: Sequence[float] | None, lost_b: float,
         target: int, kinds: Mapping[str, str], settle: str, contest: Callable[[int], str],
         max_rolls: int | None = None, limits: Limits = DEFAULT_LIMITS,
         text: str = "") -> Race:
    """The exact law of a race of per-roll laws ``pa_law`` (and ``pb_law``) to ``target``."""
    import numpy as np

    pa = np.asarray(pa_law)
    pb = np.asarray(pb_law) if pb_law is not None else None
    if len(pa) == 1 and (pb is None or len(pb) == 1):
        raise OptionError("no side can ever score a success, so the target is never reached",
                          text, (0, len(text)) if text else None)
    ga = np.zeros(target)
    ga[0] = 1.0
    gb = ga.copy()
    step = {"win": 0.0, "lose": 0.0, "tie": 0.0}
    if pb_law is not None:
        for m, p in maths.difference(pa_law, pb_law).items():
            step[contest(m)] += p
    # the work: target × (per-roll support) per roll; a race ends when the faster side arrives,
    # so its mean per roll sets the number of rolls (about three times it)
    means = [math.fsum(k * p for k, p in enumerate(law))
             for law in (pa_law, pb_law) if law is not None and len(law) > 1]
    rolls_guess = 3 * math.ceil(target / max(means)) + 10
    if max_rolls is not None:
        rolls_guess = min(rolls_guess, max_rolls)
    per_roll = target * (len(pa) + (len(pb) if pb is not None else 0)) + 64
    limits.check_work(rolls_guess * per_roll, "this extended action", text)
    out: dict[str, list[float]] = {"win": [], "lose": [], "tie": []}
    pending = 0.0
    work = 0
    lost_per_roll = lost_a + lost_b
    r = 0
    while True:
        r += 1
        work += per_roll
        if work > limits.max_odds_work:  # the guess above was too kind: stop all the same
            limits.check_work(work, "this extended action", text)
        ca = np.convolve(ga, pa)
        ga, ha = ca[:target], ca[target:]
        if pb is None:
            out["win"].append(float(ha.sum()))
            out["lose"].append(0.0)
            out["tie"].append(0.0)
            alive = float(ga.sum())
            if (max_rolls is not None and r >= max_rolls) or alive < 1e-16:
                return Race(tuple(out["win"]), tuple(out["lose"]), tuple(out["tie"]),
                            (0.0 if max_rolls is not None else alive) + r * lost_per_roll)
            continue
        cb = np.convolve(gb, pb)
        gb, hb = cb[:target], cb[target:]
        alive_a, alive_b = float(ga.sum()), float(gb.sum())
        n = max(len(ha), len(hb))
        ha_, hb_ = np.pad(ha, (0, n - len(ha))), np.pad(hb, (0, n - len(hb)))
        below_b = np.concatenate(([0.0], np.cumsum(hb_)[:-1]))
        below_a = np.concatenate(([0.0], np.cumsum(ha_)[:-1]))
        now = {"win": 0.0, "lose": 0.0, "tie": 0.0}
        now[kinds["first"]] += float(ha_.sum()) * alive_b
        now[kinds["both_more"]] += float(np.dot(ha_, below_b))
        now[kinds["second"]] += float(hb_.sum()) * alive_a
        now[kinds["both_less"]] += float(np.dot(hb_, below_a))
        now[kinds["both_equal"]] += float(np.dot(ha_, hb_))
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
