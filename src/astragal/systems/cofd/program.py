"""Chronicles of Darkness as a program of the dice algebra, rolled and computed exactly.

A side's pool (C1, C8, C12, C-X1, C-X6) becomes ``Pool(n, Chain(d10))``: a die rolled again under
its N-again rule and scored by C2; a rote action wraps it in ``Reroll`` (C-X3); a chance die is a
``Marked`` chain whose mark is the dramatic failure. The roller samples the program and applies
the verdict functions to its values; the odds take the program's exact law and map the same
verdict functions over it. Nothing here computes a binomial, a convolution or a re-roll tail.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..._errors import LimitError, OptionError
from ..._limits import Limits
from ..._records import Record
from ..._rng import Source
from ...dice import Die, Roll, Tray, TrayHands
from ...dice import steps as S
from ...dice.algebra import Chain, Hands, Marked, Pool, PoolRecord, Reading, Reroll, sample
from ...odds import Distribution, Odds, maths
from ...odds import algebra as exact
from ...odds.race import Race, race
from ...render import cofd as words
from . import rules as R
from .notation import Action, Side
from .rules import Rules

__all__ = ["Prepared", "SideLaw", "odds", "pool_pmf", "prepare", "program", "roll", "side_law"]

TAIL_BUDGET = 1e-15        # the most probability a cut tail may lose, over the whole answer
_DIE_EPS = 1e-18           # where one pool's re-roll tail is cut (well inside the budget)


class Prepared(Record):
    """A side's pool after C1, C8, C12, C-X1, C-X6: what is rolled and with which rules."""

    pool: int                 # the sum as written (may be 0 or less)
    dice: int                 # dice rolled: the pool, 1 for a chance die, 0 for an automatic fail
    chance: bool
    again: int | None
    again_key: str
    rote: bool
    working: str              # 'Manipulation 3 + Subterfuge 2 - Composure 2 = 3'


def prepare(side: Side, rules: Rules, contested: bool = False) -> Prepared:
    """C1, C8, C12: add the terms (and Willpower's dice, C-X6); below 1 → a chance die (C-X1)."""
    key = side.again if side.again is not None else rules.again
    again = R.AGAIN_RULES[key]
    rote = side.rote or rules.rote
    if side.chance:
        return Prepared(0, 1, True, again, key, rote, "a chance die")
    # C-A5: in a contest the resisting traits count only if the switch says so
    used = [t for t in side.terms
            if not (t.resist and contested and not rules.contest_uses_resistance)]
    ratings = sum(t.sign * t.value for t in used if not t.resist)
    resistance = sum(t.value for t in used if t.resist)
    pool = R.pool_dice(ratings, resistance, side.willpower)
    working = words.working(used, side.willpower, R.WILLPOWER_DICE, pool)
    if pool >= 1:
        return Prepared(pool, pool, False, again, key, rote, working)
    if rules.pool_below_one == "chance_die":
        return Prepared(pool, 1, True, again, key, rote, working)
    return Prepared(pool, 0, False, again, key, rote, working)


# --------------------------------------------------------------------------------------------
# The program: the rules read at each face


class _Again(Reading):
    """C5, C6, C-X1: whether a face is rolled again, at a position of the chain. Settings: the
    N-again (None: none), a chance die, the chance die's re-roll switch."""

    __slots__ = ()

    def __call__(self, position: int, face: int) -> bool:
        return R.rerolls(face, self.settings[0], self.chance(position))

    def chance(self, position: int) -> bool:
        # C-X1: a chance die's first face is read as a chance die; its re-rolls per the switch
        _, chance, chance_reroll = self.settings
        return bool(chance) and (position == 0 or chance_reroll == "as_chance_die")


class _Score(Reading):
    """C2, C7: each face of the chain that succeeds adds one success. Setting: the ``_Again``."""

    __slots__ = ()

    def __call__(self, position: int, face: int) -> int:
        again: _Again = self.settings[0]
        return int(R.is_success(face, again.chance(position)))


class _Rote(Reading):
    """C-X3: a rote action rolls once more a die whose first face failed. Settings: a chance
    die, a 1 on it is a dramatic failure."""

    __slots__ = ()

    def __call__(self, first: int) -> bool:
        return R.rote_rerolls(first, *self.settings)


class _Dramatic(Reading):
    """C-X1: the mark of a chance die: its standing first face is a dramatic failure. Setting:
    a 1 is a dramatic failure."""

    __slots__ = ()

    def __call__(self, first: int, checked: int | None = None) -> bool:
        return R.dramatic_failure(first, True, self.settings[0])


def program(prep: Prepared, rules: Rules) -> Pool | Marked:
    """What a prepared side rolls, as a program of the dice algebra."""
    reading = _Again(prep.again, prep.chance, rules.chance_reroll)
    label = "chance die re-roll" if prep.chance else f"{prep.again}-again re-roll"
    chain = Chain(R.FACES, reading, _Score(reading), label)
    unit: Chain | Reroll = chain
    if prep.rote:
        unit = Reroll(chain, _Rote(prep.chance, rules.dramatic_failure_on_chance_one),
                      "rote re-roll")
    if prep.chance:
        return Marked(unit, _Dramatic(rules.dramatic_failure_on_chance_one))
    return Pool(prep.dice, unit)


