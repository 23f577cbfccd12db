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
from ..._records import Record
from ..._rng import Source
from ...dice import Roll, Tray, TrayHands
from ...dice.algebra import (
    DieRecord,
    Favored,
    Highest,
    Least,
    Mixed,
    Paired,
    PoolRecord,
    Reading,
    die,
    favored,
    least,
    paired,
    sample,
)
from ...odds import pools
from . import rules as R
from .notation import Damage, Pool, Spec
from .words import dice_text, n, verdict_line

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


class Prepared(Record):
    """A pool after J41/J42 steps 1–5: the dice to roll, what each step did, net modifiers."""

    sizes: tuple[int, ...]
    steps: tuple[str, ...]
    penalties: int  # net Simple-roll Penalties (re-rolls); 0 for damage pools
    favored: bool
    quality: str | None
    base: tuple[int, ...] = ()


def prepare(pool: Pool, options: Mapping[str, Any], damage: bool) -> Prepared:
    """J41 (Simple) / J42 (Damage) steps 1–5 in order."""
    from .notation import quality_in_force

    sizes = pool.base
    steps: list[str] = []
    if pool.include:  # 1. Include (J36)
        sizes = sizes + pool.include
        steps.append(f"Include {dice_text(pool.include)} → {dice_text(sizes)}")
    for what in pool.remove:  # 2. Remove (J37)
        after = R.remove_die(sizes, what)
        if after is None:
            raise InputError(f"cannot remove {what}: the pool ({dice_text(sizes)}) has no such die")
        steps.append(f"Remove {what} → {dice_text(after)}")
        sizes = after
    if pool.limit is not None:  # 3. Limit (J38)
        after = R.apply_limit(sizes, pool.limit)
        steps.append(f"Limit d{pool.limit} → {dice_text(after)}")
        sizes = after
    b, p = R.net(pool.bonuses, pool.penalties)  # J12
    if pool.bonuses and pool.penalties:
        steps.append(f"{n(pool.bonuses, 'Bonus', 'Bonuses')} and "
                     f"{n(pool.penalties, 'Penalty', 'Penalties')} cancel → net "
                     + (f"+{n(b, 'Bonus', 'Bonuses')}" if b else
                        f"-{n(p, 'Penalty', 'Penalties')}" if p else "none"))
    if b:  # 4. Bonuses (J13–J17)
        after = R.apply_bonuses(sizes, b, options["bonus_distribution"])
        k = max(1, len(sizes))
        steps.append(f"+{b} Bonus: {b} × {k} {'dice' if k > 1 else 'die'} = {b * k} size "
                     f"increases → {dice_text(after)}")
        sizes = after
        if pool.limit is not None and not options["limit_before_bonus"]:
            sizes = R.apply_limit(sizes, pool.limit)
            steps.append(f"Limit d{pool.limit} again (house rule) → {dice_text(sizes)}")
    if damage and p:  # 5. Damage Penalty: remove the smallest die per Penalty (J30)
        after = R.damage_penalty(sizes, p)
        steps.append(f"-{p} Penalty: remove the smallest die{' each' if p > 1 else ''} → "
                     f"{dice_text(after)}")
        sizes, p = after, 0
    return Prepared(sizes, tuple(steps), p, pool.favored,
                    quality_in_force(pool.quality, options["quality_bands"]), pool.base)


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


def _record_lines(record: PoolRecord, sizes: Sequence[int], group: str, program: Mixed | Favored,
                  offered: bool, lines: list[str]) -> None:
    """The faces of one roll and its Favored re-roll (or the re-roll the player may take)."""
    first = [d.runs[0][0] for d in record.dice]
    lines.append(f"  {group}: " + ", ".join(f"d{s}→{f}" for s, f in zip(sizes, first)))
    for s, d in zip(sizes, record.dice):
        if len(d.runs) > 1:
            lines.append(f"  Favored: re-roll the 1 on the d{s} → {d.standing[0]}")
    if offered and not isinstance(program, Favored):
        j = favored_index(sizes, first)
        if j is not None:
            lines.append(f"  Favored: the player may re-roll the 1 on the d{sizes[j]}")


def _roll_side(tray: Tray, program: Mixed | Favored, sizes: Sequence[int], group: str,
               stream: int, offered: bool, lines: list[str], limits: Limits) -> PoolRecord:
    record = sample(R.score(program), TrayHands(tray, group, stream), limits)
    _record_lines(record, sizes, group, program, offered, lines)
    return record


