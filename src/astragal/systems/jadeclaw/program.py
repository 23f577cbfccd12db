"""Jadeclaw as a program of the dice algebra, rolled and computed exactly.

A side's roll is ``Highest(Mixed(dice))`` (J4), its dice wrapped in ``Favored`` when one 1 is
re-rolled (J39, J-A15), and under Penalties the worst of p+1 such rolls, ``Least`` (J21, J40,
J-A10). A Damage Roll is ``Paired(damage, soak)``: both sorted high → low and paired by rank,
each pair read by J24, a surplus damage die meeting the imaginary 1 (J26), the Soak Botch read
from the soak dice's highest face (J28). The roller samples the program and applies the verdict
functions to its values; the odds take the program's exact law and map the same verdict
functions over it. Nothing here computes a convolution, an order statistic or a pairing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..._errors import InputError
from ..._limits import Limits
from ..._memo import by_identity
from ..._rng import Source
from ...dice import Roll, Tray, TrayHands
from ...dice import steps as S
from ...dice.algebra import Favored, Highest, Least, Mixed, Paired, Reading, die
from ...dice.sampler import DieRecord, PairedRecord, PoolRecord, favored, least, paired, sample
from ...odds import pools
from ...render import jadeclaw as words
from . import rules as R
from .notation import Damage, Simple, Spec
from .rules import Prepared, prepare

__all__ = [
    "Prepared",
    "damage_hits",
    "damage_hits_distribution",
    "damage_program",
    "effective_options",
    "empty_score",
    "favored_index",
    "prepare",
    "roll",
    "score_program",
]


# --------------------------------------------------------------------------------------------
# The program: the rules read at each face


class _Order(Reading):
    """J-A15: the order in which a Favored roll looks for a 1."""

    __slots__ = ()

    def __call__(self, sizes: tuple[int, ...]) -> tuple[int, ...]:
        return R.favored_order(sizes)


class _Rerolls(Reading):
    """J39: the face a Favored roll re-rolls."""

    __slots__ = ()

    def __call__(self, face: int) -> bool:
        return R.favored_rerolls(face)


class _Pair(Reading):
    """J24: the hits of a damage face against its soak face, for one kind of damage (J33)."""

    __slots__ = ()

    def __call__(self, d: int, s: int) -> int:
        return R.pair_hits(d, s, self.settings[0])


class _SoakBotch(Reading):
    """J28: the extra hit read from the soak dice's highest face."""

    __slots__ = ()

    def __call__(self, soak_score: int) -> int:
        return R.soak_botch(soak_score)


def side(sizes: Sequence[int], is_favored: bool) -> Mixed | Favored:
    """The dice of one roll, with the Favored re-roll of one 1 when it applies."""
    return _side(tuple(sizes), is_favored)


@lru_cache(maxsize=512)
def _side(sizes: tuple[int, ...], is_favored: bool) -> Mixed | Favored:
    pool = Mixed(tuple(die(s) for s in sizes))
    return Favored(pool, _Order(), _Rerolls(), "Favored re-roll") if is_favored else pool


def _rolls(prep: Prepared, options: Mapping[str, Any]) -> list[Mixed | Favored]:
    """The sides rolled for a Simple Roll's Score: p+1 rolls under p Penalties (J21, J40)."""
    count = R.roll_count(prep.penalties, options["penalty_rolls"])
    return [side(prep.sizes, prep.favored and options["favored_auto"]
                 and R.favored_roll(i, options["favored_each_penalty_roll"]))
            for i in range(count)]


def score_program(prep: Prepared, options: Mapping[str, Any]) -> Highest | Least:
    """A Simple Roll's Score: the Score of one roll (J4), or the worst of p+1 (J21, J-A10)."""
    parts = tuple(R.score(s) for s in _rolls(prep, options))
    return parts[0] if len(parts) == 1 else Least(parts)


def damage_program(dmg: Prepared, soak: Prepared, kind: str,
                   options: Mapping[str, Any]) -> Paired:
    """A Damage Roll's hits (J23–J34, J39 on either side, J-A11)."""
    fav_dmg = dmg.favored and options["favored_auto"]
    fav_soak = soak.favored and options["favored_on_soak"] and options["favored_auto"]
    return _paired(dmg.sizes, fav_dmg, soak.sizes, fav_soak, kind, R.imaginary_soak())


@lru_cache(maxsize=512)
def _paired(dmg: tuple[int, ...], fav_dmg: bool, soak: tuple[int, ...], fav_soak: bool,
            kind: str, filler: int) -> Paired:
    return Paired(side(dmg, fav_dmg), side(soak, fav_soak), _Pair(kind), filler, _SoakBotch())


