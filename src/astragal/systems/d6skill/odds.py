"""d6 + skill odds: the exact law of the die program the roller samples (``program.py``), with
the same verdict functions mapped over it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from ..._limits import Limits
from ..._records import Record
from ...odds import Distribution, Odds, maths
from ...odds import algebra as exact
from ...odds.exactness import conditioned, denominator, exact_odds, product
from ...render import d6skill as words
from . import rules as R
from .notation import Check, Side
from .program import _DIE_EPS, _stressful, die_program, effective_rules
from .rules import ATK_OUTCOMES, CHECK_OUTCOMES, SINGLE_OUTCOMES, DieRules, Rules

__all__ = ["DieLaw", "RoundLaw", "d6_law", "damage_law", "memory", "odds", "opposed_law", "result_law", "work"]


class DieLaw(Record):
    """One d6's exact law: P(die adds t, no Botch) and P(die adds t, Botch) as dense lists,
    P(Critical), and the probability cut from the Critical tail."""

    plain: tuple[float, ...]
    botched: tuple[float, ...]
    critical: float
    truncated: float

    @property
    def botch(self) -> float:
        """P(Botch) (S7, S8)."""
        return sum(self.botched)

    def joint(self) -> Iterator[tuple[int, bool, float]]:
        """(what the die adds, Botch, probability)."""
        for t, q in enumerate(self.plain):
            yield t, False, q
        for t, q in enumerate(self.botched):
            yield t, True, q


@lru_cache(maxsize=64)
def d6_law(dr: DieRules) -> DieLaw:
    """The exact law of one d6 read by ``dr``: the program's marked law."""
    law = exact.marked_law(die_program(dr), _DIE_EPS)
    by_mark = dict(law.by_mark)
    plain = maths.mix(*(pmf for mark, pmf in by_mark.items() if mark != "botch"))
    return DieLaw(tuple(plain), tuple(by_mark.get("botch", ())), sum(by_mark.get("critical", ())),
                  law.truncated)


def result_law(law: DieLaw, bonus: int) -> dict[int, float]:
    """P(result = x) for d6 + bonus (S1), a botched die counting 1 (S8)."""
    return maths.pushforward((R.result(t, bonus), q) for t, _, q in law.joint())


@lru_cache(maxsize=256)
def _blocks(dr: DieRules, bonus: int) -> dict[bool, dict[int, float]]:
    """The result's law split by Botch."""
    out: dict[bool, dict[int, float]] = {}
    for t, botch, q in d6_law(dr).joint():
        if q:
            block = out.setdefault(botch, {})
            x = R.result(t, bonus)
            block[x] = block.get(x, 0.0) + q
    return out


class RoundLaw(Record):
    """An opposed roll after its ties: outcome and counted-margin probabilities."""

    outcomes: dict[str, float]
    margins: dict[int, float]            # the counted margin, over every decided outcome
    hit_margins: dict[int, float]        # the counted margin where the actor succeeds
    tie_per_round: float
    opposition_botch: float
    truncated: float


@lru_cache(maxsize=256)
def opposed_law(da: DieRules, bonus_a: int, db: DieRules, bonus_b: int,
                rules: Rules) -> RoundLaw:
    """An opposed roll (S3, S-A1, S-A4): each round's (verdict, margin, opposition botched) law,
    from the two results' laws split by Botch, conditioned on the round not being rolled again."""
    la, lb = d6_law(da), d6_law(db)
    joint: list[tuple[tuple[str, int, bool], float]] = []
    for a_botch, ra in _blocks(da, bonus_a).items():
        for b_botch, rb in _blocks(db, bonus_b).items():
            for m, q in maths.difference_of(ra, rb).items():
                joint.append((R.opposed_verdict(m, a_botch, b_botch, rules) + (b_botch,), q))
    decided, tie = maths.condition(maths.pushforward(joint), lambda k: k[0] == "reroll")
    lost = (la.truncated + lb.truncated - la.truncated * lb.truncated) / (1.0 - tie)
    return RoundLaw(maths.pushforward((k[0], p) for k, p in decided.items()),
                    maths.pushforward((k[1], p) for k, p in decided.items()),
                    maths.pushforward((k[1], p) for k, p in decided.items() if k[0] == "success"),
                    tie, sum(p for k, p in decided.items() if k[2]), lost)


def damage_law(hit_margins: Mapping[int, float], miss: float, weapon: int | Side | None,
               rules: Rules) -> tuple[dict[int, float], float]:
    """The law of DMG (S5), cached by its inputs (a table rolls the same attack often)."""
    law, lost = _damage_law(tuple(hit_margins.items()), miss, weapon, rules)
    return dict(law), lost