def empty_score(prep: Prepared, which: str, options: Mapping[str, Any]) -> int | None:
    """J-X3: the Score of a side with no dice (None: it has dice)."""
    if prep.sizes:
        return None
    got = R.empty_pool_score(options["empty_pool"])
    if got is None:
        raise InputError(f"{which} has no dice left to roll (J-X3); the house rule "
                         "empty_pool=auto_botch counts it as a Botch instead")
    return got


def _roll_simple_side(tray: Tray, prep: Prepared, name: str, stream: int,
                      options: Mapping[str, Any], lines: list[str], limits: Limits) -> int:
    sides = _rolls(prep, options)
    count = len(sides)
    if prep.steps:
        lines.append(f"{name}: {dice_text(prep.base)}")
        for step in prep.steps:
            lines.append(f"  {step}")
    lines.append(f"{name} rolls {dice_text(prep.sizes)}"
                 + (f", {count} times ({n(prep.penalties, 'Penalty', 'Penalties')}: keep the "
                    "worst Score, J21)" if count > 1 else ""))
    records: list[PoolRecord] = []
    spans: list[tuple[int, int]] = []  # each roll's dice in the tray
    for r, program in enumerate(sides):
        group = name.lower() if count == 1 else f"{name.lower()} roll {r + 1}"
        start = len(tray)
        record = _roll_side(tray, program, prep.sizes, group, stream,
                            prep.favored and not options["favored_auto"], lines, limits)
        spans.append((start, len(tray)))
        records.append(record)
        if count > 1:
            lines.append(f"    Score {record.value}")
    worst = least(tuple(records))  # J21, J-A10: the worst Score stands, with its roll's faces
    for r, (start, end) in enumerate(spans):  # the other rolls' dice are discarded
        if r != worst.stands:
            for i in range(start, end):
                tray.drop(i, "discarded: the worst Score stands (J21)")
    sc = worst.value
    lines.append(f"  Score {sc}" + (f" (worst of {[r.value for r in records]})" if count > 1
                                    else "") + (" — Botch!" if R.is_botch(sc) else ""))
    return sc


def roll(spec: Spec, source: Source, options: Mapping[str, Any], limits: Limits,
         text: str) -> Roll:
    """Roll a Jadeclaw spec with faces from ``source``; the verdict comes from the rule functions."""
    options = effective_options(spec, options)
    tray = Tray(source, limits)
    lines: list[str] = []
    if isinstance(spec, Damage):
        return _roll_damage(spec, tray, options, text, lines, limits)
    actor = prepare(spec.actor, options, damage=False)
    lines.append(f"Jadeclaw Simple Roll: {str(spec)[4:]}")
    opp = prepare(spec.opposition, options, damage=False) if spec.opposition else None
    if spec.calm and opp is not None and R.may_declare_success(
            actor.sizes, opp.sizes, options["auto_success_dominance"], spec.actor.penalties):
        lines.append(f"J48: {dice_text(actor.sizes)} matches {dice_text(opp.sizes)} die for die "
                     "and the task is calm: Success without rolling")
        return Roll("jadeclaw", text, "success",
                    {"auto_success": True, "actor_score": None, "opposition_score": None},
                    tray.freeze(), tuple(lines), spec)
    if spec.calm and spec.actor.penalties:
        lines.append("J48 does not apply: a Penalty (lack of time, poor preparation) means the "
                     "task is not calm: roll")
    elif spec.calm:
        lines.append("J48 does not apply (the pool does not match the Difficulty die for die): "
                     "roll")
    a = empty_score(actor, "the actor pool", options)
    if a is None:
        a = _roll_simple_side(tray, actor, "Actor", 0, options, lines, limits)
    else:
        lines.append("Actor has no dice: a Botch (house rule empty_pool=auto_botch)")
    result: dict[str, Any] = {"actor_score": a, "botch": R.is_botch(a)}
    if opp is None:
        source.finish()
        outcome = "botch" if R.is_botch(a) else "no_botch"
        lines.append("Botch!" if R.is_botch(a) else f"Score {a}")
        return Roll("jadeclaw", text, outcome, result, tray.freeze(), tuple(lines), spec)
    name = "Difficulty" if spec.opposition and spec.opposition.difficulty else "Opposition"
    if name == "Difficulty" and spec.opposition is not None:
        title = R.DIFFICULTY_TITLES[spec.opposition.difficulty or ""]
        lines.append(f"The GM rolls the Difficulty Dice for {title} (J47, J52)")
    b = empty_score(opp, "the opposing pool", options)
    if b is None:
        b = _roll_simple_side(tray, opp, name, 1, options, lines, limits)
    source.finish()
    outcome = R.contest_outcome(a, b, actor.quality, opp.quality, options)
    margin = a - b
    result.update({"opposition_score": b, "margin": margin,
                   "overwhelming": R.overwhelms(abs(margin)),
                   "both_botch": R.is_botch(a) and R.is_botch(b)})
    lines.append(verdict_line(a, b, actor.quality, opp.quality, outcome))
    return Roll("jadeclaw", text, outcome, result, tray.freeze(), tuple(lines), spec)