# --------------------------------------------------------------------------------------------
# Rolling


def effective_options(spec: Spec, options: Mapping[str, Any]) -> dict[str, Any]:
    """The switches for a spec: defaults, then the caller's options, then the notation's."""
    return {**R.DEFAULTS, **options, **dict(spec.options)}


def empty_score(prep: Prepared, which: str, options: Mapping[str, Any]) -> int | None:
    """J-X3: the Score of a side with no dice (None: it has dice)."""
    if prep.sizes:
        return None
    got = R.empty_pool_score(options["empty_pool"])
    if got is None:
        raise InputError(f"{which} has no dice left to roll (J-X3); the house rule "
                         "empty_pool=auto_botch counts it as a Botch instead")
    return got


def damage_score_without_dice(options: Mapping[str, Any]) -> int:
    """J35 with no damage dice left (J-A12, a Soak Botch's hit): the Score of no damage faces,
    which the Resolve roll must beat: a Botch under empty_pool=auto_botch (J-X3), else 0 (no
    face to beat: the Resolve roll succeeds unless it Botches)."""
    got = R.empty_pool_score(options["empty_pool"])
    return 0 if got is None else got


def _rolled(side: str, record: PoolRecord, ids: Sequence[int], sizes: Sequence[int],
            program: Mixed | Favored, read: str, offered: bool,
            dropped: Sequence[int] = ()) -> S.Rolled:
    """A roll's dice as a step: each die's face and its Favored re-roll (J39), or the die whose 1
    the player may re-roll (J-A11: ``favored_auto=false``)."""
    dice = record.dice
    marks: tuple[str, ...] = ()
    if offered:
        j = favored_index(sizes, [d.runs[0][0] for d in dice])
        if j is not None:
            marks = tuple("may_reroll" if i == j else "" for i in range(len(dice)))
    return S.Rolled(side, tuple(ids), tuple(d.runs for d in dice), tuple(d.value for d in dice),
                    marks, read, "", "J39" if isinstance(program, Favored) else "",
                    tuple(dropped), "J21" if dropped else "")


def _side_steps(name: str, prep: Prepared, facts: S.Facts = ()) -> list[S.Step]:
    """A pool about to roll and how it was prepared (J41, J42)."""
    return [S.Side(name, len(prep.sizes), (("base", prep.base), ("sizes", prep.sizes),
                                           ("favored", prep.favored), *facts)),
            *(S.Adjust(name, *a[1:]) for a in prep.steps)]


class _SidePlan:
    """What a Simple Roll's side rolls, worked out once per request and options: its steps
    before the dice (``Side``, ``Adjust``), and each roll's program, tray group and Score."""

    __slots__ = ("count", "head", "offered", "prep", "rolls")

    def __init__(self, prep: Prepared, name: str, options: Mapping[str, Any],
                 difficulty: str | None) -> None:
        sides = _rolls(prep, options)
        self.prep, self.count = prep, len(sides)
        self.head = tuple(_side_steps(name, prep, (
            ("rolls", self.count), ("penalties", prep.penalties), ("quality", prep.quality))
            + ((("difficulty", difficulty),) if difficulty else ())))
        group = "difficulty" if difficulty else name
        self.rolls = tuple((R.score(program), group if self.count == 1 else
                            f"{group} roll {r + 1}", program) for r, program in enumerate(sides))
        self.offered = prep.favored and not options["favored_auto"]


def _roll_simple_side(tray: Tray, plan: _SidePlan, name: str, stream: int,
                      options: Mapping[str, Any], limits: Limits, steps: list[S.Step],
                      which: str | None = None) -> int:
    """A Simple Roll's pool: its Score, the worst of p+1 rolls under p Penalties (J21); a pool
    with no dice (``which`` names it) by J-X3."""
    prep, count = plan.prep, plan.count
    steps += plan.head
    got = empty_score(prep, which, options) if which is not None else None
    if got is not None:
        steps.append(S.Verdict(name, "botch" if R.is_botch(got) else "no_botch", (got,), "J-X3",
                               f"empty_pool={options['empty_pool']}"))
        return got
    rolled: list[tuple[PoolRecord, list[int], Mixed | Favored]] = []
    for score, group, program in plan.rolls:
        hands = TrayHands(tray, group, stream)
        rolled.append((sample(score, hands, limits), hands.ids, program))
    worst = least(tuple(record for record, _, _ in rolled))  # J21, J-A10: its faces stand
    offered = plan.offered
    for r, (record, ids, program) in enumerate(rolled):
        gone = ids if r != worst.stands else []  # the other rolls' dice are discarded
        for i in gone:
            tray.drop(i, "discarded: the worst Score stands (J21)")
        if count > 1:
            steps.append(S.Round(r + 1))
        steps += [_rolled(name, record, ids, prep.sizes, program, "J4", offered, gone),
                  S.Count(name, "score", record.value, "J4")]
    sc = worst.value
    if count > 1:
        steps.append(S.Count(name, "score", sc, "J21"))
    steps.append(S.Verdict(name, "botch" if R.is_botch(sc) else "no_botch", (sc,),
                           "J22" if count > 1 else "J9"))
    return sc