@lru_cache(maxsize=256)
def _damage_law(hit_margins: tuple[tuple[int, float], ...], miss: float,
                weapon: int | Side | None, rules: Rules) -> tuple[tuple[tuple[int, float], ...],
                                                                  float]:
    """The law of DMG (S5): 0 on a miss or Botch, else ``damage(weapon DMG + margin)``; a rolled
    DMG (S9, S-A3) is an independent law, added by convolution. Returns the law and the mass
    cut from the DMG roll's tail."""
    margins = dict(hit_margins)
    if isinstance(weapon, Side):
        law = d6_law(rules.die("dmg"))
        points = maths.sum_of(margins, result_law(law, weapon.bonus))
        lost = law.truncated * sum(margins.values())
    else:
        points = {m + (weapon or 0): p for m, p in margins.items()}
        lost = 0.0
    hits = maths.apply(R.damage, points)
    return tuple(maths.pushforward([(0, miss), *hits.items()]).items()), lost


_REQUEST_STEPS = 900  # a request's own steps: its rules, outcomes, notes and records


def work(spec: Check, rules: Rules) -> int:
    """The estimated steps of ``odds(spec)``: each kind of die's marked law, the results read
    over it; an opposed roll's margin law per pair of Botch blocks and the verdicts read over
    it; a rolled DMG's law added to the margins (one convolution) and read."""
    kinds = [rules.die(spec.actor.kind)]
    if spec.opposition is not None:
        kinds.append(rules.die(spec.opposition.kind))
    if isinstance(spec.dmg, Side):
        kinds.append(rules.die("dmg"))
    lengths = [exact.law_length(die_program(dr).unit) for dr in kinds]
    steps = _REQUEST_STEPS + sum(exact.work(die_program(dr)) for dr in set(kinds))
    steps += 30 * lengths[0]
    if spec.opposition is not None:
        # the Botch blocks: the large one is the die without a Botch, the others one value each
        steps += maths.convolve_work(lengths[0], lengths[1]) + 60 * (lengths[0] + lengths[1])
    if isinstance(spec.dmg, Side):
        margins = sum(lengths[:2])
        steps += maths.convolve_work(margins, lengths[-1]) + 20 * (margins + lengths[-1])
    return steps


def memory(spec: Check, rules: Rules) -> int:
    """The odds' peak bytes: each die's law, and the margins' and DMG's laws in a few dicts."""
    kinds = [spec.actor.kind] + ([spec.opposition.kind] if spec.opposition is not None else []) \
        + (["dmg"] if isinstance(spec.dmg, Side) else [])
    values = sum(exact.law_length(die_program(rules.die(kind)).unit) for kind in kinds)
    return (64 << 10) + 400 * values


def odds(spec: Check, options: Mapping[str, Any], limits: Limits, text: str) -> Odds:
    """The exact odds of a d6 + skill spec."""
    rules = effective_rules(spec, options)
    kinds = [spec.actor.kind] + ([spec.opposition.kind] if spec.opposition is not None else []) \
        + (["dmg"] if isinstance(spec.dmg, Side) else [])
    # S9: 6s that explode without a cap make the law infinite
    den = product(*(denominator(die_program(rules.die(k))) for k in kinds))
    result = _odds(spec, rules, limits, text)
    if spec.opposition is not None and rules.opposed_tie == "reroll":  # S3: ties rolled again
        den = conditioned(den, 1.0 - result.extra["tie_per_round"])
    return exact_odds(result, den)