# --------------------------------------------------------------------------------------------
# Rolling


class SideRoll(Record):
    """One side's dice as they landed, its successes and whether it is a dramatic failure."""

    record: PoolRecord
    chance: bool
    successes: int
    dramatic_failure: bool

    @property
    def dice(self) -> tuple[tuple[tuple[int, ...], ...], ...]:
        """For each die its runs (a face and the re-rolls it set off; a rote re-roll's run)."""
        return tuple(d.runs for d in self.record.dice)


def roll_side(hands: Hands, prep: Prepared, rules: Rules, limits: Limits) -> SideRoll:
    """Roll a prepared side with faces from ``hands``, in the C7a order."""
    record = sample(program(prep, rules), hands, limits)
    dramatic = bool(record.dice and record.dice[0].mark)
    return SideRoll(record, prep.chance, record.value, dramatic)


def effective_rules(spec: Action, options: Mapping[str, Any]) -> Rules:
    """The switches for a spec: defaults, then the caller's options, then the notation's."""
    return R.rules_from({**options, **dict(spec.options)})


def _side_json(side: SideRoll, prep: Prepared, rules: Rules) -> dict[str, Any]:
    return {"pool": prep.pool, "dice": prep.dice, "chance_die": prep.chance,
            "again": prep.again_key, "rote": prep.rote, "successes": side.successes,
            "exceptional": side.successes >= rules.exceptional_at,
            "dramatic_failure": side.dramatic_failure,
            "outcome": R.verdict(side.successes, side.dramatic_failure, rules.exceptional_at),
            "runs": [[list(run) for run in runs] for runs in side.dice]}


def side_step(prep: Prepared, name: str) -> S.Side:
    """A prepared side as a step: its dice and the facts its header shows."""
    return S.Side(name, prep.dice, (("pool", prep.pool), ("working", prep.working),
                                    ("chance", prep.chance), ("again", prep.again),
                                    ("rote", prep.rote)))


def _rolled(name: str, side: SideRoll, hands: TrayHands, offset: int, rote: bool) -> S.Rolled:
    """A side's dice as a step: C2 reads each face, C5 rolls one again, C-X3 a rote die."""
    dice = side.record.dice
    return S.Rolled(name, tuple(offset + i for i in hands.ids), tuple(d.runs for d in dice),
                    tuple(d.value for d in dice),
                    ("dramatic_failure",) if side.dramatic_failure else (), "C2", "C5",
                    "C-X3" if rote else "")


def _side_verdict(name: str, side: SideRoll, rules: Rules) -> S.Verdict:
    """C3 (C4, C-X1): a side's verdict as a step."""
    v = R.verdict(side.successes, side.dramatic_failure, rules.exceptional_at)
    rule = "C-X1" if v == "dramatic_failure" else "C4" if v == "exceptional_success" else "C3"
    return S.Verdict(name, v, (side.successes,), rule)


def roll(spec: Action, source: Source, options: Mapping[str, Any], limits: Limits,
         text: str) -> Roll:
    """Roll a spec with faces from ``source``; the verdict comes from the rule functions, the
    steps are put into words by ``render.cofd``."""
    rules = effective_rules(spec, options)
    contested = spec.opposition is not None
    actor = prepare(spec.actor, rules, contested)
    opp = prepare(spec.opposition, rules, True) if spec.opposition is not None else None
    if spec.target is not None:
        return _roll_extended(spec, actor, opp, source, rules, limits, text)
    steps: list[S.Step] = [S.Begin(str(spec))]
    tray = Tray(source, limits)
    if opp is None:
        steps.append(side_step(actor, "pool"))
        hands = TrayHands(tray, "pool", 0)
        side = roll_side(hands, actor, rules, limits)
        source.finish()
        steps.append(_rolled("pool", side, hands, 0, actor.rote))
        verdict = _side_verdict("pool", side, rules)
        steps.append(verdict)
        return Roll("cofd", text, verdict.outcome, _side_json(side, actor, rules), tray.freeze(),
                    words.transcript(steps), spec, tuple(steps))
    earlier: list[list[int]] = []
    dice: list[Die] = []
    settle = R.tie_goes(rules.contested_tie, extended=False)
    setting = f"contested_tie={rules.contested_tie}"
    while True:
        sides = []
        for prep, name, stream in ((actor, "actor", 0), (opp, "opposition", 1)):
            steps.append(side_step(prep, name))
            hands = TrayHands(tray, name, stream)
            side = roll_side(hands, prep, rules, limits)
            steps += [_rolled(name, side, hands, len(dice), prep.rote),
                      _side_verdict(name, side, rules)]
            sides.append(side)
        a, b = sides
        outcome = R.contest(a.successes - b.successes)
        if outcome != "tie" or settle != "again":
            break
        earlier.append([a.successes, b.successes])
        steps.append(S.Tie((a.successes, b.successes), settle, "C-X7", setting))
        if len(earlier) >= limits.max_rolls:
            raise LimitError(f"the contest is still tied after {len(earlier)} rolls (the limit "
                             "of rolls per request)", text, (0, len(text)))
        dice.extend(tray.freeze())
        tray = Tray(source, limits)
    source.finish()
    dice.extend(tray.freeze())
    if outcome == "tie":
        outcome = settle
    tied = a.successes == b.successes
    steps.append(S.Verdict("", outcome, (a.successes, b.successes), "C-X7" if tied else "C10",
                           setting if tied else ""))
    result = {"actor": _side_json(a, actor, rules), "opposition": _side_json(b, opp, rules),
              "margin": a.successes - b.successes,
              "winner": {"win": "actor", "lose": "opposition"}.get(outcome),
              "tie_rule": rules.contested_tie, "rolls": len(earlier) + 1}
    if earlier:
        result["tied_rolls"] = earlier
    return Roll("cofd", text, outcome, result, tuple(dice), words.transcript(steps), spec,
                tuple(steps))