class _Plan:
    """A Simple Roll worked out once per request and options (tests that swap a rule call
    ``forget``): the switches in force, each side's plan, the first steps."""

    __slots__ = ("actor", "begin", "calm", "opp", "options")

    def __init__(self, spec: Simple, options: Mapping[str, Any]) -> None:
        self.options = options = effective_options(spec, options)
        actor = prepare(spec.actor, options, damage=False)
        self.begin = S.Begin(str(spec), "simple")
        opp = prepare(spec.opposition, options, damage=False) if spec.opposition else None
        self.calm: S.Check | None = None
        if spec.calm and opp is not None:
            calm = R.may_declare_success(actor.sizes, opp.sizes,
                                         options["auto_success_dominance"], spec.actor.penalties)
            self.calm = S.Check("J48", calm, (("actor", actor.sizes), ("difficulty", opp.sizes),
                                              ("penalties", spec.actor.penalties)))
        self.actor = _SidePlan(actor, "actor", options, None)
        self.opp = None if opp is None or spec.opposition is None else _SidePlan(
            opp, "opposition", options, spec.opposition.difficulty)


_PLANS: dict[tuple[int, Any], tuple[Spec, _Plan | _DamagePlan]] = {}


def forget() -> None:
    """Forget the plans of Simple Rolls (tests that swap a rule call this)."""
    _PLANS.clear()


def _make(spec: Spec, options: Mapping[str, Any]) -> _Plan | _DamagePlan:
    return _DamagePlan(spec, options) if isinstance(spec, Damage) else _Plan(spec, options)


def _plan(spec: Spec, options: Mapping[str, Any]) -> _Plan | _DamagePlan:
    """The plan of a roll, remembered per request (parsed specs are cached and immutable) and
    the caller's options."""
    try:
        key = (id(spec), tuple(options.items()))
        hash(key)
    except TypeError:  # an unhashable option value
        return _make(spec, options)
    return by_identity(_PLANS, key, spec, lambda: _make(spec, options))


def _contest(a: int, b: int, qa: str | None, qb: str | None,
             options: Mapping[str, Any]) -> S.Verdict:
    """J5–J10, J-A6, J-A7: the contest's outcome, and the rule (and switch) that decided it."""
    outcome = R.contest_outcome(a, b, qa, qb, options)
    rule, setting = "J5", ""
    if R.is_botch(a) and R.is_botch(b):
        rule, setting = "J10", f"double_botch={options['double_botch']}"
    elif R.is_botch(a) and R.overwhelms(b - a):
        rule = "J-A7"
        setting = f"botch_overrides_overwhelm={str(options['botch_overrides_overwhelm']).lower()}"
    elif R.is_botch(a):
        rule = "J9"
    elif R.overwhelms(abs(a - b)):
        rule = "J6"
    elif a == b and qa is not None and qb is not None:
        rule = "J7"
    elif a == b and (qa or qb):
        rule, setting = "J-A6", f"quality_vs_no_quality={options['quality_vs_no_quality']}"
    return S.Verdict("", outcome, (a, b), rule, setting)


def _done(text: str, outcome: str, result: dict[str, Any], tray: Tray, spec: Spec,
          steps: list[S.Step]) -> Roll:
    return Roll("jadeclaw", text, outcome, result, tray.freeze(), words.transcript(steps), spec,
                tuple(steps))


