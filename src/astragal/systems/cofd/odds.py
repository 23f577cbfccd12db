"""Chronicles of Darkness odds: the exact law of the same program the roller samples
(``program.py``), with the same verdict functions mapped over it. Nothing here computes a
binomial, a convolution or a re-roll tail: the dice algebra's exact interpreter does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..._errors import OptionError
from ..._limits import Limits
from ..._records import Record
from ...dice.algebra import Marked, Pool
from ...odds import Distribution, Odds, maths
from ...odds import algebra as exact
from ...odds.exactness import conditioned, denominator, exact_odds, product
from ...odds.race import Race, race
from ...render import cofd as words
from . import rules as R
from .notation import Action
from .program import (
    _DIE_EPS,
    TAIL_BUDGET,
    Prepared,
    effective_rules,
    prepare,
    program,
    side_step,
)
from .rules import Rules

__all__ = ["SideLaw", "odds", "pool_pmf", "side_law", "single_outcomes"]


class SideLaw(Record):
    """The exact law of one side's roll: P(successes = k), P(dramatic failure), lost tail mass.

    ``pmf[k]`` includes the dramatic failures (they have no success).
    """

    pmf: tuple[float, ...]
    dramatic: float
    truncated: float


@lru_cache(maxsize=1024)
def _side_law(prep: Prepared, rules: Rules, eps: float) -> SideLaw:
    prog = program(prep, rules)
    if isinstance(prog, Marked):
        joint = exact.marked_law(prog, eps)
        pmf: list[float] = []
        dramatic = 0.0
        for mark, terms in joint.by_mark:
            pmf.extend([0.0] * (len(terms) - len(pmf)))
            for k, p in enumerate(terms):
                pmf[k] += p
            if mark:
                dramatic += math.fsum(terms)
        while len(pmf) > 1 and pmf[-1] == 0.0:
            pmf.pop()
        return SideLaw(tuple(pmf), dramatic, joint.truncated)
    law = exact.law(prog, eps)
    return SideLaw(law.pmf, 0.0, law.truncated)


def side_law(prep: Prepared, rules: Rules, eps: float = _DIE_EPS) -> SideLaw:
    """The exact law of a prepared side (cached: tables and contests reuse pools)."""
    return _side_law(prep, rules, eps)


def pool_pmf(dice: int, again: int | None, rote: bool = False,
             eps: float = _DIE_EPS) -> tuple[tuple[float, ...], float]:
    """P(successes = k) for a plain pool of ``dice`` d10s, and the probability lost where cut.

    >>> pmf, lost = pool_pmf(1, 10)
    >>> round(pmf[0], 12), round(pmf[1], 12), round(pmf[2], 12), lost < 1e-15
    (0.7, 0.27, 0.027, True)
    """
    prep = Prepared(dice, dice, False, again, R.again_key(again), rote, str(dice))
    law = side_law(prep, Rules(), eps)
    return law.pmf, law.truncated


def single_outcomes(law: SideLaw, rules: Rules) -> dict[str, float]:
    """C3, C4, C-X1: the verdict mapped over the law (the cut tail is among the exceptional)."""
    out = dict.fromkeys(R.SINGLE_OUTCOMES, 0.0)
    for k, p in enumerate(law.pmf):
        if k == 0 and law.dramatic:
            out[R.verdict(0, True, rules.exceptional_at)] += law.dramatic
            p -= law.dramatic
        out[R.verdict(k, False, rules.exceptional_at)] += p
    out[R.verdict(rules.exceptional_at, False, rules.exceptional_at)] += law.truncated
    return out


_REQUEST_STEPS = 1000  # a request's own steps: its rules, outcomes, notes and records


def _side_work(prep: Prepared, rules: Rules) -> tuple[int, int]:
    """(steps, law length) of one side's law and the outcomes read over it."""
    prog = program(prep, rules)
    length = exact.law_length(prog) if isinstance(prog, Pool) else 32
    return exact.work(prog) + 12 * length, length


_REQUEST_BYTES = 64 << 10  # a request's own allocations
_BYTES_PER_VALUE = 100  # a value of a law: its float in a list or two, the answer's dict