def _odds(spec: Check, rules: Rules, limits: Limits, text: str) -> Odds:
    limits.check_work(work(spec, rules), "this roll", text)
    limits.check_memory(memory(spec, rules), "this roll", text)
    actor = spec.actor
    la = d6_law(rules.die(actor.kind))
    notes = [words.law_note("actor", R.KIND_TITLES[actor.kind], actor.bonus,
                            rules.die(actor.kind))]
    extra: dict[str, Any] = {"p_critical": la.critical}
    if spec.opposition is not None:
        return _opposed_odds(spec, rules, la, text, notes, extra)
    res_dist = Distribution.from_mapping(result_law(la, actor.bonus), la.truncated)
    if spec.difficulty is None:
        out = {"botch": la.botch, "no_botch": 1.0 - la.botch}
        return Odds("d6skill", text, Distribution.from_mapping(out, order=SINGLE_OUTCOMES),
                    res_dist, "result", tuple(notes), extra)
    if spec.may_skip_roll:
        if R.automatic_success(actor.bonus, spec.difficulty, _stressful(spec, rules)):
            notes.append(f"S6: the bonus {actor.bonus:+d} alone beats # {spec.difficulty} and the "
                         "situation is calm: Success without rolling")
            out = {"botch": 0.0, "failure": 0.0, "success": 1.0}
            return exact_odds(Odds("d6skill", text, Distribution.from_mapping(
                out, order=CHECK_OUTCOMES), Distribution.from_mapping({}), "result",
                tuple(notes), {"p_critical": 0.0, "auto_success": True}), 1)
        if actor.bonus > spec.difficulty:
            notes.append("S6: the bonus alone beats #, but the situation is stressful: roll")
    d = spec.difficulty
    judged = [((R.check_outcome(x, botch, d), x - d), q)
              for botch, block in _blocks(rules.die(actor.kind), actor.bonus).items()
              for x, q in block.items()]
    out = {k: 0.0 for k in CHECK_OUTCOMES}
    out.update(maths.pushforward((v, q) for (v, _), q in judged))
    if not spec.is_attack:
        extra["auto_success"] = False
        return Odds("d6skill", text, Distribution.from_mapping(out, order=CHECK_OUTCOMES),
                    res_dist, "result", tuple(notes), extra)
    # ATK against a fixed DEF: a hit is higher than the DEF (S2), the margin goes to DMG (S5)
    hits = maths.pushforward((m, q) for (v, m), q in judged if v == "success")
    atk_out = {"botch": out["botch"], "miss": out["failure"], "hit": out["success"]}
    return _attack_odds(spec, rules, text, notes, extra, atk_out, hits, la.truncated,
                        ATK_OUTCOMES)


def _attack_odds(spec: Check, rules: Rules, text: str, notes: list[str], extra: dict[str, Any],
                 out: dict[str, float], hits: Mapping[int, float], truncated: float,
                 order: tuple[str, ...]) -> Odds:
    miss = sum(v for k, v in out.items() if k != "hit")
    dmg, lost = damage_law(hits, miss, spec.dmg, rules)
    if isinstance(spec.dmg, Side):
        notes.append(words.law_note("DMG roll", R.KIND_TITLES[spec.dmg.kind], spec.dmg.bonus,
                                    rules.die(spec.dmg.kind)))
    elif spec.dmg is None:
        notes.append("no weapon DMG given: DMG is the margin alone (S5)")
    extra["dmg_bonus"] = Distribution.from_mapping(dict(hits)).to_json()
    return Odds("d6skill", text, Distribution.from_mapping(out, order=order),
                Distribution.from_mapping(dmg, truncated + lost), "DMG", tuple(notes), extra)


def _opposed_odds(spec: Check, rules: Rules, la: DieLaw, text: str, notes: list[str],
                  extra: dict[str, Any]) -> Odds:
    opp = spec.opposition
    assert opp is not None
    lb = d6_law(rules.die(opp.kind))
    notes.append(words.law_note("opposition", R.KIND_TITLES[opp.kind], opp.bonus,
                                rules.die(opp.kind)))
    rl = opposed_law(rules.die(spec.actor.kind), spec.actor.bonus, rules.die(opp.kind), opp.bonus,
                     rules)
    if rules.opposed_tie == "reroll":
        notes.append(f"S3: a round ties with probability {rl.tie_per_round:.4g} and is rolled "
                     "again; these are the odds after the re-rolls")
    extra.update({"tie_per_round": rl.tie_per_round, "expected_rounds":
                  1.0 / (1.0 - rl.tie_per_round) if rules.opposed_tie == "reroll" else 1.0,
                  "p_opposition_botch": rl.opposition_botch,
                  "actor_result": Distribution.from_mapping(
                      result_law(la, spec.actor.bonus)).to_json(),
                  "opposition_result": Distribution.from_mapping(
                      result_law(lb, opp.bonus)).to_json()})
    tie_cat = ("tie",) if rules.opposed_tie == "stand" else ()
    if spec.is_attack:
        said = {"botch": "botch", "failure": "miss", "success": "hit", "tie": "tie"}
        out = dict.fromkeys(ATK_OUTCOMES + tie_cat, 0.0)
        for k, v in rl.outcomes.items():
            out[said[k]] += v
        return _attack_odds(spec, rules, text, notes, extra, out, rl.hit_margins, rl.truncated,
                            ("botch", "miss") + tie_cat + ("hit",))
    out = dict.fromkeys(CHECK_OUTCOMES + tie_cat, 0.0)
    out.update(rl.outcomes)
    return Odds("d6skill", text, Distribution.from_mapping(
        out, order=("botch", "failure") + tie_cat + ("success",)),
        Distribution.from_mapping(rl.margins, rl.truncated), "margin", tuple(notes), extra)