def roll(spec: Spec, source: Source, options: Mapping[str, Any], limits: Limits,
         text: str) -> Roll:
    """Roll a Jadeclaw spec with faces from ``source``; the verdict comes from the rule functions,
    the steps are put into words by ``render.jadeclaw``."""
    tray = Tray(source, limits)
    if isinstance(spec, Damage):
        return _roll_damage(spec, tray, options, text, limits)
    plan = _plan(spec, options)
    assert isinstance(plan, _Plan)
    options = plan.options
    steps: list[S.Step] = [plan.begin]
    if plan.calm is not None:
        steps.append(plan.calm)
        if plan.calm.holds:
            steps.append(S.Verdict("", "success", (), "J48",
                                   f"auto_success_dominance={options['auto_success_dominance']}"))
            return _done(text, "success", {"auto_success": True, "actor_score": None,
                                           "opposition_score": None}, tray, spec, steps)
    a = _roll_simple_side(tray, plan.actor, "actor", 0, options, limits, steps, "the actor pool")
    result: dict[str, Any] = {"actor_score": a, "botch": R.is_botch(a)}
    opp = plan.opp
    if opp is None:
        source.finish()
        mine = steps[-1]  # the actor's Score is the roll's (J9, J22, J-X3)
        assert isinstance(mine, S.Verdict)
        steps.append(S.Verdict("", *mine[1:]))
        return _done(text, mine.outcome, result, tray, spec, steps)
    b = _roll_simple_side(tray, opp, "opposition", 1, options, limits, steps, "the opposing pool")
    source.finish()
    verdict = _contest(a, b, plan.actor.prep.quality, opp.prep.quality, options)
    margin = a - b
    result.update({"opposition_score": b, "margin": margin,
                   "overwhelming": R.overwhelms(abs(margin)),
                   "both_botch": R.is_botch(a) and R.is_botch(b)})
    steps.append(verdict)
    return _done(text, verdict.outcome, result, tray, spec, steps)


_KIND_RULE = {R.NORMAL: "J24", R.SLAYING: "J31", R.ENERVATED: "J32"}


def _pairs(read: PairedRecord, dmg_ids: Sequence[int], soak_ids: Sequence[int], filler: int,
           kind: str) -> list[S.Step]:
    """J23–J27, J31, J32: each pair of the Damage Roll as a step, naming its dice (equal faces
    pair alike, J-A13: the first die of a face pairs first)."""
    def by_rank(record: PoolRecord) -> list[int]:
        return sorted(range(len(record.dice)), key=lambda i: -record.dice[i].value)

    a, d = by_rank(read.attack), by_rank(read.defence)
    out: list[S.Step] = []
    for k, (x, s, h) in enumerate(read.pairs):
        rule = "J27" if R.never_scores(x) else _KIND_RULE[kind]
        out.append(S.Pair("damage", dmg_ids[a[k]], x, "soak", -1, filler, h, rule, "J26")
                   if s is None else
                   S.Pair("damage", dmg_ids[a[k]], x, "soak", soak_ids[d[k]], s, h, rule))
    return out


class _DamagePlan:
    """A Damage Roll worked out once per request and options: the switches in force, its kind
    (J33), both pools and the program, the first steps and each side's."""

    __slots__ = ("dmg", "head", "kind", "options", "program", "sides", "soak")

    def __init__(self, spec: Damage, options: Mapping[str, Any]) -> None:
        self.options = options = effective_options(spec, options)
        self.kind = kind = R.damage_kind(spec.slaying, spec.enervated)
        self.dmg = dmg = prepare(spec.damage, options, damage=True)
        self.soak = soak = prepare(spec.soak, options, damage=True)
        self.program = program = damage_program(dmg, soak, kind, options)
        self.head: tuple[S.Step, ...] = (S.Begin(str(spec), "damage"),) + (
            (S.Check("J33", True, (("kind", kind),)),) if spec.slaying and spec.enervated else ())
        self.sides = tuple(
            (name, prep, stream, pool, R.score(pool), offer, tuple(_side_steps(name, prep)))
            for name, prep, stream, pool, offer in (
                ("damage", dmg, 0, program.attack, True),
                ("soak", soak, 1, program.defence, options["favored_on_soak"])))