def _check_work(sides: list[Prepared], rules: Rules, limits: Limits, text: str) -> None:
    """The estimated steps and peak bytes of the odds (an extended action's race checks its
    own as well)."""
    laws = [_side_work(prep, rules) for prep in sides]
    steps = _REQUEST_STEPS + sum(w for w, _ in laws)
    values = sum(n for _, n in laws)
    nbytes = _REQUEST_BYTES + _BYTES_PER_VALUE * values
    if len(laws) == 2:  # the margin's law and the contest read over it
        steps += maths.convolve_work(laws[0][1], laws[1][1]) + 10 * values
        nbytes += _BYTES_PER_VALUE * values
    limits.check_work(steps, "this roll", text)
    limits.check_memory(nbytes, "this roll", text)


def odds(spec: Action, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    """The exact odds of an action: outcomes, and successes, margin or rolls by their law."""
    rules = effective_rules(spec, options)
    contested = spec.opposition is not None
    actor = prepare(spec.actor, rules, contested)
    opp = prepare(spec.opposition, rules, True) if spec.opposition is not None else None
    _check_work([actor] + ([opp] if opp is not None else []), rules, limits, text)
    if spec.target is not None:
        return _extended_odds(spec, actor, opp, rules, limits, text)
    law_a = side_law(actor, rules)
    head = side_step(actor, "")
    notes = [words.side_header("pool" if opp is None else "actor", head.dice, dict(head.facts))]
    if opp is None:
        outcomes = single_outcomes(law_a, rules)
        pmf, dropped = maths.trim_tail(law_a.pmf, TAIL_BUDGET / 2 - law_a.truncated)
        dist = Distribution.from_mapping({k: p for k, p in enumerate(pmf) if p > 0},
                                         law_a.truncated + dropped)
        if actor.chance:
            notes.append(words.chance_note(rules))
        return exact_odds(Odds("cofd", text, Distribution.from_mapping(
            outcomes, order=R.SINGLE_OUTCOMES), dist, "successes", tuple(notes)),
            _denominator(actor, rules), _outcomes_denominator(actor, rules))
    law_b = side_law(opp, rules)
    head = side_step(opp, "")
    notes.append(words.side_header("opposition", head.dice, dict(head.facts)))
    # C10: the contest rule mapped over the margin's law
    margin = maths.difference(law_a.pmf, law_b.pmf)
    by_outcome = dict.fromkeys(R.CONTEST_OUTCOMES, 0.0)
    for m, p in margin.items():
        by_outcome[R.contest(m)] += p
    extra: dict[str, Any] = {
        "actor_outcomes": Distribution.from_mapping(single_outcomes(law_a, rules),
                                                    order=R.SINGLE_OUTCOMES).to_json(),
        "opposition_outcomes": Distribution.from_mapping(single_outcomes(law_b, rules),
                                                         order=R.SINGLE_OUTCOMES).to_json()}
    lost = law_a.truncated + law_b.truncated
    settle = R.tie_goes(rules.contested_tie, extended=False)
    tie = by_outcome["tie"]
    if settle == "again":
        decided = 1.0 - tie
        if decided <= 0.0:
            raise OptionError("neither side can score a success, so a re-rolled tie would never "
                              "end (contested_tie=reroll)", text, (0, len(text)))
        rolls, cut = maths.geometric_rolls(tie)
        extra["rolls"] = Distribution.from_mapping(rolls, cut).to_json()
        margin = {m: p / decided for m, p in margin.items() if R.contest(m) != "tie"}
        by_outcome = {k: (v / decided if k != "tie" else 0.0) for k, v in by_outcome.items()}
        lost += cut
    elif settle != "tie":
        by_outcome[settle] += tie
        by_outcome["tie"] = 0.0
    notes.append(words.tie_note(rules, tie))
    return exact_odds(Odds("cofd", text, Distribution.from_mapping(
        by_outcome, order=R.CONTEST_OUTCOMES), Distribution.from_mapping(
        {m: p for m, p in margin.items() if p > 0}, lost), "margin", tuple(notes), extra),
        conditioned(product(_denominator(actor, rules), _denominator(opp, rules)),
                    1.0 - tie if settle == "again" else 1.0))


def _denominator(prep: Prepared, rules: Rules) -> int | None:
    """The side's law's common denominator: 10 per roll of a d10 (None with an again rule)."""
    return 1 if prep.dice == 0 else denominator(program(prep, rules))


def _outcomes_denominator(prep: Prepared, rules: Rules) -> int | None:
    """A common denominator of a side's outcomes even under an again rule: fewer than
    ``exceptional_at`` successes take at most that many re-rolls (C5: only a success is rolled
    again), so every outcome but the exceptional one is a finite sum, and that one is the rest."""
    if prep.dice == 0:
        return 1
    rolls = prep.dice * (2 if prep.rote else 1) + rules.exceptional_at - 1
    return None if rolls > 12 else R.FACES ** rolls


def _arrival(target: int, contested: bool) -> int:
    """C11 read at each running total: the first total that decides the race (the target)."""
    for total in range(2 * target + 2):
        if R.extended_result(total, 0 if contested else None, target) is not None:
            return max(1, total)
    raise OptionError(f"no total of successes ever reaches the target of {target}")


def _classify(at: int, target: int) -> dict[str, str]:
    """C11 read once on each kind of arrival at the total ``at``: who wins when only one side, or
    both, arrive (the race assumes the rule depends on who arrived and on which total is larger;
    tests/systems/cofd/test_cofd.py checks that on a grid of totals)."""
    return {"first": R.extended_result(at, at - 1, target) or "",
            "second": R.extended_result(at - 1, at, target) or "",
            "both_more": R.extended_result(at + 1, at, target) or "",
            "both_less": R.extended_result(at, at + 1, target) or "",
            "both_equal": R.extended_result(at, at, target) or ""}


def _extended_odds(spec: Action, actor: Prepared, opp: Prepared | None, rules: Rules,
                   limits: Limits, text: str) -> Odds:
    target = spec.target or 0
    # each roll's cut tail adds up over the rolls, so the per-roll laws are cut far deeper
    law_a = side_law(actor, rules, 1e-22)
    law_b = side_law(opp, rules, 1e-22) if opp is not None else None
    notes = words.extended_notes(target, side_step(actor, "actor"),
                                 side_step(opp, "opposition") if opp is not None else None)
    if opp is None and len(law_a.pmf) == 1 and spec.max_rolls is not None:
        res = Race((0.0,) * spec.max_rolls, (0.0,) * spec.max_rolls, (0.0,) * spec.max_rolls,
                   0.0)
    else:
        settle = R.tie_goes(rules.contested_tie, extended=True)
        arrival = _arrival(target, opp is not None)
        res = race(law_a.pmf, law_a.truncated,
                   law_b.pmf if law_b is not None else None,
                   law_b.truncated if law_b is not None else 0.0,
                   arrival, _classify(arrival, target), settle, R.contest, spec.max_rolls, limits, text)
    by_roll = {r + 1: w + lo + t for r, (w, lo, t) in enumerate(zip(res.win, res.lose, res.tie))}
    if opp is None and spec.max_rolls is not None:
        # the action stops at the target or after its last allowed roll, failed
        by_roll[spec.max_rolls] = by_roll.get(spec.max_rolls, 0.0) + max(
            0.0, 1.0 - math.fsum(res.win))
    dist = Distribution.from_mapping({k: p for k, p in by_roll.items() if p > 0}, res.truncated)
    if opp is None:
        success = math.fsum(res.win)
        outcomes = {"success": success, "failure": 0.0 if spec.max_rolls is None
                    else max(0.0, 1.0 - success)}
        if spec.max_rolls is not None:
            notes.append(f"at most {spec.max_rolls} rolls: the action stops at the target or "
                         "after the last roll")
        return Odds("cofd", text, Distribution.from_mapping(outcomes,
                                                            order=R.EXTENDED_OUTCOMES),
                    dist, "rolls", tuple(notes))
    notes.append(words.extended_tie_note(rules))
    outcomes = {"win": math.fsum(res.win), "lose": math.fsum(res.lose),
                "tie": math.fsum(res.tie)}
    extra = {"win_by_roll": {str(r + 1): p for r, p in enumerate(res.win) if p >= 1e-12},
             "lose_by_roll": {str(r + 1): p for r, p in enumerate(res.lose) if p >= 1e-12}}
    return Odds("cofd", text, Distribution.from_mapping(outcomes, order=R.CONTEST_OUTCOMES),
                dist, "rolls", tuple(notes), extra)
