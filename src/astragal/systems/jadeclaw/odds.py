"""The exact odds of Jadeclaw: the law of each program of ``program.py``, and the same verdict
functions mapped over it (J5 over two independent Scores, J9 over one, the hits of J23–J34 and,
after a Wound, the Resolve Test of J35)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..._limits import DEFAULT_LIMITS, Limits
from ...dice.algebra import Favored, Highest, Least, Mixed, Paired
from ...dice.sampler import DieRecord, PoolRecord, paired
from ...odds import Distribution, Odds, maths
from ...odds import algebra as exact
from ...odds.exactness import denominator, exact_odds, product
from ...odds.pools import outcomes
from ...render.jadeclaw import dice_text
from . import rules as R
from .notation import Damage, Spec
from .program import (
    Prepared,
    damage_program,
    damage_score_without_dice,
    effective_options,
    empty_score,
    prepare,
    score_program,
    side,
)
from .rules import CONTEST_OUTCOMES, SINGLE_OUTCOMES, TOP

__all__ = ["contest_distribution", "final_score_pmf", "odds"]


def final_score_pmf(prep: Prepared, options: Mapping[str, Any],
                    limits: Limits = DEFAULT_LIMITS, text: str = "",
                    program: Highest | Least | None = None,
                    which: str = "a pool") -> list[float]:
    """P(final Score = k), k = 0..12: the law of the Score program (J4, J21, J39, J40, made
    here unless the caller has it), its work checked against ``limits`` first. ``which`` names
    the pool in the error of one with no dice (J-X3)."""
    empty = empty_score(prep, which, options)
    if empty is not None:
        return [1.0 if k == empty else 0.0 for k in range(TOP + 1)]
    if program is None:
        program = score_program(prep, options)
    pmf = list(exact.law(program, limits=limits, text=text).pmf)
    return pmf + [0.0] * (TOP + 1 - len(pmf))


def contest_distribution(pa: Sequence[float], pb: Sequence[float], qa: str | None,
                         qb: str | None, options: Mapping[str, Any]) -> dict[str, float]:
    """The contest's outcome law: J5 mapped over two independent Score laws (read on every pair
    of Scores, as ``maths.apply`` would, without a wrapper's call per pair)."""
    outcome = R.contest_outcome
    second = [(b, q) for b, q in enumerate(pb) if q]
    got = dict.fromkeys(CONTEST_OUTCOMES, 0.0)
    for a, p in enumerate(pa):
        if p:
            for b, q in second:
                key = outcome(a, b, qa, qb, options)
                got[key] = got.get(key, 0.0) + p * q
    return {k: got[k] for k in CONTEST_OUTCOMES}


def _score_den(prep: Prepared, program: Highest | Least, options: Mapping[str, Any]) -> int | None:
    """The common denominator of a Score's law (1 for a pool that is not rolled)."""
    return 1 if empty_score(prep, "a pool", options) is not None else denominator(program)


def _dist(pmf: Sequence[float]) -> Distribution:
    return Distribution.from_mapping({k: p for k, p in enumerate(pmf) if p and k})


_KIND_NOTES = {R.SLAYING: ", Slaying (J31)", R.ENERVATED: ", Enervated (J32)"}  # J33: not both


def _favored_note(side: Any) -> str:
    return ", Favored (J39)" if isinstance(side, Favored) else ""


def _pool_note(prep: Prepared, program: Highest | Least) -> str:
    """A Simple Roll's pool as its odds were taken: the dice, the rolls under Penalties (J21)
    and which of them are Favored (J39, J40), read from the Score's program."""
    rolls = program.parts if isinstance(program, Least) else (program,)
    favored = sum(isinstance(r.pool, Favored) for r in rolls if isinstance(r, Highest))
    note = dice_text(prep.sizes)
    if len(rolls) > 1:
        note += f", {len(rolls)} rolls keep the worst"
    if favored == len(rolls) == 1:
        note += _favored_note(rolls[0].pool)
    elif favored:
        note += ", each Favored (J40)" if favored == len(rolls) else \
            f", {favored} of them Favored (J40)"
    return note


# A request's own steps, past its pools' laws: its options, notes, outcomes and records (a
# contest's more: two sides, the outcomes' rules), and the rules read on each pair of Scores
# (J5, the ties, the margin)
_REQUEST_STEPS = 300
_CONTEST_STEPS = 2000
_PAIR_STEPS = 12