def _roll_damage(spec: Damage, tray: Tray, options: Mapping[str, Any], text: str,
                 lines: list[str], limits: Limits) -> Roll:
    kind = R.damage_kind(spec.slaying, spec.enervated)
    dmg = prepare(spec.damage, options, damage=True)
    soak = prepare(spec.soak, options, damage=True)
    program = damage_program(dmg, soak, kind, options)
    lines.append(f"Jadeclaw Damage Roll: {str(spec)[4:]}")
    if spec.slaying and spec.enervated:
        lines.append("Slaying and Enervated cancel: normal damage (J33)")
    records: dict[str, PoolRecord] = {}
    for name, prep, stream, pool, offer in (
            ("Damage", dmg, 0, program.attack, True),
            ("Soak", soak, 1, program.defence, options["favored_on_soak"])):
        lines.append(f"{name} dice: {dice_text(prep.base)}")
        for step in prep.steps:
            lines.append(f"  {step}")
        if prep.steps and prep.sizes:
            lines.append(f"  rolls {dice_text(prep.sizes)}")
        if not prep.sizes:
            records[name] = PoolRecord((), 0)
            lines.append(f"  no {name.lower()} dice to roll")
            continue
        records[name] = _roll_side(tray, pool, prep.sizes, name.lower(), stream,
                                   prep.favored and offer and not options["favored_auto"],
                                   lines, limits)
    result: dict[str, Any]
    if not dmg.sizes:  # J-A12: no pairs; the Soak Botch only by the house rule
        botch = bool(R.soak_botch_without_damage(options["soak_botch_with_no_damage_dice"])
                     and soak.sizes and R.soak_botch(records["Soak"].value))
        hits = 1 if botch else 0
        lines.append("No damage dice: no pairs (J-A12)" + (
            "; the Soak Botch still gives +1 hit (soak_botch_with_no_damage_dice=true, J28)"
            if botch else ""))
        result = {"hits": hits, "pairs": [], "soak_botch": botch}
    else:
        read = paired(program, records["Damage"], records["Soak"])
        for d, s, h in read.pairs:
            vs = "an imaginary 1" if s is None else str(s)
            why = " (a 1 never hits)" if R.never_scores(d) else ""
            lines.append(f"  {d} vs {vs}: {h} hit{'s' if h != 1 else ''}{why}")
        if read.bonus:
            lines.append("  Soak Botch (every soak die shows 1): +1 hit (J28)")
        hits = read.value
        result = {"hits": hits, "pairs": [list(p) for p in read.pairs],  # None: imaginary 1
                  "soak_botch": bool(read.bonus)}
    outcome = "nothing" if hits == 0 else "hit"
    lines.append(f"{hits} hit{'s' if hits != 1 else ''}" if hits else "No hits: nothing")
    if spec.resolve is not None and not R.resolve_tested(hits):
        lines.append("No Wound, so no Resolve test (J35: a Damage Roll that scores a Wound "
                     "becomes a Simple Roll in a Resolve Test)")
        result["resolve"] = {"tested": False}
    elif spec.resolve is not None:
        res = prepare(spec.resolve, options, damage=False)
        lines.append("Resolve test against the damage faces (J35):")
        if not dmg.sizes:
            raise InputError("a Resolve test needs damage faces, but no damage dice were rolled")
        b = records["Damage"].value  # the damage faces' Score (J4)
        a = _roll_simple_side(tray, res, "Resolve", 2, options, lines, limits)
        r_out = R.contest_outcome(a, b, res.quality, None, options)
        lines.append(verdict_line(a, b, res.quality, None, r_out))
        result["resolve"] = {"tested": True, "score": a, "damage_score": b, "outcome": r_out}
    tray.source.finish()
    return Roll("jadeclaw", text, outcome, result, tray.freeze(), tuple(lines), spec)


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