def _roll_extended(spec: Action, actor: Prepared, opp: Prepared | None, source: Source,
                   rules: Rules, limits: Limits, text: str) -> Roll:
    target = spec.target or 0
    steps: list[S.Step] = [S.Begin(str(spec), "extended",
                                   (("target", target), ("contest", opp is not None))),
                           side_step(actor, "actor" if opp else "pool")]
    if opp is not None:
        steps.append(side_step(opp, "opposition"))
    cap = spec.max_rolls or limits.max_rolls
    totals = [0, 0]
    per_roll: list[list[int]] = [[], []]
    dice: list[Die] = []
    outcome: str | None = None
    tie_break = False
    settle = R.tie_goes(rules.contested_tie, extended=True)
    setting = f"contested_tie={rules.contested_tie}"
    n = 0
    while outcome is None:
        if n >= cap:
            if spec.max_rolls is not None:
                outcome = "failure"
                steps.append(S.Verdict("", outcome, (totals[0],), "C11"))
                break
            raise LimitError(f"nobody has reached {target} successes after {n} rolls (the limit "
                             "of rolls per request)", text, (0, len(text)))
        n += 1
        steps.append(S.Round(n))
        tray = Tray(source, limits)
        sides = [(actor, "actor" if opp else "pool", 0)] + (
            [(opp, "opposition", 1)] if opp is not None else [])
        for j, (prep, name, stream) in enumerate(sides):
            group = "actor" if name == "pool" else name
            hands = TrayHands(tray, f"{group} roll {n}", stream)
            side = roll_side(hands, prep, rules, limits)
            totals[j] += side.successes
            per_roll[j].append(side.successes)
            steps += [_rolled(name, side, hands, len(dice), prep.rote),
                      S.Count(name, "total", totals[j], "C11")]
        dice.extend(tray.freeze())
        if opp is None:
            outcome = R.extended_result(totals[0], None, target)
            if outcome is not None:
                steps.append(S.Verdict("", outcome, (totals[0],), "C11"))
            continue
        if tie_break:
            outcome = R.contest(totals[0] - totals[1])
            if outcome == "tie":
                steps.append(S.Tie((totals[0], totals[1]), "again", "C10", setting))
                outcome = None
            continue
        outcome = R.extended_result(totals[0], totals[1], target)
        if outcome == "tie":
            steps.append(S.Tie((totals[0], totals[1]), settle, "C-X7", setting))
            if settle == "again":
                tie_break, outcome = True, None
            else:
                outcome = settle
    source.finish()
    if opp is not None and outcome is not None:
        steps.append(S.Verdict("", outcome, (totals[0], totals[1]), "C11"))
    result: dict[str, Any] = {"target": target, "rolls": n, "actor_successes": per_roll[0],
                              "actor_total": totals[0]}
    if opp is not None:
        result.update({"opposition_successes": per_roll[1], "opposition_total": totals[1],
                       "winner": {"win": "actor", "lose": "opposition"}.get(outcome or "")})
    return Roll("cofd", text, outcome or "failure", result, tuple(dice),
                words.transcript(steps), spec, tuple(steps))


# --------------------------------------------------------------------------------------------
# Exact odds: the same program, its law, the same verdicts


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
        return Odds("cofd", text, Distribution.from_mapping(outcomes, order=R.SINGLE_OUTCOMES),
                    dist, "successes", tuple(notes))
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
    return Odds("cofd", text, Distribution.from_mapping(by_outcome, order=R.CONTEST_OUTCOMES),
                Distribution.from_mapping({m: p for m, p in margin.items() if p > 0}, lost),
                "margin", tuple(notes), extra)


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