def odds(spec: Spec, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    """The exact odds of a Jadeclaw spec."""
    options = effective_options(spec, options)
    if isinstance(spec, Damage):
        return _damage_odds(spec, options, limits, text)
    limits.check_work(_REQUEST_STEPS, "this roll", text)
    actor = prepare(spec.actor, options, damage=False)
    scored = score_program(actor, options)
    notes: list[str] = [f"actor: {_pool_note(actor, scored)}"]
    pa = final_score_pmf(actor, options, limits, text, scored, "the actor pool")
    if spec.opposition is None:
        law = maths.pushforward((R.is_botch(k), p) for k, p in enumerate(pa) if p)
        outcomes = {"botch": law.get(True, 0.0), "no_botch": law.get(False, 0.0)}
        return exact_odds(Odds("jadeclaw", text, Distribution.from_mapping(
            outcomes, order=SINGLE_OUTCOMES), _dist(pa), "Score", tuple(notes)),
            _score_den(actor, scored, options))
    opp = prepare(spec.opposition, options, damage=False)
    opposed = score_program(opp, options)
    notes.append(f"opposition: {_pool_note(opp, opposed)}")
    if spec.calm and R.may_declare_success(actor.sizes, opp.sizes,
                                           options["auto_success_dominance"],
                                           spec.actor.penalties):
        notes.append("J48: calm task and the pool matches the Difficulty: Success without rolling")
        out = dict.fromkeys(CONTEST_OUTCOMES, 0.0)
        out["success"] = 1.0
        return exact_odds(Odds("jadeclaw", text, Distribution.from_mapping(
            out, order=CONTEST_OUTCOMES), Distribution.from_mapping({}), "margin", tuple(notes)),
            1)
    pb = final_score_pmf(opp, options, limits, text, opposed, "the opposing pool")
    limits.check_work(_CONTEST_STEPS + _PAIR_STEPS * len(pa) * len(pb), "this contest", text)
    out = contest_distribution(pa, pb, actor.quality, opp.quality, options)
    margins = maths.difference_of({k: p for k, p in enumerate(pa) if p},
                                  {k: p for k, p in enumerate(pb) if p})
    return exact_odds(Odds("jadeclaw", text, Distribution.from_mapping(
        out, order=CONTEST_OUTCOMES), Distribution.from_mapping(margins), "margin", tuple(notes),
        {"actor_score": _dist(pa).to_json(), "opposition_score": _dist(pb).to_json()}),
        product(_score_den(actor, scored, options), _score_den(opp, opposed, options)))


def _damage_odds(spec: Damage, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    kind = R.damage_kind(spec.slaying, spec.enervated)
    dmg = prepare(spec.damage, options, damage=True)
    soak = prepare(spec.soak, options, damage=True)
    program = damage_program(dmg, soak, kind, options)
    if dmg.sizes:
        hits = list(exact.law(program, limits=limits, text=text).pmf)
    else:  # J-A12: no pairs; a Soak Botch (the soak dice's Score 1) may still hit
        counts = R.soak_botch_without_damage(options["soak_botch_with_no_damage_dice"])
        top = exact.law(Highest(program.defence)).pmf
        law = maths.pushforward((R.soak_botch(k) if counts and soak.sizes else 0, p)
                                for k, p in enumerate(top) if p)
        hits = [law.get(h, 0.0) for h in range(max(law) + 1)]
    dist = Distribution.from_mapping({h: p for h, p in enumerate(hits) if p > 0})
    notes = [f"damage: {dice_text(dmg.sizes)}" + _favored_note(program.attack)
             + _KIND_NOTES.get(kind, ""),
             f"soak: {dice_text(soak.sizes)}" + _favored_note(program.defence)]
    outcomes: dict[str, float] = {"nothing": hits[0], "hit": 1 - hits[0]}
    extra: dict[str, Any] = {}
    if spec.resolve is not None:
        tested = math.fsum(p for h, p in enumerate(hits) if R.resolve_tested(h))
        extra["resolve_tested"] = tested
        res = prepare(spec.resolve, options, damage=False)
        if tested > 0:
            pr = final_score_pmf(res, options, limits, text, which="the Resolve pool")
            pd = _damage_score_given_a_hit(program, dmg, hits, limits, text) if dmg.sizes \
                else [1.0 if b == damage_score_without_dice(options) else 0.0
                      for b in range(TOP + 1)]  # J-A12: a Soak Botch's hit, no damage faces
            r_out = contest_distribution(pr, pd, res.quality, None, options)
            extra["resolve_outcomes"] = Distribution.from_mapping(
                r_out, order=CONTEST_OUTCOMES).to_json()
        notes.append(f"resolve: {dice_text(res.sizes)} against the damage dice's Score, only "
                     f"after a hit ({tested:.4%} of rolls, J35); resolve_outcomes are given a hit")
    return exact_odds(Odds("jadeclaw", text, Distribution.from_mapping(
        outcomes, order=("nothing", "hit")), dist, "hits", tuple(notes), extra),
        denominator(program))


def _damage_score_given_a_hit(program: Paired, dmg: Prepared, hits: Sequence[float],
                              limits: Limits, text: str) -> list[float]:
    """P(damage Score = b | a Wound), b = 0..12 (J35: the Resolve Test's opposition).

    P(no Wound, every damage face ≤ b) is the same Damage Roll with each damage die cut to its
    faces ≤ b (uniform on 1..min(b, size)), times the chance of that cut; differences over b
    give P(no Wound, Score = b), which is taken out of P(Score = b).
    """
    if isinstance(program.attack, Favored):
        return _favored_damage_score_given_a_hit(program, limits, text)
    score = exact.law(R.score(program.attack)).pmf
    below = [sum(score[: b + 1]) for b in range(TOP + 1)]
    quiet = [0.0] * (TOP + 1)  # P(no Wound, every damage face ≤ b)
    for b in range(1, TOP + 1):
        cut = [min(b, d) for d in dmg.sizes]
        share = math.prod(c / d for c, d in zip(cut, dmg.sizes))
        law = exact.law(program._replace(attack=side(cut, False)), limits=limits, text=text)
        quiet[b] = share * law.pmf[0]
    wound = 1.0 - hits[0]
    return [0.0] + [max(0.0, (below[b] - below[b - 1]) - (quiet[b] - quiet[b - 1])) / wound
                    for b in range(1, TOP + 1)]




_PATH_STEPS = 12_000  # one face sequence run through the sample interpreter
_PAIR_STEPS = 300  # one pair of sorted pools read by the pairing rule


def _sorted_values(record: PoolRecord) -> tuple[int, ...]:
    return tuple(sorted((d.value for d in record.dice), reverse=True))


def _pool_of(values: tuple[int, ...]) -> PoolRecord:
    return PoolRecord(tuple(DieRecord(((v,),), v) for v in values), max(values, default=0))


def _favored_damage_score_given_a_hit(program: Paired, limits: Limits, text: str) -> list[float]:
    """P(damage Score = b | a Wound) after a Favored Damage Roll (J35, J39): the Favored re-roll
    ties the faces that stand to the hits, so each side's sorted faces are enumerated exactly
    (every face sequence, the re-roll included, through the roller's own interpreter) and every
    pair of them is read by the same pairing rule as the roll."""
    sides = [_paths(side) for side in (program.attack, program.defence)]
    what = "the Resolve test after this Favored Damage Roll"
    limits.check_work(_PATH_STEPS * sum(sides), what, text)
    attack = outcomes(program.attack, _sorted_values)
    defence = outcomes(program.defence, _sorted_values)
    limits.check_work(_PATH_STEPS * sum(sides) + _PAIR_STEPS * len(attack) * len(defence), what,
                      text)
    joint = [0.0] * (TOP + 1)  # P(a Wound, damage Score = b)
    for a, p in attack.items():
        rec = _pool_of(a)
        for d, q in defence.items():
            if R.resolve_tested(paired(program, rec, _pool_of(d)).value):
                joint[max(a)] += p * q  # J4, J35: the Score is the highest damage face
    wound = math.fsum(joint)
    return [p / wound for p in joint]


def _paths(side: Mixed | Favored) -> int:
    """How many face sequences a side has: one per face of each die, and at most a die's faces
    more for each that shows a 1 (J39: the Favored re-roll)."""
    if isinstance(side, Mixed):
        return math.prod(u.size for u in side.units)
    sizes = [u.size for u in side.pool.units]
    quiet = math.prod(s - 1 for s in sizes)
    return quiet + (math.prod(sizes) - quiet) * max(sizes, default=1)
