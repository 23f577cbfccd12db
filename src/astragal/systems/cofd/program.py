"""Chronicles of Darkness as a program of the dice algebra, rolled and computed exactly.

A side's pool (C1, C8, C12, C-X1, C-X6) becomes ``Pool(n, Chain(d10))``: a die rolled again under
its N-again rule and scored by C2; a rote action wraps it in ``Reroll`` (C-X3); a chance die is a
``Marked`` chain whose mark is the dramatic failure. The roller samples the program and applies
the verdict functions to its values; the odds take the program's exact law and map the same
verdict functions over it. Nothing here computes a binomial, a convolution or a re-roll tail.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._errors import LimitError
from ..._limits import Limits
from ..._records import Record
from ..._rng import Source
from ...dice import Die, Roll, Tray, TrayHands
from ...dice import steps as S
from ...dice.algebra import Chain, Marked, Pool, Reading, Reroll
from ...dice.sampler import Hands, PoolRecord, sample
from ...render import cofd as words
from . import rules as R
from .notation import Action, Side
from .rules import Rules

__all__ = ["Prepared", "prepare", "program", "roll"]

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


def _facts(hands: TrayHands, side: SideRoll) -> None:
    """Each die's facts on the tray: the successes it scored (C2, C5: every face of its N-again
    chain counts), its later faces rolled by the N-again, or a rote re-roll replacing its
    first run; a chance die's dramatic failure."""
    for index, die in zip(hands.ids, side.record.dice):
        joined = "rerolled" if len(die.runs) > 1 else "exploded" if len(die.runs[0]) > 1 else ""
        tone = "fumble" if side.dramatic_failure else "good" if die.value > 0 else ""
        hands.tray.facts(index, joined=joined, scored=die.value, tone=tone)


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
        _facts(hands, side)
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
            _facts(hands, side)
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
    decided_by = "C10"  # the contest rule's own outcome, unless it called a tie (C-X7 settles)
    if outcome == "tie":
        outcome, decided_by = settle, "C-X7"
    steps.append(S.Verdict("", outcome, (a.successes, b.successes), decided_by,
                           setting if decided_by == "C-X7" else ""))
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
            _facts(hands, side)
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