def _roll_damage(spec: Damage, tray: Tray, options: Mapping[str, Any], text: str,
                 limits: Limits) -> Roll:
    plan = _plan(spec, options)
    assert isinstance(plan, _DamagePlan)
    options, kind, program, dmg, soak = (plan.options, plan.kind, plan.program, plan.dmg,
                                         plan.soak)
    steps: list[S.Step] = list(plan.head)
    records: dict[str, tuple[PoolRecord, list[int]]] = {}
    for name, prep, stream, pool, score, offer, head in plan.sides:
        steps += head
        if not prep.sizes:
            records[name] = PoolRecord((), 0), []
            steps.append(S.Rolled(name, (), (), (), read="J23"))
            continue
        hands = TrayHands(tray, name, stream)
        record = sample(score, hands, limits)
        records[name] = record, hands.ids
        steps.append(_rolled(name, record, hands.ids, prep.sizes, pool, "J23",
                             prep.favored and offer and not options["favored_auto"]))
    result: dict[str, Any]
    if not dmg.sizes:  # J-A12: no pairs; the Soak Botch only by the house rule
        botch = bool(R.soak_botch_without_damage(options["soak_botch_with_no_damage_dice"])
                     and soak.sizes and R.soak_botch(records["soak"][0].value))
        hits = 1 if botch else 0
        steps.append(S.Count("", "soak_botch", hits, "J-A12"))
        result = {"hits": hits, "pairs": [], "soak_botch": botch}
    else:
        read = paired(program, records["damage"][0], records["soak"][0])
        steps += _pairs(read, records["damage"][1], records["soak"][1], program.filler, kind)
        if read.bonus:
            steps.append(S.Count("", "soak_botch", read.bonus, "J28"))
        hits = read.value
        result = {"hits": hits, "pairs": [list(p) for p in read.pairs],  # None: imaginary 1
                  "soak_botch": bool(read.bonus)}
    outcome = "nothing" if hits == 0 else "hit"
    steps.append(S.Verdict("", outcome, (hits,), "J34"))
    if spec.resolve is not None:
        tested = R.resolve_tested(hits)
        if not tested:
            steps.append(S.Check("J35", False, (("hits", hits),)))
            result["resolve"] = {"tested": False}
        else:
            res = prepare(spec.resolve, options, damage=False)
            steps.append(S.Check("J35", True, (("hits", hits),)))
            # the damage faces' Score (J4), or that of no faces (J-A12)
            b = records["damage"][0].value if dmg.sizes else damage_score_without_dice(options)
            steps.append(S.Count("damage", "score", b, "J35" if dmg.sizes else "J-A12"))
            a = _roll_simple_side(tray, _SidePlan(res, "resolve", options, None), "resolve", 2,
                                  options, limits, steps)
            verdict = _contest(a, b, res.quality, None, options)
            steps.append(verdict)
            result["resolve"] = {"tested": True, "score": a, "damage_score": b,
                                 "outcome": verdict.outcome}
    tray.source.finish()
    return _done(text, outcome, result, tray, spec, steps)


# --------------------------------------------------------------------------------------------
# The rules applied to faces given by hand (the tests' and tables' view of one roll)


def favored_index(sizes: Sequence[int], faces: Sequence[int]) -> int | None:
    """Which die a Favored roll of ``sizes`` showing ``faces`` re-rolls (J39, J-A15)."""
    program = side(sizes, True)
    assert isinstance(program, Favored)
    return favored(program, tuple(faces))


def _record(faces: Sequence[int]) -> PoolRecord:
    return PoolRecord(tuple(DieRecord(((f,),), f) for f in faces), sum(faces))


def damage_hits(damage: Sequence[int], soak: Sequence[int], kind: str = R.NORMAL,
                options: Mapping[str, Any] = R.DEFAULTS) -> int:
    """J23–J34: the hits of a Damage Roll whose dice showed ``damage`` and ``soak``."""
    if not damage:
        return int(bool(soak) and R.soak_botch_without_damage(
            options["soak_botch_with_no_damage_dice"]) and R.soak_botch(max(soak)))
    program = Paired(side([], False), side([], False), _Pair(kind), R.imaginary_soak(),
                     _SoakBotch())
    return paired(program, _record(damage), _record(soak)).value


def damage_hits_distribution(damage: Sequence[int], soak: Sequence[int], kind: str = R.NORMAL,
                             damage_favored: bool = False, soak_favored: bool = False,
                             options: Mapping[str, Any] = R.DEFAULTS,
                             limits: Limits | None = None, text: str = "",
                             method: str = "auto") -> list[float]:
    """P(hits = h) for h = 0..max of a Damage Roll (J23–J34), exactly: the law of its program
    (``method``: ``auto``, ``exact`` or ``numpy``, the sorted-pool evaluator's kernels, or
    ``enumerate``, every sorted face vector of each side: a cross-check)."""
    if not damage:
        return [1.0]
    opts = {**options, "favored_auto": True, "favored_on_soak": True}
    program = damage_program(Prepared(tuple(damage), (), 0, damage_favored, None),
                             Prepared(tuple(soak), (), 0, soak_favored, None), kind, opts)
    if limits is not None:
        steps, peak = pools.paired_work(program)
        limits.check_work(steps, "this Damage Roll", text)
        limits.check_memory(peak, "this Damage Roll", text)
    return list(pools.paired_law(program, method).pmf)
